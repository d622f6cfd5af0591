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
 * One file per family of calls: umr_mpich_init.c (start and end),
 * umr_mpich_send.c, umr_mpich_recv.c, umr_mpich_probe.c,
 * umr_mpich_persist.c (point-to-point), umr_mpich_rma.c (one-sided),
 * umr_mpich_coll.c (Alltoallw, Neighbor_alltoallw).
 */
#ifndef UMR_MPICH_H_
#define UMR_MPICH_H_

#include "umr_mpich_config.h"
#include "umr_mpich_next.h"

#include <mpi.h>
#include <stdint.h>

/* What the binding counts itself (the core counts the zero-copy path). */
typedef struct umr_mpich_counters {
    uint64_t passthrough_sends;   /* sends handed to the MPI untouched */
} umr_mpich_counters_t;

typedef struct umr_mpich {
    int                  active;      /* see above: 0 -> pass through */
    int                  world_rank;
    umr_mpich_config_t   cfg;
    umr_mpich_counters_t cnt;
} umr_mpich_t;

extern umr_mpich_t umr_mpich;

/* One line to stderr, "umr_mpich: rank N: ..." */
void umr_mpich_line(const char *fmt, ...) UCS_F_PRINTF(1, 2);

#endif
