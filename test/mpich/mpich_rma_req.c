/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/*
 * mpich_rma_req: several MPI_Rput and MPI_Rget requests outstanding at once
 * in a lock_all epoch on an MPI_Win_create window, each request's meaning
 * checked byte by byte. Plain MPI: the same program with and without
 * libumr_mpich.so.
 *
 * Each rank accesses the next one's window through REQS disjoint vector
 * targets of 4 KiB blocks, from contiguous and vector origins, REPS times
 * with fresh data (a target access's first use goes to MPICH while its key
 * is asked for; the later ones may go zero-copy):
 *  - puts: REQS Rputs, MPI_Waitall, then every origin buffer overwritten
 *    (a completed Rput's buffer is the user's again); flush, unlock_all;
 *    every rank's whole window, gaps included, as MPI_Pack/MPI_Unpack of
 *    the origins' data say (MPICH 4.0.2 refuses MPI_Request_free of its
 *    own one-sided requests: not tried);
 *  - gets: REQS Rgets into buffers of a known pattern; whether each
 *    buffer was still untouched when its MPI_Rget returned is counted
 *    (`pending`); then MPI_Testany until all are done, each buffer
 *    compared as soon as its request completed, before any flush or
 *    unlock (a completed Rget's data is at the origin): `early` counts
 *    those that were not (MPICH 4.0.2 over UCX completes a noncontiguous
 *    Rget's request before its data arrives, pmodels/mpich#7896); after
 *    unlock_all every buffer, guards included, is checked.
 *
 *     mpiexec -n N ./mpich_rma_req [-n reps]
 * Prints "FAIL ..." per wrong check and, per rank, "mpich_rma_req: rank R:
 * checks C rputs P rgets G pending K early E failures F"; exit status 0
 * only when F is 0.
 */
#include "mpich_bytes.h"

#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WIN_INTS  (1 << 16)   /* 256 KiB windows */
#define REQS      4           /* requests outstanding at once */
#define BLOCK     1024        /* ints: 4 KiB target blocks */
#define NBLOCKS   8
#define STRIDE    (BLOCK + 256)
#define REGION    (NBLOCKS * STRIDE)
#define ELEMS     (NBLOCKS * BLOCK)
#define GUARD     64

static int rank, size, failures, checks;

static void compare(const char *what, const uint8_t *got, const uint8_t *exp,
                    size_t len)
{
    ++checks;
    failures += compare_bytes(what, rank, got, exp, len);
}

/* What get `k` from `target` must leave in its buffer (guards included) */
static void expected(int k, int target, uint8_t **mirror, MPI_Datatype ttype,
                     const MPI_Datatype *otype, const MPI_Aint *olen,
                     uint8_t *expect)
{
    memset(expect, 0x5a, olen[k]);
    copy_by_types(mirror[target] + (size_t)k * REGION * sizeof(int), ttype,
                  expect + GUARD, otype[k]);
}

static int untouched(const uint8_t *buf, size_t len, uint8_t pattern)
{
    size_t i;

    for (i = 0; i < len; ++i) {
        if (buf[i] != pattern) {
            return 0;
        }
    }
    return 1;
}

