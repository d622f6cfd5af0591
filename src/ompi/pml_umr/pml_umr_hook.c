/**
 * pml/umr receives hooked in place. A nonblocking receive that may match a
 * control message (capacity >= Z) is the wrapped PML's own request, handed
 * to the user unchanged: pml/umr only sets its completion callback and its
 * req_free, so a receive that does not get a control message costs a few
 * stores instead of a request of ours (pml_umr_recv.c's wrapper).
 *
 * Only for ob1, whose receive requests pml/umr knows: an
 * mca_pml_base_request_t holds the buffer, count, datatype and
 * communicator; the request completes through ompi_request_complete(),
 * which runs req_complete_cb and leaves the request pending when it returns
 * non-zero; ob1 never uses req_complete_cb(_data) of a receive itself. Any
 * other PML gets the wrapper.
 *
 * A hooked request r is in one of these states (r->req_complete_cb_data):
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
#include "pml_umr.h"

#include <ompi/mca/pml/base/pml_base_request.h>
#include <ompi/runtime/mpiruntime.h>

#define MCA_PML_UMR_HOOK_ARMED  ((void*)&mca_pml_umr_hook_states[0])
#define MCA_PML_UMR_HOOK_FREED  ((void*)&mca_pml_umr_hook_states[1])

static char mca_pml_umr_hook_states[2];

static int mca_pml_umr_hook_free(ompi_request_t **request);

/* ob1 completed r with what may be a control message: a pml/umr request
 * classifies it in progress (outside the PML) and runs the get. */
static UCS_F_NOINLINE mca_pml_umr_request_t *
mca_pml_umr_hook_ctl(ompi_request_t *r, int freed)
{
    mca_pml_base_request_t *base = (mca_pml_base_request_t*)r;
    mca_pml_umr_request_t *req;

    req = mca_pml_umr_request_alloc(MCA_PML_UMR_REQ_RECV, false,
                                    base->req_comm);
    if (req == NULL) {
        opal_output(0, "pml_umr: no memory for the control message from "
                    "rank %d: its sender will not complete",
                    r->req_status.MPI_SOURCE);
        ++mca_pml_umr.cnt.errors;
        return NULL;
    }
    ++mca_pml_umr.cnt.recv_inplace;
    req->in_place     = 1;
    req->free_called  = freed;
    req->buf          = base->req_addr;
    req->count        = base->req_count;
    req->dt           = base->req_datatype;
    req->peer_rank    = base->req_peer;
    req->tag          = base->req_tag;
    req->inner        = r;
    req->inner_status = r->req_status;
    req->step         = MCA_PML_UMR_STEP_CLASSIFY;
    OMPI_DATATYPE_RETAIN(req->dt);
    r->req_complete_cb_data = req;
    opal_list_append(&mca_pml_umr.retry, &req->wait_item);
    mca_pml_umr_progress_ref(1);
    return req;
}

/* r's completion callback (inside ob1: memory reads and list work only). */
static int mca_pml_umr_hook_cb(ompi_request_t *r)
{
    mca_pml_base_request_t *base = (mca_pml_base_request_t*)r;
    int freed = (r->req_complete_cb_data == MCA_PML_UMR_HOOK_FREED);

    if (OPAL_UNLIKELY(mca_pml_umr_recv_maybe_ctl(base->req_addr,
                                                 base->req_count,
                                                 base->req_datatype,
                                                 &r->req_status,
                                                 r->req_status.MPI_ERROR)) &&
        (mca_pml_umr_hook_ctl(r, freed) != NULL)) {
        return 1;   /* not complete for MPI until the get is done */
    }
    r->req_complete_cb_data = NULL;
    r->req_free             = mca_pml_umr.hook_free_orig;
    if (freed) {
        /* as ob1 does with a receive freed while active that fails */
        if (r->req_status.MPI_ERROR != MPI_SUCCESS) {
            ompi_mpi_abort(&ompi_mpi_comm_world.comm, MPI_ERR_REQUEST);
        }
        /* ob1 is done with it (req_pml_complete): its free returns it */
        r->req_free(&r);
        return 1;
    }
    return 0;
}

