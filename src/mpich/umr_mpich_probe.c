/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: probes and matched receives: MPI_Probe, MPI_Iprobe,
 * MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv. A probe answers a
 * zero-copy message's real size: what it finds of Z bytes from a peer of
 * the protocol is taken out of MPICH and held (umr_mpich_held.h); held
 * messages are answered first. A matched message the binding holds goes to
 * the user under the binding's own handle; every other one is MPICH's.
 */
#include "umr_config.h"

#include "umr_mpich.h"
#include "umr_mpich_comm.h"
#include "umr_mpich_core.h"
#include "umr_mpich_held.h"
#include "umr_mpich_recv.h"

#include "umr_mpi_peer.h"

#include <stdlib.h>

/* A held message matched in MPICH (older than a probed one) of Z bytes
 * from a peer of the protocol is received now: what it is decides what a
 * probe says of it. */
static int umr_mpich_probe_examine(umr_mpich_held_t *h)
{
    MPI_Status st;
    int rc;

    if ((h->kind != UMR_MPICH_HELD_MSG) || (h->bytes != UMR_MPI_CTL_SIZE) ||
        (umr_mpi_peer_proto(umr_mpich_world_rank(h->comm, h->source)) ==
         NULL)) {
        return MPI_SUCCESS;
    }
    rc = PMPI_Mrecv(&h->data, UMR_MPI_CTL_SIZE, MPI_BYTE, &h->msg, &st);
    if (rc == MPI_SUCCESS) {
        h->kind  = umr_mpi_wire_is_magic(&h->data) ? UMR_MPICH_HELD_CTL :
                                                     UMR_MPICH_HELD_DATA;
        h->bytes = (h->kind == UMR_MPICH_HELD_CTL) ? h->data.length :
                                                     UMR_MPI_CTL_SIZE;
    }
    return rc;
}

/* What a probe of (src, tag, comm) finds: a held message (*held_p), or
 * MPICH's (`st`, *flag_p; blocking: until there is one). */
static int umr_mpich_probe_find(int src, int tag, MPI_Comm comm, int blocking,
                                int *flag_p, MPI_Status *st,
                                umr_mpich_held_t **held_p)
{
    umr_mpich_held_t *h;
    int rc;

    *held_p = NULL;
    for (;;) {
        umr_mpich_progress_if_wanted();
        if ((umr_mpich_held_count > 0) &&
            (NULL != (h = umr_mpich_held_find(src, tag, comm)))) {
            *flag_p = 1;
            *held_p = h;
            return umr_mpich_probe_examine(h);
        }
        if (blocking && !umr_mpich_progress_wanted) {
            rc      = PMPI_Probe(src, tag, comm, st);
            *flag_p = 1;
        } else {
            rc = PMPI_Iprobe(src, tag, comm, flag_p, st);
        }
        if ((rc != MPI_SUCCESS) || !*flag_p) {
            if ((rc == MPI_SUCCESS) && blocking) {
                umr_mpich_progress();
                continue;
            }
            return rc;
        }
        rc = umr_mpich_held_take(comm, st);
        if (rc == 0) {
            return MPI_SUCCESS;    /* MPICH's own message */
        }
        if (rc != 1) {
            return rc;
        }
        /* held now: found in the list next time round */
    }
}

static int umr_mpich_probe(int src, int tag, MPI_Comm comm, int blocking,
                           int *flag, MPI_Status *status)
{
    umr_mpich_held_t *h;
    MPI_Status st;
    int rc, f = 0;

    if (status != MPI_STATUS_IGNORE) {
        st = *status;   /* its MPI_ERROR stays as it is */
    }
    rc = umr_mpich_probe_find(src, tag, comm, blocking, &f, &st, &h);
    if (flag != NULL) {
        *flag = f;
    }
    if ((rc != MPI_SUCCESS) || !f) {
        return rc;
    }
    if (h != NULL) {
        umr_mpich_held_status(h, status);
    } else if (status != MPI_STATUS_IGNORE) {
        *status = st;
    }
    return MPI_SUCCESS;
}

