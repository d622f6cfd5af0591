/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: peers (see umr_mpi_peer.h).
 */
#include "umr_mpi_peer.h"
#include "umr_mpi_cost.h"

#include "uct_umr.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

umr_mpi_peer_t **umr_mpi_peer_tab;

/* The budget of connected peers (0: unlimited) and the peers with an
 * endpoint, least recently held first. */
uint64_t umr_mpi_max_conns;
UCS_LIST_HEAD(umr_mpi_conns);
static int umr_mpi_peers_quiescing;

/* A posted DISC receive: the generation of the endpoint the peer dropped. */
struct umr_mpi_peer_disc {
    umr_mpi_comp_t comp;
    umr_mpi_peer_t *peer;
    umr_mpi_req_h  req;
    uint32_t       gen;
};

static void umr_mpi_peer_event_run(umr_mpi_work_t *work);
static void umr_mpi_peer_conn_cb(umr_mpi_comp_t *comp,
                                 const umr_mpi_status_t *status);
static void umr_mpi_peer_ready_cb(umr_mpi_comp_t *comp,
                                  const umr_mpi_status_t *status);


ucs_status_t umr_mpi_peers_budget_parse(const char *value, const char *param,
                                        int *max_conns_p)
{
    char *end;
    long n;

    if ((value == NULL) || !strcmp(value, "auto")) {
        *max_conns_p = -1;
        return UCS_OK;
    }
    if (!strcmp(value, "unlimited")) {
        *max_conns_p = 0;
        return UCS_OK;
    }
    errno = 0;
    n     = strtol(value, &end, 10);
    if ((errno != 0) || (end == value) || (*end != '\0') || (n < -1) ||
        (n > INT_MAX)) {
        umr_mpi_warn("max-conns-rejected", "%s=\"%s\" rejected: the budget "
                     "of connected peers is a count N > 0, \"unlimited\" "
                     "(or 0) or \"auto\" (or -1: a quarter of the device's "
                     "QPs / the ranks of the node); passing everything "
                     "through", param, value);
        return UCS_ERR_INVALID_PARAM;
    }
    *max_conns_p = (int)n;
    return UCS_OK;
}

/* `bytes` as "N KiB" ("N.N KiB", "N B" below 1 KiB, MiB from 1 MiB) */
static void umr_mpi_bytes_str(uint64_t bytes, char *buf, size_t max)
{
    if (bytes < 1024) {
        snprintf(buf, max, "%lu B", (unsigned long)bytes);
    } else if (bytes < 1024 * 1024) {
        snprintf(buf, max, (bytes % 1024) ? "%.1f KiB" : "%.0f KiB",
                 bytes / 1024.0);
    } else {
        snprintf(buf, max, (bytes % (1024 * 1024)) ? "%.1f MiB" : "%.0f MiB",
                 bytes / (1024.0 * 1024.0));
    }
}

/* What a connected peer costs on each rail, from the transport's endpoint
 * QP for the configuration in use (uct_umr_iface_query: the engine's send
 * queue size, EP_UMR and EP_MAX_SGE applied), and at the budget. */
static const char *umr_mpi_peers_mem_str(uint64_t budget, char *str,
                                         size_t max)
{
    char sq[32], total[32];
    uct_umr_iface_attr_t attr;
    uint64_t most = 0;
    size_t len;
    int i;

    len = snprintf(str, max, "per connected peer:");
    for (i = 0; (i < umr_mpi_rails.nrails) && (len < max); ++i) {
        if (uct_umr_iface_query(umr_mpi_rails.rails[i].iface, &attr) !=
            UCS_OK) {
            continue;
        }
        most = ucs_max(most, attr.ep_sq_bytes);
        umr_mpi_bytes_str(attr.ep_sq_bytes, sq, sizeof(sq));
        len += snprintf(str + len, max - len, "%s %s %s of send queue (%u "
                        "WRs, %u SGEs, %s)", (i > 0) ? "," : "",
                        umr_mpi_rails.rails[i].name, sq, attr.ep_sq_len,
                        attr.ep_max_sge,
                        attr.ep_umr ? "keys on the endpoint's QP" :
                                      "RDMA only, keys on the md's QP");
    }
    if (len < max) {
        len += snprintf(str + len, max - len, " + ~1 KiB endpoint");
    }
    if ((budget != 0) && (len < max)) {
        umr_mpi_bytes_str(budget * most, total, sizeof(total));
        snprintf(str + len, max - len, "; at the budget %s of send queues",
                 total);
    }
    return str;
}

