/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: peers, by their rank in MPI_COMM_WORLD. Which rail
 * reaches each (from the address it published, umr_mpi_rail.h: the same
 * binding version, read through the binding), and the endpoint to it,
 * connected lazily:
 *
 *  - the first messages a sender sends a peer carry its endpoint address
 *    (umr_mpi_peer_prepare, which also posts the receive of the peer's
 *    answer, UMR_MPI_MSG_CONN);
 *  - the receiver connects, answers with its own address and waits for
 *    UMR_MPI_MSG_READY (umr_mpi_peer_handshake), which the sender sends
 *    once it has connected back;
 *  - work that waits for the peer to be ready (umr_mpi_peer_wait) runs in
 *    progress once it is.
 * Connected peers are bounded (umr_mpi_peers_open): to connect one more,
 * the least recently used idle peer (nothing held, handshake done) is
 * disconnected: its endpoint destroyed (with its caches), and the peer told
 * (UMR_MPI_MSG_DISC), which drops its end once idle. Each endpoint of a
 * peer has a generation, carried after its address; a peer's next
 * zero-copy message connects again through the handshake above, with a
 * newer generation. When every connected peer is busy, the message passes
 * through (UMR_MPI_PEER_BUSY, counted in budget_passthrough).
 * All of it is nonblocking, through the binding's internal messages.
 */
#ifndef UMR_MPI_PEER_H_
#define UMR_MPI_PEER_H_

#include "umr_mpi_progress.h"
#include "umr_mpi_rail.h"

#include <uct/api/uct.h>
#include <ucs/datastruct/list.h>
#include <ucs/sys/math.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An endpoint address as the peers exchange it: the UCT ep address, then
 * the generation of that endpoint (uint32_t). */
#define UMR_MPI_PEER_ADDR_MAX (UMR_MPI_MAX_ADDR + 4)

/* umr_mpi_peer_handshake(): no connection now (the budget is full and
 * every connected peer busy, or the peer's end was dropped): decline this
 * message without retiring the peer. */
#define UMR_MPI_PEER_BUSY   (-2)

enum {
    UMR_MPI_PEER_NONE = 0,        /* no core there (or self, or its address
                                     is of another version): pass through */
    UMR_MPI_PEER_NORAIL,          /* the core there, but no rail of ours
                                     reaches it (rail NULL): no zero-copy,
                                     only messages that need no rail */
    UMR_MPI_PEER_OK               /* and a rail reaches it */
};

typedef struct umr_mpi_peer_disc umr_mpi_peer_disc_t;

typedef struct umr_mpi_peer {
    int                   state;
    int                   p2p;          /* both run the point-to-point
                                           protocol (UMR_MPI_ADDR_P2P) */
    int                   world_rank;
    umr_mpi_rail_t        *rail;
    uct_ep_h              ep;
    int                   connected;    /* we connected our ep to the peer's */
    int                   ready;        /* and the peer connected to ours */
    int                   conn_posted;  /* CONN receive posted */
    int                   conn_orphaned;/* that receive was cancelled (our
                                           end dropped): its completion is
                                           ignored, no other posted till
                                           then */
    int                   conn_sent;    /* CONN sent, READY receive posted */
    uint8_t               conn_buf[UMR_MPI_PEER_ADDR_MAX];
    uint64_t              ready_buf;
    umr_mpi_req_h         conn_req;     /* posted, its callback not run */
    umr_mpi_req_h         ready_req;
    umr_mpi_comp_t        conn_comp;    /* their completions */
    umr_mpi_comp_t        ready_comp;
    ucs_list_link_t       waiting;      /* work waiting for `ready` */
    umr_mpi_work_t        event;        /* handshake messages arrived */
    int                   ev_queued, ev_conn, ev_ready;
    int                   retired;      /* a fault on the zero-copy path:
                                           pass-through from now on */
    /* the budget of connected peers */
    ucs_list_link_t       lru;          /* in the connected list (has ep) */
    int                   busy;         /* operations holding the peer */
    int                   pinned;       /* umr_mpi_peer_pin */
    uint32_t              gen;          /* generation of our endpoint */
    uint32_t              remote_gen;   /* newest of the peer's we know */
    int                   disc_pending; /* the peer dropped its end: drop
                                           ours once idle */
    uint32_t              ev_disc;      /* DISC arrived (its generation) */
    umr_mpi_peer_disc_t   *disc;        /* the posted DISC receive */
} umr_mpi_peer_t;

