/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI layer: MPI datatype -> layout decoder.
 *
 * Walks a datatype's constructor tree with PMPI_Type_get_envelope and
 * PMPI_Type_get_contents and rebuilds it with the layout constructors, which
 * follow MPI's type-map rules (bound markers set by resized, alignment
 * padding; a predefined type's alignment is measured through the MPI). Every level is then compared with what the MPI library reports
 * for that level (size, lb, extent, true bounds): a difference means the MPI
 * computes something the layout does not express, and the whole type is
 * reported UCS_ERR_UNSUPPORTED rather than decoded wrong.
 */
#ifdef HAVE_CONFIG_H
#  include "umr_config.h"
#endif

#include "umr_mpi_dtype_priv.h"
#include "umr_mpi_compat.h"

#include <ucs/debug/log.h>

#include <stdlib.h>
#include <string.h>

/* contents of one constructor call, as returned by the MPI */
typedef struct {
    int          combiner;
    int          ni, na, nd;
    int          *ints;
    MPI_Aint     *aints;
    MPI_Datatype *types;
} umr_mpi_contents_t;

static ucs_status_t umr_mpi_dtype_rec(MPI_Datatype type,
                                      umr_layout_t **layout_p);

static int umr_mpi_dtype_is_predefined(int combiner)
{
    return (combiner == MPI_COMBINER_NAMED) ||
           (combiner == MPI_COMBINER_F90_REAL) ||
           (combiner == MPI_COMBINER_F90_COMPLEX) ||
           (combiner == MPI_COMBINER_F90_INTEGER);
}

const char *umr_mpi_dtype_combiner_name(int combiner)
{
    switch (combiner) {
    case MPI_COMBINER_NAMED:          return "named";
    case MPI_COMBINER_DUP:            return "dup";
    case MPI_COMBINER_CONTIGUOUS:     return "contiguous";
    case MPI_COMBINER_VECTOR:         return "vector";
    case MPI_COMBINER_HVECTOR:        return "hvector";
    case MPI_COMBINER_INDEXED:        return "indexed";
    case MPI_COMBINER_HINDEXED:       return "hindexed";
    case MPI_COMBINER_INDEXED_BLOCK:  return "indexed_block";
    case MPI_COMBINER_HINDEXED_BLOCK: return "hindexed_block";
    case MPI_COMBINER_STRUCT:         return "struct";
    case MPI_COMBINER_SUBARRAY:       return "subarray";
    case MPI_COMBINER_DARRAY:         return "darray";
    case MPI_COMBINER_RESIZED:        return "resized";
    case MPI_COMBINER_F90_REAL:       return "f90_real";
    case MPI_COMBINER_F90_COMPLEX:    return "f90_complex";
    case MPI_COMBINER_F90_INTEGER:    return "f90_integer";
    default:                          return "other";
    }
}

static void umr_mpi_contents_release(umr_mpi_contents_t *c)
{
    int i, ni, na, nd, combiner;

    for (i = 0; i < c->nd; ++i) {
        /* derived types returned by get_contents are new handles; predefined
         * ones are the constants themselves and must not be freed */
        if ((PMPI_Type_get_envelope(c->types[i], &ni, &na, &nd, &combiner) ==
             MPI_SUCCESS) && !umr_mpi_dtype_is_predefined(combiner)) {
            PMPI_Type_free(&c->types[i]);
        }
    }
    free(c->ints);
    free(c->aints);
    free(c->types);
}

