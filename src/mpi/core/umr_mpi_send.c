/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: the sender's side of the protocol (umr_mpi_proto.h):
 * KEY, CTL_SENT, DATA_SENT, DONE, and the acks that move it on.
 */
#include "umr_mpi_proto.h"
#include "umr_mpi_choice.h"

#include <stdlib.h>
#include <string.h>

const umr_mpi_xfer_ops_t *umr_mpi_xops;

/* ---- the sends waiting for their ack --------------------------------- */

/* One posted receive of an ack from `rank`; dropped (it named no send of
 * ours that waits), it is posted again from progress (`work`). Every slot
 * is on umr_mpi_ack_slots until freed: those still posted when the peers
 * quiesce (spares: posted for a control message that could not be sent,
 * or again after a dropped ack) are cancelled then. */
typedef struct umr_mpi_ack_slot {
    umr_mpi_comp_t   comp;
    umr_mpi_work_t   work;
    ucs_list_link_t  list;
    umr_mpi_req_h    req;       /* posted, its completion not run */
    int              rank;      /* the peer's world rank */
    umr_mpi_ack_t    ack;
} umr_mpi_ack_slot_t;

static UCS_LIST_HEAD(umr_mpi_ack_slots);
static int umr_mpi_acks_closed;   /* quiesced: no repost */

/* Zero-copy sends waiting for their ack: oldest first (an ack by tag looks
 * for its send there, and an ack by number that its place below does not
 * hold), and by sequence number in a ring: send number s sits at s modulo
 * its size, until it stops waiting or a later one takes the place. An ack
 * is checked against these before anything of a send is touched (its
 * number must be the one of a send that waits, for that peer's ack): no
 * value that came on the wire is ever used as an address. */
#define UMR_MPI_SENDS_RING  64     /* power of two */
static UCS_LIST_HEAD(umr_mpi_sends_pending);
static umr_mpi_xfer_t *umr_mpi_sends_ring[UMR_MPI_SENDS_RING];
/* never reused (2^64 sends); below it: UMR_MPI_ACK_BY_TAG */
static uint64_t umr_mpi_send_next_seq = UMR_MPI_SEQ_FIRST;

static umr_mpi_xfer_t **umr_mpi_send_place(uint64_t seq)
{
    return &umr_mpi_sends_ring[seq & (UMR_MPI_SENDS_RING - 1)];
}

/* `x` waits for its ack from now: a new sequence number names it. */
static void umr_mpi_send_wait_ack(umr_mpi_xfer_t *x)
{
    x->seq = umr_mpi_send_next_seq++;
    *umr_mpi_send_place(x->seq) = x;
    ucs_list_add_tail(&umr_mpi_sends_pending, &x->pending);
}

/* `x` waits no more (its ack came, or its control message failed). */
static void umr_mpi_send_unwait(umr_mpi_xfer_t *x)
{
    umr_mpi_xfer_t **place = umr_mpi_send_place(x->seq);

    if (*place == x) {
        *place = NULL;
    }
    ucs_list_del(&x->pending);
}

/* The send numbered `seq` that waits for the ack of `rank`, or NULL (a
 * forged or stale ack). */
static umr_mpi_xfer_t *umr_mpi_send_by_seq(int rank, uint64_t seq)
{
    umr_mpi_xfer_t *x = *umr_mpi_send_place(seq), *w;

    if ((x == NULL) || (x->seq != seq)) {
        x = NULL;
        ucs_list_for_each(w, &umr_mpi_sends_pending, pending) {
            if (w->seq == seq) {
                x = w;
                break;
            }
        }
    }
    return ((x != NULL) && (x->peer->world_rank == rank)) ? x : NULL;
}

/* An ack by tag: the one zero-copy send to `rank` on the communicator
 * `ctx` with `tag` that waits, or NULL when there are none or several (the
 * receiver cannot say which: that sender keeps waiting). */
static umr_mpi_xfer_t *umr_mpi_send_by_tag(int rank, uint64_t ctx, int tag)
{
    umr_mpi_xfer_t *x, *found = NULL;
    int n = 0;

    ucs_list_for_each(x, &umr_mpi_sends_pending, pending) {
        if ((x->peer->world_rank == rank) && (x->tag == tag) &&
            (x->ctx == ctx)) {
            found = x;
            ++n;
        }
    }
    if (n != 1) {
        UMR_MPI_VERBOSE(1, "a truncated control message from rank %d (tag "
                        "%d) matches %d zero-copy sends of rank %d", rank,
                        tag, n, umr_mpi.b->world_rank);
        return NULL;
    }
    return found;
}

