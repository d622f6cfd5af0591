/**
 * mlx5_umr engine, mlx5 backend: device discovery, open, capabilities and
 * addressing.
 */
#include "umr_config.h"

#include "engine_mlx5.h"
#include "engine_mlx5_compat.h"
#include "umr_ucs_compat.h"  /* ucs_rounddown_pow2 */

#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/math.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Only rdma-core's mlx5 provider can do UMR; other devices are not ours. */
static struct ibv_device **
umr_eng_mlx5_device_list(int *num_p)
{
    struct ibv_device **list;

    list = ibv_get_device_list(num_p);
    if (list == NULL) {
        ucs_debug("no mlx5 device: ibv_get_device_list() failed: %m");
        *num_p = 0;
    }
    return list;
}

ucs_status_t umr_eng_mlx5_query_devices(char (*names)[UMR_ENG_NAME_MAX],
                                        unsigned max, unsigned *num_p)
{
    struct ibv_device **list;
    unsigned num = 0;
    int num_ib, i;

    if ((num_p == NULL) || ((names == NULL) && (max > 0))) {
        ucs_error("mlx5 query_devices: names/num_p must not be NULL");
        return UCS_ERR_INVALID_PARAM;
    }

    list = umr_eng_mlx5_device_list(&num_ib);
    for (i = 0; (i < num_ib) && (num < max); ++i) {
        if (!mlx5dv_is_supported(list[i])) {
            ucs_debug("%s: not an mlx5 device", ibv_get_device_name(list[i]));
            continue;
        }
        snprintf(names[num++], UMR_ENG_NAME_MAX, "%s",
                 ibv_get_device_name(list[i]));
    }

    if (list != NULL) {
        ibv_free_device_list(list);
    }

    if (num == 0) {
        ucs_debug("no mlx5 device");
    }
    *num_p = num;
    return UCS_OK;
}

static ucs_status_t
umr_eng_mlx5_dev_open_ctx(const char *name, struct ibv_context **ctx_p)
{
    struct mlx5dv_context_attr attr = { .flags = MLX5DV_CONTEXT_FLAGS_DEVX };
    struct ibv_device **list;
    struct ibv_device *ibdev = NULL;
    ucs_status_t status;
    int num, i;

    list = umr_eng_mlx5_device_list(&num);
    for (i = 0; i < num; ++i) {
        if (!strcmp(ibv_get_device_name(list[i]), name) &&
            mlx5dv_is_supported(list[i])) {
            ibdev = list[i];
            break;
        }
    }

    if (ibdev == NULL) {
        ucs_debug("no mlx5 device '%s'", name);
        status = UCS_ERR_NO_DEVICE;
        goto out;
    }

    /* DEVX: mlx5dv_create_mkey needs it */
    *ctx_p = mlx5dv_open_device(ibdev, &attr);
    if (*ctx_p == NULL) {
        ucs_error("%s: mlx5dv_open_device(DEVX) failed: %m", name);
        status = ((errno == EOPNOTSUPP) || (errno == EPROTONOSUPPORT)) ?
                 UCS_ERR_UNSUPPORTED : UCS_ERR_NO_DEVICE;
        goto out;
    }

    status = UCS_OK;
out:
    if (list != NULL) {
        ibv_free_device_list(list);
    }
    return status;
}

static ucs_status_t
umr_eng_mlx5_dev_select_port(umr_eng_mlx5_dev_t *dev, const char *name,
                             unsigned req_port, unsigned num_ports,
                             struct ibv_port_attr *port_attr)
{
    unsigned port;

    if (req_port > num_ports) {
        ucs_error("%s: port %u out of range (device has %u ports)", name,
                  req_port, num_ports);
        return UCS_ERR_INVALID_PARAM;
    }

    for (port = (req_port ? req_port : 1);
         port <= (req_port ? req_port : num_ports); ++port) {
        if (ibv_query_port(dev->ctx, port, port_attr)) {
            ucs_error("%s: ibv_query_port(%u) failed: %m", name, port);
            return UCS_ERR_IO_ERROR;
        }
        if (port_attr->state == IBV_PORT_ACTIVE) {
            dev->port_num = port;
            return UCS_OK;
        }
        ucs_debug("%s:%u: port is not active (state %d)", name, port,
                  port_attr->state);
    }

    ucs_debug("%s: no active port", name);
    return UCS_ERR_NO_DEVICE;
}

