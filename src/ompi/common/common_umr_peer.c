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

#include "umr_ompi_compat.h"

#include <ompi/proc/proc.h>
#include <opal/class/opal_hash_table.h>
#include <opal/runtime/opal_progress.h>

#include <stdlib.h>
#include <string.h>

static opal_hash_table_t mca_common_umr_peers;   /* ompi_proc_t* -> peer */
static const mca_common_umr_msg_ops_t *mca_common_umr_msg;

/* A direct-mapped front of the peers table, keyed by the ompi_proc_t (a
 * hash table lookup costs about 170 instructions, a hit here a few). */
#define MCA_COMMON_UMR_PEER_SLOTS 64   /* power of two */

static struct {
    ompi_proc_t           *proc;
    mca_common_umr_peer_t *peer;
} mca_common_umr_peer_front[MCA_COMMON_UMR_PEER_SLOTS];

static void mca_common_umr_peer_event_run(mca_common_umr_work_t *work);

void mca_common_umr_peers_init(const mca_common_umr_msg_ops_t *ops)
{
    mca_common_umr_msg = ops;
    OBJ_CONSTRUCT(&mca_common_umr_peers, opal_hash_table_t);
    opal_hash_table_init(&mca_common_umr_peers, 64);
}

/* The rail that reaches `proc`, or NULL: the component must run there with
 * the same protocol, in the same job (internal messages use
 * MPI_COMM_WORLD). */
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
    if (peer->rail != NULL) {
        peer->state      = MCA_COMMON_UMR_PEER_OK;
        peer->world_rank = proc->super.proc_name.vpid;
        MCA_COMMON_UMR_VERBOSE(10, "peer %d: rail %s", peer->world_rank,
                               peer->rail->name);
    } else {
        /* e.g. another RoCE version or partition: passed through */
        MCA_COMMON_UMR_VERBOSE(10, "peer %u: no rail reaches it",
                               proc->super.proc_name.vpid);
    }
}

mca_common_umr_peer_t *mca_common_umr_peer_get(ompi_communicator_t *comm,
                                               int rank)
{
    ompi_proc_t *proc = ompi_comm_peer_lookup(comm, rank);
    unsigned slot     = ((uintptr_t)proc * 0x9e3779b97f4a7c15ull) >> 58;
    mca_common_umr_peer_t *peer;

    if (OPAL_LIKELY(mca_common_umr_peer_front[slot].proc == proc)) {
        peer = mca_common_umr_peer_front[slot].peer;
    } else {
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
        mca_common_umr_peer_front[slot].proc = proc;
        mca_common_umr_peer_front[slot].peer = peer;
    }
    return (peer->state == MCA_COMMON_UMR_PEER_OK) ? peer : NULL;
}

int mca_common_umr_peer_ep(mca_common_umr_peer_t *peer)
{
    uct_ep_params_t params;

    if (peer->ep != NULL) {
        return OMPI_SUCCESS;
    }
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface      = peer->rail->iface;
    if (uct_ep_create(&params, &peer->ep) != UCS_OK) {
        peer->ep = NULL;
        return OMPI_ERROR;
    }
    return OMPI_SUCCESS;
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
    peer->connected = 1;
    ++mca_common_umr.cnt.connects;
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
    return (uct_ep_get_address(peer->ep, (uct_ep_addr_t*)buf) == UCS_OK) ?
           peer->rail->ep_addr_len : 0;
}

int mca_common_umr_peer_prepare(mca_common_umr_peer_t *peer, void *addr,
                                size_t *addr_len_p)
{
    if (mca_common_umr_peer_ep(peer) != OMPI_SUCCESS) {
        return OMPI_ERROR;
    }
    *addr_len_p = mca_common_umr_peer_addr(peer, addr);
    return OMPI_SUCCESS;
}

int mca_common_umr_peer_handshake(mca_common_umr_peer_t *peer,
                                  const void *addr, size_t addr_len)
{
    uint8_t own[MCA_COMMON_UMR_MAX_ADDR];
    ompi_request_t *sreq;

    if (peer->ready) {
        return 1;
    }
    if (mca_common_umr_peer_ep(peer) != OMPI_SUCCESS) {
        return -1;
    }
    if (!peer->connected) {
        if ((addr == NULL) || (addr_len != peer->rail->ep_addr_len) ||
            (mca_common_umr_peer_connect(peer, addr) != OMPI_SUCCESS)) {
            return -1;
        }
    }
    if (!peer->conn_sent) {
        if ((uct_ep_get_address(peer->ep, (uct_ep_addr_t*)own) != UCS_OK) ||
            (mca_common_umr_internal_irecv(&peer->ready_buf,
                                           sizeof(peer->ready_buf),
                                           peer->world_rank,
                                           MCA_COMMON_UMR_TAG_READY,
                                           mca_common_umr_handshake_cb, peer,
                                           &peer->ready_req) != OMPI_SUCCESS)) {
            return -1;
        }
        if (mca_common_umr_msg->isend(own, peer->rail->ep_addr_len,
                                      peer->world_rank,
                                      MCA_COMMON_UMR_TAG_CONN, &sreq) !=
            OMPI_SUCCESS) {
            return -1;
        }
        mca_common_umr_reap_add(sreq);
        peer->conn_sent = 1;
    }
    return peer->ready;
}

void mca_common_umr_peer_retire(mca_common_umr_peer_t *peer, const char *why)
{
    if (peer->retired) {
        return;
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

void mca_common_umr_peers_quiesce(void)
{
    mca_common_umr_peer_t *peer;
    void *key, *node = NULL;
    size_t key_size;
    int rc;

    mca_common_umr_progress_drain();
    rc = opal_hash_table_get_first_key_ptr(&mca_common_umr_peers, &key,
                                           &key_size, (void**)&peer, &node);
    while (rc == OPAL_SUCCESS) {
        mca_common_umr_peer_cancel(&peer->conn_req);
        mca_common_umr_peer_cancel(&peer->ready_req);
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
