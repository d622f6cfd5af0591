/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr layout engine: constructors and normalisation to canonical form.
 */
#ifdef HAVE_CONFIG_H
#  include "umr_config.h"
#endif

#include "layout_priv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __thread char umr_layout_errbuf[160];

ucs_status_t umr_layout_error(ucs_status_t status, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(umr_layout_errbuf, sizeof(umr_layout_errbuf), fmt, ap);
    va_end(ap);
    return status;
}

const char *umr_layout_last_error(void)
{
    return umr_layout_errbuf;
}

int umr_layout_placement_span(size_t count, ptrdiff_t stride, ptrdiff_t *lo,
                              ptrdiff_t *hi)
{
    ptrdiff_t last;

    if ((count - 1) > PTRDIFF_MAX) {
        return 0;
    }
    if (__builtin_mul_overflow((ptrdiff_t)(count - 1), stride, &last)) {
        return 0;
    }
    *lo = (last < 0) ? last : 0;
    *hi = (last < 0) ? 0 : last;
    return 1;
}

/* ---- hashing (stable: depends on shape only, never on pointers) -------- */

static uint64_t umr_layout_mix(uint64_t h, uint64_t v)
{
    /* splitmix64 finaliser over a running FNV-style combination */
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return h;
}

/* ---- nodes ------------------------------------------------------------- */

static umr_layout_node_t *umr_layout_node_ref(umr_layout_node_t *node)
{
    if (node != NULL) {
        __atomic_fetch_add(&node->refcount, 1, __ATOMIC_RELAXED);
    }
    return node;
}

static void umr_layout_node_release(umr_layout_node_t *node)
{
    size_t i;

    if ((node == NULL) ||
        (__atomic_sub_fetch(&node->refcount, 1, __ATOMIC_ACQ_REL) != 0)) {
        return;
    }

    switch (node->kind) {
    case UMR_LAYOUT_NODE_VECTOR:
        umr_layout_node_release(node->vector.child);
        break;
    case UMR_LAYOUT_NODE_LIST:
        for (i = 0; i < node->list.count; ++i) {
            umr_layout_node_release(node->list.entries[i].node);
        }
        free(node->list.entries);
        free(node->list.prefix);
        break;
    default:
        break;
    }
    free(node);
}

int umr_layout_node_equal(const umr_layout_node_t *a,
                          const umr_layout_node_t *b)
{
    size_t i;

    if (a == b) {
        return 1;
    }
    if ((a == NULL) || (b == NULL) || (a->hash != b->hash) ||
        (a->kind != b->kind) || (a->size != b->size)) {
        return 0;
    }

    switch (a->kind) {
    case UMR_LAYOUT_NODE_CONTIG:
        return a->contig.len == b->contig.len;
    case UMR_LAYOUT_NODE_VECTOR:
        return (a->vector.count == b->vector.count) &&
               (a->vector.stride == b->vector.stride) &&
               umr_layout_node_equal(a->vector.child, b->vector.child);
    case UMR_LAYOUT_NODE_LIST:
        if (a->list.count != b->list.count) {
            return 0;
        }
        for (i = 0; i < a->list.count; ++i) {
            if ((a->list.entries[i].disp != b->list.entries[i].disp) ||
                !umr_layout_node_equal(a->list.entries[i].node,
                                       b->list.entries[i].node)) {
                return 0;
            }
        }
        return 1;
    }
    return 0;
}

static umr_layout_node_t *umr_layout_node_alloc(umr_layout_node_kind_t kind)
{
    umr_layout_node_t *node = calloc(1, sizeof(*node));

    if (node != NULL) {
        node->refcount = 1;
        node->kind     = kind;
    }
    return node;
}

static ucs_status_t umr_layout_node_contig(size_t len,
                                           umr_layout_node_t **node_p)
{
    umr_layout_node_t *node;

    if (len > PTRDIFF_MAX) {
        return umr_layout_error(UCS_ERR_EXCEEDS_LIMIT,
                                "contiguous length %zu overflows ptrdiff_t",
                                len);
    }

    node = umr_layout_node_alloc(UMR_LAYOUT_NODE_CONTIG);
    if (node == NULL) {
        return umr_layout_error(UCS_ERR_NO_MEMORY, "out of memory");
    }

    node->contig.len = len;
    node->size       = len;
    node->true_lb    = 0;
    node->true_ub    = (ptrdiff_t)len;
    node->first_end  = (ptrdiff_t)len;
    node->last_start = 0;
    node->last_end   = (ptrdiff_t)len;
    node->num_blocks = 1;
    node->hash       = umr_layout_mix(umr_layout_mix(0, 1), len);
    *node_p          = node;
    return UCS_OK;
}

