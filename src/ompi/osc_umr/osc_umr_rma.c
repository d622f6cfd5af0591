/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: put and get (see osc_umr_rma.h).
 */
#include "osc_umr_rma.h"
#include "osc_umr_redo.h"
#include "osc_umr_dyn.h"
#include "osc_umr_key.h"
#include "osc_umr_packed.h"
#include "common_umr_binding.h"
#include "common_umr_dtype.h"

#include "umr_mpi_choice.h"
#include "umr_mpi_keys.h"
#include "umr_mpi_peer.h"
#include "umr_mpi_progress.h"

#include "uct_umr.h"

#include <ompi/constants.h>
#include <ompi/datatype/ompi_datatype.h>

#include <stdlib.h>

static void mca_osc_umr_op_done(uct_completion_t *comp)
{
    mca_osc_umr_op_t *op  = ucs_container_of(comp, mca_osc_umr_op_t, comp);
    mca_osc_umr_win_t *w  = op->w;

    --w->inflight[op->call.target];
    --w->inflight_total;
    umr_mpi_region_put(op->region);
    op->region = NULL;
    if (comp->status == UCS_OK) {
        mca_osc_umr_op_free(op, OMPI_SUCCESS);
        return;
    }
    /* redone through the wrapped module by the next synchronisation; the
     * key is not used again */
    ++mca_osc_umr.cnt.zcopy_errors;
    MCA_OSC_UMR_VERBOSE(1, "%s to %d failed (%s): redone through the wrapped "
                        "module", op->call.is_put ? "put" : "get",
                        op->call.target,
                        ucs_status_string(comp->status));
    mca_osc_umr_key_refuse(op->key);
    opal_list_append(&w->failed, &op->super);
}

/* Post `op` once: UCS_INPROGRESS (completion from progress), UCS_OK
 * (done), UCS_ERR_NO_RESOURCE (its queue is full), or an error (nothing
 * moved). Called, not taken by address: the module that defines the
 * transport's functions is loaded by the core after this component (lazy
 * binding). */
static ucs_status_t mca_osc_umr_op_post(mca_osc_umr_op_t *op)
{
    if (op->call.is_put) {
        return uct_umr_ep_put_layout(op->peer->ep, op->region->memh,
                                     op->call.origin_addr, op->layout,
                                     op->call.origin_count, 0, op->length, 0,
                                     op->key->k.rkey, &op->comp);
    }
    return uct_umr_ep_get_layout(op->peer->ep, op->region->memh,
                                 op->call.origin_addr, op->layout,
                                 op->call.origin_count, 0, op->length, 0,
                                 op->key->k.rkey, &op->comp);
}

/* An operation whose queue was full, posted again from progress: it stays
 * in flight until then (a synchronisation waits for it), never spins. */
static void mca_osc_umr_op_retry(umr_mpi_work_t *work)
{
    mca_osc_umr_op_t *op = ucs_container_of(work, mca_osc_umr_op_t, work);
    ucs_status_t status  = mca_osc_umr_op_post(op);
    mca_osc_umr_win_t *w = op->w;

    if ((status == UCS_ERR_NO_RESOURCE) &&
        (++op->tries < MCA_OSC_UMR_POST_TRIES)) {
        umr_mpi_work_post(&op->work);   /* at the next progress */
        return;
    }
    umr_mpi_progress_ref(-1);
    if (status == UCS_ERR_NO_RESOURCE) {
        /* still no room: the key pool's keys are in use (by windows'
         * target keys): a decision, redone through the wrapped module at
         * the next synchronisation; the target's key stays */
        MCA_OSC_UMR_VERBOSE(10, "%s to %d: no origin key: through the "
                            "wrapped module", op->call.is_put ? "put" : "get",
                            op->call.target);
        ++mca_osc_umr.cnt.keys_short;
        --w->inflight[op->call.target];
        --w->inflight_total;
        umr_mpi_region_put(op->region);
        op->region = NULL;
        opal_list_append(&w->failed, &op->super);
        return;
    }
    if (status != UCS_INPROGRESS) {
        op->comp.status = status;
        mca_osc_umr_op_done(&op->comp);
    }
}

/* Start the operation zero-copy: 1 (taken; *op_p the operation in flight,
 * or NULL when it completed at once), packed: 2 (*pop_p in flight), or 0
 * (the caller uses the wrapped module). */
