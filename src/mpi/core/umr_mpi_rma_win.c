/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: a window's life (umr_mpi_rma.h): open, its key
 * protocol in progress (one poller for every window), settle and close.
 */
#include "umr_mpi_rma_priv.h"

#include <stdlib.h>
#include <string.h>

static UCS_LIST_HEAD(umr_mpi_rma_wins);

static int umr_mpi_rma_poll(void)
{
    umr_mpi_rma_win_t *w;

    ucs_list_for_each(w, &umr_mpi_rma_wins, list) {
        umr_mpi_rma_tgt_progress(w);
        umr_mpi_rma_keys_progress(w);
        if (w->dynamic) {
            umr_mpi_rma_dyn_progress(w);
        }
    }
    return 0;
}

umr_mpi_rma_win_t *umr_mpi_rma_win_open(const umr_mpi_rma_ops_t *ops,
                                        void *ctx, void *base, size_t len,
                                        ptrdiff_t disp_unit, int dynamic,
                                        int rank, int size, const int *world,
                                        int osc)
{
    umr_mpi_rma_win_t *w = calloc(1, sizeof(*w));

    if (w == NULL) {
        return NULL;
    }
    /* six counts per rank, one allocation */
    w->world = calloc(6 * (size_t)size, sizeof(int));
    if (w->world == NULL) {
        free(w);
        return NULL;
    }
    memcpy(w->world, world, size * sizeof(int));
    w->taken     = w->world + size;
    w->answered  = w->taken + size;
    w->sent      = w->answered + size;
    w->ans_taken = w->sent + size;
    w->inflight  = w->ans_taken + size;
    w->ops       = ops;
    w->ctx       = ctx;
    w->rank      = rank;
    w->size      = size;
    w->osc       = osc;
    w->dynamic   = dynamic;
    umr_mpi_rma_kcache_init(&w->kc);
    (void)umr_mpi_rma_mem_open(&w->mem, base, len, disp_unit, dynamic, 0);
    if (w->dynamic && (umr_mpi_rma_dyn_open(w) != 0)) {
        umr_mpi_rma_kcache_close(&w->kc);
        free(w->world);
        free(w);
        return NULL;
    }
    if (umr_mpi_rma_tgt_post(w) != 0) {
        if (w->dynamic) {
            umr_mpi_rma_dyn_close(w);
        }
        umr_mpi_rma_kcache_close(&w->kc);
        free(w->world);
        free(w);
        return NULL;
    }
    if (ucs_list_is_empty(&umr_mpi_rma_wins)) {
        umr_mpi_poller_add(umr_mpi_rma_poll);
    }
    ucs_list_add_tail(&umr_mpi_rma_wins, &w->list);
    return w;
}

const int *umr_mpi_rma_sent(const umr_mpi_rma_win_t *w)
{
    return w->sent;
}

const int *umr_mpi_rma_answered(const umr_mpi_rma_win_t *w)
{
    return w->answered;
}

/* Whether `have[i]` reached `want[i]` for every rank. */
static int umr_mpi_rma_reached(const int *have, const int *want, int size)
{
    int i;

    for (i = 0; i < size; ++i) {
        if (have[i] < want[i]) {
            return 0;
        }
    }
    return 1;
}

void umr_mpi_rma_win_settle(umr_mpi_rma_win_t *w, const int *sent_here)
{
    /* a target whose receive could not be posted again takes no more */
    while ((sent_here != NULL) && (w->kreq_rx.req != NULL) &&
           !umr_mpi_rma_reached(w->taken, sent_here, w->size)) {
        umr_mpi.b->progress();
    }
}

void umr_mpi_rma_win_close(umr_mpi_rma_win_t *w, const int *answered_here)
{
    umr_mpi_rma_wait(w, -1);
    while ((answered_here != NULL) &&
           !umr_mpi_rma_reached(w->ans_taken, answered_here, w->size)) {
        umr_mpi.b->progress();
    }
    w->closing = 1;
    if (w->dynamic) {
        umr_mpi_rma_dyn_close(w);
    }
    umr_mpi_rma_tgt_close(w);
    umr_mpi_rma_keys_close(w);
    ucs_list_del(&w->list);
    if (ucs_list_is_empty(&umr_mpi_rma_wins)) {
        umr_mpi_poller_remove(umr_mpi_rma_poll);
    }
    free(w->world);
    free(w);
}
