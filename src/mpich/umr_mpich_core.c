/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "umr_config.h"

#include "umr_mpich_core.h"
#include "umr_mpich.h"
#include "umr_mpich_comm.h"
#include "umr_mpich_req.h"
#include "umr_mpich_types.h"
#include "umr_mpich_watch.h"
#include "umr_mpich_win.h"

#include "umr_mpi.h"
#include "umr_mpi_choice.h"
#include "umr_mpi_dtype.h"
#include "umr_mpi_peer.h"
#include "umr_mpi_proto.h"
#include "umr_mpi_rail.h"
#include "umr_mpi_rma.h"
#include "umr_mpi_types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

MPI_Comm umr_mpich_comm_private = MPI_COMM_NULL;
int umr_mpich_progress_wanted;

/* one tag a kind of internal message on the private communicator */
static const int umr_mpich_tags[UMR_MPI_MSG_NUM] = {
    [UMR_MPI_MSG_CONN]  = 1,
    [UMR_MPI_MSG_READY] = 2,
    [UMR_MPI_MSG_DISC]  = 3,
    [UMR_MPI_MSG_ACK]   = 4,
    [UMR_MPI_MSG_DATA]  = 5
};

int umr_mpich_tag(umr_mpi_msg_kind_t kind)
{
    return umr_mpich_tags[kind];
}

/* ---- internal messages ------------------------------------------------ */

typedef struct umr_mpich_ireq {
    umr_mpich_watch_t w;
    umr_mpi_comp_t    *comp;
} umr_mpich_ireq_t;

void umr_mpich_status_of(const MPI_Status *st, umr_mpi_status_t *s)
{
    MPI_Count bytes = 0;
    int flag = 0;

    PMPI_Test_cancelled(st, &flag);
    if (!flag) {
        PMPI_Get_elements_x(st, MPI_BYTE, &bytes);
    }
    s->error     = st->MPI_ERROR;
    s->cancelled = flag;
    s->length    = (bytes > 0) ? (size_t)bytes : 0;
}

static void umr_mpich_ireq_done(umr_mpich_watch_t *w, MPI_Status *st)
{
    umr_mpich_ireq_t *r = ucs_container_of(w, umr_mpich_ireq_t, w);
    umr_mpi_status_t s;

    umr_mpich_status_of(st, &s);
    if (r->comp != NULL) {
        r->comp->cb(r->comp, &s);
    }
    free(r);
}

int umr_mpich_msg_isend(const void *buf, size_t len, int peer, int tag,
                        MPI_Comm comm, umr_mpi_comp_t *comp)
{
    umr_mpich_ireq_t *r = malloc(sizeof(*r));
    MPI_Request req;
    int rc;

    if (r == NULL) {
        return MPI_ERR_NO_MEM;
    }
    rc = PMPI_Isend(buf, (int)len, MPI_BYTE, peer, tag, comm, &req);
    if (rc != MPI_SUCCESS) {
        free(r);
        return rc;
    }
    r->comp = comp;
    umr_mpich_watch_add(&r->w, umr_mpich_ireq_done, req);
    return 0;
}

int umr_mpich_msg_irecv(void *buf, size_t len, int peer, int tag,
                        MPI_Comm comm, umr_mpi_comp_t *comp,
                        umr_mpi_req_h *req_p)
{
    umr_mpich_ireq_t *r = malloc(sizeof(*r));
    MPI_Request req;
    int rc;

    if (r == NULL) {
        return MPI_ERR_NO_MEM;
    }
    rc = PMPI_Irecv(buf, (int)len, MPI_BYTE, peer, tag, comm, &req);
    if (rc != MPI_SUCCESS) {
        free(r);
        return rc;
    }
    r->comp = comp;
    if (req_p != NULL) {
        *req_p = (umr_mpi_req_h)r;
    }
    umr_mpich_watch_add(&r->w, umr_mpich_ireq_done, req);
    return 0;
}

static int umr_mpich_isend(const void *buf, size_t len, int peer,
                           umr_mpi_msg_kind_t kind, umr_mpi_comp_t *comp)
{
    return umr_mpich_msg_isend(buf, len, peer, umr_mpich_tag(kind),
                               umr_mpich_comm_private, comp);
}

