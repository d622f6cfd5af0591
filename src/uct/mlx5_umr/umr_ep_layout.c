/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: layout operations over contiguous local memory
 * (uct_umr_ep_put_layout/get_layout, the extension API of uct_umr.h).
 *
 * The local side is a layout applied to a contiguous memory handle: tiny
 * blocks are packed into a bounce buffer, anything else goes through a local
 * UMR key that the ep cache keeps per (memh, layout, base, count); a miss
 * lowers the layout and configures the keys on this QP before the RDMA. Or
 * it is the caller's layout handle of the same elements (blocks in several
 * allocations, uct_umr_mem_reg_over), whose own key serves.
 */
#include "umr_config.h"

#include "umr_ep.inl"
#include "umr_key.h"

#include <inttypes.h>


typedef struct UCS_S_PACKED {
    uint64_t memh_id;
    uint64_t layout_hash;
    uint64_t base;
    uint64_t count;
} uct_mlx5_umr_layout_blob_t;


/* The local key of (memh, layout, base, count) for op: from the ep cache, or
 * lowered and configured now (uct_mlx5_umr_ep_key_configure). The op holds
 * the entry. */
static ucs_status_t
uct_mlx5_umr_ep_layout_key(uct_mlx5_umr_ep_t *ep, uct_mlx5_umr_op_t *op,
                           uct_mlx5_umr_memh_t *memh, void *base,
                           const umr_layout_t *layout, size_t count,
                           unsigned frags)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    uct_mlx5_umr_layout_blob_t blob;
    uct_mlx5_umr_cache_entry_t *entry;
    umr_layout_plan_t *plan;
    ucs_status_t status;

    blob.memh_id     = memh->id;
    blob.layout_hash = umr_layout_hash(layout);
    blob.base        = (uintptr_t)base;
    blob.count       = count;

    entry = uct_mlx5_umr_cache_lookup(&ep->cache, &blob, sizeof(blob), layout);
    if (entry != NULL) {
        op->centry = entry;
        return UCS_OK;
    }

    status = umr_layout_lower(layout, count, &iface->md->limits, &plan);
    if (status != UCS_OK) {
        /* beyond the limits: the caller's to handle (it learns it before
         * any data moves), so not an error line */
        ucs_log((status == UCS_ERR_EXCEEDS_LIMIT) ? UCS_LOG_LEVEL_DEBUG :
                UCS_LOG_LEVEL_ERROR, "mlx5_umr ep %p: lowering the local "
                "layout (count %zu) failed: %s: %s", ep, count,
                ucs_status_string(status), umr_layout_last_error());
        return status;
    }

    status = uct_mlx5_umr_ep_key_configure(ep, op, plan, base,
                                           &memh->mr->lkey, frags, &blob,
                                           sizeof(blob), layout, &memh->id,
                                           1, memh->access &
                                              UMR_ENG_ACCESS_LOCAL_WRITE);
    if (status == UCS_OK) {
        memh->flags |= UCT_MLX5_UMR_MEMH_FLAG_CACHED;
    }
    umr_layout_plan_free(plan);
    return status;
}

