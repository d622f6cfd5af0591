/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: the receiver's side of the protocol (umr_mpi_proto.h):
 * CLASSIFY, CTL, GET, DECLINE, DONE, and the answers.
 */
#include "umr_mpi_proto.h"
#include "umr_mpi_choice.h"

#include "uct_umr.h"

#include <stdlib.h>
#include <string.h>

static void umr_mpi_recv_run(umr_mpi_work_t *work);

/* The receive is over: zero-copy (`zcopy`: counted here), or its data came
 * through the MPI after a decline (counted at the decline). */
static void umr_mpi_recv_done(umr_mpi_xfer_t *x, int zcopy)
{
    x->moved = (x->error == umr_mpi.b->err_truncate) ? x->ctl.length :
                                                       x->moved;
    if (x->peer_held) {
        x->peer_held = 0;
        umr_mpi_peer_release(x->peer);
    }
    if (!zcopy) {
        /* counted at the decline */
    } else if ((x->error == 0) || (x->error == umr_mpi.b->err_truncate)) {
        ++umr_mpi.cnt.zcopy_recvs;
    } else {
        ++umr_mpi.cnt.errors;
    }
    umr_mpi_progress_ref(-1);
    x->state = UMR_MPI_X_DONE;
    umr_mpi_xops->complete(x);
}

/* The answer to the sender: done, or declined (`flags`). */
static void umr_mpi_recv_ack(umr_mpi_xfer_t *x, uint32_t flags)
{
    umr_mpi_ack_t ack = {
        .seq   = x->ctl.seq,
        .error = (x->error == umr_mpi.b->err_truncate) ? 0 : x->error,
        .flags = flags
    };

    (void)umr_mpi_send_copy(x->peer->world_rank, UMR_MPI_MSG_ACK, &ack,
                            sizeof(ack));
}

static void umr_mpi_recv_data_cb(umr_mpi_comp_t *comp,
                                 const umr_mpi_status_t *status)
{
    umr_mpi_xfer_t *x = ucs_container_of(comp, umr_mpi_xfer_t, data_comp);

    x->moved = status->length;
    x->error = status->error;
    umr_mpi_recv_done(x, 0);
}

/* The decline itself: the DATA receive posted, then the answer FALLBACK
 * (| `flags`). Needs no rail: a peer no rail reaches is declined too. If
 * the receive cannot be posted, the sender must not wait: done, with an
 * error on both sides. */
static void umr_mpi_recv_decline(umr_mpi_xfer_t *x, uint32_t flags)
{
    x->state        = UMR_MPI_X_DECLINED;
    x->data_comp.cb = umr_mpi_recv_data_cb;
    if (umr_mpi_xops->data_recv(x, &x->data_comp) != 0) {
        x->error = umr_mpi.b->err_other;
        umr_mpi_recv_ack(x, 0);
        umr_mpi_recv_done(x, 1);
        return;
    }
    umr_mpi_recv_ack(x, UMR_MPI_ACK_FALLBACK | flags |
                        (x->busy ? UMR_MPI_ACK_BUSY : 0));
}

/* Decline the control message: the data comes through the MPI. `why`
 * NULL: zero-copy would lose, or the receive layout cannot be moved
 * zero-copy (not decoded, beyond the rail's key budget), or no connection
 * now; otherwise a fault on the zero-copy path, and the peer is retired.
 * The get's resources are released already. */
static void umr_mpi_recv_fallback(umr_mpi_xfer_t *x, const char *why)
{
    if (why != NULL) {
        ++umr_mpi.cnt.fault_declines;
        umr_mpi_peer_retire(x->peer, why);
    } else {
        ++umr_mpi.cnt.declined;
    }
    umr_mpi_recv_decline(x, (why != NULL) ? UMR_MPI_ACK_RETIRE : 0);
}

/* A fault on the zero-copy path (`status`): decline and retire the peer,
 * and the rail too when the fault is the rail's (an md UMR timeout, an md
 * the transport retired: port down). */
