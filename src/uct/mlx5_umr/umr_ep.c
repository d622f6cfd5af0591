/**
 * mlx5_umr transport: endpoint operations.
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

#include "umr_ep.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <inttypes.h>
#include <string.h>


/* Scratch limits of one zcopy call (SGEs after expanding iov counts). */
#define UCT_MLX5_UMR_EP_MAX_SGES  4096


static UCS_F_ALWAYS_INLINE uct_mlx5_umr_iface_t *
uct_mlx5_umr_ep_iface(uct_mlx5_umr_ep_t *ep)
{
    return ucs_derived_of(ep->super.super.iface, uct_mlx5_umr_iface_t);
}

static UCS_F_ALWAYS_INLINE ucs_status_t
uct_mlx5_umr_ep_check_state(uct_mlx5_umr_ep_t *ep)
{
    if (ucs_unlikely(!ep->connected)) {
        ucs_error("mlx5_umr ep %p: not connected", ep);
        return UCS_ERR_NOT_CONNECTED;
    }
    return ep->status;
}

static UCS_F_ALWAYS_INLINE ucs_status_t
uct_mlx5_umr_ep_no_resource(uct_mlx5_umr_ep_t *ep)
{
    ++ep->stats.no_resource;
    return UCS_ERR_NO_RESOURCE;
}

/* Check that [remote_addr, remote_addr + length) is inside the key. */
static ucs_status_t
uct_mlx5_umr_ep_check_remote(const uct_mlx5_umr_rkey_t *rkey,
                             uint64_t remote_addr, size_t length)
{
    uint64_t start = remote_addr;

    if (!(rkey->flags & UCT_MLX5_UMR_RKEY_FLAG_ZERO_BASED)) {
        if (remote_addr < rkey->base) {
            goto err;
        }
        start = remote_addr - rkey->base;
    }

    if ((start > rkey->length) || (length > rkey->length - start)) {
        goto err;
    }
    return UCS_OK;

err:
    ucs_error("mlx5_umr: remote range [0x%" PRIx64 ", +%zu) is outside the "
              "%s key 0x%x (base 0x%" PRIx64 " length %" PRIu64 ")",
              remote_addr, length,
              (rkey->flags & UCT_MLX5_UMR_RKEY_FLAG_ZERO_BASED) ? "layout" :
              "contiguous", rkey->rkey, rkey->base, rkey->length);
    return UCS_ERR_INVALID_PARAM;
}

static UCS_F_ALWAYS_INLINE uct_mlx5_umr_op_t *
uct_mlx5_umr_ep_op_get(uct_mlx5_umr_ep_t *ep, uct_completion_t *comp)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    uct_mlx5_umr_op_t *op;

    op = ucs_mpool_get(&iface->op_mp);
    if (ucs_unlikely(op == NULL)) {
        return NULL;
    }

    op->ep            = ep;
    op->comp          = comp;
    op->status        = UCS_OK;
    op->wrs_left      = 0;
    op->buf           = -1;
    op->is_flush      = 0;
    op->centry        = NULL;
    op->tmp_mr        = NULL;
    op->unpack_cb     = NULL;
    op->unpack_layout = NULL;
    op->own_layout    = NULL;
    op->length        = 0;
    return op;
}

static UCS_F_ALWAYS_INLINE void
uct_mlx5_umr_ep_op_push(uct_mlx5_umr_ep_t *ep, uct_mlx5_umr_op_t *op)
{
    ucs_queue_push(&ep->ops, &op->queue);
    ++uct_mlx5_umr_ep_iface(ep)->outstanding;
}

/* Release what an operation holds; no user callback. */
static void uct_mlx5_umr_ep_op_release(uct_mlx5_umr_ep_t *ep,
                                       uct_mlx5_umr_op_t *op)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);

    if (op->buf >= 0) {
        uct_mlx5_umr_iface_buf_put(iface, op->buf);
    }
    if (op->centry != NULL) {
        uct_mlx5_umr_cache_release(&ep->cache, op->centry);
    }
    if (op->tmp_mr != NULL) {
        iface->eng->mr_dereg(iface->md->dev, op->tmp_mr);
    }
    if (op->own_layout != NULL) {
        uct_umr_layout_free(op->own_layout);
    }
    ucs_mpool_put(op);
}

static void uct_mlx5_umr_ep_op_finish(uct_mlx5_umr_ep_t *ep,
                                      uct_mlx5_umr_op_t *op)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    uct_completion_t *comp      = op->comp;
    ucs_status_t status         = op->status;
    void *buf;

    if ((status == UCS_OK) && (op->buf >= 0)) {
        buf = uct_mlx5_umr_iface_buf(iface, op->buf);
        if (op->unpack_cb != NULL) {
            op->unpack_cb(op->unpack_arg, buf, op->length);
        } else if (op->unpack_layout != NULL) {
            status = uct_umr_layout_unpack_range(op->unpack_layout,
                                                 op->unpack_count,
                                                 op->unpack_base,
                                                 op->unpack_offset,
                                                 op->length, buf);
        }
    }

    uct_mlx5_umr_ep_op_release(ep, op);
    --iface->outstanding;
    if (comp != NULL) {
        uct_invoke_completion(comp, status);
    }
}

void uct_mlx5_umr_ep_wr_done(uct_mlx5_umr_op_t *op, ucs_status_t status)
{
    uct_mlx5_umr_ep_t *ep = op->ep;

    ucs_assert(op->wrs_left > 0);
    --op->wrs_left;
    ++ep->sq_avail;

    if (ucs_unlikely(status != UCS_OK)) {
        if (op->status == UCS_OK) {
            op->status = status;
        }
        if (ep->status == UCS_OK) {
            ep->status = status;
        }
    }

    /* retire in posting order: a flush marker waits for all before it */
    while (!ucs_queue_is_empty(&ep->ops)) {
        op = ucs_queue_head_elem_non_empty(&ep->ops, uct_mlx5_umr_op_t, queue);
        if (op->wrs_left != 0) {
            break;
        }
        ucs_queue_pull_non_empty(&ep->ops);
        if (op->is_flush && (op->status == UCS_OK)) {
            /* a flush after a failure reports it */
            op->status = ep->status;
        }
        uct_mlx5_umr_ep_op_finish(ep, op);
    }
}

