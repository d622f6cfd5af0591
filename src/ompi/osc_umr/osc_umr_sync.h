/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: synchronisation. Each call that completes operations in the
 * wrapped module (fence, complete, unlock, unlock_all, flush, flush_all,
 * flush_local, flush_local_all) first completes osc/umr's own operations
 * to the same targets (mca_osc_umr_rma_complete), then calls the wrapped
 * one: an operation through osc/umr completes exactly where the wrapped
 * module's would (MPI_Win_free: osc_umr_module.h).
 */
#ifndef MCA_OSC_UMR_SYNC_H_
#define MCA_OSC_UMR_SYNC_H_

#include "osc_umr_win.h"

BEGIN_C_DECLS

int mca_osc_umr_fence(int assert, ompi_win_t *win);
int mca_osc_umr_complete(ompi_win_t *win);
int mca_osc_umr_unlock(int target, ompi_win_t *win);
int mca_osc_umr_unlock_all(ompi_win_t *win);
int mca_osc_umr_flush(int target, ompi_win_t *win);
int mca_osc_umr_flush_all(ompi_win_t *win);
int mca_osc_umr_flush_local(int target, ompi_win_t *win);
int mca_osc_umr_flush_local_all(ompi_win_t *win);

END_C_DECLS

#endif
