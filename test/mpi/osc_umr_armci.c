/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/*
 * osc/umr test: an ARMCI-MPI-style program, unmodified MPI. A global 2D or
 * 3D array of doubles is distributed over the ranks in slabs of the first
 * dimension, each rank's slab an MPI_Win_create window; like ARMCI_GetS /
 * ARMCI_PutS / ARMCI_AccS over it, a patch [lo, hi) of the global array is
 * moved with one MPI_Get / MPI_Put / MPI_Accumulate per owning rank, whose
 * target datatype is the patch's part of the owner's slab (a subarray) and
 * whose origin is either the patch buffer itself (contiguous) or a patch
 * inside a larger local buffer with a halo (a subarray: noncontiguous),
 * inside MPI_Win_lock_all / MPI_Win_flush / MPI_Win_unlock_all.
 *
 *   get:  every rank gets a patch that crosses slab boundaries;
 *   put:  each rank puts a patch of its own (disjoint from the others'),
 *         three times;
 *   acc:  every rank adds (rank + 1) over one common patch (MPI_SUM,
 *         through the wrapped module: osc/umr does not move accumulates);
 *   get again after the puts and accumulates.
 *
 * Every element is checked against the array computed serially on each
 * rank, halos included; one line "check ..." per step and rank, and a
 * checksum of the whole array, identical with osc/umr on and off.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs, failures;
static int G[3];              /* global sizes */
static int nloc, first;       /* my slab: planes [first, first + nloc) */

static int owner_first(int r) { return (int)((long)G[0] * r / nprocs); }

static double init_value(const int *i)
{
    return i[0] * 1e6 + i[1] * 1e3 + i[2];
}

/* The global array after the put and accumulate steps (serially). */
static void put_patch(int r, int *lo, int *hi);
static void acc_patch(int *lo, int *hi);

static double put_value(int r, const int *i)
{
    return -(r + 1) * 1e7 - (i[0] * 1e4 + i[1] * 1e2 + i[2]);
}

static double expected(const int *i, int after)
{
    int lo[3], hi[3], r, d, in;
    double v = init_value(i);

    if (!after) {
        return v;
    }
    for (r = 0; r < nprocs; ++r) {
        put_patch(r, lo, hi);
        for (in = 1, d = 0; d < 3; ++d) {
            in = in && (i[d] >= lo[d]) && (i[d] < hi[d]);
        }
        if (in) {
            v = put_value(r, i);
        }
    }
    acc_patch(lo, hi);
    for (in = 1, d = 0; d < 3; ++d) {
        in = in && (i[d] >= lo[d]) && (i[d] < hi[d]);
    }
    if (in) {
        v += nprocs * (nprocs + 1) / 2;
    }
    return v;
}

/* rank r's get patch: crosses every slab boundary near the middle */
static void get_patch(int r, int *lo, int *hi)
{
    lo[0] = (r * 3) % (G[0] / 4);          hi[0] = G[0] - (r % 3);
    lo[1] = 1 + r % 3;                     hi[1] = G[1] - 2;
    lo[2] = (G[2] > 1) ? 2 : 0;            hi[2] = (G[2] > 1) ? G[2] - 1 - r % 2 : 1;
}

/* rank r's put patch: a band of planes from the middle of its own slab
 * into the next rank's (the last rank: the first half of rank 0's slab),
 * disjoint bands across ranks */
static void put_patch(int r, int *lo, int *hi)
{
    int band = G[0] / nprocs;

    if (r == nprocs - 1) {
        lo[0] = 0;                         hi[0] = band / 2;
    } else {
        lo[0] = r * band + band / 2;       hi[0] = lo[0] + band / 2 + 1;
    }
    lo[1] = 3;                             hi[1] = G[1] - 1;
    lo[2] = (G[2] > 1) ? 1 : 0;            hi[2] = (G[2] > 1) ? G[2] - 2 : 1;
}

static void acc_patch(int *lo, int *hi)
{
    lo[0] = G[0] / 4;                      hi[0] = G[0] - G[0] / 4;
    lo[1] = 2;                             hi[1] = G[1] / 2 + 3;
    lo[2] = 0;                             hi[2] = (G[2] > 2) ? G[2] / 2 : 1;
}