void uct_mlx5_umr_ep_dispatch_pending(uct_mlx5_umr_ep_t *ep)
{
    uct_pending_req_priv_queue_t *priv;

    uct_pending_queue_dispatch(priv, &ep->pending,
                               (ep->sq_avail > 0) &&
                               (uct_mlx5_umr_ep_iface(ep)->cq_avail > 0));
}


/* ---- posting --------------------------------------------------------- */

/* Copy the part [offset, offset + length) of an SGE list into out. */
static unsigned uct_mlx5_umr_sge_slice(const umr_eng_sge_t *sge, unsigned n,
                                       uint64_t offset, uint64_t length,
                                       umr_eng_sge_t *out)
{
    unsigned i, num = 0;
    uint64_t skip, len;

    for (i = 0; (i < n) && (length > 0); ++i) {
        if (offset >= sge[i].length) {
            offset -= sge[i].length;
            continue;
        }

        skip            = offset;
        len             = ucs_min(sge[i].length - skip, length);
        out[num].addr   = sge[i].addr + skip;
        out[num].length = len;
        out[num].lkey   = sge[i].lkey;
        ++num;
        offset  = 0;
        length -= len;
    }

    return num;
}

/* Post the RDMA WRs of one operation, fragmented at max_msg. Slots were
 * checked by the caller. */
static ucs_status_t
uct_mlx5_umr_ep_post_rdma(uct_mlx5_umr_ep_t *ep, uct_mlx5_umr_op_t *op,
                          umr_eng_opcode_t opcode, const umr_eng_sge_t *sge,
                          unsigned num_sge, uint64_t total,
                          uint64_t remote_addr, uint32_t rkey)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    uint64_t max_msg            = iface->config.max_msg;
    umr_eng_sge_t frag[iface->config.max_sge];
    uint64_t offset, len;
    unsigned n, flags;
    ucs_status_t status;

    for (offset = 0; offset < total; offset += len) {
        len   = ucs_min(total - offset, max_msg);
        n     = uct_mlx5_umr_sge_slice(sge, num_sge, offset, len, frag);
        flags = UMR_ENG_WR_SIGNALED | (ep->fence ? UMR_ENG_WR_FENCE : 0);
        if (ucs_log_is_enabled(UCS_LOG_LEVEL_TRACE_DATA)) {
            ucs_trace_data("ep %p: %s %u sge [0x%" PRIx64 " len %u lkey 0x%x"
                           "%s] %" PRIu64 " bytes -> 0x%" PRIx64 " rkey 0x%x%s",
                           ep, umr_eng_opcode_str(opcode), n, frag[0].addr,
                           frag[0].length, frag[0].lkey, (n > 1) ? " ..." : "",
                           len, remote_addr + offset, rkey,
                           (flags & UMR_ENG_WR_FENCE) ? " fence" : "");
        }
        status = iface->eng->post_rdma(ep->qp, opcode, frag, n,
                                       remote_addr + offset, rkey,
                                       (uintptr_t)op, flags);
        if (ucs_unlikely(status != UCS_OK)) {
            ucs_error("mlx5_umr ep %p: post %s of %" PRIu64 " bytes failed: "
                      "%s", ep, umr_eng_opcode_str(opcode), len,
                      ucs_status_string(status));
            return status;
        }
        ep->fence = 0;
        --ep->sq_avail;
        --iface->cq_avail;
        ++op->wrs_left;
        ++ep->stats.rdma_wrs;
    }

    return UCS_OK;
}

static UCS_F_ALWAYS_INLINE unsigned
uct_mlx5_umr_ep_num_frags(uct_mlx5_umr_iface_t *iface, uint64_t total)
{
    return ucs_max(1, (total + iface->config.max_msg - 1) /
                      iface->config.max_msg);
}

/* Post the child lists and the top list of a local UMR list key. */
static ucs_status_t
uct_mlx5_umr_ep_post_list_key(uct_mlx5_umr_ep_t *ep, uct_mlx5_umr_op_t *op,
                              uct_mlx5_umr_cache_entry_t *entry,
                              const umr_eng_sge_t *sge, unsigned n,
                              unsigned max_list)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    umr_eng_sge_t top[max_list];
    unsigned c, i, cnt, num_children;
    ucs_status_t status;
    uint64_t len;

    num_children = (entry->num_mkeys > 1) ? entry->num_mkeys - 1 : 0;
    for (c = 0; c < num_children; ++c) {
        cnt = ucs_min(max_list, n - (c * max_list));
        status = iface->eng->post_umr_list(ep->qp, entry->mkeys[c]->eng,
                                           UMR_ENG_ACCESS_LOCAL_WRITE, cnt,
                                           &sge[c * max_list], (uintptr_t)op,
                                           UMR_ENG_WR_SIGNALED);
        if (status != UCS_OK) {
            return status;
        }
        --ep->sq_avail;
        --iface->cq_avail;
        ++op->wrs_left;

        for (len = 0, i = 0; i < cnt; ++i) {
            len += sge[(c * max_list) + i].length;
        }
        top[c].addr   = 0;
        top[c].length = len;
        top[c].lkey   = entry->mkeys[c]->eng->lkey;
    }

    status = iface->eng->post_umr_list(ep->qp,
                                       entry->mkeys[entry->num_mkeys - 1]->eng,
                                       UMR_ENG_ACCESS_LOCAL_WRITE,
                                       num_children ? num_children : n,
                                       num_children ? top : sge,
                                       (uintptr_t)op, UMR_ENG_WR_SIGNALED);
    if (status != UCS_OK) {
        return status;
    }
    --ep->sq_avail;
    --iface->cq_avail;
    ++op->wrs_left;

    entry->lkey = entry->mkeys[entry->num_mkeys - 1]->eng->lkey;
    return UCS_OK;
}

