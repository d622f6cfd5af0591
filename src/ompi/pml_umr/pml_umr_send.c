/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr send side: the pass-through test, then the core's zero-copy send
 * (umr_mpi_proto.h) behind a request of ours; the control message and a
 * declined message's data go through the wrapped PML (the transfer's
 * operations, below).
 */
#include "pml_umr_send.h"
#include "pml_umr_request.h"
#include "common_umr_binding.h"
#include "common_umr_dtype.h"

#include "umr_mpi_choice.h"

#include <string.h>

static int mca_pml_umr_send_start(mca_pml_umr_request_t *req);

/* The density class of `dt` (UMR_MPI_SPARSE, _DENSE), from Open MPI's
 * size and extent: the one the choice puts the decoded type in
 * (umr_mpi_choice_is_dense). */
static UCS_F_ALWAYS_INLINE int mca_pml_umr_send_dens(const ompi_datatype_t *dt)
{
    return umr_mpi_choice_is_dense(dt->super.size,
                                   dt->super.ub - dt->super.lb) ?
           UMR_MPI_DENSE : UMR_MPI_SPARSE;
}

/* Everything below Z bytes, contiguous data and derived-datatype messages
 * that cannot go zero-copy by their size alone (mca_pml_umr.bounds.min_len:
 * the minimum size, and what the costs allow at all) go straight to the
 * wrapped PML: one multiply, two compares and the datatype's contiguity
 * flags, and a type and count with a verdict of pass through in the core's
 * type front. (The density class's bounds are tested out of line,
 * mca_pml_umr_send_small_blocks: inline, they cost every small message 5
 * instructions of register saves in the entry points.) Exactly Z bytes
 * takes the slow path when the data may start with the magic (it is then
 * escaped); `buf` is NULL when the data is not there yet (persistent
 * sends, `count_pass` 0: counted at each start). */
static UCS_F_ALWAYS_INLINE int mca_pml_umr_send_fast(const void *buf,
                                                     const ompi_datatype_t *dt,
                                                     size_t count,
                                                     int count_pass)
{
    size_t len = dt->super.size * count;
    uint64_t head;
    int contig;

    if (OPAL_LIKELY(len < UMR_MPI_CTL_SIZE)) {
        return 1;
    }
    contig = opal_datatype_is_contiguous_memory_layout(&dt->super, count);
    if (OPAL_UNLIKELY(len == UMR_MPI_CTL_SIZE)) {
        if (!contig || (buf == NULL)) {
            return 0;
        }
        memcpy(&head, (const char*)buf + dt->super.true_lb, sizeof(head));
        return head != UMR_MPI_MAGIC0;
    }
    if (contig) {
        return 1;
    }
    if (len < mca_pml_umr.bounds.min_len) {
        if (count_pass) {
            mca_pml_umr.cnt.passthrough_sends += (len >= mca_pml_umr.min_size);
        }
        return 1;
    }
    /* a type and count that passed through before (the verdict in its
     * front slot): not for persistent sends, counted at each start */
    if (count_pass &&
        umr_mpi_types_passes(mca_common_umr_type_key(dt), count)) {
        ++mca_pml_umr.cnt.passthrough_sends;
        return 1;
    }
    return 0;
}

/* Too few bytes for zero-copy to win, by the type's density class (size
 * over extent, which Open MPI knows: the class the choice puts it in):
 * the first test of mca_pml_umr_send_small_blocks, alone. Never for
 * exactly Z bytes (maybe an escape). */
static UCS_F_ALWAYS_INLINE int
mca_pml_umr_send_few_bytes(const ompi_datatype_t *dt, size_t count)
{
    size_t len = dt->super.size * count;

    return (len != UMR_MPI_CTL_SIZE) &&
           (len < mca_pml_umr.bounds.dens_min_len[mca_pml_umr_send_dens(dt)]);
}

/* A message the prefilter passed through, counted: that verdict depends on
 * the type and the count only (not on the peer or the communicator), and
 * is kept for a type that comes back (umr_mpi_types_prefiltered): 1 when
 * `dt` is to be held now. */
