/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: dynamic windows (MPI_Win_create_dynamic, MPI_Win_attach,
 * MPI_Win_detach).
 *
 * Target: MPI_Win_attach registers the attached memory on every rail (held
 * until it is detached); a key request (osc_umr_key.h) is answered only for
 * bytes that lie in one attached region, the displacement being the
 * address (MPI_Get_address). MPI_Win_detach releases the layout keys made
 * over that region and its registration, after telling every origin that
 * got a key since the last detach to drop the keys it holds for this
 * target: one synchronous send each (osc_umr_wire.h), waited for, so that
 * when MPI_Win_detach returns every such origin has matched it. MPI has the
 * user order a detach before any later access to that memory (a barrier, a
 * message), so an origin sees the invalidation before its next put or get
 * there: it drops the keys (kept aside until the window is freed, for
 * operations still in flight elsewhere) and its next operation asks again,
 * going through the wrapped module meanwhile. No origin uses a stale key;
 * the price is paid at detach (a round trip per origin holding keys), not
 * per operation.
 *
 * An attach whose registration fails is left to the wrapped module (keys
 * for it are refused: the job never sees it). So is memory smaller than
 * MCA_OSC_UMR_DYN_MIN_ATTACH: nothing to win there, and osc/umr allocates
 * nothing then. (MPICH's linked_list tests attach many tiny elements from
 * MPI_Alloc_mem, close to osc/rdma's limit of attached regions,
 * osc_rdma_max_attach = 32: registering each one put allocations of ours
 * between the user's, spread the elements over more pages, and the 33rd
 * region made MPI_Win_attach fail with MPI_ERR_RMA_ATTACH.)
 */
#ifndef MCA_OSC_UMR_DYN_H_
#define MCA_OSC_UMR_DYN_H_

#include "osc_umr_win.h"

BEGIN_C_DECLS

/* Smallest attached memory osc/umr registers (bytes). */
#define MCA_OSC_UMR_DYN_MIN_ATTACH  4096

/* The module's attach/detach entry points on a dynamic window. */
int mca_osc_umr_attach(ompi_win_t *win, void *base, size_t len);
int mca_osc_umr_detach(ompi_win_t *win, const void *base);

/* Origin: post the invalidation receive (init), take an invalidation that
 * arrived (check: cheap when none; the rank that detached, whose keys must
 * go, or -1: mca_osc_umr_keys_check_detach), cancel it (fini; the keys
 * dropped are osc_umr_key.c's to free). */
int  mca_osc_umr_dyn_init(mca_osc_umr_win_t *w);
int  mca_osc_umr_dyn_check(mca_osc_umr_win_t *w);
void mca_osc_umr_dyn_fini(mca_osc_umr_win_t *w);

END_C_DECLS

#endif
