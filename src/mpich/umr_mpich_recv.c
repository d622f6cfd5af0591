/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: receives: MPI_Recv, MPI_Irecv, MPI_Sendrecv(_replace),
 * MPI_Isendrecv(_replace) and their large-count forms. A receive that can
 * take a control message (room for its Z bytes, a source that may run the
 * protocol) is posted to MPICH unchanged, as the user posted it, so that
 * matching, ordering and wildcards stay MPICH's; the binding watches it:
 * when it completes with Z bytes from a peer of the protocol, the core
 * looks for the magic and, finding it, moves the message (zero-copy, or
 * declined: the data comes on the private communicator into the same
 * receive), and the user's request completes with the message's real
 * size. Every other receive is MPICH's own, untouched.
 */
#include "umr_config.h"

#include "umr_mpich_recv.h"
#include "umr_mpich.h"
#include "umr_mpich_comm.h"
#include "umr_mpich_core.h"
#include "umr_mpich_req.h"
#include "umr_mpich_count.h"
#include "umr_mpich_send.h"

#include "umr_mpi_dtype.h"

#include <stdlib.h>
#include <string.h>

static void umr_mpich_recv_arrived(umr_mpich_watch_t *w, MPI_Status *st)
{
    umr_mpich_req_t *r = ucs_container_of(w, umr_mpich_req_t, w);
    MPI_Count n        = 0;
    int world;

    r->source = st->MPI_SOURCE;
    r->stag   = st->MPI_TAG;
    r->error  = st->MPI_ERROR;
    PMPI_Test_cancelled(st, &r->cancelled);
    if (!r->cancelled) {
        PMPI_Get_elements_x(st, MPI_BYTE, &n);
    }
    r->bytes = (n > 0) ? (size_t)n : 0;
    if (!r->cancelled && (r->error == MPI_SUCCESS) &&
        (r->bytes == UMR_MPI_CTL_SIZE) &&
        ((world = umr_mpich_world_rank(r->comm, r->source)) >= 0) &&
        (umr_mpi_peer_proto(world) != NULL)) {
        /* the core looks at it in progress */
        r->x.rank = world;
        r->x.tag  = r->stag;
        umr_mpi_recv_defer(&r->x);
        return;
    }
    umr_mpich_req_finish(r);
}

/* the user's request for `r` (or wait for it: blocking) */
static int umr_mpich_recv_give(umr_mpich_req_t *r, MPI_Request *req_p,
                               MPI_Status *status)
{
    int rc;

    if (req_p != NULL) {
        return umr_mpich_req_start(r, req_p);
    }
    rc = umr_mpich_req_wait(r);
    if (status != MPI_STATUS_IGNORE) {
        umr_mpich_req_status(r, status);
    }
    umr_mpich_req_destroy(r);
    return rc;
}

static umr_mpich_req_t *umr_mpich_recv_req(void *buf, MPI_Count count,
                                           MPI_Datatype type, int src,
                                           int tag, MPI_Comm comm,
                                           size_t capacity)
{
    umr_mpich_req_t *r = umr_mpich_req_new(type, comm, src, tag);

    if (r != NULL) {
        r->x.buf    = buf;
        r->x.count  = count;
        r->x.key    = (uintptr_t)type;
        r->x.length = capacity;
        r->x.ctx    = umr_mpich_comm_ctx(comm);
    }
    return r;
}

static size_t umr_mpich_recv_capacity(MPI_Count count, MPI_Datatype type)
{
    MPI_Count tsize;

    return ((count > 0) && (PMPI_Type_size_x(type, &tsize) == MPI_SUCCESS) &&
            (tsize > 0)) ? (size_t)tsize * (size_t)count : 0;
}

