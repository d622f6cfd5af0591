/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: what the binding keeps of a window (MPI_Win_create,
 * MPI_Win_allocate, MPI_Win_create_dynamic): the core's window (umr_mpi_rma.h) over a private
 * duplicate of the window's communicator (its key requests and answers,
 * one tag each: no user message is there), and the operations that failed
 * in flight, done again through MPICH before the epoch ends. A window is
 * the binding's when every rank of its communicator runs the core
 * (published its address) and every one could set it up (one allreduce);
 * otherwise every operation on it is MPICH's.
 */
#ifndef UMR_MPICH_WIN_H_
#define UMR_MPICH_WIN_H_

#include "umr_mpi_rma.h"

#include <mpi.h>
#include <ucs/datastruct/list.h>

typedef struct umr_mpich_win {
    MPI_Win           win;
    MPI_Comm          comm;       /* the private duplicate */
    umr_mpi_rma_win_t *core;
    ucs_list_link_t   redo;       /* umr_mpich_rma_op_t that failed */
} umr_mpich_win_t;

/* The binding's window `win`, or NULL (MPICH's alone). */
umr_mpich_win_t *umr_mpich_win_find(MPI_Win win);

/* The zero-copy operations of `uw` to `target` (-1: all) are complete
 * (their requests too): those that failed done again through MPICH. Before
 * every call that ends an epoch or a flush. */
void umr_mpich_win_complete(umr_mpich_win_t *uw, int target);

/* MPI_Finalize: the windows still open are closed, each rank's alone. */
void umr_mpich_wins_stop(void);

/* A failed operation waits there for umr_mpich_win_complete. */
void umr_mpich_win_redo_add(umr_mpich_win_t *uw, ucs_list_link_t *op);
/* Do one again through MPICH, off the redo list (umr_mpich_rma.c); an
 * Rput/Rget's request complete after it. */
void umr_mpich_rma_redo(ucs_list_link_t *op);

#endif
