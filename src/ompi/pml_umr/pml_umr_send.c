/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr send side: pass-through test, zero-copy send (layout key + control
 * message through the wrapped PML), acknowledgements.
 */
#include "pml_umr_send.h"
#include "pml_umr_request.h"
#include "pml_umr_choose.h"
#include "pml_umr_fault.h"
#include "common_umr_dtype.h"

#include <string.h>

static int mca_pml_umr_send_start(mca_pml_umr_request_t *req);

/* mca_pml_umr_send_zcopy(): nothing was sent and the message passes
 * through the wrapped PML. Its other results: OMPI_SUCCESS (the control
 * message is posted), or an error for an escape that could not be sent at
 * all (it never goes raw): the user's send fails with it. */
#define MCA_PML_UMR_SEND_PASS 1

/* pml_umr_choose_zcopy() for engine `e` (0 sw, 1 mlx5), remembered per
 * datatype and count in the datatype's front slot (common_umr_dtype.h);
 * the message is eligible (size, layout). */
static int mca_pml_umr_dtype_memo(mca_common_umr_dtype_slot_t *slot,
                                  size_t count, int e)
{
    mca_pml_umr_choose_peer_t cp;

    if (OPAL_LIKELY((slot->memo[e] >= 0) && (slot->memo_count[e] == count))) {
        return slot->memo[e];
    }
    cp.engine           = (e == 0) ? "sw" : "mlx5";
    cp.same_host        = (e == 0);
    cp.reconnect        = 0;        /* a connected peer's choice */
    cp.pml              = mca_pml_umr.real_component.pmlm_version.
                          mca_component_name;
    slot->memo[e]       = (signed char)mca_pml_umr_choose_zcopy(
                                  slot->info, count, &cp,
                                  mca_pml_umr.zcopy_mode);
    slot->memo_count[e] = count;
    return slot->memo[e];
}

/* `count` elements of the slot's type pass through on engine `e` (by the
 * choice, or remembered after a decline or a key that could not be made):
 * when they do on every engine of the rails, that is the slot's verdict
 * (pass_count), which the entry points read inline: the next such message
 * costs a hash and two compares, no lookup, no decoding, no choice. A
 * verdict of pass through never turns: the choice is the same for the same
 * type and count, and only declines change a memo (to pass). */
static void mca_pml_umr_dtype_pass(mca_common_umr_dtype_slot_t *slot,
                                   size_t count, int e)
{
    slot->memo[e]       = 0;
    slot->memo_count[e] = count;
    if (((mca_pml_umr.engines & 1) &&
         (mca_pml_umr_dtype_memo(slot, count, 0) != 0)) ||
        ((mca_pml_umr.engines & 2) &&
         (mca_pml_umr_dtype_memo(slot, count, 1) != 0))) {
        return;
    }
    slot->pass_count = count;
}

/* The choice for this peer's engine (above). */
static int mca_pml_umr_dtype_choose(mca_common_umr_dtype_slot_t *slot,
                                    size_t count,
                                    const mca_common_umr_peer_t *peer)
{
    mca_pml_umr_choose_peer_t cp;
    int e = peer->rail->is_sw ? 0 : 1;

    if (mca_pml_umr_dtype_memo(slot, count, e)) {
        if (OPAL_UNLIKELY(mca_common_umr_peer_reconnects(peer))) {
            /* worth a connection at the budget? (not remembered: the
             * peer's, not the type's) */
            cp.engine    = (e == 0) ? "sw" : "mlx5";
            cp.same_host = (e == 0);
            cp.pml       = mca_pml_umr.real_component.pmlm_version.
                           mca_component_name;
            cp.reconnect = 1;
            return mca_pml_umr_choose_zcopy(slot->info, count, &cp,
                                            mca_pml_umr.zcopy_mode);
        }
        return 1;
    }
    mca_pml_umr_dtype_pass(slot, count, e);
    return 0;
}

/* The density class of `dt` (MCA_PML_UMR_CHOOSE_SPARSE, _DENSE), from
 * Open MPI's size and extent: the one the choice puts the decoded type in
 * (mca_pml_umr_choose_is_dense). */
static UCS_F_ALWAYS_INLINE int mca_pml_umr_send_dens(const ompi_datatype_t *dt)
{
    return mca_pml_umr_choose_is_dense(dt->super.size,
                                       dt->super.ub - dt->super.lb) ?
           MCA_PML_UMR_CHOOSE_DENSE : MCA_PML_UMR_CHOOSE_SPARSE;
}

/* Everything below Z bytes, contiguous data and derived-datatype messages
 * that cannot go zero-copy by their size alone (zc_min_len: the minimum
 * size, and what the costs allow at all, pml_umr_choose_bounds) go straight
 * to the wrapped PML: one multiply, two compares and the datatype's
 * contiguity flags, and a type and count with a verdict of pass through
 * in the type's front slot. (The density class's bounds are tested out of
 * line, mca_pml_umr_send_small_blocks: inline, they cost every small
 * message 5 instructions of register saves in the entry points.) Exactly Z bytes
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

    if (OPAL_LIKELY(len < MCA_PML_UMR_CTL_SIZE)) {
        return 1;
    }
    contig = opal_datatype_is_contiguous_memory_layout(&dt->super, count);
    if (OPAL_UNLIKELY(len == MCA_PML_UMR_CTL_SIZE)) {
        if (!contig || (buf == NULL)) {
            return 0;
        }
        memcpy(&head, (const char*)buf + dt->super.true_lb, sizeof(head));
        return head != MCA_PML_UMR_MAGIC0;
    }
    if (contig) {
        return 1;
    }
    if (len < mca_pml_umr.zc_min_len) {
        if (count_pass) {
            mca_pml_umr.cnt.passthrough_sends += (len >= mca_pml_umr.min_size);
        }
        return 1;
    }
    /* a type and count that passed through before (the verdict in its
     * front slot): not for persistent sends, counted at each start */
    if (count_pass && mca_common_umr_dtype_passes(dt, count)) {
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

    return (len != MCA_PML_UMR_CTL_SIZE) &&
           (len < mca_pml_umr.zc_dens_min_len[mca_pml_umr_send_dens(dt)]);
}

