/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: endpoint RMA operations (put/get zcopy, short, bcopy).
 * The posting path they share with the layout operations is in umr_ep.c.
 *
 * Data path of put/get zcopy:
 *   local iov --(expand)--> SGE list --+-- tiny blocks: pack into a bounce
 *                                      |   buffer, one SGE (put only)
 *                                      +-- <= max_sge SGEs: as they are
 *                                      +-- more: one UMR list key from the
 *                                          ep cache, one SGE over it
 *   remote: contiguous key (VA) or layout key (zero-based byte offset),
 *           split into fragments of at most max_msg bytes.
 * Every WR is signaled and carries its operation; completions are delivered
 * by iface progress only (umr_iface.c), in posting order.
 */
#include "umr_config.h"

#include "umr_ep.inl"
#include "umr_key.h"

#include <inttypes.h>
#include <string.h>


/* Scratch limits of one zcopy call (SGEs after expanding iov counts). */
#define UCT_MLX5_UMR_EP_MAX_SGES  4096


typedef struct {
    umr_eng_sge_t      sge[UCT_MLX5_UMR_EP_MAX_SGES];
    uint64_t           memh_ids[UCT_MLX5_UMR_EP_MAX_SGES];
    /* a list key over the SGEs: blocks for the layout engine, their lkeys */
    umr_layout_block_t blocks[UCT_MLX5_UMR_EP_MAX_SGES];
    uint32_t           lkeys[UCT_MLX5_UMR_EP_MAX_SGES];
} uct_mlx5_umr_ep_scratch_t;


/* ---- zcopy ------------------------------------------------------------- */

/* Expand a local iov to SGEs; a layout memh is addressed zero-based. */
static ucs_status_t
uct_mlx5_umr_ep_iov_to_sge(const uct_iov_t *iov, size_t iovcnt,
                           umr_eng_sge_t *sge, uint64_t *memh_ids,
                           unsigned *num_p, uint64_t *total_p,
                           const uct_mlx5_umr_memh_t **layout_memh_p,
                           int *tmp_reg_p)
{
    const uct_mlx5_umr_memh_t *memh;
    uint64_t total = 0, addr;
    unsigned num   = 0;
    size_t i, j, count;

    *layout_memh_p = NULL;
    for (i = 0; i < iovcnt; ++i) {
        count = ucs_max(iov[i].count, 1);
        if (iov[i].length == 0) {
            continue;
        }

        memh = iov[i].memh;
        if (memh == UCT_MEM_HANDLE_NULL) {
            if ((iovcnt == 1) && (count == 1)) {
                /* unregistered single buffer: registered for this op */
                sge[0].addr   = (uintptr_t)iov[0].buffer;
                sge[0].length = iov[0].length;
                sge[0].lkey   = 0; /* set by the caller */
                memh_ids[0]   = 0;
                *tmp_reg_p    = 1;
                *num_p        = 1;
                *total_p      = iov[0].length;
                return UCS_OK;
            }
            ucs_error("mlx5_umr: iov[%zu] has no memory handle (allowed only "
                      "for a single-entry iov)", i);
            return UCS_ERR_INVALID_PARAM;
        }

        for (j = 0; j < count; ++j) {
            if (num >= UCT_MLX5_UMR_EP_MAX_SGES) {
                ucs_error("mlx5_umr: iov expands to more than %u entries",
                          UCT_MLX5_UMR_EP_MAX_SGES);
                return UCS_ERR_EXCEEDS_LIMIT;
            }

            addr = (uintptr_t)iov[i].buffer + (j * iov[i].stride);
            if (memh->flags & UCT_MLX5_UMR_MEMH_FLAG_LAYOUT) {
                /* zero-based: buffer is an offset into the packed stream.
                 * Bounds are parameter checks: the engine refuses a local
                 * access outside the key or region anyway. */
                if (ENABLE_PARAMS_CHECK &&
                    ((addr > memh->length) ||
                     (iov[i].length > memh->length - addr))) {
                    ucs_error("mlx5_umr: iov[%zu] [%" PRIu64 ", +%zu) is "
                              "outside its layout handle (%" PRIu64 " bytes)",
                              i, addr, iov[i].length, memh->length);
                    return UCS_ERR_INVALID_PARAM;
                }
                sge[num].lkey  = memh->mkeys[memh->num_mkeys - 1]->eng->lkey;
                *layout_memh_p = memh;
            } else {
                if (ENABLE_PARAMS_CHECK &&
                    ((addr < (uintptr_t)memh->base) ||
                     (addr + iov[i].length >
                      (uintptr_t)memh->base + memh->length))) {
                    ucs_error("mlx5_umr: iov[%zu] %p+%zu is outside its "
                              "memory handle %p+%" PRIu64, i, (void*)addr,
                              iov[i].length, memh->base, memh->length);
                    return UCS_ERR_INVALID_PARAM;
                }
                sge[num].lkey = memh->mr->lkey;
            }
            sge[num].addr   = addr;
            sge[num].length = iov[i].length;
            memh_ids[num]   = memh->id;
            total          += iov[i].length;
            ++num;
        }
    }

    *num_p   = num;
    *total_p = total;
    return UCS_OK;
}

