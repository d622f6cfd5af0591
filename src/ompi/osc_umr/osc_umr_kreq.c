/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: the target side of the key protocol (see osc_umr_kreq.h).
 */
#include "osc_umr_kreq.h"
#include "osc_umr_dyn.h"
#include "osc_umr_fault.h"
#include "osc_umr_packed.h"
#include "umr_mpi_keys.h"
#include "umr_mpi_peer.h"
#include "common_umr_binding.h"

#include <ompi/datatype/ompi_datatype.h>
#include <ompi/mca/pml/pml.h>
#include <opal/runtime/opal_progress.h>

#include "umr_mpi_dtype.h"

#include <stdlib.h>
#include <string.h>

/* A request taken but not answered yet (osc_umr_kreq.h). */
typedef struct mca_osc_umr_treq {
    opal_list_item_t    super;      /* in w->treqs, in the order taken */
    int                 src;
    uint32_t            seq;        /* its place among src's requests */
    size_t              len;
    mca_osc_umr_kreq_t  *kreq;      /* a copy (w->kreq is reused) */
    mca_osc_umr_kdesc_t *kdesc;     /* the description apart, or NULL */
    size_t              kdesc_len;
    ompi_request_t      *kdesc_req; /* its receive while under way */
    int                 no_desc;    /* its description could not be
                                       received: refused, no key */
} mca_osc_umr_treq_t;

static const char *mca_osc_umr_kans_str(int status)
{
    switch (status) {
    case MCA_OSC_UMR_KANS_BAD_REQUEST:   return "malformed request";
    case MCA_OSC_UMR_KANS_NO_PEER:       return "no rail to the origin";
    case MCA_OSC_UMR_KANS_UNSUPPORTED:   return "datatype not expressible";
    case MCA_OSC_UMR_KANS_OUT_OF_WINDOW: return "bytes outside the window";
    case MCA_OSC_UMR_KANS_NO_KEY:        return "no layout key";
    default:                             return "ok";
    }
}

/* `apart`: the description received apart (aligned), or NULL: it is in
 * the request, after the address. */
static int mca_osc_umr_tkey_make(mca_osc_umr_win_t *w, int src,
                                 umr_mpi_peer_t *peer,
                                 const mca_osc_umr_kreq_t *kreq,
                                 const void *apart, ompi_proc_t *proc,
                                 mca_osc_umr_kans_t *ans)
{
    uint64_t desc[MCA_OSC_UMR_KREQ_SIZE / sizeof(uint64_t)];
    umr_layout_t *layout = NULL;
    ompi_datatype_t *dt;
    char *addr, *att;
    void *p = desc;
    int status;

    if (apart != NULL) {
        p = (void*)apart;
    } else {
        /* aligned; desc_len was checked against the request's length */
        memcpy(desc, kreq->data + kreq->addr_len, kreq->desc_len);
    }
    dt = ompi_datatype_create_from_packed_description(&p, proc);
    if (dt == NULL) {
        return MCA_OSC_UMR_KANS_UNSUPPORTED;
    }
    if ((umr_mpi_dtype_decode(dt, &layout) != UCS_OK) || (layout == NULL)) {
        OMPI_DATATYPE_RELEASE(dt);
        return MCA_OSC_UMR_KANS_UNSUPPORTED;
    }
    OMPI_DATATYPE_RELEASE(dt);
    status = umr_mpi_rma_mem_key(&w->mem, peer, kreq->disp, layout,
                                 kreq->count,
                                 mca_osc_umr_fault(MCA_OSC_UMR_FAULT_TKEY),
                                 ans->rkey, &addr, &att);
    if (status != MCA_OSC_UMR_KANS_OK) {
        umr_layout_free(layout);
        return status;
    }
    ans->rkey_len = (uint16_t)peer->rail->rkey_size;
    /* the packed path's destination: the same checked bytes */
    ans->handle = mca_osc_umr_packed_dst_add(w, src, addr, att, layout,
                                             kreq->count);
    if (ans->handle == MCA_OSC_UMR_KANS_NO_HANDLE) {
        umr_layout_free(layout);   /* else the destination's now */
    }
    return status;
}