/* A message the prefilter passed through, counted: that verdict depends on
 * the type and the count only (not on the peer or the communicator), and
 * is kept for a type that comes back (mca_common_umr_dtype_prefiltered):
 * 1 when `dt` is to be held now. */
static UCS_F_ALWAYS_INLINE int
mca_pml_umr_send_prefiltered(const ompi_datatype_t *dt)
{
    ++mca_pml_umr.cnt.passthrough_sends;
    ++mca_pml_umr.cnt.prefiltered;
    return mca_common_umr_dtype_prefiltered(dt);
}

/* Too few bytes or blocks too small for zero-copy to win, by what Open
 * MPI knows of the type: its density class picks the bounds, against
 * which the message's size (first, mca_pml_umr_send_few_bytes) and the
 * mean block of Open MPI's description (mca_common_umr_dtype_blocks) are
 * tested. No decoding, so a type used once costs nothing, and a type that
 * keeps passing is held with its verdict (mca_pml_umr_send_prefiltered).
 * Counted as passed through (and prefiltered). Between the two, a peer
 * known to pass through (no rail reaches it, or it is retired:
 * mca_common_umr_peer_passes, inline) passes at once, counted as passed
 * through (not a verdict on the type). Never for exactly Z bytes (maybe an
 * escape). */
static UCS_F_ALWAYS_INLINE int
mca_pml_umr_send_small_blocks(ompi_datatype_t *dt, size_t count,
                              ompi_communicator_t *comm, int dst)
{
    size_t len = dt->super.size * count, bytes, blocks;
    int d;

    if (len == MCA_PML_UMR_CTL_SIZE) {
        return 0;
    }
    d = mca_pml_umr_send_dens(dt);
    if (len >= mca_pml_umr.zc_dens_min_len[d]) {
        if (mca_common_umr_peer_passes(comm, dst)) {
            ++mca_pml_umr.cnt.passthrough_sends;
            return 1;
        }
        blocks = mca_common_umr_dtype_blocks(dt, &bytes);
        if ((double)bytes >= mca_pml_umr.zc_dens_min_block[d] *
                             (double)blocks) {
            return 0;
        }
    }
    if (OPAL_UNLIKELY(mca_pml_umr_send_prefiltered(dt))) {
        mca_common_umr_dtype_hold(dt, count);
    }
    return 1;
}

/* Whether the message is of exactly Z packed bytes that start with the
 * magic (maybe an escape). */
static int mca_pml_umr_send_has_magic(const void *buf, size_t count,
                                      ompi_datatype_t *dt)
{
    mca_pml_umr_ctl_t head;

    if (dt->super.size * count != MCA_PML_UMR_CTL_SIZE) {
        return 0;
    }
    mca_pml_umr_peek(buf, count, dt, &head, sizeof(head.magic));
    return mca_pml_umr_ctl_is_magic(&head);
}

/* The peer of an escape (exactly Z packed bytes that start with the magic,
 * to a pml/umr peer), or NULL. Whatever the mode or the datatype (one
 * without a layout too), an escape never goes raw: the receiver would take
 * it for a control message and wait for data that never comes. A pml/umr
 * peer is one by the modex, whether a rail reaches it or not
 * (mca_common_umr_peer_get_umr): the receiver decides alike (pml_umr_recv.c,
 * CLASSIFY), with its own rails, which may reach us when ours do not reach
 * it or the other way round. To a peer no rail reaches an escape goes as
 * a keyless control message, which needs none. */
static UCS_F_NOINLINE mca_common_umr_peer_t *
mca_pml_umr_send_escape_peer(const void *buf, size_t count,
                             ompi_datatype_t *dt, ompi_communicator_t *comm,
                             int dst)
{
    mca_common_umr_peer_t *peer;

    if ((dt->super.size * count != MCA_PML_UMR_CTL_SIZE) ||
        (NULL == (peer = mca_common_umr_peer_get_umr(comm, dst))) ||
        !mca_pml_umr_send_has_magic(buf, count, dt)) {
        return NULL;
    }
    ++mca_pml_umr.cnt.escapes;
    return peer;
}

/* The peer for a zero-copy send of this message, or NULL to pass through.
 * `prechecked`: the entry point found it noncontiguous, at least
 * zc_min_len (>= min_size) bytes and not of small blocks, unless it is of
 * exactly Z bytes (mca_pml_umr_send_fast, _small_blocks): not again. */
