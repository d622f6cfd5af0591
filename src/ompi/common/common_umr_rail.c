/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: rails (see common_umr_rail.h).
 */
#include "common_umr_rail.h"
#include "common_umr.h"
#include "common_umr_help.h"
#include "common_umr_keys.h"
#include "common_umr_memhooks.h"

#include "umr_ompi_compat.h"

#include <ompi/proc/proc.h>
#include <opal/util/proc.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef MCA_COMMON_UMR_DEFAULT_UCT_MODULE
#define MCA_COMMON_UMR_DEFAULT_UCT_MODULE "libuct_mlx5_umr.so"
#endif

mca_common_umr_rails_t mca_common_umr_rails;

int mca_common_umr_ucx_tls_allows(void)
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

static int mca_common_umr_find_component(void)
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
            mca_common_umr_rails.component = components[i];
        }
    }
    uct_release_component_list(components);
    return (mca_common_umr_rails.component != NULL) ? OMPI_SUCCESS : OMPI_ERROR;
}

/* A device pml_umr_devices names that does not open is worth a warning
 * (the user asked for it); one chosen automatically, a verbose line. */
static void mca_common_umr_rail_failed(const mca_common_umr_device_t *dev,
                                       const char *what, ucs_status_t status)
{
    if (dev->named) {
        mca_common_umr_show_help("help-mpi-common-umr.txt", "device-open-failed",
                                 mca_common_umr.who, dev->name,
                                 dev->port ? ":" : "", dev->port, what,
                                 ucs_status_string(status));
    } else {
        MCA_COMMON_UMR_VERBOSE(1, "%s %s: %s", what, dev->name,
                               ucs_status_string(status));
    }
}

