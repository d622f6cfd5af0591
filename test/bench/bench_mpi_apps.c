/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * bench_mpi_apps: whole unmodified MPI programs of the shapes that cost
 * pml/umr (issue 18), timed as a whole (max over ranks of the loop's
 * MPI_Wtime), every message verified. contrib/run-mpi-apps.sh runs it with
 * and without pml/umr, interleaved, and takes the best of the runs.
 *
 *   particles  each round every rank sends each other rank a fresh
 *              MPI_Type_create_indexed_block of 48-byte particles (6
 *              doubles; 0 .. -P particles picked at random of -N), with
 *              MPI_Isend; the receiver takes them with
 *              MPI_Probe(MPI_ANY_SOURCE) + MPI_Get_count + MPI_Recv into a
 *              contiguous buffer; the type is freed after the round. Every
 *              particle carries (source, index, round) and is checked.
 *   transpose  each round every rank sends each other rank an S x S
 *              subarray of its N x N matrix of doubles (rows of S doubles),
 *              received transposed: a vector of single doubles per column.
 *              Every element of the received block checked.
 *
 * Output (rank 0): "APP <name> np <n> rounds <r> seconds <t> ok"
 *
 * usage: mpirun -np N bench_mpi_apps [-a particles|transpose] [-r rounds]
 *        [-N particles] [-P max_particles_sent] [-S block] [-M matrix]
 *        [-s seed]
 */
#include <mpi.h>
#define BM_PROG "bench_mpi_apps"
#include "bench_mpi.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BM_PART_DOUBLES 6
#define BM_TAG          77

static int bm_np;

static unsigned bm_rand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

static double bm_part_val(int src, int idx, int round, int k)
{
    return (double)src * 1e7 + (double)idx * 10 + k + round * 0.5;
}

