/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: peers (see common_umr_peer.h).
 */
#include "common_umr_peer.h"
#include "common_umr.h"
#include "common_umr_help.h"
#include "common_umr_cost.h"

#include "umr_ompi_compat.h"
#include "uct_umr.h"

#include <ompi/proc/proc.h>
#include <opal/class/opal_hash_table.h>
#include <opal/runtime/opal_progress.h>
#include <opal/util/proc.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static opal_hash_table_t mca_common_umr_peers;   /* ompi_proc_t* -> peer */
static const mca_common_umr_msg_ops_t *mca_common_umr_msg;

/* The budget of connected peers (0: unlimited) and the peers with an
 * endpoint, least recently held first. */
static uint64_t mca_common_umr_max_conns;
static UCS_LIST_HEAD(mca_common_umr_conns);

/* A posted DISC receive: the generation of the endpoint the peer dropped. */
typedef struct mca_common_umr_peer_disc {
    mca_common_umr_peer_t *peer;
    ompi_request_t        *req;
    uint32_t              gen;
} mca_common_umr_peer_disc_t;

mca_common_umr_peer_slot_t mca_common_umr_peer_front[MCA_COMMON_UMR_PEER_SLOTS];
#if UMR_TEST_HOOKS
int mca_common_umr_peers_norail;
#endif

static void mca_common_umr_peer_event_run(mca_common_umr_work_t *work);

void mca_common_umr_peers_init(const mca_common_umr_msg_ops_t *ops)
{
    mca_common_umr_msg = ops;
    ucs_list_head_init(&mca_common_umr_conns);
    OBJ_CONSTRUCT(&mca_common_umr_peers, opal_hash_table_t);
    opal_hash_table_init(&mca_common_umr_peers, 64);
}

int mca_common_umr_peers_budget_parse(const char *value, const char *param,
                                      int *max_conns_p)
{
    char *end;
    long n;

    if ((value == NULL) || !strcmp(value, "auto")) {
        *max_conns_p = -1;
        return OMPI_SUCCESS;
    }
    if (!strcmp(value, "unlimited")) {
        *max_conns_p = 0;
        return OMPI_SUCCESS;
    }
    errno = 0;
    n     = strtol(value, &end, 10);
    if ((errno != 0) || (end == value) || (*end != '\0') || (n < -1) ||
        (n > INT_MAX)) {
        mca_common_umr_show_help("help-mpi-common-umr.txt",
                                 "max-conns-rejected", mca_common_umr.who,
                                 param, value);
        return OMPI_ERR_BAD_PARAM;
    }
    *max_conns_p = (int)n;
    return OMPI_SUCCESS;
}

/* `bytes` as "N KiB" ("N.N KiB", "N B" below 1 KiB, MiB from 1 MiB) */
static void mca_common_umr_bytes_str(uint64_t bytes, char *buf, size_t max)
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
static const char *mca_common_umr_peers_mem_str(uint64_t budget)
{
    static char str[512];
    char sq[32], total[32];
    uct_umr_iface_attr_t attr;
    uint64_t most = 0;
    size_t len;
    int i;

    len = snprintf(str, sizeof(str), "per connected peer:");
    for (i = 0; (i < mca_common_umr_rails.nrails) && (len < sizeof(str));
         ++i) {
        if (uct_umr_iface_query(mca_common_umr_rails.rails[i].iface,
                                &attr) != UCS_OK) {
            continue;
        }
        most = ucs_max(most, attr.ep_sq_bytes);
        mca_common_umr_bytes_str(attr.ep_sq_bytes, sq, sizeof(sq));
        len += snprintf(str + len, sizeof(str) - len, "%s %s %s of send "
                        "queue (%u WRs, %u SGEs, %s)", (i > 0) ? "," : "",
                        mca_common_umr_rails.rails[i].name, sq,
                        attr.ep_sq_len, attr.ep_max_sge,
                        attr.ep_umr ? "keys on the endpoint's QP" :
                                      "RDMA only, keys on the md's QP");
    }
    if (len < sizeof(str)) {
        len += snprintf(str + len, sizeof(str) - len, " + ~1 KiB endpoint");
    }
    if ((budget != 0) && (len < sizeof(str))) {
        mca_common_umr_bytes_str(budget * most, total, sizeof(total));
        snprintf(str + len, sizeof(str) - len, "; at the budget %s of send "
                 "queues", total);
    }
    return str;
}