static UCS_F_ALWAYS_INLINE int
mca_pml_umr_send_prefiltered(const ompi_datatype_t *dt)
{
    ++mca_pml_umr.cnt.passthrough_sends;
    ++mca_pml_umr.cnt.prefiltered;
    return umr_mpi_types_prefiltered(mca_common_umr_type_key(dt));
}

/* The mean block of Open MPI's description of `dt` (density class `d`)
 * is large enough for zero-copy (mca_common_umr_dtype_blocks): kept in the
 * core's slot of a type it holds, so that a type that keeps going
 * zero-copy is walked once. */
static UCS_F_ALWAYS_INLINE int
mca_pml_umr_send_big_blocks(const ompi_datatype_t *dt, int d)
{
    umr_mpi_type_slot_t *slot = umr_mpi_types_slot(mca_common_umr_type_key(dt));
    size_t bytes, blocks;

    if ((slot->key == mca_common_umr_type_key(dt)) && slot->big_blocks) {
        return 1;
    }
    blocks = mca_common_umr_dtype_blocks(dt, &bytes);
    if ((double)bytes < mca_pml_umr.bounds.dens_min_block[d] *
                        (double)blocks) {
        return 0;
    }
    if (slot->key == mca_common_umr_type_key(dt)) {
        slot->big_blocks = 1;
    }
    return 1;
}

/* Too few bytes or blocks too small for zero-copy to win, by what Open
 * MPI knows of the type: its density class picks the bounds, against
 * which the message's size (first, mca_pml_umr_send_few_bytes) and the
 * mean block of Open MPI's description (mca_common_umr_dtype_blocks) are
 * tested. No decoding, so a type used once costs nothing, and a type that
 * keeps passing is held with its verdict (mca_pml_umr_send_prefiltered).
 * Counted as passed through (and prefiltered). Between the two, a peer
 * known to pass through (no rail reaches it, or it is retired:
 * umr_mpi_peer_passes, inline) passes at once, counted as passed through
 * (not a verdict on the type). Never for exactly Z bytes (maybe an
 * escape). */
static UCS_F_ALWAYS_INLINE int
mca_pml_umr_send_small_blocks(ompi_datatype_t *dt, size_t count,
                              ompi_communicator_t *comm, int dst)
{
    size_t len = dt->super.size * count;
    int d;

    if (len == UMR_MPI_CTL_SIZE) {
        return 0;
    }
    d = mca_pml_umr_send_dens(dt);
    if (len >= mca_pml_umr.bounds.dens_min_len[d]) {
        if (umr_mpi_peer_passes(mca_common_umr_world_rank(comm, dst))) {
            ++mca_pml_umr.cnt.passthrough_sends;
            return 1;
        }
        if (mca_pml_umr_send_big_blocks(dt, d)) {
            return 0;
        }
    }
    if (OPAL_UNLIKELY(mca_pml_umr_send_prefiltered(dt))) {
        umr_mpi_types_hold(mca_common_umr_type_key(dt), count);
    }
    return 1;
}

/* Whether the message is of exactly Z packed bytes that start with the
 * magic (maybe an escape). */
static int mca_pml_umr_send_has_magic(const void *buf, size_t count,
                                      ompi_datatype_t *dt)
{
    uint64_t head[2];

    if (dt->super.size * count != UMR_MPI_CTL_SIZE) {
        return 0;
    }
    mca_pml_umr_peek(buf, count, dt, head, sizeof(head));
    return umr_mpi_wire_is_magic(head);
}

/* The peer of an escape (exactly Z packed bytes that start with the magic,
 * to a protocol peer), or NULL. Whatever the mode or the datatype (one
 * without a layout too), an escape never goes raw: the receiver would take
 * it for a control message and wait for data that never comes. A protocol
 * peer is one by its published address, whether a rail reaches it or not
 * (umr_mpi_peer_proto): the receiver decides alike, with its own rails,
 * which may reach us when ours do not reach it or the other way round. To a
 * peer no rail reaches an escape goes as a keyless control message, which
 * needs none. */
