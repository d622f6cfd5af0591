/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mpi_halo: an unmodified MPI program - the halo exchange of a 3D grid of
 * doubles between ranks on a ring, each face sent as an MPI derived
 * datatype with Isend/Irecv/Waitall, timed and verified. It knows nothing
 * about pml/umr; contrib/run-demo.sh runs it with and without the component.
 *
 * Usage: mpirun -np 2 mpi_halo [-n N] [-i ITERATIONS]
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double val(int rank, size_t i)
{
    return rank * 1e9 + (double)i;
}

int main(int argc, char **argv)
{
    int rank, size, n = 64, iters = 100, opt, f, it, left, right, bad = 0;
    const char *names[3] = {"x (8 B blocks)", "y (row blocks)", "z (contiguous)"};
    MPI_Datatype face[3];
    MPI_Request rq[2];
    MPI_Status st[2];
    size_t cells, i, last[3], y, z;
    double *g, t;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((opt = getopt(argc, argv, "n:i:")) != -1) {
        if (opt == 'n') {
            n = atoi(optarg);
        } else if (opt == 'i') {
            iters = atoi(optarg);
        }
    }
    left  = (rank + size - 1) % size;
    right = (rank + 1) % size;
    cells = (size_t)n * n * n;
    g     = malloc(cells * sizeof(double));
    /* g[z][y][x]: face f is the plane x = 0, y = 0 or z = 0; the left
     * neighbour's arrives in the plane x, y or z = n - 1 */
    MPI_Type_vector(n * n, 1, n, MPI_DOUBLE, &face[0]);
    MPI_Type_vector(n, n, n * n, MPI_DOUBLE, &face[1]);
    MPI_Type_contiguous(n * n, MPI_DOUBLE, &face[2]);
    last[0] = n - 1;
    last[1] = (size_t)(n - 1) * n;
    last[2] = (size_t)(n - 1) * n * n;
    if (rank == 0) {
        printf("mpi_halo: %d ranks, %d^3 doubles, %d exchanges per face\n",
               size, n, iters);
        printf("| face            | bytes    | us/exchange | check |\n");
        printf("|-----------------|----------|-------------|-------|\n");
    }
    for (f = 0; f < 3; ++f) {
        MPI_Type_commit(&face[f]);
        for (i = 0; i < cells; ++i) {
            g[i] = val(rank, i);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        for (it = 0; it < iters; ++it) {
            MPI_Irecv(g + last[f], 1, face[f], left, f, MPI_COMM_WORLD, &rq[0]);
            MPI_Isend(g, 1, face[f], right, f, MPI_COMM_WORLD, &rq[1]);
            /* statuses, not MPI_STATUSES_IGNORE: GCC 12 warns of MPICH's
             * (MPI_Status *)1 at -O2 */
            MPI_Waitall(2, rq, st);
        }
        t = (MPI_Wtime() - t) / iters;
        /* the last plane holds the left neighbour's first plane */
        for (z = 0; z < (size_t)n; ++z) {
            for (y = 0; y < (size_t)n; ++y) {
                size_t s = (f == 0) ? (z * n + y) * n :
                           (f == 1) ? z * n * n + y : z * n + y;
                if ((f == 2) && (z > 0)) {
                    break;
                }
                if (f == 2) {
                    for (s = 0; s < (size_t)n * n; ++s) {
                        bad += g[s + last[f]] != val(left, s);
                    }
                    break;
                }
                bad += g[s + last[f]] != val(left, s);
            }
        }
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("| %-15s | %8zu | %11.1f | %-5s |\n", names[f],
                   (size_t)n * n * sizeof(double), t * 1e6,
                   bad ? "FAIL" : "ok");
        }
        MPI_Type_free(&face[f]);
    }
    free(g);
    MPI_Finalize();
    return bad != 0;
}
