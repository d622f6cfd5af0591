/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: peers. Which rail reaches each process (both must run
 * the same component build, in the same job: the modex of
 * common_umr_rail.h), and the endpoint to it, connected lazily:
 *
 *  - the first messages a sender sends a peer carry its endpoint address
 *    (mca_common_umr_peer_addr, which also posts the receive of the peer's
 *    answer, tag MCA_COMMON_UMR_TAG_CONN);
 *  - the receiver connects, answers with its own address and waits for
 *    MCA_COMMON_UMR_TAG_READY (mca_common_umr_peer_handshake), which the
 *    sender sends once it has connected back;
 *  - work that waits for the peer to be ready (mca_common_umr_peer_wait)
 *    runs in progress once it is.
 * Connected peers are bounded (mca_common_umr_peers_budget): to connect
 * one more, the least recently used idle peer (nothing held, handshake
 * done) is disconnected: its endpoint destroyed (with its caches), and the
 * peer told (MCA_COMMON_UMR_TAG_DISC), which drops its end once idle. Each
 * endpoint of a peer has a generation, carried after its address; a peer's
 * next zero-copy message connects again through the handshake above, with
 * a newer generation. When every connected peer is busy, the message passes
 * through (MCA_COMMON_UMR_PEER_BUSY, counted in budget_passthrough).
 * All of it is nonblocking, through the component's point-to-point
 * messages (mca_common_umr_msg_ops_t) on MPI_COMM_WORLD.
 */
#ifndef MCA_COMMON_UMR_PEER_H_
#define MCA_COMMON_UMR_PEER_H_

#include "common_umr_progress.h"
#include "common_umr_rail.h"

#include <ompi_config.h>
#include <ompi/communicator/communicator.h>
#include <ompi/request/request.h>
#include <opal/class/opal_list.h>

#include <uct/api/uct.h>
#include <ucs/datastruct/list.h>
#include <ucs/sys/math.h>

BEGIN_C_DECLS

/* Internal tags on MPI_COMM_WORLD: negative (never matched by MPI_ANY_TAG)
 * even in pml ucx's 24-bit tag field, and far below the collectives'. */
#define MCA_COMMON_UMR_TAG_CONN    (-0x700002)
#define MCA_COMMON_UMR_TAG_READY   (-0x700003)
#define MCA_COMMON_UMR_TAG_DISC    (-0x700004)

/* An endpoint address as the peers exchange it: the UCT ep address, then
 * the generation of that endpoint (uint32_t). */
#define MCA_COMMON_UMR_PEER_ADDR_MAX (MCA_COMMON_UMR_MAX_ADDR + 4)

/* mca_common_umr_peer_handshake(): no connection now (the budget is full
 * and every connected peer busy, or the peer's end was dropped): decline
 * this message without retiring the peer. */
#define MCA_COMMON_UMR_PEER_BUSY   (-2)

enum {
    MCA_COMMON_UMR_PEER_UNKNOWN = 0,  /* modex not read yet */
    MCA_COMMON_UMR_PEER_NONE,         /* no pml/umr there (or self):
                                         pass through */
    MCA_COMMON_UMR_PEER_NORAIL,       /* pml/umr there, of our protocol in
                                         our job, but no rail of ours
                                         reaches it (rail NULL): no
                                         zero-copy, only the messages that
                                         need no rail (mca_common_umr_
                                         peer_get_umr) */
    MCA_COMMON_UMR_PEER_OK            /* and a rail reaches it */
};

/* The component's own point-to-point messages (bytes on MPI_COMM_WORLD). */
typedef struct mca_common_umr_msg_ops {
    int (*isend)(const void *buf, size_t len, int rank, int tag,
                 ompi_request_t **req_p);
    int (*irecv)(void *buf, size_t len, int rank, int tag,
                 ompi_request_t **req_p);
} mca_common_umr_msg_ops_t;

typedef struct mca_common_umr_peer {
    int                   state;
    int                   world_rank;
    mca_common_umr_rail_t *rail;
    uct_ep_h              ep;
    int                   connected;    /* we connected our ep to the peer's */
    int                   ready;        /* and the peer connected to ours */
    int                   conn_posted;  /* CONN receive posted */
    int                   conn_sent;    /* CONN sent, READY receive posted */
    uint8_t               conn_buf[MCA_COMMON_UMR_PEER_ADDR_MAX];
    uint64_t              ready_buf;
    ompi_request_t        *conn_req;
    ompi_request_t        *ready_req;
    opal_list_t           waiting;      /* work waiting for `ready` */
    mca_common_umr_work_t event;        /* handshake messages arrived */
    int                   ev_queued, ev_conn, ev_ready;
    int                   retired;      /* a fault on the zero-copy path:
                                           pass-through from now on */
    /* the budget of connected peers */
    ucs_list_link_t       lru;          /* in the connected list (has ep) */
    int                   busy;         /* operations holding the peer */
    int                   pinned;       /* mca_common_umr_peer_pin */
    uint32_t              gen;          /* generation of our endpoint */
    uint32_t              remote_gen;   /* newest of the peer's we know */
    int                   disc_pending; /* the peer dropped its end: drop
                                           ours once idle */
    uint32_t              ev_disc;      /* DISC arrived (its generation) */
    struct mca_common_umr_peer_disc *disc; /* the posted DISC receive */
} mca_common_umr_peer_t;

