/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: MPI_Put, MPI_Get, MPI_Rput, MPI_Rget on the binding's
 * windows (umr_mpich_win.h), and the calls that end an epoch or flush,
 * which complete the binding's operations first.
 *
 * An operation the core takes (umr_mpi_rma.h: a ready target key, the
 * choice) moves zero-copy; every other goes to MPICH untouched (the first
 * use of a target access, whose key is asked for then; accumulate
 * operations, which are MPICH's always). Its datatypes are held until it
 * ends (umr_mpich_types.h): one that fails in flight is done again through
 * MPICH, with the same arguments, before the epoch ends. MPI_Rput and
 * MPI_Rget wait for their zero-copy operation before they return a
 * completed request.
 */
#include "umr_config.h"

#include "umr_mpich.h"
#include "umr_mpich_core.h"
#include "umr_mpich_types.h"
#include "umr_mpich_win.h"

#include "umr_mpi_choice.h"
#include "umr_mpi_dtype.h"

#include <stdlib.h>

typedef struct umr_mpich_rma_op {
    umr_mpi_rma_op_t core;
    ucs_list_link_t  list;         /* in its window's redo while failed */
    umr_mpich_win_t  *uw;
    int              is_put;
    void             *origin_addr;
    int              origin_count;
    MPI_Datatype     origin_type;
    int              target;
    MPI_Aint         target_disp;
    int              target_count;
    MPI_Datatype     target_type;
    int              kept;         /* an Rput/Rget's: its call takes it */
    int              failed;
} umr_mpich_rma_op_t;

static void umr_mpich_rma_op_free(umr_mpich_rma_op_t *op)
{
    umr_mpich_type_release(op->origin_type);
    umr_mpich_type_release(op->target_type);
    free(op);
}

static void umr_mpich_rma_done(umr_mpi_rma_op_t *core, int ok)
{
    umr_mpich_rma_op_t *op = ucs_container_of(core, umr_mpich_rma_op_t,
                                              core);

    op->failed = !ok;
    if (op->kept) {
        return;
    } else if (ok) {
        umr_mpich_rma_op_free(op);
    } else {
        umr_mpich_win_redo_add(op->uw, &op->list);
    }
}

int umr_mpich_rma_redo(ucs_list_link_t *link, MPI_Request *req_p)
{
    umr_mpich_rma_op_t *op = ucs_container_of(link, umr_mpich_rma_op_t, list);
    const umr_mpich_next_t *n = umr_mpich_next();
    MPI_Win win = op->uw->win;
    int rc;

    if (req_p != NULL) {
        rc = op->is_put ?
             n->Rput(op->origin_addr, op->origin_count, op->origin_type,
                     op->target, op->target_disp, op->target_count,
                     op->target_type, win, req_p) :
             n->Rget(op->origin_addr, op->origin_count, op->origin_type,
                     op->target, op->target_disp, op->target_count,
                     op->target_type, win, req_p);
    } else {
        rc = op->is_put ?
             n->Put(op->origin_addr, op->origin_count, op->origin_type,
                    op->target, op->target_disp, op->target_count,
                    op->target_type, win) :
             n->Get(op->origin_addr, op->origin_count, op->origin_type,
                    op->target, op->target_disp, op->target_count,
                    op->target_type, win);
    }
    umr_mpich_rma_op_free(op);
    return rc;
}

/* ---- a completed request for MPI_Rput / MPI_Rget ---------------------- */

static int umr_mpich_rma_query(void *extra, MPI_Status *status)
{
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG    = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int umr_mpich_rma_gfree(void *extra)
{
    return MPI_SUCCESS;
}

static int umr_mpich_rma_gcancel(void *extra, int complete)
{
    return MPI_SUCCESS;
}

/* ---- put and get ------------------------------------------------------ */

/* 1: taken (zero-copy; *req_p, when asked, a request of the binding's or,
 * after a failure, MPICH's), 0: the caller hands it to MPICH. */
static int umr_mpich_rma_try(int is_put, void *origin_addr, int origin_count,
                             MPI_Datatype origin_type, int target,
                             MPI_Aint target_disp, int target_count,
                             MPI_Datatype target_type, MPI_Win win,
                             MPI_Request *req_p, int *rc_p)
{
    umr_mpich_win_t *uw = umr_mpich_win_find(win);
    umr_mpi_rma_call_t c;
    umr_mpi_rma_key_t *key;
    umr_mpich_rma_op_t *op;

    if ((uw == NULL) || !umr_mpich.active || (origin_count <= 0) ||
        (target_count <= 0) ||
        !pthread_equal(pthread_self(), umr_mpich.thread)) {
        return 0;
    }
    c.is_put      = is_put;
    c.target      = target;
    c.origin_addr = origin_addr;
    c.okey        = (uintptr_t)origin_type;
    c.oinfo       = umr_mpi_dtype_get(origin_type);
    c.ocount      = (size_t)origin_count;
    c.disp        = target_disp;
    c.tkey        = (uintptr_t)target_type;
    c.tinfo       = umr_mpi_dtype_get(target_type);
    c.tcount      = (size_t)target_count;
    c.mode        = umr_mpich.cfg.zcopy;
    key = umr_mpi_rma_ready(uw->core, &c);
    if ((key == NULL) || (NULL == (op = calloc(1, sizeof(*op))))) {
        return 0;
    }
    op->core.done    = umr_mpich_rma_done;
    op->uw           = uw;
    op->is_put       = is_put;
    op->origin_addr  = origin_addr;
    op->origin_count = origin_count;
    op->origin_type  = origin_type;
    op->target       = target;
    op->target_disp  = target_disp;
    op->target_count = target_count;
    op->target_type  = target_type;
    op->kept         = (req_p != NULL);
    /* held before the start: its completion may run inside it */
    umr_mpich_type_hold(origin_type);
    umr_mpich_type_hold(target_type);
    if (!umr_mpi_rma_post(uw->core, &op->core, &c, key)) {
        umr_mpich_rma_op_free(op);
        return 0;
    }
    *rc_p = MPI_SUCCESS;
    if (req_p == NULL) {
        return 1;
    }
    /* the request completes with the operation: waited for here (its
     * failure, if any, done again as MPICH's Rput/Rget, whose request the
     * user gets) */
    umr_mpi_rma_wait(uw->core, target);
    if (op->failed) {
        *rc_p = umr_mpich_rma_redo(&op->list, req_p);
        return 1;
    }
    umr_mpich_rma_op_free(op);
    *rc_p = PMPI_Grequest_start(umr_mpich_rma_query, umr_mpich_rma_gfree,
                                umr_mpich_rma_gcancel, NULL, req_p);
    if (*rc_p == MPI_SUCCESS) {
        PMPI_Grequest_complete(*req_p);
    }
    return 1;
}

int MPI_Put(const void *origin_addr, int origin_count,
            MPI_Datatype origin_type, int target, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_type, MPI_Win win)
{
    int rc;

    if (umr_mpich_rma_try(1, (void*)origin_addr, origin_count, origin_type,
                          target, target_disp, target_count, target_type,
                          win, NULL, &rc)) {
        return rc;
    }
    return umr_mpich_next()->Put(origin_addr, origin_count, origin_type,
                                 target, target_disp, target_count,
                                 target_type, win);
}

int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_type,
            int target, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_type, MPI_Win win)
{
    int rc;

    if (umr_mpich_rma_try(0, origin_addr, origin_count, origin_type, target,
                          target_disp, target_count, target_type, win, NULL,
                          &rc)) {
        return rc;
    }
    return umr_mpich_next()->Get(origin_addr, origin_count, origin_type,
                                 target, target_disp, target_count,
                                 target_type, win);
}

int MPI_Rput(const void *origin_addr, int origin_count,
             MPI_Datatype origin_type, int target, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_type, MPI_Win win,
             MPI_Request *request)
{
    int rc;

    if (umr_mpich_rma_try(1, (void*)origin_addr, origin_count, origin_type,
                          target, target_disp, target_count, target_type,
                          win, request, &rc)) {
        return rc;
    }
    return umr_mpich_next()->Rput(origin_addr, origin_count, origin_type,
                                  target, target_disp, target_count,
                                  target_type, win, request);
}

int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_type,
             int target, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_type, MPI_Win win, MPI_Request *request)
{
    int rc;

    if (umr_mpich_rma_try(0, origin_addr, origin_count, origin_type, target,
                          target_disp, target_count, target_type, win,
                          request, &rc)) {
        return rc;
    }
    return umr_mpich_next()->Rget(origin_addr, origin_count, origin_type,
                                  target, target_disp, target_count,
                                  target_type, win, request);
}