enum { OP_GET, OP_PUT, OP_ACC };

/* Like ARMCI_GetS/PutS/AccS: move patch [lo, hi) between the global array
 * and `buf` (a box of sizes bsz with the patch at bstart), one RMA
 * operation per owner. */
static void strided(int op, MPI_Win win, int *lo, int *hi, double *buf,
                    const int *bsz, const int *bstart)
{
    int r;

    for (r = 0; r < nprocs; ++r) {
        int f = owner_first(r), l = owner_first(r + 1), tsz[3], tsub[3],
            tst[3], osub[3], ost[3], d;
        MPI_Datatype ttype, otype;

        if ((hi[0] <= f) || (lo[0] >= l)) {
            continue;
        }
        tsz[0]  = l - f;   tsz[1] = G[1];   tsz[2] = G[2];
        tst[0]  = (lo[0] > f) ? lo[0] - f : 0;
        tsub[0] = ((hi[0] < l) ? hi[0] : l) - f - tst[0];
        for (d = 1; d < 3; ++d) {
            tst[d]  = lo[d];
            tsub[d] = hi[d] - lo[d];
        }
        for (d = 0; d < 3; ++d) {
            osub[d] = tsub[d];
            ost[d]  = bstart[d] + ((d == 0) ? f + tst[0] - lo[0] : 0);
        }
        MPI_Type_create_subarray(3, tsz, tsub, tst, MPI_ORDER_C, MPI_DOUBLE,
                                 &ttype);
        MPI_Type_create_subarray(3, bsz, osub, ost, MPI_ORDER_C, MPI_DOUBLE,
                                 &otype);
        MPI_Type_commit(&ttype);
        MPI_Type_commit(&otype);
        if (op == OP_GET) {
            MPI_Get(buf, 1, otype, r, 0, 1, ttype, win);
        } else if (op == OP_PUT) {
            MPI_Put(buf, 1, otype, r, 0, 1, ttype, win);
        } else {
            MPI_Accumulate(buf, 1, otype, r, 0, 1, ttype, MPI_SUM, win);
        }
        MPI_Win_flush(r, win);
        MPI_Type_free(&ttype);
        MPI_Type_free(&otype);
    }
}

static void report(const char *what, int bad, long n, long first_bad)
{
    if (bad) {
        printf("FAIL %s rank %d: %d of %ld elements wrong, first at %ld\n",
               what, rank, bad, n, first_bad);
        ++failures;
    } else {
        printf("check %s rank %d: ok (%ld elements)\n", what, rank, n);
    }
}

/* A get of my patch into a box with a halo (halo 0: the contiguous patch
 * buffer), every element of the box checked. */
static void do_get(MPI_Win win, int halo, int after, const char *name)
{
    int lo[3], hi[3], bsz[3], bst[3], i[3], d, bad = 0;
    long n, k, first_bad = -1;
    double *buf;
    char what[128];

    get_patch(rank, lo, hi);
    for (d = 0, n = 1; d < 3; ++d) {
        bst[d] = (G[d] > 1) ? halo : 0;
        bsz[d] = hi[d] - lo[d] + 2 * bst[d];
        n *= bsz[d];
    }
    buf = malloc(n * sizeof(double));
    for (k = 0; k < n; ++k) {
        buf[k] = -1.5;
    }
    MPI_Win_lock_all(0, win);
    strided(OP_GET, win, lo, hi, buf, bsz, bst);
    MPI_Win_unlock_all(win);
    for (k = 0; k < n; ++k) {
        long q = k;
        int in = 1;
        double e;

        i[2] = q % bsz[2]; q /= bsz[2];
        i[1] = q % bsz[1]; q /= bsz[1];
        i[0] = (int)q;
        for (d = 0; d < 3; ++d) {
            in = in && (i[d] >= bst[d]) && (i[d] < bsz[d] - bst[d]);
            i[d] += lo[d] - bst[d];
        }
        e = in ? expected(i, after) : -1.5;
        if (buf[k] != e) {
            if (!bad++) {
                first_bad = k;
            }
        }
    }
    snprintf(what, sizeof(what), "%s get halo=%d", name, halo);
    report(what, bad, n, first_bad);
    free(buf);
}