static void bm_particles(int rounds, int npart, int maxsend, unsigned seed)
{
    double *parts = malloc((size_t)npart * BM_PART_DOUBLES * sizeof(double));
    double *rbuf  = malloc((size_t)maxsend * BM_PART_DOUBLES * sizeof(double));
    int *idx      = malloc((size_t)maxsend * sizeof(int));
    int *pick     = malloc((size_t)npart * sizeof(int));
    MPI_Request *reqs = malloc(bm_np * sizeof(*reqs));
    MPI_Datatype *types = malloc(bm_np * sizeof(*types));
    MPI_Datatype particle;
    unsigned s = seed * 7919u + bm_rank;
    int r, p, i, k, n, got;
    MPI_Status st;
    double t0, t, tmax;

    if (!parts || !rbuf || !idx || !pick || !reqs || !types) {
        BM_FAIL("out of memory");
    }
    BM_MPI(MPI_Type_contiguous(BM_PART_DOUBLES, MPI_DOUBLE, &particle));
    BM_MPI(MPI_Type_commit(&particle));
    BM_MPI(MPI_Barrier(MPI_COMM_WORLD));
    t0 = MPI_Wtime();
    for (r = 0; r < rounds; ++r) {
        for (i = 0; i < npart; ++i) {
            for (k = 0; k < BM_PART_DOUBLES; ++k) {
                parts[i * BM_PART_DOUBLES + k] = bm_part_val(bm_rank, i, r, k);
            }
        }
        for (p = 0; p < bm_np; ++p) {
            reqs[p]  = MPI_REQUEST_NULL;
            types[p] = MPI_DATATYPE_NULL;
            if (p == bm_rank) {
                continue;
            }
            /* a sorted random subset: particles leaving towards p */
            n = bm_rand(&s) % (maxsend + 1);
            memset(pick, 0, npart * sizeof(int));
            for (i = 0, k = 0; (i < npart) && (k < n); ++i) {
                if ((int)(bm_rand(&s) % (npart - i)) < n - k) {
                    idx[k++] = i;
                }
            }
            BM_MPI(MPI_Type_create_indexed_block(k, 1, idx, particle,
                                                 &types[p]));
            BM_MPI(MPI_Type_commit(&types[p]));
            BM_MPI(MPI_Isend(parts, 1, types[p], p, BM_TAG + (r & 1),
                             MPI_COMM_WORLD, &reqs[p]));
        }
        for (p = 0; p < bm_np - 1; ++p) {
            /* a peer may be a round ahead: rounds alternate tags */
            BM_MPI(MPI_Probe(MPI_ANY_SOURCE, BM_TAG + (r & 1), MPI_COMM_WORLD,
                             &st));
            BM_MPI(MPI_Get_count(&st, particle, &got));
            if ((got < 0) || (got > maxsend)) {
                BM_FAIL("round %d: %d particles from %d", r, got,
                        st.MPI_SOURCE);
            }
            BM_MPI(MPI_Recv(rbuf, got, particle, st.MPI_SOURCE,
                            BM_TAG + (r & 1), MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            for (i = 0; i < got; ++i) {
                double *q = &rbuf[i * BM_PART_DOUBLES];
                int pi    = (int)((q[0] - st.MPI_SOURCE * 1e7 - r * 0.5) / 10);
                for (k = 0; k < BM_PART_DOUBLES; ++k) {
                    if (q[k] != bm_part_val(st.MPI_SOURCE, pi, r, k)) {
                        BM_FAIL("round %d: particle %d from %d word %d is %g",
                                r, i, st.MPI_SOURCE, k, q[k]);
                    }
                }
                if ((pi < 0) || (pi >= npart) ||
                    ((i > 0) && (q[0] <= q[-BM_PART_DOUBLES]))) {
                    BM_FAIL("round %d: particle %d from %d out of order", r, i,
                            st.MPI_SOURCE);
                }
            }
        }
        BM_MPI(MPI_Waitall(bm_np, reqs, MPI_STATUSES_IGNORE));
        for (p = 0; p < bm_np; ++p) {
            if (types[p] != MPI_DATATYPE_NULL) {
                BM_MPI(MPI_Type_free(&types[p]));
            }
        }
    }
    t = MPI_Wtime() - t0;
    BM_MPI(MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    if (bm_rank == 0) {
        printf("APP particles np %d rounds %d seconds %.4f ok\n", bm_np,
               rounds, tmax);
    }
    BM_MPI(MPI_Type_free(&particle));
    free(parts); free(rbuf); free(idx); free(pick); free(reqs); free(types);
}

/* element (i, j) of rank r's matrix in round `round` */
static double bm_mat_val(int r, int i, int j, int round)
{
    return (double)r * 1e9 + (double)i * 1e4 + j + round * 0.25;
}

static void bm_transpose(int rounds, int m, int b)
{
    int sizes[2] = { m, m }, sub[2] = { b, b }, starts[2] = { 0, 0 };
    size_t mm = (size_t)m * m;
    double *a   = malloc(mm * sizeof(double));
    double *out = malloc(mm * sizeof(double));
    MPI_Request *reqs = malloc(2 * bm_np * sizeof(*reqs));
    MPI_Datatype col, rtype, *stypes = malloc(bm_np * sizeof(*stypes));
    int r, p, i, j, nreq;
    double t0, t, tmax;

    if (!a || !out || !reqs || !stypes || (b * (bm_np - 1) > m)) {
        BM_FAIL("out of memory, or -S * (np - 1) > -M");
    }
    /* peer p's block: rows and columns from p * b (rank order, skipping
     * nothing: p's block of the sender is at p * b) */
    for (p = 0; p < bm_np; ++p) {
        starts[0] = starts[1] = p * b % (m - b + 1);
        BM_MPI(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C,
                                        MPI_DOUBLE, &stypes[p]));
        BM_MPI(MPI_Type_commit(&stypes[p]));
    }
    /* received transposed: stream (row i, col j) lands at out[j][i] */
    BM_MPI(MPI_Type_vector(b, 1, m, MPI_DOUBLE, &col));
    BM_MPI(MPI_Type_create_hvector(b, 1, sizeof(double), col, &rtype));
    BM_MPI(MPI_Type_commit(&rtype));
    BM_MPI(MPI_Type_free(&col));
    BM_MPI(MPI_Barrier(MPI_COMM_WORLD));
    t0 = MPI_Wtime();
    for (r = 0; r < rounds; ++r) {
        for (i = 0; i < m; ++i) {
            for (j = 0; j < m; ++j) {
                a[(size_t)i * m + j] = bm_mat_val(bm_rank, i, j, r);
            }
        }
        nreq = 0;
        for (p = 0; p < bm_np; ++p) {
            if (p == bm_rank) {
                continue;
            }
            /* the block from p lands at p's diagonal slot of `out` */
            BM_MPI(MPI_Irecv(out + (size_t)(p * b % (m - b + 1)) * (m + 1), 1,
                             rtype, p, BM_TAG, MPI_COMM_WORLD, &reqs[nreq++]));
        }
        for (p = 0; p < bm_np; ++p) {
            if (p != bm_rank) {
                BM_MPI(MPI_Isend(a, 1, stypes[bm_rank], p, BM_TAG,
                                 MPI_COMM_WORLD, &reqs[nreq++]));
            }
        }
        BM_MPI(MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
        for (p = 0; p < bm_np; ++p) {
            size_t o = (size_t)(p * b % (m - b + 1));
            int s0   = (int)o;   /* p sent its own diagonal block */
            if (p == bm_rank) {
                continue;
            }
            for (i = 0; i < b; ++i) {
                for (j = 0; j < b; ++j) {
                    double want = bm_mat_val(p, s0 + i, s0 + j, r);
                    double got  = out[(o + j) * m + o + i];
                    if (got != want) {
                        BM_FAIL("round %d: from %d element (%d, %d) is %g, "
                                "expected %g", r, p, i, j, got, want);
                    }
                }
            }
        }
    }
    t = MPI_Wtime() - t0;
    BM_MPI(MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    if (bm_rank == 0) {
        printf("APP transpose np %d rounds %d seconds %.4f ok\n", bm_np,
               rounds, tmax);
    }
    for (p = 0; p < bm_np; ++p) {
        BM_MPI(MPI_Type_free(&stypes[p]));
    }
    BM_MPI(MPI_Type_free(&rtype));
    free(a); free(out); free(reqs); free(stypes);
}

int main(int argc, char **argv)
{
    const char *app = "particles";
    int rounds = 300, npart = 20000, maxsend = 6000, b = 256, m = 1024, c;
    unsigned seed = 1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &bm_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &bm_np);
    while ((c = getopt(argc, argv, "a:r:N:P:S:M:s:")) != -1) {
        switch (c) {
        case 'a': app = optarg; break;
        case 'r': rounds = atoi(optarg); break;
        case 'N': npart = atoi(optarg); break;
        case 'P': maxsend = atoi(optarg); break;
        case 'S': b = atoi(optarg); break;
        case 'M': m = atoi(optarg); break;
        case 's': seed = strtoul(optarg, NULL, 0); break;
        default:
            BM_FAIL("usage: %s [-a particles|transpose] [-r rounds] "
                    "[-N particles] [-P max_sent] [-S block] [-M matrix] "
                    "[-s seed]", argv[0]);
        }
    }
    if ((npart < 1) || (maxsend < 0) || (maxsend > npart) || (rounds < 1)) {
        BM_FAIL("-N, -P, -r: need 0 <= P <= N, N >= 1, r >= 1");
    }
    if (!strcmp(app, "particles")) {
        bm_particles(rounds, npart, maxsend, seed);
    } else if (!strcmp(app, "transpose")) {
        bm_transpose(rounds, m, b);
    } else {
        BM_FAIL("-a %s: particles or transpose", app);
    }
    MPI_Finalize();
    return 0;
}