static mca_common_umr_peer_t *
mca_pml_umr_send_choose(const void *buf, size_t count, ompi_datatype_t *dt,
                        int dst, mca_pml_base_send_mode_t mode,
                        ompi_communicator_t *comm, const umr_mpi_dtype_t **info,
                        int prechecked)
{
    size_t len = dt->super.size * count;
    mca_common_umr_dtype_slot_t *slot;
    mca_common_umr_peer_t *peer;
    int candidate;

    if (prechecked && (len != MCA_PML_UMR_CTL_SIZE)) {
        candidate = 1;
    } else {
        candidate = (len >= mca_pml_umr.min_size) &&
                    !opal_datatype_is_contiguous_memory_layout(&dt->super,
                                                               count);
        if (candidate && mca_pml_umr_send_small_blocks(dt, count, comm, dst)) {
            return NULL;   /* counted */
        }
    }
    if ((len == MCA_PML_UMR_CTL_SIZE) &&
        (NULL != (peer = mca_pml_umr_send_escape_peer(buf, count, dt, comm,
                                                      dst)))) {
        /* (buffered: mca_pml_umr_send_escape_copy) its layout key if the
         * type has a layout, else a keyless control message; a retired
         * peer declines it (no key) */
        slot  = mca_common_umr_dtype_lookup(dt);
        *info = ((slot != NULL) && (slot->info->layout != NULL)) ?
                slot->info : NULL;
        return peer;
    }
    if ((mode == MCA_PML_BASE_SEND_BUFFERED) ||
        (NULL == (peer = mca_common_umr_peer_get(comm, dst))) ||
        (NULL == (slot = mca_common_umr_dtype_lookup(dt)))) {
        goto pass;
    }
    if (slot->info->layout == NULL) {
        /* a type that cannot go zero-copy (not expressible, or built by
         * Open MPI itself): this count passes through for every peer, the
         * next such message by the slot's verdict */
        slot->pass_count = count;
        goto pass;
    }
    *info = slot->info;
    if (candidate && !mca_common_umr_peer_retired(peer) &&
        mca_pml_umr_dtype_choose(slot, count, peer)) {
        return peer;
    }

pass:
    mca_pml_umr.cnt.passthrough_sends += candidate;
    return NULL;
}

/* ---- acknowledgements --------------------------------------------------- */

static void mca_pml_umr_send_event(mca_pml_umr_request_t *req);
static void mca_pml_umr_send_fallback_run(mca_common_umr_work_t *work);

/* One posted receive of an ack from `rank`; dropped (it named no send of
 * ours that waits), it is posted again from progress (`work`). Every slot
 * is on mca_pml_umr_ack_slots until freed: those still posted when
 * MPI_Finalize starts (spares: posted for a control message that could not
 * be sent, or again after a dropped ack) are cancelled then
 * (mca_pml_umr_send_quiesce). */
typedef struct mca_pml_umr_ack_slot {
    mca_common_umr_work_t work;
    ucs_list_link_t   list;
    ompi_request_t    *req;
    int               rank;       /* the peer's rank in MPI_COMM_WORLD */
    mca_pml_umr_ack_t ack;
} mca_pml_umr_ack_slot_t;

static UCS_LIST_HEAD(mca_pml_umr_ack_slots);
static int mca_pml_umr_acks_closed;   /* MPI_Finalize started: no repost */

/* Zero-copy sends waiting for their ack: oldest first (an ack by tag looks
 * for its send there, and an ack by number that its place below does not
 * hold), and by sequence number in a ring: send number s sits at s modulo
 * its size, until it stops waiting or a later one takes the place (more
 * sends waiting than places, or one that waits long: then only the list
 * has it). An ack is checked against these before anything of a send is
 * touched (its number must be the one of a send that waits, for that
 * peer's ack): no value that came on the wire is ever used as an address.
 * (A hash table did this at about 200 instructions a send, its resizing
 * over the deleted entries half of it.) */
#define MCA_PML_UMR_SENDS_RING  64     /* power of two */
static UCS_LIST_HEAD(mca_pml_umr_sends_pending);
static mca_pml_umr_request_t *mca_pml_umr_sends_ring[MCA_PML_UMR_SENDS_RING];
/* never reused (2^64 sends); below it: MCA_PML_UMR_ACK_BY_TAG */
static uint64_t mca_pml_umr_send_next_seq = MCA_PML_UMR_SEQ_FIRST;

static UCS_F_ALWAYS_INLINE mca_pml_umr_request_t **
mca_pml_umr_send_place(uint64_t seq)
{
    return &mca_pml_umr_sends_ring[seq & (MCA_PML_UMR_SENDS_RING - 1)];
}

/* `req` waits for its ack from now: a new sequence number names it. */
static void mca_pml_umr_send_wait_ack(mca_pml_umr_request_t *req)
{
    req->seq = mca_pml_umr_send_next_seq++;
    *mca_pml_umr_send_place(req->seq) = req;
    ucs_list_add_tail(&mca_pml_umr_sends_pending, &req->pending);
}

/* `req` waits no more (its ack came, or its control message failed). */
static void mca_pml_umr_send_unwait(mca_pml_umr_request_t *req)
{
    mca_pml_umr_request_t **place = mca_pml_umr_send_place(req->seq);

    if (*place == req) {
        *place = NULL;
    }
    ucs_list_del(&req->pending);
}

/* The send numbered `seq` that waits, not at its place in the ring (a
 * later one took it), or NULL (no such send: a forged or stale ack). */
static UCS_F_NOINLINE mca_pml_umr_request_t *
mca_pml_umr_send_by_seq_slow(uint64_t seq)
{
    mca_pml_umr_request_t *req;

    ucs_list_for_each(req, &mca_pml_umr_sends_pending, pending) {
        if (req->seq == seq) {
            return req;
        }
    }
    return NULL;
}

/* The send numbered `seq` that waits for the ack of `rank`, or NULL. */
static mca_pml_umr_request_t *mca_pml_umr_send_by_seq(int rank, uint64_t seq)
{
    mca_pml_umr_request_t *req = *mca_pml_umr_send_place(seq);

    if ((req == NULL) || (req->seq != seq)) {
        req = mca_pml_umr_send_by_seq_slow(seq);
        if (req == NULL) {
            return NULL;
        }
    }
    return (req->peer->world_rank == rank) ? req : NULL;
}

/* MPI_Finalize has started (mca_common_umr_peers_quiesce, while
 * MPI_COMM_WORLD works): the ack receives still posted are cancelled and
 * freed (their callback frees the slot; the request is reaped), and none
 * is posted again. An ack that matched before its cancel is taken as any. */
