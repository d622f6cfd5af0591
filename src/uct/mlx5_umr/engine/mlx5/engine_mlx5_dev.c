/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
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

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
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
umr_eng_mlx5_dev_open_ctx(const char *name, struct ibv_context **ctx_p,
                          char *sysfs, size_t sysfs_len)
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

    /* the device's sysfs directory, as rdma-core found it */
    snprintf(sysfs, sysfs_len, "%s", ibdev->ibdev_path);

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

static int umr_eng_mlx5_gid_is_zero(const union ibv_gid *gid)
{
    static const uint8_t zero[16];

    return !memcmp(gid->raw, zero, sizeof(zero));
}

/* The RoCE version and address family of a GID table entry. */
static void umr_eng_mlx5_gid_kind(const struct ibv_gid_entry *entry,
                                  uint8_t *version, uint8_t *family)
{
    *version = (entry->gid_type == IBV_GID_TYPE_ROCE_V2) ?
               UMR_ENG_MLX5_GID_ROCE_V2 :
               (entry->gid_type == IBV_GID_TYPE_ROCE_V1) ?
               UMR_ENG_MLX5_GID_ROCE_V1 : UMR_ENG_MLX5_GID_IB;
    *family  = umr_eng_mlx5_gid_is_ipv4(&entry->gid) ? 4 : 6;
}

/* fe80::/10: not routed off its subnet */
static int umr_eng_mlx5_gid_is_link_local(const union ibv_gid *gid)
{
    return (gid->raw[0] == 0xfe) && ((gid->raw[1] & 0xc0) == 0x80);
}

/* Whether a GID table entry works: an address handle from it to itself
 * can be created (the kernel resolves the destination through the entry's
 * netdev), as UCX checks (ib_device.c uct_ib_device_test_roce_gid_index,
 * 1.13.1:1109, 1.21.0:974). */
static int umr_eng_mlx5_gid_works(umr_eng_mlx5_dev_t *dev, int index,
                                  const union ibv_gid *gid)
{
    struct ibv_ah_attr ah_attr;
    struct ibv_ah *ah;

    memset(&ah_attr, 0, sizeof(ah_attr));
    ah_attr.port_num       = dev->port_num;
    ah_attr.is_global      = 1;
    ah_attr.grh.dgid       = *gid;
    ah_attr.grh.sgid_index = index;
    ah_attr.grh.hop_limit  = 255;
    ah_attr.grh.flow_label = 1;
    ah_attr.dlid           = 0xc000;  /* UCT_IB_ROCE_UDP_SRC_PORT_BASE */
    ah = ibv_create_ah(dev->pd, &ah_attr);
    if (ah == NULL) {
        ucs_debug("%s:%u: GID index %d does not work: ibv_create_ah() "
                  "failed: %m", dev->caps.name, dev->port_num, index);
        return 0;
    }
    ibv_destroy_ah(ah);
    return 1;
}

/* RoCE: the GID UCX picks (ib_device.c uct_ib_device_select_gid, roce_prio
 * of 1.21.0:1155): RoCE v2 IPv4, v2 global IPv6, v2 link-local IPv6, v1
 * IPv4, v1 global IPv6, v1 link-local IPv6 - a link-local GID reaches no
 * other subnet, so an IPv6-only host on a routed fabric needs its global
 * one -, the first working entry (an address handle, above) of each kind;
 * or the index asked for (UCX_MLX5_UMR_GID_INDEX, as UCX_IB_GID_INDEX). Its
 * version and family go into the device address: peers of another version
 * or family are not reachable. */
