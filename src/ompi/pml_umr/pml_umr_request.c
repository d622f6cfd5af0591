/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr requests: the user-visible request of a zero-copy send and of a
 * receive that may match a control message. They are ompi_request_t's of
 * type OMPI_REQUEST_PML, completed with ompi_request_complete(); the wrapped
 * PML's own request for the same message stays internal (req->inner).
 */
#include "pml_umr_request.h"
#include "common_umr_binding.h"
#include "common_umr_dtype.h"

#include <opal/datatype/opal_convertor.h>

OBJ_CLASS_INSTANCE(mca_pml_umr_request_t, ompi_request_t, NULL, NULL);

/* The wrapped PML's request of the last operation, complete: freed when
 * ours is freed or restarted (never from inside its own callback, and
 * without progress work on the way). */
void mca_pml_umr_request_inner_free(mca_pml_umr_request_t *req)
{
    if (req->inner != NULL) {
        ompi_request_free(&req->inner);
        req->inner = NULL;
    }
}

static void mca_pml_umr_request_return(mca_pml_umr_request_t *req)
{
    mca_pml_umr_request_inner_free(req);
    if (req->copy != NULL) {
        /* a buffered escape's: back to the attached buffer */
        umr_ompi_bsend_free(req->comm, req->copy);
        req->copy = NULL;
    }
    if (req->dt != NULL) {
        OMPI_DATATYPE_RELEASE(req->dt);
        req->dt = NULL;
    }
    OBJ_RELEASE(req->comm);
    OMPI_REQUEST_FINI(&req->super);
    opal_free_list_return(&mca_pml_umr.requests,
                          (opal_free_list_item_t*)req);
}

