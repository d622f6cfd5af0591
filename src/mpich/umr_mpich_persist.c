/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: persistent requests: MPI_Send_init and the other modes,
 * MPI_Recv_init, MPI_Start(all), MPI_Request_free, MPI_Cancel.
 */
#include "umr_config.h"

#include "umr_mpich.h"

int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest,
                  int tag, MPI_Comm comm, MPI_Request *request)
{
    return umr_mpich_next()->Send_init(buf, count, datatype, dest, tag, comm,
                                       request);
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest,
                   int tag, MPI_Comm comm, MPI_Request *request)
{
    return umr_mpich_next()->Bsend_init(buf, count, datatype, dest, tag, comm,
                                        request);
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest,
                   int tag, MPI_Comm comm, MPI_Request *request)
{
    return umr_mpich_next()->Ssend_init(buf, count, datatype, dest, tag, comm,
                                        request);
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest,
                   int tag, MPI_Comm comm, MPI_Request *request)
{
    return umr_mpich_next()->Rsend_init(buf, count, datatype, dest, tag, comm,
                                        request);
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source,
                  int tag, MPI_Comm comm, MPI_Request *request)
{
    return umr_mpich_next()->Recv_init(buf, count, datatype, source, tag, comm,
                                       request);
}

int MPI_Send_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    return umr_mpich_next()->Send_init_c(buf, count, datatype, dest, tag, comm,
                                         request);
}

int MPI_Bsend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
                     int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    return umr_mpich_next()->Bsend_init_c(buf, count, datatype, dest, tag,
                                          comm, request);
}

int MPI_Ssend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
                     int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    return umr_mpich_next()->Ssend_init_c(buf, count, datatype, dest, tag,
                                          comm, request);
}

int MPI_Rsend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
                     int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    return umr_mpich_next()->Rsend_init_c(buf, count, datatype, dest, tag,
                                          comm, request);
}

int MPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype datatype,
                    int source, int tag, MPI_Comm comm, MPI_Request *request)
{
    return umr_mpich_next()->Recv_init_c(buf, count, datatype, source, tag,
                                         comm, request);
}

int MPI_Start(MPI_Request *request)
{
    return umr_mpich_next()->Start(request);
}

int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    return umr_mpich_next()->Startall(count, array_of_requests);
}

int MPI_Request_free(MPI_Request *request)
{
    return umr_mpich_next()->Request_free(request);
}

int MPI_Cancel(MPI_Request *request)
{
    return umr_mpich_next()->Cancel(request);
}
