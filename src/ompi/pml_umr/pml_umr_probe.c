/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr probes: a probe must report a zero-copy message's real size, but
 * the wrapped PML only sees its Z-byte control message. So a probe that
 * finds a Z-byte message from a pml/umr peer takes it out of the wrapped
 * PML (improbe + mrecv) and keeps it in pml/umr's stash, with every older
 * message from the same source (so that non-overtaking still holds: all that
 * is left in the wrapped PML from that source is newer than the stash).
 * While the stash is not empty, receives and probes look there first.
 */
#include "pml_umr_probe.h"
#include "common_umr_binding.h"

#include <stdlib.h>
#include <string.h>

/* ompi_message_t.peer of pml/umr's messages (the PML's are ranks >= 0,
 * MPI_MESSAGE_NO_PROC has MPI_PROC_NULL) */
#define MCA_PML_UMR_MSG_PEER  (-1000)

typedef struct mca_pml_umr_stash {
    opal_list_item_t      super;
    ompi_communicator_t   *comm;
    ompi_status_public_t  status;    /* _ucount: the real message size */
    ompi_message_t        *msg;      /* not received yet (not Z bytes) */
    int                   is_ctl;
    umr_mpi_ctl_t         data;      /* Z bytes: control message or data */
} mca_pml_umr_stash_t;

static opal_list_t mca_pml_umr_stash_list;
static int mca_pml_umr_stash_init_done;

static void mca_pml_umr_stash_lazy_init(void)
{
    if (!mca_pml_umr_stash_init_done) {
        OBJ_CONSTRUCT(&mca_pml_umr_stash_list, opal_list_t);
        mca_pml_umr_stash_init_done = 1;
    }
}

static int mca_pml_umr_stash_matches(const mca_pml_umr_stash_t *e, int src,
                                     int tag, ompi_communicator_t *comm)
{
    return (e->comm == comm) &&
           ((src == MPI_ANY_SOURCE) || (src == e->status.MPI_SOURCE)) &&
           (((tag == MPI_ANY_TAG) && (e->status.MPI_TAG >= 0)) ||
            (tag == e->status.MPI_TAG));
}

static mca_pml_umr_stash_t *mca_pml_umr_stash_find(int src, int tag,
                                                   ompi_communicator_t *comm)
{
    mca_pml_umr_stash_t *e;

    if (mca_pml_umr.stash_count == 0) {
        return NULL;
    }
    OPAL_LIST_FOREACH(e, &mca_pml_umr_stash_list, mca_pml_umr_stash_t) {
        if (mca_pml_umr_stash_matches(e, src, tag, comm)) {
            return e;
        }
    }
    return NULL;
}

static void mca_pml_umr_stash_remove(mca_pml_umr_stash_t *e)
{
    opal_list_remove_item(&mca_pml_umr_stash_list, &e->super);
    --mca_pml_umr.stash_count;
}

static void mca_pml_umr_stash_free(mca_pml_umr_stash_t *e)
{
    OBJ_RELEASE(e->comm);
    OBJ_DESTRUCT(&e->super);
    free(e);
}

/* An entry for a message the wrapped PML matched as (msg, status): a Z-byte
 * message from a pml/umr peer is received now and classified. */
static mca_pml_umr_stash_t *mca_pml_umr_stash_make(ompi_communicator_t *comm,
                                                   ompi_message_t *msg,
                                                   const ompi_status_public_t *st)
{
    mca_pml_umr_stash_t *e = calloc(1, sizeof(*e));
    ompi_status_public_t rst;

    if (e == NULL) {
        return NULL;
    }
    OBJ_CONSTRUCT(&e->super, opal_list_item_t);
    e->comm   = comm;
    e->status = *st;
    OBJ_RETAIN(comm);
    if ((st->_ucount == UMR_MPI_CTL_SIZE) &&
        (umr_mpi_peer_proto(mca_common_umr_world_rank(comm,
                                                      st->MPI_SOURCE)) !=
         NULL)) {
        mca_pml_umr.real.pml_mrecv(&e->data, UMR_MPI_CTL_SIZE,
                                   &ompi_mpi_byte.dt, &msg, &rst);
        e->is_ctl = umr_mpi_wire_is_magic(&e->data);
        if (e->is_ctl) {
            e->status._ucount = e->data.length;
        }
    } else {
        e->msg = msg;
    }
    return e;
}

