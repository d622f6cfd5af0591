/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: one progress entry (see umr_mpi_progress.h).
 */
#include "umr_mpi_progress.h"

#include <stddef.h>

#define UMR_MPI_POLLERS 8

static struct {
    uct_worker_h     worker;
    ucs_list_link_t  events;       /* run first, all of them */
    ucs_list_link_t  work;         /* then what was queued before */
    int              outstanding;  /* work in flight */
    int              on;           /* the binding calls us */
    umr_mpi_poller_t pollers[UMR_MPI_POLLERS];
    int              npollers;
} umr_mpi_prog = {
    .events = UCS_LIST_INITIALIZER(&umr_mpi_prog.events, &umr_mpi_prog.events),
    .work   = UCS_LIST_INITIALIZER(&umr_mpi_prog.work, &umr_mpi_prog.work)
};

void umr_mpi_progress_init(uct_worker_h worker)
{
    umr_mpi_prog.worker = worker;
    ucs_list_head_init(&umr_mpi_prog.events);
    ucs_list_head_init(&umr_mpi_prog.work);
}

/* The binding calls us while work is in flight or a poller is there. */
static void umr_mpi_progress_want(void)
{
    int want = (umr_mpi_prog.outstanding > 0) || (umr_mpi_prog.npollers > 0);

    if (want != umr_mpi_prog.on) {
        umr_mpi_prog.on = want;
        umr_mpi.b->progress_on(want);
    }
}

void umr_mpi_progress_fini(void)
{
    if (umr_mpi_prog.on) {
        umr_mpi_prog.on = 0;
        umr_mpi.b->progress_on(0);
    }
    umr_mpi_prog.outstanding = 0;
    umr_mpi_prog.npollers    = 0;
    umr_mpi_prog.worker      = NULL;
    ucs_list_head_init(&umr_mpi_prog.events);
    ucs_list_head_init(&umr_mpi_prog.work);
}

void umr_mpi_work_post(umr_mpi_work_t *work)
{
    ucs_list_add_tail(&umr_mpi_prog.work, &work->list);
}

void umr_mpi_event_post(umr_mpi_work_t *event)
{
    ucs_list_add_tail(&umr_mpi_prog.events, &event->list);
}

/* Run the first `num` items of `list` (those queued now: a step that
 * queues itself again waits for the next progress). */
static void umr_mpi_progress_run(ucs_list_link_t *list, size_t num)
{
    umr_mpi_work_t *work;

    while ((num-- > 0) && !ucs_list_is_empty(list)) {
        work = ucs_list_extract_head(list, umr_mpi_work_t, list);
        work->run(work);
    }
}

int umr_mpi_progress(void)
{
    int count = 0, i;

    if (umr_mpi_prog.worker != NULL) {
        count = uct_worker_progress(umr_mpi_prog.worker);
    }
    umr_mpi_progress_run(&umr_mpi_prog.events, SIZE_MAX);
    umr_mpi_progress_run(&umr_mpi_prog.work,
                         ucs_list_length(&umr_mpi_prog.work));
    for (i = 0; i < umr_mpi_prog.npollers; ++i) {
        count += umr_mpi_prog.pollers[i]();
    }
    umr_mpi_progress_want();
    return count;
}

void umr_mpi_progress_ref(int delta)
{
    umr_mpi_prog.outstanding += delta;
    umr_mpi_progress_want();
}

void umr_mpi_poller_add(umr_mpi_poller_t fn)
{
    int i;

    for (i = 0; i < umr_mpi_prog.npollers; ++i) {
        if (umr_mpi_prog.pollers[i] == fn) {
            return;
        }
    }
    if (umr_mpi_prog.npollers < UMR_MPI_POLLERS) {
        umr_mpi_prog.pollers[umr_mpi_prog.npollers++] = fn;
    }
    umr_mpi_progress_want();
}

void umr_mpi_poller_remove(umr_mpi_poller_t fn)
{
    int i;

    for (i = 0; i < umr_mpi_prog.npollers; ++i) {
        if (umr_mpi_prog.pollers[i] == fn) {
            umr_mpi_prog.pollers[i] =
                umr_mpi_prog.pollers[--umr_mpi_prog.npollers];
            break;
        }
    }
    umr_mpi_progress_want();
}

void umr_mpi_progress_drain(void)
{
    while (umr_mpi_prog.outstanding > 0) {
        umr_mpi.b->progress();
    }
}
