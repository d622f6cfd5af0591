/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * The budget of connected peers (pml_umr_max_conns; test_pml_umr_conns.sh):
 * every rank exchanges one derived-type message with every other rank, in
 * shifts (step k: send to rank + k, receive from rank - k), for a few
 * rounds, so that each rank talks to all its peers in turn and a budget
 * smaller than the number of peers must disconnect idle ones and connect
 * them again. Every byte of every receive buffer is checked against what
 * MPI_Pack of the sender's data and MPI_Unpack into the receive layout
 * give (the gaps keep their sentinel).
 *
 * usage: pml_umr_conns [ROUNDS] [WINDOW]   (WINDOW: steps in flight at once)
 * prints "check conns ROUNDS x PEERS: ok" on rank 0, or FAIL lines.
 */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCKS   640     /* x 8 bytes: 5120 packed bytes (> 4160) */
#define BLOCKLEN 8
#define SSTRIDE  24      /* sender: every third 8-byte block */
#define RSTRIDE  16      /* receiver: every other one */

static unsigned char value(int src, int dst, int round, size_t i)
{
    return (unsigned char)((src * 131 + dst * 31 + round * 7 + i * 13) ^
                           (i >> 8));
}

int main(int argc, char **argv)
{
    int rounds = (argc > 1) ? atoi(argv[1]) : 2;
    int window = (argc > 2) ? atoi(argv[2]) : 1;
    MPI_Datatype stype, rtype;
    size_t sext = (size_t)BLOCKS * SSTRIDE, rext = (size_t)BLOCKS * RSTRIDE;
    unsigned char *sbuf, *rbuf, *expect, *packed;
    MPI_Request *reqs;
    int rank, size, round, k, k0, w, pos, errors = 0, total;
    size_t i;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if ((rounds < 1) || (window < 1)) {
        if (rank == 0) {
            fprintf(stderr, "usage: pml_umr_conns [ROUNDS >= 1] "
                    "[WINDOW >= 1]\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Type_vector(BLOCKS, BLOCKLEN, SSTRIDE, MPI_BYTE, &stype);
    MPI_Type_vector(BLOCKS, BLOCKLEN, RSTRIDE, MPI_BYTE, &rtype);
    MPI_Type_commit(&stype);
    MPI_Type_commit(&rtype);
    sbuf   = malloc(sext * window);
    rbuf   = malloc(rext * window);
    expect = malloc(rext);
    packed = malloc((size_t)BLOCKS * BLOCKLEN);
    reqs   = malloc(sizeof(*reqs) * 2 * window);

    for (round = 0; round < rounds; ++round) {
        for (k0 = 1; k0 < size; k0 += window) {
            for (w = 0; (w < window) && (k0 + w < size); ++w) {
                k = k0 + w;
                int dst = (rank + k) % size, src = (rank - k + size) % size;
                unsigned char *s = sbuf + sext * w, *r = rbuf + rext * w;

                for (i = 0; i < sext; ++i) {
                    s[i] = value(rank, dst, round, i);
                }
                memset(r, 0xa5, rext);
                MPI_Irecv(r, 1, rtype, src, round, MPI_COMM_WORLD,
                          &reqs[2 * w]);
                MPI_Isend(s, 1, stype, dst, round, MPI_COMM_WORLD,
                          &reqs[2 * w + 1]);
            }
            MPI_Waitall(2 * w, reqs, MPI_STATUSES_IGNORE);
            for (w = 0; (w < window) && (k0 + w < size); ++w) {
                k = k0 + w;
                int src = (rank - k + size) % size;
                unsigned char *r = rbuf + rext * w;
                /* what the sender had, packed and unpacked into our layout */
                unsigned char *theirs = malloc(sext);

                for (i = 0; i < sext; ++i) {
                    theirs[i] = value(src, rank, round, i);
                }
                pos = 0;
                MPI_Pack(theirs, 1, stype, packed, BLOCKS * BLOCKLEN, &pos,
                         MPI_COMM_SELF);
                memset(expect, 0xa5, rext);
                pos = 0;
                MPI_Unpack(packed, BLOCKS * BLOCKLEN, &pos, expect, 1, rtype,
                           MPI_COMM_SELF);
                free(theirs);
                if (memcmp(r, expect, rext) != 0) {
                    for (i = 0; (i < rext) && (r[i] == expect[i]); ++i) {
                    }
                    printf("FAIL rank %d round %d from %d: byte %zu is 0x%02x, "
                           "expected 0x%02x\n", rank, round, src, i, r[i],
                           expect[i]);
                    ++errors;
                }
            }
        }
    }
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0) {
            printf("check conns %d x %d: ok\n", rounds, size - 1);
        } else {
            printf("FAIL conns: %d messages differ\n", total);
        }
    }
    fflush(stdout);
    free(reqs);
    free(packed);
    free(expect);
    free(rbuf);
    free(sbuf);
    MPI_Type_free(&stype);
    MPI_Type_free(&rtype);
    MPI_Finalize();
    return (total == 0) ? 0 : 1;
}