/* ---- the calls that end an epoch or flush ------------------------------ */

static void umr_mpich_rma_complete(MPI_Win win, int target)
{
    umr_mpich_win_t *uw = umr_mpich_win_find(win);

    if (uw != NULL) {
        umr_mpich_win_complete(uw, target);
    }
}

int MPI_Win_fence(int assert, MPI_Win win)
{
    umr_mpich_rma_complete(win, -1);
    return umr_mpich_next()->Win_fence(assert, win);
}

int MPI_Win_unlock(int rank, MPI_Win win)
{
    umr_mpich_rma_complete(win, rank);
    return umr_mpich_next()->Win_unlock(rank, win);
}

int MPI_Win_unlock_all(MPI_Win win)
{
    umr_mpich_rma_complete(win, -1);
    return umr_mpich_next()->Win_unlock_all(win);
}

int MPI_Win_flush(int rank, MPI_Win win)
{
    umr_mpich_rma_complete(win, rank);
    return umr_mpich_next()->Win_flush(rank, win);
}

int MPI_Win_flush_all(MPI_Win win)
{
    umr_mpich_rma_complete(win, -1);
    return umr_mpich_next()->Win_flush_all(win);
}

int MPI_Win_flush_local(int rank, MPI_Win win)
{
    umr_mpich_rma_complete(win, rank);
    return umr_mpich_next()->Win_flush_local(rank, win);
}

int MPI_Win_flush_local_all(MPI_Win win)
{
    umr_mpich_rma_complete(win, -1);
    return umr_mpich_next()->Win_flush_local_all(win);
}

int MPI_Win_complete(MPI_Win win)
{
    umr_mpich_rma_complete(win, -1);
    return umr_mpich_next()->Win_complete(win);
}
