/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr receive side (see pml_umr_recv.h): the entry points, the
 * receives too small for a control message that are watched for a
 * truncated one, and the core's transfer of a receive.
 */
#include "pml_umr_recv.h"
#include "pml_umr_hook.h"
#include "pml_umr_probe.h"
#include "pml_umr_request.h"
#include "common_umr_binding.h"

#include <ompi/mca/coll/base/coll_tags.h>

#include <stdlib.h>
#include <string.h>

/* ---- the transfer's operations ---------------------------------------- */

/* A declined message's data, into the user's receive (MPI_COMM_WORLD, the
 * DATA tag), posted before the receiver answers. */
int mca_pml_umr_recv_data(umr_mpi_xfer_t *x, umr_mpi_comp_t *comp)
{
    mca_pml_umr_request_t *req = mca_pml_umr_request_of(x);

    return mca_common_umr_irecv(req->buf, req->count, req->dt,
                                x->peer->world_rank,
                                mca_common_umr_tag(UMR_MPI_MSG_DATA),
                                &ompi_mpi_comm_world.comm, comp, NULL);
}

void mca_pml_umr_recv_peek(umr_mpi_xfer_t *x, void *out, size_t len)
{
    mca_pml_umr_request_t *req = mca_pml_umr_request_of(x);

    mca_pml_umr_peek(req->buf, req->count, req->dt, out, len);
}

/* The core is done with a receive of ours: not a control message (the
 * wrapped PML's status stands), or the message came, zero-copy or through
 * the wrapped PML after a decline. */
void mca_pml_umr_recv_done(mca_pml_umr_request_t *req)
{
    ompi_status_public_t *status = &req->super.req_status;

    if (req->x.state == UMR_MPI_X_PASSED) {
        *status = req->inner_status;
    } else {
        status->MPI_SOURCE = req->inner_status.MPI_SOURCE;
        status->MPI_TAG    = req->inner_status.MPI_TAG;
        status->MPI_ERROR  = req->x.error;
        status->_cancelled = 0;
        status->_ucount    = req->x.moved;
    }
    mca_pml_umr_request_mpi_complete(req);
}

/* A receive too small for a control message was truncated: if it was one,
 * release the sender (it waits for an ack; MPI_ERR_TRUNCATE is the
 * receiver's error only). Only a message of exactly Z bytes may be one.
 * Where its first 24 bytes are in the buffer (ob1) they name the send (its
 * sequence number); where only the 16 of the magic are (a receive of 16 to
 * 23 bytes), or none (pml ucx delivers nothing of a truncated message; a
 * receive of less than 16 bytes), the sender is released by tag
 * (umr_mpi_wire.h); ob1's first 16 bytes without the magic were data.
 * `buf` NULL: nothing to read. Called from a completion callback too: the
 * core answers from progress. */
static UCS_F_NOINLINE void
mca_pml_umr_recv_truncated(void *buf, size_t count, ompi_datatype_t *dt,
                           ompi_communicator_t *comm,
                           const ompi_status_public_t *status)
{
    umr_mpi_peer_t *peer = umr_mpi_peer_proto(
            mca_common_umr_world_rank(comm, status->MPI_SOURCE));
    size_t capacity      = (buf == NULL) ? 0 : dt->super.size * count;
    umr_mpi_ctl_t head;

    if ((peer == NULL) || (status->_ucount != UMR_MPI_CTL_SIZE)) {
        return;   /* a control message has exactly Z bytes: this was data */
    }
    if (capacity >= sizeof(head.magic)) {
        mca_pml_umr_peek(buf, count, dt, &head, capacity);
        if (umr_mpi_wire_is_magic(&head)) {
            if (capacity >= UMR_MPI_CTL_SEQ_END) {
                /* the send's sequence number is there too: answer it */
                umr_mpi_ack_truncated(peer, head.seq, 0, 0);
                return;
            }
            /* 16 to 23 bytes: the magic, not the send's number: by tag */
        } else if (!strcmp(mca_pml_umr.real_component.pmlm_version.
                           mca_component_name, "ob1")) {
            /* ob1 delivers the first bytes: without the magic, it was
             * data */
            return;
        }
    }
    umr_mpi_ack_truncated(peer, UMR_MPI_ACK_BY_TAG, umr_ompi_comm_gid(comm),
                          status->MPI_TAG);
}

/* A nonblocking receive of a derived datatype too small for a control
 * message completed: if truncated, maybe a control message (above). */