void mca_pml_umr_send_quiesce(void)
{
    mca_pml_umr_ack_slot_t *slot, *tmp;
    ompi_request_t *r;

    mca_pml_umr_acks_closed = 1;
    ucs_list_for_each_safe(slot, tmp, &mca_pml_umr_ack_slots, list) {
        r = slot->req;
        if (r == NULL) {
            continue;   /* its repost is queued: freed when it runs */
        }
        ompi_request_cancel(r);
        ompi_request_wait_completion(r);   /* the callback frees the slot */
    }
    MCA_PML_UMR_VERBOSE(10, "rank %d: ack receives cancelled, %lu still "
                        "posted", ompi_comm_rank(&ompi_mpi_comm_world.comm),
                        (unsigned long)mca_pml_umr.cnt.acks_posted);
}

void mca_pml_umr_send_fini(void)
{
    memset(mca_pml_umr_sends_ring, 0, sizeof(mca_pml_umr_sends_ring));
}

/* An ack by tag (pml_umr_wire.h): the one zero-copy send to `rank` on the
 * communicator `cid` (umr_ompi_comm_gid) with `tag` that waits, or NULL
 * when there are none or several (the receiver cannot say which: that
 * sender keeps waiting). */
static UCS_F_NOINLINE mca_pml_umr_request_t *
mca_pml_umr_send_by_tag(int rank, uint64_t cid, int tag)
{
    mca_pml_umr_request_t *req, *found = NULL;
    int n = 0;

    ucs_list_for_each(req, &mca_pml_umr_sends_pending, pending) {
        if ((req->peer->world_rank == rank) && (req->tag == tag) &&
            (umr_ompi_comm_gid(req->comm) == cid)) {
            found = req;
            ++n;
        }
    }
    if (n != 1) {
        MCA_PML_UMR_VERBOSE(1, "a truncated control message from rank %d "
                            "(tag %d) matches %d zero-copy sends of rank %d",
                            rank, tag, n,
                            ompi_comm_rank(&ompi_mpi_comm_world.comm));
        return NULL;
    }
    return found;
}

static int mca_pml_umr_ack_cb(ompi_request_t *ireq);

static int mca_pml_umr_ack_post_slot(mca_pml_umr_ack_slot_t *slot)
{
    int rc;

    rc = mca_pml_umr.real.pml_irecv(&slot->ack, sizeof(slot->ack),
                                    &ompi_mpi_byte.dt, slot->rank,
                                    MCA_PML_UMR_TAG_ACK,
                                    &ompi_mpi_comm_world.comm, &slot->req);
    if (rc != OMPI_SUCCESS) {
        slot->req = NULL;
        return rc;
    }
    ++mca_pml_umr.cnt.acks_posted;
    ompi_request_set_callback(slot->req, mca_pml_umr_ack_cb, slot);
    return OMPI_SUCCESS;
}

static void mca_pml_umr_ack_slot_free(mca_pml_umr_ack_slot_t *slot)
{
    ucs_list_del(&slot->list);
    OBJ_DESTRUCT(&slot->work.super);
    free(slot);
}

/* One more ack receive for the peer `rank`. */
static int mca_pml_umr_ack_post(int rank)
{
    mca_pml_umr_ack_slot_t *slot;
    int rc;

    if (mca_pml_umr_fault(MCA_PML_UMR_FAULT_ACKPOST) ||
        (NULL == (slot = malloc(sizeof(*slot))))) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    /* the decoder's cache open (a buffered escape looks up no type): its
     * MPI_COMM_SELF attribute runs mca_common_umr_peers_quiesce, hence
     * mca_pml_umr_send_quiesce, when MPI_Finalize starts */
    (void)mca_common_umr_dtype_lookup(&ompi_mpi_byte.dt);
    OBJ_CONSTRUCT(&slot->work.super, opal_list_item_t);
    ucs_list_add_tail(&mca_pml_umr_ack_slots, &slot->list);
    slot->rank = rank;
    rc = mca_pml_umr_ack_post_slot(slot);
    if (rc != OMPI_SUCCESS) {
        mca_pml_umr_ack_slot_free(slot);
    }
    return rc;
}

/* A dropped ack's receive, posted again (from progress, not inside the
 * wrapped PML's callback): the acks still to come from that peer each
 * find one. */
static void mca_pml_umr_ack_repost_run(mca_common_umr_work_t *work)
{
    mca_pml_umr_ack_slot_t *slot = ucs_container_of(work,
                                                    mca_pml_umr_ack_slot_t,
                                                    work);

    mca_common_umr_progress_ref(-1);
    if (mca_pml_umr_acks_closed) {
        mca_pml_umr_ack_slot_free(slot);
        return;
    }
    if (mca_pml_umr_ack_post_slot(slot) != OMPI_SUCCESS) {
        MCA_PML_UMR_VERBOSE(1, "rank %d: no ack receive for rank %d posted "
                            "again", ompi_comm_rank(&ompi_mpi_comm_world.comm),
                            slot->rank);
        mca_pml_umr_ack_slot_free(slot);
    }
}

/* An ack that names no send of ours waiting for that peer's ack (a
 * duplicate, late, malformed, another peer's, or by a tag that names none
 * or several): dropped, counted, one line a process at verbosity 1 (the
 * others at 20); its receive is posted again. */