/* The peers, by world rank (NULL: not resolved yet). */
extern umr_mpi_peer_t **umr_mpi_peer_tab;

/* The value of a budget parameter named `param`: "auto" or "-1" -> -1,
 * "unlimited" or "0" -> 0, a count N > 0 -> N; anything else
 * UCS_ERR_INVALID_PARAM after a message naming `param`. */
ucs_status_t umr_mpi_peers_budget_parse(const char *value, const char *param,
                                        int *max_conns_p);

/* The peers of this process, once the rails are open, and the budget of
 * connected peers (endpoints) named `param`: `max_conns` > 0 that many, 0
 * unlimited, -1 derived from the rails: per mlx5 rail the smaller of the
 * device's QPs (the iface's max_num_eps) x 1/4 and 1/16 of the node's
 * memory over an endpoint's send queue, shared by the ranks on this host
 * (umr_mpi_cost_conns_budget), the sw rail UMR_MPI_SW_CONNS; the smallest
 * applies. One verbose line: the budget and the memory per connected peer.
 * And their end (endpoints destroyed, with their caches; peers forgotten),
 * before the rails are released. */
#define UMR_MPI_SW_CONNS    256
ucs_status_t umr_mpi_peers_open(int max_conns, const char *param);
void         umr_mpi_peers_close(void);

/* The budget of connected peers (0: unlimited), and those connected (an
 * endpoint each), least recently held first. */
extern uint64_t        umr_mpi_max_conns;
extern ucs_list_link_t umr_mpi_conns;

/* 1 when a message to `peer` must connect it first at a full budget (the
 * least recently used peer's endpoint would go): the choice charges the
 * connection (umr_mpi_cost_prefer_zcopy_connect). */
static inline int umr_mpi_peer_reconnects(const umr_mpi_peer_t *peer)
{
    return (peer->ep == NULL) && (umr_mpi_max_conns != 0) &&
           (umr_mpi.cnt.conns_live >= umr_mpi_max_conns);
}

/* `rank` not resolved yet (or resolved to NONE when its address was not
 * there: after the binding learns more, umr_mpi_peer_forget lets it be
 * read again): read its address and find the rail that reaches it. NULL:
 * out of memory, or `rank` is not a world rank. */
umr_mpi_peer_t *umr_mpi_peer_resolve(int rank);
void            umr_mpi_peer_forget(int rank);

/* The peer `rank` when a rail reaches it, else NULL (pass through). */
static inline umr_mpi_peer_t *umr_mpi_peer_get(int rank)
{
    umr_mpi_peer_t *peer = ucs_likely((unsigned)rank <
                                      (unsigned)umr_mpi.b->world_size) ?
                           umr_mpi_peer_tab[rank] : NULL;

    if (ucs_unlikely(peer == NULL) &&
        (NULL == (peer = umr_mpi_peer_resolve(rank)))) {
        return NULL;
    }
    return (peer->state == UMR_MPI_PEER_OK) ? peer : NULL;
}

/* The peer `rank` when both run the point-to-point protocol, whether or
 * not a rail reaches it (state OK or NORAIL), else NULL. Both sides of a
 * pair decide this alike, from the published addresses alone, whatever
 * each side's rails reach: the test of a message of Z bytes with the
 * magic, an escape for its sender, a control message for its receiver
 * (umr_mpi_proto.h). A NORAIL peer has no rail: only the messages that need
 * none (keyless control messages, declines, acks). */
static inline umr_mpi_peer_t *umr_mpi_peer_proto(int rank)
{
    umr_mpi_peer_t *peer = ((unsigned)rank < (unsigned)umr_mpi.b->world_size) ?
                           umr_mpi_peer_tab[rank] : NULL;

    if ((peer == NULL) && (NULL == (peer = umr_mpi_peer_resolve(rank)))) {
        return NULL;
    }
    return ((peer->state != UMR_MPI_PEER_NONE) && peer->p2p) ? peer : NULL;
}

