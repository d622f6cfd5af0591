/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: MPI requests the binding waits for, each with its
 * completion function: the core's internal messages, and the messages on
 * the user's envelope it posted for the user (control messages, watched
 * receives, a declined message's data). MPICH calls nothing of a tool when
 * a request completes, so the binding tests them: every one at each of its
 * progress calls (umr_mpich_progress: the poll function of its generalized
 * requests and its own waits). Each is tested with MPI_Test, so an error
 * goes to the error handler of the request's own communicator, as it
 * would without the library.
 */
#ifndef UMR_MPICH_WATCH_H_
#define UMR_MPICH_WATCH_H_

#include <mpi.h>
#include <ucs/datastruct/list.h>

typedef struct umr_mpich_watch umr_mpich_watch_t;
/* `st`: the request's status, its MPI_ERROR the test's result */
typedef void (*umr_mpich_watch_cb_t)(umr_mpich_watch_t *w, MPI_Status *st);

struct umr_mpich_watch {
    umr_mpich_watch_cb_t cb;
    MPI_Request          req;     /* MPI_REQUEST_NULL once completed */
    ucs_list_link_t      list;
};

/* Watch `req` (a request just posted), `cb` once it completes. */
void umr_mpich_watch_add(umr_mpich_watch_t *w, umr_mpich_watch_cb_t cb,
                         MPI_Request req);

/* Test every watched request once; the completed ones' functions run. */
void umr_mpich_watch_poll(void);

/* Watched requests now (none: progress has nothing to test). */
extern int umr_mpich_watch_count;

#endif
