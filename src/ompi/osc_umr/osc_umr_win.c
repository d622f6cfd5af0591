/**
 * osc/umr: windows (see osc_umr_win.h).
 */
#include "osc_umr_win.h"
#include "osc_umr_key.h"
#include "osc_umr_rma.h"
#include "osc_umr_sync.h"
#include "common_umr.h"
#include "common_umr_rail.h"

#include <ompi/mca/pml/pml.h>
#include <opal/runtime/opal_progress.h>

#include <stdlib.h>
#include <string.h>

static opal_hash_table_t mca_osc_umr_wins;     /* ompi_win_t* -> window */
static int               mca_osc_umr_wins_init;
static opal_list_t       mca_osc_umr_win_list;
static struct {
    ompi_win_t        *win;
    mca_osc_umr_win_t *w;
} mca_osc_umr_win_front;

mca_osc_umr_win_t *mca_osc_umr_win_lookup(ompi_win_t *win)
{
    mca_osc_umr_win_t *w = NULL;

    if (OPAL_LIKELY(mca_osc_umr_win_front.win == win)) {
        return mca_osc_umr_win_front.w;
    }
    (void)opal_hash_table_get_value_ptr(&mca_osc_umr_wins, &win, sizeof(win),
                                        (void**)&w);
    mca_osc_umr_win_front.win = win;
    mca_osc_umr_win_front.w   = w;
    return w;
}

int mca_osc_umr_progress(void)
{
    static int busy;   /* the wrapped module may progress from our calls */
    mca_osc_umr_win_t *w;
    int count = 0;

    if (busy) {
        return 0;
    }
    busy = 1;
    OPAL_LIST_FOREACH(w, &mca_osc_umr_win_list, mca_osc_umr_win_t) {
        if (w->inflight_total > 0) {
            count += uct_worker_progress(mca_common_umr_rails.worker);
        }
        if (!opal_list_is_empty(&w->failed)) {
            mca_osc_umr_rma_progress(w);
        }
        mca_osc_umr_keys_progress(w);
    }
    busy = 0;
    return count;
}

/* Whether this process can put osc/umr in front of this window. */
static int mca_osc_umr_win_eligible(void *base, size_t size,
                                    ompi_communicator_t *comm, int flavor)
{
    if (mca_osc_umr_component.zcopy_mode == MCA_OSC_UMR_ZCOPY_OFF) {
        MCA_OSC_UMR_VERBOSE(10, "osc_umr_zcopy=off: window left as it is");
        return 0;
    }
    if (flavor != MPI_WIN_FLAVOR_CREATE) {
        MCA_OSC_UMR_VERBOSE(10, "window flavor %d: left as it is", flavor);
        return 0;
    }
    if (OMPI_COMM_IS_INTER(comm)) {
        return 0;
    }
    if ((mca_common_umr_rails.nrails == 0) ||
        (mca_common_umr_rails.worker == NULL)) {
        MCA_OSC_UMR_VERBOSE(5, "no mlx5_umr rail open (pml/umr is not "
                            "interposed): window left as it is");
        return 0;
    }
    return 1;
}

