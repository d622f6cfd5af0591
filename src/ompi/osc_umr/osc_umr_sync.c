/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: synchronisation (see osc_umr_sync.h).
 */
#include "osc_umr_sync.h"
#include "osc_umr_rma.h"

#include <limits.h>

#define MCA_OSC_UMR_SYNC_ALL INT_MIN   /* no rank, not even a bad one */

/* The window of `win`, osc/umr's operations to `target` (a rank of the
 * window; MCA_OSC_UMR_SYNC_ALL: every one) completed: the wrapped call
 * comes next. A rank outside the window is the wrapped module's error. */
static mca_osc_umr_win_t *mca_osc_umr_synced(ompi_win_t *win, int target)
{
    mca_osc_umr_win_t *w = mca_osc_umr_win_lookup(win);

    if (target == MCA_OSC_UMR_SYNC_ALL) {
        mca_osc_umr_rma_complete(w, -1);
    } else if ((target >= 0) && (target < w->size)) {
        mca_osc_umr_rma_complete(w, target);
    }
    return w;
}

int mca_osc_umr_fence(int assert, ompi_win_t *win)
{
    return mca_osc_umr_synced(win, MCA_OSC_UMR_SYNC_ALL)->real.osc_fence(
                                                            assert, win);
}

int mca_osc_umr_complete(ompi_win_t *win)
{
    return mca_osc_umr_synced(win, MCA_OSC_UMR_SYNC_ALL)->real.osc_complete(
                                                            win);
}

int mca_osc_umr_unlock(int target, ompi_win_t *win)
{
    return mca_osc_umr_synced(win, target)->real.osc_unlock(target, win);
}

int mca_osc_umr_unlock_all(ompi_win_t *win)
{
    return mca_osc_umr_synced(win, MCA_OSC_UMR_SYNC_ALL)->real.osc_unlock_all(
                                                            win);
}

int mca_osc_umr_flush(int target, ompi_win_t *win)
{
    return mca_osc_umr_synced(win, target)->real.osc_flush(target, win);
}

int mca_osc_umr_flush_all(ompi_win_t *win)
{
    return mca_osc_umr_synced(win, MCA_OSC_UMR_SYNC_ALL)->real.osc_flush_all(
                                                            win);
}

int mca_osc_umr_flush_local(int target, ompi_win_t *win)
{
    return mca_osc_umr_synced(win, target)->real.osc_flush_local(target, win);
}

int mca_osc_umr_flush_local_all(ompi_win_t *win)
{
    return mca_osc_umr_synced(win, MCA_OSC_UMR_SYNC_ALL)->
           real.osc_flush_local_all(win);
}
