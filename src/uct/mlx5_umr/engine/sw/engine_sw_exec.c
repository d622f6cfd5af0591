/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr sw engine: the "NIC". Executes queued work requests when the CQ
 * is polled, in QP order, and writes completions like an mlx5 RC QP would.
 *
 * Data moves with process_vm_readv/writev, at most UMR_ENG_SW_IOV_MAX
 * segments per side and call. Fragmented local sides go through a bounce
 * buffer (cheaper than one iovec each); dense remote gets read the whole
 * span and extract locally. Puts never touch peer bytes outside the layout.
 */
#include "umr_config.h"

#include "engine_sw.h"

#include <ucs/debug/log.h>

#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* Memcheck does not see what cross-memory attach writes into our own
 * memory as the remote side; say it. UCX's config.h defines NVALGRIND,
 * which would turn the client request off. */
#if defined(__has_include)
#  if __has_include(<valgrind/memcheck.h>)
#    undef NVALGRIND
#    include <valgrind/memcheck.h>
#    define UMR_ENG_SW_MEM_DEFINED(_p, _n) VALGRIND_MAKE_MEM_DEFINED(_p, _n)
#  endif
#endif
#ifndef UMR_ENG_SW_MEM_DEFINED
#  define UMR_ENG_SW_MEM_DEFINED(_p, _n)
#endif

/* Below this mean local segment size, a bounce copy beats an iovec. */
#define UMR_ENG_SW_DIRECT_MIN_SEG 2048

typedef struct umr_eng_sw_xfer {
    umr_eng_qp_t          *qp;
    umr_eng_sw_wr_t       *wr;
    const umr_eng_sge_t   *sges;
    int                   is_read;
    unsigned              local_access;
    unsigned              remote_access;
} umr_eng_sw_xfer_t;

/* Append the local segments of stream bytes [off, off + len). */
static umr_eng_wc_status_t
umr_eng_sw_local_fill(const umr_eng_sw_xfer_t *x, uint64_t off, uint64_t len,
                      umr_eng_sw_iovs_t *iovs)
{
    umr_eng_sw_space_t *space = &x->qp->dev->local;
    umr_eng_wc_status_t status;
    uint64_t chunk, before;
    unsigned i;

    for (i = 0; (i < x->wr->num) && (len > 0); ++i) {
        if (off >= x->sges[i].length) {
            off -= x->sges[i].length;
            continue;
        }

        chunk  = ucs_min(x->sges[i].length - off, len);
        before = iovs->bytes;
        status = umr_eng_sw_key_fill(space, x->sges[i].lkey,
                                     x->sges[i].addr + off, chunk,
                                     x->local_access, iovs);
        if ((status != UMR_ENG_WC_SUCCESS) ||
            ((iovs->bytes - before) < chunk)) {
            return status;
        }

        len -= chunk;
        off  = 0;
    }

    return UMR_ENG_WC_SUCCESS;
}

/*
 * Copy between local segments and one private buffer of ours without ever
 * faulting: memory registered earlier may have been unmapped or protected
 * since. Cross-memory attach on ourselves pins only `buf`; the segments are
 * copied by the kernel's user copy, which stops at an inaccessible page.
 */
static umr_eng_wc_status_t
umr_eng_sw_self_copy(const umr_eng_sw_xfer_t *x, const umr_eng_sw_iovs_t *liovs,
                     void *buf, int to_local)
{
    struct iovec biov = {.iov_base = buf, .iov_len = liovs->bytes};
    ssize_t ret;

    if (to_local) {
        ret = process_vm_readv(getpid(), liovs->iov, liovs->count, &biov, 1, 0);
    } else {
        ret = process_vm_writev(getpid(), liovs->iov, liovs->count, &biov, 1,
                                0);
    }

    if (ret == (ssize_t)liovs->bytes) {
        if (!to_local) {
            UMR_ENG_SW_MEM_DEFINED(buf, liovs->bytes);
        }
        return UMR_ENG_WC_SUCCESS;
    }

    ucs_debug("sw engine: qp 0x%x: local %s of %zu bytes in %u segments "
              "from %p moved %zd: %s", x->qp->qpn, to_local ? "write" : "read",
              liovs->bytes, liovs->count, liovs->iov[0].iov_base, ret,
              (ret < 0) ? strerror(errno) : "memory not accessible");
    return UMR_ENG_WC_LOC_PROT_ERR;
}