/* Z bytes of the user's, held by a probe, into the receive */
static void umr_mpich_recv_unpack(umr_mpich_req_t *r, const void *data)
{
    const umr_mpi_dtype_t *info = umr_mpi_dtype_get(r->type);
    size_t n = (r->x.length < UMR_MPI_CTL_SIZE) ? r->x.length :
                                                  UMR_MPI_CTL_SIZE;
    MPI_Count tsize = 1;
    int pos = 0;

    r->bytes = n;
    r->error = (n < UMR_MPI_CTL_SIZE) ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    if ((info != NULL) && (info->layout != NULL) &&
        (umr_layout_unpack_range(info->layout, r->x.count, r->x.buf, 0, n,
                                 data) == UCS_OK)) {
        return;
    }
    PMPI_Type_size_x(r->type, &tsize);
    PMPI_Unpack(data, (int)n, &pos, r->x.buf, (int)(n / tsize), r->type,
                r->comm);
}

int umr_mpich_recv_held(umr_mpich_held_t *h, void *buf, MPI_Count count,
                        MPI_Datatype type, MPI_Request *req_p,
                        MPI_Status *status)
{
    umr_mpich_req_t *r;
    MPI_Request req;
    int world, rc;

    r = umr_mpich_recv_req(buf, count, type, h->source, h->tag, h->comm,
                           umr_mpich_recv_capacity(count, type));
    if (r == NULL) {
        free(h);
        return MPI_ERR_NO_MEM;
    }
    switch (h->kind) {
    case UMR_MPICH_HELD_MSG:
        /* matched in MPICH: received as any watched receive */
        rc = umr_mpich_imrecv_n(buf, count, type, &h->msg, &req);
        if (rc != MPI_SUCCESS) {
            umr_mpich_req_destroy(r);
            free(h);
            return rc;
        }
        umr_mpich_watch_add(&r->w, umr_mpich_recv_arrived, req);
        break;
    case UMR_MPICH_HELD_CTL:
        world       = umr_mpich_world_rank(h->comm, h->source);
        r->source   = h->source;
        r->stag     = h->tag;
        r->bytes    = UMR_MPI_CTL_SIZE;   /* the MPI's, if it passes */
        r->x.rank   = world;
        r->x.tag    = h->tag;
        r->x.peer   = umr_mpi_peer_proto(world);
        memcpy(&r->x.ctl, &h->data, sizeof(r->x.ctl));
        umr_mpi_recv_ctl(&r->x);
        break;
    default:
        r->source = h->source;
        r->stag   = h->tag;
        umr_mpich_recv_unpack(r, &h->data);
        umr_mpich_req_finish(r);
        break;
    }
    free(h);
    return umr_mpich_recv_give(r, req_p, status);
}

/* A receive passed through, blocking: while the core has work in flight
 * it must run, so the receive is posted and tested. */
static int umr_mpich_recv_pass_blocking(void *buf, MPI_Count count,
                                        MPI_Datatype type, int src, int tag,
                                        MPI_Comm comm, int large,
                                        MPI_Status *status)
{
    MPI_Request req;
    int rc, flag = 0;

    if (!umr_mpich.active || !umr_mpich_progress_wanted) {
        return large ? umr_mpich_next()->Recv_c(buf, count, type, src, tag,
                                                comm, status) :
                       umr_mpich_next()->Recv(buf, (int)count, type, src, tag,
                                              comm, status);
    }
    rc = large ? umr_mpich_next()->Irecv_c(buf, count, type, src, tag, comm,
                                           &req) :
                 umr_mpich_next()->Irecv(buf, (int)count, type, src, tag,
                                         comm, &req);
    while ((rc == MPI_SUCCESS) && !flag) {
        rc = PMPI_Test(&req, &flag, status);
        if (!flag) {
            umr_mpich_progress();
        }
    }
    return rc;
}

