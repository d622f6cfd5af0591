/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr requests: the user-visible request of a zero-copy send and of a
 * receive that may match a control message. They are ompi_request_t's of
 * type OMPI_REQUEST_PML, completed with ompi_request_complete(); each holds
 * the core's transfer (umr_mpi_proto.h), whose operations on the user's
 * messages are this component's (pml_umr_send.c, pml_umr_recv.c). The
 * wrapped PML's own request for the same message stays internal
 * (req->inner).
 */
#ifndef MCA_PML_UMR_REQUEST_H_
#define MCA_PML_UMR_REQUEST_H_

#include "pml_umr.h"
#include "umr_mpi_proto.h"

#include <ompi/communicator/communicator.h>
#include <ompi/datatype/ompi_datatype.h>
#include <ompi/request/request.h>

BEGIN_C_DECLS

enum {
    MCA_PML_UMR_REQ_SEND = 1,
    MCA_PML_UMR_REQ_RECV
};

typedef struct mca_pml_umr_request mca_pml_umr_request_t;

struct mca_pml_umr_request {
    ompi_request_t        super;
    umr_mpi_xfer_t        x;          /* the core's side of the message */
    int                   kind;
    int                   free_called;
    int                   mpi_done;   /* being MPI-completed: the caller's
                                         callback may free it */
    int                   passthrough;/* this start went to the wrapped PML */
    int                   in_place;   /* completes `inner`, the user's
                                         request (pml_umr_hook.h) */
    int                   (*start)(mca_pml_umr_request_t *req);
                                      /* persistent: MPI_Start */
    void                  (*in_place_done)(mca_pml_umr_request_t *req);
    /* arguments */
    void                  *buf;
    void                  *copy;      /* a buffered escape's copy of its
                                         data (buf), in the attached
                                         buffer, released with it */
    size_t                count;
    ompi_datatype_t       *dt;
    int                   peer_rank;  /* dst or src in comm */
    int                   tag;
    int                   mode;
    ompi_communicator_t   *comm;
    ompi_request_t        *inner;     /* the wrapped PML's: a receive, or a
                                         persistent send's pass-through */
    ompi_status_public_t  inner_status;
};

OBJ_CLASS_DECLARATION(mca_pml_umr_request_t);

/* The requests' free list (at interposition / finalize). */
void mca_pml_umr_requests_init(void);
void mca_pml_umr_requests_fini(void);

/* The wrapped PML's start of each of `requests` (its own) in turn, then
 * `started` on it: the first error is returned, the requests after it are
 * not started. */
int mca_pml_umr_start_each(size_t count, ompi_request_t **requests,
                           void (*started)(ompi_request_t *request));

/* A request for `count` elements of `dt` (retained; NULL: none) at `buf`
 * to or from `rank` of `comm` with `tag`; its transfer knows the data, the
 * type's key, the communicator's id and the other side's world rank. */
mca_pml_umr_request_t *mca_pml_umr_request_alloc(int kind, bool persistent,
                                                 ompi_communicator_t *comm,
                                                 void *buf, size_t count,
                                                 ompi_datatype_t *dt, int rank,
                                                 int tag);
/* All events of the current operation happened: complete it for MPI (or
 * return it, when the user freed it). */
void mca_pml_umr_request_mpi_complete(mca_pml_umr_request_t *req);
/* MPI_Start of a persistent request: active again, the last operation's
 * state cleared. */
void mca_pml_umr_request_restart(mca_pml_umr_request_t *req);

/* The request of a transfer. */
static inline mca_pml_umr_request_t *mca_pml_umr_request_of(umr_mpi_xfer_t *x)
{
    return ucs_container_of(x, mca_pml_umr_request_t, x);
}

/* The status of a single-completion call or a probe: every field but
 * MPI_ERROR, which MPI leaves alone outside the multiple-completion calls
 * (as Open MPI's own OMPI_COPY_STATUS(dst, src, false)). */
static inline void mca_pml_umr_status_copy(ompi_status_public_t *dst,
                                           const ompi_status_public_t *src)
{
    if (dst != MPI_STATUS_IGNORE) {
        dst->MPI_SOURCE = src->MPI_SOURCE;
        dst->MPI_TAG    = src->MPI_TAG;
        dst->_ucount    = src->_ucount;
        dst->_cancelled = src->_cancelled;
    }
}

/* Wait for *req, give its error (and status but MPI_ERROR), free it. */
int mca_pml_umr_request_wait_free(ompi_request_t **req,
                                  ompi_status_public_t *status);

/* The wrapped PML's request of the last operation, complete: freed. */
void mca_pml_umr_request_inner_free(mca_pml_umr_request_t *req);
int  mca_pml_umr_request_is_ours(const ompi_request_t *req);

/* Run `fn` when the wrapped PML completes req->inner (now, if it already
 * has: nothing else runs between the PML call and this one). */
static inline int mca_pml_umr_inner_hook(mca_pml_umr_request_t *req,
                                         ompi_request_complete_fn_t fn)
{
    return ompi_request_set_callback(req->inner, fn, req);
}

/* The first `len` packed bytes of (buf, count, dt). */
void mca_pml_umr_peek(const void *buf, size_t count, ompi_datatype_t *dt,
                      void *out, size_t len);

/* Whether a receive of this capacity may match a control message. */
static inline int mca_pml_umr_recv_may_match(const ompi_datatype_t *dt,
                                             size_t count)
{
    return dt->super.size * count >= UMR_MPI_CTL_SIZE;
}

/* Whether a receive that completed with exactly Z bytes starts with the
 * magic: two loads for a contiguous layout, a 16-byte pack otherwise. Safe
 * inside the wrapped PML's completion callback (memory reads only). */
int mca_pml_umr_recv_has_magic(void *buf, size_t count, ompi_datatype_t *dt);

/* Whether a completed receive may hold a control message. `error`: the
 * receive's error (a blocking receive leaves status->MPI_ERROR alone). */
static inline int mca_pml_umr_recv_maybe_ctl(void *buf, size_t count,
                                             ompi_datatype_t *dt,
                                             const ompi_status_public_t *st,
                                             int error)
{
    return OPAL_UNLIKELY(st->_ucount == UMR_MPI_CTL_SIZE) &&
           !st->_cancelled &&
           ((error == MPI_SUCCESS) || (error == MPI_ERR_TRUNCATE)) &&
           mca_pml_umr_recv_has_magic(buf, count, dt);
}

/* A receive of Z bytes with the magic from `source` (a rank of the
 * request's communicator) hands its transfer to the core: `status` the
 * wrapped PML's, `defer` from its completion callback (CLASSIFY then runs
 * in progress). */
void mca_pml_umr_recv_classify(mca_pml_umr_request_t *req,
                               const ompi_status_public_t *status, int defer);

END_C_DECLS

#endif
