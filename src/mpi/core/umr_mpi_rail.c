/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: rails (see umr_mpi_rail.h).
 */
#include "umr_mpi_rail.h"
#include "umr_mpi_keys.h"
#include "umr_mpi_progress.h"
#include "uct_umr.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef UMR_MPI_DEFAULT_UCT_MODULE
#define UMR_MPI_DEFAULT_UCT_MODULE "libuct_mlx5_umr.so"
#endif

umr_mpi_rails_t umr_mpi_rails;

int umr_mpi_ucx_tls_allows(void)
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

static int umr_mpi_find_component(void)
{
    uct_component_attr_t attr = {.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME};
    uct_component_h *components;
    unsigned i, num;

    if (uct_query_components(&components, &num) != UCS_OK) {
        return -1;
    }
    for (i = 0; i < num; ++i) {
        if ((uct_component_query(components[i], &attr) == UCS_OK) &&
            !strcmp(attr.name, "mlx5_umr")) {
            umr_mpi_rails.component = components[i];
        }
    }
    uct_release_component_list(components);
    return (umr_mpi_rails.component != NULL) ? 0 : -1;
}

/* The device parameter's name, for messages. */
static const char *umr_mpi_devices_param = "devices";

/* A device the parameter names that does not open is worth a warning (the
 * user asked for it); one chosen automatically, a verbose line. */
static void umr_mpi_rail_failed(const umr_mpi_device_t *dev,
                                const char *what, ucs_status_t status)
{
    if (dev->named) {
        umr_mpi_warn("device-open-failed", "%s: %s%s%.0u: %s open failed: %s",
                     umr_mpi_devices_param, dev->name, dev->port ? ":" : "",
                     dev->port, what, ucs_status_string(status));
    } else {
        UMR_MPI_VERBOSE(1, "%s %s: %s", what, dev->name,
                        ucs_status_string(status));
    }
}

