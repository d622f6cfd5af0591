/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: the core's binding over Open MPI (see
 * common_umr_binding.h).
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE   /* dladdr, RTLD_NODELETE */
#endif
#include "common_umr_binding.h"
#include "common_umr_dtype.h"
#include "common_umr_help.h"
#include "common_umr_memhooks.h"

#include "umr_mpi_peer.h"
#include "umr_mpi_progress.h"
#include "umr_ompi_compat.h"

#include <ompi/constants.h>
#include <ompi/request/request.h>
#include <opal/runtime/opal_progress.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

mca_common_umr_params_t mca_common_umr_params;
mca_pml_base_module_t *mca_common_umr_pml = &mca_pml;

static struct {
    umr_mpi_binding_t          b;
    int                        opens;       /* components bound */
    const mca_base_component_t *modex;      /* who published there */
    umr_mpi_addr_t             own;         /* what this process published */
    umr_mpi_addr_t             **addrs;     /* by world rank, from windows */
    void                       *modex_data; /* what the last lookup read
                                               from the modex (freed) */
    int                        want;        /* the core wants progress */
    int                        on;          /* registered with opal_progress */
    struct {
        ompi_request_t *req;
        void           *buf;                /* freed with it */
    }                          *reap;       /* to free once complete */
    size_t                     reap_num, reap_max;
} mca_common_umr_bd;

/* ---- parameters ------------------------------------------------------- */

/* The variables osc/umr registered for want of pml/umr (deregistered when
 * it closes). Their storage is this library's, and they are no component's
 * own: the library stays loaded to the end (RTLD_NODELETE), where the
 * variable system frees their values (ompi_info never closes osc/umr). */
static int mca_common_umr_params_own[4];
static int mca_common_umr_params_nown;

static void mca_common_umr_params_pin(void)
{
    static int pinned;
    Dl_info info;

    if (!pinned && dladdr((void*)&mca_common_umr_params, &info) &&
        (info.dli_fname != NULL)) {
        pinned = (dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD |
                                         RTLD_NODELETE) != NULL);
    }
}

/* pml_umr_<name>: pml/umr's own parameter, or, registered for osc/umr
 * (`c` not pml/umr), the same variable when pml/umr did not register it. */
static void mca_common_umr_param_str(const mca_base_component_t *c,
                                     const char *name, const char *help,
                                     int level, char *def, char **storage)
{
    const mca_base_var_t *var;
    int idx;

    if (!strcmp(c->mca_type_name, "pml")) {
        *storage = def;
        (void)mca_base_component_var_register(c, name, help,
                                              MCA_BASE_VAR_TYPE_STRING, NULL,
                                              0, 0,
                                              (mca_base_var_info_lvl_t)level,
                                              MCA_BASE_VAR_SCOPE_READONLY,
                                              storage);
        return;
    }
    idx = mca_base_var_find("ompi", "pml", "umr", name);
    if ((idx >= 0) && (mca_base_var_get(idx, &var) == OPAL_SUCCESS)) {
        return;   /* pml/umr's */
    }
    mca_common_umr_params_pin();
    *storage = def;
    idx = mca_base_var_register("ompi", "pml", "umr", name, help,
                                MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0,
                                (mca_base_var_info_lvl_t)level,
                                MCA_BASE_VAR_SCOPE_READONLY, storage);
    if ((idx >= 0) && (mca_common_umr_params_nown < 4)) {
        mca_common_umr_params_own[mca_common_umr_params_nown++] = idx;
    }
}