static void umr_mpi_ack_cb(umr_mpi_comp_t *comp,
                           const umr_mpi_status_t *status);

static int umr_mpi_ack_post_slot(umr_mpi_ack_slot_t *slot)
{
    int rc;

    rc = umr_mpi.b->irecv(&slot->ack, sizeof(slot->ack), slot->rank,
                          UMR_MPI_MSG_ACK, &slot->comp, &slot->req);
    if (rc != 0) {
        slot->req = NULL;
        return rc;
    }
    ++umr_mpi.cnt.acks_posted;
    return 0;
}

static void umr_mpi_ack_slot_free(umr_mpi_ack_slot_t *slot)
{
    ucs_list_del(&slot->list);
    free(slot);
}

/* One more ack receive for the peer `rank`. */
static int umr_mpi_ack_post(int rank)
{
    umr_mpi_ack_slot_t *slot;
    int rc;

    if (UMR_MPI_FAULT(UMR_MPI_FAULT_ACKPOST) ||
        (NULL == (slot = malloc(sizeof(*slot))))) {
        return umr_mpi.b->err_other;
    }
    slot->comp.cb = umr_mpi_ack_cb;
    slot->rank    = rank;
    ucs_list_add_tail(&umr_mpi_ack_slots, &slot->list);
    rc = umr_mpi_ack_post_slot(slot);
    if (rc != 0) {
        umr_mpi_ack_slot_free(slot);
    }
    return rc;
}

/* A dropped ack's receive, posted again (from progress, not inside the
 * MPI's completion): the acks still to come from that peer each find one. */
static void umr_mpi_ack_repost_run(umr_mpi_work_t *work)
{
    umr_mpi_ack_slot_t *slot = ucs_container_of(work, umr_mpi_ack_slot_t,
                                                work);

    umr_mpi_progress_ref(-1);
    if (umr_mpi_acks_closed) {
        umr_mpi_ack_slot_free(slot);
        return;
    }
    if (umr_mpi_ack_post_slot(slot) != 0) {
        UMR_MPI_VERBOSE(1, "rank %d: no ack receive for rank %d posted "
                        "again", umr_mpi.b->world_rank, slot->rank);
        umr_mpi_ack_slot_free(slot);
    }
}

/* An ack that names no send of ours waiting for that peer's ack (a
 * duplicate, late, malformed, another peer's, or by a tag that names none
 * or several): dropped, counted, one line a process at verbosity 1 (the
 * others at 20); its receive is posted again. */
static void umr_mpi_ack_drop(umr_mpi_ack_slot_t *slot)
{
    ++umr_mpi.cnt.acks_dropped;
    UMR_MPI_VERBOSE_FIRST("rank %d: dropped an ack from rank %d that names "
                          "no zero-copy send waiting for it (seq %llu, flags "
                          "0x%x; counted in acks_dropped)",
                          umr_mpi.b->world_rank, slot->rank,
                          (unsigned long long)slot->ack.seq, slot->ack.flags);
    if (umr_mpi_acks_closed) {
        umr_mpi_ack_slot_free(slot);   /* quiesced: not again */
        return;
    }
    slot->work.run = umr_mpi_ack_repost_run;
    umr_mpi_work_post(&slot->work);
    umr_mpi_progress_ref(1);
}

static void umr_mpi_send_event(umr_mpi_xfer_t *x);
static void umr_mpi_send_data_run(umr_mpi_work_t *work);

/* The send named by an ack was declined (`flags`): its data goes as DATA,
 * from progress; one more event. */
static void umr_mpi_send_declined(umr_mpi_xfer_t *x, uint32_t flags)
{
    if (flags & UMR_MPI_ACK_RETIRE) {
        umr_mpi_peer_retire(x->peer, (flags & UMR_MPI_ACK_NORAIL) ?
                                     "no rail of its reaches us" :
                                     "its zero-copy receive failed");
    } else if (!(flags & UMR_MPI_ACK_BUSY)) {
        x->declined = 1;
    }
    ++x->events;
    x->work.run = umr_mpi_send_data_run;
    umr_mpi_work_post(&x->work);
    umr_mpi_progress_ref(1);
}

/* Acks from one peer are matched in arrival order, so any posted slot may
 * carry the ack of any of our sends to that peer: the payload names it,
 * and only a send waiting for that peer's ack is taken. */
