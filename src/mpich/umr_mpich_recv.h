/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: one receive of the user's (umr_mpich_recv.c).
 */
#ifndef UMR_MPICH_RECV_H_
#define UMR_MPICH_RECV_H_

#include "umr_mpich_held.h"

#include <mpi.h>

/* `large`: the MPI-4 large-count call; `req_p` NULL: blocking, `status`
 * then filled (may be MPI_STATUS_IGNORE). */
int umr_mpich_recv(void *buf, MPI_Count count, MPI_Datatype type, int src,
                   int tag, MPI_Comm comm, int large, MPI_Request *req_p,
                   MPI_Status *status);

/* The same, when the binding takes the receive (1: *rc_p its result);
 * 0: the caller hands it to the MPI. */
int umr_mpich_recv_take(void *buf, MPI_Count count, MPI_Datatype type,
                        int src, int tag, MPI_Comm comm, MPI_Request *req_p,
                        MPI_Status *status, int *rc_p);

/* The receive of the held message `h` (taken out of the list, freed
 * here): blocking or not as above. */
int umr_mpich_recv_held(umr_mpich_held_t *h, void *buf, MPI_Count count,
                        MPI_Datatype type, MPI_Request *req_p,
                        MPI_Status *status);

#endif