static void umr_mpi_recv_fault(umr_mpi_xfer_t *x, ucs_status_t status)
{
    if ((status == UCS_ERR_TIMED_OUT) || !umr_mpi_rail_alive(x->peer->rail)) {
        umr_mpi_rail_retire(x->peer->rail, ucs_status_string(status));
    }
    umr_mpi_recv_fallback(x, ucs_status_string(status));
}

/* The get's resources go: its registration, the sender's key. */
static void umr_mpi_recv_unget(umr_mpi_xfer_t *x)
{
    if (x->region != NULL) {
        umr_mpi_local_release(x->region, x->lkey);
        x->region = NULL;
        x->lkey   = NULL;
    }
    if (x->has_rkey) {
        uct_umr_ep_rkey_release(x->peer->ep, x->rkey);
        x->has_rkey = 0;
    }
}

static void umr_mpi_recv_get_done(uct_completion_t *comp)
{
    umr_mpi_xfer_t *x = ucs_container_of(comp, umr_mpi_xfer_t, comp);

    if ((comp->status == UCS_OK) &&
        UMR_MPI_FAULT(UMR_MPI_FAULT_COMPLETION)) {
        comp->status = UCS_ERR_IO_ERROR;
    }
    umr_mpi_recv_unget(x);
    if (comp->status != UCS_OK) {
        /* what the get wrote is overwritten by the data that follows */
        umr_mpi_recv_fault(x, comp->status);
        return;
    }
    umr_mpi_recv_ack(x, 0);
    umr_mpi_recv_done(x, 1);
}

/* Not zero-copy after all, found before any data moved (the receive type
 * does not decode, or its layout is beyond the rail's key budget): declined,
 * the data comes through the MPI (not a fault: the peer stays). */
static void umr_mpi_recv_decline_get(umr_mpi_xfer_t *x, const char *why)
{
    umr_mpi_recv_unget(x);
    UMR_MPI_VERBOSE(20, "receive %s: %lu bytes declined", why,
                    (unsigned long)x->moved);
    x->error = 0;   /* a truncation is the MPI's to say */
    umr_mpi_recv_fallback(x, NULL);
}

/* GET: one get from the sender's key into the receive layout. */
static void umr_mpi_recv_get(umr_mpi_xfer_t *x)
{
    umr_mpi_type_slot_t *slot   = umr_mpi_types_lookup(x->key);
    const umr_mpi_dtype_t *info = (slot != NULL) ? slot->info : NULL;
    const char *why             = NULL;
    ucs_status_t status;

    x->moved = x->ctl.length;
    if (x->moved > x->length) {
        x->moved = x->length;
        x->error = umr_mpi.b->err_truncate;
    }
    if (!x->has_rkey) {
        status = uct_umr_ep_rkey_unpack(x->peer->ep, x->ctl.data, &x->rkey);
        if (status != UCS_OK) {
            umr_mpi_recv_fault(x, status);
            return;
        }
        x->has_rkey = 1;
    }
    if ((info == NULL) || (info->layout == NULL)) {
        umr_mpi_recv_decline_get(x, "type not decoded");
        return;
    }
    if (x->region == NULL) {
        if (UMR_MPI_FAULT(UMR_MPI_FAULT_KEY)) {
            status = UCS_ERR_NO_RESOURCE;
        } else {
            status = umr_mpi_local_acquire(x->peer->rail, x->buf, info,
                                           x->count, PROT_READ | PROT_WRITE,
                                           &x->region, &x->lkey, &why);
            if ((status == UCS_ERR_EXCEEDS_LIMIT) ||
                (status == UCS_ERR_UNSUPPORTED) ||
                (status == UCS_ERR_NO_RESOURCE)) {
                /* the receive's memory does not register (nor do its
                 * allocations, one by one): declined, not a fault (the
                 * peer stays) */
                x->region = NULL;
                UMR_MPI_VERBOSE(20, "receive layout gets no key (%s)", why);
                umr_mpi_recv_decline_get(x, "memory not registered");
                return;
            }
        }
        if (status != UCS_OK) {
            x->region = NULL;
            umr_mpi_recv_unget(x);
            umr_mpi_recv_fault(x, status);
            return;
        }
    }
    x->comp.func   = umr_mpi_recv_get_done;
    x->comp.count  = 1;
    x->comp.status = UCS_OK;
    if (UMR_MPI_FAULT(UMR_MPI_FAULT_MDWAIT)) {
        status = UCS_ERR_TIMED_OUT;
    } else if (UMR_MPI_FAULT(UMR_MPI_FAULT_POST)) {
        status = UCS_ERR_IO_ERROR;
    } else {
        /* a key joining several allocations is the local side itself */
        status = uct_umr_ep_get_layout(x->peer->ep,
                                       (x->lkey != NULL) ? x->lkey->memh :
                                                           x->region->memh,
                                       x->buf,
                                       info->layout, x->count, 0, x->moved, 0,
                                       x->rkey, &x->comp);
    }
    if (ucs_unlikely(status == UCS_ERR_EXCEEDS_LIMIT)) {
        umr_mpi_recv_decline_get(x, "layout beyond the key budget");
    } else if (status == UCS_ERR_NO_RESOURCE) {
        x->state = UMR_MPI_X_GET;     /* no room: again from progress */
        umr_mpi_work_post(&x->work);
    } else if (status != UCS_INPROGRESS) {
        x->comp.status = status;
        umr_mpi_recv_get_done(&x->comp);
    }
}

