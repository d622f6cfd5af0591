/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: one send of the user's, any mode (umr_mpich_send.c).
 */
#ifndef UMR_MPICH_SEND_H_
#define UMR_MPICH_SEND_H_

#include <mpi.h>

/* `mode` UMR_MPICH_MODE_*; `large`: the MPI-4 large-count call; `req_p`
 * NULL: blocking. */
int umr_mpich_send(const void *buf, MPI_Count count, MPI_Datatype type,
                   int dst, int tag, MPI_Comm comm, int mode, int large,
                   MPI_Request *req_p);

/* The same, when the binding takes the message (1: *rc_p its result, the
 * user's request in *req_p); 0: the caller hands it to the MPI. */
int umr_mpich_send_take(const void *buf, MPI_Count count, MPI_Datatype type,
                        int dst, int tag, MPI_Comm comm, int mode,
                        MPI_Request *req_p, int *rc_p);

#endif
