/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * An unmodified MPI program (plain MPI, no pml/umr API) exercising the
 * point-to-point paths pml/umr interposes on. test_pml_umr.sh runs it with
 * and without pml/umr and compares what it prints.
 *
 * Every case checks its own results against the expected pattern, then
 * prints one line per rank: "check <case> rank <r> <hash of its buffers>".
 * When the MPI_T performance variables of pml/umr exist, it also prints
 * "zcopy <case> rank <r> <zero-copy messages sent + received in the case>"
 * (-1 without pml/umr), so the script can prove the zero-copy path ran.
 *
 * Usage: pml_umr_test [case...]   (default: all cases)
 */
#include <mpi.h>

#include "mpi_check.h"
#include "umr_mpi_wire.h"   /* Z and the magic: the escape cases */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int rank, nprocs, errors;

/* ---- MPI_T: pml/umr's zero-copy counters --------------------------------- */

static MPI_T_pvar_session session;
static MPI_T_pvar_handle pv_handle[2];
static int pv_ok;

static void pvars_init(void)
{
    const char *names[2] = {"pml_umr_zcopy_sends", "pml_umr_zcopy_recvs"};
    int provided, i, idx, count;

    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        return;
    }
    if (MPI_T_pvar_session_create(&session) != MPI_SUCCESS) {
        return;
    }
    for (i = 0; i < 2; ++i) {
        if ((MPI_T_pvar_get_index(names[i], MPI_T_PVAR_CLASS_COUNTER, &idx) !=
             MPI_SUCCESS) ||
            (MPI_T_pvar_handle_alloc(session, idx, NULL, &pv_handle[i],
                                     &count) != MPI_SUCCESS)) {
            return;
        }
    }
    pv_ok = 1;
}

static long zcopy_now(void)
{
    unsigned long v[2] = {0, 0};
    int i;

    if (!pv_ok) {
        return -1;
    }
    for (i = 0; i < 2; ++i) {
        MPI_T_pvar_read(session, pv_handle[i], &v[i]);
    }
    return (long)(v[0] + v[1]);
}

/* ---- helpers --------------------------------------------------------------- */

static double val(int r, int i, int salt)
{
    return r * 1000000.0 + i + salt * 0.25;
}

static void report(const char *name, uint64_t h, long zc0)
{
    long zc = zcopy_now();

    printf("check %s rank %d %016llx\n", name, rank, (unsigned long long)h);
    printf("zcopy %s rank %d %ld\n", name, rank, (zc < 0) ? -1 : zc - zc0);
}

/* ---- halo exchange: 3D grid, x/y/z faces and a subarray face ------------- */

#define HN 24

static void halo(void)
{
    int n = HN, left = (rank + nprocs - 1) % nprocs, right = (rank + 1) % nprocs;
    size_t cells = (size_t)n * n * n, i;
    double *g = malloc(cells * sizeof(double));
    MPI_Datatype face[4], tmp;
    int sizes[3] = {n, n, n}, sub[3] = {1, n - 2, n - 2}, st[3] = {0, 1, 1};
    int f, it, x, y, z, idx;
    MPI_Request req[2];
    uint64_t h = 0xcbf29ce484222325ull;
    long zc0 = zcopy_now();

    /* g[z][y][x]; face f is the plane x=0 (f=0), y=0 (1), z=0 (2), and the
     * interior of x=0 as a subarray (3); ghost planes are the last ones. */
    MPI_Type_vector(n * n, 1, n, MPI_DOUBLE, &face[0]);                /* 8 B */
    MPI_Type_vector(n, n, n * n, MPI_DOUBLE, &face[1]);                /* rows */
    MPI_Type_contiguous(n * n, MPI_DOUBLE, &face[2]);                  /* contig */
    MPI_Type_create_subarray(3, sizes, sub, st, MPI_ORDER_FORTRAN, MPI_DOUBLE,
                             &tmp);
    MPI_Type_create_resized(tmp, 0, sizeof(double), &face[3]);
    MPI_Type_free(&tmp);
    for (f = 0; f < 4; ++f) {
        MPI_Type_commit(&face[f]);
    }
    for (it = 0; it < 3; ++it) {
        for (f = 0; f < 4; ++f) {
            /* send plane 0 of face f to the right, receive the left
             * neighbour's into the last plane */
            size_t last = (f == 0) ? n - 1 : (f == 1) ? (size_t)(n - 1) * n :
                          (f == 2) ? (size_t)(n - 1) * n * n : n - 1;
            for (i = 0; i < cells; ++i) {
                g[i] = val(rank, i, it);
            }
            MPI_Irecv(g + last, 1, face[f], left, 10 + f, MPI_COMM_WORLD,
                      &req[0]);
            MPI_Isend(g, 1, face[f], right, 10 + f, MPI_COMM_WORLD, &req[1]);
            if (it == 1) { /* Waitany, one at a time */
                int k, got = 0;
                for (k = 0; k < 2; ++k) {
                    MPI_Waitany(2, req, &idx, MPI_STATUS_IGNORE);
                    got |= 1 << idx;
                }
                CHECK(got == 3, "waitany returned %x", got);
            } else {
                MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
            }
            /* the last plane holds the neighbour's plane 0 */
            for (z = 0; z < n; ++z) {
                for (y = 0; y < n; ++y) {
                    size_t src = (f == 0) ? ((size_t)z * n + y) * n :
                                 (f == 1) ? (size_t)z * n * n + y :
                                 (f == 2) ? (size_t)z * n + y :
                                            ((size_t)z * n + y) * n;
                    int in = (f == 2) ? (z < n) : 1;
                    if (f == 3) { /* interior of the x plane only */
                        in = (y >= 1) && (y < n - 1) && (z >= 1) && (z < n - 1);
                    }
                    if ((f == 2) && (z >= n)) {
                        in = 0;
                    }
                    if (in && (g[src + last] != val(left, src, it))) {
                        FAIL("face %d it %d z %d y %d: %g != %g", f, it, z, y,
                             g[src + last], val(left, src, it));
                        y = z = n;
                    }
                    (void)x;
                }
            }
            h = hash_bytes(h, g, cells * sizeof(double));
        }
    }
    for (f = 0; f < 4; ++f) {
        MPI_Type_free(&face[f]);
    }
    free(g);
    report("halo", h, zc0);
}

/* ---- Neighbor_alltoallw on a 2D Cartesian communicator -------------------- */

/* periodic: every rank has four neighbours, the same one twice along a
 * dimension of one or two ranks (MPICH 4.0 mixes the two messages up there:
 * its jobs run neighbor_open); open: MPI_PROC_NULL beyond the edges */
