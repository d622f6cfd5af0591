/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr receive side: receives that may match a control message are
 * posted to the wrapped PML unchanged, behind a pml/umr request. When the
 * wrapped PML completes one with exactly Z bytes from a pml/umr peer, the
 * progress function checks the magic and, for a control message, gets the
 * data from the sender's layout key into the receive layout and acks.
 */
#include "pml_umr_recv.h"
#include "pml_umr_choose.h"
#include "pml_umr_fault.h"
#include "pml_umr_hook.h"
#include "pml_umr_probe.h"
#include "pml_umr_request.h"
#include "common_umr.h"
#include "common_umr_dtype.h"
#include "common_umr_help.h"

#include <opal/datatype/opal_convertor.h>

#include <ompi/mca/coll/base/coll_tags.h>

#include <stdlib.h>
#include <string.h>

/* The request completes with the wrapped PML's status: not a control
 * message (or cancelled, or failed). */
static void mca_pml_umr_recv_passthrough(mca_pml_umr_request_t *req)
{
    req->super.req_status = req->inner_status;
    mca_pml_umr_request_mpi_complete(req);
}

/* The receive is done: zero-copy (`zcopy`: counted here), or its data
 * came through the wrapped PML after a decline (counted at the decline). */
static void mca_pml_umr_recv_finish(mca_pml_umr_request_t *req, int zcopy)
{
    ompi_status_public_t *status = &req->super.req_status;

    status->MPI_SOURCE = req->inner_status.MPI_SOURCE;
    status->MPI_TAG    = req->inner_status.MPI_TAG;
    status->MPI_ERROR  = req->error;
    status->_cancelled = 0;
    status->_ucount    = (req->error == MPI_ERR_TRUNCATE) ? req->ctl.length :
                                                            req->length;
    if (req->peer_held) {
        req->peer_held = 0;
        mca_common_umr_peer_release(req->peer);
    }
    if (zcopy) {
        if ((req->error == MPI_SUCCESS) || (req->error == MPI_ERR_TRUNCATE)) {
            ++mca_pml_umr.cnt.zcopy_recvs;
        } else {
            ++mca_pml_umr.cnt.errors;
        }
    }
    mca_common_umr_progress_ref(-1);
    mca_pml_umr_request_mpi_complete(req);
}

/* The answer to the sender (pml_umr_wire.h): done, or declined (`flags`). */
static void mca_pml_umr_recv_ack(mca_pml_umr_request_t *req, uint32_t flags)
{
    mca_pml_umr_ack_t *ack = malloc(sizeof(*ack));
    ompi_request_t *sreq;

    if (ack == NULL) {
        return;
    }
    if (req->step == MCA_PML_UMR_STEP_TRUNC) {
        ack->seq  = MCA_PML_UMR_ACK_BY_TAG;
        ack->tag  = req->tag;
        ack->cid  = umr_ompi_comm_gid(req->comm);
    } else {
        ack->seq  = req->ctl.seq;
        ack->tag  = 0;
        ack->cid  = 0;
    }
    ack->error = (req->error == MPI_ERR_TRUNCATE) ? MPI_SUCCESS : req->error;
    ack->flags = flags;
    ack->pad   = 0;
    if (mca_pml_umr.real.pml_isend(ack, sizeof(*ack), &ompi_mpi_byte.dt,
                                   req->peer->world_rank, MCA_PML_UMR_TAG_ACK,
                                   MCA_PML_BASE_SEND_STANDARD,
                                   &ompi_mpi_comm_world.comm, &sreq) ==
        OMPI_SUCCESS) {
        mca_common_umr_reap_add_buf(sreq, ack);
    } else {
        free(ack);
    }
}

static int mca_pml_umr_recv_fb_cb(ompi_request_t *fb)
{
    mca_pml_umr_request_t *req = mca_common_umr_cb_data_take(fb);

    req->length = fb->req_status._ucount;
    req->error  = fb->req_status.MPI_ERROR;
    req->fb     = NULL;
    mca_common_umr_reap_add(fb);
    mca_pml_umr_recv_finish(req, 0);
    return 0;
}

/* Decline the control message: the data comes through the wrapped PML
 * (pml_umr_wire.h). `why` NULL: zero-copy would lose, or the receive
 * layout cannot be moved zero-copy (not decoded, beyond the rail's key
 * budget); otherwise a fault on the zero-copy path, and the peer is
 * retired. The get's resources are released already. */
static void mca_pml_umr_recv_decline(mca_pml_umr_request_t *req,
                                     uint32_t flags);

