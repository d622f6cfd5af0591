/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: layouts over several allocations (umr_mpi_allocs.h).
 */
#include "umr_mpi_allocs.h"

#include <layout.h>     /* umr_layout_for_each_block */

#include <ucs/debug/log.h>
#include <ucs/sys/math.h>
#include <ucs/sys/preprocessor.h>

#include <stdlib.h>
#include <string.h>

#define UMR_MPI_ALLOCS_MAX_BLOCKS  65536   /* sorted once per layout */
#define UMR_MPI_ALLOCS_MAX_CUTS    16      /* kept per rail */

typedef struct {
    ptrdiff_t lo, hi;                      /* bytes from base */
} umr_mpi_span_t;

/* Where the blocks of (base, count, layout) were cut. */
typedef struct {
    ucs_list_link_t list;                  /* in rail->alloc_cuts */
    void            *base;
    size_t          count;
    umr_layout_t    *layout;               /* own copy */
    unsigned        n;
    umr_mpi_span_t  spans[UMR_MPI_MAX_ALLOCS];
} umr_mpi_cut_t;

typedef struct {
    umr_mpi_span_t *blocks;
    size_t         n;
} umr_mpi_blocks_t;

typedef struct {
    char                   *base;
    umr_mpi_allocs_reg_t   reg;
    void                   *arg;
    const umr_mpi_span_t   *runs;          /* sorted, disjoint */
    umr_mpi_span_t         *spans;
    unsigned               n;
} umr_mpi_cutter_t;

static int umr_mpi_allocs_block(void *arg, ptrdiff_t offset, size_t len)
{
    umr_mpi_blocks_t *b = arg;

    if (b->n == UMR_MPI_ALLOCS_MAX_BLOCKS) {
        return 1;
    }
    b->blocks[b->n].lo   = offset;
    b->blocks[b->n++].hi = offset + (ptrdiff_t)len;
    return 0;
}