static ucs_status_t
uct_mlx5_umr_ep_layout_op(uct_ep_h tl_ep, umr_eng_opcode_t opcode,
                          uct_mem_h tl_memh, void *base,
                          const umr_layout_t *layout, size_t count,
                          size_t offset, size_t length, uint64_t remote_addr,
                          uct_rkey_t tl_rkey, uct_completion_t *comp)
{
    uct_mlx5_umr_ep_t *ep       = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);
    uct_mlx5_umr_memh_t *memh   = tl_memh;
    const uct_mlx5_umr_rkey_t *rkey = (const void*)tl_rkey;
    uct_mlx5_umr_iface_t *iface;
    uct_mlx5_umr_op_t *op;
    ptrdiff_t span_lb, span_ub;
    ucs_status_t status;
    umr_eng_sge_t sge;
    unsigned frags;
    size_t total;
    int own_key;
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

    if ((memh == NULL) || (layout == NULL) || (count == 0) ||
        (rkey == NULL)) {
        ucs_error("mlx5_umr ep %p: layout op: invalid parameter: memh %p "
                  "layout %p count %zu rkey %p", ep, memh, layout, count,
                  rkey);
        return UCS_ERR_INVALID_PARAM;
    }
    own_key = !!(memh->flags & UCT_MLX5_UMR_MEMH_FLAG_LAYOUT);
    if (own_key && ((memh->base != base) || (memh->count != count) ||
                    !umr_layout_equal(memh->layout, layout))) {
        ucs_error("mlx5_umr ep %p: layout op: the layout handle %p is of "
                  "other elements (base %p, count %zu, layout %s): the "
                  "local side must be the elements it was registered for",
                  ep, memh, base, count,
                  umr_layout_equal(memh->layout, layout) ? "the same" :
                                                           "another");
        return UCS_ERR_INVALID_PARAM;
    }

    if ((opcode == UMR_ENG_OP_RDMA_READ) &&
        !(memh->access & UMR_ENG_ACCESS_LOCAL_WRITE)) {
        ucs_error("mlx5_umr ep %p: get_layout into memory handle %p, which "
                  "was registered without UCT_MD_MEM_ACCESS_LOCAL_WRITE", ep,
                  memh);
        return UCS_ERR_INVALID_PARAM;
    }

    /* every byte the elements touch must lie inside the memory handle */
    if ((umr_layout_total_size(layout, count, &total) != UCS_OK) ||
        (umr_layout_span(layout, count, &span_lb, &span_ub) != UCS_OK)) {
        ucs_error("mlx5_umr ep %p: layout op: %s", ep,
                  umr_layout_last_error());
        return UCS_ERR_INVALID_PARAM;
    }
    if ((offset > total) || (length > total - offset)) {
        ucs_error("mlx5_umr ep %p: layout op: range [%zu, +%zu) is outside "
                  "the layout's %zu bytes", ep, offset, length, total);
        return UCS_ERR_INVALID_PARAM;
    }
    if (!own_key &&
        (((uintptr_t)base + span_lb < (uintptr_t)memh->base) ||
         ((uintptr_t)base + span_ub >
          (uintptr_t)memh->base + memh->length))) {
        ucs_error("mlx5_umr ep %p: local layout span [%p, %p) is outside its "
                  "memory handle %p+%" PRIu64, ep,
                  UCS_PTR_BYTE_OFFSET(base, span_lb),
                  UCS_PTR_BYTE_OFFSET(base, span_ub), memh->base,
                  memh->length);
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_mlx5_umr_ep_check_remote_range(rkey, remote_addr, length);
    if ((status != UCS_OK) || (length == 0)) {
        return status;
    }

    frags  = uct_mlx5_umr_ep_num_frags(iface, length);
    status = uct_mlx5_umr_ep_check_frags(ep, frags);
    if (status != UCS_OK) {
        return status;
    }

    /* no UMR on this device any more: a copy where one can serve */
    pack = ((iface->md->umr_broken != UCS_OK) &&
            (length <= iface->config.sizes.seg_size)) ||
           uct_mlx5_umr_ep_should_pack(
            iface, length,
            (double)umr_layout_size(layout) /
            ucs_max(umr_layout_num_blocks(layout), 1));
    if (!uct_mlx5_umr_ep_has_slots(ep, frags) ||
        (pack && !uct_mlx5_umr_iface_has_buf(iface))) {
        return uct_mlx5_umr_ep_no_resource(ep);
    }

    op = uct_mlx5_umr_ep_op_get(ep, comp);
    if (op == NULL) {
        return uct_mlx5_umr_ep_no_resource(ep);
    }

    if (pack) {
        /* the caller may free its layout before a get completes: keep a
         * copy for the scatter */
        status = uct_mlx5_umr_ep_pack_layout(ep, op, opcode, layout, 1, count,
                                             base, offset, length, &sge);
    } else if (own_key) {
        /* its blocks were checked against their handles when it was made
         * (uct_umr_mem_reg_over), which may be several allocations */
        status     = UCS_OK;
        sge.addr   = offset; /* zero-based */
        sge.length = length;
        sge.lkey   = uct_mlx5_umr_key_lkey(memh->plan, memh->mkeys);
    } else {
        status = uct_mlx5_umr_ep_layout_key(ep, op, memh, base, layout, count,
                                            frags);
        sge.addr   = offset; /* zero-based */
        sge.length = length;
        sge.lkey   = (op->centry != NULL) ? op->centry->lkey : 0;
    }
    if (status != UCS_OK) {
        return uct_mlx5_umr_ep_op_abort(ep, op, status);
    }

    status = uct_mlx5_umr_ep_op_post(ep, op, opcode, &sge, 1, length,
                                     remote_addr, rkey->rkey);
    if (status == UCS_INPROGRESS) {
        ++ep->stats.zcopy_ops;
    }
    return status;
}

ucs_status_t uct_umr_ep_put_layout(uct_ep_h ep, uct_mem_h memh, void *base,
                                   const umr_layout_t *layout,
                                   size_t count, size_t offset, size_t length,
                                   uint64_t remote_addr, uct_rkey_t rkey,
                                   uct_completion_t *comp)
{
    return uct_mlx5_umr_ep_layout_op(ep, UMR_ENG_OP_RDMA_WRITE, memh, base,
                                     layout, count, offset, length,
                                     remote_addr, rkey, comp);
}

ucs_status_t uct_umr_ep_get_layout(uct_ep_h ep, uct_mem_h memh, void *base,
                                   const umr_layout_t *layout,
                                   size_t count, size_t offset, size_t length,
                                   uint64_t remote_addr, uct_rkey_t rkey,
                                   uct_completion_t *comp)
{
    return uct_mlx5_umr_ep_layout_op(ep, UMR_ENG_OP_RDMA_READ, memh, base,
                                     layout, count, offset, length,
                                     remote_addr, rkey, comp);
}