/* Copy between the local stream at `off` and the segments `ext` (private
 * buffers of the device: the bounce buffer, or pieces of the span copy). */
static umr_eng_wc_status_t
umr_eng_sw_local_copy(const umr_eng_sw_xfer_t *x, uint64_t off,
                      const struct iovec *ext, unsigned num_ext, int to_local)
{
    umr_eng_sw_dev_t *dev = x->qp->dev;
    size_t total = 0, done = 0;
    umr_eng_sw_iovs_t liovs;
    umr_eng_wc_status_t status;
    char *buf;
    unsigned i;

    if (num_ext == 1) {
        buf   = ext[0].iov_base;
        total = ext[0].iov_len;
    } else {
        /* the span pieces are ours and cannot fault: gather them first */
        ucs_assert(to_local);
        buf = dev->bounce;
        for (i = 0; i < num_ext; ++i) {
            ucs_assert(total + ext[i].iov_len <= UMR_ENG_SW_BATCH_BYTES);
            memcpy(buf + total, ext[i].iov_base, ext[i].iov_len);
            total += ext[i].iov_len;
        }
    }

    while (done < total) {
        liovs.iov       = dev->ciov;
        liovs.count     = 0;
        liovs.max       = UMR_ENG_SW_IOV_MAX;
        liovs.bytes     = 0;
        liovs.max_bytes = total - done;
        status = umr_eng_sw_local_fill(x, off + done, total - done, &liovs);
        if (status != UMR_ENG_WC_SUCCESS) {
            return status;
        }

        if (liovs.bytes == 0) {
            return UMR_ENG_WC_LOC_PROT_ERR; /* checked at post: not reached */
        }

        status = umr_eng_sw_self_copy(x, &liovs, buf + done, to_local);
        if (status != UMR_ENG_WC_SUCCESS) {
            return status;
        }

        done += liovs.bytes;
    }

    return UMR_ENG_WC_SUCCESS;
}

static umr_eng_wc_status_t umr_eng_sw_vm_error(ssize_t ret, size_t expected,
                                               pid_t pid)
{
    if ((ret < 0) && ((errno == ESRCH) || (errno == EPERM))) {
        ucs_debug("sw engine: peer pid %d gone: %m", (int)pid);
        return UMR_ENG_WC_RETRY_EXC_ERR;
    }

    ucs_debug("sw engine: cross-memory transfer to pid %d moved %zd of %zu "
              "bytes: %s", (int)pid, ret, expected,
              (ret < 0) ? strerror(errno) : "memory not accessible");
    return UMR_ENG_WC_REM_ACCESS_ERR;
}

static umr_eng_wc_status_t
umr_eng_sw_vm(const umr_eng_sw_xfer_t *x, const struct iovec *liov,
              unsigned lcnt, const struct iovec *riov, unsigned rcnt,
              size_t bytes)
{
    pid_t pid = x->qp->remote.pid;
    ssize_t ret;

    if (x->is_read) {
        ret = process_vm_readv(pid, liov, lcnt, riov, rcnt, 0);
    } else {
        ret = process_vm_writev(pid, liov, lcnt, riov, rcnt, 0);
    }

    return (ret == (ssize_t)bytes) ? UMR_ENG_WC_SUCCESS :
                                     umr_eng_sw_vm_error(ret, bytes, pid);
}

/*
 * Dense get: one read of the span covering the remote segments, then local
 * extraction. Returns 1 if done (status in *status_p), 0 to fall back.
 */
