/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: the send modes: MPI_Send, MPI_Bsend, MPI_Ssend,
 * MPI_Rsend, their nonblocking and their large-count forms. A message goes
 * zero-copy when the core's choice takes it (umr_mpi_choose_send: its
 * packed size, its type's layout, the peer's engine); it is then a control
 * message on the user's envelope, in the same send mode (a ready send stays
 * ready; a synchronous one completes after the receiver's answer, which
 * comes after the receiver matched it), and the user's request is the
 * binding's. A message of exactly the control message's size that starts
 * with its magic, to a peer that runs the protocol, goes as an escape (the
 * receiver would take it for a control message): a buffered one from a
 * copy. Everything else is the MPI's own send, untouched.
 */
#include "umr_config.h"

#include "umr_mpich_send.h"
#include "umr_mpich.h"
#include "umr_mpich_comm.h"
#include "umr_mpich_core.h"
#include "umr_mpich_req.h"

#include "umr_mpi_choice.h"
#include "umr_mpi_dtype.h"

#include <stdlib.h>
#include <string.h>

/* the MPI's own send of that mode (UMR_MPICH_MODE_*), blocking (req NULL)
 * or not, int or large count */
static int umr_mpich_send_pass(const void *buf, MPI_Count count,
                               MPI_Datatype type, int dst, int tag,
                               MPI_Comm comm, int mode, int large,
                               MPI_Request *req)
{
    const umr_mpich_next_t *n = umr_mpich_next();

    ++umr_mpich.cnt.passthrough_sends;
    if ((req == NULL) && !large) {
        __typeof__(PMPI_Send) *f[] = {n->Send, n->Bsend, n->Ssend, n->Rsend};
        return f[mode](buf, (int)count, type, dst, tag, comm);
    }
    if (req == NULL) {
        __typeof__(PMPI_Send_c) *f[] = {n->Send_c, n->Bsend_c, n->Ssend_c,
                                        n->Rsend_c};
        return f[mode](buf, count, type, dst, tag, comm);
    }
    if (!large) {
        __typeof__(PMPI_Isend) *f[] = {n->Isend, n->Ibsend, n->Issend,
                                       n->Irsend};
        return f[mode](buf, (int)count, type, dst, tag, comm, req);
    }
    {
        __typeof__(PMPI_Isend_c) *f[] = {n->Isend_c, n->Ibsend_c,
                                         n->Issend_c, n->Irsend_c};
        return f[mode](buf, count, type, dst, tag, comm, req);
    }
}

/* Z bytes that start with the magic, to a peer that runs the protocol */
static umr_mpi_peer_t *umr_mpich_send_escapes(const void *buf, size_t count,
                                              MPI_Datatype type, int world)
{
    umr_mpi_peer_t *peer = umr_mpi_peer_proto(world);
    uint64_t head[2];

    if (peer == NULL) {
        return NULL;
    }
    umr_mpich_pack_head(buf, count, type, head, sizeof(head));
    return umr_mpi_wire_is_magic(head) ? peer : NULL;
}

/* the peer and the type's summary of a zero-copy send, or NULL (pass) */
static umr_mpi_peer_t *umr_mpich_send_choose(MPI_Datatype type, size_t count,
                                             int world,
                                             const umr_mpi_dtype_t **info_p)
{
    umr_mpi_type_slot_t *slot;
    umr_mpi_peer_t *peer;

    if (umr_mpi_types_passes((uintptr_t)type, count) ||
        (NULL == (peer = umr_mpi_peer_get(world))) ||
        (NULL == (slot = umr_mpi_types_lookup((uintptr_t)type))) ||
        (slot->info->layout == NULL) ||
        (umr_mpi_choose_send(slot, count, peer) != UMR_MPI_ZCOPY)) {
        return NULL;
    }
    *info_p = slot->info;
    return peer;
}

/* A buffered escape is sent from a packed copy: the user's send completes
 * at once. */
static int umr_mpich_send_copy(umr_mpich_req_t *r, const void *buf,
                               size_t count, MPI_Datatype type, size_t bytes)
{
    int pos = 0;

    r->copy = malloc(bytes);
    if ((r->copy == NULL) ||
        (PMPI_Pack(buf, (int)count, type, r->copy, (int)bytes, &pos,
                   r->comm) != MPI_SUCCESS)) {
        return MPI_ERR_NO_MEM;
    }
    r->type    = MPI_PACKED;
    r->x.buf   = r->copy;
    r->x.count = bytes;
    r->x.key   = (uintptr_t)MPI_PACKED;
    return MPI_SUCCESS;
}

