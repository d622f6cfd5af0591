/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: probes and matched receives: MPI_Probe, MPI_Iprobe,
 * MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv.
 */
#include "umr_config.h"

#include "umr_mpich.h"

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    return umr_mpich_next()->Probe(source, tag, comm, status);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag,
               MPI_Status *status)
{
    return umr_mpich_next()->Iprobe(source, tag, comm, flag, status);
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message,
               MPI_Status *status)
{
    return umr_mpich_next()->Mprobe(source, tag, comm, message, status);
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag,
                MPI_Message *message, MPI_Status *status)
{
    return umr_mpich_next()->Improbe(source, tag, comm, flag, message, status);
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype,
              MPI_Message *message, MPI_Status *status)
{
    return umr_mpich_next()->Mrecv(buf, count, datatype, message, status);
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype,
               MPI_Message *message, MPI_Request *request)
{
    return umr_mpich_next()->Imrecv(buf, count, datatype, message, request);
}

int MPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype,
                MPI_Message *message, MPI_Status *status)
{
    return umr_mpich_next()->Mrecv_c(buf, count, datatype, message, status);
}

int MPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Message *message, MPI_Request *request)
{
    return umr_mpich_next()->Imrecv_c(buf, count, datatype, message, request);
}
