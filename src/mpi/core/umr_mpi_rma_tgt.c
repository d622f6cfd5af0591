/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: the target's answers to key requests (umr_mpi_rma.h,
 * umr_mpi_rma_wire.h).
 */
#include "umr_mpi_rma_priv.h"

#include <stdlib.h>
#include <string.h>

static const char *umr_mpi_rma_kans_str(int status)
{
    switch (status) {
    case UMR_MPI_RMA_KANS_BAD_REQUEST:   return "malformed request";
    case UMR_MPI_RMA_KANS_NO_PEER:       return "no rail to the origin";
    case UMR_MPI_RMA_KANS_OUT_OF_WINDOW: return "bytes outside the window";
    case UMR_MPI_RMA_KANS_NO_KEY:        return "no layout key";
    default:                             return "ok";
    }
}

int umr_mpi_rma_tgt_post(umr_mpi_rma_win_t *w)
{
    return umr_mpi_rma_rx_post(w, &w->kreq_rx, UMR_MPI_RMA_ANY,
                               UMR_MPI_RMA_KREQ, &w->kreq, sizeof(w->kreq));
}

/* The bytes `count` elements of `layout` touch at displacement `disp` lie
 * in the window (dynamic: in one attached region, the displacement being an
 * address); *addr_p: where the first element starts, *att_p: that region
 * (NULL: a created window). */
static int umr_mpi_rma_in_window(const umr_mpi_rma_win_t *w, int64_t disp,
                                 const umr_layout_t *layout, size_t count,
                                 char **addr_p, char **att_p)
{
    const umr_mpi_rma_att_t *att;
    ptrdiff_t off, rep, lo, hi;

    if ((count == 0) || (count >= ((size_t)1 << 40)) ||
        __builtin_mul_overflow((ptrdiff_t)disp, w->disp_unit, &off) ||
        __builtin_mul_overflow((ptrdiff_t)(count - 1),
                               umr_layout_extent(layout), &rep) ||
        __builtin_add_overflow(umr_layout_true_lb(layout),
                               (rep < 0) ? rep : 0, &lo) ||
        __builtin_add_overflow(umr_layout_true_ub(layout),
                               (rep > 0) ? rep : 0, &hi) || (hi <= lo)) {
        return 0;
    }
    if (w->dynamic) {
        /* addresses: no wrap-around, in one attached region */
        if (((lo < 0) && ((uintptr_t)off < (uintptr_t)-lo)) ||
            ((uintptr_t)off + (uintptr_t)hi < (uintptr_t)off)) {
            return 0;
        }
        att = umr_mpi_rma_att_find(w, (uintptr_t)off + (uintptr_t)lo,
                                   (uintptr_t)off + (uintptr_t)hi);
        if (att == NULL) {
            return 0;
        }
        *addr_p = (char*)(uintptr_t)off;
        *att_p  = att->base;
        return 1;
    }
    if (__builtin_add_overflow(off, lo, &lo) ||
        __builtin_add_overflow(off, hi, &hi)) {
        return 0;
    }
    *addr_p = w->base + off;
    *att_p  = NULL;
    return (lo >= 0) && (hi <= (ptrdiff_t)w->len);
}

/* The key of the request's access over the window, into `ans`. */
static int umr_mpi_rma_tkey_make(umr_mpi_rma_win_t *w, umr_mpi_peer_t *peer,
                                 const umr_mpi_rma_kreq_t *kreq, size_t apad,
                                 umr_mpi_rma_kans_t *ans)
{
    umr_layout_t *layout = NULL;
    umr_mpi_rma_tkey_t *tkey;
    umr_mpi_dtype_t t;
    const char *why = NULL;
    int status      = UMR_MPI_RMA_KANS_OK;
    char *addr, *att;

    if (umr_layout_decode(kreq->data + apad, kreq->layout_len, &layout) !=
        UCS_OK) {
        return UMR_MPI_RMA_KANS_BAD_REQUEST;
    }
    if (!umr_mpi_rma_in_window(w, kreq->disp, layout, kreq->count, &addr,
                               &att)) {
        status = UMR_MPI_RMA_KANS_OUT_OF_WINDOW;
        goto out;
    }
    if (w->ntkeys == w->tkeys_cap) {
        size_t cap = w->tkeys_cap ? 2 * w->tkeys_cap : 16;

        tkey = realloc(w->tkeys, cap * sizeof(*tkey));
        if (tkey == NULL) {
            status = UMR_MPI_RMA_KANS_NO_KEY;
            goto out;
        }
        w->tkeys     = tkey;
        w->tkeys_cap = cap;
    }
    tkey = &w->tkeys[w->ntkeys];
    umr_mpi_dtype_of_layout(&t, layout);
    if (UMR_MPI_RMA_FAULT(UMR_MPI_RMA_FAULT_TKEY) ||
        (umr_mpi_lkey_acquire(peer->rail, addr, &t, kreq->count,
                              PROT_READ | PROT_WRITE, &tkey->region,
                              &tkey->lkey, &why) != UCS_OK)) {
        UMR_MPI_RMA_VERBOSE(10, "no layout key over the window: %s",
                            (why != NULL) ? why : "test fault");
        status = UMR_MPI_RMA_KANS_NO_KEY;
        goto out;
    }
    tkey->att = att;
    ++w->ntkeys;
    ans->rkey_len = (uint16_t)peer->rail->rkey_size;
    memcpy(ans->rkey, tkey->lkey->rkey, peer->rail->rkey_size);
out:
    umr_layout_free(layout);
    return status;
}