int main(int argc, char **argv)
{
    int reps = 3, rep, opt, k, i, idx, target, from, rputs = 0, rgets = 0;
    int pending = 0, early = 0;
    uint8_t **mirror, *win_mem, *obuf[REQS], *expect;
    MPI_Datatype ttype, otype[REQS];
    MPI_Aint lb, extent, olen[REQS];
    MPI_Request req[REQS];
    MPI_Win win;
    char what[128];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((opt = getopt(argc, argv, "n:")) != -1) {
        if (opt == 'n') {
            reps = atoi(optarg);
        }
    }
    target = (rank + 1) % size;
    from   = (rank + size - 1) % size;
    MPI_Type_vector(NBLOCKS, BLOCK, STRIDE, MPI_INT, &ttype);
    MPI_Type_commit(&ttype);
    for (k = 0; k < REQS; ++k) {
        if (k % 2) {
            MPI_Type_vector(ELEMS / 512, 512, 600, MPI_INT, &otype[k]);
        } else {
            MPI_Type_contiguous(ELEMS, MPI_INT, &otype[k]);
        }
        MPI_Type_commit(&otype[k]);
        MPI_Type_get_true_extent(otype[k], &lb, &extent);
        olen[k] = lb + extent + 2 * GUARD;
        obuf[k] = malloc(olen[k]);
    }
    expect = malloc(olen[1]);   /* the vector origin's: the largest */
    mirror = mirror_window(rank, size, WIN_INTS * sizeof(int), &win_mem,
                           &win);

    for (rep = 0; rep < reps; ++rep) {
        /* ---- puts: Waitall, buffers reused at once ---- */
        MPI_Win_lock_all(0, win);
        for (k = 0; k < REQS; ++k) {
            fill(obuf[k], olen[k], 100 * rep + 10 * k + rank);
            MPI_Rput(obuf[k] + GUARD, 1, otype[k], target, k * REGION, 1,
                     ttype, win, &req[k]);
            ++rputs;
        }
        MPI_Waitall(REQS, req, MPI_STATUSES_IGNORE);
        for (k = 0; k < REQS; ++k) {
            memset(obuf[k], 0xee, olen[k]);
        }
        MPI_Win_flush(target, win);
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        /* what each window must hold: its origin's data, the mirror's */
        for (i = 0; i < size; ++i) {
            int src = (i + size - 1) % size;

            for (k = 0; k < REQS; ++k) {
                uint8_t *data = malloc(olen[k]);

                fill(data, olen[k], 100 * rep + 10 * k + src);
                copy_by_types(data + GUARD, otype[k],
                              mirror[i] + (size_t)k * REGION * sizeof(int),
                              ttype);
                free(data);
            }
        }
        snprintf(what, sizeof(what), "rep %d rputs from %d", rep, from);
        MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
        compare(what, win_mem, mirror[rank], WIN_INTS * sizeof(int));
        MPI_Win_unlock(rank, win);
        MPI_Barrier(MPI_COMM_WORLD);

        /* ---- gets: Testany, each buffer checked as it completes ---- */
        MPI_Win_lock_all(0, win);
        for (k = 0; k < REQS; ++k) {
            memset(obuf[k], 0x5a, olen[k]);
            MPI_Rget(obuf[k] + GUARD, 1, otype[k], target, k * REGION, 1,
                     ttype, win, &req[k]);
            pending += untouched(obuf[k], olen[k], 0x5a);
            ++rgets;
        }
        for (;;) {
            int flag = 0;

            MPI_Testany(REQS, req, &idx, &flag, MPI_STATUS_IGNORE);
            if (flag && (idx == MPI_UNDEFINED)) {
                break;
            } else if (!flag) {
                continue;
            }
            expected(idx, target, mirror, ttype, otype, olen, expect);
            early += (memcmp(obuf[idx], expect, olen[idx]) != 0);
        }
        MPI_Win_unlock_all(win);
        for (k = 0; k < REQS; ++k) {
            expected(k, target, mirror, ttype, otype, olen, expect);
            snprintf(what, sizeof(what), "rep %d rget %d from %d", rep, k,
                     target);
            compare(what, obuf[k], expect, olen[k]);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_free(&win);
    printf("mpich_rma_req: rank %d: checks %d rputs %d rgets %d pending %d "
           "early %d failures %d\n", rank, checks, rputs, rgets, pending,
           early, failures);
    for (k = 0; k < REQS; ++k) {
        free(obuf[k]);
        MPI_Type_free(&otype[k]);
    }
    MPI_Type_free(&ttype);
    free(expect);
    mirror_free(mirror, size, win_mem);
    MPI_Finalize();
    return failures ? 1 : 0;
}