static ucs_status_t umr_mpi_contents_get(MPI_Datatype type,
                                         umr_mpi_contents_t *c)
{
    memset(c, 0, sizeof(*c));
    if (PMPI_Type_get_envelope(type, &c->ni, &c->na, &c->nd, &c->combiner) !=
        MPI_SUCCESS) {
        ucs_debug("umr_mpi_dtype: MPI_Type_get_envelope failed");
        return UCS_ERR_INVALID_PARAM;
    }
    if (umr_mpi_dtype_is_predefined(c->combiner)) {
        c->ni = c->na = c->nd = 0;
        return UCS_OK;
    }

    /* +1: malloc(0) may return NULL */
    c->ints  = malloc((c->ni + 1) * sizeof(*c->ints));
    c->aints = malloc((c->na + 1) * sizeof(*c->aints));
    c->types = malloc((c->nd + 1) * sizeof(*c->types));
    if ((c->ints == NULL) || (c->aints == NULL) || (c->types == NULL)) {
        free(c->ints);
        free(c->aints);
        free(c->types);
        return UCS_ERR_NO_MEMORY;
    }
    if (PMPI_Type_get_contents(type, c->ni, c->na, c->nd, c->ints, c->aints,
                               c->types) != MPI_SUCCESS) {
        ucs_debug("umr_mpi_dtype: MPI_Type_get_contents failed (%s)",
                  umr_mpi_dtype_combiner_name(c->combiner));
        free(c->ints);
        free(c->aints);
        free(c->types);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

/* MPI's own answers for one datatype */
ucs_status_t umr_mpi_dtype_query(MPI_Datatype type, umr_mpi_bounds_t *b)
{
    MPI_Count size, lb, extent, true_lb, true_extent;

    if ((umr_mpi_type_size_count(type, &size) != MPI_SUCCESS) ||
        (umr_mpi_type_get_extent_count(type, &lb, &extent) != MPI_SUCCESS) ||
        (umr_mpi_type_get_true_extent_count(type, &true_lb, &true_extent) !=
         MPI_SUCCESS) || (size < 0)) {
        return UCS_ERR_INVALID_PARAM;
    }
    b->size        = (size_t)size;
    b->lb          = (ptrdiff_t)lb;
    b->extent      = (ptrdiff_t)extent;
    b->true_lb     = (ptrdiff_t)true_lb;
    b->true_extent = (ptrdiff_t)true_extent;
    return UCS_OK;
}

/* Does the layout say what the MPI says about `type`? */
static ucs_status_t umr_mpi_dtype_check(MPI_Datatype type, int combiner,
                                        const umr_layout_t *layout)
{
    umr_mpi_bounds_t b;
    ucs_status_t status;

    status = umr_mpi_dtype_query(type, &b);
    if (status != UCS_OK) {
        return status;
    }
    if ((umr_layout_size(layout) == b.size) &&
        (umr_layout_lb(layout) == b.lb) &&
        (umr_layout_extent(layout) == b.extent) &&
        ((b.size == 0) ||
         ((umr_layout_true_lb(layout) == b.true_lb) &&
          (umr_layout_true_ub(layout) - umr_layout_true_lb(layout) ==
           b.true_extent)))) {
        return UCS_OK;
    }

    ucs_debug("umr_mpi_dtype: %s type: MPI says size %zu lb %td extent %td "
              "true lb %td extent %td, the layout size %zu lb %td extent %td "
              "true lb %td ub %td: not expressible",
              umr_mpi_dtype_combiner_name(combiner), b.size, b.lb, b.extent,
              b.true_lb, b.true_extent, umr_layout_size(layout),
              umr_layout_lb(layout), umr_layout_extent(layout),
              umr_layout_true_lb(layout), umr_layout_true_ub(layout));
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t umr_mpi_dtype_layout_status(ucs_status_t status,
                                                const char *what)
{
    if (status == UCS_OK) {
        return UCS_OK;
    }
    ucs_debug("umr_mpi_dtype: %s: %s (%s)", what, ucs_status_string(status),
              umr_layout_last_error());
    /* the layout rejects what it cannot express (a negative extent, sizes
     * that overflow): the type is passed through */
    return (status == UCS_ERR_NO_MEMORY) ? status : UCS_ERR_UNSUPPORTED;
}

/* ---- predefined types -------------------------------------------------- */

/* C pair types for MINLOC/MAXLOC: { T value; int index; } with C padding */
#define UMR_MPI_PAIR(_T) \
    { sizeof(_T), _Alignof(_T), offsetof(struct { _T v; int i; }, i) }

typedef struct {
    size_t vsize, valign, ioff;
} umr_mpi_pair_t;

/* `len` bytes of a basic type aligned to `align` */
static ucs_status_t umr_mpi_dtype_basic(size_t len, size_t align,
                                        umr_layout_t **layout_p)
{
    umr_layout_t *bytes;
    ucs_status_t status;

    status = umr_layout_contig(len, &bytes);
    if ((status != UCS_OK) || (align <= 1)) {
        *layout_p = bytes;
        return status;
    }
    status = umr_layout_align(bytes, align, layout_p);
    umr_layout_free(bytes);
    return status;
}

/*
 * The alignment the MPI gives a predefined type, measured: the extent of
 * struct {type at 0, MPI_BYTE at extent} is extent + alignment when the MPI
 * pads (MPI's epsilon), extent + 1 when it does not.
 */
static size_t umr_mpi_dtype_named_align(MPI_Datatype type, ptrdiff_t extent)
{
    int blens[2]          = {1, 1};
    MPI_Aint displs[2]    = {0, extent};
    MPI_Datatype types[2] = {type, MPI_BYTE};
    MPI_Datatype probe;
    MPI_Aint lb, ext, align;

    if (PMPI_Type_create_struct(2, blens, displs, types, &probe) !=
        MPI_SUCCESS) {
        return 1;
    }
    align = 1;
    if ((PMPI_Type_get_extent(probe, &lb, &ext) == MPI_SUCCESS) &&
        (lb == 0) && (ext > extent)) {
        align = ext - extent;
    }
    PMPI_Type_free(&probe);
    /* anything but a power of two is not an alignment: let the checks of
     * the enclosing types decide */
    return ((align & (align - 1)) == 0) ? (size_t)align : 1;
}

static ucs_status_t umr_mpi_dtype_pair(const umr_mpi_pair_t *p,
                                       umr_layout_t **layout_p)
{
    size_t blens[2]     = {1, 1};
    ptrdiff_t displs[2] = {0, (ptrdiff_t)p->ioff};
    umr_layout_t *value, *index;
    const umr_layout_t *inners[2];
    ucs_status_t status;

    /* C's padding follows from the members' alignment, as in the MPI */
    status = umr_mpi_dtype_basic(p->vsize, p->valign, &value);
    if (status != UCS_OK) {
        return status;
    }
    status = umr_mpi_dtype_basic(sizeof(int), _Alignof(int), &index);
    if (status != UCS_OK) {
        umr_layout_free(value);
        return status;
    }
    inners[0] = value;
    inners[1] = index;
    status    = umr_layout_struct(2, blens, displs, inners, layout_p);
    umr_layout_free(value);
    umr_layout_free(index);
    return status;
}

static ucs_status_t umr_mpi_dtype_named(MPI_Datatype type,
                                        umr_layout_t **layout_p)
{
    /* handles are not compile-time constants in every MPI */
    const struct {
        MPI_Datatype   type;
        umr_mpi_pair_t pair;
    } pairs[] = {
        {MPI_FLOAT_INT,       UMR_MPI_PAIR(float)},
        {MPI_DOUBLE_INT,      UMR_MPI_PAIR(double)},
        {MPI_LONG_INT,        UMR_MPI_PAIR(long)},
        {MPI_SHORT_INT,       UMR_MPI_PAIR(short)},
        {MPI_LONG_DOUBLE_INT, UMR_MPI_PAIR(long double)},
    };
    umr_mpi_bounds_t b;
    ucs_status_t status;
    size_t i;

    status = umr_mpi_dtype_query(type, &b);
    if (status != UCS_OK) {
        return status;
    }

    if (b.size == 0) {
        /* MPI_LB/MPI_UB markers or an empty predefined type */
        ucs_debug("umr_mpi_dtype: predefined type of size 0 (marker?)");
        return UCS_ERR_UNSUPPORTED;
    }
    if ((b.lb == 0) && (b.true_lb == 0) && (b.extent == (ptrdiff_t)b.size) &&
        (b.true_extent == (ptrdiff_t)b.size)) {
        return umr_mpi_dtype_layout_status(
                umr_mpi_dtype_basic(b.size,
                                    umr_mpi_dtype_named_align(type, b.extent),
                                    layout_p), "predefined type");
    }

    /* predefined types with holes: the C pair types */
    for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); ++i) {
        if (type == pairs[i].type) {
            return umr_mpi_dtype_layout_status(
                    umr_mpi_dtype_pair(&pairs[i].pair, layout_p),
                    "pair type");
        }
    }
    ucs_debug("umr_mpi_dtype: predefined type of size %zu, extent %td, true "
              "extent %td is not contiguous", b.size, b.extent,
              b.true_extent);
    return UCS_ERR_UNSUPPORTED;
}

/* ---- derived types ----------------------------------------------------- */

/* n copies of `v` as size_t (MPI counts are non-negative ints) */
static ucs_status_t umr_mpi_ints_to_sizes(const int *v, int n, size_t *out)
{
    int i;

    for (i = 0; i < n; ++i) {
        if (v[i] < 0) {
            return UCS_ERR_INVALID_PARAM;
        }
        out[i] = (size_t)v[i];
    }
    return UCS_OK;
}

/* The arrays of `count` block lengths and displacements of a constructor
 * (one more: `count` may be 0); UCS_ERR_NO_MEMORY: either may be NULL,
 * free both. */
static ucs_status_t umr_mpi_dtype_blocks_alloc(int count, size_t **blens,
                                               ptrdiff_t **displs)
{
    *blens  = malloc((count + 1) * sizeof(**blens));
    *displs = malloc((count + 1) * sizeof(**displs));
    return ((*blens == NULL) || (*displs == NULL)) ? UCS_ERR_NO_MEMORY :
                                                     UCS_OK;
}

/* block lengths and byte displacements of an indexed-family constructor */
static ucs_status_t umr_mpi_dtype_indexed(const umr_mpi_contents_t *c,
                                          const umr_layout_t *inner,
                                          umr_layout_t **layout_p)
{
    ptrdiff_t extent = umr_layout_extent(inner);
    int count        = c->ints[0];
    ptrdiff_t *displs;
    size_t *blens;
    int i;
    ucs_status_t status = umr_mpi_dtype_blocks_alloc(count, &blens, &displs);

    for (i = 0; (i < count) && (status == UCS_OK); ++i) {
        switch (c->combiner) {
        case MPI_COMBINER_INDEXED:        /* count, blens[], displs[] */
            status = umr_mpi_ints_to_sizes(&c->ints[1 + i], 1, &blens[i]);
            if (__builtin_mul_overflow((ptrdiff_t)c->ints[1 + count + i],
                                       extent, &displs[i])) {
                status = UCS_ERR_UNSUPPORTED;
            }
            break;
        case MPI_COMBINER_INDEXED_BLOCK:  /* count, blen, displs[] */
            status = umr_mpi_ints_to_sizes(&c->ints[1], 1, &blens[i]);
            if (__builtin_mul_overflow((ptrdiff_t)c->ints[2 + i], extent,
                                       &displs[i])) {
                status = UCS_ERR_UNSUPPORTED;
            }
            break;
        case MPI_COMBINER_HINDEXED_BLOCK: /* count, blen; aints: displs[] */
            status    = umr_mpi_ints_to_sizes(&c->ints[1], 1, &blens[i]);
            displs[i] = (ptrdiff_t)c->aints[i];
            break;
        default:                          /* hindexed: count, blens[]; aints */
            status    = umr_mpi_ints_to_sizes(&c->ints[1 + i], 1, &blens[i]);
            displs[i] = (ptrdiff_t)c->aints[i];
            break;
        }
    }
    if (status == UCS_OK) {
        status = umr_mpi_dtype_layout_status(
                umr_layout_indexed(count, blens, displs, inner, layout_p),
                umr_mpi_dtype_combiner_name(c->combiner));
    }

    free(blens);
    free(displs);
    return status;
}

static ucs_status_t umr_mpi_dtype_struct(const umr_mpi_contents_t *c,
                                         umr_layout_t **layout_p)
{
    int count = c->ints[0];
    umr_layout_t **inners = calloc(count + 1, sizeof(*inners));
    ptrdiff_t *displs;
    size_t *blens;
    int i;
    ucs_status_t status = umr_mpi_dtype_blocks_alloc(count, &blens, &displs);

    if ((status == UCS_OK) && (inners == NULL)) {
        status = UCS_ERR_NO_MEMORY;
    }
    if (status == UCS_OK) {
        status = umr_mpi_ints_to_sizes(&c->ints[1], count, blens);
    }
    for (i = 0; (i < count) && (status == UCS_OK); ++i) {
        displs[i] = (ptrdiff_t)c->aints[i];
        if (blens[i] > 0) {
            /* an empty block has no effect: its type does not matter */
            status = umr_mpi_dtype_rec(c->types[i], &inners[i]);
        }
    }
    if (status == UCS_OK) {
        status = umr_mpi_dtype_layout_status(
                umr_layout_struct(count, blens, displs,
                                  (const umr_layout_t *const *)inners,
                                  layout_p), "struct");
    }

    for (i = 0; (inners != NULL) && (i < count); ++i) {
        umr_layout_free(inners[i]);
    }
    free(inners);
    free(blens);
    free(displs);
    return status;
}

/*
 * Rebuild a (sub)array: per dimension, from the fastest to the slowest, the
 * runs of indices of that dimension that belong to the type, in increasing
 * order. dims[] lists dimensions fastest first; stride[d] is the byte stride
 * of dimension d; runs of dimension d are (start, length) pairs.
 */
typedef struct {
    size_t    nruns;
    size_t    *start;
    size_t    *len;
} umr_mpi_runs_t;

static ucs_status_t umr_mpi_dtype_array(int ndims, const int *dims,
                                        const ptrdiff_t *stride,
                                        const umr_mpi_runs_t *runs,
                                        const umr_layout_t *inner,
                                        ptrdiff_t full_extent,
                                        umr_layout_t **layout_p)
{
    umr_layout_t *cur = NULL, *next;
    const umr_layout_t *elem = inner;
    ucs_status_t status = UCS_OK;
    ptrdiff_t *displs;
    size_t *blens, n, j, k, max = 1;
    int i, d;

    for (i = 0; i < ndims; ++i) {
        for (j = 0, n = 0; j < runs[dims[i]].nruns; ++j) {
            n += (i == 0) ? 1 : runs[dims[i]].len[j];
        }
        max = (n > max) ? n : max;
    }
    blens  = malloc(max * sizeof(*blens));
    displs = malloc(max * sizeof(*displs));
    if ((blens == NULL) || (displs == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto out;
    }

    for (i = 0; i < ndims; ++i) {
        d = dims[i];
        n = 0;
        for (j = 0; j < runs[d].nruns; ++j) {
            if (i == 0) {
                /* fastest dimension: runs of consecutive elements */
                blens[n]  = runs[d].len[j];
                displs[n] = (ptrdiff_t)runs[d].start[j] * stride[d];
                ++n;
                continue;
            }
            /* slower ones: one copy of the lower dimensions per index */
            for (k = 0; k < runs[d].len[j]; ++k) {
                blens[n]  = 1;
                displs[n] = (ptrdiff_t)(runs[d].start[j] + k) * stride[d];
                ++n;
            }
        }
        status = umr_layout_indexed(n, blens, displs, elem, &next);
        if (status != UCS_OK) {
            goto out;
        }
        umr_layout_free(cur);
        cur  = next;
        elem = cur;
    }
    status = umr_layout_resized(cur, 0, full_extent, layout_p);

out:
    umr_layout_free(cur);
    free(blens);
    free(displs);
    return umr_mpi_dtype_layout_status(status, "array type");
}

/* strides of an array of `sizes` elements of `extent` bytes, and the order
 * of its dimensions, fastest first */
static ucs_status_t umr_mpi_dtype_array_shape(int ndims, const int *sizes,
                                              int order, ptrdiff_t extent,
                                              int *dims, ptrdiff_t *stride,
                                              ptrdiff_t *full_p)
{
    ptrdiff_t s = extent;
    int i, d;

    if ((order != MPI_ORDER_C) && (order != MPI_ORDER_FORTRAN)) {
        return UCS_ERR_UNSUPPORTED;
    }
    for (i = 0; i < ndims; ++i) {
        d         = (order == MPI_ORDER_C) ? (ndims - 1 - i) : i;
        dims[i]   = d;
        stride[d] = s;
        if ((sizes[d] < 0) ||
            __builtin_mul_overflow(s, (ptrdiff_t)sizes[d], &s)) {
            return UCS_ERR_UNSUPPORTED;
        }
    }
    *full_p = s;
    return UCS_OK;
}

/* The per-dimension state of an array type (subarray, darray): runs,
 * strides and dimensions in the order the type's `order` gives, and the
 * array's full extent. */
typedef struct umr_mpi_array {
    umr_mpi_runs_t *runs;
    ptrdiff_t      *stride;
    int            *dims;
    ptrdiff_t      full;
} umr_mpi_array_t;

static ucs_status_t umr_mpi_array_init(umr_mpi_array_t *arr, int ndims,
                                       const int *sizes, int order,
                                       const umr_layout_t *inner)
{
    arr->runs   = calloc(ndims + 1, sizeof(*arr->runs));
    arr->stride = calloc(ndims + 1, sizeof(*arr->stride));
    arr->dims   = calloc(ndims + 1, sizeof(*arr->dims));
    if ((arr->runs == NULL) || (arr->stride == NULL) || (arr->dims == NULL)) {
        return UCS_ERR_NO_MEMORY;
    }
    return umr_mpi_dtype_array_shape(ndims, sizes, order,
                                     umr_layout_extent(inner), arr->dims,
                                     arr->stride, &arr->full);
}

static void umr_mpi_array_fini(umr_mpi_array_t *arr)
{
    free(arr->runs);
    free(arr->stride);
    free(arr->dims);
}

static ucs_status_t umr_mpi_dtype_subarray(const umr_mpi_contents_t *c,
                                           const umr_layout_t *inner,
                                           umr_layout_t **layout_p)
{
    int ndims           = c->ints[0];
    const int *sizes    = &c->ints[1];
    const int *subsizes = &c->ints[1 + ndims];
    const int *starts   = &c->ints[1 + 2 * ndims];
    int order           = c->ints[1 + 3 * ndims];
    umr_mpi_array_t arr;
    ucs_status_t status;
    size_t *buf;
    int i;

    buf    = calloc(2 * ndims + 1, sizeof(*buf));
    status = umr_mpi_array_init(&arr, ndims, sizes, order, inner);
    if ((status == UCS_OK) && (buf == NULL)) {
        status = UCS_ERR_NO_MEMORY;
    }
    if (status != UCS_OK) {
        goto out;
    }
    for (i = 0; i < ndims; ++i) {
        if ((starts[i] < 0) || (subsizes[i] < 0)) {
            status = UCS_ERR_UNSUPPORTED;
            goto out;
        }
        arr.runs[i].nruns = 1;
        arr.runs[i].start = &buf[2 * i];
        arr.runs[i].len   = &buf[2 * i + 1];
        buf[2 * i]        = (size_t)starts[i];
        buf[2 * i + 1]    = (size_t)subsizes[i];
    }
    status = umr_mpi_dtype_array(ndims, arr.dims, arr.stride, arr.runs, inner,
                                 arr.full, layout_p);

out:
    umr_mpi_array_fini(&arr);
    free(buf);
    return status;
}

/* indices of one dimension of a darray owned by process coordinate `coord` */
static ucs_status_t umr_mpi_darray_runs(int gsize, int distrib, int darg,
                                        int psize, int coord,
                                        umr_mpi_runs_t *r)
{
    size_t b, first, n, i;

    if ((gsize < 0) || (psize <= 0) || (coord < 0) || (coord >= psize)) {
        return UCS_ERR_UNSUPPORTED;
    }
    switch (distrib) {
    case MPI_DISTRIBUTE_NONE:
        b = (size_t)gsize;
        break;
    case MPI_DISTRIBUTE_BLOCK:
        b = (darg == MPI_DISTRIBUTE_DFLT_DARG) ?
            (((size_t)gsize + psize - 1) / psize) : (size_t)darg;
        break;
    case MPI_DISTRIBUTE_CYCLIC:
        b = (darg == MPI_DISTRIBUTE_DFLT_DARG) ? 1 : (size_t)darg;
        break;
    default:
        return UCS_ERR_UNSUPPORTED;
    }
    if ((darg != MPI_DISTRIBUTE_DFLT_DARG) && (darg <= 0)) {
        return UCS_ERR_UNSUPPORTED;
    }

    r->nruns = 0;
    if (distrib == MPI_DISTRIBUTE_NONE) {
        coord = 0;
    }
    n        = (b == 0) ? 0 : ((size_t)gsize + b - 1) / b + 1;
    r->start = malloc(n * sizeof(size_t) + 1);
    r->len   = malloc(n * sizeof(size_t) + 1);
    if ((r->start == NULL) || (r->len == NULL)) {
        return UCS_ERR_NO_MEMORY;
    }
    /* block: one run of b from coord * b; cyclic: runs of b every psize * b */
    for (first = (size_t)coord * b; (b > 0) && (first < (size_t)gsize);
         first += (size_t)psize * b) {
        i                  = r->nruns++;
        r->start[i]        = first;
        r->len[i]          = ((size_t)gsize - first < b) ? (gsize - first) : b;
        if (distrib != MPI_DISTRIBUTE_CYCLIC) {
            break;
        }
    }
    return UCS_OK;
}

static ucs_status_t umr_mpi_dtype_darray(const umr_mpi_contents_t *c,
                                         const umr_layout_t *inner,
                                         umr_layout_t **layout_p)
{
    int rank            = c->ints[1];
    int ndims           = c->ints[2];
    const int *gsizes   = &c->ints[3];
    const int *distribs = &c->ints[3 + ndims];
    const int *dargs    = &c->ints[3 + 2 * ndims];
    const int *psizes   = &c->ints[3 + 3 * ndims];
    int order           = c->ints[3 + 4 * ndims];
    umr_mpi_array_t arr;
    ucs_status_t status;
    int i, r, coord;

    status = umr_mpi_array_init(&arr, ndims, gsizes, order, inner);
    if (status != UCS_OK) {
        goto out;
    }
    /* the process grid is row-major whatever the array order */
    for (i = ndims - 1, r = rank; i >= 0; --i) {
        if (psizes[i] <= 0) {
            status = UCS_ERR_UNSUPPORTED;
            goto out;
        }
        coord  = r % psizes[i];
        r     /= psizes[i];
        status = umr_mpi_darray_runs(gsizes[i], distribs[i], dargs[i],
                                     psizes[i], coord, &arr.runs[i]);
        if (status != UCS_OK) {
            goto out;
        }
    }
    status = umr_mpi_dtype_array(ndims, arr.dims, arr.stride, arr.runs, inner,
                                 arr.full, layout_p);

out:
    for (i = 0; (arr.runs != NULL) && (i < ndims); ++i) {
        free(arr.runs[i].start);
        free(arr.runs[i].len);
    }
    umr_mpi_array_fini(&arr);
    return status;
}

static ucs_status_t umr_mpi_dtype_derived(MPI_Datatype type,
                                          const umr_mpi_contents_t *c,
                                          umr_layout_t **layout_p)
{
    umr_layout_t *inner = NULL;
    ucs_status_t status;
    ptrdiff_t stride;
    size_t count, blen;

    if (c->combiner == MPI_COMBINER_STRUCT) {
        return umr_mpi_dtype_struct(c, layout_p);
    }

    switch (c->combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_CONTIGUOUS:
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_DARRAY:
    case MPI_COMBINER_RESIZED:
        if (c->nd != 1) {
            return UCS_ERR_UNSUPPORTED;
        }
        status = umr_mpi_dtype_rec(c->types[0], &inner);
        if (status != UCS_OK) {
            return status;
        }
        break;
    default:
        ucs_debug("umr_mpi_dtype: combiner %d is not supported",
                  c->combiner);
        return UCS_ERR_UNSUPPORTED;
    }

    switch (c->combiner) {
    case MPI_COMBINER_DUP:
        status = umr_layout_dup(inner, layout_p);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        status = umr_mpi_ints_to_sizes(&c->ints[0], 1, &count);
        if (status == UCS_OK) {
            status = umr_mpi_dtype_layout_status(
                    umr_layout_vector(1, count, 0, inner, layout_p),
                    "contiguous");
        }
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
        status = umr_mpi_ints_to_sizes(&c->ints[0], 1, &count);
        if (status == UCS_OK) {
            status = umr_mpi_ints_to_sizes(&c->ints[1], 1, &blen);
        }
        if (c->combiner == MPI_COMBINER_VECTOR) {
            if (__builtin_mul_overflow((ptrdiff_t)c->ints[2],
                                       umr_layout_extent(inner),
                                       &stride)) {
                status = UCS_ERR_UNSUPPORTED;
            }
        } else {
            stride = (ptrdiff_t)c->aints[0];
        }
        if (status == UCS_OK) {
            status = umr_mpi_dtype_layout_status(
                    umr_layout_vector(count, blen, stride, inner,
                                      layout_p), "vector");
        }
        break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        status = umr_mpi_dtype_indexed(c, inner, layout_p);
        break;
    case MPI_COMBINER_SUBARRAY:
        status = umr_mpi_dtype_subarray(c, inner, layout_p);
        break;
    case MPI_COMBINER_DARRAY:
        status = umr_mpi_dtype_darray(c, inner, layout_p);
        break;
    case MPI_COMBINER_RESIZED:
        status = umr_mpi_dtype_layout_status(
                umr_layout_resized(inner, (ptrdiff_t)c->aints[0],
                                   (ptrdiff_t)c->aints[1], layout_p),
                "resized");
        break;
    }

    umr_layout_free(inner);
    return status;
}

static ucs_status_t umr_mpi_dtype_rec(MPI_Datatype type,
                                      umr_layout_t **layout_p)
{
    umr_layout_t *layout = NULL;
    umr_mpi_contents_t c;
    ucs_status_t status;

    status = umr_mpi_contents_get(type, &c);
    if (status != UCS_OK) {
        return status;
    }

    if (umr_mpi_dtype_is_predefined(c.combiner)) {
        status = umr_mpi_dtype_named(type, &layout);
    } else {
        status = umr_mpi_dtype_derived(type, &c, &layout);
        umr_mpi_contents_release(&c);
    }
    if (status == UCS_OK) {
        status = umr_mpi_dtype_check(type, c.combiner, layout);
    }
    if (status != UCS_OK) {
        umr_layout_free(layout);
        return status;
    }
    *layout_p = layout;
    return UCS_OK;
}

ucs_status_t umr_mpi_dtype_decode(MPI_Datatype type,
                                  umr_layout_t **layout_p)
{
    if (layout_p == NULL) {
        ucs_error("umr_mpi_dtype_decode: layout_p is NULL");
        return UCS_ERR_INVALID_PARAM;
    }
    if (type == MPI_DATATYPE_NULL) {
        ucs_error("umr_mpi_dtype_decode: type is MPI_DATATYPE_NULL");
        return UCS_ERR_INVALID_PARAM;
    }
    return umr_mpi_dtype_rec(type, layout_p);
}