static UCS_F_NOINLINE void mca_pml_umr_ack_drop(mca_pml_umr_ack_slot_t *slot)
{
    static int said;

    ++mca_pml_umr.cnt.acks_dropped;
    MCA_PML_UMR_VERBOSE(said ? 20 : 1, "rank %d: dropped an ack from rank %d "
                        "that names no zero-copy send waiting for it (seq "
                        "%llu, flags 0x%x; counted in acks_dropped)",
                        ompi_comm_rank(&ompi_mpi_comm_world.comm), slot->rank,
                        (unsigned long long)slot->ack.seq, slot->ack.flags);
    said = 1;
    if (mca_pml_umr_acks_closed) {
        mca_pml_umr_ack_slot_free(slot);   /* MPI_Finalize: not again */
        return;
    }
    slot->work.run = mca_pml_umr_ack_repost_run;
    mca_common_umr_work_post(&slot->work);
    mca_common_umr_progress_ref(1);
}

/* Acks from one peer are matched in arrival order, so any posted slot may
 * carry the ack of any of our sends to that peer: the payload names it,
 * and only a send waiting for that peer's ack is taken. */
static int mca_pml_umr_ack_cb(ompi_request_t *ireq)
{
    mca_pml_umr_ack_slot_t *slot = mca_common_umr_cb_data_take(ireq);
    mca_pml_umr_request_t *req;

    mca_common_umr_reap_add(ireq);
    slot->req = NULL;
    --mca_pml_umr.cnt.acks_posted;
    if (ireq->req_status._cancelled) {
        mca_pml_umr_ack_slot_free(slot);
        return 0;
    }
    if ((ireq->req_status.MPI_ERROR != MPI_SUCCESS) ||
        (ireq->req_status._ucount != sizeof(slot->ack))) {
        req = NULL;    /* not an ack of ours: malformed */
    } else if (slot->ack.seq == MCA_PML_UMR_ACK_BY_TAG) {
        req = mca_pml_umr_send_by_tag(slot->rank, slot->ack.cid,
                                      slot->ack.tag);
    } else {
        req = mca_pml_umr_send_by_seq(slot->rank, slot->ack.seq);
    }
    if (req == NULL) {
        mca_pml_umr_ack_drop(slot);
        return 0;
    }
    mca_pml_umr_send_unwait(req);
    if (slot->ack.flags & MCA_PML_UMR_ACK_FALLBACK) {
        /* declined: the data goes through the wrapped PML, from progress
         * (not inside the PML's callback); one more event */
        if (slot->ack.flags & MCA_PML_UMR_ACK_RETIRE) {
            mca_common_umr_peer_retire(req->peer,
                                       (slot->ack.flags &
                                        MCA_PML_UMR_ACK_NORAIL) ?
                                       "no rail of its reaches us" :
                                       "its zero-copy receive failed");
        } else if (!(slot->ack.flags & MCA_PML_UMR_ACK_BUSY)) {
            req->declined = 1;
        }
        ++req->events;
        req->work.run = mca_pml_umr_send_fallback_run;
        mca_common_umr_work_post(&req->work);
        mca_common_umr_progress_ref(1);
    } else if (slot->ack.error != MPI_SUCCESS) {
        req->error = slot->ack.error;
    }
    mca_pml_umr_send_event(req);
    mca_pml_umr_ack_slot_free(slot);
    return 0;
}

/* ---- zero-copy send ----------------------------------------------------- */

/* One of the two events of a zero-copy send (control message sent, ack
 * received), or the one event of a pass-through persistent send. */
static void mca_pml_umr_send_event(mca_pml_umr_request_t *req)
{
    if (--req->events > 0) {
        return;
    }
    if (req->lkey != NULL) {
        mca_common_umr_lkey_release(req->region, req->lkey);
        req->lkey   = NULL;
        req->region = NULL;
    }
    if (req->peer_held) {
        req->peer_held = 0;
        mca_common_umr_peer_release(req->peer);
    }
    if (req->passthrough) {
        /* pass-through persistent start: status from the wrapped PML */
        req->super.req_status = req->inner->req_status;
    } else {
        req->super.req_status.MPI_ERROR = req->error;
    }
    mca_pml_umr_request_mpi_complete(req);
}

static int mca_pml_umr_send_inner_cb(ompi_request_t *inner)
{
    mca_pml_umr_request_t *req = mca_common_umr_cb_data_take(inner);

    if ((req->inner != NULL) &&
        (inner->req_status.MPI_ERROR != MPI_SUCCESS)) {
        req->error = inner->req_status.MPI_ERROR;
    }
    mca_pml_umr_send_event(req);
    return 0;
}

/* Whether `why` was said before (a few distinct reasons a process), and
 * it is now. */
static int mca_pml_umr_send_said(const char *why)
{
    static const char *said[8];
    int i;

    for (i = 0; (i < 8) && (said[i] != NULL); ++i) {
        if (said[i] == why) {
            return 1;
        }
    }
    if (i < 8) {
        said[i] = why;
    }
    return i == 8;
}

/* Zero-copy was chosen, but nothing was sent yet and the message passes
 * through, counted once in fallbacks, with one line a process for each
 * reason (`why`): its layout cannot get a key on this rail (rc
 * OMPI_ERR_NOT_AVAILABLE, common_umr_keys.h: beyond what a key takes,
 * memory that does not register as one region), which stays so: this type
 * and count pass through from now on, without another try; not now (the
 * key pool's keys in use; every connected peer busy: the budget,
 * pml_umr_max_conns); or the peer is not reachable. Never for an escape (it
 * would go raw): that goes keyless, or fails
 * (mca_pml_umr_send_escape_fail). */