static UCS_F_NOINLINE umr_mpi_peer_t *
mca_pml_umr_send_escape_peer(const void *buf, size_t count,
                             ompi_datatype_t *dt, ompi_communicator_t *comm,
                             int dst)
{
    umr_mpi_peer_t *peer;

    if ((dt->super.size * count != UMR_MPI_CTL_SIZE) ||
        (NULL == (peer = umr_mpi_peer_proto(mca_common_umr_world_rank(comm,
                                                                      dst)))) ||
        !mca_pml_umr_send_has_magic(buf, count, dt)) {
        return NULL;
    }
    ++mca_pml_umr.cnt.escapes;
    return peer;
}

/* The peer for a zero-copy send of this message, or NULL to pass through;
 * *info the type's summary (NULL: an escape of a type without a layout,
 * sent keyless), *escape whether it is one. `prechecked`: the entry point
 * found it noncontiguous, at least the bounds' size and not of small
 * blocks, unless it is of exactly Z bytes (mca_pml_umr_send_fast,
 * _small_blocks): not again. The decision (umr_mpi_choose_send) is taken
 * here, once a message. */
static umr_mpi_peer_t *
mca_pml_umr_send_choose(const void *buf, size_t count, ompi_datatype_t *dt,
                        int dst, mca_pml_base_send_mode_t mode,
                        ompi_communicator_t *comm,
                        const umr_mpi_dtype_t **info, int *escape,
                        int prechecked)
{
    size_t len = dt->super.size * count;
    umr_mpi_type_slot_t *slot;
    umr_mpi_peer_t *peer;
    int candidate;

    *escape = 0;
    if (prechecked && (len != UMR_MPI_CTL_SIZE)) {
        candidate = 1;
    } else {
        candidate = (len >= mca_pml_umr.min_size) &&
                    !opal_datatype_is_contiguous_memory_layout(&dt->super,
                                                               count);
        if (candidate && mca_pml_umr_send_small_blocks(dt, count, comm, dst)) {
            return NULL;   /* counted */
        }
    }
    if ((len == UMR_MPI_CTL_SIZE) &&
        (NULL != (peer = mca_pml_umr_send_escape_peer(buf, count, dt, comm,
                                                      dst)))) {
        /* (buffered: mca_pml_umr_send_escape_copy) its layout key if the
         * type has a layout, else a keyless control message; a retired
         * peer declines it (no key) */
        slot    = umr_mpi_types_lookup(mca_common_umr_type_key(dt));
        *info   = ((slot != NULL) && (slot->info->layout != NULL)) ?
                  slot->info : NULL;
        *escape = 1;
        return peer;
    }
    if (candidate && (mode != MCA_PML_BASE_SEND_BUFFERED) &&
        (NULL != (peer = umr_mpi_peer_get(mca_common_umr_world_rank(comm,
                                                                    dst)))) &&
        (NULL != (slot = umr_mpi_types_lookup(mca_common_umr_type_key(dt)))) &&
        (umr_mpi_choose_send(slot, count, peer) == UMR_MPI_ZCOPY)) {
        *info = slot->info;
        return peer;
    }
    mca_pml_umr.cnt.passthrough_sends += candidate;
    return NULL;
}

/* ---- the transfer's operations ---------------------------------------- */

/* The control message, on the user's (comm, dst, tag): a ready send stays
 * one, every other mode is standard (the control message is not the
 * user's data). */
int mca_pml_umr_send_ctl(umr_mpi_xfer_t *x, umr_mpi_comp_t *comp)
{
    mca_pml_umr_request_t *req = mca_pml_umr_request_of(x);

    return mca_common_umr_isend(&x->ctl, UMR_MPI_CTL_SIZE, &ompi_mpi_byte.dt,
                                req->peer_rank, req->tag,
                                (req->mode == MCA_PML_BASE_SEND_READY) ?
                                MCA_PML_BASE_SEND_READY :
                                MCA_PML_BASE_SEND_STANDARD, req->comm, comp);
}

/* A declined message's data, untouched, where the receiver posted its
 * receive (MPI_COMM_WORLD, the DATA tag). The user's buffer is as it was:
 * the request has not completed. */