/* Send `a` to `src`: from a buffer of its own, or, when none can be
 * allocated, from the window's spare answer for that origin if its last
 * send is done. An answer that cannot be sent is lost: the origin refuses
 * that key when the window is freed (osc_umr_key.c's settle counts the
 * answers each target sent), never waits for it. */
static void mca_osc_umr_kans_send(mca_osc_umr_win_t *w, int src,
                                  const mca_osc_umr_kans_t *a)
{
    mca_osc_umr_kans_t *buf = NULL;
    ompi_request_t *sreq;
    int spare = 0;

    if (!mca_osc_umr_fault(MCA_OSC_UMR_FAULT_ANSWER)) {
        buf = malloc(sizeof(*buf));
    }
    if (buf == NULL) {
        sreq = w->kans_spare_req[src];
        if ((sreq != NULL) && REQUEST_COMPLETE(sreq)) {
            ompi_request_free(&w->kans_spare_req[src]);
            w->kans_spare_req[src] = NULL;
        }
        if (w->kans_spare_req[src] == NULL) {
            buf   = &w->kans_spare[src];
            spare = 1;
        }
    }
    if (buf != NULL) {
        *buf = *a;
        if (!mca_osc_umr_fault(MCA_OSC_UMR_FAULT_SEND) &&
            (MCA_OSC_UMR_PML_CALL(isend(buf, sizeof(*buf), MPI_BYTE, src,
                                        MCA_OSC_UMR_TAG_KANS,
                                        MCA_PML_BASE_SEND_STANDARD, w->comm, &sreq))
             == OMPI_SUCCESS)) {
            if (spare) {
                w->kans_spare_req[src] = sreq;
            } else {
                mca_common_umr_reap_add_buf(sreq, buf);
            }
            ++w->kreq_answered[src];
            return;
        }
        if (!spare) {
            free(buf);
        }
    }
    ++mca_osc_umr.cnt.answers_lost;
    if (a->status == MCA_OSC_UMR_KANS_OK) {
        /* counted as given: the answer is not */
        --mca_osc_umr.cnt.key_answers;
        ++mca_osc_umr.cnt.key_errors;
    }
    MCA_OSC_UMR_VERBOSE(1, "answer to rank %d not sent (%s): that key is "
                        "refused when the window is freed", src,
                        (buf == NULL) ? "no buffer" : "send failed");
}

/* Answer the request `kreq` of `len` bytes from `src`; `apart`: its
 * description, when it came apart (NULL: in the request, or, for a request
 * that says apart, not received whole: refused). `refuse`: the request
 * could not be kept: refused (MCA_OSC_UMR_KANS_NO_KEY). */
static void mca_osc_umr_kreq_answer(mca_osc_umr_win_t *w, int src,
                                    const mca_osc_umr_kreq_t *kreq, size_t len,
                                    const void *apart, int refuse)
{
    size_t inline_len = (kreq->flags & MCA_OSC_UMR_KREQ_DESC_APART) ? 0 :
                        kreq->desc_len;
    umr_mpi_peer_t *peer;
    mca_osc_umr_kans_t ans;

    memset(&ans, 0, sizeof(ans));
    ans.id     = kreq->id;
    ans.handle = MCA_OSC_UMR_KANS_NO_HANDLE;
    if (refuse) {
        ans.status = MCA_OSC_UMR_KANS_NO_KEY;
    } else if ((len < MCA_OSC_UMR_KREQ_HDR) ||
               (kreq->magic != MCA_OSC_UMR_KREQ_MAGIC) ||
               (MCA_OSC_UMR_KREQ_HDR + (size_t)kreq->addr_len + inline_len >
                len) ||
               ((kreq->flags & MCA_OSC_UMR_KREQ_DESC_APART) &&
                (apart == NULL))) {
        ans.status = MCA_OSC_UMR_KANS_BAD_REQUEST;
    } else if (NULL == (peer = umr_mpi_rma_mem_origin(
                             mca_common_umr_world_rank(w->comm, src),
                             kreq->data, kreq->addr_len))) {
        ans.status = MCA_OSC_UMR_KANS_NO_PEER;
    } else {
        ans.status = mca_osc_umr_tkey_make(w, src, peer, kreq, apart,
                                           ompi_comm_peer_lookup(w->comm, src),
                                           &ans);
    }
    if (ans.status == MCA_OSC_UMR_KANS_OK) {
        w->tkey_given[src] = 1;
        ++mca_osc_umr.cnt.key_answers;
    } else {
        ++mca_osc_umr.cnt.key_errors;
        /* bad input (out of the window, malformed) and a target that runs
         * out of keys or memory are worth a line; a type the decoder
         * cannot express is routine */
        MCA_OSC_UMR_VERBOSE((ans.status == MCA_OSC_UMR_KANS_UNSUPPORTED) ?
                            10 : 1, "key request from rank %d refused: %s",
                            src, mca_osc_umr_kans_str(ans.status));
    }
    mca_osc_umr_kans_send(w, src, &ans);
}

