/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: windows (see osc_umr_win.h).
 */
#include "osc_umr_win.h"
#include "common_umr_keys.h"
#include "common_umr_rail.h"

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

/* Register the window memory on every rail (held until the window goes). */
static int mca_osc_umr_win_register(mca_osc_umr_win_t *w)
{
    int i;

    if (w->len == 0) {
        return OMPI_SUCCESS;
    }
    for (i = 0; i < mca_common_umr_rails.nrails; ++i) {
        if (mca_common_umr_region_get(&mca_common_umr_rails.rails[i], w->base,
                                      w->len, PROT_READ | PROT_WRITE,
                                      &w->regions[i], NULL) != OMPI_SUCCESS) {
            w->regions[i] = NULL;
            return OMPI_ERROR;
        }
    }
    return OMPI_SUCCESS;
}

mca_osc_umr_win_t *mca_osc_umr_win_new(ompi_win_t *win, void *base,
                                       size_t size, ptrdiff_t disp_unit,
                                       ompi_communicator_t *comm)
{
    mca_osc_umr_win_t *w = calloc(1, sizeof(*w));
    int n                = ompi_comm_size(comm);

    if (w == NULL) {
        return NULL;
    }
    OBJ_CONSTRUCT(&w->keys, opal_hash_table_t);
    OBJ_CONSTRUCT(&w->pending, opal_list_t);
    OBJ_CONSTRUCT(&w->failed, opal_list_t);
    OBJ_CONSTRUCT(&w->stale, opal_list_t);
    OBJ_CONSTRUCT(&w->treqs, opal_list_t);
    opal_hash_table_init(&w->keys, 256);
    w->win           = win;
    w->base          = base;
    w->len           = size;
    w->disp_unit     = disp_unit;
    w->rank          = ompi_comm_rank(comm);
    w->size          = n;
    w->kreq_sent     = calloc(n, sizeof(int));
    w->kreq_answered = calloc(n, sizeof(int));
    w->kreq_taken    = calloc(n, sizeof(int));
    w->kans_taken    = calloc(n, sizeof(int));
    w->choice        = malloc(n * sizeof(int8_t));
    w->kans_spare    = calloc(n, sizeof(*w->kans_spare));
    w->kans_spare_req = calloc(n, sizeof(*w->kans_spare_req));
    w->inflight      = calloc(n, sizeof(uint64_t));
    w->tkey_given    = calloc(n, sizeof(uint8_t));
    w->extents       = calloc(n, sizeof(*w->extents));
    w->tq_taken      = calloc(n, sizeof(uint32_t));
    w->tq_answered   = calloc(n, sizeof(uint32_t));
    w->kdesc_broken  = calloc(n, sizeof(uint8_t));
    if ((w->kreq_sent == NULL) || (w->kreq_answered == NULL) ||
        (w->kreq_taken == NULL) || (w->kans_taken == NULL) ||
        (w->choice == NULL) ||
        (w->kans_spare == NULL) || (w->kans_spare_req == NULL) ||
        (w->inflight == NULL) || (w->tkey_given == NULL) ||
        (w->extents == NULL) || (w->tq_taken == NULL) ||
        (w->tq_answered == NULL) || (w->kdesc_broken == NULL) ||
        (mca_osc_umr_win_register(w) != OMPI_SUCCESS)) {
        mca_osc_umr_win_destroy(w);
        return NULL;
    }
    memset(w->choice, -1, n * sizeof(int8_t));
    return w;
}

int mca_osc_umr_win_extents(mca_osc_umr_win_t *w, ompi_communicator_t *comm)
{
    mca_osc_umr_extent_t mine = {
        .size = w->len, .disp_unit = (int64_t)w->disp_unit
    };

    return comm->c_coll->coll_allgather(&mine, 2, MPI_UINT64_T, w->extents,
                                        2, MPI_UINT64_T, comm,
                                        comm->c_coll->coll_allgather_module);
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
    for (i = 0; i < MCA_COMMON_UMR_MAX_RAILS; ++i) {
        if (w->regions[i] != NULL) {
            mca_common_umr_region_put(w->regions[i]);
        }
    }
    if ((w->comm != NULL) && !w->comm_kept) {
        ompi_comm_free(&w->comm);
    }
    OBJ_DESTRUCT(&w->pending);
    OBJ_DESTRUCT(&w->failed);
    OBJ_DESTRUCT(&w->stale);
    OBJ_DESTRUCT(&w->treqs);
    OBJ_DESTRUCT(&w->keys);
    free(w->kreq_sent);
    free(w->kreq_answered);
    free(w->kreq_taken);
    free(w->kans_taken);
    free(w->choice);
    free(w->kans_spare);
    free(w->kans_spare_req);
    free(w->inflight);
    free(w->tkeys);
    free(w->tkey_given);
    free(w->extents);
    free(w->tq_taken);
    free(w->tq_answered);
    free(w->kdesc_broken);
    free(w->att);
    free(w);
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
