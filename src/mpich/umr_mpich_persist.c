/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: persistent requests: MPI_Send_init and the other modes,
 * MPI_Recv_init, MPI_Start(all), MPI_Request_free, their large-count forms,
 * and MPI_Wait and MPI_Test of every kind for them.
 *
 * A persistent request is MPICH's own, made for the user's arguments: while
 * it is inactive the user holds it, and a start that the binding does not
 * take is MPICH's start of it. A start the binding takes (a zero-copy send,
 * an escape, a receive it watches) is the binding's message, started like a
 * nonblocking one: the user's variable holds its generalized request while
 * it is active. MPICH frees that request in the MPI_Wait or MPI_Test of any
 * kind that completes it and sets the variable to MPI_REQUEST_NULL; the
 * binding's Wait and Test calls then put the persistent request back in the
 * variable (found by its address), inactive, as MPI says: MPI_Start again,
 * MPI_Request_free, a comparison with the handle MPI_Send_init gave all see
 * the persistent request.
 */
#include "umr_config.h"

#include "umr_mpich.h"
#include "umr_mpich_core.h"
#include "umr_mpich_recv.h"
#include "umr_mpich_req.h"
#include "umr_mpich_send.h"
#include "umr_mpich_types.h"

#include <ucs/datastruct/khash.h>

#include <stdint.h>
#include <stdlib.h>

typedef struct umr_mpich_persist {
    MPI_Request  handle;     /* MPICH's, for the user's arguments */
    MPI_Request  *slot;      /* the user's variable at the last start the
                                binding took */
    void         *buf;
    MPI_Count    count;
    MPI_Datatype type;       /* held (umr_mpich_types.h) */
    int          peer;
    int          tag;
    MPI_Comm     comm;
    int          mode;       /* UMR_MPICH_MODE_*, or -1: a receive */
} umr_mpich_persist_t;

KHASH_MAP_INIT_INT(umr_mpich_by_handle, umr_mpich_persist_t*)
KHASH_MAP_INIT_INT64(umr_mpich_by_slot, umr_mpich_persist_t*)

static khash_t(umr_mpich_by_handle) umr_mpich_persist_handles;
static khash_t(umr_mpich_by_slot)   umr_mpich_persist_slots;
static int umr_mpich_persist_count;
static int umr_mpich_persist_active;   /* with a slot: the binding's message
                                          in the user's variable */

/* the persistent request the user's variable `x` stands for, or NULL */
static umr_mpich_persist_t *umr_mpich_persist_find(MPI_Request *x)
{
    khiter_t k;

    if (umr_mpich_persist_count == 0) {
        return NULL;
    }
    if (*x != MPI_REQUEST_NULL) {
        k = kh_get(umr_mpich_by_handle, &umr_mpich_persist_handles, *x);
        if (k != kh_end(&umr_mpich_persist_handles)) {
            return kh_val(&umr_mpich_persist_handles, k);
        }
    }
    /* MPICH nulled the variable that held the binding's request, or the
     * variable holds that request now (active) */
    k = kh_get(umr_mpich_by_slot, &umr_mpich_persist_slots, (uintptr_t)x);
    if (k == kh_end(&umr_mpich_persist_slots)) {
        return NULL;
    }
    return kh_val(&umr_mpich_persist_slots, k);
}

static void umr_mpich_persist_slot(umr_mpich_persist_t *p, MPI_Request *x)
{
    khiter_t k;
    int ret;

    if (p->slot == x) {
        return;
    }
    umr_mpich_persist_active += (x != NULL) - (p->slot != NULL);
    if (p->slot != NULL) {
        k = kh_get(umr_mpich_by_slot, &umr_mpich_persist_slots,
                   (uintptr_t)p->slot);
        if ((k != kh_end(&umr_mpich_persist_slots)) &&
            (kh_val(&umr_mpich_persist_slots, k) == p)) {
            kh_del(umr_mpich_by_slot, &umr_mpich_persist_slots, k);
        }
    }
    p->slot = x;
    if (x != NULL) {
        k = kh_put(umr_mpich_by_slot, &umr_mpich_persist_slots, (uintptr_t)x,
                   &ret);
        if (ret >= 0) {
            kh_val(&umr_mpich_persist_slots, k) = p;
        }
    }
}

