/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: what the binding needs of a communicator: the world rank
 * of each rank a message can name (the remote group's for an
 * intercommunicator), and an id both sides of it compute alike (an ack by
 * tag names the communicator with it). Made at the first message that
 * needs it and kept as an attribute of the communicator (freed with it; a
 * duplicate makes its own).
 */
#ifndef UMR_MPICH_COMM_H_
#define UMR_MPICH_COMM_H_

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef struct umr_mpich_comm {
    int      size;         /* ranks a message can name */
    uint64_t ctx;          /* the same on every member */
    int      coll;         /* collectives through the binding's
                              point-to-point (umr_mpich_coll.c): 0 not
                              decided yet, 1 yes, -1 MPICH's own */
    MPI_Comm coll_comm;    /* where their messages go (a duplicate) */
    int      world[];      /* their world ranks */
} umr_mpich_comm_t;

/* NULL: out of memory or an MPI error (then pass through). */
umr_mpich_comm_t *umr_mpich_comm_get(MPI_Comm comm);

/* The world rank of `rank` of `comm`; -1 when it names none (ANY_SOURCE,
 * PROC_NULL, out of range, no memory). */
static inline int umr_mpich_world_rank(MPI_Comm comm, int rank)
{
    const umr_mpich_comm_t *c;

    if (comm == MPI_COMM_WORLD) {
        return (rank >= 0) ? rank : -1;
    }
    c = umr_mpich_comm_get(comm);
    return ((c != NULL) && (rank >= 0) && (rank < c->size)) ? c->world[rank] :
                                                              -1;
}

/* The id of `comm` both sides agree on (0: none could be made). */
extern uint64_t umr_mpich_comm_world_ctx;
static inline uint64_t umr_mpich_comm_ctx(MPI_Comm comm)
{
    const umr_mpich_comm_t *c;

    if (comm == MPI_COMM_WORLD) {
        return umr_mpich_comm_world_ctx;
    }
    c = umr_mpich_comm_get(comm);
    return (c != NULL) ? c->ctx : 0;
}

void umr_mpich_comm_init(void);
void umr_mpich_comm_fini(void);

#endif