/* Takes messages from `src` out of the wrapped PML, oldest first, up to the
 * first with tag `tag` (which a probe has just seen there). */
static mca_pml_umr_stash_t *mca_pml_umr_stash_drain(int src, int tag,
                                                    ompi_communicator_t *comm)
{
    mca_pml_umr_stash_t *e = NULL;
    ompi_status_public_t st;
    ompi_message_t *msg;
    int matched;

    mca_pml_umr_stash_lazy_init();
    do {
        matched = 0;
        if ((mca_pml_umr.real.pml_improbe(src, MPI_ANY_TAG, comm, &matched,
                                          &msg, &st) != OMPI_SUCCESS) ||
            !matched || (NULL == (e = mca_pml_umr_stash_make(comm, msg, &st)))) {
            return NULL; /* cannot happen: the probed message is there */
        }
        opal_list_append(&mca_pml_umr_stash_list, &e->super);
        ++mca_pml_umr.stash_count;
    } while (st.MPI_TAG != tag);
    return e;
}

/* What a probe of the wrapped PML found is the answer (no match, or not a
 * Z-byte message from a pml/umr peer): 1, with `status` filled. */
static int mca_pml_umr_probe_passes(int rc, int matched,
                                    const ompi_status_public_t *st,
                                    ompi_communicator_t *comm,
                                    ompi_status_public_t *status)
{
    if ((rc == OMPI_SUCCESS) && matched &&
        (st->_ucount == UMR_MPI_CTL_SIZE) &&
        (umr_mpi_peer_proto(mca_common_umr_world_rank(comm,
                                                      st->MPI_SOURCE)) !=
         NULL)) {
        return 0;
    }
    if ((rc == OMPI_SUCCESS) && matched) {
        mca_pml_umr_status_copy(status, st);
    }
    return 1;
}

/* The wrapped PML's probe found a message (`matched`, status `st`): its own
 * when it passes, else the zero-copy message it is, drained into the stash
 * (its real size in the status). */
static int mca_pml_umr_probe_found(int rc, int matched,
                                   const ompi_status_public_t *st,
                                   ompi_communicator_t *comm,
                                   ompi_status_public_t *status)
{
    mca_pml_umr_stash_t *e;

    if (mca_pml_umr_probe_passes(rc, matched, st, comm, status)) {
        return rc;
    }
    e = mca_pml_umr_stash_drain(st->MPI_SOURCE, st->MPI_TAG, comm);
    if (e == NULL) {
        return OMPI_ERROR;
    }
    mca_pml_umr_status_copy(status, &e->status);
    return OMPI_SUCCESS;
}

int mca_pml_umr_iprobe(int src, int tag, ompi_communicator_t *comm,
                       int *matched, ompi_status_public_t *status)
{
    mca_pml_umr_stash_t *e = mca_pml_umr_stash_find(src, tag, comm);
    ompi_status_public_t st;
    int rc;

    if (e == NULL) {
        rc = mca_pml_umr.real.pml_iprobe(src, tag, comm, matched, &st);
        return mca_pml_umr_probe_found(rc, *matched, &st, comm, status);
    }
    *matched = 1;
    mca_pml_umr_status_copy(status, &e->status);
    return OMPI_SUCCESS;
}

/* The wrapped PML's own blocking probe (its own wait, no loop of ours):
 * a probe costs nothing more unless what it finds is a Z-byte message from
 * a pml/umr peer. No stash entry can appear while it waits (only probes
 * make them). */
int mca_pml_umr_probe(int src, int tag, ompi_communicator_t *comm,
                      ompi_status_public_t *status)
{
    mca_pml_umr_stash_t *e = mca_pml_umr_stash_find(src, tag, comm);
    ompi_status_public_t st;
    int rc;

    if (e == NULL) {
        rc = mca_pml_umr.real.pml_probe(src, tag, comm, &st);
        return mca_pml_umr_probe_found(rc, 1, &st, comm, status);
    }
    mca_pml_umr_status_copy(status, &e->status);
    return OMPI_SUCCESS;
}

/* ---- matched probes ----------------------------------------------------- */