/* The user made MPICH's persistent request *req: the binding keeps its
 * arguments (`mode` -1: a receive). */
static int umr_mpich_persist_new(int rc, void *buf, MPI_Count count,
                                 MPI_Datatype type, int peer, int tag,
                                 MPI_Comm comm, int mode, MPI_Request *req)
{
    umr_mpich_persist_t *p;
    khiter_t k;
    int ret;

    if ((rc != MPI_SUCCESS) || !umr_mpich.p2p ||
        (NULL == (p = calloc(1, sizeof(*p))))) {
        return rc;
    }
    k = kh_put(umr_mpich_by_handle, &umr_mpich_persist_handles, *req, &ret);
    if (ret < 0) {
        free(p);
        return rc;   /* MPICH's alone */
    }
    umr_mpich_type_hold(type);
    *p = (umr_mpich_persist_t){.handle = *req, .buf = buf, .count = count,
                               .type = type, .peer = peer, .tag = tag,
                               .comm = comm, .mode = mode};
    kh_val(&umr_mpich_persist_handles, k) = p;
    ++umr_mpich_persist_count;
    return rc;
}

static int umr_mpich_persist_start(umr_mpich_persist_t *p, MPI_Request *x)
{
    MPI_Request req;
    int rc, taken;

    taken = (p->mode >= 0) ?
            umr_mpich_send_take(p->buf, p->count, p->type, p->peer, p->tag,
                                p->comm, p->mode, &req, &rc) :
            umr_mpich_recv_take(p->buf, p->count, p->type, p->peer, p->tag,
                                p->comm, &req, NULL, &rc);
    if (!taken) {
        umr_mpich.cnt.passthrough_sends += (p->mode >= 0);
        umr_mpich_persist_slot(p, NULL);
        *x = p->handle;
        return umr_mpich_next()->Start(x);
    }
    if (rc == MPI_SUCCESS) {
        *x = req;
        umr_mpich_persist_slot(p, x);
    }
    return umr_mpich_error(p->comm, rc);
}

int MPI_Start(MPI_Request *x)
{
    umr_mpich_persist_t *p;

    if (!umr_mpich.p2p || (NULL == (p = umr_mpich_persist_find(x)))) {
        return umr_mpich_next()->Start(x);
    }
    return umr_mpich_persist_start(p, x);
}

int MPI_Startall(int count, MPI_Request reqs[])
{
    int i, rc;

    if (!umr_mpich.p2p || (umr_mpich_persist_count == 0)) {
        return umr_mpich_next()->Startall(count, reqs);
    }
    for (i = 0; i < count; ++i) {
        rc = MPI_Start(&reqs[i]);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    return MPI_SUCCESS;
}

int MPI_Request_free(MPI_Request *x)
{
    umr_mpich_persist_t *p;
    khiter_t k;
    int rc;

    if (!umr_mpich.p2p || (NULL == (p = umr_mpich_persist_find(x)))) {
        return umr_mpich_next()->Request_free(x);
    }
    if ((*x != MPI_REQUEST_NULL) && (*x != p->handle)) {
        /* the binding's message in flight: it ends by itself */
        PMPI_Request_free(x);
    }
    umr_mpich_persist_slot(p, NULL);
    k = kh_get(umr_mpich_by_handle, &umr_mpich_persist_handles, p->handle);
    kh_del(umr_mpich_by_handle, &umr_mpich_persist_handles, k);
    --umr_mpich_persist_count;
    rc = umr_mpich_next()->Request_free(&p->handle);
    umr_mpich_type_release(p->type);
    free(p);
    *x = MPI_REQUEST_NULL;
    return rc;
}

/* ---- completion: the persistent request back in the user's variable ---- */

/* After a Wait or Test call on the user's variables `reqs[0..n)`: each one
 * MPICH set to MPI_REQUEST_NULL that held the binding's message for a
 * persistent request holds that request again. */
static int umr_mpich_persist_restore(int rc, int n, MPI_Request *reqs)
{
    umr_mpich_persist_t *p;
    khiter_t k;
    int i;

    for (i = 0; (i < n) && (umr_mpich_persist_active > 0); ++i) {
        if (reqs[i] != MPI_REQUEST_NULL) {
            continue;
        }
        k = kh_get(umr_mpich_by_slot, &umr_mpich_persist_slots,
                   (uintptr_t)&reqs[i]);
        if (k == kh_end(&umr_mpich_persist_slots)) {
            continue;
        }
        p       = kh_val(&umr_mpich_persist_slots, k);
        reqs[i] = p->handle;
        umr_mpich_persist_slot(p, NULL);
    }
    return rc;
}

/* the call, then the restore when a persistent request is active in ours */
#define UMR_MPICH_PERSIST_DONE(_n, _reqs, _call) \
    return (umr_mpich_persist_active == 0) ? (_call) : \
           umr_mpich_persist_restore((_call), (_n), (_reqs))

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    UMR_MPICH_PERSIST_DONE(1, req, umr_mpich_next()->Wait(req, status));
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    UMR_MPICH_PERSIST_DONE(1, req, umr_mpich_next()->Test(req, flag, status));
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
    UMR_MPICH_PERSIST_DONE(n, reqs,
                           umr_mpich_next()->Waitall(n, reqs, statuses));
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    UMR_MPICH_PERSIST_DONE(n, reqs,
                           umr_mpich_next()->Testall(n, reqs, flag,
                                                     statuses));
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
    UMR_MPICH_PERSIST_DONE(n, reqs,
                           umr_mpich_next()->Waitany(n, reqs, index, status));
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag,
                MPI_Status *status)
{
    UMR_MPICH_PERSIST_DONE(n, reqs,
                           umr_mpich_next()->Testany(n, reqs, index, flag,
                                                     status));
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    UMR_MPICH_PERSIST_DONE(n, reqs,
                           umr_mpich_next()->Waitsome(n, reqs, outcount,
                                                      indices, statuses));
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    UMR_MPICH_PERSIST_DONE(n, reqs,
                           umr_mpich_next()->Testsome(n, reqs, outcount,
                                                      indices, statuses));
}