static int umr_eng_sw_span_read(const umr_eng_sw_xfer_t *x, uint64_t off,
                                umr_eng_sw_iovs_t *riovs,
                                umr_eng_wc_status_t *status_p)
{
    umr_eng_sw_dev_t *dev = x->qp->dev;
    uintptr_t lo = UINTPTR_MAX, hi = 0, base;
    struct iovec liov, siov;
    ssize_t ret;
    unsigned i;

    if (riovs->count < 2) {
        return 0;
    }

    for (i = 0; i < riovs->count; ++i) {
        base = (uintptr_t)riovs->iov[i].iov_base;
        lo   = ucs_min(lo, base);
        hi   = ucs_max(hi, base + riovs->iov[i].iov_len);
    }

    /* dense enough, and cheaper: reading the gaps and extracting locally
     * (memcpy, about twice the speed) must cost less than the iovecs */
    if (((hi - lo) > UMR_ENG_SW_BATCH_BYTES) ||
        ((double)riovs->bytes < (dev->span_density * (double)(hi - lo))) ||
        (((hi - lo) - riovs->bytes + riovs->bytes / 2) >=
         ((size_t)riovs->count * UMR_ENG_SW_IOV_COST))) {
        return 0;
    }

    liov.iov_base = dev->span;
    liov.iov_len  = hi - lo;
    siov.iov_base = (void*)lo;
    siov.iov_len  = hi - lo;
    ret = process_vm_readv(x->qp->remote.pid, &liov, 1, &siov, 1, 0);
    if (ret != (ssize_t)(hi - lo)) {
        if ((ret < 0) && ((errno == ESRCH) || (errno == EPERM))) {
            *status_p = umr_eng_sw_vm_error(ret, hi - lo, x->qp->remote.pid);
            return 1;
        }

        return 0; /* gaps not readable (e.g. between regions): per segment */
    }

    /* rebase the remote segments into the span copy */
    for (i = 0; i < riovs->count; ++i) {
        riovs->iov[i].iov_base = (char*)dev->span +
                                 ((uintptr_t)riovs->iov[i].iov_base - lo);
    }

    *status_p = umr_eng_sw_local_copy(x, off, riovs->iov, riovs->count, 1);
    return 1;
}

static umr_eng_wc_status_t
umr_eng_sw_xfer_batch(const umr_eng_sw_xfer_t *x, uint64_t off,
                      umr_eng_sw_iovs_t *riovs)
{
    umr_eng_sw_dev_t *dev = x->qp->dev;
    umr_eng_wc_status_t status;
    umr_eng_sw_iovs_t liovs;
    struct iovec biov;

    liovs.iov       = dev->liov;
    liovs.count     = 0;
    liovs.max       = UMR_ENG_SW_IOV_MAX;
    liovs.bytes     = 0;
    liovs.max_bytes = riovs->bytes;
    status = umr_eng_sw_local_fill(x, off, riovs->bytes, &liovs);
    if (status != UMR_ENG_WC_SUCCESS) {
        return status;
    }

    if ((liovs.bytes == riovs->bytes) &&
        ((liovs.count == 1) ||
         ((liovs.bytes / liovs.count) >= UMR_ENG_SW_DIRECT_MIN_SEG))) {
        return umr_eng_sw_vm(x, liovs.iov, liovs.count, riovs->iov,
                             riovs->count, riovs->bytes);
    }

    biov.iov_base = dev->bounce;
    biov.iov_len  = riovs->bytes;
    if (!x->is_read) {
        status = umr_eng_sw_local_copy(x, off, &biov, 1, 0);
        if (status != UMR_ENG_WC_SUCCESS) {
            return status;
        }

        return umr_eng_sw_vm(x, &biov, 1, riovs->iov, riovs->count,
                             riovs->bytes);
    }

    status = umr_eng_sw_vm(x, &biov, 1, riovs->iov, riovs->count,
                           riovs->bytes);
    if (status != UMR_ENG_WC_SUCCESS) {
        return status;
    }

    return umr_eng_sw_local_copy(x, off, &biov, 1, 1);
}

/* Remote segments from stream offset `off`; the whole remaining range is
 * bounds-checked every time. */
static umr_eng_wc_status_t
umr_eng_sw_remote_fill(const umr_eng_sw_xfer_t *x, uint64_t off,
                       uint64_t total, struct iovec *iov, unsigned max,
                       size_t max_bytes, umr_eng_sw_iovs_t *riovs)
{
    riovs->iov       = iov;
    riovs->count     = 0;
    riovs->max       = max;
    riovs->bytes     = 0;
    riovs->max_bytes = ucs_min(total - off, max_bytes);
    return umr_eng_sw_key_fill(&x->qp->remote, x->wr->key,
                               x->wr->remote_addr + off, total - off,
                               x->remote_access, riovs);
}