/* The node's memory, 0 when unknown. */
static unsigned long long mca_common_umr_node_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

    return ((pages > 0) && (size > 0)) ?
           (unsigned long long)pages * (unsigned long long)size : 0;
}

void mca_common_umr_peers_budget(int max_conns, const char *param)
{
    unsigned locals = opal_process_info.num_local_peers + 1;
    uct_umr_iface_attr_t uattr;
    uct_iface_attr_t attr;
    uint64_t budget = 0, derived;
    int i;

    if (max_conns >= 0) {
        budget = (uint64_t)max_conns;
    } else {
        /* a quarter of the device's QPs (the rest for UCX, the wrapped PML
         * and others) and a share of the node's memory for the endpoints'
         * send queues (common_umr_cost.h), over the ranks of the node */
        for (i = 0; i < mca_common_umr_rails.nrails; ++i) {
            if (mca_common_umr_rails.rails[i].is_sw ||
                (uct_iface_query(mca_common_umr_rails.rails[i].iface,
                                 &attr) != UCS_OK) ||
                (attr.max_num_eps >= UINT32_MAX)) {
                derived = MCA_COMMON_UMR_SW_CONNS;
            } else {
                if (uct_umr_iface_query(mca_common_umr_rails.rails[i].iface,
                                        &uattr) != UCS_OK) {
                    uattr.ep_sq_bytes = 0;
                }
                derived = mca_common_umr_cost_conns_budget(
                        attr.max_num_eps, locals, mca_common_umr_node_bytes(),
                        uattr.ep_sq_bytes);
            }
            budget = (budget == 0) ? derived : ucs_min(budget, derived);
        }
    }
    mca_common_umr_max_conns = budget;
    MCA_COMMON_UMR_VERBOSE(1, "budget of connected peers: %s%lu (%s=%d, %u "
                           "local ranks, %llu MiB on the node); %s",
                           budget ? "" : "unlimited ", (unsigned long)budget,
                           param, max_conns, locals,
                           mca_common_umr_node_bytes() >> 20,
                           mca_common_umr_peers_mem_str(budget));
}

int mca_common_umr_peer_reconnects(const mca_common_umr_peer_t *peer)
{
    return (peer->ep == NULL) && (mca_common_umr_max_conns != 0) &&
           (mca_common_umr.cnt.conns_live >= mca_common_umr_max_conns);
}

/* The rail that reaches `proc`, or NULL: the component must run there with
 * the same protocol, in the same job (internal messages use
 * MPI_COMM_WORLD); when it does and no rail reaches it, the peer is
 * NORAIL (mca_common_umr_peer_get_umr). mca_common_umr_peers_norail (a
 * test fault): no rail reaches any peer. */