int mca_pml_umr_send_data(umr_mpi_xfer_t *x, umr_mpi_comp_t *comp)
{
    mca_pml_umr_request_t *req = mca_pml_umr_request_of(x);

    return mca_common_umr_isend(req->buf, req->count, req->dt,
                                x->peer->world_rank,
                                mca_common_umr_tag(UMR_MPI_MSG_DATA),
                                MCA_PML_BASE_SEND_STANDARD,
                                &ompi_mpi_comm_world.comm, comp);
}

/* The core is done with a send of ours. */
void mca_pml_umr_send_done(mca_pml_umr_request_t *req)
{
    req->super.req_status.MPI_ERROR = req->x.error;
    mca_pml_umr_request_mpi_complete(req);
}

/* Start the core's zero-copy send of `req` to `peer` (*info, escape: from
 * mca_pml_umr_send_choose): UMR_MPI_SENT, UMR_MPI_SEND_PASS (nothing sent:
 * pass the message through) or an error for an escape that cannot be sent
 * (never raw). */
static int mca_pml_umr_send_zcopy(mca_pml_umr_request_t *req,
                                  umr_mpi_peer_t *peer,
                                  const umr_mpi_dtype_t *info, int escape)
{
    int rc;

    /* a process whose first zero-copy message decodes no type (a buffered
     * escape) still quiesces the core at MPI_Finalize (a summary: decoded,
     * the decoder's cache is open) */
    if (info == NULL) {
        (void)mca_common_umr_types_open();
    }
    req->x.peer   = peer;
    req->x.info   = info;
    req->x.escape = escape;
    rc = umr_mpi_send_start(&req->x);
    if (rc == UMR_MPI_SEND_FAIL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    return rc;
}

/* A buffered send (MPI_Bsend, MPI_Ibsend, a start of MPI_Bsend_init) of
 * an escape to `peer`. It must complete at once (the user may reuse the
 * buffer), and its data cannot go ahead of the receiver's decline (the
 * declined messages of a pair are matched in order as DATA): its Z packed
 * bytes are copied and sent from the copy as any escape (a keyless control
 * message on the user's communicator and tag, so MPI's order of messages
 * holds; the data as DATA once declined), by a request of ours that the
 * user never sees (freed with the copy when done). The copy is taken from
 * the buffer the user attached (MPI_Buffer_attach), as the wrapped PML
 * takes its own: none attached, or no room in it, is MPI_ERR_BUFFER (as
 * ob1 says; pml ucx says MPI_ERR_OTHER, and so does pml/umr over it), and
 * MPI_Buffer_detach waits for the escape. */
static UCS_F_NOINLINE int
mca_pml_umr_send_escape_copy(const void *buf, size_t count,
                             ompi_datatype_t *dt, int dst, int tag,
                             ompi_communicator_t *comm, umr_mpi_peer_t *peer)
{
    void *copy = umr_ompi_bsend_alloc(comm, UMR_MPI_CTL_SIZE);
    mca_pml_umr_request_t *req;
    int rc;

    if (copy == NULL) {
        return mca_pml_umr.bsend_no_room;   /* the user's error */
    }
    mca_pml_umr_peek(buf, count, dt, copy, UMR_MPI_CTL_SIZE);
    req = mca_pml_umr_request_alloc(MCA_PML_UMR_REQ_SEND, false, comm, copy,
                                    UMR_MPI_CTL_SIZE, &ompi_mpi_byte.dt, dst,
                                    tag);
    if (req == NULL) {
        umr_ompi_bsend_free(comm, copy);
        ++mca_pml_umr.cnt.errors;
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    req->copy        = copy;
    req->mode        = MCA_PML_BASE_SEND_STANDARD;
    req->free_called = 1;   /* nobody waits for it */
    rc = mca_pml_umr_send_zcopy(req, peer, NULL, 1);
    if (rc != UMR_MPI_SENT) {
        /* out of memory for its ack receive: an error (counted), never
         * raw */
        mca_pml_umr_request_mpi_complete(req);   /* returns it */
        return rc;
    }
    return OMPI_SUCCESS;
}

/* A buffered send of exactly Z packed bytes: an escape goes through the
 * copy above (`request`: an empty request, complete, as Open MPI gives
 * for MPI_PROC_NULL; NULL for a blocking send), anything else is the
 * wrapped PML's own buffered send; *rc, or 0: not an escape. */
static UCS_F_NOINLINE int
mca_pml_umr_send_buffered(const void *buf, size_t count, ompi_datatype_t *dt,
                          int dst, int tag, ompi_communicator_t *comm,
                          ompi_request_t **request, int *rc)
{
    umr_mpi_peer_t *peer = mca_pml_umr_send_escape_peer(buf, count, dt, comm,
                                                        dst);

    if (peer == NULL) {
        return 0;
    }
    *rc = mca_pml_umr_send_escape_copy(buf, count, dt, dst, tag, comm, peer);
    if ((*rc == OMPI_SUCCESS) && (request != NULL)) {
        *request = &ompi_request_empty;
    }
    return 1;
}

/* A zero-copy send of this message, its control message posted (*req_p
 * its request), or nothing sent: OMPI_SUCCESS with *req_p NULL to pass the
 * message through, an error for an escape that cannot be sent (never
 * raw). */
static UCS_F_ALWAYS_INLINE int
mca_pml_umr_send_begin(const void *buf, size_t count, ompi_datatype_t *dt,
                       int dst, int tag, mca_pml_base_send_mode_t mode,
                       ompi_communicator_t *comm, int prechecked,
                       mca_pml_umr_request_t **req_p)
{
    const umr_mpi_dtype_t *info = NULL;
    mca_pml_umr_request_t *req;
    umr_mpi_peer_t *peer;
    int escape, rc;

    *req_p = NULL;
    peer = mca_pml_umr_send_choose(buf, count, dt, dst, mode, comm, &info,
                                   &escape, prechecked);
    if (peer == NULL) {
        return OMPI_SUCCESS;
    }
    req = mca_pml_umr_request_alloc(MCA_PML_UMR_REQ_SEND, false, comm,
                                    (void*)buf, count, dt, dst, tag);
    if (req == NULL) {
        if (escape) {
            ++mca_pml_umr.cnt.errors;   /* an escape: never raw */
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        ++umr_mpi.cnt.fallbacks;   /* chosen, and counted once */
        return OMPI_SUCCESS;
    }
    req->mode = mode;
    rc = mca_pml_umr_send_zcopy(req, peer, info, escape);
    if (rc != UMR_MPI_SENT) {
        req->free_called = 1;
        mca_pml_umr_request_mpi_complete(req); /* returns it */
        return (rc == UMR_MPI_SEND_PASS) ? OMPI_SUCCESS : rc;
    }
    *req_p = req;
    return OMPI_SUCCESS;
}

/* Slow paths are never inlined: the entry points stay a compare and a
 * tail call, with no registers saved for what they do not run. */
static UCS_F_NOINLINE int
mca_pml_umr_isend_slow(const void *buf, size_t count, ompi_datatype_t *dt,
                       int dst, int tag, mca_pml_base_send_mode_t mode,
                       ompi_communicator_t *comm, ompi_request_t **request)
{
    mca_pml_umr_request_t *req;
    int rc;

    if ((mode == MCA_PML_BASE_SEND_BUFFERED) &&
        mca_pml_umr_send_buffered(buf, count, dt, dst, tag, comm, request,
                                  &rc)) {
        return rc;
    }
    rc = mca_pml_umr_send_begin(buf, count, dt, dst, tag, mode, comm, 1,
                                &req);
    if (rc != OMPI_SUCCESS) {
        return rc;
    }
    if (req == NULL) {
        return mca_pml_umr_pass(buf, count, dt, dst, tag, mode, comm,
                                request);
    }
    *request = &req->super;
    return OMPI_SUCCESS;
}

/* mca_pml_umr_isend_check, past its first test: the peer and the blocks,
 * from Open MPI's description, may still rule it out. */
static UCS_F_NOINLINE int
mca_pml_umr_isend_check_blocks(const void *buf, size_t count,
                               ompi_datatype_t *dt, int dst, int tag,
                               mca_pml_base_send_mode_t mode,
                               ompi_communicator_t *comm,
                               ompi_request_t **request)
{
    if (mca_pml_umr_send_small_blocks(dt, count, comm, dst)) {
        return mca_pml_umr_pass(buf, count, dt, dst, tag, mode, comm,
                                request);
    }
    return mca_pml_umr_isend_slow(buf, count, dt, dst, tag, mode, comm,
                                  request);
}

/* A message of a type the prefilter passes through, to be held now. */
static UCS_F_NOINLINE int
mca_pml_umr_isend_hold(const void *buf, size_t count, ompi_datatype_t *dt,
                       int dst, int tag, mca_pml_base_send_mode_t mode,
                       ompi_communicator_t *comm, ompi_request_t **request)
{
    umr_mpi_types_hold(mca_common_umr_type_key(dt), count);
    return mca_pml_umr_pass(buf, count, dt, dst, tag, mode, comm, request);
}

/* A noncontiguous message large enough for zero-copy: too few bytes for
 * its density class pass at once, with no call and so no register saved
 * (tail calls only; the rest of the prefilter out of line). */
static UCS_F_NOINLINE int
mca_pml_umr_isend_check(const void *buf, size_t count, ompi_datatype_t *dt,
                        int dst, int tag, mca_pml_base_send_mode_t mode,
                        ompi_communicator_t *comm, ompi_request_t **request)
{
    if (!mca_pml_umr_send_few_bytes(dt, count)) {
        return mca_pml_umr_isend_check_blocks(buf, count, dt, dst, tag, mode,
                                              comm, request);
    }
    if (OPAL_UNLIKELY(mca_pml_umr_send_prefiltered(dt))) {
        return mca_pml_umr_isend_hold(buf, count, dt, dst, tag, mode, comm,
                                      request);
    }
    return mca_pml_umr_pass(buf, count, dt, dst, tag, mode, comm, request);
}

int mca_pml_umr_isend(const void *buf, size_t count, ompi_datatype_t *dt,
                      int dst, int tag, mca_pml_base_send_mode_t mode,
                      ompi_communicator_t *comm, ompi_request_t **request)
{
    if (OPAL_LIKELY(mca_pml_umr_send_fast(buf, dt, count, 1))) {
        return mca_pml_umr_pass(buf, count, dt, dst, tag, mode, comm,
                                request);
    }
    return mca_pml_umr_isend_check(buf, count, dt, dst, tag, mode, comm,
                                   request);
}

/* A blocking send that may go zero-copy: one that passes through is the
 * wrapped PML's own blocking send. */
static UCS_F_NOINLINE int
mca_pml_umr_send_slow(const void *buf, size_t count, ompi_datatype_t *dt,
                      int dst, int tag, mca_pml_base_send_mode_t mode,
                      ompi_communicator_t *comm)
{
    mca_pml_umr_request_t *req;
    ompi_request_t *oreq;
    int rc;

    if (mca_pml_umr_send_small_blocks(dt, count, comm, dst)) {
        return mca_pml_umr.real.pml_send(buf, count, dt, dst, tag, mode, comm);
    }
    if ((mode == MCA_PML_BASE_SEND_BUFFERED) &&
        mca_pml_umr_send_buffered(buf, count, dt, dst, tag, comm, NULL, &rc)) {
        return rc;
    }
    rc = mca_pml_umr_send_begin(buf, count, dt, dst, tag, mode, comm, 1,
                                &req);
    if (rc != OMPI_SUCCESS) {
        return rc;
    }
    if (req == NULL) {
        return mca_pml_umr.real.pml_send(buf, count, dt, dst, tag, mode, comm);
    }
    oreq = &req->super;
    return mca_pml_umr_request_wait_free(&oreq, MPI_STATUS_IGNORE);
}

int mca_pml_umr_send(const void *buf, size_t count, ompi_datatype_t *dt,
                     int dst, int tag, mca_pml_base_send_mode_t mode,
                     ompi_communicator_t *comm)
{
    if (OPAL_LIKELY(mca_pml_umr_send_fast(buf, dt, count, 1))) {
        return mca_pml_umr.real.pml_send(buf, count, dt, dst, tag, mode, comm);
    }
    return mca_pml_umr_send_slow(buf, count, dt, dst, tag, mode, comm);
}

int mca_pml_umr_isend_init(const void *buf, size_t count, ompi_datatype_t *dt,
                           int dst, int tag, mca_pml_base_send_mode_t mode,
                           ompi_communicator_t *comm, ompi_request_t **request)
{
    mca_pml_umr_request_t *req;

    /* buffered: passed on, but for exactly Z bytes (maybe an escape,
     * known at each start) */
    if (OPAL_LIKELY(mca_pml_umr_send_fast(NULL, dt, count, 0)) ||
        ((mode == MCA_PML_BASE_SEND_BUFFERED) &&
         (dt->super.size * count != UMR_MPI_CTL_SIZE))) {
        return mca_pml_umr.real.pml_isend_init(buf, count, dt, dst, tag, mode,
                                               comm, request);
    }
    req = mca_pml_umr_request_alloc(MCA_PML_UMR_REQ_SEND, true, comm,
                                    (void*)buf, count, dt, dst, tag);
    if (req == NULL) {
        if (dt->super.size * count == UMR_MPI_CTL_SIZE) {
            /* the wrapped PML's request would send an escape raw */
            ++mca_pml_umr.cnt.errors;
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        return mca_pml_umr.real.pml_isend_init(buf, count, dt, dst, tag, mode,
                                               comm, request);
    }
    req->mode  = mode;
    req->start = mca_pml_umr_send_start;
    *request   = &req->super;
    return OMPI_SUCCESS;
}

/* A pass-through start of a persistent send of ours completed: its status
 * is the wrapped PML's. */
static int mca_pml_umr_send_pass_cb(ompi_request_t *inner)
{
    mca_pml_umr_request_t *req = inner->req_complete_cb_data;

    inner->req_complete_cb_data = NULL;
    req->super.req_status       = inner->req_status;
    mca_pml_umr_request_mpi_complete(req);
    return 0;
}

/* MPI_Start of a persistent send made by mca_pml_umr_isend_init. */
static int mca_pml_umr_send_start(mca_pml_umr_request_t *req)
{
    const umr_mpi_dtype_t *info = NULL;
    umr_mpi_peer_t *peer;
    int escape, rc;

    mca_pml_umr_request_restart(req);
    if (req->mode == MCA_PML_BASE_SEND_BUFFERED) {
        /* Z bytes (mca_pml_umr_isend_init): an escape is copied and sent
         * by a request of its own, and this start completes at once */
        if (mca_pml_umr_send_buffered(req->buf, req->count, req->dt,
                                      req->peer_rank, req->tag, req->comm,
                                      NULL, &rc)) {
            if (rc == OMPI_SUCCESS) {
                req->super.req_status.MPI_ERROR = MPI_SUCCESS;
                mca_pml_umr_request_mpi_complete(req);
            }
            return rc;
        }
        goto pass;
    }
    peer = mca_pml_umr_send_choose(req->buf, req->count, req->dt,
                                   req->peer_rank, req->mode, req->comm,
                                   &info, &escape, 0);
    if (peer != NULL) {
        rc = mca_pml_umr_send_zcopy(req, peer, info, escape);
        if (rc != UMR_MPI_SEND_PASS) {
            return (rc == UMR_MPI_SENT) ? OMPI_SUCCESS : rc;
        }
    }
pass:
    /* this start passes through: the wrapped PML's own request */
    req->passthrough = 1;
    rc = mca_pml_umr_pass(req->buf, req->count, req->dt, req->peer_rank,
                          req->tag, req->mode, req->comm, &req->inner);
    if (rc != OMPI_SUCCESS) {
        req->inner = NULL;
        return rc;
    }
    mca_pml_umr_inner_hook(req, mca_pml_umr_send_pass_cb);
    return OMPI_SUCCESS;
}
