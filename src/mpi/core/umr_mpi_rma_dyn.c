/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: dynamic windows (umr_mpi_rma.h): the memory attached
 * at a target, and the invalidation of an origin's keys when the target
 * detaches memory. A target that detaches tells each origin it gave a key
 * since its last detach (UMR_MPI_RMA_INVAL) and waits for each one's
 * acknowledgement (UMR_MPI_RMA_IACK), which the origin sends from its
 * progress once it dropped every key it holds for that target, after the
 * answers that came before: no key over detached memory is used after
 * MPI_Win_detach returns. A key still asked for then is refused when
 * answered.
 */
#include "umr_mpi_rma_priv.h"

#include <stdlib.h>
#include <string.h>

int umr_mpi_rma_attach(umr_mpi_rma_win_t *w, void *base, size_t len)
{
    return umr_mpi_rma_mem_attach(&w->mem, base, len);
}

static void umr_mpi_rma_iack_arrived(umr_mpi_comp_t *comp,
                                     const umr_mpi_status_t *status)
{
    umr_mpi_rma_win_t *w = ucs_container_of(comp, umr_mpi_rma_win_t,
                                            iack_comp);

    --w->iacks_wanted;
}

void umr_mpi_rma_detach(umr_mpi_rma_win_t *w, void *base)
{
    uint64_t inval[2] = { (uintptr_t)base, (uint64_t)w->rank };
    int o;

    if (umr_mpi_rma_mem_attached(&w->mem, base) == NULL) {
        return;   /* never recorded: no key over it */
    }
    umr_mpi_rma_mem_detach(&w->mem, base);
    w->iack_comp.cb = umr_mpi_rma_iack_arrived;
    for (o = 0; o < w->size; ++o) {
        if (!w->given[o]) {
            continue;
        }
        w->given[o] = 0;
        if ((w->ops->irecv(w->ctx, o, UMR_MPI_RMA_IACK, &w->inval_buf, 0,
                           &w->iack_comp, NULL) != 0) ||
            (++w->iacks_wanted,
             umr_mpi_rma_send_copy(w, o, UMR_MPI_RMA_INVAL, inval,
                                   sizeof(inval)) != 0)) {
            /* that origin may keep a key over the detached memory: the
             * window's zero-copy ends here, for every rank it can tell */
            UMR_MPI_RMA_VERBOSE(1, "detach: rank %d cannot be told: its "
                                "keys of this window stay", o);
        }
    }
    while (w->iacks_wanted > 0) {
        umr_mpi.b->progress();
    }
}

static int umr_mpi_rma_inval_post(umr_mpi_rma_win_t *w)
{
    return umr_mpi_rma_rx_post(w, &w->inval_rx, UMR_MPI_RMA_ANY,
                               UMR_MPI_RMA_INVAL, w->inval_buf,
                               sizeof(w->inval_buf));
}

int umr_mpi_rma_dyn_open(umr_mpi_rma_win_t *w)
{
    w->given = calloc(w->size, 1);
    if ((w->given == NULL) || (umr_mpi_rma_inval_post(w) != 0)) {
        free(w->given);
        w->given = NULL;
        return -1;
    }
    return 0;
}

void umr_mpi_rma_dyn_progress(umr_mpi_rma_win_t *w)
{
    int src = (int)w->inval_buf[1];

    if (!umr_mpi_rma_rx_take(&w->inval_rx) || w->inval_rx.status.cancelled) {
        return;
    }
    if ((w->inval_rx.status.error == 0) &&
        (w->inval_rx.status.length == sizeof(w->inval_buf)) && (src >= 0) &&
        (src < w->size)) {
        /* the answers that came before it are older than it */
        umr_mpi_rma_keys_progress(w);
        umr_mpi_rma_keys_drop(w, src);
        if (umr_mpi_rma_send_copy(w, src, UMR_MPI_RMA_IACK, w->inval_buf,
                                  0) != 0) {
            UMR_MPI_RMA_VERBOSE(1, "detach of rank %d: cannot answer it",
                                src);
        }
    }
    if (!w->closing && (umr_mpi_rma_inval_post(w) != 0)) {
        UMR_MPI_RMA_VERBOSE(1, "the receive of detaches cannot be posted "
                            "again");
    }
}

void umr_mpi_rma_dyn_close(umr_mpi_rma_win_t *w)
{
    umr_mpi_rma_rx_cancel(w, &w->inval_rx, umr_mpi_rma_dyn_progress);
    free(w->given);
    w->given = NULL;
}