static void mca_pml_umr_recv_fallback(mca_pml_umr_request_t *req,
                                      const char *why)
{
    if (why != NULL) {
        ++mca_pml_umr.cnt.fault_declines;
        mca_common_umr_peer_retire(req->peer, why);
    } else {
        ++mca_pml_umr.cnt.declined;
    }
    mca_pml_umr_recv_decline(req, (why != NULL) ? MCA_PML_UMR_ACK_RETIRE : 0);
}

/* The decline itself: the DATA receive posted, then the answer FALLBACK
 * (| `flags`). Needs no rail: a peer no rail reaches is declined too. */
static void mca_pml_umr_recv_decline(mca_pml_umr_request_t *req,
                                     uint32_t flags)
{
    int rc;

    rc = mca_pml_umr.real.pml_irecv(req->buf, req->count, req->dt,
                                    req->peer->world_rank,
                                    MCA_PML_UMR_TAG_DATA,
                                    &ompi_mpi_comm_world.comm, &req->fb);
    if (rc != OMPI_SUCCESS) {
        req->fb    = NULL;
        req->error = MPI_ERR_OTHER;
        mca_pml_umr_recv_ack(req, 0);   /* the sender must not wait */
        mca_pml_umr_recv_finish(req, 1);
        return;
    }
    mca_pml_umr_recv_ack(req, MCA_PML_UMR_ACK_FALLBACK | flags |
                              (req->busy ? MCA_PML_UMR_ACK_BUSY : 0));
    /* last: the data may be there already, and completes the request */
    ompi_request_set_callback(req->fb, mca_pml_umr_recv_fb_cb, req);
}

/* A fault on the zero-copy path (`status`): decline and retire the peer,
 * and the rail too when the fault is the rail's (an md UMR timeout, an md
 * the transport retired: port down). */
static void mca_pml_umr_recv_fault(mca_pml_umr_request_t *req,
                                   ucs_status_t status)
{
    if ((status == UCS_ERR_TIMED_OUT) ||
        !mca_common_umr_rail_alive(req->peer->rail)) {
        mca_common_umr_rail_retire(req->peer->rail,
                                   ucs_status_string(status));
    }
    mca_pml_umr_recv_fallback(req, ucs_status_string(status));
}

static void mca_pml_umr_recv_get_done(uct_completion_t *comp)
{
    mca_pml_umr_request_t *req = ucs_container_of(comp, mca_pml_umr_request_t,
                                                  comp);

    if ((comp->status == UCS_OK) &&
        mca_pml_umr_fault(MCA_PML_UMR_FAULT_COMPLETION)) {
        comp->status = UCS_ERR_IO_ERROR;
    }
    /* the receive's memory handle is its region's (mca_pml_umr_recv_get) */
    mca_common_umr_region_put(req->region);
    req->region = NULL;
    req->memh   = NULL;
    uct_umr_ep_rkey_release(req->peer->ep, req->rkey);
    req->has_rkey = 0;
    if (comp->status != UCS_OK) {
        /* what the get wrote is overwritten by the data that follows */
        mca_pml_umr_recv_fault(req, comp->status);
        return;
    }
    mca_pml_umr_recv_ack(req, 0);
    mca_pml_umr_recv_finish(req, 1);
}