typedef struct {
    umr_eng_sge_t sge[UCT_MLX5_UMR_EP_MAX_SGES];
    uint64_t      memh_ids[UCT_MLX5_UMR_EP_MAX_SGES];
} uct_mlx5_umr_ep_scratch_t;

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
                /* zero-based: buffer is an offset into the packed stream */
                if ((addr > memh->length) ||
                    (iov[i].length > memh->length - addr)) {
                    ucs_error("mlx5_umr: iov[%zu] [%" PRIu64 ", +%zu) is "
                              "outside its layout handle (%" PRIu64 " bytes)",
                              i, addr, iov[i].length, memh->length);
                    return UCS_ERR_INVALID_PARAM;
                }
                sge[num].lkey  = memh->mkeys[memh->num_mkeys - 1]->eng->lkey;
                *layout_memh_p = memh;
            } else {
                if ((addr < (uintptr_t)memh->base) ||
                    (addr + iov[i].length >
                     (uintptr_t)memh->base + memh->length)) {
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

static void uct_mlx5_umr_ep_gather(void *dst, const umr_eng_sge_t *sge,
                                   unsigned num_sge)
{
    unsigned i;

    for (i = 0; i < num_sge; ++i) {
        memcpy(dst, (void*)(uintptr_t)sge[i].addr, sge[i].length);
        dst = UCS_PTR_BYTE_OFFSET(dst, sge[i].length);
    }
}

/* Tiny blocks: one memcpy per block is cheaper than a descriptor each. */
static int uct_mlx5_umr_ep_should_pack(uct_mlx5_umr_iface_t *iface,
                                       unsigned num_sge, uint64_t total,
                                       const uct_mlx5_umr_memh_t *layout_memh)
{
    double mean_block;

    if ((total > iface->config.seg_size) || (iface->config.pack_thresh == 0)) {
        return 0;
    }

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

    return mean_block <= (double)iface->config.pack_thresh;
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
    uct_mlx5_umr_cache_entry_t *entry;
    unsigned num_sge, max_list, num_keys, wrs;
    umr_eng_sge_t *sge = scratch.sge;
    umr_eng_sge_t one;
    int tmp_reg;
    uct_mlx5_umr_op_t *op;
    ucs_status_t status;
    uint64_t total, hash;
    size_t blob_len;
    void *buf;
    int pack;

    status = uct_mlx5_umr_ep_check_state(ep);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    UCT_CHECK_IOV_SIZE(iovcnt, (size_t)iface->config.max_iov,
                       (opcode == UMR_ENG_OP_RDMA_WRITE) ?
                       "uct_mlx5_umr_ep_put_zcopy" :
                       "uct_mlx5_umr_ep_get_zcopy");
    if (ucs_unlikely(rkey == NULL)) {
        ucs_error("mlx5_umr ep %p: NULL remote key", ep);
        return UCS_ERR_INVALID_PARAM;
    }

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

    max_list = iface->md->limits.max_list;
    /* a get into many tiny local blocks stays zero-copy: scattering the
     * bounce buffer would need the iov after the call returned */
    pack     = uct_mlx5_umr_ep_should_pack(iface, num_sge, total, layout_memh) &&
               ((opcode == UMR_ENG_OP_RDMA_WRITE) || (layout_memh != NULL));
    num_keys = 0;
    if (!pack && (num_sge > iface->config.max_sge)) {
        num_keys = (num_sge > max_list) ?
                   ((num_sge + max_list - 1) / max_list) + 1 : 1;
        if (num_keys - 1 > max_list) {
            ucs_error("mlx5_umr ep %p: %u local entries need more than two "
                      "levels of list keys", ep, num_sge);
            return UCS_ERR_EXCEEDS_LIMIT;
        }
    }

    /* worst case: a cache miss configures every key */
    wrs = uct_mlx5_umr_ep_num_frags(iface, total) + num_keys;
    if (ucs_unlikely(wrs > ucs_min(ep->sq_avail, iface->cq_avail))) {
        if (wrs > iface->config.tx_queue_len) {
            ucs_error("mlx5_umr ep %p: operation needs %u work requests, "
                      "queue length is %u", ep, wrs,
                      iface->config.tx_queue_len);
            return UCS_ERR_EXCEEDS_LIMIT;
        }
        return uct_mlx5_umr_ep_no_resource(ep);
    }

    op = uct_mlx5_umr_ep_op_get(ep, comp);
    if (ucs_unlikely(op == NULL)) {
        return uct_mlx5_umr_ep_no_resource(ep);
    }

    if (ucs_unlikely(tmp_reg)) {
        status = iface->eng->mr_reg(iface->md->dev, iov[0].buffer,
                                    iov[0].length,
                                    UMR_ENG_ACCESS_LOCAL_WRITE, &op->tmp_mr);
        if (status != UCS_OK) {
            ucs_error("mlx5_umr ep %p: registering %p+%zu failed: %s", ep,
                      iov[0].buffer, iov[0].length,
                      ucs_status_string(status));
            goto err_op;
        }
        sge[0].lkey = op->tmp_mr->lkey;
    }

    if (pack) {
        op->buf = uct_mlx5_umr_iface_buf_get(iface);
        if (op->buf < 0) {
            status = uct_mlx5_umr_ep_no_resource(ep);
            goto err_op;
        }

        buf = uct_mlx5_umr_iface_buf(iface, op->buf);
        if ((opcode == UMR_ENG_OP_RDMA_WRITE) && (layout_memh != NULL)) {
            status = uct_umr_layout_pack_range(layout_memh->layout,
                                               layout_memh->count,
                                               layout_memh->base, sge[0].addr,
                                               total, buf);
            if (status != UCS_OK) {
                goto err_op;
            }
        } else if (opcode == UMR_ENG_OP_RDMA_WRITE) {
            uct_mlx5_umr_ep_gather(buf, sge, num_sge);
        } else {
            op->unpack_layout = layout_memh->layout;
            op->unpack_count  = layout_memh->count;
            op->unpack_base   = layout_memh->base;
            op->unpack_offset = sge[0].addr;
            op->length        = total;
        }

        one.addr   = (uintptr_t)buf;
        one.length = total;
        one.lkey   = iface->bufs_mr->lkey;
        sge        = &one;
        num_sge    = 1;
        ++ep->stats.pack_fallbacks;
    }

    if (!pack && (num_sge > iface->config.max_sge)) {
        blob_len = num_sge * sizeof(*sge);
        hash     = uct_mlx5_umr_cache_hash(sge, blob_len) ^
                   uct_mlx5_umr_cache_hash(scratch.memh_ids,
                                           num_sge * sizeof(uint64_t));
        entry    = uct_mlx5_umr_cache_lookup(&ep->cache, hash, sge, blob_len,
                                             NULL);
        if (entry == NULL) {
            status = uct_mlx5_umr_cache_insert(&ep->cache, hash, sge, blob_len,
                                               NULL, scratch.memh_ids, num_sge,
                                               num_keys, &entry);
            if (status != UCS_OK) {
                if (status == UCS_ERR_NO_RESOURCE) {
                    ++ep->stats.no_resource;
                }
                goto err_op;
            }

            status = uct_mlx5_umr_ep_post_list_key(ep, op, entry, sge, num_sge,
                                                   max_list);
            if (status != UCS_OK) {
                ucs_error("mlx5_umr ep %p: configuring a list key over %u "
                          "entries failed: %s", ep, num_sge,
                          ucs_status_string(status));
                uct_mlx5_umr_cache_remove(&ep->cache, entry);
                goto err_posted;
            }
            entry->length = total;
            /* the key memorises the memory handles: mark them */
            for (unsigned i = 0; i < iovcnt; ++i) {
                if (iov[i].memh != UCT_MEM_HANDLE_NULL) {
                    ((uct_mlx5_umr_memh_t*)iov[i].memh)->flags |=
                            UCT_MLX5_UMR_MEMH_FLAG_CACHED;
                }
            }
        }

        op->centry = entry;
        one.addr   = 0;
        one.length = total;
        one.lkey   = entry->lkey;
        sge        = &one;
        num_sge    = 1;
    }

    status = uct_mlx5_umr_ep_post_rdma(ep, op, opcode, sge, num_sge, total,
                                       remote_addr, rkey->rkey);
    if (status != UCS_OK) {
        goto err_posted;
    }

    ++ep->stats.zcopy_ops;
    uct_mlx5_umr_ep_op_push(ep, op);
    return UCS_INPROGRESS;

err_posted:
    if (op->wrs_left > 0) {
        /* some WRs are in the queue: let progress retire the operation */
        op->status = status;
        op->comp   = NULL;
        uct_mlx5_umr_ep_op_push(ep, op);
        return status;
    }
err_op:
    uct_mlx5_umr_ep_op_release(ep, op);
    return status;
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


/* ---- local layout over contiguous memory (extension) -------------------- */

typedef struct UCS_S_PACKED {
    uint64_t memh_id;
    uint64_t layout_hash;
    uint64_t base;
    uint64_t count;
} uct_mlx5_umr_layout_blob_t;

static int uct_mlx5_umr_ep_is_ours(uct_ep_h tl_ep)
{
    return (tl_ep != NULL) &&
           (tl_ep->iface->ops.ep_put_zcopy == uct_mlx5_umr_ep_put_zcopy);
}

/* Look the key up, or plan a new entry: *plan_p is then set and the caller
 * posts the plan's UMRs. */
static ucs_status_t
uct_mlx5_umr_ep_layout_key(uct_mlx5_umr_ep_t *ep, uct_mlx5_umr_memh_t *memh,
                           void *base, const uct_umr_layout_t *layout,
                           size_t count, size_t length, unsigned frags,
                           uct_mlx5_umr_cache_entry_t **entry_p,
                           umr_layout_plan_t **plan_p)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    uct_mlx5_umr_layout_blob_t blob;
    uct_mlx5_umr_cache_entry_t *entry;
    umr_layout_plan_t *plan;
    ucs_status_t status;
    uint64_t hash;

    blob.memh_id     = memh->id;
    blob.layout_hash = uct_umr_layout_hash(layout);
    blob.base        = (uintptr_t)base;
    blob.count       = count;
    hash             = uct_mlx5_umr_cache_hash(&blob, sizeof(blob));
    *plan_p          = NULL;

    entry = uct_mlx5_umr_cache_lookup(&ep->cache, hash, &blob, sizeof(blob),
                                      layout);
    if (entry != NULL) {
        if (frags > ucs_min(ep->sq_avail, iface->cq_avail)) {
            uct_mlx5_umr_cache_release(&ep->cache, entry);
            return uct_mlx5_umr_ep_no_resource(ep);
        }
        *entry_p = entry;
        return UCS_OK;
    }

    status = umr_layout_lower(layout, count, &iface->md->limits, &plan);
    if (status != UCS_OK) {
        ucs_error("mlx5_umr ep %p: lowering the local layout (count %zu) "
                  "failed: %s: %s", ep, count, ucs_status_string(status),
                  uct_umr_layout_last_error());
        return status;
    }

    if ((UCS_PTR_BYTE_OFFSET(base, plan->span_lb) < memh->base) ||
        (UCS_PTR_BYTE_OFFSET(base, plan->span_ub) >
         UCS_PTR_BYTE_OFFSET(memh->base, memh->length))) {
        ucs_error("mlx5_umr ep %p: local layout span [%p, %p) is outside its "
                  "memory handle %p+%" PRIu64, ep,
                  UCS_PTR_BYTE_OFFSET(base, plan->span_lb),
                  UCS_PTR_BYTE_OFFSET(base, plan->span_ub), memh->base,
                  memh->length);
        status = UCS_ERR_INVALID_PARAM;
        goto err_plan;
    }

    if (frags + plan->num_keys > ucs_min(ep->sq_avail, iface->cq_avail)) {
        if (frags + plan->num_keys > iface->config.tx_queue_len) {
            status = UCS_ERR_EXCEEDS_LIMIT;
        } else {
            status = uct_mlx5_umr_ep_no_resource(ep);
        }
        goto err_plan;
    }

    status = uct_mlx5_umr_cache_insert(&ep->cache, hash, &blob, sizeof(blob),
                                       layout, &memh->id, 1,
                                       plan->num_keys, &entry);
    if (status != UCS_OK) {
        if (status == UCS_ERR_NO_RESOURCE) {
            ++ep->stats.no_resource;
        }
        goto err_plan;
    }

    memh->flags  |= UCT_MLX5_UMR_MEMH_FLAG_CACHED;
    entry->length = plan->cost.total_bytes;
    *plan_p       = plan;
    *entry_p      = entry;
    return UCS_OK;

err_plan:
    umr_layout_plan_free(plan);
    return status;
}

static ucs_status_t
uct_mlx5_umr_ep_layout_op(uct_ep_h tl_ep, umr_eng_opcode_t opcode,
                          uct_mem_h tl_memh, void *base,
                          const uct_umr_layout_t *layout, size_t count,
                          size_t offset, size_t length, uint64_t remote_addr,
                          uct_rkey_t tl_rkey, uct_completion_t *comp)
{
    uct_mlx5_umr_ep_t *ep       = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);
    uct_mlx5_umr_memh_t *memh   = tl_memh;
    const uct_mlx5_umr_rkey_t *rkey = (const void*)tl_rkey;
    uct_mlx5_umr_iface_t *iface;
    uct_mlx5_umr_cache_entry_t *entry;
    umr_layout_plan_t *plan;
    uct_mlx5_umr_op_t *op;
    ucs_status_t status;
    umr_eng_sge_t sge;
    unsigned k, frags;
    ptrdiff_t ext, span_lb, span_ub;
    size_t total;
    void *buf;
    int pack;

    if (!uct_mlx5_umr_ep_is_ours(tl_ep)) {
        ucs_error("uct_umr_ep_%s_layout: ep %p is not an mlx5_umr endpoint",
                  (opcode == UMR_ENG_OP_RDMA_WRITE) ? "put" : "get", tl_ep);
        return UCS_ERR_INVALID_PARAM;
    }

    iface  = uct_mlx5_umr_ep_iface(ep);
    status = uct_mlx5_umr_ep_check_state(ep);
    if (status != UCS_OK) {
        return status;
    }

    if ((memh == NULL) || (memh->flags & UCT_MLX5_UMR_MEMH_FLAG_LAYOUT) ||
        (layout == NULL) || (count == 0) || (rkey == NULL)) {
        ucs_error("mlx5_umr ep %p: layout op: invalid parameter: memh %p "
                  "(must be contiguous) layout %p count %zu rkey %p", ep,
                  memh, layout, count, rkey);
        return UCS_ERR_INVALID_PARAM;
    }

    total = uct_umr_layout_size(layout) * count;
    if ((offset > total) || (length > total - offset)) {
        ucs_error("mlx5_umr ep %p: layout op: range [%zu, +%zu) is outside "
                  "the layout's %zu bytes", ep, offset, length, total);
        return UCS_ERR_INVALID_PARAM;
    }

    /* every byte the elements touch must lie inside the memory handle */
    ext  = uct_umr_layout_extent(layout) * (ptrdiff_t)(count - 1);
    span_lb = uct_umr_layout_true_lb(layout) + ucs_min(ext, 0);
    span_ub = uct_umr_layout_true_ub(layout) + ucs_max(ext, 0);
    if (((uintptr_t)base + span_lb < (uintptr_t)memh->base) ||
        ((uintptr_t)base + span_ub >
         (uintptr_t)memh->base + memh->length)) {
        ucs_error("mlx5_umr ep %p: local layout span [%p, %p) is outside its "
                  "memory handle %p+%" PRIu64, ep,
                  UCS_PTR_BYTE_OFFSET(base, span_lb),
                  UCS_PTR_BYTE_OFFSET(base, span_ub), memh->base,
                  memh->length);
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_mlx5_umr_ep_check_remote(rkey, remote_addr, length);
    if ((status != UCS_OK) || (length == 0)) {
        return status;
    }

    /* tiny blocks: one copy beats a descriptor per block */
    frags = uct_mlx5_umr_ep_num_frags(iface, length);
    pack  = (iface->config.pack_thresh > 0) &&
            (length <= iface->config.seg_size) &&
            ((double)uct_umr_layout_size(layout) /
             ucs_max(uct_umr_layout_num_blocks(layout), 1) <=
             (double)iface->config.pack_thresh);
    entry = NULL;
    plan  = NULL;
    if (!pack) {
        status = uct_mlx5_umr_ep_layout_key(ep, memh, base, layout, count,
                                            length, frags, &entry, &plan);
        if (status != UCS_OK) {
            return status;
        }
    } else if ((frags > ucs_min(ep->sq_avail, iface->cq_avail)) ||
               (iface->num_free_bufs == 0)) {
        return uct_mlx5_umr_ep_no_resource(ep);
    }

    op = uct_mlx5_umr_ep_op_get(ep, comp);
    if (op == NULL) {
        status = uct_mlx5_umr_ep_no_resource(ep);
        goto err_entry;
    }
    op->centry = entry;

    if (pack) {
        op->buf = uct_mlx5_umr_iface_buf_get(iface);

        buf = uct_mlx5_umr_iface_buf(iface, op->buf);
        if (opcode == UMR_ENG_OP_RDMA_WRITE) {
            status = uct_umr_layout_pack_range(layout, count, base, offset,
                                               length, buf);
        } else {
            status = uct_umr_layout_dup(layout, &op->own_layout);
            op->unpack_layout = op->own_layout;
            op->unpack_count  = count;
            op->unpack_base   = base;
            op->unpack_offset = offset;
            op->length        = length;
        }
        if (status != UCS_OK) {
            goto err_op;
        }

        sge.addr   = (uintptr_t)buf;
        sge.length = length;
        sge.lkey   = iface->bufs_mr->lkey;
        ++ep->stats.pack_fallbacks;
    } else {
        if (plan != NULL) {
            /* miss: configure the keys on this QP; the RDMA after them is
             * fenced behind the UMRs by the QP itself */
            for (k = 0; k < plan->num_keys; ++k) {
                status = uct_mlx5_umr_md_post_key(iface->md, ep->qp,
                                                  &plan->keys[k], base,
                                                  memh->mr->lkey,
                                                  entry->mkeys,
                                                  entry->mkeys[k],
                                                  UMR_ENG_ACCESS_LOCAL_WRITE,
                                                  (uintptr_t)op,
                                                  UMR_ENG_WR_SIGNALED);
                if (status != UCS_OK) {
                    ucs_error("mlx5_umr ep %p: UMR %u/%u failed: %s", ep,
                              k + 1, plan->num_keys,
                              ucs_status_string(status));
                    uct_mlx5_umr_cache_remove(&ep->cache, entry);
                    op->centry = NULL;
                    umr_layout_plan_free(plan);
                    plan = NULL;
                    goto err_posted;
                }
                --ep->sq_avail;
                --iface->cq_avail;
                ++op->wrs_left;
            }
            entry->lkey = entry->mkeys[plan->num_keys - 1]->eng->lkey;
            umr_layout_plan_free(plan);
            plan = NULL;
        }

        sge.addr   = offset; /* zero-based */
        sge.length = length;
        sge.lkey   = entry->lkey;
    }

    status = uct_mlx5_umr_ep_post_rdma(ep, op, opcode, &sge, 1, length,
                                       remote_addr, rkey->rkey);
    if (status != UCS_OK) {
        goto err_posted;
    }

    ++ep->stats.zcopy_ops;
    uct_mlx5_umr_ep_op_push(ep, op);
    return UCS_INPROGRESS;

err_posted:
    if (op->wrs_left > 0) {
        op->status = status;
        op->comp   = NULL;
        uct_mlx5_umr_ep_op_push(ep, op);
        return status;
    }
err_op:
    if (plan != NULL) {
        /* nothing configured: the new entry must not stay half-built */
        uct_mlx5_umr_cache_remove(&ep->cache, entry);
        op->centry = NULL;
        umr_layout_plan_free(plan);
    }
    uct_mlx5_umr_ep_op_release(ep, op);
    return status;

err_entry:
    if (plan != NULL) {
        uct_mlx5_umr_cache_remove(&ep->cache, entry);
        umr_layout_plan_free(plan);
    } else if (entry != NULL) {
        uct_mlx5_umr_cache_release(&ep->cache, entry);
    }
    return status;
}

ucs_status_t uct_umr_ep_put_layout(uct_ep_h ep, uct_mem_h memh, void *base,
                                   const uct_umr_layout_t *layout,
                                   size_t count, size_t offset, size_t length,
                                   uint64_t remote_addr, uct_rkey_t rkey,
                                   uct_completion_t *comp)
{
    return uct_mlx5_umr_ep_layout_op(ep, UMR_ENG_OP_RDMA_WRITE, memh, base,
                                     layout, count, offset, length,
                                     remote_addr, rkey, comp);
}

ucs_status_t uct_umr_ep_get_layout(uct_ep_h ep, uct_mem_h memh, void *base,
                                   const uct_umr_layout_t *layout,
                                   size_t count, size_t offset, size_t length,
                                   uint64_t remote_addr, uct_rkey_t rkey,
                                   uct_completion_t *comp)
{
    return uct_mlx5_umr_ep_layout_op(ep, UMR_ENG_OP_RDMA_READ, memh, base,
                                     layout, count, offset, length,
                                     remote_addr, rkey, comp);
}


/* ---- bounce-buffer operations ------------------------------------------ */

/* Take a slot, an op and a bounce buffer for a one-WR copy operation. */
static ucs_status_t
uct_mlx5_umr_ep_bcopy_start(uct_mlx5_umr_ep_t *ep, uct_rkey_t tl_rkey,
                            uint64_t remote_addr, size_t length,
                            uct_completion_t *comp, uct_mlx5_umr_op_t **op_p)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    uct_mlx5_umr_op_t *op;
    ucs_status_t status;

    status = uct_mlx5_umr_ep_check_state(ep);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    if (ucs_unlikely(tl_rkey == 0)) {
        ucs_error("mlx5_umr ep %p: NULL remote key", ep);
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_mlx5_umr_ep_check_remote((const void*)tl_rkey, remote_addr,
                                          length);
    if (status != UCS_OK) {
        return status;
    }

    if ((ucs_min(ep->sq_avail, iface->cq_avail) <
         uct_mlx5_umr_ep_num_frags(iface, length)) ||
        (iface->num_free_bufs == 0)) {
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
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    umr_eng_sge_t sge;
    ucs_status_t status;

    sge.addr   = (uintptr_t)uct_mlx5_umr_iface_buf(iface, op->buf);
    sge.length = length;
    sge.lkey   = iface->bufs_mr->lkey;

    status = uct_mlx5_umr_ep_post_rdma(ep, op, opcode, &sge, 1, length,
                                       remote_addr,
                                       ((uct_mlx5_umr_rkey_t*)tl_rkey)->rkey);
    if (status != UCS_OK) {
        uct_mlx5_umr_ep_op_release(ep, op);
        return status;
    }

    if (op->wrs_left == 0) {
        /* nothing to move: complete now, nothing will be polled */
        uct_mlx5_umr_ep_op_release(ep, op);
        return UCS_OK;
    }

    uct_mlx5_umr_ep_op_push(ep, op);
    return UCS_INPROGRESS;
}

ucs_status_t uct_mlx5_umr_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                       unsigned length, uint64_t remote_addr,
                                       uct_rkey_t rkey)
{
    uct_mlx5_umr_ep_t *ep       = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    uct_mlx5_umr_op_t *op;
    ucs_status_t status;

    /* not a debug-only check: the bounce buffer must never overflow */
    if (ucs_unlikely(length > iface->config.seg_size)) {
        ucs_error("put_short: length %u > SEG_SIZE %zu", length,
                  iface->config.seg_size);
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_mlx5_umr_ep_bcopy_start(ep, rkey, remote_addr, length, NULL,
                                         &op);
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
    status = uct_mlx5_umr_ep_bcopy_start(ep, rkey, remote_addr, 0, NULL, &op);
    if (status != UCS_OK) {
        return status;
    }

    length = pack_cb(uct_mlx5_umr_iface_buf(iface, op->buf), arg);
    if (length > iface->config.seg_size) {
        ucs_error("put_bcopy: packed %zu bytes > SEG_SIZE %zu", length,
                  iface->config.seg_size);
        uct_mlx5_umr_ep_op_release(ep, op);
        return UCS_ERR_INVALID_PARAM;
    }
    status = uct_mlx5_umr_ep_check_remote((const void*)rkey, remote_addr,
                                          length);
    if (status != UCS_OK) {
        uct_mlx5_umr_ep_op_release(ep, op);
        return status;
    }

    status = uct_mlx5_umr_ep_bcopy_post(ep, op, UMR_ENG_OP_RDMA_WRITE, length,
                                        remote_addr, rkey);
    return UCS_STATUS_IS_ERR(status) ? status : (ssize_t)length;
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

    if (ucs_unlikely(length > iface->config.seg_size)) {
        ucs_error("get_bcopy: length %zu > SEG_SIZE %zu", length,
                  iface->config.seg_size);
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_mlx5_umr_ep_bcopy_start(ep, rkey, remote_addr, length, comp,
                                         &op);
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


/* ---- flush, fence, pending --------------------------------------------- */

ucs_status_t uct_mlx5_umr_ep_flush(uct_ep_h tl_ep, unsigned flags,
                                   uct_completion_t *comp)
{
    uct_mlx5_umr_ep_t *ep = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);
    uct_mlx5_umr_op_t *op;

    if (!ucs_queue_is_empty(&ep->pending)) {
        /* pending work is not posted yet: the flush cannot cover it */
        return uct_mlx5_umr_ep_no_resource(ep);
    }

    if (ucs_queue_is_empty(&ep->ops)) {
        UCT_TL_EP_STAT_FLUSH(&ep->super);
        return ep->status;
    }

    if (comp != NULL) {
        /* a marker retired after every operation posted before it */
        op = uct_mlx5_umr_ep_op_get(ep, comp);
        if (op == NULL) {
            return uct_mlx5_umr_ep_no_resource(ep);
        }
        op->is_flush = 1;
        uct_mlx5_umr_ep_op_push(ep, op);
    }

    UCT_TL_EP_STAT_FLUSH_WAIT(&ep->super);
    return UCS_INPROGRESS;
}

ucs_status_t uct_mlx5_umr_ep_fence(uct_ep_h tl_ep, unsigned flags)
{
    uct_mlx5_umr_ep_t *ep = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);

    /* RC keeps writes in order; only reads may be overtaken */
    ep->fence = 1;
    UCT_TL_EP_STAT_FENCE(&ep->super);
    return UCS_OK;
}

ucs_status_t uct_mlx5_umr_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                                         unsigned flags)
{
    uct_mlx5_umr_ep_t *ep       = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);

    if ((ep->sq_avail > 0) && (iface->cq_avail > 0) &&
        (iface->num_free_bufs > 0) &&
        ucs_queue_is_empty(&ep->pending) && (ep->status == UCS_OK)) {
        return UCS_ERR_BUSY;
    }

    uct_pending_req_queue_push(&ep->pending, req);
    UCT_TL_EP_STAT_PEND(&ep->super);
    return UCS_OK;
}

static void uct_mlx5_umr_ep_purge_noop(uct_pending_req_t *req, void *arg)
{
}

void uct_mlx5_umr_ep_pending_purge(uct_ep_h tl_ep,
                                   uct_pending_purge_callback_t cb, void *arg)
{
    uct_mlx5_umr_ep_t *ep = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);
    uct_pending_req_priv_queue_t *priv;

    if (cb == NULL) {
        cb = uct_mlx5_umr_ep_purge_noop;
    }
    uct_pending_queue_purge(priv, &ep->pending, 1, cb, arg);
}


