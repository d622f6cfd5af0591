/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr receives hooked in place. A nonblocking receive that may match a
 * control message (capacity >= Z) is the wrapped PML's own request, handed
 * to the user unchanged: pml/umr only sets its completion callback and its
 * req_free, so a receive that does not get a control message costs a few
 * stores instead of a request of ours (pml_umr_recv.c's wrapper).
 *
 * Only for receives whose caller leaves the completion callback alone (the
 * application's, the blocking collectives': mca_pml_umr_recv_inplace_ok in
 * pml_umr_recv.c; coll/adapt sets its own on the receives it posts), and
 * only for PMLs whose receive requests pml/umr knows. Both complete them
 * through ompi_request_complete(), which runs req_complete_cb and leaves the
 * request pending when it returns non-zero, and neither uses
 * req_complete_cb(_data) of a nonblocking receive itself:
 *  - ob1: an mca_pml_base_request_t holds the buffer, count, datatype and
 *    communicator; the state below is r->req_complete_cb_data itself;
 *  - ucx: the request is UCP's (ucp_request_free of an active request
 *    drops its callback, and frees a completed one at once, even inside
 *    the callback); the buffer, count and datatype are kept in a small
 *    record (mca_pml_umr_hook_rec_t) that r->req_complete_cb_data points
 *    to while hooked, and the state is the record's. pml ucx expects
 *    req_complete_cb_data NULL on a fresh request: it is reset on unhooking.
 * Persistent receives: ob1 only (pml ucx's are requests of its own, which
 * the wrapper handles). Any other PML (cm) gets the wrapper.
 *
 * Where each of these holds, in Open MPI 4.1.4, 5.0.7 and 6.0 (the 6.0.x
 * branch; the installed 6.0.0rc2 headers for every structure), and UCX 1.13,
 * 1.18 and 1.23 (src/ucp/core/ucp_request.{inl,c}):
 *  - ob1's receive request starts with mca_pml_base_recv_request_t and
 *    mca_pml_base_request_t (pml_ob1_recvreq.h; pml_base_recvreq.h and
 *    pml_base_request.h are the same in the three releases; configure and
 *    the component check mca_pml_base_request_t's size against the
 *    library), filled by MCA_PML_BASE_RECV_REQUEST_INIT, whose
 *    OMPI_REQUEST_INIT clears req_complete_cb and _data at every irecv;
 *  - ob1 completes a receive in recv_request_pml_complete(): it sets
 *    req_pml_complete before MCA_PML_OB1_RECV_REQUEST_MPI_COMPLETE, i.e.
 *    ompi_request_complete(), so its free (mca_pml_ob1_recv_request_free,
 *    set once by the class constructor for every receive request) returns
 *    the request at once, also from the callback; its only use of
 *    req_complete_cb is pml_ob1_start.c's copy for a persistent send;
 *    persistent receives restart through MCA_PML_OB1_RECV_REQUEST_START
 *    (pml_ob1_start.c), and MPI_Start/MPI_Startall call req_start
 *    (ompi/mpi/c/start.c, startall.c; 6.0: start.c.in);
 *  - pml ucx sets req_mpi_object.comm in mca_pml_ucx_irecv, completes in
 *    mca_pml_ucx_recv_completion_internal() with ompi_request_complete(),
 *    clears req_complete_cb_data only in mca_pml_ucx_request_init_common
 *    (UCP's request init, once per request memory), and frees with
 *    mca_pml_ucx_request_free() = ucp_request_free() (pml_ucx.c,
 *    pml_ucx_request.c); ucp_request_complete() reads the RELEASED flag
 *    before the callback and ucp_request_release_common() puts a
 *    completed request at once;
 *  - ompi_request_complete() calls req_complete_cb with the field cleared
 *    and marks the request complete only when it returns 0
 *    (ompi/request/request.h, the same in the three releases but for
 *    memory barriers).
 *
 * A hooked request r is in one of these states:
 *   armed    r->req_complete_cb is the hook, data ARMED
 *   freed    armed, and the user freed r while active (MPI_Request_free):
 *            ob1 would then never complete it (a control message would be
 *            lost and its sender hang), so ob1's req_free is called only
 *            once r has completed
 *   control  ob1 completed r with a control message: r stays pending (the
 *            callback returned 1) while a pml/umr request (req->in_place,
 *            data points to it) runs the get, then gets r's status (the
 *            real length, MPI_ERR_TRUNCATE) and completes r, or frees it
 *            if the user did
 * A receive that completes with anything else (cancelled, an ordinary
 * message) is given back: r->req_free restored, nothing else changed.
 */