static int umr_eng_mlx5_gid_is_ipv4(const union ibv_gid *gid)
{
    static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

    return !memcmp(gid->raw, prefix, sizeof(prefix));
}

/* RoCE: prefer a RoCE v2 GID of an IPv4 address (routable, what UCX picks),
 * then any RoCE v2 GID, then the first valid one. */
static ucs_status_t
umr_eng_mlx5_dev_select_gid(umr_eng_mlx5_dev_t *dev, const char *name,
                            int req_index, int gid_tbl_len)
{
    struct ibv_gid_entry entry;
    int best = -1, best_rank = 0, rank, i;

    if (req_index >= 0) {
        if ((req_index >= gid_tbl_len) ||
            ibv_query_gid(dev->ctx, dev->port_num, req_index, &dev->gid)) {
            ucs_error("%s:%u: GID index %d is not valid (table has %d)", name,
                      dev->port_num, req_index, gid_tbl_len);
            return UCS_ERR_INVALID_PARAM;
        }
        dev->gid_index = req_index;
        return UCS_OK;
    }

    for (i = 0; i < gid_tbl_len; ++i) {
        if (ibv_query_gid_ex(dev->ctx, dev->port_num, i, &entry, 0)) {
            continue;
        }
        rank = 1;
        if (entry.gid_type == IBV_GID_TYPE_ROCE_V2) {
            rank = umr_eng_mlx5_gid_is_ipv4(&entry.gid) ? 3 : 2;
        }
        if (rank > best_rank) {
            best      = i;
            best_rank = rank;
            dev->gid  = entry.gid;
        }
    }

    if (best < 0) {
        ucs_debug("%s:%u: no usable GID", name, dev->port_num);
        return UCS_ERR_NO_DEVICE;
    }

    ucs_debug("%s:%u: using GID index %d", name, dev->port_num, best);
    dev->gid_index = best;
    return UCS_OK;
}

/* Data rate of an IB/RoCE port, bytes/second, from the port attributes. */
static double umr_eng_mlx5_port_bandwidth(const struct ibv_port_attr *attr)
{
    double lane_gbps, encoding;
    unsigned width;

    switch (attr->active_width) {
    case 1:  width = 1;  break;
    case 2:  width = 4;  break;
    case 4:  width = 8;  break;
    case 8:  width = 12; break;
    case 16: width = 2;  break;
    default: width = 4;  break;
    }

    encoding = 64.0 / 66.0;
    switch (umr_eng_mlx5_port_speed(attr)) {
    case 1:   lane_gbps = 2.5;      encoding = 0.8; break;
    case 2:   lane_gbps = 5.0;      encoding = 0.8; break;
    case 4:   lane_gbps = 10.0;     encoding = 0.8; break;
    case 8:   lane_gbps = 10.3125;  break;
    case 16:  lane_gbps = 14.0625;  break;
    case 32:  lane_gbps = 25.78125; break;
    case 64:  lane_gbps = 53.125;   break;
    case 128: lane_gbps = 106.25;   break;
    case 256: lane_gbps = 212.5;    break;
    default:  lane_gbps = 25.78125; break;
    }

    return lane_gbps * 1e9 / 8.0 * encoding * width;
}

static void umr_eng_mlx5_dev_fill_caps(umr_eng_mlx5_dev_t *dev,
                                       const char *name,
                                       const struct ibv_device_attr_ex *dattr,
                                       const struct ibv_port_attr *port_attr)
{
    umr_eng_caps_t *caps = &dev->caps;

    memset(caps, 0, sizeof(*caps));
    snprintf(caps->name, sizeof(caps->name), "%s", name);
    caps->max_interleaved = UMR_ENG_MLX5_MAX_INTERLEAVED;
    caps->max_list        = UMR_ENG_MLX5_MAX_LIST;
    caps->max_depth       = UMR_ENG_MLX5_MAX_DEPTH;
    caps->max_ilv_bytes   = UMR_ENG_MLX5_MAX_ILV_BYTES;
    caps->max_list_bytes  = UMR_ENG_MLX5_MAX_LIST_BYTES;
    caps->max_bytes_count = UMR_ENG_MLX5_MAX_BYTES_COUNT;
    caps->max_stride      = UMR_ENG_MLX5_MAX_STRIDE;
    caps->max_sge         = dattr->orig_attr.max_sge;
    /* work requests, each up to a 1 KiB UMR WQE of 16 basic blocks */
    caps->max_qp_wr       = ucs_max(ucs_rounddown_pow2(
                                        dattr->orig_attr.max_qp_wr) /
                                    UMR_ENG_MLX5_WQE_BBS, 1);
    /* an engine mkey is one hardware mkey, or a ring of them when the
     * kernel cannot change a key's tag (engine_mlx5.h, key rotation) */
    caps->max_mkeys       = dattr->orig_attr.max_mr /
                            (dev->update_tag ? 1 : UMR_ENG_MLX5_MKEY_RING);
    caps->max_msg         = port_attr->max_msg_sz;
    caps->max_mr_size     = dattr->orig_attr.max_mr_size;
    caps->num_ports       = dattr->orig_attr.phys_port_cnt;
    caps->dev_addr_len    = sizeof(umr_eng_mlx5_dev_addr_t);
    caps->qp_addr_len     = sizeof(umr_eng_mlx5_qp_addr_t);
    caps->latency         = 1e-6;
    caps->bandwidth       = umr_eng_mlx5_port_bandwidth(port_attr);
}

