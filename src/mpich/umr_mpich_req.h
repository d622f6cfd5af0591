/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: a message the binding carries for the user (a zero-copy
 * send, or a receive it watches), with the core's transfer in it. The user
 * holds a generalized request (MPIX_Grequest_start): MPICH's Wait, Test,
 * Waitall, Waitany, Testsome... of every kind call its poll function, which
 * runs the binding's progress, and its query function answers the status
 * (source, tag, the message's real size, error, cancelled). A blocking
 * call keeps the request on its stack and runs progress until it is done.
 */
#ifndef UMR_MPICH_REQ_H_
#define UMR_MPICH_REQ_H_

#include "umr_mpich_watch.h"

#include "umr_mpi_proto.h"

#include <mpi.h>

enum {
    UMR_MPICH_MODE_STANDARD,
    UMR_MPICH_MODE_BUFFERED,
    UMR_MPICH_MODE_SYNC,
    UMR_MPICH_MODE_READY
};

typedef struct umr_mpich_req {
    umr_mpi_xfer_t    x;           /* the core's side of the message */
    umr_mpich_watch_t w;           /* on the user's envelope: the control
                                      message sent, or the receive */
    umr_mpich_watch_t wd;          /* a declined message's data */
    umr_mpi_comp_t    *wcomp;      /* the core's completions of w, wd */
    umr_mpi_comp_t    *dcomp;
    MPI_Request       greq;        /* the user's (NULL: a blocking call) */
    MPI_Datatype      type;
    MPI_Datatype      held_type;   /* kept from freeing while in flight */
    MPI_Comm          comm;
    int               peer;        /* in comm: destination, or source asked */
    int               tag;         /* asked */
    int               mode;        /* UMR_MPICH_MODE_* */
    int               is_send;
    int               done;
    int               released;    /* MPICH is done with the handle */
    /* the status the user gets */
    int               source;
    int               stag;
    int               error;
    int               cancelled;
    size_t            bytes;
    void              *copy;       /* a buffered escape's data (freed) */
} umr_mpich_req_t;

/* The core's operations on the user's messages (umr_mpi_xfer_ops_t). */
extern const umr_mpi_xfer_ops_t umr_mpich_xfer_ops;

/* A request for `type` on `comm` (peer, tag): zeroed, the type and the
 * communicator kept. NULL: out of memory. */
umr_mpich_req_t *umr_mpich_req_new(MPI_Datatype type, MPI_Comm comm, int peer,
                                   int tag);
void umr_mpich_req_init(umr_mpich_req_t *r, MPI_Datatype type, MPI_Comm comm,
                        int peer, int tag);

/* Hand `r` to the user as a generalized request in *req_p (it may be
 * done already). */
int umr_mpich_req_start(umr_mpich_req_t *r, MPI_Request *req_p);

/* A blocking call: progress until `r` is done; its error. */
int umr_mpich_req_wait(umr_mpich_req_t *r);

/* `r` is over (its status fields set). */
void umr_mpich_req_finish(umr_mpich_req_t *r);
/* Free `r` (what it holds too). */
void umr_mpich_req_destroy(umr_mpich_req_t *r);

/* The status `r` answers. */
void umr_mpich_req_status(const umr_mpich_req_t *r, MPI_Status *status);

/* An error of the binding's own in a call on `comm` (0: none): the
 * communicator's error handler, as MPICH's call would; then the code. */
static inline int umr_mpich_error(MPI_Comm comm, int rc)
{
    if (rc != MPI_SUCCESS) {
        PMPI_Comm_call_errhandler(comm, rc);
    }
    return rc;
}

/* The first `len` bytes of the packed stream of (buf, count, type). */
void umr_mpich_pack_head(const void *buf, size_t count, MPI_Datatype type,
                         void *out, size_t len);

#endif