int umr_mpich_send_take(const void *buf, MPI_Count count, MPI_Datatype type,
                        int dst, int tag, MPI_Comm comm, int mode,
                        MPI_Request *req_p, int *rc_p)
{
    const umr_mpi_dtype_t *info = NULL;
    umr_mpi_peer_t *peer        = NULL;
    umr_mpich_req_t *r;
    MPI_Count tsize;
    size_t bytes;
    int world, escape = 0, rc;

    if (!umr_mpich.p2p || (dst < 0) || (count <= 0)) {
        return 0;
    }
    umr_mpich_progress_if_wanted();
    if ((PMPI_Type_size_x(type, &tsize) != MPI_SUCCESS) || (tsize <= 0) ||
        ((bytes = (size_t)tsize * (size_t)count) < UMR_MPI_CTL_SIZE) ||
        ((world = umr_mpich_world_rank(comm, dst)) < 0) ||
        (world == umr_mpich.world_rank)) {
        return 0;
    }
    if ((bytes == UMR_MPI_CTL_SIZE) &&
        (NULL != (peer = umr_mpich_send_escapes(buf, count, type, world)))) {
        escape = 1;
        if ((mode != UMR_MPICH_MODE_BUFFERED) &&
            (umr_mpi_peer_get(world) != NULL)) {
            /* with a key, if the type has a layout */
            umr_mpich_send_choose(type, count, world, &info);
        }
    } else if ((bytes < umr_mpich.cfg.min_size) ||
               (mode == UMR_MPICH_MODE_BUFFERED) ||
               (NULL == (peer = umr_mpich_send_choose(type, count, world,
                                                      &info)))) {
        return 0;
    }

    r = umr_mpich_req_new(type, comm, dst, tag);
    if (r == NULL) {
        *rc_p = MPI_ERR_NO_MEM;
        return escape;   /* an escape never goes raw */
    }
    r->is_send  = 1;
    r->mode     = mode;
    r->x.buf    = (void*)buf;
    r->x.count  = count;
    r->x.key    = (uintptr_t)type;
    r->x.info   = info;
    r->x.length = bytes;
    r->x.rank   = world;
    r->x.ctx    = umr_mpich_comm_ctx(comm);
    r->x.tag    = tag;
    r->x.escape = escape;
    r->x.peer   = peer;
    if ((mode == UMR_MPICH_MODE_BUFFERED) &&
        ((*rc_p = umr_mpich_send_copy(r, buf, count, type, bytes)) !=
         MPI_SUCCESS)) {
        umr_mpich_req_destroy(r);
        return 1;
    }

    rc = umr_mpi_send_start(&r->x);
    if (rc != UMR_MPI_SENT) {
        umr_mpich_req_destroy(r);
        *rc_p = MPI_ERR_NO_MEM;
        return (rc == UMR_MPI_SEND_FAIL);   /* PASS: nothing sent */
    }
    if (mode == UMR_MPICH_MODE_BUFFERED) {
        /* the user's send is over: the copy goes on by itself */
        *rc_p = MPI_SUCCESS;
        if (req_p != NULL) {
            umr_mpich_req_t *done = umr_mpich_req_new(type, comm, dst, tag);
            *rc_p = (done != NULL) ? MPI_SUCCESS : MPI_ERR_NO_MEM;
            if (done != NULL) {
                done->is_send = 1;
                umr_mpich_req_finish(done);
                *rc_p = umr_mpich_req_start(done, req_p);
            }
        }
        r->released = 1;
        if (r->done) {
            umr_mpich_req_destroy(r);
        }
        return 1;
    }
    if (req_p != NULL) {
        *rc_p = umr_mpich_req_start(r, req_p);
        return 1;
    }
    *rc_p = umr_mpich_req_wait(r);
    umr_mpich_req_destroy(r);
    return 1;
}

int umr_mpich_send(const void *buf, MPI_Count count, MPI_Datatype type,
                   int dst, int tag, MPI_Comm comm, int mode, int large,
                   MPI_Request *req_p)
{
    int rc;

    if (umr_mpich_send_take(buf, count, type, dst, tag, comm, mode, req_p,
                            &rc)) {
        return umr_mpich_error(comm, rc);
    }
    return umr_mpich_send_pass(buf, count, type, dst, tag, comm, mode, large,
                               req_p);
}

/* ---- the entry points -------------------------------------------------- */

#define UMR_MPICH_SEND_CALLS(_name, _iname, _mode) \
    int MPI_##_name(const void *buf, int count, MPI_Datatype type, int dst, \
                    int tag, MPI_Comm comm) \
    { \
        return umr_mpich_send(buf, count, type, dst, tag, comm, _mode, 0, \
                              NULL); \
    } \
    int MPI_##_name##_c(const void *buf, MPI_Count count, MPI_Datatype type, \
                        int dst, int tag, MPI_Comm comm) \
    { \
        return umr_mpich_send(buf, count, type, dst, tag, comm, _mode, 1, \
                              NULL); \
    } \
    int MPI_##_iname(const void *buf, int count, MPI_Datatype type, int dst, \
                     int tag, MPI_Comm comm, MPI_Request *req) \
    { \
        return umr_mpich_send(buf, count, type, dst, tag, comm, _mode, 0, \
                              req); \
    } \
    int MPI_##_iname##_c(const void *buf, MPI_Count count, \
                         MPI_Datatype type, int dst, int tag, MPI_Comm comm, \
                         MPI_Request *req) \
    { \
        return umr_mpich_send(buf, count, type, dst, tag, comm, _mode, 1, \
                              req); \
    }

UMR_MPICH_SEND_CALLS(Send, Isend, UMR_MPICH_MODE_STANDARD)
UMR_MPICH_SEND_CALLS(Bsend, Ibsend, UMR_MPICH_MODE_BUFFERED)
UMR_MPICH_SEND_CALLS(Ssend, Issend, UMR_MPICH_MODE_SYNC)
UMR_MPICH_SEND_CALLS(Rsend, Irsend, UMR_MPICH_MODE_READY)