static int mca_osc_umr_rma_start(mca_osc_umr_win_t *w,
                                 const mca_osc_umr_call_t *c,
                                 mca_osc_umr_op_t **op_p,
                                 struct mca_osc_umr_pop **pop_p)
{
    int is_put                          = c->is_put;
    int target                          = c->target;
    void *origin_addr                   = c->origin_addr;
    umr_ompi_osc_count_t origin_count   = c->origin_count;
    umr_ompi_osc_count_t target_count   = c->target_count;
    ompi_datatype_t *origin_dt          = c->origin_dt;
    ompi_datatype_t *target_dt          = c->target_dt;
    ptrdiff_t target_disp               = c->target_disp;
    int choice = UMR_MPI_ZCOPY;
    const umr_mpi_dtype_t *oinfo, *tinfo;
    umr_mpi_peer_t *peer;
    umr_mpi_region_t *region;
    mca_osc_umr_key_t *key;
    mca_osc_umr_op_t *op;
    const char *why = NULL;
    ucs_status_t status;
    size_t length;

    if ((target == w->rank) || (origin_count <= 0) || (target_count <= 0) ||
        (target < 0) || (target >= w->size)) {
        goto real;
    }
    length = origin_dt->super.size * (size_t)origin_count;
    if ((length != target_dt->super.size * (size_t)target_count) ||
        (length < mca_osc_umr.min_size)) {
        goto real;
    }
    if (w->dynamic) {
        ptrdiff_t lb, extent, tlb, textent;

        /* dynamic windows: nothing below one page of target span (never
         * registered by the target, osc_umr_dyn.h; and keys of tiny
         * accesses at ever new addresses, as linked lists make, would
         * only fill the cache) */
        ompi_datatype_get_extent(target_dt, &lb, &extent);
        ompi_datatype_get_true_extent(target_dt, &tlb, &textent);
        if (textent + (ptrdiff_t)(target_count - 1) * extent <
            MCA_OSC_UMR_DYN_MIN_ATTACH) {
            goto real;
        }
    }
    if ((mca_osc_umr.zcopy_mode == MCA_OSC_UMR_ZCOPY_AUTO) &&
        ompi_datatype_is_contiguous_memory_layout(origin_dt, origin_count) &&
        ompi_datatype_is_contiguous_memory_layout(target_dt, target_count)) {
        goto real;   /* one block: the wrapped module does as well */
    }
    oinfo = mca_common_umr_type(origin_dt);
    tinfo = mca_common_umr_type(target_dt);
    if ((oinfo == NULL) || (oinfo->layout == NULL) || (tinfo == NULL) ||
        (tinfo->layout == NULL)) {
        goto real;
    }
    peer = umr_mpi_peer_get(mca_common_umr_world_rank(w->comm, target));
    if (peer == NULL) {
        goto real;
    }
    if (mca_osc_umr.packed_mode == MCA_OSC_UMR_PACKED_ON) {
        choice = UMR_MPI_PACKED;
    } else {
        choice = umr_mpi_choose_rma(is_put ? UMR_MPI_OP_PUT : UMR_MPI_OP_GET,
                                    w->osc_costs, mca_osc_umr.zcopy_mode,
                                    mca_common_umr_type_key(origin_dt), oinfo,
                                    origin_count,
                                    mca_common_umr_type_key(target_dt), tinfo,
                                    target_count, peer);
        if (choice == UMR_MPI_PASS) {
            goto pass;   /* the wrapped module is as fast (umr_mpi_choice.h) */
        }
    }
    if (w->dynamic) {
        /* a detach the target told us about drops its keys first */
        mca_osc_umr_keys_check_detach(w);
        if (w->dynamic_broken) {
            goto pass;
        }
    }
    key = mca_osc_umr_key_get(w, peer, target, target_disp, target_dt,
                              tinfo->layout, target_count);
    if (choice == UMR_MPI_PACKED) {
        /* the key's packed destination; no endpoint needed */
        if (key == NULL) {
            goto pass;
        }
        *pop_p = mca_osc_umr_packed_start(w, key, c, oinfo, length);
        if (*pop_p == NULL) {
            goto pass;
        }
        return 2;
    }
    if ((key == NULL) || !peer->ready) {
        goto pass;
    }
    /* a put only reads the origin buffer */
    if (umr_mpi_region_acquire(peer->rail, origin_addr, oinfo, origin_count,
                               is_put ? PROT_READ : PROT_READ | PROT_WRITE,
                               &region, &why) != UCS_OK) {
        MCA_OSC_UMR_VERBOSE(10, "%s to %d: the origin's memory: %s: through "
                            "the wrapped module", is_put ? "put" : "get",
                            target, why);
        goto pass;
    }
    op = mca_osc_umr_op_new(w, c, NULL);
    if (op == NULL) {
        umr_mpi_region_put(region);
        goto pass;
    }
    op->work.run      = mca_osc_umr_op_retry;
    op->tries         = 0;
    op->comp.func     = mca_osc_umr_op_done;
    op->comp.count    = 1;
    op->comp.status   = UCS_OK;
    op->key           = key;
    op->peer          = peer;
    op->region        = region;
    op->layout        = oinfo->layout;
    op->length        = length;
    status = mca_osc_umr_op_post(op);
    if (status == UCS_ERR_NO_RESOURCE) {
        /* its queue is full: posted again from progress, in flight until
         * then */
        ++w->inflight[target];
        ++w->inflight_total;
        umr_mpi_work_post(&op->work);
        umr_mpi_progress_ref(1);
        *op_p = op;
    } else if (status == UCS_INPROGRESS) {
        ++w->inflight[target];
        ++w->inflight_total;
        *op_p = op;
    } else if (status == UCS_OK) {
        umr_mpi_region_put(region);
        mca_osc_umr_op_free(op, OMPI_SUCCESS);
        *op_p = NULL;
    } else if (status == UCS_ERR_EXCEEDS_LIMIT) {
        /* the origin's layout gets no key now (the key pool's keys in use,
         * or beyond what a key takes): a decision, this operation passes
         * through; the target's key stays */
        MCA_OSC_UMR_VERBOSE(10, "%s to %d: no origin key (%s): through the "
                            "wrapped module", is_put ? "put" : "get", target,
                            ucs_status_string(status));
        ++mca_osc_umr.cnt.keys_short;
        umr_mpi_region_put(region);
        mca_osc_umr_op_free(op, OMPI_SUCCESS);
        goto pass;
    } else {
        MCA_OSC_UMR_VERBOSE(1, "%s to %d not posted (%s): through the wrapped "
                            "module", is_put ? "put" : "get", target,
                            ucs_status_string(status));
        ++mca_osc_umr.cnt.zcopy_errors;
        mca_osc_umr_key_refuse(key);
        umr_mpi_region_put(region);
        mca_osc_umr_op_free(op, OMPI_SUCCESS);
        goto pass;
    }
    if (is_put) {
        ++mca_osc_umr.cnt.zcopy_puts;
    } else {
        ++mca_osc_umr.cnt.zcopy_gets;
    }
    mca_osc_umr.cnt.zcopy_bytes += length;
    return 1;

pass:
    ++mca_osc_umr.cnt.passthrough;
real:
    return 0;
}

