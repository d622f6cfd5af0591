/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: the MPI calls the binding makes itself with a count that
 * may exceed an int. MPI-4's large-count calls (PMPI_Isend_c, ...) are
 * absent from the MPICH-ABI libraries before MPI-4 (MPICH 3.x, Intel MPI
 * 2021): they are weak here and called only for a count beyond an int,
 * which only a program of an MPI-4 library passes (through an _c call).
 */
#ifndef UMR_MPICH_COUNT_H_
#define UMR_MPICH_COUNT_H_

#include <mpi.h>
#include <limits.h>
#include <stdlib.h>

#pragma weak PMPI_Isend_c
#pragma weak PMPI_Irecv_c
#pragma weak PMPI_Imrecv_c
#pragma weak PMPI_Pack_size_c
#pragma weak PMPI_Pack_c

/* A nonblocking send (`send`) of (buf, count, type) to `peer`, or a
 * receive from it */
static inline int umr_mpich_ipost_n(int send, void *buf, MPI_Count count,
                                    MPI_Datatype type, int peer, int tag,
                                    MPI_Comm comm, MPI_Request *req)
{
    if (count <= INT_MAX) {
        return send ? PMPI_Isend(buf, (int)count, type, peer, tag, comm, req) :
                      PMPI_Irecv(buf, (int)count, type, peer, tag, comm, req);
    }
    return send ? PMPI_Isend_c(buf, count, type, peer, tag, comm, req) :
                  PMPI_Irecv_c(buf, count, type, peer, tag, comm, req);
}

static inline int umr_mpich_imrecv_n(void *buf, MPI_Count count,
                                     MPI_Datatype type, MPI_Message *msg,
                                     MPI_Request *req)
{
    return (count <= INT_MAX) ?
           PMPI_Imrecv(buf, (int)count, type, msg, req) :
           PMPI_Imrecv_c(buf, count, type, msg, req);
}

/* (buf, count, type) packed into a new buffer: *copy_p (free it), *len_p
 * its bytes */
static inline int umr_mpich_pack_n(const void *buf, MPI_Count count,
                                   MPI_Datatype type, MPI_Comm comm,
                                   void **copy_p, MPI_Count *len_p)
{
    MPI_Count size = 0, pos = 0;
    int isize = 0, ipos = 0, rc;
    void *copy;

    rc = (count <= INT_MAX) ?
         PMPI_Pack_size((int)count, type, comm, &isize) :
         PMPI_Pack_size_c(count, type, comm, &size);
    if (count <= INT_MAX) {
        size = isize;
    }
    if ((rc != MPI_SUCCESS) || (NULL == (copy = malloc(size ? size : 1)))) {
        return (rc != MPI_SUCCESS) ? rc : MPI_ERR_NO_MEM;
    }
    if ((count <= INT_MAX) && (size <= INT_MAX)) {
        rc  = PMPI_Pack(buf, (int)count, type, copy, (int)size, &ipos, comm);
        pos = ipos;
    } else {
        rc = PMPI_Pack_c(buf, count, type, copy, size, &pos, comm);
    }
    if (rc != MPI_SUCCESS) {
        free(copy);
        return rc;
    }
    *copy_p = copy;
    *len_p  = pos;
    return MPI_SUCCESS;
}

#endif