/* Tiny blocks: one memcpy per block is cheaper than a descriptor each. */
static int uct_mlx5_umr_ep_zcopy_should_pack(uct_mlx5_umr_iface_t *iface,
                                             unsigned num_sge, uint64_t total,
                                             const uct_mlx5_umr_memh_t *layout_memh)
{
    double mean_block;

    if (layout_memh != NULL) {
        if (num_sge != 1) {
            return 0; /* mixing handles: keep the general path */
        }
        mean_block = layout_memh->plan->cost.mean_block;
    } else {
        if (num_sge <= 1) {
            return 0;
        }
        mean_block = (double)total / num_sge;
    }

    return uct_mlx5_umr_ep_should_pack(iface, total, mean_block);
}

/* Pack fallback of a zcopy: a layout handle goes through the layout engine,
 * a write of plain blocks is gathered into the bounce buffer. */
static ucs_status_t
uct_mlx5_umr_ep_zcopy_pack(uct_mlx5_umr_ep_t *ep, uct_mlx5_umr_op_t *op,
                           umr_eng_opcode_t opcode,
                           const uct_mlx5_umr_memh_t *layout_memh,
                           const umr_eng_sge_t *sge, unsigned num_sge,
                           uint64_t total, umr_eng_sge_t *one)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    void *dst;
    unsigned i;

    if (layout_memh != NULL) {
        return uct_mlx5_umr_ep_pack_layout(ep, op, opcode, layout_memh->layout,
                                           0, layout_memh->count,
                                           layout_memh->base, sge[0].addr,
                                           total, one);
    }

    ucs_assert(opcode == UMR_ENG_OP_RDMA_WRITE);
    op->buf = uct_mlx5_umr_iface_buf_get(iface);
    if (op->buf == NULL) {
        return uct_mlx5_umr_ep_no_resource(ep);
    }

    dst = uct_mlx5_umr_iface_buf(iface, op->buf);
    for (i = 0; i < num_sge; ++i) {
        memcpy(dst, (void*)(uintptr_t)sge[i].addr, sge[i].length);
        dst = UCS_PTR_BYTE_OFFSET(dst, sge[i].length);
    }

    uct_mlx5_umr_ep_buf_sge(iface, op, total, one);
    ++ep->stats.pack_fallbacks;
    return UCS_OK;
}

/* More SGEs than a WR takes: one list key over them, from the ep cache or
 * lowered by the layout engine (umr_layout_lower_blocks) and configured now
 * (uct_mlx5_umr_ep_key_configure). The op holds the entry; *one addresses
 * it. */