/* The node's memory, 0 when unknown. */
static unsigned long long umr_mpi_node_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

    return ((pages > 0) && (size > 0)) ?
           (unsigned long long)pages * (unsigned long long)size : 0;
}

ucs_status_t umr_mpi_peers_open(int max_conns, const char *param)
{
    unsigned locals = (unsigned)umr_mpi.b->local_size;
    uct_umr_iface_attr_t uattr;
    uct_iface_attr_t attr;
    uint64_t budget = 0, derived;
    char mem[512];
    int i;

    ucs_list_head_init(&umr_mpi_conns);
    umr_mpi_peers_quiescing = 0;
    umr_mpi_peer_tab = calloc(umr_mpi.b->world_size,
                              sizeof(*umr_mpi_peer_tab));
    if (umr_mpi_peer_tab == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    if (max_conns >= 0) {
        budget = (uint64_t)max_conns;
    } else {
        /* a quarter of the device's QPs (the rest for UCX, the MPI and
         * others) and a share of the node's memory for the endpoints' send
         * queues (umr_mpi_cost.h), over the ranks of the host */
        for (i = 0; i < umr_mpi_rails.nrails; ++i) {
            if (umr_mpi_rails.rails[i].is_sw ||
                (uct_iface_query(umr_mpi_rails.rails[i].iface, &attr) !=
                 UCS_OK) ||
                (attr.max_num_eps >= UINT32_MAX)) {
                derived = UMR_MPI_SW_CONNS;
            } else {
                if (uct_umr_iface_query(umr_mpi_rails.rails[i].iface,
                                        &uattr) != UCS_OK) {
                    uattr.ep_sq_bytes = 0;
                }
                derived = umr_mpi_cost_conns_budget(attr.max_num_eps,
                                                    ucs_max(locals, 1),
                                                    umr_mpi_node_bytes(),
                                                    uattr.ep_sq_bytes);
            }
            budget = (budget == 0) ? derived : ucs_min(budget, derived);
        }
    }
    umr_mpi_max_conns = budget;
    UMR_MPI_VERBOSE(1, "budget of connected peers: %s%lu (%s=%d, %u local "
                    "ranks, %llu MiB on the node); %s",
                    budget ? "" : "unlimited ", (unsigned long)budget, param,
                    max_conns, locals, umr_mpi_node_bytes() >> 20,
                    umr_mpi_peers_mem_str(budget, mem, sizeof(mem)));
    return UCS_OK;
}

/* The rail that reaches `peer`, from the address it published: the same
 * binding version and protocol (so the same job too: the binding reads
 * only its own job's addresses); no rail of ours reaching it makes it
 * NORAIL (umr_mpi_peer_proto). UMR_MPI_FAULT_NORAIL: no rail reaches any
 * peer. */
static void umr_mpi_peer_find_rail(umr_mpi_peer_t *peer)
{
    umr_mpi_rail_t *rails = umr_mpi_rails.rails;
    const umr_mpi_addr_t *mx = NULL;
    char version[sizeof(mx->version)];
    const void *addr = NULL;
    size_t size      = 0;
    int i, j;

    peer->state = UMR_MPI_PEER_NONE;
    snprintf(version, sizeof(version), "%s%s", umr_mpi.b->version,
             UMR_MPI_PROTO_VERSION);
    if ((peer->world_rank == umr_mpi.b->world_rank) ||
        (umr_mpi.b->lookup(peer->world_rank, &addr, &size) != 0) ||
        (addr == NULL) || (size != sizeof(*mx)) ||
        strncmp(((const umr_mpi_addr_t*)addr)->version, version,
                sizeof(version))) {
        UMR_MPI_VERBOSE(10, "peer %d: not one of ours", peer->world_rank);
        goto out;
    }
    mx        = addr;
    peer->p2p = !!(mx->flags & umr_mpi_rails.flags & UMR_MPI_ADDR_P2P);
    /* local rails in preference order: sw first (same host) */
    for (i = 0; (i < umr_mpi_rails.nrails) && (peer->rail == NULL); ++i) {
        for (j = 0; j < (int)mx->nrails && (j < UMR_MPI_MAX_RAILS); ++j) {
            if ((rails[i].is_sw == !strcmp(mx->rails[j].name, "sw")) &&
                (mx->rails[j].dev_addr_len == rails[i].dev_addr_len) &&
                uct_iface_is_reachable(rails[i].iface,
                    (const uct_device_addr_t*)mx->rails[j].addr,
                    (const uct_iface_addr_t*)(mx->rails[j].addr +
                                              mx->rails[j].dev_addr_len))) {
                peer->rail = &rails[i];
                break;
            }
        }
    }
    if (UMR_MPI_FAULT(UMR_MPI_FAULT_NORAIL)) {
        peer->rail = NULL;
    }
    if (peer->rail != NULL) {
        peer->state = UMR_MPI_PEER_OK;
        UMR_MPI_VERBOSE(10, "peer %d: rail %s", peer->world_rank,
                        peer->rail->name);
    } else {
        /* e.g. another RoCE version or partition: passed through, but for
         * what needs no rail (the peer may reach us) */
        peer->state = UMR_MPI_PEER_NORAIL;
        UMR_MPI_VERBOSE(10, "peer %d: no rail reaches it", peer->world_rank);
    }
out:
    if ((addr != NULL) && (umr_mpi.b->lookup_done != NULL)) {
        umr_mpi.b->lookup_done(addr);
    }
}

umr_mpi_peer_t *umr_mpi_peer_resolve(int rank)
{
    umr_mpi_peer_t *peer;

    if ((umr_mpi_peer_tab == NULL) ||
        ((unsigned)rank >= (unsigned)umr_mpi.b->world_size)) {
        return NULL;
    }
    if (umr_mpi_peer_tab[rank] != NULL) {
        return umr_mpi_peer_tab[rank];
    }
    peer = calloc(1, sizeof(*peer));
    if (peer == NULL) {
        return NULL;
    }
    peer->world_rank    = rank;
    peer->event.run     = umr_mpi_peer_event_run;
    peer->conn_comp.cb  = umr_mpi_peer_conn_cb;
    peer->ready_comp.cb = umr_mpi_peer_ready_cb;
    ucs_list_head_init(&peer->waiting);
    umr_mpi_peer_find_rail(peer);
    umr_mpi_peer_tab[rank] = peer;
    return peer;
}

void umr_mpi_peer_forget(int rank)
{
    umr_mpi_peer_t *peer;

    if ((umr_mpi_peer_tab == NULL) ||
        ((unsigned)rank >= (unsigned)umr_mpi.b->world_size) ||
        (NULL == (peer = umr_mpi_peer_tab[rank])) ||
        (peer->state != UMR_MPI_PEER_NONE)) {
        return;   /* a peer with a state keeps it (nothing is cancelled) */
    }
    umr_mpi_peer_tab[rank] = NULL;
    free(peer);
}

static void umr_mpi_peer_disc_post(umr_mpi_peer_t *peer);
static void umr_mpi_peer_drop(umr_mpi_peer_t *peer, int tell);

/* Nothing holds the peer, no handshake message is awaited: its endpoint
 * may go without losing a message. */
static int umr_mpi_peer_quiet(umr_mpi_peer_t *peer)
{
    return (peer->busy == 0) && (peer->conn_req == NULL) &&
           (peer->ready_req == NULL) && ucs_list_is_empty(&peer->waiting);
}

/* Nothing holds the peer and no handshake message is on its way: its
 * endpoint may go. Either the handshake is done, or the peer never took
 * up our address: every message that carried it was answered (nothing
 * holds the peer), and a receiver that connects answers only once ready,
 * so its CONN cannot be on the way (only our CONN receive is posted). */
static int umr_mpi_peer_idle(umr_mpi_peer_t *peer)
{
    return (peer->busy == 0) && !peer->retired && !peer->disc_pending &&
           (peer->ready || !peer->connected) &&
           (peer->ready_req == NULL) && !peer->ev_queued &&
           ucs_list_is_empty(&peer->waiting) &&
           (peer->ready ? (peer->conn_req == NULL) : !peer->conn_sent);
}

/* Room for one more endpoint: the least recently used idle peer is
 * disconnected when the budget is full. */
static int umr_mpi_conns_room(void)
{
    umr_mpi_peer_t *victim;

    if ((umr_mpi_max_conns == 0) ||
        (umr_mpi.cnt.conns_live < umr_mpi_max_conns)) {
        return 1;
    }
    ucs_list_for_each(victim, &umr_mpi_conns, lru) {
        if (umr_mpi_peer_idle(victim)) {
            UMR_MPI_VERBOSE(10, "peer %d: disconnected (least recently "
                            "used, budget %lu)", victim->world_rank,
                            (unsigned long)umr_mpi_max_conns);
            umr_mpi_peer_drop(victim, 1);
            return 1;
        }
    }
    return 0;
}

/* The peer's endpoint exists (created on first use, within the budget:
 * UCS_ERR_NO_RESOURCE when it is full and no peer is idle, counted in
 * budget_passthrough). */
static ucs_status_t umr_mpi_peer_ep(umr_mpi_peer_t *peer)
{
    uct_ep_params_t params;

    if (peer->ep != NULL) {
        if (peer->disc_pending) {
            /* the peer dropped its end; ours goes once idle */
            ++umr_mpi.cnt.budget_passthrough;
            return UCS_ERR_NO_RESOURCE;
        }
        return UCS_OK;
    }
    if (!umr_mpi_conns_room()) {
        ++umr_mpi.cnt.budget_passthrough;
        return UCS_ERR_NO_RESOURCE;
    }
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface      = peer->rail->iface;
    if (uct_ep_create(&params, &peer->ep) != UCS_OK) {
        peer->ep = NULL;
        return UCS_ERR_IO_ERROR;
    }
    ++peer->gen;
    ucs_list_add_tail(&umr_mpi_conns, &peer->lru);
    if (++umr_mpi.cnt.conns_live > umr_mpi.cnt.conns_max) {
        umr_mpi.cnt.conns_max = umr_mpi.cnt.conns_live;
    }
    return UCS_OK;
}

void umr_mpi_peer_pin(umr_mpi_peer_t *peer)
{
    if (!peer->pinned) {
        peer->pinned = 1;
        umr_mpi_peer_hold(peer);
    }
}

static void umr_mpi_peer_event(umr_mpi_peer_t *peer);

void umr_mpi_peer_release(umr_mpi_peer_t *peer)
{
    if ((--peer->busy == 0) && peer->disc_pending) {
        umr_mpi_peer_event(peer);   /* drop our end in progress */
    }
}

/* Our endpoint address as peers exchange it: the ep address, then its
 * generation. 0 on failure. */
static size_t umr_mpi_peer_own_addr(umr_mpi_peer_t *peer, uint8_t *buf)
{
    if (uct_ep_get_address(peer->ep, (uct_ep_addr_t*)buf) != UCS_OK) {
        return 0;
    }
    memcpy(buf + peer->rail->ep_addr_len, &peer->gen, sizeof(peer->gen));
    return peer->rail->ep_addr_len + sizeof(peer->gen);
}

static uint32_t umr_mpi_addr_gen(const umr_mpi_peer_t *peer,
                                 const uint8_t *addr)
{
    uint32_t gen;

    memcpy(&gen, addr + peer->rail->ep_addr_len, sizeof(gen));
    return gen;
}

static int umr_mpi_peer_connect(umr_mpi_peer_t *peer, const uint8_t *ep_addr)
{
    ucs_status_t status;

    if (peer->connected) {
        return 0;
    }
    /* the mlx5_umr ep address carries the device address */
    status = uct_ep_connect_to_ep(peer->ep,
                                  (const uct_device_addr_t*)(ep_addr +
                                      peer->rail->ep_addr_len -
                                      peer->rail->dev_addr_len),
                                  (const uct_ep_addr_t*)ep_addr);
    if (status != UCS_OK) {
        umr_mpi_warn("connect-failed", "connecting to rank %d failed: %s",
                     peer->world_rank, ucs_status_string(status));
        return -1;
    }
    peer->connected  = 1;
    peer->remote_gen = umr_mpi_addr_gen(peer, ep_addr);
    ++umr_mpi.cnt.connects;
    umr_mpi_peer_disc_post(peer);
    return 0;
}

static void umr_mpi_peer_set_ready(umr_mpi_peer_t *peer)
{
    umr_mpi_work_t *work;

    peer->ready = 1;
    while (!ucs_list_is_empty(&peer->waiting)) {
        work = ucs_list_extract_head(&peer->waiting, umr_mpi_work_t, list);
        umr_mpi_work_post(work);
    }
}

void umr_mpi_peer_wait(umr_mpi_peer_t *peer, umr_mpi_work_t *work)
{
    ucs_list_add_tail(&peer->waiting, &work->list);
}

static void umr_mpi_peer_event(umr_mpi_peer_t *peer)
{
    if (!peer->ev_queued) {
        peer->ev_queued = 1;
        umr_mpi_event_post(&peer->event);
        umr_mpi_progress_ref(1);
    }
}

/* The completions of the handshake receives (CONN, READY) may run inside
 * the MPI: they only queue the event for progress. */
static void umr_mpi_peer_conn_cb(umr_mpi_comp_t *comp,
                                 const umr_mpi_status_t *status)
{
    umr_mpi_peer_t *peer = ucs_container_of(comp, umr_mpi_peer_t, conn_comp);

    peer->conn_req = NULL;
    if (peer->conn_orphaned) {
        peer->conn_orphaned = 0;   /* of an end we dropped: not taken */
        return;
    }
    if (!status->cancelled && !umr_mpi_peers_quiescing) {
        peer->ev_conn = 1;
        umr_mpi_peer_event(peer);
    }
}

static void umr_mpi_peer_ready_cb(umr_mpi_comp_t *comp,
                                  const umr_mpi_status_t *status)
{
    umr_mpi_peer_t *peer = ucs_container_of(comp, umr_mpi_peer_t, ready_comp);

    peer->ready_req = NULL;
    if (!status->cancelled && !umr_mpi_peers_quiescing) {
        peer->ev_ready = 1;
        umr_mpi_peer_event(peer);
    }
}

/* The peer connected to our endpoint and sent us its address. */
static void umr_mpi_peer_conn(umr_mpi_peer_t *peer)
{
    if ((umr_mpi_peer_ep(peer) != UCS_OK) ||
        (umr_mpi_peer_connect(peer, peer->conn_buf) != 0)) {
        ++umr_mpi.cnt.errors;
        return;
    }
    (void)umr_mpi.b->isend(&peer->ready_buf, sizeof(peer->ready_buf),
                           peer->world_rank, UMR_MPI_MSG_READY, NULL);
    if (!peer->ready) {
        umr_mpi_peer_set_ready(peer);
    }
}

/* Run by progress: the handshake messages that arrived. */
static void umr_mpi_peer_event_run(umr_mpi_work_t *work)
{
    umr_mpi_peer_t *peer = ucs_container_of(work, umr_mpi_peer_t, event);

    peer->ev_queued = 0;
    umr_mpi_progress_ref(-1);
    if (peer->ev_conn) {
        peer->ev_conn = 0;
        umr_mpi_peer_conn(peer);
    }
    if (peer->ev_ready) {
        peer->ev_ready = 0;
        if (!peer->ready) {
            umr_mpi_peer_set_ready(peer);
        }
    }
    if (peer->ev_disc) {
        /* the peer dropped the end we are connected to (else: an older
         * one, already gone here) */
        if (peer->connected && (peer->ev_disc == peer->remote_gen)) {
            peer->disc_pending = 1;
        } else if (peer->connected) {
            umr_mpi_peer_disc_post(peer);  /* for the end we know */
        }
        peer->ev_disc = 0;
    }
    if (peer->disc_pending && umr_mpi_peer_quiet(peer)) {
        UMR_MPI_VERBOSE(10, "peer %d: dropped its end, disconnected",
                        peer->world_rank);
        umr_mpi_peer_drop(peer, 0);
    }
}

/* A DISC arrived (or its receive was cancelled: our end went first). */
static void umr_mpi_peer_disc_cb(umr_mpi_comp_t *comp,
                                 const umr_mpi_status_t *status)
{
    umr_mpi_peer_disc_t *disc = ucs_container_of(comp, umr_mpi_peer_disc_t,
                                                  comp);
    umr_mpi_peer_t *peer      = disc->peer;

    if (peer->disc == disc) {
        peer->disc = NULL;
    }
    if (!status->cancelled && !umr_mpi_peers_quiescing) {
        peer->ev_disc = disc->gen;
        umr_mpi_peer_event(peer);
    }
    free(disc);
}

/* Connected: the peer may tell us it dropped its end. */
static void umr_mpi_peer_disc_post(umr_mpi_peer_t *peer)
{
    umr_mpi_peer_disc_t *disc;

    if ((peer->disc != NULL) || (NULL == (disc = calloc(1, sizeof(*disc))))) {
        return;
    }
    disc->peer    = peer;
    disc->comp.cb = umr_mpi_peer_disc_cb;
    /* first: a DISC already there completes it at once (the callback) */
    peer->disc = disc;
    if (umr_mpi.b->irecv(&disc->gen, sizeof(disc->gen), peer->world_rank,
                         UMR_MPI_MSG_DISC, &disc->comp, &disc->req) != 0) {
        peer->disc = NULL;
        free(disc);
    }
}

/* Destroy our endpoint to `peer` (its rkey cache goes with it); `tell`:
 * we chose to, and tell the peer, which drops its end once idle. The
 * peer's next zero-copy message connects again (a newer generation). */
static void umr_mpi_peer_drop(umr_mpi_peer_t *peer, int tell)
{
    umr_mpi_peer_disc_t *disc = peer->disc;
    umr_mpi_req_h req;

    if (tell && peer->connected) {
        (void)umr_mpi_send_copy(peer->world_rank, UMR_MPI_MSG_DISC,
                                &peer->gen, sizeof(peer->gen));
    }
    if (disc != NULL) {
        /* its completion frees it (cancelled, or a DISC of an older end) */
        peer->disc = NULL;
        umr_mpi.b->cancel(disc->req);
    }
    if (peer->conn_req != NULL) {
        /* a CONN that never came: whatever becomes of its receive is
         * ignored (its completion may run inside the cancel) */
        req                 = peer->conn_req;
        peer->conn_orphaned = 1;
        umr_mpi.b->cancel(req);
    }
    uct_ep_destroy(peer->ep);
    peer->ep = NULL;
    ucs_list_del(&peer->lru);
    --umr_mpi.cnt.conns_live;
    ++umr_mpi.cnt.disconnects;
    peer->connected    = 0;
    peer->ready        = 0;
    peer->conn_posted  = 0;
    peer->conn_sent    = 0;
    peer->disc_pending = 0;
}

ucs_status_t umr_mpi_peer_prepare_slow(umr_mpi_peer_t *peer, void *addr,
                                       size_t *addr_len_p)
{
    ucs_status_t status = umr_mpi_peer_ep(peer);

    if (status != UCS_OK) {
        return status;
    }
    *addr_len_p = 0;
    if (peer->ready) {
        return UCS_OK;
    }
    if (!peer->conn_posted) {
        if (peer->conn_orphaned) {
            /* the receive of an end we dropped is not back yet */
            ++umr_mpi.cnt.budget_passthrough;
            return UCS_ERR_NO_RESOURCE;
        }
        if (umr_mpi.b->irecv(peer->conn_buf, sizeof(peer->conn_buf),
                             peer->world_rank, UMR_MPI_MSG_CONN,
                             &peer->conn_comp, &peer->conn_req) != 0) {
            peer->conn_req = NULL;
            return UCS_ERR_NO_MEMORY;
        }
        peer->conn_posted = 1;
    }
    *addr_len_p = umr_mpi_peer_own_addr(peer, addr);
    return UCS_OK;
}

int umr_mpi_peer_handshake(umr_mpi_peer_t *peer, const void *addr,
                           size_t addr_len)
{
    uint8_t own[UMR_MPI_PEER_ADDR_MAX];
    size_t own_len;
    uint32_t gen = 0;
    ucs_status_t status;

    if (addr != NULL) {
        if (addr_len != peer->rail->ep_addr_len + sizeof(gen)) {
            return -1;
        }
        gen = umr_mpi_addr_gen(peer, addr);
        if (peer->connected && (gen > peer->remote_gen)) {
            /* the peer connects again: its end we know is gone */
            peer->disc_pending = 1;
            if (!umr_mpi_peer_quiet(peer) || peer->ev_queued) {
                goto busy;
            }
            umr_mpi_peer_drop(peer, 0);
        }
    }
    if (peer->disc_pending) {
        goto busy;
    }
    if (peer->ready) {
        return 1;
    }
    if (!peer->connected) {
        /* no address: the peer still thinks us connected to an end we
         * dropped (it learns from our DISC); an older address: gone */
        if ((addr == NULL) || (gen <= peer->remote_gen)) {
            goto busy;
        }
        status = umr_mpi_peer_ep(peer);   /* counts a full budget */
        if (status != UCS_OK) {
            return (status == UCS_ERR_NO_RESOURCE) ? UMR_MPI_PEER_BUSY : -1;
        }
        if (umr_mpi_peer_connect(peer, addr) != 0) {
            return -1;
        }
    }
    if (!peer->conn_sent) {
        /* the receive of READY first, then our address (sent from a copy:
         * the MPI may send it after we return) */
        if ((0 == (own_len = umr_mpi_peer_own_addr(peer, own))) ||
            (umr_mpi.b->irecv(&peer->ready_buf, sizeof(peer->ready_buf),
                              peer->world_rank, UMR_MPI_MSG_READY,
                              &peer->ready_comp, &peer->ready_req) != 0)) {
            return -1;
        }
        if (umr_mpi_send_copy(peer->world_rank, UMR_MPI_MSG_CONN, own,
                              own_len) != 0) {
            return -1;
        }
        peer->conn_sent = 1;
    }
    return peer->ready;

busy:
    ++umr_mpi.cnt.budget_passthrough;
    return UMR_MPI_PEER_BUSY;
}

void umr_mpi_peer_retire(umr_mpi_peer_t *peer, const char *why)
{
    if (peer->retired || (peer->rail == NULL)) {
        return;   /* (no rail reaches it: nothing to retire) */
    }
    peer->retired = 1;
    ++umr_mpi.cnt.retired;
    UMR_MPI_VERBOSE(1, "rank %d retired to pass-through: %s",
                    peer->world_rank, why);
}

#define UMR_MPI_QUIESCE_FNS 4
static void (*umr_mpi_quiesce_fns[UMR_MPI_QUIESCE_FNS])(void);

void umr_mpi_peers_on_quiesce(void (*fn)(void))
{
    size_t i;

    for (i = 0; i < UMR_MPI_QUIESCE_FNS; ++i) {
        if ((umr_mpi_quiesce_fns[i] == NULL) ||
            (umr_mpi_quiesce_fns[i] == fn)) {
            umr_mpi_quiesce_fns[i] = fn;
            return;
        }
    }
    /* cannot happen: one function a protocol */
}

/* Cancel a handshake receive and wait for its completion. */
static void umr_mpi_peer_cancel(umr_mpi_req_h *req_p)
{
    if (*req_p != NULL) {
        umr_mpi.b->cancel(*req_p);
        while (*req_p != NULL) {
            umr_mpi.b->progress();
        }
    }
}

void umr_mpi_peers_quiesce(void)
{
    umr_mpi_peer_t *peer;
    umr_mpi_req_h req;
    size_t i;
    int r;

    if (umr_mpi_peer_tab == NULL) {
        return;
    }
    umr_mpi_progress_drain();
    for (i = 0; i < UMR_MPI_QUIESCE_FNS; ++i) {
        if (umr_mpi_quiesce_fns[i] != NULL) {
            umr_mpi_quiesce_fns[i]();
        }
    }
    /* from here a handshake message that comes is not taken */
    umr_mpi_peers_quiescing = 1;
    for (r = 0; r < umr_mpi.b->world_size; ++r) {
        if (NULL == (peer = umr_mpi_peer_tab[r])) {
            continue;
        }
        umr_mpi_peer_cancel(&peer->conn_req);
        umr_mpi_peer_cancel(&peer->ready_req);
        if (peer->disc != NULL) {
            req        = peer->disc->req;
            peer->disc = NULL;            /* its completion frees it */
            umr_mpi.b->cancel(req);
        }
    }
}

void umr_mpi_peers_close(void)
{
    umr_mpi_peer_t *peer;
    int r;

    if (umr_mpi_peer_tab == NULL) {
        return;
    }
    for (r = 0; r < umr_mpi.b->world_size; ++r) {
        if (NULL == (peer = umr_mpi_peer_tab[r])) {
            continue;
        }
        if (peer->ep != NULL) {
            uct_ep_destroy(peer->ep);
        }
        free(peer);
    }
    free(umr_mpi_peer_tab);
    umr_mpi_peer_tab = NULL;
    ucs_list_head_init(&umr_mpi_conns);
}
