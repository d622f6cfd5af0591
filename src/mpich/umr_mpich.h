/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: the mlx5_umr binding for MPICH-family MPIs (MPICH,
 * MVAPICH, Intel MPI: the MPICH ABI, libmpi.so.12), a PMPI library.
 *
 * Used by preloading it (mpiexec -genv LD_PRELOAD PREFIX/lib/libumr_mpich.so)
 * or by linking it before the MPI library (-lumr_mpich -lmpi). It defines
 * the MPI calls it wraps (umr_mpich_next.h lists them) and hands each call
 * to the next definition in the process (another PMPI tool, or the MPI).
 * It is active in processes that called MPI_Init or MPI_Init_thread below
 * MPI_THREAD_MULTIPLE with UMR_MPICH_ENABLE on and good settings
 * (umr_mpich_config.h); otherwise every call goes through untouched.
 *
 * The MPI calls, one file per family: umr_mpich_init.c (start and end),
 * umr_mpich_send.c, umr_mpich_recv.c, umr_mpich_probe.c,
 * umr_mpich_persist.c (point-to-point), umr_mpich_coll.c (Alltoallw,
 * Neighbor_alltoallw) and umr_mpich_types.c (MPI_Type_free); one-sided
 * calls are MPICH's own. What they share, one object each:
 *   umr_mpich_config.h   the settings (UMR_MPICH_*)
 *   umr_mpich_next.h     the next definition of each MPI call
 *   umr_mpich_core.h     the core's binding: internal messages, progress,
 *                        the addresses, start and end
 *   umr_mpich_hook.c     the binding's progress inside MPICH's (over UCX)
 *   umr_mpich_watch.h    MPI requests the binding waits for
 *   umr_mpich_req.h      a message of the user's the binding carries: the
 *                        core's transfer and a generalized request
 *   umr_mpich_held.h     messages a probe took out of MPICH
 *   umr_mpich_comm.h     what the binding keeps of a communicator
 *   umr_mpich_types.h    datatypes in use by messages in flight
 *   umr_mpich_count.h    the MPI's large-count calls, when it has them
 */
#ifndef UMR_MPICH_H_
#define UMR_MPICH_H_

#include "umr_mpich_config.h"
#include "umr_mpich_next.h"

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>

/* What the binding counts itself (the core counts the zero-copy path). */
typedef struct umr_mpich_counters {
    uint64_t passthrough_sends;   /* sends handed to the MPI untouched */
    uint64_t rma_requests;        /* MPI_Rput/MPI_Rget taken zero-copy */
    uint64_t rma_requests_later;  /* of them, complete after their call
                                     returned (from progress) */
} umr_mpich_counters_t;

typedef struct umr_mpich {
    int                  started;     /* MPI_Init, settings good, enabled,
                                         below MPI_THREAD_MULTIPLE */
    int                  active;      /* and the core runs: 0 -> pass
                                         through */
    int                  p2p;         /* point-to-point messages may go
                                         zero-copy (umr_mpich_core.c) */
    int                  world_rank;
    pthread_t            thread;      /* the one that called MPI_Init */
    umr_mpich_config_t   cfg;
    umr_mpich_counters_t cnt;
} umr_mpich_t;

extern umr_mpich_t umr_mpich;

/* One line to stderr, "umr_mpich: rank N: ..." */
void umr_mpich_line(const char *fmt, ...) UCS_F_PRINTF(1, 2);

#endif