int umr_mpich_recv_take(void *buf, MPI_Count count, MPI_Datatype type,
                        int src, int tag, MPI_Comm comm, MPI_Request *req_p,
                        MPI_Status *status, int *rc_p)
{
    umr_mpich_held_t *h;
    umr_mpich_req_t *r;
    MPI_Request req;
    size_t capacity;
    int world;

    if (!umr_mpich.p2p || (src == MPI_PROC_NULL)) {
        return 0;
    }
    umr_mpich_progress_if_wanted();
    if ((umr_mpich_held_count > 0) &&
        (NULL != (h = umr_mpich_held_find(src, tag, comm)))) {
        umr_mpich_held_remove(h);
        *rc_p = umr_mpich_recv_held(h, buf, count, type, req_p, status);
        return 1;
    }
    capacity = umr_mpich_recv_capacity(count, type);
    if ((capacity < UMR_MPI_CTL_SIZE) ||
        ((src != MPI_ANY_SOURCE) &&
         (((world = umr_mpich_world_rank(comm, src)) < 0) ||
          (umr_mpi_peer_proto(world) == NULL)))) {
        return 0;
    }
    r = umr_mpich_recv_req(buf, count, type, src, tag, comm, capacity);
    if (r == NULL) {
        return 0;
    }
    *rc_p = umr_mpich_ipost_n(0, buf, count, type, src, tag, comm, &req);
    if (*rc_p != MPI_SUCCESS) {
        umr_mpich_req_destroy(r);
        return 1;
    }
    umr_mpich_watch_add(&r->w, umr_mpich_recv_arrived, req);
    *rc_p = umr_mpich_recv_give(r, req_p, status);
    return 1;
}

int umr_mpich_recv(void *buf, MPI_Count count, MPI_Datatype type, int src,
                   int tag, MPI_Comm comm, int large, MPI_Request *req_p,
                   MPI_Status *status)
{
    int rc;

    if (umr_mpich_recv_take(buf, count, type, src, tag, comm, req_p, status,
                            &rc)) {
        return umr_mpich_error(comm, rc);
    }
    if (req_p == NULL) {
        return umr_mpich_recv_pass_blocking(buf, count, type, src, tag, comm,
                                            large, status);
    }
    return large ? umr_mpich_next()->Irecv_c(buf, count, type, src, tag, comm,
                                             req_p) :
                   umr_mpich_next()->Irecv(buf, (int)count, type, src, tag,
                                           comm, req_p);
}

/* MPI_Recv and MPI_Irecv, their counts of type _cnt_t (_large: MPI_Count;
 * _sfx: their names' suffix) */
#define UMR_MPICH_RECV_CALLS(_cnt_t, _large, _sfx) \
    int MPI_Recv##_sfx(void *buf, _cnt_t count, MPI_Datatype type, int src, \
                       int tag, MPI_Comm comm, MPI_Status *status) \
    { \
        return umr_mpich_recv(buf, count, type, src, tag, comm, _large, \
                              NULL, status); \
    } \
    int MPI_Irecv##_sfx(void *buf, _cnt_t count, MPI_Datatype type, \
                        int src, int tag, MPI_Comm comm, MPI_Request *req) \
    { \
        return umr_mpich_recv(buf, count, type, src, tag, comm, _large, req, \
                              NULL); \
    }

UMR_MPICH_RECV_CALLS(int, 0, )
UMR_MPICH_RECV_CALLS(MPI_Count, 1, _c)

/* ---- send and receive at once --------------------------------------------- */

/* The receive, then the send, through the binding's own (req: the two
 * requests); the receive cancelled when the send fails. */
static int umr_mpich_sendrecv_post(const void *sbuf, MPI_Count scount,
                                   MPI_Datatype stype, int dst, int stag,
                                   void *rbuf, MPI_Count rcount,
                                   MPI_Datatype rtype, int src, int rtag,
                                   MPI_Comm comm, int large, MPI_Request *req)
{
    int rc;

    rc = umr_mpich_recv(rbuf, rcount, rtype, src, rtag, comm, large, &req[0],
                        NULL);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = umr_mpich_send(sbuf, scount, stype, dst, stag, comm,
                        UMR_MPICH_MODE_STANDARD, large, &req[1]);
    if (rc != MPI_SUCCESS) {
        PMPI_Cancel(&req[0]);
        PMPI_Wait(&req[0], MPI_STATUS_IGNORE);
    }
    return rc;
}

/* The error of a pair completed together (st: the receive's, the send's) */
static int umr_mpich_sendrecv_error(int rc, const MPI_Status *st)
{
    if (rc != MPI_ERR_IN_STATUS) {
        return rc;
    }
    return (st[0].MPI_ERROR != MPI_SUCCESS) ? st[0].MPI_ERROR :
                                              st[1].MPI_ERROR;
}