static UCS_F_NOINLINE void mca_pml_umr_send_fallback(mca_pml_umr_request_t *req,
                                                     int rc, const char *why)
{
    mca_common_umr_dtype_slot_t *slot;
    int e = req->peer->rail->is_sw ? 0 : 1;

    ++mca_pml_umr.cnt.fallbacks;
    if ((rc == OMPI_ERR_NOT_AVAILABLE) &&
        (NULL != (slot = mca_common_umr_dtype_lookup(req->dt)))) {
        mca_pml_umr_dtype_pass(slot, req->count, e);
    }
    if (why == NULL) {
        why = (rc == OMPI_ERR_OUT_OF_RESOURCE) ?
              "every connected peer is busy (the budget, pml_umr_max_conns)" :
              "the peer is not reachable zero-copy";
    }
    if (mca_pml_umr_send_said(why)) {
        return;
    }
    MCA_PML_UMR_VERBOSE(1, "rank %d: %s%s: %s through pml %s (counted in "
                        "fallbacks)",
                        ompi_comm_rank(&ompi_mpi_comm_world.comm),
                        (rc == OMPI_ERR_NOT_AVAILABLE) ? "a layout that gets "
                        "no key on this rail: " :
                        (rc == OMPI_ERR_TEMP_OUT_OF_RESOURCE) ? "no layout key "
                        "now: " : "", why,
                        (rc == OMPI_ERR_NOT_AVAILABLE) ? "that type and count "
                        "pass" : "such messages pass",
                        mca_pml_umr.real_component.pmlm_version.
                        mca_component_name);
}

static int mca_pml_umr_send_fb_cb(ompi_request_t *fb)
{
    mca_pml_umr_request_t *req = mca_common_umr_cb_data_take(fb);

    if (fb->req_status.MPI_ERROR != MPI_SUCCESS) {
        req->error = fb->req_status.MPI_ERROR;
    }
    req->fb = NULL;
    mca_common_umr_reap_add(fb);
    mca_pml_umr_send_event(req);
    return 0;
}

/* The receiver declined: send the data on (MPI_COMM_WORLD, TAG_DATA),
 * where it posted the receive (pml_umr_wire.h). The user's buffer is as it
 * was: the request has not completed. */
static void mca_pml_umr_send_fallback_run(mca_common_umr_work_t *work)
{
    mca_pml_umr_request_t *req = ucs_container_of(work, mca_pml_umr_request_t,
                                                  work);
    mca_common_umr_dtype_slot_t *slot;
    int rc, e;

    mca_common_umr_progress_ref(-1);
    if (req->lkey != NULL) {
        mca_common_umr_lkey_release(req->region, req->lkey);
        req->lkey   = NULL;
        req->region = NULL;
    }
    if (req->declined) {
        /* declined by cost: this datatype and count pass through from now
         * on (the choice's memo), without a control message's round trip
         * (not for a peer no rail reaches: an escape, no choice made) */
        req->declined = 0;
        if ((req->peer->rail != NULL) &&
            ((slot = mca_common_umr_dtype_lookup(req->dt)) != NULL)) {
            e = req->peer->rail->is_sw ? 0 : 1;
            mca_pml_umr_dtype_pass(slot, req->count, e);
        }
    }
    rc = mca_pml_umr.real.pml_isend(req->buf, req->count, req->dt,
                                    req->peer->world_rank,
                                    MCA_PML_UMR_TAG_DATA,
                                    MCA_PML_BASE_SEND_STANDARD,
                                    &ompi_mpi_comm_world.comm, &req->fb);
    if (rc != OMPI_SUCCESS) {
        req->fb    = NULL;
        req->error = rc;
        mca_pml_umr_send_event(req);
        return;
    }
    ++mca_pml_umr.cnt.fallback_sends;
    ompi_request_set_callback(req->fb, mca_pml_umr_send_fb_cb, req);
}

/* An escape that cannot go even as a keyless control message (no memory
 * for its ack receive or its entry among the sends waiting for acks): it
 * must not go raw either (its receiver would take it for a control
 * message), so the user's send fails with OMPI_ERR_OUT_OF_RESOURCE (Open
 * MPI's MPI_ERR_INTERN); counted in errors, one line a process at
 * verbosity 1 (the others at 20). */
static UCS_F_NOINLINE int
mca_pml_umr_send_escape_fail(mca_pml_umr_request_t *req)
{
    static int said;

    ++mca_pml_umr.cnt.errors;
    MCA_PML_UMR_VERBOSE(said ? 20 : 1, "rank %d: an escape to rank %d (%d "
                        "bytes that start with pml/umr's magic) cannot be "
                        "sent: out of memory for its ack; the send fails "
                        "(counted in errors)",
                        ompi_comm_rank(&ompi_mpi_comm_world.comm),
                        req->peer->world_rank, MCA_PML_UMR_CTL_SIZE);
    said = 1;
    return OMPI_ERR_OUT_OF_RESOURCE;
}

/* An escape: Z bytes of user data that start with the magic. It must
 * never pass through raw (the receiver would take it for a control
 * message): without a key it goes as a control message without one,
 * which the receiver declines. */
static int mca_pml_umr_send_is_escape(mca_pml_umr_request_t *req)
{
    return mca_pml_umr_send_has_magic(req->buf, req->count, req->dt);
}