/* Answer the request of `len` bytes in w->kreq. */
static void umr_mpi_rma_tgt_answer(umr_mpi_rma_win_t *w, size_t len)
{
    const umr_mpi_rma_kreq_t *kreq = &w->kreq;
    int src                        = kreq->origin;
    umr_mpi_rma_kans_t ans;
    umr_mpi_peer_t *peer;
    size_t apad;

    if ((len < UMR_MPI_RMA_KREQ_HDR) || (src < 0) || (src >= w->size) ||
        (src == w->rank)) {
        UMR_MPI_RMA_VERBOSE(1, "key request of %zu bytes names no origin: "
                            "dropped", len);
        return;
    }
    ++w->taken[src];
    memset(&ans, 0, sizeof(ans));
    ans.id = kreq->id;
    apad   = ucs_align_up_pow2((size_t)kreq->addr_len, 8);
    if ((kreq->magic != UMR_MPI_RMA_KREQ_MAGIC) ||
        (UMR_MPI_RMA_KREQ_HDR + apad + kreq->layout_len > len)) {
        ans.status = UMR_MPI_RMA_KANS_BAD_REQUEST;
    } else if ((NULL == (peer = umr_mpi_peer_get(w->world[src]))) ||
               ((kreq->addr_len > 0) &&
                (umr_mpi_peer_handshake(peer, kreq->data,
                                        kreq->addr_len) < 0))) {
        ans.status = UMR_MPI_RMA_KANS_NO_PEER;
    } else {
        /* the origin's RMA comes through this endpoint: never dropped */
        umr_mpi_peer_pin(peer);
        ans.status = umr_mpi_rma_tkey_make(w, peer, kreq, apad, &ans);
    }
    if (ans.status == UMR_MPI_RMA_KANS_OK) {
        if (w->given != NULL) {
            w->given[src] = 1;
        }
        ++umr_mpi_rma_cnt.key_answers;
    } else {
        ++umr_mpi_rma_cnt.key_errors;
        UMR_MPI_RMA_VERBOSE(1, "key request from rank %d refused: %s", src,
                            umr_mpi_rma_kans_str(ans.status));
    }
    if (umr_mpi_rma_send_copy(w, src, UMR_MPI_RMA_KANS, &ans,
                              sizeof(ans)) != 0) {
        UMR_MPI_RMA_VERBOSE(1, "answer to rank %d not sent: that key is "
                            "refused at the window's free", src);
        return;
    }
    ++w->answered[src];
}

void umr_mpi_rma_tgt_progress(umr_mpi_rma_win_t *w)
{
    if (!umr_mpi_rma_rx_take(&w->kreq_rx) || w->kreq_rx.status.cancelled) {
        return;
    }
    if (w->kreq_rx.status.error == 0) {
        umr_mpi_rma_tgt_answer(w, w->kreq_rx.status.length);
    }
    if (!w->closing && (umr_mpi_rma_tgt_post(w) != 0)) {
        /* later requests stay unreceived: their origins refuse those keys
         * at the window's free */
        UMR_MPI_RMA_VERBOSE(1, "the receive of key requests cannot be "
                            "posted again: no more keys given here");
    }
}

void umr_mpi_rma_tgt_close(umr_mpi_rma_win_t *w)
{
    size_t i;

    umr_mpi_rma_rx_cancel(w, &w->kreq_rx, umr_mpi_rma_tgt_progress);
    /* the window is gone: its layout keys give their keys back now */
    for (i = 0; i < w->ntkeys; ++i) {
        if (w->tkeys[i].region != NULL) {
            umr_mpi_lkey_drop(w->tkeys[i].region, w->tkeys[i].lkey);
        }
    }
    free(w->tkeys);
    w->tkeys  = NULL;
    w->ntkeys = 0;
}
