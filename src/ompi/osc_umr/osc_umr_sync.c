/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: synchronisation (see osc_umr_sync.h).
 */
#include "osc_umr_sync.h"
#include "osc_umr_rma.h"

int mca_osc_umr_fence(int assert, ompi_win_t *win)
{
    mca_osc_umr_win_t *w = mca_osc_umr_win_lookup(win);

    mca_osc_umr_rma_complete(w, -1);
    return w->real.osc_fence(assert, win);
}

int mca_osc_umr_complete(ompi_win_t *win)
{
    mca_osc_umr_win_t *w = mca_osc_umr_win_lookup(win);

    mca_osc_umr_rma_complete(w, -1);
    return w->real.osc_complete(win);
}

int mca_osc_umr_unlock(int target, ompi_win_t *win)
{
    mca_osc_umr_win_t *w = mca_osc_umr_win_lookup(win);

    if ((target >= 0) && (target < w->size)) {
        mca_osc_umr_rma_complete(w, target);
    }
    return w->real.osc_unlock(target, win);
}

int mca_osc_umr_unlock_all(ompi_win_t *win)
{
    mca_osc_umr_win_t *w = mca_osc_umr_win_lookup(win);

    mca_osc_umr_rma_complete(w, -1);
    return w->real.osc_unlock_all(win);
}

int mca_osc_umr_flush(int target, ompi_win_t *win)
{
    mca_osc_umr_win_t *w = mca_osc_umr_win_lookup(win);

    if ((target >= 0) && (target < w->size)) {
        mca_osc_umr_rma_complete(w, target);
    }
    return w->real.osc_flush(target, win);
}

int mca_osc_umr_flush_all(ompi_win_t *win)
{
    mca_osc_umr_win_t *w = mca_osc_umr_win_lookup(win);

    mca_osc_umr_rma_complete(w, -1);
    return w->real.osc_flush_all(win);
}

int mca_osc_umr_flush_local(int target, ompi_win_t *win)
{
    mca_osc_umr_win_t *w = mca_osc_umr_win_lookup(win);

    if ((target >= 0) && (target < w->size)) {
        mca_osc_umr_rma_complete(w, target);
    }
    return w->real.osc_flush_local(target, win);
}

int mca_osc_umr_flush_local_all(ompi_win_t *win)
{
    mca_osc_umr_win_t *w = mca_osc_umr_win_lookup(win);

    mca_osc_umr_rma_complete(w, -1);
    return w->real.osc_flush_local_all(win);
}
