/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: MPI_Alltoallw and MPI_Neighbor_alltoallw (halo and
 * transpose exchanges with derived types on both sides). MPICH's
 * collectives send through its internal point-to-point, not MPI_Send, so
 * the binding sees none of their messages; it runs these two itself: each
 * pair's message through its own send and receive (zero-copy where the
 * choice takes it, else MPICH's), on a duplicate of the communicator (no
 * user message can match them), all waited for together, as MPICH's own
 * algorithm for them does (nonblocking sends and receives to every peer).
 *
 * Whether a communicator's collectives go this way is decided once for it,
 * at its first such collective, by all its ranks together (an allreduce of
 * whether each runs the point-to-point protocol, and the duplicate): every
 * rank takes the same way. Every rank where the binding started (its
 * settings, the same on every rank) takes part, its rails open or not. An intercommunicator, MPI_IN_PLACE and a
 * topology other than Cartesian (Neighbor_alltoallw) are MPICH's own.
 */
#include "umr_config.h"

#include "umr_mpich.h"
#include "umr_mpich_comm.h"
#include "umr_mpich_recv.h"
#include "umr_mpich_req.h"
#include "umr_mpich_send.h"

#include <stdlib.h>

/* the duplicate of `comm` its collectives go through, or MPI_COMM_NULL
 * (MPICH's own) */
static MPI_Comm umr_mpich_coll_comm(MPI_Comm comm)
{
    umr_mpich_comm_t *c = umr_mpich_comm_get(comm);
    int mine, all = 0;

    if (c == NULL) {
        return MPI_COMM_NULL;   /* (every rank: out of memory here and there
                                   would differ; that is a lost job anyway) */
    }
    if (c->coll == 0) {
        mine = umr_mpich.p2p;
        if ((PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm) !=
             MPI_SUCCESS) || !all ||
            (PMPI_Comm_dup(comm, &c->coll_comm) != MPI_SUCCESS)) {
            c->coll_comm = MPI_COMM_NULL;
        }
        c->coll = (c->coll_comm != MPI_COMM_NULL) ? 1 : -1;
    }
    return (c->coll == 1) ? c->coll_comm : MPI_COMM_NULL;
}

/* one exchange's counts and displacements, int or large */
typedef struct umr_mpich_xargs {
    const void *counts;
    const void *displs;
    int        large;       /* MPI_Count counts, MPI_Aint displacements */
    int        int_displs;  /* Alltoallw's int displacements */
} umr_mpich_xargs_t;

static MPI_Count umr_mpich_xcount(const umr_mpich_xargs_t *a, int i)
{
    return a->large ? ((const MPI_Count*)a->counts)[i] :
                      ((const int*)a->counts)[i];
}

static MPI_Aint umr_mpich_xdispl(const umr_mpich_xargs_t *a, int i)
{
    return (a->int_displs && !a->large) ? ((const int*)a->displs)[i] :
                                          ((const MPI_Aint*)a->displs)[i];
}

static int umr_mpich_xbytes_zero(MPI_Count count, MPI_Datatype type)
{
    MPI_Count size = 0;

    return (count == 0) || ((PMPI_Type_size_x(type, &size) == MPI_SUCCESS) &&
                            (size == 0));
}

/* n receives (from srcs[i], tag rtags[i]) and n sends (to dsts[i], tag
 * stags[i]) on `comm`, waited for together */
static int umr_mpich_exchange(const void *sbuf, const umr_mpich_xargs_t *sa,
                              const MPI_Datatype *stypes, void *rbuf,
                              const umr_mpich_xargs_t *ra,
                              const MPI_Datatype *rtypes, int n,
                              const int *srcs, const int *rtags,
                              const int *dsts, const int *stags,
                              MPI_Comm comm)
{
    MPI_Request *reqs = malloc(sizeof(*reqs) * 2 * (n ? n : 1));
    int i, k = 0, rc = MPI_SUCCESS;

    if (reqs == NULL) {
        return MPI_ERR_NO_MEM;
    }
    for (i = 0; (i < n) && (rc == MPI_SUCCESS); ++i) {
        if ((srcs[i] == MPI_PROC_NULL) ||
            umr_mpich_xbytes_zero(umr_mpich_xcount(ra, i), rtypes[i])) {
            continue;
        }
        rc = umr_mpich_recv((char*)rbuf + umr_mpich_xdispl(ra, i),
                            umr_mpich_xcount(ra, i), rtypes[i], srcs[i],
                            rtags[i], comm, ra->large, &reqs[k++], NULL);
    }
    for (i = 0; (i < n) && (rc == MPI_SUCCESS); ++i) {
        if ((dsts[i] == MPI_PROC_NULL) ||
            umr_mpich_xbytes_zero(umr_mpich_xcount(sa, i), stypes[i])) {
            continue;
        }
        rc = umr_mpich_send((const char*)sbuf + umr_mpich_xdispl(sa, i),
                            umr_mpich_xcount(sa, i), stypes[i], dsts[i],
                            stags[i], comm, UMR_MPICH_MODE_STANDARD,
                            sa->large, &reqs[k++]);
    }
    if (rc != MPI_SUCCESS) {
        k -= 1;   /* the failed one made no request */
    }
    i  = PMPI_Waitall(k, reqs, MPI_STATUSES_IGNORE);
    rc = (rc != MPI_SUCCESS) ? rc : i;
    free(reqs);
    return rc;
}

