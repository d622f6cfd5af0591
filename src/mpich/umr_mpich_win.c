/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: windows (umr_mpich_win.h): MPI_Win_create,
 * MPI_Win_allocate, MPI_Win_create_dynamic with MPI_Win_attach and
 * MPI_Win_detach, MPI_Win_free, and the key protocol's channel.
 */
#include "umr_config.h"

#include "umr_mpich_win.h"
#include "umr_mpich.h"
#include "umr_mpich_core.h"

#include "umr_mpi_choice.h"
#include "umr_mpi_peer.h"

#include <ucs/datastruct/khash.h>

#include <stdlib.h>

/* the two kinds' tags on a window's private communicator */
#define UMR_MPICH_WIN_TAG(_kind) (1 + (_kind))

KHASH_MAP_INIT_INT(umr_mpich_wins, umr_mpich_win_t*)
static khash_t(umr_mpich_wins) umr_mpich_wins;

static int umr_mpich_win_isend(void *ctx, int rank, int kind, const void *buf,
                               size_t len, umr_mpi_comp_t *comp)
{
    umr_mpich_win_t *uw = ctx;

    return umr_mpich_msg_isend(buf, len, rank, UMR_MPICH_WIN_TAG(kind),
                               uw->comm, comp);
}

static int umr_mpich_win_irecv(void *ctx, int rank, int kind, void *buf,
                               size_t len, umr_mpi_comp_t *comp,
                               umr_mpi_req_h *req_p)
{
    umr_mpich_win_t *uw = ctx;

    return umr_mpich_msg_irecv(buf, len, (rank == UMR_MPI_RMA_ANY) ?
                               MPI_ANY_SOURCE : rank,
                               UMR_MPICH_WIN_TAG(kind), uw->comm, comp,
                               req_p);
}

static const umr_mpi_rma_ops_t umr_mpich_win_ops = {
    .isend  = umr_mpich_win_isend,
    .irecv  = umr_mpich_win_irecv,
    .cancel = umr_mpich_msg_cancel
};

umr_mpich_win_t *umr_mpich_win_find(MPI_Win win)
{
    khiter_t k;

    if (kh_size(&umr_mpich_wins) == 0) {
        return NULL;
    }
    k = kh_get(umr_mpich_wins, &umr_mpich_wins, (int)win);
    return (k == kh_end(&umr_mpich_wins)) ? NULL : kh_val(&umr_mpich_wins, k);
}

/* The world ranks of `comm`, when each runs the core (published its
 * address: every one of them takes this path); NULL otherwise. */
static int *umr_mpich_win_members(MPI_Comm comm, int size)
{
    int *ranks = malloc(2 * (size_t)size * sizeof(int));
    MPI_Group group, world;
    umr_mpi_peer_t *peer;
    int i, all = (ranks != NULL);

    if (!all) {
        return NULL;
    }
    PMPI_Comm_group(comm, &group);
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    for (i = 0; i < size; ++i) {
        ranks[size + i] = i;
    }
    PMPI_Group_translate_ranks(group, size, ranks + size, world, ranks);
    PMPI_Group_free(&group);
    PMPI_Group_free(&world);
    for (i = 0; all && (i < size); ++i) {
        if (ranks[i] == umr_mpich.world_rank) {
            continue;
        }
        peer = (ranks[i] < 0) ? NULL :
               (umr_mpi_peer_tab[ranks[i]] != NULL) ?
               umr_mpi_peer_tab[ranks[i]] : umr_mpi_peer_resolve(ranks[i]);
        all  = (peer != NULL) && (peer->state != UMR_MPI_PEER_NONE);
    }
    if (!all) {
        free(ranks);
        return NULL;
    }
    return ranks;
}

static void umr_mpich_win_open(MPI_Win win, void *base, MPI_Aint size,
                               int disp_unit, int dynamic, MPI_Comm comm)
{
    umr_mpich_win_t *uw = NULL;
    int rank, nranks, ok, all_ok = 0, ret;
    int *world;
    khiter_t k = 0;

    if (!umr_mpich.active || (comm == MPI_COMM_NULL)) {
        return;
    }
    PMPI_Comm_size(comm, &nranks);
    PMPI_Comm_rank(comm, &rank);
    world = umr_mpich_win_members(comm, nranks);
    if (world == NULL) {
        UMR_MPI_RMA_VERBOSE(5, "window of %d ranks: not every rank runs the "
                            "library: MPICH's alone", nranks);
        return;   /* the same decision on every rank: no collective */
    }
    ok = ((uw = calloc(1, sizeof(*uw))) != NULL);
    if (ok && (PMPI_Comm_dup(comm, &uw->comm) != MPI_SUCCESS)) {
        uw->comm = MPI_COMM_NULL;
        ok       = 0;
    }
    if (ok) {
        PMPI_Comm_set_errhandler(uw->comm, MPI_ERRORS_RETURN);
        uw->win = win;
        ucs_list_head_init(&uw->redo);
        /* no packed path here: blocks up to UMR_MPICH_RMA_MIN_BLOCK go to
         * MPICH (its active messages beat a transfer per block) */
        uw->core = umr_mpi_rma_win_open(&umr_mpich_win_ops, uw, base,
                                        (size_t)size, disp_unit, dynamic,
                                        rank, nranks, world,
                                        umr_mpi_choice_osc("mpich", 0, 1,
                                            umr_mpich.cfg.rma_min_block));
        ok = (uw->core != NULL);
    }
    free(world);
    if (ok) {
        k  = kh_put(umr_mpich_wins, &umr_mpich_wins, (int)win, &ret);
        ok = (ret >= 0);
        if (ok) {
            kh_val(&umr_mpich_wins, k) = uw;
        }
    }
    if ((PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm) ==
         MPI_SUCCESS) && all_ok) {
        UMR_MPI_RMA_VERBOSE(5, "window of %d ranks, %ld bytes here: put and "
                            "get may go zero-copy", nranks, (long)size);
        return;
    }
    /* no request was sent on it yet */
    if (uw != NULL) {
        if (ok) {
            kh_del(umr_mpich_wins, &umr_mpich_wins, k);
        }
        if (uw->core != NULL) {
            umr_mpi_rma_win_close(uw->core, NULL);
        }
        if (uw->comm != MPI_COMM_NULL) {
            PMPI_Comm_free(&uw->comm);
        }
        free(uw);
    }
}

