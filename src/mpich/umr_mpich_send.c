/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: the send modes: MPI_Send, MPI_Bsend, MPI_Ssend, MPI_Rsend,
 * their nonblocking and their large-count forms.
 */
#include "umr_config.h"

#include "umr_mpich.h"

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest,
             int tag, MPI_Comm comm)
{
    umr_mpich.cnt.passthrough_sends += umr_mpich.active;
    return umr_mpich_next()->Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest,
              int tag, MPI_Comm comm)
{
    umr_mpich.cnt.passthrough_sends += umr_mpich.active;
    return umr_mpich_next()->Bsend(buf, count, datatype, dest, tag, comm);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest,
              int tag, MPI_Comm comm)
{
    umr_mpich.cnt.passthrough_sends += umr_mpich.active;
    return umr_mpich_next()->Ssend(buf, count, datatype, dest, tag, comm);
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest,
              int tag, MPI_Comm comm)
{
    umr_mpich.cnt.passthrough_sends += umr_mpich.active;
    return umr_mpich_next()->Rsend(buf, count, datatype, dest, tag, comm);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest,
              int tag, MPI_Comm comm, MPI_Request *request)
{
    umr_mpich.cnt.passthrough_sends += umr_mpich.active;
    return umr_mpich_next()->Isend(buf, count, datatype, dest, tag, comm,
                                   request);
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm, MPI_Request *request)
{
    umr_mpich.cnt.passthrough_sends += umr_mpich.active;
    return umr_mpich_next()->Ibsend(buf, count, datatype, dest, tag, comm,
                                    request);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm, MPI_Request *request)
{
    umr_mpich.cnt.passthrough_sends += umr_mpich.active;
    return umr_mpich_next()->Issend(buf, count, datatype, dest, tag, comm,
                                    request);
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm, MPI_Request *request)
{
    umr_mpich.cnt.passthrough_sends += umr_mpich.active;
    return umr_mpich_next()->Irsend(buf, count, datatype, dest, tag, comm,
                                    request);
}

int MPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
               int dest, int tag, MPI_Comm comm)
{
    umr_mpich.cnt.passthrough_sends += umr_mpich.active;
    return umr_mpich_next()->Send_c(buf, count, datatype, dest, tag, comm);
}

int MPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
                int dest, int tag, MPI_Comm comm)
{
    umr_mpich.cnt.passthrough_sends += umr_mpich.active;
    return umr_mpich_next()->Bsend_c(buf, count, datatype, dest, tag, comm);
}

int MPI_Ssend_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
                int dest, int tag, MPI_Comm comm)
{
    umr_mpich.cnt.passthrough_sends += umr_mpich.active;
    return umr_mpich_next()->Ssend_c(buf, count, datatype, dest, tag, comm);
}

int MPI_Rsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
                int dest, int tag, MPI_Comm comm)
{
    umr_mpich.cnt.passthrough_sends += umr_mpich.active;
    return umr_mpich_next()->Rsend_c(buf, count, datatype, dest, tag, comm);
}

int MPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
                int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    umr_mpich.cnt.passthrough_sends += umr_mpich.active;
    return umr_mpich_next()->Isend_c(buf, count, datatype, dest, tag, comm,
                                     request);
}

int MPI_Ibsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    umr_mpich.cnt.passthrough_sends += umr_mpich.active;
    return umr_mpich_next()->Ibsend_c(buf, count, datatype, dest, tag, comm,
                                      request);
}

int MPI_Issend_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    umr_mpich.cnt.passthrough_sends += umr_mpich.active;
    return umr_mpich_next()->Issend_c(buf, count, datatype, dest, tag, comm,
                                      request);
}

int MPI_Irsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    umr_mpich.cnt.passthrough_sends += umr_mpich.active;
    return umr_mpich_next()->Irsend_c(buf, count, datatype, dest, tag, comm,
                                      request);
}