void mca_common_umr_params_register(const mca_base_component_t *c)
{
    mca_common_umr_param_str(c, "uct_module",
            "Path of the mlx5_umr UCT module (libuct_mlx5_umr.so) to load; "
            "its constructor registers the transport with UCX. Empty: the "
            "one installed beside this component (../ucx/), else where "
            "configure installed it", OPAL_INFO_LVL_5, "",
            &mca_common_umr_params.uct_module);
    mca_common_umr_param_str(c, "cost_file",
            "Measured costs for the automatic zero-copy choice, written by "
            "contrib/umr-calibrate.sh (format: umr_mpi_cost.h); empty: "
            "${XDG_CACHE_HOME:-~/.cache}/mlx5_umr/costs-<host>.conf. Without "
            "a readable file, built-in conservative constants apply (the sw "
            "engine is then never chosen)", OPAL_INFO_LVL_4, "",
            &mca_common_umr_params.cost_file);
    mca_common_umr_param_str(c, "devices",
            "Comma-separated list of the mlx5_umr devices pml/umr and "
            "osc/umr may use, as UCX names them (ucx_info -d, transport "
            "mlx5_umr): \"sw\" is the same-host rail (cross-memory attach), "
            "any other name an mlx5 device, optionally with a port as in "
            "UCX_NET_DEVICES (\"mlx5_0:1\"; else UCX_MLX5_UMR_PORT decides). "
            "Only the named ones are used: without \"sw\" same-host peers "
            "pass through; of several mlx5 devices the first that opens "
            "carries the traffic to other hosts. \"^a,b\": every device but "
            "these. Empty (default): \"sw\" and the first mlx5 device that "
            "opens. A name that is not a device here is an error: a warning "
            "lists the devices there are and everything passes through",
            OPAL_INFO_LVL_3, "", &mca_common_umr_params.devices);
    mca_common_umr_param_str(c, "max_conns",
            "Budget of connected peers (one endpoint, i.e. one RC QP on an "
            "mlx5 device, each) of a process: to connect one more, the least "
            "recently used idle peer is disconnected (it connects again on "
            "its next zero-copy message); when every connected peer is busy, "
            "the message passes through. auto (or -1, default): a quarter of "
            "the device's QPs shared by the ranks of the node (the sw rail: "
            "256); unlimited (or 0); N > 0: at most N. Any other value is "
            "refused (a warning, and everything passes through)",
            OPAL_INFO_LVL_4, "auto", &mca_common_umr_params.max_conns);
}

void mca_common_umr_params_deregister(void)
{
    while (mca_common_umr_params_nown > 0) {
        (void)mca_base_var_deregister(
                mca_common_umr_params_own[--mca_common_umr_params_nown]);
    }
}

/* ---- internal messages ------------------------------------------------ */

/* Requests are freed in progress once complete, never inside their own
 * completion callbacks. */
static void mca_common_umr_progress_set(void);

void mca_common_umr_reap_add(ompi_request_t *req)
{
    mca_common_umr_reap_add_buf(req, NULL);
}

void mca_common_umr_reap_add_buf(ompi_request_t *req, void *buf)
{
    __typeof__(mca_common_umr_bd.reap) reqs;
    size_t max;

    if (mca_common_umr_bd.reap_num == mca_common_umr_bd.reap_max) {
        max  = mca_common_umr_bd.reap_max * 2 + 16;
        reqs = realloc(mca_common_umr_bd.reap, sizeof(*reqs) * max);
        if (reqs == NULL) {
            return; /* leaks one request rather than crash */
        }
        mca_common_umr_bd.reap     = reqs;
        mca_common_umr_bd.reap_max = max;
    }
    mca_common_umr_bd.reap[mca_common_umr_bd.reap_num].req   = req;
    mca_common_umr_bd.reap[mca_common_umr_bd.reap_num++].buf = buf;
    mca_common_umr_progress_set();
}

static void mca_common_umr_reap(void)
{
    size_t i, keep = 0;
    ompi_request_t *req;

    for (i = 0; i < mca_common_umr_bd.reap_num; ++i) {
        req = mca_common_umr_bd.reap[i].req;
        if (REQUEST_COMPLETE(req)) {
            ompi_request_free(&req);
            free(mca_common_umr_bd.reap[i].buf);
        } else {
            mca_common_umr_bd.reap[keep++] = mca_common_umr_bd.reap[i];
        }
    }
    mca_common_umr_bd.reap_num = keep;
}

static int mca_common_umr_progress_cb(void);