static void mca_pml_umr_recv_get(mca_pml_umr_request_t *req)
{
    const umr_mpi_dtype_t *info = mca_common_umr_dtype_get(req->dt);
    mca_common_umr_rail_t *rail    = req->peer->rail;
    size_t capacity             = req->dt->super.size * req->count;
    const char *why             = NULL;
    int rc                      = OMPI_ERROR;
    ucs_status_t status;

    req->length = req->ctl.length;
    if (req->length > capacity) {
        req->length = capacity;
        req->error  = MPI_ERR_TRUNCATE;
    }
    if (!req->has_rkey) {
        status = uct_umr_ep_rkey_unpack(req->peer->ep, req->ctl.data,
                                        &req->rkey);
        if (status != UCS_OK) {
            goto err;
        }
        req->has_rkey = 1;
    }
    if ((info == NULL) || (info->layout == NULL)) {
        /* a receive type the decoder does not take: declined */
        MCA_PML_UMR_VERBOSE(20, "receive type not decoded: %lu bytes "
                            "declined", (unsigned long)req->length);
        goto decline;
    }
    if (req->memh == NULL) {
        if (mca_pml_umr_fault(MCA_PML_UMR_FAULT_KEY)) {
            status = UCS_ERR_NO_RESOURCE;
        } else {
            rc     = mca_common_umr_region_acquire(rail, req->buf,
                                                   info->layout, req->count,
                                                   PROT_READ | PROT_WRITE,
                                                   &req->region, &why);
            status = (rc == OMPI_SUCCESS) ? UCS_OK : UCS_ERR_NO_MEMORY;
            if (status == UCS_OK) {
                req->memh = req->region->memh;
            }
        }
        if (status != UCS_OK) {
            req->memh   = NULL;
            req->region = NULL;
            if ((rc == OMPI_ERR_NOT_AVAILABLE) ||
                (rc == OMPI_ERR_TEMP_OUT_OF_RESOURCE)) {
                /* the receive's memory does not register (a type over
                 * separate allocations, from MPI_BOTTOM): declined, not a
                 * fault (the peer stays) */
                MCA_PML_UMR_VERBOSE(20, "receive layout gets no key (%s): "
                                    "%lu bytes declined", why,
                                    (unsigned long)req->length);
                goto decline;
            }
            goto err_rkey;
        }
    }

    req->comp.func   = mca_pml_umr_recv_get_done;
    req->comp.count  = 1;
    req->comp.status = UCS_OK;
    if (mca_pml_umr_fault(MCA_PML_UMR_FAULT_MDWAIT)) {
        status = UCS_ERR_TIMED_OUT;
    } else if (mca_pml_umr_fault(MCA_PML_UMR_FAULT_POST)) {
        status = UCS_ERR_IO_ERROR;
    } else {
        status = uct_umr_ep_get_layout(req->peer->ep, req->memh, req->buf,
                                       info->layout, req->count, 0,
                                       req->length, 0, req->rkey, &req->comp);
    }
    if (OPAL_UNLIKELY(status == UCS_ERR_EXCEEDS_LIMIT)) {
        /* the receive layout is beyond the rail's key budget, found
         * before any data moved: declined, the data comes through the
         * wrapped PML (not a fault: the peer stays) */
        mca_common_umr_region_put(req->region);
        req->region = NULL;
        req->memh   = NULL;
        MCA_PML_UMR_VERBOSE(20, "receive layout beyond the key budget: "
                            "%lu bytes declined",
                            (unsigned long)req->length);
        uct_umr_ep_rkey_release(req->peer->ep, req->rkey);
        req->has_rkey = 0;
        goto decline;
    }
    if (status == UCS_INPROGRESS) {
        return;
    } else if (status == UCS_ERR_NO_RESOURCE) {
        req->step = MCA_PML_UMR_STEP_GET;
        mca_common_umr_work_post(&req->work);
        return;
    }
    req->comp.status = status;
    mca_pml_umr_recv_get_done(&req->comp);
    return;

err_rkey:
    uct_umr_ep_rkey_release(req->peer->ep, req->rkey);
err:
    req->has_rkey = 0;
    mca_pml_umr_recv_fault(req, status);
    return;

decline:
    if (req->has_rkey) {
        uct_umr_ep_rkey_release(req->peer->ep, req->rkey);
        req->has_rkey = 0;
    }
    req->error = MPI_SUCCESS;   /* a truncation is the wrapped PML's to say */
    mca_pml_umr_recv_fallback(req, NULL);
}

/* A receive too small for a control message was truncated: if it was one,
 * release the sender (it waits for an ack; MPI_ERR_TRUNCATE is the
 * receiver's error only). Only a message of exactly Z bytes may be one.
 * Where its first 24 bytes are in the buffer (ob1) they name the send
 * (its sequence number);
 * where only the 16 of the magic are (a receive of 16 to 23 bytes), or
 * none (pml ucx delivers nothing of a truncated message; a receive of
 * less than 16 bytes), the sender is released by tag (pml_umr_wire.h);
 * ob1's first 16 bytes without the magic were data. `buf` NULL: nothing
 * to read. Called from a completion callback too, so the ack by tag is
 * sent from progress. */
