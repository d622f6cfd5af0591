/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: a layout whose blocks lie in several allocations (an
 * MPI_BOTTOM struct of separate arrays, a struct of arrays addressed from
 * one of them). Its span does not register as one region (unmapped memory
 * lies between the arrays), so each allocation is registered on its own
 * and the layout key joins them (uct_umr_mem_reg_over: each block of a UMR
 * list carries its own memory key).
 *
 * Which blocks form one allocation is found by registering: the blocks,
 * sorted, are cut at the widest gap of a cluster that does not register,
 * until every cluster does (at most UMR_MPI_MAX_ALLOCS). The cut is kept
 * per (base, count, layout) on the rail, so a loop that sends the same
 * struct every step tries no failing registration after the first.
 */
#ifndef UMR_MPI_ALLOCS_H_
#define UMR_MPI_ALLOCS_H_

#include "umr_mpi_rail.h"

#include <umr_layout.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UMR_MPI_MAX_ALLOCS    8      /* regions one layout key joins */

/* The caller's registration of [lo, lo + len) as allocation `i`: 0, or -1
 * when it does not register as one region. */
typedef int (*umr_mpi_allocs_reg_t)(void *arg, unsigned i, void *lo,
                                    size_t len);
/* The caller gives its first `n` registrations back. */
typedef void (*umr_mpi_allocs_unreg_t)(void *arg, unsigned n);

/* The allocations the bytes of `count` elements of `layout` at `base` lie
 * in (two or more), each registered through `reg` (given back through
 * `unreg` on failure), in *n_p. Only called when the span does not
 * register as one region. UCS_ERR_EXCEEDS_LIMIT (*why_p says why) when a
 * block does not register on its own, there are more than
 * UMR_MPI_MAX_ALLOCS, or the layout has too many blocks to sort;
 * UCS_ERR_NO_RESOURCE when out of memory. */
ucs_status_t umr_mpi_allocs_acquire(umr_mpi_rail_t *rail, void *base,
                                    const umr_layout_t *layout, size_t count,
                                    umr_mpi_allocs_reg_t reg,
                                    umr_mpi_allocs_unreg_t unreg, void *arg,
                                    unsigned *n_p, const char **why_p);

/* Forget the rail's kept cuts (at its end). */
void umr_mpi_allocs_fini(umr_mpi_rail_t *rail);

#ifdef __cplusplus
}
#endif

#endif
