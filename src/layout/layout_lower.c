/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr layout engine: lowering (layout, count) to UMR keys.
 *
 * The packed stream is walked top-down. A vector whose element has a few
 * blocks and whose stride fits the 16-bit fields becomes one interleaved key
 * (one entry per block piece, repeat = count). Everything else is emitted as
 * items (memory blocks or keys) into a streaming B-tree of list keys:
 *
 *     level 2:            [ L5 ]                 top key
 *     level 1:      [ L2  L4  ... ]              list keys over keys
 *     level 0:  [ m m K1 m ] [ m m m K3 ] ...    <= max_list items each
 *
 * Level i is flushed into a list key when it is full; that key becomes an
 * item of level i + 1. Lists allow any order and any offset, so negative
 * strides and out-of-order displacements are always lowered (as lists).
 * The walk stops with UCS_ERR_EXCEEDS_LIMIT as soon as the plan breaks
 * max_keys or max_depth, so huge layouts cost bounded work.
 */
#ifdef HAVE_CONFIG_H
#  include "umr_config.h"
#endif

#include "layout_priv.h"

#include <stdlib.h>
#include <string.h>

#define UMR_LAYOUT_MAX_LEVELS   64
#define UMR_LAYOUT_NOT_APPLIED  UCS_ERR_UNSUPPORTED
#define UMR_LAYOUT_MIN_SAVING   8   /* list entries a nested key must save */
#define UMR_LAYOUT_MAX_PIECES   4096 /* blocks of one vector element we group */

typedef struct {
    umr_layout_entry_t *items;
    uint32_t           num;
    uint32_t           cap;
    uint64_t           bytes;
} umr_layout_level_t;

typedef struct {
    const umr_layout_limits_t *lim;       /* the caller's, or &defaults */
    umr_layout_limits_t       defaults;
    uint64_t                  list_cap;   /* bytes per list key / entry */
    umr_layout_key_t          *keys;
    uint32_t                  *depth;     /* per key */
    uint32_t                  num_keys;
    uint32_t                  cap_keys;
    unsigned                  num_levels;
    umr_layout_level_t        levels[UMR_LAYOUT_MAX_LEVELS];
} umr_layout_lower_t;

void umr_layout_limits_default(umr_layout_limits_t *limits)
{
    limits->max_interleaved = 51;
    limits->max_list        = 52;
    limits->max_bytes_count = 65535;
    limits->max_stride      = 65535;
    limits->max_list_bytes  = (1ull << 31) - 1; /* rdma-core sums in int */
    limits->max_key_bytes   = PTRDIFF_MAX;
    limits->max_depth       = 4;
    limits->max_keys        = 1024;
}

static ucs_status_t umr_layout_limit_error(const char *what, uint64_t limit)
{
    return umr_layout_error(UCS_ERR_EXCEEDS_LIMIT,
                            "lower: layout needs more than %s = %llu", what,
                            (unsigned long long)limit);
}

/* Appends a key built from entries[0..num). Returns its index in *key_p. */
static ucs_status_t umr_layout_add_key(umr_layout_lower_t *ctx,
                                       umr_layout_key_kind_t kind,
                                       uint32_t repeat,
                                       const umr_layout_entry_t *entries,
                                       uint32_t num, uint64_t length,
                                       int32_t *key_p)
{
    umr_layout_key_t *keys, *key;
    uint32_t *depth, d, i, cap;

    if (ctx->num_keys >= ctx->lim->max_keys) {
        return umr_layout_limit_error("max_keys", ctx->lim->max_keys);
    }

    for (d = 1, i = 0; i < num; ++i) {
        if ((entries[i].child >= 0) && (ctx->depth[entries[i].child] >= d)) {
            d = ctx->depth[entries[i].child] + 1;
        }
    }
    if (d > ctx->lim->max_depth) {
        return umr_layout_limit_error("max_depth", ctx->lim->max_depth);
    }

    if (ctx->num_keys == ctx->cap_keys) {
        cap   = (ctx->cap_keys == 0) ? 4 : (ctx->cap_keys * 2);
        keys  = realloc(ctx->keys, cap * sizeof(*keys));
        if (keys == NULL) {
            goto err_nomem;
        }
        ctx->keys = keys;
        depth = realloc(ctx->depth, cap * sizeof(*depth));
        if (depth == NULL) {
            goto err_nomem;
        }
        ctx->depth    = depth;
        ctx->cap_keys = cap;
    }

    key          = &ctx->keys[ctx->num_keys];
    key->entries = malloc(num * sizeof(*entries));
    if (key->entries == NULL) {
        goto err_nomem;
    }
    memcpy(key->entries, entries, num * sizeof(*entries));
    key->kind                = kind;
    key->repeat              = repeat;
    key->num_entries         = num;
    key->length              = length;
    ctx->depth[ctx->num_keys] = d;
    *key_p                   = (int32_t)ctx->num_keys++;
    return UCS_OK;

err_nomem:
    return umr_layout_error(UCS_ERR_NO_MEMORY, "lower: out of memory");
}