static int umr_mpich_mprobe(int src, int tag, MPI_Comm comm, int blocking,
                            int *flag, MPI_Message *msg, MPI_Status *status)
{
    umr_mpich_held_t *h;
    MPI_Status st;
    int rc, f = 0;

    rc = umr_mpich_probe_find(src, tag, comm, blocking, &f, &st, &h);
    if (flag != NULL) {
        *flag = f;
    }
    if ((rc != MPI_SUCCESS) || !f) {
        return rc;
    }
    if (h == NULL) {
        /* MPICH's message: the same one matched (first of its source and
         * tag) */
        return PMPI_Improbe(st.MPI_SOURCE, st.MPI_TAG, comm, &f, msg, status);
    }
    umr_mpich_held_status(h, status);
    umr_mpich_held_remove(h);
    if (h->kind == UMR_MPICH_HELD_MSG) {
        *msg = h->msg;
        free(h);
    } else {
        *msg = umr_mpich_held_handle(h);
    }
    return MPI_SUCCESS;
}

int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *status)
{
    if (!umr_mpich.p2p || (src == MPI_PROC_NULL)) {
        return umr_mpich_next()->Probe(src, tag, comm, status);
    }
    return umr_mpich_probe(src, tag, comm, 1, NULL, status);
}

int MPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    if (!umr_mpich.p2p || (src == MPI_PROC_NULL)) {
        return umr_mpich_next()->Iprobe(src, tag, comm, flag, status);
    }
    return umr_mpich_probe(src, tag, comm, 0, flag, status);
}

int MPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *msg,
               MPI_Status *status)
{
    if (!umr_mpich.p2p || (src == MPI_PROC_NULL)) {
        return umr_mpich_next()->Mprobe(src, tag, comm, msg, status);
    }
    return umr_mpich_mprobe(src, tag, comm, 1, NULL, msg, status);
}

int MPI_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *msg,
                MPI_Status *status)
{
    if (!umr_mpich.p2p || (src == MPI_PROC_NULL)) {
        return umr_mpich_next()->Improbe(src, tag, comm, flag, msg, status);
    }
    return umr_mpich_mprobe(src, tag, comm, 0, flag, msg, status);
}

/* a matched receive: the binding's handle, or MPICH's untouched */
static int umr_mpich_mrecv(void *buf, MPI_Count count, MPI_Datatype type,
                           MPI_Message *msg, int large, MPI_Request *req_p,
                           MPI_Status *status)
{
    umr_mpich_held_t *h;

    if (umr_mpich_held_is_handle(*msg) &&
        (NULL != (h = umr_mpich_held_of_handle(*msg)))) {
        *msg = MPI_MESSAGE_NULL;
        return umr_mpich_recv_held(h, buf, count, type, req_p, status);
    }
    if (req_p == NULL) {
        return large ? umr_mpich_next()->Mrecv_c(buf, count, type, msg,
                                                 status) :
                       umr_mpich_next()->Mrecv(buf, (int)count, type, msg,
                                               status);
    }
    return large ? umr_mpich_next()->Imrecv_c(buf, count, type, msg, req_p) :
                   umr_mpich_next()->Imrecv(buf, (int)count, type, msg, req_p);
}

/* MPI_Mrecv and MPI_Imrecv, their counts of type _cnt_t (_large: MPI_Count;
 * _sfx: their names' suffix) */
#define UMR_MPICH_MRECV_CALLS(_cnt_t, _large, _sfx) \
    int MPI_Mrecv##_sfx(void *buf, _cnt_t count, MPI_Datatype type, \
                        MPI_Message *msg, MPI_Status *status) \
    { \
        return umr_mpich_mrecv(buf, count, type, msg, _large, NULL, status); \
    } \
    int MPI_Imrecv##_sfx(void *buf, _cnt_t count, MPI_Datatype type, \
                         MPI_Message *msg, MPI_Request *req) \
    { \
        return umr_mpich_mrecv(buf, count, type, msg, _large, req, NULL); \
    }

UMR_MPICH_MRECV_CALLS(int, 0, )
UMR_MPICH_MRECV_CALLS(MPI_Count, 1, _c)
