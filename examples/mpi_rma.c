/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/*
 * mpi_rma: an unmodified MPI one-sided program (contrib/run-demo.sh runs it
 * without and with osc/umr, and built for MPICH when that is installed).
 * Rank 0 puts into and gets from rank 1's MPI_Win_create window through a
 * strided target type (MPI_Type_vector of `bytes / block` blocks of
 * `block` bytes, twice the block apart) from a contiguous buffer, under
 * fence and under lock/unlock (rank 1 waits in MPI_Barrier meanwhile).
 * After every operation every byte is checked: after a put the target's
 * whole window (the data where the type says, the gaps untouched), after a
 * get the origin's buffer.
 *
 *     mpirun -np 2 ./mpi_rma [-s bytes_per_op] [-i iterations]
 *                            [-b block[,block..]]
 *
 * Prints one line a (operation, synchronisation, block): the median time
 * of one operation with its synchronisation, in microseconds, and the
 * wrong bytes found (0 expected); exit status 0 only when none was.
 */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank;

static uint8_t pat(unsigned salt, size_t i)
{
    uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull ^ (uint64_t)salt << 40;

    x ^= x >> 29;
    return (uint8_t)((x * 0xbf58476d1ce4e5b9ull) >> 56);
}

static void fill(uint8_t *p, size_t n, unsigned salt)
{
    size_t i;

    for (i = 0; i < n; ++i) {
        p[i] = pat(salt, i);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

/* Wrong bytes: the window after a put (data at 2k*block.., the rest as
 * filled) or the origin after a get. */
static size_t check(int is_put, const uint8_t *win, const uint8_t *obuf,
                    size_t bytes, size_t block, unsigned wsalt,
                    unsigned osalt)
{
    size_t i, bad = 0;

    for (i = 0; i < 2 * bytes; ++i) {
        size_t blk = i / block, in = i % block;
        int data = !(blk % 2);
        uint8_t want;

        if (is_put) {
            want = data ? pat(osalt, blk / 2 * block + in) : pat(wsalt, i);
            bad += (win[i] != want);
        } else if (i < bytes) {
            /* origin byte i is target byte (i / block) * 2 block + i % block */
            want = pat(wsalt, (i / block) * 2 * block + i % block);
            bad += (obuf[i] != want);
        }
    }
    return bad;
}

int main(int argc, char **argv)
{
    size_t bytes = 1 << 20, blocks[16] = {8, 64, 512, 4096, 32768};
    int nblocks = 5, iters = 20, opt, nprocs, b, is_put, sync, it;
    unsigned salt = 1;
    size_t total_bad = 0;
    uint8_t *win_buf, *obuf;
    double *t;
    MPI_Win win;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    while ((opt = getopt(argc, argv, "s:i:b:")) != -1) {
        if (opt == 's') {
            bytes = strtoul(optarg, NULL, 0);
        } else if (opt == 'i') {
            iters = atoi(optarg);
        } else if (opt == 'b') {
            char *s = optarg, *e;

            for (nblocks = 0; (nblocks < 16) && (*s != '\0'); ++nblocks) {
                blocks[nblocks] = strtoul(s, &e, 0);
                s = (*e == ',') ? e + 1 : e;
            }
        }
    }
    if ((nprocs != 2) || (iters < 1) || (bytes == 0)) {
        if (rank == 0) {
            fprintf(stderr, "mpi_rma: mpirun -np 2, -i >= 1, -s > 0\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    win_buf = malloc(2 * bytes);
    obuf    = malloc(bytes);
    t       = malloc(iters * sizeof(*t));
    MPI_Win_create(win_buf, 2 * bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (is_put = 1; is_put >= 0; --is_put) {
        for (sync = 0; sync < 2; ++sync) {
            for (b = 0; b < nblocks; ++b) {
                size_t blk = blocks[b], bad = 0;
                MPI_Datatype vec;
                int n = (int)(bytes / blk);

                if ((blk == 0) || (bytes % blk)) {
                    continue;
                }
                MPI_Type_vector(n, (int)blk, (int)(2 * blk), MPI_BYTE, &vec);
                MPI_Type_commit(&vec);
                /* one more than timed: the first use of a target type may
                 * set things up (osc/umr asks for its layout key) */
                for (it = -1; it < iters; ++it) {
                    unsigned wsalt = ++salt, osalt = ++salt;
                    double t0;

                    fill(win_buf, 2 * bytes, wsalt);
                    fill(obuf, bytes, osalt);
                    MPI_Barrier(MPI_COMM_WORLD);
                    t0 = MPI_Wtime();
                    if (sync == 0) {
                        MPI_Win_fence(0, win);
                    } else if (rank == 0) {
                        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
                    }
                    if ((rank == 0) && is_put) {
                        MPI_Put(obuf, n * (int)blk, MPI_BYTE, 1, 0, 1, vec,
                                win);
                    } else if (rank == 0) {
                        MPI_Get(obuf, n * (int)blk, MPI_BYTE, 1, 0, 1, vec,
                                win);
                    }
                    if (sync == 0) {
                        MPI_Win_fence(0, win);
                    } else if (rank == 0) {
                        MPI_Win_unlock(1, win);
                    }
                    t0 = MPI_Wtime() - t0;
                    MPI_Barrier(MPI_COMM_WORLD);
                    if (it >= 0) {
                        t[it] = t0;
                    }
                    /* the target's window after a put (salts as rank 0's) */
                    if ((rank == 1) && is_put) {
                        bad += check(1, win_buf, NULL, bytes, blk, wsalt,
                                     osalt);
                    } else if ((rank == 0) && !is_put) {
                        bad += check(0, NULL, obuf, bytes, blk, wsalt, osalt);
                    }
                }
                MPI_Type_free(&vec);
                MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_UNSIGNED_LONG,
                              MPI_SUM, MPI_COMM_WORLD);
                total_bad += bad;
                if (rank == 0) {
                    qsort(t, iters, sizeof(*t), cmp_double);
                    printf("%s %-5s %6zu B blocks: %10.1f us  %zu wrong "
                           "bytes\n", is_put ? "put" : "get",
                           sync ? "lock" : "fence", blk, t[iters / 2] * 1e6,
                           bad);
                    fflush(stdout);
                }
            }
        }
    }
    MPI_Win_free(&win);
    if (rank == 0) {
        printf("mpi_rma: %zu bytes an operation, %d iterations, %zu wrong "
               "bytes in all\n", bytes, iters, total_bad);
    }
    free(win_buf);
    free(obuf);
    free(t);
    MPI_Finalize();
    return total_bad ? 1 : 0;
}