static void neighbor_run(const char *name, int periodic)
{
    int dims[2] = {0, 0}, periods[2] = {periodic, periodic}, n = 256, G = 3;
    int L = n + 2 * G;
    int sizes[2] = {L, L}, sub[2], st[2], counts[4] = {1, 1, 1, 1}, i, d;
    MPI_Aint sdispl[4] = {0, 0, 0, 0}, rdispl[4] = {0, 0, 0, 0};
    MPI_Datatype stype[4], rtype[4];
    MPI_Comm cart;
    double *g, *r;
    uint64_t h;
    long zc0 = zcopy_now();

    MPI_Dims_create(nprocs, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    /* an n x n interior with ghost zones G deep: faces of G rows (3 x 2 KiB
     * blocks) or G columns (24 B blocks), disjoint from each other */
    g = malloc(sizeof(double) * L * L);
    r = calloc(L * L, sizeof(double));
    for (i = 0; i < L * L; ++i) {
        g[i] = val(rank, i, 7);
    }
    /* neighbour order: dim 0 -, dim 0 +, dim 1 -, dim 1 + */
    for (d = 0; d < 4; ++d) {
        int dim = d / 2, plus = d % 2;
        sub[dim]     = G;
        sub[1 - dim] = n;
        st[1 - dim]  = G;
        st[dim]      = plus ? n : G;          /* interior edge */
        MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, MPI_DOUBLE,
                                 &stype[d]);
        st[dim]      = plus ? n + G : 0;      /* ghost zone */
        MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, MPI_DOUBLE,
                                 &rtype[d]);
        MPI_Type_commit(&stype[d]);
        MPI_Type_commit(&rtype[d]);
    }
    MPI_Neighbor_alltoallw(g, counts, sdispl, stype, r, counts, rdispl, rtype,
                           cart);
    for (d = 0; d < 4; ++d) {
        int dim = d / 2, plus = d % 2, a, b, src, dst, k, ok = 1;
        MPI_Cart_shift(cart, dim, 1, &src, &dst);
        k = plus ? dst : src;
        ok = (k != MPI_PROC_NULL);   /* nothing arrives from beyond an edge */
        /* from the plus neighbour: its minus edge, and vice versa */
        for (a = 0; (a < G) && ok; ++a) {
            for (b = G; (b < n + G) && ok; ++b) {
                int ra = (plus ? n + G : 0) + a, sa = (plus ? G : n) + a;
                int ri = dim ? b * L + ra : ra * L + b;
                int si = dim ? b * L + sa : sa * L + b;
                if (r[ri] != val(k, si, 7)) {
                    FAIL("neighbor d %d from %d: %g != %g", d, k, r[ri],
                         val(k, si, 7));
                    ok = 0;
                }
            }
        }
    }
    h = hash_bytes(0xcbf29ce484222325ull, r, sizeof(double) * L * L);
    for (d = 0; d < 4; ++d) {
        MPI_Type_free(&stype[d]);
        MPI_Type_free(&rtype[d]);
    }
    MPI_Comm_free(&cart);
    free(g);
    free(r);
    report(name, h, zc0);
}

static void neighbor(void)
{
    neighbor_run("neighbor", 1);
}

static void neighbor_open(void)
{
    neighbor_run("neighbor_open", 0);
}

/* ---- Alltoallw transpose with subarray / column types --------------------- */

static void alltoallw(void)
{
    int b = 32, N = b * nprocs, i, j, p;
    double *a = malloc(sizeof(double) * b * N), *t = malloc(sizeof(double) * b * N);
    int *cnt = malloc(sizeof(int) * nprocs), *disp = malloc(sizeof(int) * nprocs);
    int *rdisp = malloc(sizeof(int) * nprocs);
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * nprocs), col, colr, rt;
    int sizes[2] = {b, N}, sub[2] = {b, b}, start[2];
    uint64_t h;
    long zc0 = zcopy_now();

    /* rows [rank*b, rank*b + b) of an N x N matrix A[r][c] = val(0, r*N+c) */
    for (i = 0; i < b; ++i) {
        for (j = 0; j < N; ++j) {
            a[i * N + j] = val(0, (rank * b + i) * N + j, 3);
        }
    }
    memset(t, 0, sizeof(double) * b * N);
    MPI_Type_vector(b, 1, N, MPI_DOUBLE, &col);
    MPI_Type_create_resized(col, 0, sizeof(double), &colr);
    MPI_Type_contiguous(b, colr, &rt);
    MPI_Type_commit(&rt);
    for (p = 0; p < nprocs; ++p) {
        start[0] = 0;
        start[1] = p * b;
        MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE,
                                 &st[p]);
        MPI_Type_commit(&st[p]);
        cnt[p]   = 1;
        disp[p]  = 0;
        rdisp[p] = p * b * sizeof(double);
    }
    {
        MPI_Datatype *rts = malloc(sizeof(MPI_Datatype) * nprocs);
        for (p = 0; p < nprocs; ++p) {
            rts[p] = rt;
        }
        MPI_Alltoallw(a, cnt, disp, st, t, cnt, rdisp, rts, MPI_COMM_WORLD);
        free(rts);
    }
    /* my rows of the transpose: T[r][c] = A[c][r] */
    for (i = 0; i < b; ++i) {
        for (j = 0; j < N; ++j) {
            double want = val(0, j * N + rank * b + i, 3);
            if (t[i * N + j] != want) {
                FAIL("transpose [%d][%d] %g != %g", i, j, t[i * N + j], want);
                i = b;
                break;
            }
        }
    }
    h = hash_bytes(0xcbf29ce484222325ull, t, sizeof(double) * b * N);
    for (p = 0; p < nprocs; ++p) {
        MPI_Type_free(&st[p]);
    }
    MPI_Type_free(&col);
    MPI_Type_free(&colr);
    MPI_Type_free(&rt);
    free(a); free(t); free(cnt); free(disp); free(rdisp); free(st);
    report("alltoallw", h, zc0);
}

/* ---- probes: Probe/Iprobe report the real size; Mprobe/Mrecv; order ------ */

static void fill(double *v, int n, int salt)
{
    int i;

    for (i = 0; i < n; ++i) {
        v[i] = val(rank, i, salt);
    }
}