/* Whether the bytes `count` elements of `dt` touch at displacement `disp`
 * of a created window's target lie in that target's window (as osc/rdma
 * checks, both ends here; osc/ucx checks nothing and would write past the
 * window). Nothing is touched by an empty operation; an unknown target and
 * dynamic windows are the wrapped module's to judge. A few loads and
 * compares: the in-window path pays nothing measurable. */
static inline int mca_osc_umr_rma_in_range(const mca_osc_umr_win_t *w,
                                           int target, ptrdiff_t disp,
                                           umr_ompi_osc_count_t count,
                                           const ompi_datatype_t *dt)
{
    const opal_datatype_t *d = &dt->super;
    const mca_osc_umr_extent_t *ext;
    ptrdiff_t rep, off, first, last, lo, hi;

    if (w->dynamic || (count <= 0) || (d->size == 0) || (target < 0) ||
        (target >= w->size)) {
        return 1;
    }
    ext = &w->extents[target];
    /* the touched bytes of count elements: [true_lb, true_ub) of the first
     * one, stretched by (count - 1) extents (either sign) */
    if (__builtin_mul_overflow((ptrdiff_t)(count - 1), d->ub - d->lb, &rep) ||
        __builtin_add_overflow(d->true_lb, (rep < 0) ? rep : 0, &first) ||
        __builtin_add_overflow(d->true_ub, (rep > 0) ? rep : 0, &last) ||
        __builtin_mul_overflow(disp, (ptrdiff_t)ext->disp_unit, &off) ||
        __builtin_add_overflow(off, first, &lo) ||
        __builtin_add_overflow(off, last, &hi)) {
        return 0;   /* no window reaches that far */
    }
    return (lo >= 0) && (hi <= (ptrdiff_t)ext->size);
}