#include "pml_umr_hook.h"
#include "pml_umr_request.h"
#include "common_umr_help.h"
#include "common_umr_binding.h"

#include <ompi/mca/pml/base/pml_base_request.h>
#include <ompi/runtime/mpiruntime.h>

#define MCA_PML_UMR_HOOK_ARMED  ((void*)&mca_pml_umr_hook_states[0])
#define MCA_PML_UMR_HOOK_FREED  ((void*)&mca_pml_umr_hook_states[1])

static char mca_pml_umr_hook_states[2];

/* pml ucx: what its request does not hold */
typedef struct mca_pml_umr_hook_rec {
    opal_free_list_item_t super;
    void                  *buf;
    size_t                count;
    ompi_datatype_t       *dt;      /* retained */
    void                  *state;   /* ARMED, FREED or the request */
} mca_pml_umr_hook_rec_t;

static OBJ_CLASS_INSTANCE(mca_pml_umr_hook_rec_t, opal_free_list_item_t,
                          NULL, NULL);

static opal_free_list_t mca_pml_umr_hook_recs;

static int mca_pml_umr_hook_free(ompi_request_t **request);
static void mca_pml_umr_hook_done(mca_pml_umr_request_t *req);

/* The helpers below take `ob1` (1: ob1, 0: ucx) and are always inlined, so
 * each PML gets its own straight-line copy of the hot functions. */
static inline int mca_pml_umr_hook_is_ob1(void)
{
    return mca_pml_umr.recv_inplace == MCA_PML_UMR_INPLACE_OB1;
}

/* where r's state is */
static UCS_F_ALWAYS_INLINE void **
mca_pml_umr_hook_state(ompi_request_t *r, int ob1)
{
    return ob1 ? &r->req_complete_cb_data :
           &((mca_pml_umr_hook_rec_t*)r->req_complete_cb_data)->state;
}

static UCS_F_ALWAYS_INLINE void
mca_pml_umr_hook_args(ompi_request_t *r, void **buf, size_t *count,
                      ompi_datatype_t **dt, int ob1)
{
    mca_pml_base_request_t *base = (mca_pml_base_request_t*)r;
    mca_pml_umr_hook_rec_t *rec  = r->req_complete_cb_data;

    if (ob1) {
        *buf   = base->req_addr;
        *count = base->req_count;
        *dt    = base->req_datatype;
    } else {
        *buf   = rec->buf;
        *count = rec->count;
        *dt    = rec->dt;
    }
}

/* r is given back to its PML as if never hooked */
static UCS_F_ALWAYS_INLINE void
mca_pml_umr_hook_unhook(ompi_request_t *r, int ob1)
{
    mca_pml_umr_hook_rec_t *rec = r->req_complete_cb_data;

    if (!ob1) {
        OMPI_DATATYPE_RELEASE(rec->dt);
        opal_free_list_return(&mca_pml_umr_hook_recs, &rec->super);
    }
    r->req_complete_cb_data = NULL;
    r->req_free             = mca_pml_umr.hook_free_orig;
}

/* The PML completed r with what may be a control message: a pml/umr request
 * classifies it in progress (outside the PML) and runs the get. */
static UCS_F_NOINLINE mca_pml_umr_request_t *
mca_pml_umr_hook_ctl(ompi_request_t *r, int freed)
{
    int ob1                   = mca_pml_umr_hook_is_ob1();
    ompi_communicator_t *comm = ob1 ?
                                ((mca_pml_base_request_t*)r)->req_comm :
                                r->req_mpi_object.comm;
    mca_pml_umr_request_t *req;
    ompi_datatype_t *dt;
    size_t count;
    void *buf;

    mca_pml_umr_hook_args(r, &buf, &count, &dt, ob1);
    req = mca_pml_umr_request_alloc(MCA_PML_UMR_REQ_RECV, false, comm, buf,
                                    count, dt, r->req_status.MPI_SOURCE,
                                    r->req_status.MPI_TAG);
    if (req == NULL) {
        mca_common_umr_show_help("help-mpi-pml-umr.txt", "ctl-no-memory",
                                 r->req_status.MPI_SOURCE);
        ++mca_pml_umr.cnt.errors;
        return NULL;
    }
    ++mca_pml_umr.cnt.recv_inplace;
    req->in_place      = 1;
    req->in_place_done = mca_pml_umr_hook_done;
    req->free_called   = freed;
    req->inner         = r;
    req->inner_status  = r->req_status;
    *mca_pml_umr_hook_state(r, ob1) = req;
    mca_pml_umr_recv_classify(req, &r->req_status, 1);
    return req;
}

