/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: target layout keys.
 *
 * Origin: the key of (target, displacement, target layout, count) is looked
 * up in the window's cache (the core's, umr_mpi_rma_kcache_*); on a miss it is asked for (one small message,
 * osc_umr_wire.h) and the operation goes through the wrapped module: the
 * first use never waits. The answer is taken from progress; a refused key
 * stays in the cache as refused (those operations always pass through).
 * Entries live until the window is freed.
 *
 * Target: one receive of key requests is posted per window; from progress,
 * each request is answered with the packed rkey of a layout key over the
 * window memory (the core's, umr_mpi_rma_mem.h), or with an error status
 * (osc_umr_kreq.h).
 */
#ifndef MCA_OSC_UMR_KEY_H_
#define MCA_OSC_UMR_KEY_H_

#include "osc_umr_win.h"
#include "umr_mpi_peer.h"
#include "umr_mpi_rma.h"

#include <ompi/datatype/ompi_datatype.h>

#include <umr_layout.h>

BEGIN_C_DECLS

/* An origin's key: the core's entry (umr_mpi_rma.h: the window's cache,
 * its answer in k.ans, k.ans.handle the target's packed destination) and
 * the receive of its answer. */
typedef struct mca_osc_umr_key {
    umr_mpi_rma_key_t k;
    ompi_request_t    *ans_req;    /* while asked for */
} mca_osc_umr_key_t;

/* The ready key for this target access, or NULL (asked for now if never
 * seen; pending; refused): the caller then uses the wrapped module. */
mca_osc_umr_key_t *mca_osc_umr_key_get(mca_osc_umr_win_t *w,
                                       umr_mpi_peer_t *peer,
                                       int target, int64_t disp,
                                       ompi_datatype_t *dt,
                                       const umr_layout_t *layout,
                                       size_t count);

/* A key that failed in use: never used again. */
void mca_osc_umr_key_refuse(mca_osc_umr_key_t *key);

/* Origin: take the answers that arrived; drop every key held for `target`
 * (dynamic windows, at its detach: osc_umr_dyn.h), pending ones excepted
 * (answered after the detach). */
void mca_osc_umr_keys_answers(mca_osc_umr_win_t *w);
void mca_osc_umr_keys_drop(mca_osc_umr_win_t *w, int target);
/* Dynamic windows: a detach a target told us about drops its keys, after
 * the answers that came before it (progress and every put/get call it). */
void mca_osc_umr_keys_check_detach(mca_osc_umr_win_t *w);

/* Target and origin sides of one window: start (post the request receive),
 * progress (answer requests, take answers), finish (`collective`: every
 * request sent is answered and every answer taken first; 0: only when no
 * request can have been sent, the window being unwrapped everywhere). */
int  mca_osc_umr_keys_init(mca_osc_umr_win_t *w);
void mca_osc_umr_keys_progress(mca_osc_umr_win_t *w);
void mca_osc_umr_keys_fini(mca_osc_umr_win_t *w, int collective);

END_C_DECLS

#endif