/* The request's description apart, as received: the whole of it, for this
 * request; NULL otherwise (the origin's later descriptions are refused). */
static const void *mca_osc_umr_treq_desc(mca_osc_umr_win_t *w,
                                         mca_osc_umr_treq_t *t)
{
    ompi_request_t *req = t->kdesc_req;
    int ok;

    if (t->kdesc == NULL) {
        return NULL;
    }
    ok = !req->req_status._cancelled &&
         (req->req_status.MPI_ERROR == OMPI_SUCCESS) &&
         (req->req_status._ucount == t->kdesc_len) &&
         (t->kdesc->magic == MCA_OSC_UMR_KDESC_MAGIC) &&
         (t->kdesc->id == t->kreq->id);
    if (!ok) {
        MCA_OSC_UMR_VERBOSE(1, "key request from rank %d: its description "
                            "did not come whole or names another request: "
                            "its descriptions are refused from now on",
                            t->src);
        w->kdesc_broken[t->src] = 1;
        return NULL;
    }
    return t->kdesc + 1;
}

static void mca_osc_umr_treq_free(mca_osc_umr_treq_t *t)
{
    if (t->kdesc_req != NULL) {
        if (!REQUEST_COMPLETE(t->kdesc_req)) {
            ompi_request_cancel(t->kdesc_req);
            ompi_request_wait_completion(t->kdesc_req);
        }
        ompi_request_free(&t->kdesc_req);
    }
    free(t->kdesc);
    free(t->kreq);
    OBJ_DESTRUCT(&t->super);
    free(t);
}

/* The bytes of the description the request `kreq` (`len` bytes) says
 * comes apart, its head included; 0 when none is coming (an origin of this
 * build sends one for every request that says so, and only up to the
 * maximum). */
static size_t mca_osc_umr_kdesc_len(const mca_osc_umr_kreq_t *kreq, size_t len)
{
    if ((len < MCA_OSC_UMR_KREQ_HDR) ||
        (kreq->magic != MCA_OSC_UMR_KREQ_MAGIC) ||
        !(kreq->flags & MCA_OSC_UMR_KREQ_DESC_APART) ||
        (kreq->desc_len > MCA_OSC_UMR_KDESC_MAX)) {
        return 0;
    }
    return sizeof(mca_osc_umr_kdesc_t) + kreq->desc_len;
}

/* Match, and drop, the next description of `src` (`dlen` bytes, head
 * included), which this target will not use: a description left unmatched
 * keeps the origin's send waiting forever, and at MPI_Finalize pml ucx
 * (UCX 1.23) aborts on the registration such a send still holds. It is
 * received whole, into a buffer of its own freed when the receive
 * completes: ob1 reads a message it gets by RDMA (btl/vader's single copy)
 * whole into the receive buffer, whatever the receive's size (into no
 * buffer, vader says "Read -1, expected N, errno = 14"). Without memory even
 * for that: zero bytes, a receive that still completes the origin's send. */
static void mca_osc_umr_kdesc_drain(mca_osc_umr_win_t *w, int src, size_t dlen)
{
    void *buf = malloc(dlen);
    ompi_request_t *req;

    if (MCA_OSC_UMR_PML_CALL(irecv(buf, (buf != NULL) ? dlen : 0, MPI_BYTE,
                                   src, MCA_OSC_UMR_TAG_KDESC, w->comm,
                                   &req)) == OMPI_SUCCESS) {
        mca_common_umr_reap_add_buf(req, buf);
    } else {
        free(buf);
        MCA_OSC_UMR_VERBOSE(1, "description from rank %d: cannot drain it",
                            src);
    }
}