static int umr_mpich_irecv(void *buf, size_t len, int peer,
                           umr_mpi_msg_kind_t kind, umr_mpi_comp_t *comp,
                           umr_mpi_req_h *req_p)
{
    return umr_mpich_msg_irecv(buf, len, peer, umr_mpich_tag(kind),
                               umr_mpich_comm_private, comp, req_p);
}

void umr_mpich_msg_cancel(umr_mpi_req_h h)
{
    umr_mpich_ireq_t *r = (umr_mpich_ireq_t*)h;

    PMPI_Cancel(&r->w.req);
}

void umr_mpich_progress(void)
{
    /* never inside itself: its MPI calls run MPICH's progress, which may
     * call it again (umr_mpich_hook.c) */
    static int inside;

    if (inside) {
        return;
    }
    inside = 1;
    umr_mpich_watch_poll();
    umr_mpi_progress();
    inside = 0;
}

static void umr_mpich_progress_on(int on)
{
    umr_mpich_progress_wanted = on;
}

/* ---- addresses: one allgather at the start ------------------------------ */

typedef struct umr_mpich_addr {
    uint32_t       len;       /* 0: nothing published */
    umr_mpi_addr_t addr;
} umr_mpich_addr_t;

static umr_mpich_addr_t umr_mpich_addr_local;
static umr_mpich_addr_t *umr_mpich_addrs;    /* every rank's */

static int umr_mpich_publish(const void *addr, size_t len)
{
    if (len > sizeof(umr_mpich_addr_local.addr)) {
        return MPI_ERR_OTHER;
    }
    memcpy(&umr_mpich_addr_local.addr, addr, len);
    umr_mpich_addr_local.len = len;
    return 0;
}

/* Whether this process runs the point-to-point protocol (its published
 * address says so): not when its choice can never take a message of its
 * (UMR_MPICH_ZCOPY=off, or costs by which zero-copy wins on no rail: the
 * built-in ones on the sw engine). Then no peer sends it a control message
 * or an escape, and it watches no receive (its view of the others says the
 * same): every message of the job passes through as without the library.
 * (The core publishes at rail opening, before the choice is known; the
 * address is gathered after it.) */
static void umr_mpich_p2p_publish(void)
{
    if ((umr_mpich_addr_local.len > 0) &&
        ((umr_mpich.cfg.zcopy == UMR_MPI_ZCOPY_OFF) ||
         (umr_mpi_bounds.min_len == SIZE_MAX))) {
        umr_mpich_addr_local.addr.flags &= ~UMR_MPI_ADDR_P2P;
        umr_mpi_rails.flags             &= ~UMR_MPI_ADDR_P2P;
        UMR_MPI_VERBOSE(2, "no message can go zero-copy: the protocol is off "
                        "(every message passes through)");
    }
}

static int umr_mpich_lookup(int peer, const void **addr, size_t *len)
{
    if ((umr_mpich_addrs == NULL) || (umr_mpich_addrs[peer].len == 0)) {
        *addr = NULL;
        *len  = 0;
        return 0;
    }
    *addr = &umr_mpich_addrs[peer].addr;
    *len  = umr_mpich_addrs[peer].len;
    return 0;
}

static int umr_mpich_addrs_gather(int size)
{
    umr_mpich_addrs = calloc(size, sizeof(*umr_mpich_addrs));
    if (umr_mpich_addrs == NULL) {
        /* the other ranks wait in the allgather: no way back */
        umr_mpich_line("no memory for %d addresses", size);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    return PMPI_Allgather(&umr_mpich_addr_local, sizeof(umr_mpich_addr_t),
                          MPI_BYTE, umr_mpich_addrs, sizeof(umr_mpich_addr_t),
                          MPI_BYTE, umr_mpich_comm_private);
}

/* ---- log, messages to users ------------------------------------------- */

static void umr_mpich_log(const char *line)
{
    /* the core's lines start with the binding's name */
    fprintf(stderr, "%s\n", line);
}

static void umr_mpich_warn(const char *topic, const char *text)
{
    fprintf(stderr, "%s\n", text);
}

/* ---- start, stop -------------------------------------------------------- */

static umr_mpi_binding_t umr_mpich_binding = {
    .name         = "umr_mpich",
    /* peers run this very library: its wire */
    .version      = "mpich-abi-12",
    .err_truncate = MPI_ERR_TRUNCATE,
    .err_other    = MPI_ERR_OTHER,
    .isend        = umr_mpich_isend,
    .irecv        = umr_mpich_irecv,
    .cancel       = umr_mpich_msg_cancel,
    .progress     = umr_mpich_progress,
    .progress_on  = umr_mpich_progress_on,
    .publish      = umr_mpich_publish,
    .lookup       = umr_mpich_lookup,
    .log          = umr_mpich_log,
    .warn         = umr_mpich_warn
};

static void umr_mpich_local(int *rank, int *size)
{
    MPI_Comm node;

    *rank = 0;
    *size = 1;
    if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                             MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        PMPI_Comm_rank(node, rank);
        PMPI_Comm_size(node, size);
        PMPI_Comm_free(&node);
    }
}

