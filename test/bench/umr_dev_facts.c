/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * umr_dev_facts: what the mlx5_umr transport makes of a device when it opens
 * it - the limits it derived (UMR entries from the largest WQE the device
 * takes, nesting depth, send queue depth, SGEs), the address and QoS it
 * chose (GID, RoCE version, pkey, traffic class, SL, hop limit, flow label,
 * retry budget, read depths) and the CPUs near it: one "NAME VALUE" line a
 * fact. contrib/hw-check.sh prints them first, as the facts a hardware run
 * establishes. The md is opened through UCT, so UCX_MLX5_UMR_* apply.
 *
 * usage: umr_dev_facts [-d DEVICE]   (default: the first mlx5_umr device)
 * Exit: 0, 77 when there is no such device, 1 on an error.
 */
#include "umr_config.h"

#include "umr_md.h"
#if HAVE_UMR_MLX5_ENGINE
#include "engine_mlx5.h"
#endif

#include "uct_umr.h"
#include "common_umr_cost.h"

#include <uct/api/uct.h>
#include <ucs/async/async.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static uct_component_h find_component(void)
{
    uct_component_attr_t attr = {.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME};
    uct_component_h *comps, found = NULL;
    unsigned i, num;

    if (uct_query_components(&comps, &num) != UCS_OK) {
        return NULL;
    }
    for (i = 0; i < num; ++i) {
        if ((uct_component_query(comps[i], &attr) == UCS_OK) &&
            !strcmp(attr.name, UCT_MLX5_UMR_NAME)) {
            found = comps[i];
        }
    }
    uct_release_component_list(comps);
    return found;
}

/* The default budget of connected peers of a rank (pml/umr's
 * pml_umr_max_conns=auto: common_umr_cost.h) with one rank and with a rank
 * per CPU on this node, what the node pins at that budget, and the cost a
 * connection at the budget is charged. */
static void print_budget_facts(const uct_mlx5_umr_md_t *md, size_t sq_bytes)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    long cpus  = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned long long node = ((pages > 0) && (psize > 0)) ?
                              (unsigned long long)pages * psize : 0;
    unsigned locals[2] = {1, (cpus > 1) ? (unsigned)cpus : 1};
    mca_common_umr_cost_t cost;
    unsigned long b;
    int i;

    for (i = 0; i < 2; ++i) {
        b = mca_common_umr_cost_conns_budget(md->caps.max_qp, locals[i], node,
                                             sq_bytes);
        printf("conns_budget %lu per rank with %u rank(s) on the node (max_qp "
               "%u / 4 / ranks: %lu; 1/%d of %llu MiB / ranks / %zu B of send "
               "queue: %llu); the node pins %llu MiB of send queues at it\n",
               b, locals[i], md->caps.max_qp,
               (unsigned long)(md->caps.max_qp ?
                               ucs_max(md->caps.max_qp / 4 / locals[i], 1u) :
                               0),
               MCA_COMMON_UMR_CONNS_MEM_SHARE, node >> 20, sq_bytes,
               sq_bytes ? node / MCA_COMMON_UMR_CONNS_MEM_SHARE / locals[i] /
                          sq_bytes : 0,
               ((unsigned long long)b * locals[i] * sq_bytes) >> 20);
    }
    mca_common_umr_cost_defaults(&cost);
    printf("reconnect_ns %.0f (built-in guess: a peer connected at the "
           "budget, QP destroy + create + 3 state changes; costs file "
           "engine.%s.connect_ns; the choice charges it with the handshake)\n",
           cost.connect_ns[(md->eng->id == UMR_ENG_ID_MLX5) ?
                           MCA_COMMON_UMR_COST_MLX5 : MCA_COMMON_UMR_COST_SW],
           (md->eng->id == UMR_ENG_ID_MLX5) ? "mlx5" : "sw");
}

/* What one endpoint costs (issue 19 finding 8): open an iface with the
 * UCX_MLX5_UMR_* configuration in use and print its endpoint QP's send
 * queue, and what the engine gives for either EP_UMR setting. */