static ucs_status_t
umr_eng_mlx5_dev_select_gid(umr_eng_mlx5_dev_t *dev, const char *name,
                            int req_index, int gid_tbl_len)
{
    static const struct {
        uint8_t version, family, link_local;
    } prio[] = {
        {UMR_ENG_MLX5_GID_ROCE_V2, 4, 0}, {UMR_ENG_MLX5_GID_ROCE_V2, 6, 0},
        {UMR_ENG_MLX5_GID_ROCE_V2, 6, 1}, {UMR_ENG_MLX5_GID_ROCE_V1, 4, 0},
        {UMR_ENG_MLX5_GID_ROCE_V1, 6, 0}, {UMR_ENG_MLX5_GID_ROCE_V1, 6, 1}
    };
    struct ibv_gid_entry entry;
    uint8_t version, family;
    unsigned p;
    int i;

    if (req_index >= 0) {
        if ((req_index >= gid_tbl_len) ||
            ibv_query_gid_ex(dev->ctx, dev->port_num, req_index, &entry, 0) ||
            umr_eng_mlx5_gid_is_zero(&entry.gid)) {
            ucs_error("%s:%u: GID index %d is not valid (table has %d)", name,
                      dev->port_num, req_index, gid_tbl_len);
            return UCS_ERR_INVALID_PARAM;
        }
        dev->gid_index = req_index;
        dev->gid       = entry.gid;
        umr_eng_mlx5_gid_kind(&entry, &dev->gid_version, &dev->gid_family);
        return UCS_OK;
    }

    for (p = 0; p < sizeof(prio) / sizeof(prio[0]); ++p) {
        for (i = 0; i < gid_tbl_len; ++i) {
            if (ibv_query_gid_ex(dev->ctx, dev->port_num, i, &entry, 0) ||
                umr_eng_mlx5_gid_is_zero(&entry.gid)) {
                continue;
            }
            umr_eng_mlx5_gid_kind(&entry, &version, &family);
            if ((version != prio[p].version) || (family != prio[p].family) ||
                ((family == 6) && (prio[p].link_local !=
                                   umr_eng_mlx5_gid_is_link_local(&entry.gid))) ||
                !umr_eng_mlx5_gid_works(dev, i, &entry.gid)) {
                continue;
            }
            dev->gid_index   = i;
            dev->gid         = entry.gid;
            dev->gid_version = version;
            dev->gid_family  = family;
            ucs_debug("%s:%u: using GID index %d (RoCE v%u, IPv%u%s)", name,
                      dev->port_num, i, version, family,
                      prio[p].link_local ? ", link-local" : "");
            return UCS_OK;
        }
    }

    ucs_debug("%s:%u: no usable GID", name, dev->port_num);
    return UCS_ERR_NO_DEVICE;
}

/* IB: the pkey UCX would use (ib_iface.c uct_ib_iface_init_pkey): the first
 * entry of the port's table with full membership whose partition is the
 * one asked for (any, with -1), else the first limited one; RoCE: index 0,
 * the default pkey 0xffff. */
static ucs_status_t
umr_eng_mlx5_dev_select_pkey(umr_eng_mlx5_dev_t *dev, const char *name,
                             int req_pkey, unsigned pkey_tbl_len)
{
    int limited = -1;
    uint16_t pkey, limited_pkey = 0;
    __be16 raw;
    unsigned i;

    if (dev->link_layer == IBV_LINK_LAYER_ETHERNET) {
        dev->pkey_index = 0;
        dev->pkey       = 0xffff;
        return UCS_OK;
    }

    if (req_pkey > 0x7fff) {
        ucs_error("%s:%u: pkey 0x%x is not a partition (0..0x7fff)", name,
                  dev->port_num, req_pkey);
        return UCS_ERR_INVALID_PARAM;
    }

    for (i = 0; i < pkey_tbl_len; ++i) {
        if (ibv_query_pkey(dev->ctx, dev->port_num, i, &raw)) {
            continue;
        }
        pkey = ntohs(raw);
        if ((pkey == 0) ||
            ((req_pkey >= 0) && ((pkey & 0x7fff) != req_pkey))) {
            continue;
        }
        if (pkey & 0x8000) {
            dev->pkey_index = i;
            dev->pkey       = pkey;
            goto out;
        }
        if (limited < 0) {
            limited      = i;
            limited_pkey = pkey;
        }
    }

    if (limited < 0) {
        if (req_pkey < 0) {
            ucs_error("%s:%u: no valid pkey in the port's table", name,
                      dev->port_num);
        } else {
            ucs_error("%s:%u: pkey 0x%x is not in the port's table", name,
                      dev->port_num, req_pkey);
        }
        return UCS_ERR_NO_ELEM;
    }
    dev->pkey_index = limited;
    dev->pkey       = limited_pkey;
out:
    ucs_debug("%s:%u: using pkey[%u] 0x%x", name, dev->port_num,
              dev->pkey_index, dev->pkey);
    return UCS_OK;
}