/* Whether a message to `rank` is known to pass through whatever its
 * datatype (resolved already: no rail reaches it, or it is retired, or its
 * rail is); 0 when that is not known yet. Inline, no call: the bindings ask
 * before they look at the datatype. */
static inline int umr_mpi_peer_passes(int rank)
{
    const umr_mpi_peer_t *peer;

    if ((unsigned)rank >= (unsigned)umr_mpi.b->world_size) {
        return 1;
    }
    peer = umr_mpi_peer_tab[rank];
    return (peer != NULL) &&
           ((peer->state != UMR_MPI_PEER_OK) ||
            umr_mpi_rail_out(peer->rail) || peer->retired);
}

/* An operation on `peer` starts / ends: a held peer is not disconnected,
 * and the least recently held is the first disconnected. */
static inline void umr_mpi_peer_hold(umr_mpi_peer_t *peer)
{
    ++peer->busy;
    if (peer->ep != NULL) {
        ucs_list_del(&peer->lru);
        ucs_list_add_tail(&umr_mpi_conns, &peer->lru);
    }
}
void umr_mpi_peer_release(umr_mpi_peer_t *peer);
/* Held until the end: a user that keeps state on the endpoint (a window's
 * keys, its RMA through it) pins the peer, which is then never
 * disconnected (it still counts against the budget). */
void umr_mpi_peer_pin(umr_mpi_peer_t *peer);

/* Before a zero-copy message to `peer` (UCS_ERR_NO_RESOURCE: no
 * connection now, pass it through): its endpoint exists, and `addr`
 * (UMR_MPI_PEER_ADDR_MAX bytes) receives our endpoint address while the
 * peer is not ready, after the receive of its answer is posted
 * (*addr_len_p 0: the peer is ready, nothing to carry). */
ucs_status_t umr_mpi_peer_prepare_slow(umr_mpi_peer_t *peer, void *addr,
                                       size_t *addr_len_p);

/* (inline: a peer connected both ways, its end not dropped) */
static inline ucs_status_t umr_mpi_peer_prepare(umr_mpi_peer_t *peer,
                                                void *addr,
                                                size_t *addr_len_p)
{
    if (ucs_likely((peer->ep != NULL) && peer->ready &&
                   !peer->disc_pending)) {
        *addr_len_p = 0;
        return UCS_OK;
    }
    return umr_mpi_peer_prepare_slow(peer, addr, addr_len_p);
}

/* A message from `peer` arrived carrying its endpoint address (`addr` NULL:
 * none): 1 when zero-copy work may start now, 0 when it must wait for the
 * peer (umr_mpi_peer_wait), UMR_MPI_PEER_BUSY when there is no connection
 * now (decline, do not retire), -1 on failure. */
int  umr_mpi_peer_handshake(umr_mpi_peer_t *peer, const void *addr,
                            size_t addr_len);

/* Run `work` in progress once the peer is ready. */
void umr_mpi_peer_wait(umr_mpi_peer_t *peer, umr_mpi_work_t *work);

/* A fault on the zero-copy path to or from `peer` (`why`): it is retired,
 * every later message to it passes through (one verbose line, a counter).
 * Its endpoint stays until the end (operations in flight may complete). */
void umr_mpi_peer_retire(umr_mpi_peer_t *peer, const char *why);

/* The peer passes through: retired itself, or its rail is, or no rail
 * reaches it (NORAIL). */
static inline int umr_mpi_peer_retired(const umr_mpi_peer_t *peer)
{
    return (peer->rail == NULL) || umr_mpi_rail_out(peer->rail) ||
           peer->retired;
}

/* MPI_Finalize has started (the binding calls it while the MPI still
 * works): the work in flight finishes, then the `on_quiesce` functions run
 * (the protocol's ack receives), then the handshake receives that will
 * never match are cancelled. */
void umr_mpi_peers_quiesce(void);
void umr_mpi_peers_on_quiesce(void (*fn)(void));

#ifdef __cplusplus
}
#endif

#endif