/* ---- connection -------------------------------------------------------- */

ucs_status_t uct_mlx5_umr_ep_get_address(uct_ep_h tl_ep, uct_ep_addr_t *addr)
{
    uct_mlx5_umr_ep_t *ep = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);

    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);

    uint64_t buf[UMR_ENG_ADDR_MAX / sizeof(uint64_t)];

    /* QP address, then the device address the connection needs; the engine
     * writes aligned buffers, UCP packs addresses at any offset */
    iface->eng->qp_get_addr(ep->qp, buf);
    memcpy(addr, buf, iface->md->caps.qp_addr_len);
    iface->eng->dev_get_addr(iface->md->dev, buf);
    memcpy(UCS_PTR_BYTE_OFFSET(addr, iface->md->caps.qp_addr_len), buf,
           iface->md->caps.dev_addr_len);
    return UCS_OK;
}

ucs_status_t uct_mlx5_umr_ep_connect_to_ep(uct_ep_h tl_ep,
                                           const uct_device_addr_t *dev_addr,
                                           const uct_ep_addr_t *ep_addr)
{
    uct_mlx5_umr_ep_t *ep       = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    ucs_status_t status;

    uint64_t peer_dev[UMR_ENG_ADDR_MAX / sizeof(uint64_t)];
    uint64_t peer_qp[UMR_ENG_ADDR_MAX / sizeof(uint64_t)];

    if (ep_addr == NULL) {
        ucs_error("mlx5_umr ep %p: connect_to_ep: NULL ep address", ep);
        return UCS_ERR_INVALID_PARAM;
    }

    /* the ep address carries the engine device address (see umr_iface.h);
     * addresses come unaligned off the wire: the engine gets aligned copies */
    memcpy(peer_qp, ep_addr, iface->md->caps.qp_addr_len);
    memcpy(peer_dev, UCS_PTR_BYTE_OFFSET(ep_addr, iface->md->caps.qp_addr_len),
           iface->md->caps.dev_addr_len);
    if (!iface->eng->dev_is_reachable(iface->md->dev, peer_dev)) {
        ucs_error("mlx5_umr ep %p: peer device is not reachable", ep);
        return UCS_ERR_UNREACHABLE;
    }

    status = iface->eng->qp_connect(ep->qp, peer_dev, peer_qp);
    if (status != UCS_OK) {
        ucs_error("mlx5_umr ep %p: connect failed: %s", ep,
                  ucs_status_string(status));
        return status;
    }

    ep->connected = 1;
    return UCS_OK;
}

