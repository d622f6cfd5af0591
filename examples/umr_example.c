/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * umr_example: shared UCT setup of the examples (see umr_example.h).
 */
#include "umr_example.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UMR_EXAMPLE_MAX_MDS  8

static ucs_status_t umr_example_fail(umr_example_t *ex, ucs_status_t status,
                                     const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(ex->error, sizeof(ex->error), fmt, ap);
    va_end(ap);
    return status;
}

/* The component and, if dev is NULL, its first device. */
static ucs_status_t umr_example_find(umr_example_t *ex, const char **dev,
                                     uct_md_resource_desc_t *mds)
{
    uct_component_attr_t attr = {
        .field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                      UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT
    };
    uct_component_h *components;
    ucs_status_t status;
    unsigned i, num;

    status = uct_query_components(&components, &num);
    if (status != UCS_OK) {
        return umr_example_fail(ex, status, "uct_query_components");
    }
    for (i = 0, ex->component = NULL; (i < num) && (ex->component == NULL); ++i) {
        status = uct_component_query(components[i], &attr);
        if (status != UCS_OK) {
            uct_release_component_list(components);
            return umr_example_fail(ex, status, "uct_component_query");
        }
        if (!strcmp(attr.name, "mlx5_umr")) {
            ex->component = components[i]; /* static: outlives the list */
        }
    }
    uct_release_component_list(components);
    if (ex->component == NULL) {
        return umr_example_fail(ex, UCS_ERR_NO_DEVICE, "finding the mlx5_umr "
                                "component (the module constructor did not "
                                "register it: UCX version skew? see README)");
    }
    if (*dev != NULL) {
        return UCS_OK;
    }

    if ((attr.md_resource_count == 0) ||
        (attr.md_resource_count > UMR_EXAMPLE_MAX_MDS)) {
        return umr_example_fail(ex, UCS_ERR_NO_DEVICE, "mlx5_umr device "
                                "lookup (%u devices with UCX_MLX5_UMR_ENGINE="
                                "%s; no ConnectX? the sw engine needs none)",
                                attr.md_resource_count,
                                getenv("UCX_MLX5_UMR_ENGINE") ?: "(unset)");
    }
    attr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    attr.md_resources = mds;
    status = uct_component_query(ex->component, &attr);
    if (status != UCS_OK) {
        return umr_example_fail(ex, status, "md resources");
    }
    *dev = mds[0].md_name;
    return UCS_OK;
}

static ucs_status_t umr_example_open_md(umr_example_t *ex, const char *dev)
{
    uct_md_config_t *md_config;
    uct_md_attr_t md_attr;
    ucs_status_t status;

    status = uct_md_config_read(ex->component, NULL, NULL, &md_config);
    if (status != UCS_OK) {
        return umr_example_fail(ex, status, "uct_md_config_read");
    }
    status = uct_md_open(ex->component, dev, md_config, &ex->md);
    uct_config_release(md_config);
    if (status != UCS_OK) {
        return umr_example_fail(ex, status, "uct_md_open (is the device "
                                "name right? see 'ucx_info -d')");
    }
    status = uct_md_query(ex->md, &md_attr);
    if (status != UCS_OK) {
        umr_example_fail(ex, status, "uct_md_query");
        goto err_close;
    }
    ex->rkey_size = md_attr.rkey_packed_size;
    if (ex->rkey_size > UMR_EXAMPLE_MAX_RKEY) {
        status = umr_example_fail(ex, UCS_ERR_UNSUPPORTED, "packed rkey of "
                                  "%zu bytes (max %d)", ex->rkey_size,
                                  UMR_EXAMPLE_MAX_RKEY);
        goto err_close;
    }
    return UCS_OK;

err_close:
    uct_md_close(ex->md);
    return status;
}