/* CTL: x->ctl holds a control message of x->peer (a protocol peer). */
static void umr_mpi_recv_ctl_step(umr_mpi_xfer_t *x)
{
    umr_mpi_peer_t *peer = x->peer;
    umr_mpi_ctl_t *ctl   = &x->ctl;
    umr_mpi_type_slot_t *slot;
    int rc;

    UMR_MPI_VERBOSE(20, "control message from rank %d: %lu bytes",
                    peer->world_rank, (unsigned long)ctl->length);
    if (peer->rail == NULL) {
        /* no rail of ours reaches the sender: declined (no rail needed);
         * one with a key (its rail reaches us) also retires us at the
         * sender, which passes through from now on */
        ++umr_mpi.cnt.declined;
        umr_mpi_recv_decline(x, (ctl->rkey_len != 0) ?
                                (UMR_MPI_ACK_RETIRE | UMR_MPI_ACK_NORAIL) : 0);
        return;
    }
    if (umr_mpi_peer_retired(peer)) {
        umr_mpi_recv_fallback(x, "retired");
        return;
    }
    if (ctl->rkey_len == 0) {
        /* an escape without a key (its sender's key could not be made, or
         * it retired us or its rail): declined, nothing retired */
        umr_mpi_recv_fallback(x, NULL);
        return;
    }
    if ((ctl->rkey_len != peer->rail->rkey_size) ||
        (ctl->rkey_len + ctl->addr_len > sizeof(ctl->data))) {
        umr_mpi_recv_fallback(x, "malformed control message");
        return;
    }
    /* the decision, knowing both layouts (a truncating receive is not
     * declined: the get truncates) */
    if (ctl->length <= x->length) {
        slot = umr_mpi_types_lookup(x->key);
        if (umr_mpi_choose_recv(x->key, (slot != NULL) ? slot->info : NULL,
                                ctl->length, ctl->sblocks, peer) ==
            UMR_MPI_PASS) {
            umr_mpi_recv_fallback(x, NULL);
            return;
        }
    }
    rc = UMR_MPI_FAULT(UMR_MPI_FAULT_CONNECT) ? -1 :
         umr_mpi_peer_handshake(peer, (ctl->flags & UMR_MPI_CTL_ADDR) ?
                                      ctl->data + ctl->rkey_len : NULL,
                                ctl->addr_len);
    if (rc == UMR_MPI_PEER_BUSY) {
        /* no connection now (budget): this message only */
        x->busy = 1;
        umr_mpi_recv_fallback(x, NULL);
        return;
    }
    if (rc < 0) {
        umr_mpi_recv_fallback(x, "connect failed");
        return;
    }
    /* connected (or connecting): the peer stays until we are done */
    umr_mpi_peer_hold(peer);
    x->peer_held = 1;
    x->state     = UMR_MPI_X_GET;
    if (rc == 0) {
        umr_mpi_peer_wait(peer, &x->work);
        return;
    }
    umr_mpi_recv_get(x);
}