static void umr_mpi_ack_cb(umr_mpi_comp_t *comp,
                           const umr_mpi_status_t *status)
{
    umr_mpi_ack_slot_t *slot = ucs_container_of(comp, umr_mpi_ack_slot_t,
                                                comp);
    umr_mpi_xfer_t *x;

    slot->req = NULL;
    --umr_mpi.cnt.acks_posted;
    if (status->cancelled) {
        umr_mpi_ack_slot_free(slot);
        return;
    }
    if ((status->error != 0) || (status->length != sizeof(slot->ack))) {
        x = NULL;    /* not an ack of ours: malformed */
    } else if (slot->ack.seq == UMR_MPI_ACK_BY_TAG) {
        x = umr_mpi_send_by_tag(slot->rank, slot->ack.ctx, slot->ack.tag);
    } else {
        x = umr_mpi_send_by_seq(slot->rank, slot->ack.seq);
    }
    if (x == NULL) {
        umr_mpi_ack_drop(slot);
        return;
    }
    umr_mpi_send_unwait(x);
    if (slot->ack.flags & UMR_MPI_ACK_FALLBACK) {
        umr_mpi_send_declined(x, slot->ack.flags);
    } else if (slot->ack.error != 0) {
        x->error = slot->ack.error;
    }
    umr_mpi_ack_slot_free(slot);
    umr_mpi_send_event(x);
}

/* The peers quiesce (MPI_Finalize starts, the MPI still works): the ack
 * receives still posted are cancelled (their completion frees the slot),
 * and none is posted again. An ack that matched before its cancel is taken
 * as any. */
static void umr_mpi_send_quiesce(void)
{
    umr_mpi_ack_slot_t *slot, *tmp;
    int posted;

    umr_mpi_acks_closed = 1;
    ucs_list_for_each_safe(slot, tmp, &umr_mpi_ack_slots, list) {
        if (slot->req != NULL) {
            umr_mpi.b->cancel(slot->req);
        }
    }
    do {
        posted = 0;
        ucs_list_for_each(slot, &umr_mpi_ack_slots, list) {
            posted |= (slot->req != NULL);
        }
        if (posted) {
            umr_mpi.b->progress();
        }
    } while (posted);
    UMR_MPI_VERBOSE(10, "rank %d: ack receives cancelled, %lu still posted",
                    umr_mpi.b->world_rank,
                    (unsigned long)umr_mpi.cnt.acks_posted);
}

void umr_mpi_proto_init(const umr_mpi_xfer_ops_t *ops)
{
    umr_mpi_xops        = ops;
    umr_mpi_acks_closed = 0;
    umr_mpi_peers_on_quiesce(umr_mpi_send_quiesce);
}

void umr_mpi_proto_fini(void)
{
    memset(umr_mpi_sends_ring, 0, sizeof(umr_mpi_sends_ring));
}

/* ---- the send --------------------------------------------------------- */

/* The send's layout key (and its region), if it holds one, goes back. */
static void umr_mpi_send_unkey(umr_mpi_xfer_t *x)
{
    if (x->lkey != NULL) {
        umr_mpi_lkey_release(x->region, x->lkey);
        x->lkey   = NULL;
        x->region = NULL;
    }
}

/* One of the events of a zero-copy send (control message sent, ack
 * received, declined data sent): the last completes it. */
static void umr_mpi_send_event(umr_mpi_xfer_t *x)
{
    if (--x->events > 0) {
        return;
    }
    umr_mpi_send_unkey(x);
    if (x->peer_held) {
        x->peer_held = 0;
        umr_mpi_peer_release(x->peer);
    }
    x->state = UMR_MPI_X_DONE;
    umr_mpi_xops->complete(x);
}

/* The control message, or the declined data, was sent (its error, if
 * any, is the send's). */
static void umr_mpi_send_sent(umr_mpi_xfer_t *x, const umr_mpi_status_t *st)
{
    if (st->error != 0) {
        x->error = st->error;
    }
    umr_mpi_send_event(x);
}

static void umr_mpi_send_ctl_cb(umr_mpi_comp_t *comp,
                                const umr_mpi_status_t *status)
{
    umr_mpi_send_sent(ucs_container_of(comp, umr_mpi_xfer_t, ctl_comp),
                      status);
}

static void umr_mpi_send_data_cb(umr_mpi_comp_t *comp,
                                 const umr_mpi_status_t *status)
{
    umr_mpi_send_sent(ucs_container_of(comp, umr_mpi_xfer_t, data_comp),
                      status);
}

/* Whether `why` was said before (a few distinct reasons a process), and
 * it is now. */