/* Whether the kernel lets an indirect key's tag change: create one key
 * with MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG and destroy it. EOPNOTSUPP
 * means no (keys then come in rings); any other failure means the device
 * cannot create indirect keys at all. */
static ucs_status_t umr_eng_mlx5_dev_probe_update_tag(umr_eng_mlx5_dev_t *dev,
                                                      const char *name)
{
    struct mlx5dv_mkey_init_attr attr;
    struct mlx5dv_mkey *mkey;
    uint32_t lkey;
    int ret;

    memset(&attr, 0, sizeof(attr));
    attr.pd           = dev->pd;
    attr.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT |
                        MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG;
    attr.max_entries  = 1;
    mkey              = mlx5dv_create_mkey(&attr);
    if (mkey == NULL) {
        if (errno == EOPNOTSUPP) {
            ucs_debug("%s: no MKEY_UPDATE_TAG support: a ring of %d keys per "
                      "mkey", name, UMR_ENG_MLX5_MKEY_RING);
            dev->update_tag = 0;
            return UCS_OK;
        }
        ucs_error("%s: mlx5dv_create_mkey(INDIRECT|UPDATE_TAG) failed: %m",
                  name);
        return (errno == ENOMEM) ? UCS_ERR_NO_MEMORY : UCS_ERR_IO_ERROR;
    }

    lkey = mkey->lkey;
    ret  = mlx5dv_destroy_mkey(mkey);
    if (ret) {
        ucs_warn("%s: mlx5dv_destroy_mkey(0x%x) failed: %s", name, lkey,
                 strerror(ret));
    }
    ucs_debug("%s: MKEY_UPDATE_TAG supported: one key per mkey", name);
    dev->update_tag = 1;
    return UCS_OK;
}