/* Registered with opal_progress while the core wants it or requests wait
 * to be freed. */
static void mca_common_umr_progress_set(void)
{
    int on = mca_common_umr_bd.want || (mca_common_umr_bd.reap_num > 0);

    if (on && !mca_common_umr_bd.on) {
        opal_progress_register(mca_common_umr_progress_cb);
    } else if (!on && mca_common_umr_bd.on) {
        opal_progress_unregister(mca_common_umr_progress_cb);
    }
    mca_common_umr_bd.on = on;
}

static int mca_common_umr_progress_cb(void)
{
    int count = umr_mpi_progress();

    mca_common_umr_reap();
    mca_common_umr_progress_set();
    return count;
}

static void mca_common_umr_progress_on(int on)
{
    mca_common_umr_bd.want = on;
    mca_common_umr_progress_set();
}

static void mca_common_umr_progress(void)
{
    opal_progress();
}

/* The completion of an internal request: the core's, then the request
 * goes to the reap list. pml ucx reads req_complete_cb_data of its
 * recycled UCP requests as its persistent request's: the field is cleared
 * (ompi_request_complete() clears only the callback). */
static int mca_common_umr_request_cb(ompi_request_t *req)
{
    umr_mpi_comp_t *comp = req->req_complete_cb_data;
    umr_mpi_status_t st  = {
        .error     = req->req_status.MPI_ERROR,
        .cancelled = req->req_status._cancelled,
        .length    = req->req_status._ucount
    };

    req->req_complete_cb_data = NULL;
    comp->cb(comp, &st);
    mca_common_umr_reap_add(req);
    return 0;
}

/* `req` just posted: its completion to `comp` (may be now), or freed once
 * complete. */
static void mca_common_umr_request_watch(ompi_request_t *req,
                                         umr_mpi_comp_t *comp)
{
    if (comp != NULL) {
        ompi_request_set_callback(req, mca_common_umr_request_cb, comp);
    } else {
        mca_common_umr_reap_add(req);
    }
}

int mca_common_umr_isend(const void *buf, size_t count, ompi_datatype_t *dt,
                         int rank, int tag, mca_pml_base_send_mode_t mode,
                         ompi_communicator_t *comm, umr_mpi_comp_t *comp)
{
    ompi_request_t *req;
    int rc;

    rc = mca_common_umr_pml->pml_isend(buf, count, dt, rank, tag, mode, comm,
                                       &req);
    if (rc == OMPI_SUCCESS) {
        mca_common_umr_request_watch(req, comp);
    }
    return rc;
}

int mca_common_umr_irecv(void *buf, size_t count, ompi_datatype_t *dt,
                         int rank, int tag, ompi_communicator_t *comm,
                         umr_mpi_comp_t *comp, ompi_request_t **req_p)
{
    ompi_request_t *req;
    int rc;

    rc = mca_common_umr_pml->pml_irecv(buf, count, dt, rank, tag, comm, &req);
    if (rc == OMPI_SUCCESS) {
        if (req_p != NULL) {
            *req_p = req;
        }
        mca_common_umr_request_watch(req, comp);
    }
    return rc;
}

/* The core's internal messages: bytes on MPI_COMM_WORLD, a tag a kind. */
static int mca_common_umr_msg_isend(const void *buf, size_t len, int peer,
                                    umr_mpi_msg_kind_t kind,
                                    umr_mpi_comp_t *comp)
{
    return mca_common_umr_isend(buf, len, &ompi_mpi_byte.dt, peer,
                                mca_common_umr_tag(kind),
                                MCA_PML_BASE_SEND_STANDARD,
                                &ompi_mpi_comm_world.comm, comp);
}

static int mca_common_umr_msg_irecv(void *buf, size_t len, int peer,
                                    umr_mpi_msg_kind_t kind,
                                    umr_mpi_comp_t *comp, umr_mpi_req_h *req_p)
{
    return mca_common_umr_irecv(buf, len, &ompi_mpi_byte.dt, peer,
                                mca_common_umr_tag(kind),
                                &ompi_mpi_comm_world.comm, comp,
                                (ompi_request_t**)req_p);
}

