/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: putting osc/umr in front of a window's module.
 *
 * The wrapped component creates the window and its module; osc/umr saves
 * that module's function table (osc_umr_win.h: `real`) and writes its own
 * put/get/rput/rget (osc_umr_rma.h), synchronisation (osc_umr_sync.h) and
 * free entry points into the module in place (the module is the wrapped
 * component's per-window memory; its other slots stay its own).
 *
 * Only MPI_Win_create windows are wrapped. Allocated and shared windows are
 * mapped by the wrapped module and copied with loads and stores (nothing to
 * win); dynamic windows are for a later step. Wrapping is decided by all
 * ranks together (an allreduce on the window's communicator), then the
 * communicator is duplicated for the key protocol (osc_umr_wire.h).
 */
#ifndef MCA_OSC_UMR_MODULE_H_
#define MCA_OSC_UMR_MODULE_H_

#include "osc_umr.h"

#include <ompi/communicator/communicator.h>
#include <ompi/win/win.h>

BEGIN_C_DECLS

/* Put osc/umr in front of the module the wrapped component just made for
 * `win`; on any failure leave it unchanged (one verbose line). Collective
 * over `comm`. Always OMPI_SUCCESS. */
int mca_osc_umr_module_wrap(ompi_win_t *win, void *base, size_t size,
                            ptrdiff_t disp_unit, ompi_communicator_t *comm,
                            int flavor, const char *osc_name);

/* MPI_Win_free: completes osc/umr's operations, settles the key protocol
 * (collective), restores the wrapped table, then frees with it. */
int mca_osc_umr_free(ompi_win_t *win);

/* The progress function (registered while a wrapped window exists): key
 * requests and answers (osc_umr_key.h), failed requests to redo
 * (osc_umr_rma.h), the transport's completions. */
int mca_osc_umr_progress(void);

END_C_DECLS

#endif