ucs_status_t umr_example_open(umr_example_t *ex, const char *dev)
{
    uct_md_resource_desc_t mds[UMR_EXAMPLE_MAX_MDS];
    uct_iface_params_t params = {0};
    uct_iface_config_t *iface_config;
    ucs_status_t status;

    memset(ex, 0, sizeof(*ex));
    status = umr_example_find(ex, &dev, mds);
    if (status != UCS_OK) {
        return status;
    }
    status = umr_example_open_md(ex, dev);
    if (status != UCS_OK) {
        return status;
    }

    status = ucs_async_context_create(UCS_ASYNC_MODE_POLL, &ex->async);
    if (status != UCS_OK) {
        umr_example_fail(ex, status, "ucs_async_context_create");
        goto err_md;
    }
    status = uct_worker_create(ex->async, UCS_THREAD_MODE_SINGLE, &ex->worker);
    if (status != UCS_OK) {
        umr_example_fail(ex, status, "uct_worker_create");
        goto err_async;
    }
    status = uct_md_iface_config_read(ex->md, "mlx5_umr", NULL, NULL,
                                      &iface_config);
    if (status != UCS_OK) {
        umr_example_fail(ex, status, "uct_md_iface_config_read");
        goto err_worker;
    }
    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = "mlx5_umr";
    params.mode.device.dev_name = dev;
    status = uct_iface_open(ex->md, ex->worker, &params, iface_config,
                            &ex->iface);
    uct_config_release(iface_config);
    if (status != UCS_OK) {
        umr_example_fail(ex, status, "uct_iface_open");
        goto err_worker;
    }
    uct_iface_progress_enable(ex->iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    return UCS_OK;

err_worker:
    uct_worker_destroy(ex->worker);
err_async:
    ucs_async_context_destroy(ex->async);
err_md:
    uct_md_close(ex->md);
    return status;
}

ucs_status_t umr_example_connect(umr_example_t *ex,
                                 umr_example_exchange_fn_t exchange, void *arg)
{
    uct_ep_params_t ep_params = { .field_mask = UCT_EP_PARAM_FIELD_IFACE,
                                  .iface      = ex->iface };
    char dev_addr[UMR_EXAMPLE_MAX_ADDR], ep_addr[UMR_EXAMPLE_MAX_ADDR];
    char peer_dev[UMR_EXAMPLE_MAX_ADDR], peer_ep[UMR_EXAMPLE_MAX_ADDR];
    uct_iface_attr_t attr;
    ucs_status_t status;

    status = uct_iface_query(ex->iface, &attr);
    if (status != UCS_OK) {
        return umr_example_fail(ex, status, "uct_iface_query");
    }
    if ((attr.device_addr_len > UMR_EXAMPLE_MAX_ADDR) ||
        (attr.ep_addr_len > UMR_EXAMPLE_MAX_ADDR)) {
        return umr_example_fail(ex, UCS_ERR_UNSUPPORTED, "address lengths "
                                "%zu/%zu (max %d)", attr.device_addr_len,
                                attr.ep_addr_len, UMR_EXAMPLE_MAX_ADDR);
    }
    status = uct_ep_create(&ep_params, &ex->ep);
    if (status != UCS_OK) {
        return umr_example_fail(ex, status, "uct_ep_create");
    }
    status = uct_iface_get_device_address(ex->iface, (void*)dev_addr);
    if (status != UCS_OK) {
        umr_example_fail(ex, status, "uct_iface_get_device_address");
        goto err_ep;
    }
    status = uct_ep_get_address(ex->ep, (void*)ep_addr);
    if (status != UCS_OK) {
        umr_example_fail(ex, status, "uct_ep_get_address");
        goto err_ep;
    }
    status = exchange(arg, dev_addr, attr.device_addr_len, peer_dev,
                      sizeof(peer_dev));
    if (status == UCS_OK) {
        status = exchange(arg, ep_addr, attr.ep_addr_len, peer_ep,
                          sizeof(peer_ep));
    }
    if (status != UCS_OK) {
        umr_example_fail(ex, status, "address exchange with the peer");
        goto err_ep;
    }
    status = uct_ep_connect_to_ep(ex->ep, (void*)peer_dev, (void*)peer_ep);
    if (status != UCS_OK) {
        umr_example_fail(ex, status, "uct_ep_connect_to_ep");
        goto err_ep;
    }
    return UCS_OK;

err_ep:
    uct_ep_destroy(ex->ep);
    ex->ep = NULL;
    return status;
}

static void umr_example_comp_cb(uct_completion_t *self)
{
}

/* Counts a posted operation down from comp; UCS_OK unless it failed. */
static ucs_status_t umr_example_posted(umr_example_t *ex, ucs_status_t status,
                                       uct_completion_t *comp, const char *what)
{
    if (status == UCS_OK) {
        --comp->count;
    } else if (status != UCS_INPROGRESS) {
        return umr_example_fail(ex, status, "%s", what);
    }
    return UCS_OK;
}

ucs_status_t umr_example_put_wait(umr_example_t *ex, const uct_iov_t *iov,
                                  const umr_layout_t *layout,
                                  uint64_t remote_addr, uct_rkey_t rkey)
{
    uct_completion_t comp = { .func = umr_example_comp_cb, .count = 2,
                              .status = UCS_OK };
    ucs_status_t status;

    for (;;) {
        if (layout == NULL) {
            status = uct_ep_put_zcopy(ex->ep, iov, 1, remote_addr, rkey, &comp);
        } else {
            status = uct_umr_ep_put_layout(ex->ep, iov->memh, iov->buffer,
                                           layout, 1, 0,
                                           umr_layout_size(layout),
                                           remote_addr, rkey, &comp);
        }
        if (status != UCS_ERR_NO_RESOURCE) {
            break;
        }
        uct_worker_progress(ex->worker);
    }
    status = umr_example_posted(ex, status, &comp, (layout == NULL) ?
                                "uct_ep_put_zcopy" : "uct_umr_ep_put_layout");
    if (status != UCS_OK) {
        return status;
    }

    while ((status = uct_ep_flush(ex->ep, 0, &comp)) == UCS_ERR_NO_RESOURCE) {
        uct_worker_progress(ex->worker);
    }
    /* A failed flush still leaves the put to drain: wait for it below. */
    status = umr_example_posted(ex, status, &comp, "uct_ep_flush");
    if (status != UCS_OK) {
        --comp.count;
    }
    while (comp.count > 0) {
        uct_worker_progress(ex->worker);
    }
    if ((status == UCS_OK) && (comp.status != UCS_OK)) {
        status = umr_example_fail(ex, comp.status, "put completion");
    }
    return status;
}

void umr_example_close(umr_example_t *ex)
{
    if (ex->ep != NULL) {
        uct_ep_destroy(ex->ep);
    }
    uct_iface_close(ex->iface);
    uct_worker_destroy(ex->worker);
    ucs_async_context_destroy(ex->async);
    uct_md_close(ex->md);
}
