/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: the packed path, origin side and window state (see
 * osc_umr_packed.h; the target's side: osc_umr_packed_tgt.c).
 */
#include "osc_umr_packed.h"
#include "osc_umr_packed_priv.h"
#include "osc_umr_fault.h"
#include "osc_umr_rma.h"
#include "osc_umr_redo.h"
#include "umr_mpi_progress.h"

#include <ompi/mca/pml/pml.h>
#include <opal/runtime/opal_progress.h>

#include <stdlib.h>
#include <string.h>

enum { MCA_OSC_UMR_POP_WAIT, MCA_OSC_UMR_POP_DONE, MCA_OSC_UMR_POP_REFUSED };

/* One packed operation in flight (origin). */
typedef struct mca_osc_umr_pop {
    opal_list_item_t     super;      /* in pk->ops, in the order started */
    mca_osc_umr_win_t    *w;
    mca_osc_umr_call_t   call;       /* as the user called it */
    int                  state;
    uint64_t             seq;
    size_t               length;
    void                 *buf;       /* packed bytes (ours), or NULL */
    const void           *payload;   /* a put's bytes sent apart */
    int                  payload_owed; /* ... whose send is to post again */
    ompi_request_t       *sreq;      /* put: the bytes apart */
    ompi_request_t       *rreq;      /* get: the bytes */
    const umr_layout_t   *olayout;   /* get: where the bytes go (NULL: in
                                        place) */
    ompi_request_t       *req;       /* MPI_Rput/MPI_Rget: the user's */
} mca_osc_umr_pop_t;

/* ------------------------------------------------------------ the window */

/* The standing receive of acknowledgements (osc_umr_wire.h). */
static int mca_osc_umr_packed_listen(mca_osc_umr_win_t *w)
{
    return mca_osc_umr_win_listen(w, &w->pk->ack, sizeof(w->pk->ack),
                                  MCA_OSC_UMR_TAG_PACK, &w->pk->ack_req);
}

int mca_osc_umr_packed_init(mca_osc_umr_win_t *w)
{
    mca_osc_umr_packed_t *pk = calloc(1, sizeof(*pk));
    size_t n = (size_t)w->size;

    if (pk == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    OBJ_CONSTRUCT(&pk->ops, opal_list_t);
    OBJ_CONSTRUCT(&pk->tq, opal_list_t);
    w->pk           = pk;
    pk->sent        = calloc(n, sizeof(uint64_t));
    pk->refused_seen = calloc(n, sizeof(uint64_t));
    pk->inflight    = calloc(n, sizeof(uint64_t));
    pk->done        = calloc(n, sizeof(uint64_t));
    pk->refused     = calloc(n, sizeof(uint64_t));
    pk->ack_owed    = calloc(n, sizeof(uint8_t));
    pk->ack_buf     = calloc(n, sizeof(*pk->ack_buf));
    pk->ack_sreq    = calloc(n, sizeof(*pk->ack_sreq));
    pk->pkt_buf     = malloc(MCA_OSC_UMR_PKT_SIZE);
    if ((pk->sent == NULL) ||
        (pk->refused_seen == NULL) || (pk->inflight == NULL) ||
        (pk->done == NULL) || (pk->refused == NULL) ||
        (pk->ack_owed == NULL) || (pk->ack_buf == NULL) ||
        (pk->ack_sreq == NULL) || (pk->pkt_buf == NULL) ||
        (mca_osc_umr_packed_tgt_post(w) != OMPI_SUCCESS)) {
        goto fail;
    }
    if (mca_osc_umr_packed_listen(w) != OMPI_SUCCESS) {
        goto fail;
    }
    return OMPI_SUCCESS;

fail:
    mca_osc_umr_packed_fini(w);
    return OMPI_ERROR;
}

static void mca_osc_umr_packed_cancel(ompi_request_t **req_p)
{
    if (*req_p != NULL) {
        ompi_request_cancel(*req_p);
        ompi_request_wait_completion(*req_p);
        ompi_request_free(req_p);
        *req_p = NULL;
    }
}

void mca_osc_umr_packed_fini(mca_osc_umr_win_t *w)
{
    mca_osc_umr_packed_t *pk = w->pk;
    int i;

    if (pk == NULL) {
        return;
    }
    /* every origin's operations were acknowledged before the window's
     * free settled (each origin waited for its own): only the standing
     * receives are left, and acknowledgements still being sent */
    mca_osc_umr_packed_cancel(&pk->ack_req);
    mca_osc_umr_packed_tgt_fini(w);
    for (i = 0; (pk->ack_sreq != NULL) && (i < w->size); ++i) {
        if (pk->ack_sreq[i] != NULL) {
            ompi_request_wait_completion(pk->ack_sreq[i]);
            ompi_request_free(&pk->ack_sreq[i]);
        }
    }
    OBJ_DESTRUCT(&pk->ops);
    OBJ_DESTRUCT(&pk->tq);
    free(pk->sent);
    free(pk->refused_seen);
    free(pk->inflight);
    free(pk->done);
    free(pk->refused);
    free(pk->ack_owed);
    free(pk->ack_buf);
    free(pk->ack_sreq);
    free(pk->pkt_buf);
    free(pk->obuf.buf);
    free(pk->tbuf.buf);
    free(pk->reply.buf);
    free(pk);
    w->pk = NULL;
}

/* ------------------------------------------------------------------ origin */

static void mca_osc_umr_pop_free(mca_osc_umr_pop_t *op)
{
    mca_osc_umr_call_drop(&op->call);
    mca_osc_umr_pbuf_give(&op->w->pk->obuf, op->buf);
    OBJ_DESTRUCT(&op->super);
    free(op);
}

/* Post the send of a put's bytes apart: 1 when posted (the test fault
 * fails the `first` try only). */
static int mca_osc_umr_pop_send_payload(mca_osc_umr_pop_t *op, int first)
{
    mca_osc_umr_win_t *w = op->w;

    if ((first && mca_osc_umr_fault(MCA_OSC_UMR_FAULT_PDATA)) ||
        (MCA_OSC_UMR_PML_CALL(isend((void*)op->payload, op->length, MPI_BYTE,
                            op->call.target, MCA_OSC_UMR_TAG_PDATA,
                            MCA_PML_BASE_SEND_STANDARD, w->comm, &op->sreq))
         != OMPI_SUCCESS)) {
        op->sreq = NULL;
        return 0;
    }
    return 1;
}

/* Send the header (and a put's bytes that fit with it); 0 when sent. */
static int mca_osc_umr_pop_send(mca_osc_umr_pop_t *op, uint32_t handle,
                                const umr_mpi_dtype_t *oinfo, int in_place)
{
    mca_osc_umr_win_t *w        = op->w;
    const mca_osc_umr_call_t *c = &op->call;
    int inline_put = c->is_put && (op->length <= MCA_OSC_UMR_PKT_INLINE);
    size_t mlen = sizeof(mca_osc_umr_pkt_t) + (inline_put ? op->length : 0);
    const char *src = (const char*)c->origin_addr +
                      (in_place ? umr_layout_true_lb(oinfo->layout) : 0);
    mca_osc_umr_pkt_t *pkt;
    ompi_request_t *sreq;

    if (mca_osc_umr_fault(MCA_OSC_UMR_FAULT_PSEND)) {
        return OMPI_ERROR;
    }
    pkt = malloc(mlen);
    if (pkt == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    pkt->magic  = MCA_OSC_UMR_PKT_MAGIC;
    pkt->seq    = op->seq;
    pkt->len    = op->length;
    pkt->handle = handle;
    pkt->op     = !c->is_put  ? MCA_OSC_UMR_PKT_GET :
                  inline_put  ? MCA_OSC_UMR_PKT_PUT : MCA_OSC_UMR_PKT_PUT_APART;
    if (inline_put) {
        if (in_place) {
            memcpy(pkt + 1, src, op->length);
        } else {
            umr_layout_pack(oinfo->layout, c->origin_count, c->origin_addr,
                            pkt + 1);
        }
    } else if (c->is_put) {
        if (in_place) {
            op->payload = src;
        } else {
            op->buf = mca_osc_umr_pbuf_take(&w->pk->obuf, op->length);
            if (op->buf == NULL) {
                free(pkt);
                return OMPI_ERR_OUT_OF_RESOURCE;
            }
            umr_layout_pack(oinfo->layout, c->origin_count, c->origin_addr,
                            op->buf);
            op->payload = op->buf;
        }
    }
    if (MCA_OSC_UMR_PML_CALL(isend(pkt, mlen, MPI_BYTE, c->target,
                           MCA_OSC_UMR_TAG_PKT, MCA_PML_BASE_SEND_STANDARD,
                           w->comm, &sreq)) != OMPI_SUCCESS) {
        free(pkt);
        return OMPI_ERROR;
    }
    mca_common_umr_reap_add_buf(sreq, pkt);   /* pkt is the reaper's now */
    /* the target now waits for the bytes apart: a send that cannot be
     * posted now is posted again from progress */
    if (c->is_put && !inline_put && !mca_osc_umr_pop_send_payload(op, 1)) {
        op->payload_owed = 1;
    }
    return OMPI_SUCCESS;
}

struct mca_osc_umr_pop *mca_osc_umr_packed_start(mca_osc_umr_win_t *w,
                                                 mca_osc_umr_key_t *key,
                                                 const mca_osc_umr_call_t *c,
                                                 const umr_mpi_dtype_t *oinfo,
                                                 size_t length)
{
    mca_osc_umr_packed_t *pk = w->pk;
    int target   = c->target;
    int is_put   = c->is_put;
    int in_place = ompi_datatype_is_contiguous_memory_layout(c->origin_dt,
                                                             c->origin_count);
    mca_osc_umr_pop_t *op;

    if ((pk == NULL) || (key->k.ans.handle == MCA_OSC_UMR_KANS_NO_HANDLE) ||
        (length > MCA_OSC_UMR_PACKED_MAX)) {
        return NULL;
    }
    op = calloc(1, sizeof(*op));
    if (op == NULL) {
        return NULL;
    }
    OBJ_CONSTRUCT(&op->super, opal_list_item_t);
    op->w      = w;
    op->seq    = pk->sent[target] + 1;
    op->length = length;
    mca_osc_umr_call_keep(&op->call, c);
    if (!is_put) {
        /* the bytes' receive before the request: the answer may come
         * before the isend returns */
        void *rbuf = (char*)c->origin_addr +
                     umr_layout_true_lb(oinfo->layout);

        if (!in_place) {
            op->buf     = mca_osc_umr_pbuf_take(&pk->obuf, length);
            op->olayout = oinfo->layout;
            rbuf        = op->buf;
        }
        if ((rbuf == NULL) ||
            (MCA_OSC_UMR_PML_CALL(irecv(rbuf, length, MPI_BYTE, target,
                                MCA_OSC_UMR_TAG_PGET, w->comm, &op->rreq))
             != OMPI_SUCCESS)) {
            op->rreq = NULL;
            goto fail;
        }
    }
    if (mca_osc_umr_pop_send(op, key->k.ans.handle, oinfo, in_place)
        != OMPI_SUCCESS) {
        /* nothing went: the target never hears of it (its sequence is
         * given to the next one) */
        mca_osc_umr_packed_cancel(&op->rreq);
        goto fail;
    }
    pk->sent[target] = op->seq;
    ++pk->inflight[target];
    ++pk->ninflight;
    opal_list_append(&pk->ops, &op->super);
    if (is_put) {
        ++mca_osc_umr.cnt.packed_puts;
    } else {
        ++mca_osc_umr.cnt.packed_gets;
    }
    mca_osc_umr.cnt.packed_bytes += length;
    return op;

fail:
    MCA_OSC_UMR_VERBOSE(10, "packed %s to %d not sent: through the wrapped "
                        "module", is_put ? "put" : "get", target);
    mca_osc_umr_pop_free(op);
    return NULL;
}

void mca_osc_umr_packed_set_req(struct mca_osc_umr_pop *op,
                                ompi_request_t *req)
{
    op->req = req;
}

/* An acknowledgement from `src`: its puts up to ack->seq are done; if its
 * refusals grew, the puts not seen acknowledged before are redone. */
static void mca_osc_umr_packed_ack(mca_osc_umr_win_t *w, int src,
                                   const mca_osc_umr_pack_t *ack)
{
    mca_osc_umr_packed_t *pk = w->pk;
    int refused = (ack->refused > pk->refused_seen[src]);
    mca_osc_umr_pop_t *op;

    if ((ack->magic != MCA_OSC_UMR_PACK_MAGIC) || (ack->seq > pk->sent[src])) {
        MCA_OSC_UMR_VERBOSE(1, "malformed acknowledgement from rank %d "
                            "ignored", src);
        return;
    }
    OPAL_LIST_FOREACH(op, &pk->ops, mca_osc_umr_pop_t) {
        if (op->call.is_put && (op->call.target == src) &&
            (op->seq <= ack->seq) && (op->state == MCA_OSC_UMR_POP_WAIT)) {
            op->state = refused ? MCA_OSC_UMR_POP_REFUSED :
                                  MCA_OSC_UMR_POP_DONE;
        }
    }
    pk->refused_seen[src] = ack->refused;
}

/* Whether `op` is complete now (a get's bytes unpacked). */
static int mca_osc_umr_pop_test(mca_osc_umr_pop_t *op)
{
    if (op->call.is_put) {
        if (op->payload_owed) {
            op->payload_owed = !mca_osc_umr_pop_send_payload(op, 0);
            return 0;
        }
        return (op->state != MCA_OSC_UMR_POP_WAIT) &&
               ((op->sreq == NULL) || REQUEST_COMPLETE(op->sreq));
    }
    if (!REQUEST_COMPLETE(op->rreq)) {
        return 0;
    }
    if (op->rreq->req_status._cancelled ||
        (op->rreq->req_status.MPI_ERROR != OMPI_SUCCESS) ||
        (op->rreq->req_status._ucount != op->length)) {
        op->state = MCA_OSC_UMR_POP_REFUSED;   /* zero bytes: refused */
    } else {
        if (op->olayout != NULL) {
            umr_layout_unpack(op->olayout, op->call.origin_count,
                              op->call.origin_addr, op->buf);
        }
        op->state = MCA_OSC_UMR_POP_DONE;
    }
    return 1;
}

static void mca_osc_umr_pop_complete(mca_osc_umr_pop_t *op)
{
    mca_osc_umr_win_t *w     = op->w;
    mca_osc_umr_packed_t *pk = w->pk;

    opal_list_remove_item(&pk->ops, &op->super);
    --pk->inflight[op->call.target];
    --pk->ninflight;
    if (op->sreq != NULL) {
        ompi_request_free(&op->sreq);
    }
    if (op->rreq != NULL) {
        ompi_request_free(&op->rreq);
    }
    if (op->state == MCA_OSC_UMR_POP_REFUSED) {
        ++mca_osc_umr.cnt.packed_refused;
        MCA_OSC_UMR_VERBOSE(10, "packed %s to %d refused by the target: "
                            "redone through the wrapped module",
                            op->call.is_put ? "put" : "get", op->call.target);
        mca_osc_umr_redo_later(w, &op->call, op->req);
    } else if (op->req != NULL) {
        op->req->req_status.MPI_ERROR = OMPI_SUCCESS;
        ompi_request_complete(op->req, true);
    }
    mca_osc_umr_pop_free(op);
}

static void mca_osc_umr_packed_origin_progress(mca_osc_umr_win_t *w)
{
    mca_osc_umr_packed_t *pk = w->pk;
    mca_osc_umr_pop_t *op, *next;
    ompi_request_t *req;
    int src;

    while ((pk->ack_req != NULL) && REQUEST_COMPLETE(pk->ack_req)) {
        req = pk->ack_req;
        src = req->req_status.MPI_SOURCE;
        if (!req->req_status._cancelled && (src >= 0) && (src < w->size) &&
            (req->req_status._ucount == sizeof(pk->ack))) {
            mca_osc_umr_packed_ack(w, src, &pk->ack);
        }
        ompi_request_free(&pk->ack_req);
        /* failed: posted again at the next progress */
        (void)mca_osc_umr_packed_listen(w);
    }
    if (pk->ack_req == NULL) {
        (void)mca_osc_umr_packed_listen(w);
    }
    OPAL_LIST_FOREACH_SAFE(op, next, &pk->ops, mca_osc_umr_pop_t) {
        if (mca_osc_umr_pop_test(op)) {
            mca_osc_umr_pop_complete(op);
        }
    }
}

void mca_osc_umr_packed_progress(mca_osc_umr_win_t *w)
{
    if ((w->pk == NULL) || w->closing) {
        return;
    }
    mca_osc_umr_packed_tgt_progress(w);
    if (w->pk->ninflight > 0) {
        mca_osc_umr_packed_origin_progress(w);
    }
}

void mca_osc_umr_packed_wait(mca_osc_umr_win_t *w, int target)
{
    mca_osc_umr_packed_t *pk = w->pk;

    if (pk == NULL) {
        return;
    }
    /* opal_progress: this rank's progress also serves the other ranks'
     * packed operations meanwhile (both may wait for each other) */
    while (((target < 0) ? pk->ninflight : pk->inflight[target]) > 0) {
        opal_progress();
    }
}