ucs_status_t uct_umr_ep_get_stats(uct_ep_h tl_ep, uct_umr_ep_stats_t *stats)
{
    uct_mlx5_umr_ep_t *ep;

    if ((stats == NULL) || !uct_mlx5_umr_ep_is_ours(tl_ep)) {
        ucs_error("uct_umr_ep_get_stats: ep %p is not an mlx5_umr endpoint "
                  "(or stats is NULL)", tl_ep);
        return UCS_ERR_INVALID_PARAM;
    }

    ep     = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);
    *stats = ep->stats;
    return UCS_OK;
}

ucs_status_t uct_umr_ep_rkey_unpack(uct_ep_h tl_ep, const void *rkey_buffer,
                                    uct_rkey_t *rkey_p)
{
    if (!uct_mlx5_umr_ep_is_ours(tl_ep)) {
        ucs_error("uct_umr_ep_rkey_unpack: ep %p is not an mlx5_umr endpoint",
                  tl_ep);
        return UCS_ERR_INVALID_PARAM;
    }

    return uct_mlx5_umr_rcache_get(
            &ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t)->rcache, rkey_buffer,
            rkey_p);
}

ucs_status_t uct_umr_ep_rkey_release(uct_ep_h tl_ep, uct_rkey_t rkey)
{
    if (!uct_mlx5_umr_ep_is_ours(tl_ep)) {
        ucs_error("uct_umr_ep_rkey_release: ep %p is not an mlx5_umr endpoint",
                  tl_ep);
        return UCS_ERR_INVALID_PARAM;
    }

    return uct_mlx5_umr_rcache_put(
            &ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t)->rcache, rkey);
}