static int mca_pml_umr_request_free(ompi_request_t **request)
{
    mca_pml_umr_request_t *req = (mca_pml_umr_request_t*)*request;

    req->free_called = 1;
    /* complete (or inactive persistent), or freed by its completion
     * callback: now; active: when it completes, by
     * mca_pml_umr_request_mpi_complete */
    if (REQUEST_COMPLETE(&req->super) || req->mpi_done) {
        if (!REQUEST_COMPLETE(&req->super) && (req->inner != NULL)) {
            /* inside its completion, maybe inside req->inner's own
             * completion callback: the inner request is freed later */
            mca_common_umr_reap_add(req->inner);
            req->inner = NULL;
        }
        mca_pml_umr_request_return(req);
    }
    *request = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

/* A receive may be cancelled while the wrapped PML has not matched it; a
 * zero-copy send is never cancelled (like ob1's sends). */
static int mca_pml_umr_request_cancel(ompi_request_t *request, int flag)
{
    mca_pml_umr_request_t *req = (mca_pml_umr_request_t*)request;

    if ((req->kind == MCA_PML_UMR_REQ_RECV) && (req->inner != NULL) &&
        !REQUEST_COMPLETE(req->inner)) {
        return ompi_request_cancel(req->inner);
    }
    return OMPI_SUCCESS;
}

/* MPI_Start(all) of a persistent request of ours. */
static int mca_pml_umr_request_start(size_t count, ompi_request_t **requests)
{
    mca_pml_umr_request_t *req;
    size_t i;
    int rc;

    for (i = 0; i < count; ++i) {
        req = (mca_pml_umr_request_t*)requests[i];
        rc  = req->start(req);
        if (rc != OMPI_SUCCESS) {
            return rc;
        }
    }
    return OMPI_SUCCESS;
}

int mca_pml_umr_start_each(size_t count, ompi_request_t **requests,
                           void (*started)(ompi_request_t *request))
{
    size_t i;
    int rc;

    for (i = 0; i < count; ++i) {
        rc = mca_pml_umr.real.pml_start(1, &requests[i]);
        if (rc != OMPI_SUCCESS) {
            return rc;
        }
        started(requests[i]);
    }
    return OMPI_SUCCESS;
}

void mca_pml_umr_requests_init(void)
{
    OBJ_CONSTRUCT(&mca_pml_umr.requests, opal_free_list_t);
    opal_free_list_init(&mca_pml_umr.requests, sizeof(mca_pml_umr_request_t),
                        opal_cache_line_size, OBJ_CLASS(mca_pml_umr_request_t),
                        0, opal_cache_line_size, 8, -1, 8, NULL, 0, NULL,
                        NULL, NULL);
}

void mca_pml_umr_requests_fini(void)
{
    OBJ_DESTRUCT(&mca_pml_umr.requests);
}

int mca_pml_umr_request_is_ours(const ompi_request_t *req)
{
    return req->req_free == mca_pml_umr_request_free;
}

mca_pml_umr_request_t *mca_pml_umr_request_alloc(int kind, bool persistent,
                                                 ompi_communicator_t *comm,
                                                 void *buf, size_t count,
                                                 ompi_datatype_t *dt, int rank,
                                                 int tag)
{
    mca_pml_umr_request_t *req;

    req = (mca_pml_umr_request_t*)opal_free_list_get(&mca_pml_umr.requests);
    if (req == NULL) {
        return NULL;
    }
    OMPI_REQUEST_INIT(&req->super, persistent);
    req->super.req_type            = OMPI_REQUEST_PML;
    req->super.req_state           = persistent ? OMPI_REQUEST_INACTIVE :
                                                  OMPI_REQUEST_ACTIVE;
    req->super.req_free            = mca_pml_umr_request_free;
    req->super.req_cancel          = mca_pml_umr_request_cancel;
    req->super.req_start           = mca_pml_umr_request_start;
    req->super.req_mpi_object.comm = comm;
    req->kind                      = kind;
    req->free_called               = 0;
    req->mpi_done                  = 0;
    req->passthrough               = 0;
    req->in_place                  = 0;
    req->buf                       = buf;
    req->copy                      = NULL;
    req->count                     = count;
    req->dt                        = dt;
    req->peer_rank                 = rank;
    req->tag                       = tag;
    req->inner                     = NULL;
    req->comm                      = comm;
    req->x.buf                     = buf;
    req->x.count                   = count;
    req->x.key                     = mca_common_umr_type_key(dt);
    req->x.info                    = NULL;
    req->x.length                  = (dt != NULL) ? dt->super.size * count : 0;
    req->x.rank                    = (kind == MCA_PML_UMR_REQ_SEND) ?
                                     mca_common_umr_world_rank(comm, rank) : -1;
    req->x.ctx                     = umr_ompi_comm_gid(comm);
    req->x.tag                     = tag;
    req->x.escape                  = 0;
    req->x.peer                    = NULL;
    req->x.state                   = UMR_MPI_X_IDLE;
    OBJ_RETAIN(comm);
    if (dt != NULL) {
        OMPI_DATATYPE_RETAIN(dt);
    }
    return req;
}

/* All events of the current operation happened: complete it for MPI. */
void mca_pml_umr_request_mpi_complete(mca_pml_umr_request_t *req)
{
    if (req->in_place) {
        req->in_place_done(req);      /* completes req->inner instead */
        return;
    }
    if (req->free_called) {
        /* freed by the user while active: maybe inside req->inner's own
         * completion callback, so the inner request is freed later */
        if (req->inner != NULL) {
            mca_common_umr_reap_add(req->inner);
            req->inner = NULL;
        }
        mca_pml_umr_request_return(req);
        return;
    }
    /* An Open MPI component that posted the operation may have set a
     * completion callback that frees the request and returns 1 (coll/adapt
     * does): ompi_request_complete() then leaves it alone, and the free
     * returns it at once, as ob1's does once req_pml_complete is set. */
    req->mpi_done = 1;
    ompi_request_complete(&req->super, true);
}

void mca_pml_umr_request_restart(mca_pml_umr_request_t *req)
{
    mca_pml_umr_request_inner_free(req);   /* of the previous start */
    req->super.req_state    = OMPI_REQUEST_ACTIVE;
    req->super.req_complete = REQUEST_PENDING;
    req->passthrough        = 0;
    req->mpi_done           = 0;
    req->x.state            = UMR_MPI_X_IDLE;
}

int mca_pml_umr_request_wait_free(ompi_request_t **req,
                                  ompi_status_public_t *status)
{
    int rc;

    ompi_request_wait_completion(*req);
    rc = (*req)->req_status.MPI_ERROR;
    mca_pml_umr_status_copy(status, &(*req)->req_status);
    ompi_request_free(req);
    return rc;
}

void mca_pml_umr_recv_classify(mca_pml_umr_request_t *req,
                               const ompi_status_public_t *status, int defer)
{
    req->x.rank   = mca_common_umr_world_rank(req->comm, status->MPI_SOURCE);
    req->x.length = req->dt->super.size * req->count;
    if (defer) {
        umr_mpi_recv_defer(&req->x);
    } else {
        umr_mpi_recv_start(&req->x);
    }
}

/* The first `len` packed bytes of (buf, count, dt). */
void mca_pml_umr_peek(const void *buf, size_t count, ompi_datatype_t *dt,
                      void *out, size_t len)
{
    struct iovec iov = {.iov_base = out, .iov_len = len};
    uint32_t iov_count = 1;
    size_t max_data    = len;
    opal_convertor_t conv;

    OBJ_CONSTRUCT(&conv, opal_convertor_t);
    opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor,
                                             &dt->super, count, buf, 0, &conv);
    opal_convertor_pack(&conv, &iov, &iov_count, &max_data);
    OBJ_DESTRUCT(&conv);
}

int mca_pml_umr_recv_has_magic(void *buf, size_t count, ompi_datatype_t *dt)
{
    uint64_t magic[2];

    if (ompi_datatype_is_contiguous_memory_layout(dt, count)) {
        memcpy(magic, (char*)buf + dt->super.true_lb, sizeof(magic));
    } else {
        mca_pml_umr_peek(buf, count, dt, magic, sizeof(magic));
    }
    return umr_mpi_wire_is_magic(magic);
}
