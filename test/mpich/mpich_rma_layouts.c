/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/*
 * mpich_rma_layouts: MPI_Put, MPI_Get, MPI_Rput and MPI_Rget of seeded
 * random layouts on an MPI_Win_create window, every byte checked. Plain
 * MPI: the same program with and without libumr_mpich.so.
 *
 * Every round draws (the same on every rank, from the seed) a target type
 * (vector, 2D subarray or indexed of ints, blocks of 1-512 ints), an origin
 * type of the same size that differs from it (contiguous, or a vector of
 * its own shape), a displacement that keeps the access in the window, put
 * or get, and the epoch: fence, lock_all + flush + unlock_all, or lock_all
 * + Rput/Rget + MPI_Wait + unlock_all. Each rank accesses the next one's
 * window, three times with fresh data (a target access's first use goes to
 * MPICH while its key is asked for; the later ones may go zero-copy).
 *
 * Each rank keeps what every window must hold (its mirror: the initial
 * bytes, every put unpacked into it with MPI_Pack/MPI_Unpack of the
 * origin's data, which every rank can compute from the seed). After a put
 * each rank compares its whole window, gaps included, with its mirror;
 * after a get the origin compares its whole buffer (64 guard bytes on
 * each side included) with the target's mirror packed by the target type
 * and unpacked by the origin type into the buffer's old contents.
 *
 *     mpiexec -n N ./mpich_rma_layouts [-s seed] [-n rounds]
 * Prints "FAIL ..." per wrong check and, per rank, "mpich_rma_layouts:
 * rank R: checks C puts P gets G failures F"; exit status 0 only when F is 0.
 */
#include "mpich_bytes.h"

#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WIN_INTS (1 << 16)   /* 256 KiB windows */
#define GUARD    64

static int rank, size, failures, checks;

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t x = (rng_state += 0x9e3779b97f4a7c15ull);

    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static int rnd_in(int lo, int hi)   /* [lo, hi] */
{
    return lo + (int)(rnd() % (uint64_t)(hi - lo + 1));
}

/* A target type of ints; *kind_p: its name. */
static MPI_Datatype draw_target(const char **kind_p)
{
    MPI_Datatype t;
    int k = rnd_in(0, 2), n, b, i, sizes[2], subs[2], starts[2];
    int lens[32], disps[32], at = 0;

    if (k == 0) {
        n = rnd_in(2, 64);
        b = rnd_in(1, 512);
        MPI_Type_vector(n, b, b + rnd_in(1, 64), MPI_INT, &t);
        *kind_p = "vector";
    } else if (k == 1) {
        sizes[0] = rnd_in(2, 64);
        sizes[1] = rnd_in(2, 600);
        subs[0]  = rnd_in(1, sizes[0]);
        subs[1]  = rnd_in(1, sizes[1] - 1);
        starts[0] = rnd_in(0, sizes[0] - subs[0]);
        starts[1] = rnd_in(0, sizes[1] - subs[1]);
        MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT,
                                 &t);
        *kind_p = "subarray";
    } else {
        n = rnd_in(2, 32);
        for (i = 0; i < n; ++i) {
            lens[i]  = rnd_in(1, 256);
            disps[i] = at;
            at      += lens[i] + rnd_in(1, 64);
        }
        MPI_Type_indexed(n, lens, disps, MPI_INT, &t);
        *kind_p = "indexed";
    }
    MPI_Type_commit(&t);
    return t;
}

/* An origin type of `ints` ints, not the target's shape. */
static MPI_Datatype draw_origin(int ints, const char **kind_p)
{
    MPI_Datatype t;
    int d, best = 1;

    if (rnd_in(0, 2) == 0) {
        MPI_Type_contiguous(ints, MPI_INT, &t);
        *kind_p = "contig";
    } else {
        /* a block length that divides the count */
        for (d = rnd_in(2, 128); d >= 1; --d) {
            if (ints % d == 0) {
                best = d;
                break;
            }
        }
        MPI_Type_vector(ints / best, best, best + rnd_in(1, 16), MPI_INT, &t);
        *kind_p = "vector";
    }
    MPI_Type_commit(&t);
    return t;
}

static void compare(const char *what, const uint8_t *got, const uint8_t *exp,
                    size_t len)
{
    ++checks;
    failures += compare_bytes(what, rank, got, exp, len);
}

