/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "umr_config.h"

#include "umr_mpich_req.h"
#include "umr_mpich.h"
#include "umr_mpich_core.h"
#include "umr_mpich_types.h"

#include "umr_mpich_count.h"

#include "umr_mpi_dtype.h"

#include <stdlib.h>
#include <string.h>

/* ---- the generalized request --------------------------------------------- */

/* (MPI_ERROR is left alone: a call that completes one request does not
 * set it, MPI says; MPICH's multiple completions take the query's) */
void umr_mpich_req_status(const umr_mpich_req_t *r, MPI_Status *status)
{
    status->MPI_SOURCE = r->source;
    status->MPI_TAG    = r->stag;
    PMPI_Status_set_elements_x(status, MPI_BYTE, (MPI_Count)r->bytes);
    PMPI_Status_set_cancelled(status, r->cancelled);
}

static int umr_mpich_req_query(void *state, MPI_Status *status)
{
    umr_mpich_req_t *r = state;

    umr_mpich_req_status(r, status);
    status->MPI_ERROR = r->error;
    return r->error;
}

/* MPICH is done with the handle (waited for, tested, or freed by the user,
 * maybe before the message is over) */
static int umr_mpich_req_free(void *state)
{
    umr_mpich_req_t *r = state;

    r->released = 1;
    if (r->done) {
        umr_mpich_req_destroy(r);
    }
    return MPI_SUCCESS;
}

/* a receive not matched yet is cancelled in MPICH (its completion says
 * whether it was); nothing else can be */
static int umr_mpich_req_cancel(void *state, int complete)
{
    umr_mpich_req_t *r = state;

    if (!complete && !r->is_send && (r->w.req != MPI_REQUEST_NULL)) {
        PMPI_Cancel(&r->w.req);
    }
    return MPI_SUCCESS;
}

static int umr_mpich_req_poll(void *state, MPI_Status *status)
{
    umr_mpich_progress();
    return MPI_SUCCESS;
}

/* MPICH calls it until the request is complete (MPI_Waitall) */
static int umr_mpich_req_wait_fn(int count, void **states, double timeout,
                                 MPI_Status *status)
{
    umr_mpich_progress();
    return MPI_SUCCESS;
}

void umr_mpich_req_init(umr_mpich_req_t *r, MPI_Datatype type, MPI_Comm comm,
                        int peer, int tag)
{
    memset(r, 0, sizeof(*r));
    r->type  = type;
    r->held_type = type;
    r->comm  = comm;
    r->peer  = peer;
    r->tag   = tag;
    r->greq  = MPI_REQUEST_NULL;
    r->w.req = r->wd.req = MPI_REQUEST_NULL;
}

umr_mpich_req_t *umr_mpich_req_new(MPI_Datatype type, MPI_Comm comm, int peer,
                                   int tag)
{
    umr_mpich_req_t *r = malloc(sizeof(*r));

    if (r != NULL) {
        umr_mpich_req_init(r, type, comm, peer, tag);
        umr_mpich_type_hold(type);
    }
    return r;
}

int umr_mpich_req_start(umr_mpich_req_t *r, MPI_Request *req_p)
{
    int rc = PMPIX_Grequest_start(umr_mpich_req_query, umr_mpich_req_free,
                                  umr_mpich_req_cancel, umr_mpich_req_poll,
                                  umr_mpich_req_wait_fn, r, &r->greq);

    if (rc != MPI_SUCCESS) {
        /* the message goes on, nobody waits for it */
        r->released = 1;
        return rc;
    }
    *req_p = r->greq;
    if (r->done) {
        PMPI_Grequest_complete(r->greq);
    }
    return MPI_SUCCESS;
}

int umr_mpich_req_wait(umr_mpich_req_t *r)
{
    while (!r->done) {
        umr_mpich_progress();
    }
    return r->error;
}

void umr_mpich_req_finish(umr_mpich_req_t *r)
{
    r->done = 1;
    if (r->greq != MPI_REQUEST_NULL) {
        PMPI_Grequest_complete(r->greq);
    }
    if (r->released) {
        umr_mpich_req_destroy(r);
    }
}

void umr_mpich_req_destroy(umr_mpich_req_t *r)
{
    umr_mpich_type_release(r->held_type);
    free(r->copy);
    free(r);
}

/* ---- the core's operations on the user's messages ---------------------- */

