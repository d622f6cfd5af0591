/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: interface (capabilities, configuration, progress).
 *
 * All endpoints of an iface share one engine CQ. Every work request carries
 * its operation descriptor (uct_mlx5_umr_op_t) as wr_id; progress polls the
 * CQ, retires operations in each endpoint's posting order and only then
 * calls user completions, so a flush completion never overtakes the
 * operations before it. Progress is registered with the worker only while
 * there is work (outstanding operations, pending requests, failures to
 * report), and dispatches pending requests of the eps that have some
 * (iface->pending_eps). An endpoint whose QP fails is reported once to the
 * iface error handler (UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE). Bounce
 * buffers (short/bcopy and the pack path) come from an ucs_mpool whose chunk
 * is registered with the engine.
 */
#ifndef UCT_MLX5_UMR_IFACE_H_
#define UCT_MLX5_UMR_IFACE_H_

#include "umr_md.h"

#include <uct/base/uct_iface.h>
#include <ucs/datastruct/mpool.inl>
#include <ucs/datastruct/queue.h>


typedef struct uct_mlx5_umr_ep uct_mlx5_umr_ep_t;


/* Sizes and thresholds the iface takes as configured. */
typedef struct uct_mlx5_umr_iface_sizes {
    unsigned cache_size;
    unsigned rcache_size;
    size_t   pack_thresh;
    size_t   seg_size;
    unsigned num_bufs;
    unsigned max_poll;
} uct_mlx5_umr_iface_sizes_t;


typedef struct uct_mlx5_umr_iface_config {
    uct_iface_config_t super;
    unsigned           tx_queue_len;
    unsigned           max_iov;
    uct_mlx5_umr_iface_sizes_t sizes;
    size_t             max_msg;
    double             latency_overhead;
    int                ucp_lanes;
    char               *ep_umr;      /* "y"/"n": parsed at iface init */
    char               *ep_max_sge;  /* "auto" or a count */
} uct_mlx5_umr_iface_config_t;


/*
 * Addresses. UCP (address v1) caps a device address at 31 bytes and an iface
 * address at 63, while an engine device address may be larger (sw: 48), so:
 *   device address: 64-bit hash of the engine device address (identity only)
 *   iface address:  engine id + engine device address (reachability)
 *   ep address:     engine QP address + engine device address (connection;
 *                   UCP allows 255 bytes here)
 */
typedef struct UCS_S_PACKED uct_mlx5_umr_iface_addr {
    uint8_t engine;                 /* 's' sw, 'm' mlx5 */
    uint8_t dev_addr[];             /* engine device address */
} uct_mlx5_umr_iface_addr_t;

#define UCT_MLX5_UMR_IFACE_ADDR_MAX 63


typedef struct uct_mlx5_umr_iface {
    uct_base_iface_t     super;
    uct_mlx5_umr_md_t    *md;
    const umr_eng_ops_t  *eng;
    umr_eng_cq_t         *cq;
    ucs_mpool_t          op_mp;
    ucs_list_link_t      eps;        /* all endpoints */
    ucs_list_link_t      failed_eps; /* failures not reported to the error
                                        handler yet */
    ucs_list_link_t      pending_eps;/* eps with pending requests: progress
                                        dispatches these, not every ep */
    unsigned             outstanding;/* operations not retired yet */
    unsigned             cq_avail;   /* CQ entries not promised to a WR */
    uct_mlx5_umr_md_event_listener_t event_listener; /* the device's async
                                        events: a port that went down fails
                                        every ep, a failed QP its ep */
    ucs_mpool_t          buf_mp;     /* bounce buffers (registered) */
    struct {
        unsigned         tx_queue_len;
        unsigned         max_iov;
        unsigned         max_sge;    /* SGEs of an endpoint's RDMA WR */
        int              ep_umr;     /* local keys configured on the
                                        endpoint's QP (EP_UMR=y); else its
                                        QP is RDMA only and keys go through
                                        the md's QP, waited for */
        size_t           ep_sq_bytes;/* send queue of one endpoint's QP
                                        (the engine's figure) */
        uct_mlx5_umr_iface_sizes_t sizes;
        uint64_t         max_msg;
        double           latency_overhead;
        int              hide_caps;  /* feature request, UCP_LANES=n */
    } config;
} uct_mlx5_umr_iface_t;


/* A bounce buffer: an element of iface->buf_mp, its data (SEG_SIZE bytes,
 * cache-line aligned) right after this header. Chunks of the pool are
 * registered with the engine; each buffer knows its chunk's key. */
typedef struct uct_mlx5_umr_buf {
    uint32_t             lkey;
    uint32_t             reserved;  /* 8 bytes: the mpool's element header
                                       right before it stays 8-byte aligned */
} uct_mlx5_umr_buf_t;


/* One user operation: one or more WRs plus, at the end, a completion. */
typedef struct uct_mlx5_umr_op {
    ucs_queue_elem_t     queue;      /* ep->ops, in posting order */
    uct_mlx5_umr_ep_t    *ep;
    uct_completion_t     *comp;
    ucs_status_t         status;     /* first error of its WRs */
    unsigned             wrs_left;   /* signaled WRs not polled yet */
    struct uct_mlx5_umr_buf *buf;    /* bounce buffer or NULL */
    int                  is_flush;   /* flush marker: no WR of its own */
    struct uct_mlx5_umr_cache_entry *centry; /* local key in use, or NULL */
    umr_eng_mr_t         *tmp_mr;    /* registration of an iov without memh */
    /* what to do with the bounce buffer after a read */
    uct_unpack_callback_t unpack_cb;
    void                 *unpack_arg;
    const umr_layout_t *unpack_layout; /* scatter with unpack_range */
    umr_layout_t     *own_layout;/* copy the op keeps, freed at release */
    size_t               unpack_count;
    void                 *unpack_base;
    uint64_t             unpack_offset;
    size_t               length;
} uct_mlx5_umr_op_t;


extern uct_tl_t uct_mlx5_umr_tl;

unsigned uct_mlx5_umr_iface_progress(uct_iface_h tl_iface);

/* The engine QP parameters of an endpoint of `iface`. */
void uct_mlx5_umr_iface_ep_qp_params(const uct_mlx5_umr_iface_t *iface,
                                     umr_eng_qp_params_t *params);

/* Progress runs only while there is work (operations outstanding, pending
 * requests, failures to report): armed when work starts, disarmed by
 * progress when it is all done (like UCX's scopy transports). */
void uct_mlx5_umr_iface_progress_arm(uct_mlx5_umr_iface_t *iface);

static inline void *
uct_mlx5_umr_iface_buf(uct_mlx5_umr_iface_t *iface, uct_mlx5_umr_buf_t *buf)
{
    return buf + 1;
}

static inline uct_mlx5_umr_buf_t *
uct_mlx5_umr_iface_buf_get(uct_mlx5_umr_iface_t *iface)
{
    return ucs_mpool_get_inline(&iface->buf_mp);
}

static inline void uct_mlx5_umr_iface_buf_put(uct_mlx5_umr_buf_t *buf)
{
    ucs_mpool_put_inline(buf);
}

static inline int uct_mlx5_umr_iface_has_buf(uct_mlx5_umr_iface_t *iface)
{
    return !ucs_mpool_is_empty(&iface->buf_mp);
}

#endif
