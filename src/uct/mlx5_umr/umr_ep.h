/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: endpoint (one RC QP, connected ep-to-ep).
 */
#ifndef UCT_MLX5_UMR_EP_H_
#define UCT_MLX5_UMR_EP_H_

#include "umr_iface.h"
#include "umr_cache.h"
#include "umr_rkey_cache.h"


/* Reporting of an endpoint's failure to the iface error handler. */
enum {
    UCT_MLX5_UMR_EP_ERR_NONE,       /* no failure */
    UCT_MLX5_UMR_EP_ERR_QUEUED,     /* in iface->failed_eps */
    UCT_MLX5_UMR_EP_ERR_REPORTED    /* handler called: never again */
};


struct uct_mlx5_umr_ep {
    uct_base_ep_t        super;
    umr_eng_qp_t         *qp;
    unsigned             sq_avail;   /* free send queue slots */
    int                  connected;
    int                  fence;      /* next WR waits for prior reads */
    ucs_status_t         status;     /* first failure: the QP is in error */
    ucs_queue_head_t     ops;        /* uct_mlx5_umr_op_t, posting order */
    ucs_queue_head_t     pending;    /* uct_pending_req_t */
    ucs_list_link_t      list;       /* in iface->eps */
    ucs_list_link_t      err_list;   /* in iface->failed_eps until reported */
    ucs_list_link_t      pending_list; /* in iface->pending_eps while
                                          `pending` is not empty */
    int                  err_state;  /* UCT_MLX5_UMR_EP_ERR_* */
    /* the peer's ep address (QP address, then device address) and the
     * hash its device address has on the wire, kept for is_connected */
    uint8_t              peer_ep_addr[2 * UMR_ENG_ADDR_MAX];
    uint64_t             peer_dev_hash;
    uct_mlx5_umr_cache_t cache;
    uct_mlx5_umr_rkey_cache_t rkey_cache;
    uct_umr_ep_stats_t   stats;
};


UCS_CLASS_DECLARE_NEW_FUNC(uct_mlx5_umr_ep_t, uct_ep_t, const uct_ep_params_t*);
UCS_CLASS_DECLARE_DELETE_FUNC(uct_mlx5_umr_ep_t, uct_ep_t);

ucs_status_t uct_mlx5_umr_ep_get_address(uct_ep_h tl_ep, uct_ep_addr_t *addr);
ucs_status_t uct_mlx5_umr_ep_connect_to_ep(uct_ep_h tl_ep,
                                           const uct_device_addr_t *dev_addr,
                                           const uct_ep_addr_t *ep_addr);
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_CONNECT_TO_EP_V2 /* UCX 1.14 */
ucs_status_t
uct_mlx5_umr_ep_connect_to_ep_v2(uct_ep_h tl_ep,
                                 const uct_device_addr_t *dev_addr,
                                 const uct_ep_addr_t *ep_addr,
                                 const uct_ep_connect_to_ep_params_t *params);
#endif
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_IS_CONNECTED /* UCX 1.16 */
int uct_mlx5_umr_ep_is_connected(uct_ep_h tl_ep,
                                 const uct_ep_is_connected_params_t *params);
#endif

ucs_status_t uct_mlx5_umr_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                       unsigned length, uint64_t remote_addr,
                                       uct_rkey_t rkey);
ssize_t uct_mlx5_umr_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                                  void *arg, uint64_t remote_addr,
                                  uct_rkey_t rkey);
ucs_status_t uct_mlx5_umr_ep_get_bcopy(uct_ep_h tl_ep,
                                       uct_unpack_callback_t unpack_cb,
                                       void *arg, size_t length,
                                       uint64_t remote_addr, uct_rkey_t rkey,
                                       uct_completion_t *comp);
ucs_status_t uct_mlx5_umr_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                       size_t iovcnt, uint64_t remote_addr,
                                       uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_mlx5_umr_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                       size_t iovcnt, uint64_t remote_addr,
                                       uct_rkey_t rkey, uct_completion_t *comp);

ucs_status_t uct_mlx5_umr_ep_flush(uct_ep_h tl_ep, unsigned flags,
                                   uct_completion_t *comp);