/* Receive the description of `t` (taken from `src`), which came before the
 * request on MCA_OSC_UMR_TAG_KDESC. 0 when there is none to receive (the
 * request is refused when answered). */
static int mca_osc_umr_treq_recv_desc(mca_osc_umr_win_t *w,
                                      mca_osc_umr_treq_t *t)
{
    const mca_osc_umr_kreq_t *kreq = t->kreq;
    size_t dlen = mca_osc_umr_kdesc_len(kreq, t->len);

    if (dlen == 0) {
        return 0;   /* none is coming */
    }
    if (w->kdesc_broken[t->src]) {
        mca_osc_umr_kdesc_drain(w, t->src, dlen);
        t->no_desc = 1;
        return 0;
    }
    t->kdesc_len = dlen;
    t->kdesc     = mca_osc_umr_fault(MCA_OSC_UMR_FAULT_KDESC) ? NULL :
                   malloc(t->kdesc_len);
    if ((t->kdesc == NULL) ||
        (MCA_OSC_UMR_PML_CALL(irecv(t->kdesc, t->kdesc_len, MPI_BYTE, t->src,
                                    MCA_OSC_UMR_TAG_KDESC, w->comm, &t->kdesc_req))
         != OMPI_SUCCESS)) {
        /* dropped unread (no buffer), or unmatched (the receive failed):
         * the origin's later descriptions are refused, and drained */
        MCA_OSC_UMR_VERBOSE(1, "description of %u bytes from rank %d not "
                            "received (%s): its request is refused",
                            kreq->desc_len, t->src, (t->kdesc == NULL) ?
                            "no buffer" : "receive failed");
        if (t->kdesc == NULL) {
            mca_osc_umr_kdesc_drain(w, t->src, dlen);
        }
        w->kdesc_broken[t->src] = 1;
        t->no_desc = 1;
        free(t->kdesc);
        t->kdesc     = NULL;
        t->kdesc_req = NULL;
        return 0;
    }
    return 1;
}

void mca_osc_umr_kreq_take(mca_osc_umr_win_t *w, int src, size_t len)
{
    const mca_osc_umr_kreq_t *kreq = &w->kreq;
    size_t dlen = mca_osc_umr_kdesc_len(kreq, len);
    int apart = (len >= MCA_OSC_UMR_KREQ_HDR) &&
                (kreq->flags & MCA_OSC_UMR_KREQ_DESC_APART);
    mca_osc_umr_treq_t *t = NULL;

    ++w->kreq_taken[src];
    if (w->kreq_retired) {
        /* received by the drain at the window's free (nothing of this
         * origin waits any more): refused, its description dropped */
        if (dlen > 0) {
            mca_osc_umr_kdesc_drain(w, src, dlen);
        }
        mca_osc_umr_kreq_answer(w, src, kreq, len, NULL, 1);
        return;
    }
    if (!apart && (w->tq_taken[src] == w->tq_answered[src])) {
        /* nothing of this origin waits: answered now */
        ++w->tq_taken[src];
        ++w->tq_answered[src];
        mca_osc_umr_kreq_answer(w, src, kreq, len, NULL, 0);
        return;
    }
    if (!mca_osc_umr_fault(MCA_OSC_UMR_FAULT_QUEUE)) {
        t = calloc(1, sizeof(*t));
    }
    if (t != NULL) {
        t->kreq = malloc(len);
    }
    if ((t == NULL) || (t->kreq == NULL)) {
        /* cannot keep it: refused now, before the requests of that origin
         * that wait (the origin checks the id of each answer: it refuses
         * the keys whose answers come out of order, never uses a wrong
         * one); its description, if any, is drained */
        if (dlen > 0) {
            mca_osc_umr_kdesc_drain(w, src, dlen);
            w->kdesc_broken[src] = 1;
        }
        free(t);
        MCA_OSC_UMR_VERBOSE(1, "key request from rank %d could not be kept "
                            "(out of memory): refused", src);
        mca_osc_umr_kreq_answer(w, src, kreq, len, NULL, 1);
        return;
    }
    OBJ_CONSTRUCT(&t->super, opal_list_item_t);
    t->src = src;
    t->seq = w->tq_taken[src]++;
    t->len = len;
    memcpy(t->kreq, kreq, len);
    if (apart) {
        (void)mca_osc_umr_treq_recv_desc(w, t);
    }
    opal_list_append(&w->treqs, &t->super);
    mca_osc_umr_kreq_progress(w);
}

