/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * A PMPI tool of another kind (a profiler of sends), for the tests of
 * libumr_mpich.so: it counts the MPI_Send and MPI_Isend calls it sees and
 * prints "pmpi_count: rank N: sends K" at MPI_Finalize. Preloaded after
 * libumr_mpich.so, it sees the calls the library hands on.
 */
#include <mpi.h>

#include <stdio.h>

static unsigned long pmpi_count_sends;

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag,
             MPI_Comm comm)
{
    ++pmpi_count_sends;
    return PMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest,
              int tag, MPI_Comm comm, MPI_Request *req)
{
    ++pmpi_count_sends;
    return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}

int MPI_Finalize(void)
{
    int rank;

    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "pmpi_count: rank %d: sends %lu\n", rank,
            pmpi_count_sends);
    return PMPI_Finalize();
}