static void probe(void)
{
    int n = 2048, count, flag, i;
    double *v = malloc(sizeof(double) * 2 * n), *w = malloc(sizeof(double) * 2 * n);
    double small[4];
    MPI_Datatype vec;
    MPI_Status s;
    MPI_Message msg;
    MPI_Request rq;
    uint64_t h = 0xcbf29ce484222325ull;
    long zc0 = zcopy_now();

    MPI_Type_vector(n / 16, 16, 32, MPI_DOUBLE, &vec);   /* 8 KiB of data */
    MPI_Type_commit(&vec);
    if (rank == 0) {
        fill(v, 2 * n, 1);
        small[0] = 42;
        MPI_Send(small, 4, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);   /* A: tag 1 */
        MPI_Send(v, 1, vec, 1, 2, MPI_COMM_WORLD);            /* B: tag 2 */
        fill(v, 2 * n, 2);
        MPI_Send(v, 1, vec, 1, 1, MPI_COMM_WORLD);            /* C: tag 1 */
        fill(v, 2 * n, 3);
        MPI_Send(v, 1, vec, 1, 3, MPI_COMM_WORLD);            /* D: tag 3 */
        fill(v, 2 * n, 4);
        MPI_Send(v, 1, vec, 1, 4, MPI_COMM_WORLD);            /* E: tag 4 */
    } else if (rank == 1) {
        /* probe tag 2 first: B, the real size of 1 vector */
        MPI_Probe(0, 2, MPI_COMM_WORLD, &s);
        MPI_Get_count(&s, vec, &count);
        CHECK(count == 1, "probe count %d", count);
        MPI_Get_count(&s, MPI_DOUBLE, &count);
        CHECK(count == n, "probe count doubles %d", count);
        MPI_Get_elements(&s, vec, &count);
        CHECK(count == n, "probe elements %d", count);
        /* non-overtaking: ANY_TAG from 0 gives A (tag 1) first */
        MPI_Recv(small, 4, MPI_DOUBLE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &s);
        CHECK(s.MPI_TAG == 1 && small[0] == 42, "order: tag %d", s.MPI_TAG);
        memset(w, 0, sizeof(double) * 2 * n);
        MPI_Recv(w, n, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, &s);    /* B */
        MPI_Get_count(&s, MPI_DOUBLE, &count);
        CHECK(count == n, "B count %d", count);
        for (i = 0; i < n; ++i) {
            if (w[i] != val(0, (i / 16) * 32 + i % 16, 1)) {
                FAIL("B[%d]", i);
                break;
            }
        }
        h = hash_bytes(h, w, sizeof(double) * n);
        /* Iprobe until C arrives, then Mprobe + Mrecv into a vector */
        do {
            MPI_Iprobe(0, 1, MPI_COMM_WORLD, &flag, &s);
        } while (!flag);
        MPI_Get_count(&s, MPI_BYTE, &count);
        CHECK(count == n * 8, "iprobe bytes %d", count);
        MPI_Mprobe(0, 1, MPI_COMM_WORLD, &msg, &s);
        MPI_Get_count(&s, vec, &count);
        CHECK(count == 1, "mprobe count %d", count);
        memset(w, 0, sizeof(double) * 2 * n);
        MPI_Mrecv(w, 1, vec, &msg, &s);
        CHECK(msg == MPI_MESSAGE_NULL, "message not consumed");
        for (i = 0; i < n; ++i) {
            int k = (i / 16) * 32 + i % 16;
            if (w[k] != val(0, k, 2)) {
                FAIL("C[%d]", k);
                break;
            }
        }
        h = hash_bytes(h, w, sizeof(double) * 2 * n);
        /* Improbe + Imrecv of D, into contiguous doubles */
        do {
            MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                        &msg, &s);
        } while (!flag);
        CHECK(s.MPI_TAG == 3 && s.MPI_SOURCE == 0, "improbe %d/%d",
              s.MPI_SOURCE, s.MPI_TAG);
        MPI_Imrecv(w, n, MPI_DOUBLE, &msg, &rq);
        MPI_Wait(&rq, &s);
        MPI_Get_count(&s, MPI_DOUBLE, &count);
        CHECK(count == n, "D count %d", count);
        for (i = 0; i < n; ++i) {
            if (w[i] != val(0, (i / 16) * 32 + i % 16, 3)) {
                FAIL("D[%d]", i);
                break;
            }
        }
        h = hash_bytes(h, w, sizeof(double) * n);
        /* Probe E, then a plain receive of it */
        MPI_Probe(MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &s);
        MPI_Get_count(&s, vec, &count);
        CHECK(count == 1, "E probe count %d", count);
        memset(w, 0, sizeof(double) * 2 * n);
        MPI_Recv(w, 1, vec, s.MPI_SOURCE, s.MPI_TAG, MPI_COMM_WORLD, &s);
        h = hash_bytes(h, w, sizeof(double) * 2 * n);
    }
    MPI_Type_free(&vec);
    free(v);
    free(w);
    report("probe", h, zc0);
}

/* ---- persistent requests --------------------------------------------------- */

static void persistent(void)
{
    int n = 2048, it, i, k, flag, idx[2], right = (rank + 1) % nprocs,
        left = (rank + nprocs - 1) % nprocs;
    double *v = malloc(sizeof(double) * n), *w = malloc(sizeof(double) * n);
    MPI_Datatype vec;
    MPI_Request rq[2], made[2];
    uint64_t h = 0xcbf29ce484222325ull;
    long zc0 = zcopy_now();

    MPI_Type_vector(n / 64, 32, 64, MPI_DOUBLE, &vec);     /* 256 B blocks */
    MPI_Type_commit(&vec);
    MPI_Recv_init(w, 1, vec, left, 5, MPI_COMM_WORLD, &rq[0]);
    MPI_Send_init(v, 1, vec, right, 5, MPI_COMM_WORLD, &rq[1]);
    made[0] = rq[0];
    made[1] = rq[1];
    /* each completion call in turn; after it the variables hold the
     * persistent requests again (inactive), the handles MPI gave */
    for (it = 0; it < 12; ++it) {
        fill(v, n, 10 + it);
        memset(w, 0, sizeof(double) * n);
        if (it % 2) {
            MPI_Startall(2, rq);
        } else {
            MPI_Start(&rq[0]);
            MPI_Start(&rq[1]);
        }
        switch (it % 6) {
        case 0:
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
            break;
        case 1:
            MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
            MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
            break;
        case 2:
            for (k = 0; k < 2; ++k) {
                MPI_Waitany(2, rq, &idx[0], MPI_STATUS_IGNORE);
            }
            break;
        case 3:
            do {
                MPI_Testall(2, rq, &flag, MPI_STATUSES_IGNORE);
            } while (!flag);
            break;
        case 4:
            for (k = 0; k < 2; k += i) {
                MPI_Waitsome(2, rq, &i, idx, MPI_STATUSES_IGNORE);
            }
            break;
        default:
            for (k = 0; k < 2; ++k) {
                do {
                    MPI_Test(&rq[k], &flag, MPI_STATUS_IGNORE);
                } while (!flag);
            }
        }
        CHECK((rq[0] == made[0]) && (rq[1] == made[1]),
              "persistent it %d: the variables are not the persistent "
              "requests after completion (%d %d)", it, rq[0] == made[0],
              rq[1] == made[1]);
        for (i = 0; i < n; ++i) {
            double want = ((i % 64) < 32) ? val(left, i, 10 + it) : 0;
            if (w[i] != want) {
                FAIL("persistent it %d [%d] %g != %g", it, i, w[i], want);
                break;
            }
        }
        h = hash_bytes(h, w, sizeof(double) * n);
    }
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);
    MPI_Type_free(&vec);
    free(v);
    free(w);
    report("persistent", h, zc0);
}

/* ---- wildcards: ANY_SOURCE / ANY_TAG, per-source order -------------------- */