static int umr_mpi_rail_open(const umr_mpi_device_t *dev)
{
    const char *md_name  = dev->name;
    umr_mpi_rail_t *rail = &umr_mpi_rails.rails[umr_mpi_rails.nrails];
    uct_iface_params_t params = {0};
    uct_iface_config_t *iface_config;
    uct_iface_attr_t iface_attr;
    uct_md_attr_t md_attr;
    ucs_status_t status;

    memset(rail, 0, sizeof(*rail));
    status = umr_mpi_devices_md_open(umr_mpi_rails.component, dev,
                                     &rail->md);
    if (status != UCS_OK) {
        umr_mpi_rail_failed(dev, "md", status);
        return -1;
    }
    if ((uct_md_query(rail->md, &md_attr) != UCS_OK) ||
        (md_attr.rkey_packed_size > UMR_MPI_MAX_RKEY)) {
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
    status = uct_iface_open(rail->md, umr_mpi_rails.worker, &params,
                            iface_config, &rail->iface);
    uct_config_release(iface_config);
    if (status != UCS_OK) {
        umr_mpi_rail_failed(dev, "iface", status);
        goto err_md;
    }
    if ((uct_iface_query(rail->iface, &iface_attr) != UCS_OK) ||
        (iface_attr.ep_addr_len > UMR_MPI_MAX_ADDR) ||
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
    umr_mpi_keys_init(rail);
    ++umr_mpi_rails.nrails;
    UMR_MPI_VERBOSE(5, "rail %s%s%.0u open", md_name,
                    dev->port ? ":" : "", dev->port);
    return 0;

err_iface:
    uct_iface_close(rail->iface);
err_md:
    uct_md_close(rail->md);
    return -1;
}

/* Rails: the devices the parameter selects (umr_mpi_devices.h): "sw" for
 * peers on this host and one mlx5 device for the others. -1: the parameter
 * names what is not here (pass everything through). */
static int umr_mpi_rails_select(const char *devices)
{
    char names[UMR_MPI_DEVICES_MAX][UMR_MPI_DEVICE_NAME_MAX];
    umr_mpi_devices_t plan;
    char engine[32], msg[768];
    unsigned i, num;
    int have_mlx5 = 0;

    if (umr_mpi_devices_query(umr_mpi_rails.component, names,
                              UMR_MPI_DEVICES_MAX, &num, engine,
                              sizeof(engine)) != UCS_OK) {
        UMR_MPI_VERBOSE(1, "cannot list the mlx5_umr devices");
    }
    if (umr_mpi_devices_select(devices, umr_mpi_devices_param, names, num,
                               &plan, msg, sizeof(msg)) < 0) {
        umr_mpi_warn("devices-rejected", "%s, UCX_MLX5_UMR_ENGINE=%s: "
                     "passing everything through", msg, engine);
        return -1;
    }
    /* of several HCAs, the nearest (the ranks of a node spread) */
    umr_mpi_devices_nearest(umr_mpi_rails.component, &plan,
                            (unsigned)umr_mpi.b->local_rank);
    for (i = 0; (i < plan.num) &&
         (umr_mpi_rails.nrails < UMR_MPI_MAX_RAILS); ++i) {
        if (!strcmp(plan.dev[i].name, "sw")) {
            (void)umr_mpi_rail_open(&plan.dev[i]);
        } else if (!have_mlx5 &&
                   (umr_mpi_rail_open(&plan.dev[i]) == 0)) {
            have_mlx5 = 1;
        }
    }
    return 0;
}

static int umr_mpi_rails_publish(uint32_t flags);

/* `dir` of the file that holds `addr` + "/" + `rel`, in `path`; 0 if it
 * exists. */
static int umr_mpi_beside(const void *addr, const char *rel,
                          char *path, size_t size)
{
    Dl_info info;
    const char *slash;

    if ((dladdr(addr, &info) == 0) || (info.dli_fname == NULL) ||
        ((slash = strrchr(info.dli_fname, '/')) == NULL)) {
        return -1;
    }
    snprintf(path, size, "%.*s/%s", (int)(slash - info.dli_fname),
             info.dli_fname, rel);
    return access(path, R_OK);
}

/*
 * The UCT module to load when the parameter names none: the one installed
 * beside the binding (PREFIX/lib/openmpi/mca_*.so -> PREFIX/lib/ucx/),
 * then beside this library (PREFIX/lib/ucx/), then where configure said it
 * goes; so an install moved as a whole (DESTDIR, a relocated prefix, the
 * build tree's lib/ folder) finds its own module, not another one.
 */
static const char *umr_mpi_uct_module(const void *beside,
                                      const char *uct_module, char *path,
                                      size_t size)
{
    if ((uct_module != NULL) && (uct_module[0] != '\0')) {
        return uct_module;
    }
    if (((beside != NULL) &&
         (umr_mpi_beside(beside, "../ucx/libuct_mlx5_umr.so", path,
                         size) == 0)) ||
        (umr_mpi_beside((const void*)umr_mpi_uct_module,
                        "ucx/libuct_mlx5_umr.so", path, size) == 0)) {
        return path;
    }
    return UMR_MPI_DEFAULT_UCT_MODULE;
}

ucs_status_t umr_mpi_rails_open(const umr_mpi_rails_params_t *params)
{
    const char *devices = (params->devices != NULL) ? params->devices : "";
    const char *uct_module;
    char path[PATH_MAX];

    if (umr_mpi_rails.refs > 0) {
        ++umr_mpi_rails.refs;
        return UCS_OK;
    }
    if (params->devices_param != NULL) {
        umr_mpi_devices_param = params->devices_param;
    }
    uct_module = umr_mpi_uct_module(params->beside, params->uct_module, path,
                                    sizeof(path));
    UMR_MPI_VERBOSE(5, "UCT module: %s", uct_module);

    if (!umr_mpi_ucx_tls_allows()) {
        UMR_MPI_VERBOSE(1, "UCX_TLS=%s does not name mlx5_umr: passing "
                        "everything through", getenv("UCX_TLS"));
        return UCS_ERR_UNSUPPORTED;
    }
    umr_mpi_rails.module_handle = dlopen(uct_module, RTLD_NOW | RTLD_GLOBAL);
    if (umr_mpi_rails.module_handle == NULL) {
        UMR_MPI_VERBOSE(1, "cannot load %s (%s): passing everything "
                        "through", uct_module, dlerror());
        return UCS_ERR_NO_ELEM;
    }
    if (umr_mpi_find_component() != 0) {
        UMR_MPI_VERBOSE(1, "UCX has no mlx5_umr component after loading "
                        "%s (version skew?): passing everything through",
                        uct_module);
        goto err_dlclose;
    }
    if (ucs_async_context_create(UCS_ASYNC_MODE_POLL,
                                 &umr_mpi_rails.async) != UCS_OK) {
        goto err_dlclose;
    }
    if (uct_worker_create(umr_mpi_rails.async, UCS_THREAD_MODE_SINGLE,
                          &umr_mpi_rails.worker) != UCS_OK) {
        goto err_async;
    }
    if (umr_mpi_rails_select(devices) < 0) {
        goto err_worker;
    }
    if (umr_mpi_rails.nrails == 0) {
        UMR_MPI_VERBOSE(1, "no mlx5_umr rail could be opened%s%s%s%s%s: "
                        "passing everything through",
                        devices[0] ? " (" : "",
                        devices[0] ? umr_mpi_devices_param : "",
                        devices[0] ? "=\"" : "", devices,
                        devices[0] ? "\")" : "");
        goto err_worker;
    }
    umr_mpi_progress_init(umr_mpi_rails.worker);
    if (umr_mpi_rails_publish(params->flags) != 0) {
        umr_mpi_rails_close();
        return UCS_ERR_NO_MEMORY;
    }
    umr_mpi_rails.refs = 1;
    return UCS_OK;

err_worker:
    uct_worker_destroy(umr_mpi_rails.worker);
err_async:
    ucs_async_context_destroy(umr_mpi_rails.async);
err_dlclose:
    /* the module stays loaded: UCX holds its component */
    return UCS_ERR_NO_DEVICE;
}

/* Endpoints and registrations go before the counters are printed
 * (keys_live to 0). */
void umr_mpi_rails_release(void)
{
    int i;

    if (umr_mpi_rails.refs > 1) {
        return;
    }
    for (i = 0; i < umr_mpi_rails.nrails; ++i) {
        umr_mpi_keys_fini(&umr_mpi_rails.rails[i]);
    }
}

uint64_t umr_mpi_rails_mem_regs(void)
{
    uint64_t sum = 0;
    uct_umr_md_stats_t st;
    int i;

    for (i = 0; i < umr_mpi_rails.nrails; ++i) {
        if (uct_umr_md_get_stats(umr_mpi_rails.rails[i].md, &st) == UCS_OK) {
            sum += st.mem_regs;
        }
    }
    return sum;
}

void umr_mpi_rails_close(void)
{
    int i;

    if (umr_mpi_rails.refs > 1) {
        --umr_mpi_rails.refs;
        return;
    }
    umr_mpi_progress_fini();
    for (i = 0; i < umr_mpi_rails.nrails; ++i) {
        umr_mpi_keys_fini(&umr_mpi_rails.rails[i]);
        uct_iface_close(umr_mpi_rails.rails[i].iface);
        uct_md_close(umr_mpi_rails.rails[i].md);
    }
    umr_mpi_rails.nrails = 0;
    umr_mpi_rails.refs   = 0;
    uct_worker_destroy(umr_mpi_rails.worker);
    ucs_async_context_destroy(umr_mpi_rails.async);
    umr_mpi_rails.worker = NULL;
}

/* This process's address, through the binding. */
static int umr_mpi_rails_publish(uint32_t flags)
{
    umr_mpi_addr_t addr;
    umr_mpi_rail_t *rail;
    int i;

    memset(&addr, 0, sizeof(addr));
    snprintf(addr.version, sizeof(addr.version), "%s%s", umr_mpi.b->version,
             UMR_MPI_PROTO_VERSION);
    addr.flags  = flags;
    addr.nrails = umr_mpi_rails.nrails;
    for (i = 0; i < umr_mpi_rails.nrails; ++i) {
        rail = &umr_mpi_rails.rails[i];
        /* the name only: the bytes after it in the rail are not set */
        snprintf(addr.rails[i].name, sizeof(addr.rails[i].name), "%s",
                 rail->name);
        addr.rails[i].dev_addr_len   = rail->dev_addr_len;
        addr.rails[i].iface_addr_len = rail->iface_addr_len;
        if ((uct_iface_get_device_address(rail->iface, (uct_device_addr_t*)
                                          addr.rails[i].addr) != UCS_OK) ||
            (uct_iface_get_address(rail->iface, (uct_iface_addr_t*)
                                   (addr.rails[i].addr + rail->dev_addr_len))
             != UCS_OK)) {
            return -1;
        }
    }
    umr_mpi_rails.flags = flags;
    return umr_mpi.b->publish(&addr, sizeof(addr));
}