static ucs_status_t umr_layout_overflow(const char *what)
{
    return umr_layout_error(UCS_ERR_EXCEEDS_LIMIT, "%s overflows", what);
}

/*
 * `n` copies of `child` (borrowed), copy i at i * stride. Returns a new
 * reference, merging what the canonical form merges.
 */
static ucs_status_t umr_layout_node_rep(size_t n, ptrdiff_t stride,
                                        umr_layout_node_t *child,
                                        umr_layout_node_t **node_p)
{
    umr_layout_node_t *node;
    ptrdiff_t lo, hi, span;
    size_t size;

    if ((n == 0) || (child == NULL)) {
        *node_p = NULL;
        return UCS_OK;
    }
    if (n == 1) {
        *node_p = umr_layout_node_ref(child);
        return UCS_OK;
    }

    if (__builtin_mul_overflow(n, child->size, &size) || (size > PTRDIFF_MAX)) {
        return umr_layout_overflow("layout size");
    }
    if (!umr_layout_placement_span(n, stride, &lo, &hi)) {
        return umr_layout_overflow("vector span");
    }

    /* copies that touch end to end are one bigger block */
    if ((child->kind == UMR_LAYOUT_NODE_CONTIG) &&
        (stride == (ptrdiff_t)child->contig.len)) {
        return umr_layout_node_contig(size, node_p);
    }
    if ((child->kind == UMR_LAYOUT_NODE_VECTOR) &&
        !__builtin_mul_overflow((ptrdiff_t)child->vector.count,
                                child->vector.stride, &span) &&
        (span == stride) &&
        !__builtin_mul_overflow(n, child->vector.count, &size)) {
        return umr_layout_node_rep(size, child->vector.stride,
                                   child->vector.child, node_p);
    }

    node = umr_layout_node_alloc(UMR_LAYOUT_NODE_VECTOR);
    if (node == NULL) {
        return umr_layout_error(UCS_ERR_NO_MEMORY, "out of memory");
    }

    node->vector.count  = n;
    node->vector.stride = stride;
    node->vector.child  = umr_layout_node_ref(child);
    node->size          = n * child->size;
    node->first_end     = child->first_end;
    if (__builtin_add_overflow(lo, child->true_lb, &node->true_lb) ||
        __builtin_add_overflow(hi, child->true_ub, &node->true_ub) ||
        __builtin_add_overflow((lo == 0) ? hi : lo, child->last_start,
                               &node->last_start) ||
        __builtin_add_overflow((lo == 0) ? hi : lo, child->last_end,
                               &node->last_end)) {
        umr_layout_node_release(node);
        return umr_layout_overflow("vector bounds");
    }
    node->num_blocks = n * child->num_blocks;
    if (child->last_end == stride) {
        node->num_blocks -= n - 1;
    }
    node->hash = umr_layout_mix(umr_layout_mix(umr_layout_mix(
                 umr_layout_mix(0, 2), n), (uint64_t)stride), child->hash);
    *node_p = node;
    return UCS_OK;
}