int umr_mpich_core_start(void)
{
    const umr_mpich_config_t *cfg = &umr_mpich.cfg;
    umr_mpi_binding_t *b          = &umr_mpich_binding;
    umr_mpi_rails_params_t rp     = {
        .uct_module    = cfg->uct_module,
        .beside        = (const void*)umr_mpich_core_start,
        .devices       = cfg->devices,
        .devices_param = UMR_MPICH_ENV_PREFIX "DEVICES",
        .flags         = UMR_MPI_ADDR_P2P
    };
    char msg[768];
    int max_conns, up, costs;

    PMPI_Comm_rank(MPI_COMM_WORLD, &b->world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &b->world_size);
    umr_mpich_local(&b->local_rank, &b->local_size);
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &umr_mpich_comm_private) !=
        MPI_SUCCESS) {
        return -1;
    }
    PMPI_Comm_set_errhandler(umr_mpich_comm_private, MPI_ERRORS_RETURN);
    /* (the collectives' decision needs it on every rank that started) */
    umr_mpich_comm_init();
    umr_mpi_init(b, (int)cfg->verbose);
    umr_mpi_set_faults(cfg->fault_mask & ((1u << UMR_MPI_FAULT_NUM) - 1));
    umr_mpi_rma_set_faults(cfg->fault_mask >> UMR_MPI_FAULT_NUM);
    up = (umr_mpi_peers_budget_parse(cfg->max_conns, UMR_MPICH_ENV_PREFIX
                                     "MAX_CONNS", &max_conns) == UCS_OK) &&
         (umr_mpi_rails_open(&rp) == UCS_OK);
    if (up) {
        costs = umr_mpi_choice_init(cfg->zcopy, cfg->min_size,
                                    cfg->cost_file, "mpich", msg, sizeof(msg));
        /* a bad file, or one the user named that is not there */
        if ((costs < 0) || ((costs > 0) && (cfg->cost_file[0] != '\0'))) {
            umr_mpich_line(UMR_MPICH_ENV_PREFIX "COST_FILE: %s", msg);
        } else {
            UMR_MPI_VERBOSE(2, "%s", msg);
        }
        umr_mpich_p2p_publish();
    }
    /* every rank, its rails open or not */
    if ((umr_mpich_addrs_gather(b->world_size) != MPI_SUCCESS) || !up) {
        return -1;
    }
    if (umr_mpi_peers_open(max_conns, UMR_MPICH_ENV_PREFIX "MAX_CONNS") !=
        UCS_OK) {
        return -1;
    }
    umr_mpich_types_open();
    umr_mpi_proto_init(&umr_mpich_xfer_ops);
    umr_mpich.p2p = !!(umr_mpi_rails.flags & UMR_MPI_ADDR_P2P);
    return 0;
}

void umr_mpich_core_stop(void)
{
    umr_mpich_wins_stop();
    umr_mpi_peers_quiesce();
    umr_mpich_types_close();
    umr_mpi_proto_fini();
    umr_mpi_peers_close();     /* the endpoints, before their rails */
    umr_mpi_rails_release();
    umr_mpi_rails_close();
    umr_mpich_comm_fini();
    PMPI_Comm_free(&umr_mpich_comm_private);
    free(umr_mpich_addrs);
    umr_mpich_addrs = NULL;
}
