/**
 * mlx5_umr transport: layout operations over contiguous local memory
 * (uct_umr_ep_put_layout/get_layout, the extension API of uct_umr.h).
 *
 * The local side is a layout applied to a contiguous memory handle: tiny
 * blocks are packed into a bounce buffer, anything else goes through a local
 * UMR key that the ep cache keeps per (memh, layout, base, count); a miss
 * lowers the layout and configures the keys on this QP before the RDMA.
 */
#include "umr_config.h"

#include "umr_ep.inl"

#include <inttypes.h>


typedef struct UCS_S_PACKED {
    uint64_t memh_id;
    uint64_t layout_hash;
    uint64_t base;
    uint64_t count;
} uct_mlx5_umr_layout_blob_t;


/* Look the key up, or plan a new entry: *plan_p is then set and the caller
 * posts the plan's UMRs. */
static ucs_status_t
uct_mlx5_umr_ep_layout_key(uct_mlx5_umr_ep_t *ep, uct_mlx5_umr_memh_t *memh,
                           void *base, const uct_umr_layout_t *layout,
                           size_t count, unsigned frags,
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
        if (!uct_mlx5_umr_ep_has_slots(ep, frags)) {
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

    if (!uct_mlx5_umr_ep_has_slots(ep, frags + plan->num_keys)) {
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

/* Miss: configure the planned keys on this QP; the RDMA after them is fenced
 * behind the UMRs by the QP itself. */
static ucs_status_t
uct_mlx5_umr_ep_post_layout_keys(uct_mlx5_umr_ep_t *ep, uct_mlx5_umr_op_t *op,
                                 uct_mlx5_umr_cache_entry_t *entry,
                                 const umr_layout_plan_t *plan, void *base,
                                 uint32_t mr_lkey)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    ucs_status_t status;
    unsigned k;

    for (k = 0; k < plan->num_keys; ++k) {
        status = uct_mlx5_umr_md_post_key(iface->md, ep->qp, &plan->keys[k],
                                          base, mr_lkey, entry->mkeys,
                                          entry->mkeys[k],
                                          UMR_ENG_ACCESS_LOCAL_WRITE,
                                          (uintptr_t)op, UMR_ENG_WR_SIGNALED);
        if (status != UCS_OK) {
            ucs_error("mlx5_umr ep %p: UMR %u/%u failed: %s", ep, k + 1,
                      plan->num_keys, ucs_status_string(status));
            return status;
        }
        uct_mlx5_umr_ep_wr_posted(ep, op);
    }

    entry->lkey = entry->mkeys[plan->num_keys - 1]->eng->lkey;
    return UCS_OK;
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
    unsigned frags;
    ptrdiff_t ext, span_lb, span_ub;
    size_t total;
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
                                            frags, &entry, &plan);
        if (status != UCS_OK) {
            return status;
        }
    } else if (!uct_mlx5_umr_ep_has_slots(ep, frags) ||
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
        /* the caller may free its layout before a get completes: keep a
         * copy for the scatter */
        status = uct_mlx5_umr_ep_pack_layout(ep, op, opcode, layout, 1, count,
                                             base, offset, length, &sge);
        if (status != UCS_OK) {
            return uct_mlx5_umr_ep_op_abort(ep, op, status);
        }
    } else {
        if (plan != NULL) {
            status = uct_mlx5_umr_ep_post_layout_keys(ep, op, entry, plan,
                                                      base, memh->mr->lkey);
            umr_layout_plan_free(plan);
            if (status != UCS_OK) {
                /* the new entry must not stay half-built */
                uct_mlx5_umr_cache_remove(&ep->cache, entry);
                op->centry = NULL;
                return uct_mlx5_umr_ep_op_abort(ep, op, status);
            }
        }

        sge.addr   = offset; /* zero-based */
        sge.length = length;
        sge.lkey   = entry->lkey;
    }

    status = uct_mlx5_umr_ep_op_post(ep, op, opcode, &sge, 1, length,
                                     remote_addr, rkey->rkey);
    if (status == UCS_INPROGRESS) {
        ++ep->stats.zcopy_ops;
    }
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
