/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: osc/umr in front of a window's module (see osc_umr_module.h).
 */
#include "osc_umr_module.h"
#include "osc_umr_dyn.h"
#include "osc_umr_key.h"
#include "osc_umr_packed.h"
#include "osc_umr_rma.h"
#include "osc_umr_redo.h"
#include "osc_umr_sync.h"
#include "osc_umr_win.h"

#include "umr_mpi_choice.h"
#include "umr_mpi_progress.h"

/* The core's progress runs this while a wrapped window exists (the
 * transport's completions are the core's). */
int mca_osc_umr_progress(void)
{
    static int busy;   /* the wrapped module may progress from our calls */
    mca_osc_umr_win_t *w;

    if (busy) {
        return 0;
    }
    busy = 1;
    OPAL_LIST_FOREACH(w, &mca_osc_umr_win_list, mca_osc_umr_win_t) {
        if (!opal_list_is_empty(&w->failed)) {
            mca_osc_umr_redo_progress(w);
        }
        mca_osc_umr_keys_progress(w);
        mca_osc_umr_packed_progress(w);
    }
    busy = 0;
    return 0;
}

/* The core's rails: pml/umr's when it opened them, else opened here
 * (pml/umr not there, or passing everything through), once. */
static int mca_osc_umr_module_core(void)
{
    static int tried;

    if (umr_mpi_rails_up()) {
        mca_common_umr_verbose(mca_osc_umr.verbose);
        return 1;
    }
    if (!tried) {
        tried = 1;
        /* the rails' parameters: pml/umr's went with it when it closed
         * (selected out, or disabled), so they are osc/umr's now */
        mca_common_umr_params_register(mca_osc_umr.self);
        /* (the UCT module beside this component's file) */
        if (mca_common_umr_open("osc_umr", mca_osc_umr.output,
                                mca_osc_umr.verbose,
                                (const void*)mca_osc_umr_progress, NULL,
                                0) == OMPI_SUCCESS) {
            mca_osc_umr.opened = 1;
        }
    }
    return umr_mpi_rails_up();
}

/* Whether this process can put osc/umr in front of this window. */
static int mca_osc_umr_module_eligible(ompi_communicator_t *comm, int flavor)
{
    if (mca_osc_umr.zcopy_mode == MCA_OSC_UMR_ZCOPY_OFF) {
        MCA_OSC_UMR_VERBOSE(10, "osc_umr_zcopy=off: window left as it is");
        return 0;
    }
    if ((flavor != MPI_WIN_FLAVOR_CREATE) &&
        (flavor != MPI_WIN_FLAVOR_DYNAMIC)) {
        MCA_OSC_UMR_VERBOSE(10, "window flavor %d: left as it is", flavor);
        return 0;
    }
    if (OMPI_COMM_IS_INTER(comm)) {
        return 0;
    }
    if (!mca_osc_umr_module_core()) {
        MCA_OSC_UMR_VERBOSE(5, "no mlx5_umr rail open: window left as it "
                            "is");
        return 0;
    }
    return 1;
}

static void mca_osc_umr_module_patch(ompi_osc_base_module_t *m, int dynamic)
{
    if (dynamic) {
        m->osc_win_attach  = mca_osc_umr_attach;
        m->osc_win_detach  = mca_osc_umr_detach;
    }
    m->osc_put             = mca_osc_umr_put;
    m->osc_get             = mca_osc_umr_get;
    m->osc_rput            = mca_osc_umr_rput;
    m->osc_rget            = mca_osc_umr_rget;
    m->osc_fence           = mca_osc_umr_fence;
    m->osc_complete        = mca_osc_umr_complete;
    m->osc_unlock          = mca_osc_umr_unlock;
    m->osc_unlock_all      = mca_osc_umr_unlock_all;
    m->osc_flush           = mca_osc_umr_flush;
    m->osc_flush_all       = mca_osc_umr_flush_all;
    m->osc_flush_local     = mca_osc_umr_flush_local;
    m->osc_flush_local_all = mca_osc_umr_flush_local_all;
    m->osc_free            = mca_osc_umr_free;
}

