/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: the packed path, target side (see osc_umr_packed.h).
 *
 * Headers are taken from one standing receive (any origin). A header
 * whose operation can be done at once (nothing waits before it, its bytes
 * in the header's message) is done from the receive buffer; otherwise it
 * waits its turn in w->pk->tq, a put apart with its bytes' receive posted.
 * Operations are done in the order their headers came: each origin's
 * acknowledgements are cumulative and its gets' bytes are matched by
 * order.
 */
#include "osc_umr_packed.h"
#include "osc_umr_packed_priv.h"
#include "osc_umr_fault.h"
#include "umr_mpi_progress.h"

#include <ompi/mca/pml/pml.h>
#include <opal/runtime/opal_progress.h>
#include <ucs/debug/assert.h>
#include <ucs/debug/memtrack_int.h>

#include <stdlib.h>
#include <string.h>

/* A header waiting its turn. */
typedef struct mca_osc_umr_tpk {
    opal_list_item_t  super;      /* in pk->tq */
    int               src;
    int               refuse;     /* its bytes cannot be taken */
    mca_osc_umr_pkt_t pkt;
    void              *data;      /* a put's bytes, or NULL */
    ompi_request_t    *rreq;      /* their receive, when apart */
} mca_osc_umr_tpk_t;

/* ---------------------------------------------------------- destinations */

uint32_t mca_osc_umr_packed_dst_add(mca_osc_umr_win_t *w, int src,
                                    char *addr, char *att_base,
                                    umr_layout_t *layout, size_t count)
{
    mca_osc_umr_packed_t *pk = w->pk;
    mca_osc_umr_pdst_t *d;
    size_t len;

    if ((pk == NULL) ||
        (ucs_array_length(&pk->dst) >= MCA_OSC_UMR_KANS_NO_HANDLE) ||
        __builtin_mul_overflow(umr_layout_size(layout), count, &len) ||
        (ucs_array_append(mca_osc_umr_pdsts, &pk->dst) != UCS_OK)) {
        return MCA_OSC_UMR_KANS_NO_HANDLE;
    }
    d           = ucs_array_last(&pk->dst);
    d->addr     = addr;
    d->layout   = layout;
    d->count    = count;
    d->len      = len;
    d->att_base = att_base;
    d->src      = src;
    return (uint32_t)(ucs_array_length(&pk->dst) - 1);
}

void mca_osc_umr_packed_dst_detach(mca_osc_umr_win_t *w, const char *base)
{
    mca_osc_umr_pdst_t *d;

    if (w->pk == NULL) {
        return;
    }
    /* handles stay (an origin holding one was told to drop it) */
    ucs_array_for_each(d, &w->pk->dst) {
        if ((d->layout != NULL) && (d->att_base == base)) {
            umr_layout_free(d->layout);
            d->layout = NULL;
        }
    }
}

/* The destination of `pkt` from `src`, or NULL (refused). */
static mca_osc_umr_pdst_t *mca_osc_umr_tpk_dst(mca_osc_umr_win_t *w, int src,
                                               const mca_osc_umr_pkt_t *pkt)
{
    mca_osc_umr_packed_t *pk = w->pk;
    mca_osc_umr_pdst_t *d;

    if (pkt->handle >= ucs_array_length(&pk->dst)) {
        return NULL;
    }
    d = &ucs_array_elem(&pk->dst, pkt->handle);
    return ((d->layout != NULL) && (d->src == src) && (d->len == pkt->len)) ?
           d : NULL;
}

/* ------------------------------------------------------------ operations */

static void mca_osc_umr_tpk_owe(mca_osc_umr_packed_t *pk, int src)
{
    if (!pk->ack_owed[src]) {
        pk->ack_owed[src] = 1;
        ++pk->nowed;
    }
}

/* Send a get's bytes (zero bytes: refused); 0 when the send could not be
 * posted (tried again at the next progress, in its turn). */
static int mca_osc_umr_tpk_reply(mca_osc_umr_win_t *w, int src,
                                 const mca_osc_umr_pkt_t *pkt,
                                 mca_osc_umr_pdst_t *d)
{
    void *buf = NULL;
    size_t len = 0;
    ompi_request_t *sreq;

    if ((w->pk->reply_sreq != NULL) && REQUEST_COMPLETE(w->pk->reply_sreq)) {
        ompi_request_free(&w->pk->reply_sreq);
        w->pk->reply_sreq = NULL;
        mca_osc_umr_pbuf_give(&w->pk->reply, w->pk->reply.buf);
    }
    if ((d != NULL) && !mca_osc_umr_fault(MCA_OSC_UMR_FAULT_PKT)) {
        buf = mca_osc_umr_pbuf_take(&w->pk->reply, pkt->len);
    }
    if (buf != NULL) {
        umr_layout_pack(d->layout, d->count, d->addr, buf);
        len = pkt->len;
    }
    if (MCA_OSC_UMR_PML_CALL(isend(buf, len, MPI_BYTE, src, MCA_OSC_UMR_TAG_PGET,
                           MCA_PML_BASE_SEND_STANDARD, w->comm, &sreq))
        != OMPI_SUCCESS) {
        mca_osc_umr_pbuf_give(&w->pk->reply, buf);
        return 0;
    }
    if ((buf != NULL) && (buf == w->pk->reply.buf)) {
        w->pk->reply_sreq = sreq;   /* the kept buffer: free when sent */
    } else {
        mca_common_umr_reap_add_buf(sreq, buf);
    }
    if (buf != NULL) {
        ++mca_osc_umr.cnt.packed_served;
    } else {
        ++mca_osc_umr.cnt.packed_tgt_refused;
    }
    return 1;
}

/* Do the operation of `pkt` from `src` (a put's bytes in `data`, NULL:
 * refused): 0 when it must be tried again later. */
static int mca_osc_umr_tpk_do(mca_osc_umr_win_t *w, int src,
                              const mca_osc_umr_pkt_t *pkt, const void *data)
{
    mca_osc_umr_packed_t *pk = w->pk;
    mca_osc_umr_pdst_t *d    = mca_osc_umr_tpk_dst(w, src, pkt);

    if (pkt->op == MCA_OSC_UMR_PKT_GET) {
        if (!mca_osc_umr_tpk_reply(w, src, pkt, d)) {
            return 0;
        }
    } else if ((d != NULL) && (data != NULL)) {
        umr_layout_unpack(d->layout, d->count, d->addr, data);
        ++mca_osc_umr.cnt.packed_unpacked;
        mca_osc_umr_tpk_owe(pk, src);
    } else {
        ++pk->refused[src];
        ++mca_osc_umr.cnt.packed_tgt_refused;
        mca_osc_umr_tpk_owe(pk, src);
    }
    if (pkt->seq > pk->done[src]) {
        pk->done[src] = pkt->seq;
    }
    return 1;
}

static int mca_osc_umr_tpk_run(mca_osc_umr_win_t *w);

/* Post the receive of a queued put's bytes apart (into zero bytes when
 * they cannot be taken: received, dropped, the put refused); NULL when it
 * cannot be posted now. */
static void mca_osc_umr_tpk_post_data(mca_osc_umr_win_t *w,
                                      mca_osc_umr_tpk_t *t)
{
    if (MCA_OSC_UMR_PML_CALL(irecv(t->data, (t->data != NULL) ? t->pkt.len : 0,
                           MPI_BYTE, t->src, MCA_OSC_UMR_TAG_PDATA, w->comm,
                           &t->rreq)) != OMPI_SUCCESS) {
        t->rreq = NULL;
    }
}

/* Whether a put apart of `src` waits with its receive not posted: the
 * later ones wait too (each origin's bytes match in the order posted). */
static int mca_osc_umr_tpk_unposted(mca_osc_umr_win_t *w, int src)
{
    mca_osc_umr_tpk_t *t;

    OPAL_LIST_FOREACH(t, &w->pk->tq, mca_osc_umr_tpk_t) {
        if ((t->src == src) && (t->pkt.op == MCA_OSC_UMR_PKT_PUT_APART) &&
            (t->rreq == NULL)) {
            return 1;
        }
    }
    return 0;
}

/* Queue a header that cannot be done now; a put apart gets its bytes'
 * receive (posted in its turn if it cannot be now). */
static void mca_osc_umr_tpk_queue(mca_osc_umr_win_t *w, int src,
                                  const mca_osc_umr_pkt_t *pkt,
                                  const void *inline_data, int valid)
{
    mca_osc_umr_tpk_t *t = calloc(1, sizeof(*t));

    if (t == NULL) {
        /* cannot wait: refused now, in its turn (the queue done first, so
         * that a put apart's bytes drained here are its own) */
        while (!mca_osc_umr_tpk_run(w)) {
            opal_progress();
        }
        if (pkt->op == MCA_OSC_UMR_PKT_PUT_APART) {
            ompi_request_t *req;

            if (MCA_OSC_UMR_PML_CALL(irecv(NULL, 0, MPI_BYTE, src,
                                   MCA_OSC_UMR_TAG_PDATA, w->comm, &req))
                == OMPI_SUCCESS) {
                ompi_request_wait_completion(req);
                ompi_request_free(&req);
            }
        }
        while (!mca_osc_umr_tpk_do(w, src, pkt, NULL)) {
            ;   /* a get's refusal: its zero bytes must go */
        }
        return;
    }
    OBJ_CONSTRUCT(&t->super, opal_list_item_t);
    t->src = src;
    t->pkt = *pkt;
    t->refuse = !valid;
    if ((pkt->op != MCA_OSC_UMR_PKT_GET) && valid &&
        !mca_osc_umr_fault(MCA_OSC_UMR_FAULT_PKT)) {
        t->data = mca_osc_umr_pbuf_take(&w->pk->tbuf, pkt->len);
    }
    if ((pkt->op != MCA_OSC_UMR_PKT_GET) && (t->data == NULL)) {
        t->refuse = 1;
    }
    if (pkt->op == MCA_OSC_UMR_PKT_PUT_APART) {
        if (!mca_osc_umr_tpk_unposted(w, src)) {
            mca_osc_umr_tpk_post_data(w, t);
        }
    } else if (t->data != NULL) {
        memcpy(t->data, inline_data, pkt->len);
    }
    opal_list_append(&w->pk->tq, &t->super);
}

/* A header of `len` bytes from `src` is in pk->pkt_buf. */
static void mca_osc_umr_tpk_take(mca_osc_umr_win_t *w, int src, size_t len)
{
    mca_osc_umr_packed_t *pk = w->pk;
    const mca_osc_umr_pkt_t *pkt = pk->pkt_buf;
    int valid;

    if ((len < sizeof(*pkt)) || (pkt->magic != MCA_OSC_UMR_PKT_MAGIC) ||
        (pkt->op < MCA_OSC_UMR_PKT_PUT) || (pkt->op > MCA_OSC_UMR_PKT_GET) ||
        ((pkt->op == MCA_OSC_UMR_PKT_PUT) &&
         (len != sizeof(*pkt) + pkt->len))) {
        /* not one of ours: no sequence to answer for */
        MCA_OSC_UMR_VERBOSE(1, "malformed packed header from rank %d "
                            "dropped", src);
        return;
    }
    valid = (mca_osc_umr_tpk_dst(w, src, pkt) != NULL);
    if (!valid) {
        MCA_OSC_UMR_VERBOSE(1, "packed %s from rank %d refused: no such "
                            "destination", (pkt->op == MCA_OSC_UMR_PKT_GET) ?
                            "get" : "put", src);
    }
    if (opal_list_is_empty(&pk->tq) && (pkt->op != MCA_OSC_UMR_PKT_PUT_APART) &&
        !((pkt->op == MCA_OSC_UMR_PKT_PUT) &&
          mca_osc_umr_fault(MCA_OSC_UMR_FAULT_PKT)) &&
        mca_osc_umr_tpk_do(w, src, pkt, valid ? (pkt + 1) : NULL)) {
        return;
    }
    mca_osc_umr_tpk_queue(w, src, pkt, pkt + 1, valid);
}

/* The head of the queue, when its turn has come: 1 when done. */
static int mca_osc_umr_tpk_head(mca_osc_umr_win_t *w, mca_osc_umr_tpk_t *t)
{
    ompi_request_t *req = t->rreq;

    if (t->pkt.op == MCA_OSC_UMR_PKT_PUT_APART) {
        if (req == NULL) {
            mca_osc_umr_tpk_post_data(w, t);   /* its turn: the first */
            return 0;
        }
        if (!REQUEST_COMPLETE(req)) {
            return 0;
        }
        if ((req->req_status.MPI_ERROR != OMPI_SUCCESS) ||
            (req->req_status._ucount != t->pkt.len)) {
            t->refuse = 1;
        }
        ompi_request_free(&t->rreq);
    }
    return mca_osc_umr_tpk_do(w, t->src, &t->pkt, t->refuse ? NULL : t->data);
}

/* Do the queued operations whose turn has come: 1 when none is left. */
static int mca_osc_umr_tpk_run(mca_osc_umr_win_t *w)
{
    mca_osc_umr_packed_t *pk = w->pk;
    mca_osc_umr_tpk_t *t;

    while (!opal_list_is_empty(&pk->tq)) {
        t = (mca_osc_umr_tpk_t*)opal_list_get_first(&pk->tq);
        if (!mca_osc_umr_tpk_head(w, t)) {
            return 0;
        }
        opal_list_remove_item(&pk->tq, &t->super);
        mca_osc_umr_pbuf_give(&pk->tbuf, t->data);
        OBJ_DESTRUCT(&t->super);
        free(t);
    }
    return 1;
}

/* Acknowledge what each owed origin's operations came to (one send in
 * flight an origin: later ones are folded into the next). */
static void mca_osc_umr_tpk_acks(mca_osc_umr_win_t *w)
{
    mca_osc_umr_packed_t *pk = w->pk;
    mca_osc_umr_pack_t *a;
    int src;

    for (src = 0; (pk->nowed > 0) && (src < w->size); ++src) {
        if (!pk->ack_owed[src]) {
            continue;
        }
        if (pk->ack_sreq[src] != NULL) {
            if (!REQUEST_COMPLETE(pk->ack_sreq[src])) {
                continue;
            }
            ompi_request_free(&pk->ack_sreq[src]);
            pk->ack_sreq[src] = NULL;
        }
        a          = &pk->ack_buf[src];
        a->magic   = MCA_OSC_UMR_PACK_MAGIC;
        a->seq     = pk->done[src];
        a->refused = pk->refused[src];
        if (MCA_OSC_UMR_PML_CALL(isend(a, sizeof(*a), MPI_BYTE, src,
                               MCA_OSC_UMR_TAG_PACK,
                               MCA_PML_BASE_SEND_STANDARD, w->comm,
                               &pk->ack_sreq[src])) != OMPI_SUCCESS) {
            pk->ack_sreq[src] = NULL;   /* again at the next progress */
            continue;
        }
        pk->ack_owed[src] = 0;
        --pk->nowed;
    }
}

/* ------------------------------------------------------------- the window */

int mca_osc_umr_packed_tgt_post(mca_osc_umr_win_t *w)
{
    mca_osc_umr_packed_t *pk = w->pk;

    return mca_osc_umr_win_listen(w, pk->pkt_buf, MCA_OSC_UMR_PKT_SIZE,
                                  MCA_OSC_UMR_TAG_PKT, &pk->pkt_req);
}

void mca_osc_umr_packed_tgt_progress(mca_osc_umr_win_t *w)
{
    mca_osc_umr_packed_t *pk = w->pk;
    ompi_request_t *req;
    int src;

    if (pk->pkt_req == NULL) {
        (void)mca_osc_umr_packed_tgt_post(w);
    }
    while ((pk->pkt_req != NULL) && REQUEST_COMPLETE(pk->pkt_req)) {
        req = pk->pkt_req;
        src = req->req_status.MPI_SOURCE;
        if (!req->req_status._cancelled && (src >= 0) && (src < w->size) &&
            (req->req_status.MPI_ERROR == OMPI_SUCCESS)) {
            mca_osc_umr_tpk_take(w, src, req->req_status._ucount);
        }
        ompi_request_free(&pk->pkt_req);
        /* NULL on failure: posted again at the next progress (the
         * headers wait in the PML meanwhile) */
        (void)mca_osc_umr_packed_tgt_post(w);
    }
    (void)mca_osc_umr_tpk_run(w);
    if (pk->nowed > 0) {
        mca_osc_umr_tpk_acks(w);
    }
}

void mca_osc_umr_packed_tgt_fini(mca_osc_umr_win_t *w)
{
    mca_osc_umr_packed_t *pk = w->pk;
    mca_osc_umr_tpk_t *t, *next;
    mca_osc_umr_pdst_t *d;

    if (pk->pkt_req != NULL) {
        ompi_request_cancel(pk->pkt_req);
        ompi_request_wait_completion(pk->pkt_req);
        ompi_request_free(&pk->pkt_req);
    }
    OPAL_LIST_FOREACH_SAFE(t, next, &pk->tq, mca_osc_umr_tpk_t) {
        if (t->rreq != NULL) {
            ompi_request_cancel(t->rreq);
            ompi_request_wait_completion(t->rreq);
            ompi_request_free(&t->rreq);
        }
        opal_list_remove_item(&pk->tq, &t->super);
        mca_osc_umr_pbuf_give(&pk->tbuf, t->data);
        OBJ_DESTRUCT(&t->super);
        free(t);
    }
    if (pk->reply_sreq != NULL) {
        ompi_request_wait_completion(pk->reply_sreq);
        ompi_request_free(&pk->reply_sreq);
    }
    ucs_array_for_each(d, &pk->dst) {
        if (d->layout != NULL) {
            umr_layout_free(d->layout);
        }
    }
    ucs_array_cleanup_dynamic(&pk->dst);
}