int main(int argc, char **argv)
{
    int seed = 1, rounds = 24, round, rep, opt, puts = 0, gets = 0;
    int target;
    uint8_t **mirror, *win_mem, *obuf, *expect;
    MPI_Aint tlb, textent, olb, oextent, span;
    MPI_Datatype ttype, otype;
    const char *tkind, *okind, *ekind;
    MPI_Request req;
    MPI_Win win;
    char what[256];
    int tsize, is_put, epoch, i, disp;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((opt = getopt(argc, argv, "s:n:")) != -1) {
        if (opt == 's') {
            seed = atoi(optarg);
        } else if (opt == 'n') {
            rounds = atoi(optarg);
        }
    }
    target       = (rank + 1) % size;
    mirror = mirror_window(rank, size, WIN_INTS * sizeof(int), &win_mem,
                           &win);

    for (round = 0; round < rounds; ++round) {
        rng_state = (uint64_t)seed * 1000003u + (uint64_t)round;
        ttype = draw_target(&tkind);
        MPI_Type_size(ttype, &tsize);
        otype = draw_origin(tsize / (int)sizeof(int), &okind);
        MPI_Type_get_true_extent(ttype, &tlb, &textent);
        MPI_Type_get_true_extent(otype, &olb, &oextent);
        span = tlb + textent;
        disp = rnd_in(0, WIN_INTS - (int)(span / (MPI_Aint)sizeof(int)));
        is_put = rnd_in(0, 1);
        epoch  = rnd_in(0, 2);
        ekind  = (epoch == 0) ? "fence" : (epoch == 1) ? "lock_all+flush" :
                 "lock_all+request";
        obuf   = malloc(olb + oextent + 2 * GUARD);
        expect = malloc(olb + oextent + 2 * GUARD);
        for (rep = 0; rep < 3; ++rep) {
            uint64_t salt = ((uint64_t)seed << 32) ^ ((uint64_t)round << 8) ^
                            (uint64_t)rep;

            /* the origin's data: every rank can compute any rank's */
            fill(obuf, olb + oextent + 2 * GUARD, salt * 7 + rank);
            memcpy(expect, obuf, olb + oextent + 2 * GUARD);
            if (epoch == 0) {
                MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
            } else {
                MPI_Win_lock_all(0, win);
            }
            if (epoch == 2) {
                if (is_put) {
                    MPI_Rput(obuf + GUARD, 1, otype, target, disp, 1, ttype,
                             win, &req);
                } else {
                    MPI_Rget(obuf + GUARD, 1, otype, target, disp, 1, ttype,
                             win, &req);
                }
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            } else if (is_put) {
                MPI_Put(obuf + GUARD, 1, otype, target, disp, 1, ttype, win);
            } else {
                MPI_Get(obuf + GUARD, 1, otype, target, disp, 1, ttype, win);
            }
            if (epoch == 0) {
                MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
            } else {
                if (epoch == 1) {
                    MPI_Win_flush(target, win);
                }
                MPI_Win_unlock_all(win);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            snprintf(what, sizeof(what), "round %d rep %d %s %s target %s "
                     "(%d B) origin %s disp %d", round, rep, is_put ? "put" :
                     "get", ekind, tkind, tsize, okind, disp);
            if (is_put) {
                /* every window took its origin's data */
                uint8_t *src = malloc(olb + oextent + 2 * GUARD);

                for (i = 0; i < size; ++i) {
                    fill(src, olb + oextent + 2 * GUARD,
                         salt * 7 + (uint64_t)((i + size - 1) % size));
                    copy_by_types(src + GUARD, otype,
                                  mirror[i] + (size_t)disp * sizeof(int),
                                  ttype);
                }
                free(src);
                MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
                compare(what, win_mem, mirror[rank], WIN_INTS * sizeof(int));
                MPI_Win_unlock(rank, win);
                ++puts;
            } else {
                copy_by_types(mirror[target] + (size_t)disp * sizeof(int),
                              ttype, expect + GUARD, otype);
                compare(what, obuf, expect, olb + oextent + 2 * GUARD);
                ++gets;
            }
            /* no rank's next access before every check of this one (in
             * passive epochs a zero-copy put lands at once) */
            MPI_Barrier(MPI_COMM_WORLD);
        }
        free(obuf);
        free(expect);
        MPI_Type_free(&ttype);
        MPI_Type_free(&otype);
    }
    MPI_Win_free(&win);
    printf("mpich_rma_layouts: rank %d: checks %d puts %d gets %d failures "
           "%d\n", rank, checks, puts, gets, failures);
    mirror_free(mirror, size, win_mem);
    MPI_Finalize();
    return failures ? 1 : 0;
}