ucs_status_t uct_mlx5_umr_ep_fence(uct_ep_h tl_ep, unsigned flags);
ucs_status_t uct_mlx5_umr_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                                         unsigned flags);
void uct_mlx5_umr_ep_pending_purge(uct_ep_h tl_ep,
                                   uct_pending_purge_callback_t cb, void *arg);

/* Called from iface progress. */
void uct_mlx5_umr_ep_wr_done(uct_mlx5_umr_op_t *op, ucs_status_t status);
void uct_mlx5_umr_ep_dispatch_pending(uct_mlx5_umr_ep_t *ep);
/* Report a failed endpoint to the iface error handler (once per ep). */
void uct_mlx5_umr_ep_report_failure(uct_mlx5_umr_ep_t *ep);

/* The endpoint failed outside a completion (an async event): its QP is
 * moved to error, so that what is outstanding completes (flushed), and the
 * failure goes to the error handler from progress, once. */
void uct_mlx5_umr_ep_fail(uct_mlx5_umr_ep_t *ep, ucs_status_t status);


/* The endpoint core (umr_ep.c), shared by umr_ep_rma.c and umr_ep_layout.c. */

/* Release what an operation holds; no user callback. */
void uct_mlx5_umr_ep_op_release(uct_mlx5_umr_ep_t *ep, uct_mlx5_umr_op_t *op);

/* Unwind a failed operation and return status: if some of its WRs are
 * queued, progress retires it later without a user completion; otherwise it
 * is released now. */
ucs_status_t uct_mlx5_umr_ep_op_abort(uct_mlx5_umr_ep_t *ep,
                                      uct_mlx5_umr_op_t *op,
                                      ucs_status_t status);

/* Check that [remote_addr, remote_addr + length) is inside the key. */
ucs_status_t
uct_mlx5_umr_ep_check_remote_range(const uct_mlx5_umr_rkey_t *rkey,
                                   uint64_t remote_addr, size_t length);

/* Post the RDMA WRs of op (fragmented at max_msg; slots were checked by the
 * caller) and queue it: UCS_INPROGRESS. Nothing to move: the op is released,
 * UCS_OK. A failed post aborts the op (uct_mlx5_umr_ep_op_abort). */
ucs_status_t uct_mlx5_umr_ep_op_post(uct_mlx5_umr_ep_t *ep,
                                     uct_mlx5_umr_op_t *op,
                                     umr_eng_opcode_t opcode,
                                     const umr_eng_sge_t *sge,
                                     unsigned num_sge, uint64_t total,
                                     uint64_t remote_addr, uint32_t rkey);

/* A new cached local key for op, configured from a lowered plan (entries
 * over memory through lkeys[entry.mem] at base) with `access` (local write
 * when its memory was registered for it): on this QP when its queue
 * can ever hold the plan's UMRs next to the RDMA's frags WRs, else on the
 * md's QP (umr_key.h). The cache entry, identified by (blob, layout) and
 * dropped when one of memh_ids is deregistered, is held by op; on failure
 * nothing is left in the cache. UCS_ERR_NO_RESOURCE when the queue or the
 * key pool must drain first. */
ucs_status_t
uct_mlx5_umr_ep_key_configure(uct_mlx5_umr_ep_t *ep, uct_mlx5_umr_op_t *op,
                              const umr_layout_plan_t *plan, void *base,
                              const uint32_t *lkeys, unsigned frags,
                              const void *blob, size_t blob_len,
                              const umr_layout_t *layout,
                              const uint64_t *memh_ids, unsigned num_memhs,
                              unsigned access);

/* Pack fallback through a bounce buffer: a write packs [offset, +length) of
 * the layout now, a read scatters it at completion (from a copy of the
 * layout the op keeps if keep_copy). *sge addresses the buffer. */
ucs_status_t uct_mlx5_umr_ep_pack_layout(uct_mlx5_umr_ep_t *ep,
                                         uct_mlx5_umr_op_t *op,
                                         umr_eng_opcode_t opcode,
                                         const umr_layout_t *layout,
                                         int keep_copy, size_t count,
                                         void *base, uint64_t offset,
                                         uint64_t length, umr_eng_sge_t *sge);

#endif
