/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: the state of a window osc/umr is in front of (osc_umr_module.h
 * puts it there): the wrapped module's function table, the private
 * communicator of the key protocol, the window memory's registrations (made
 * at creation, on every rail), the keys either side holds and the zero-copy
 * operations in flight per target. Our entry points find it by the
 * ompi_win_t (a hash table behind a one-entry front).
 */
#ifndef MCA_OSC_UMR_WIN_H_
#define MCA_OSC_UMR_WIN_H_

#include "osc_umr.h"
#include "umr_mpi_keys.h"
#include "umr_mpi_rail.h"
#include "umr_mpi_rma.h"
#include "osc_umr_wire.h"

#include <ompi_config.h>
#include <ompi/communicator/communicator.h>
#include <ompi/datatype/ompi_datatype.h>
#include <ompi/request/request.h>
#include <ompi/win/win.h>
#include <opal/class/opal_hash_table.h>
#include <opal/class/opal_list.h>

BEGIN_C_DECLS

/* A created window's extent at one target (its MPI_Win_create size and
 * displacement unit): what an origin checks its target range against. */
typedef struct mca_osc_umr_extent {
    uint64_t size;
    int64_t  disp_unit;
} mca_osc_umr_extent_t;

typedef struct mca_osc_umr_win {
    opal_list_item_t        super;      /* in the list of wrapped windows */
    ompi_win_t              *win;
    ompi_osc_base_module_t  real;       /* the wrapped module's table */
    ompi_communicator_t     *comm;      /* private duplicate: key protocol */
    int                     rank, size;
    int                     dynamic;    /* MPI_Win_create_dynamic */
    int                     dynamic_broken; /* no invalidation receive:
                                               keys never used */
    int                     closing;    /* being freed: progress skips it */

    /* target side */
    umr_mpi_rma_mem_t       mem;        /* the window's memory, registered
                                           while it is the window's, and
                                           the keys given over it */
    ompi_request_t          *kreq_req;  /* receive of the next key request */
    mca_osc_umr_kreq_t      kreq;
    int                     *kreq_taken;     /* per origin: requests taken */
    int                     *kreq_answered;  /* per origin: answers sent */
    mca_osc_umr_kans_t      *kans_spare;     /* per origin: an answer sent
                                                when none can be allocated */
    ompi_request_t          **kans_spare_req; /* its send, or NULL */
    uint8_t                 *tkey_given;     /* per origin, since the
                                                last detach */
    opal_list_t             treqs;      /* requests waiting (osc_umr_kreq.h) */
    uint32_t                *tq_taken;       /* per origin: requests taken */
    uint32_t                *tq_answered;    /* ... and answered */
    uint8_t                 *kdesc_broken;   /* per origin: descriptions
                                                apart refused */
    int                     kreq_retired;    /* the request receive could
                                                not be posted again */
    int                     comm_kept;  /* requests left unmatched in
                                           comm: never freed (a later
                                           communicator with its context
                                           id would take them) */

    /* origin side */
    mca_osc_umr_extent_t    *extents;   /* created windows: per target
                                           (osc_umr_rma.h's range check) */
    umr_mpi_rma_kcache_t    kc;         /* keys (osc_umr_key.h) */
    int                     kpending;   /* ... whose answer is awaited */
    opal_list_t             failed;     /* operations to redo (osc_umr_rma.h) */
    ompi_request_t          *inval_req; /* dynamic: next invalidation */
    mca_osc_umr_inval_t     inval;
    int                     *kreq_sent;      /* per target */
    int                     *kans_taken;     /* per target: answers taken */
    int                     osc_costs;  /* the wrapped component's costs
                                           (umr_mpi_choice_osc) */
    uint64_t                *inflight;       /* zero-copy ops per target */
    uint64_t                inflight_total;

    /* the packed path, both sides (osc_umr_packed_priv.h) */
    struct mca_osc_umr_packed *pk;
} mca_osc_umr_win_t;

/* A window's state: the window memory registered on every rail (a
 * created window's; a dynamic one's at each attach), the per-rank arrays;
 * NULL on failure (nothing kept). */
mca_osc_umr_win_t *mca_osc_umr_win_new(ompi_win_t *win, void *base,
                                       size_t size, ptrdiff_t disp_unit,
                                       int dynamic,
                                       ompi_communicator_t *comm);
/* Learn every rank's address (the core's peers) and, for created windows,
 * its window size and displacement unit into w->extents (collective over
 * `comm`). */
int mca_osc_umr_win_extents(mca_osc_umr_win_t *w, ompi_communicator_t *comm);
/* Release what mca_osc_umr_win_new made, and the private communicator. */
void mca_osc_umr_win_destroy(mca_osc_umr_win_t *w);

/* Post the window's standing receive of `tag` from any rank into `buf`
 * (`len` bytes): OMPI_SUCCESS, or the PML's error with *req_p NULL. */
int mca_osc_umr_win_listen(mca_osc_umr_win_t *w, void *buf, size_t len,
                           int tag, ompi_request_t **req_p);

/* The wrapped windows, found by their ompi_win_t (add/remove), and in a
 * list (progress walks it). */
void mca_osc_umr_win_add(mca_osc_umr_win_t *w);
void mca_osc_umr_win_remove(mca_osc_umr_win_t *w);
extern opal_list_t mca_osc_umr_win_list;

/* The state of a wrapped window (never NULL for a window our entry points
 * are called for). */
mca_osc_umr_win_t *mca_osc_umr_win_lookup(ompi_win_t *win);

END_C_DECLS

#endif
