/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Shared by the MPI benchmark programs: BM_FAIL ends the job with a message
 * naming the program (BM_PROG, defined before this header) and the rank;
 * BM_MPI checks an MPI call and fails with MPI's own error string.
 */
#ifndef BENCH_MPI_H_
#define BENCH_MPI_H_

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

static int bm_rank;

#define BM_FAIL(_fmt, ...) \
    do { \
        fprintf(stderr, BM_PROG "[rank %d]: " _fmt "\n", bm_rank, \
                ## __VA_ARGS__); \
        MPI_Abort(MPI_COMM_WORLD, 1); \
        exit(1); \
    } while (0)

#define BM_MPI(_call) \
    do { \
        int __rc = (_call), __len; \
        char __msg[MPI_MAX_ERROR_STRING]; \
        if (__rc != MPI_SUCCESS) { \
            MPI_Error_string(__rc, __msg, &__len); \
            BM_FAIL("%s failed: %s", #_call, __msg); \
        } \
    } while (0)

#endif
