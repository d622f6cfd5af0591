/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: the origin's target keys (umr_mpi_rma.h): the cache,
 * the request, the answer.
 */
#include "umr_mpi_rma_priv.h"

#include "uct_umr.h"

#include <stdlib.h>
#include <string.h>

static uint64_t umr_mpi_rma_key_hash(int target, int64_t disp, size_t count,
                                     const umr_layout_t *layout)
{
    uint64_t h = umr_layout_hash(layout);

    h = (h ^ (uint64_t)target) * 0x9e3779b97f4a7c15ull;
    h = (h ^ (uint64_t)disp) * 0x9e3779b97f4a7c15ull;
    return (h ^ count) * 0x9e3779b97f4a7c15ull;
}

/* Ask the target: 0, or -1 (nothing was sent: the key is refused). */
static int umr_mpi_rma_key_ask(umr_mpi_rma_win_t *w, umr_mpi_rma_key_t *key)
{
    /* the layout first, where it goes after the longest address: one that
     * does not fit is never asked for, nothing started for it */
    static const size_t amax = ucs_align_up_pow2(UMR_MPI_PEER_ADDR_MAX, 8);
    umr_mpi_rma_kreq_t kreq;
    size_t alen = 0, apad, llen;

    if (umr_layout_encode(key->layout, kreq.data + amax,
                          sizeof(kreq.data) - amax, &llen) != UCS_OK) {
        UMR_MPI_RMA_VERBOSE(10, "target layout of %zu blocks does not fit a "
                            "key request: through the MPI",
                            umr_layout_num_blocks(key->layout));
        return -1;
    }
    if (umr_mpi_peer_prepare(key->peer, kreq.data, &alen) != UCS_OK) {
        return -1;
    }
    apad = ucs_align_up_pow2(alen, 8);
    memmove(kreq.data + apad, kreq.data + amax, llen);
    umr_mpi_peer_pin(key->peer);
    kreq.magic       = UMR_MPI_RMA_KREQ_MAGIC;
    kreq.id          = (uintptr_t)key;
    kreq.disp        = key->disp;
    kreq.count       = key->count;
    kreq.origin      = w->rank;
    kreq.addr_len    = (uint16_t)alen;
    kreq.layout_len  = (uint16_t)llen;
    /* answers from one target come in the order of the requests */
    if (umr_mpi_rma_rx_post(w, &key->ans_rx, key->target, UMR_MPI_RMA_KANS,
                            &key->ans, sizeof(key->ans)) != 0) {
        return -1;
    }
    if (UMR_MPI_RMA_FAULT(UMR_MPI_RMA_FAULT_KREQ) ||
        (umr_mpi_rma_send_copy(w, key->target, UMR_MPI_RMA_KREQ, &kreq,
                               UMR_MPI_RMA_KREQ_HDR + apad + llen) != 0)) {
        /* the answer's receive never matches: cancelled, taken when its
         * completion runs */
        w->ops->cancel(key->ans_rx.req);
        key->ans_rx.req = NULL;
        ++w->pending;
        return -1;
    }
    ++w->sent[key->target];
    ++w->pending;
    ++umr_mpi_rma_cnt.key_requests;
    UMR_MPI_RMA_VERBOSE(10, "asked target %d for a key (disp %ld, count %zu, "
                        "%zu bytes of layout)", key->target, (long)key->disp,
                        key->count, llen);
    return 0;
}

void umr_mpi_rma_kcache_init(umr_mpi_rma_kcache_t *kc)
{
    kh_init_inplace(umr_mpi_rma_keys, &kc->keys);
    ucs_list_head_init(&kc->stale);
}

umr_mpi_rma_key_t *umr_mpi_rma_kcache_get(umr_mpi_rma_kcache_t *kc,
                                          size_t size, umr_mpi_peer_t *peer,
                                          int target, int64_t disp,
                                          const umr_layout_t *layout,
                                          size_t count, int *fresh)
{
    uint64_t h = umr_mpi_rma_key_hash(target, disp, count, layout);
    umr_mpi_rma_key_t *key;
    khiter_t it;
    int ret;

    *fresh = 0;
    it     = kh_get(umr_mpi_rma_keys, &kc->keys, h);
    if (it != kh_end(&kc->keys)) {
        key = kh_val(&kc->keys, it);
        return ((key->target == target) && (key->disp == disp) &&
                (key->count == count) &&
                umr_layout_equal(key->layout, layout)) ? key : NULL;
    }
    key = calloc(1, size);
    if (key == NULL) {
        return NULL;
    }
    it = kh_put(umr_mpi_rma_keys, &kc->keys, h, &ret);
    if (ret < 0) {
        free(key);
        return NULL;
    }
    kh_val(&kc->keys, it) = key;
    key->peer   = peer;
    key->target = target;
    key->disp   = disp;
    key->count  = count;
    if (umr_layout_dup(layout, &key->layout) != UCS_OK) {
        key->state = UMR_MPI_RMA_KEY_REFUSED;
    }
    *fresh = 1;
    return key;
}

