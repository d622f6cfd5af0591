/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: target layout keys (see osc_umr_key.h, osc_umr_wire.h).
 */
#include "osc_umr_key.h"
#include "osc_umr_dyn.h"
#include "osc_umr_fault.h"
#include "osc_umr_kreq.h"
#include "common_umr.h"
#include "common_umr_binding.h"

#include <ompi/datatype/ompi_datatype.h>
#include <ompi/mca/pml/pml.h>
#include <opal/runtime/opal_progress.h>

#include "uct_umr.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ origin */

/* A description too long for the request goes first, on its own tag
 * (osc_umr_wire.h): a copy (the user may free the type meanwhile). */
static int mca_osc_umr_key_send_desc(mca_osc_umr_win_t *w,
                                     mca_osc_umr_key_t *key, const void *desc,
                                     size_t dlen)
{
    mca_osc_umr_kdesc_t *kd = malloc(sizeof(*kd) + dlen);
    ompi_request_t *sreq;
    int rc;

    if (kd == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    kd->magic = MCA_OSC_UMR_KDESC_MAGIC;
    kd->id    = (uintptr_t)key;
    memcpy(kd + 1, desc, dlen);
    rc = MCA_OSC_UMR_PML_CALL(isend(kd, sizeof(*kd) + dlen, MPI_BYTE, key->k.target,
                                    MCA_OSC_UMR_TAG_KDESC, MCA_PML_BASE_SEND_STANDARD,
                                    w->comm, &sreq));
    if (rc != OMPI_SUCCESS) {
        free(kd);
        return rc;
    }
    mca_common_umr_reap_add_buf(sreq, kd);
    return OMPI_SUCCESS;
}

static int mca_osc_umr_key_ask(mca_osc_umr_win_t *w, mca_osc_umr_key_t *key,
                               ompi_datatype_t *dt)
{
    size_t dlen = ompi_datatype_pack_description_length(dt);
    uint8_t addr[sizeof(((mca_osc_umr_kreq_t*)NULL)->data)];
    mca_osc_umr_kreq_t *kreq;
    ompi_request_t *sreq;
    const void *desc;
    size_t alen, inline_len;
    int rc, apart;

    if ((dlen > MCA_OSC_UMR_KDESC_MAX) ||
        (ompi_datatype_get_pack_description(dt, &desc) != OMPI_SUCCESS)) {
        MCA_OSC_UMR_VERBOSE(10, "datatype description of %zu bytes: never "
                            "asked for", dlen);
        return OMPI_ERROR;
    }
    /* the address first (on the stack), then only what is sent on the
     * heap: no 4 KiB allocation per request between the user's */
    if (umr_mpi_peer_prepare(key->k.peer, addr, &alen) != UCS_OK) {
        return OMPI_ERROR;
    }
    apart      = (alen + dlen > sizeof(kreq->data));
    inline_len = apart ? 0 : dlen;
    kreq = malloc(MCA_OSC_UMR_KREQ_HDR + alen + inline_len);
    if (kreq == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    memcpy(kreq->data, addr, alen);
    /* RMA and keys on its endpoint: never disconnected (pml_umr_max_conns) */
    umr_mpi_peer_pin(key->k.peer);
    kreq->magic    = MCA_OSC_UMR_KREQ_MAGIC;
    kreq->id       = (uintptr_t)key;
    kreq->disp     = key->k.disp;
    kreq->count    = key->k.count;
    kreq->desc_len = (uint32_t)dlen;
    kreq->addr_len = (uint16_t)alen;
    kreq->flags    = apart ? MCA_OSC_UMR_KREQ_DESC_APART : 0;
    memcpy(kreq->data + alen, desc, inline_len);

    /* answers from one target come in the order of the requests */
    rc = MCA_OSC_UMR_PML_CALL(irecv(&key->k.ans, sizeof(key->k.ans), MPI_BYTE, key->k.target,
                                    MCA_OSC_UMR_TAG_KANS, w->comm, &key->ans_req));
    if (rc != OMPI_SUCCESS) {
        free(kreq);
        return rc;
    }
    /* the description before the request: if the request cannot be sent
     * after it, the target finds a description that names another request
     * in front of its next one and refuses them (never a hang on a
     * description that does not come) */
    if (apart) {
        rc = mca_osc_umr_key_send_desc(w, key, desc, dlen);
    }
    if (rc == OMPI_SUCCESS) {
        rc = MCA_OSC_UMR_PML_CALL(isend(kreq, MCA_OSC_UMR_KREQ_HDR + alen + inline_len,
                                        MPI_BYTE, key->k.target, MCA_OSC_UMR_TAG_KREQ,
                                        MCA_PML_BASE_SEND_STANDARD, w->comm, &sreq));
    }
    if (rc != OMPI_SUCCESS) {
        /* the answer receive stays posted and never matches: cancel it */
        ompi_request_cancel(key->ans_req);
        ompi_request_wait_completion(key->ans_req);
        ompi_request_free(&key->ans_req);
        key->ans_req = NULL;
        free(kreq);
        return rc;
    }
    mca_common_umr_reap_add_buf(sreq, kreq);
    ++w->kreq_sent[key->k.target];
    ++w->kpending;
    ++mca_osc_umr.cnt.key_requests;
    MCA_OSC_UMR_VERBOSE(10, "asked target %d for a key (disp %ld, count %zu, "
                        "description of %zu bytes%s)", key->k.target,
                        (long)key->k.disp, key->k.count, dlen,
                        apart ? ", sent apart" : "");
    return OMPI_SUCCESS;
}

mca_osc_umr_key_t *mca_osc_umr_key_get(mca_osc_umr_win_t *w,
                                       umr_mpi_peer_t *peer,
                                       int target, int64_t disp,
                                       ompi_datatype_t *dt,
                                       const umr_layout_t *layout,
                                       size_t count)
{
    mca_osc_umr_key_t *key;
    int fresh;

    key = (mca_osc_umr_key_t*)umr_mpi_rma_kcache_get(&w->kc, sizeof(*key),
                                                     peer, target, disp,
                                                     layout, count, &fresh);
    if ((key == NULL) || !fresh) {
        return ((key != NULL) && (key->k.state == UMR_MPI_RMA_KEY_READY)) ?
               key : NULL;
    }
    if ((key->k.state != UMR_MPI_RMA_KEY_PENDING) ||
        (mca_osc_umr_key_ask(w, key, dt) != OMPI_SUCCESS)) {
        key->k.state = UMR_MPI_RMA_KEY_REFUSED;
    }
    return NULL;
}

void mca_osc_umr_key_refuse(mca_osc_umr_key_t *key)
{
    key->k.state = UMR_MPI_RMA_KEY_REFUSED;
}

/* The target's answer arrived. */
static void mca_osc_umr_key_answered(mca_osc_umr_win_t *w,
                                     mca_osc_umr_key_t *key)
{
    ompi_request_t *req = key->ans_req;
    int ok = !req->req_status._cancelled &&
             (req->req_status.MPI_ERROR == OMPI_SUCCESS);

    if (!req->req_status._cancelled) {
        ++w->kans_taken[key->k.target];
    }
    ompi_request_free(&key->ans_req);
    key->ans_req = NULL;   /* free leaves MPI_REQUEST_NULL: "no request" */
    --w->kpending;
    if (umr_mpi_rma_key_accept(&key->k, ok)) {
        ++mca_osc_umr.cnt.key_ready;
    } else {
        ++mca_osc_umr.cnt.key_refused;
    }
}

/* ------------------------------------------------------------------ target */

static int mca_osc_umr_kreq_post(mca_osc_umr_win_t *w)
{
    return mca_osc_umr_win_listen(w, &w->kreq, sizeof(w->kreq),
                                  MCA_OSC_UMR_TAG_KREQ, &w->kreq_req);
}

int mca_osc_umr_keys_init(mca_osc_umr_win_t *w)
{
    if (mca_osc_umr_kreq_post(w) != OMPI_SUCCESS) {
        return OMPI_ERROR;
    }
    if (w->dynamic && (mca_osc_umr_dyn_init(w) != OMPI_SUCCESS)) {
        ompi_request_cancel(w->kreq_req);
        ompi_request_wait_completion(w->kreq_req);
        ompi_request_free(&w->kreq_req);
        w->kreq_req = NULL;
        return OMPI_ERROR;
    }
    return OMPI_SUCCESS;
}

void mca_osc_umr_keys_progress(mca_osc_umr_win_t *w)
{
    ompi_request_t *req = w->kreq_req;
    int src;
    size_t len;

    if (w->closing) {
        return;
    }

    if ((req != NULL) && REQUEST_COMPLETE(req)) {
        w->kreq_req = NULL;
        src = req->req_status.MPI_SOURCE;
        len = req->req_status._ucount;
        if (!req->req_status._cancelled && (src >= 0) && (src < w->size)) {
            mca_osc_umr_kreq_take(w, src, len);
        }
        ompi_request_free(&req);
        if (mca_osc_umr_fault(MCA_OSC_UMR_FAULT_REPOST) ||
            (mca_osc_umr_kreq_post(w) != OMPI_SUCCESS)) {
            mca_osc_umr_kreq_retire(w);
        }
    }
    if (!opal_list_is_empty(&w->treqs)) {
        mca_osc_umr_kreq_progress(w);
    }
    mca_osc_umr_keys_answers(w);
    if (w->dynamic) {
        mca_osc_umr_keys_check_detach(w);
    }
}

void mca_osc_umr_keys_check_detach(mca_osc_umr_win_t *w)
{
    int target = mca_osc_umr_dyn_check(w);

    if (target >= 0) {
        /* answers that came before the invalidation are older than it */
        mca_osc_umr_keys_answers(w);
        mca_osc_umr_keys_drop(w, target);
    }
}

void mca_osc_umr_keys_answers(mca_osc_umr_win_t *w)
{
    umr_mpi_rma_key_t *k;
    mca_osc_umr_key_t *key;

    if (w->kpending == 0) {
        return;
    }
    umr_mpi_rma_kcache_for_each(k, &w->kc, {
        key = ucs_container_of(k, mca_osc_umr_key_t, k);
        if ((key->ans_req != NULL) && REQUEST_COMPLETE(key->ans_req)) {
            mca_osc_umr_key_answered(w, key);
        }
    });
}

void mca_osc_umr_keys_drop(mca_osc_umr_win_t *w, int target)
{
    mca_osc_umr.cnt.keys_dropped += umr_mpi_rma_kcache_drop(&w->kc, target,
                                                            0);
}

/* Collective over the window's communicator. As a target: every request
 * another rank sent us is taken and answered (or refused); a target that
 * could not post its receive again receives the rest here and refuses
 * them (osc_umr_kreq.h), as far as it can. As an origin: every answer a target sent us is
 * taken; keys whose answer a target could not send are refused by
 * mca_osc_umr_keys_fini (never waited for). */
static void mca_osc_umr_keys_settle(mca_osc_umr_win_t *w)
{
    int *expect = calloc(2 * (size_t)w->size, sizeof(int));
    int *sent_us, i, done;

    if ((expect == NULL) ||
        (w->comm->c_coll->coll_alltoall(w->kreq_sent, 1, MPI_INT, expect, 1,
                                        MPI_INT, w->comm,
                                        w->comm->c_coll->coll_alltoall_module)
         != OMPI_SUCCESS)) {
        free(expect);
        return;
    }
    sent_us = expect + w->size;
    /* a request taken is answered now or queued until its description is
     * in (the origin sent that before the request, and progresses below
     * or in the alltoall); a retired target receives the rest now */
    while (w->kreq_req != NULL) {   /* NULL: no receive posted any more */
        done = opal_list_is_empty(&w->treqs);
        for (i = 0; done && (i < w->size); ++i) {
            done = (w->kreq_taken[i] >= expect[i]);
        }
        if (done) {
            break;
        }
        opal_progress();
    }
    if (w->kreq_retired) {
        mca_osc_umr_kreq_drain(w, expect);
    }
    if (w->comm->c_coll->coll_alltoall(w->kreq_answered, 1, MPI_INT, sent_us,
                                       1, MPI_INT, w->comm,
                                       w->comm->c_coll->coll_alltoall_module)
        != OMPI_SUCCESS) {
        free(expect);
        return;
    }
    do {
        mca_osc_umr_keys_answers(w);
        done = 1;
        for (i = 0; done && (i < w->size); ++i) {
            done = (w->kans_taken[i] >= sent_us[i]);
        }
        if (!done) {
            opal_progress();
        }
    } while (!done);
    free(expect);
}

void mca_osc_umr_keys_fini(mca_osc_umr_win_t *w, int collective)
{
    umr_mpi_rma_key_t *k;
    mca_osc_umr_key_t *key;

    if (collective) {
        mca_osc_umr_keys_settle(w);
    }
    /* from here progress leaves this window alone: the requests below are
     * cancelled and waited for here, not taken by keys_progress */
    w->closing = 1;
    if (w->kreq_req != NULL) {
        ompi_request_cancel(w->kreq_req);
        ompi_request_wait_completion(w->kreq_req);
        ompi_request_free(&w->kreq_req);
    }
    mca_osc_umr_kreq_fini(w);
    umr_mpi_rma_kcache_for_each(k, &w->kc, {
        key = ucs_container_of(k, mca_osc_umr_key_t, k);
        if (key->ans_req != NULL) {   /* never answered: cancel */
            if (collective) {
                /* its target could not send the answer (settled above) */
                MCA_OSC_UMR_VERBOSE(1, "target %d never answered a key "
                                    "request: refused at the window's "
                                    "free", k->target);
                ++mca_osc_umr.cnt.key_unanswered;
                ++mca_osc_umr.cnt.key_refused;
            }
            ompi_request_cancel(key->ans_req);
            ompi_request_wait_completion(key->ans_req);
            ompi_request_free(&key->ans_req);
            key->ans_req = NULL;
            --w->kpending;
        }
    });
    if (w->dynamic) {
        mca_osc_umr_dyn_fini(w);
    }
}
