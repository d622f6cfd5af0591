/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: memory domain (configuration, resources, contiguous
 * registration, key pack/unpack, the indirect key pool and the md's UMR queue
 * pair). Layout registration is in umr_md_layout.c.
 */
#include "umr_config.h"

#include "umr_md.h"
#include "engine_fault.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/string.h>
#include <inttypes.h>
#include <string.h>

static const char *uct_mlx5_umr_engine_names[] = {
    [UCT_MLX5_UMR_ENGINE_AUTO] = "auto",
    [UCT_MLX5_UMR_ENGINE_MLX5] = "mlx5",
    [UCT_MLX5_UMR_ENGINE_SW]   = "sw",
    [UCT_MLX5_UMR_ENGINE_LAST] = NULL
};

ucs_config_field_t uct_mlx5_umr_md_config_table[] = {
    {"", "", NULL,
     ucs_offsetof(uct_mlx5_umr_md_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_md_config_table)},

    {"ENGINE", "auto",
     "Engine that moves the data:\n"
     " auto - mlx5 when a ConnectX device is present, otherwise sw.\n"
     " mlx5 - rdma-core: UMR indirect keys and RDMA on a ConnectX NIC.\n"
     " sw   - software emulation between processes of one host through\n"
     "        cross-memory attach (process_vm_readv/writev); for testing and\n"
     "        for machines without a ConnectX device.",
     ucs_offsetof(uct_mlx5_umr_md_config_t, engine),
     UCS_CONFIG_TYPE_ENUM(uct_mlx5_umr_engine_names)},

    {"PORT", "0",
     "mlx5 engine: 1-based port number; 0 selects the first active port.",
     ucs_offsetof(uct_mlx5_umr_md_config_t, port), UCS_CONFIG_TYPE_UINT},

    {"GID_INDEX", "-1",
     "mlx5 engine: RoCE GID index; -1 selects one automatically.",
     ucs_offsetof(uct_mlx5_umr_md_config_t, gid_index), UCS_CONFIG_TYPE_INT},

    {"SW_MAX_KEYS", "65536",
     "sw engine: capacity of the per-process key table (memory regions plus\n"
     "indirect keys).",
     ucs_offsetof(uct_mlx5_umr_md_config_t, sw_max_keys), UCS_CONFIG_TYPE_UINT},

    {"SW_SPAN_DENSITY", "0.5",
     "sw engine: a layout transfer reads the whole span of the layout in one\n"
     "cross-memory call when the data covers at least this fraction of it\n"
     "(each iovec of process_vm_readv costs about 0.5 us).",
     ucs_offsetof(uct_mlx5_umr_md_config_t, sw_span_density),
     UCS_CONFIG_TYPE_DOUBLE},

    {"MKEY_POOL_SIZE", "1024",
     "Maximal number of indirect (UMR) keys one memory domain creates. Keys\n"
     "are created on demand, kept in a pool and reconfigured: creating one\n"
     "is a system call.",
     ucs_offsetof(uct_mlx5_umr_md_config_t, mkey_pool_size),
     UCS_CONFIG_TYPE_UINT},

    {"UMR_QUEUE_LEN", "64",
     "Send queue length of the memory domain's UMR queue pair, on which layout\n"
     "registrations are configured.",
     ucs_offsetof(uct_mlx5_umr_md_config_t, umr_queue_len),
     UCS_CONFIG_TYPE_UINT},

    {"REG_TIMEOUT", "10s",
     "How long a layout registration waits for its UMRs to complete.",
     ucs_offsetof(uct_mlx5_umr_md_config_t, reg_timeout), UCS_CONFIG_TYPE_TIME},

    /* The RC connection, with the defaults of UCX's rc transports
     * (UCX_RC_TIMEOUT, _RETRY_COUNT, _RNR_RETRY_COUNT; UCX_IB_TRAFFIC_CLASS,
     * _SL, _HOP_LIMIT, _PKEY) */
    {"TIMEOUT", "1.0s",
     "mlx5 engine: how long a try of a work request waits for its\n"
     "acknowledgement before it is sent again (rounded to 4.096 us * 2^n).\n"
     "With RETRY_COUNT it bounds how long a connection rides out a fabric\n"
     "that drops packets (a subnet manager sweep, a link flap):\n"
     "1 s x (7 + 1) tries is about 8.6 s, as in UCX.",
     ucs_offsetof(uct_mlx5_umr_md_config_t, timeout), UCS_CONFIG_TYPE_TIME},

    {"RETRY_COUNT", "7",
     "mlx5 engine: tries of a work request after the first (0..7) before the\n"
     "connection fails (transport retry counter exceeded).",
     ucs_offsetof(uct_mlx5_umr_md_config_t, retry_count), UCS_CONFIG_TYPE_UINT},

    {"RNR_RETRY_COUNT", "7",
     "mlx5 engine: receiver-not-ready retries (0..7, 7: for ever).",
     ucs_offsetof(uct_mlx5_umr_md_config_t, rnr_retry_count),
     UCS_CONFIG_TYPE_UINT},

    {"TRAFFIC_CLASS", "auto",
     "mlx5 engine: GRH traffic class, on RoCE v2 the DSCP (traffic class >> 2).\n"
     "'auto' selects 106 (DSCP 26) on RoCE v2 and 0 otherwise, as UCX does.",
     ucs_offsetof(uct_mlx5_umr_md_config_t, traffic_class),
     UCS_CONFIG_TYPE_ULUNITS},

    {"SL", "auto",
     "mlx5 engine: InfiniBand service level (0..15) / RoCE Ethernet priority\n"
     "(0..7). 'auto' selects 0.",
     ucs_offsetof(uct_mlx5_umr_md_config_t, sl), UCS_CONFIG_TYPE_ULUNITS},

    {"HOP_LIMIT", "255",
     "mlx5 engine: GRH hop limit / RoCE v2 time to live (0..255).",
     ucs_offsetof(uct_mlx5_umr_md_config_t, hop_limit), UCS_CONFIG_TYPE_UINT},

    /* UCX writes ~path_index for its multi-path RoCE LAG scheme; with one
     * path, 0 lets the kernel spread QPs over ECMP paths */
    {"FLOW_LABEL", "0",
     "mlx5 engine: GRH flow label (20 bits). 0 lets the kernel derive the\n"
     "RoCE v2 UDP source port from the QP numbers, which spreads connections\n"
     "over the fabric's equal-cost paths.",
     ucs_offsetof(uct_mlx5_umr_md_config_t, flow_label), UCS_CONFIG_TYPE_UINT},

    {"PKEY", "auto",
     "mlx5 engine: InfiniBand partition to use, 0x0..0x7fff ('auto': the first\n"
     "full member of the port's pkey table, else its first limited member, as\n"
     "UCX does). Peers of another partition are unreachable.",
     ucs_offsetof(uct_mlx5_umr_md_config_t, pkey), UCS_CONFIG_TYPE_HEX},

    {NULL}
};

