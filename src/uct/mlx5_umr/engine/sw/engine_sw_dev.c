/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr sw engine: the probe (cross-memory attach allowed and working),
 * devices, capabilities and addressing.
 */
#include "umr_config.h"

#include "engine_sw.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/string.h>
#include <ucs/sys/sys.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

/* Same policy as UCX's cma md: Yama may forbid attaching to a peer. */
static int umr_eng_sw_ptrace_allowed(void)
{
    static const char *file = "/proc/sys/kernel/yama/ptrace_scope";
    char buffer[32];
    ssize_t nread;
    char *value;

    nread = ucs_read_file(buffer, sizeof(buffer) - 1, 1, "%s", file);
    if (nread < 0) {
        ucs_debug("sw engine: could not read '%s', assuming no Yama", file);
        return 1;
    }

    buffer[nread] = '\0';
    value         = ucs_strtrim(buffer);
    if (!strcmp(value, "0")) {
        return 1;
    }

    if (!strcmp(value, "1")) {
        /* Scope 1: peers may attach only if we allow it explicitly. */
        if (prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) == 0) {
            return 1;
        }

        ucs_debug("sw engine: ptrace_scope 1 and PR_SET_PTRACER failed: %m");
        return 0;
    }

    ucs_debug("sw engine: ptrace_scope is %s, cross-memory attach disabled",
              value);
    return 0;
}

static int umr_eng_sw_writev_works(void)
{
    uint64_t src = 0x5a5a5a5a5a5a5a5aull, dst = 0;
    struct iovec liov = {.iov_base = &src, .iov_len = sizeof(src)};
    struct iovec riov = {.iov_base = &dst, .iov_len = sizeof(dst)};
    ssize_t ret;

    ret = process_vm_writev(getpid(), &liov, 1, &riov, 1, 0);
    if ((ret != sizeof(dst)) || (dst != src)) {
        ucs_debug("sw engine: process_vm_writev returned %zd: %m", ret);
        return 0;
    }

    return 1;
}

/* Not cached: cheap, and a sandbox (seccomp, Yama) may change under us. */
int umr_eng_sw_probe(void)
{
    int result = umr_eng_sw_ptrace_allowed() && umr_eng_sw_writev_works();

    if (!result) {
        ucs_debug("sw engine: cross-memory attach unavailable, no device");
    }

    return result;
}

ucs_status_t
umr_eng_sw_query_devices(char (*names)[UMR_ENG_NAME_MAX], unsigned max,
                         unsigned *num_p)
{
    if (num_p == NULL) {
        return UCS_ERR_INVALID_PARAM;
    }

    *num_p = 0;
    if (!umr_eng_sw_probe() || (max == 0)) {
        return UCS_OK;
    }

    if (names == NULL) {
        return UCS_ERR_INVALID_PARAM;
    }

    ucs_strncpy_zero(names[0], UMR_ENG_SW_DEV_NAME, UMR_ENG_NAME_MAX);
    *num_p = 1;
    return UCS_OK;
}

static void umr_eng_sw_caps_init(umr_eng_sw_dev_t *dev)
{
    umr_eng_caps_t *caps = &dev->caps;

    memset(caps, 0, sizeof(*caps));
    ucs_strncpy_zero(caps->name, UMR_ENG_SW_DEV_NAME, sizeof(caps->name));
    caps->max_interleaved = UMR_ENG_SW_MAX_INTERLEAVED;
    caps->max_list        = UMR_ENG_SW_MAX_LIST;
    caps->max_depth       = UMR_ENG_SW_MAX_DEPTH;
    caps->max_ilv_bytes   = UMR_ENG_SW_MAX_ILV_BYTES;
    caps->max_list_bytes  = UMR_ENG_SW_MAX_LIST_BYTES;
    caps->max_bytes_count = UMR_ENG_SW_MAX_BYTES_COUNT;
    caps->max_stride      = UMR_ENG_SW_MAX_STRIDE;
    caps->max_sge         = UMR_ENG_SW_MAX_SGE;
    caps->max_qp_wr       = UMR_ENG_SW_MAX_QP_WR;
    caps->max_mkeys       = dev->max_keys - 1;
    caps->max_msg         = UMR_ENG_SW_MAX_MSG;
    caps->max_mr_size     = UINT64_MAX;
    caps->num_ports       = 1;
    caps->dev_addr_len    = sizeof(umr_eng_sw_dev_addr_t);
    caps->qp_addr_len     = sizeof(umr_eng_sw_qp_addr_t);
    /* Cross-memory attach on this class of host, not NIC figures. */
    caps->latency         = 2e-6;
    caps->bandwidth       = 4e9;
    /* cross-memory attach runs on any CPU */
    memset(caps->local_cpus, 0xff, sizeof(caps->local_cpus));
    caps->numa_node       = -1;
}

