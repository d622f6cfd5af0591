/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: what is handed back to the wrapped module. A put or get kept as
 * the user called it (mca_osc_umr_call_t, osc_umr_rma.h) is redone through
 * the wrapped module when osc/umr could not complete it: a zero-copy
 * operation that failed after it was posted, a packed one the target
 * refused. Without a request at the next synchronisation call
 * (mca_osc_umr_rma_complete); with one (MPI_Rput/MPI_Rget) from progress,
 * through the wrapped module's request form, whose completion completes
 * the user's request.
 */
#ifndef MCA_OSC_UMR_REDO_H_
#define MCA_OSC_UMR_REDO_H_

#include "osc_umr_rma.h"
#include "common_umr_keys.h"

#include <uct/api/uct.h>

BEGIN_C_DECLS

struct mca_osc_umr_key;

/* One zero-copy operation in flight; kept on failure to be redone. */
typedef struct mca_osc_umr_op {
    opal_list_item_t        super;     /* in w->failed */
    uct_completion_t        comp;
    mca_osc_umr_win_t       *w;
    struct mca_osc_umr_key  *key;
    mca_common_umr_region_t *region;
    mca_osc_umr_call_t      call;      /* as the user called it */
    ompi_request_t          *req;      /* MPI_Rput/MPI_Rget: the user's */
    ompi_request_t          *redo_req; /* the wrapped module's, when redone */
} mca_osc_umr_op_t;

/* A copy of `from` that holds its datatypes; drop releases them. */
void mca_osc_umr_call_keep(mca_osc_umr_call_t *c,
                           const mca_osc_umr_call_t *from);
void mca_osc_umr_call_drop(mca_osc_umr_call_t *c);
/* The call through the wrapped module (its request form when `req_p`). */
int mca_osc_umr_call_real(mca_osc_umr_win_t *w, const mca_osc_umr_call_t *c,
                          ompi_request_t **req_p);

/* A request of osc/umr's for MPI_Rput/MPI_Rget on `win`, active; done
 * completes it with `error`. */
ompi_request_t *mca_osc_umr_request_new(ompi_win_t *win);
void mca_osc_umr_request_done(ompi_request_t *req, int error);

/* An operation that carries the user's call (its datatypes held), for
 * zero-copy or to redo; free completes its request with `error`. */
mca_osc_umr_op_t *mca_osc_umr_op_new(mca_osc_umr_win_t *w,
                                     const mca_osc_umr_call_t *c,
                                     ompi_request_t *req);
void mca_osc_umr_op_free(mca_osc_umr_op_t *op, int error);
/* Redo `op` through the wrapped module (its request form when op->req). */
int mca_osc_umr_op_redo(mca_osc_umr_op_t *op);
/* `op` with a request, redone: 1 when done (freed), 0 not yet (`wait` 0). */
int mca_osc_umr_op_redo_step(mca_osc_umr_op_t *op, int wait);

/* From progress: the failed operations with requests, redone. */
void mca_osc_umr_redo_progress(mca_osc_umr_win_t *w);

/* An operation osc/umr could not complete (a packed one the target
 * refused): redone through the wrapped module as a failed zero-copy one is
 * (at the next synchronisation, or from progress with its request `req`). */
void mca_osc_umr_redo_later(mca_osc_umr_win_t *w, const mca_osc_umr_call_t *c,
                            ompi_request_t *req);

END_C_DECLS

#endif
