/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: what the files of the one-sided part share
 * (umr_mpi_rma.h): the origin's keys (umr_mpi_rma_key.c), the target's
 * answers (umr_mpi_rma_tgt.c), the window (umr_mpi_rma_win.c) and the
 * operations (umr_mpi_rma_op.c).
 */
#ifndef UMR_MPI_RMA_PRIV_H_
#define UMR_MPI_RMA_PRIV_H_

#include "umr_mpi_rma.h"

/* Post `rx` (kind, from `rank` or UMR_MPI_RMA_ANY, into `buf`): 0 or -1;
 * whether it completed, taken now (then nothing is posted any more). */
int umr_mpi_rma_rx_post(umr_mpi_rma_win_t *w, umr_mpi_rma_rx_t *rx,
                        int rank, int kind, void *buf, size_t len);
int umr_mpi_rma_rx_take(umr_mpi_rma_rx_t *rx);
/* Cancel `rx` if posted, and progress until `take` (the progress of its
 * owner) took its completion. */
void umr_mpi_rma_rx_cancel(umr_mpi_rma_win_t *w, umr_mpi_rma_rx_t *rx,
                           void (*take)(umr_mpi_rma_win_t *w));

/* A message of `len` bytes of `data` to `rank` of the window, sent from a
 * copy: 0, or -1 (not sent). */
int umr_mpi_rma_send_copy(umr_mpi_rma_win_t *w, int rank, int kind,
                          const void *data, size_t len);

/* Origin: the ready key of this access, or NULL (asked for now when never
 * seen; pending; refused); answers taken; the window's keys freed (the
 * answers still on the way cancelled and awaited). */
umr_mpi_rma_key_t *umr_mpi_rma_key_get(umr_mpi_rma_win_t *w,
                                       umr_mpi_peer_t *peer, int target,
                                       int64_t disp, const umr_layout_t *layout,
                                       size_t count);
void umr_mpi_rma_keys_progress(umr_mpi_rma_win_t *w);
void umr_mpi_rma_keys_close(umr_mpi_rma_win_t *w);

/* Dynamic windows: the receive of invalidations posted / taken from
 * progress / cancelled; origin: every key of `target` dropped. */
int  umr_mpi_rma_dyn_open(umr_mpi_rma_win_t *w);
void umr_mpi_rma_dyn_progress(umr_mpi_rma_win_t *w);
void umr_mpi_rma_dyn_close(umr_mpi_rma_win_t *w);
void umr_mpi_rma_keys_drop(umr_mpi_rma_win_t *w, int target);

/* Target: post the receive of requests; answer the one that arrived and
 * post again; the keys given go back. */
int  umr_mpi_rma_tgt_post(umr_mpi_rma_win_t *w);
void umr_mpi_rma_tgt_progress(umr_mpi_rma_win_t *w);
void umr_mpi_rma_tgt_close(umr_mpi_rma_win_t *w);

#endif
