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

/* The key of the request's access over the window, into `ans`. */
static int umr_mpi_rma_tkey_make(umr_mpi_rma_win_t *w, umr_mpi_peer_t *peer,
                                 const umr_mpi_rma_kreq_t *kreq, size_t apad,
                                 umr_mpi_rma_kans_t *ans)
{
    umr_layout_t *layout = NULL;
    char *addr, *att;
    int status;

    if (umr_layout_decode(kreq->data + apad, kreq->layout_len, &layout) !=
        UCS_OK) {
        return UMR_MPI_RMA_KANS_BAD_REQUEST;
    }
    status = umr_mpi_rma_mem_key(&w->mem, peer, kreq->disp, layout,
                                 kreq->count,
                                 UMR_MPI_RMA_FAULT(UMR_MPI_RMA_FAULT_TKEY),
                                 ans->rkey, &addr, &att);
    if (status == UMR_MPI_RMA_KANS_OK) {
        ans->rkey_len = (uint16_t)peer->rail->rkey_size;
    }
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
    ans.id     = kreq->id;
    ans.handle = UMR_MPI_RMA_KANS_NO_HANDLE;
    apad   = ucs_align_up_pow2((size_t)kreq->addr_len, 8);
    if ((kreq->magic != UMR_MPI_RMA_KREQ_MAGIC) ||
        (UMR_MPI_RMA_KREQ_HDR + apad + kreq->layout_len > len)) {
        ans.status = UMR_MPI_RMA_KANS_BAD_REQUEST;
    } else if (NULL == (peer = umr_mpi_rma_mem_origin(w->world[src],
                                                      kreq->data,
                                                      kreq->addr_len))) {
        ans.status = UMR_MPI_RMA_KANS_NO_PEER;
    } else {
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
    umr_mpi_rma_rx_cancel(w, &w->kreq_rx, umr_mpi_rma_tgt_progress);
    umr_mpi_rma_mem_close(&w->mem);
}
