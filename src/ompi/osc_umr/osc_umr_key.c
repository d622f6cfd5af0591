/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: target layout keys (see osc_umr_key.h, osc_umr_wire.h).
 */
#include "osc_umr_key.h"
#include "osc_umr_dyn.h"
#include "common_umr.h"
#include "common_umr_progress.h"

#include <ompi/datatype/ompi_datatype.h>
#include <ompi/mca/pml/pml.h>
#include <opal/runtime/opal_progress.h>

#include "umr_mpi_dtype.h"
#include "uct_umr.h"

#include <stdlib.h>
#include <string.h>

/* What a key is cached by (with its layout, compared on a hit). */
typedef struct mca_osc_umr_key_id {
    int32_t  target;
    int32_t  pad;
    int64_t  disp;
    uint64_t count;
    uint64_t lhash;
} mca_osc_umr_key_id_t;

#define MCA_OSC_UMR_KREQ_HDR offsetof(mca_osc_umr_kreq_t, data)

/* ------------------------------------------------------------------ origin */

static int mca_osc_umr_key_ask(mca_osc_umr_win_t *w, mca_osc_umr_key_t *key,
                               ompi_datatype_t *dt)
{
    size_t dlen = ompi_datatype_pack_description_length(dt);
    uint8_t addr[sizeof(((mca_osc_umr_kreq_t*)NULL)->data)];
    mca_osc_umr_kreq_t *kreq;
    ompi_request_t *sreq;
    const void *desc;
    size_t alen;
    int rc;

    if ((dlen > sizeof(addr)) ||
        (ompi_datatype_get_pack_description(dt, &desc) != OMPI_SUCCESS)) {
        MCA_OSC_UMR_VERBOSE(10, "datatype description of %zu bytes: never "
                            "asked for", dlen);
        return OMPI_ERROR;
    }
    /* the address first (on the stack), then only what is sent on the
     * heap: no 4 KiB allocation per request between the user's */
    if ((mca_common_umr_peer_prepare(key->peer, addr, &alen) !=
         OMPI_SUCCESS) || (alen + dlen > sizeof(kreq->data))) {
        return OMPI_ERROR;
    }
    kreq = malloc(MCA_OSC_UMR_KREQ_HDR + alen + dlen);
    if (kreq == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    memcpy(kreq->data, addr, alen);
    /* RMA and keys on its endpoint: never disconnected (pml_umr_max_conns) */
    mca_common_umr_peer_pin(key->peer);
    kreq->magic    = MCA_OSC_UMR_KREQ_MAGIC;
    kreq->id       = (uintptr_t)key;
    kreq->disp     = key->disp;
    kreq->count    = key->count;
    kreq->desc_len = (uint32_t)dlen;
    kreq->addr_len = (uint16_t)alen;
    kreq->pad      = 0;
    memcpy(kreq->data + alen, desc, dlen);

    /* answers from one target come in the order of the requests */
    rc = MCA_PML_CALL(irecv(&key->ans, sizeof(key->ans), MPI_BYTE, key->target,
                            MCA_OSC_UMR_TAG_KANS, w->comm, &key->ans_req));
    if (rc != OMPI_SUCCESS) {
        free(kreq);
        return rc;
    }
    rc = MCA_PML_CALL(isend(kreq, MCA_OSC_UMR_KREQ_HDR + alen + dlen, MPI_BYTE,
                            key->target, MCA_OSC_UMR_TAG_KREQ,
                            MCA_PML_BASE_SEND_STANDARD, w->comm, &sreq));
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
    ++w->kreq_sent[key->target];
    opal_list_append(&w->pending, &key->super);
    ++mca_osc_umr.cnt.key_requests;
    MCA_OSC_UMR_VERBOSE(10, "asked target %d for a key (disp %ld, count %zu)",
                        key->target, (long)key->disp, key->count);
    return OMPI_SUCCESS;
}

mca_osc_umr_key_t *mca_osc_umr_key_get(mca_osc_umr_win_t *w,
                                       mca_common_umr_peer_t *peer,
                                       int target, int64_t disp,
                                       ompi_datatype_t *dt,
                                       const umr_layout_t *layout,
                                       size_t count)
{
    mca_osc_umr_key_id_t id = {
        .target = target, .disp = disp, .count = count,
        .lhash  = umr_layout_hash(layout)
    };
    mca_osc_umr_key_t *key;

    if (OPAL_SUCCESS == opal_hash_table_get_value_ptr(&w->keys, &id,
                                                      sizeof(id),
                                                      (void**)&key)) {
        return ((key->state == MCA_OSC_UMR_KEY_READY) &&
                umr_layout_equal(key->layout, layout)) ? key : NULL;
    }
    key = calloc(1, sizeof(*key));
    if (key == NULL) {
        return NULL;
    }
    OBJ_CONSTRUCT(&key->super, opal_list_item_t);
    key->w      = w;
    key->peer   = peer;
    key->target = target;
    key->disp   = disp;
    key->count  = count;
    key->state  = MCA_OSC_UMR_KEY_PENDING;
    if ((umr_layout_dup(layout, &key->layout) != UCS_OK) ||
        (mca_osc_umr_key_ask(w, key, dt) != OMPI_SUCCESS)) {
        key->state = MCA_OSC_UMR_KEY_REFUSED;
    }
    opal_hash_table_set_value_ptr(&w->keys, &id, sizeof(id), key);
    return NULL;
}

void mca_osc_umr_key_refuse(mca_osc_umr_key_t *key)
{
    key->state = MCA_OSC_UMR_KEY_REFUSED;
}

/* The target's answer arrived. */
static void mca_osc_umr_key_answered(mca_osc_umr_key_t *key)
{
    ompi_request_t *req = key->ans_req;
    int ok = !req->req_status._cancelled &&
             (req->req_status.MPI_ERROR == OMPI_SUCCESS);

    ompi_request_free(&key->ans_req);
    key->ans_req = NULL;   /* free leaves MPI_REQUEST_NULL: "no request" */
    opal_list_remove_item(&key->w->pending, &key->super);
    if (!ok || (key->ans.id != (uintptr_t)key) ||
        (key->ans.status != MCA_OSC_UMR_KANS_OK) ||
        (key->ans.rkey_len != key->peer->rail->rkey_size) ||
        (uct_umr_ep_rkey_unpack(key->peer->ep, key->ans.rkey, &key->rkey) !=
         UCS_OK)) {
        MCA_OSC_UMR_VERBOSE(10, "target %d refused a key (status %d)",
                            key->target, ok ? (int)key->ans.status : -1);
        key->state = MCA_OSC_UMR_KEY_REFUSED;
        ++mca_osc_umr.cnt.key_refused;
        return;
    }
    key->has_rkey = 1;
    key->state    = MCA_OSC_UMR_KEY_READY;
    ++mca_osc_umr.cnt.key_ready;
}

/* ------------------------------------------------------------------ target */

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

static int mca_osc_umr_kreq_post(mca_osc_umr_win_t *w)
{
    return MCA_PML_CALL(irecv(&w->kreq, sizeof(w->kreq), MPI_BYTE,
                              MPI_ANY_SOURCE, MCA_OSC_UMR_TAG_KREQ, w->comm,
                              &w->kreq_req));
}

int mca_osc_umr_keys_init(mca_osc_umr_win_t *w)
{
    if (mca_osc_umr_kreq_post(w) != OMPI_SUCCESS) {
        w->kreq_req = NULL;
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

/* The bytes `count` elements of `layout` touch at displacement `disp` lie in
 * the window (dynamic: in one attached region, the displacement being an
 * address); *addr_p: where the first element starts. */
static int mca_osc_umr_in_window(mca_osc_umr_win_t *w, int64_t disp,
                                 const umr_layout_t *layout, size_t count,
                                 char **addr_p, char **att_base_p)
{
    ptrdiff_t off    = (ptrdiff_t)disp * w->disp_unit;
    ptrdiff_t last   = (ptrdiff_t)(count - 1) * umr_layout_extent(layout);
    ptrdiff_t lo     = umr_layout_true_lb(layout) + ((last < 0) ? last : 0);
    ptrdiff_t hi     = umr_layout_true_ub(layout) + ((last > 0) ? last : 0);
    mca_osc_umr_attached_t *att;

    if ((count == 0) || (count >= ((size_t)1 << 40)) || (hi <= lo)) {
        return 0;
    }
    if (w->dynamic) {
        /* wrap-around of the address arithmetic is out of any region */
        if ((lo < 0) && ((uintptr_t)off < (uintptr_t)-lo)) {
            return 0;
        }
        att = mca_osc_umr_dyn_find(w, (uintptr_t)off + (uintptr_t)lo,
                                   (uintptr_t)off + (uintptr_t)hi);
        if ((att == NULL) || ((uintptr_t)off + (uintptr_t)hi < (uintptr_t)off)) {
            return 0;
        }
        *addr_p     = (char*)(uintptr_t)off;
        *att_base_p = att->base;
        return 1;
    }
    *addr_p     = w->base + off;
    *att_base_p = NULL;
    return (off + lo >= 0) && (off + hi <= (ptrdiff_t)w->len);
}

static int mca_osc_umr_tkey_make(mca_osc_umr_win_t *w,
                                 mca_common_umr_peer_t *peer,
                                 const mca_osc_umr_kreq_t *kreq,
                                 ompi_proc_t *proc, mca_osc_umr_kans_t *ans)
{
    uint64_t desc[MCA_OSC_UMR_KREQ_SIZE / sizeof(uint64_t)];
    mca_osc_umr_tkey_t *tkey;
    umr_layout_t *layout = NULL;
    ompi_datatype_t *dt;
    char *addr, *att_base;
    void *p = desc;
    int status = MCA_OSC_UMR_KANS_OK;

    memcpy(desc, kreq->data + kreq->addr_len, kreq->desc_len); /* aligned */
    dt = ompi_datatype_create_from_packed_description(&p, proc);
    if (dt == NULL) {
        return MCA_OSC_UMR_KANS_UNSUPPORTED;
    }
    if ((umr_mpi_dtype_decode(dt, &layout) != UCS_OK) || (layout == NULL)) {
        OMPI_DATATYPE_RELEASE(dt);
        return MCA_OSC_UMR_KANS_UNSUPPORTED;
    }
    OMPI_DATATYPE_RELEASE(dt);
    if (!mca_osc_umr_in_window(w, kreq->disp, layout, kreq->count, &addr,
                               &att_base)) {
        status = MCA_OSC_UMR_KANS_OUT_OF_WINDOW;
        goto out;
    }
    if (w->ntkeys == w->tkeys_cap) {
        size_t cap = w->tkeys_cap ? 2 * w->tkeys_cap : 16;
        tkey = realloc(w->tkeys, cap * sizeof(*tkey));
        if (tkey == NULL) {
            status = MCA_OSC_UMR_KANS_NO_KEY;
            goto out;
        }
        w->tkeys     = tkey;
        w->tkeys_cap = cap;
    }
    tkey = &w->tkeys[w->ntkeys];
    if (mca_common_umr_lkey_acquire(peer->rail, addr, layout,
                                    kreq->count, &tkey->region, &tkey->lkey)
        != OMPI_SUCCESS) {
        status = MCA_OSC_UMR_KANS_NO_KEY;
        goto out;
    }
    tkey->att_base = att_base;
    ++w->ntkeys;
    ans->rkey_len = (uint16_t)peer->rail->rkey_size;
    memcpy(ans->rkey, tkey->lkey->rkey, peer->rail->rkey_size);
out:
    umr_layout_free(layout);
    return status;
}

/* A key request from `src` is in w->kreq (`len` bytes): answer it. */
static void mca_osc_umr_kreq_answer(mca_osc_umr_win_t *w, int src, size_t len)
{
    const mca_osc_umr_kreq_t *kreq = &w->kreq;
    mca_common_umr_peer_t *peer;
    mca_osc_umr_kans_t *ans;
    ompi_request_t *sreq;

    ans = calloc(1, sizeof(*ans));
    if (ans == NULL) {
        return;   /* the origin's key stays pending: it passes through */
    }
    ans->id = kreq->id;
    if ((len < MCA_OSC_UMR_KREQ_HDR) || (kreq->magic != MCA_OSC_UMR_KREQ_MAGIC) ||
        (MCA_OSC_UMR_KREQ_HDR + (size_t)kreq->addr_len + kreq->desc_len > len)) {
        ans->status = MCA_OSC_UMR_KANS_BAD_REQUEST;
    } else if ((NULL == (peer = mca_common_umr_peer_get(w->comm, src))) ||
               ((kreq->addr_len > 0) &&
                (mca_common_umr_peer_handshake(peer, kreq->data,
                                               kreq->addr_len) < 0))) {
        ans->status = MCA_OSC_UMR_KANS_NO_PEER;
    } else {
        /* the origin's RMA comes through this endpoint: never disconnected */
        mca_common_umr_peer_pin(peer);
        ans->status = mca_osc_umr_tkey_make(w, peer, kreq,
                                            ompi_comm_peer_lookup(w->comm, src),
                                            ans);
    }
    if (ans->status == MCA_OSC_UMR_KANS_OK) {
        w->tkey_given[src] = 1;
        ++mca_osc_umr.cnt.key_answers;
    } else {
        ++mca_osc_umr.cnt.key_errors;
        /* bad input (out of the window, malformed) is worth a line; a type
         * the decoder cannot express is routine */
        MCA_OSC_UMR_VERBOSE((ans->status == MCA_OSC_UMR_KANS_UNSUPPORTED) ?
                            10 : 1, "key request from rank %d refused: %s",
                            src, mca_osc_umr_kans_str(ans->status));
    }
    ++w->kreq_answered[src];
    if (MCA_PML_CALL(isend(ans, sizeof(*ans), MPI_BYTE, src,
                           MCA_OSC_UMR_TAG_KANS, MCA_PML_BASE_SEND_STANDARD,
                           w->comm, &sreq)) != OMPI_SUCCESS) {
        free(ans);
        return;
    }
    mca_common_umr_reap_add_buf(sreq, ans);
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
            mca_osc_umr_kreq_answer(w, src, len);
        }
        ompi_request_free(&req);
        if (mca_osc_umr_kreq_post(w) != OMPI_SUCCESS) {
            w->kreq_req = NULL;   /* origins' keys stay pending */
        }
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
    mca_osc_umr_key_t *key, *next;

    OPAL_LIST_FOREACH_SAFE(key, next, &w->pending, mca_osc_umr_key_t) {
        if (REQUEST_COMPLETE(key->ans_req)) {
            mca_osc_umr_key_answered(key);
        }
    }
}

void mca_osc_umr_keys_drop(mca_osc_umr_win_t *w, int target)
{
    mca_osc_umr_key_id_t *id;
    mca_osc_umr_key_t *key;
    void *k, *node = NULL;
    size_t ksize, n = 0, cap = 0, i;
    mca_osc_umr_key_id_t *ids = NULL, *tmp;
    int rc;

    rc = opal_hash_table_get_first_key_ptr(&w->keys, &k, &ksize, (void**)&key,
                                           &node);
    while (rc == OPAL_SUCCESS) {
        id = k;
        if ((key->target == target) &&
            (key->state != MCA_OSC_UMR_KEY_PENDING)) {
            if (n == cap) {
                cap = cap ? 2 * cap : 16;
                tmp = realloc(ids, cap * sizeof(*ids));
                if (tmp == NULL) {
                    /* cannot drop them: never use any key of this window */
                    w->dynamic_broken = 1;
                    break;
                }
                ids = tmp;
            }
            ids[n++] = *id;
            /* kept until the window goes: operations in flight elsewhere
             * may still refer to it */
            opal_list_append(&w->stale, &key->super);
        }
        rc = opal_hash_table_get_next_key_ptr(&w->keys, &k, &ksize,
                                              (void**)&key, node, &node);
    }
    for (i = 0; i < n; ++i) {
        opal_hash_table_remove_value_ptr(&w->keys, &ids[i], sizeof(ids[i]));
    }
    mca_osc_umr.cnt.keys_dropped += n;
    free(ids);
}

void mca_osc_umr_key_free(mca_osc_umr_key_t *key)
{
    if (key->has_rkey) {
        uct_umr_ep_rkey_release(key->peer->ep, key->rkey);
    }
    if (key->layout != NULL) {
        umr_layout_free(key->layout);
    }
    OBJ_DESTRUCT(&key->super);
    free(key);
}

/* Every request another rank sent us is answered, every answer we wait
 * for has come (collective over the window's communicator). */
static void mca_osc_umr_keys_settle(mca_osc_umr_win_t *w)
{
    int *expect = calloc(w->size, sizeof(int));
    int i, done;

    if ((expect == NULL) ||
        (w->comm->c_coll->coll_alltoall(w->kreq_sent, 1, MPI_INT, expect, 1,
                                        MPI_INT, w->comm,
                                        w->comm->c_coll->coll_alltoall_module)
         != OMPI_SUCCESS)) {
        free(expect);
        return;
    }
    do {
        done = opal_list_is_empty(&w->pending) && (w->kreq_req != NULL);
        for (i = 0; done && (i < w->size); ++i) {
            done = (w->kreq_answered[i] >= expect[i]);
        }
        if (!done) {
            if (w->kreq_req == NULL) {
                break;   /* no receive posted any more: cannot answer */
            }
            opal_progress();
        }
    } while (!done);
    free(expect);
}

void mca_osc_umr_keys_fini(mca_osc_umr_win_t *w, int collective)
{
    mca_osc_umr_key_t *key, *next;
    void *k, *node = NULL;
    size_t ksize, i;
    int rc;

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
    for (i = 0; i < w->ntkeys; ++i) {
        mca_common_umr_lkey_release(w->tkeys[i].region, w->tkeys[i].lkey);
    }
    w->ntkeys = 0;
    rc = opal_hash_table_get_first_key_ptr(&w->keys, &k, &ksize, (void**)&key,
                                           &node);
    while (rc == OPAL_SUCCESS) {
        if (key->ans_req != NULL) {   /* not settled: cancel */
            ompi_request_cancel(key->ans_req);
            ompi_request_wait_completion(key->ans_req);
            ompi_request_free(&key->ans_req);
            opal_list_remove_item(&w->pending, &key->super);
        }
        mca_osc_umr_key_free(key);
        rc = opal_hash_table_get_next_key_ptr(&w->keys, &k, &ksize,
                                              (void**)&key, node, &node);
    }
    opal_hash_table_remove_all(&w->keys);
    if (w->dynamic) {
        mca_osc_umr_dyn_fini(w);
        OPAL_LIST_FOREACH_SAFE(key, next, &w->stale, mca_osc_umr_key_t) {
            opal_list_remove_item(&w->stale, &key->super);
            mca_osc_umr_key_free(key);
        }
    }
}
