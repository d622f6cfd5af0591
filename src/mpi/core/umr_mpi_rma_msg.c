/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: what every part of the key protocol shares
 * (umr_mpi_rma_priv.h): its counters and test faults, a message sent from a
 * copy, the receive of a kind of message, posted, taken and cancelled. The
 * window's life (umr_mpi_rma_win.c) drives the parts; they only call here.
 */
#include "umr_mpi_rma_priv.h"

#include <stdlib.h>
#include <string.h>
umr_mpi_rma_counters_t umr_mpi_rma_cnt;
#if UMR_TEST_HOOKS
unsigned umr_mpi_rma_faults;
#endif

void umr_mpi_rma_set_faults(unsigned mask)
{
#if UMR_TEST_HOOKS
    umr_mpi_rma_faults = mask;
#endif
}

int umr_mpi_rma_send_copy(umr_mpi_rma_win_t *w, int rank, int kind,
                          const void *data, size_t len)
{
    umr_mpi_copy_t *c = umr_mpi_copy_new(data, len);

    if ((c == NULL) ||
        (w->ops->isend(w->ctx, rank, kind, c->data, len, &c->comp) != 0)) {
        free(c);
        return -1;
    }
    return 0;
}

static void umr_mpi_rma_rx_done(umr_mpi_comp_t *comp,
                                const umr_mpi_status_t *status)
{
    umr_mpi_rma_rx_t *rx = ucs_container_of(comp, umr_mpi_rma_rx_t, comp);

    rx->status  = *status;
    rx->arrived = 1;
}

int umr_mpi_rma_rx_post(umr_mpi_rma_win_t *w, umr_mpi_rma_rx_t *rx,
                        int rank, int kind, void *buf, size_t len)
{
    rx->comp.cb = umr_mpi_rma_rx_done;
    rx->arrived = 0;
    if (w->ops->irecv(w->ctx, rank, kind, buf, len, &rx->comp, &rx->req) !=
        0) {
        rx->req = NULL;
        return -1;
    }
    return 0;
}

int umr_mpi_rma_rx_take(umr_mpi_rma_rx_t *rx)
{
    if (!rx->arrived) {
        return 0;
    }
    rx->arrived = 0;
    rx->req     = NULL;
    return 1;
}

void umr_mpi_rma_rx_cancel(umr_mpi_rma_win_t *w, umr_mpi_rma_rx_t *rx,
                           void (*take)(umr_mpi_rma_win_t *w))
{
    if (rx->req == NULL) {
        return;
    }
    w->ops->cancel(rx->req);
    while (rx->req != NULL) {
        take(w);
        if (rx->req != NULL) {
            umr_mpi.b->progress();
        }
    }
}