uint8_t umr_eng_mlx5_qp_timeout(double seconds)
{
    double x = seconds / 4.096e-6;
    uint8_t n;

    /* round(log2(x)), without libm: x < 2^(n + 1/2) */
    if (x < 2.0) {
        return 1;
    }
    for (n = 1; n < 32; ++n) {
        if (x < (double)(1ull << n) * 1.4142135623730951) {
            return n;
        }
    }
    return 0;                   /* "infinite": never gives up */
}

/* The RC connection's settings from the parameters (UCX's defaults:
 * umr_eng_dev_params_init). */
static ucs_status_t umr_eng_mlx5_dev_set_qos(umr_eng_mlx5_dev_t *dev,
                                             const char *name,
                                             const umr_eng_dev_params_t *p)
{
    if ((p->retry_count > 7) || (p->rnr_retry > 7) ||
        (p->traffic_class > 255) || (p->hop_limit > 255) ||
        (p->flow_label > 0xfffff) ||
        (p->sl > ((dev->link_layer == IBV_LINK_LAYER_ETHERNET) ? 7 : 15))) {
        ucs_error("%s: retry count %u, RNR retry %u (0..7), traffic class "
                  "%d (0..255), SL %d (IB 0..15, RoCE 0..7), hop limit %u "
                  "(0..255) or flow label 0x%x (20 bits) out of range", name,
                  p->retry_count, p->rnr_retry, p->traffic_class, p->sl,
                  p->hop_limit, p->flow_label);
        return UCS_ERR_INVALID_PARAM;
    }

    /* UCX: DSCP 26 (traffic class 106) on RoCE v2, else 0 (ib_iface.c,
     * UCT_IB_DEFAULT_ROCEV2_DSCP) */
    dev->traffic_class = (p->traffic_class >= 0) ? p->traffic_class :
                         (dev->gid_version == UMR_ENG_MLX5_GID_ROCE_V2) ?
                         106 : 0;
    dev->sl            = (p->sl >= 0) ? p->sl : 0;
    dev->hop_limit     = p->hop_limit;
    dev->flow_label    = p->flow_label;
    dev->qp_timeout    = umr_eng_mlx5_qp_timeout(p->timeout);
    dev->retry_cnt     = p->retry_count;
    dev->rnr_retry     = p->rnr_retry;
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

    /* (local_cpus and numa_node are set already) */
    snprintf(caps->name, sizeof(caps->name), "%s", name);
    caps->max_interleaved = dev->max_list - 1;
    caps->max_list        = dev->max_list;
    /* what the device follows (kernel odp.c: max_indirection levels) */
    caps->max_depth       = ucs_min(dev->hca.max_indirection,
                                    UMR_ENG_MLX5_MAX_DEPTH);
    /* rdma-core cannot fence a UMR strongly (engine_mlx5_hca.c): then each
     * UMR is waited for */
    caps->umr_wait        = (dev->hca.umr_fence == UMR_ENG_MLX5_FENCE_STRONG);
    caps->max_ilv_bytes   = UMR_ENG_MLX5_MAX_ILV_BYTES;
    caps->max_list_bytes  = UMR_ENG_MLX5_MAX_LIST_BYTES;
    caps->max_bytes_count = UMR_ENG_MLX5_MAX_BYTES_COUNT;
    caps->max_stride      = UMR_ENG_MLX5_MAX_STRIDE;
    /* SGEs fit the largest WQE too (rdma-core: EINVAL beyond
     * (max_sq_desc_sz - overhead) / 16, verbs.c mlx5_calc_send_wqe) */
    caps->max_sge         = ucs_min((uint32_t)dattr->orig_attr.max_sge,
                                    dev->max_list);
    caps->max_qp          = dattr->orig_attr.max_qp;
    dev->max_send_wqebb   = dattr->orig_attr.max_qp_wr;
    /* work requests, each up to a UMR WQE of wqe_bbs basic blocks */
    caps->max_qp_wr       = ucs_max(ucs_rounddown_pow2(
                                        dattr->orig_attr.max_qp_wr) /
                                    dev->wqe_bbs, 1);
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

/* The largest UMR WQE the device takes (finding 5 of issue 19): rdma-core
 * refuses a QP whose WQE is above the device's max_sq_desc_sz with EINVAL
 * (verbs.c mlx5_calc_send_wqe) and offers no call that reports it, so try
 * QPs sized for 52, 48, ... list entries (a 64 B basic block holds 4) until
 * one is created, and take what it reads back (max_inline_data, R3). */
static ucs_status_t umr_eng_mlx5_dev_probe_wqe(umr_eng_mlx5_dev_t *dev,
                                               const char *name)
{
    struct ibv_cq_init_attr_ex cq_attr;
    struct mlx5dv_qp_init_attr dv_attr;
    struct ibv_qp_init_attr_ex attr;
    struct ibv_cq_ex *cq;
    struct ibv_qp *qp = NULL;
    ucs_status_t status;
    unsigned entries;
    int err = 0;

    memset(&cq_attr, 0, sizeof(cq_attr));
    cq_attr.cqe = 1;
    cq          = ibv_create_cq_ex(dev->ctx, &cq_attr);
    if (cq == NULL) {
        ucs_error("%s: ibv_create_cq_ex() failed: %m", name);
        return UCS_ERR_IO_ERROR;
    }

    for (entries = UMR_ENG_MLX5_MAX_LIST; entries >= 4; entries -= 4) {
        memset(&attr, 0, sizeof(attr));
        attr.qp_type             = IBV_QPT_RC;
        attr.send_cq             = ibv_cq_ex_to_cq(cq);
        attr.recv_cq             = ibv_cq_ex_to_cq(cq);
        attr.cap.max_send_wr     = 1;
        attr.cap.max_send_sge    = 1;
        attr.cap.max_recv_wr     = 1;
        attr.cap.max_recv_sge    = 1;
        attr.cap.max_inline_data = UMR_ENG_MLX5_INLINE_FOR_LIST(entries);
        attr.pd                  = dev->pd;
        attr.comp_mask           = IBV_QP_INIT_ATTR_PD |
                                   IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
        attr.send_ops_flags      = IBV_QP_EX_WITH_RDMA_WRITE |
                                   IBV_QP_EX_WITH_RDMA_READ |
                                   IBV_QP_EX_WITH_LOCAL_INV;
        memset(&dv_attr, 0, sizeof(dv_attr));
        dv_attr.comp_mask        = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS;
        dv_attr.send_ops_flags   = MLX5DV_QP_EX_WITH_MR_INTERLEAVED |
                                   MLX5DV_QP_EX_WITH_MR_LIST;
        qp = mlx5dv_create_qp(dev->ctx, &attr, &dv_attr);
        if ((qp != NULL) || (errno != EINVAL)) {
            err = errno;
            break;
        }
    }

    if (qp == NULL) {
        ucs_error("%s: no UMR-capable QP could be created (%s)", name,
                  (entries < 4) ? "every WQE size refused" : strerror(err));
        status = (err == ENOMEM) ? UCS_ERR_NO_MEMORY : UCS_ERR_UNSUPPORTED;
        goto out;
    }

    dev->max_list = ucs_min((attr.cap.max_inline_data + 4) / 16,
                            UMR_ENG_MLX5_MAX_LIST);
    dev->wqe_bbs  = (UMR_ENG_MLX5_UMR_OVERHEAD + 4 +
                     attr.cap.max_inline_data + UMR_ENG_MLX5_WQE_BB - 1) /
                    UMR_ENG_MLX5_WQE_BB;
    if (dev->max_list < 2) {
        ucs_error("%s: a UMR WQE holds %u entries: no room for UMR", name,
                  dev->max_list);
        status = UCS_ERR_UNSUPPORTED;
    } else {
        ucs_debug("%s: largest UMR WQE %u B: %u list / %u interleaved entries",
                  name, dev->wqe_bbs * UMR_ENG_MLX5_WQE_BB, dev->max_list,
                  dev->max_list - 1);
        status = UCS_OK;
    }
    ibv_destroy_qp(qp);
out:
    ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
    return status;
}

/* The UMR capabilities of the device (engine_mlx5_hca.c) and what they
 * bound: the entries of one key (log_max_klm_list_size). A device that
 * follows no indirect key cannot serve layouts. */
static ucs_status_t umr_eng_mlx5_dev_read_hca(umr_eng_mlx5_dev_t *dev,
                                              const char *name)
{
    umr_eng_mlx5_hca_caps_query(dev->ctx, name, &dev->hca);
    if (!dev->hca.queried) {
        return UCS_OK;
    }

    if ((dev->hca.max_indirection == 0) ||
        dev->hca.umr_indirect_mkey_disabled) {
        ucs_diag("%s: the device takes no indirect keys (max_indirection %u, "
                 "umr_indirect_mkey_disabled %u)", name,
                 dev->hca.max_indirection, dev->hca.umr_indirect_mkey_disabled);
        return UCS_ERR_UNSUPPORTED;
    }

    if ((dev->hca.log_max_klm_list_size < 6) &&
        ((1u << dev->hca.log_max_klm_list_size) < dev->max_list)) {
        dev->max_list = 1u << dev->hca.log_max_klm_list_size;
        if (dev->max_list < 2) {
            ucs_diag("%s: a key takes %u descriptor(s): no room for UMR", name,
                     dev->max_list);
            return UCS_ERR_UNSUPPORTED;
        }
    }
    return UCS_OK;
}

/* The CPUs near the device and its NUMA node, from the device's sysfs
 * directory (device/local_cpus, device/numa_node), as UCX reads them
 * (ib_device.c uct_ib_device_get_locality); all CPUs when absent. */
static void umr_eng_mlx5_dev_locality(umr_eng_mlx5_dev_t *dev,
                                      const char *sysfs)
{
    char path[PATH_MAX], buf[4096];
    size_t n;
    FILE *f;

    memset(dev->caps.local_cpus, 0xff, sizeof(dev->caps.local_cpus));
    dev->caps.numa_node = -1;

    f = (snprintf(path, sizeof(path), "%s/device/local_cpus", sysfs) <
         (int)sizeof(path)) ? fopen(path, "r") : NULL;
    if (f != NULL) {
        n      = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        if (umr_eng_cpumask_parse(buf, dev->caps.local_cpus) != 0) {
            ucs_debug("%s: cannot parse '%s': all CPUs are local", path, buf);
            memset(dev->caps.local_cpus, 0xff, sizeof(dev->caps.local_cpus));
        }
    }

    f = (snprintf(path, sizeof(path), "%s/device/numa_node", sysfs) <
         (int)sizeof(path)) ? fopen(path, "r") : NULL;
    if (f != NULL) {
        if (fscanf(f, "%d", &dev->caps.numa_node) != 1) {
            dev->caps.numa_node = -1;
        }
        fclose(f);
    }
}

ucs_status_t umr_eng_mlx5_dev_open(const char *name,
                                   const umr_eng_dev_params_t *params,
                                   umr_eng_dev_t **dev_p)
{
    struct ibv_device_attr_ex dattr;
    struct ibv_port_attr port_attr;
    umr_eng_dev_params_t defaults;
    umr_eng_mlx5_dev_t *dev;
    char sysfs[PATH_MAX];
    ucs_status_t status;
    int flags;

    if ((name == NULL) || (dev_p == NULL)) {
        ucs_error("mlx5 dev_open: name/dev_p must not be NULL");
        return UCS_ERR_INVALID_PARAM;
    }
    if (params == NULL) {
        umr_eng_dev_params_init(&defaults);
        params = &defaults;
    }

    dev = ucs_calloc(1, sizeof(*dev), "umr_eng_mlx5_dev");
    if (dev == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    status = umr_eng_mlx5_dev_open_ctx(name, &dev->ctx, sysfs, sizeof(sysfs));
    if (status != UCS_OK) {
        goto err_free;
    }
    umr_eng_mlx5_dev_locality(dev, sysfs);

    /* async events are read from progress: never block (UCX sets the
     * same, ib_device.c) */
    flags = fcntl(dev->ctx->async_fd, F_GETFL);
    if ((flags < 0) ||
        (fcntl(dev->ctx->async_fd, F_SETFL, flags | O_NONBLOCK) < 0)) {
        ucs_error("%s: cannot make the async event fd non-blocking: %m", name);
        status = UCS_ERR_IO_ERROR;
        goto err_close;
    }

    memset(&dattr, 0, sizeof(dattr));
    if (ibv_query_device_ex(dev->ctx, NULL, &dattr)) {
        ucs_error("%s: ibv_query_device_ex() failed: %m", name);
        status = UCS_ERR_IO_ERROR;
        goto err_close;
    }

    status = umr_eng_mlx5_dev_select_port(dev, name, params->port,
                                          dattr.orig_attr.phys_port_cnt,
                                          &port_attr);
    if (status != UCS_OK) {
        goto err_close;
    }

    /* the GID choice creates address handles */
    dev->pd = ibv_alloc_pd(dev->ctx);
    if (dev->pd == NULL) {
        ucs_error("%s: ibv_alloc_pd() failed: %m", name);
        status = UCS_ERR_NO_MEMORY;
        goto err_close;
    }
    snprintf(dev->caps.name, sizeof(dev->caps.name), "%s", name);

    dev->link_layer = (port_attr.link_layer == IBV_LINK_LAYER_ETHERNET) ?
                      IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
    dev->active_mtu = port_attr.active_mtu;
    dev->lid        = port_attr.lid;
    if (dev->link_layer == IBV_LINK_LAYER_ETHERNET) {
        status = umr_eng_mlx5_dev_select_gid(dev, name, params->gid_index,
                                             port_attr.gid_tbl_len);
        if (status != UCS_OK) {
            goto err_dealloc_pd;
        }
    } else {
        /* IB: GID 0 carries the subnet prefix used for reachability */
        dev->gid_index   = 0;
        dev->gid_version = UMR_ENG_MLX5_GID_IB;
        dev->gid_family  = 0;
        if (ibv_query_gid(dev->ctx, dev->port_num, 0, &dev->gid)) {
            ucs_error("%s:%u: ibv_query_gid(0) failed: %m", name,
                      dev->port_num);
            status = UCS_ERR_IO_ERROR;
            goto err_dealloc_pd;
        }
    }

    status = umr_eng_mlx5_dev_select_pkey(dev, name, params->pkey,
                                          port_attr.pkey_tbl_len);
    if (status != UCS_OK) {
        goto err_dealloc_pd;
    }
    status = umr_eng_mlx5_dev_set_qos(dev, name, params);
    if (status != UCS_OK) {
        goto err_dealloc_pd;
    }

    /* read depths: what we send at once (initiator) is bounded again by
     * what each peer takes (its responder depth, in its QP address) */
    dev->max_rd_atomic      = ucs_min(dattr.orig_attr.max_qp_init_rd_atom,
                                      16);
    dev->max_dest_rd_atomic = ucs_min(dattr.orig_attr.max_qp_rd_atom, 16);

    status = umr_eng_mlx5_dev_probe_update_tag(dev, name);
    if (status != UCS_OK) {
        goto err_dealloc_pd;
    }

    status = umr_eng_mlx5_dev_probe_wqe(dev, name);
    if (status != UCS_OK) {
        goto err_dealloc_pd;
    }

    status = umr_eng_mlx5_dev_read_hca(dev, name);
    if (status != UCS_OK) {
        goto err_dealloc_pd;
    }
    if (dev->link_layer == IBV_LINK_LAYER_INFINIBAND) {
        umr_eng_mlx5_hca_query_ooo_sl(dev->ctx, name, dev->port_num,
                                      &dev->hca);
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
    daddr->link_layer  = dev->link_layer;
    daddr->port_num    = dev->port_num;
    daddr->lid         = dev->lid;
    memcpy(daddr->gid, dev->gid.raw, sizeof(daddr->gid));
    daddr->gid_version = dev->gid_version;
    daddr->gid_family  = dev->gid_family;
    daddr->pkey        = dev->pkey;
}

/* As UCX's uct_ib_iface_is_reachable (ib_iface.c): pkeys of one partition
 * with a full member; the same link layer; IB: the same subnet prefix (no
 * routers); RoCE: the same RoCE version and address family of the GIDs in
 * use (uct_ib_iface_roce_is_reachable; UCX checks IP subnets only with
 * UCX_IB_ROCE_LOCAL_SUBNET=y, default n: routed). Two IB fabrics that both
 * keep the default subnet prefix fe80:: pass this check though apart: the
 * connection's first work request then fails (RETRY_EXC), as in UCX. */
int umr_eng_mlx5_dev_is_reachable(umr_eng_dev_t *ndev,
                                  const void *remote_dev_addr)
{
    umr_eng_mlx5_dev_t *dev               = (umr_eng_mlx5_dev_t*)ndev;
    const umr_eng_mlx5_dev_addr_t *remote = remote_dev_addr;

    if (!((remote->pkey | dev->pkey) & 0x8000) ||
        ((remote->pkey ^ dev->pkey) & 0x7fff)) {
        ucs_debug("%s: peer pkey 0x%x, ours 0x%x: another partition or no "
                  "full member", dev->caps.name, remote->pkey, dev->pkey);
        return 0;
    }

    if (remote->link_layer != dev->link_layer) {
        ucs_debug("%s: peer link layer %u differs from ours (%u)",
                  dev->caps.name, remote->link_layer, dev->link_layer);
        return 0;
    }

    if (dev->link_layer == IBV_LINK_LAYER_INFINIBAND) {
        if (memcmp(remote->gid, dev->gid.raw, 8)) {
            ucs_debug("%s: peer is on another IB subnet", dev->caps.name);
            return 0;
        }
        return 1;
    }

    if ((remote->gid_version != dev->gid_version) ||
        (remote->gid_family != dev->gid_family)) {
        ucs_debug("%s: peer GID is RoCE v%u IPv%u, ours RoCE v%u IPv%u",
                  dev->caps.name, remote->gid_version, remote->gid_family,
                  dev->gid_version, dev->gid_family);
        return 0;
    }
    return 1;
}

static const char *umr_eng_mlx5_gid_version_str(uint8_t version)
{
    return (version == UMR_ENG_MLX5_GID_ROCE_V2) ? "RoCE v2" :
           (version == UMR_ENG_MLX5_GID_ROCE_V1) ? "RoCE v1" : "IB";
}

void umr_eng_mlx5_dev_print_facts(umr_eng_dev_t *ndev, void *stream)
{
    umr_eng_mlx5_dev_t *dev = (umr_eng_mlx5_dev_t*)ndev;
    const umr_eng_caps_t *c = &dev->caps;
    FILE *f                 = stream;
    char gid[INET6_ADDRSTRLEN];
    unsigned i, ncpus = 0;

    inet_ntop(AF_INET6, dev->gid.raw, gid, sizeof(gid));
    for (i = 0; i < 64 * UMR_ENG_CPU_WORDS; ++i) {
        ncpus += !!(c->local_cpus[i / 64] & (1ull << (i % 64)));
    }
    fprintf(f, "device %s port %u\n", c->name, dev->port_num);
    fprintf(f, "link_layer %s\n",
            (dev->link_layer == IBV_LINK_LAYER_ETHERNET) ? "Ethernet (RoCE)" :
                                                           "InfiniBand");
    fprintf(f, "umr_wqe_bytes %u (probed: the largest QP the device "
            "created, of at most 1024)\n", dev->wqe_bbs * UMR_ENG_MLX5_WQE_BB);
    fprintf(f, "umr_list_entries %u\n", c->max_list);
    fprintf(f, "umr_interleaved_entries %u\n", c->max_interleaved);
    if (dev->hca.queried) {
        fprintf(f, "hca_caps read (DEVX QUERY_HCA_CAP)\n");
    } else {
        fprintf(f, "hca_caps not read (DEVX QUERY_HCA_CAP: %s): the safe "
                "choices below\n", dev->hca.error);
    }
    fprintf(f, "umr_fence %s (%u)\n", umr_eng_mlx5_fence_str(dev->hca.umr_fence),
            dev->hca.umr_fence);
    fprintf(f, "umr_ordering %s\n", c->umr_wait ?
            "wait for each UMR's completion (rdma-core cannot fence a UMR "
            "strongly)" :
            (dev->hca.umr_fence == UMR_ENG_MLX5_FENCE_SMALL) ?
            "fenced (IBV_SEND_FENCE on a UMR behind work in flight), local "
            "keys on the endpoint's QP" :
            "no fence needed, local keys on the endpoint's QP");
    fprintf(f, "max_indirection %u\n", dev->hca.max_indirection);
    fprintf(f, "umr_nesting_depth %u (min of max_indirection and %u)\n",
            c->max_depth, UMR_ENG_MLX5_MAX_DEPTH);
    fprintf(f, "log_max_klm_list_size %u\n", dev->hca.log_max_klm_list_size);
    fprintf(f, "umr_modify_atomic_disabled %u%s\n",
            dev->hca.umr_modify_atomic_disabled,
            dev->hca.umr_modify_atomic_disabled ?
            " (rdma-core sets the atomic bit of every UMR's mask: expect the "
            "first UMR to fail and layouts to fall back; no key asks atomic "
            "access)" : "");
    fprintf(f, "atomic %u\n", dev->hca.atomic);
    fprintf(f, "mkey_update_tag %s\n", dev->update_tag ?
            "yes (one key a tag)" : "no (a ring of keys)");
    fprintf(f, "max_qp_wr %u (work requests of a UMR-capable send queue)\n",
            c->max_qp_wr);
    fprintf(f, "max_sge %u\n", c->max_sge);
    fprintf(f, "max_msg %lu\n", (unsigned long)c->max_msg);
    fprintf(f, "max_mkeys %u\n", c->max_mkeys);
    fprintf(f, "lid %u\n", dev->lid);
    fprintf(f, "gid_index %d %s %s%s\n", dev->gid_index, gid,
            umr_eng_mlx5_gid_version_str(dev->gid_version),
            (dev->link_layer == IBV_LINK_LAYER_ETHERNET) ?
            ((dev->gid_family == 4) ? " IPv4" : " IPv6") : "");
    fprintf(f, "pkey_index %u pkey 0x%04x (%s member)\n", dev->pkey_index,
            dev->pkey, (dev->pkey & 0x8000) ? "full" : "limited");
    fprintf(f, "traffic_class %u (DSCP %u)\n", dev->traffic_class,
            dev->traffic_class >> 2);
    fprintf(f, "sl %u\n", dev->sl);
    if (dev->hca.ooo_sl_mask_read) {
        fprintf(f, "ooo_sl_mask 0x%04x (SLs with adaptive routing; sl %u: "
                "%s)\n", dev->hca.ooo_sl_mask, dev->sl,
                (dev->hca.ooo_sl_mask & (1u << dev->sl)) ?
                "adaptive, packets may arrive out of order" : "in order");
    } else {
        fprintf(f, "ooo_sl_mask not reported (%s)\n",
                (dev->link_layer == IBV_LINK_LAYER_ETHERNET) ? "RoCE" :
                "no vport capability");
    }
    fprintf(f, "hop_limit %u\n", dev->hop_limit);
    fprintf(f, "flow_label 0x%x\n", dev->flow_label);
    fprintf(f, "timeout %u (4.096 us * 2^%u per try), retry_count %u, "
            "rnr_retry %u: gives up after %.2f s\n", dev->qp_timeout,
            dev->qp_timeout, dev->retry_cnt, dev->rnr_retry,
            dev->qp_timeout ? 4.096e-6 * (double)(1ull << dev->qp_timeout) *
                              (dev->retry_cnt + 1) : -1.0);
    fprintf(f, "rd_atomic initiator %u responder %u\n", dev->max_rd_atomic,
            dev->max_dest_rd_atomic);
    fprintf(f, "local_cpus %u numa_node %d\n", ncpus, c->numa_node);
}