/* Both halves waited for together (MPICH drives both). */
static int umr_mpich_sendrecv(const void *sbuf, MPI_Count scount,
                              MPI_Datatype stype, int dst, int stag,
                              void *rbuf, MPI_Count rcount,
                              MPI_Datatype rtype, int src, int rtag,
                              MPI_Comm comm, int large, MPI_Status *status)
{
    MPI_Request req[2];
    MPI_Status st[2];
    int rc;

    rc = umr_mpich_sendrecv_post(sbuf, scount, stype, dst, stag, rbuf, rcount,
                                 rtype, src, rtag, comm, large, req);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = PMPI_Waitall(2, req, st);
    if (status != MPI_STATUS_IGNORE) {
        st[0].MPI_ERROR = status->MPI_ERROR;   /* a single completion */
        *status         = st[0];
    }
    return umr_mpich_sendrecv_error(rc, st);
}

/* ---- nonblocking send and receive at once ----------------------------- */

/* One request of the user's for both halves: complete when both are, with
 * the receive's status. */
typedef struct umr_mpich_pair {
    MPI_Request req[2];     /* the receive, the send */
    MPI_Request greq;
    MPI_Status  st;
    int         error;
    int         done;
    int         released;
    void        *copy;      /* Isendrecv_replace's packed send */
} umr_mpich_pair_t;

static int umr_mpich_pair_query(void *state, MPI_Status *status)
{
    umr_mpich_pair_t *p = state;

    *status = p->st;
    return p->error;
}

static int umr_mpich_pair_free(void *state)
{
    umr_mpich_pair_t *p = state;

    p->released = 1;
    if (p->done) {
        free(p);
    }
    return MPI_SUCCESS;
}

static int umr_mpich_pair_cancel(void *state, int complete)
{
    umr_mpich_pair_t *p = state;

    if (!complete && (p->req[0] != MPI_REQUEST_NULL)) {
        PMPI_Cancel(&p->req[0]);
    }
    return MPI_SUCCESS;
}

static int umr_mpich_pair_poll(void *state, MPI_Status *status)
{
    umr_mpich_pair_t *p = state;
    MPI_Status st[2];
    int flag = 0, rc;

    if (p->done) {
        return MPI_SUCCESS;
    }
    rc = PMPI_Testall(2, p->req, &flag, st);
    if (!flag && (rc == MPI_SUCCESS)) {
        return MPI_SUCCESS;
    }
    p->st    = st[0];
    p->error = umr_mpich_sendrecv_error(rc, st);
    free(p->copy);
    p->copy = NULL;
    p->done = 1;
    PMPI_Grequest_complete(p->greq);
    return MPI_SUCCESS;
}

static int umr_mpich_pair_wait(int count, void **states, double timeout,
                               MPI_Status *status)
{
    return umr_mpich_pair_poll(states[0], status);
}

/* `copy`: the packed send of a replace, freed with the pair */
static int umr_mpich_isendrecv_copy(const void *sbuf, MPI_Count scount,
                                    MPI_Datatype stype, int dst, int stag,
                                    void *rbuf, MPI_Count rcount,
                                    MPI_Datatype rtype, int src, int rtag,
                                    MPI_Comm comm, int large, void *copy,
                                    MPI_Request *req)
{
    umr_mpich_pair_t *p = calloc(1, sizeof(*p));
    int rc;

    if (p == NULL) {
        free(copy);
        return MPI_ERR_NO_MEM;
    }
    p->copy = copy;
    rc = umr_mpich_sendrecv_post(sbuf, scount, stype, dst, stag, rbuf, rcount,
                                 rtype, src, rtag, comm, large, p->req);
    if (rc != MPI_SUCCESS) {
        goto err;
    }
    rc = PMPIX_Grequest_start(umr_mpich_pair_query, umr_mpich_pair_free,
                              umr_mpich_pair_cancel, umr_mpich_pair_poll,
                              umr_mpich_pair_wait, p, &p->greq);
    if (rc != MPI_SUCCESS) {
        PMPI_Waitall(2, p->req, MPI_STATUSES_IGNORE);
        goto err;
    }
    *req = p->greq;
    return MPI_SUCCESS;

err:
    free(p->copy);
    free(p);
    return rc;
}