static UCS_F_NOINLINE void
mca_pml_umr_recv_truncated(void *buf, size_t count, ompi_datatype_t *dt,
                           ompi_communicator_t *comm,
                           const ompi_status_public_t *status)
{
    mca_common_umr_peer_t *peer = mca_common_umr_peer_get_umr(comm,
                                                              status->MPI_SOURCE);
    size_t capacity = (buf == NULL) ? 0 : dt->super.size * count;
    mca_pml_umr_request_t *req;

    if ((peer == NULL) ||
        (NULL == (req = mca_pml_umr_request_alloc(MCA_PML_UMR_REQ_RECV, false,
                                                  comm, NULL, 0, NULL, 0,
                                                  status->MPI_TAG)))) {
        return;
    }
    req->peer = peer;
    if (status->_ucount != MCA_PML_UMR_CTL_SIZE) {
        /* a control message has exactly Z bytes: this was data */
        req->free_called = 1;
        mca_pml_umr_request_mpi_complete(req);
        return;
    }
    if (capacity >= sizeof(req->ctl.magic)) {
        mca_pml_umr_peek(buf, count, dt, &req->ctl, capacity);
        if (mca_pml_umr_ctl_is_magic(&req->ctl)) {
            if (capacity >= offsetof(mca_pml_umr_ctl_t, length)) {
                /* the send's sequence number is there too: answer it */
                req->error = MPI_SUCCESS;
                mca_pml_umr_recv_ack(req, 0);
                req->free_called = 1;
                mca_pml_umr_request_mpi_complete(req);
                return;
            }
            /* 16 to 23 bytes: the magic, not the send's number: by tag */
        } else if (!strcmp(mca_pml_umr.real_component.pmlm_version.
                           mca_component_name, "ob1")) {
            /* ob1 delivers the first bytes: without the magic, it was
             * data */
            req->free_called = 1;
            mca_pml_umr_request_mpi_complete(req);
            return;
        }
    }
    req->step = MCA_PML_UMR_STEP_TRUNC;
    mca_common_umr_progress_ref(1);
    mca_common_umr_work_post(&req->work);
}

/* A nonblocking receive of a derived datatype too small for a control
 * message completed: if truncated, maybe a control message (above). */