static int mca_osc_umr_rma(int is_put, void *origin_addr,
                           umr_ompi_osc_count_t origin_count,
                           ompi_datatype_t *origin_dt, int target,
                           ptrdiff_t target_disp,
                           umr_ompi_osc_count_t target_count,
                           ompi_datatype_t *target_dt, ompi_win_t *win,
                           ompi_request_t **req_p)
{
    mca_osc_umr_win_t *w = mca_osc_umr_win_lookup(win);
    const mca_osc_umr_call_t c = {
        .is_put = is_put, .target = target, .origin_addr = origin_addr,
        .origin_count = origin_count, .target_count = target_count,
        .origin_dt = origin_dt, .target_dt = target_dt,
        .target_disp = target_disp
    };
    struct mca_osc_umr_pop *pop = NULL;
    mca_osc_umr_op_t *op = NULL;
    ompi_request_t *req;

    if (OPAL_UNLIKELY((origin_count > 0) &&
                      !mca_osc_umr_rma_in_range(w, target, target_disp,
                                                target_count, target_dt))) {
        ++mca_osc_umr.cnt.range_refused;
        MCA_OSC_UMR_VERBOSE(5, "%s to %d refused: displacement %ld, %lu "
                            "element(s) reach outside the target's window "
                            "(%lu bytes, unit %ld)", is_put ? "put" : "get",
                            target, (long)target_disp,
                            (unsigned long)target_count,
                            (unsigned long)w->extents[target].size,
                            (long)w->extents[target].disp_unit);
        return OMPI_ERR_RMA_RANGE;
    }
    if (mca_osc_umr_rma_start(w, &c, &op, &pop)) {
        if (req_p == NULL) {
            return OMPI_SUCCESS;
        }
        /* completions run from progress only: the request is in time */
        req = mca_osc_umr_request_new(win);
        if (req == NULL) {
            mca_osc_umr_rma_complete(w, target);
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        *req_p = req;
        if (pop != NULL) {
            mca_osc_umr_packed_set_req(pop, req);
        } else if (op != NULL) {
            op->req = req;
        } else {
            mca_osc_umr_request_done(req, OMPI_SUCCESS);
        }
        return OMPI_SUCCESS;
    }
    return mca_osc_umr_call_real(w, &c, req_p);
}

int mca_osc_umr_put(const void *origin_addr, umr_ompi_osc_count_t origin_count,
                    ompi_datatype_t *origin_dt, int target,
                    ptrdiff_t target_disp, umr_ompi_osc_count_t target_count,
                    ompi_datatype_t *target_dt, ompi_win_t *win)
{
    return mca_osc_umr_rma(1, (void*)origin_addr, origin_count, origin_dt,
                           target, target_disp, target_count, target_dt, win,
                           NULL);
}

int mca_osc_umr_get(void *origin_addr, umr_ompi_osc_count_t origin_count,
                    ompi_datatype_t *origin_dt, int target,
                    ptrdiff_t target_disp, umr_ompi_osc_count_t target_count,
                    ompi_datatype_t *target_dt, ompi_win_t *win)
{
    return mca_osc_umr_rma(0, origin_addr, origin_count, origin_dt, target,
                           target_disp, target_count, target_dt, win, NULL);
}

int mca_osc_umr_rput(const void *origin_addr, umr_ompi_osc_count_t origin_count,
                     ompi_datatype_t *origin_dt, int target,
                     ptrdiff_t target_disp, umr_ompi_osc_count_t target_count,
                     ompi_datatype_t *target_dt, ompi_win_t *win,
                     ompi_request_t **request)
{
    return mca_osc_umr_rma(1, (void*)origin_addr, origin_count, origin_dt,
                           target, target_disp, target_count, target_dt, win,
                           request);
}

int mca_osc_umr_rget(void *origin_addr, umr_ompi_osc_count_t origin_count,
                     ompi_datatype_t *origin_dt, int target,
                     ptrdiff_t target_disp, umr_ompi_osc_count_t target_count,
                     ompi_datatype_t *target_dt, ompi_win_t *win,
                     ompi_request_t **request)
{
    return mca_osc_umr_rma(0, origin_addr, origin_count, origin_dt, target,
                           target_disp, target_count, target_dt, win, request);
}

void mca_osc_umr_rma_complete(mca_osc_umr_win_t *w, int target)
{
    mca_osc_umr_op_t *op, *next;

    while (((target < 0) ? w->inflight_total : w->inflight[target]) > 0) {
        umr_mpi_progress();
    }
    /* refused packed operations join the failed ones */
    mca_osc_umr_packed_wait(w, target);
    OPAL_LIST_FOREACH_SAFE(op, next, &w->failed, mca_osc_umr_op_t) {
        if ((target < 0) || (op->call.target == target)) {
            opal_list_remove_item(&w->failed, &op->super);
            if (op->req != NULL) {
                (void)mca_osc_umr_op_redo_step(op, 1);
            } else {
                (void)mca_osc_umr_op_redo(op);
                mca_osc_umr_op_free(op, OMPI_SUCCESS);
            }
        }
    }
}