/* Put my patch (from a box with a halo), then everyone adds over the
 * common patch. */
static void do_put_acc(MPI_Win win, int halo)
{
    int lo[3], hi[3], bsz[3], bst[3], i[3], d;
    long n, k;
    double *buf;

    put_patch(rank, lo, hi);
    for (d = 0, n = 1; d < 3; ++d) {
        bst[d] = (G[d] > 1) ? halo : 0;
        bsz[d] = hi[d] - lo[d] + 2 * bst[d];
        n *= bsz[d];
    }
    buf = malloc(n * sizeof(double));
    for (k = 0; k < n; ++k) {
        long q = k;

        i[2] = q % bsz[2]; q /= bsz[2];
        i[1] = q % bsz[1]; q /= bsz[1];
        i[0] = (int)q;
        for (d = 0; d < 3; ++d) {
            i[d] += lo[d] - bst[d];
        }
        buf[k] = put_value(rank, i);   /* halo values must not land */
    }
    /* three times (same data): the first asks for the keys */
    for (k = 0; k < 3; ++k) {
        MPI_Win_lock_all(0, win);
        strided(OP_PUT, win, lo, hi, buf, bsz, bst);
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(buf);

    acc_patch(lo, hi);
    for (d = 0, n = 1; d < 3; ++d) {
        bst[d] = 0;
        bsz[d] = hi[d] - lo[d];
        n *= bsz[d];
    }
    buf = malloc(n * sizeof(double));
    for (k = 0; k < n; ++k) {
        buf[k] = rank + 1;
    }
    MPI_Win_lock_all(0, win);
    strided(OP_ACC, win, lo, hi, buf, bsz, bst);
    MPI_Win_unlock_all(win);
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* My slab, every element, against the serial result. */
static void check_slab(const double *slab, const char *name)
{
    long n = (long)nloc * G[1] * G[2], k, first_bad = -1;
    int i[3], bad = 0;
    double sum = 0, all;
    char what[128];

    for (k = 0; k < n; ++k) {
        long q = k;

        i[2] = q % G[2]; q /= G[2];
        i[1] = q % G[1]; q /= G[1];
        i[0] = first + (int)q;
        if (slab[k] != expected(i, 1)) {
            if (!bad++) {
                first_bad = k;
            }
        }
        sum += slab[k] * (double)((k % 7) + 1);
    }
    snprintf(what, sizeof(what), "%s slab after put+acc", name);
    report(what, bad, n, first_bad);
    MPI_Allreduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("check %s checksum %.17g\n", name, all);
    }
}

static void run(int nx, int ny, int nz, const char *name)
{
    long n, k;
    int i[3];
    double *slab;
    MPI_Win win;

    G[0] = nx; G[1] = ny; G[2] = nz;
    first = owner_first(rank);
    nloc  = owner_first(rank + 1) - first;
    n     = (long)nloc * ny * nz;
    slab  = malloc((n ? n : 1) * sizeof(double));
    for (k = 0; k < n; ++k) {
        long q = k;

        i[2] = q % nz; q /= nz;
        i[1] = q % ny; q /= ny;
        i[0] = first + (int)q;
        slab[k] = init_value(i);
    }
    MPI_Win_create(slab, n * sizeof(double), sizeof(double), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &win);
    /* several times: the first asks for the keys, later ones use them */
    for (k = 0; k < 3; ++k) {
        do_get(win, 0, 0, name);
        do_get(win, 2, 0, name);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    do_put_acc(win, 1);
    check_slab(slab, name);
    for (k = 0; k < 2; ++k) {
        do_get(win, 1, 1, name);
    }
    MPI_Win_free(&win);
    free(slab);
}

int main(int argc, char **argv)
{
    int all;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    run(64, 96, 1, "2d");
    run(24, 20, 18, "3d");
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("osc_umr_armci: %d failure(s)\n", all);
    }
    MPI_Finalize();
    return all ? 1 : 0;
}