static ucs_status_t
uct_mlx5_umr_ep_zcopy_list_key(uct_mlx5_umr_ep_t *ep, uct_mlx5_umr_op_t *op,
                               const uct_iov_t *iov, size_t iovcnt,
                               uct_mlx5_umr_ep_scratch_t *scratch,
                               unsigned num_sge, uint64_t total,
                               unsigned frags, umr_eng_sge_t *one)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    const umr_eng_sge_t *sge    = scratch->sge;
    unsigned access             = UMR_ENG_ACCESS_LOCAL_WRITE;
    uct_mlx5_umr_cache_entry_t *entry;
    umr_layout_plan_t *plan;
    ucs_status_t status;
    unsigned i;

    entry = uct_mlx5_umr_cache_lookup(&ep->cache, sge,
                                      num_sge * sizeof(*sge), NULL);
    if (entry != NULL) {
        goto out;
    }

    /* each SGE is a block of its own memory (its lkey) */
    for (i = 0; i < num_sge; ++i) {
        scratch->blocks[i].offset = (int64_t)sge[i].addr;
        scratch->blocks[i].length = sge[i].length;
        scratch->blocks[i].mem    = i;
        scratch->lkeys[i]         = sge[i].lkey;
    }
    status = umr_layout_lower_blocks(scratch->blocks, num_sge,
                                     &iface->md->limits, &plan);
    if (status != UCS_OK) {
        ucs_error("mlx5_umr ep %p: %u local entries do not fit a list key: "
                  "%s", ep, num_sge, umr_layout_last_error());
        return status;
    }

    /* local write only when all of its memory was registered for it */
    for (i = 0; i < iovcnt; ++i) {
        if (iov[i].memh != UCT_MEM_HANDLE_NULL) {
            access &= ((uct_mlx5_umr_memh_t*)iov[i].memh)->access;
        }
    }
    status = uct_mlx5_umr_ep_key_configure(ep, op, plan, NULL, scratch->lkeys,
                                           frags, sge, num_sge * sizeof(*sge),
                                           NULL, scratch->memh_ids, num_sge,
                                           access);
    umr_layout_plan_free(plan);
    if (status != UCS_OK) {
        return status;
    }

    /* the key memorises the memory handles: mark them */
    for (i = 0; i < iovcnt; ++i) {
        if (iov[i].memh != UCT_MEM_HANDLE_NULL) {
            ((uct_mlx5_umr_memh_t*)iov[i].memh)->flags |=
                    UCT_MLX5_UMR_MEMH_FLAG_CACHED;
        }
    }
    entry = op->centry;

out:
    op->centry  = entry;
    one->addr   = 0;
    one->length = total;
    one->lkey   = entry->lkey;
    return UCS_OK;
}

static ucs_status_t
uct_mlx5_umr_ep_zcopy(uct_mlx5_umr_ep_t *ep, umr_eng_opcode_t opcode,
                      const uct_iov_t *iov, size_t iovcnt,
                      uint64_t remote_addr, uct_rkey_t tl_rkey,
                      uct_completion_t *comp)
{
    static __thread uct_mlx5_umr_ep_scratch_t scratch;
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    const uct_mlx5_umr_rkey_t *rkey = (const void*)tl_rkey;
    const uct_mlx5_umr_memh_t *layout_memh;
    umr_eng_sge_t *sge = scratch.sge;
    unsigned num_sge, frags;
    umr_eng_sge_t one;
    int tmp_reg;
    uct_mlx5_umr_op_t *op;
    ucs_status_t status;
    uint64_t total;
    int pack;

    status = uct_mlx5_umr_ep_check_state(ep);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    UCT_CHECK_IOV_SIZE(iovcnt, (size_t)iface->config.max_iov,
                       (opcode == UMR_ENG_OP_RDMA_WRITE) ?
                       "uct_mlx5_umr_ep_put_zcopy" :
                       "uct_mlx5_umr_ep_get_zcopy");
    UCT_CHECK_PARAM(rkey != NULL, "mlx5_umr ep %p: NULL remote key", ep);

    tmp_reg = 0;
    status = uct_mlx5_umr_ep_iov_to_sge(iov, iovcnt, sge, scratch.memh_ids,
                                        &num_sge, &total, &layout_memh,
                                        &tmp_reg);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_mlx5_umr_ep_check_remote(rkey, remote_addr, total);
    if (status != UCS_OK) {
        return status;
    }

    if (total == 0) {
        return UCS_OK;
    }

    frags  = uct_mlx5_umr_ep_num_frags(iface, total);
    status = uct_mlx5_umr_ep_check_frags(ep, frags);
    if (status != UCS_OK) {
        return status;
    }

    /* a get into many tiny local blocks stays zero-copy: scattering the
     * bounce buffer would need the iov after the call returned */
    pack = uct_mlx5_umr_ep_zcopy_should_pack(iface, num_sge, total,
                                             layout_memh) &&
           ((opcode == UMR_ENG_OP_RDMA_WRITE) || (layout_memh != NULL));
    if (ucs_unlikely(!uct_mlx5_umr_ep_has_slots(ep, frags))) {
        return uct_mlx5_umr_ep_no_resource(ep);
    }

    op = uct_mlx5_umr_ep_op_get(ep, comp);
    if (ucs_unlikely(op == NULL)) {
        return uct_mlx5_umr_ep_no_resource(ep);
    }

    if (ucs_unlikely(tmp_reg)) {
        /* a put only reads it: write access would fail on memory the
         * process may only read */
        status = iface->eng->mr_reg(iface->md->dev, iov[0].buffer,
                                    iov[0].length,
                                    (opcode == UMR_ENG_OP_RDMA_READ) ?
                                    UMR_ENG_ACCESS_LOCAL_WRITE : 0,
                                    &op->tmp_mr);
        if (status != UCS_OK) {
            ucs_error("mlx5_umr ep %p: registering %p+%zu failed: %s", ep,
                      iov[0].buffer, iov[0].length,
                      ucs_status_string(status));
            goto err_op;
        }
        sge[0].lkey = op->tmp_mr->lkey;
    }

    if (pack) {
        status = uct_mlx5_umr_ep_zcopy_pack(ep, op, opcode, layout_memh, sge,
                                            num_sge, total, &one);
        if (status != UCS_OK) {
            goto err_op;
        }
        sge     = &one;
        num_sge = 1;
    } else if (num_sge > iface->config.max_sge) {
        status = uct_mlx5_umr_ep_zcopy_list_key(ep, op, iov, iovcnt, &scratch,
                                                num_sge, total, frags, &one);
        if (status != UCS_OK) {
            goto err_op;
        }
        sge     = &one;
        num_sge = 1;
    }

    status = uct_mlx5_umr_ep_op_post(ep, op, opcode, sge, num_sge, total,
                                     remote_addr, rkey->rkey);
    if (status == UCS_INPROGRESS) {
        ++ep->stats.zcopy_ops;
    }
    return status;

err_op:
    return uct_mlx5_umr_ep_op_abort(ep, op, status);
}