static void mca_osc_umr_win_patch(ompi_osc_base_module_t *m)
{
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

/* Register the window memory on every rail (held until the window goes). */
static int mca_osc_umr_win_register(mca_osc_umr_win_t *w)
{
    int i;

    if (w->len == 0) {
        return OMPI_SUCCESS;
    }
    for (i = 0; i < mca_common_umr_rails.nrails; ++i) {
        if (mca_common_umr_region_get(&mca_common_umr_rails.rails[i], w->base,
                                      w->len, &w->regions[i]) != OMPI_SUCCESS) {
            w->regions[i] = NULL;
            return OMPI_ERROR;
        }
    }
    return OMPI_SUCCESS;
}

static void mca_osc_umr_win_destroy(mca_osc_umr_win_t *w)
{
    int i;

    for (i = 0; i < MCA_COMMON_UMR_MAX_RAILS; ++i) {
        if (w->regions[i] != NULL) {
            mca_common_umr_region_put(w->regions[i]);
        }
    }
    if (w->comm != NULL) {
        ompi_comm_free(&w->comm);
    }
    OBJ_DESTRUCT(&w->pending);
    OBJ_DESTRUCT(&w->failed);
    OBJ_DESTRUCT(&w->keys);
    free(w->kreq_sent);
    free(w->kreq_answered);
    free(w->inflight);
    free(w->tkeys);
    free(w);
}

int mca_osc_umr_win_wrap(ompi_win_t *win, void *base, size_t size,
                         ptrdiff_t disp_unit, ompi_communicator_t *comm,
                         int flavor)
{
    int ok = mca_osc_umr_win_eligible(base, size, comm, flavor);
    int all_ok = 0, rc, n = ompi_comm_size(comm);
    mca_osc_umr_win_t *w = NULL;

    if (ok) {
        w = calloc(1, sizeof(*w));
        ok = (w != NULL);
    }
    if (ok) {
        OBJ_CONSTRUCT(&w->keys, opal_hash_table_t);
        OBJ_CONSTRUCT(&w->pending, opal_list_t);
        OBJ_CONSTRUCT(&w->failed, opal_list_t);
        opal_hash_table_init(&w->keys, 256);
        w->win           = win;
        w->base          = base;
        w->len           = size;
        w->disp_unit     = disp_unit;
        w->rank          = ompi_comm_rank(comm);
        w->size          = n;
        w->kreq_sent     = calloc(n, sizeof(int));
        w->kreq_answered = calloc(n, sizeof(int));
        w->inflight      = calloc(n, sizeof(uint64_t));
        ok = (w->kreq_sent != NULL) && (w->kreq_answered != NULL) &&
             (w->inflight != NULL) &&
             (mca_osc_umr_win_register(w) == OMPI_SUCCESS);
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
    ok = (mca_osc_umr_keys_init(w) == OMPI_SUCCESS);
    rc = comm->c_coll->coll_allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm,
                                      comm->c_coll->coll_allreduce_module);
    if ((rc != OMPI_SUCCESS) || !all_ok) {
        if (ok) {
            mca_osc_umr_keys_fini(w, 0);
        }
        goto plain;
    }

    if (!mca_osc_umr_wins_init) {
        OBJ_CONSTRUCT(&mca_osc_umr_wins, opal_hash_table_t);
        opal_hash_table_init(&mca_osc_umr_wins, 16);
        OBJ_CONSTRUCT(&mca_osc_umr_win_list, opal_list_t);
        mca_osc_umr_wins_init = 1;
    }
    opal_hash_table_set_value_ptr(&mca_osc_umr_wins, &win, sizeof(win), w);
    opal_list_append(&mca_osc_umr_win_list, &w->super);
    mca_osc_umr_win_front.win = NULL;
    w->real = *win->w_osc_module;
    mca_osc_umr_win_patch(win->w_osc_module);
    if (mca_osc_umr_component.nwins++ == 0) {
        opal_progress_register(mca_osc_umr_progress);
    }
    ++mca_osc_umr_component.cnt.windows_wrapped;
    MCA_OSC_UMR_VERBOSE(10, "window %p (%zu bytes at %p) wrapped", (void*)win,
                        size, base);
    return OMPI_SUCCESS;

plain:
    ++mca_osc_umr_component.cnt.windows_plain;
    if (w != NULL) {
        mca_osc_umr_win_destroy(w);
    }
    return OMPI_SUCCESS;
}

void mca_osc_umr_win_release(mca_osc_umr_win_t *w)
{
    ompi_win_t *win = w->win;

    mca_osc_umr_keys_fini(w, 1);
    /* the module is freed by the caller through its own free */
    *win->w_osc_module = w->real;
    opal_hash_table_remove_value_ptr(&mca_osc_umr_wins, &win, sizeof(win));
    opal_list_remove_item(&mca_osc_umr_win_list, &w->super);
    mca_osc_umr_win_front.win = NULL;
    if (--mca_osc_umr_component.nwins == 0) {
        opal_progress_unregister(mca_osc_umr_progress);
    }
    mca_osc_umr_win_destroy(w);
}