static UCS_CLASS_INIT_FUNC(uct_mlx5_umr_ep_t, const uct_ep_params_t *params)
{
    uct_mlx5_umr_iface_t *iface = ucs_derived_of(params->iface,
                                                 uct_mlx5_umr_iface_t);
    umr_eng_qp_params_t qp_params;
    ucs_status_t status;

    UCS_CLASS_CALL_SUPER_INIT(uct_base_ep_t, &iface->super);

    if (params->field_mask & (UCT_EP_PARAM_FIELD_DEV_ADDR |
                              UCT_EP_PARAM_FIELD_IFACE_ADDR)) {
        ucs_error("mlx5_umr: connects ep to ep only (UCT_IFACE_FLAG_CONNECT_"
                  "TO_EP); create the ep with the iface alone");
        return UCS_ERR_UNSUPPORTED;
    }

    qp_params.sq_size         = iface->config.tx_queue_len;
    qp_params.max_sge         = iface->config.max_sge;
    qp_params.max_umr_entries = iface->md->config.mkey_entries;
    status = iface->eng->qp_create(iface->md->dev, iface->cq, &qp_params,
                                   &self->qp);
    if (status != UCS_OK) {
        ucs_error("mlx5_umr: failed to create a QP: %s",
                  ucs_status_string(status));
        return status;
    }

    self->sq_avail  = iface->config.tx_queue_len;
    self->connected = 0;
    self->fence     = 0;
    self->status    = UCS_OK;
    memset(&self->stats, 0, sizeof(self->stats));
    ucs_queue_head_init(&self->ops);
    ucs_queue_head_init(&self->pending);
    uct_mlx5_umr_cache_init(&self->cache, iface->md, iface->config.cache_size,
                            &self->stats);
    uct_mlx5_umr_rcache_init(&self->rcache, iface->config.rcache_size,
                             &self->stats);
    ucs_list_add_tail(&iface->eps, &self->list);
    return UCS_OK;
}

static UCS_CLASS_CLEANUP_FUNC(uct_mlx5_umr_ep_t)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(self);
    uct_mlx5_umr_op_t *op;

    ucs_list_del(&self->list);
    /* the engine drops this QP's completions from the shared CQ */
    iface->eng->qp_destroy(self->qp);

    ucs_queue_for_each_extract(op, &self->ops, queue, 1) {
        iface->cq_avail += op->wrs_left; /* purged, never polled */
        uct_mlx5_umr_ep_op_release(self, op);
        --iface->outstanding;
    }

    uct_mlx5_umr_ep_pending_purge(&self->super.super, NULL, NULL);
    uct_mlx5_umr_cache_cleanup(&self->cache);
    uct_mlx5_umr_rcache_cleanup(&self->rcache);
}

UCS_CLASS_DEFINE(uct_mlx5_umr_ep_t, uct_base_ep_t);
UCS_CLASS_DEFINE_NEW_FUNC(uct_mlx5_umr_ep_t, uct_ep_t, const uct_ep_params_t*);
UCS_CLASS_DEFINE_DELETE_FUNC(uct_mlx5_umr_ep_t, uct_ep_t);