ucs_status_t uct_mlx5_umr_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                       size_t iovcnt, uint64_t remote_addr,
                                       uct_rkey_t rkey, uct_completion_t *comp)
{
    return uct_mlx5_umr_ep_zcopy(ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t),
                                 UMR_ENG_OP_RDMA_WRITE, iov, iovcnt,
                                 remote_addr, rkey, comp);
}

ucs_status_t uct_mlx5_umr_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                       size_t iovcnt, uint64_t remote_addr,
                                       uct_rkey_t rkey, uct_completion_t *comp)
{
    return uct_mlx5_umr_ep_zcopy(ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t),
                                 UMR_ENG_OP_RDMA_READ, iov, iovcnt,
                                 remote_addr, rkey, comp);
}


/* ---- bounce-buffer operations ------------------------------------------ */

/* Take a slot, an op and a bounce buffer for a copy operation of length
 * bytes (func names the caller in the log). */
static ucs_status_t
uct_mlx5_umr_ep_bcopy_start(uct_mlx5_umr_ep_t *ep, const char *func,
                            uct_rkey_t tl_rkey, uint64_t remote_addr,
                            size_t length, uct_completion_t *comp,
                            uct_mlx5_umr_op_t **op_p)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    uct_mlx5_umr_op_t *op;
    ucs_status_t status;

    /* not a debug-only check: the bounce buffer must never overflow */
    if (ucs_unlikely(length > iface->config.seg_size)) {
        ucs_error("%s: length %zu > SEG_SIZE %zu", func, length,
                  iface->config.seg_size);
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_mlx5_umr_ep_check_state(ep);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    UCT_CHECK_PARAM(tl_rkey != 0, "mlx5_umr ep %p: NULL remote key", ep);

    status = uct_mlx5_umr_ep_check_remote((const void*)tl_rkey, remote_addr,
                                          length);
    if (status != UCS_OK) {
        return status;
    }

    if (!uct_mlx5_umr_ep_has_slots(ep,
                                   uct_mlx5_umr_ep_num_frags(iface, length)) ||
        !uct_mlx5_umr_iface_has_buf(iface)) {
        return uct_mlx5_umr_ep_no_resource(ep);
    }

    op = uct_mlx5_umr_ep_op_get(ep, comp);
    if (ucs_unlikely(op == NULL)) {
        return uct_mlx5_umr_ep_no_resource(ep);
    }

    op->buf = uct_mlx5_umr_iface_buf_get(iface);
    *op_p   = op;
    return UCS_OK;
}

