/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: windows (see osc_umr_win.h).
 */
#include "osc_umr_win.h"
#include "umr_mpi_keys.h"
#include "umr_mpi_rail.h"

#include <ompi/mca/pml/pml.h>

#include <stdlib.h>
#include <string.h>

static opal_hash_table_t mca_osc_umr_wins;     /* ompi_win_t* -> window */
static int               mca_osc_umr_wins_init;
opal_list_t              mca_osc_umr_win_list;
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

/* The per-rank arrays, in one zeroed allocation: the widest first, its
 * start w->kans_spare (freed with it). */
static int mca_osc_umr_win_ranks(mca_osc_umr_win_t *w, size_t n)
{
    size_t per = sizeof(*w->kans_spare) + sizeof(*w->kans_spare_req) +
                 sizeof(*w->inflight) + sizeof(*w->extents) +
                 sizeof(*w->kreq_sent) + sizeof(*w->kreq_answered) +
                 sizeof(*w->kreq_taken) + sizeof(*w->kans_taken) +
                 sizeof(*w->tq_taken) + sizeof(*w->tq_answered) +
                 sizeof(*w->tkey_given) + sizeof(*w->kdesc_broken);
    char *p    = calloc(n, per);

    if (p == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
#define MCA_OSC_UMR_WIN_CARVE(_field) \
    do { \
        w->_field = (void*)p; \
        p        += n * sizeof(*w->_field); \
    } while (0)
    MCA_OSC_UMR_WIN_CARVE(kans_spare);
    MCA_OSC_UMR_WIN_CARVE(kans_spare_req);
    MCA_OSC_UMR_WIN_CARVE(inflight);
    MCA_OSC_UMR_WIN_CARVE(extents);
    MCA_OSC_UMR_WIN_CARVE(kreq_sent);
    MCA_OSC_UMR_WIN_CARVE(kreq_answered);
    MCA_OSC_UMR_WIN_CARVE(kreq_taken);
    MCA_OSC_UMR_WIN_CARVE(kans_taken);
    MCA_OSC_UMR_WIN_CARVE(tq_taken);
    MCA_OSC_UMR_WIN_CARVE(tq_answered);
    MCA_OSC_UMR_WIN_CARVE(tkey_given);
    MCA_OSC_UMR_WIN_CARVE(kdesc_broken);
#undef MCA_OSC_UMR_WIN_CARVE
    return OMPI_SUCCESS;
}

mca_osc_umr_win_t *mca_osc_umr_win_new(ompi_win_t *win, void *base,
                                       size_t size, ptrdiff_t disp_unit,
                                       int dynamic,
                                       ompi_communicator_t *comm)
{
    mca_osc_umr_win_t *w = calloc(1, sizeof(*w));
    int n                = ompi_comm_size(comm);

    if (w == NULL) {
        return NULL;
    }
    umr_mpi_rma_kcache_init(&w->kc);
    OBJ_CONSTRUCT(&w->failed, opal_list_t);
    OBJ_CONSTRUCT(&w->treqs, opal_list_t);
    w->win           = win;
    w->dynamic       = dynamic;
    w->rank          = ompi_comm_rank(comm);
    w->size          = n;
    if ((mca_osc_umr_win_ranks(w, n) != OMPI_SUCCESS) ||
        (umr_mpi_rma_mem_open(&w->mem, base, size, disp_unit, dynamic,
                              1) != 0)) {
        mca_osc_umr_win_destroy(w);
        return NULL;
    }
    return w;
}

/* What each rank tells the others at a window's creation. */
typedef struct mca_osc_umr_win_info {
    mca_osc_umr_extent_t extent;
    umr_mpi_addr_t       addr;
} mca_osc_umr_win_info_t;

int mca_osc_umr_win_extents(mca_osc_umr_win_t *w, ompi_communicator_t *comm)
{
    mca_osc_umr_win_info_t mine, *all;
    umr_mpi_addr_t *addrs;
    int rc, i;

    all   = calloc(w->size, sizeof(*all));
    addrs = calloc(w->size, sizeof(*addrs));
    if ((all == NULL) || (addrs == NULL)) {
        free(all);
        free(addrs);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    memset(&mine, 0, sizeof(mine));
    mine.extent.size      = w->mem.len;
    mine.extent.disp_unit = (int64_t)w->mem.disp_unit;
    mine.addr             = *mca_common_umr_addr_own();
    rc = comm->c_coll->coll_allgather(&mine, sizeof(mine), MPI_BYTE, all,
                                      sizeof(mine), MPI_BYTE, comm,
                                      comm->c_coll->coll_allgather_module);
    if (rc == OMPI_SUCCESS) {
        for (i = 0; i < w->size; ++i) {
            w->extents[i] = all[i].extent;
            addrs[i]      = all[i].addr;
        }
        mca_common_umr_addrs_learn(comm, addrs, w->size);
    }
    free(all);
    free(addrs);
    return rc;
}

void mca_osc_umr_win_destroy(mca_osc_umr_win_t *w)
{
    int i;

    /* spare answers still being sent (their origins take them before the
     * window is freed, osc_umr_key.c's settle) */
    for (i = 0; (w->kans_spare_req != NULL) && (i < w->size); ++i) {
        if (w->kans_spare_req[i] != NULL) {
            ompi_request_wait_completion(w->kans_spare_req[i]);
            ompi_request_free(&w->kans_spare_req[i]);
        }
    }
    umr_mpi_rma_mem_close(&w->mem);
    if ((w->comm != NULL) && !w->comm_kept) {
        ompi_comm_free(&w->comm);
    }
    umr_mpi_rma_kcache_close(&w->kc);
    OBJ_DESTRUCT(&w->failed);
    OBJ_DESTRUCT(&w->treqs);
    free(w->kans_spare);   /* every per-rank array */
    free(w);
}

int mca_osc_umr_win_listen(mca_osc_umr_win_t *w, void *buf, size_t len,
                           int tag, ompi_request_t **req_p)
{
    int rc = MCA_OSC_UMR_PML_CALL(irecv(buf, len, MPI_BYTE, MPI_ANY_SOURCE,
                                        tag, w->comm, req_p));

    if (rc != OMPI_SUCCESS) {
        *req_p = NULL;
    }
    return rc;
}

void mca_osc_umr_win_add(mca_osc_umr_win_t *w)
{
    if (!mca_osc_umr_wins_init) {
        OBJ_CONSTRUCT(&mca_osc_umr_wins, opal_hash_table_t);
        opal_hash_table_init(&mca_osc_umr_wins, 16);
        OBJ_CONSTRUCT(&mca_osc_umr_win_list, opal_list_t);
        mca_osc_umr_wins_init = 1;
    }
    opal_hash_table_set_value_ptr(&mca_osc_umr_wins, &w->win, sizeof(w->win),
                                  w);
    opal_list_append(&mca_osc_umr_win_list, &w->super);
    mca_osc_umr_win_front.win = NULL;
}

void mca_osc_umr_win_remove(mca_osc_umr_win_t *w)
{
    opal_hash_table_remove_value_ptr(&mca_osc_umr_wins, &w->win,
                                     sizeof(w->win));
    opal_list_remove_item(&mca_osc_umr_win_list, &w->super);
    mca_osc_umr_win_front.win = NULL;
}