OMPI_DECLSPEC void
mca_common_umr_peers_init(const mca_common_umr_msg_ops_t *ops);
/* A test fault (pml_umr_test_fault=norail, the test variant's only): set
 * before the first peer is resolved, no rail of this process reaches any
 * peer. */
#if UMR_TEST_HOOKS
OMPI_DECLSPEC extern int mca_common_umr_peers_norail;
#else
#define mca_common_umr_peers_norail 0
#endif

/* The value of the budget parameter `param` (before the rails open):
 * "auto" or "-1" -> -1, "unlimited" or "0" -> 0, a count N > 0 -> N;
 * anything else OMPI_ERR_BAD_PARAM after a message naming `param`. */
OMPI_DECLSPEC int mca_common_umr_peers_budget_parse(const char *value,
                                                    const char *param,
                                                    int *max_conns_p);

/* The budget of connected peers (endpoints) of this process: `max_conns`
 * > 0 that many, 0 unlimited, -1 derived from the rails: per mlx5 rail
 * the smaller of the device's QPs (the iface's max_num_eps) x 1/4 and
 * 1/16 of the node's memory over an endpoint's send queue, shared by the
 * ranks on this node (mca_common_umr_cost_conns_budget), the sw rail
 * MCA_COMMON_UMR_SW_CONNS; the smallest applies. One verbose line: the
 * budget and the memory per connected peer. */
#define MCA_COMMON_UMR_SW_CONNS    256
OMPI_DECLSPEC void mca_common_umr_peers_budget(int max_conns,
                                               const char *param);

/* 1 when a message to `peer` must connect it first at a full budget (the
 * least recently used peer's endpoint would go): the choice charges the
 * connection (mca_common_umr_cost_prefer_zcopy_connect). */
OMPI_DECLSPEC int mca_common_umr_peer_reconnects(
        const mca_common_umr_peer_t *peer);

/* An operation on `peer` starts / ends: a held peer is not disconnected,
 * and the least recently held is the first disconnected. */
OMPI_DECLSPEC void mca_common_umr_peer_hold(mca_common_umr_peer_t *peer);
OMPI_DECLSPEC void mca_common_umr_peer_release(mca_common_umr_peer_t *peer);
/* Held until the end: a user that keeps state on the endpoint (osc/umr's
 * keys, its RMA through it) pins the peer, which is then never
 * disconnected (it still counts against the budget). */
OMPI_DECLSPEC void mca_common_umr_peer_pin(mca_common_umr_peer_t *peer);
/* Destroy the endpoints and forget the peers. */
OMPI_DECLSPEC void mca_common_umr_peers_fini(void);

/* A direct-mapped front of the peers table, keyed by the ompi_proc_t (a
 * hash table lookup costs about 170 instructions, a hit here a few): read
 * inline, filled by mca_common_umr_peer_get_slow. A peer, once in it, is
 * there until mca_common_umr_peers_fini (or another proc takes its slot). */
#define MCA_COMMON_UMR_PEER_SLOTS 64   /* power of two */

typedef struct mca_common_umr_peer_slot {
    ompi_proc_t           *proc;
    mca_common_umr_peer_t *peer;
} mca_common_umr_peer_slot_t;

OMPI_DECLSPEC extern mca_common_umr_peer_slot_t
    mca_common_umr_peer_front[MCA_COMMON_UMR_PEER_SLOTS];

static inline mca_common_umr_peer_slot_t *
mca_common_umr_peer_slot(const ompi_proc_t *proc)
{
    return &mca_common_umr_peer_front[((uintptr_t)proc *
                                       0x9e3779b97f4a7c15ull) >> 58];
}

/* `proc` not in its front slot: the peers table (a peer made and its rail
 * resolved on first use), then the slot. */
OMPI_DECLSPEC mca_common_umr_peer_t *
mca_common_umr_peer_get_slow(ompi_proc_t *proc);

/* The peer `rank` of `comm` when a rail reaches it, else NULL (pass
 * through). Peers live until mca_common_umr_peers_fini. */
static inline mca_common_umr_peer_t *
mca_common_umr_peer_get(ompi_communicator_t *comm, int rank)
{
    ompi_proc_t *proc                = ompi_comm_peer_lookup(comm, rank);
    const mca_common_umr_peer_slot_t *slot = mca_common_umr_peer_slot(proc);

    if (OPAL_LIKELY(slot->proc == proc)) {
        return (slot->peer->state == MCA_COMMON_UMR_PEER_OK) ? slot->peer :
                                                               NULL;
    }
    return mca_common_umr_peer_get_slow(proc);
}

