/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: messages the binding took out of MPICH for a probe. A
 * probe must answer a zero-copy message's real size, but MPICH sees its
 * control message of Z bytes. So a probe that finds Z bytes from a peer
 * that runs the protocol receives them (MPI_Improbe + MPI_Mrecv) and holds
 * them, with every older message from the same source (as matched
 * messages, MPI_Message, not received): all that is left in MPICH from
 * that source is then newer than what is held, and non-overtaking holds.
 * While anything is held, receives and probes look here first.
 *
 * A held message taken by MPI_Mprobe or MPI_Improbe that MPICH no longer
 * has (one received here) goes to the user under a handle of the binding's
 * own: an int MPICH never makes (its handles' two top bits are never 0),
 * which MPI_Mrecv and MPI_Imrecv recognise.
 */
#ifndef UMR_MPICH_HELD_H_
#define UMR_MPICH_HELD_H_

#include "umr_mpi_wire.h"

#include <mpi.h>
#include <ucs/datastruct/list.h>

enum {
    UMR_MPICH_HELD_MSG,    /* matched in MPICH, not received: msg */
    UMR_MPICH_HELD_CTL,    /* a control message, received: data */
    UMR_MPICH_HELD_DATA    /* Z bytes of the user's, received: data */
};

typedef struct umr_mpich_held {
    ucs_list_link_t list;
    MPI_Comm        comm;
    int             source;     /* rank in comm */
    int             tag;
    int             kind;
    size_t          bytes;      /* what a probe says: a control message's
                                   real length */
    MPI_Message     msg;
    umr_mpi_ctl_t   data;
} umr_mpich_held_t;

/* Messages held now (0: receives and probes go straight to MPICH). */
extern int umr_mpich_held_count;

/* The first held message a receive or probe of (source, tag, comm)
 * matches, or NULL. */
umr_mpich_held_t *umr_mpich_held_find(int source, int tag, MPI_Comm comm);
/* Take it out of the list (the caller frees it). */
void umr_mpich_held_remove(umr_mpich_held_t *h);

/* A probe found `st` on `comm`: 0 when it is not Z bytes from a peer of
 * the protocol (the probe's answer stands); else it and the older messages
 * of its source are held now (1), or an MPI error. */
int umr_mpich_held_take(MPI_Comm comm, const MPI_Status *st);

/* A probe's status for `h`. */
void umr_mpich_held_status(const umr_mpich_held_t *h, MPI_Status *status);

/* The binding's message handles for held messages. */
MPI_Message       umr_mpich_held_handle(umr_mpich_held_t *h);
umr_mpich_held_t *umr_mpich_held_of_handle(MPI_Message msg);
static inline int umr_mpich_held_is_handle(MPI_Message msg)
{
    return ((unsigned)msg >> 30) == 0;
}

#endif