/* CLASSIFY: a protocol peer (by its published address, reached by a rail
 * or not: as its sender decided) and the magic, or the MPI's own status. */
static void umr_mpi_recv_classify(umr_mpi_xfer_t *x)
{
    x->peer = umr_mpi_peer_proto(x->rank);
    if (x->peer != NULL) {
        umr_mpi_xops->peek(x, &x->ctl, UMR_MPI_CTL_SIZE);
    }
    if ((x->peer == NULL) || !umr_mpi_wire_is_magic(&x->ctl)) {
        umr_mpi_progress_ref(-1);
        x->state = UMR_MPI_X_PASSED;
        umr_mpi_xops->complete(x);
        return;
    }
    x->state = UMR_MPI_X_CTL;
    umr_mpi_recv_ctl_step(x);
}

/* A receive's next step (progress runs it). */
static void umr_mpi_recv_run(umr_mpi_work_t *work)
{
    umr_mpi_xfer_t *x = ucs_container_of(work, umr_mpi_xfer_t, work);

    switch (x->state) {
    case UMR_MPI_X_CLASSIFY:
        umr_mpi_recv_classify(x);
        break;
    case UMR_MPI_X_CTL:
        umr_mpi_recv_ctl_step(x);
        break;
    default:   /* UMR_MPI_X_GET */
        umr_mpi_recv_get(x);
        break;
    }
}

/* A receive starts its protocol at `state`: in flight (progress wanted)
 * until it completes. */
static void umr_mpi_recv_begin(umr_mpi_xfer_t *x, umr_mpi_xfer_state_t state)
{
    umr_mpi_xfer_begin(x, state);
    x->work.run = umr_mpi_recv_run;
    umr_mpi_progress_ref(1);
}

void umr_mpi_recv_defer(umr_mpi_xfer_t *x)
{
    umr_mpi_recv_begin(x, UMR_MPI_X_CLASSIFY);
    umr_mpi_work_post(&x->work);
}

void umr_mpi_recv_start(umr_mpi_xfer_t *x)
{
    umr_mpi_recv_begin(x, UMR_MPI_X_CLASSIFY);
    umr_mpi_recv_classify(x);
}

void umr_mpi_recv_ctl(umr_mpi_xfer_t *x)
{
    umr_mpi_recv_begin(x, UMR_MPI_X_CTL);
    umr_mpi_recv_ctl_step(x);
}

/* ---- truncated control messages ------------------------------------- */

typedef struct umr_mpi_trunc {
    umr_mpi_work_t work;
    int            rank;
    umr_mpi_ack_t  ack;
} umr_mpi_trunc_t;

static void umr_mpi_trunc_run(umr_mpi_work_t *work)
{
    umr_mpi_trunc_t *t = ucs_container_of(work, umr_mpi_trunc_t, work);

    (void)umr_mpi_send_copy(t->rank, UMR_MPI_MSG_ACK, &t->ack,
                            sizeof(t->ack));
    free(t);
    umr_mpi_progress_ref(-1);
}

void umr_mpi_ack_truncated(umr_mpi_peer_t *peer, uint64_t seq, uint64_t ctx,
                           int tag)
{
    umr_mpi_trunc_t *t = calloc(1, sizeof(*t));

    if (t == NULL) {
        return;   /* the sender keeps waiting, as for a lost message */
    }
    t->work.run = umr_mpi_trunc_run;
    t->rank     = peer->world_rank;
    t->ack.seq  = seq;
    if (seq == UMR_MPI_ACK_BY_TAG) {
        t->ack.ctx = ctx;
        t->ack.tag = tag;
    }
    umr_mpi_work_post(&t->work);
    umr_mpi_progress_ref(1);
}