void mca_osc_umr_kreq_progress(mca_osc_umr_win_t *w)
{
    mca_osc_umr_treq_t *t, *next;

    OPAL_LIST_FOREACH_SAFE(t, next, &w->treqs, mca_osc_umr_treq_t) {
        if ((t->seq != w->tq_answered[t->src]) ||
            ((t->kdesc_req != NULL) && !REQUEST_COMPLETE(t->kdesc_req))) {
            continue;   /* not its turn, or its description is under way */
        }
        opal_list_remove_item(&w->treqs, &t->super);
        ++w->tq_answered[t->src];
        mca_osc_umr_kreq_answer(w, t->src, t->kreq, t->len,
                                mca_osc_umr_treq_desc(w, t), t->no_desc);
        mca_osc_umr_treq_free(t);
        /* a later request of that origin may be next: start over */
        next = (mca_osc_umr_treq_t*)opal_list_get_first(&w->treqs);
    }
}

void mca_osc_umr_kreq_retire(mca_osc_umr_win_t *w)
{
    w->kreq_req     = NULL;
    w->kreq_retired = 1;
    ++mca_osc_umr.cnt.kreq_retired;
    MCA_OSC_UMR_VERBOSE(1, "window %p: the receive of key requests cannot "
                        "be posted again: later requests to this rank are "
                        "taken only when the window is freed, and refused",
                        (void*)w->win);
}

void mca_osc_umr_kreq_drain(mca_osc_umr_win_t *w, const int *expect)
{
    ompi_request_t *req;
    uint64_t missed = 0, drained = 0;
    int i;

    /* the requests waiting for their descriptions are answered first, in
     * their origins' order (each description was sent before its request:
     * it comes) */
    while (!opal_list_is_empty(&w->treqs)) {
        mca_osc_umr_kreq_progress(w);
        opal_progress();
    }
    for (i = 0; i < w->size; ++i) {
        while (w->kreq_taken[i] < expect[i]) {
            if (mca_osc_umr_fault(MCA_OSC_UMR_FAULT_DRAIN) ||
                (MCA_OSC_UMR_PML_CALL(irecv(&w->kreq, sizeof(w->kreq), MPI_BYTE, i,
                                            MCA_OSC_UMR_TAG_KREQ, w->comm, &req))
                 != OMPI_SUCCESS)) {
                missed += (uint64_t)(expect[i] - w->kreq_taken[i]);
                break;
            }
            /* sent before the window's free began: it comes */
            ompi_request_wait_completion(req);
            ++drained;
            mca_osc_umr_kreq_take(w, i, req->req_status._ucount);
            ompi_request_free(&req);
        }
    }
    if (drained > 0) {
        MCA_OSC_UMR_VERBOSE(1, "window %p freed: %lu key requests that came "
                            "after the receive could not be posted again "
                            "received now, and refused", (void*)w->win,
                            (unsigned long)drained);
    }
    if (missed > 0) {
        w->comm_kept = 1;
        mca_osc_umr.cnt.kreq_unreceived += missed;
        MCA_OSC_UMR_VERBOSE(1, "window %p freed: %lu key requests never "
                            "received (no receive could be posted): refused "
                            "at their origins; the window's communicator is "
                            "kept until MPI_Finalize", (void*)w->win,
                            (unsigned long)missed);
    }
}

void mca_osc_umr_kreq_fini(mca_osc_umr_win_t *w)
{
    mca_osc_umr_treq_t *t, *next;

    OPAL_LIST_FOREACH_SAFE(t, next, &w->treqs, mca_osc_umr_treq_t) {
        opal_list_remove_item(&w->treqs, &t->super);
        mca_osc_umr_treq_free(t);
    }
}