umr_mpi_rma_key_t *umr_mpi_rma_key_get(umr_mpi_rma_win_t *w,
                                       umr_mpi_peer_t *peer, int target,
                                       int64_t disp, const umr_layout_t *layout,
                                       size_t count)
{
    umr_mpi_rma_key_t *key;
    int fresh;

    key = umr_mpi_rma_kcache_get(&w->kc, sizeof(*key), peer, target, disp,
                                 layout, count, &fresh);
    if ((key == NULL) || !fresh) {
        return ((key != NULL) && (key->state == UMR_MPI_RMA_KEY_READY)) ?
               key : NULL;
    }
    key->w = w;
    if ((key->state != UMR_MPI_RMA_KEY_PENDING) ||
        (umr_mpi_rma_key_ask(w, key) != 0)) {
        key->state = UMR_MPI_RMA_KEY_REFUSED;
        ++umr_mpi_rma_cnt.key_refused;
    }
    return NULL;
}

int umr_mpi_rma_key_accept(umr_mpi_rma_key_t *key, int ok)
{
    if (!ok || (key->ans.id != (uintptr_t)key) ||
        (key->ans.status != UMR_MPI_RMA_KANS_OK) ||
        (key->ans.rkey_len != key->peer->rail->rkey_size) ||
        (uct_umr_ep_rkey_unpack(key->peer->ep, key->ans.rkey, &key->rkey) !=
         UCS_OK)) {
        UMR_MPI_RMA_VERBOSE(10, "target %d refused a key (status %d)",
                            key->target, ok ? (int)key->ans.status : -1);
        key->state = UMR_MPI_RMA_KEY_REFUSED;
        return 0;
    }
    key->has_rkey = 1;
    key->state    = UMR_MPI_RMA_KEY_READY;
    return 1;
}

/* The answer of `key` arrived: ready, or refused. */
static void umr_mpi_rma_key_answered(umr_mpi_rma_win_t *w,
                                     umr_mpi_rma_key_t *key)
{
    const umr_mpi_status_t *s = &key->ans_rx.status;
    int ok = !s->cancelled && (s->error == 0) &&
             (s->length == sizeof(key->ans));

    --w->pending;
    if (!s->cancelled) {
        ++w->ans_taken[key->target];
    }
    if (key->state != UMR_MPI_RMA_KEY_PENDING) {
        return;   /* refused already (the request was not sent) */
    }
    if (umr_mpi_rma_key_accept(key, ok)) {
        ++umr_mpi_rma_cnt.key_ready;
    } else {
        ++umr_mpi_rma_cnt.key_refused;
    }
}

void umr_mpi_rma_keys_progress(umr_mpi_rma_win_t *w)
{
    umr_mpi_rma_key_t *key;

    if (w->pending == 0) {
        return;
    }
    umr_mpi_rma_kcache_for_each(key, &w->kc, {
        if (umr_mpi_rma_rx_take(&key->ans_rx)) {
            umr_mpi_rma_key_answered(w, key);
        }
    });
}

size_t umr_mpi_rma_kcache_drop(umr_mpi_rma_kcache_t *kc, int target,
                               int refuse_pending)
{
    umr_mpi_rma_key_t *key;
    size_t n = 0;
    khiter_t it;

    for (it = kh_begin(&kc->keys); it != kh_end(&kc->keys); ++it) {
        if (!kh_exist(&kc->keys, it) ||
            ((key = kh_val(&kc->keys, it))->target != target)) {
            continue;
        }
        if (key->state == UMR_MPI_RMA_KEY_PENDING) {
            if (refuse_pending) {
                /* that access goes to the MPI from now on */
                key->state = UMR_MPI_RMA_KEY_REFUSED;
                ++umr_mpi_rma_cnt.key_refused;
            }
            continue;
        }
        /* kept until the cache goes: an operation in flight may use it */
        kh_del(umr_mpi_rma_keys, &kc->keys, it);
        ucs_list_add_tail(&kc->stale, &key->stale);
        ++n;
    }
    return n;
}

void umr_mpi_rma_keys_drop(umr_mpi_rma_win_t *w, int target)
{
    /* a pending key's answer may name the detached memory */
    umr_mpi_rma_cnt.keys_dropped += umr_mpi_rma_kcache_drop(&w->kc, target,
                                                            1);
}

static void umr_mpi_rma_key_free(umr_mpi_rma_key_t *key)
{
    if (key->has_rkey) {
        uct_umr_ep_rkey_release(key->peer->ep, key->rkey);
    }
    if (key->layout != NULL) {
        umr_layout_free(key->layout);
    }
    free(key);
}

void umr_mpi_rma_kcache_close(umr_mpi_rma_kcache_t *kc)
{
    umr_mpi_rma_key_t *key;

    umr_mpi_rma_kcache_for_each(key, kc, {
        umr_mpi_rma_key_free(key);
    });
    kh_destroy_inplace(umr_mpi_rma_keys, &kc->keys);
    while (!ucs_list_is_empty(&kc->stale)) {
        key = ucs_list_extract_head(&kc->stale, umr_mpi_rma_key_t, stale);
        umr_mpi_rma_key_free(key);
    }
}

void umr_mpi_rma_keys_close(umr_mpi_rma_win_t *w)
{
    umr_mpi_rma_key_t *key;

    /* the answers never sent: their receives cancelled, their completions
     * awaited (they name the keys) */
    umr_mpi_rma_kcache_for_each(key, &w->kc, {
        if ((key->ans_rx.req != NULL) && !key->ans_rx.arrived) {
            w->ops->cancel(key->ans_rx.req);
        }
    });
    while (w->pending > 0) {
        umr_mpi_rma_keys_progress(w);
        if (w->pending > 0) {
            umr_mpi.b->progress();
        }
    }
    umr_mpi_rma_kcache_close(&w->kc);
}