static void wildcards(void)
{
    int n = 2048, k, i, msgs = 3, got;
    double *v = malloc(sizeof(double) * n), *w = malloc(sizeof(double) * n);
    int *next = calloc(nprocs, sizeof(int));
    MPI_Datatype vec;
    MPI_Status s;
    uint64_t h = 0xcbf29ce484222325ull;
    long zc0 = zcopy_now();

    MPI_Type_vector(n / 8, 4, 8, MPI_DOUBLE, &vec);          /* 32 B blocks */
    MPI_Type_commit(&vec);
    if (rank != 0) {
        for (k = 0; k < msgs; ++k) {
            fill(v, n, 20 + k);
            MPI_Send(v, 1, vec, 0, 100 + k, MPI_COMM_WORLD);
        }
    } else {
        for (got = 0; got < msgs * (nprocs - 1); ++got) {
            memset(w, 0, sizeof(double) * n);
            MPI_Recv(w, 1, vec, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                     &s);
            k = next[s.MPI_SOURCE]++;
            CHECK(s.MPI_TAG == 100 + k, "from %d: tag %d, expected %d",
                  s.MPI_SOURCE, s.MPI_TAG, 100 + k);
            for (i = 0; i < n; ++i) {
                double want = ((i % 8) < 4) ? val(s.MPI_SOURCE, i, 20 + k) : 0;
                if (w[i] != want) {
                    FAIL("wildcard from %d msg %d [%d]", s.MPI_SOURCE, k, i);
                    break;
                }
            }
        }
        for (k = 1; k < nprocs; ++k) {
            h = hash_bytes(h, &next[k], sizeof(int));
        }
    }
    MPI_Type_free(&vec);
    free(v); free(w); free(next);
    report("wildcards", h, zc0);
}

/* ---- truncation ------------------------------------------------------------ */

static void truncation(void)
{
    int n = 2048, count, rc, cls;
    double *v = malloc(sizeof(double) * 2 * n), *w = malloc(sizeof(double) * 2 * n);
    MPI_Datatype vec;
    MPI_Status s;
    uint64_t h = 0xcbf29ce484222325ull;
    long zc0 = zcopy_now();

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Type_vector(n / 16, 8, 16, MPI_DOUBLE, &vec);        /* 8 KiB data */
    MPI_Type_commit(&vec);
    if (rank == 0) {
        fill(v, 2 * n, 30);
        MPI_Send(v, 2, vec, 1, 40, MPI_COMM_WORLD);   /* 16 KiB */
        MPI_Send(v, 1, MPI_DOUBLE, 1, 41, MPI_COMM_WORLD);
    } else if (rank == 1) {
        memset(w, 0, sizeof(double) * 2 * n);
        rc = MPI_Recv(w, 1, vec, 0, 40, MPI_COMM_WORLD, &s);  /* 8 KiB room */
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "error class %d", cls);
        h = hash_bytes(h, &cls, sizeof(cls));
        /* a small message into a smaller buffer (a zero-copy message
         * truncated into a receive smaller than a control message is not
         * supported: see README) */
        rc = MPI_Recv(w, 0, MPI_DOUBLE, 0, 41, MPI_COMM_WORLD, &s);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "small: error class %d", cls);
        h = hash_bytes(h, &cls, sizeof(cls));
        (void)count;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Type_free(&vec);
    free(v); free(w);
    report("truncation", h, zc0);
}

/* ---- indexed particle lists (type maps differ on the two sides) ---------- */

