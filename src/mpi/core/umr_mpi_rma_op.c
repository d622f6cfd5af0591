/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: one-sided put and get through a target key
 * (umr_mpi_rma.h).
 */
#include "umr_mpi_rma_priv.h"
#include "umr_mpi_choice.h"

#include "uct_umr.h"

static void umr_mpi_rma_op_done(uct_completion_t *comp)
{
    umr_mpi_rma_op_t *op = ucs_container_of(comp, umr_mpi_rma_op_t, comp);
    umr_mpi_rma_win_t *w = op->w;

    --w->inflight[op->target];
    --w->inflight_total;
    if (UMR_MPI_RMA_FAULT(UMR_MPI_RMA_FAULT_FAIL)) {
        comp->status = UCS_ERR_IO_ERROR;
    }
    umr_mpi_region_put(op->region);
    op->region = NULL;
    if (comp->status != UCS_OK) {
        /* done again through the MPI; the key is not used again */
        ++umr_mpi_rma_cnt.rma_redone;
        UMR_MPI_RMA_VERBOSE(1, "operation to %d failed (%s): done again "
                            "through the MPI", op->target,
                            ucs_status_string(comp->status));
        op->key->state = UMR_MPI_RMA_KEY_REFUSED;
    }
    op->done(op, comp->status == UCS_OK);
}

/* Whether `c` may go zero-copy at all, and to which peer. */
static umr_mpi_peer_t *umr_mpi_rma_eligible(const umr_mpi_rma_win_t *w,
                                            const umr_mpi_rma_call_t *c,
                                            size_t *length_p)
{
    umr_mpi_peer_t *peer;

    if ((c->mode == UMR_MPI_ZCOPY_OFF) || (c->target == w->rank) ||
        (c->target < 0) || (c->target >= w->size) || (c->ocount == 0) ||
        (c->tcount == 0) || (c->oinfo == NULL) || (c->tinfo == NULL) ||
        (c->oinfo->layout == NULL) || (c->tinfo->layout == NULL)) {
        return NULL;
    }
    *length_p = c->oinfo->size * c->ocount;
    if ((*length_p == 0) || (*length_p != c->tinfo->size * c->tcount)) {
        return NULL;
    }
    if ((c->mode == UMR_MPI_ZCOPY_AUTO) && c->oinfo->is_contig &&
        c->tinfo->is_contig) {
        return NULL;   /* one block each: the MPI does as well */
    }
    peer = umr_mpi_peer_get(w->world[c->target]);
    return ((peer == NULL) || umr_mpi_peer_retired(peer)) ? NULL : peer;
}

umr_mpi_rma_key_t *umr_mpi_rma_ready(umr_mpi_rma_win_t *w,
                                     const umr_mpi_rma_call_t *c)
{
    umr_mpi_rma_key_t *key;
    umr_mpi_peer_t *peer;
    size_t length;

    peer = umr_mpi_rma_eligible(w, c, &length);
    if ((peer == NULL) ||
        (umr_mpi_choose_rma(c->is_put ? UMR_MPI_OP_PUT : UMR_MPI_OP_GET,
                            w->osc, c->mode, c->okey, c->oinfo, c->ocount,
                            c->tkey, c->tinfo, c->tcount, peer) !=
         UMR_MPI_ZCOPY)) {
        goto pass;
    }
    key = umr_mpi_rma_key_get(w, peer, c->target, c->disp, c->tinfo->layout,
                              c->tcount);
    if ((key != NULL) && peer->ready) {
        return key;
    }
pass:
    ++umr_mpi_rma_cnt.rma_passthrough;
    return NULL;
}

int umr_mpi_rma_post(umr_mpi_rma_win_t *w, umr_mpi_rma_op_t *op,
                     const umr_mpi_rma_call_t *c, umr_mpi_rma_key_t *key)
{
    umr_mpi_peer_t *peer = key->peer;
    size_t length        = c->oinfo->size * c->ocount;
    const char *why      = NULL;
    ucs_status_t status;

    /* a put only reads the origin buffer */
    if (UMR_MPI_RMA_FAULT(UMR_MPI_RMA_FAULT_OREG) ||
        (umr_mpi_region_acquire(peer->rail, c->origin_addr, c->oinfo,
                                c->ocount, c->is_put ? PROT_READ :
                                PROT_READ | PROT_WRITE, &op->region,
                                &why) != UCS_OK)) {
        UMR_MPI_RMA_VERBOSE(10, "origin memory of a %s to %d: %s: through "
                            "the MPI", c->is_put ? "put" : "get", c->target,
                            (why != NULL) ? why : "test fault");
        goto pass;
    }
    op->w           = w;
    op->target      = c->target;
    op->key         = key;
    op->comp.func   = umr_mpi_rma_op_done;
    op->comp.count  = 1;
    op->comp.status = UCS_OK;
    /* called, not taken by address: the core loads the module that
     * defines them after it is loaded itself (lazy binding) */
    if (c->is_put) {
        status = uct_umr_ep_put_layout(peer->ep, op->region->memh,
                                       c->origin_addr, c->oinfo->layout,
                                       c->ocount, 0, length, 0, key->rkey,
                                       &op->comp);
    } else {
        status = uct_umr_ep_get_layout(peer->ep, op->region->memh,
                                       c->origin_addr, c->oinfo->layout,
                                       c->ocount, 0, length, 0, key->rkey,
                                       &op->comp);
    }
    if ((status != UCS_INPROGRESS) && (status != UCS_OK)) {
        umr_mpi_region_put(op->region);
        op->region = NULL;
        if ((status != UCS_ERR_NO_RESOURCE) &&
            (status != UCS_ERR_EXCEEDS_LIMIT)) {
            /* anything but a full queue or no key now: not again */
            UMR_MPI_RMA_VERBOSE(1, "%s to %d not posted (%s): through the "
                                "MPI", c->is_put ? "put" : "get", c->target,
                                ucs_status_string(status));
            key->state = UMR_MPI_RMA_KEY_REFUSED;
        }
        goto pass;
    }
    ++w->inflight[c->target];
    ++w->inflight_total;
    if (c->is_put) {
        ++umr_mpi_rma_cnt.zcopy_puts;
    } else {
        ++umr_mpi_rma_cnt.zcopy_gets;
    }
    umr_mpi_rma_cnt.rma_bytes += length;
    if (status == UCS_OK) {
        umr_mpi_rma_op_done(&op->comp);
    }
    return 1;

pass:
    ++umr_mpi_rma_cnt.rma_passthrough;
    return 0;
}

void umr_mpi_rma_wait(umr_mpi_rma_win_t *w, int target)
{
    while (((target < 0) ? w->inflight_total : w->inflight[target]) > 0) {
        umr_mpi_progress();
    }
}