static int mca_pml_umr_recv_watch_cb(ompi_request_t *r)
{
    if (OPAL_UNLIKELY(r->req_status.MPI_ERROR == MPI_ERR_TRUNCATE) &&
        (r->req_status._ucount == UMR_MPI_CTL_SIZE)) {
        mca_pml_umr_recv_truncated(NULL, 0, NULL, r->req_mpi_object.comm,
                                   &r->req_status);
    }
    return 0;
}

/* Such a receive, watched: its completion callback is set, so only where
 * the caller leaves it alone (the tags of mca_pml_umr_recv_inplace_ok). A
 * contiguous one is watched only when its communicator's errors are not
 * fatal (mca_pml_umr_irecv): with MPI_ERRORS_ARE_FATAL (the default) a
 * truncation ends the job anyway, and the common receive costs one more
 * compare, not a callback. */
static UCS_F_NOINLINE int
mca_pml_umr_irecv_watch(void *buf, size_t count, ompi_datatype_t *dt, int src,
                        int tag, ompi_communicator_t *comm,
                        ompi_request_t **request)
{
    int rc = mca_pml_umr.real.pml_irecv(buf, count, dt, src, tag, comm,
                                        request);

    if (rc == OMPI_SUCCESS) {
        ompi_request_set_callback(*request, mca_pml_umr_recv_watch_cb, NULL);
    }
    return rc;
}

/* MPI_Start(all) of a persistent receive too small for a control message
 * that is watched like a nonblocking one (mca_pml_umr_irecv_init: a
 * derived datatype, or a communicator whose errors are not fatal): the
 * wrapped PML's own start, then the completion callback of the watch
 * (the wrapped PML clears it at each completion). */
static void mca_pml_umr_watch_started(ompi_request_t *request)
{
    if (request->req_complete_cb == NULL) {
        ompi_request_set_callback(request, mca_pml_umr_recv_watch_cb, NULL);
    }
}

static int mca_pml_umr_watch_start(size_t count, ompi_request_t **requests)
{
    return mca_pml_umr_start_each(count, requests, mca_pml_umr_watch_started);
}

static int mca_pml_umr_recv_inner_cb(ompi_request_t *inner)
{
    mca_pml_umr_request_t *req = inner->req_complete_cb_data;

    inner->req_complete_cb_data = NULL;   /* (pml ucx reads it) */
    req->inner_status = inner->req_status;
    if (!mca_pml_umr_recv_maybe_ctl(req->buf, req->count, req->dt,
                                    &inner->req_status,
                                    inner->req_status.MPI_ERROR)) {
        req->super.req_status = req->inner_status;
        mca_pml_umr_request_mpi_complete(req);
        return 0;
    }
    /* maybe a control message: decided in progress, outside the PML */
    mca_pml_umr_recv_classify(req, &inner->req_status, 1);
    return 0;
}

static int mca_pml_umr_recv_start(mca_pml_umr_request_t *req)
{
    ompi_request_t *dummy;
    int rc;

    mca_pml_umr_request_restart(req);
    if (OPAL_UNLIKELY(mca_pml_umr.stash_count > 0)) {
        rc = mca_pml_umr_stash_irecv(req, req->buf, req->count, req->dt,
                                     req->peer_rank, req->tag, req->comm,
                                     &dummy);
        if (rc != OMPI_ERR_NOT_FOUND) {
            return rc;
        }
    }
    rc = mca_pml_umr.real.pml_irecv(req->buf, req->count, req->dt,
                                    req->peer_rank, req->tag, req->comm,
                                    &req->inner);
    if (rc != OMPI_SUCCESS) {
        req->inner = NULL;
        return rc;
    }
    ++mca_pml_umr.cnt.recv_checked;
    mca_pml_umr_inner_hook(req, mca_pml_umr_recv_inner_cb);
    return OMPI_SUCCESS;
}

static mca_pml_umr_request_t *
mca_pml_umr_recv_alloc(void *buf, size_t count, ompi_datatype_t *dt, int src,
                       int tag, ompi_communicator_t *comm, bool persistent)
{
    mca_pml_umr_request_t *req;

    req = mca_pml_umr_request_alloc(MCA_PML_UMR_REQ_RECV, persistent, comm,
                                    buf, count, dt, src, tag);
    if (req != NULL) {
        req->start = mca_pml_umr_recv_start;
    }
    return req;
}