int mca_osc_umr_module_wrap(ompi_win_t *win, void *base, size_t size,
                            ptrdiff_t disp_unit, ompi_communicator_t *comm,
                            int flavor, const char *osc_name)
{
    int ok = mca_osc_umr_module_eligible(comm, flavor);
    int all_ok = 0, rc;
    mca_osc_umr_win_t *w = NULL;

    if (ok) {
        w  = mca_osc_umr_win_new(win, base, size, disp_unit,
                                 flavor == MPI_WIN_FLAVOR_DYNAMIC, comm);
        ok = (w != NULL);
        if (ok) {
            w->osc_costs = umr_mpi_choice_osc(osc_name,
                                              mca_osc_umr.sw_max_block,
                                              mca_osc_umr.packed_mode !=
                                              MCA_OSC_UMR_PACKED_OFF,
                                              mca_osc_umr.packed_max_block);
        }
    }
    /* all ranks wrap, or none: the key protocol needs both ends */
    rc = comm->c_coll->coll_allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm,
                                      comm->c_coll->coll_allreduce_module);
    if ((rc != OMPI_SUCCESS) || !all_ok) {
        goto plain;
    }
    if (ompi_comm_dup(comm, &w->comm) != OMPI_SUCCESS) {
        w->comm = NULL;
        goto plain;   /* collective: every rank fails the same way */
    }
    /* every rank's address (its peers may not know it: no modex without
     * pml/umr) and, for created windows, its size and displacement unit,
     * for the range check of each put/get (osc_umr_rma.c) */
    ok = (mca_osc_umr_win_extents(w, comm) == OMPI_SUCCESS) &&
         (mca_osc_umr_keys_init(w) == OMPI_SUCCESS);
    if (ok && (mca_osc_umr.packed_mode != MCA_OSC_UMR_PACKED_OFF) &&
        (mca_osc_umr_packed_init(w) != OMPI_SUCCESS)) {
        /* no packed path on this window: the key protocol's answers give
         * no destination (every origin then finds none) */
        MCA_OSC_UMR_VERBOSE(5, "window %p: no packed path", (void*)win);
    }
    rc = comm->c_coll->coll_allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm,
                                      comm->c_coll->coll_allreduce_module);
    if ((rc != OMPI_SUCCESS) || !all_ok) {
        if (ok) {
            mca_osc_umr_packed_fini(w);
            mca_osc_umr_keys_fini(w, 0);
        }
        goto plain;
    }

    mca_osc_umr_win_add(w);
    w->real = *win->w_osc_module;
    mca_osc_umr_module_patch(win->w_osc_module, w->dynamic);
    if (mca_osc_umr.nwins++ == 0) {
        umr_mpi_poller_add(mca_osc_umr_progress);
    }
    ++mca_osc_umr.cnt.windows_wrapped;
    MCA_OSC_UMR_VERBOSE(10, "window %p (%zu bytes at %p) wrapped", (void*)win,
                        size, base);
    return OMPI_SUCCESS;

plain:
    ++mca_osc_umr.cnt.windows_plain;
    if (w != NULL) {
        mca_osc_umr_win_destroy(w);
    }
    return OMPI_SUCCESS;
}

/* Undo the wrapping and release everything (collective: settles the key
 * protocol); the caller then frees the window with the wrapped free. */
static void mca_osc_umr_module_release(mca_osc_umr_win_t *w)
{
    ompi_win_t *win = w->win;

    mca_osc_umr_keys_fini(w, 1);
    mca_osc_umr_packed_fini(w);
    *win->w_osc_module = w->real;
    mca_osc_umr_win_remove(w);
    if (--mca_osc_umr.nwins == 0) {
        umr_mpi_poller_remove(mca_osc_umr_progress);
    }
    mca_osc_umr_win_destroy(w);
}

int mca_osc_umr_free(ompi_win_t *win)
{
    mca_osc_umr_win_t *w = mca_osc_umr_win_lookup(win);
    ompi_osc_base_module_free_fn_t real_free = w->real.osc_free;

    mca_osc_umr_rma_complete(w, -1);
    mca_osc_umr_module_release(w);
    return real_free(win);
}
