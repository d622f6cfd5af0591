/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI layer: MPI datatype -> layout decoder.
 *
 * Decodes any committed MPI datatype through the public envelope/contents
 * interface (the PMPI_ entry points, so profiling tools see nothing) into a
 * layout of one element (umr_layout.h). Uses no MPI implementation
 * internals: it serves Open MPI's pml/umr and any other MPI.
 *
 * A decoded layout is exact: its data map is the type map's bytes in
 * type-map order, and its size, lb, extent and true bounds are checked
 * against the MPI library's own answers at every level of the type. What
 * cannot be expressed exactly is reported as UCS_ERR_UNSUPPORTED (the caller
 * passes such messages through to the MPI unchanged), never decoded wrong.
 */
#ifndef UMR_MPI_DTYPE_H_
#define UMR_MPI_DTYPE_H_

#include <mpi.h>
#include <umr_layout.h>
#include <ucs/type/status.h>

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Decode a committed MPI datatype into a layout of one element (the caller
 * frees it with umr_layout_free). UCS_OK, UCS_ERR_UNSUPPORTED when the
 * type cannot be expressed exactly (then pass the message through),
 * UCS_ERR_NO_MEMORY, or UCS_ERR_INVALID_PARAM (MPI_DATATYPE_NULL, NULL
 * layout_p, an MPI error while reading the type).
 */
ucs_status_t umr_mpi_dtype_decode(MPI_Datatype type,
                                  umr_layout_t **layout_p);

typedef struct umr_mpi_dtype {
    umr_layout_t *layout;      /* NULL: not expressible -> pass through */
    size_t           size;         /* MPI_Type_size */
    ptrdiff_t        lb, extent;   /* MPI_Type_get_extent */
    size_t           num_blocks;   /* contiguous blocks per element */
    int              is_contig;    /* size == extent && one block */
} umr_mpi_dtype_t;

/*
 * Cache: each datatype is decoded once, at first use, and the entry is kept
 * as an attribute of the datatype (freed with the type; a duplicated type is
 * decoded anew). Thread safe.
 */

/** After MPI is initialised. MPI_SUCCESS or the MPI error code. */
int umr_mpi_dtype_cache_init(void);

/** Drops the entries of predefined types and the keyval (before MPI_Finalize
 *  completes; after it, only the decoder's own memory is released). */
void umr_mpi_dtype_cache_fini(void);

/** Cached entry for `type` (decoded at first use); NULL only on out of
 *  memory, an invalid type, or a cache that is not initialised. */
const umr_mpi_dtype_t *umr_mpi_dtype_get(MPI_Datatype type);

/** The same for a derived type the caller knows cannot be read back (one an
 *  MPI built for itself, without construction arguments: its envelope
 *  would raise an MPI error): cached with its size and extent and no layout
 *  (pass through), without decoding; freed with the type as any entry.
 *  Once cached, umr_mpi_dtype_get() finds the same entry. */
const umr_mpi_dtype_t *umr_mpi_dtype_get_opaque(MPI_Datatype type);

/** `cb` (NULL: none) runs whenever an entry is freed with its type, before
 *  the type's memory can be reused: a caller that keeps entries by type
 *  elsewhere (pml/umr's front cache) forgets them there. */
void umr_mpi_dtype_cache_on_free(void (*cb)(MPI_Datatype type));

/* Counters of the cache (tests, verbose output). */
typedef struct umr_mpi_dtype_stats {
    unsigned long decoded;      /* types decoded into a layout */
    unsigned long unsupported;  /* types found not expressible */
    unsigned long hits;         /* umr_mpi_dtype_get answered from the cache */
    unsigned long freed;        /* entries freed with their type */
    unsigned long opaque;       /* types cached without decoding
                                   (umr_mpi_dtype_get_opaque) */
} umr_mpi_dtype_stats_t;

void umr_mpi_dtype_cache_stats(umr_mpi_dtype_stats_t *stats);

#ifdef __cplusplus
}
#endif

#endif
