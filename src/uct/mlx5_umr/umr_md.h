/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: memory domain.
 *
 * One md per engine device. It owns the engine device, a pool of indirect
 * keys and a loopback "umr QP" (umr_qp.h) on which layout registrations are
 * configured: uct_umr_mem_reg() posts the UMRs there and waits for their
 * completion, so a packed key is usable by a peer as soon as registration
 * returns (the hardware rule: another QP may use a UMR key only after the
 * UMR completed). umr_md.c: configuration, resources, contiguous
 * registration, key pack/unpack and the key pool; umr_md_layout.c: layout
 * registration; umr_key.c builds the keys (for the eps too) on a QP, and
 * umr_qp.c owns the md's QP and its wait: calls go md -> md_layout -> key ->
 * qp, never back up. When the pool is
 * dry the md asks the ep caches (listeners) for idle keys; keys held by
 * registrations are counted, so a need that can never be met is an error
 * naming UCX_MLX5_UMR_MKEY_POOL_SIZE instead of UCS_ERR_NO_RESOURCE forever.
 */
#ifndef UCT_MLX5_UMR_MD_H_
#define UCT_MLX5_UMR_MD_H_

#include "engine.h"
#include "umr_qp.h"
#include "layout.h"
#include "uct_umr.h"

#include "umr_uct_compat.h"

#include <uct/base/uct_md.h>
#include <ucs/datastruct/list.h>
#include <ucs/sys/math.h>
#include <ucs/arch/cpu.h>
#include <ucs/debug/assert.h>
#include <ucs/time/time.h>


#define UCT_MLX5_UMR_NAME          UCT_UMR_NAME
#define UCT_MLX5_UMR_CONFIG_PREFIX UCT_UMR_CONFIG_PREFIX
#define UCT_MLX5_UMR_RKEY_MAGIC    0x5a7e
#define UCT_MLX5_UMR_MAX_DEVICES   16


typedef enum {
    UCT_MLX5_UMR_ENGINE_AUTO,
    UCT_MLX5_UMR_ENGINE_MLX5,
    UCT_MLX5_UMR_ENGINE_SW,
    UCT_MLX5_UMR_ENGINE_LAST
} uct_mlx5_umr_engine_sel_t;


typedef struct uct_mlx5_umr_md_config {
    uct_md_config_t super;
    int             engine;          /* uct_mlx5_umr_engine_sel_t */
    unsigned        port;
    int             gid_index;
    unsigned        sw_max_keys;
    double          sw_span_density;
    unsigned        mkey_pool_size;  /* max indirect keys this md creates */
    unsigned        umr_queue_len;   /* send queue of the md's umr QP */
    double          reg_timeout;     /* seconds to wait for a UMR */
    /* mlx5: the RC connection (umr_eng_dev_params_t) */
    double          timeout;
    unsigned        retry_count;
    unsigned        rnr_retry_count;
    unsigned long   traffic_class;   /* UCS_ULUNITS_AUTO: auto */
    unsigned long   sl;              /* UCS_ULUNITS_AUTO: auto */
    unsigned        hop_limit;
    unsigned        flow_label;
    size_t          pkey;            /* UCS_HEXUNITS_AUTO (16 bits): auto */
} uct_mlx5_umr_md_config_t;


enum {
    UCT_MLX5_UMR_MEMH_FLAG_LAYOUT = UCS_BIT(0),  /* zero-based layout key */
    UCT_MLX5_UMR_MEMH_FLAG_CACHED = UCS_BIT(1)   /* referenced by an ep cache */
};


typedef struct uct_mlx5_umr_memh {
    uint64_t            id;          /* unique per md, never reused */
    unsigned            flags;
    unsigned            access;      /* UMR_ENG_ACCESS_* it was registered
                                        with (a layout: of its keys) */
    umr_eng_mr_t        *mr;         /* contiguous memory (NULL: a layout) */
    struct uct_mlx5_umr_memh *span;  /* a layout of uct_umr_mem_reg: the
                                        span it registered itself */
    void                *base;       /* contig: address; layout: base */
    uint64_t            length;      /* contig: bytes; layout: packed bytes */
    /* layout only */
    umr_layout_t    *layout;     /* own copy */
    size_t              count;
    uint64_t            layout_hash;
    umr_layout_plan_t   *plan;
    unsigned            num_mkeys;
    uct_mlx5_umr_mkey_t **mkeys;     /* one per plan key, top key last */
} uct_mlx5_umr_memh_t;


/* Who hears the device's asynchronous events (the ifaces of the md). */
typedef struct uct_mlx5_umr_md_event_listener {
    ucs_list_link_t list;
    void            (*event)(struct uct_mlx5_umr_md_event_listener *listener,
                             const umr_eng_event_t *event);
} uct_mlx5_umr_md_event_listener_t;

/* Hooks of the ep key caches: drop entries of a deregistered memory handle;
 * give up the least recently used idle entry when the key pool is dry
 * (returns 1 if one was evicted). */
