/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "umr_mpich_held.h"
#include "umr_mpich_comm.h"

#include "umr_mpi_peer.h"

#include <stdlib.h>

static UCS_LIST_HEAD(umr_mpich_held_list);
int umr_mpich_held_count;

/* the binding's message handles: an index into this table, above the
 * values below 2^30 a program might pass by mistake */
#define UMR_MPICH_HELD_HANDLE  0x0d000000
static umr_mpich_held_t **umr_mpich_held_handles;
static int umr_mpich_held_nhandles;

static int umr_mpich_held_matches(const umr_mpich_held_t *h, int source,
                                  int tag, MPI_Comm comm)
{
    return (h->comm == comm) &&
           ((source == MPI_ANY_SOURCE) || (source == h->source)) &&
           ((tag == MPI_ANY_TAG) || (tag == h->tag));
}

umr_mpich_held_t *umr_mpich_held_find(int source, int tag, MPI_Comm comm)
{
    umr_mpich_held_t *h;

    ucs_list_for_each(h, &umr_mpich_held_list, list) {
        if (umr_mpich_held_matches(h, source, tag, comm)) {
            return h;
        }
    }
    return NULL;
}

void umr_mpich_held_remove(umr_mpich_held_t *h)
{
    ucs_list_del(&h->list);
    --umr_mpich_held_count;
}

static size_t umr_mpich_held_bytes(const MPI_Status *st)
{
    MPI_Count n = 0;

    PMPI_Get_elements_x(st, MPI_BYTE, &n);
    return (n > 0) ? (size_t)n : 0;
}

static umr_mpich_held_t *umr_mpich_held_add(MPI_Comm comm,
                                            const MPI_Status *st, int kind)
{
    umr_mpich_held_t *h = malloc(sizeof(*h));

    if (h == NULL) {
        return NULL;
    }
    h->comm   = comm;
    h->source = st->MPI_SOURCE;
    h->tag    = st->MPI_TAG;
    h->kind   = kind;
    h->bytes  = umr_mpich_held_bytes(st);
    h->msg    = MPI_MESSAGE_NULL;
    ucs_list_add_tail(&umr_mpich_held_list, &h->list);
    ++umr_mpich_held_count;
    return h;
}

int umr_mpich_held_take(MPI_Comm comm, const MPI_Status *st)
{
    umr_mpich_held_t *h;
    MPI_Status st2;
    MPI_Message msg;
    int flag, rc;

    if ((umr_mpich_held_bytes(st) != UMR_MPI_CTL_SIZE) ||
        (umr_mpi_peer_proto(umr_mpich_world_rank(comm, st->MPI_SOURCE)) ==
         NULL)) {
        return 0;
    }
    /* the messages of that source, oldest first, down to the one probed:
     * the first of that source with its tag */
    for (;;) {
        rc = PMPI_Improbe(st->MPI_SOURCE, MPI_ANY_TAG, comm, &flag, &msg,
                          &st2);
        if ((rc != MPI_SUCCESS) || !flag) {
            return rc;   /* (flag 0 cannot be: the probe saw it) */
        }
        h = umr_mpich_held_add(comm, &st2, UMR_MPICH_HELD_MSG);
        if (h == NULL) {
            /* out of memory: MPICH no longer has it; lost otherwise */
            return MPI_ERR_NO_MEM;
        }
        h->msg = msg;
        if (st2.MPI_TAG == st->MPI_TAG) {
            break;
        }
    }
    rc = PMPI_Mrecv(&h->data, UMR_MPI_CTL_SIZE, MPI_BYTE, &h->msg, &st2);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (umr_mpi_wire_is_magic(&h->data)) {
        h->kind  = UMR_MPICH_HELD_CTL;
        h->bytes = h->data.length;
    } else {
        h->kind = UMR_MPICH_HELD_DATA;
    }
    return 1;
}

void umr_mpich_held_status(const umr_mpich_held_t *h, MPI_Status *status)
{
    if ((status == MPI_STATUS_IGNORE) || (status == MPI_STATUSES_IGNORE)) {
        return;
    }
    /* (MPI_ERROR left alone, as MPI says for a probe) */
    status->MPI_SOURCE = h->source;
    status->MPI_TAG    = h->tag;
    PMPI_Status_set_elements_x(status, MPI_BYTE, (MPI_Count)h->bytes);
    PMPI_Status_set_cancelled(status, 0);
}

MPI_Message umr_mpich_held_handle(umr_mpich_held_t *h)
{
    umr_mpich_held_t **tab;
    int i;

    for (i = 0; i < umr_mpich_held_nhandles; ++i) {
        if (umr_mpich_held_handles[i] == NULL) {
            break;
        }
    }
    if (i == umr_mpich_held_nhandles) {
        tab = realloc(umr_mpich_held_handles, sizeof(*tab) * (i + 16));
        if (tab == NULL) {
            return MPI_MESSAGE_NULL;
        }
        umr_mpich_held_handles  = tab;
        umr_mpich_held_nhandles = i + 16;
        for (int j = i; j < i + 16; ++j) {
            tab[j] = NULL;
        }
    }
    umr_mpich_held_handles[i] = h;
    return (MPI_Message)(UMR_MPICH_HELD_HANDLE + i);
}

umr_mpich_held_t *umr_mpich_held_of_handle(MPI_Message msg)
{
    int i = (int)msg - UMR_MPICH_HELD_HANDLE;
    umr_mpich_held_t *h;

    if ((i < 0) || (i >= umr_mpich_held_nhandles)) {
        return NULL;
    }
    h = umr_mpich_held_handles[i];
    umr_mpich_held_handles[i] = NULL;
    return h;
}