static int mca_common_umr_rail_open(const mca_common_umr_device_t *dev)
{
    const char *md_name = dev->name;
    mca_common_umr_rail_t *rail =
            &mca_common_umr_rails.rails[mca_common_umr_rails.nrails];
    uct_iface_params_t params = {0};
    uct_iface_config_t *iface_config;
    uct_iface_attr_t iface_attr;
    uct_md_attr_t md_attr;
    ucs_status_t status;

    memset(rail, 0, sizeof(*rail));
    status = mca_common_umr_devices_md_open(mca_common_umr_rails.component, dev,
                                            &rail->md);
    if (status != UCS_OK) {
        mca_common_umr_rail_failed(dev, "md", status);
        return OMPI_ERROR;
    }
    if ((uct_md_query(rail->md, &md_attr) != UCS_OK) ||
        (md_attr.rkey_packed_size > MCA_COMMON_UMR_MAX_RKEY)) {
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
    status = uct_iface_open(rail->md, mca_common_umr_rails.worker, &params,
                            iface_config, &rail->iface);
    uct_config_release(iface_config);
    if (status != UCS_OK) {
        mca_common_umr_rail_failed(dev, "iface", status);
        goto err_md;
    }
    if ((uct_iface_query(rail->iface, &iface_attr) != UCS_OK) ||
        (iface_attr.ep_addr_len > MCA_COMMON_UMR_MAX_ADDR) ||
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
    if (mca_common_umr_keys_init(rail) != OMPI_SUCCESS) {
        goto err_iface;
    }
    ++mca_common_umr_rails.nrails;
    MCA_COMMON_UMR_VERBOSE(5, "rail %s%s%.0u open", md_name,
                           dev->port ? ":" : "", dev->port);
    return OMPI_SUCCESS;

err_iface:
    uct_iface_close(rail->iface);
err_md:
    uct_md_close(rail->md);
    return OMPI_ERROR;
}

/* Rails: the devices pml_umr_devices selects (common_umr_devices.h): "sw"
 * for peers on this host and one mlx5 device for the others. -1: the
 * parameter names what is not here (pass everything through). */
static int mca_common_umr_rails_select(const char *devices)
{
    char names[MCA_COMMON_UMR_DEVICES_MAX][MCA_COMMON_UMR_DEVICE_NAME_MAX];
    mca_common_umr_devices_t plan;
    char engine[32], msg[768];
    unsigned i, num;
    int have_mlx5 = 0;

    if (mca_common_umr_devices_query(mca_common_umr_rails.component, names,
                                     MCA_COMMON_UMR_DEVICES_MAX, &num, engine,
                                     sizeof(engine)) != UCS_OK) {
        MCA_COMMON_UMR_VERBOSE(1, "cannot list the mlx5_umr devices");
    }
    if (mca_common_umr_devices_select(devices, names, num, &plan,
                                      msg, sizeof(msg)) < 0) {
        mca_common_umr_show_help("help-mpi-common-umr.txt", "devices-rejected",
                                 mca_common_umr.who, msg, engine);
        return -1;
    }
    /* of several HCAs, the nearest (the ranks of a node spread) */
    mca_common_umr_devices_nearest(mca_common_umr_rails.component, &plan,
                                   (unsigned)opal_process_info.my_local_rank);
    for (i = 0; (i < plan.num) &&
         (mca_common_umr_rails.nrails < MCA_COMMON_UMR_MAX_RAILS); ++i) {
        if (!strcmp(plan.dev[i].name, "sw")) {
            (void)mca_common_umr_rail_open(&plan.dev[i]);
        } else if (!have_mlx5 &&
                   (mca_common_umr_rail_open(&plan.dev[i]) == OMPI_SUCCESS)) {
            have_mlx5 = 1;
        }
    }
    return 0;
}

static int mca_common_umr_modex_send(void);

/* `dir` of the file that holds `addr` + "/" + `rel`, in `path`; 0 if it
 * exists. */
static int mca_common_umr_beside(const void *addr, const char *rel,
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
 * beside the component (PREFIX/lib/openmpi/mca_*.so -> PREFIX/lib/ucx/),
 * then beside this library (PREFIX/lib/ucx/), then where configure said it
 * goes; so an install moved as a whole (DESTDIR, a relocated prefix, the
 * build tree's lib/ folder) finds its own module, not another one.
 */
static const char *mca_common_umr_uct_module(const mca_base_component_t *owner,
                                             const char *uct_module,
                                             char *path, size_t size)
{
    if ((uct_module != NULL) && (uct_module[0] != '\0')) {
        return uct_module;
    }
    if ((mca_common_umr_beside(owner, "../ucx/libuct_mlx5_umr.so", path,
                               size) == 0) ||
        (mca_common_umr_beside((const void*)mca_common_umr_uct_module,
                               "ucx/libuct_mlx5_umr.so", path, size) == 0)) {
        return path;
    }
    return MCA_COMMON_UMR_DEFAULT_UCT_MODULE;
}

int mca_common_umr_rails_open(const mca_base_component_t *owner,
                              const char *uct_module, const char *devices)
{
    char path[PATH_MAX];

    if (devices == NULL) {
        devices = "";
    }
    mca_common_umr_rails.owner = owner;
    uct_module = mca_common_umr_uct_module(owner, uct_module, path,
                                           sizeof(path));
    MCA_COMMON_UMR_VERBOSE(5, "UCT module: %s", uct_module);

    if (!mca_common_umr_ucx_tls_allows()) {
        MCA_COMMON_UMR_VERBOSE(1, "UCX_TLS=%s does not name mlx5_umr: passing "
                               "everything through", getenv("UCX_TLS"));
        return OMPI_ERROR;
    }
    mca_common_umr_rails.module_handle = dlopen(uct_module,
                                       RTLD_NOW | RTLD_GLOBAL);
    if (mca_common_umr_rails.module_handle == NULL) {
        MCA_COMMON_UMR_VERBOSE(1, "cannot load %s (%s): passing everything "
                               "through", uct_module, dlerror());
        return OMPI_ERROR;
    }
    if (mca_common_umr_find_component() != OMPI_SUCCESS) {
        MCA_COMMON_UMR_VERBOSE(1, "UCX has no mlx5_umr component after loading "
                               "%s (version skew?): passing everything through",
                               uct_module);
        goto err_dlclose;
    }
    if (ucs_async_context_create(UCS_ASYNC_MODE_POLL,
                                 &mca_common_umr_rails.async) != UCS_OK) {
        goto err_dlclose;
    }
    if (uct_worker_create(mca_common_umr_rails.async, UCS_THREAD_MODE_SINGLE,
                          &mca_common_umr_rails.worker) != UCS_OK) {
        goto err_async;
    }
    if (mca_common_umr_rails_select(devices) < 0) {
        goto err_worker;
    }
    if (mca_common_umr_rails.nrails == 0) {
        MCA_COMMON_UMR_VERBOSE(1, "no mlx5_umr rail could be opened%s%s%s: "
                               "passing everything through",
                               devices[0] ? " (pml_umr_devices=\"" : "",
                               devices,
                               devices[0] ? "\")" : "");
        goto err_worker;
    }

    if (mca_common_umr_modex_send() != OMPI_SUCCESS) {
        mca_common_umr_rails_close();
        return OMPI_ERROR;
    }
    mca_common_umr_memhooks_init();
    return OMPI_SUCCESS;

err_worker:
    uct_worker_destroy(mca_common_umr_rails.worker);
err_async:
    ucs_async_context_destroy(mca_common_umr_rails.async);
err_dlclose:
    /* the module stays loaded: UCX holds its component */
    return OMPI_ERROR;
}

/* Registrations go before the counters are printed (keys_live to 0). */
void mca_common_umr_rails_release(void)
{
    int i;

    for (i = 0; i < mca_common_umr_rails.nrails; ++i) {
        mca_common_umr_keys_fini(&mca_common_umr_rails.rails[i]);
    }
}

uint64_t mca_common_umr_rails_mem_regs(void)
{
    uint64_t sum = 0;
    uct_umr_md_stats_t st;
    int i;

    for (i = 0; i < mca_common_umr_rails.nrails; ++i) {
        if (uct_umr_md_get_stats(mca_common_umr_rails.rails[i].md, &st) ==
            UCS_OK) {
            sum += st.mem_regs;
        }
    }
    return sum;
}

void mca_common_umr_rails_close(void)
{
    int i;

    for (i = 0; i < mca_common_umr_rails.nrails; ++i) {
        mca_common_umr_keys_fini(&mca_common_umr_rails.rails[i]);
        uct_iface_close(mca_common_umr_rails.rails[i].iface);
        uct_md_close(mca_common_umr_rails.rails[i].md);
    }
    mca_common_umr_rails.nrails = 0;
    mca_common_umr_memhooks_fini();
    uct_worker_destroy(mca_common_umr_rails.worker);
    ucs_async_context_destroy(mca_common_umr_rails.async);
}

static int mca_common_umr_modex_send(void)
{
    mca_common_umr_modex_t mx;
    mca_common_umr_rail_t *rail;
    int rc, i;

    memset(&mx, 0, sizeof(mx));
    strncpy(mx.version, MCA_COMMON_UMR_MODEX_VERSION, sizeof(mx.version) - 1);
    mx.nrails = mca_common_umr_rails.nrails;
    for (i = 0; i < mca_common_umr_rails.nrails; ++i) {
        rail = &mca_common_umr_rails.rails[i];
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
                    mca_common_umr_rails.owner, &mx, sizeof(mx));
    return (rc == OPAL_SUCCESS) ? OMPI_SUCCESS : OMPI_ERROR;
}