ucs_status_t
umr_eng_sw_dev_open(const char *name, const umr_eng_dev_params_t *params,
                    umr_eng_dev_t **dev_p)
{
    size_t max_keys   = UMR_ENG_SW_MAX_KEYS_DEFAULT;
    double density    = UMR_ENG_SW_SPAN_DEFAULT;
    umr_eng_sw_dev_t *dev;
    ucs_status_t status;

    if ((name == NULL) || (dev_p == NULL)) {
        ucs_error("sw engine: dev_open: NULL %s", name ? "dev_p" : "name");
        return UCS_ERR_INVALID_PARAM;
    }

    if (strcmp(name, UMR_ENG_SW_DEV_NAME)) {
        ucs_debug("sw engine: no device '%s'", name);
        return UCS_ERR_NO_DEVICE;
    }

    if (!umr_eng_sw_probe()) {
        return UCS_ERR_UNSUPPORTED;
    }

    if (params != NULL) {
        if (params->sw_max_keys != 0) {
            max_keys = params->sw_max_keys;
        }

        if (params->sw_span_density > 0) {
            density = params->sw_span_density;
        }
    }

    /* +1: index 0 holds the table header */
    if ((max_keys < 1) || (max_keys >= UMR_ENG_SW_MAX_KEYS_LIMIT)) {
        ucs_error("sw engine: sw_max_keys %zu out of range [1, %u)", max_keys,
                  UMR_ENG_SW_MAX_KEYS_LIMIT - 1);
        return UCS_ERR_INVALID_PARAM;
    }

    dev = ucs_calloc(1, sizeof(*dev), "umr_eng_sw dev");
    if (dev == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    dev->span_density = density;
    dev->pid_ns       = ucs_sys_get_ns(UCS_SYS_NS_TYPE_PID);
    status            = ucs_sys_get_boot_id(&dev->boot_id[0],
                                            &dev->boot_id[1]);
    if (status != UCS_OK) {
        ucs_debug("sw engine: no boot id: %s", ucs_status_string(status));
        goto err_free;
    }

    dev->bounce = ucs_malloc(UMR_ENG_SW_BATCH_BYTES, "umr_eng_sw bounce");
    dev->span   = ucs_malloc(UMR_ENG_SW_BATCH_BYTES, "umr_eng_sw span");
    dev->riov   = ucs_calloc(3 * UMR_ENG_SW_IOV_MAX, sizeof(*dev->riov),
                             "umr_eng_sw iovs");
    dev->siov   = ucs_calloc(UMR_ENG_SW_SPAN_IOV_MAX, sizeof(*dev->siov),
                             "umr_eng_sw span iovs");
    if ((dev->bounce == NULL) || (dev->span == NULL) || (dev->riov == NULL) ||
        (dev->siov == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto err_free_bufs;
    }

    dev->liov = dev->riov + UMR_ENG_SW_IOV_MAX;
    dev->ciov = dev->liov + UMR_ENG_SW_IOV_MAX;

    status = umr_eng_sw_table_init(dev, max_keys + 1);
    if (status != UCS_OK) {
        goto err_free_bufs;
    }

    umr_eng_sw_space_init_local(&dev->local, dev);
    umr_eng_sw_caps_init(dev);
    ucs_debug("sw engine: opened device %p, key table %p, %zu keys", dev,
              dev->table, max_keys);
    *dev_p = (umr_eng_dev_t*)dev;
    return UCS_OK;

err_free_bufs:
    ucs_free(dev->siov);
    ucs_free(dev->riov);
    ucs_free(dev->span);
    ucs_free(dev->bounce);
err_free:
    ucs_free(dev);
    return status;
}

void umr_eng_sw_dev_close(umr_eng_dev_t *edev)
{
    umr_eng_sw_dev_t *dev = (umr_eng_sw_dev_t*)edev;

    if (dev == NULL) {
        return;
    }

    if (dev->num_objs != 0) {
        ucs_warn("sw engine: closing device with %u live objects",
                 dev->num_objs);
    }

    umr_eng_sw_table_cleanup(dev);
    ucs_free(dev->siov);
    ucs_free(dev->riov);
    ucs_free(dev->span);
    ucs_free(dev->bounce);
    ucs_free(dev);
}

void umr_eng_sw_dev_query(umr_eng_dev_t *edev, umr_eng_caps_t *caps)
{
    *caps = ((umr_eng_sw_dev_t*)edev)->caps;
}

void umr_eng_sw_dev_get_addr(umr_eng_dev_t *edev, void *addr)
{
    umr_eng_sw_dev_t *dev = (umr_eng_sw_dev_t*)edev;
    umr_eng_sw_dev_addr_t daddr;

    /* addr may be unaligned (UCX packs addresses): build, then copy */
    memset(&daddr, 0, sizeof(daddr));
    daddr.boot_id[0] = dev->boot_id[0];
    daddr.boot_id[1] = dev->boot_id[1];
    daddr.pid_ns     = dev->pid_ns;
    daddr.table      = (uintptr_t)dev->table;
    daddr.cookie     = dev->hdr->cookie;
    daddr.pid        = getpid();
    daddr.max_keys   = dev->max_keys;
    memcpy(addr, &daddr, sizeof(daddr));
}

int umr_eng_sw_dev_is_reachable(umr_eng_dev_t *edev,
                                       const void *remote_dev_addr)
{
    umr_eng_sw_dev_t *dev = (umr_eng_sw_dev_t*)edev;
    umr_eng_sw_dev_addr_t daddr;

    if (remote_dev_addr == NULL) {
        return 0;
    }

    memcpy(&daddr, remote_dev_addr, sizeof(daddr));
    /* same kernel (boot id) and same pid numbering (pid namespace) */
    return (daddr.boot_id[0] == dev->boot_id[0]) &&
           (daddr.boot_id[1] == dev->boot_id[1]) &&
           (daddr.pid_ns == dev->pid_ns) && (daddr.pid != 0) &&
           (daddr.table != 0);
}

/* The sw engine has no port and no asynchronous events: a peer's death
 * shows in the operations to it. */
int umr_eng_sw_dev_poll_events(umr_eng_dev_t *dev, umr_eng_event_t *events,
                               int max)
{
    return 0;
}