static int mca_pml_umr_hook_free(ompi_request_t **request)
{
    ompi_request_t *r = *request;
    void *data        = r->req_complete_cb_data;

    if (r->req_complete_cb == mca_pml_umr_hook_cb) {
        r->req_complete_cb_data = MCA_PML_UMR_HOOK_FREED;
    } else if ((data != NULL) && (data != MCA_PML_UMR_HOOK_ARMED) &&
               (data != MCA_PML_UMR_HOOK_FREED)) {
        ((mca_pml_umr_request_t*)data)->free_called = 1;
    } else {
        r->req_free = mca_pml_umr.hook_free_orig;
        return r->req_free(request);
    }
    *request = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

static inline void mca_pml_umr_hook_inline(ompi_request_t *r)
{
    if (OPAL_UNLIKELY(r->req_free != mca_pml_umr.hook_free_orig)) {
        if (mca_pml_umr.hook_free_orig != NULL) {
            /* cannot happen with ob1: one free function for all receives */
            opal_output(0, "pml_umr: receive request %p has an unknown "
                        "req_free: not hooked", (void*)r);
            return;
        }
        mca_pml_umr.hook_free_orig = r->req_free;
    }
    ++mca_pml_umr.cnt.recv_checked;
    r->req_free             = mca_pml_umr_hook_free;
    r->req_complete_cb_data = MCA_PML_UMR_HOOK_ARMED;
    r->req_complete_cb      = mca_pml_umr_hook_cb;
    if (OPAL_UNLIKELY(REQUEST_COMPLETE(r))) {
        /* completed inside the PML call, before the user has seen it:
         * a control message makes it pending again */
        r->req_complete_cb = NULL;
        if (mca_pml_umr_hook_cb(r)) {
            r->req_complete = REQUEST_PENDING;
        }
    }
}

void mca_pml_umr_hook(ompi_request_t *r)
{
    mca_pml_umr_hook_inline(r);
}

int mca_pml_umr_hook_irecv(void *buf, size_t count, ompi_datatype_t *dt,
                           int src, int tag, ompi_communicator_t *comm,
                           ompi_request_t **request)
{
    int rc;

    rc = mca_pml_umr.real.pml_irecv(buf, count, dt, src, tag, comm, request);
    if (OPAL_LIKELY(rc == OMPI_SUCCESS)) {
        mca_pml_umr_hook_inline(*request);
    }
    return rc;
}

/* The get of a control message that arrived in req->inner is done (or the
 * message was an ordinary one after all): complete the user's request with
 * the status pml/umr made, or free it if the user already did. */
void mca_pml_umr_hook_done(mca_pml_umr_request_t *req)
{
    ompi_request_t *r = req->inner;
    int freed         = req->free_called;

    req->inner              = NULL;
    req->in_place           = 0;
    req->free_called        = 1;
    r->req_status           = req->super.req_status;
    r->req_complete_cb_data = NULL;
    r->req_free             = mca_pml_umr.hook_free_orig;
    mca_pml_umr_request_mpi_complete(req);   /* returns it */
    if (freed) {
        r->req_free(&r);
    } else {
        ompi_request_complete(r, true);
    }
}

/* Start of persistent receives created by the wrapped PML with a capacity
 * of Z or more: mca_pml_umr_irecv_init sets their req_start (MPI_Start(all)
 * calls it), and mca_pml_umr_start forwards them here (the collectives call
 * MCA_PML_CALL(start)). */
int mca_pml_umr_hook_start(size_t count, ompi_request_t **requests)
{
    mca_pml_base_request_t *base;
    size_t i;
    int rc;

    for (i = 0; i < count; ++i) {
        rc = mca_pml_umr.real.pml_start(1, &requests[i]);
        if (rc != OMPI_SUCCESS) {
            return rc;
        }
        base = (mca_pml_base_request_t*)requests[i];
        if ((base->req_type == MCA_PML_REQUEST_RECV) &&
            mca_pml_umr_recv_may_match(base->req_datatype, base->req_count)) {
            mca_pml_umr_hook(requests[i]);
        }
    }
    return OMPI_SUCCESS;
}