/* ---- the persistent requests' makers ---------------------------------- */

#define UMR_MPICH_INIT_CALLS(_name, _mode) \
    int MPI_##_name(const void *buf, int count, MPI_Datatype type, int dst, \
                    int tag, MPI_Comm comm, MPI_Request *req) \
    { \
        return umr_mpich_persist_new( \
                umr_mpich_next()->_name(buf, count, type, dst, tag, comm, \
                                        req), \
                (void*)buf, count, type, dst, tag, comm, _mode, req); \
    } \
    int MPI_##_name##_c(const void *buf, MPI_Count count, MPI_Datatype type, \
                        int dst, int tag, MPI_Comm comm, MPI_Request *req) \
    { \
        return umr_mpich_persist_new( \
                umr_mpich_next()->_name##_c(buf, count, type, dst, tag, comm, \
                                            req), \
                (void*)buf, count, type, dst, tag, comm, _mode, req); \
    }

UMR_MPICH_INIT_CALLS(Send_init, UMR_MPICH_MODE_STANDARD)
UMR_MPICH_INIT_CALLS(Bsend_init, UMR_MPICH_MODE_BUFFERED)
UMR_MPICH_INIT_CALLS(Ssend_init, UMR_MPICH_MODE_SYNC)
UMR_MPICH_INIT_CALLS(Rsend_init, UMR_MPICH_MODE_READY)

int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int src, int tag,
                  MPI_Comm comm, MPI_Request *req)
{
    return umr_mpich_persist_new(umr_mpich_next()->Recv_init(buf, count, type,
                                                             src, tag, comm,
                                                             req),
                                 buf, count, type, src, tag, comm, -1, req);
}

int MPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype type, int src,
                    int tag, MPI_Comm comm, MPI_Request *req)
{
    return umr_mpich_persist_new(umr_mpich_next()->Recv_init_c(buf, count,
                                                               type, src, tag,
                                                               comm, req),
                                 buf, count, type, src, tag, comm, -1, req);
}

/* MPI_Cancel: MPICH's, for its requests and the binding's alike (the
 * generalized request's cancel function) */
int MPI_Cancel(MPI_Request *req)
{
    return umr_mpich_next()->Cancel(req);
}

/* MPICH's MPI_Request_get_status calls no poll function of a generalized
 * request: the binding's progress runs first. */
int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *status)
{
    if (umr_mpich.p2p) {
        umr_mpich_progress();
    }
    return umr_mpich_next()->Request_get_status(req, flag, status);
}
