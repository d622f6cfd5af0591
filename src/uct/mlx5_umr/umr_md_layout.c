/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: layout registration (uct_umr_mem_reg_over,
 * uct_umr_mem_reg). A layout is lowered to a plan of indirect keys, the
 * keys come from the md's pool and are configured on the md's UMR queue
 * pair, children first, and waited for: a packed key is usable by a peer as
 * soon as registration returns. The keys address memory registered by the
 * caller (its handles' pages, pinned once); uct_umr_mem_reg registers the
 * layout's span first and the layout handle holds it.
 */
#include "umr_config.h"

#include "umr_key.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <inttypes.h>


/* The md of a layout registration, or NULL after a line naming what is
 * wrong with the arguments. */
static uct_mlx5_umr_md_t *
uct_mlx5_umr_layout_reg_md(uct_md_h uct_md, const char *func, void *base,
                           const umr_layout_t *layout, size_t count,
                           uct_mem_h *memh_p)
{
    uct_mlx5_umr_md_t *md = uct_mlx5_umr_md_from_handle(uct_md);

    if (md == NULL) {
        ucs_error("%s: md %p is not an mlx5_umr memory domain", func, uct_md);
        return NULL;
    }
    /* base may be NULL: displacements that are addresses (MPI_BOTTOM) */
    if ((layout == NULL) || (count == 0) ||
        (memh_p == NULL) || (umr_layout_size(layout) == 0)) {
        ucs_error("%s: invalid parameter: base %p layout %p count %zu "
                  "memh_p %p", func, base, layout, count, memh_p);
        return NULL;
    }
    return md;
}

/* A layout handle of (base, layout, count) with its plan, no keys yet. */
static ucs_status_t
uct_mlx5_umr_layout_memh_new(uct_mlx5_umr_md_t *md, void *base,
                             const umr_layout_t *layout, size_t count,
                             unsigned access, ucs_log_level_t level,
                             uct_mlx5_umr_memh_t **memh_p)
{
    uct_mlx5_umr_memh_t *memh;
    umr_layout_plan_t *plan;
    ucs_status_t status;

    status = umr_layout_lower(layout, count, &md->limits, &plan);
    if (status != UCS_OK) {
        ucs_log(level, "uct_umr_mem_reg: lowering the layout (count %zu) "
                "failed: %s: %s", count, ucs_status_string(status),
                umr_layout_last_error());
        return status;
    }

    memh = ucs_calloc(1, sizeof(*memh), "mlx5_umr layout memh");
    if (memh == NULL) {
        umr_layout_plan_free(plan);
        return UCS_ERR_NO_MEMORY;
    }

    memh->plan        = plan;
    memh->flags       = UCT_MLX5_UMR_MEMH_FLAG_LAYOUT;
    memh->access      = access;
    memh->base        = base;
    memh->count       = count;
    memh->length      = plan->cost.total_bytes;
    memh->layout_hash = umr_layout_hash(layout);
    status            = umr_layout_dup(layout, &memh->layout);
    if (status != UCS_OK) {
        uct_mlx5_umr_memh_free(md, memh);
        return status;
    }

    *memh_p = memh;
    return UCS_OK;
}

/* Take the plan's keys from the pool and configure them over lkeys[mem]
 * (the memory of each entry); the handle is ready for peers after it. */
static ucs_status_t
uct_mlx5_umr_layout_memh_keys(uct_mlx5_umr_md_t *md,
                              uct_mlx5_umr_memh_t *memh,
                              const uint32_t *lkeys, ucs_log_level_t level)
{
    const umr_layout_plan_t *plan = memh->plan;
    ucs_status_t status;
    unsigned k;

    memh->mkeys = ucs_calloc(plan->num_keys, sizeof(*memh->mkeys),
                             "mlx5_umr memh keys");
    if (memh->mkeys == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_mlx5_umr_md_mkeys_check_log(md, plan->num_keys, level);
    if (status != UCS_OK) {
        return status;
    }

    for (k = 0; k < plan->num_keys; ++k) {
        status = uct_mlx5_umr_md_mkey_get(md, &memh->mkeys[k]);
        if (status != UCS_OK) {
            return status;
        }
        ++memh->num_mkeys;
        ++md->mkeys_reg;
    }

    /* children are read through their parent: every key gets access */
    status = uct_mlx5_umr_key_configure(md, plan, memh->base, lkeys,
                                        memh->mkeys, memh->access);
    if (status != UCS_OK) {
        return status;
    }

    memh->id = md->next_memh_id++;
    ++md->stats.layout_regs;
    return UCS_OK;
}

/* The bytes an entry of base memory touches, relative to base. */
static void uct_mlx5_umr_layout_entry_extent(const umr_layout_key_t *key,
                                             const umr_layout_entry_t *e,
                                             int64_t *lo_p, int64_t *hi_p)
{
    uint64_t len = e->bytes_count;

    if (key->kind == UMR_LAYOUT_KEY_INTERLEAVED) {
        len += (uint64_t)(key->repeat - 1) *
               ((uint64_t)e->bytes_count + e->bytes_skip);
    }
    *lo_p = e->offset;
    *hi_p = e->offset + (int64_t)len;
}

/* Which of the caller's handles each entry of base memory lies in (its
 * `mem`), and their keys; the layout key's access must be theirs too. */
static ucs_status_t
uct_mlx5_umr_layout_bind(uct_mlx5_umr_memh_t *memh,
                         uct_mlx5_umr_memh_t *const *memhs,
                         unsigned num_memhs, uint32_t *lkeys,
                         ucs_log_level_t level)
{
    uintptr_t base = (uintptr_t)memh->base;
    umr_layout_entry_t *e;
    umr_layout_key_t *key;
    int64_t lo, hi;
    unsigned k, i, m;

    for (k = 0; k < memh->plan->num_keys; ++k) {
        key = &memh->plan->keys[k];
        for (i = 0; i < key->num_entries; ++i) {
            e = &key->entries[i];
            if (e->child >= 0) {
                continue;
            }
            uct_mlx5_umr_layout_entry_extent(key, e, &lo, &hi);
            for (m = 0; m < num_memhs; ++m) {
                if ((base + lo >= (uintptr_t)memhs[m]->base) &&
                    (base + hi <= (uintptr_t)memhs[m]->base +
                                  memhs[m]->length)) {
                    break;
                }
            }
            if (m == num_memhs) {
                ucs_log(level, "uct_umr_mem_reg_over: the block [%p, %p) "
                        "lies in none of the %u memory handles",
                        (void*)(base + lo), (void*)(base + hi), num_memhs);
                return UCS_ERR_INVALID_PARAM;
            }
            e->mem = m;
        }
    }

    for (m = 0; m < num_memhs; ++m) {
        if (memh->access & ~memhs[m]->access) {
            ucs_log(level, "uct_umr_mem_reg_over: the layout key's access "
                    "0x%x is beyond memory handle %u's (0x%x)", memh->access,
                    m, memhs[m]->access);
            return UCS_ERR_INVALID_PARAM;
        }
        lkeys[m] = memhs[m]->mr->lkey;
    }
    return UCS_OK;
}

/* Blocks of a layout over several handles, each with the handle it lies
 * in (umr_layout_lower_blocks never merges blocks of two memories). */
typedef struct {
    uintptr_t                  base;
    uct_mlx5_umr_memh_t *const *memhs;
    unsigned                   num_memhs;
    umr_layout_block_t         *blocks;
    size_t                     num, cap;
    int                        outside;   /* a block in none of them */
} uct_mlx5_umr_layout_blocks_t;

static int uct_mlx5_umr_layout_block(void *arg, ptrdiff_t offset, size_t len)
{
    uct_mlx5_umr_layout_blocks_t *b = arg;
    uintptr_t lo = b->base + offset;
    umr_layout_block_t *grown;
    unsigned m;

    for (m = 0; m < b->num_memhs; ++m) {
        if ((lo >= (uintptr_t)b->memhs[m]->base) &&
            (lo + len <= (uintptr_t)b->memhs[m]->base +
                         b->memhs[m]->length)) {
            break;
        }
    }
    if (m == b->num_memhs) {
        b->outside = 1;
        return 1;
    }
    if (b->num == b->cap) {
        b->cap = ucs_max(2 * b->cap, 64);
        grown  = ucs_realloc(b->blocks, b->cap * sizeof(*grown),
                             "mlx5_umr layout blocks");
        if (grown == NULL) {
            return 1;
        }
        b->blocks = grown;
    }
    b->blocks[b->num].offset   = offset;
    b->blocks[b->num].length   = len;
    b->blocks[b->num++].mem    = m;
    return 0;
}

/* The layout's plan has an entry whose repeats reach over two handles (its
 * blocks in separate allocations, laid out alike): its blocks lowered one
 * by one, each in its own handle, into list keys instead. */
static ucs_status_t
uct_mlx5_umr_layout_plan_by_blocks(uct_mlx5_umr_md_t *md,
                                   uct_mlx5_umr_memh_t *memh,
                                   uct_mlx5_umr_memh_t *const *memhs,
                                   unsigned num_memhs, ucs_log_level_t level)
{
    uct_mlx5_umr_layout_blocks_t b = {(uintptr_t)memh->base, memhs,
                                      num_memhs, NULL, 0, 0, 0};
    umr_layout_plan_t *plan = NULL;
    ucs_status_t status;

    status = umr_layout_for_each_block(memh->layout, memh->count,
                                       uct_mlx5_umr_layout_block, &b);
    if (status == UCS_OK) {
        status = b.outside ? UCS_ERR_INVALID_PARAM :
                 (b.num < b.cap || b.num == 0) ?
                 umr_layout_lower_blocks(b.blocks, b.num, &md->limits,
                                         &plan) :
                 UCS_ERR_NO_MEMORY;
    }
    ucs_free(b.blocks);
    if (status != UCS_OK) {
        ucs_log(level, "uct_umr_mem_reg_over: the layout's blocks over %u "
                "memory handles: %s", num_memhs, ucs_status_string(status));
        return status;
    }
    umr_layout_plan_free(memh->plan);
    memh->plan = plan;
    return UCS_OK;
}

ucs_status_t uct_umr_mem_reg_over(uct_md_h uct_md, void *base,
                                  const umr_layout_t *layout, size_t count,
                                  const uct_mem_h *memhs, unsigned num_memhs,
                                  unsigned flags, uct_mem_h *memh_p)
{
    uct_mlx5_umr_md_t *md = uct_mlx5_umr_layout_reg_md(uct_md, __func__, base,
                                                       layout, count, memh_p);
    ucs_log_level_t level = (flags & UCT_MD_MEM_FLAG_HIDE_ERRORS) ?
                            UCS_LOG_LEVEL_DEBUG : UCS_LOG_LEVEL_ERROR;
    uct_mlx5_umr_memh_t *const *mems = (uct_mlx5_umr_memh_t *const*)memhs;
    uint32_t lkeys[UCT_UMR_MEM_REG_MAX_MEMHS];
    uct_mlx5_umr_memh_t *memh;
    ucs_status_t status;
    unsigned m;

    if (md == NULL) {
        return UCS_ERR_INVALID_PARAM;
    }
    if ((memhs == NULL) || (num_memhs == 0) ||
        (num_memhs > UCT_UMR_MEM_REG_MAX_MEMHS)) {
        ucs_error("uct_umr_mem_reg_over: %u memory handles at %p (1 to %u)",
                  num_memhs, memhs, UCT_UMR_MEM_REG_MAX_MEMHS);
        return UCS_ERR_INVALID_PARAM;
    }
    for (m = 0; m < num_memhs; ++m) {
        if ((mems[m] == NULL) ||
            (mems[m]->flags & UCT_MLX5_UMR_MEMH_FLAG_LAYOUT)) {
            ucs_error("uct_umr_mem_reg_over: memory handle %u (%p) is not a "
                      "contiguous registration (uct_md_mem_reg)", m, mems[m]);
            return UCS_ERR_INVALID_PARAM;
        }
    }

    status = uct_mlx5_umr_layout_memh_new(md, base, layout, count,
                                          uct_mlx5_umr_md_access(flags),
                                          level, &memh);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_mlx5_umr_layout_bind(memh, mems, num_memhs, lkeys,
                                      (num_memhs > 1) ? UCS_LOG_LEVEL_DEBUG :
                                                        level);
    if ((status == UCS_ERR_INVALID_PARAM) && (num_memhs > 1)) {
        status = uct_mlx5_umr_layout_plan_by_blocks(md, memh, mems,
                                                    num_memhs, level);
        if (status == UCS_OK) {
            status = uct_mlx5_umr_layout_bind(memh, mems, num_memhs, lkeys,
                                              level);
        }
    }
    if (status == UCS_OK) {
        status = uct_mlx5_umr_layout_memh_keys(md, memh, lkeys, level);
    }
    if (status != UCS_OK) {
        uct_mlx5_umr_memh_free(md, memh);
        return status;
    }

    *memh_p = memh;
    return UCS_OK;
}

ucs_status_t uct_umr_mem_reg(uct_md_h uct_md, void *base,
                             const umr_layout_t *layout, size_t count,
                             unsigned flags, uct_mem_h *memh_p)
{
    uct_mlx5_umr_md_t *md = uct_mlx5_umr_layout_reg_md(uct_md, __func__, base,
                                                       layout, count, memh_p);
    uct_mlx5_umr_memh_t *span;
    ptrdiff_t lo, hi;
    ucs_status_t status;

    if (md == NULL) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (umr_layout_span(layout, count, &lo, &hi) != UCS_OK) {
        ucs_error("uct_umr_mem_reg: %s", umr_layout_last_error());
        return UCS_ERR_INVALID_PARAM;
    }

    /* the keys over the layout's span, registered here and held by the
     * layout handle */
    status = uct_mlx5_umr_memh_reg(md, UCS_PTR_BYTE_OFFSET(base, lo), hi - lo,
                                   flags, &span);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_umr_mem_reg_over(uct_md, base, layout, count,
                                  (uct_mem_h*)&span, 1, flags, memh_p);
    if (status != UCS_OK) {
        uct_mlx5_umr_memh_free(md, span);
        return status;
    }
    ((uct_mlx5_umr_memh_t*)*memh_p)->span = span;
    return UCS_OK;
}