ucs_status_t umr_eng_mlx5_dev_open(const char *name,
                                   const umr_eng_dev_params_t *params,
                                   umr_eng_dev_t **dev_p)
{
    struct ibv_device_attr_ex dattr;
    struct ibv_port_attr port_attr;
    umr_eng_mlx5_dev_t *dev;
    unsigned req_port  = (params != NULL) ? params->port : 0;
    int req_gid_index  = (params != NULL) ? params->gid_index : -1;
    ucs_status_t status;

    if ((name == NULL) || (dev_p == NULL)) {
        ucs_error("mlx5 dev_open: name/dev_p must not be NULL");
        return UCS_ERR_INVALID_PARAM;
    }

    dev = ucs_calloc(1, sizeof(*dev), "umr_eng_mlx5_dev");
    if (dev == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    status = umr_eng_mlx5_dev_open_ctx(name, &dev->ctx);
    if (status != UCS_OK) {
        goto err_free;
    }

    memset(&dattr, 0, sizeof(dattr));
    if (ibv_query_device_ex(dev->ctx, NULL, &dattr)) {
        ucs_error("%s: ibv_query_device_ex() failed: %m", name);
        status = UCS_ERR_IO_ERROR;
        goto err_close;
    }

    status = umr_eng_mlx5_dev_select_port(dev, name, req_port,
                                          dattr.orig_attr.phys_port_cnt,
                                          &port_attr);
    if (status != UCS_OK) {
        goto err_close;
    }

    dev->link_layer = (port_attr.link_layer == IBV_LINK_LAYER_ETHERNET) ?
                      IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
    dev->active_mtu = port_attr.active_mtu;
    dev->lid        = port_attr.lid;
    if (dev->link_layer == IBV_LINK_LAYER_ETHERNET) {
        status = umr_eng_mlx5_dev_select_gid(dev, name, req_gid_index,
                                             port_attr.gid_tbl_len);
        if (status != UCS_OK) {
            goto err_close;
        }
    } else {
        /* IB: GID 0 carries the subnet prefix used for reachability */
        dev->gid_index = 0;
        if (ibv_query_gid(dev->ctx, dev->port_num, 0, &dev->gid)) {
            ucs_error("%s:%u: ibv_query_gid(0) failed: %m", name,
                      dev->port_num);
            status = UCS_ERR_IO_ERROR;
            goto err_close;
        }
    }

    dev->max_rd_atomic      = ucs_min(dattr.orig_attr.max_qp_init_rd_atom,
                                      16);
    dev->max_dest_rd_atomic = ucs_min(dattr.orig_attr.max_qp_rd_atom, 16);

    dev->pd = ibv_alloc_pd(dev->ctx);
    if (dev->pd == NULL) {
        ucs_error("%s: ibv_alloc_pd() failed: %m", name);
        status = UCS_ERR_NO_MEMORY;
        goto err_close;
    }

    status = umr_eng_mlx5_dev_probe_update_tag(dev, name);
    if (status != UCS_OK) {
        goto err_dealloc_pd;
    }

    umr_eng_mlx5_dev_fill_caps(dev, name, &dattr, &port_attr);
    ucs_debug("%s:%u: opened, %s, lid %u, gid index %d", name, dev->port_num,
              (dev->link_layer == IBV_LINK_LAYER_ETHERNET) ? "RoCE" : "IB",
              dev->lid, dev->gid_index);
    *dev_p = (umr_eng_dev_t*)dev;
    return UCS_OK;

err_dealloc_pd:
    ibv_dealloc_pd(dev->pd);
err_close:
    ibv_close_device(dev->ctx);
err_free:
    ucs_free(dev);
    return status;
}

void umr_eng_mlx5_dev_close(umr_eng_dev_t *ndev)
{
    umr_eng_mlx5_dev_t *dev = (umr_eng_mlx5_dev_t*)ndev;
    int ret;

    if (dev == NULL) {
        return;
    }

    ret = ibv_dealloc_pd(dev->pd);
    if (ret) {
        ucs_warn("%s: ibv_dealloc_pd() failed: %s (objects still open?)",
                 dev->caps.name, strerror(ret));
    }
    ret = ibv_close_device(dev->ctx);
    if (ret) {
        ucs_warn("%s: ibv_close_device() failed: %m", dev->caps.name);
    }
    ucs_free(dev);
}

void umr_eng_mlx5_dev_query(umr_eng_dev_t *ndev, umr_eng_caps_t *caps)
{
    *caps = ((umr_eng_mlx5_dev_t*)ndev)->caps;
}

void umr_eng_mlx5_dev_get_addr(umr_eng_dev_t *ndev, void *addr)
{
    umr_eng_mlx5_dev_t *dev         = (umr_eng_mlx5_dev_t*)ndev;
    umr_eng_mlx5_dev_addr_t *daddr  = addr;

    memset(daddr, 0, sizeof(*daddr));
    daddr->link_layer = dev->link_layer;
    daddr->port_num   = dev->port_num;
    daddr->lid        = dev->lid;
    memcpy(daddr->gid, dev->gid.raw, sizeof(daddr->gid));
}

int umr_eng_mlx5_dev_is_reachable(umr_eng_dev_t *ndev,
                                  const void *remote_dev_addr)
{
    umr_eng_mlx5_dev_t *dev               = (umr_eng_mlx5_dev_t*)ndev;
    const umr_eng_mlx5_dev_addr_t *remote = remote_dev_addr;

    if (remote->link_layer != dev->link_layer) {
        ucs_debug("%s: peer link layer %u differs from ours (%u)",
                  dev->caps.name, remote->link_layer, dev->link_layer);
        return 0;
    }

    /* IB: same subnet (no router support); RoCE: routed by IP */
    if ((dev->link_layer == IBV_LINK_LAYER_INFINIBAND) &&
        memcmp(remote->gid, dev->gid.raw, 8)) {
        ucs_debug("%s: peer is on another IB subnet", dev->caps.name);
        return 0;
    }

    return 1;
}