/* r's completion callback (inside the PML: memory reads and list work). */
static UCS_F_ALWAYS_INLINE int
mca_pml_umr_hook_cb_common(ompi_request_t *r, int ob1)
{
    int freed = (*mca_pml_umr_hook_state(r, ob1) == MCA_PML_UMR_HOOK_FREED);
    ompi_datatype_t *dt;
    size_t count;
    void *buf;

    mca_pml_umr_hook_args(r, &buf, &count, &dt, ob1);
    if (OPAL_UNLIKELY(mca_pml_umr_recv_maybe_ctl(buf, count, dt,
                                                 &r->req_status,
                                                 r->req_status.MPI_ERROR)) &&
        (mca_pml_umr_hook_ctl(r, freed) != NULL)) {
        return 1;   /* not complete for MPI until the get is done */
    }
    mca_pml_umr_hook_unhook(r, ob1);
    if (freed) {
        /* as ob1 does with a receive freed while active that fails */
        if (r->req_status.MPI_ERROR != MPI_SUCCESS) {
            ompi_mpi_abort(&ompi_mpi_comm_world.comm, MPI_ERR_REQUEST);
        }
        /* the PML is done with it: its free returns it (ob1:
         * req_pml_complete; ucx: UCP marked it completed already) */
        r->req_free(&r);
        return 1;
    }
    return 0;
}

static int mca_pml_umr_hook_cb_ob1(ompi_request_t *r)
{
    return mca_pml_umr_hook_cb_common(r, 1);
}

static int mca_pml_umr_hook_cb_ucx(ompi_request_t *r)
{
    return mca_pml_umr_hook_cb_common(r, 0);
}

