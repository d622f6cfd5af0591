/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr engine, mlx5 backend: the device's asynchronous events.
 */
#include "umr_config.h"

#include "engine_mlx5.h"

#include <ucs/debug/log.h>

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

/* What of the address peers know us by is no longer so after a port
 * event, or NULL: the LID, the GID in use (its bytes and type) and the
 * pkey in use, read again. A subnet manager that takes over re-registers
 * every port (CLIENT_REREGISTER) and a RoCE host's GID table changes with
 * any address of any netdev (GID_CHANGE): most such events leave the
 * address in use as it was, and only a changed one strands the peers that
 * know the old (rdma-core model rule R32). A failed query says changed:
 * nothing can be promised then. */
static const char *umr_eng_mlx5_dev_addr_moved(umr_eng_mlx5_dev_t *dev)
{
    struct ibv_port_attr port_attr;
    struct ibv_gid_entry entry;
    __be16 pkey;

    if (ibv_query_port(dev->ctx, dev->port_num, &port_attr)) {
        return "ibv_query_port() failed";
    }
    if ((dev->link_layer == IBV_LINK_LAYER_INFINIBAND) &&
        (port_attr.lid != dev->lid)) {
        return "the LID";
    }
    if (ibv_query_gid_ex(dev->ctx, dev->port_num, dev->gid_index, &entry, 0) ||
        memcmp(entry.gid.raw, dev->gid.raw, sizeof(entry.gid.raw))) {
        return "the GID in use";
    }
    if ((dev->link_layer == IBV_LINK_LAYER_ETHERNET) &&
        (((dev->gid_version == UMR_ENG_MLX5_GID_ROCE_V2) !=
          (entry.gid_type == IBV_GID_TYPE_ROCE_V2)))) {
        return "the RoCE version of the GID in use";
    }
    if ((dev->link_layer == IBV_LINK_LAYER_INFINIBAND) &&
        (ibv_query_pkey(dev->ctx, dev->port_num, dev->pkey_index, &pkey) ||
         (ntohs(pkey) != dev->pkey))) {
        return "the pkey in use";
    }
    return NULL;
}

/* A port event of our port: PORT_ERR, an address that moved, or nothing
 * to act on. PORT_ACTIVE counts only if the address is still ours. */
static umr_eng_event_type_t
umr_eng_mlx5_dev_port_event(umr_eng_mlx5_dev_t *dev, enum ibv_event_type type)
{
    const char *moved;

    switch (type) {
    case IBV_EVENT_PORT_ERR:
        return UMR_ENG_EVENT_PORT_ERR;
    case IBV_EVENT_SM_CHANGE:
        return UMR_ENG_EVENT_OTHER;
    default:
        break;
    }

    moved = umr_eng_mlx5_dev_addr_moved(dev);
    if (moved != NULL) {
        ucs_diag("%s:%u: %s: %s changed", dev->caps.name, dev->port_num,
                 ibv_event_type_str(type), moved);
        return UMR_ENG_EVENT_ADDR_CHANGE;
    }
    ucs_debug("%s:%u: %s: our address is unchanged", dev->caps.name,
              dev->port_num, ibv_event_type_str(type));
    return (type == IBV_EVENT_PORT_ACTIVE) ? UMR_ENG_EVENT_PORT_ACTIVE :
                                             UMR_ENG_EVENT_OTHER;
}

/* Async events (finding 7 of issue 19), as UCX's uct_ib_async_event_handler
 * reads them (ib_device.c), but from the transport's progress and never
 * blocking (the fd is O_NONBLOCK since dev_open). QP events name the
 * engine QP (its ibv_qp's qp_context); port events count for our port. */
int umr_eng_mlx5_dev_poll_events(umr_eng_dev_t *ndev, umr_eng_event_t *events,
                                 int max)
{
    umr_eng_mlx5_dev_t *dev = (umr_eng_mlx5_dev_t*)ndev;
    struct ibv_async_event ev;
    umr_eng_event_t *out;
    int n = 0;

    while (n < max) {
        if (ibv_get_async_event(dev->ctx, &ev) != 0) {
            if ((errno != EAGAIN) && (errno != EWOULDBLOCK)) {
                ucs_warn("%s: ibv_get_async_event() failed: %m",
                         dev->caps.name);
            }
            break;
        }

        out       = &events[n];
        out->raw  = ev.event_type;
        out->qp   = NULL;
        out->type = UMR_ENG_EVENT_OTHER;
        switch (ev.event_type) {
        case IBV_EVENT_QP_FATAL:
        case IBV_EVENT_QP_REQ_ERR:
        case IBV_EVENT_QP_ACCESS_ERR:
            out->type = UMR_ENG_EVENT_QP_FAILED;
            out->qp   = (ev.element.qp != NULL) ?
                        ev.element.qp->qp_context : NULL;
            ucs_diag("%s: %s on QP 0x%x", dev->caps.name,
                     ibv_event_type_str(ev.event_type),
                     (ev.element.qp != NULL) ? ev.element.qp->qp_num : 0);
            if (out->qp == NULL) {
                out->type = UMR_ENG_EVENT_OTHER;  /* not one of ours */
            }
            break;
        case IBV_EVENT_PORT_ERR:
        case IBV_EVENT_PORT_ACTIVE:
        case IBV_EVENT_LID_CHANGE:
        case IBV_EVENT_PKEY_CHANGE:
        case IBV_EVENT_GID_CHANGE:
        case IBV_EVENT_SM_CHANGE:
        case IBV_EVENT_CLIENT_REREGISTER:
            ucs_diag("%s: %s on port %d", dev->caps.name,
                     ibv_event_type_str(ev.event_type), ev.element.port_num);
            if (ev.element.port_num == dev->port_num) {
                out->type = umr_eng_mlx5_dev_port_event(dev, ev.event_type);
            }
            break;
        case IBV_EVENT_DEVICE_FATAL:
            ucs_error("%s: %s", dev->caps.name,
                      ibv_event_type_str(ev.event_type));
            out->type = UMR_ENG_EVENT_DEVICE_FATAL;
            break;
        default:
            ucs_debug("%s: async event %s", dev->caps.name,
                      ibv_event_type_str(ev.event_type));
            break;
        }
        ibv_ack_async_event(&ev);
        ++n;
    }
    return n;
}