static void mca_common_umr_cancel(umr_mpi_req_h req)
{
    ompi_request_cancel((ompi_request_t*)req);
}

/* ---- addresses -------------------------------------------------------- */

static int mca_common_umr_publish(const void *addr, size_t len)
{
    int rc = OPAL_SUCCESS;

    memcpy(&mca_common_umr_bd.own, addr, sizeof(mca_common_umr_bd.own));
    if (mca_common_umr_bd.modex != NULL) {
        OPAL_MODEX_SEND(rc, UMR_OMPI_MODEX_GLOBAL, mca_common_umr_bd.modex,
                        addr, len);
    }
    return (rc == OPAL_SUCCESS) ? OMPI_SUCCESS : OMPI_ERROR;
}

static int mca_common_umr_lookup(int peer, const void **addr, size_t *len)
{
    opal_process_name_t name = ompi_proc_local()->super.proc_name;
    void *data               = NULL;
    size_t size              = 0;
    int rc;

    *addr = NULL;
    *len  = 0;
    if ((mca_common_umr_bd.addrs != NULL) &&
        (mca_common_umr_bd.addrs[peer] != NULL)) {
        *addr = mca_common_umr_bd.addrs[peer];
        *len  = sizeof(umr_mpi_addr_t);
        return OMPI_SUCCESS;
    }
    if (mca_common_umr_bd.modex == NULL) {
        return OMPI_SUCCESS;   /* nothing published: no peer there */
    }
    name.vpid = (opal_vpid_t)peer;
    OPAL_MODEX_RECV(rc, mca_common_umr_bd.modex, &name, &data, &size);
    if ((rc == OPAL_SUCCESS) && (data != NULL)) {
        mca_common_umr_bd.modex_data = data;
        *addr = data;
        *len  = size;
    }
    return OMPI_SUCCESS;
}

/* What the modex gave is freed; the windows' addresses stay. */
static void mca_common_umr_lookup_done(const void *addr)
{
    if (addr == mca_common_umr_bd.modex_data) {
        free(mca_common_umr_bd.modex_data);
        mca_common_umr_bd.modex_data = NULL;
    }
}

const umr_mpi_addr_t *mca_common_umr_addr_own(void)
{
    return &mca_common_umr_bd.own;
}

void mca_common_umr_addrs_learn(ompi_communicator_t *comm,
                                const umr_mpi_addr_t *addrs, int n)
{
    int i, wr;

    if (mca_common_umr_bd.addrs == NULL) {
        mca_common_umr_bd.addrs = calloc(mca_common_umr_bd.b.world_size,
                                         sizeof(*mca_common_umr_bd.addrs));
        if (mca_common_umr_bd.addrs == NULL) {
            return;
        }
    }
    for (i = 0; i < n; ++i) {
        wr = mca_common_umr_world_rank(comm, i);
        if ((wr < 0) || (wr >= mca_common_umr_bd.b.world_size) ||
            (mca_common_umr_bd.addrs[wr] != NULL) ||
            (addrs[i].nrails == 0)) {
            continue;
        }
        mca_common_umr_bd.addrs[wr] = malloc(sizeof(addrs[i]));
        if (mca_common_umr_bd.addrs[wr] != NULL) {
            memcpy(mca_common_umr_bd.addrs[wr], &addrs[i], sizeof(addrs[i]));
            umr_mpi_peer_forget(wr);   /* read again if it was not ours */
        }
    }
}

/* ---- messages --------------------------------------------------------- */

static void mca_common_umr_log(const char *line)
{
    opal_output(mca_common_umr.output, "%s", line);
}

static void mca_common_umr_warn(const char *topic, const char *text)
{
    mca_common_umr_show_help("help-mpi-common-umr.txt", topic, text);
}

/* ---- open, close ------------------------------------------------------ */