static int mca_pml_umr_send_zcopy(mca_pml_umr_request_t *req,
                                  const umr_mpi_dtype_t *info)
{
    mca_common_umr_peer_t *peer = req->peer;
    mca_pml_umr_ctl_t *ctl      = &req->ctl;
    const char *why             = NULL;
    int keyless = 0;
    size_t addr_len;
    int rc;

    if ((info == NULL) || mca_common_umr_peer_retired(peer)) {
        goto keyless;   /* an escape of a type without a layout, too */
    }
    /* the region and its layout key: registered once, reused */
    /* the peer only reads it (which a read-only mapping allows) */
    rc = mca_common_umr_lkey_acquire(peer->rail, req->buf, info->layout,
                                     req->count, PROT_READ, &req->region,
                                     &req->lkey, &why);
    if (rc != OMPI_SUCCESS) {
        if (mca_pml_umr_send_is_escape(req)) {
            goto keyless;
        }
        mca_pml_umr_send_fallback(req, rc, why);
        return MCA_PML_UMR_SEND_PASS;
    }
    /* the endpoint, and its address while the peer is not connected */
    rc = mca_common_umr_peer_prepare(peer, ctl->data + peer->rail->rkey_size,
                                     &addr_len);
    if (rc != OMPI_SUCCESS) {
        goto err_dereg;
    }
    memset(ctl, 0, offsetof(mca_pml_umr_ctl_t, data));
    ctl->rkey_len = peer->rail->rkey_size;
    memcpy(ctl->data, req->lkey->rkey, ctl->rkey_len);
    goto fill;

keyless:
    /* an escape to a retired peer (or rail), to a peer no rail reaches,
     * of a type without a layout, or whose key could not be made: a
     * control message without a key, which the receiver declines (the data
     * follows through the wrapped PML) */
    keyless = 1;
    memset(ctl, 0, offsetof(mca_pml_umr_ctl_t, data));
    addr_len = 0;
fill:
    ctl->magic[0] = MCA_PML_UMR_MAGIC0;
    ctl->magic[1] = MCA_PML_UMR_MAGIC1;
    ctl->length   = req->dt->super.size * req->count;
    ctl->sblocks  = (info != NULL) ? info->num_blocks * req->count : 0;
    ctl->rail     = (peer->rail != NULL) ?    /* NULL: no rail reaches it */
                    peer->rail - mca_common_umr_rails.rails : 0;
    if (addr_len > 0) {
        ctl->addr_len = addr_len;
        ctl->flags   |= MCA_PML_UMR_CTL_ADDR;
    }
    /* waiting for its ack from now (numbered: the CTL names it so): the
     * ack may come inside the isend */
    mca_pml_umr_send_wait_ack(req);
    ctl->seq = req->seq;
    if (mca_pml_umr_ack_post(peer->world_rank) != OMPI_SUCCESS) {
        mca_pml_umr_send_unwait(req);
        rc  = OMPI_ERROR;
        why = "no memory to receive its ack";
        goto err_dereg;
    }
    req->events = 2;
    if (!peer->retired && (peer->rail != NULL)) {
        /* its connection stays until the ack */
        mca_common_umr_peer_hold(peer);
        req->peer_held = 1;
    }
    rc = mca_pml_umr_fault(MCA_PML_UMR_FAULT_CTLSEND) ? OMPI_ERR_UNREACH :
         mca_pml_umr.real.pml_isend(ctl, MCA_PML_UMR_CTL_SIZE,
                                         &ompi_mpi_byte.dt, req->peer_rank,
                                         req->tag,
                                         (req->mode == MCA_PML_BASE_SEND_READY) ?
                                         MCA_PML_BASE_SEND_READY :
                                         MCA_PML_BASE_SEND_STANDARD,
                                         req->comm, &req->inner);
    if (rc != OMPI_SUCCESS) {
        /* the posted ack slot stays, a spare for this peer's next ack,
         * or cancelled when MPI_Finalize starts
         * (mca_pml_umr_send_quiesce) */
        mca_pml_umr_send_unwait(req);
        ++mca_pml_umr.cnt.errors;
        req->error  = rc;
        req->inner  = NULL;
        req->events = 1;
        mca_pml_umr_send_event(req);
        return OMPI_SUCCESS;
    }
    ++mca_pml_umr.cnt.zcopy_sends;
    mca_pml_umr.cnt.zcopy_bytes += ctl->length;
    ompi_request_set_callback(req->inner, mca_pml_umr_send_inner_cb, req);
    return OMPI_SUCCESS;

err_dereg:
    if (req->lkey != NULL) {
        mca_common_umr_lkey_release(req->region, req->lkey);
    }
    req->lkey   = NULL;
    req->region = NULL;
    if (mca_pml_umr_send_is_escape(req)) {
        if (!keyless) {
            goto keyless;
        }
        /* not even without a key: an error, never raw */
        return mca_pml_umr_send_escape_fail(req);
    }
    /* OMPI_ERR_OUT_OF_RESOURCE: no connection within the budget now */
    mca_pml_umr_send_fallback(req, rc, why);
    return MCA_PML_UMR_SEND_PASS;
}

/* A buffered send (MPI_Bsend, MPI_Ibsend, a start of MPI_Bsend_init) of
 * an escape to `peer`. It must complete at once (the user may reuse the
 * buffer), and its data cannot go ahead of the receiver's decline (the
 * declined messages of a pair are matched in order on TAG_DATA): its Z
 * packed bytes are copied and sent from the copy as any escape (a keyless
 * control message on the user's communicator and tag, so MPI's order of
 * messages holds; the data on TAG_DATA once declined), by a request of
 * ours that the user never sees (freed with the copy when done). The copy
 * is taken from the buffer the user attached (MPI_Buffer_attach), as the
 * wrapped PML takes its own: none attached, or no room in it, is
 * MPI_ERR_BUFFER (as ob1 says; pml ucx says MPI_ERR_OTHER, and so does
 * pml/umr over it), and MPI_Buffer_detach waits for the escape. */