/* Collective: every request and answer on the way taken, then freed. */
static void umr_mpich_win_close(umr_mpich_win_t *uw)
{
    umr_mpi_rma_win_t *w = uw->core;
    int *here            = malloc(2 * (size_t)w->size * sizeof(int));
    int ok;

    umr_mpich_win_complete(uw, -1);
    ok = (here != NULL);
    ok = ok && (PMPI_Alltoall(umr_mpi_rma_sent(w), 1, MPI_INT, here, 1,
                              MPI_INT, uw->comm) == MPI_SUCCESS);
    umr_mpi_rma_win_settle(w, ok ? here : NULL);
    ok = ok && (PMPI_Alltoall(umr_mpi_rma_answered(w), 1, MPI_INT,
                              here + w->size, 1, MPI_INT, uw->comm) ==
                MPI_SUCCESS);
    umr_mpi_rma_win_close(w, ok ? here + w->size : NULL);
    free(here);
    PMPI_Comm_free(&uw->comm);
    kh_del(umr_mpich_wins, &umr_mpich_wins,
           kh_get(umr_mpich_wins, &umr_mpich_wins, (int)uw->win));
    free(uw);
}

void umr_mpich_wins_stop(void)
{
    umr_mpich_win_t *uw;

    /* windows the program did not free: each on its own (not collective:
     * the others may have freed theirs), its receives cancelled */
    kh_foreach_value(&umr_mpich_wins, uw, {
        umr_mpich_win_complete(uw, -1);
        umr_mpi_rma_win_close(uw->core, NULL);
        PMPI_Comm_free(&uw->comm);
        free(uw);
    });
    kh_destroy_inplace(umr_mpich_wins, &umr_mpich_wins);
    kh_init_inplace(umr_mpich_wins, &umr_mpich_wins);
}

void umr_mpich_win_redo_add(umr_mpich_win_t *uw, ucs_list_link_t *op)
{
    ucs_list_add_tail(&uw->redo, op);
}

void umr_mpich_win_complete(umr_mpich_win_t *uw, int target)
{
    umr_mpi_rma_wait(uw->core, target);
    while (!ucs_list_is_empty(&uw->redo)) {
        umr_mpich_rma_redo(uw->redo.next);
    }
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                   MPI_Comm comm, MPI_Win *win)
{
    int rc = umr_mpich_next()->Win_create(base, size, disp_unit, info, comm,
                                          win);

    if (rc == MPI_SUCCESS) {
        umr_mpich_win_open(*win, base, size, disp_unit, 0, comm);
    }
    return rc;
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info,
                     MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    int rc = umr_mpich_next()->Win_allocate(size, disp_unit, info, comm,
                                            baseptr, win);

    if (rc == MPI_SUCCESS) {
        umr_mpich_win_open(*win, *(void**)baseptr, size, disp_unit, 0, comm);
    }
    return rc;
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    int rc = umr_mpich_next()->Win_create_dynamic(info, comm, win);

    if (rc == MPI_SUCCESS) {
        /* displacements are addresses (umr_mpi_rma.h) */
        umr_mpich_win_open(*win, NULL, 0, 1, 1, comm);
    }
    return rc;
}

int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    int rc = umr_mpich_next()->Win_attach(win, base, size);
    umr_mpich_win_t *uw;

    if ((rc == MPI_SUCCESS) && (size > 0) &&
        (NULL != (uw = umr_mpich_win_find(win))) && uw->core->dynamic &&
        (umr_mpi_rma_attach(uw->core, base, (size_t)size) != 0)) {
        UMR_MPI_RMA_VERBOSE(1, "attach of %ld bytes not recorded: "
                            "operations on them go to MPICH", (long)size);
    }
    return rc;
}

int MPI_Win_detach(MPI_Win win, const void *base)
{
    umr_mpich_win_t *uw = umr_mpich_win_find(win);

    if ((uw != NULL) && uw->core->dynamic) {
        /* this rank's operations first, then every origin's keys over it */
        umr_mpich_win_complete(uw, -1);
        umr_mpi_rma_detach(uw->core, (void*)base);
    }
    return umr_mpich_next()->Win_detach(win, base);
}

int MPI_Win_free(MPI_Win *win)
{
    umr_mpich_win_t *uw = umr_mpich_win_find(*win);

    if (uw != NULL) {
        umr_mpich_win_close(uw);
    }
    return umr_mpich_next()->Win_free(win);
}
