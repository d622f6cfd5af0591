/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: the zero-copy protocol of point-to-point messages, one
 * state machine for both sides of a message. The binding keeps matching in
 * the MPI: a zero-copy message is a control message (CTL) of exactly Z
 * bytes on the user's own envelope, and the data moves with one get of the
 * receiver from the sender's layout key into the receive layout. Every
 * other message passes through the MPI untouched. S is the sender, R the
 * receiver; S's data stays in S's buffer, untouched, until S's request
 * completes, so whatever happens S can still send it through the MPI.
 *
 *      S (sender)                                   R (receiver)
 *  binding: pass-through test,               binding: the user's receive,
 *  umr_mpi_choose_send ──pass──> the MPI's   posted to the MPI unchanged;
 *      │ zero-copy                 own send  it completes with Z bytes and
 *      v                                     the magic from a protocol peer
 *  KEY  layout key, endpoint,                ──> CLASSIFY (progress)
 *      ack receive, seq  ──fails──> PASS     (anything else: the MPI's
 *      │ (nothing sent yet: the binding      status; a CTL truncated into
 *      │  sends it itself; an escape goes    a small receive: TRUNC)
 *      │  keyless instead, never raw)
 *      v                                     CLASSIFY  protocol peer and the
 *  CTL_SENT ────── CTL (comm, dst, tag) ───>     magic? no ──> the MPI's own
 *      │                                         status (not ours)
 *      │                                     CTL  checks, umr_mpi_choose_recv,
 *      │                                         the handshake ──> GET, or
 *      │                                         (no rail, retired, keyless,
 *      │                                         malformed, would lose,
 *      │                                         no connection) ──> DECLINE
 *      │                                     GET  rkey, registration, one
 *      │                                         get (no room: retried
 *      │ <────────── ACK(done) ─────────────     from progress); fault
 *      v                                         ──> DECLINE+RETIRE
 *  DONE  <─────────────────────────────────  DONE
 *      ^
 *      │ <──── ACK(FALLBACK[|RETIRE|BUSY|NORAIL]) ── DECLINE  the DATA
 *  DATA_SENT ───── DATA (binding's channel) ──>      receive posted first,
 *      │           the message untouched             then the answer
 *      v                                         ──> DONE when DATA arrives
 *  DONE                                              (its status)
 *
 * Messages (umr_mpi_wire.h):
 *   CTL   S -> R  user's (comm, dst, tag), Z bytes: magic, the send's
 *                 sequence number, length, S's block count, S's layout key
 *                 (+ S's endpoint address while not connected). A CTL
 *                 without a key is always declined: an escape (user data of
 *                 Z bytes that starts with the magic: to a retired peer or
 *                 rail, to a peer no rail reaches, of a type without a
 *                 layout, buffered, or whose key could not be made; it
 *                 never goes raw, whatever the send mode). S and R each
 *                 decide that the other runs the protocol from the
 *                 published addresses alone (umr_mpi_peer_proto), whatever
 *                 their rails reach, so S escapes exactly what R takes for
 *                 a CTL.
 *   ACK   R -> S  (internal, UMR_MPI_MSG_ACK): names S's send by the CTL's
 *                 sequence number, or, when R never saw the CTL's bytes,
 *                 the message's communicator and tag (by tag); flags:
 *                   0                   done: R's get finished (error: the
 *                                       MPI's code, 0 on success)
 *                   FALLBACK            declined: send the data as DATA
 *                   FALLBACK|RETIRE     declined by a fault: also retire the
 *                                       peer (both sides pass through from
 *                                       now on; one line and the counter
 *                                       `retired` each)
 *                   FALLBACK|RETIRE|NORAIL  no rail of R's reaches S (not a
 *                                       fault): S retires R
 *                   FALLBACK|BUSY       no connection now (the budget):
 *                                       this message only, no retirement,
 *                                       no memo
 *   DATA  S -> R  (internal, UMR_MPI_MSG_DATA): the message itself, handed
 *                 to the MPI untouched, into R's receive posted before R
 *                 sent FALLBACK. Both sides handle the declined messages of
 *                 a pair in the same order (one kind, FIFO per pair), so
 *                 each lands in its own receive; a receive smaller than the
 *                 message gets the MPI's own MPI_ERR_TRUNCATE.
 *
 * Sequence numbers: S numbers each zero-copy send (each CTL; a persistent
 * send gets a new one at each start) from one 64-bit counter a process
 * that starts at UMR_MPI_SEQ_FIRST and is never reused; no address goes on
 * the wire. An ACK is taken only when it names a send of S's that waits for
 * its ack from the very peer the ACK came from (by seq: a ring of the
 * waiting sends, then their list; by tag: the one waiting send to that
 * peer on that communicator with that tag). Anything else (a duplicate, a
 * late one, a malformed one, another peer's) is dropped: one line, the
 * counter `acks_dropped`, and a new ACK receive is posted for that peer in
 * place of the one it took. ACK receives still posted when the binding
 * quiesces (spares) are cancelled then.
 *
 * TRUNC (a message of exactly Z bytes into a smaller receive): the binding
 * looks at what the MPI delivered. The CTL's first bytes with its seq:
 * umr_mpi_ack_truncated(seq); none (an MPI that delivers nothing of a
 * truncated message, or fewer bytes than the seq): by tag; data without
 * the magic: nothing. The receive itself completes with the MPI's status.
 *
 * On fault or decline nothing S sent is lost: the CTL was matched by R's
 * receive and the data follows as DATA; on a truncation R answers so that
 * S's request completes. A dead peer is an error of the MPI's messages
 * above (as without the core), never a wait for an answer that cannot
 * come.
 */
#ifndef UMR_MPI_PROTO_H_
#define UMR_MPI_PROTO_H_

#include "umr_mpi_keys.h"
#include "umr_mpi_peer.h"
#include "umr_mpi_wire.h"

#include <uct/api/uct.h>

#include <stddef.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a transfer is (the diagram above). */
typedef enum {
    UMR_MPI_X_IDLE = 0,
    /* sender */
    UMR_MPI_X_CTL_SENT,       /* CTL posted, its ACK awaited */
    UMR_MPI_X_DATA_SENT,      /* declined: DATA posted */
    /* receiver */
    UMR_MPI_X_CLASSIFY,       /* Z bytes with the magic arrived: ours? */
    UMR_MPI_X_CTL,            /* x->ctl holds a CTL */
    UMR_MPI_X_GET,            /* connected: post the get */
    UMR_MPI_X_DECLINED,       /* DATA receive posted, answer sent */
    /* both */
    UMR_MPI_X_DONE,           /* complete: x->error, x->length */
    UMR_MPI_X_PASSED          /* receiver: not a CTL, the MPI's own status
                                 stands */
} umr_mpi_xfer_state_t;

/* One side of one zero-copy message: the binding embeds it in its request
 * and fills the fields marked (binding) before starting it. */
typedef struct umr_mpi_xfer {
    umr_mpi_work_t        work;       /* its next step in progress */
    umr_mpi_comp_t        ctl_comp;   /* the binding's operations on it */
    umr_mpi_comp_t        data_comp;  /* (umr_mpi_xfer_ops_t) ended */
    ucs_list_link_t       pending;    /* sender: among the sends waiting
                                         for their ack */
    umr_mpi_xfer_state_t  state;
    /* (binding) the user's data and envelope */
    void                  *buf;
    size_t                count;
    uintptr_t             key;        /* the datatype (umr_mpi_types.h) */
    const umr_mpi_dtype_t *info;      /* sender: its summary (NULL: no
                                         layout, an escape goes keyless) */
    size_t                length;     /* sender: packed bytes; receiver:
                                         the bytes the receive holds */
    int                   rank;       /* the other side's world rank */
    uint64_t              ctx;        /* the communicator, an id both sides
                                         agree on (acks by tag) */
    int                   tag;
    int                   escape;     /* sender: Z bytes that start with
                                         the magic (never raw) */
    /* the protocol's */
    umr_mpi_peer_t        *peer;
    uint64_t              seq;        /* sender: its sequence number */
    /* from events to has_rkey: zero when a transfer starts
       (umr_mpi_xfer_begin) */
    int                   events;     /* sender: left before DONE */
    int                   declined;   /* sender: declined by cost (memo) */
    int                   busy;       /* receiver: declined, no connection */
    int                   peer_held;  /* holds `peer` (umr_mpi_peer_hold) */
    int                   error;      /* DONE: 0 or the MPI's error code */
    size_t                moved;      /* DONE: the status's bytes */
    umr_mpi_region_t      *region;    /* held while the data moves */
    umr_mpi_lkey_t        *lkey;      /* sender: its layout key; receiver:
                                         the key joining its allocations
                                         (umr_mpi_local_acquire) or NULL */
    int                   has_rkey;   /* receiver: rkey is unpacked */
    uct_rkey_t            rkey;       /* receiver: the sender's key */
    uct_completion_t      comp;
    umr_mpi_ctl_t         ctl;        /* the CTL sent or received */
} umr_mpi_xfer_t;

/* A transfer starts at `state`, holding nothing, nothing moved. */
static inline void umr_mpi_xfer_begin(umr_mpi_xfer_t *x,
                                      umr_mpi_xfer_state_t state)
{
    x->state = state;
    memset(&x->events, 0, offsetof(umr_mpi_xfer_t, rkey) -
                          offsetof(umr_mpi_xfer_t, events));
}

/* The user-message side of the binding (umr_mpi_binding.h): each returns 0
 * or the MPI's error code, and calls `comp` once it ends (when it returned
 * 0; one of the transfer's, which finds the transfer from it). */
typedef struct umr_mpi_xfer_ops {
    /* Send x->ctl (UMR_MPI_CTL_SIZE bytes) on the user's envelope (its
     * communicator, destination and tag; a ready send stays a ready send,
     * every other mode standard). */
    int  (*ctl_send)(umr_mpi_xfer_t *x, umr_mpi_comp_t *comp);
    /* Hand the user's message to the MPI untouched, kind UMR_MPI_MSG_DATA,
     * to / from x->rank: send it (the sender's buffer, count, datatype), or
     * receive it into the user's receive. */
    int  (*data_send)(umr_mpi_xfer_t *x, umr_mpi_comp_t *comp);
    int  (*data_recv)(umr_mpi_xfer_t *x, umr_mpi_comp_t *comp);
    /* The first `len` packed bytes of the receive (what the MPI wrote). */
    void (*peek)(umr_mpi_xfer_t *x, void *out, size_t len);
    /* The transfer is over (DONE: x->error, x->moved; PASSED: the MPI's
     * own status stands). The binding may free `x` here. */
    void (*complete)(umr_mpi_xfer_t *x);
} umr_mpi_xfer_ops_t;

/* The binding's operations (the protocol's own; set by umr_mpi_proto_init). */
extern const umr_mpi_xfer_ops_t *umr_mpi_xops;

/* The protocol of this process: its user-message operations (kept), and
 * its end (MPI_Finalize: the ack receives are cancelled from the peers'
 * quiesce). */
void umr_mpi_proto_init(const umr_mpi_xfer_ops_t *ops);
void umr_mpi_proto_fini(void);

/* umr_mpi_send_start() */
enum {
    UMR_MPI_SENT = 0,         /* the CTL is posted: complete() ends it */
    UMR_MPI_SEND_PASS = 1,    /* nothing sent: the binding sends the
                                 message itself (counted in fallbacks) */
    UMR_MPI_SEND_FAIL = -1    /* an escape that cannot be sent at all (out
                                 of memory): the user's send fails */
};

/* Start the zero-copy send `x` to x->peer (binding fields set; x->peer
 * from umr_mpi_peer_get, or umr_mpi_peer_proto for an escape). */
int umr_mpi_send_start(umr_mpi_xfer_t *x);

/* Receiver: the MPI completed the receive `x` with exactly Z bytes that
 * start with the magic (binding fields set; x->length the status's bytes,
 * x->rank its source). defer: from the MPI's completion callback (CLASSIFY
 * runs in progress); start: now (a blocking receive). */
void umr_mpi_recv_defer(umr_mpi_xfer_t *x);
void umr_mpi_recv_start(umr_mpi_xfer_t *x);
/* The receive `x` takes a CTL the binding holds already (a probed message:
 * x->ctl filled, x->peer from umr_mpi_peer_proto). */
void umr_mpi_recv_ctl(umr_mpi_xfer_t *x);

/* TRUNC: a CTL of `peer` (a protocol peer) was truncated; `seq` its
 * sequence number, or UMR_MPI_ACK_BY_TAG when it could not be read (then
 * `ctx` and `tag` name the message). The answer goes from progress. */
void umr_mpi_ack_truncated(umr_mpi_peer_t *peer, uint64_t seq, uint64_t ctx,
                           int tag);

#ifdef __cplusplus
}
#endif

#endif