static void indexed(void)
{
    int np = 300, i, right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    int *idx = malloc(sizeof(int) * np);
    double *parts = malloc(sizeof(double) * 3 * 4 * np);  /* >= 9 np */
    double *packed = malloc(sizeof(double) * 3 * np);
    double *back = malloc(sizeof(double) * 3 * 4 * np);
    MPI_Datatype list;
    MPI_Request rq[2];
    unsigned seed = 12345;
    uint64_t h = 0xcbf29ce484222325ull;
    long zc0 = zcopy_now();

    /* every rank draws the same seeded increasing indices: xyz of particle
     * k at idx[k] doubles, gaps of 0..2 particles between them */
    for (i = 0; i < np; ++i) {
        seed   = seed * 1103515245 + 12345;
        idx[i] = 3 * (3 * i + (int)((seed >> 16) % 3));
    }
    MPI_Type_create_indexed_block(np, 3, idx, MPI_DOUBLE, &list);
    MPI_Type_commit(&list);
    fill(parts, 3 * 4 * np, 50);
    /* indexed send -> contiguous receive */
    MPI_Irecv(packed, 3 * np, MPI_DOUBLE, left, 60, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(parts, 1, list, right, 60, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    for (i = 0; i < 3 * np; ++i) {
        if (packed[i] != val(left, idx[i / 3] + i % 3, 50)) {
            FAIL("packed[%d]", i);
            break;
        }
    }
    h = hash_bytes(h, packed, sizeof(double) * 3 * np);
    /* contiguous send -> indexed receive */
    memset(back, 0, sizeof(double) * 3 * 4 * np);
    MPI_Irecv(back, 1, list, left, 61, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(packed, 3 * np, MPI_DOUBLE, right, 61, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    h = hash_bytes(h, back, sizeof(double) * 3 * 4 * np);
    /* indexed -> indexed */
    memset(back, 0, sizeof(double) * 3 * 4 * np);
    MPI_Irecv(back, 1, list, left, 62, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(parts, 1, list, right, 62, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    for (i = 0; i < 3 * np; ++i) {
        int k = idx[i / 3] + i % 3;
        if (back[k] != val(left, k, 50)) {
            FAIL("back[%d]", k);
            break;
        }
    }
    h = hash_bytes(h, back, sizeof(double) * 3 * 4 * np);
    MPI_Type_free(&list);
    free(idx); free(parts); free(packed); free(back);
    report("indexed", h, zc0);
}

/* ---- send modes, self, PROC_NULL, zero counts, cancel, escape ------------ */

static void modes(void)
{
    int n = 2048, i, right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    double *v = malloc(sizeof(double) * n), *w = malloc(sizeof(double) * n);
    MPI_Datatype vec;
    MPI_Request rq[2];
    MPI_Status s;
    int bsize = n * 8 + MPI_BSEND_OVERHEAD, flag, count;
    void *bbuf = malloc(bsize);
    uint64_t h = 0xcbf29ce484222325ull;
    long zc0 = zcopy_now();

    MPI_Type_vector(n / 32, 16, 32, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    fill(v, n, 70);
    /* Ssend / Issend */
    memset(w, 0, sizeof(double) * n);
    MPI_Irecv(w, 1, vec, left, 71, MPI_COMM_WORLD, &rq[0]);
    MPI_Ssend(v, 1, vec, right, 71, MPI_COMM_WORLD);
    MPI_Wait(&rq[0], &s);
    h = hash_bytes(h, w, sizeof(double) * n);
    MPI_Irecv(w, 1, vec, left, 72, MPI_COMM_WORLD, &rq[0]);
    MPI_Issend(v, 1, vec, right, 72, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    h = hash_bytes(h, w, sizeof(double) * n);
    /* Rsend: the receive is posted before the barrier */
    memset(w, 0, sizeof(double) * n);
    MPI_Irecv(w, 1, vec, left, 73, MPI_COMM_WORLD, &rq[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Rsend(v, 1, vec, right, 73, MPI_COMM_WORLD);
    MPI_Wait(&rq[0], &s);
    h = hash_bytes(h, w, sizeof(double) * n);
    /* Bsend */
    MPI_Buffer_attach(bbuf, bsize);
    memset(w, 0, sizeof(double) * n);
    MPI_Irecv(w, 1, vec, left, 74, MPI_COMM_WORLD, &rq[0]);
    MPI_Bsend(v, 1, vec, right, 74, MPI_COMM_WORLD);
    MPI_Wait(&rq[0], &s);
    MPI_Buffer_detach(&bbuf, &bsize);
    h = hash_bytes(h, w, sizeof(double) * n);
    for (i = 0; i < n; ++i) {
        if (((i % 32) < 16) && (w[i] != val(left, i, 70))) {
            FAIL("modes [%d]", i);
            break;
        }
    }
    /* self */
    memset(w, 0, sizeof(double) * n);
    MPI_Irecv(w, 1, vec, rank, 75, MPI_COMM_WORLD, &rq[0]);
    MPI_Send(v, 1, vec, rank, 75, MPI_COMM_WORLD);
    MPI_Wait(&rq[0], &s);
    CHECK(w[1] == val(rank, 1, 70), "self");
    h = hash_bytes(h, w, sizeof(double) * n);
    /* PROC_NULL and zero counts */
    MPI_Send(v, 1, vec, MPI_PROC_NULL, 76, MPI_COMM_WORLD);
    MPI_Recv(w, 1, vec, MPI_PROC_NULL, 76, MPI_COMM_WORLD, &s);
    CHECK(s.MPI_SOURCE == MPI_PROC_NULL, "proc null source %d", s.MPI_SOURCE);
    MPI_Irecv(w, 0, vec, left, 77, MPI_COMM_WORLD, &rq[0]);
    MPI_Send(v, 0, vec, right, 77, MPI_COMM_WORLD);
    MPI_Wait(&rq[0], &s);
    MPI_Get_count(&s, vec, &count);
    CHECK(count == 0, "zero count %d", count);
    /* MPI_Request_free of an active receive: it still completes */
    MPI_Irecv(w, 1, vec, left, 80, MPI_COMM_WORLD, &rq[0]);
    MPI_Request_free(&rq[0]);
    MPI_Ssend(v, 1, vec, right, 80, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    /* cancel a large receive that nothing matches */
    MPI_Irecv(w, 1, vec, left, 78, MPI_COMM_WORLD, &rq[0]);
    MPI_Cancel(&rq[0]);
    MPI_Wait(&rq[0], &s);
    MPI_Test_cancelled(&s, &flag);
    CHECK(flag, "not cancelled");
    /* escape: exactly Z contiguous bytes starting with pml/umr's magic
     * ("mlx5umr!" + the second word) must arrive as data */
    {
        uint64_t e[UMR_MPI_CTL_SIZE / 8];
        for (i = 0; i < UMR_MPI_CTL_SIZE / 8; ++i) {
            e[i] = 0x1111111111111111ull * (i % 15) + rank;
        }
        e[0] = UMR_MPI_MAGIC0;
        e[1] = UMR_MPI_MAGIC1;
        memset(w, 0, sizeof(double) * n);
        MPI_Irecv(w, sizeof(double) * n, MPI_BYTE, left, 79, MPI_COMM_WORLD,
                  &rq[0]);
        MPI_Send(e, UMR_MPI_CTL_SIZE, MPI_BYTE, right, 79, MPI_COMM_WORLD);
        MPI_Wait(&rq[0], &s);
        MPI_Get_count(&s, MPI_BYTE, &count);
        CHECK(count == UMR_MPI_CTL_SIZE, "escape count %d", count);
        CHECK(((uint64_t*)w)[0] == UMR_MPI_MAGIC0 &&
              ((uint64_t*)w)[5] == 0x1111111111111111ull * 5 + left &&
              ((uint64_t*)w)[UMR_MPI_CTL_SIZE / 8 - 1] ==
              0x1111111111111111ull * ((UMR_MPI_CTL_SIZE / 8 - 1) % 15) +
              left, "escape data");
        h = hash_bytes(h, w, UMR_MPI_CTL_SIZE);
    }
    MPI_Type_free(&vec);
    free(v); free(w); free(bbuf);
    report("modes", h, zc0);
}

/* ---- fresh buffers: unmapped and mapped again between messages ----------- */

/* len bytes of fresh anonymous memory, at `at` when that is free again */
static double *map_fresh(void *at, size_t len)
{
    void *p = mmap(at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
                   MAP_ANONYMOUS | ((at != NULL) ? MAP_FIXED_NOREPLACE : 0),
                   -1, 0);

    if ((p == MAP_FAILED) && (at != NULL)) {
        p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    }
    return (p == MAP_FAILED) ? NULL : p;
}

static void fresh(void)
{
    size_t len = 256 * 1024, n = len / sizeof(double), i;
    int it, right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    double *v = NULL, *w = NULL;
    MPI_Datatype vec;
    MPI_Request rq[2];
    uint64_t h = 0xcbf29ce484222325ull;
    long zc0 = zcopy_now();

    MPI_Type_vector(n / 64, 32, 64, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    for (it = 0; it < 4; ++it) {
        /* other pages at the same addresses: a registration cache must
         * not reuse what the last ones had (a NIC would reach the old
         * pages through it) */
        v = map_fresh(v, len);
        w = map_fresh(w, len);
        if ((v == NULL) || (w == NULL)) {
            FAIL("mmap");
            break;
        }
        fill(v, n, 90 + it);
        MPI_Irecv(w, 1, vec, left, 95, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(v, 1, vec, right, 95, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        for (i = 0; i < n; ++i) {
            double want = ((i % 64) < 32) ? val(left, i, 90 + it) : 0;
            if (w[i] != want) {
                FAIL("fresh it %d [%zu] %g != %g", it, i, w[i], want);
                break;
            }
        }
        h = hash_bytes(h, w, len);
        munmap(v, len);
        munmap(w, len);
    }
    MPI_Type_free(&vec);
    report("fresh", h, zc0);
}

/* ---- send buffers the process may only read -------------------------------- */

/* n doubles val(rank, i, salt) in a file mapped read-only (`flags`:
 * MAP_PRIVATE or MAP_SHARED); the file is unlinked already */
static double *map_read_only_file(size_t n, int salt, int flags)
{
    char path[] = "/tmp/pml-umr-rdonly-XXXXXX";
    double *tmp = malloc(n * sizeof(double)), *p = MAP_FAILED;
    int fd      = mkstemp(path);

    if ((fd >= 0) && (tmp != NULL)) {
        unlink(path);
        fill(tmp, (int)n, salt);
        if (write(fd, tmp, n * sizeof(double)) == (ssize_t)(n * sizeof(double))) {
            p = mmap(NULL, n * sizeof(double), PROT_READ, flags, fd, 0);
        }
    }
    if (fd >= 0) {
        close(fd);
    }
    free(tmp);
    return (p == MAP_FAILED) ? NULL : p;
}

/* Vectors sent from memory MPI may only read (MPI never writes a send
 * buffer): a PROT_READ file mapping, private and shared, and a buffer
 * mprotect'ed to PROT_READ. A NIC pins a registration with write access
 * for writing, which the kernel refuses there. */
static void rdonly(void)
{
    size_t len = 256 * 1024, n = len / sizeof(double), i;
    int s, it, right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    double *src[3], *w = malloc(len);
    MPI_Datatype vec;
    MPI_Request rq[2];
    uint64_t h = 0xcbf29ce484222325ull;
    long zc0 = zcopy_now();

    src[0] = map_read_only_file(n, 70, MAP_PRIVATE);
    src[1] = map_read_only_file(n, 71, MAP_SHARED);
    src[2] = mmap(NULL, len, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (src[2] == MAP_FAILED) {
        src[2] = NULL;
    } else {
        fill(src[2], (int)n, 72);
        mprotect(src[2], len, PROT_READ);
    }
    if ((src[0] == NULL) || (src[1] == NULL) || (src[2] == NULL) ||
        (w == NULL)) {
        FAIL("rdonly: no read-only buffers");
        return;
    }

    MPI_Type_vector(n / 64, 32, 64, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    for (s = 0; s < 3; ++s) {
        for (it = 0; it < 2; ++it) {
            memset(w, 0, len);
            MPI_Irecv(w, 1, vec, left, 96, MPI_COMM_WORLD, &rq[0]);
            MPI_Isend(src[s], 1, vec, right, 96, MPI_COMM_WORLD, &rq[1]);
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
            for (i = 0; i < n; ++i) {
                double want = ((i % 64) < 32) ? val(left, i, 70 + s) : 0;
                if (w[i] != want) {
                    FAIL("rdonly source %d it %d [%zu] %g != %g", s, it, i,
                         w[i], want);
                    break;
                }
            }
            h = hash_bytes(h, w, len);
        }
    }
    MPI_Type_free(&vec);
    for (s = 0; s < 3; ++s) {
        munmap(src[s], len);
    }
    free(w);
    report("rdonly", h, zc0);
}

/* ---- intercommunicator ------------------------------------------------------ */

static void intercomm(void)
{
    int n = 2048, color = rank % 2, lrank, i;
    double *v = malloc(sizeof(double) * n), *w = calloc(n, sizeof(double));
    MPI_Comm local, inter;
    MPI_Datatype vec;
    MPI_Status s;
    uint64_t h = 0xcbf29ce484222325ull;
    long zc0 = zcopy_now();

    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
    MPI_Comm_rank(local, &lrank);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 90, &inter);
    MPI_Type_vector(n / 32, 16, 32, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    fill(v, n, 80);
    if ((nprocs % 2) == 0) {
        /* local rank k of one group talks with local rank k of the other */
        MPI_Sendrecv(v, 1, vec, lrank, 91, w, 1, vec, lrank, 91, inter, &s);
        for (i = 0; i < n; ++i) {
            double want = ((i % 32) < 16) ? val(2 * lrank + 1 - color, i, 80) : 0;
            if (w[i] != want) {
                FAIL("intercomm [%d]", i);
                break;
            }
        }
        h = hash_bytes(h, w, sizeof(double) * n);
    }
    MPI_Type_free(&vec);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    free(v); free(w);
    report("intercomm", h, zc0);
}

/* ---- freed datatypes: a new type in the same buffer gets a new key ------- */

static void retype(void)
{
    int n = 8192, it, i, right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    double *v = malloc(sizeof(double) * n), *w = malloc(sizeof(double) * n);
    MPI_Datatype vec;
    MPI_Request rq[2];
    uint64_t h = 0xcbf29ce484222325ull;
    long zc0 = zcopy_now();

    fill(v, n, 60);
    for (it = 0; it < 6; ++it) {
        /* same buffers, a type freed and made again, blocks of 16, 32 or
         * 64 doubles at stride 2x: a cached key of the old layout would put
         * the data elsewhere */
        int bl = 16 << (it % 3);
        MPI_Type_vector(n / (2 * bl), bl, 2 * bl, MPI_DOUBLE, &vec);
        MPI_Type_commit(&vec);
        memset(w, 0, sizeof(double) * n);
        MPI_Irecv(w, 1, vec, left, 96, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(v, 1, vec, right, 96, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        MPI_Type_free(&vec);
        for (i = 0; i < n; ++i) {
            double want = ((i % (2 * bl)) < bl) ? val(left, i, 60) : 0;
            if (w[i] != want) {
                FAIL("retype it %d [%d] %g != %g", it, i, w[i], want);
                break;
            }
        }
        h = hash_bytes(h, w, sizeof(double) * n);
    }
    free(v);
    free(w);
    report("retype", h, zc0);
}

/* ---- blocking receives: checked after the wrapped PML's own MPI_Recv ---- */

/* Exactly Z contiguous bytes (the control message's size) through blocking
 * calls in a ring, into a receive of 2 Z; `magic`: they start with pml/umr's
 * magic (the escape). Every byte checked, and the bytes after them. */
static uint64_t blocking_bytes(uint64_t h, int tag, int magic)
{
    static unsigned char out[UMR_MPI_CTL_SIZE], in[2 * UMR_MPI_CTL_SIZE];
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    uint64_t head[2] = {UMR_MPI_MAGIC0, UMR_MPI_MAGIC1};
    MPI_Status s;
    int i, count;

    for (i = 0; i < (int)sizeof(out); ++i) {
        out[i] = (unsigned char)(i * 13 + rank);
    }
    if (magic) {
        memcpy(out, head, sizeof(head));
    }
    memset(in, 0, sizeof(in));
    if (rank % 2 == 0) {
        MPI_Send(out, sizeof(out), MPI_BYTE, right, tag, MPI_COMM_WORLD);
    }
    MPI_Recv(in, sizeof(in), MPI_BYTE, left, tag, MPI_COMM_WORLD, &s);
    if (rank % 2 != 0) {
        MPI_Send(out, sizeof(out), MPI_BYTE, right, tag, MPI_COMM_WORLD);
    }
    MPI_Get_count(&s, MPI_BYTE, &count);
    CHECK(count == UMR_MPI_CTL_SIZE, "Z bytes (magic %d): count %d", magic,
          count);
    for (i = 0; i < (int)sizeof(in); ++i) {
        unsigned char want = (i >= UMR_MPI_CTL_SIZE) ? 0 :
                             (magic && (i < 16)) ? ((unsigned char*)head)[i] :
                             (unsigned char)(i * 13 + left);
        if (in[i] != want) {
            FAIL("Z bytes (magic %d): in[%d] = %d, expected %d", magic, i,
                 in[i], want);
            break;
        }
    }
    return hash_bytes(h, in, sizeof(in));
}

/* Ring exchange with MPI_Sendrecv-free blocking calls: even ranks send
 * first. Three messages a pair: a vector (sent zero-copy when forced)
 * into a contiguous receive and into a vector receive, then exactly Z
 * contiguous bytes of ordinary data (the control message's size, no
 * magic) into a larger receive, and the same with the magic in front. */
static void blocking(void)
{
    int n = 4096, i, k, count, right = (rank + 1) % nprocs,
        left = (rank + nprocs - 1) % nprocs;
    double *v = malloc(sizeof(double) * n), *w = malloc(sizeof(double) * n);
    MPI_Datatype vec;
    MPI_Status s;
    uint64_t h = 0xcbf29ce484222325ull;
    long zc0 = zcopy_now();

    MPI_Type_vector(n / 8, 2, 8, MPI_DOUBLE, &vec);          /* 16 B blocks */
    MPI_Type_commit(&vec);
    fill(v, n, 70);
    for (k = 0; k < 2; ++k) {
        /* k = 0: vector -> contiguous doubles; k = 1: vector -> vector */
        memset(w, 0, sizeof(double) * n);
        if (rank % 2 == 0) {
            MPI_Send(v, 1, vec, right, 80 + k, MPI_COMM_WORLD);
        }
        if (k == 0) {
            MPI_Recv(w, n / 4, MPI_DOUBLE, left, 80, MPI_COMM_WORLD, &s);
        } else {
            MPI_Recv(w, 1, vec, left, 81, MPI_COMM_WORLD, &s);
        }
        if (rank % 2 != 0) {
            MPI_Send(v, 1, vec, right, 80 + k, MPI_COMM_WORLD);
        }
        MPI_Get_count(&s, MPI_DOUBLE, &count);
        CHECK(count == n / 4, "blocking %d: count %d, expected %d", k, count,
              n / 4);
        CHECK(s.MPI_SOURCE == left && s.MPI_TAG == 80 + k,
              "blocking %d: source %d tag %d", k, s.MPI_SOURCE, s.MPI_TAG);
        for (i = 0; i < n; ++i) {
            double want = (k == 0) ? ((i < n / 4) ?
                              val(left, (i / 2) * 8 + i % 2, 70) : 0) :
                          (((i % 8) < 2) ? val(left, i, 70) : 0);
            if (w[i] != want) {
                FAIL("blocking %d: w[%d]", k, i);
                break;
            }
        }
        h = hash_bytes(h, w, sizeof(double) * n);
    }
    h = blocking_bytes(h, 82, 0);   /* ordinary data */
    h = blocking_bytes(h, 83, 1);   /* the escape, sent zero-copy */
    MPI_Type_free(&vec);
    free(v); free(w);
    report("blocking", h, zc0);
}

/* ---- operations on receive requests of Z bytes and more ------------------ */

/* (w, n) holds the left neighbour's every-other-32 pattern of `salt` */
static int reqops_check(const char *what, const double *w, int n, int left,
                        int salt)
{
    int i;

    for (i = 0; i < n; ++i) {
        double want = ((i % 64) < 32) ? val(left, i, salt) : 0;
        if (w[i] != want) {
            FAIL("reqops %s: w[%d] %g != %g", what, i, w[i], want);
            return 1;
        }
    }
    return 0;
}

static void reqops(void)
{
    int n = 2048, i, k, it, flag, idx[6], outcount, count, done;
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    double *v = malloc(sizeof(double) * n), *w = malloc(sizeof(double) * n);
    double *c = malloc(sizeof(double) * n), *d = malloc(sizeof(double) * n);
    double small[64], smallv[64];
    MPI_Datatype vec;
    MPI_Request rq[6], r1;
    MPI_Status s, st[6], tst[6];
    uint64_t h = 0xcbf29ce484222325ull;
    long zc0 = zcopy_now();

    MPI_Type_vector(n / 64, 32, 64, MPI_DOUBLE, &vec);   /* 8 KiB, 256 B blocks */
    MPI_Type_commit(&vec);

    /* 1. MPI_Request_free of an active receive that then gets a (zero-copy)
     * message: the data lands and the sender completes. The sender says
     * so afterwards (tag 121); its blocking send needed the receiver. */
    memset(w, 0, sizeof(double) * n);
    fill(v, n, 120);
    MPI_Irecv(w, 1, vec, left, 120, MPI_COMM_WORLD, &r1);
    MPI_Request_free(&r1);
    CHECK(r1 == MPI_REQUEST_NULL, "reqops free: request not null");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Send(v, 1, vec, right, 120, MPI_COMM_WORLD);
    MPI_Send(NULL, 0, MPI_BYTE, right, 121, MPI_COMM_WORLD);
    MPI_Recv(NULL, 0, MPI_BYTE, left, 121, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    reqops_check("freed", w, n, left, 120);
    h = hash_bytes(h, w, sizeof(double) * n);

    /* 2. MPI_Cancel of a pending receive of Z bytes and more */
    memset(w, 0, sizeof(double) * n);
    MPI_Irecv(w, 1, vec, left, 122, MPI_COMM_WORLD, &r1);
    MPI_Cancel(&r1);
    MPI_Wait(&r1, &s);
    MPI_Test_cancelled(&s, &flag);
    CHECK(flag, "reqops cancel: not cancelled");
    for (i = 0; i < n; ++i) {
        if (w[i] != 0) {
            FAIL("reqops cancel: w[%d] written", i);
            break;
        }
    }

    /* 3. a mix (below Z, zero-copy, contiguous >= Z) completed by Testsome,
     * Waitany, Testany; every status has the real source, tag and count */
    for (it = 0; it < 3; ++it) {
        memset(w, 0, sizeof(double) * n);
        memset(d, 0, sizeof(double) * n);
        memset(small, 0, sizeof(small));
        fill(v, n, 130 + it);
        fill(c, n, 140 + it);
        for (i = 0; i < 64; ++i) {
            smallv[i] = val(rank, i, 150 + it);
        }
        MPI_Irecv(small, 64, MPI_DOUBLE, left, 123, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(w, 1, vec, left, 124, MPI_COMM_WORLD, &rq[1]);
        MPI_Irecv(d, n, MPI_DOUBLE, MPI_ANY_SOURCE, 125, MPI_COMM_WORLD,
                  &rq[2]);
        MPI_Isend(c, n, MPI_DOUBLE, right, 125, MPI_COMM_WORLD, &rq[3]);
        MPI_Isend(v, 1, vec, right, 124, MPI_COMM_WORLD, &rq[4]);
        MPI_Isend(smallv, 64, MPI_DOUBLE, right, 123, MPI_COMM_WORLD, &rq[5]);
        for (k = 0; k < 6; ++k) {
            st[k].MPI_SOURCE = -7;   /* each one must be written */
        }
        done = 0;
        while (done < 6) {
            if (it == 0) {
                MPI_Testsome(6, rq, &outcount, idx, tst);
                CHECK(outcount != MPI_UNDEFINED, "reqops testsome: undefined");
                for (k = 0; (outcount != MPI_UNDEFINED) && (k < outcount);
                     ++k) {
                    st[idx[k]] = tst[k];   /* in completion order */
                }
                done += (outcount == MPI_UNDEFINED) ? 6 : outcount;
            } else if (it == 1) {
                MPI_Waitany(6, rq, &k, &s);
                st[k] = s;
                ++done;
            } else {
                MPI_Testany(6, rq, &k, &flag, &s);
                if (flag && (k != MPI_UNDEFINED)) {
                    st[k] = s;
                    ++done;
                }
            }
        }
        for (k = 0; k < 3; ++k) {
            int want = (k == 0) ? 64 : (k == 1) ? n / 2 : n;
            MPI_Get_count(&st[k], MPI_DOUBLE, &count);
            CHECK((st[k].MPI_SOURCE == left) && (st[k].MPI_TAG == 123 + k) &&
                  (count == want), "reqops mix it %d req %d: source %d tag %d "
                  "count %d, expected %d %d %d", it, k, st[k].MPI_SOURCE,
                  st[k].MPI_TAG, count, left, 123 + k, want);
        }
        reqops_check("mix", w, n, left, 130 + it);
        for (i = 0; i < n; ++i) {
            if ((d[i] != val(left, i, 140 + it)) ||
                ((i < 64) && (small[i] != val(left, i, 150 + it)))) {
                FAIL("reqops mix it %d: [%d] wrong", it, i);
                break;
            }
        }
        h = hash_bytes(h, w, sizeof(double) * n);
        h = hash_bytes(h, d, sizeof(double) * n);
        h = hash_bytes(h, small, sizeof(small));
    }

    /* 4. MPI_Request_get_status polls, then MPI_Wait gives the same status;
     * 5. the same with the message already there when the receive is
     * posted (the send was started before a barrier) */
    for (it = 0; it < 2; ++it) {
        memset(w, 0, sizeof(double) * n);
        fill(v, n, 160 + it);
        if (it == 1) {
            MPI_Isend(v, 1, vec, right, 126, MPI_COMM_WORLD, &rq[1]);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        MPI_Irecv(w, 1, vec, left, 126, MPI_COMM_WORLD, &rq[0]);
        if (it == 0) {
            MPI_Isend(v, 1, vec, right, 126, MPI_COMM_WORLD, &rq[1]);
        }
        do {
            MPI_Request_get_status(rq[0], &flag, &s);
        } while (!flag);
        MPI_Get_count(&s, MPI_DOUBLE, &count);
        CHECK((s.MPI_SOURCE == left) && (s.MPI_TAG == 126) && (count == n / 2),
              "reqops get_status %d: source %d tag %d count %d", it,
              s.MPI_SOURCE, s.MPI_TAG, count);
        reqops_check("get_status", w, n, left, 160 + it);
        MPI_Wait(&rq[0], &s);
        MPI_Get_count(&s, MPI_DOUBLE, &count);
        CHECK((s.MPI_SOURCE == left) && (count == n / 2),
              "reqops wait %d: source %d count %d", it, s.MPI_SOURCE, count);
        MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
        h = hash_bytes(h, w, sizeof(double) * n);
    }

    /* 6. a persistent receive freed while active */
    memset(w, 0, sizeof(double) * n);
    fill(v, n, 170);
    MPI_Recv_init(w, 1, vec, left, 127, MPI_COMM_WORLD, &r1);
    MPI_Start(&r1);
    MPI_Request_free(&r1);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Send(v, 1, vec, right, 127, MPI_COMM_WORLD);
    MPI_Send(NULL, 0, MPI_BYTE, right, 128, MPI_COMM_WORLD);
    MPI_Recv(NULL, 0, MPI_BYTE, left, 128, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    reqops_check("persistent freed", w, n, left, 170);
    h = hash_bytes(h, w, sizeof(double) * n);

    MPI_Type_free(&vec);
    free(v); free(w); free(c); free(d);
    report("reqops", h, zc0);
}

/* ---- broadcasts of a strided face: the collective component's own PML
 * requests (coll/adapt sets its completion callback on the receives it
 * posts with MCA_PML_CALL(irecv); test_pml_umr.sh runs this case with
 * adapt selected too) ------------------------------------------------------ */

static void bcast(void)
{
    int n = 4096, it, i, root;
    double *v = malloc(sizeof(double) * n);
    MPI_Datatype vec;
    MPI_Request rq;
    uint64_t h = 0xcbf29ce484222325ull;
    long zc0 = zcopy_now();
    double want;

    MPI_Type_vector(n / 16, 8, 16, MPI_DOUBLE, &vec);   /* 16 KiB */
    MPI_Type_commit(&vec);
    for (it = 0; it < 4; ++it) {
        root = it % nprocs;
        for (i = 0; i < n; ++i) {
            v[i] = (rank == root) ? val(root, i, it) : -1.0;
        }
        if (it & 1) {
            MPI_Ibcast(v, 1, vec, root, MPI_COMM_WORLD, &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        } else {
            MPI_Bcast(v, 1, vec, root, MPI_COMM_WORLD);
        }
        for (i = 0; i < n; ++i) {
            want = ((rank == root) || (i % 16 < 8)) ? val(root, i, it) : -1.0;
            CHECK(v[i] == want, "bcast %d from %d: element %d is %g, not %g",
                  it, root, i, v[i], want);
        }
        h = hash_bytes(h, v, sizeof(double) * n);
    }
    MPI_Type_free(&vec);
    free(v);
    report("bcast", h, zc0);
}

/* ---- a peer dies mid-transfer: the job must end, not hang ---------------- */

static void die(void)
{
    int n = 4096;
    double *v = calloc(n, sizeof(double));
    MPI_Datatype vec;
    MPI_Request rq;

    MPI_Type_vector(n / 16, 8, 16, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    if (rank == 0) {
        MPI_Isend(v, 1, vec, 1, 99, MPI_COMM_WORLD, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);   /* never acknowledged */
    } else if (rank == 1) {
        MPI_Probe(0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        _exit(3);                            /* dies holding the message */
    }
    MPI_Type_free(&vec);
    free(v);
}

static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    {"halo", halo}, {"neighbor", neighbor}, {"neighbor_open", neighbor_open},
    {"alltoallw", alltoallw},
    {"probe", probe}, {"persistent", persistent}, {"wildcards", wildcards},
    {"truncation", truncation}, {"indexed", indexed}, {"modes", modes},
    {"intercomm", intercomm}, {"fresh", fresh}, {"rdonly", rdonly},
    {"retype", retype},
    {"blocking", blocking}, {"reqops", reqops}, {"bcast", bcast},
    {"die", die},   /* only when named */
};

int main(int argc, char **argv)
{
    size_t c;
    int a, run;

    /* PML_UMR_TEST_THREAD_MULTIPLE=1: the same program at
     * MPI_THREAD_MULTIPLE (pml/umr then passes everything through) */
    if (getenv("PML_UMR_TEST_THREAD_MULTIPLE") != NULL) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        if (provided != MPI_THREAD_MULTIPLE) {
            printf("FAIL: MPI_THREAD_MULTIPLE not provided\n");
        }
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    pvars_init();
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
        run = (argc == 1) && strcmp(cases[c].name, "die");
        for (a = 1; a < argc; ++a) {
            run |= !strcmp(argv[a], cases[c].name);
        }
        if (run) {
            cases[c].fn();
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    if (pv_ok) {
        MPI_T_pvar_handle_free(session, &pv_handle[0]);
        MPI_T_pvar_handle_free(session, &pv_handle[1]);
        MPI_T_pvar_session_free(&session);
    }
    MPI_T_finalize();
    MPI_Finalize();
    return errors ? 1 : 0;
}