static int umr_mpi_send_said(const char *why)
{
    static const char *said[8];
    int i;

    for (i = 0; (i < 8) && (said[i] != NULL); ++i) {
        if (said[i] == why) {
            return 1;
        }
    }
    if (i < 8) {
        said[i] = why;
    }
    return i == 8;
}

/* Zero-copy was chosen, but nothing was sent yet and the message passes
 * through, counted once in fallbacks, with one line a process for each
 * reason (`why`): its layout cannot get a key on this rail
 * (UCS_ERR_EXCEEDS_LIMIT, umr_mpi_keys.h: beyond what a key takes, memory
 * of an MPI_BOTTOM type that does not register as one region), which stays
 * so: this type and count pass through from now on, without another try;
 * this buffer's memory does not register (UCS_ERR_UNSUPPORTED: this
 * message alone); not now
 * (UCS_ERR_NO_RESOURCE: the key pool's keys in use; every connected peer
 * busy: the budget); or the peer is not reachable. Never for an escape (it
 * would go raw): that goes keyless, or fails (umr_mpi_send_escape_fail). */
static void umr_mpi_send_fallback(umr_mpi_xfer_t *x, ucs_status_t status,
                                  const char *why)
{
    ++umr_mpi.cnt.fallbacks;
    if (status == UCS_ERR_EXCEEDS_LIMIT) {
        umr_mpi_choice_pass(x->key, x->count, x->peer);
    }
    if (why == NULL) {
        why = (status == UCS_ERR_NO_RESOURCE) ?
              "every connected peer is busy (the budget of connected peers)" :
              "the peer is not reachable zero-copy";
    }
    if (umr_mpi_send_said(why)) {
        return;
    }
    UMR_MPI_VERBOSE(1, "rank %d: %s%s: %s through (counted in fallbacks)",
                    umr_mpi.b->world_rank,
                    (status == UCS_ERR_EXCEEDS_LIMIT) ? "a layout that gets "
                    "no key on this rail: " :
                    (status == UCS_ERR_NO_RESOURCE) ? "no layout key now: " :
                    "", why,
                    (status == UCS_ERR_EXCEEDS_LIMIT) ? "that type and count "
                    "pass" : "such messages pass");
}

/* The receiver declined: send the data as DATA, where it posted the
 * receive. The user's buffer is as it was: the send has not completed. */
static void umr_mpi_send_data_run(umr_mpi_work_t *work)
{
    umr_mpi_xfer_t *x = ucs_container_of(work, umr_mpi_xfer_t, work);
    int rc;

    umr_mpi_progress_ref(-1);
    umr_mpi_send_unkey(x);
    if (x->declined) {
        /* declined by cost: this datatype and count pass through from now
         * on, without a control message's round trip (not for a peer no
         * rail reaches: an escape, no choice made) */
        x->declined = 0;
        if (x->peer->rail != NULL) {
            umr_mpi_choice_pass(x->key, x->count, x->peer);
        }
    }
    x->state = UMR_MPI_X_DATA_SENT;
    rc       = umr_mpi_xops->data_send(x, &x->data_comp);
    if (rc != 0) {
        x->error = rc;
        umr_mpi_send_event(x);
        return;
    }
    ++umr_mpi.cnt.fallback_sends;
}

/* An escape that cannot go even as a keyless control message (no memory
 * for its ack receive or its entry among the sends waiting for acks): it
 * must not go raw either (its receiver would take it for a control
 * message), so the user's send fails; counted in errors, one line a
 * process at verbosity 1 (the others at 20). */
static int umr_mpi_send_escape_fail(umr_mpi_xfer_t *x)
{
    ++umr_mpi.cnt.errors;
    UMR_MPI_VERBOSE_FIRST("rank %d: an escape to rank %d (%d bytes that "
                          "start with the magic) cannot be sent: out of "
                          "memory for its ack; the send fails (counted in "
                          "errors)", umr_mpi.b->world_rank,
                          x->peer->world_rank, UMR_MPI_CTL_SIZE);
    return UMR_MPI_SEND_FAIL;
}

/* The layout key and the endpoint of a send with a key: UCS_OK with the
 * key and the address (while not connected) in the CTL. */