typedef struct uct_mlx5_umr_md_listener {
    ucs_list_link_t list;
    void            (*memh_dereg)(struct uct_mlx5_umr_md_listener *listener,
                                  const uct_mlx5_umr_memh_t *memh);
    int             (*evict_idle)(struct uct_mlx5_umr_md_listener *listener);
} uct_mlx5_umr_md_listener_t;


typedef struct uct_mlx5_umr_md {
    uct_md_t              super;
    const umr_eng_ops_t   *eng;
    umr_eng_dev_t         *dev;
    umr_eng_caps_t        caps;
    umr_layout_limits_t   limits;
    uct_mlx5_umr_qp_t     umr;       /* loopback QP for layout UMRs */
    uint64_t              next_memh_id;
    unsigned              mkeys_reg; /* pool keys held by registrations */
    ucs_list_link_t       free_mkeys;  /* invalidated or never configured */
    ucs_list_link_t       dirty_mkeys; /* configured: LOCAL_INV first */
    ucs_list_link_t       listeners;
    ucs_list_link_t       event_listeners;
    struct {
        uct_umr_md_reclaim_func_t func;  /* the owner of layout
                                            registrations gives idle ones
                                            back (uct_umr_md_reclaim_set) */
        void                      *arg;
    } reclaim;
    ucs_time_t            events_checked; /* when events were last read */
    ucs_status_t          failed;     /* the rail is retired (port down,
                                         address changed): UCS_OK while
                                         it works */
    int                   port_down;  /* retired for a port down only:
                                         PORT_ACTIVE brings it back */
    ucs_status_t          umr_broken; /* a UMR completed in error: no
                                         layout key is configured any more
                                         (UCS_OK while UMRs work) */
    struct {
        unsigned          mkey_pool_size;
        unsigned          umr_queue_len;
        double            reg_timeout;
        uint32_t          mkey_entries;
    } config;
    uct_umr_md_stats_t    stats;
} uct_mlx5_umr_md_t;


/* Packed remote key (what mkey_pack writes). */
typedef struct UCS_S_PACKED uct_mlx5_umr_packed_rkey {
    uint16_t magic;
    uint8_t  flags;                  /* UCT_MLX5_UMR_RKEY_FLAG_* */
    uint8_t  reserved;
    uint32_t rkey;                   /* 32-bit engine key */
    uint64_t base;                   /* VA of byte 0; 0 when zero-based */
    uint64_t length;                 /* bytes addressable through the key */
} uct_mlx5_umr_packed_rkey_t;

enum {
    UCT_MLX5_UMR_RKEY_FLAG_ZERO_BASED = UCS_BIT(0)
};

/* Unpacked remote key (uct_rkey_t points to it). */
typedef struct uct_mlx5_umr_rkey {
    uint32_t rkey;
    unsigned flags;
    uint64_t base;
    uint64_t length;
} uct_mlx5_umr_rkey_t;


extern uct_component_t uct_mlx5_umr_component;
extern ucs_config_field_t uct_mlx5_umr_md_config_table[];

ucs_status_t uct_mlx5_umr_query_md_resources(uct_component_t *component,
                                             uct_md_resource_desc_t **resources_p,
                                             unsigned *num_resources_p);
ucs_status_t uct_mlx5_umr_md_open(uct_component_t *component,
                                  const char *md_name,
                                  const uct_md_config_t *config,
                                  uct_md_h *md_p);
ucs_status_t uct_mlx5_umr_rkey_unpack(uct_component_t *component,
                                      const void *rkey_buffer,
                                      UMR_UCT_RKEY_UNPACK_PARAMS_ARG
                                      uct_rkey_t *rkey_p, void **handle_p);
ucs_status_t uct_mlx5_umr_rkey_release(uct_component_t *component,
                                       uct_rkey_t rkey, void *handle);
#ifdef HAVE_UCT_COMPONENT_T_RKEY_COMPARE /* UCX 1.16 */
ucs_status_t uct_mlx5_umr_rkey_compare(uct_component_t *component,
                                       uct_rkey_t rkey1, uct_rkey_t rkey2,
                                       const uct_rkey_compare_params_t *params,
                                       int *result);
#endif

/* The one check of a packed remote key (component and ep unpack); `who`
 * names the caller in the log line. */
ucs_status_t uct_mlx5_umr_rkey_check(const void *rkey_buffer, const char *who);
void uct_mlx5_umr_rkey_init(uct_mlx5_umr_rkey_t *rkey,
                            const uct_mlx5_umr_packed_rkey_t *packed);

/* Returns NULL unless md is an mlx5_umr md. */
uct_mlx5_umr_md_t *uct_mlx5_umr_md_from_handle(uct_md_h md);

/* The transport's hash of a byte string (FNV-1a, 64 bits). */
uint64_t uct_mlx5_umr_hash(const void *buf, size_t len);

/* Key pool: take a key (created on demand up to the pool bound; when the
 * pool is dry, idle keys of the ep caches are evicted to serve it). */