int mca_common_umr_open(const char *who, int output, int verbose,
                        const void *beside, const mca_base_component_t *modex,
                        uint32_t flags)
{
    umr_mpi_binding_t *b = &mca_common_umr_bd.b;
    umr_mpi_rails_params_t rp = {
        .uct_module    = mca_common_umr_params.uct_module,
        .beside        = beside,
        .devices       = mca_common_umr_params.devices,
        .devices_param = "pml_umr_devices",
        .flags         = flags
    };
    int max_conns;

    if (mca_common_umr_bd.opens > 0) {
        if ((umr_mpi_rails_open(&rp) != UCS_OK)) {
            return OMPI_ERROR;
        }
        ++mca_common_umr_bd.opens;
        return OMPI_SUCCESS;
    }
    /* the opener's name and stream (pml/umr's, unless it did not open) */
    mca_common_umr.output = output;
    mca_common_umr.who    = who;
    b->name         = who;
    b->rma_name     = "osc_umr";
    b->version      = OMPI_VERSION;
    b->world_rank   = (int)ompi_proc_local()->super.proc_name.vpid;
    b->world_size   = ompi_proc_world_size();
    b->local_rank   = opal_process_info.my_local_rank;
    b->local_size   = opal_process_info.num_local_peers + 1;
    b->err_truncate = MPI_ERR_TRUNCATE;
    b->err_other    = MPI_ERR_OTHER;
    b->isend        = mca_common_umr_msg_isend;
    b->irecv        = mca_common_umr_msg_irecv;
    b->cancel       = mca_common_umr_cancel;
    b->progress     = mca_common_umr_progress;
    b->progress_on  = mca_common_umr_progress_on;
    b->publish      = mca_common_umr_publish;
    b->lookup       = mca_common_umr_lookup;
    b->lookup_done  = mca_common_umr_lookup_done;
    b->log          = mca_common_umr_log;
    b->warn         = mca_common_umr_warn;
    umr_mpi_init(b, verbose);
    mca_common_umr_bd.modex = modex;

    /* before the modex: peers must not take us for one of theirs */
    if (umr_mpi_peers_budget_parse(mca_common_umr_params.max_conns,
                                   "pml_umr_max_conns", &max_conns) !=
        UCS_OK) {
        return OMPI_ERR_BAD_PARAM;
    }
    if (umr_mpi_rails_open(&rp) != UCS_OK) {
        return OMPI_ERROR;
    }
    mca_common_umr_memhooks_init();
    if (umr_mpi_peers_open(max_conns, "pml_umr_max_conns") != UCS_OK) {
        umr_mpi_rails_close();
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    mca_common_umr_types_init();
    mca_common_umr_bd.opens = 1;
    return OMPI_SUCCESS;
}

void mca_common_umr_verbose(int level)
{
    if (level > umr_mpi.verbose) {
        umr_mpi.verbose = level;
    }
}

void mca_common_umr_release(void)
{
    if (mca_common_umr_bd.opens == 1) {
        umr_mpi_peers_close();
        umr_mpi_rails_release();
    }
}

void mca_common_umr_close(void)
{
    int i;

    if (mca_common_umr_bd.opens == 0) {
        return;
    }
    if (--mca_common_umr_bd.opens > 0) {
        umr_mpi_rails_close();   /* one opener less */
        return;
    }
    umr_mpi_rails_close();
    mca_common_umr_memhooks_fini();
    mca_common_umr_reap();
    if (mca_common_umr_bd.on) {
        opal_progress_unregister(mca_common_umr_progress_cb);
        mca_common_umr_bd.on = 0;
    }
    free(mca_common_umr_bd.reap);
    mca_common_umr_bd.reap     = NULL;
    mca_common_umr_bd.reap_num = mca_common_umr_bd.reap_max = 0;
    if (mca_common_umr_bd.addrs != NULL) {
        for (i = 0; i < mca_common_umr_bd.b.world_size; ++i) {
            free(mca_common_umr_bd.addrs[i]);
        }
        free(mca_common_umr_bd.addrs);
        mca_common_umr_bd.addrs = NULL;
    }
}
