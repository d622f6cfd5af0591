/**
 * mlx5_umr transport: endpoint (one RC QP, connected ep-to-ep).
 */
#ifndef UCT_MLX5_UMR_EP_H_
#define UCT_MLX5_UMR_EP_H_

#include "umr_iface.h"
#include "umr_cache.h"
#include "umr_rcache.h"


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
    uct_mlx5_umr_cache_t cache;
    uct_mlx5_umr_rcache_t rcache;
    uct_umr_ep_stats_t   stats;
};


UCS_CLASS_DECLARE_NEW_FUNC(uct_mlx5_umr_ep_t, uct_ep_t, const uct_ep_params_t*);
UCS_CLASS_DECLARE_DELETE_FUNC(uct_mlx5_umr_ep_t, uct_ep_t);

ucs_status_t uct_mlx5_umr_ep_get_address(uct_ep_h tl_ep, uct_ep_addr_t *addr);
ucs_status_t uct_mlx5_umr_ep_connect_to_ep(uct_ep_h tl_ep,
                                           const uct_device_addr_t *dev_addr,
                                           const uct_ep_addr_t *ep_addr);

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

#endif