static umr_eng_wc_status_t umr_eng_sw_exec_rdma(umr_eng_qp_t *qp,
                                                umr_eng_sw_wr_t *wr,
                                                int *wait_p)
{
    umr_eng_sw_dev_t *dev = qp->dev;
    umr_eng_sw_iovs_t riovs, check;
    umr_eng_wc_status_t status;
    umr_eng_sw_xfer_t x;
    size_t span_bytes = UMR_ENG_SW_BATCH_BYTES *
                        ucs_min(1.0, dev->span_density);
    uint64_t total = 0, off, end;
    struct iovec one;
    unsigned i;

    status = umr_eng_sw_space_begin(&qp->remote, qp, wait_p);
    if (*wait_p) {
        if (wr->first_try == 0) {
            wr->first_try = ucs_get_time();
        }

        if ((ucs_get_time() - wr->first_try) <
            ucs_time_from_sec(UMR_ENG_SW_RETRY_TIMEOUT)) {
            return UMR_ENG_WC_SUCCESS;
        }

        *wait_p = 0;
        ucs_debug("sw engine: qp 0x%x: peer qp 0x%x never connected back",
                  qp->qpn, qp->peer_qpn);
        return UMR_ENG_WC_RETRY_EXC_ERR;
    }

    if (status != UMR_ENG_WC_SUCCESS) {
        return status;
    }

    x.qp      = qp;
    x.wr      = wr;
    x.sges    = umr_eng_sw_wr_sges(qp, wr);
    x.is_read = (wr->opcode == UMR_ENG_OP_RDMA_READ);
    x.local_access  = x.is_read ? UMR_ENG_ACCESS_LOCAL_WRITE : 0;
    x.remote_access = x.is_read ? UMR_ENG_ACCESS_REMOTE_READ :
                                  UMR_ENG_ACCESS_REMOTE_WRITE;

    /* Local keys first (a NIC reads its own SGEs before sending), whole
     * ranges checked without moving data. */
    for (i = 0; i < wr->num; ++i) {
        total += x.sges[i].length;
        if (x.sges[i].length == 0) {
            continue;
        }

        check.iov       = &one;
        check.count     = 0;
        check.max       = 1;
        check.bytes     = 0;
        check.max_bytes = 1;
        status = umr_eng_sw_key_fill(&dev->local, x.sges[i].lkey,
                                     x.sges[i].addr, x.sges[i].length,
                                     x.local_access, &check);
        if (status != UMR_ENG_WC_SUCCESS) {
            return status;
        }
    }

    if (total == 0) {
        return UMR_ENG_WC_SUCCESS;
    }

    if (__builtin_add_overflow(wr->remote_addr, total, &end)) {
        return UMR_ENG_WC_REM_ACCESS_ERR;
    }

    for (off = 0; off < total; off += riovs.bytes) {
        /* a span read is not bound by IOV_MAX: try it with more segments */
        if (x.is_read) {
            /* sized so that a dense enough batch fits the span buffer */
            status = umr_eng_sw_remote_fill(&x, off, total, dev->siov,
                                            UMR_ENG_SW_SPAN_IOV_MAX,
                                            span_bytes, &riovs);
            if (status != UMR_ENG_WC_SUCCESS) {
                return status;
            }

            if (umr_eng_sw_span_read(&x, off, &riovs, &status)) {
                if (status != UMR_ENG_WC_SUCCESS) {
                    return status;
                }
                continue;
            }
        }

        status = umr_eng_sw_remote_fill(&x, off, total, dev->riov,
                                        UMR_ENG_SW_IOV_MAX,
                                        UMR_ENG_SW_BATCH_BYTES, &riovs);
        if (status != UMR_ENG_WC_SUCCESS) {
            return status;
        }

        status = umr_eng_sw_xfer_batch(&x, off, &riovs);
        if (status != UMR_ENG_WC_SUCCESS) {
            return status;
        }
    }

    return UMR_ENG_WC_SUCCESS;
}

static umr_eng_wc_status_t umr_eng_sw_exec_umr(umr_eng_qp_t *qp,
                                               umr_eng_sw_wr_t *wr)
{
    umr_eng_sw_dev_t *dev   = qp->dev;
    umr_eng_sw_mkey_t *mkey = wr->mkey;
    umr_eng_sw_desc_t *descs = umr_eng_sw_wr_descs(qp, wr);
    umr_eng_sw_kentry_t *entry;
    uint64_t data = 0;
    unsigned i;

    if (dev->objs[mkey->index] != mkey) {
        ucs_debug("sw engine: qp 0x%x: UMR on a destroyed mkey", qp->qpn);
        return UMR_ENG_WC_MW_BIND_ERR;
    }

    for (i = 0; i < wr->num; ++i) {
        data += descs[i].bytes_count;
    }

    entry = umr_eng_sw_entry_begin(dev, mkey->index);
    memcpy(mkey->descs, descs, wr->num * sizeof(*descs));
    entry->tag         = UMR_ENG_SW_KEY_TAG(wr->key);
    entry->valid       = 1;
    entry->layout      = wr->layout;
    entry->access      = wr->access;
    entry->repeat      = wr->repeat;
    entry->num_entries = wr->num;
    entry->stride_data = data;
    entry->length      = data * wr->repeat;
    umr_eng_sw_entry_end(dev, entry);
    return UMR_ENG_WC_SUCCESS;
}