void umr_mpich_pack_head(const void *buf, size_t count, MPI_Datatype type,
                         void *out, size_t len)
{
    const umr_mpi_dtype_t *info = umr_mpi_dtype_get(type);
    int size, pos = 0;
    void *tmp;

    if ((info != NULL) && (info->layout != NULL) &&
        (umr_layout_pack_range(info->layout, count, buf, 0, len, out) ==
         UCS_OK)) {
        return;
    }
    /* a type the layout engine cannot express: MPI's own pack of it all */
    memset(out, 0, len);
    if ((PMPI_Pack_size((int)count, type, MPI_COMM_WORLD, &size) !=
         MPI_SUCCESS) || (NULL == (tmp = malloc(size)))) {
        return;
    }
    if (PMPI_Pack(buf, (int)count, type, tmp, size, &pos, MPI_COMM_WORLD) ==
        MPI_SUCCESS) {
        memcpy(out, tmp, ((size_t)pos < len) ? (size_t)pos : len);
    }
    free(tmp);
}

static void umr_mpich_ctl_sent(umr_mpich_watch_t *w, MPI_Status *st)
{
    umr_mpich_req_t *r = ucs_container_of(w, umr_mpich_req_t, w);
    umr_mpi_status_t s;

    umr_mpich_status_of(st, &s);
    r->wcomp->cb(r->wcomp, &s);
}

static void umr_mpich_data_done(umr_mpich_watch_t *w, MPI_Status *st)
{
    umr_mpich_req_t *r = ucs_container_of(w, umr_mpich_req_t, wd);
    umr_mpi_status_t s;

    umr_mpich_status_of(st, &s);
    r->dcomp->cb(r->dcomp, &s);
}

/* the control message on the user's envelope, through the next MPI_Isend
 * (another tool sees the user's send as one send); a ready send stays one */
static int umr_mpich_ctl_send(umr_mpi_xfer_t *x, umr_mpi_comp_t *comp)
{
    umr_mpich_req_t *r = ucs_container_of(x, umr_mpich_req_t, x);
    MPI_Request req;
    int rc;

    rc = (r->mode == UMR_MPICH_MODE_READY) ?
         umr_mpich_next()->Irsend(&x->ctl, UMR_MPI_CTL_SIZE, MPI_BYTE, r->peer,
                                  r->tag, r->comm, &req) :
         umr_mpich_next()->Isend(&x->ctl, UMR_MPI_CTL_SIZE, MPI_BYTE, r->peer,
                                 r->tag, r->comm, &req);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    r->wcomp = comp;
    umr_mpich_watch_add(&r->w, umr_mpich_ctl_sent, req);
    return 0;
}

/* a declined message's data, untouched, on the private communicator: sent
 * (`send`) or received */
static int umr_mpich_data_post(umr_mpi_xfer_t *x, umr_mpi_comp_t *comp,
                               int send)
{
    umr_mpich_req_t *r = ucs_container_of(x, umr_mpich_req_t, x);
    MPI_Request req;
    int rc;

    rc = umr_mpich_ipost_n(send, x->buf, (MPI_Count)x->count, r->type,
                           x->rank, umr_mpich_tag(UMR_MPI_MSG_DATA),
                           umr_mpich_comm_private, &req);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    r->dcomp = comp;
    umr_mpich_watch_add(&r->wd, umr_mpich_data_done, req);
    return 0;
}

static int umr_mpich_data_send(umr_mpi_xfer_t *x, umr_mpi_comp_t *comp)
{
    return umr_mpich_data_post(x, comp, 1);
}

static int umr_mpich_data_recv(umr_mpi_xfer_t *x, umr_mpi_comp_t *comp)
{
    return umr_mpich_data_post(x, comp, 0);
}

static void umr_mpich_peek(umr_mpi_xfer_t *x, void *out, size_t len)
{
    umr_mpich_req_t *r = ucs_container_of(x, umr_mpich_req_t, x);

    umr_mpich_pack_head(x->buf, x->count, r->type, out, len);
}

/* DONE: the core's status; PASSED: the MPI's, kept at the arrival */
static void umr_mpich_complete(umr_mpi_xfer_t *x)
{
    umr_mpich_req_t *r = ucs_container_of(x, umr_mpich_req_t, x);

    if (x->state == UMR_MPI_X_DONE) {
        r->error = x->error;
        r->bytes = x->moved;
    }
    umr_mpich_req_finish(r);
}

const umr_mpi_xfer_ops_t umr_mpich_xfer_ops = {
    .ctl_send  = umr_mpich_ctl_send,
    .data_send = umr_mpich_data_send,
    .data_recv = umr_mpich_data_recv,
    .peek      = umr_mpich_peek,
    .complete  = umr_mpich_complete
};