static ucs_status_t umr_layout_push(umr_layout_lower_t *ctx, unsigned level,
                                    const umr_layout_entry_t *item,
                                    uint64_t len);

/* Turns level `level` into one item of level + 1 (a list key if needed). */
static ucs_status_t umr_layout_flush(umr_layout_lower_t *ctx, unsigned level)
{
    umr_layout_level_t *lv = &ctx->levels[level];
    umr_layout_entry_t item;
    ucs_status_t status;
    uint64_t bytes;

    if (lv->num == 1) {
        /* one item needs no key of its own: hand it up as it is */
        item = lv->items[0];
    } else {
        item.offset      = 0;
        item.bytes_skip  = 0;
        item.mem         = 0;
        status = umr_layout_add_key(ctx, UMR_LAYOUT_KEY_LIST, 1, lv->items,
                                    lv->num, lv->bytes, &item.child);
        if (status != UCS_OK) {
            return status;
        }
        item.bytes_count = (uint32_t)lv->bytes;
    }

    bytes     = lv->bytes;
    lv->num   = 0;
    lv->bytes = 0;
    if (level + 1 >= UMR_LAYOUT_MAX_LEVELS) {
        return umr_layout_limit_error("max_depth", ctx->lim->max_depth);
    }
    return umr_layout_push(ctx, level + 1, &item, bytes);
}

static ucs_status_t umr_layout_push(umr_layout_lower_t *ctx, unsigned level,
                                    const umr_layout_entry_t *item,
                                    uint64_t len)
{
    umr_layout_level_t *lv = &ctx->levels[level];
    umr_layout_entry_t *last, *items;
    ucs_status_t status;
    uint32_t cap;

    if (level >= ctx->num_levels) {
        ctx->num_levels = level + 1;
    }

    if (lv->num > 0) {
        last = &lv->items[lv->num - 1];
        if ((item->child < 0) && (last->child < 0) &&
            (item->mem == last->mem) &&
            (last->offset + (int64_t)last->bytes_count == item->offset) &&
            ((uint64_t)last->bytes_count + len <= ctx->list_cap)) {
            last->bytes_count += (uint32_t)len;
            lv->bytes         += len;
            return UCS_OK;
        }
        if ((lv->num >= ctx->lim->max_list) ||
            (lv->bytes + len > ctx->list_cap)) {
            status = umr_layout_flush(ctx, level);
            if (status != UCS_OK) {
                return status;
            }
        }
    }

    if (lv->num == lv->cap) {
        cap   = (lv->cap == 0) ? 16 : (lv->cap * 2);
        items = realloc(lv->items, cap * sizeof(*items));
        if (items == NULL) {
            return umr_layout_error(UCS_ERR_NO_MEMORY, "lower: out of memory");
        }
        lv->items = items;
        lv->cap   = cap;
    }
    lv->items[lv->num++] = *item;
    lv->bytes           += len;
    return UCS_OK;
}