ucs_status_t uct_mlx5_umr_md_mkey_get(uct_mlx5_umr_md_t *md,
                                      uct_mlx5_umr_mkey_t **mkey_p);
void uct_mlx5_umr_md_mkey_put(uct_mlx5_umr_md_t *md,
                              uct_mlx5_umr_mkey_t *mkey);

/* Can num_mkeys keys be taken now, beside the keys registrations hold
 * (idle ones given back by their owner first, uct_umr_md_reclaim_set)?
 * Else UCS_ERR_EXCEEDS_LIMIT (more than the whole pool: never) or
 * UCS_ERR_NO_RESOURCE (registrations in use hold the rest), logged at
 * `level` (error, or debug for a caller that asked to hide errors) with the
 * variable to raise. */
ucs_status_t uct_mlx5_umr_md_mkeys_check_log(uct_mlx5_umr_md_t *md,
                                             unsigned num_mkeys,
                                             ucs_log_level_t level);

/* The same for an endpoint's local key: one that cannot be had now is the
 * caller's to handle (it moves the data another way: not an error line),
 * and not worth waiting for (registrations in use may hold the pool as
 * long as a window lives): UCS_ERR_EXCEEDS_LIMIT either way. */
static inline ucs_status_t
uct_mlx5_umr_md_mkeys_check(uct_mlx5_umr_md_t *md, unsigned num_mkeys)
{
    ucs_status_t status;

    status = uct_mlx5_umr_md_mkeys_check_log(md, num_mkeys,
                                             UCS_LOG_LEVEL_DEBUG);
    return (status == UCS_ERR_NO_RESOURCE) ? UCS_ERR_EXCEEDS_LIMIT : status;
}

void uct_mlx5_umr_md_listener_add(uct_mlx5_umr_md_t *md,
                                  uct_mlx5_umr_md_listener_t *listener);
void uct_mlx5_umr_md_listener_remove(uct_mlx5_umr_md_t *md,
                                     uct_mlx5_umr_md_listener_t *listener);

void uct_mlx5_umr_md_event_listener_add(
        uct_mlx5_umr_md_t *md, uct_mlx5_umr_md_event_listener_t *listener);
void uct_mlx5_umr_md_event_listener_remove(
        uct_mlx5_umr_md_t *md, uct_mlx5_umr_md_event_listener_t *listener);

/* How often progress reads the device's asynchronous events. */
#define UCT_MLX5_UMR_MD_EVENTS_INTERVAL_US 1000

/* Read the device's asynchronous events (never blocking) and hand them to
 * the event listeners: at most once a UCT_MLX5_UMR_MD_EVENTS_INTERVAL_US
 * unless `force` (after a failed completion). A port error or a changed
 * address retires the rail (md->failed). */
void uct_mlx5_umr_md_check_events_slow(uct_mlx5_umr_md_t *md);

static UCS_F_ALWAYS_INLINE void
uct_mlx5_umr_md_check_events(uct_mlx5_umr_md_t *md, int force)
{
    if (ucs_unlikely(force ||
                     (ucs_get_time() - md->events_checked >
                      ucs_time_from_usec(UCT_MLX5_UMR_MD_EVENTS_INTERVAL_US)))) {
        uct_mlx5_umr_md_check_events_slow(md);
    }
}

/* Shared by umr_md.c and umr_md_layout.c. */

/* Engine access flags of UCT_MD_MEM_ACCESS_* flags. */
unsigned uct_mlx5_umr_md_access(unsigned flags);

/* Destroy a key taken from the pool instead of returning it. */
void uct_mlx5_umr_md_mkey_discard(uct_mlx5_umr_md_t *md,
                                  uct_mlx5_umr_mkey_t *mkey);

/* Register contiguous memory (uct_md_mem_reg), `flags` as there. */
ucs_status_t uct_mlx5_umr_memh_reg(uct_mlx5_umr_md_t *md, void *address,
                                   size_t length, unsigned flags,
                                   uct_mlx5_umr_memh_t **memh_p);

/* Free a memory handle and everything it holds. */
void uct_mlx5_umr_memh_free(uct_mlx5_umr_md_t *md, uct_mlx5_umr_memh_t *memh);

/* Warn once a process about a UCX_MLX5_UMR_* variable that no table of
 * `component` knows, naming the closest one (umr_config_check.c). */
void uct_mlx5_umr_config_check_env(uct_component_t *component);

/* Engine device name of an md resource name (they are equal). */
const umr_eng_ops_t *uct_mlx5_umr_md_engine_of(const char *md_name);

/* A UMR of the md or of one of its endpoints completed with `status`: the
 * first error other than a flush marks the layout path broken (counter
 * umr_failed, one diagnostic line); later layouts fall back without posting
 * a UMR, instead of failing one and resetting a QP each. */
void uct_mlx5_umr_md_umr_failed(uct_mlx5_umr_md_t *md,
                                umr_eng_wc_status_t status);

#endif
