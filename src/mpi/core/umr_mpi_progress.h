/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: one progress entry. Zero-copy work that waits (a
 * receive whose get waits for its peer or for room on its queue, a
 * handshake message that arrived, an operation whose queue was full) is a
 * work item with its own function; umr_mpi_progress() runs the transport's
 * completions, then the events, then the work queued before it started,
 * outside the MPI's completion callbacks. Pollers (a window's key protocol)
 * run there too while they are registered. The binding calls it from the
 * MPI's progress while the core asks (binding progress_on): while work is
 * in flight or a poller is registered.
 */
#ifndef UMR_MPI_PROGRESS_H_
#define UMR_MPI_PROGRESS_H_

#include "umr_mpi.h"

#include <ucs/datastruct/list.h>
#include <uct/api/uct.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct umr_mpi_work umr_mpi_work_t;
typedef void (*umr_mpi_work_fn_t)(umr_mpi_work_t *work);

struct umr_mpi_work {
    ucs_list_link_t   list;
    umr_mpi_work_fn_t run;
};

/* The progress entry: returns the transport's completions. */
int  umr_mpi_progress(void);

/* Work in flight (gets, handshakes, deferred operations): progress is
 * wanted while the sum is not 0. */
void umr_mpi_progress_ref(int delta);

/* Run `work` at the next progress, after the events. */
void umr_mpi_work_post(umr_mpi_work_t *work);
/* Run `event` at the next progress, before the work items. */
void umr_mpi_event_post(umr_mpi_work_t *event);

/* A poller runs at every progress while registered (and keeps progress
 * wanted): osc/umr's windows, for their key protocol. Up to 8. */
typedef int (*umr_mpi_poller_t)(void);
void umr_mpi_poller_add(umr_mpi_poller_t fn);
void umr_mpi_poller_remove(umr_mpi_poller_t fn);

/* Progress (through the binding, so the MPI moves too) until no work is
 * in flight. */
void umr_mpi_progress_drain(void);

/* The worker whose completions progress runs (umr_mpi_rail.h's), and its
 * end: what is still queued is dropped. */
void umr_mpi_progress_init(uct_worker_h worker);
void umr_mpi_progress_fini(void);

#ifdef __cplusplus
}
#endif

#endif