static int mca_pml_umr_msg_is_ours(const ompi_message_t *msg)
{
    mca_pml_umr_stash_t *e;

    if ((msg == NULL) || (msg == MPI_MESSAGE_NO_PROC)) {
        return 0;
    }
    /* our messages carry their entry with this comm pointer check */
    e = msg->req_ptr;
    return (msg->peer == MCA_PML_UMR_MSG_PEER) && (e != NULL);
}

static ompi_message_t *mca_pml_umr_msg_wrap(mca_pml_umr_stash_t *e)
{
    ompi_message_t *msg;

    if (e->msg != NULL) {
        /* not a Z-byte message: hand out the wrapped PML's own handle */
        msg = e->msg;
        mca_pml_umr_stash_free(e);
        return msg;
    }
    msg = ompi_message_alloc();
    if (msg == NULL) {
        return NULL;
    }
    msg->comm    = e->comm;
    msg->req_ptr = e;
    msg->peer    = MCA_PML_UMR_MSG_PEER;
    msg->count   = e->status._ucount;
    return msg;
}

/* The wrapped PML matched `*message` (status `st`): pml/umr's message when
 * it is a Z-byte message from a pml/umr peer, else the PML's as it is. */
static int mca_pml_umr_mprobe_found(int rc, ompi_communicator_t *comm,
                                    ompi_message_t **message,
                                    const ompi_status_public_t *st,
                                    ompi_status_public_t *status)
{
    mca_pml_umr_stash_t *e;

    if (mca_pml_umr_probe_passes(rc, 1, st, comm, status)) {
        return rc;
    }
    e = mca_pml_umr_stash_make(comm, *message, st);
    if (e == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    mca_pml_umr_status_copy(status, &e->status);
    *message = mca_pml_umr_msg_wrap(e);
    return (*message != NULL) ? OMPI_SUCCESS : OMPI_ERR_OUT_OF_RESOURCE;
}

int mca_pml_umr_improbe(int src, int tag, ompi_communicator_t *comm,
                        int *matched, ompi_message_t **message,
                        ompi_status_public_t *status)
{
    mca_pml_umr_stash_t *e = mca_pml_umr_stash_find(src, tag, comm);
    ompi_status_public_t st;
    int rc;

    if (e == NULL) {
        rc = mca_pml_umr.real.pml_improbe(src, tag, comm, matched, message,
                                          &st);
        if ((rc != OMPI_SUCCESS) || !*matched) {
            return rc;
        }
        return mca_pml_umr_mprobe_found(rc, comm, message, &st, status);
    }
    mca_pml_umr_stash_remove(e);
    *matched = 1;
    mca_pml_umr_status_copy(status, &e->status);
    *message = mca_pml_umr_msg_wrap(e);
    return (*message != NULL) ? OMPI_SUCCESS : OMPI_ERR_OUT_OF_RESOURCE;
}

/* As mca_pml_umr_probe: the wrapped PML's own blocking matched probe. */
int mca_pml_umr_mprobe(int src, int tag, ompi_communicator_t *comm,
                       ompi_message_t **message, ompi_status_public_t *status)
{
    ompi_status_public_t st;
    int matched = 0, rc;

    if (mca_pml_umr_stash_find(src, tag, comm) != NULL) {
        return mca_pml_umr_improbe(src, tag, comm, &matched, message, status);
    }
    rc = mca_pml_umr.real.pml_mprobe(src, tag, comm, message, &st);
    return mca_pml_umr_mprobe_found(rc, comm, message, &st, status);
}

/* Receive a stashed (already matched) message with `req` (its buf, count
 * and dt set, active). */
static int mca_pml_umr_stash_recv(mca_pml_umr_stash_t *e,
                                  mca_pml_umr_request_t *req)
{
    size_t capacity = req->dt->super.size * req->count;
    ompi_datatype_t *dt = req->dt;
    struct iovec iov;
    uint32_t iov_count = 1;
    size_t max_data;
    opal_convertor_t conv;

    req->inner_status = e->status;

    if (e->msg != NULL) {
        /* a message the wrapped PML still holds */
        if (mca_pml_umr.real.pml_imrecv(req->buf, req->count, dt, &e->msg,
                                        &req->inner) != OMPI_SUCCESS) {
            return OMPI_ERROR;
        }
        req->passthrough = 1;
        mca_pml_umr_stash_free(e);
        ompi_request_wait_completion(req->inner);
        req->super.req_status = req->inner->req_status;
        mca_pml_umr_request_mpi_complete(req);
        return OMPI_SUCCESS;
    }
    if (!e->is_ctl) {
        /* Z bytes of ordinary data, received into the stash */
        iov.iov_base = &e->data;
        iov.iov_len  = (capacity < UMR_MPI_CTL_SIZE) ? capacity :
                       UMR_MPI_CTL_SIZE;
        max_data     = iov.iov_len;
        OBJ_CONSTRUCT(&conv, opal_convertor_t);
        opal_convertor_copy_and_prepare_for_recv(ompi_mpi_local_convertor,
                                                 &dt->super, req->count,
                                                 req->buf, 0, &conv);
        opal_convertor_unpack(&conv, &iov, &iov_count, &max_data);
        OBJ_DESTRUCT(&conv);
        req->super.req_status = e->status;
        if (capacity < UMR_MPI_CTL_SIZE) {
            req->super.req_status.MPI_ERROR = MPI_ERR_TRUNCATE;
        }
        mca_pml_umr_stash_free(e);
        mca_pml_umr_request_mpi_complete(req);
        return OMPI_SUCCESS;
    }
    /* a control message: the core takes it from its CTL step */
    req->x.ctl = e->data;
    mca_pml_umr_stash_free(e);
    req->x.rank   = mca_common_umr_world_rank(req->comm,
                                              req->inner_status.MPI_SOURCE);
    req->x.peer   = umr_mpi_peer_proto(req->x.rank);
    req->x.length = capacity;
    umr_mpi_recv_ctl(&req->x);
    return OMPI_SUCCESS;
}

static mca_pml_umr_request_t *
mca_pml_umr_stash_req(void *buf, size_t count, ompi_datatype_t *dt,
                      ompi_communicator_t *comm, const mca_pml_umr_stash_t *e)
{
    return mca_pml_umr_request_alloc(MCA_PML_UMR_REQ_RECV, false, comm, buf,
                                     count, dt, e->status.MPI_SOURCE,
                                     e->status.MPI_TAG);
}

int mca_pml_umr_imrecv(void *buf, size_t count, ompi_datatype_t *dt,
                       ompi_message_t **message, ompi_request_t **request)
{
    mca_pml_umr_request_t *req;
    mca_pml_umr_stash_t *e;
    int rc;

    if (!mca_pml_umr_msg_is_ours(*message)) {
        return mca_pml_umr.real.pml_imrecv(buf, count, dt, message, request);
    }
    e   = (*message)->req_ptr;
    req = mca_pml_umr_stash_req(buf, count, dt, e->comm, e);
    if (req == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    *request = &req->super;
    rc = mca_pml_umr_stash_recv(e, req);
    ompi_message_return(*message);
    *message = MPI_MESSAGE_NULL;
    return rc;
}

int mca_pml_umr_mrecv(void *buf, size_t count, ompi_datatype_t *dt,
                      ompi_message_t **message, ompi_status_public_t *status)
{
    ompi_request_t *req;
    int rc;

    if (!mca_pml_umr_msg_is_ours(*message)) {
        return mca_pml_umr.real.pml_mrecv(buf, count, dt, message, status);
    }
    rc = mca_pml_umr_imrecv(buf, count, dt, message, &req);
    if (rc != OMPI_SUCCESS) {
        return rc;
    }
    return mca_pml_umr_request_wait_free(&req, status);
}

/* A receive (irecv, recv, start of a persistent pml/umr receive) while the
 * stash is not empty: OMPI_ERR_NOT_FOUND when no stashed message matches
 * (then post to the wrapped PML). `req` NULL: allocate one. */
int mca_pml_umr_stash_irecv(mca_pml_umr_request_t *req, void *buf,
                            size_t count, ompi_datatype_t *dt, int src,
                            int tag, ompi_communicator_t *comm,
                            ompi_request_t **request)
{
    mca_pml_umr_stash_t *e = mca_pml_umr_stash_find(src, tag, comm);

    if (e == NULL) {
        return OMPI_ERR_NOT_FOUND;
    }
    if ((req == NULL) &&
        (NULL == (req = mca_pml_umr_stash_req(buf, count, dt, comm, e)))) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    mca_pml_umr_stash_remove(e);
    *request = &req->super;
    return mca_pml_umr_stash_recv(e, req);
}