static int mca_pml_umr_hook_free(ompi_request_t **request)
{
    ompi_request_t *r = *request;
    int ob1           = mca_pml_umr_hook_is_ob1();
    void **state;

    if (r->req_complete_cb_data == NULL) {
        /* not hooked (cannot happen: req_free is restored on unhooking) */
        r->req_free = mca_pml_umr.hook_free_orig;
        return r->req_free(request);
    }
    state = mca_pml_umr_hook_state(r, ob1);
    if ((r->req_complete_cb == mca_pml_umr_hook_cb_ob1) ||
        (r->req_complete_cb == mca_pml_umr_hook_cb_ucx)) {
        *state = MCA_PML_UMR_HOOK_FREED;
    } else if ((*state != MCA_PML_UMR_HOOK_ARMED) &&
               (*state != MCA_PML_UMR_HOOK_FREED)) {
        ((mca_pml_umr_request_t*)*state)->free_called = 1;
    } else {
        mca_pml_umr_hook_unhook(r, ob1);
        return r->req_free(request);
    }
    *request = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

static UCS_F_ALWAYS_INLINE void
mca_pml_umr_hook_inline(ompi_request_t *r, void *buf, size_t count,
                        ompi_datatype_t *dt, int ob1)
{
    mca_pml_umr_hook_rec_t *rec;

    if (OPAL_UNLIKELY(r->req_free != mca_pml_umr.hook_free_orig)) {
        if (mca_pml_umr.hook_free_orig != NULL) {
            /* cannot happen with ob1 and ucx: one free function for all
             * receives */
            mca_common_umr_show_help("help-mpi-pml-umr.txt", "hook-unknown-free",
                                     (void*)r);
            return;
        }
        mca_pml_umr.hook_free_orig = r->req_free;
    }
    if (ob1) {
        r->req_complete_cb_data = MCA_PML_UMR_HOOK_ARMED;
    } else {
        rec = (mca_pml_umr_hook_rec_t*)
              opal_free_list_get(&mca_pml_umr_hook_recs);
        if (OPAL_UNLIKELY(rec == NULL)) {
            mca_common_umr_show_help("help-mpi-pml-umr.txt", "hook-no-memory");
            ++mca_pml_umr.cnt.errors;
            return;
        }
        rec->buf   = buf;
        rec->count = count;
        rec->dt    = dt;
        rec->state = MCA_PML_UMR_HOOK_ARMED;
        OMPI_DATATYPE_RETAIN(dt);
        r->req_complete_cb_data = rec;
    }
    ++mca_pml_umr.cnt.recv_checked;
    r->req_free        = mca_pml_umr_hook_free;
    r->req_complete_cb = ob1 ? mca_pml_umr_hook_cb_ob1 :
                               mca_pml_umr_hook_cb_ucx;
    if (OPAL_UNLIKELY(REQUEST_COMPLETE(r))) {
        /* completed inside the PML call, before the user has seen it:
         * a control message makes it pending again */
        r->req_complete_cb = NULL;
        if (mca_pml_umr_hook_cb_common(r, ob1)) {
            r->req_complete = REQUEST_PENDING;
        }
    }
}

int mca_pml_umr_hook_irecv(void *buf, size_t count, ompi_datatype_t *dt,
                           int src, int tag, ompi_communicator_t *comm,
                           ompi_request_t **request)
{
    int rc;

    rc = mca_pml_umr.real.pml_irecv(buf, count, dt, src, tag, comm, request);
    if (OPAL_UNLIKELY(rc != OMPI_SUCCESS)) {
        return rc;
    }
    if (OPAL_LIKELY(mca_pml_umr_hook_is_ob1())) {
        mca_pml_umr_hook_inline(*request, buf, count, dt, 1);
    } else {
        mca_pml_umr_hook_inline(*request, buf, count, dt, 0);
    }
    return OMPI_SUCCESS;
}

/* The get of a control message that arrived in req->inner is done (or the
 * message was an ordinary one after all): complete the user's request with
 * the status pml/umr made, or free it if the user already did. */
static void mca_pml_umr_hook_done(mca_pml_umr_request_t *req)
{
    ompi_request_t *r = req->inner;
    int freed         = req->free_called;

    req->inner       = NULL;
    req->in_place    = 0;
    req->free_called = 1;
    r->req_status    = req->super.req_status;
    mca_pml_umr_hook_unhook(r, mca_pml_umr_hook_is_ob1());
    mca_pml_umr_request_mpi_complete(req);   /* returns it */
    if (freed) {
        r->req_free(&r);
    } else {
        ompi_request_complete(r, true);
    }
}

/* Start of persistent receives created by ob1 with a capacity of Z or more:
 * mca_pml_umr_irecv_init sets their req_start (MPI_Start(all) calls it),
 * and mca_pml_umr_start forwards them here (the collectives call
 * MCA_PML_CALL(start)). */
static void mca_pml_umr_hook_started(ompi_request_t *request)
{
    mca_pml_base_request_t *base = (mca_pml_base_request_t*)request;

    /* a component that set its own completion callback before the start
     * (Open MPI 4.1's osc/pt2pt does) keeps it: not hooked */
    if ((base->req_type == MCA_PML_REQUEST_RECV) &&
        (request->req_complete_cb == NULL) &&
        mca_pml_umr_recv_may_match(base->req_datatype, base->req_count)) {
        mca_pml_umr_hook_inline(request, base->req_addr, base->req_count,
                                base->req_datatype, 1);
    }
}

int mca_pml_umr_hook_start(size_t count, ompi_request_t **requests)
{
    return mca_pml_umr_start_each(count, requests, mca_pml_umr_hook_started);
}

void mca_pml_umr_hook_init(void)
{
    OBJ_CONSTRUCT(&mca_pml_umr_hook_recs, opal_free_list_t);
    opal_free_list_init(&mca_pml_umr_hook_recs,
                        sizeof(mca_pml_umr_hook_rec_t), opal_cache_line_size,
                        OBJ_CLASS(mca_pml_umr_hook_rec_t), 0,
                        opal_cache_line_size, 16, -1, 16, NULL, 0, NULL,
                        NULL, NULL);
}

void mca_pml_umr_hook_fini(void)
{
    OBJ_DESTRUCT(&mca_pml_umr_hook_recs);
}