static ucs_status_t umr_mpi_send_key(umr_mpi_xfer_t *x, size_t *addr_len,
                                     const char **why_p)
{
    umr_mpi_peer_t *peer = x->peer;
    ucs_status_t status;

    /* the region and its layout key: registered once, reused; the peer
     * only reads it (which a read-only mapping allows) */
    status = umr_mpi_lkey_acquire(peer->rail, x->buf, x->info, x->count,
                                  PROT_READ, &x->region, &x->lkey, why_p);
    if (status != UCS_OK) {
        return status;
    }
    /* the endpoint, and its address while the peer is not connected */
    status = umr_mpi_peer_prepare(peer, x->ctl.data + peer->rail->rkey_size,
                                  addr_len);
    if (status != UCS_OK) {
        umr_mpi_send_unkey(x);
        return status;
    }
    memset(&x->ctl, 0, offsetof(umr_mpi_ctl_t, data));
    x->ctl.rkey_len = peer->rail->rkey_size;
    memcpy(x->ctl.data, x->lkey->rkey, x->ctl.rkey_len);
    return UCS_OK;
}

/* Nothing of `x` was sent (`status`: why): it passes through, but an
 * escape fails (it never goes raw). */
static int umr_mpi_send_unsent(umr_mpi_xfer_t *x, ucs_status_t status,
                               const char *why)
{
    umr_mpi_send_unkey(x);
    if (x->escape) {
        return umr_mpi_send_escape_fail(x);
    }
    umr_mpi_send_fallback(x, status, why);
    return UMR_MPI_SEND_PASS;
}

int umr_mpi_send_start(umr_mpi_xfer_t *x)
{
    umr_mpi_peer_t *peer = x->peer;
    umr_mpi_ctl_t *ctl   = &x->ctl;
    size_t addr_len      = 0;
    int keyless          = (x->info == NULL) || umr_mpi_peer_retired(peer);
    const char *why      = NULL;
    ucs_status_t status;
    int rc;

    umr_mpi_xfer_begin(x, UMR_MPI_X_IDLE);
    x->ctl_comp.cb  = umr_mpi_send_ctl_cb;
    x->data_comp.cb = umr_mpi_send_data_cb;
    if (!keyless) {
        status = umr_mpi_send_key(x, &addr_len, &why);
        if ((status != UCS_OK) && !x->escape) {
            return umr_mpi_send_unsent(x, status, why);
        }
        keyless = (status != UCS_OK);
    }
    if (keyless) {
        /* an escape to a retired peer (or rail), to a peer no rail
         * reaches, of a type without a layout, or whose key could not be
         * made: a control message without a key, which the receiver
         * declines (the data follows as DATA) */
        memset(ctl, 0, offsetof(umr_mpi_ctl_t, data));
        addr_len = 0;
    }
    ctl->magic[0] = UMR_MPI_MAGIC0;
    ctl->magic[1] = UMR_MPI_MAGIC1;
    ctl->length   = x->length;
    ctl->sblocks  = (x->info != NULL) ? x->info->num_blocks * x->count : 0;
    ctl->rail     = (peer->rail != NULL) ?    /* NULL: no rail reaches it */
                    peer->rail - umr_mpi_rails.rails : 0;
    if (addr_len > 0) {
        ctl->addr_len = addr_len;
        ctl->flags   |= UMR_MPI_CTL_ADDR;
    }
    /* waiting for its ack from now (numbered: the CTL names it so): the
     * ack may come inside the send of the CTL */
    umr_mpi_send_wait_ack(x);
    ctl->seq = x->seq;
    if (umr_mpi_ack_post(peer->world_rank) != 0) {
        umr_mpi_send_unwait(x);
        return umr_mpi_send_unsent(x, UCS_ERR_NO_MEMORY,
                                   "no memory to receive its ack");
    }
    x->events = 2;
    if (!peer->retired && (peer->rail != NULL)) {
        /* its connection stays until the ack */
        umr_mpi_peer_hold(peer);
        x->peer_held = 1;
    }
    x->state = UMR_MPI_X_CTL_SENT;
    rc = UMR_MPI_FAULT(UMR_MPI_FAULT_CTLSEND) ? umr_mpi.b->err_other :
         umr_mpi_xops->ctl_send(x, &x->ctl_comp);
    if (rc != 0) {
        /* the posted ack slot stays, a spare for this peer's next ack, or
         * cancelled when the peers quiesce */
        umr_mpi_send_unwait(x);
        ++umr_mpi.cnt.errors;
        x->error  = rc;
        x->events = 1;
        umr_mpi_send_event(x);
        return UMR_MPI_SENT;
    }
    ++umr_mpi.cnt.zcopy_sends;
    umr_mpi.cnt.zcopy_bytes += ctl->length;
    return UMR_MPI_SENT;
}