static ucs_status_t umr_layout_push_mem(umr_layout_lower_t *ctx,
                                        ptrdiff_t offset, uint64_t len,
                                        uint32_t mem)
{
    umr_layout_entry_t item = {0, 0, 0, -1, mem};
    ucs_status_t status;
    uint64_t chunk;

    /* a block larger than one list entry takes several entries */
    for (; len > 0; len -= chunk, offset += (ptrdiff_t)chunk) {
        /* offset + len stays within the span: no overflow */
        chunk            = (len < ctx->list_cap) ? len : ctx->list_cap;
        item.offset      = offset;
        item.bytes_count = (uint32_t)chunk;
        status           = umr_layout_push(ctx, 0, &item, chunk);
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
}

/* ---- interleaved ------------------------------------------------------- */

typedef struct {
    umr_layout_entry_t *entries;
    uint32_t           num;
    uint32_t           cap;
    uint32_t           max;
    uint32_t           piece;      /* largest bytes_count of one entry */
    ptrdiff_t          stride;
    int                nomem;
} umr_layout_pieces_t;

static int umr_layout_pieces_cb(void *arg, ptrdiff_t offset, size_t len)
{
    umr_layout_pieces_t *p = arg;
    umr_layout_entry_t *entries;
    size_t chunk;
    uint32_t cap;

    /* split blocks the 16-bit bytes_count cannot hold: never truncate */
    for (; len > 0; len -= chunk, offset += (ptrdiff_t)chunk) {
        if (p->num >= p->max) {
            return 1;
        }
        if (p->num == p->cap) {
            cap     = (p->cap == 0) ? 8 : (p->cap * 2);
            cap     = (cap < p->max) ? cap : p->max;
            entries = realloc(p->entries, cap * sizeof(*entries));
            if (entries == NULL) {
                p->nomem = 1;
                return 1;
            }
            p->entries = entries;
            p->cap     = cap;
        }
        chunk = (len < p->piece) ? len : p->piece;
        p->entries[p->num].offset      = offset;
        p->entries[p->num].bytes_count = (uint32_t)chunk;
        p->entries[p->num].bytes_skip  = (uint32_t)(p->stride - chunk);
        p->entries[p->num].child       = -1;
        p->entries[p->num].mem         = 0;
        ++p->num;
    }
    return 0;
}

/* Number of groups of <= max_interleaved consecutive pieces, each group's
 * bytes fitting one interleaved entry (bytes_count and stride, skip 0). */
static uint32_t umr_layout_num_groups(const umr_layout_lower_t *ctx,
                                      const umr_layout_pieces_t *p)
{
    uint64_t cap = (ctx->lim->max_bytes_count < ctx->lim->max_stride) ?
                   ctx->lim->max_bytes_count : ctx->lim->max_stride;
    uint32_t i, n, groups = 0;
    uint64_t bytes;

    for (i = 0; i < p->num; i += n, ++groups) {
        for (n = 0, bytes = 0;
             (i + n < p->num) && (n < ctx->lim->max_interleaved) &&
             (bytes + p->entries[i + n].bytes_count <= cap); ++n) {
            bytes += p->entries[i + n].bytes_count;
        }
    }
    return groups;
}

/*
 * One (chunk of the) interleaved plan: `rep` repetitions of the pieces.
 * Up to max_interleaved pieces are one key over memory. More pieces are
 * grouped: key g repeats group g over memory, and the top key interleaves
 * the groups back, reading group g of repetition r at r * bytes(g) of key g:
 *
 *     top (x rep): [k0: bytes(g0)] [k1: bytes(g1)] ...
 *     k0  (x rep): [piece 0] ... [piece 50]          (over memory)
 */
static ucs_status_t umr_layout_add_rep(umr_layout_lower_t *ctx,
                                       const umr_layout_pieces_t *p,
                                       uint64_t rep, size_t elem_size,
                                       int32_t *key_p)
{
    uint64_t cap = (ctx->lim->max_bytes_count < ctx->lim->max_stride) ?
                   ctx->lim->max_bytes_count : ctx->lim->max_stride;
    umr_layout_entry_t *top;
    ucs_status_t status;
    uint32_t i, n, g;
    uint64_t bytes;

    if (p->num <= ctx->lim->max_interleaved) {
        return umr_layout_add_key(ctx, UMR_LAYOUT_KEY_INTERLEAVED,
                                  (uint32_t)rep, p->entries, p->num,
                                  rep * elem_size, key_p);
    }

    top = malloc(ctx->lim->max_interleaved * sizeof(*top));
    if (top == NULL) {
        return umr_layout_error(UCS_ERR_NO_MEMORY, "lower: out of memory");
    }
    for (i = 0, g = 0; i < p->num; i += n, ++g) {
        for (n = 0, bytes = 0;
             (i + n < p->num) && (n < ctx->lim->max_interleaved) &&
             (bytes + p->entries[i + n].bytes_count <= cap); ++n) {
            bytes += p->entries[i + n].bytes_count;
        }
        status = umr_layout_add_key(ctx, UMR_LAYOUT_KEY_INTERLEAVED,
                                    (uint32_t)rep, &p->entries[i], n,
                                    rep * bytes, &top[g].child);
        if (status != UCS_OK) {
            goto out;
        }
        top[g].offset      = 0;
        top[g].bytes_count = (uint32_t)bytes;
        top[g].bytes_skip  = 0;
        top[g].mem         = 0;
    }
    status = umr_layout_add_key(ctx, UMR_LAYOUT_KEY_INTERLEAVED,
                                (uint32_t)rep, top, g, rep * elem_size, key_p);
out:
    free(top);
    return status;
}

/*
 * n copies of X at d + r * stride as interleaved keys, if X has few enough
 * blocks and the stride fits. UMR_LAYOUT_NOT_APPLIED when it does not.
 */
static ucs_status_t
umr_layout_try_interleaved(umr_layout_lower_t *ctx, size_t n, ptrdiff_t stride,
                           const umr_layout_node_t *x, ptrdiff_t d, int top)
{
    const umr_layout_limits_t *lim = ctx->lim;
    umr_layout_entry_t item = {0, 0, 0, -1, 0};
    uint64_t cap, rmax, rep, max_pieces, keys;
    umr_layout_pieces_t p;
    ucs_status_t status;
    uint32_t i, groups;
    size_t r;

    /* one key, or a key over up to max_interleaved groups of pieces */
    max_pieces = (uint64_t)lim->max_interleaved * lim->max_interleaved;
    max_pieces = (max_pieces < UMR_LAYOUT_MAX_PIECES) ? max_pieces :
                                                        UMR_LAYOUT_MAX_PIECES;
    if ((n < 2) || (stride <= 0) || ((uint64_t)stride > lim->max_stride) ||
        (x->num_blocks > max_pieces)) {
        return UMR_LAYOUT_NOT_APPLIED;
    }

    memset(&p, 0, sizeof(p));
    p.max    = (uint32_t)max_pieces;
    p.stride = stride;
    p.piece  = lim->max_bytes_count;
    if ((uint64_t)stride < p.piece) {
        p.piece = (uint32_t)stride; /* bytes_skip cannot be negative */
    }
    if (umr_layout_node_for_each_block(x, d, umr_layout_pieces_cb, &p)) {
        status = p.nomem ? umr_layout_error(UCS_ERR_NO_MEMORY,
                                            "lower: out of memory") :
                           UMR_LAYOUT_NOT_APPLIED;
        goto out;
    }

    keys = 1;
    if (p.num > lim->max_interleaved) {
        groups = umr_layout_num_groups(ctx, &p);
        if ((groups > lim->max_interleaved) ||
            (lim->max_depth < (top ? 2u : 3u))) {
            status = UMR_LAYOUT_NOT_APPLIED;
            goto out;
        }
        keys = groups + 1;
    }

    /* a key costs a UMR WQE (about as much as a few list entries) and an
     * entry in its parent: worth it only when it saves several entries */
    if (!top && ((uint64_t)(n - 1) * p.num < UMR_LAYOUT_MIN_SAVING * keys)) {
        status = UMR_LAYOUT_NOT_APPLIED;
        goto out;
    }

    /* one key for everything if it may, else chunks a list can hold */
    if (top && (n <= UINT32_MAX) && (n <= lim->max_key_bytes / x->size)) {
        rmax = n;
    } else {
        cap  = (ctx->list_cap < lim->max_key_bytes) ? ctx->list_cap :
                                                      lim->max_key_bytes;
        rmax = cap / x->size;
        rmax = (rmax < UINT32_MAX) ? rmax : UINT32_MAX;
        if (rmax < 2) {
            status = UMR_LAYOUT_NOT_APPLIED;
            goto out;
        }
    }

    for (r = 0; r < n; r += rep) {
        rep    = ((n - r) < rmax) ? (n - r) : rmax;
        status = umr_layout_add_rep(ctx, &p, rep, x->size, &item.child);
        if (status != UCS_OK) {
            goto out;
        }
        item.bytes_count = (uint32_t)(rep * x->size);
        status = umr_layout_push(ctx, 0, &item, rep * x->size);
        if (status != UCS_OK) {
            goto out;
        }
        /* next chunk starts rep strides further (within the span) */
        if (r + rep < n) {
            for (i = 0; i < p.num; ++i) {
                p.entries[i].offset += (int64_t)rep * stride;
            }
        }
    }
    status = UCS_OK;

out:
    free(p.entries);
    return status;
}

/* One interleaved key for all of n copies of x, looking through count 1. */
static ucs_status_t umr_layout_try_top(umr_layout_lower_t *ctx, size_t n,
                                       ptrdiff_t stride,
                                       const umr_layout_node_t *x,
                                       ptrdiff_t d)
{
    while ((n == 1) && (x->kind == UMR_LAYOUT_NODE_VECTOR)) {
        n      = x->vector.count;
        stride = x->vector.stride;
        x      = x->vector.child;
    }
    return umr_layout_try_interleaved(ctx, n, stride, x, d, 1);
}

/* ---- the walk ---------------------------------------------------------- */

/* Lowers n copies of x, copy r at d + r * stride. */
static ucs_status_t umr_layout_lower_rep(umr_layout_lower_t *ctx, size_t n,
                                         ptrdiff_t stride,
                                         const umr_layout_node_t *x,
                                         ptrdiff_t d, int top)
{
    ucs_status_t status;
    ptrdiff_t pos;
    size_t r, i;

    status = umr_layout_try_interleaved(ctx, n, stride, x, d, top);
    if (status != UMR_LAYOUT_NOT_APPLIED) {
        return status;
    }

    top = top && (n == 1);
    for (r = 0; r < n; ++r) {
        pos    = d + (ptrdiff_t)r * stride;
        status = UCS_OK;
        switch (x->kind) {
        case UMR_LAYOUT_NODE_CONTIG:
            status = umr_layout_push_mem(ctx, pos, x->contig.len, 0);
            break;
        case UMR_LAYOUT_NODE_VECTOR:
            status = umr_layout_lower_rep(ctx, x->vector.count,
                                          x->vector.stride, x->vector.child,
                                          pos, top);
            break;
        case UMR_LAYOUT_NODE_LIST:
            for (i = 0; (i < x->list.count) && (status == UCS_OK); ++i) {
                status = umr_layout_lower_rep(ctx, 1, 0,
                                              x->list.entries[i].node,
                                              pos + x->list.entries[i].disp,
                                              0);
            }
            break;
        }
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
}

/* Flushes every level; the single item left on top is the top key. */
static ucs_status_t umr_layout_finish(umr_layout_lower_t *ctx)
{
    umr_layout_entry_t *item;
    ucs_status_t status;
    unsigned level;
    int32_t key;

    for (level = 0; level < ctx->num_levels; ++level) {
        if (ctx->levels[level].num == 0) {
            continue;
        }
        if ((level + 1 == ctx->num_levels) && (ctx->levels[level].num == 1)) {
            item = &ctx->levels[level].items[0];
            if (item->child >= 0) {
                return UCS_OK; /* already a key, created last */
            }
            return umr_layout_add_key(ctx, UMR_LAYOUT_KEY_LIST, 1, item, 1,
                                      item->bytes_count, &key);
        }
        status = umr_layout_flush(ctx, level);
        if (status != UCS_OK) {
            return status;
        }
    }
    return umr_layout_error(UCS_ERR_INVALID_PARAM, "lower: empty layout");
}

static void umr_layout_lower_cleanup(umr_layout_lower_t *ctx)
{
    unsigned i;

    for (i = 0; i < UMR_LAYOUT_MAX_LEVELS; ++i) {
        free(ctx->levels[i].items);
    }
    free(ctx->depth);
}

void umr_layout_plan_free(umr_layout_plan_t *plan)
{
    uint32_t i;

    if (plan == NULL) {
        return;
    }
    for (i = 0; i < plan->num_keys; ++i) {
        free(plan->keys[i].entries);
    }
    free(plan->keys);
    free(plan);
}

static ucs_status_t umr_layout_limits_check(const umr_layout_limits_t *lim)
{
    if ((lim->max_interleaved == 0) || (lim->max_list == 0) ||
        (lim->max_bytes_count == 0) || (lim->max_stride == 0) ||
        (lim->max_list_bytes == 0) || (lim->max_key_bytes == 0) ||
        (lim->max_depth == 0) || (lim->max_keys == 0) ||
        (lim->max_keys > INT32_MAX)) {
        return umr_layout_error(UCS_ERR_INVALID_PARAM,
                                "lower: a limit is 0 (or max_keys > "
                                "INT32_MAX)");
    }
    return UCS_OK;
}

static void umr_layout_plan_cost(umr_layout_plan_t *plan,
                                 const uint32_t *depth)
{
    umr_layout_cost_t *cost = &plan->cost;
    uint64_t mem_blocks     = 0;
    umr_layout_key_t *key;
    uint32_t i, j;

    cost->num_wqes      = plan->num_keys;
    cost->total_entries = 0;
    cost->depth         = depth[plan->num_keys - 1];
    cost->total_bytes   = plan->keys[plan->num_keys - 1].length;
    for (i = 0; i < plan->num_keys; ++i) {
        key                  = &plan->keys[i];
        cost->total_entries += key->num_entries;
        for (j = 0; j < key->num_entries; ++j) {
            if (key->entries[j].child < 0) {
                mem_blocks += key->repeat;
            }
        }
    }
    cost->mean_block = (double)cost->total_bytes / (double)mem_blocks;
}

/* The walk's state for `limits`; a list key or entry addresses at most
 * list_cap bytes (rdma-core sums list lengths in an int). */
/* limits NULL: the defaults. */
static ucs_status_t umr_layout_lower_init(umr_layout_lower_t *ctx,
                                          const umr_layout_limits_t *limits)
{
    ucs_status_t status;

    memset(ctx, 0, sizeof(*ctx));
    if (limits == NULL) {
        umr_layout_limits_default(&ctx->defaults);
        limits = &ctx->defaults;
    }
    status = umr_layout_limits_check(limits);
    if (status != UCS_OK) {
        return status;
    }

    ctx->lim      = limits;
    ctx->list_cap = limits->max_list_bytes;
    ctx->list_cap = (ctx->list_cap < limits->max_key_bytes) ?
                    ctx->list_cap : limits->max_key_bytes;
    ctx->list_cap = (ctx->list_cap < UINT32_MAX) ? ctx->list_cap : UINT32_MAX;
    return UCS_OK;
}

/* After the walk (status): flush the levels into the plan's keys, or free
 * everything built on failure. */
static ucs_status_t umr_layout_lower_end(umr_layout_lower_t *ctx,
                                         ucs_status_t status,
                                         umr_layout_plan_t *plan,
                                         umr_layout_plan_t **plan_p)
{
    uint32_t i;

    if (status == UCS_OK) {
        status = umr_layout_finish(ctx);
    }
    if (status != UCS_OK) {
        for (i = 0; i < ctx->num_keys; ++i) {
            free(ctx->keys[i].entries);
        }
        free(ctx->keys);
        umr_layout_lower_cleanup(ctx);
        free(plan);
        return status;
    }

    plan->keys     = ctx->keys;
    plan->num_keys = ctx->num_keys;
    umr_layout_plan_cost(plan, ctx->depth);
    umr_layout_lower_cleanup(ctx);
    *plan_p = plan;
    return UCS_OK;
}

ucs_status_t umr_layout_lower(const umr_layout_t *layout, size_t count,
                              const umr_layout_limits_t *limits,
                              umr_layout_plan_t **plan_p)
{
    umr_layout_lower_t ctx;
    umr_layout_plan_t *plan;
    ucs_status_t status;
    size_t total;

    if ((layout == NULL) || (plan_p == NULL)) {
        return umr_layout_error(UCS_ERR_INVALID_PARAM, "lower: %s is NULL",
                                (layout == NULL) ? "layout" : "plan_p");
    }
    status = umr_layout_lower_init(&ctx, limits);
    if (status != UCS_OK) {
        return status;
    }
    if ((count == 0) || (layout->size == 0)) {
        return umr_layout_error(UCS_ERR_INVALID_PARAM,
                                "lower: nothing to address (count %zu, size "
                                "%zu)", count, layout->size);
    }
    status = umr_layout_total_size(layout, count, &total);
    if (status != UCS_OK) {
        return status;
    }

    plan = calloc(1, sizeof(*plan));
    if (plan == NULL) {
        return umr_layout_error(UCS_ERR_NO_MEMORY, "lower: out of memory");
    }
    status = umr_layout_span(layout, count, &plan->span_lb, &plan->span_ub);
    if (status != UCS_OK) {
        free(plan);
        return status;
    }

    if (total > ctx.list_cap) {
        /* no list key may address it all (rdma-core sums list lengths in an
         * int): only one interleaved key over memory can */
        status = layout->is_contig ? UMR_LAYOUT_NOT_APPLIED :
                 umr_layout_try_top(&ctx, count, layout->extent,
                                    layout->root, layout->disp);
        if ((status == UMR_LAYOUT_NOT_APPLIED) ||
            ((status == UCS_OK) && (ctx.levels[0].num != 1))) {
            status = umr_layout_error(UCS_ERR_EXCEEDS_LIMIT,
                                      "lower: %zu bytes need a list key over "
                                      "max_list_bytes = %llu", total,
                                      (unsigned long long)ctx.list_cap);
        }
    } else if (layout->is_contig) {
        status = umr_layout_push_mem(&ctx, layout->true_lb, total, 0);
    } else {
        status = umr_layout_lower_rep(&ctx, count, layout->extent,
                                      layout->root, layout->disp, 1);
    }
    return umr_layout_lower_end(&ctx, status, plan, plan_p);
}

ucs_status_t umr_layout_lower_blocks(const umr_layout_block_t *blocks,
                                     size_t num,
                                     const umr_layout_limits_t *limits,
                                     umr_layout_plan_t **plan_p)
{
    umr_layout_lower_t ctx;
    umr_layout_plan_t *plan;
    ucs_status_t status;
    int64_t lb, ub;
    size_t b;

    if (((blocks == NULL) && (num > 0)) || (plan_p == NULL)) {
        return umr_layout_error(UCS_ERR_INVALID_PARAM, "lower_blocks: %s is "
                                "NULL", (plan_p == NULL) ? "plan_p" :
                                "blocks");
    }
    status = umr_layout_lower_init(&ctx, limits);
    if (status != UCS_OK) {
        return status;
    }

    plan = calloc(1, sizeof(*plan));
    if (plan == NULL) {
        return umr_layout_error(UCS_ERR_NO_MEMORY, "lower: out of memory");
    }

    lb     = INT64_MAX;
    ub     = INT64_MIN;
    status = UCS_OK;
    for (b = 0; (b < num) && (status == UCS_OK); ++b) {
        if (blocks[b].length == 0) {
            continue;
        }
        if ((blocks[b].length > (uint64_t)INT64_MAX) ||
            (blocks[b].offset > INT64_MAX - (int64_t)blocks[b].length)) {
            status = umr_layout_error(UCS_ERR_INVALID_PARAM, "lower_blocks: "
                                      "block %zu overflows", b);
            break;
        }
        lb     = (blocks[b].offset < lb) ? blocks[b].offset : lb;
        ub     = (blocks[b].offset + (int64_t)blocks[b].length > ub) ?
                 blocks[b].offset + (int64_t)blocks[b].length : ub;
        status = umr_layout_push_mem(&ctx, blocks[b].offset, blocks[b].length,
                                     blocks[b].mem);
    }

    /* no block at all: umr_layout_finish fails (empty) */
    plan->span_lb = lb;
    plan->span_ub = ub;
    return umr_layout_lower_end(&ctx, status, plan, plan_p);
}