static void print_ep_facts(uct_mlx5_umr_md_t *md, uct_md_h uct_md,
                           const char *dev)
{
    ucs_async_context_t *async = NULL;
    uct_worker_h worker        = NULL;
    uct_iface_config_t *config = NULL;
    uct_iface_h iface          = NULL;
    uct_iface_params_t params;
    uct_umr_iface_attr_t attr;
    umr_eng_qp_params_t qp;

    if ((ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                  &async) != UCS_OK) ||
        (uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &worker) !=
         UCS_OK) ||
        (uct_md_iface_config_read(uct_md, UCT_MLX5_UMR_NAME, NULL, NULL,
                                  &config) != UCS_OK)) {
        printf("ep_sq_bytes ? (no iface: see the error above)\n");
        goto out;
    }
    memset(&params, 0, sizeof(params));
    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = UCT_MLX5_UMR_NAME;
    params.mode.device.dev_name = dev;
    if ((uct_iface_open(uct_md, worker, &params, config, &iface) != UCS_OK) ||
        (uct_umr_iface_query(iface, &attr) != UCS_OK)) {
        printf("ep_sq_bytes ? (no iface: see the error above)\n");
        goto out;
    }

    printf("ep_sq_bytes %zu (an endpoint's send queue in use: %u WRs, %u "
           "SGEs, %s)\n", attr.ep_sq_bytes, attr.ep_sq_len, attr.ep_max_sge,
           attr.ep_umr ? "UMR room, UCX_MLX5_UMR_EP_UMR=y" :
                         "RDMA only, UCX_MLX5_UMR_EP_UMR=n");
    memset(&qp, 0, sizeof(qp));
    qp.sq_size          = attr.ep_sq_len;
    qp.max_sge          = md->caps.max_sge;
    qp.umr_list_entries = md->config.mkey_entries;
    printf("ep_sq_bytes_umr %zu (EP_UMR=y: %u WRs, %u SGEs, %u-entry UMR "
           "WQEs)\n", md->eng->qp_sq_bytes(md->dev, &qp), qp.sq_size,
           qp.max_sge, qp.umr_list_entries);
    qp.max_sge          = (md->caps.max_sge < 4) ? md->caps.max_sge : 4;
    qp.umr_list_entries = 0;
    qp.rdma_only        = 1;
    printf("ep_sq_bytes_rdma_only %zu (EP_UMR=n: %u WRs, %u SGEs)\n",
           md->eng->qp_sq_bytes(md->dev, &qp), qp.sq_size, qp.max_sge);
    print_budget_facts(md, attr.ep_sq_bytes);

out:
    if (iface != NULL) {
        uct_iface_close(iface);
    }
    if (config != NULL) {
        uct_config_release(config);
    }
    if (worker != NULL) {
        uct_worker_destroy(worker);
    }
    if (async != NULL) {
        ucs_async_context_destroy(async);
    }
}

static int first_device(uct_component_h comp, char *name, size_t len)
{
    uct_component_attr_t attr = {
        .field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT
    };
    uct_md_resource_desc_t res[UCT_MLX5_UMR_MAX_DEVICES];

    if ((uct_component_query(comp, &attr) != UCS_OK) ||
        (attr.md_resource_count == 0)) {
        return -1;
    }
    attr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    attr.md_resources = res;
    if (uct_component_query(comp, &attr) != UCS_OK) {
        return -1;
    }
    snprintf(name, len, "%s", res[0].md_name);
    return 0;
}

int main(int argc, char **argv)
{
    char dev[UCT_MD_NAME_MAX] = "";
    uct_md_config_t *config;
    uct_mlx5_umr_md_t *md;
    uct_component_h comp;
    const umr_eng_caps_t *c;
    uct_md_h uct_md;
    int opt;

    while ((opt = getopt(argc, argv, "d:h")) != -1) {
        if (opt == 'd') {
            snprintf(dev, sizeof(dev), "%s", optarg);
        } else {
            fprintf(stderr, "usage: %s [-d DEVICE]\n", argv[0]);
            return (opt == 'h') ? 0 : 1;
        }
    }

    comp = find_component();
    if (comp == NULL) {
        fprintf(stderr, "umr_dev_facts: no mlx5_umr component in UCX\n");
        return 1;
    }
    if ((dev[0] == '\0') && (first_device(comp, dev, sizeof(dev)) != 0)) {
        fprintf(stderr, "umr_dev_facts: no mlx5_umr device\n");
        return 77;
    }
    if (uct_md_config_read(comp, NULL, NULL, &config) != UCS_OK) {
        return 1;
    }
    if (uct_md_open(comp, dev, config, &uct_md) != UCS_OK) {
        uct_config_release(config);
        fprintf(stderr, "umr_dev_facts: cannot open device '%s'\n", dev);
        return 77;
    }
    uct_config_release(config);
    md = uct_mlx5_umr_md_from_handle(uct_md);
    c  = &md->caps;

    printf("engine %s\n", md->eng->name);
#if HAVE_UMR_MLX5_ENGINE
    if (md->eng->id == UMR_ENG_ID_MLX5) {
        umr_eng_mlx5_dev_print_facts(md->dev, stdout);
    } else
#endif
    {
        printf("device %s\n", c->name);
        printf("umr_list_entries %u\n", c->max_list);
        printf("umr_interleaved_entries %u\n", c->max_interleaved);
        printf("umr_nesting_depth %u\n", c->max_depth);
        printf("max_qp_wr %u\n", c->max_qp_wr);
        printf("max_sge %u\n", c->max_sge);
    }
    printf("md_mkey_entries %u (descriptors of a pool key)\n",
           md->config.mkey_entries);
    print_ep_facts(md, uct_md, dev);
    uct_md_close(uct_md);
    return 0;
}
