/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: the binding of the MPI-neutral core (src/mpi/core,
 * umr_mpi_binding.h) over PMPI.
 *  - internal messages go on a private duplicate of MPI_COMM_WORLD
 *    (errors returned there), one ordinary tag a kind: PMPI has no tag a
 *    user message cannot match, but no user message is on that
 *    communicator;
 *  - the addresses: one allgather at MPI_Init, by every rank that starts
 *    the binding (the settings must be the same on every rank);
 *  - progress: MPICH calls nothing of a tool from its own progress, so the
 *    core's progress runs where the binding has control: the poll function
 *    of its generalized requests (MPI_Wait and MPI_Test of every kind call
 *    it), its blocking calls, and every call it wraps while the core has
 *    work in flight (progress_on);
 *  - log lines and messages to users: one line to stderr each.
 */
#ifndef UMR_MPICH_CORE_H_
#define UMR_MPICH_CORE_H_

#include "umr_mpi_binding.h"

#include <mpi.h>

/* After MPI_Init: open the rails, learn the peers, ready the protocol.
 * 0, or -1 after a verbose line (the job passes through). Every rank
 * that calls it takes part in one allgather. */
int  umr_mpich_core_start(void);
/* At MPI_Finalize, before MPICH's: work in flight ends, the rails close. */
void umr_mpich_core_stop(void);

/* One round of progress: the watched MPI requests, then the core's. */
void umr_mpich_progress(void);

/* The core has work in flight: the wrapped calls run progress. */
extern int umr_mpich_progress_wanted;

static inline void umr_mpich_progress_if_wanted(void)
{
    if (umr_mpich_progress_wanted) {
        umr_mpich_progress();
    }
}

/* The private communicator of internal messages and declined data, and
 * the tag of each kind there. */
extern MPI_Comm umr_mpich_comm_private;
int umr_mpich_tag(umr_mpi_msg_kind_t kind);

/* A short message of the binding's own on `comm` (`peer`, `tag`): the
 * binding's isend / irecv / cancel (umr_mpi_binding.h) on any channel (the
 * private communicator, a window's). */
int  umr_mpich_msg_isend(const void *buf, size_t len, int peer, int tag,
                         MPI_Comm comm, umr_mpi_comp_t *comp);
int  umr_mpich_msg_irecv(void *buf, size_t len, int peer, int tag,
                         MPI_Comm comm, umr_mpi_comp_t *comp,
                         umr_mpi_req_h *req_p);
void umr_mpich_msg_cancel(umr_mpi_req_h req);

/* What the core reads of a completed MPI request. */
void umr_mpich_status_of(const MPI_Status *st, umr_mpi_status_t *s);

#endif
