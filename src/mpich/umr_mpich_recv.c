/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: receives: MPI_Recv, MPI_Irecv, MPI_Sendrecv(_replace),
 * MPI_Isendrecv(_replace) and their large-count forms.
 */
#include "umr_config.h"

#include "umr_mpich.h"

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
             MPI_Comm comm, MPI_Status *status)
{
    return umr_mpich_next()->Recv(buf, count, datatype, source, tag, comm,
                                  status);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
              MPI_Comm comm, MPI_Request *request)
{
    return umr_mpich_next()->Irecv(buf, count, datatype, source, tag, comm,
                                   request);
}

int MPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source,
               int tag, MPI_Comm comm, MPI_Status *status)
{
    return umr_mpich_next()->Recv_c(buf, count, datatype, source, tag, comm,
                                    status);
}

int MPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source,
                int tag, MPI_Comm comm, MPI_Request *request)
{
    return umr_mpich_next()->Irecv_c(buf, count, datatype, source, tag, comm,
                                     request);
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                 int dest, int sendtag, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                 MPI_Status *status)
{
    return umr_mpich_next()->Sendrecv(sendbuf, sendcount, sendtype, dest,
                                      sendtag, recvbuf, recvcount, recvtype,
                                      source, recvtag, comm, status);
}

int MPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount,
                   MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int source,
                   int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return umr_mpich_next()->Sendrecv_c(sendbuf, sendcount, sendtype, dest,
                                        sendtag, recvbuf, recvcount, recvtype,
                                        source, recvtag, comm, status);
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest,
                         int sendtag, int source, int recvtag, MPI_Comm comm,
                         MPI_Status *status)
{
    return umr_mpich_next()->Sendrecv_replace(buf, count, datatype, dest,
                                              sendtag, source, recvtag, comm,
                                              status);
}

int MPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype,
                           int dest, int sendtag, int source, int recvtag,
                           MPI_Comm comm, MPI_Status *status)
{
    return umr_mpich_next()->Sendrecv_replace_c(buf, count, datatype, dest,
                                                sendtag, source, recvtag, comm,
                                                status);
}

int MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  int dest, int sendtag, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Request *request)
{
    return umr_mpich_next()->Isendrecv(sendbuf, sendcount, sendtype, dest,
                                       sendtag, recvbuf, recvcount, recvtype,
                                       source, recvtag, comm, request);
}

int MPI_Isendrecv_c(const void *sendbuf, MPI_Count sendcount,
                    MPI_Datatype sendtype, int dest, int sendtag,
                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm,
                    MPI_Request *request)
{
    return umr_mpich_next()->Isendrecv_c(sendbuf, sendcount, sendtype, dest,
                                         sendtag, recvbuf, recvcount, recvtype,
                                         source, recvtag, comm, request);
}

int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype,
                          int dest, int sendtag, int source, int recvtag,
                          MPI_Comm comm, MPI_Request *request)
{
    return umr_mpich_next()->Isendrecv_replace(buf, count, datatype, dest,
                                               sendtag, source, recvtag, comm,
                                               request);
}

int MPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype,
                            int dest, int sendtag, int source, int recvtag,
                            MPI_Comm comm, MPI_Request *request)
{
    return umr_mpich_next()->Isendrecv_replace_c(buf, count, datatype, dest,
                                                 sendtag, source, recvtag,
                                                 comm, request);
}