static int umr_mpich_isendrecv(const void *sbuf, MPI_Count scount,
                               MPI_Datatype stype, int dst, int stag,
                               void *rbuf, MPI_Count rcount,
                               MPI_Datatype rtype, int src, int rtag,
                               MPI_Comm comm, int large, MPI_Request *req)
{
    return umr_mpich_isendrecv_copy(sbuf, scount, stype, dst, stag, rbuf,
                                    rcount, rtype, src, rtag, comm, large,
                                    NULL, req);
}

/* The send's data packed first (the receive overwrites the buffer);
 * blocking (req NULL) or not */
static int umr_mpich_replace(void *buf, MPI_Count count, MPI_Datatype type,
                             int dst, int stag, int src, int rtag,
                             MPI_Comm comm, int large, MPI_Request *req,
                             MPI_Status *status)
{
    MPI_Count len;
    void *copy;
    int rc;

    rc = umr_mpich_pack_n(buf, count, type, comm, &copy, &len);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (req != NULL) {   /* the copy goes with the pair */
        return umr_mpich_isendrecv_copy(copy, len, MPI_PACKED, dst, stag, buf,
                                        count, type, src, rtag, comm, large,
                                        copy, req);
    }
    rc = umr_mpich_sendrecv(copy, len, MPI_PACKED, dst, stag, buf, count,
                            type, src, rtag, comm, large, status);
    free(copy);
    return rc;
}

/* ---- the calls: MPICH's own while the protocol is off ------------------- */

/* MPI_<name>, its counts of type _cnt_t (_large: MPI_Count), its last
 * argument a status or a request */
#define UMR_MPICH_SENDRECV_CALL(_name, _cnt_t, _large, _last_t, _impl) \
    int MPI_##_name(const void *sbuf, _cnt_t scount, MPI_Datatype stype, \
                    int dst, int stag, void *rbuf, _cnt_t rcount, \
                    MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, \
                    _last_t last) \
    { \
        if (!umr_mpich.p2p) { \
            return umr_mpich_next()->_name(sbuf, scount, stype, dst, stag, \
                                           rbuf, rcount, rtype, src, rtag, \
                                           comm, last); \
        } \
        return _impl(sbuf, scount, stype, dst, stag, rbuf, rcount, rtype, \
                     src, rtag, comm, _large, last); \
    }

/* (the same: _req, _status the request or the status, from `last`) */
#define UMR_MPICH_REPLACE_CALL(_name, _cnt_t, _large, _last_t, _req, \
                               _status) \
    int MPI_##_name(void *buf, _cnt_t count, MPI_Datatype type, int dst, \
                    int stag, int src, int rtag, MPI_Comm comm, \
                    _last_t last) \
    { \
        if (!umr_mpich.p2p) { \
            return umr_mpich_next()->_name(buf, count, type, dst, stag, src, \
                                           rtag, comm, last); \
        } \
        return umr_mpich_replace(buf, count, type, dst, stag, src, rtag, \
                                 comm, _large, _req, _status); \
    }

UMR_MPICH_SENDRECV_CALL(Sendrecv, int, 0, MPI_Status*, umr_mpich_sendrecv)
UMR_MPICH_SENDRECV_CALL(Sendrecv_c, MPI_Count, 1, MPI_Status*,
                        umr_mpich_sendrecv)
UMR_MPICH_SENDRECV_CALL(Isendrecv, int, 0, MPI_Request*, umr_mpich_isendrecv)
UMR_MPICH_SENDRECV_CALL(Isendrecv_c, MPI_Count, 1, MPI_Request*,
                        umr_mpich_isendrecv)
UMR_MPICH_REPLACE_CALL(Sendrecv_replace, int, 0, MPI_Status*, NULL, last)
UMR_MPICH_REPLACE_CALL(Sendrecv_replace_c, MPI_Count, 1, MPI_Status*, NULL,
                       last)
UMR_MPICH_REPLACE_CALL(Isendrecv_replace, int, 0, MPI_Request*, last,
                       MPI_STATUS_IGNORE)
UMR_MPICH_REPLACE_CALL(Isendrecv_replace_c, MPI_Count, 1, MPI_Request*, last,
                       MPI_STATUS_IGNORE)