/* Takes ownership of entries[] references (not of the array). */
static ucs_status_t
umr_layout_node_list(umr_layout_list_entry_t *entries, size_t count,
                     ptrdiff_t *disp_p, umr_layout_node_t **node_p)
{
    umr_layout_node_t *node;
    ptrdiff_t d0, ub;
    uint64_t hash;
    size_t i, size;

    node = umr_layout_node_alloc(UMR_LAYOUT_NODE_LIST);
    if (node == NULL) {
        goto err_nomem;
    }
    node->list.entries = malloc(count * sizeof(*entries));
    node->list.prefix  = malloc((count + 1) * sizeof(size_t));
    if ((node->list.entries == NULL) || (node->list.prefix == NULL)) {
        goto err_free_node;
    }

    /* rebase so that equal shapes at different places share one node */
    d0   = entries[0].disp;
    size = 0;
    hash = umr_layout_mix(umr_layout_mix(0, 3), count);
    for (i = 0; i < count; ++i) {
        if (__builtin_sub_overflow(entries[i].disp, d0,
                                   &node->list.entries[i].disp)) {
            goto err_overflow;
        }
        node->list.entries[i].node = entries[i].node;
        node->list.prefix[i]       = size;
        if (__builtin_add_overflow(size, entries[i].node->size, &size) ||
            (size > PTRDIFF_MAX)) {
            goto err_overflow;
        }
        hash = umr_layout_mix(umr_layout_mix(hash, (uint64_t)
                                             node->list.entries[i].disp),
                              entries[i].node->hash);
    }
    node->list.prefix[count] = size;
    node->list.count         = count;
    node->size               = size;
    node->hash               = hash;
    node->first_end          = entries[0].node->first_end;
    node->true_lb            = PTRDIFF_MAX;
    node->true_ub            = PTRDIFF_MIN;
    node->num_blocks         = 0;
    for (i = 0; i < count; ++i) {
        const umr_layout_list_entry_t *e = &node->list.entries[i];
        ptrdiff_t lb;

        if (__builtin_add_overflow(e->disp, e->node->true_lb, &lb) ||
            __builtin_add_overflow(e->disp, e->node->true_ub, &ub) ||
            __builtin_add_overflow(e->disp, e->node->last_end,
                                   &node->last_end)) {
            goto err_overflow;
        }
        node->last_start  = e->disp + e->node->last_start;
        node->true_lb     = (lb < node->true_lb) ? lb : node->true_lb;
        node->true_ub     = (ub > node->true_ub) ? ub : node->true_ub;
        node->num_blocks += e->node->num_blocks;
        if ((i + 1 < count) && (node->last_end == node->list.entries[i + 1].disp)) {
            --node->num_blocks;
        }
    }

    *disp_p = d0;
    *node_p = node;
    return UCS_OK;

err_overflow:
    /* the node owns the entries from here: release them through it */
    node->list.count = count;
    for (i = 0; i < count; ++i) {
        node->list.entries[i].node = entries[i].node;
    }
    umr_layout_node_release(node);
    return umr_layout_overflow("indexed displacement or size");
err_free_node:
    free(node->list.entries);
    free(node->list.prefix);
    free(node);
err_nomem:
    for (i = 0; i < count; ++i) {
        umr_layout_node_release(entries[i].node);
    }
    return umr_layout_error(UCS_ERR_NO_MEMORY, "out of memory");
}

typedef struct {
    umr_layout_list_entry_t *e;
    size_t                  num;
    size_t                  cap;
} umr_layout_entry_vec_t;

static void umr_layout_entry_vec_clean(umr_layout_entry_vec_t *v)
{
    size_t i;

    for (i = 0; i < v->num; ++i) {
        umr_layout_node_release(v->e[i].node);
    }
    free(v->e);
    v->e   = NULL;
    v->num = 0;
}

/* Appends (disp, node) taking ownership of node. */
static ucs_status_t umr_layout_entry_vec_push(umr_layout_entry_vec_t *v,
                                              ptrdiff_t disp,
                                              umr_layout_node_t *node)
{
    umr_layout_list_entry_t *e;
    size_t cap;

    if (v->num == v->cap) {
        cap = (v->cap == 0) ? 8 : (v->cap * 2);
        e   = realloc(v->e, cap * sizeof(*e));
        if (e == NULL) {
            umr_layout_node_release(node);
            return umr_layout_error(UCS_ERR_NO_MEMORY, "out of memory");
        }
        v->e   = e;
        v->cap = cap;
    }
    v->e[v->num].disp   = disp;
    v->e[v->num++].node = node;
    return UCS_OK;
}