static int umr_mpi_allocs_cmp(const void *a, const void *b)
{
    const umr_mpi_span_t *x = a, *y = b;

    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Runs [i, j) register as one region, or are cut at their widest gap and
 * each side tried again. 0, or -1 when a run alone does not register or
 * the cuts are too many. */
static int umr_mpi_allocs_cut(umr_mpi_cutter_t *c, size_t i, size_t j)
{
    ptrdiff_t lo = c->runs[i].lo, hi = c->runs[j - 1].hi, gap = -1;
    size_t k, at = i;

    if ((c->n < UMR_MPI_MAX_ALLOCS) &&
        (c->reg(c->arg, c->n, c->base + lo, hi - lo) == 0)) {
        c->spans[c->n].lo   = lo;
        c->spans[c->n++].hi = hi;
        return 0;
    }
    if (j - i == 1) {
        return -1;
    }
    for (k = i + 1; k < j; ++k) {
        if (c->runs[k].lo - c->runs[k - 1].hi > gap) {
            gap = c->runs[k].lo - c->runs[k - 1].hi;
            at  = k;
        }
    }
    return (umr_mpi_allocs_cut(c, i, at) == 0) ?
           umr_mpi_allocs_cut(c, at, j) : -1;
}

/* Cut anew: the blocks sorted and merged into runs, then cut. */
static ucs_status_t umr_mpi_allocs_find(umr_mpi_cutter_t *c,
                                        const umr_layout_t *layout,
                                        size_t count,
                                        umr_mpi_allocs_unreg_t unreg,
                                        const char **why_p)
{
    umr_mpi_blocks_t b;
    size_t i, nruns;
    int rc;

    b.blocks = malloc(sizeof(*b.blocks) * UMR_MPI_ALLOCS_MAX_BLOCKS);
    b.n      = 0;
    if (b.blocks == NULL) {
        *why_p = "out of memory to register it";
        return UCS_ERR_NO_RESOURCE;
    }
    if ((umr_layout_for_each_block(layout, count, umr_mpi_allocs_block,
                                   &b) != UCS_OK) ||
        (b.n == UMR_MPI_ALLOCS_MAX_BLOCKS)) {
        free(b.blocks);
        *why_p = "the memory it spans does not register as one region, and "
                 "its blocks are too many to find its allocations";
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    qsort(b.blocks, b.n, sizeof(*b.blocks), umr_mpi_allocs_cmp);
    for (i = 1, nruns = (b.n > 0); i < b.n; ++i) {
        if (b.blocks[i].lo <= b.blocks[nruns - 1].hi) {
            b.blocks[nruns - 1].hi = ucs_max(b.blocks[nruns - 1].hi,
                                             b.blocks[i].hi);
        } else {
            b.blocks[nruns++] = b.blocks[i];
        }
    }
    c->runs = b.blocks;
    c->n    = 0;
    rc      = (nruns > 0) ? umr_mpi_allocs_cut(c, 0, nruns) : -1;
    free(b.blocks);
    if ((rc != 0) || (c->n < 2)) {
        unreg(c->arg, c->n);
        *why_p = "the memory it spans does not register, in one region nor "
                 "in " UCS_PP_MAKE_STRING(UMR_MPI_MAX_ALLOCS) " allocations";
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    return UCS_OK;
}

/* Keep the cut, the most recent first, forgetting the oldest beyond
 * UMR_MPI_ALLOCS_MAX_CUTS. Out of memory: not kept (found again). */
static void umr_mpi_allocs_keep(umr_mpi_rail_t *rail, void *base,
                                size_t count, const umr_layout_t *layout,
                                const umr_mpi_span_t *spans, unsigned n)
{
    umr_mpi_cut_t *cut;

    if (rail->nalloc_cuts == UMR_MPI_ALLOCS_MAX_CUTS) {
        cut = ucs_list_tail(&rail->alloc_cuts, umr_mpi_cut_t, list);
        ucs_list_del(&cut->list);
        umr_layout_free(cut->layout);
        --rail->nalloc_cuts;
    } else {
        cut = malloc(sizeof(*cut));
        if (cut == NULL) {
            return;
        }
    }
    if (umr_layout_dup(layout, &cut->layout) != UCS_OK) {
        free(cut);
        return;
    }
    cut->base  = base;
    cut->count = count;
    cut->n     = n;
    memcpy(cut->spans, spans, n * sizeof(*spans));
    ucs_list_add_head(&rail->alloc_cuts, &cut->list);
    ++rail->nalloc_cuts;
}

static umr_mpi_cut_t *umr_mpi_allocs_kept(umr_mpi_rail_t *rail, void *base,
                                          size_t count,
                                          const umr_layout_t *layout)
{
    umr_mpi_cut_t *cut;

    ucs_list_for_each(cut, &rail->alloc_cuts, list) {
        if ((cut->base == base) && (cut->count == count) &&
            umr_layout_equal(cut->layout, layout)) {
            return cut;
        }
    }
    return NULL;
}

static void umr_mpi_allocs_forget(umr_mpi_rail_t *rail, umr_mpi_cut_t *cut)
{
    ucs_list_del(&cut->list);
    --rail->nalloc_cuts;
    umr_layout_free(cut->layout);
    free(cut);
}

ucs_status_t umr_mpi_allocs_acquire(umr_mpi_rail_t *rail, void *base,
                                    const umr_layout_t *layout, size_t count,
                                    umr_mpi_allocs_reg_t reg,
                                    umr_mpi_allocs_unreg_t unreg, void *arg,
                                    unsigned *n_p, const char **why_p)
{
    umr_mpi_span_t spans[UMR_MPI_MAX_ALLOCS];
    umr_mpi_cutter_t c;
    umr_mpi_cut_t *cut;
    const char *why;
    ucs_status_t status;
    unsigned i;

    cut = umr_mpi_allocs_kept(rail, base, count, layout);
    if (cut != NULL) {
        for (i = 0; i < cut->n; ++i) {
            if (reg(arg, i, (char*)base + cut->spans[i].lo,
                    cut->spans[i].hi - cut->spans[i].lo) != 0) {
                break;
            }
        }
        if (i == cut->n) {
            *n_p = i;
            return UCS_OK;
        }
        /* the memory changed since (freed, mapped anew): cut again */
        unreg(arg, i);
        umr_mpi_allocs_forget(rail, cut);
    }

    c.base    = base;
    c.reg     = reg;
    c.arg     = arg;
    c.spans   = spans;
    status    = umr_mpi_allocs_find(&c, layout, count, unreg, &why);
    if (status != UCS_OK) {
        if (why_p != NULL) {
            *why_p = why;
        }
        return status;
    }
    umr_mpi_allocs_keep(rail, base, count, layout, spans, c.n);
    UMR_MPI_VERBOSE(10, "a layout over %u allocations (%zu elements at %p)",
                    c.n, count, base);
    *n_p = c.n;
    return UCS_OK;
}

void umr_mpi_allocs_fini(umr_mpi_rail_t *rail)
{
    while (!ucs_list_is_empty(&rail->alloc_cuts)) {
        umr_mpi_allocs_forget(rail, ucs_list_head(&rail->alloc_cuts,
                                                  umr_mpi_cut_t, list));
    }
}