static ucs_status_t
uct_mlx5_umr_ep_bcopy_post(uct_mlx5_umr_ep_t *ep, uct_mlx5_umr_op_t *op,
                           umr_eng_opcode_t opcode, size_t length,
                           uint64_t remote_addr, uct_rkey_t tl_rkey)
{
    umr_eng_sge_t sge;

    uct_mlx5_umr_ep_buf_sge(uct_mlx5_umr_ep_iface(ep), op, length, &sge);
    return uct_mlx5_umr_ep_op_post(ep, op, opcode, &sge, 1, length,
                                   remote_addr,
                                   ((uct_mlx5_umr_rkey_t*)tl_rkey)->rkey);
}

ucs_status_t uct_mlx5_umr_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                       unsigned length, uint64_t remote_addr,
                                       uct_rkey_t rkey)
{
    uct_mlx5_umr_ep_t *ep       = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    uct_mlx5_umr_op_t *op;
    ucs_status_t status;

    status = uct_mlx5_umr_ep_bcopy_start(ep, "put_short", rkey, remote_addr,
                                         length, NULL, &op);
    if (status != UCS_OK) {
        return status;
    }

    memcpy(uct_mlx5_umr_iface_buf(iface, op->buf), buffer, length);
    status = uct_mlx5_umr_ep_bcopy_post(ep, op, UMR_ENG_OP_RDMA_WRITE, length,
                                        remote_addr, rkey);
    /* the buffer is reusable at once: short ops complete locally now */
    return UCS_STATUS_IS_ERR(status) ? status : UCS_OK;
}

ssize_t uct_mlx5_umr_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                                  void *arg, uint64_t remote_addr,
                                  uct_rkey_t rkey)
{
    uct_mlx5_umr_ep_t *ep       = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    uct_mlx5_umr_op_t *op;
    ucs_status_t status;
    size_t length;

    /* the length is known only after packing: check bounds with 0 first */
    status = uct_mlx5_umr_ep_bcopy_start(ep, "put_bcopy", rkey, remote_addr, 0,
                                         NULL, &op);
    if (status != UCS_OK) {
        return status;
    }

    length = pack_cb(uct_mlx5_umr_iface_buf(iface, op->buf), arg);
    if (length > iface->config.seg_size) {
        ucs_error("put_bcopy: packed %zu bytes > SEG_SIZE %zu", length,
                  iface->config.seg_size);
        status = UCS_ERR_INVALID_PARAM;
        goto err_op;
    }
    status = uct_mlx5_umr_ep_check_remote((const void*)rkey, remote_addr,
                                          length);
    if (status != UCS_OK) {
        goto err_op;
    }

    status = uct_mlx5_umr_ep_bcopy_post(ep, op, UMR_ENG_OP_RDMA_WRITE, length,
                                        remote_addr, rkey);
    return UCS_STATUS_IS_ERR(status) ? status : (ssize_t)length;

err_op:
    uct_mlx5_umr_ep_op_release(ep, op);
    return status;
}

ucs_status_t uct_mlx5_umr_ep_get_bcopy(uct_ep_h tl_ep,
                                       uct_unpack_callback_t unpack_cb,
                                       void *arg, size_t length,
                                       uint64_t remote_addr, uct_rkey_t rkey,
                                       uct_completion_t *comp)
{
    uct_mlx5_umr_ep_t *ep       = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    uct_mlx5_umr_op_t *op;
    ucs_status_t status;

    status = uct_mlx5_umr_ep_bcopy_start(ep, "get_bcopy", rkey, remote_addr,
                                         length, comp, &op);
    if (status != UCS_OK) {
        return status;
    }

    op->unpack_cb  = unpack_cb;
    op->unpack_arg = arg;
    op->length     = length;
    if (length == 0) {
        unpack_cb(arg, uct_mlx5_umr_iface_buf(iface, op->buf), 0);
    }
    return uct_mlx5_umr_ep_bcopy_post(ep, op, UMR_ENG_OP_RDMA_READ, length,
                                      remote_addr, rkey);
}
