/**
 * pml/umr transport: loads the mlx5_umr UCT module, opens one rail (md +
 * iface) per engine, publishes the rails in the modex, decides per peer
 * which rail reaches it, and connects endpoints lazily (see pml_umr.h).
 */
#include "pml_umr.h"
#include "pml_umr_devices.h"

#include <ompi/mca/pml/base/base.h>
#include <opal/runtime/opal_progress.h>
#include <opal/util/proc.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* Peers must run pml/umr built for the same Open MPI with the same
 * protocol (the component refuses to run in another release). */
#define MCA_PML_UMR_MODEX_VERSION OMPI_VERSION "/umr1"

static int mca_pml_umr_ucx_tls_allows(void)
{
    const char *tls = getenv("UCX_TLS");
    char *copy, *tok, *save = NULL;
    int found = 0, negate;

    if ((tls == NULL) || (*tls == '\0')) {
        return 1;
    }
    negate = (tls[0] == '^');
    copy   = strdup(tls + negate);
    for (tok = strtok_r(copy, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (!strcmp(tok, "mlx5_umr") || !strcmp(tok, "all")) {
            found = 1;
        }
    }
    free(copy);
    return negate ? !found : found;
}

static int mca_pml_umr_find_component(void)
{
    uct_component_attr_t attr = {.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME};
    uct_component_h *components;
    unsigned i, num;

    if (uct_query_components(&components, &num) != UCS_OK) {
        return OMPI_ERROR;
    }
    for (i = 0; i < num; ++i) {
        if ((uct_component_query(components[i], &attr) == UCS_OK) &&
            !strcmp(attr.name, "mlx5_umr")) {
            mca_pml_umr.component = components[i];
        }
    }
    uct_release_component_list(components);
    return (mca_pml_umr.component != NULL) ? OMPI_SUCCESS : OMPI_ERROR;
}

/* A device pml_umr_devices names that does not open is worth a warning
 * (the user asked for it); one chosen automatically, a verbose line. */
static void mca_pml_umr_rail_failed(const mca_pml_umr_device_t *dev,
                                    const char *what, ucs_status_t status)
{
    if (dev->named) {
        opal_output(0, "pml_umr: pml_umr_devices: %s%s%.0u: %s open failed: "
                    "%s", dev->name, dev->port ? ":" : "", dev->port, what,
                    ucs_status_string(status));
    } else {
        MCA_PML_UMR_VERBOSE(1, "%s %s: %s", what, dev->name,
                            ucs_status_string(status));
    }
}

static int mca_pml_umr_rail_open(const mca_pml_umr_device_t *dev)
{
    const char *md_name = dev->name;
    mca_pml_umr_rail_t *rail = &mca_pml_umr.rails[mca_pml_umr.nrails];
    uct_iface_params_t params = {0};
    uct_iface_config_t *iface_config;
    uct_iface_attr_t iface_attr;
    uct_md_attr_t md_attr;
    ucs_status_t status;

    memset(rail, 0, sizeof(*rail));
    status = mca_pml_umr_devices_md_open(mca_pml_umr.component, dev,
                                         &rail->md);
    if (status != UCS_OK) {
        mca_pml_umr_rail_failed(dev, "md", status);
        return OMPI_ERROR;
    }
    if ((uct_md_query(rail->md, &md_attr) != UCS_OK) ||
        (md_attr.rkey_packed_size > MCA_PML_UMR_MAX_RKEY)) {
        goto err_md;
    }
    if (uct_md_iface_config_read(rail->md, "mlx5_umr", NULL, NULL,
                                 &iface_config) != UCS_OK) {
        goto err_md;
    }
    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = "mlx5_umr";
    params.mode.device.dev_name = md_name;
    status = uct_iface_open(rail->md, mca_pml_umr.worker, &params,
                            iface_config, &rail->iface);
    uct_config_release(iface_config);
    if (status != UCS_OK) {
        mca_pml_umr_rail_failed(dev, "iface", status);
        goto err_md;
    }
    if ((uct_iface_query(rail->iface, &iface_attr) != UCS_OK) ||
        (iface_attr.ep_addr_len > MCA_PML_UMR_MAX_ADDR) ||
        (iface_attr.device_addr_len > 64) ||
        (iface_attr.iface_addr_len > 64)) {
        goto err_iface;
    }
    uct_iface_progress_enable(rail->iface,
                              UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    memcpy(rail->name, dev->name, sizeof(rail->name));
    rail->rkey_size      = md_attr.rkey_packed_size;
    rail->ep_addr_len    = iface_attr.ep_addr_len;
    rail->dev_addr_len   = iface_attr.device_addr_len;
    rail->iface_addr_len = iface_attr.iface_addr_len;
    rail->is_sw          = !strcmp(md_name, "sw");
    if (mca_pml_umr_rcache_create(rail) != OMPI_SUCCESS) {
        goto err_iface;
    }
    ++mca_pml_umr.nrails;
    MCA_PML_UMR_VERBOSE(5, "rail %s%s%.0u open", md_name,
                        dev->port ? ":" : "", dev->port);
    return OMPI_SUCCESS;

err_iface:
    uct_iface_close(rail->iface);
err_md:
    uct_md_close(rail->md);
    return OMPI_ERROR;
}

/* Rails: the devices pml_umr_devices selects (pml_umr_devices.h): "sw"
 * for peers on this host and one mlx5 device for the others. -1: the
 * parameter names what is not here (pass everything through). */
static int mca_pml_umr_rails_open(void)
{
    char names[MCA_PML_UMR_DEVICES_MAX][MCA_PML_UMR_DEVICE_NAME_MAX];
    mca_pml_umr_devices_t plan;
    char engine[32], msg[768];
    unsigned i, num;
    int have_mlx5 = 0;

    if (mca_pml_umr_devices_query(mca_pml_umr.component, names,
                                  MCA_PML_UMR_DEVICES_MAX, &num, engine,
                                  sizeof(engine)) != UCS_OK) {
        MCA_PML_UMR_VERBOSE(1, "cannot list the mlx5_umr devices");
    }
    if (mca_pml_umr_devices_select(mca_pml_umr.devices, names, num, &plan,
                                   msg, sizeof(msg)) < 0) {
        opal_output(0, "pml_umr: %s, UCX_MLX5_UMR_ENGINE=%s: passing "
                    "everything through", msg, engine);
        return -1;
    }
    /* of several HCAs, the nearest (the ranks of a node spread) */
    mca_pml_umr_devices_nearest(mca_pml_umr.component, &plan,
                                (unsigned)opal_process_info.my_local_rank);
    for (i = 0; (i < plan.num) && (mca_pml_umr.nrails < MCA_PML_UMR_MAX_RAILS);
         ++i) {
        if (!strcmp(plan.dev[i].name, "sw")) {
            (void)mca_pml_umr_rail_open(&plan.dev[i]);
        } else if (!have_mlx5 &&
                   (mca_pml_umr_rail_open(&plan.dev[i]) == OMPI_SUCCESS)) {
            have_mlx5 = 1;
        }
    }
    return 0;
}

int mca_pml_umr_transport_open(void)
{
    const char *devices = (mca_pml_umr.devices != NULL) ? mca_pml_umr.devices :
                          "";

    if (!mca_pml_umr_ucx_tls_allows()) {
        MCA_PML_UMR_VERBOSE(1, "UCX_TLS=%s does not name mlx5_umr: passing "
                            "everything through", getenv("UCX_TLS"));
        return OMPI_ERROR;
    }
    mca_pml_umr.module_handle = dlopen(mca_pml_umr.uct_module,
                                       RTLD_NOW | RTLD_GLOBAL);
    if (mca_pml_umr.module_handle == NULL) {
        MCA_PML_UMR_VERBOSE(1, "cannot load %s (%s): passing everything "
                            "through", mca_pml_umr.uct_module, dlerror());
        return OMPI_ERROR;
    }
    if (mca_pml_umr_find_component() != OMPI_SUCCESS) {
        MCA_PML_UMR_VERBOSE(1, "UCX has no mlx5_umr component after loading "
                            "%s (version skew?): passing everything through",
                            mca_pml_umr.uct_module);
        goto err_dlclose;
    }
    if (ucs_async_context_create(UCS_ASYNC_MODE_POLL, &mca_pml_umr.async) !=
        UCS_OK) {
        goto err_dlclose;
    }
    if (uct_worker_create(mca_pml_umr.async, UCS_THREAD_MODE_SINGLE,
                          &mca_pml_umr.worker) != UCS_OK) {
        goto err_async;
    }
    if (mca_pml_umr_rails_open() < 0) {
        goto err_worker;
    }
    if (mca_pml_umr.nrails == 0) {
        MCA_PML_UMR_VERBOSE(1, "no mlx5_umr rail could be opened%s%s%s: "
                            "passing everything through",
                            devices[0] ? " (pml_umr_devices=\"" : "", devices,
                            devices[0] ? "\")" : "");
        goto err_worker;
    }

    OBJ_CONSTRUCT(&mca_pml_umr.peers, opal_hash_table_t);
    opal_hash_table_init(&mca_pml_umr.peers, 64);
    OBJ_CONSTRUCT(&mca_pml_umr.requests, opal_free_list_t);
    opal_free_list_init(&mca_pml_umr.requests, sizeof(mca_pml_umr_request_t),
                        opal_cache_line_size, OBJ_CLASS(mca_pml_umr_request_t),
                        0, opal_cache_line_size, 8, -1, 8, NULL, 0, NULL,
                        NULL, NULL);
    mca_pml_umr_hook_init();
    OBJ_CONSTRUCT(&mca_pml_umr.retry, opal_list_t);
    OBJ_CONSTRUCT(&mca_pml_umr.peer_events, opal_list_t);
    return OMPI_SUCCESS;

err_worker:
    uct_worker_destroy(mca_pml_umr.worker);
err_async:
    ucs_async_context_destroy(mca_pml_umr.async);
err_dlclose:
    /* the module stays loaded: UCX holds its component */
    return OMPI_ERROR;
}

/* Registrations go before the counters are printed (keys_live to 0). */
void mca_pml_umr_rails_release(void)
{
    int i;

    for (i = 0; i < mca_pml_umr.nrails; ++i) {
        mca_pml_umr_rcache_destroy(&mca_pml_umr.rails[i]);
    }
}

void mca_pml_umr_transport_close(void)
{
    int i;

    if (mca_pml_umr.progress_on) {
        opal_progress_unregister(mca_pml_umr_progress);
        mca_pml_umr.progress_on = 0;
    }
    for (i = 0; i < mca_pml_umr.nrails; ++i) {
        mca_pml_umr_rcache_destroy(&mca_pml_umr.rails[i]);
        uct_iface_close(mca_pml_umr.rails[i].iface);
        uct_md_close(mca_pml_umr.rails[i].md);
    }
    mca_pml_umr.nrails = 0;
    uct_worker_destroy(mca_pml_umr.worker);
    ucs_async_context_destroy(mca_pml_umr.async);
}

int mca_pml_umr_modex_send(void)
{
    mca_pml_umr_modex_t mx;
    mca_pml_umr_rail_t *rail;
    int rc, i;

    memset(&mx, 0, sizeof(mx));
    strncpy(mx.version, MCA_PML_UMR_MODEX_VERSION, sizeof(mx.version) - 1);
    mx.nrails = mca_pml_umr.nrails;
    for (i = 0; i < mca_pml_umr.nrails; ++i) {
        rail = &mca_pml_umr.rails[i];
        memcpy(mx.rails[i].name, rail->name, sizeof(mx.rails[i].name));
        mx.rails[i].dev_addr_len   = rail->dev_addr_len;
        mx.rails[i].iface_addr_len = rail->iface_addr_len;
        if ((uct_iface_get_device_address(rail->iface,
                                          (uct_device_addr_t*)mx.rails[i].addr)
             != UCS_OK) ||
            (uct_iface_get_address(rail->iface, (uct_iface_addr_t*)
                                   (mx.rails[i].addr + rail->dev_addr_len))
             != UCS_OK)) {
            return OMPI_ERROR;
        }
    }
    OPAL_MODEX_SEND(rc, UMR_OMPI_MODEX_GLOBAL,
                    &mca_pml_umr_component.pmlm_version, &mx, sizeof(mx));
    return (rc == OPAL_SUCCESS) ? OMPI_SUCCESS : OMPI_ERROR;
}

/* The rail that reaches `proc`, or NULL: pml/umr must run there with the
 * same protocol, in the same job (internal messages use MPI_COMM_WORLD). */
static void mca_pml_umr_peer_resolve(mca_pml_umr_peer_t *peer,
                                     ompi_proc_t *proc)
{
    mca_pml_umr_modex_t *mx = NULL;
    size_t size             = 0;
    int rc, i, j;

    peer->state = MCA_PML_UMR_PEER_NONE;
    if ((proc == ompi_proc_local()) ||
        (proc->super.proc_name.jobid !=
         ompi_proc_local()->super.proc_name.jobid)) {
        return;
    }
    OPAL_MODEX_RECV(rc, &mca_pml_umr_component.pmlm_version,
                    &proc->super.proc_name, (void**)&mx, &size);
    if ((rc != OPAL_SUCCESS) || (mx == NULL) || (size != sizeof(*mx)) ||
        strcmp(mx->version, MCA_PML_UMR_MODEX_VERSION)) {
        MCA_PML_UMR_VERBOSE(10, "peer %u: no pml/umr there",
                            proc->super.proc_name.vpid);
        free(mx);
        return;
    }
    /* local rails in preference order: sw first (same host) */
    for (i = 0; (i < mca_pml_umr.nrails) && (peer->rail == NULL); ++i) {
        for (j = 0; j < (int)mx->nrails; ++j) {
            if ((mca_pml_umr.rails[i].is_sw == !strcmp(mx->rails[j].name, "sw")) &&
                (mx->rails[j].dev_addr_len == mca_pml_umr.rails[i].dev_addr_len) &&
                uct_iface_is_reachable(mca_pml_umr.rails[i].iface,
                    (const uct_device_addr_t*)mx->rails[j].addr,
                    (const uct_iface_addr_t*)(mx->rails[j].addr +
                                              mx->rails[j].dev_addr_len))) {
                peer->rail = &mca_pml_umr.rails[i];
                break;
            }
        }
    }
    free(mx);
    if (peer->rail != NULL) {
        peer->state      = MCA_PML_UMR_PEER_OK;
        peer->world_rank = proc->super.proc_name.vpid;
        MCA_PML_UMR_VERBOSE(10, "peer %d: rail %s", peer->world_rank,
                            peer->rail->name);
    } else {
        /* e.g. another RoCE version or partition: passed through */
        MCA_PML_UMR_VERBOSE(10, "peer %u: no rail reaches it",
                            proc->super.proc_name.vpid);
    }
}

/* A direct-mapped front of the peers table, keyed by the ompi_proc_t (a
 * hash table lookup costs about 170 instructions, a hit here a few); peers
 * live until mca_pml_umr_peers_fini. */
#define MCA_PML_UMR_PEER_SLOTS 64   /* power of two */

static struct {
    ompi_proc_t        *proc;
    mca_pml_umr_peer_t *peer;
} mca_pml_umr_peer_front[MCA_PML_UMR_PEER_SLOTS];

mca_pml_umr_peer_t *mca_pml_umr_peer_get(ompi_communicator_t *comm, int rank)
{
    ompi_proc_t *proc = ompi_comm_peer_lookup(comm, rank);
    unsigned slot     = ((uintptr_t)proc * 0x9e3779b97f4a7c15ull) >> 58;
    mca_pml_umr_peer_t *peer;

    if (OPAL_LIKELY(mca_pml_umr_peer_front[slot].proc == proc)) {
        peer = mca_pml_umr_peer_front[slot].peer;
    } else {
        if (OPAL_SUCCESS != opal_hash_table_get_value_ptr(&mca_pml_umr.peers,
                                                          &proc, sizeof(proc),
                                                          (void**)&peer)) {
            peer = calloc(1, sizeof(*peer));
            if (peer == NULL) {
                return NULL;
            }
            OBJ_CONSTRUCT(&peer->waiting, opal_list_t);
            OBJ_CONSTRUCT(&peer->ev_item, opal_list_item_t);
            mca_pml_umr_peer_resolve(peer, proc);
            opal_hash_table_set_value_ptr(&mca_pml_umr.peers, &proc,
                                          sizeof(proc), peer);
        }
        mca_pml_umr_peer_front[slot].proc = proc;
        mca_pml_umr_peer_front[slot].peer = peer;
    }
    return (peer->state == MCA_PML_UMR_PEER_OK) ? peer : NULL;
}

int mca_pml_umr_peer_ep(mca_pml_umr_peer_t *peer)
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

static int mca_pml_umr_peer_connect(mca_pml_umr_peer_t *peer,
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
        opal_output(0, "pml_umr: connecting to rank %d failed: %s",
                    peer->world_rank, ucs_status_string(status));
        return OMPI_ERROR;
    }
    peer->connected = 1;
    ++mca_pml_umr.cnt.connects;
    return OMPI_SUCCESS;
}

static void mca_pml_umr_peer_set_ready(mca_pml_umr_peer_t *peer)
{
    mca_pml_umr_request_t *req;
    opal_list_item_t *item;

    peer->ready = 1;
    while (NULL != (item = opal_list_remove_first(&peer->waiting))) {
        req = ucs_container_of(item, mca_pml_umr_request_t, wait_item);
        opal_list_append(&mca_pml_umr.retry, &req->wait_item);
    }
}

static void mca_pml_umr_peer_event(mca_pml_umr_peer_t *peer)
{
    if (!peer->ev_queued) {
        peer->ev_queued = 1;
        opal_list_append(&mca_pml_umr.peer_events, &peer->ev_item);
        mca_pml_umr_progress_ref(1);
    }
}

/* Completion callbacks of internal requests run inside the wrapped PML:
 * they only queue the event for mca_pml_umr_progress. */
static int mca_pml_umr_ready_cb(ompi_request_t *req)
{
    mca_pml_umr_peer_t *peer = req->req_complete_cb_data;

    if (!req->req_status._cancelled) {
        peer->ev_ready = 1;
        mca_pml_umr_peer_event(peer);
    }
    return 0;
}

static int mca_pml_umr_conn_cb(ompi_request_t *req)
{
    mca_pml_umr_peer_t *peer = req->req_complete_cb_data;

    if (!req->req_status._cancelled) {
        peer->ev_conn = 1;
        mca_pml_umr_peer_event(peer);
    }
    return 0;
}

/* The peer connected to our endpoint and sent us its address. */
static void mca_pml_umr_peer_conn(mca_pml_umr_peer_t *peer)
{
    ompi_request_t *sreq;

    if ((mca_pml_umr_peer_ep(peer) != OMPI_SUCCESS) ||
        (mca_pml_umr_peer_connect(peer, peer->conn_buf) != OMPI_SUCCESS)) {
        ++mca_pml_umr.cnt.errors;
        return;
    }
    if (mca_pml_umr.real.pml_isend(&peer->ready_buf, sizeof(peer->ready_buf),
                                   &ompi_mpi_byte.dt, peer->world_rank,
                                   MCA_PML_UMR_TAG_READY,
                                   MCA_PML_BASE_SEND_STANDARD,
                                   &ompi_mpi_comm_world.comm, &sreq) ==
        OMPI_SUCCESS) {
        mca_pml_umr_reap_add(sreq);
    }
    if (!peer->ready) {
        mca_pml_umr_peer_set_ready(peer);
    }
}

static void mca_pml_umr_peer_events(void)
{
    mca_pml_umr_peer_t *peer;
    opal_list_item_t *item;

    while (NULL != (item = opal_list_remove_first(&mca_pml_umr.peer_events))) {
        peer = ucs_container_of(item, mca_pml_umr_peer_t, ev_item);
        peer->ev_queued = 0;
        mca_pml_umr_progress_ref(-1);
        if (peer->ev_conn) {
            peer->ev_conn = 0;
            mca_pml_umr_reap_add(peer->conn_req);
            peer->conn_req = NULL;
            mca_pml_umr_peer_conn(peer);
        }
        if (peer->ev_ready) {
            peer->ev_ready = 0;
            mca_pml_umr_reap_add(peer->ready_req);
            peer->ready_req = NULL;
            if (!peer->ready) {
                mca_pml_umr_peer_set_ready(peer);
            }
        }
    }
}

static int mca_pml_umr_internal_irecv(void *buf, size_t len, int rank, int tag,
                                      ompi_request_complete_fn_t cb, void *arg,
                                      ompi_request_t **req_p)
{
    int rc;

    rc = mca_pml_umr.real.pml_irecv(buf, len, &ompi_mpi_byte.dt, rank, tag,
                                    &ompi_mpi_comm_world.comm, req_p);
    if (rc != OMPI_SUCCESS) {
        return rc;
    }
    ompi_request_set_callback(*req_p, cb, arg);
    return OMPI_SUCCESS;
}

void mca_pml_umr_peer_ctl_addr(mca_pml_umr_peer_t *peer, mca_pml_umr_ctl_t *ctl,
                               size_t off)
{
    ctl->addr_len = 0;
    if (peer->ready) {
        return;
    }
    if (!peer->conn_posted) {
        if (mca_pml_umr_internal_irecv(peer->conn_buf, sizeof(peer->conn_buf),
                                       peer->world_rank, MCA_PML_UMR_TAG_CONN,
                                       mca_pml_umr_conn_cb, peer,
                                       &peer->conn_req) != OMPI_SUCCESS) {
            return;
        }
        peer->conn_posted = 1;
    }
    if (uct_ep_get_address(peer->ep, (uct_ep_addr_t*)(ctl->data + off)) ==
        UCS_OK) {
        ctl->addr_len = peer->rail->ep_addr_len;
        ctl->flags   |= MCA_PML_UMR_CTL_ADDR;
    }
}

/* A control message arrived from `peer`: 1 when gets may start now. */
int mca_pml_umr_peer_handshake(mca_pml_umr_peer_t *peer,
                               const mca_pml_umr_ctl_t *ctl)
{
    uint8_t addr[MCA_PML_UMR_MAX_ADDR];
    ompi_request_t *sreq;

    if (peer->ready) {
        return 1;
    }
    if (mca_pml_umr_peer_ep(peer) != OMPI_SUCCESS) {
        return -1;
    }
    if (!peer->connected) {
        if (!(ctl->flags & MCA_PML_UMR_CTL_ADDR) ||
            (ctl->addr_len != peer->rail->ep_addr_len) ||
            (mca_pml_umr_peer_connect(peer, ctl->data + ctl->rkey_len) !=
             OMPI_SUCCESS)) {
            return -1;
        }
    }
    if (!peer->conn_sent) {
        if ((uct_ep_get_address(peer->ep, (uct_ep_addr_t*)addr) != UCS_OK) ||
            (mca_pml_umr_internal_irecv(&peer->ready_buf,
                                        sizeof(peer->ready_buf),
                                        peer->world_rank,
                                        MCA_PML_UMR_TAG_READY,
                                        mca_pml_umr_ready_cb, peer,
                                        &peer->ready_req) != OMPI_SUCCESS)) {
            return -1;
        }
        if (mca_pml_umr.real.pml_isend(addr, peer->rail->ep_addr_len,
                                       &ompi_mpi_byte.dt, peer->world_rank,
                                       MCA_PML_UMR_TAG_CONN,
                                       MCA_PML_BASE_SEND_STANDARD,
                                       &ompi_mpi_comm_world.comm, &sreq) !=
            OMPI_SUCCESS) {
            return -1;
        }
        mca_pml_umr_reap_add(sreq);
        peer->conn_sent = 1;
    }
    return peer->ready;
}

/* ---- progress and deferred frees --------------------------------------- */

typedef struct mca_pml_umr_reap_entry {
    ompi_request_t *req;
    void           *buf;   /* freed with the request */
} mca_pml_umr_reap_entry_t;

static mca_pml_umr_reap_entry_t *mca_pml_umr_reap_reqs;
static size_t mca_pml_umr_reap_num, mca_pml_umr_reap_max;

void mca_pml_umr_reap_add(ompi_request_t *req)
{
    mca_pml_umr_reap_add_buf(req, NULL);
}

/* Internal requests are freed outside their completion callbacks. */
void mca_pml_umr_reap_add_buf(ompi_request_t *req, void *buf)
{
    mca_pml_umr_reap_entry_t *reqs;

    if (mca_pml_umr_reap_num == mca_pml_umr_reap_max) {
        reqs = realloc(mca_pml_umr_reap_reqs,
                       sizeof(*reqs) * (mca_pml_umr_reap_max * 2 + 16));
        if (reqs == NULL) {
            return; /* leaks one request rather than crash */
        }
        mca_pml_umr_reap_reqs = reqs;
        mca_pml_umr_reap_max  = mca_pml_umr_reap_max * 2 + 16;
    }
    mca_pml_umr_reap_reqs[mca_pml_umr_reap_num].req   = req;
    mca_pml_umr_reap_reqs[mca_pml_umr_reap_num++].buf = buf;
    mca_pml_umr_progress_ref(0);
}

static void mca_pml_umr_reap(void)
{
    size_t i, keep = 0;
    ompi_request_t *req;

    for (i = 0; i < mca_pml_umr_reap_num; ++i) {
        req = mca_pml_umr_reap_reqs[i].req;
        if (REQUEST_COMPLETE(req)) {
            ompi_request_free(&req);
            free(mca_pml_umr_reap_reqs[i].buf);
        } else {
            mca_pml_umr_reap_reqs[keep++] = mca_pml_umr_reap_reqs[i];
        }
    }
    mca_pml_umr_reap_num = keep;
}

int mca_pml_umr_progress(void)
{
    mca_pml_umr_request_t *req;
    opal_list_item_t *item;
    size_t num;
    int count;

    count = uct_worker_progress(mca_pml_umr.worker);
    mca_pml_umr_peer_events();
    num   = opal_list_get_size(&mca_pml_umr.retry);
    while ((num-- > 0) &&
           (NULL != (item = opal_list_remove_first(&mca_pml_umr.retry)))) {
        req = ucs_container_of(item, mca_pml_umr_request_t, wait_item);
        mca_pml_umr_recv_step(req);
    }
    mca_pml_umr_reap();
    if ((mca_pml_umr.outstanding == 0) && (mca_pml_umr_reap_num == 0) &&
        mca_pml_umr.progress_on) {
        opal_progress_unregister(mca_pml_umr_progress);
        mca_pml_umr.progress_on = 0;
    }
    return count;
}

/* Our progress runs only while gets or internal requests are in flight. */
void mca_pml_umr_progress_ref(int delta)
{
    mca_pml_umr.outstanding += delta;
    if (!mca_pml_umr.progress_on && ((mca_pml_umr.outstanding > 0) ||
                                     (mca_pml_umr_reap_num > 0))) {
        opal_progress_register(mca_pml_umr_progress);
        mca_pml_umr.progress_on = 1;
    }
}

static void mca_pml_umr_peer_cancel(ompi_request_t **req_p)
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

/* MPI_Finalize has started (MPI_COMM_SELF is being freed): let in-flight
 * work finish and cancel the handshake receives that will never match,
 * while MPI_COMM_WORLD still works. */
void mca_pml_umr_quiesce(void)
{
    mca_pml_umr_peer_t *peer;
    void *key, *node = NULL;
    size_t key_size;
    int rc;

    while (mca_pml_umr.outstanding > 0) {
        opal_progress();
    }
    rc = opal_hash_table_get_first_key_ptr(&mca_pml_umr.peers, &key,
                                           &key_size, (void**)&peer, &node);
    while (rc == OPAL_SUCCESS) {
        mca_pml_umr_peer_cancel(&peer->conn_req);
        mca_pml_umr_peer_cancel(&peer->ready_req);
        rc = opal_hash_table_get_next_key_ptr(&mca_pml_umr.peers, &key,
                                              &key_size, (void**)&peer, node,
                                              &node);
    }
    mca_pml_umr_reap();
}

void mca_pml_umr_peers_fini(void)
{
    mca_pml_umr_peer_t *peer;
    void *key, *node = NULL;
    size_t key_size;
    int rc;

    rc = opal_hash_table_get_first_key_ptr(&mca_pml_umr.peers, &key,
                                           &key_size, (void**)&peer, &node);
    while (rc == OPAL_SUCCESS) {
        if (peer->ep != NULL) {
            uct_ep_destroy(peer->ep);
        }
        OBJ_DESTRUCT(&peer->waiting);
        OBJ_DESTRUCT(&peer->ev_item);
        free(peer);
        rc = opal_hash_table_get_next_key_ptr(&mca_pml_umr.peers, &key,
                                              &key_size, (void**)&peer, node,
                                              &node);
    }
    memset(mca_pml_umr_peer_front, 0, sizeof(mca_pml_umr_peer_front));
    OBJ_DESTRUCT(&mca_pml_umr.peers);
    OBJ_DESTRUCT(&mca_pml_umr.retry);
    OBJ_DESTRUCT(&mca_pml_umr.peer_events);
    OBJ_DESTRUCT(&mca_pml_umr.requests);
    mca_pml_umr_hook_fini();
    free(mca_pml_umr_reap_reqs);
    mca_pml_umr_reap_reqs = NULL;
    mca_pml_umr_reap_num  = mca_pml_umr_reap_max = 0;
}