const umr_eng_ops_t *uct_mlx5_umr_md_engine_of(const char *md_name)
{
    /* The sw engine has exactly one device, "sw"; every other is mlx5. */
    return umr_eng_find(!strcmp(md_name, "sw") ? "sw" : "mlx5");
}

uct_mlx5_umr_md_t *uct_mlx5_umr_md_from_handle(uct_md_h md)
{
    if ((md == NULL) || (md->component != &uct_mlx5_umr_component)) {
        return NULL;
    }

    return ucs_derived_of(md, uct_mlx5_umr_md_t);
}

static ucs_status_t
uct_mlx5_umr_query_engine(const umr_eng_ops_t *eng,
                          char (*names)[UMR_ENG_NAME_MAX], unsigned max,
                          unsigned *num_p)
{
    ucs_status_t status;

    *num_p = 0;
    if (eng == NULL) {
        return UCS_OK;
    }

    status = eng->query_devices(names, max, num_p);
    if (status != UCS_OK) {
        ucs_debug("mlx5_umr: engine %s: query_devices failed: %s", eng->name,
                  ucs_status_string(status));
        *num_p = 0;
    }
    return UCS_OK;
}

ucs_status_t uct_mlx5_umr_query_md_resources(uct_component_t *component,
                                             uct_md_resource_desc_t **resources_p,
                                             unsigned *num_resources_p)
{
    char names[UCT_MLX5_UMR_MAX_DEVICES][UMR_ENG_NAME_MAX];
    uct_mlx5_umr_md_config_t *config;
    uct_md_resource_desc_t *resources;
    uct_md_config_t *md_config;
    ucs_status_t status;
    unsigned i, num = 0;
    int engine;

    uct_mlx5_umr_config_check_env(component);
    /* The engine choice is a md config variable, read here too so that the
     * resource list (one md per engine device) follows it. */
    status = uct_md_config_read(component, NULL, NULL, &md_config);
    if (status != UCS_OK) {
        return status;
    }

    config = ucs_derived_of(md_config, uct_mlx5_umr_md_config_t);
    engine = config->engine;
    uct_config_release(md_config);

    if (engine != UCT_MLX5_UMR_ENGINE_SW) {
        uct_mlx5_umr_query_engine(umr_eng_find("mlx5"), names,
                                  UCT_MLX5_UMR_MAX_DEVICES, &num);
        if ((num == 0) && (engine == UCT_MLX5_UMR_ENGINE_MLX5)) {
            ucs_debug("mlx5_umr: UCX_MLX5_UMR_ENGINE=mlx5 but no mlx5 device");
        }
    }

    if ((num == 0) && (engine != UCT_MLX5_UMR_ENGINE_MLX5)) {
        uct_mlx5_umr_query_engine(umr_eng_find("sw"), names,
                                  UCT_MLX5_UMR_MAX_DEVICES, &num);
    }

    if (num == 0) {
        return uct_md_query_empty_md_resource(resources_p, num_resources_p);
    }

    resources = ucs_calloc(num, sizeof(*resources), "mlx5_umr md resources");
    if (resources == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    for (i = 0; i < num; ++i) {
        ucs_strncpy_zero(resources[i].md_name, names[i],
                         sizeof(resources[i].md_name));
    }

    *resources_p     = resources;
    *num_resources_p = num;
    return UCS_OK;
}

/* ---- indirect key pool ------------------------------------------------- */

uint64_t uct_mlx5_umr_hash(const void *buf, size_t len)
{
    const uint8_t *p = buf;
    uint64_t h       = 0xcbf29ce484222325ull; /* FNV-1a */
    size_t i;

    for (i = 0; i < len; ++i) {
        h = (h ^ p[i]) * 0x100000001b3ull;
    }
    return h;
}

/* The owner of layout registrations deregisters its least recently used
 * idle one (uct_umr_md_reclaim_set); 1 if it did. */
static int uct_mlx5_umr_md_reclaim_reg(uct_mlx5_umr_md_t *md)
{
    return (md->reclaim.func != NULL) && md->reclaim.func(md->reclaim.arg);
}

/* Ask the ep caches, then the owner of registrations, for an idle key; 1
 * if one came back to the pool. */
static int uct_mlx5_umr_md_mkey_reclaim(uct_mlx5_umr_md_t *md)
{
    uct_mlx5_umr_md_listener_t *listener;
    uint64_t num_free = md->stats.mkeys_free;

    ucs_list_for_each(listener, &md->listeners, list) {
        while (listener->evict_idle(listener)) {
            if (md->stats.mkeys_free > num_free) {
                return 1;
            }
        }
    }
    while (uct_mlx5_umr_md_reclaim_reg(md)) {
        if (md->stats.mkeys_free > num_free) {
            return 1;
        }
    }
    return 0;
}

ucs_status_t uct_mlx5_umr_md_mkeys_check_log(uct_mlx5_umr_md_t *md,
                                             unsigned num_mkeys,
                                             ucs_log_level_t level)
{
    if (ucs_likely(md->mkeys_reg + num_mkeys <= md->config.mkey_pool_size)) {
        return UCS_OK;
    }

    if (num_mkeys > md->config.mkey_pool_size) {
        ucs_log(level, "mlx5_umr md %p: the layout needs %u indirect keys, "
                "more than UCX_MLX5_UMR_MKEY_POOL_SIZE=%u: raise it", md,
                num_mkeys, md->config.mkey_pool_size);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    while ((md->mkeys_reg + num_mkeys > md->config.mkey_pool_size) &&
           uct_mlx5_umr_md_reclaim_reg(md)) {
    }
    if (md->mkeys_reg + num_mkeys <= md->config.mkey_pool_size) {
        return UCS_OK;
    }

    ucs_log(level, "mlx5_umr md %p: the layout needs %u indirect keys and "
            "layout registrations in use hold %u of "
            "UCX_MLX5_UMR_MKEY_POOL_SIZE=%u: raise UCX_MLX5_UMR_MKEY_POOL_SIZE "
            "(or deregister layouts)", md, num_mkeys, md->mkeys_reg,
            md->config.mkey_pool_size);
    return UCS_ERR_NO_RESOURCE;
}

/* Invalidate the dirty keys of the pool (LOCAL_INV on the md's QP, as many
 * as its queue holds, one wait), so that a UMR may configure them again:
 * they move to the free list. Keys whose invalidation failed are destroyed
 * (their state is not known any more). */
static void uct_mlx5_umr_md_clean_mkeys(uct_mlx5_umr_md_t *md)
{
    uct_mlx5_umr_mkey_t *batch[md->config.umr_queue_len];
    ucs_status_t status;
    unsigned n = 0, i;

    if (md->umr.qp == NULL) {
        /* lost after an error and not recreated yet: new keys serve now,
         * the dirty ones wait (the caller's own use of the QP reports why
         * it cannot be created) */
        return;
    }

    while (!ucs_list_is_empty(&md->dirty_mkeys) &&
           (n < md->config.umr_queue_len)) {
        batch[n++] = ucs_list_extract_head(&md->dirty_mkeys,
                                           uct_mlx5_umr_mkey_t, list);
    }

    status = uct_mlx5_umr_qp_invalidate(&md->umr, batch, n);
    for (i = 0; i < n; ++i) {
        if (status == UCS_OK) {
            ucs_list_add_tail(&md->free_mkeys, &batch[i]->list);
        } else {
            ucs_debug("mlx5_umr md %p: invalidating key 0x%x failed (%s): "
                      "destroyed", md, batch[i]->eng->lkey,
                      ucs_status_string(status));
            --md->stats.mkeys_free;
            --md->stats.mkeys_created;
            md->eng->mkey_destroy(md->dev, batch[i]->eng);
            ucs_free(batch[i]);
        }
    }
}

ucs_status_t uct_mlx5_umr_md_mkey_get(uct_mlx5_umr_md_t *md,
                                      uct_mlx5_umr_mkey_t **mkey_p)
{
    uct_mlx5_umr_mkey_t *mkey;
    ucs_status_t status;

    if (ucs_list_is_empty(&md->free_mkeys) &&
        ucs_list_is_empty(&md->dirty_mkeys) &&
        (md->stats.mkeys_created >= md->config.mkey_pool_size)) {
        uct_mlx5_umr_md_mkey_reclaim(md);
    }

    /* a configured key is invalidated before it serves again: when no
     * free key is left, the dirty ones are invalidated in one batch (a
     * LOCAL_INV each on the md's QP, one wait), which costs less than
     * creating keys (a system call each) */
    if (ucs_list_is_empty(&md->free_mkeys) &&
        !ucs_list_is_empty(&md->dirty_mkeys)) {
        uct_mlx5_umr_md_clean_mkeys(md);
    }

    if (!ucs_list_is_empty(&md->free_mkeys)) {
        mkey = ucs_list_extract_head(&md->free_mkeys, uct_mlx5_umr_mkey_t,
                                     list);
        --md->stats.mkeys_free;
        goto out;
    }

    if (md->stats.mkeys_created >= md->config.mkey_pool_size) {
        ucs_debug("mlx5_umr md %p: indirect key pool exhausted (%u keys)", md,
                  md->config.mkey_pool_size);
        return UCS_ERR_NO_RESOURCE;
    }

    mkey = ucs_malloc(sizeof(*mkey), "mlx5_umr mkey");
    if (mkey == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    status = md->eng->mkey_create(md->dev, md->config.mkey_entries,
                                  &mkey->eng);
    if (status != UCS_OK) {
        ucs_free(mkey);
        return status;
    }

    mkey->configured = 0;
    ++md->stats.mkeys_created;
out:
    ++md->stats.mkeys_in_use;
    *mkey_p = mkey;
    return UCS_OK;
}

void uct_mlx5_umr_md_mkey_put(uct_mlx5_umr_md_t *md, uct_mlx5_umr_mkey_t *mkey)
{
    ucs_assert(md->stats.mkeys_in_use > 0);
    --md->stats.mkeys_in_use;
    ++md->stats.mkeys_free;
    ucs_list_add_head(mkey->configured ? &md->dirty_mkeys : &md->free_mkeys,
                      &mkey->list);
}

void uct_mlx5_umr_md_mkey_discard(uct_mlx5_umr_md_t *md,
                                  uct_mlx5_umr_mkey_t *mkey)
{
    ucs_assert(md->stats.mkeys_in_use > 0);
    --md->stats.mkeys_in_use;
    --md->stats.mkeys_created;
    md->eng->mkey_destroy(md->dev, mkey->eng);
    ucs_free(mkey);
}

static void uct_mlx5_umr_md_mkeys_destroy(uct_mlx5_umr_md_t *md)
{
    uct_mlx5_umr_mkey_t *mkey, *tmp;

    if (md->stats.mkeys_in_use != 0) {
        ucs_warn("mlx5_umr md %p: %" PRIu64 " indirect keys still in use at "
                 "close", md, md->stats.mkeys_in_use);
    }

    ucs_list_for_each_safe(mkey, tmp, &md->free_mkeys, list) {
        ucs_list_del(&mkey->list);
        md->eng->mkey_destroy(md->dev, mkey->eng);
        ucs_free(mkey);
        --md->stats.mkeys_free;
    }
    ucs_list_for_each_safe(mkey, tmp, &md->dirty_mkeys, list) {
        ucs_list_del(&mkey->list);
        md->eng->mkey_destroy(md->dev, mkey->eng);
        ucs_free(mkey);
        --md->stats.mkeys_free;
    }
}

void uct_mlx5_umr_md_listener_add(uct_mlx5_umr_md_t *md,
                                  uct_mlx5_umr_md_listener_t *listener)
{
    ucs_list_add_tail(&md->listeners, &listener->list);
}

void uct_mlx5_umr_md_listener_remove(uct_mlx5_umr_md_t *md,
                                     uct_mlx5_umr_md_listener_t *listener)
{
    ucs_list_del(&listener->list);
}

void uct_mlx5_umr_md_event_listener_add(
        uct_mlx5_umr_md_t *md, uct_mlx5_umr_md_event_listener_t *listener)
{
    ucs_list_add_tail(&md->event_listeners, &listener->list);
}

void uct_mlx5_umr_md_event_listener_remove(
        uct_mlx5_umr_md_t *md, uct_mlx5_umr_md_event_listener_t *listener)
{
    ucs_list_del(&listener->list);
}

/* ---- asynchronous events (finding 7 of issue 19) --------------------- */

void uct_mlx5_umr_md_check_events_slow(uct_mlx5_umr_md_t *md)
{
    uct_mlx5_umr_md_event_listener_t *listener, *tmp;
    umr_eng_event_t events[16];
    int i, n;

    md->events_checked = ucs_get_time();
    do {
        n = md->eng->dev_poll_events(md->dev, events, 16);
        for (i = 0; i < n; ++i) {
            switch (events[i].type) {
            case UMR_ENG_EVENT_PORT_ERR:
                if (md->failed == UCS_OK) {
                    md->failed    = UCS_ERR_UNREACHABLE;
                    md->port_down = 1;
                    ucs_diag("mlx5_umr md %s: port down: the rail is retired "
                             "until the port is up again, its endpoints fail "
                             "and no peer is reachable through it",
                             md->caps.name);
                }
                break;
            case UMR_ENG_EVENT_ADDR_CHANGE:
            case UMR_ENG_EVENT_DEVICE_FATAL:
                if ((md->failed == UCS_OK) || md->port_down) {
                    ucs_diag("mlx5_umr md %s: %s: the rail is retired, its "
                             "endpoints fail and no peer is reachable "
                             "through it", md->caps.name,
                             (events[i].type == UMR_ENG_EVENT_ADDR_CHANGE) ?
                             "our address changed (peers address the old "
                             "one)" : "device fatal error");
                }
                md->failed    = UCS_ERR_UNREACHABLE;
                md->port_down = 0;      /* for good */
                break;
            case UMR_ENG_EVENT_PORT_ACTIVE:
                /* the address is ours still (the engine checked): the
                 * rail takes new connections; the endpoints that failed
                 * stay failed */
                if (md->port_down) {
                    md->failed    = UCS_OK;
                    md->port_down = 0;
                    ucs_diag("mlx5_umr md %s: port up again, our address "
                             "unchanged: new connections are possible",
                             md->caps.name);
                }
                break;
            default:
                break;
            }
            ucs_list_for_each_safe(listener, tmp, &md->event_listeners,
                                   list) {
                listener->event(listener, &events[i]);
            }
        }
    } while (n == 16);
}

/* ---- registration ------------------------------------------------------ */

unsigned uct_mlx5_umr_md_access(unsigned flags)
{
    unsigned access = 0;

    if (!(flags & UCT_MD_MEM_ACCESS_ALL)) {
        flags |= UCT_MD_MEM_ACCESS_RMA;
    }
    if (flags & UCT_MD_MEM_ACCESS_LOCAL_WRITE) {
        access |= UMR_ENG_ACCESS_LOCAL_WRITE;
    }
    if (flags & UCT_MD_MEM_ACCESS_REMOTE_PUT) {
        access |= UMR_ENG_ACCESS_REMOTE_WRITE;
    }
    if (flags & UCT_MD_MEM_ACCESS_REMOTE_GET) {
        access |= UMR_ENG_ACCESS_REMOTE_READ;
    }
    if (flags & UCT_MD_MEM_ACCESS_REMOTE_ATOMIC) {
        access |= UMR_ENG_ACCESS_REMOTE_ATOMIC;
    }
    /* only what is asked: write access pins the pages for writing, which
     * the kernel refuses on a read-only mapping (ib_umem_get). Remote
     * writes and atomics need local write too (ib_check_mr_access). */
    if (access & (UMR_ENG_ACCESS_REMOTE_WRITE | UMR_ENG_ACCESS_REMOTE_ATOMIC)) {
        access |= UMR_ENG_ACCESS_LOCAL_WRITE;
    }
    return access;
}

ucs_status_t uct_mlx5_umr_memh_reg(uct_mlx5_umr_md_t *md, void *address,
                                   size_t length, unsigned flags,
                                   uct_mlx5_umr_memh_t **memh_p)
{
    uct_mlx5_umr_memh_t *memh;
    ucs_status_t status;

    if ((address == NULL) || (length == 0)) {
        ucs_error("mlx5_umr: mem_reg: invalid buffer %p length %zu", address,
                  length);
        return UCS_ERR_INVALID_PARAM;
    }

    memh = ucs_calloc(1, sizeof(*memh), "mlx5_umr memh");
    if (memh == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    memh->access = uct_mlx5_umr_md_access(flags);
    status       = md->eng->mr_reg(md->dev, address, length, memh->access,
                                   &memh->mr);
    if (status != UCS_OK) {
        uct_md_log_mem_reg_error(flags, "mlx5_umr: mr_reg(%p, %zu) failed: %s",
                                 address, length, ucs_status_string(status));
        ucs_free(memh);
        return status;
    }

    memh->id     = md->next_memh_id++;
    memh->base   = address;
    memh->length = length;
    ++md->stats.mem_regs;
    *memh_p      = memh;
    return UCS_OK;
}

static ucs_status_t uct_mlx5_umr_mem_reg(uct_md_h uct_md, void *address,
                                         size_t length,
                                         umr_uct_mem_reg_arg_t flags_arg,
                                         uct_mem_h *memh_p)
{
    return uct_mlx5_umr_memh_reg(ucs_derived_of(uct_md, uct_mlx5_umr_md_t),
                                 address, length,
                                 umr_uct_mem_reg_flags(flags_arg),
                                 (uct_mlx5_umr_memh_t**)memh_p);
}

void uct_mlx5_umr_memh_free(uct_mlx5_umr_md_t *md, uct_mlx5_umr_memh_t *memh)
{
    unsigned k;

    for (k = 0; k < memh->num_mkeys; ++k) {
        uct_mlx5_umr_md_mkey_put(md, memh->mkeys[k]);
    }
    ucs_assert(md->mkeys_reg >= memh->num_mkeys);
    md->mkeys_reg -= memh->num_mkeys; /* only layout handles have keys */
    ucs_free(memh->mkeys);
    if (memh->plan != NULL) {
        umr_layout_plan_free(memh->plan);
    }
    if (memh->mr != NULL) {
        md->eng->mr_dereg(md->dev, memh->mr);
    }
    if (memh->span != NULL) {
        uct_mlx5_umr_memh_free(md, memh->span);
    }
    if (memh->layout != NULL) {
        umr_layout_free(memh->layout);
    }
    ucs_free(memh);
}

static ucs_status_t
uct_mlx5_umr_mem_dereg(uct_md_h uct_md, const uct_md_mem_dereg_params_t *params)
{
    uct_mlx5_umr_md_t *md = ucs_derived_of(uct_md, uct_mlx5_umr_md_t);
    uct_mlx5_umr_md_listener_t *listener;
    uct_mlx5_umr_memh_t *memh;

    UCT_MD_MEM_DEREG_CHECK_PARAMS(params, 0);

    memh = params->memh;
    if (memh->flags & UCT_MLX5_UMR_MEMH_FLAG_CACHED) {
        ucs_list_for_each(listener, &md->listeners, list) {
            listener->memh_dereg(listener, memh);
        }
    }

    if ((memh->flags & UCT_MLX5_UMR_MEMH_FLAG_LAYOUT) &&
        (uct_mlx5_umr_qp_invalidate(&md->umr, memh->mkeys,
                                    memh->num_mkeys) != UCS_OK)) {
        /* a peer may still reach memory through these keys: never reuse
         * them for another layout */
        while (memh->num_mkeys > 0) {
            uct_mlx5_umr_md_mkey_discard(md, memh->mkeys[--memh->num_mkeys]);
            --md->mkeys_reg;
        }
    }

    uct_mlx5_umr_memh_free(md, memh);
    return UCS_OK;
}

static ucs_status_t uct_mlx5_umr_mkey_pack(uct_md_h uct_md, uct_mem_h uct_memh,
                                           UMR_UCT_MKEY_PACK_RANGE_ARGS
                                           const uct_md_mkey_pack_params_t *params,
                                           void *rkey_buffer)
{
    uct_mlx5_umr_memh_t *memh              = uct_memh;
    uct_mlx5_umr_packed_rkey_t *packed     = rkey_buffer;
    int zero_based = !!(memh->flags & UCT_MLX5_UMR_MEMH_FLAG_LAYOUT);

    packed->magic    = UCT_MLX5_UMR_RKEY_MAGIC;
    packed->flags    = zero_based ? UCT_MLX5_UMR_RKEY_FLAG_ZERO_BASED : 0;
    packed->reserved = 0;
    packed->rkey     = zero_based ?
                       memh->mkeys[memh->num_mkeys - 1]->eng->rkey :
                       memh->mr->rkey;
    packed->base     = zero_based ? 0 : (uintptr_t)memh->base;
    packed->length   = memh->length;
    return UCS_OK;
}

ucs_status_t uct_mlx5_umr_rkey_check(const void *rkey_buffer, const char *who)
{
    const uct_mlx5_umr_packed_rkey_t *packed = rkey_buffer;

    if ((packed == NULL) || (packed->magic != UCT_MLX5_UMR_RKEY_MAGIC) ||
        (packed->flags & ~UCT_MLX5_UMR_RKEY_FLAG_ZERO_BASED)) {
        ucs_error("mlx5_umr: %s: buffer %p is not an mlx5_umr key", who,
                  packed);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

void uct_mlx5_umr_rkey_init(uct_mlx5_umr_rkey_t *rkey,
                            const uct_mlx5_umr_packed_rkey_t *packed)
{
    rkey->rkey   = packed->rkey;
    rkey->flags  = packed->flags;
    rkey->base   = packed->base;
    rkey->length = packed->length;
}

ucs_status_t uct_mlx5_umr_rkey_unpack(uct_component_t *component,
                                      const void *rkey_buffer,
                                      UMR_UCT_RKEY_UNPACK_PARAMS_ARG
                                      uct_rkey_t *rkey_p, void **handle_p)
{
    uct_mlx5_umr_rkey_t *rkey;
    ucs_status_t status;

    status = uct_mlx5_umr_rkey_check(rkey_buffer, "rkey_unpack");
    if (status != UCS_OK) {
        return status;
    }

    rkey = ucs_malloc(sizeof(*rkey), "mlx5_umr rkey");
    if (rkey == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    uct_mlx5_umr_rkey_init(rkey, rkey_buffer);
    *rkey_p   = (uintptr_t)rkey;
    *handle_p = NULL;
    return UCS_OK;
}

ucs_status_t uct_mlx5_umr_rkey_release(uct_component_t *component,
                                       uct_rkey_t rkey, void *handle)
{
    ucs_free((void*)rkey);
    return UCS_OK;
}

#ifdef HAVE_UCT_COMPONENT_T_RKEY_COMPARE
#define UCT_MLX5_UMR_CMP(_a, _b) (((_a) > (_b)) - ((_a) < (_b)))

/* Two unpacked keys are the same when they reach the same remote memory the
 * same way (key, addressing, base, length), whichever unpack made them: a
 * key unpacked twice compares equal, as UCP expects of a remote key. */
ucs_status_t uct_mlx5_umr_rkey_compare(uct_component_t *component,
                                       uct_rkey_t rkey1, uct_rkey_t rkey2,
                                       const uct_rkey_compare_params_t *params,
                                       int *result)
{
    const uct_mlx5_umr_rkey_t *key1 = (const void*)rkey1;
    const uct_mlx5_umr_rkey_t *key2 = (const void*)rkey2;
    int cmp;

    if ((params == NULL) || (params->field_mask != 0) || (result == NULL)) {
        ucs_error("mlx5_umr: rkey_compare: invalid params %p (field_mask "
                  "must be 0) or result %p", params, result);
        return UCS_ERR_INVALID_PARAM;
    }

    cmp = UCT_MLX5_UMR_CMP(key1->rkey, key2->rkey);
    if (cmp == 0) {
        cmp = UCT_MLX5_UMR_CMP(key1->flags, key2->flags);
    }
    if (cmp == 0) {
        cmp = UCT_MLX5_UMR_CMP(key1->base, key2->base);
    }
    if (cmp == 0) {
        cmp = UCT_MLX5_UMR_CMP(key1->length, key2->length);
    }
    *result = cmp;
    return UCS_OK;
}
#endif

static void uct_mlx5_umr_md_local_cpus(const uct_mlx5_umr_md_t *md,
                                       ucs_cpu_set_t *cpus)
{
    unsigned i;

    UCS_CPU_ZERO(cpus);
    for (i = 0; (i < UCS_CPU_SETSIZE) && (i < 64 * UMR_ENG_CPU_WORDS); ++i) {
        if (md->caps.local_cpus[i / 64] & (1ull << (i % 64))) {
            UCS_CPU_SET(i, cpus);
        }
    }
}

static ucs_status_t uct_mlx5_umr_md_query(uct_md_h uct_md,
                                          umr_uct_md_attr_t *md_attr)
{
    uct_mlx5_umr_md_t *md = ucs_derived_of(uct_md, uct_mlx5_umr_md_t);

    umr_uct_md_attr_init(md_attr);
    UMR_UCT_MD_CAP(md_attr).flags            = UCT_MD_FLAG_REG |
                                               UCT_MD_FLAG_NEED_RKEY;
    UMR_UCT_MD_CAP(md_attr).reg_mem_types    = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    UMR_UCT_MD_CAP(md_attr).alloc_mem_types  = 0;
    UMR_UCT_MD_CAP(md_attr).access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    UMR_UCT_MD_CAP(md_attr).detect_mem_types = 0;
    UMR_UCT_MD_CAP(md_attr).max_alloc        = 0;
    UMR_UCT_MD_CAP(md_attr).max_reg          = md->caps.max_mr_size;
    md_attr->rkey_packed_size                = sizeof(uct_mlx5_umr_packed_rkey_t);
    /* ibv_reg_mr pins pages; the sw key table is a table insert */
    md_attr->reg_cost             = (md->eng->id == UMR_ENG_ID_SW) ?
                                    ucs_linear_func_make(1e-6, 0) :
                                    ucs_linear_func_make(16e-6, 0.06e-9);
    /* the CPUs near the device (finding 9 of issue 19: a process picks the
     * nearest of several devices from this, as UCX's ib md reports it) */
    uct_mlx5_umr_md_local_cpus(md, &md_attr->local_cpus);
    return UCS_OK;
}

void uct_mlx5_umr_md_umr_failed(uct_mlx5_umr_md_t *md,
                                umr_eng_wc_status_t status)
{
    if (status == UMR_ENG_WC_WR_FLUSH_ERR) {
        return;     /* its QP had failed before: not the UMR's fault */
    }

    ++md->stats.umr_failed;
    if (md->umr_broken == UCS_OK) {
        md->umr_broken = umr_eng_wc_status_to_ucs(status);
        ucs_diag("mlx5_umr md %s: a UMR completed with %s: layouts fall back "
                 "on this device from now on", md->caps.name,
                 umr_eng_wc_status_str(status));
    }
}

ucs_status_t uct_umr_md_get_stats(uct_md_h uct_md, uct_umr_md_stats_t *stats)
{
    uct_mlx5_umr_md_t *md = uct_mlx5_umr_md_from_handle(uct_md);

    if ((md == NULL) || (stats == NULL)) {
        ucs_error("uct_umr_md_get_stats: md %p is not an mlx5_umr memory "
                  "domain (or stats is NULL)", uct_md);
        return UCS_ERR_INVALID_PARAM;
    }

    *stats = md->stats;
    return UCS_OK;
}

ucs_status_t uct_umr_md_reclaim_set(uct_md_h uct_md,
                                    uct_umr_md_reclaim_func_t func, void *arg)
{
    uct_mlx5_umr_md_t *md = uct_mlx5_umr_md_from_handle(uct_md);

    if (md == NULL) {
        ucs_error("uct_umr_md_reclaim_set: md %p is not an mlx5_umr memory "
                  "domain", uct_md);
        return UCS_ERR_INVALID_PARAM;
    }

    md->reclaim.func = func;
    md->reclaim.arg  = arg;
    return UCS_OK;
}

static void uct_mlx5_umr_md_close(uct_md_h uct_md)
{
    uct_mlx5_umr_md_t *md = ucs_derived_of(uct_md, uct_mlx5_umr_md_t);

    uct_mlx5_umr_md_mkeys_destroy(md);
    uct_mlx5_umr_qp_cleanup(&md->umr);
    md->eng->dev_close(md->dev);
    ucs_free(md);
}

/* Every slot of the running UCX's table is filled (umr_uct_compat.h checks
 * that none is unknown): slots that appeared in later releases are under
 * the probe that found them. */
static uct_md_ops_t uct_mlx5_umr_md_ops = {
    .close                  = uct_mlx5_umr_md_close,
    .query                  = uct_mlx5_umr_md_query,
    .mem_alloc              = UMR_UCS_STUB(uct_md_mem_alloc_func_t,
                                           ucs_empty_function_return_unsupported),
    .mem_free               = UMR_UCS_STUB(uct_md_mem_free_func_t,
                                           ucs_empty_function_return_unsupported),
    .mem_advise             = UMR_UCS_STUB(uct_md_mem_advise_func_t,
                                           ucs_empty_function_return_unsupported),
    .mem_reg                = uct_mlx5_umr_mem_reg,
    .mem_dereg              = uct_mlx5_umr_mem_dereg,
    .mem_query              = UMR_UCS_STUB(uct_md_mem_query_func_t,
                                           ucs_empty_function_return_unsupported),
    .mkey_pack              = uct_mlx5_umr_mkey_pack,
#ifdef HAVE_UCT_MD_OPS_T_IS_SOCKADDR_ACCESSIBLE /* until 1.15 */
    .is_sockaddr_accessible = UMR_UCS_STUB(uct_md_is_sockaddr_accessible_func_t,
                                           ucs_empty_function_return_zero_int),
#endif
#ifdef HAVE_UCT_MD_OPS_T_MEM_ATTACH /* 1.14: imported (exported) keys */
    .mem_attach             = UMR_UCS_STUB(uct_md_mem_attach_func_t,
                                           ucs_empty_function_return_unsupported),
#endif
#ifdef HAVE_UCT_MD_OPS_T_MEM_ELEM_PACK /* 1.21: device (GPU) API */
    .mem_elem_pack          = UMR_UCS_STUB(uct_md_mem_elem_pack_func_t,
                                           ucs_empty_function_return_unsupported),
#endif
#ifdef HAVE_UCT_MD_OPS_T_MEM_ELEM_RELEASE /* 1.23: device (GPU) API */
    .mem_elem_release       = UMR_UCS_STUB(uct_md_mem_elem_release_func_t,
                                           ucs_empty_function),
#endif
    .detect_memory_type     = UMR_UCS_STUB(uct_md_detect_memory_type_func_t,
                                           ucs_empty_function_return_unsupported)
};

/* The layout engine lowers within the device's limits (engine caps) and the
 * md's key pool; a key is created with caps.max_list descriptors, which
 * holds a list UMR of max_list entries or an interleaved one of
 * max_interleaved entries plus its strided header. */
static void uct_mlx5_umr_md_set_limits(uct_mlx5_umr_md_t *md)
{
    umr_layout_limits_t *limits = &md->limits;
    const umr_eng_caps_t *caps  = &md->caps;

    umr_layout_limits_default(limits);
    limits->max_interleaved = caps->max_interleaved;
    limits->max_list        = caps->max_list;
    limits->max_bytes_count = caps->max_bytes_count;
    limits->max_stride      = caps->max_stride;
    limits->max_list_bytes  = caps->max_list_bytes;
    limits->max_key_bytes   = ucs_min(limits->max_key_bytes,
                                      caps->max_ilv_bytes);
    limits->max_depth       = caps->max_depth;
    limits->max_keys        = ucs_min(limits->max_keys,
                                      md->config.mkey_pool_size);
    md->config.mkey_entries = caps->max_list;
}

ucs_status_t uct_mlx5_umr_md_open(uct_component_t *component,
                                  const char *md_name,
                                  const uct_md_config_t *uct_md_config,
                                  uct_md_h *md_p)
{
    const uct_mlx5_umr_md_config_t *config =
            ucs_derived_of(uct_md_config, uct_mlx5_umr_md_config_t);
    uct_mlx5_umr_qp_config_t qp_config;
    umr_eng_dev_params_t dev_params;
    uct_mlx5_umr_md_t *md;
    ucs_status_t status;

    /* (also here: a caller may open the sw md by name, without a query) */
    uct_mlx5_umr_config_check_env(component);
    md = ucs_calloc(1, sizeof(*md), "mlx5_umr md");
    if (md == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    md->super.ops       = &uct_mlx5_umr_md_ops;
    md->super.component = &uct_mlx5_umr_component;
    /* the test variant may inject faults around it (engine_fault.h) */
    md->eng             = umr_eng_fault_wrap(
                                  uct_mlx5_umr_md_engine_of(md_name));
    md->next_memh_id    = 1;
    ucs_list_head_init(&md->free_mkeys);
    ucs_list_head_init(&md->dirty_mkeys);
    ucs_list_head_init(&md->listeners);
    ucs_list_head_init(&md->event_listeners);
    md->failed          = UCS_OK;
    md->port_down       = 0;
    md->umr_broken      = UCS_OK;
    md->events_checked  = ucs_get_time();

    md->config.mkey_pool_size = config->mkey_pool_size;
    md->config.umr_queue_len  = ucs_max(config->umr_queue_len, 1);
    md->config.reg_timeout    = config->reg_timeout;

    if (md->eng == NULL) {
        ucs_error("mlx5_umr: no engine built in for device '%s'", md_name);
        status = UCS_ERR_NO_DEVICE;
        goto err_free;
    }

    umr_eng_dev_params_init(&dev_params);
    dev_params.port            = config->port;
    dev_params.gid_index       = config->gid_index;
    dev_params.sw_max_keys     = config->sw_max_keys;
    dev_params.sw_span_density = config->sw_span_density;
    dev_params.timeout         = config->timeout;
    dev_params.retry_count     = config->retry_count;
    dev_params.rnr_retry       = config->rnr_retry_count;
    dev_params.traffic_class   = (config->traffic_class == UCS_ULUNITS_AUTO) ?
                                 -1 : (int)ucs_min(config->traffic_class, 256);
    dev_params.sl              = (config->sl == UCS_ULUNITS_AUTO) ?
                                 -1 : (int)ucs_min(config->sl, 256);
    dev_params.hop_limit       = config->hop_limit;
    dev_params.flow_label      = config->flow_label;
    dev_params.pkey            = ((uint16_t)config->pkey == UCS_HEXUNITS_AUTO) ?
                                 -1 : (int)ucs_min(config->pkey, 0x10000);
    status = md->eng->dev_open(md_name, &dev_params, &md->dev);
    if (status != UCS_OK) {
        ucs_error("mlx5_umr: %s engine failed to open device '%s': %s",
                  md->eng->name, md_name, ucs_status_string(status));
        goto err_free;
    }

    md->eng->dev_query(md->dev, &md->caps);
    uct_mlx5_umr_md_set_limits(md);

    qp_config.queue_len    = md->config.umr_queue_len;
    qp_config.list_entries = md->config.mkey_entries;
    qp_config.timeout      = md->config.reg_timeout;
    /* the md's own UMR queue pair talks to itself: injected faults are
     * its wait's (mdwait), never its loopback connect or completions */
    status = uct_mlx5_umr_qp_init(&md->umr, md, umr_eng_fault_unwrap(md->eng),
                                  md->dev, &qp_config);
    if (status != UCS_OK) {
        goto err_dev;
    }

    ucs_debug("mlx5_umr: opened md %s (%s engine) %p", md_name, md->eng->name,
              md);
    *md_p = &md->super;
    return UCS_OK;

err_dev:
    md->eng->dev_close(md->dev);
err_free:
    ucs_free(md);
    return status;
}
