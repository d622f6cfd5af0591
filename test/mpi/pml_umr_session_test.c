/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * An MPI-4 sessions program (MPI_Session_init, no MPI_Init): its
 * communicator comes from the "mpi://WORLD" process set, so MPI_COMM_WORLD
 * never exists in it. test_pml_umr.sh runs it with and without pml/umr and
 * compares what it prints.
 *
 * Each rank sends its right neighbour a strided face of more than 4 KiB
 * (vector datatype: what pml/umr would move zero-copy), nonblocking and
 * blocking, and checks what it received, then prints
 * "check <case> rank <r> <hash of its buffer>".
 */
#include <mpi.h>

#include "mpi_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N      64           /* N x N doubles, one column sent: 512 B ... */
#define COLS   16           /* ... COLS columns: 8 KiB a message */

static int rank, nprocs, errors;

static double val(int r, int i, int salt)
{
    return r * 1000000.0 + i + salt * 0.25;
}

/* COLS columns of an N x N matrix, one vector a column */
static void exchange(MPI_Comm comm, MPI_Datatype cols, int blocking, int salt)
{
    int left = (rank + nprocs - 1) % nprocs, right = (rank + 1) % nprocs;
    double *s = malloc(N * N * sizeof(double)), *r = malloc(N * N * sizeof(double));
    MPI_Request req[2];
    uint64_t h = 0xcbf29ce484222325ull;
    int i, x, y;

    for (i = 0; i < N * N; ++i) {
        s[i] = val(rank, i, salt);
        r[i] = -1.0;
    }
    if (blocking) {
        MPI_Sendrecv(s, 1, cols, right, 7, r, 1, cols, left, 7, comm,
                     MPI_STATUS_IGNORE);
    } else {
        MPI_Irecv(r, 1, cols, left, 7, comm, &req[0]);
        MPI_Isend(s, 1, cols, right, 7, comm, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    }
    for (y = 0; y < N; ++y) {
        for (x = 0; x < N; ++x) {
            i = y * N + x;
            CHECK(r[i] == ((x < COLS) ? val(left, i, salt) : -1.0),
                  "element %d: %g", i, r[i]);
        }
    }
    h = hash_bytes(h, r, N * N * sizeof(double));
    printf("check session-%s rank %d %016llx\n",
           blocking ? "sendrecv" : "isend-irecv", rank, (unsigned long long)h);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_Session session;
    MPI_Group group;
    MPI_Comm comm;
    MPI_Datatype cols;
    int it;

    if ((MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session) !=
         MPI_SUCCESS) ||
        (MPI_Group_from_session_pset(session, "mpi://WORLD", &group) !=
         MPI_SUCCESS) ||
        (MPI_Comm_create_from_group(group, "mlx5_umr.session_test",
                                    MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm) !=
         MPI_SUCCESS)) {
        printf("FAIL: cannot make a communicator from a session\n");
        return 1;
    }
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    MPI_Type_vector(N, COLS, N, MPI_DOUBLE, &cols);
    MPI_Type_commit(&cols);
    for (it = 0; it < 4; ++it) {
        exchange(comm, cols, it & 1, it);
    }
    MPI_Type_free(&cols);
    MPI_Comm_free(&comm);
    MPI_Group_free(&group);
    MPI_Session_finalize(&session);
    return errors ? 1 : 0;
}