/* A receive that may match a control message, or that a probe may have
 * taken the message of (the stash). */
static UCS_F_NOINLINE int
mca_pml_umr_irecv_slow(void *buf, size_t count, ompi_datatype_t *dt, int src,
                       int tag, ompi_communicator_t *comm,
                       ompi_request_t **request)
{
    mca_pml_umr_request_t *req;
    int rc;

    if (mca_pml_umr.stash_count > 0) {
        rc = mca_pml_umr_stash_irecv(NULL, buf, count, dt, src, tag, comm,
                                     request);
        if (rc != OMPI_ERR_NOT_FOUND) {
            return rc;
        }
    }
    if (!mca_pml_umr_recv_may_match(dt, count)) {
        return mca_pml_umr.real.pml_irecv(buf, count, dt, src, tag, comm,
                                          request);
    }
    req = mca_pml_umr_recv_alloc(buf, count, dt, src, tag, comm, false);
    if (req == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    rc = mca_pml_umr_recv_start(req);
    if (rc != OMPI_SUCCESS) {
        req->free_called = 1;
        mca_pml_umr_request_mpi_complete(req);
        return rc;
    }
    *request = &req->super;
    return OMPI_SUCCESS;
}

/* Whether a receive too small for a control message may be watched, which
 * takes its completion callback (see mca_pml_umr_recv_inplace_ok). */
static inline int mca_pml_umr_recv_watch_ok(int tag)
{
    return tag > MCA_COLL_BASE_TAG_NONBLOCKING_BASE;
}

/* Whether a receive may be hooked in place, which takes its completion
 * callback: the caller must not set one. The application cannot (its tags,
 * MPI_ANY_TAG), nor do the blocking collectives (their fixed tags, above
 * MCA_COLL_BASE_TAG_NONBLOCKING_BASE). The tags below are handed out to
 * nonblocking collectives (libnbc; coll/adapt, which sets its callback on
 * the receives it posts, in 4.1 to 6.0) and the like: those get pml/umr's
 * wrapper request, whose callback slot stays the caller's. */
static inline int mca_pml_umr_recv_inplace_ok(int tag)
{
    return OPAL_LIKELY(mca_pml_umr.recv_inplace) &&
           (tag > MCA_COLL_BASE_TAG_NONBLOCKING_BASE);
}

int mca_pml_umr_irecv(void *buf, size_t count, ompi_datatype_t *dt, int src,
                      int tag, ompi_communicator_t *comm,
                      ompi_request_t **request)
{
    /* tail calls only: no stack frame on the way to the wrapped PML */
    if (OPAL_LIKELY(mca_pml_umr.stash_count == 0)) {
        if (OPAL_LIKELY(!mca_pml_umr_recv_may_match(dt, count))) {
            if ((OPAL_LIKELY(dt->super.flags &
                             OPAL_DATATYPE_FLAG_CONTIGUOUS) &&
                 OPAL_LIKELY(comm->error_handler ==
                             &ompi_mpi_errors_are_fatal.eh)) ||
                (tag <= MCA_COLL_BASE_TAG_NONBLOCKING_BASE)) {
                return mca_pml_umr.real.pml_irecv(buf, count, dt, src, tag,
                                                  comm, request);
            }
            return mca_pml_umr_irecv_watch(buf, count, dt, src, tag, comm,
                                           request);
        }
        if (OPAL_LIKELY(mca_pml_umr_recv_inplace_ok(tag))) {
            return mca_pml_umr_hook_irecv(buf, count, dt, src, tag, comm,
                                          request);
        }
    }
    return mca_pml_umr_irecv_slow(buf, count, dt, src, tag, comm, request);
}

/* A blocking receive got a message of Z bytes with the magic (into the
 * user's buffer): maybe a control message; the get overwrites it. */
static UCS_F_NOINLINE int
mca_pml_umr_recv_blocking_ctl(void *buf, size_t count, ompi_datatype_t *dt,
                              int tag, ompi_communicator_t *comm,
                              const ompi_status_public_t *sp,
                              ompi_status_public_t *status)
{
    mca_pml_umr_request_t *req;
    ompi_request_t *oreq;

    req = mca_pml_umr_recv_alloc(buf, count, dt, sp->MPI_SOURCE, tag, comm,
                                 false);
    if (req == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    req->inner_status           = *sp;
    req->inner_status.MPI_ERROR = MPI_SUCCESS;
    mca_pml_umr_recv_classify(req, sp, 0);
    oreq = &req->super;
    return mca_pml_umr_request_wait_free(&oreq, status);
}

int mca_pml_umr_recv(void *buf, size_t count, ompi_datatype_t *dt, int src,
                     int tag, ompi_communicator_t *comm,
                     ompi_status_public_t *status)
{
    ompi_request_t *req;
    int rc;

    ompi_status_public_t st, *sp;

    /* The wrapped PML's own blocking receive (its own wait loop), checked
     * after the fact: no request of ours unless a control message came. */
    if (OPAL_LIKELY(mca_pml_umr.stash_count == 0)) {
        sp = (status == MPI_STATUS_IGNORE) ? &st : status;
        rc = mca_pml_umr.real.pml_recv(buf, count, dt, src, tag, comm, sp);
        if (OPAL_LIKELY(!mca_pml_umr_recv_may_match(dt, count))) {
            /* (a blocking receive leaves status->MPI_ERROR alone) */
            if (OPAL_UNLIKELY(rc == MPI_ERR_TRUNCATE)) {
                mca_pml_umr_recv_truncated(buf, count, dt, comm, sp);
            }
            return rc;
        }
        ++mca_pml_umr.cnt.recv_checked;
        if (OPAL_LIKELY(!mca_pml_umr_recv_maybe_ctl(buf, count, dt, sp, rc))) {
            return rc;
        }
        return mca_pml_umr_recv_blocking_ctl(buf, count, dt, tag, comm, sp,
                                             status);
    }
    rc = mca_pml_umr_irecv(buf, count, dt, src, tag, comm, &req);
    if (rc != OMPI_SUCCESS) {
        return rc;
    }
    return mca_pml_umr_request_wait_free(&req, status);
}

int mca_pml_umr_irecv_init(void *buf, size_t count, ompi_datatype_t *dt,
                           int src, int tag, ompi_communicator_t *comm,
                           ompi_request_t **request)
{
    mca_pml_umr_request_t *req;
    int rc;

    if (OPAL_LIKELY(!mca_pml_umr_recv_may_match(dt, count))) {
        rc = mca_pml_umr.real.pml_irecv_init(buf, count, dt, src, tag, comm,
                                             request);
        /* watched as mca_pml_umr_irecv watches a nonblocking one: each
         * MPI_Start sets the callback that releases a truncated zero-copy
         * send (the error handler as it is now) */
        if ((rc == OMPI_SUCCESS) &&
            (!(dt->super.flags & OPAL_DATATYPE_FLAG_CONTIGUOUS) ||
             (comm->error_handler != &ompi_mpi_errors_are_fatal.eh)) &&
            mca_pml_umr_recv_watch_ok(tag)) {
            (*request)->req_start = mca_pml_umr_watch_start;
        }
        return rc;
    }
    if ((mca_pml_umr.recv_inplace == MCA_PML_UMR_INPLACE_OB1) &&
        mca_pml_umr_recv_inplace_ok(tag)) {
        /* each MPI_Start hooks ob1's request in place */
        rc = mca_pml_umr.real.pml_irecv_init(buf, count, dt, src, tag, comm,
                                             request);
        if (rc == OMPI_SUCCESS) {
            (*request)->req_start = mca_pml_umr_hook_start;
        }
        return rc;
    }
    req = mca_pml_umr_recv_alloc(buf, count, dt, src, tag, comm, true);
    if (req == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    *request = &req->super;
    return OMPI_SUCCESS;
}

int mca_pml_umr_start(size_t count, ompi_request_t **requests)
{
    mca_pml_umr_request_t *req;
    size_t i;
    int rc;

    for (i = 0; i < count; ++i) {
        if (requests[i]->req_start == mca_pml_umr_hook_start) {
            /* a persistent receive hooked in place (MCA_PML_CALL(start)
             * of the collectives, not MPI_Start) */
            rc = mca_pml_umr_hook_start(1, &requests[i]);
        } else if (requests[i]->req_start == mca_pml_umr_watch_start) {
            rc = mca_pml_umr_watch_start(1, &requests[i]);
        } else if (!mca_pml_umr_request_is_ours(requests[i])) {
            rc = mca_pml_umr.real.pml_start(1, &requests[i]);
        } else {
            req = (mca_pml_umr_request_t*)requests[i];
            rc  = req->start(req);
        }
        if (rc != OMPI_SUCCESS) {
            return rc;
        }
    }
    return OMPI_SUCCESS;
}