/* The peer `rank` of `comm` when it runs pml/umr with our protocol in our
 * job, whether or not a rail reaches it (state OK or NORAIL), else NULL.
 * Both sides of a pair decide this alike, from the modex alone (same
 * version, same job, not self), whatever each side's rails reach: the test
 * of a message of Z bytes with the magic, an escape for its sender, a
 * control message for its receiver (pml_umr_wire.h). A NORAIL peer has no
 * rail: only the messages that need none (keyless control messages,
 * declines, acks). */
static inline mca_common_umr_peer_t *
mca_common_umr_peer_get_umr(ompi_communicator_t *comm, int rank)
{
    ompi_proc_t *proc                = ompi_comm_peer_lookup(comm, rank);
    const mca_common_umr_peer_slot_t *slot = mca_common_umr_peer_slot(proc);

    if (slot->proc != proc) {
        (void)mca_common_umr_peer_get_slow(proc);   /* fills the slot */
        if (slot->proc != proc) {
            return NULL;   /* out of memory */
        }
    }
    return ((slot->peer->state == MCA_COMMON_UMR_PEER_OK) ||
            (slot->peer->state == MCA_COMMON_UMR_PEER_NORAIL)) ? slot->peer :
                                                                 NULL;
}

/* Whether a message to the peer `rank` of `comm` is known to pass through
 * whatever its datatype (the peer is in the front: no rail reaches it, or
 * it is retired, or its rail is); 0 when that is not known yet. Inline, no
 * call: the entry points ask before looking at the datatype. */
static inline int mca_common_umr_peer_passes(ompi_communicator_t *comm,
                                             int rank)
{
    ompi_proc_t *proc                = ompi_comm_peer_lookup(comm, rank);
    const mca_common_umr_peer_slot_t *slot = mca_common_umr_peer_slot(proc);

    return (slot->proc == proc) &&
           ((slot->peer->state != MCA_COMMON_UMR_PEER_OK) ||
            mca_common_umr_rail_out(slot->peer->rail) || slot->peer->retired);
}

/* The peer's endpoint exists (created on first use, within the budget:
 * OMPI_ERR_OUT_OF_RESOURCE when it is full and no peer is idle, counted
 * in budget_passthrough). */
OMPI_DECLSPEC int mca_common_umr_peer_ep(mca_common_umr_peer_t *peer);

/* Until the peer is ready: write our endpoint address to `buf` (at least
 * the rail's ep_addr_len bytes) and return its length, after posting the
 * receive of the peer's answer; 0 when the peer is ready or on failure. */
OMPI_DECLSPEC size_t mca_common_umr_peer_addr(mca_common_umr_peer_t *peer,
                                              void *buf);

/* Before a zero-copy message to `peer` (OMPI_ERR_OUT_OF_RESOURCE: no
 * connection now, pass it through): its endpoint exists, and `addr`
 * receives what mca_common_umr_peer_addr() writes (*addr_len_p 0: the peer
 * is ready, nothing to carry). */
OMPI_DECLSPEC int mca_common_umr_peer_prepare(mca_common_umr_peer_t *peer,
                                              void *addr, size_t *addr_len_p);

/* A message from `peer` arrived carrying its endpoint address (`addr` NULL:
 * none): 1 when zero-copy work may start now, 0 when it must wait for the
 * peer (mca_common_umr_peer_wait), MCA_COMMON_UMR_PEER_BUSY when there is
 * no connection now (decline, do not retire), -1 on failure. */
OMPI_DECLSPEC int mca_common_umr_peer_handshake(mca_common_umr_peer_t *peer,
                                                const void *addr,
                                                size_t addr_len);

/* Run `work` in progress once the peer is ready. */
OMPI_DECLSPEC void mca_common_umr_peer_wait(mca_common_umr_peer_t *peer,
                                            mca_common_umr_work_t *work);

/* A fault on the zero-copy path to or from `peer` (`why`): it is retired,
 * every later message to it passes through (one verbose line, a counter).
 * Its endpoint stays until the end (gets in flight may still complete). */
OMPI_DECLSPEC void mca_common_umr_peer_retire(mca_common_umr_peer_t *peer,
                                              const char *why);

/* The peer passes through: retired itself, or its rail is, or no rail
 * reaches it (NORAIL). */
static inline int mca_common_umr_peer_retired(const mca_common_umr_peer_t *peer)
{
    return (peer->rail == NULL) || mca_common_umr_rail_out(peer->rail) ||
           peer->retired;
}

/* MPI_Finalize has started: let in-flight work finish and cancel the
 * handshake receives that will never match, while MPI_COMM_WORLD works. */
OMPI_DECLSPEC void mca_common_umr_peers_quiesce(void);
/* `fn` runs in mca_common_umr_peers_quiesce, after the work in flight and
 * before the handshake receives are cancelled: a component's own receives
 * to cancel (pml/umr: its ack receives). Up to 4. */
OMPI_DECLSPEC void mca_common_umr_peers_on_quiesce(void (*fn)(void));

END_C_DECLS

#endif
