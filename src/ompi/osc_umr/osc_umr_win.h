/**
 * osc/umr: a window with osc/umr in front of the module that created it.
 *
 * The wrapped component creates the window and its module; osc/umr saves
 * that module's function table (`real`) and writes its own put/get and
 * synchronisation entry points into the module in place (the module is the
 * wrapped component's per-window memory; its other slots stay its own). Our
 * entry points find the window's state by the ompi_win_t (a hash table
 * behind a one-entry front).
 *
 * Only MPI_Win_create windows are wrapped: the target registers the window
 * memory at creation on every rail. Allocated and shared windows are mapped
 * by the wrapped module and copied with loads and stores (nothing to win);
 * dynamic windows are for a later step. Wrapping is decided by all ranks
 * together (an allreduce on the window's communicator), then the
 * communicator is duplicated for the key protocol (osc_umr_wire.h).
 */
#ifndef MCA_OSC_UMR_WIN_H_
#define MCA_OSC_UMR_WIN_H_

#include "osc_umr.h"
#include "common_umr_keys.h"
#include "common_umr_rail.h"
#include "osc_umr_wire.h"

#include <ompi_config.h>
#include <ompi/communicator/communicator.h>
#include <ompi/datatype/ompi_datatype.h>
#include <ompi/request/request.h>
#include <ompi/win/win.h>
#include <opal/class/opal_hash_table.h>
#include <opal/class/opal_list.h>

BEGIN_C_DECLS

/* A layout key the target made for an origin; kept until the window is
 * freed (the origin caches its rkey). */
typedef struct mca_osc_umr_tkey {
    mca_common_umr_region_t *region;
    mca_common_umr_lkey_t   *lkey;
} mca_osc_umr_tkey_t;

typedef struct mca_osc_umr_win {
    opal_list_item_t        super;      /* in the list of wrapped windows */
    ompi_win_t              *win;
    ompi_osc_base_module_t  real;       /* the wrapped module's table */
    ompi_communicator_t     *comm;      /* private duplicate: key protocol */
    int                     rank, size;
    char                    *base;
    size_t                  len;
    ptrdiff_t               disp_unit;

    /* target side */
    mca_common_umr_region_t *regions[MCA_COMMON_UMR_MAX_RAILS];
    ompi_request_t          *kreq_req;  /* receive of the next key request */
    mca_osc_umr_kreq_t      kreq;
    mca_osc_umr_tkey_t      *tkeys;
    size_t                  ntkeys, tkeys_cap;
    int                     *kreq_answered;  /* per origin */

    /* origin side */
    opal_hash_table_t       keys;       /* osc_umr_key.h */
    opal_list_t             pending;    /* keys whose answer is awaited */
    opal_list_t             failed;     /* operations to redo (osc_umr_rma.h) */
    int                     *kreq_sent;      /* per target */
    uint64_t                *inflight;       /* zero-copy ops per target */
    uint64_t                inflight_total;
} mca_osc_umr_win_t;

/* Put osc/umr in front of the module the wrapped component just made for
 * `win`; on any failure leave it unchanged (one verbose line). Collective
 * over `comm`. */
int mca_osc_umr_win_wrap(ompi_win_t *win, void *base, size_t size,
                         ptrdiff_t disp_unit, ompi_communicator_t *comm,
                         int flavor);

/* The state of a wrapped window (never NULL for a window our entry points
 * are called for). */
mca_osc_umr_win_t *mca_osc_umr_win_lookup(ompi_win_t *win);

/* Undo the wrapping and release everything; the caller then frees the
 * window with w->real.osc_free (osc_umr_sync.c). */
void mca_osc_umr_win_release(mca_osc_umr_win_t *w);

/* The progress function (registered while a wrapped window exists): key
 * requests and answers (osc_umr_key.h), the transport's completions. */
int mca_osc_umr_progress(void);

END_C_DECLS

#endif
