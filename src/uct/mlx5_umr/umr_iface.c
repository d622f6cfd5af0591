/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: interface (see umr_iface.h).
 */
#include "umr_config.h"

#include "umr_iface.h"
#include "umr_ep.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/math.h>
#include <ucs/sys/string.h>
#include <ucs/sys/sys.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <strings.h>


static ucs_config_field_t uct_mlx5_umr_iface_config_table[] = {
    {"", "", NULL,
     ucs_offsetof(uct_mlx5_umr_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},

    {"TX_QUEUE_LEN", "256",
     "Send queue length of each endpoint's queue pair: the number of work\n"
     "requests (RDMA fragments and UMRs) an endpoint may have outstanding;\n"
     "beyond it operations return UCS_ERR_NO_RESOURCE.",
     ucs_offsetof(uct_mlx5_umr_iface_config_t, tx_queue_len),
     UCS_CONFIG_TYPE_UINT},

    {"MAX_IOV", "256",
     "Maximal iovcnt of put/get zcopy. Local entries beyond the NIC's SGE limit\n"
     "are combined into one UMR list key (two levels above the UMR list limit),\n"
     "so this may be far above the hardware SGE count.",
     ucs_offsetof(uct_mlx5_umr_iface_config_t, max_iov), UCS_CONFIG_TYPE_UINT},

    {"CACHE_SIZE", "64",
     "Entries of each endpoint's cache of local UMR keys (least recently used\n"
     "entries are evicted at this bound; their keys return to the md pool).",
     ucs_offsetof(uct_mlx5_umr_iface_config_t, sizes.cache_size),
     UCS_CONFIG_TYPE_UINT},

    {"RCACHE_SIZE", "64",
     "Idle entries kept in each endpoint's cache of unpacked remote keys\n"
     "(uct_umr_ep_rkey_unpack); keys in use are never evicted.",
     ucs_offsetof(uct_mlx5_umr_iface_config_t, sizes.rcache_size),
     UCS_CONFIG_TYPE_UINT},

    /* 24 B: below it a UMR descriptor entry costs about as much as the data */
    {"PACK_THRESH", "24",
     "Zero-copy operations whose local blocks average at most this many bytes\n"
     "are packed into a bounce buffer instead (when they fit in SEG_SIZE):\n"
     "packing tiny blocks is cheaper than one descriptor entry per block.\n"
     "0 disables packing.",
     ucs_offsetof(uct_mlx5_umr_iface_config_t, sizes.pack_thresh),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"SEG_SIZE", "8k",
     "Size of a bounce buffer: the largest put_short/put_bcopy/get_bcopy and\n"
     "the largest packed zero-copy operation.",
     ucs_offsetof(uct_mlx5_umr_iface_config_t, sizes.seg_size),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"NUM_BUFS", "128",
     "Number of registered bounce buffers per interface.",
     ucs_offsetof(uct_mlx5_umr_iface_config_t, sizes.num_bufs),
     UCS_CONFIG_TYPE_UINT},

    {"MAX_MSG", "inf",
     "Largest RDMA message; longer transfers are split into fragments of at\n"
     "most this size (each one work request). 'inf' takes the device limit.",
     ucs_offsetof(uct_mlx5_umr_iface_config_t, max_msg),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"MAX_POLL", "16",
     "Completions polled per call to progress.",
     ucs_offsetof(uct_mlx5_umr_iface_config_t, sizes.max_poll),
     UCS_CONFIG_TYPE_UINT},

    /* keeps UCP from preferring this transport for plain contiguous data */
    {"LATENCY_OVERHEAD", "2us",
     "Added to the engine's latency in the performance estimate, so that UCP,\n"
     "when it loads this transport, prefers established transports for plain\n"
     "contiguous data: the value of mlx5_umr is noncontiguous layouts.",
     ucs_offsetof(uct_mlx5_umr_iface_config_t, latency_overhead),
     UCS_CONFIG_TYPE_TIME},

    /* y: the 1 KiB UMR WQE is what a local key needs on the endpoint's QP
     * (configured there right before its RDMA, no wait); n saves 7/8 of the
     * send queue a peer (docs/hosts.md) but a key cache miss then waits for
     * its UMR on the md's QP. No NIC has measured that wait here: y stays
     * the default until a hardware run shows n is never slower. */
    {"EP_UMR", "y",
     "Configure local UMR keys on each endpoint's own queue pair, right\n"
     "before the RDMA that uses them (y), or create endpoint queue pairs\n"
     "for RDMA only (n): their send queue is then sized for RDMA work\n"
     "requests (32 KiB instead of 256 KiB for 256 requests of 4 SGEs on\n"
     "mlx5) and local keys are configured on the memory domain's queue pair,\n"
     "each cache miss waiting for its UMR to complete.",
     ucs_offsetof(uct_mlx5_umr_iface_config_t, ep_umr),
     UCS_CONFIG_TYPE_STRING},

    {"EP_MAX_SGE", "auto",
     "Scatter/gather entries of an endpoint's RDMA work request: an iov of\n"
     "more entries goes through a UMR list key. 'auto': the device's\n"
     "limit with EP_UMR=y (the UMR work request has the room anyway), 4 with\n"
     "EP_UMR=n (each entry adds 16 bytes to every work request).",
     ucs_offsetof(uct_mlx5_umr_iface_config_t, ep_max_sge),
     UCS_CONFIG_TYPE_STRING},

    /* UCP 1.13 connects a connect-to-ep transport through an auxiliary
     * wireup transport (as rc needs ud); shared-memory-only jobs have none,
     * and UCP never passes layouts: stay out of its way by default. */
    {"UCP_LANES", "n",
     "Report capabilities to an interface opened with a feature request\n"
     "(UCT_IFACE_PARAM_FIELD_FEATURES, as UCP opens them). With 'n' such an\n"
     "interface reports none, so UCP never selects mlx5_umr and a UCP job runs\n"
     "as if the module were not loaded. With 'y' UCP may use it as an RMA lane;\n"
     "it then needs an auxiliary wireup transport (like rc needs ud) and fails\n"
     "to connect in shared-memory-only jobs.",
     ucs_offsetof(uct_mlx5_umr_iface_config_t, ucp_lanes),
     UCS_CONFIG_TYPE_BOOL},

    {NULL}
};


static ucs_status_t uct_mlx5_umr_iface_query(uct_iface_h tl_iface,
                                             uct_iface_attr_t *iface_attr)
{
    uct_mlx5_umr_iface_t *iface = ucs_derived_of(tl_iface,
                                                 uct_mlx5_umr_iface_t);
    const umr_eng_caps_t *caps  = &iface->md->caps;
    size_t max_zcopy;

    uct_base_iface_query(&iface->super, iface_attr);

    /* every fragment is one WR: bound a zcopy by what one queue holds */
    max_zcopy = ucs_min(iface->config.max_msg *
                        (iface->config.tx_queue_len / 2),
                        caps->max_mr_size);

    iface_attr->cap.put.max_short       = iface->config.sizes.seg_size;
    iface_attr->cap.put.max_bcopy       = iface->config.sizes.seg_size;
    iface_attr->cap.put.min_zcopy       = 0;
    iface_attr->cap.put.max_zcopy       = max_zcopy;
    iface_attr->cap.put.opt_zcopy_align = UCS_SYS_PCI_MAX_PAYLOAD;
    iface_attr->cap.put.align_mtu       = UCS_SYS_PCI_MAX_PAYLOAD;
    iface_attr->cap.put.max_iov         = iface->config.max_iov;

    iface_attr->cap.get.max_bcopy       = iface->config.sizes.seg_size;
    iface_attr->cap.get.min_zcopy       = 0;
    iface_attr->cap.get.max_zcopy       = max_zcopy;
    iface_attr->cap.get.opt_zcopy_align = UCS_SYS_PCI_MAX_PAYLOAD;
    iface_attr->cap.get.align_mtu       = UCS_SYS_PCI_MAX_PAYLOAD;
    iface_attr->cap.get.max_iov         = iface->config.max_iov;

    iface_attr->device_addr_len = sizeof(uint64_t);
    iface_attr->iface_addr_len  = sizeof(uct_mlx5_umr_iface_addr_t) +
                                  caps->dev_addr_len;
    iface_attr->ep_addr_len     = caps->qp_addr_len + caps->dev_addr_len;
    /* the device's QPs bound the endpoints (pml/umr derives its budget
     * of connected peers from it); 0: no limit known */
    if (caps->max_qp != 0) {
        iface_attr->max_num_eps = ucs_min(iface_attr->max_num_eps,
                                          (size_t)caps->max_qp);
    }
    iface_attr->max_conn_priv   = 0;
    iface_attr->cap.flags       = UCT_IFACE_FLAG_PUT_SHORT |
                                  UCT_IFACE_FLAG_PUT_BCOPY |
                                  UCT_IFACE_FLAG_PUT_ZCOPY |
                                  UCT_IFACE_FLAG_GET_BCOPY |
                                  UCT_IFACE_FLAG_GET_ZCOPY |
                                  UCT_IFACE_FLAG_PENDING   |
                                  UCT_IFACE_FLAG_CONNECT_TO_EP |
                                  UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE;
    iface_attr->cap.event_flags = 0;

    iface_attr->latency             = ucs_linear_func_make(
            caps->latency + iface->config.latency_overhead, 0);
    iface_attr->bandwidth.dedicated = 0;
    iface_attr->bandwidth.shared    = caps->bandwidth;
    iface_attr->overhead            = 1e-6;
    iface_attr->priority            = 0;

    if (iface->config.hide_caps) {
        /* see UCP_LANES: no operation, so a multi-transport layer never
         * selects us; UCP still requires a connection mode */
        iface_attr->cap.flags = UCT_IFACE_FLAG_CONNECT_TO_EP;
    }
    return UCS_OK;
}

static ucs_status_t
uct_mlx5_umr_iface_get_device_address(uct_iface_h tl_iface,
                                      uct_device_addr_t *addr)
{
    uct_mlx5_umr_iface_t *iface = ucs_derived_of(tl_iface,
                                                 uct_mlx5_umr_iface_t);

    uint64_t dev_addr[UMR_ENG_ADDR_MAX / sizeof(uint64_t)];
    uint64_t hash;

    iface->eng->dev_get_addr(iface->md->dev, dev_addr);
    hash = uct_mlx5_umr_hash(dev_addr, iface->md->caps.dev_addr_len);
    memcpy(addr, &hash, sizeof(hash));
    return UCS_OK;
}

static uint8_t uct_mlx5_umr_iface_engine_id(uct_mlx5_umr_iface_t *iface)
{
    return (uint8_t)iface->eng->id;
}

static ucs_status_t uct_mlx5_umr_iface_get_address(uct_iface_h tl_iface,
                                                   uct_iface_addr_t *addr)
{
    uct_mlx5_umr_iface_t *iface = ucs_derived_of(tl_iface,
                                                 uct_mlx5_umr_iface_t);

    uct_mlx5_umr_iface_addr_t *iface_addr = (uct_mlx5_umr_iface_addr_t*)addr;
    uint64_t dev_addr[UMR_ENG_ADDR_MAX / sizeof(uint64_t)];

    /* the engine writes an aligned buffer; the address is unaligned */
    iface->eng->dev_get_addr(iface->md->dev, dev_addr);
    iface_addr->engine = uct_mlx5_umr_iface_engine_id(iface);
    memcpy(iface_addr->dev_addr, dev_addr, iface->md->caps.dev_addr_len);
    return UCS_OK;
}

/* Whether the interface at (dev_addr, iface_addr) is reachable; `reason`
 * says why not. The iface address decides: sw reaches processes of this host
 * only, and engines never mix. */
static int uct_mlx5_umr_iface_reachable(uct_mlx5_umr_iface_t *iface,
                                        const uct_iface_addr_t *iface_addr,
                                        const char **reason)
{
    const uct_mlx5_umr_iface_addr_t *addr = (const void*)iface_addr;
    uint64_t peer_dev[UMR_ENG_ADDR_MAX / sizeof(uint64_t)];

    if (addr == NULL) {
        *reason = "no interface address";
        return 0;
    }

    if (addr->engine != uct_mlx5_umr_iface_engine_id(iface)) {
        *reason = "the peer uses another engine";
        return 0;
    }

    uct_mlx5_umr_md_check_events(iface->md, 0);
    if (iface->md->failed != UCS_OK) {
        *reason = "the rail is retired (port down or address changed)";
        return 0;
    }

    /* addresses come unaligned off the wire: the engine gets an aligned copy */
    memcpy(peer_dev, addr->dev_addr, iface->md->caps.dev_addr_len);
    if (!iface->eng->dev_is_reachable(iface->md->dev, peer_dev)) {
        *reason = (iface->eng->id == UMR_ENG_ID_SW) ?
                  "the peer is on another host (sw engine)" :
                  "the peer's device is not reachable";
        return 0;
    }

    return 1;
}

static int uct_mlx5_umr_iface_is_reachable(const uct_iface_h tl_iface,
                                           const uct_device_addr_t *dev_addr,
                                           const uct_iface_addr_t *iface_addr)
{
    const char *reason;

    return uct_mlx5_umr_iface_reachable(ucs_derived_of(tl_iface,
                                                       uct_mlx5_umr_iface_t),
                                        iface_addr, &reason);
}

#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_IFACE_IS_REACHABLE_V2 /* UCX 1.15 */
/* Device scope asks whether the addresses name this very device (the
 * device address is the hash of the engine's); network scope whether the
 * peer can be reached. A reason goes to info_string when one is given. */
static int
uct_mlx5_umr_iface_is_reachable_v2(const uct_iface_h tl_iface,
                                   const uct_iface_is_reachable_params_t *params)
{
    uct_mlx5_umr_iface_t *iface = ucs_derived_of(tl_iface,
                                                 uct_mlx5_umr_iface_t);
    const char *reason          = NULL;
    uint64_t dev_addr;
    int reachable;

    if ((params->field_mask & UCT_IFACE_IS_REACHABLE_FIELD_IFACE_ADDR) == 0) {
        reason    = "no interface address";
        reachable = 0;
    } else {
        reachable = uct_mlx5_umr_iface_reachable(iface, params->iface_addr,
                                                 &reason);
    }

    if (reachable && umr_uct_is_reachable_scope_device(params)) {
        uct_mlx5_umr_iface_get_device_address(tl_iface, (void*)&dev_addr);
        if (!(params->field_mask & UCT_IFACE_IS_REACHABLE_FIELD_DEVICE_ADDR) ||
            memcmp(params->device_addr, &dev_addr, sizeof(dev_addr))) {
            reason    = "device address is different";
            reachable = 0;
        }
    }

    if (!reachable &&
        (params->field_mask & UCT_IFACE_IS_REACHABLE_FIELD_INFO_STRING) &&
        (params->info_string != NULL) && (params->info_string_length > 0)) {
        ucs_snprintf_zero(params->info_string, params->info_string_length,
                          "%s", reason);
    }
    return reachable;
}
#endif

/* The device's async events (umr_md.h): a port that went down or an
 * address that changed retires the rail, so every endpoint fails, idle ones
 * too; a failed QP fails its endpoint. */
static void
uct_mlx5_umr_iface_event(uct_mlx5_umr_md_event_listener_t *listener,
                         const umr_eng_event_t *event)
{
    uct_mlx5_umr_iface_t *iface = ucs_container_of(listener,
                                                   uct_mlx5_umr_iface_t,
                                                   event_listener);
    uct_mlx5_umr_ep_t *ep;

    switch (event->type) {
    case UMR_ENG_EVENT_PORT_ERR:
    case UMR_ENG_EVENT_ADDR_CHANGE:
    case UMR_ENG_EVENT_DEVICE_FATAL:
        ucs_list_for_each(ep, &iface->eps, list) {
            uct_mlx5_umr_ep_fail(ep, UCS_ERR_UNREACHABLE);
        }
        break;
    case UMR_ENG_EVENT_QP_FAILED:
        ucs_list_for_each(ep, &iface->eps, list) {
            if (ep->qp == event->qp) {
                uct_mlx5_umr_ep_fail(ep, UCS_ERR_CONNECTION_RESET);
            }
        }
        break;
    default:
        break;
    }
}

void uct_mlx5_umr_iface_progress_arm(uct_mlx5_umr_iface_t *iface)
{
    uct_mlx5_umr_md_check_events(iface->md, 0);
    uct_worker_progress_register_safe(&iface->super.worker->super,
                                      (ucs_callback_t)uct_mlx5_umr_iface_progress,
                                      iface, UCS_CALLBACKQ_FLAG_FAST,
                                      &iface->super.prog.id);
}

unsigned uct_mlx5_umr_iface_progress(uct_iface_h tl_iface)
{
    uct_mlx5_umr_iface_t *iface = ucs_derived_of(tl_iface,
                                                 uct_mlx5_umr_iface_t);
    umr_eng_wc_t wcs[iface->config.sizes.max_poll];
    uct_mlx5_umr_ep_t *ep, *tmp;
    uct_mlx5_umr_op_t *op;
    ucs_status_t status;
    int i, n;

    int failed = 0;

    /* async events, non-blocking (a port that went down fails the eps
     * before their retries run out) */
    uct_mlx5_umr_md_check_events(iface->md, 0);

    n = iface->eng->cq_poll(iface->cq, wcs, iface->config.sizes.max_poll);
    if (ucs_unlikely(n < 0)) {
        ucs_error("mlx5_umr iface %p: CQ error: %s", iface,
                  ucs_status_string((ucs_status_t)n));
        return 0;
    }

    iface->cq_avail += n;
    for (i = 0; i < n; ++i) {
        op     = (uct_mlx5_umr_op_t*)(uintptr_t)wcs[i].wr_id;
        status = umr_eng_wc_status_to_ucs(wcs[i].status);
        if (ucs_unlikely(status != UCS_OK)) {
            ucs_log((wcs[i].status == UMR_ENG_WC_WR_FLUSH_ERR) ?
                    UCS_LOG_LEVEL_DEBUG : UCS_LOG_LEVEL_DIAG,
                    "mlx5_umr ep %p: %s failed: %s", op->ep,
                    umr_eng_opcode_str(wcs[i].opcode),
                    umr_eng_wc_status_str(wcs[i].status));
            failed = 1;
            if (wcs[i].opcode == UMR_ENG_OP_UMR) {
                uct_mlx5_umr_md_umr_failed(iface->md, wcs[i].status);
            }
        }
        uct_mlx5_umr_ep_wr_done(op, status);
    }

    if (ucs_unlikely(failed)) {
        /* a failure may come with an event that says more (port down) */
        uct_mlx5_umr_md_check_events(iface->md, 1);
    }

    /* after the whole batch: a handler may destroy its ep (and others) */
    while (ucs_unlikely(!ucs_list_is_empty(&iface->failed_eps))) {
        uct_mlx5_umr_ep_report_failure(
                ucs_list_head(&iface->failed_eps, uct_mlx5_umr_ep_t, err_list));
    }

    if (n > 0) {
        /* only eps that have pending requests; each leaves when drained */
        ucs_list_for_each_safe(ep, tmp, &iface->pending_eps, pending_list) {
            uct_mlx5_umr_ep_dispatch_pending(ep);
        }
    }

    if ((iface->outstanding == 0) && ucs_list_is_empty(&iface->pending_eps) &&
        ucs_list_is_empty(&iface->failed_eps)) {
        uct_worker_progress_unregister_safe(&iface->super.worker->super,
                                            &iface->super.prog.id);
    }

    return n;
}

static ucs_status_t uct_mlx5_umr_iface_flush(uct_iface_h tl_iface,
                                             unsigned flags,
                                             uct_completion_t *comp)
{
    uct_mlx5_umr_iface_t *iface = ucs_derived_of(tl_iface,
                                                 uct_mlx5_umr_iface_t);

    if (comp != NULL) {
        return UCS_ERR_UNSUPPORTED;
    }

    if (iface->outstanding != 0) {
        UCT_TL_IFACE_STAT_FLUSH_WAIT(&iface->super);
        return UCS_INPROGRESS;
    }

    UCT_TL_IFACE_STAT_FLUSH(&iface->super);
    return UCS_OK;
}

static ucs_status_t uct_mlx5_umr_iface_fence(uct_iface_h tl_iface,
                                             unsigned flags)
{
    uct_mlx5_umr_iface_t *iface = ucs_derived_of(tl_iface,
                                                 uct_mlx5_umr_iface_t);
    uct_mlx5_umr_ep_t *ep;

    ucs_list_for_each(ep, &iface->eps, list) {
        ep->fence = 1;
    }
    UCT_TL_IFACE_STAT_FENCE(&iface->super);
    return UCS_OK;
}

/* RMA only; a stub of the right type: ssize_t, not a cast int stub */
static ssize_t uct_mlx5_umr_ep_am_bcopy(uct_ep_h ep, uint8_t id,
                                        uct_pack_callback_t pack_cb, void *arg,
                                        unsigned flags)
{
    return UCS_ERR_UNSUPPORTED;
}

static UCS_CLASS_DECLARE_DELETE_FUNC(uct_mlx5_umr_iface_t, uct_iface_t);

static uct_iface_ops_t uct_mlx5_umr_iface_tl_ops = {
    .ep_put_short             = uct_mlx5_umr_ep_put_short,
    .ep_put_bcopy             = uct_mlx5_umr_ep_put_bcopy,
    .ep_put_zcopy             = uct_mlx5_umr_ep_put_zcopy,
    .ep_get_short             = UMR_UCS_STUB(uct_ep_get_short_func_t, ucs_empty_function_return_unsupported),
    .ep_get_bcopy             = uct_mlx5_umr_ep_get_bcopy,
    .ep_get_zcopy             = uct_mlx5_umr_ep_get_zcopy,
    .ep_am_short              = UMR_UCS_STUB(uct_ep_am_short_func_t, ucs_empty_function_return_unsupported),
    .ep_am_short_iov          = UMR_UCS_STUB(uct_ep_am_short_iov_func_t, ucs_empty_function_return_unsupported),
    .ep_am_bcopy              = uct_mlx5_umr_ep_am_bcopy,
    .ep_am_zcopy              = UMR_UCS_STUB(uct_ep_am_zcopy_func_t, ucs_empty_function_return_unsupported),
    .ep_atomic_cswap64        = UMR_UCS_STUB(uct_ep_atomic_cswap64_func_t, ucs_empty_function_return_unsupported),
    .ep_atomic_cswap32        = UMR_UCS_STUB(uct_ep_atomic_cswap32_func_t, ucs_empty_function_return_unsupported),
    .ep_atomic32_post         = UMR_UCS_STUB(uct_ep_atomic32_post_func_t, ucs_empty_function_return_unsupported),
    .ep_atomic64_post         = UMR_UCS_STUB(uct_ep_atomic64_post_func_t, ucs_empty_function_return_unsupported),
    .ep_atomic32_fetch        = UMR_UCS_STUB(uct_ep_atomic32_fetch_func_t, ucs_empty_function_return_unsupported),
    .ep_atomic64_fetch        = UMR_UCS_STUB(uct_ep_atomic64_fetch_func_t, ucs_empty_function_return_unsupported),
    /* no tag offload */
    .ep_tag_eager_short       = UMR_UCS_STUB(uct_ep_tag_eager_short_func_t, ucs_empty_function_return_unsupported),
    .ep_tag_eager_bcopy       = UMR_UCS_STUB(uct_ep_tag_eager_bcopy_func_t, ucs_empty_function_return_unsupported),
    .ep_tag_eager_zcopy       = UMR_UCS_STUB(uct_ep_tag_eager_zcopy_func_t, ucs_empty_function_return_unsupported),
    .ep_tag_rndv_zcopy        = UMR_UCS_STUB(uct_ep_tag_rndv_zcopy_func_t, ucs_empty_function_return_unsupported),
    .ep_tag_rndv_cancel       = UMR_UCS_STUB(uct_ep_tag_rndv_cancel_func_t, ucs_empty_function_return_unsupported),
    .ep_tag_rndv_request      = UMR_UCS_STUB(uct_ep_tag_rndv_request_func_t, ucs_empty_function_return_unsupported),
    .iface_tag_recv_zcopy     = UMR_UCS_STUB(uct_iface_tag_recv_zcopy_func_t, ucs_empty_function_return_unsupported),
    .iface_tag_recv_cancel    = UMR_UCS_STUB(uct_iface_tag_recv_cancel_func_t, ucs_empty_function_return_unsupported),
    .ep_pending_add           = uct_mlx5_umr_ep_pending_add,
    .ep_pending_purge         = uct_mlx5_umr_ep_pending_purge,
    .ep_flush                 = uct_mlx5_umr_ep_flush,
    .ep_fence                 = uct_mlx5_umr_ep_fence,
    .ep_check                 = UMR_UCS_STUB(uct_ep_check_func_t, ucs_empty_function_return_unsupported),
    .ep_create                = UCS_CLASS_NEW_FUNC_NAME(uct_mlx5_umr_ep_t),
    /* connect-to-ep only: no connection manager */
    .ep_connect               = UMR_UCS_STUB(uct_ep_connect_func_t, ucs_empty_function_return_unsupported),
    .ep_disconnect            = UMR_UCS_STUB(uct_ep_disconnect_func_t, ucs_empty_function_return_unsupported),
    .cm_ep_conn_notify        = UMR_UCS_STUB(uct_cm_ep_conn_notify_func_t, ucs_empty_function_return_unsupported),
    .ep_destroy               = UCS_CLASS_DELETE_FUNC_NAME(uct_mlx5_umr_ep_t),
    .ep_get_address           = uct_mlx5_umr_ep_get_address,
    .ep_connect_to_ep         = uct_mlx5_umr_ep_connect_to_ep,
    .iface_accept             = UMR_UCS_STUB(uct_iface_accept_func_t, ucs_empty_function_return_unsupported),
    .iface_reject             = UMR_UCS_STUB(uct_iface_reject_func_t, ucs_empty_function_return_unsupported),
    .iface_flush              = uct_mlx5_umr_iface_flush,
    .iface_fence              = uct_mlx5_umr_iface_fence,
    /* progress is armed while there is work, see progress_arm */
    .iface_progress_enable    = UMR_UCS_STUB(uct_iface_progress_enable_func_t, ucs_empty_function),
    .iface_progress_disable   = UMR_UCS_STUB(uct_iface_progress_disable_func_t, ucs_empty_function),
    .iface_progress           = uct_mlx5_umr_iface_progress,
    .iface_event_fd_get       = UMR_UCS_STUB(uct_iface_event_fd_get_func_t, ucs_empty_function_return_unsupported),
    .iface_event_arm          = UMR_UCS_STUB(uct_iface_event_arm_func_t, ucs_empty_function_return_unsupported),
    .iface_close              = UCS_CLASS_DELETE_FUNC_NAME(uct_mlx5_umr_iface_t),
    .iface_query              = uct_mlx5_umr_iface_query,
    .iface_get_device_address = uct_mlx5_umr_iface_get_device_address,
    .iface_get_address        = uct_mlx5_umr_iface_get_address,
    .iface_is_reachable       = uct_mlx5_umr_iface_is_reachable
};

/* UCX calls every slot of its release (umr_uct_compat.h fails the build on
 * one it does not know): each slot that appeared after 1.13 sits under the
 * probe that found it, with a real implementation or the default UCX's own
 * transports give it. */
static uct_iface_internal_ops_t uct_mlx5_umr_iface_internal_ops = {
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_IFACE_QUERY_V2 /* 1.20, 1.22 */
    .iface_query_v2         = uct_iface_base_query_v2,
#endif
    .iface_estimate_perf    = uct_base_iface_estimate_perf,
    .iface_vfs_refresh      = UMR_UCS_STUB(uct_iface_vfs_refresh_func_t,
                                           ucs_empty_function),
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_IFACE_MEM_ELEMENT_PACK /* 1.20 only */
    .iface_mem_element_pack = UMR_UCS_STUB(uct_iface_mem_element_pack_func_t,
                                           ucs_empty_function_return_unsupported),
#endif
    .ep_query               = UMR_UCS_STUB(uct_ep_query_func_t,
                                           ucs_empty_function_return_unsupported),
    .ep_invalidate          = UMR_UCS_STUB(uct_ep_invalidate_func_t,
                                           ucs_empty_function_return_unsupported),
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_CONNECT_TO_EP_V2 /* 1.14 */
    .ep_connect_to_ep_v2    = uct_mlx5_umr_ep_connect_to_ep_v2,
#endif
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_IFACE_IS_REACHABLE_V2 /* 1.15 */
    .iface_is_reachable_v2  = uct_mlx5_umr_iface_is_reachable_v2,
#endif
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_IS_CONNECTED /* 1.16 */
    .ep_is_connected        = uct_mlx5_umr_ep_is_connected,
#endif
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_GET_DEVICE_EP /* 1.20: GPU device API */
    .ep_get_device_ep       = UMR_UCS_STUB(uct_ep_get_device_ep_func_t,
                                           ucs_empty_function_return_unsupported),
#endif
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_PUT_SGL_ZCOPY /* 1.22; no V2 cap flag */
    .ep_put_sgl_zcopy       = UMR_UCS_STUB(uct_ep_put_sgl_zcopy_func_t,
                                           ucs_empty_function_return_unsupported),
#endif
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_GET_SGL_ZCOPY /* 1.23 */
    .ep_get_sgl_zcopy       = UMR_UCS_STUB(uct_ep_get_sgl_zcopy_func_t,
                                           ucs_empty_function_return_unsupported),
#endif
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_OUTSTANDING_PURGE /* 1.23; no token cap */
    .ep_outstanding_purge   = UMR_UCS_STUB(uct_ep_outstanding_purge_func_t,
                                           ucs_empty_function_return_unsupported),
#endif
};

static ucs_mpool_ops_t uct_mlx5_umr_op_mpool_ops = {
    .chunk_alloc   = ucs_mpool_chunk_malloc,
    .chunk_release = ucs_mpool_chunk_free
};

/* Bounce buffer chunks: allocated and registered with the engine; the
 * registration sits in front of the chunk. */
typedef struct {
    umr_eng_mr_t *mr;
} UCS_V_ALIGNED(UCS_SYS_CACHE_LINE_SIZE) uct_mlx5_umr_buf_chunk_t;

static ucs_status_t uct_mlx5_umr_buf_chunk_alloc(ucs_mpool_t *mp,
                                                 size_t *size_p,
                                                 void **chunk_p)
{
    uct_mlx5_umr_iface_t *iface = ucs_container_of(mp, uct_mlx5_umr_iface_t,
                                                   buf_mp);
    size_t size = sizeof(uct_mlx5_umr_buf_chunk_t) + *size_p;
    uct_mlx5_umr_buf_chunk_t *chunk;
    ucs_status_t status;

    if (ucs_posix_memalign((void**)&chunk, UCS_SYS_CACHE_LINE_SIZE, size,
                           "mlx5_umr bounce buffers") != 0) {
        return UCS_ERR_NO_MEMORY;
    }

    status = iface->eng->mr_reg(iface->md->dev, chunk + 1, *size_p,
                                UMR_ENG_ACCESS_LOCAL_WRITE, &chunk->mr);
    if (status != UCS_OK) {
        ucs_error("mlx5_umr: registering %zu bytes of bounce buffers failed: "
                  "%s", *size_p, ucs_status_string(status));
        ucs_free(chunk);
        return status;
    }

    *chunk_p = chunk + 1;
    return UCS_OK;
}

static void uct_mlx5_umr_buf_chunk_release(ucs_mpool_t *mp, void *chunk)
{
    uct_mlx5_umr_iface_t *iface = ucs_container_of(mp, uct_mlx5_umr_iface_t,
                                                   buf_mp);
    uct_mlx5_umr_buf_chunk_t *hdr = (uct_mlx5_umr_buf_chunk_t*)chunk - 1;

    iface->eng->mr_dereg(iface->md->dev, hdr->mr);
    ucs_free(hdr);
}

static void uct_mlx5_umr_buf_init(ucs_mpool_t *mp, void *obj, void *chunk)
{
    uct_mlx5_umr_buf_chunk_t *hdr = (uct_mlx5_umr_buf_chunk_t*)chunk - 1;

    ((uct_mlx5_umr_buf_t*)obj)->lkey = hdr->mr->lkey;
}

static ucs_mpool_ops_t uct_mlx5_umr_buf_mpool_ops = {
    .chunk_alloc   = uct_mlx5_umr_buf_chunk_alloc,
    .chunk_release = uct_mlx5_umr_buf_chunk_release,
    .obj_init      = uct_mlx5_umr_buf_init
};

/* NUM_BUFS buffers in one registered chunk, created now: a registration
 * failure fails the iface instead of every later bounce operation. */
static ucs_status_t uct_mlx5_umr_iface_bufs_init(uct_mlx5_umr_iface_t *self)
{
    ucs_status_t status;

    status = umr_ucs_mpool_init(&self->buf_mp,
                                sizeof(uct_mlx5_umr_buf_t) +
                                self->config.sizes.seg_size,
                                sizeof(uct_mlx5_umr_buf_t),
                                UCS_SYS_CACHE_LINE_SIZE,
                                self->config.sizes.num_bufs,
                                self->config.sizes.num_bufs,
                                &uct_mlx5_umr_buf_mpool_ops,
                                "mlx5_umr bounce buffers");
    if (status != UCS_OK) {
        return status;
    }

    ucs_mpool_grow(&self->buf_mp, self->config.sizes.num_bufs);
    if (self->buf_mp.freelist == NULL) {
        ucs_mpool_cleanup(&self->buf_mp, 0);
        return UCS_ERR_NO_MEMORY;
    }
    return UCS_OK;
}

/* SGEs of an RDMA-only endpoint's work request by default: 4 x 16 B after
 * the 32 B of ctrl and remote address fill two 64 B basic blocks */
#define UCT_MLX5_UMR_EP_RDMA_SGE  4

/* EP_UMR and EP_MAX_SGE, with errors that name the variable (UCX's parser
 * names the field without its prefix and reads "4x" as 4). */
static ucs_status_t
uct_mlx5_umr_iface_parse_ep(uct_mlx5_umr_iface_t *self,
                            const uct_mlx5_umr_iface_config_t *config,
                            const uct_mlx5_umr_md_t *md)
{
    static const char *yes[] = {"y", "yes", "on", "1"};
    static const char *no[]  = {"n", "no", "off", "0"};
    unsigned dev_max         = ucs_max(md->caps.max_sge, 1);
    unsigned long n;
    char *end;
    int i;

    self->config.ep_umr = -1;
    for (i = 0; i < (int)ucs_static_array_size(yes); ++i) {
        if (!strcasecmp(config->ep_umr, yes[i])) {
            self->config.ep_umr = 1;
        } else if (!strcasecmp(config->ep_umr, no[i])) {
            self->config.ep_umr = 0;
        }
    }
    if (self->config.ep_umr < 0) {
        ucs_error("mlx5_umr: UCX_%sEP_UMR=%s: expected y (local keys on the "
                  "endpoint's queue pair) or n (endpoint queue pairs for RDMA "
                  "only)", UCT_MLX5_UMR_CONFIG_PREFIX, config->ep_umr);
        return UCS_ERR_INVALID_PARAM;
    }

    if (!strcasecmp(config->ep_max_sge, "auto")) {
        self->config.max_sge = self->config.ep_umr ? dev_max :
                               ucs_min(UCT_MLX5_UMR_EP_RDMA_SGE, dev_max);
        return UCS_OK;
    }

    errno = 0;
    n     = strtoul(config->ep_max_sge, &end, 10);
    if ((errno != 0) || (end == config->ep_max_sge) || (*end != '\0') ||
        !isdigit((unsigned char)config->ep_max_sge[0]) || (n < 1) ||
        (n > dev_max)) {
        ucs_error("mlx5_umr: UCX_%sEP_MAX_SGE=%s: expected auto or a number "
                  "of SGEs from 1 to %u (the limit of %s)",
                  UCT_MLX5_UMR_CONFIG_PREFIX, config->ep_max_sge, dev_max,
                  md->caps.name);
        return UCS_ERR_INVALID_PARAM;
    }
    self->config.max_sge = (unsigned)n;
    return UCS_OK;
}

void uct_mlx5_umr_iface_ep_qp_params(const uct_mlx5_umr_iface_t *iface,
                                     umr_eng_qp_params_t *params)
{
    memset(params, 0, sizeof(*params));
    params->sq_size          = iface->config.tx_queue_len;
    params->max_sge          = iface->config.max_sge;
    params->rdma_only        = !iface->config.ep_umr;
    params->umr_list_entries = iface->config.ep_umr ?
                               iface->md->config.mkey_entries : 0;
}

ucs_status_t uct_umr_iface_query(uct_iface_h tl_iface,
                                 uct_umr_iface_attr_t *attr)
{
    uct_mlx5_umr_iface_t *iface;

    if ((tl_iface == NULL) || (attr == NULL) ||
        (tl_iface->ops.ep_put_zcopy != uct_mlx5_umr_ep_put_zcopy)) {
        ucs_error("uct_umr_iface_query: iface %p is not an mlx5_umr "
                  "interface (or attr is NULL)", tl_iface);
        return UCS_ERR_INVALID_PARAM;
    }

    iface = ucs_derived_of(tl_iface, uct_mlx5_umr_iface_t);
    memset(attr, 0, sizeof(*attr));
    attr->ep_sq_bytes = iface->config.ep_sq_bytes;
    attr->ep_sq_len   = iface->config.tx_queue_len;
    attr->ep_max_sge  = iface->config.max_sge;
    attr->ep_umr      = iface->config.ep_umr;
    return UCS_OK;
}

/*
 * The UCT API contract of am_alignment/am_align_offset (uct.h): the alignment
 * is a power of 2, the offset needs an alignment and lies below it. mlx5_umr
 * has no active messages, so the values only need to be valid. UCX's own
 * helper rejects an offset without an alignment (as UCX's AM transports do);
 * UCX 1.13.1 checks the rest only indirectly (its AM transports fail a 0 or
 * non-power-of-2 alignment in their receive mpool), so check it here.
 */
static ucs_status_t
uct_mlx5_umr_iface_check_am_alignment(const uct_iface_params_t *params)
{
    size_t align, align_offset;
    ucs_status_t status;

    status = uct_iface_param_am_alignment(params, SIZE_MAX, 0, 0, &align,
                                          &align_offset);
    if ((status != UCS_OK) ||
        !(params->field_mask & UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT)) {
        return status;
    }

    if (!ucs_is_pow2(params->am_alignment)) {
        ucs_error("mlx5_umr: am_alignment %zu is not a power of 2",
                  params->am_alignment);
        return UCS_ERR_INVALID_PARAM;
    }

    if ((params->field_mask & UCT_IFACE_PARAM_FIELD_AM_ALIGN_OFFSET) &&
        (params->am_align_offset >= params->am_alignment)) {
        ucs_error("mlx5_umr: am_align_offset %zu is not less than "
                  "am_alignment %zu", params->am_align_offset,
                  params->am_alignment);
        return UCS_ERR_INVALID_PARAM;
    }

    return UCS_OK;
}

static UCS_CLASS_INIT_FUNC(uct_mlx5_umr_iface_t, uct_md_h tl_md,
                           uct_worker_h worker,
                           const uct_iface_params_t *params,
                           const uct_iface_config_t *tl_config)
{
    const uct_mlx5_umr_iface_config_t *config =
            ucs_derived_of(tl_config, uct_mlx5_umr_iface_config_t);
    uct_mlx5_umr_md_t *md = ucs_derived_of(tl_md, uct_mlx5_umr_md_t);
    umr_eng_qp_params_t ep_qp;
    ucs_status_t status;

    UCT_CHECK_PARAM(params->field_mask & UCT_IFACE_PARAM_FIELD_OPEN_MODE,
                    "UCT_IFACE_PARAM_FIELD_OPEN_MODE is not defined");
    if (!(params->open_mode & UCT_IFACE_OPEN_MODE_DEVICE)) {
        ucs_error("mlx5_umr: only UCT_IFACE_OPEN_MODE_DEVICE is supported");
        return UCS_ERR_UNSUPPORTED;
    }

    status = uct_mlx5_umr_iface_check_am_alignment(params);
    if (status != UCS_OK) {
        return status;
    }

    UCS_CLASS_CALL_SUPER_INIT(
            uct_base_iface_t, &uct_mlx5_umr_iface_tl_ops,
            &uct_mlx5_umr_iface_internal_ops, tl_md, worker, params,
            tl_config UCS_STATS_ARG(
                    (params->field_mask & UCT_IFACE_PARAM_FIELD_STATS_ROOT) ?
                            params->stats_root :
                            NULL) UCS_STATS_ARG(params->mode.device.dev_name));

    if ((config->tx_queue_len < 2) || (config->max_iov < 1) ||
        (config->sizes.cache_size < 1) || (config->sizes.num_bufs < 1) ||
        (config->sizes.seg_size < 64) || (config->sizes.max_poll < 1)) {
        ucs_error("mlx5_umr: invalid configuration: TX_QUEUE_LEN=%u (>= 2) "
                  "MAX_IOV=%u CACHE_SIZE=%u NUM_BUFS=%u MAX_POLL=%u (>= 1) "
                  "SEG_SIZE=%zu (>= 64)", config->tx_queue_len,
                  config->max_iov, config->sizes.cache_size,
                  config->sizes.num_bufs, config->sizes.max_poll,
                  config->sizes.seg_size);
        return UCS_ERR_INVALID_PARAM;
    }

    if (sizeof(uct_mlx5_umr_iface_addr_t) + md->caps.dev_addr_len >
        UCT_MLX5_UMR_IFACE_ADDR_MAX) {
        ucs_error("mlx5_umr: %s engine device address of %zu bytes does not "
                  "fit an iface address", md->eng->name,
                  md->caps.dev_addr_len);
        return UCS_ERR_UNSUPPORTED;
    }

    self->md                      = md;
    self->eng                     = md->eng;
    self->outstanding             = 0;
    self->config.tx_queue_len     = ucs_min(config->tx_queue_len,
                                            md->caps.max_qp_wr);
    /* two levels of UMR lists at most */
    self->config.max_iov          = ucs_min(config->max_iov,
                                            md->limits.max_list *
                                            md->limits.max_list);
    self->config.sizes            = config->sizes;
    self->config.max_msg          = ucs_max(ucs_min(config->max_msg,
                                                    md->caps.max_msg), 1);
    self->config.latency_overhead = config->latency_overhead;
    self->config.hide_caps        = !config->ucp_lanes &&
                                    (params->field_mask &
                                     UCT_IFACE_PARAM_FIELD_FEATURES);
    status = uct_mlx5_umr_iface_parse_ep(self, config, md);
    if (status != UCS_OK) {
        return status;
    }

    /* what a connected peer costs: the engine sizes the endpoint's QP */
    uct_mlx5_umr_iface_ep_qp_params(self, &ep_qp);
    self->config.ep_sq_bytes = self->eng->qp_sq_bytes(md->dev, &ep_qp);
    ucs_debug("mlx5_umr iface %p: endpoint QPs %s, %u WRs, %u SGEs: %zu B "
              "of send queue each", self,
              self->config.ep_umr ? "with UMR" : "RDMA only",
              ep_qp.sq_size, ep_qp.max_sge, self->config.ep_sq_bytes);
    ucs_list_head_init(&self->eps);
    ucs_list_head_init(&self->failed_eps);
    ucs_list_head_init(&self->pending_eps);
    self->event_listener.event = uct_mlx5_umr_iface_event;

    /* every ep's queue fits: a CQ overrun would be fatal on hardware */
    self->cq_avail = self->config.tx_queue_len * 16;
    status = self->eng->cq_create(md->dev, self->cq_avail, &self->cq);
    if (status != UCS_OK) {
        ucs_error("mlx5_umr: cq_create failed: %s", ucs_status_string(status));
        goto err;
    }

    status = umr_ucs_mpool_init(&self->op_mp, sizeof(uct_mlx5_umr_op_t), 0,
                                UCS_SYS_CACHE_LINE_SIZE, 256, UINT_MAX,
                                &uct_mlx5_umr_op_mpool_ops, "mlx5_umr ops");
    if (status != UCS_OK) {
        goto err_cq;
    }

    status = uct_mlx5_umr_iface_bufs_init(self);
    if (status != UCS_OK) {
        goto err_mpool;
    }

    uct_mlx5_umr_md_event_listener_add(md, &self->event_listener);
    return UCS_OK;

err_mpool:
    ucs_mpool_cleanup(&self->op_mp, 0);
err_cq:
    self->eng->cq_destroy(self->cq);
err:
    return status;
}

static UCS_CLASS_CLEANUP_FUNC(uct_mlx5_umr_iface_t)
{
    if (!ucs_list_is_empty(&self->eps)) {
        ucs_warn("mlx5_umr iface %p: closed with endpoints still open", self);
    }

    uct_mlx5_umr_md_event_listener_remove(self->md, &self->event_listener);
    uct_worker_progress_unregister_safe(&self->super.worker->super,
                                        &self->super.prog.id);
    ucs_mpool_cleanup(&self->buf_mp, 1);
    ucs_mpool_cleanup(&self->op_mp, 1);
    self->eng->cq_destroy(self->cq);
}

UCS_CLASS_DEFINE(uct_mlx5_umr_iface_t, uct_base_iface_t);

static UCS_CLASS_DEFINE_NEW_FUNC(uct_mlx5_umr_iface_t, uct_iface_t, uct_md_h,
                                 uct_worker_h, const uct_iface_params_t*,
                                 const uct_iface_config_t*);
static UCS_CLASS_DEFINE_DELETE_FUNC(uct_mlx5_umr_iface_t, uct_iface_t);

static ucs_status_t
uct_mlx5_umr_query_tl_devices(uct_md_h tl_md,
                              uct_tl_device_resource_t **tl_devices_p,
                              unsigned *num_tl_devices_p)
{
    uct_mlx5_umr_md_t *md = ucs_derived_of(tl_md, uct_mlx5_umr_md_t);

    return uct_single_device_resource(tl_md, md->caps.name,
                                      UCT_DEVICE_TYPE_NET,
                                      UCS_SYS_DEVICE_ID_UNKNOWN, tl_devices_p,
                                      num_tl_devices_p);
}

UCT_TL_DEFINE_ENTRY(&uct_mlx5_umr_component, mlx5_umr,
                    uct_mlx5_umr_query_tl_devices, uct_mlx5_umr_iface_t,
                    UCT_MLX5_UMR_CONFIG_PREFIX,
                    uct_mlx5_umr_iface_config_table,
                    uct_mlx5_umr_iface_config_t);