static umr_eng_wc_status_t umr_eng_sw_exec_inv(umr_eng_qp_t *qp,
                                               umr_eng_sw_wr_t *wr)
{
    umr_eng_sw_dev_t *dev   = qp->dev;
    umr_eng_sw_mkey_t *mkey = wr->mkey;
    umr_eng_sw_kentry_t *entry;

    if ((dev->objs[mkey->index] != mkey) ||
        (dev->table[mkey->index].tag != UMR_ENG_SW_KEY_TAG(wr->key))) {
        ucs_debug("sw engine: qp 0x%x: LOCAL_INV of a stale key 0x%x",
                  qp->qpn, wr->key);
        return UMR_ENG_WC_LOC_PROT_ERR;
    }

    entry        = umr_eng_sw_entry_begin(dev, mkey->index);
    entry->valid = 0;
    umr_eng_sw_entry_end(dev, entry);
    return UMR_ENG_WC_SUCCESS;
}

static void umr_eng_sw_cq_push(umr_eng_cq_t *cq, umr_eng_qp_t *qp,
                               const umr_eng_sw_wr_t *wr,
                               umr_eng_wc_status_t status)
{
    umr_eng_sw_wc_t *swc = &cq->ring[(cq->head + cq->count) % cq->size];

    swc->wc.wr_id  = wr->wr_id;
    swc->wc.opcode = wr->opcode;
    swc->wc.status = status;
    swc->wc.qp     = qp;
    swc->seq       = wr->seq;
    cq->count++;
}

/* Returns 0 if the WR must wait (peer QP not connected yet). */
static int umr_eng_sw_exec_one(umr_eng_qp_t *qp, umr_eng_sw_wr_t *wr)
{
    umr_eng_wc_status_t status;
    int wait = 0;

    if (qp->in_error) {
        status = UMR_ENG_WC_WR_FLUSH_ERR;
    } else if (wr->opcode == UMR_ENG_OP_UMR) {
        status = umr_eng_sw_exec_umr(qp, wr);
    } else if (wr->opcode == UMR_ENG_OP_LOCAL_INV) {
        status = umr_eng_sw_exec_inv(qp, wr);
    } else {
        status = umr_eng_sw_exec_rdma(qp, wr, &wait);
        if (wait) {
            return 0;
        }
    }

    if (status != UMR_ENG_WC_SUCCESS) {
        if (!qp->in_error) {
            ucs_debug("sw engine: qp 0x%x: %s wr_id 0x%" PRIx64 " failed: %s",
                      qp->qpn, umr_eng_opcode_str(wr->opcode), wr->wr_id,
                      umr_eng_wc_status_str(status));
        }
        qp->in_error = 1;
    }

    if ((status != UMR_ENG_WC_SUCCESS) || (wr->flags & UMR_ENG_WR_SIGNALED)) {
        umr_eng_sw_cq_push(qp->cq, qp, wr, status);
    }

    qp->sq_exec++;
    return 1;
}

int umr_eng_sw_cq_progress(umr_eng_cq_t *cq)
{
    unsigned budget = UMR_ENG_SW_EXEC_BUDGET;
    umr_eng_qp_t *qp;
    int executed = 0;

    ucs_list_for_each(qp, &cq->qps, list) {
        while ((qp->sq_exec < qp->sq_pi) && (budget > 0) &&
               (cq->count < cq->size)) {
            if (!umr_eng_sw_exec_one(qp, &qp->wrs[qp->sq_exec %
                                                  qp->sq_size])) {
                break;
            }
            --budget;
            ++executed;
        }
    }

    return executed;
}

void umr_eng_sw_cq_purge_qp(umr_eng_cq_t *cq, umr_eng_qp_t *qp)
{
    unsigned i, kept = 0;
    umr_eng_sw_wc_t *src, *dst;

    for (i = 0; i < cq->count; ++i) {
        src = &cq->ring[(cq->head + i) % cq->size];
        if (src->wc.qp == qp) {
            continue;
        }

        dst  = &cq->ring[(cq->head + kept) % cq->size];
        *dst = *src;
        ++kept;
    }

    cq->count = kept;
}