static UCS_F_NOINLINE int
mca_pml_umr_send_escape_copy(const void *buf, size_t count,
                             ompi_datatype_t *dt, int dst, int tag,
                             ompi_communicator_t *comm,
                             mca_common_umr_peer_t *peer)
{
    void *copy = umr_ompi_bsend_alloc(comm, MCA_PML_UMR_CTL_SIZE);
    mca_pml_umr_request_t *req;
    int rc;

    if (copy == NULL) {
        return mca_pml_umr.bsend_no_room;   /* the user's error */
    }
    mca_pml_umr_peek(buf, count, dt, copy, MCA_PML_UMR_CTL_SIZE);
    req = mca_pml_umr_request_alloc(MCA_PML_UMR_REQ_SEND, false, comm, copy,
                                    MCA_PML_UMR_CTL_SIZE, &ompi_mpi_byte.dt,
                                    dst, tag);
    if (req == NULL) {
        umr_ompi_bsend_free(comm, copy);
        ++mca_pml_umr.cnt.errors;
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    req->copy        = copy;
    req->mode        = MCA_PML_BASE_SEND_STANDARD;
    req->peer        = peer;
    req->free_called = 1;   /* nobody waits for it */
    rc = mca_pml_umr_send_zcopy(req, NULL);
    if (rc != OMPI_SUCCESS) {
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
    mca_common_umr_peer_t *peer = mca_pml_umr_send_escape_peer(buf, count, dt,
                                                               comm, dst);

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
    const umr_mpi_dtype_t *info;
    mca_pml_umr_request_t *req;
    mca_common_umr_peer_t *peer;
    int rc;

    *req_p = NULL;
    peer = mca_pml_umr_send_choose(buf, count, dt, dst, mode, comm, &info,
                                   prechecked);
    if (peer == NULL) {
        return OMPI_SUCCESS;
    }
    req = mca_pml_umr_request_alloc(MCA_PML_UMR_REQ_SEND, false, comm,
                                    (void*)buf, count, dt, dst, tag);
    if (req == NULL) {
        if (mca_pml_umr_send_has_magic(buf, count, dt)) {
            ++mca_pml_umr.cnt.errors;   /* an escape: never raw */
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        ++mca_pml_umr.cnt.fallbacks;   /* chosen, and counted once */
        return OMPI_SUCCESS;
    }
    req->mode = mode;
    req->peer = peer;
    rc = mca_pml_umr_send_zcopy(req, info);
    if (rc != OMPI_SUCCESS) {
        req->free_called = 1;
        mca_pml_umr_request_mpi_complete(req); /* returns it */
        return (rc == MCA_PML_UMR_SEND_PASS) ? OMPI_SUCCESS : rc;
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
        return mca_pml_umr.real.pml_isend(buf, count, dt, dst, tag, mode, comm,
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
        return mca_pml_umr.real.pml_isend(buf, count, dt, dst, tag, mode, comm,
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
    mca_common_umr_dtype_hold(dt, count);
    return mca_pml_umr.real.pml_isend(buf, count, dt, dst, tag, mode, comm,
                                      request);
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
    return mca_pml_umr.real.pml_isend(buf, count, dt, dst, tag, mode, comm,
                                      request);
}

int mca_pml_umr_isend(const void *buf, size_t count, ompi_datatype_t *dt,
                      int dst, int tag, mca_pml_base_send_mode_t mode,
                      ompi_communicator_t *comm, ompi_request_t **request)
{
    if (OPAL_LIKELY(mca_pml_umr_send_fast(buf, dt, count, 1))) {
        return mca_pml_umr.real.pml_isend(buf, count, dt, dst, tag, mode, comm,
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
         (dt->super.size * count != MCA_PML_UMR_CTL_SIZE))) {
        return mca_pml_umr.real.pml_isend_init(buf, count, dt, dst, tag, mode,
                                               comm, request);
    }
    req = mca_pml_umr_request_alloc(MCA_PML_UMR_REQ_SEND, true, comm,
                                    (void*)buf, count, dt, dst, tag);
    if (req == NULL) {
        if (dt->super.size * count == MCA_PML_UMR_CTL_SIZE) {
            /* the wrapped PML's request would send an escape raw */
            ++mca_pml_umr.cnt.errors;
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        return mca_pml_umr.real.pml_isend_init(buf, count, dt, dst, tag, mode,
                                               comm, request);
    }
    req->mode = mode;
    req->start = mca_pml_umr_send_start;
    *request   = &req->super;
    return OMPI_SUCCESS;
}

/* MPI_Start of a persistent send made by mca_pml_umr_isend_init. */
static int mca_pml_umr_send_start(mca_pml_umr_request_t *req)
{
    const umr_mpi_dtype_t *info;
    int rc;

    mca_pml_umr_request_restart(req);
    if (req->mode == MCA_PML_BASE_SEND_BUFFERED) {
        /* Z bytes (mca_pml_umr_isend_init): an escape is copied and sent
         * by a request of its own, and this start completes at once */
        if (mca_pml_umr_send_buffered(req->buf, req->count, req->dt,
                                      req->peer_rank, req->tag, req->comm,
                                      NULL, &rc)) {
            if (rc != OMPI_SUCCESS) {
                return rc;
            }
            req->peer   = NULL;
            req->events = 1;
            mca_pml_umr_send_event(req);
            return OMPI_SUCCESS;
        }
        goto pass;
    }
    req->peer  = mca_pml_umr_send_choose(req->buf, req->count, req->dt,
                                         req->peer_rank, req->mode, req->comm,
                                         &info, 0);
    if (req->peer != NULL) {
        rc = mca_pml_umr_send_zcopy(req, info);
        if (rc == OMPI_SUCCESS) {
            return OMPI_SUCCESS;
        }
        if (rc != MCA_PML_UMR_SEND_PASS) {
            req->peer = NULL;   /* an escape that cannot be sent */
            return rc;
        }
    }
pass:
    /* this start passes through: the wrapped PML's own request */
    req->peer        = NULL;
    req->passthrough = 1;
    rc = mca_pml_umr.real.pml_isend(req->buf, req->count, req->dt,
                                    req->peer_rank, req->tag, req->mode,
                                    req->comm, &req->inner);
    if (rc != OMPI_SUCCESS) {
        return rc;
    }
    req->events = 1;
    mca_pml_umr_inner_hook(req, mca_pml_umr_send_inner_cb);
    return OMPI_SUCCESS;
}