/* Adds (disp, node) flattening nested lists. node is borrowed. */
static ucs_status_t umr_layout_entry_vec_add(umr_layout_entry_vec_t *v,
                                             ptrdiff_t disp,
                                             umr_layout_node_t *node)
{
    ucs_status_t status;
    ptrdiff_t d;
    size_t i;

    if (node == NULL) {
        return UCS_OK;
    }
    if (node->kind != UMR_LAYOUT_NODE_LIST) {
        return umr_layout_entry_vec_push(v, disp, umr_layout_node_ref(node));
    }
    for (i = 0; i < node->list.count; ++i) {
        if (__builtin_add_overflow(disp, node->list.entries[i].disp, &d)) {
            return umr_layout_overflow("displacement");
        }
        status = umr_layout_entry_vec_push(v, d, umr_layout_node_ref(
                                           node->list.entries[i].node));
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
}

/*
 * Canonical form of an entry sequence: adjacent contiguous blocks merged,
 * runs of equal nodes at constant spacing turned into vectors, one entry
 * collapsed. Consumes v.
 */
static ucs_status_t umr_layout_normalize(umr_layout_entry_vec_t *v,
                                         ptrdiff_t *disp_p,
                                         umr_layout_node_t **node_p)
{
    umr_layout_list_entry_t *e = v->e;
    umr_layout_node_t *merged;
    ucs_status_t status;
    size_t i, j, k, n;
    ptrdiff_t end, spacing, next;

    /* 1. merge contiguous neighbours */
    for (i = 0, n = 0; i < v->num; ++i) {
        if ((n > 0) && (e[n - 1].node->kind == UMR_LAYOUT_NODE_CONTIG) &&
            (e[i].node->kind == UMR_LAYOUT_NODE_CONTIG) &&
            !__builtin_add_overflow(e[n - 1].disp,
                                    (ptrdiff_t)e[n - 1].node->contig.len,
                                    &end) &&
            (end == e[i].disp) &&
            (e[n - 1].node->contig.len + e[i].node->contig.len <=
             PTRDIFF_MAX)) {
            status = umr_layout_node_contig(e[n - 1].node->contig.len +
                                            e[i].node->contig.len, &merged);
            if (status != UCS_OK) {
                memmove(&e[n], &e[i], (v->num - i) * sizeof(*e));
                v->num = n + (v->num - i);
                goto err;
            }
            umr_layout_node_release(e[n - 1].node);
            umr_layout_node_release(e[i].node);
            e[n - 1].node = merged;
        } else {
            e[n++] = e[i];
        }
    }
    v->num = n;

    /* 2. runs of equal nodes at constant spacing become vectors */
    for (i = 0, k = 0; i < v->num; i = j, ++k) {
        j = i + 1;
        if ((j < v->num) &&
            !__builtin_sub_overflow(e[j].disp, e[i].disp, &spacing) &&
            umr_layout_node_equal(e[i].node, e[j].node)) {
            for (++j; (j < v->num) &&
                      !__builtin_sub_overflow(e[j].disp, e[j - 1].disp,
                                              &next) &&
                      (next == spacing) &&
                      umr_layout_node_equal(e[i].node, e[j].node); ++j) {
            }
            status = umr_layout_node_rep(j - i, spacing, e[i].node, &merged);
            if (status != UCS_OK) {
                /* entries [k, i) hold moved refs; [i, num) still own theirs */
                memmove(&e[k], &e[i], (v->num - i) * sizeof(*e));
                v->num = k + (v->num - i);
                goto err;
            }
            for (n = i; n < j; ++n) {
                umr_layout_node_release(e[n].node);
            }
            e[k].disp = e[i].disp;
            e[k].node = merged;
        } else {
            e[k] = e[i];
        }
    }
    v->num = k;

    /* 3. collapse */
    if (v->num == 0) {
        *disp_p = 0;
        *node_p = NULL;
        free(v->e);
        v->e = NULL;
        return UCS_OK;
    }
    if (v->num == 1) {
        *disp_p = e[0].disp;
        *node_p = e[0].node;
        free(v->e);
        v->e   = NULL;
        v->num = 0;
        return UCS_OK;
    }

    status = umr_layout_node_list(v->e, v->num, disp_p, node_p);
    free(v->e);
    v->e   = NULL;
    v->num = 0;
    return status;

err:
    umr_layout_entry_vec_clean(v);
    return status;
}

/* ---- layouts ----------------------------------------------------------- */

/* An inner layout as the constructors see it ("NULL" is one byte). */
typedef struct {
    umr_layout_node_t *root;
    ptrdiff_t         disp;
    ptrdiff_t         lb;
    ptrdiff_t         extent;
    int               lb_marked;
    int               ub_marked;
    size_t            align;
} umr_layout_inner_t;

static ucs_status_t umr_layout_inner_get(const umr_layout_t *layout,
                                         umr_layout_inner_t *inner)
{
    if (layout != NULL) {
        inner->root      = umr_layout_node_ref(layout->root);
        inner->disp      = layout->disp;
        inner->lb        = layout->lb;
        inner->extent    = layout->extent;
        inner->lb_marked = layout->lb_marked;
        inner->ub_marked = layout->ub_marked;
        inner->align     = layout->align;
        return UCS_OK;
    }
    *inner = (umr_layout_inner_t){.extent = 1, .align = 1};
    return umr_layout_node_contig(1, &inner->root);
}

/*
 * MPI's bounds of a type built from blocks (MPI-3.1 4.1.7): a bound marker
 * (lb/ub set explicitly by resized, and inherited) takes precedence over the
 * data bounds; markers combine by min/max among themselves, data bounds
 * likewise. A block with neither data nor markers (an empty type) has no
 * effect on the bounds. Without an upper marker, the extent is rounded up to
 * a multiple of the largest alignment among the blocks (epsilon).
 */
typedef struct {
    ptrdiff_t lb[2], ub[2];     /* [0]: data bounds, [1]: markers */
    int       has_lb[2], has_ub[2];
    size_t    align;
} umr_layout_bounds_t;

static void umr_layout_bounds_init(umr_layout_bounds_t *b)
{
    memset(b, 0, sizeof(*b));
    b->align = 1;
}

static void umr_layout_bounds_add(umr_layout_bounds_t *b,
                                  const umr_layout_inner_t *inner,
                                  ptrdiff_t lb, ptrdiff_t ub)
{
    int has_data = (inner->root != NULL);
    int m;

    if (has_data || inner->lb_marked) {
        m          = inner->lb_marked;
        b->lb[m]   = (b->has_lb[m] && (b->lb[m] < lb)) ? b->lb[m] : lb;
        b->has_lb[m] = 1;
    }
    if (has_data || inner->ub_marked) {
        m          = inner->ub_marked;
        b->ub[m]   = (b->has_ub[m] && (b->ub[m] > ub)) ? b->ub[m] : ub;
        b->has_ub[m] = 1;
    }
    if (has_data || inner->lb_marked || inner->ub_marked) {
        b->align = (inner->align > b->align) ? inner->align : b->align;
    }
}

/* Resolves the bounds; 0 on overflow. */
static int umr_layout_bounds_get(const umr_layout_bounds_t *b, ptrdiff_t *lb_p,
                                 ptrdiff_t *ub_p, int *lb_marked_p,
                                 int *ub_marked_p, size_t *align_p)
{
    int ml = b->has_lb[1], mu = b->has_ub[1];
    ptrdiff_t lb, ub, extent, pad;

    lb = b->has_lb[ml] ? b->lb[ml] : 0;
    ub = b->has_ub[mu] ? b->ub[mu] : 0;
    if (!b->has_lb[ml] && b->has_ub[mu]) {
        lb = ub;         /* only an upper marker: no data, no lower one */
    } else if (b->has_lb[ml] && !b->has_ub[mu]) {
        ub = lb;
    }
    if (!mu && (b->align > 1) && !__builtin_sub_overflow(ub, lb, &extent) &&
        (extent > 0)) {
        pad = (ptrdiff_t)((b->align - (size_t)extent % b->align) % b->align);
        if (__builtin_add_overflow(ub, pad, &ub)) {
            return 0;
        }
    }
    *lb_p        = lb;
    *ub_p        = ub;
    *lb_marked_p = ml;
    *ub_marked_p = mu;
    *align_p     = b->align;
    return 1;
}

/* Fills the summaries of a layout (zeroed when allocated) whose
 * root/disp/lb/extent are set. */
static ucs_status_t umr_layout_finish(umr_layout_t *layout,
                                      umr_layout_t **layout_p)
{
    umr_layout_node_t *root = layout->root;
    ptrdiff_t span;

    layout->refcount = 1;
    if (root == NULL) {
        /* no data: size, true bounds and blocks stay 0 */
        layout->disp      = 0;
        layout->is_contig = 1;
    } else {
        /* the bytes between the true bounds must be addressable: their
         * distance (a registration's length) fits in ptrdiff_t */
        if (__builtin_add_overflow(layout->disp, root->true_lb,
                                   &layout->true_lb) ||
            __builtin_add_overflow(layout->disp, root->true_ub,
                                   &layout->true_ub) ||
            __builtin_sub_overflow(layout->true_ub, layout->true_lb,
                                   &span)) {
            umr_layout_node_release(root);
            free(layout);
            return umr_layout_overflow("true bounds");
        }
        layout->size       = root->size;
        layout->num_blocks = root->num_blocks;
        layout->is_contig  = (root->num_blocks == 1) &&
                             (layout->true_lb == layout->lb) &&
                             (layout->extent == (ptrdiff_t)layout->size);
    }
    layout->hash = umr_layout_mix(umr_layout_mix(umr_layout_mix(umr_layout_mix(
                   (root != NULL) ? root->hash : 0, (uint64_t)layout->disp),
                   (uint64_t)layout->lb), (uint64_t)layout->extent),
                   layout->size);
    *layout_p    = layout;
    return UCS_OK;
}

static ucs_status_t umr_layout_new(umr_layout_node_t *root, ptrdiff_t disp,
                                   ptrdiff_t lb, ptrdiff_t ub, int lb_marked,
                                   int ub_marked, size_t align,
                                   umr_layout_t **layout_p)
{
    umr_layout_t *layout;
    ptrdiff_t extent;

    if (__builtin_sub_overflow(ub, lb, &extent)) {
        umr_layout_node_release(root);
        return umr_layout_overflow("extent");
    }

    layout = calloc(1, sizeof(*layout));
    if (layout == NULL) {
        umr_layout_node_release(root);
        return umr_layout_error(UCS_ERR_NO_MEMORY, "out of memory");
    }
    layout->root      = root;
    layout->disp      = disp;
    layout->lb        = lb;
    layout->extent    = extent;
    layout->lb_marked = lb_marked;
    layout->ub_marked = ub_marked;
    layout->align     = align;
    return umr_layout_finish(layout, layout_p);
}

#define UMR_LAYOUT_CHECK_OUT(_p) \
    if ((_p) == NULL) { \
        return umr_layout_error(UCS_ERR_INVALID_PARAM, \
                                "%s: layout_p is NULL", __func__); \
    }

ucs_status_t umr_layout_contig(size_t len, umr_layout_t **layout_p)
{
    umr_layout_node_t *root = NULL;
    ucs_status_t status;

    UMR_LAYOUT_CHECK_OUT(layout_p);
    if (len > PTRDIFF_MAX) {
        return umr_layout_error(UCS_ERR_EXCEEDS_LIMIT,
                                "contig: len %zu overflows ptrdiff_t", len);
    }
    if (len > 0) {
        status = umr_layout_node_contig(len, &root);
        if (status != UCS_OK) {
            return status;
        }
    }
    return umr_layout_new(root, 0, 0, (ptrdiff_t)len, 0, 0, 1, layout_p);
}

/*
 * MPI bounds of `blocklen` elements of inner at disp + j * extent, j <
 * blocklen, and of those blocks repeated `count` times at `stride`.
 */
static int umr_layout_block_bounds(const umr_layout_inner_t *inner,
                                   size_t count, ptrdiff_t stride,
                                   size_t blocklen, ptrdiff_t disp,
                                   ptrdiff_t *lb_p, ptrdiff_t *ub_p)
{
    ptrdiff_t lo, hi, jhi, tmp;

    if (!umr_layout_placement_span(count, stride, &lo, &hi) ||
        !umr_layout_placement_span(blocklen, inner->extent, &tmp, &jhi) ||
        __builtin_add_overflow(disp, inner->lb, &tmp) ||
        __builtin_add_overflow(tmp, lo, lb_p) ||
        __builtin_add_overflow(tmp, inner->extent, &tmp) ||
        __builtin_add_overflow(tmp, hi, &tmp) ||
        __builtin_add_overflow(tmp, jhi, ub_p)) {
        return 0;
    }
    return 1;
}

ucs_status_t umr_layout_vector(size_t count, size_t blocklen,
                               ptrdiff_t stride_bytes,
                               const umr_layout_t *inner_layout,
                               umr_layout_t **layout_p)
{
    umr_layout_node_t *block = NULL, *root = NULL;
    int lb_marked, ub_marked;
    umr_layout_inner_t inner;
    umr_layout_bounds_t b;
    ucs_status_t status;
    ptrdiff_t lb, ub;
    size_t align;

    UMR_LAYOUT_CHECK_OUT(layout_p);
    if ((count > PTRDIFF_MAX) || (blocklen > PTRDIFF_MAX)) {
        return umr_layout_error(UCS_ERR_INVALID_PARAM,
                                "vector: count %zu or blocklen %zu is too "
                                "large (negative?)", count, blocklen);
    }
    if ((count == 0) || (blocklen == 0)) {
        return umr_layout_new(NULL, 0, 0, 0, 0, 0, 1, layout_p);
    }

    status = umr_layout_inner_get(inner_layout, &inner);
    if (status != UCS_OK) {
        return status;
    }

    umr_layout_bounds_init(&b);
    if (!umr_layout_block_bounds(&inner, count, stride_bytes, blocklen, 0,
                                 &lb, &ub)) {
        status = umr_layout_overflow("vector: extent");
        goto out;
    }
    umr_layout_bounds_add(&b, &inner, lb, ub);
    if (!umr_layout_bounds_get(&b, &lb, &ub, &lb_marked, &ub_marked,
                               &align)) {
        status = umr_layout_overflow("vector: extent");
        goto out;
    }

    status = umr_layout_node_rep(blocklen, inner.extent, inner.root, &block);
    if (status != UCS_OK) {
        goto out;
    }
    status = umr_layout_node_rep(count, stride_bytes, block, &root);
    if (status != UCS_OK) {
        goto out;
    }
    status = umr_layout_new(root, inner.disp, lb, ub, lb_marked, ub_marked,
                            align, layout_p);

out:
    umr_layout_node_release(block);
    umr_layout_node_release(inner.root);
    return status;
}

static ucs_status_t
umr_layout_blocks(const char *func, size_t count, const size_t *blocklens,
                  const ptrdiff_t *displs,
                  const umr_layout_t *const *inners, int per_block,
                  const umr_layout_t *single, umr_layout_t **layout_p)
{
    umr_layout_entry_vec_t v = {NULL, 0, 0};
    umr_layout_node_t *block, *root = NULL;
    umr_layout_inner_t inner;
    ptrdiff_t lb, ub, blb, bub, disp = 0;
    int lb_marked, ub_marked;
    umr_layout_bounds_t b;
    ucs_status_t status;
    size_t i, align;

    UMR_LAYOUT_CHECK_OUT(layout_p);
    umr_layout_bounds_init(&b);
    if (count > PTRDIFF_MAX) {
        return umr_layout_error(UCS_ERR_INVALID_PARAM,
                                "%s: count %zu is too large (negative?)",
                                func, count);
    }
    if ((count > 0) && ((blocklens == NULL) || (displs == NULL))) {
        return umr_layout_error(UCS_ERR_INVALID_PARAM,
                                "%s: %s is NULL with count %zu", func,
                                (blocklens == NULL) ? "blocklens" : "displs",
                                count);
    }
    if ((count > 0) && per_block && (inners == NULL)) {
        return umr_layout_error(UCS_ERR_INVALID_PARAM,
                                "%s: inners is NULL with count %zu", func,
                                count);
    }

    for (i = 0; i < count; ++i) {
        if (blocklens[i] > PTRDIFF_MAX) {
            status = umr_layout_error(UCS_ERR_INVALID_PARAM,
                                      "%s: blocklens[%zu] = %zu is too large "
                                      "(negative?)", func, i, blocklens[i]);
            goto err;
        }
        if (blocklens[i] == 0) {
            continue; /* MPI: an empty block adds no bytes and no bounds */
        }

        status = umr_layout_inner_get(per_block ? inners[i] : single,
                                      &inner);
        if (status != UCS_OK) {
            goto err;
        }
        if (!umr_layout_block_bounds(&inner, 1, 0, blocklens[i], displs[i],
                                     &blb, &bub) ||
            __builtin_add_overflow(displs[i], inner.disp, &disp)) {
            umr_layout_node_release(inner.root);
            status = umr_layout_error(UCS_ERR_EXCEEDS_LIMIT,
                                      "%s: block %zu bounds overflow", func,
                                      i);
            goto err;
        }
        umr_layout_bounds_add(&b, &inner, blb, bub);

        status = umr_layout_node_rep(blocklens[i], inner.extent, inner.root,
                                     &block);
        umr_layout_node_release(inner.root);
        if (status != UCS_OK) {
            goto err;
        }
        status = umr_layout_entry_vec_add(&v, disp, block);
        umr_layout_node_release(block);
        if (status != UCS_OK) {
            goto err;
        }
    }

    if (!umr_layout_bounds_get(&b, &lb, &ub, &lb_marked, &ub_marked,
                               &align)) {
        status = umr_layout_error(UCS_ERR_EXCEEDS_LIMIT,
                                  "%s: extent overflows", func);
        goto err;
    }

    status = umr_layout_normalize(&v, &disp, &root);
    if (status != UCS_OK) {
        return status;
    }
    return umr_layout_new(root, disp, lb, ub, lb_marked, ub_marked, align,
                          layout_p);

err:
    umr_layout_entry_vec_clean(&v);
    return status;
}

ucs_status_t umr_layout_indexed(size_t count, const size_t *blocklens,
                                const ptrdiff_t *displs,
                                const umr_layout_t *inner,
                                umr_layout_t **layout_p)
{
    return umr_layout_blocks("indexed", count, blocklens, displs, NULL, 0,
                             inner, layout_p);
}

ucs_status_t umr_layout_struct(size_t count, const size_t *blocklens,
                               const ptrdiff_t *displs,
                               const umr_layout_t *const *inners,
                               umr_layout_t **layout_p)
{
    return umr_layout_blocks("struct", count, blocklens, displs, inners, 1,
                             NULL, layout_p);
}

ucs_status_t umr_layout_resized(const umr_layout_t *inner,
                                ptrdiff_t lb, ptrdiff_t extent,
                                umr_layout_t **layout_p)
{
    umr_layout_inner_t in;
    ucs_status_t status;
    ptrdiff_t ub;

    UMR_LAYOUT_CHECK_OUT(layout_p);
    if (extent < 0) {
        /* MPI allows it, but nothing real uses it and it breaks lb <= ub */
        return umr_layout_error(UCS_ERR_INVALID_PARAM,
                                "resized: negative extent %td is not "
                                "supported", extent);
    }
    if (__builtin_add_overflow(lb, extent, &ub)) {
        return umr_layout_overflow("resized: lb + extent");
    }

    status = umr_layout_inner_get(inner, &in);
    if (status != UCS_OK) {
        return status;
    }
    /* both bounds become markers; the alignment stays */
    return umr_layout_new(in.root, in.disp, lb, ub, 1, 1, in.align, layout_p);
}

ucs_status_t umr_layout_align(const umr_layout_t *inner, size_t align,
                              umr_layout_t **layout_p)
{
    umr_layout_inner_t in;
    ucs_status_t status;

    UMR_LAYOUT_CHECK_OUT(layout_p);
    if ((align == 0) || (align & (align - 1)) ||
        (align > UMR_LAYOUT_MAX_ALIGN)) {
        return umr_layout_error(UCS_ERR_INVALID_PARAM,
                                "align: %zu is not a power of 2 up to %d",
                                align, UMR_LAYOUT_MAX_ALIGN);
    }

    status = umr_layout_inner_get(inner, &in);
    if (status != UCS_OK) {
        return status;
    }
    return umr_layout_new(in.root, in.disp, in.lb, in.lb + in.extent,
                          in.lb_marked, in.ub_marked, align, layout_p);
}

ucs_status_t umr_layout_dup(const umr_layout_t *layout,
                            umr_layout_t **layout_p)
{
    UMR_LAYOUT_CHECK_OUT(layout_p);
    if (layout == NULL) {
        return umr_layout_error(UCS_ERR_INVALID_PARAM, "dup: layout is NULL");
    }
    /* immutable: a copy is one more reference */
    __atomic_fetch_add(&((umr_layout_t *)layout)->refcount, 1,
                       __ATOMIC_RELAXED);
    *layout_p = (umr_layout_t *)layout;
    return UCS_OK;
}

void umr_layout_free(umr_layout_t *layout)
{
    if ((layout == NULL) ||
        (__atomic_sub_fetch(&layout->refcount, 1, __ATOMIC_ACQ_REL) != 0)) {
        return;
    }
    umr_layout_node_release(layout->root);
    free(layout);
}