static int umr_mpich_alltoallw(const void *sbuf, const void *scounts,
                               const void *sdispls,
                               const MPI_Datatype *stypes, void *rbuf,
                               const void *rcounts, const void *rdispls,
                               const MPI_Datatype *rtypes, MPI_Comm comm,
                               MPI_Comm dup, int large)
{
    umr_mpich_xargs_t sa = {scounts, sdispls, large, 1};
    umr_mpich_xargs_t ra = {rcounts, rdispls, large, 1};
    int n, i, rank, rc, *peers, *tags;

    PMPI_Comm_size(dup, &n);
    PMPI_Comm_rank(dup, &rank);
    peers = malloc(sizeof(int) * 2 * n);
    if (peers == NULL) {
        return MPI_ERR_NO_MEM;
    }
    tags = peers + n;
    for (i = 0; i < n; ++i) {
        peers[i] = i;
        tags[i]  = 0;
    }
    rc = umr_mpich_exchange(sbuf, &sa, stypes, rbuf, &ra, rtypes, n, peers,
                            tags, peers, tags, dup);
    free(peers);
    return rc;
}

/* Cartesian neighbours in MPI's order (per dimension: the one below, the
 * one above); each message's tag is the receiver's slot for it, so that a
 * neighbour that is there twice (a periodic dimension of one or two
 * ranks) gets each message in its own slot. */
static int umr_mpich_neighbor_alltoallw(const void *sbuf, const void *scounts,
                                        const void *sdispls,
                                        const MPI_Datatype *stypes,
                                        void *rbuf, const void *rcounts,
                                        const void *rdispls,
                                        const MPI_Datatype *rtypes,
                                        MPI_Comm comm, MPI_Comm dup,
                                        int large)
{
    umr_mpich_xargs_t sa = {scounts, sdispls, large, 0};
    umr_mpich_xargs_t ra = {rcounts, rdispls, large, 0};
    int ndims, d, rc, *nb, *rtags, *stags;

    PMPI_Cartdim_get(comm, &ndims);
    nb = malloc(sizeof(int) * 3 * (2 * ndims + 1));
    if (nb == NULL) {
        return MPI_ERR_NO_MEM;
    }
    rtags = nb + 2 * ndims + 1;
    stags = rtags + 2 * ndims + 1;
    for (d = 0; d < ndims; ++d) {
        PMPI_Cart_shift(comm, d, 1, &nb[2 * d], &nb[2 * d + 1]);
        rtags[2 * d]     = 2 * d;
        rtags[2 * d + 1] = 2 * d + 1;
        stags[2 * d]     = 2 * d + 1;   /* the one below gets it from above */
        stags[2 * d + 1] = 2 * d;
    }
    rc = umr_mpich_exchange(sbuf, &sa, stypes, rbuf, &ra, rtypes, 2 * ndims,
                            nb, rtags, nb, stags, dup);
    free(nb);
    return rc;
}

static MPI_Comm umr_mpich_neighbor_comm(MPI_Comm comm)
{
    int topo = MPI_UNDEFINED;

    if (!umr_mpich.started ||
        (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS) ||
        (topo != MPI_CART)) {
        return MPI_COMM_NULL;
    }
    return umr_mpich_coll_comm(comm);
}

/* the duplicate of `comm` an Alltoallw goes through, or MPI_COMM_NULL */
static MPI_Comm umr_mpich_alltoallw_comm(MPI_Comm comm, const void *sbuf)
{
    if (!umr_mpich.started || (sbuf == MPI_IN_PLACE)) {
        return MPI_COMM_NULL;
    }
    return umr_mpich_coll_comm(comm);
}

/* MPI_<name>: its counts of type _cnt_t and displacements of _displ_t
 * (_large: MPI_Count counts), MPICH's own unless `_dup` gives the
 * duplicate the binding runs it on (`_run`) */
#define UMR_MPICH_W_CALL(_name, _cnt_t, _displ_t, _large, _dup, _run) \
    int MPI_##_name(const void *sbuf, const _cnt_t scounts[], \
                    const _displ_t sdispls[], const MPI_Datatype stypes[], \
                    void *rbuf, const _cnt_t rcounts[], \
                    const _displ_t rdispls[], const MPI_Datatype rtypes[], \
                    MPI_Comm comm) \
    { \
        MPI_Comm dup = _dup; \
        \
        if (dup == MPI_COMM_NULL) { \
            return umr_mpich_next()->_name(sbuf, scounts, sdispls, stypes, \
                                           rbuf, rcounts, rdispls, rtypes, \
                                           comm); \
        } \
        return _run(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, \
                    rtypes, comm, dup, _large); \
    }

UMR_MPICH_W_CALL(Alltoallw, int, int, 0,
                 umr_mpich_alltoallw_comm(comm, sbuf), umr_mpich_alltoallw)
UMR_MPICH_W_CALL(Alltoallw_c, MPI_Count, MPI_Aint, 1,
                 umr_mpich_alltoallw_comm(comm, sbuf), umr_mpich_alltoallw)
UMR_MPICH_W_CALL(Neighbor_alltoallw, int, MPI_Aint, 0,
                 umr_mpich_neighbor_comm(comm), umr_mpich_neighbor_alltoallw)
UMR_MPICH_W_CALL(Neighbor_alltoallw_c, MPI_Count, MPI_Aint, 1,
                 umr_mpich_neighbor_comm(comm), umr_mpich_neighbor_alltoallw)
