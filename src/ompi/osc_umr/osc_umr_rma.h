/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: put and get. An operation moves zero-copy when the window is
 * wrapped, the peer has a rail and is ready, both datatypes decode, the
 * sizes match and reach osc_umr_min_size, the choice (osc_umr_zcopy) takes
 * it, and the target's layout key is in the origin's cache (osc_umr_key.h);
 * then it is one put or get of the transport between the origin's layout
 * (over its registered region) and the target's key, counted in flight for
 * its target until a synchronisation call completes it (osc_umr_sync.h).
 * Everything else is the wrapped module's call, unchanged, except that on a
 * created window a target range outside the target's window is refused
 * with MPI_ERR_RMA_RANGE first (osc/ucx would write past the window).
 *
 * MPI_Rput/MPI_Rget: the same, with a request of osc/umr's that completes
 * with the operation (local and remote completion at once).
 *
 * An operation that fails after it was posted is redone through the wrapped
 * module by the next synchronisation call, before the wrapped one runs
 * (mca_osc_umr_rma_complete), or, with a request, from progress through the
 * wrapped module's request form: the job never sees the fault.
 */
#ifndef MCA_OSC_UMR_RMA_H_
#define MCA_OSC_UMR_RMA_H_

#include "osc_umr_win.h"

BEGIN_C_DECLS

/* One put/get as the user called it: what zero-copy and packed operations
 * keep to redo it through the wrapped module. */
typedef struct mca_osc_umr_call {
    int                  is_put;
    int                  target;
    void                 *origin_addr;
    umr_ompi_osc_count_t origin_count, target_count;
    ompi_datatype_t      *origin_dt, *target_dt;
    ptrdiff_t            target_disp;
} mca_osc_umr_call_t;

int mca_osc_umr_put(const void *origin_addr, umr_ompi_osc_count_t origin_count,
                    ompi_datatype_t *origin_dt, int target,
                    ptrdiff_t target_disp, umr_ompi_osc_count_t target_count,
                    ompi_datatype_t *target_dt, ompi_win_t *win);
int mca_osc_umr_get(void *origin_addr, umr_ompi_osc_count_t origin_count,
                    ompi_datatype_t *origin_dt, int target,
                    ptrdiff_t target_disp, umr_ompi_osc_count_t target_count,
                    ompi_datatype_t *target_dt, ompi_win_t *win);

int mca_osc_umr_rput(const void *origin_addr, umr_ompi_osc_count_t origin_count,
                     ompi_datatype_t *origin_dt, int target,
                     ptrdiff_t target_disp, umr_ompi_osc_count_t target_count,
                     ompi_datatype_t *target_dt, ompi_win_t *win,
                     ompi_request_t **request);
int mca_osc_umr_rget(void *origin_addr, umr_ompi_osc_count_t origin_count,
                     ompi_datatype_t *origin_dt, int target,
                     ptrdiff_t target_disp, umr_ompi_osc_count_t target_count,
                     ompi_datatype_t *target_dt, ompi_win_t *win,
                     ompi_request_t **request);

/* Wait for the operations in flight to `target` (-1: all), zero-copy and
 * packed, then redo the failed ones through the wrapped module. */
void mca_osc_umr_rma_complete(mca_osc_umr_win_t *w, int target);

END_C_DECLS

#endif