static void mca_common_umr_peer_resolve(mca_common_umr_peer_t *peer,
                                        ompi_proc_t *proc)
{
    mca_common_umr_rail_t *rails = mca_common_umr_rails.rails;
    mca_common_umr_modex_t *mx   = NULL;
    size_t size                  = 0;
    int rc, i, j;

    peer->state = MCA_COMMON_UMR_PEER_NONE;
    if ((proc == ompi_proc_local()) ||
        (proc->super.proc_name.jobid !=
         ompi_proc_local()->super.proc_name.jobid)) {
        return;
    }
    OPAL_MODEX_RECV(rc, mca_common_umr_rails.owner, &proc->super.proc_name,
                    (void**)&mx, &size);
    if ((rc != OPAL_SUCCESS) || (mx == NULL) || (size != sizeof(*mx)) ||
        strcmp(mx->version, MCA_COMMON_UMR_MODEX_VERSION)) {
        MCA_COMMON_UMR_VERBOSE(10, "peer %u: no pml/umr there",
                               proc->super.proc_name.vpid);
        free(mx);
        return;
    }
    /* local rails in preference order: sw first (same host) */
    for (i = 0; (i < mca_common_umr_rails.nrails) && (peer->rail == NULL);
         ++i) {
        for (j = 0; j < (int)mx->nrails; ++j) {
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
    free(mx);
    peer->world_rank = proc->super.proc_name.vpid;
    if (mca_common_umr_peers_norail) {
        peer->rail = NULL;
    }
    if (peer->rail != NULL) {
        peer->state = MCA_COMMON_UMR_PEER_OK;
        MCA_COMMON_UMR_VERBOSE(10, "peer %d: rail %s", peer->world_rank,
                               peer->rail->name);
    } else {
        /* e.g. another RoCE version or partition: passed through, but
         * for what needs no rail (the peer may reach us) */
        peer->state = MCA_COMMON_UMR_PEER_NORAIL;
        MCA_COMMON_UMR_VERBOSE(10, "peer %d: no rail reaches it",
                               peer->world_rank);
    }
}

mca_common_umr_peer_t *mca_common_umr_peer_get_slow(ompi_proc_t *proc)
{
    mca_common_umr_peer_slot_t *slot = mca_common_umr_peer_slot(proc);
    mca_common_umr_peer_t *peer;

    if (OPAL_SUCCESS !=
        opal_hash_table_get_value_ptr(&mca_common_umr_peers, &proc,
                                      sizeof(proc), (void**)&peer)) {
        peer = calloc(1, sizeof(*peer));
        if (peer == NULL) {
            return NULL;
        }
        OBJ_CONSTRUCT(&peer->waiting, opal_list_t);
        OBJ_CONSTRUCT(&peer->event, opal_list_item_t);
        peer->event.run = mca_common_umr_peer_event_run;
        mca_common_umr_peer_resolve(peer, proc);
        opal_hash_table_set_value_ptr(&mca_common_umr_peers, &proc,
                                      sizeof(proc), peer);
    }
    slot->proc = proc;
    slot->peer = peer;
    return (peer->state == MCA_COMMON_UMR_PEER_OK) ? peer : NULL;
}

static void mca_common_umr_peer_disc_post(mca_common_umr_peer_t *peer);
static void mca_common_umr_peer_drop(mca_common_umr_peer_t *peer, int tell);

/* Nothing holds the peer, no handshake message is awaited: its endpoint
 * may go without losing a message. */
static int mca_common_umr_peer_quiet(mca_common_umr_peer_t *peer)
{
    return (peer->busy == 0) && (peer->conn_req == NULL) &&
           (peer->ready_req == NULL) && opal_list_is_empty(&peer->waiting);
}

/* Nothing holds the peer and no handshake message is on its way: its
 * endpoint may go. Either the handshake is done, or the peer never took
 * up our address: every message that carried it was answered (nothing
 * holds the peer), and a receiver that connects answers only once ready,
 * so its CONN cannot be on the way (only our CONN receive is posted). */
static int mca_common_umr_peer_idle(mca_common_umr_peer_t *peer)
{
    return (peer->busy == 0) && !peer->retired && !peer->disc_pending &&
           (peer->ready || !peer->connected) &&
           (peer->ready_req == NULL) && !peer->ev_queued &&
           opal_list_is_empty(&peer->waiting) &&
           (peer->ready ? (peer->conn_req == NULL) : !peer->conn_sent);
}

/* The CONN receive of a peer that never answered, cancelled: whatever
 * becomes of it is only reaped. */
static int mca_common_umr_peer_orphan_cb(ompi_request_t *req)
{
    (void)mca_common_umr_cb_data_take(req);
    mca_common_umr_reap_add(req);
    return 0;
}

/* Room for one more endpoint: the least recently used idle peer is
 * disconnected when the budget is full. */
static int mca_common_umr_conns_room(void)
{
    mca_common_umr_peer_t *victim;

    if ((mca_common_umr_max_conns == 0) ||
        (mca_common_umr.cnt.conns_live < mca_common_umr_max_conns)) {
        return 1;
    }
    ucs_list_for_each(victim, &mca_common_umr_conns, lru) {
        if (mca_common_umr_peer_idle(victim)) {
            MCA_COMMON_UMR_VERBOSE(10, "peer %d: disconnected (least "
                                   "recently used, budget %lu)",
                                   victim->world_rank,
                                   (unsigned long)mca_common_umr_max_conns);
            mca_common_umr_peer_drop(victim, 1);
            return 1;
        }
    }
    return 0;
}

int mca_common_umr_peer_ep(mca_common_umr_peer_t *peer)
{
    uct_ep_params_t params;

    if (peer->ep != NULL) {
        if (peer->disc_pending) {
            /* the peer dropped its end; ours goes once idle */
            ++mca_common_umr.cnt.budget_passthrough;
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        return OMPI_SUCCESS;
    }
    if (!mca_common_umr_conns_room()) {
        ++mca_common_umr.cnt.budget_passthrough;
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface      = peer->rail->iface;
    if (uct_ep_create(&params, &peer->ep) != UCS_OK) {
        peer->ep = NULL;
        return OMPI_ERROR;
    }
    ++peer->gen;
    ucs_list_add_tail(&mca_common_umr_conns, &peer->lru);
    if (++mca_common_umr.cnt.conns_live > mca_common_umr.cnt.conns_max) {
        mca_common_umr.cnt.conns_max = mca_common_umr.cnt.conns_live;
    }
    return OMPI_SUCCESS;
}

void mca_common_umr_peer_hold(mca_common_umr_peer_t *peer)
{
    ++peer->busy;
    if (peer->ep != NULL) {
        ucs_list_del(&peer->lru);
        ucs_list_add_tail(&mca_common_umr_conns, &peer->lru);
    }
}

void mca_common_umr_peer_pin(mca_common_umr_peer_t *peer)
{
    if (!peer->pinned) {
        peer->pinned = 1;
        mca_common_umr_peer_hold(peer);
    }
}

static void mca_common_umr_peer_event(mca_common_umr_peer_t *peer);

void mca_common_umr_peer_release(mca_common_umr_peer_t *peer)
{
    if ((--peer->busy == 0) && peer->disc_pending) {
        mca_common_umr_peer_event(peer);   /* drop our end in progress */
    }
}

/* Our endpoint address as peers exchange it: the ep address, then its
 * generation. 0 on failure. */
static size_t mca_common_umr_peer_own_addr(mca_common_umr_peer_t *peer,
                                           uint8_t *buf)
{
    if (uct_ep_get_address(peer->ep, (uct_ep_addr_t*)buf) != UCS_OK) {
        return 0;
    }
    memcpy(buf + peer->rail->ep_addr_len, &peer->gen, sizeof(peer->gen));
    return peer->rail->ep_addr_len + sizeof(peer->gen);
}

static uint32_t mca_common_umr_addr_gen(const mca_common_umr_peer_t *peer,
                                        const uint8_t *addr)
{
    uint32_t gen;

    memcpy(&gen, addr + peer->rail->ep_addr_len, sizeof(gen));
    return gen;
}

static int mca_common_umr_peer_connect(mca_common_umr_peer_t *peer,
                                       const uint8_t *ep_addr)
{
    ucs_status_t status;

    if (peer->connected) {
        return OMPI_SUCCESS;
    }
    /* the mlx5_umr ep address carries the device address */
    status = uct_ep_connect_to_ep(peer->ep,
                                  (const uct_device_addr_t*)(ep_addr +
                                      peer->rail->ep_addr_len -
                                      peer->rail->dev_addr_len),
                                  (const uct_ep_addr_t*)ep_addr);
    if (status != UCS_OK) {
        mca_common_umr_show_help("help-mpi-common-umr.txt", "connect-failed",
                                 mca_common_umr.who, peer->world_rank,
                                 ucs_status_string(status));
        return OMPI_ERROR;
    }
    peer->connected  = 1;
    peer->remote_gen = mca_common_umr_addr_gen(peer, ep_addr);
    ++mca_common_umr.cnt.connects;
    mca_common_umr_peer_disc_post(peer);
    return OMPI_SUCCESS;
}

static void mca_common_umr_peer_set_ready(mca_common_umr_peer_t *peer)
{
    opal_list_item_t *item;

    peer->ready = 1;
    while (NULL != (item = opal_list_remove_first(&peer->waiting))) {
        mca_common_umr_work_post((mca_common_umr_work_t*)item);
    }
}

void mca_common_umr_peer_wait(mca_common_umr_peer_t *peer,
                              mca_common_umr_work_t *work)
{
    opal_list_append(&peer->waiting, &work->super);
}

static void mca_common_umr_peer_event(mca_common_umr_peer_t *peer)
{
    if (!peer->ev_queued) {
        peer->ev_queued = 1;
        mca_common_umr_event_post(&peer->event);
        mca_common_umr_progress_ref(1);
    }
}

/* The completion callback of the handshake receives (CONN, READY) runs
 * inside the wrapped PML: it only queues the event for progress. */
static int mca_common_umr_handshake_cb(ompi_request_t *req)
{
    mca_common_umr_peer_t *peer = mca_common_umr_cb_data_take(req);

    if (!req->req_status._cancelled) {
        if (req == peer->conn_req) {
            peer->ev_conn = 1;
        } else {
            peer->ev_ready = 1;
        }
        mca_common_umr_peer_event(peer);
    }
    return 0;
}

/* The peer connected to our endpoint and sent us its address. */
static void mca_common_umr_peer_conn(mca_common_umr_peer_t *peer)
{
    ompi_request_t *sreq;

    if ((mca_common_umr_peer_ep(peer) != OMPI_SUCCESS) ||
        (mca_common_umr_peer_connect(peer, peer->conn_buf) != OMPI_SUCCESS)) {
        ++mca_common_umr.cnt.errors;
        return;
    }
    if (mca_common_umr_msg->isend(&peer->ready_buf, sizeof(peer->ready_buf),
                                  peer->world_rank, MCA_COMMON_UMR_TAG_READY,
                                  &sreq) == OMPI_SUCCESS) {
        mca_common_umr_reap_add(sreq);
    }
    if (!peer->ready) {
        mca_common_umr_peer_set_ready(peer);
    }
}

/* Run by progress: the handshake messages that arrived. */
static void mca_common_umr_peer_event_run(mca_common_umr_work_t *work)
{
    mca_common_umr_peer_t *peer = ucs_container_of(work, mca_common_umr_peer_t,
                                                   event);

    peer->ev_queued = 0;
    mca_common_umr_progress_ref(-1);
    if (peer->ev_conn) {
        peer->ev_conn = 0;
        mca_common_umr_reap_add(peer->conn_req);
        peer->conn_req = NULL;
        mca_common_umr_peer_conn(peer);
    }
    if (peer->ev_ready) {
        peer->ev_ready = 0;
        mca_common_umr_reap_add(peer->ready_req);
        peer->ready_req = NULL;
        if (!peer->ready) {
            mca_common_umr_peer_set_ready(peer);
        }
    }
    if (peer->ev_disc) {
        /* the peer dropped the end we are connected to (else: an older
         * one, already gone here) */
        if (peer->connected && (peer->ev_disc == peer->remote_gen)) {
            peer->disc_pending = 1;
        } else if (peer->connected) {
            mca_common_umr_peer_disc_post(peer);  /* for the end we know */
        }
        peer->ev_disc = 0;
    }
    if (peer->disc_pending && mca_common_umr_peer_quiet(peer)) {
        MCA_COMMON_UMR_VERBOSE(10, "peer %d: dropped its end, disconnected",
                               peer->world_rank);
        mca_common_umr_peer_drop(peer, 0);
    }
}

/* A DISC arrived (or its receive was cancelled: our end went first). */
static int mca_common_umr_peer_disc_cb(ompi_request_t *req)
{
    mca_common_umr_peer_disc_t *disc = mca_common_umr_cb_data_take(req);
    mca_common_umr_peer_t *peer      = disc->peer;

    if (!req->req_status._cancelled) {
        if (peer->disc == disc) {
            peer->disc = NULL;
        }
        peer->ev_disc = disc->gen;
        mca_common_umr_peer_event(peer);
    }
    mca_common_umr_reap_add_buf(req, disc);
    return 0;
}

static int mca_common_umr_internal_irecv(void *buf, size_t len, int rank,
                                         int tag,
                                         ompi_request_complete_fn_t cb,
                                         void *arg, ompi_request_t **req_p);

/* Connected: the peer may tell us it dropped its end. */
static void mca_common_umr_peer_disc_post(mca_common_umr_peer_t *peer)
{
    mca_common_umr_peer_disc_t *disc;

    if ((peer->disc != NULL) || (NULL == (disc = calloc(1, sizeof(*disc))))) {
        return;
    }
    disc->peer = peer;
    /* first: a DISC already there completes it at once (the callback) */
    peer->disc = disc;
    if (mca_common_umr_internal_irecv(&disc->gen, sizeof(disc->gen),
                                      peer->world_rank,
                                      MCA_COMMON_UMR_TAG_DISC,
                                      mca_common_umr_peer_disc_cb, disc,
                                      &disc->req) != OMPI_SUCCESS) {
        peer->disc = NULL;
        free(disc);
    }
}

/* Destroy our endpoint to `peer` (its rkey cache goes with it); `tell`:
 * we chose to, and tell the peer, which drops its end once idle. The
 * peer's next zero-copy message connects again (a newer generation). */
static void mca_common_umr_peer_drop(mca_common_umr_peer_t *peer, int tell)
{
    mca_common_umr_peer_disc_t *disc = peer->disc;
    ompi_request_t *sreq;
    uint32_t *gen;

    if (tell && peer->connected &&
        (NULL != (gen = malloc(sizeof(*gen))))) {
        *gen = peer->gen;
        if (mca_common_umr_msg->isend(gen, sizeof(*gen), peer->world_rank,
                                      MCA_COMMON_UMR_TAG_DISC, &sreq) ==
            OMPI_SUCCESS) {
            mca_common_umr_reap_add_buf(sreq, gen);
        } else {
            free(gen);
        }
    }
    if (disc != NULL) {
        /* its callback frees it (cancelled, or a DISC of an older end) */
        peer->disc = NULL;
        ompi_request_cancel(disc->req);
    }
    if (peer->conn_req != NULL) {
        ompi_request_set_callback(peer->conn_req,
                                  mca_common_umr_peer_orphan_cb, NULL);
        ompi_request_cancel(peer->conn_req);
        peer->conn_req = NULL;
    }
    uct_ep_destroy(peer->ep);
    peer->ep = NULL;
    ucs_list_del(&peer->lru);
    --mca_common_umr.cnt.conns_live;
    ++mca_common_umr.cnt.disconnects;
    peer->connected    = 0;
    peer->ready        = 0;
    peer->conn_posted  = 0;
    peer->conn_sent    = 0;
    peer->disc_pending = 0;
}

static int mca_common_umr_internal_irecv(void *buf, size_t len, int rank,
                                         int tag,
                                         ompi_request_complete_fn_t cb,
                                         void *arg, ompi_request_t **req_p)
{
    int rc;

    rc = mca_common_umr_msg->irecv(buf, len, rank, tag, req_p);
    if (rc != OMPI_SUCCESS) {
        return rc;
    }
    ompi_request_set_callback(*req_p, cb, arg);
    return OMPI_SUCCESS;
}

size_t mca_common_umr_peer_addr(mca_common_umr_peer_t *peer, void *buf)
{
    if (peer->ready) {
        return 0;
    }
    if (!peer->conn_posted) {
        if (mca_common_umr_internal_irecv(peer->conn_buf,
                                          sizeof(peer->conn_buf),
                                          peer->world_rank,
                                          MCA_COMMON_UMR_TAG_CONN,
                                          mca_common_umr_handshake_cb, peer,
                                          &peer->conn_req) != OMPI_SUCCESS) {
            return 0;
        }
        peer->conn_posted = 1;
    }
    return mca_common_umr_peer_own_addr(peer, buf);
}

int mca_common_umr_peer_prepare(mca_common_umr_peer_t *peer, void *addr,
                                size_t *addr_len_p)
{
    int rc = mca_common_umr_peer_ep(peer);

    if (rc != OMPI_SUCCESS) {
        return rc;
    }
    *addr_len_p = mca_common_umr_peer_addr(peer, addr);
    return OMPI_SUCCESS;
}

int mca_common_umr_peer_handshake(mca_common_umr_peer_t *peer,
                                  const void *addr, size_t addr_len)
{
    ompi_request_t *sreq;
    size_t own_len;
    uint8_t *own;
    uint32_t gen = 0;
    int rc;

    if (addr != NULL) {
        if (addr_len != peer->rail->ep_addr_len + sizeof(gen)) {
            return -1;
        }
        gen = mca_common_umr_addr_gen(peer, addr);
        if (peer->connected && (gen > peer->remote_gen)) {
            /* the peer connects again: its end we know is gone */
            peer->disc_pending = 1;
            if (!mca_common_umr_peer_quiet(peer) || peer->ev_queued) {
                goto busy;
            }
            mca_common_umr_peer_drop(peer, 0);
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
        rc = mca_common_umr_peer_ep(peer);   /* counts a full budget */
        if (rc != OMPI_SUCCESS) {
            return (rc == OMPI_ERR_OUT_OF_RESOURCE) ?
                   MCA_COMMON_UMR_PEER_BUSY : -1;
        }
        if (mca_common_umr_peer_connect(peer, addr) != OMPI_SUCCESS) {
            return -1;
        }
    }
    if (!peer->conn_sent) {
        /* the send may go out after we return (a wrapped PML out of
         * resources queues it): the address lives until it is reaped */
        own = malloc(MCA_COMMON_UMR_PEER_ADDR_MAX);
        if ((own == NULL) ||
            (0 == (own_len = mca_common_umr_peer_own_addr(peer, own))) ||
            (mca_common_umr_internal_irecv(&peer->ready_buf,
                                           sizeof(peer->ready_buf),
                                           peer->world_rank,
                                           MCA_COMMON_UMR_TAG_READY,
                                           mca_common_umr_handshake_cb, peer,
                                           &peer->ready_req) != OMPI_SUCCESS)) {
            free(own);
            return -1;
        }
        if (mca_common_umr_msg->isend(own, own_len, peer->world_rank,
                                      MCA_COMMON_UMR_TAG_CONN, &sreq) !=
            OMPI_SUCCESS) {
            free(own);
            return -1;
        }
        mca_common_umr_reap_add_buf(sreq, own);
        peer->conn_sent = 1;
    }
    return peer->ready;

busy:
    ++mca_common_umr.cnt.budget_passthrough;
    return MCA_COMMON_UMR_PEER_BUSY;
}

void mca_common_umr_peer_retire(mca_common_umr_peer_t *peer, const char *why)
{
    if (peer->retired || (peer->rail == NULL)) {
        return;   /* (no rail reaches it: nothing to retire) */
    }
    peer->retired = 1;
    ++mca_common_umr.cnt.retired;
    MCA_COMMON_UMR_VERBOSE(1, "rank %d retired to pass-through: %s",
                           peer->world_rank, why);
}

static void mca_common_umr_peer_cancel(ompi_request_t **req_p)
{
    if (*req_p == NULL) {
        return;
    }
    (*req_p)->req_complete_cb = NULL;
    if (!REQUEST_COMPLETE(*req_p)) {
        ompi_request_cancel(*req_p);
        ompi_request_wait_completion(*req_p);
    }
    ompi_request_free(req_p);
}

#define MCA_COMMON_UMR_QUIESCE_FNS 4
static void (*mca_common_umr_quiesce_fns[MCA_COMMON_UMR_QUIESCE_FNS])(void);

void mca_common_umr_peers_on_quiesce(void (*fn)(void))
{
    size_t i;

    for (i = 0; i < MCA_COMMON_UMR_QUIESCE_FNS; ++i) {
        if ((mca_common_umr_quiesce_fns[i] == NULL) ||
            (mca_common_umr_quiesce_fns[i] == fn)) {
            mca_common_umr_quiesce_fns[i] = fn;
            return;
        }
    }
    /* cannot happen: one function a component */
}

void mca_common_umr_peers_quiesce(void)
{
    mca_common_umr_peer_t *peer;
    void *key, *node = NULL;
    size_t key_size, i;
    int rc;

    mca_common_umr_progress_drain();
    for (i = 0; i < MCA_COMMON_UMR_QUIESCE_FNS; ++i) {
        if (mca_common_umr_quiesce_fns[i] != NULL) {
            mca_common_umr_quiesce_fns[i]();
        }
    }
    rc = opal_hash_table_get_first_key_ptr(&mca_common_umr_peers, &key,
                                           &key_size, (void**)&peer, &node);
    while (rc == OPAL_SUCCESS) {
        mca_common_umr_peer_cancel(&peer->conn_req);
        mca_common_umr_peer_cancel(&peer->ready_req);
        if (peer->disc != NULL) {
            ompi_request_t *req = peer->disc->req;

            peer->disc = NULL;
            ompi_request_cancel(req);   /* its callback frees `disc` */
            ompi_request_wait_completion(req);
        }
        rc = opal_hash_table_get_next_key_ptr(&mca_common_umr_peers, &key,
                                              &key_size, (void**)&peer, node,
                                              &node);
    }
    mca_common_umr_reap();
}

void mca_common_umr_peers_fini(void)
{
    mca_common_umr_peer_t *peer;
    void *key, *node = NULL;
    size_t key_size;
    int rc;

    rc = opal_hash_table_get_first_key_ptr(&mca_common_umr_peers, &key,
                                           &key_size, (void**)&peer, &node);
    while (rc == OPAL_SUCCESS) {
        if (peer->ep != NULL) {
            uct_ep_destroy(peer->ep);
        }
        OBJ_DESTRUCT(&peer->waiting);
        OBJ_DESTRUCT(&peer->event);
        free(peer);
        rc = opal_hash_table_get_next_key_ptr(&mca_common_umr_peers, &key,
                                              &key_size, (void**)&peer, node,
                                              &node);
    }
    memset(mca_common_umr_peer_front, 0, sizeof(mca_common_umr_peer_front));
    OBJ_DESTRUCT(&mca_common_umr_peers);
}