static int mca_pml_umr_recv_watch_cb(ompi_request_t *r)
{
    if (OPAL_UNLIKELY(r->req_status.MPI_ERROR == MPI_ERR_TRUNCATE) &&
        (r->req_status._ucount == MCA_PML_UMR_CTL_SIZE)) {
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
static int mca_pml_umr_watch_start(size_t count, ompi_request_t **requests)
{
    size_t i;
    int rc;

    for (i = 0; i < count; ++i) {
        rc = mca_pml_umr.real.pml_start(1, &requests[i]);
        if (rc != OMPI_SUCCESS) {
            return rc;
        }
        if (requests[i]->req_complete_cb == NULL) {
            ompi_request_set_callback(requests[i], mca_pml_umr_recv_watch_cb,
                                      NULL);
        }
    }
    return OMPI_SUCCESS;
}

/* Zero-copy for this control message, knowing both layouts (the sender's
 * block summary, the receive type's blocks for the bytes that come), or
 * decline. A truncating receive is not declined (the get truncates). */
static int mca_pml_umr_recv_choose(mca_pml_umr_request_t *req)
{
    const umr_mpi_dtype_t *info;
    mca_pml_umr_choose_peer_t cp;
    size_t rblocks = 1, elems;
    double density = 1.0;

    if (req->ctl.length > req->dt->super.size * req->count) {
        return 1;
    }
    if (mca_pml_umr.zcopy_mode == MCA_PML_UMR_ZCOPY_ON) {
        return 1;
    }
    info = mca_common_umr_dtype_get(req->dt);
    if ((info != NULL) && (info->layout != NULL) && (info->size > 0)) {
        elems   = (req->ctl.length + info->size - 1) / info->size;
        rblocks = info->num_blocks * elems;
        density = (info->extent > 0) ? (double)info->size / info->extent :
                                       1.0;
    }
    cp.engine    = req->peer->rail->is_sw ? "sw" : "mlx5";
    cp.same_host = req->peer->rail->is_sw;
    cp.pml       = mca_pml_umr.real_component.pmlm_version.mca_component_name;
    cp.reconnect = mca_common_umr_peer_reconnects(req->peer);
    return mca_pml_umr_choose_recv(req->ctl.length, req->ctl.sblocks, rblocks,
                                   density, &cp, mca_pml_umr.zcopy_mode);
}

/* The next step of a receive (in progress, or at once for a blocking one). */
static void mca_pml_umr_recv_step(mca_pml_umr_request_t *req)
{
    int rc;

    if (OPAL_UNLIKELY(req->step == MCA_PML_UMR_STEP_TRUNC)) {
        mca_pml_umr_recv_ack(req, 0);
        mca_common_umr_progress_ref(-1);
        req->free_called = 1;
        mca_pml_umr_request_mpi_complete(req);
        return;
    }
    if (req->step == MCA_PML_UMR_STEP_CLASSIFY) {
        /* a pml/umr peer by the modex, reached by a rail or not: as its
         * sender decided (mca_pml_umr_send_escape_peer) */
        req->peer = mca_common_umr_peer_get_umr(req->comm,
                                                req->inner_status.MPI_SOURCE);
        if (req->peer != NULL) {
            mca_pml_umr_peek(req->buf, req->count, req->dt, &req->ctl,
                             MCA_PML_UMR_CTL_SIZE);
        }
        if ((req->peer == NULL) || !mca_pml_umr_ctl_is_magic(&req->ctl)) {
            mca_common_umr_progress_ref(-1);
            mca_pml_umr_recv_passthrough(req);
            return;
        }
        req->step = MCA_PML_UMR_STEP_CTL;
    }
    if (req->step == MCA_PML_UMR_STEP_CTL) {
        MCA_PML_UMR_VERBOSE(20, "control message from rank %d: %lu bytes",
                            req->peer->world_rank,
                            (unsigned long)req->ctl.length);
        if (req->peer->rail == NULL) {
            /* no rail of ours reaches the sender: declined (no rail
             * needed); one with a key (its rail reaches us) also retires
             * us at the sender, which passes through from now on */
            ++mca_pml_umr.cnt.declined;
            mca_pml_umr_recv_decline(req, (req->ctl.rkey_len != 0) ?
                                          (MCA_PML_UMR_ACK_RETIRE |
                                           MCA_PML_UMR_ACK_NORAIL) : 0);
            return;
        }
        if (mca_common_umr_peer_retired(req->peer)) {
            mca_pml_umr_recv_fallback(req, "retired");
            return;
        }
        if (req->ctl.rkey_len == 0) {
            /* an escape without a key (its sender's key could not be made,
             * or it retired us or its rail): declined, nothing retired */
            mca_pml_umr_recv_fallback(req, NULL);
            return;
        }
        if ((req->ctl.rkey_len != req->peer->rail->rkey_size) ||
            (req->ctl.rkey_len + req->ctl.addr_len > sizeof(req->ctl.data))) {
            mca_pml_umr_recv_fallback(req, "malformed control message");
            return;
        }
        if (!mca_pml_umr_recv_choose(req)) {
            mca_pml_umr_recv_fallback(req, NULL);
            return;
        }
        rc = mca_pml_umr_fault(MCA_PML_UMR_FAULT_CONNECT) ? -1 :
             mca_common_umr_peer_handshake(req->peer,
                                           (req->ctl.flags &
                                            MCA_PML_UMR_CTL_ADDR) ?
                                           req->ctl.data + req->ctl.rkey_len :
                                           NULL, req->ctl.addr_len);
        if (rc == MCA_COMMON_UMR_PEER_BUSY) {
            /* no connection now (budget): this message only */
            req->busy = 1;
            mca_pml_umr_recv_fallback(req, NULL);
            return;
        }
        if (rc < 0) {
            mca_pml_umr_recv_fallback(req, "connect failed");
            return;
        }
        /* connected (or connecting): the peer stays until we are done */
        mca_common_umr_peer_hold(req->peer);
        req->peer_held = 1;
        req->step = MCA_PML_UMR_STEP_GET;
        if (rc == 0) {
            mca_common_umr_peer_wait(req->peer, &req->work);
            return;
        }
    }
    mca_pml_umr_recv_get(req);
}

static int mca_pml_umr_recv_inner_cb(ompi_request_t *inner)
{
    mca_pml_umr_request_t *req = mca_common_umr_cb_data_take(inner);

    req->inner_status = inner->req_status;
    if (!mca_pml_umr_recv_maybe_ctl(req->buf, req->count, req->dt,
                                    &inner->req_status,
                                    inner->req_status.MPI_ERROR)) {
        mca_pml_umr_recv_passthrough(req);
        return 0;
    }
    /* maybe a control message: decided in progress, outside the PML */
    req->step = MCA_PML_UMR_STEP_CLASSIFY;
    mca_common_umr_work_post(&req->work);
    mca_common_umr_progress_ref(1);
    return 0;
}

/* Run by progress for receives on the work list (mca_pml_umr.recv_run). */
void mca_pml_umr_recv_run(mca_common_umr_work_t *work)
{
    mca_pml_umr_recv_step(ucs_container_of(work, mca_pml_umr_request_t,
                                           work));
}

static int mca_pml_umr_recv_start(mca_pml_umr_request_t *req)
{
    ompi_request_t *dummy;
    int rc;

    mca_pml_umr_request_restart(req);
    req->has_rkey = 0;
    req->memh     = NULL;
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
    req->step                   = MCA_PML_UMR_STEP_CLASSIFY;
    mca_common_umr_progress_ref(1);
    mca_pml_umr_recv_step(req);
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
