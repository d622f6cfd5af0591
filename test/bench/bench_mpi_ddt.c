/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * bench_mpi_ddt: an unmodified MPI program that sends derived datatypes from
 * rank 0 to rank 1 and times them, every message verified byte for byte.
 * It knows nothing of mlx5_umr: contrib/run-mpi-bench.sh runs it under
 * several PMLs (ob1, ucx, pml/umr over each) and puts the results side by
 * side.
 *
 * Two modes per pattern, in the same run:
 *   ddt   MPI_Send/MPI_Recv of the derived datatype (the PML's datatype path)
 *   pack  MPI_Pack + contiguous MPI_Send + MPI_Unpack
 *
 * One message = rank 1 sends "ready" (0 B), rank 0 sends the data, rank 1
 * answers with a 0-byte ack; rank 0 times from just after "ready" to the ack,
 * so a time covers the data being in place on rank 1. Buffer filling and
 * checking are outside the time. Each pattern's time is the median over its
 * messages (at least -m, more while under the -T time budget).
 *
 * Verification: both ranks build, next to each MPI datatype, the list of its
 * contiguous blocks in type-map order (checked once against MPI_Pack). The
 * sender writes into its blocks 32-bit words keyed by (stream position,
 * message number); the receiver checks every word of every block of every
 * message, the 4 bytes before and after each block (guards), and the whole
 * buffer on a pattern's first and last message.
 *
 * Then a ping-pong of contiguous MPI_BYTE messages 0 B .. 64 KiB (half round
 * trip, median of -r samples of -i round trips (fewer above 4 KiB: -i * 4 KiB
 * / size, at least 50); every message's first and last byte checked, the
 * last message of a sample fully).
 *
 * Output: a readable table, plus machine-readable lines
 *   DATA <pattern> <param> <bytes> <blocks> <mean_block> <mode> <median_us>
 *        <min_us> <messages>
 *   LAT  <bytes> <median_us> <min_us> <round_trips>   (MPI_Send/MPI_Recv)
 *   LATI <bytes> <median_us> <min_us> <round_trips>   (MPI_Irecv+MPI_Wait)
 *   LATD, LATID: the same with pml/umr out of the call path (below)
 *   PAIR <pattern> <param> <median> <q1> <q3> <pairs>   direct / pml/umr
 *   LATP, LATIP <bytes> <median_diff_us> <q1> <q3> <median_ratio> <samples>
 *   VMSTATE start|end <median_ns> <min_ns> <max_ns> <round_trips>
 *        the state of the VM at the job's start and end: one cache line's
 *        round trip between the two ranks (bench_vmstate.h); on a VM it
 *        tells which runs are comparable
 * When pml/umr is interposed, the ddt messages alternate with messages in
 * mode "direct": the same MPI_Send/MPI_Recv with pml/umr taken out of the
 * call path (mca_pml_umr_bench_interpose), in the same job, memory and
 * processes, in the order A B B A A B ... so that neither comes first more
 * often. Each pair (one message of each) gives a ratio, direct time over
 * pml/umr time (>= 1: pml/umr no slower); PAIR has the median and
 * quartiles of those ratios. Pairs only a few milliseconds apart see the
 * same state of the machine, which whole runs on a VM do not. The
 * ping-pong alternates the same way, a sample (-i round trips) at a time;
 * LATP is the median of the paired differences, pml/umr - direct.
 *
 * usage: mpirun -np 2 bench_mpi_ddt [-s vector_bytes] [-n grid_n]
 *        [-m min_messages] [-M max_messages] [-T seconds_per_pattern]
 *        [-p pattern_substring] [-l|-L] [-i round_trips] [-r samples]
 *        [-V max_ns]
 *   -l: latency only; -L: no latency; -X 1|2|3: rank 1 damages a data byte,
 *   the byte after the last block or the buffer's last byte of its second
 *   message (the check must then fail the run); -V: on a VM, start in a
 *   state whose VM state probe is at most max_ns (the ranks sleep and probe
 *   again, up to 20 times; each probe a "VMSTATE settle" line), so that jobs
 *   are compared in the same state (contrib/vm-probe/README.md).
 */
#include <mpi.h>
#define BM_PROG "bench_mpi_ddt"
#include "bench_mpi.h"
#include "bench_vmstate.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

#define BM_GUARD       0xa5a5a5a5u
#define BM_GUARD_BYTE  0xa5
#define BM_MAX_PATTERNS 64

enum { BM_TAG_READY = 11, BM_TAG_DATA, BM_TAG_ACK, BM_TAG_LAT };
/* direct: the datatype again, with pml/umr (when interposed) taken out of
 * the call path in the same job: see bm_interpose */
enum { BM_MODE_DDT, BM_MODE_PACK, BM_MODE_DIRECT, BM_NUM_MODES };
static const char *bm_mode_names[BM_NUM_MODES] = { "ddt", "pack", "direct" };

/* pml/umr's benchmark hook (mca_pml_umr_bench_interpose), when pml/umr is
 * interposed in this job: found with dlsym, NULL otherwise. Every rank
 * switches, then a barrier, between messages. */
static int (*bm_interpose_fn)(int on);



/* ---- block lists: the type map of a datatype, in order ------------------ */

typedef struct bm_blk {
    size_t off, len;
} bm_blk_t;

typedef struct bm_blist {
    bm_blk_t *b;
    size_t   n, cap;
    size_t   bytes;
} bm_blist_t;

static void bm_blist_add(bm_blist_t *l, size_t off, size_t len)
{
    if ((len % 4) || (off % 4)) {
        BM_FAIL("pattern block (%zu, %zu) is not 4-byte aligned", off, len);
    }
    l->bytes += len;
    if ((l->n > 0) && (l->b[l->n - 1].off + l->b[l->n - 1].len == off)) {
        l->b[l->n - 1].len += len; /* adjacent in memory and in order */
        return;
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 1024;
        l->b   = realloc(l->b, l->cap * sizeof(*l->b));
        if (l->b == NULL) {
            BM_FAIL("out of memory");
        }
    }
    l->b[l->n].off   = off;
    l->b[l->n++].len = len;
}

static size_t bm_blist_end(const bm_blist_t *l)
{
    size_t i, end = 0;

    for (i = 0; i < l->n; ++i) {
        if (l->b[i].off + l->b[i].len > end) {
            end = l->b[i].off + l->b[i].len;
        }
    }
    return end;
}

/* ---- patterns ----------------------------------------------------------- */

typedef struct bm_pattern {
    char         name[24];
    char         param[40];
    MPI_Datatype stype, rtype;
    bm_blist_t   sb, rb;
    size_t       sspan, rspan;
} bm_pattern_t;

static bm_pattern_t bm_patterns[BM_MAX_PATTERNS];
static int bm_num_patterns;
static const char *bm_filter;
static int bm_corrupt;

static bm_pattern_t *bm_pattern_new(const char *name, const char *param)
{
    bm_pattern_t *p;
    char full[80];

    snprintf(full, sizeof(full), "%s %s", name, param);
    if ((bm_filter != NULL) && (strstr(full, bm_filter) == NULL)) {
        return NULL;
    }
    if (bm_num_patterns == BM_MAX_PATTERNS) {
        BM_FAIL("too many patterns");
    }
    p = &bm_patterns[bm_num_patterns++];
    memset(p, 0, sizeof(*p));
    snprintf(p->name, sizeof(p->name), "%s", name);
    snprintf(p->param, sizeof(p->param), "%s", param);
    return p;
}

/* Both sides the same type and block list. */
static void bm_pattern_same(bm_pattern_t *p)
{
    size_t i;

    p->rtype = p->stype;
    for (i = 0; i < p->sb.n; ++i) {
        bm_blist_add(&p->rb, p->sb.b[i].off, p->sb.b[i].len);
    }
}

/* vector(count, blocklen, stride) of bytes at `off` into a block list */
static void bm_vec_blocks(bm_blist_t *l, size_t off, size_t count,
                          size_t blocklen, size_t stride)
{
    size_t i;

    for (i = 0; i < count; ++i) {
        bm_blist_add(l, off + i * stride, blocklen);
    }
}

/* Vector sweep: blocks of `block` bytes, stride 2 * block, `total` bytes. */
static void bm_pat_vector(size_t block, size_t total)
{
    size_t count = total / block, dbl = block / 8;
    char param[40];
    bm_pattern_t *p;

    snprintf(param, sizeof(param), "%zu", block);
    if ((p = bm_pattern_new("vector", param)) == NULL) {
        return;
    }
    BM_MPI(MPI_Type_vector(count, dbl, 2 * dbl, MPI_DOUBLE, &p->stype));
    bm_vec_blocks(&p->sb, 0, count, block, 2 * block);
    bm_pattern_same(p);
}

/* Faces of an n^3 grid of doubles, C order grid[z][y][x], at x/y/z = 1. */
static void bm_pat_face(size_t n, char axis)
{
    const size_t d = sizeof(double);
    MPI_Datatype t;
    char name[24], param[40];
    bm_pattern_t *p;

    snprintf(name, sizeof(name), "face-%c", axis);
    snprintf(param, sizeof(param), "%zu^3", n);
    if ((p = bm_pattern_new(name, param)) == NULL) {
        return;
    }
    switch (axis) {
    case 'x': /* one double per (y, z) row */
        BM_MPI(MPI_Type_vector(n * n, 1, n, MPI_DOUBLE, &t));
        bm_vec_blocks(&p->sb, d, n * n, d, n * d);
        break;
    case 'y': /* one row of n doubles per plane */
        BM_MPI(MPI_Type_vector(n, n, n * n, MPI_DOUBLE, &t));
        bm_vec_blocks(&p->sb, n * d, n, n * d, n * n * d);
        break;
    default:  /* one whole plane: contiguous */
        BM_MPI(MPI_Type_contiguous(n * n, MPI_DOUBLE, &t));
        bm_blist_add(&p->sb, n * n * d, n * n * d);
        break;
    }
    /* the face starts at a displacement: resize the lb away with hindexed */
    {
        int one = 1;
        MPI_Aint disp = (axis == 'x') ? d : (axis == 'y') ? n * d : n * n * d;
        BM_MPI(MPI_Type_create_hindexed(1, &one, &disp, t, &p->stype));
        BM_MPI(MPI_Type_free(&t));
    }
    p->sspan = p->rspan = n * n * n * d;
    bm_pattern_same(p);
}

/* 2D subarray of doubles, C order. */
static void bm_pat_subarray(int rows, int cols, int srows, int scols, int r0,
                            int c0)
{
    int sizes[2] = { rows, cols }, sub[2] = { srows, scols },
        starts[2] = { r0, c0 };
    const size_t d = sizeof(double);
    char param[40];
    bm_pattern_t *p;

    snprintf(param, sizeof(param), "%dx%d of %dx%d", srows, scols, rows, cols);
    if ((p = bm_pattern_new("subarray2d", param)) == NULL) {
        return;
    }
    BM_MPI(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C,
                                    MPI_DOUBLE, &p->stype));
    bm_vec_blocks(&p->sb, ((size_t)r0 * cols + c0) * d, srows, scols * d,
                  cols * d);
    p->sspan = p->rspan = (size_t)rows * cols * d;
    bm_pattern_same(p);
}

/* FFT pencil: 3D subarray (C order) n x n x n of doubles, n x n x k at 0. */
static void bm_pat_fft(int n, int k)
{
    int sizes[3] = { n, n, n }, sub[3] = { n, n, k }, starts[3] = { 0, 0, 0 };
    const size_t d = sizeof(double);
    char param[40];
    bm_pattern_t *p;

    snprintf(param, sizeof(param), "%dx%dx%d of %d^3", n, n, k, n);
    if ((p = bm_pattern_new("fft-pencil", param)) == NULL) {
        return;
    }
    BM_MPI(MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C,
                                    MPI_DOUBLE, &p->stype));
    bm_vec_blocks(&p->sb, 0, (size_t)n * n, k * d, n * d);
    p->sspan = p->rspan = (size_t)n * n * n * d;
    bm_pattern_same(p);
}

/* Matrix transpose, the two sides different: the sender's s x s subarray
 * of an n x n matrix of doubles (rows of s doubles), received transposed,
 * each element in its own place: a vector of single doubles per column
 * (hvector(s, 1, 16 B, vector(s, 1, n, double)): every other column, so
 * that the check's guards around each block are gaps). */
static void bm_pat_transpose(int n, int s)
{
    int sizes[2] = { n, n }, sub[2] = { s, s }, starts[2] = { 0, 0 };
    const size_t d = sizeof(double);
    MPI_Datatype col;
    char param[40];
    bm_pattern_t *p;
    int r, c;

    snprintf(param, sizeof(param), "%dx%d of %dx%d", s, s, n, n);
    if ((p = bm_pattern_new("transpose", param)) == NULL) {
        return;
    }
    BM_MPI(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C,
                                    MPI_DOUBLE, &p->stype));
    bm_vec_blocks(&p->sb, 0, s, s * d, n * d);
    BM_MPI(MPI_Type_vector(s, 1, n, MPI_DOUBLE, &col));
    BM_MPI(MPI_Type_create_hvector(s, 1, 2 * d, col, &p->rtype));
    BM_MPI(MPI_Type_free(&col));
    for (r = 0; r < s; ++r) {
        for (c = 0; c < s; ++c) {
            bm_blist_add(&p->rb, ((size_t)c * n + 2 * r) * d, d);
        }
    }
    p->sspan = p->rspan = (size_t)n * n * d;
}

/* NAS LU y: vector(dim, 5 doubles, stride (dim + 2) * 5 doubles). */
static void bm_pat_nas_lu_y(int dim)
{
    char param[40];
    bm_pattern_t *p;

    snprintf(param, sizeof(param), "DIM %d", dim);
    if ((p = bm_pattern_new("nas-lu-y", param)) == NULL) {
        return;
    }
    BM_MPI(MPI_Type_vector(dim, 5, (dim + 2) * 5, MPI_DOUBLE, &p->stype));
    bm_vec_blocks(&p->sb, 0, dim, 40, (size_t)(dim + 2) * 40);
    bm_pattern_same(p);
}

/* NAS MG faces of a d1 x d2 x d3 grid (x fastest): x = hvector of vector(1
 * double), y = vector(d3-2, d1-2 doubles, stride d1*d2), z = vector(d2-2,
 * d1-2 doubles, stride d1) */
static void bm_pat_nas_mg(int d1, int d2, int d3, char axis)
{
    const size_t d = sizeof(double);
    MPI_Datatype inner;
    char name[24], param[40];
    bm_pattern_t *p;
    size_t z;

    snprintf(name, sizeof(name), "nas-mg-%c", axis);
    snprintf(param, sizeof(param), "%dx%dx%d", d1, d2, d3);
    if ((p = bm_pattern_new(name, param)) == NULL) {
        return;
    }
    switch (axis) {
    case 'x':
        BM_MPI(MPI_Type_vector(d2 - 2, 1, d1, MPI_DOUBLE, &inner));
        BM_MPI(MPI_Type_create_hvector(d3 - 2, 1, (MPI_Aint)d1 * d2 * d,
                                       inner, &p->stype));
        BM_MPI(MPI_Type_free(&inner));
        for (z = 0; z < (size_t)d3 - 2; ++z) {
            bm_vec_blocks(&p->sb, z * d1 * d2 * d, d2 - 2, d, d1 * d);
        }
        break;
    case 'y':
        BM_MPI(MPI_Type_vector(d3 - 2, d1 - 2, d1 * d2, MPI_DOUBLE,
                               &p->stype));
        bm_vec_blocks(&p->sb, 0, d3 - 2, (d1 - 2) * d, (size_t)d1 * d2 * d);
        break;
    default:
        BM_MPI(MPI_Type_vector(d2 - 2, d1 - 2, d1, MPI_DOUBLE, &p->stype));
        bm_vec_blocks(&p->sb, 0, d2 - 2, (d1 - 2) * d, (size_t)d1 * d);
        break;
    }
    p->sspan = p->rspan = (size_t)d1 * d2 * d3 * d;
    bm_pattern_same(p);
}

/* MILC su3 zdown: hvector(2) of vector(d5, d2*d3/2 su3 vectors of 24 B,
 * stride d4 * that); one half of the lattice each. */
static void bm_pat_milc(int d2, int d3, int d4, int d5)
{
    size_t blk = (size_t)d2 * d3 / 2 * 24, half = (size_t)d5 * d4 * blk;
    MPI_Datatype su3, inner;
    char param[40];
    bm_pattern_t *p;
    int h;

    snprintf(param, sizeof(param), "%dx%dx%dx%d", d2, d3, d4, d5);
    if ((p = bm_pattern_new("milc-su3-zdown", param)) == NULL) {
        return;
    }
    BM_MPI(MPI_Type_contiguous(6, MPI_FLOAT, &su3)); /* 3 complex floats */
    BM_MPI(MPI_Type_vector(d5, d2 * d3 / 2, d4 * d2 * d3 / 2, su3, &inner));
    BM_MPI(MPI_Type_create_hvector(2, 1, half, inner, &p->stype));
    BM_MPI(MPI_Type_free(&inner));
    BM_MPI(MPI_Type_free(&su3));
    for (h = 0; h < 2; ++h) {
        bm_vec_blocks(&p->sb, h * half, d5, blk, d4 * blk);
    }
    p->sspan = p->rspan = 2 * half;
    bm_pattern_same(p);
}

static unsigned bm_rand(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return (*state >> 8) & 0xffffff;
}

/* `count` distinct indices below `n`, seeded: a border list (unsorted) */
static int *bm_indices(int n, int count, unsigned seed, int sorted)
{
    int *idx = malloc(n * sizeof(int)), i, j, t;

    if (idx == NULL) {
        BM_FAIL("out of memory");
    }
    for (i = 0; i < n; ++i) {
        idx[i] = i;
    }
    for (i = 0; i < count; ++i) {
        j = i + bm_rand(&seed) % (n - i);
        t = idx[i]; idx[i] = idx[j]; idx[j] = t;
    }
    if (sorted) {
        for (i = 1; i < count; ++i) { /* insertion sort, small lists */
            for (j = i; (j > 0) && (idx[j - 1] > idx[j]); --j) {
                t = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = t;
            }
        }
    }
    return idx;
}

/*
 * LAMMPS atom exchange: the sender's type is a struct of 6 indexed_block
 * types over 6 per-atom arrays (x, v, f: 3 doubles; tag, type, q: 1 double),
 * the receiver's a struct of 6 contiguous runs appended to its arrays.
 */
static void bm_pat_lammps(int natoms, int nsend)
{
    static const int width[6] = { 3, 3, 3, 1, 1, 1 };
    const size_t d = sizeof(double);
    MPI_Datatype sf[6], rf[6];
    int bl[6] = { 1, 1, 1, 1, 1, 1 }, *idx, *dbl, f, i;
    MPI_Aint sdisp[6], rdisp[6];
    size_t soff = 0, roff = 0;
    char param[40];
    bm_pattern_t *p;

    snprintf(param, sizeof(param), "%d of %d atoms", nsend, natoms);
    if ((p = bm_pattern_new("lammps", param)) == NULL) {
        return;
    }
    idx = bm_indices(natoms, nsend, 12345, 0);
    dbl = malloc(nsend * sizeof(int));
    if (dbl == NULL) {
        BM_FAIL("out of memory");
    }
    for (f = 0; f < 6; ++f) {
        sdisp[f] = soff;
        rdisp[f] = roff + (size_t)natoms * width[f] * d; /* append */
        for (i = 0; i < nsend; ++i) {
            dbl[i] = idx[i] * width[f]; /* in doubles */
        }
        BM_MPI(MPI_Type_create_indexed_block(nsend, width[f], dbl,
                                             MPI_DOUBLE, &sf[f]));
        BM_MPI(MPI_Type_contiguous(nsend * width[f], MPI_DOUBLE, &rf[f]));
        soff += (size_t)natoms * width[f] * d;
        roff += (size_t)(natoms + nsend) * width[f] * d;
    }
    BM_MPI(MPI_Type_create_struct(6, bl, sdisp, sf, &p->stype));
    BM_MPI(MPI_Type_create_struct(6, bl, rdisp, rf, &p->rtype));
    for (f = 0; f < 6; ++f) {
        for (i = 0; i < nsend; ++i) {
            bm_blist_add(&p->sb, sdisp[f] + (size_t)idx[i] * width[f] * d,
                         width[f] * d);
        }
        bm_blist_add(&p->rb, rdisp[f], (size_t)nsend * width[f] * d);
        BM_MPI(MPI_Type_free(&sf[f]));
        BM_MPI(MPI_Type_free(&rf[f]));
    }
    p->sspan = soff;
    p->rspan = roff;
    free(dbl);
    free(idx);
}

/* SPECFEM3D: indexed_block(1 float) (k = 1), or struct of 2 indexed_block
 * (3 floats) over two arrays (k = 3); sorted global point indices. */
static void bm_pat_specfem(int npoints, int nidx, int k)
{
    const size_t fl = sizeof(float);
    MPI_Datatype f3;
    MPI_Aint disp[2] = { 0, (MPI_Aint)((size_t)npoints * 3 * fl) };
    int bl[2] = { 1, 1 }, *idx, i, a;
    MPI_Datatype types[2];
    char param[40];
    bm_pattern_t *p;

    snprintf(param, sizeof(param), "%d of %d pts, %d float%s", nidx, npoints,
             k, (k > 1) ? "s x2" : "");
    if ((p = bm_pattern_new("specfem3d", param)) == NULL) {
        return;
    }
    idx = bm_indices(npoints, nidx, 777 + k, 1);
    if (k == 1) {
        BM_MPI(MPI_Type_create_indexed_block(nidx, 1, idx, MPI_FLOAT,
                                             &p->stype));
        for (i = 0; i < nidx; ++i) {
            bm_blist_add(&p->sb, idx[i] * fl, fl);
        }
        p->sspan = p->rspan = (size_t)npoints * fl;
    } else {
        for (i = 0; i < nidx; ++i) {
            idx[i] *= 3; /* in floats */
        }
        BM_MPI(MPI_Type_create_indexed_block(nidx, 3, idx, MPI_FLOAT, &f3));
        types[0] = types[1] = f3;
        BM_MPI(MPI_Type_create_struct(2, bl, disp, types, &p->stype));
        BM_MPI(MPI_Type_free(&f3));
        for (a = 0; a < 2; ++a) {
            for (i = 0; i < nidx; ++i) {
                bm_blist_add(&p->sb, disp[a] + (size_t)idx[i] * fl, 3 * fl);
            }
        }
        p->sspan = p->rspan = 2 * (size_t)npoints * 3 * fl;
    }
    bm_pattern_same(p);
    free(idx);
}

/* WRF: struct of subarrays, the halo rows of 3 3D fields (C order
 * [k][j][i], nk x nj x ni doubles): rows j = 1..w of every k plane. */
static void bm_pat_wrf(int ni, int nj, int nk, int w)
{
    int sizes[3] = { nk, nj, ni }, sub[3] = { nk, w, ni - 2 },
        starts[3] = { 0, 1, 1 }, bl[3] = { 1, 1, 1 }, f, k, j;
    const size_t d = sizeof(double), field = (size_t)ni * nj * nk * d;
    MPI_Datatype sa, types[3];
    MPI_Aint disp[3];
    char param[40];
    bm_pattern_t *p;

    snprintf(param, sizeof(param), "3 x %dx%dx%d, %d rows", ni, nj, nk, w);
    if ((p = bm_pattern_new("wrf", param)) == NULL) {
        return;
    }
    BM_MPI(MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C,
                                    MPI_DOUBLE, &sa));
    for (f = 0; f < 3; ++f) {
        types[f] = sa;
        disp[f]  = f * field;
        for (k = 0; k < nk; ++k) {
            for (j = 1; j <= w; ++j) {
                bm_blist_add(&p->sb, f * field +
                             (((size_t)k * nj + j) * ni + 1) * d,
                             (ni - 2) * d);
            }
        }
    }
    BM_MPI(MPI_Type_create_struct(3, bl, disp, types, &p->stype));
    BM_MPI(MPI_Type_free(&sa));
    p->sspan = p->rspan = 3 * field;
    bm_pattern_same(p);
}

/* ---- filling and checking ----------------------------------------------- */

static inline uint32_t bm_word(size_t stream_word, unsigned msg)
{
    return (uint32_t)(stream_word * 2654435761u) ^ (msg * 0x85ebca77u) ^
           0x5bd1e995u;
}

static void bm_fill(char *buf, const bm_blist_t *l, unsigned msg)
{
    size_t i, w, s = 0;
    uint32_t *p;

    for (i = 0; i < l->n; ++i) {
        p = (uint32_t*)(buf + l->b[i].off);
        for (w = 0; w < l->b[i].len / 4; ++w) {
            p[w] = bm_word(s++, msg);
        }
    }
}

/* Put the guard back into the blocks only (the rest never changes). */
static void bm_reset(char *buf, const bm_blist_t *l)
{
    size_t i;

    for (i = 0; i < l->n; ++i) {
        memset(buf + l->b[i].off, BM_GUARD_BYTE, l->b[i].len);
    }
}

/* 0 if every block holds message `msg` and the guards around blocks (or,
 * with `full`, every byte outside the blocks) are untouched. */
static int bm_cmp_blk(const void *a, const void *b)
{
    const bm_blk_t *x = a, *y = b;

    return (x->off > y->off) - (x->off < y->off);
}

/* The blocks sorted by address (for the whole-buffer check). */
static bm_blist_t bm_blist_sorted(const bm_blist_t *l)
{
    bm_blist_t c = *l;

    c.b = malloc(l->n * sizeof(*l->b));
    if (c.b == NULL) {
        BM_FAIL("out of memory");
    }
    memcpy(c.b, l->b, l->n * sizeof(*l->b));
    qsort(c.b, c.n, sizeof(*c.b), bm_cmp_blk);
    return c;
}

/* 0 if every byte of buf[from, to) is the guard. */
static int bm_is_guard(const char *buf, size_t from, size_t to, size_t *bad)
{
    static char guard[4096];
    size_t n, i;

    if (guard[0] == 0) {
        memset(guard, BM_GUARD_BYTE, sizeof(guard));
    }
    for (; from < to; from += n) {
        n = (to - from < sizeof(guard)) ? to - from : sizeof(guard);
        if (memcmp(buf + from, guard, n)) {
            for (i = 0; (unsigned char)buf[from + i] == BM_GUARD_BYTE; ++i) {
            }
            *bad = from + i;
            return -1;
        }
    }
    return 0;
}

/* Nothing outside the blocks was written (blocks sorted by address). */
static int bm_check_outside(const char *buf, size_t span,
                            const bm_blist_t *sorted, unsigned msg,
                            const char *what)
{
    size_t i, pos = 0, bad;

    for (i = 0; i <= sorted->n; ++i) {
        size_t off = (i < sorted->n) ? sorted->b[i].off : span;
        if ((off > pos) && bm_is_guard(buf, pos, off, &bad)) {
            fprintf(stderr, "bench_mpi_ddt: %s message %u: byte %zu outside "
                    "the type was written\n", what, msg, bad);
            return -1;
        }
        if ((i < sorted->n) && (off + sorted->b[i].len > pos)) {
            pos = off + sorted->b[i].len;
        }
    }
    return 0;
}

static int bm_check(const char *buf, size_t span, const bm_blist_t *l,
                    const bm_blist_t *sorted, unsigned msg, int full,
                    const char *what)
{
    size_t i, w, s = 0, end, gap;
    const uint32_t *p;
    uint32_t g;

    for (i = 0; i < l->n; ++i) {
        p = (const uint32_t*)(buf + l->b[i].off);
        for (w = 0; w < l->b[i].len / 4; ++w, ++s) {
            if (p[w] != bm_word(s, msg)) {
                fprintf(stderr, "bench_mpi_ddt: %s message %u: byte offset "
                        "%zu (block %zu): 0x%08x, expected 0x%08x\n", what,
                        msg, l->b[i].off + 4 * w, i, p[w], bm_word(s, msg));
                return -1;
            }
        }
    }

    if (full) {
        return bm_check_outside(buf, span, sorted, msg, what);
    }

    for (i = 0; i < l->n; ++i) { /* the 4 bytes either side of a block */
        end = l->b[i].off + l->b[i].len;
        for (gap = 0; gap < 2; ++gap) {
            size_t at = gap ? end : l->b[i].off - 4;
            if ((gap == 0) && (l->b[i].off < 4)) {
                continue;
            }
            if (at + 4 > span) {
                continue;
            }
            memcpy(&g, buf + at, 4);
            if (g != BM_GUARD) {
                /* may be a neighbouring block: only a gap must hold guard */
                size_t j;
                int in_block = 0;
                for (j = (i > 0) ? i - 1 : 0; (j < l->n) && (j <= i + 1); ++j) {
                    if ((at < l->b[j].off + l->b[j].len) &&
                        (at + 4 > l->b[j].off)) {
                        in_block = 1;
                    }
                }
                if (!in_block) {
                    fprintf(stderr, "bench_mpi_ddt: %s message %u: guard at "
                            "byte %zu (next to block %zu) overwritten\n",
                            what, msg, at, i);
                    return -1;
                }
            }
        }
    }
    return 0;
}

/* The block list must be the datatype's type map: pack a position-keyed
 * buffer with MPI and compare. */
static void bm_selfcheck(MPI_Datatype t, const bm_blist_t *l, size_t span,
                         const char *what)
{
    char *buf = malloc(span), *packed;
    int size, pos = 0;
    size_t i, s = 0, w;

    BM_MPI(MPI_Type_size(t, &size));
    if ((buf == NULL) || ((size_t)size != l->bytes)) {
        BM_FAIL("%s: type size %d, block list %zu", what, size, l->bytes);
    }
    packed = malloc(size);
    for (i = 0; i < span / 4; ++i) {
        ((uint32_t*)buf)[i] = (uint32_t)i;
    }
    BM_MPI(MPI_Pack(buf, 1, t, packed, size, &pos, MPI_COMM_SELF));
    for (i = 0; i < l->n; ++i) {
        for (w = 0; w < l->b[i].len / 4; ++w, ++s) {
            if (((uint32_t*)packed)[s] != (l->b[i].off / 4) + w) {
                BM_FAIL("%s: block list differs from the MPI type map at "
                        "block %zu", what, i);
            }
        }
    }
    free(packed);
    free(buf);
}

/* ---- timing ------------------------------------------------------------- */

static int bm_cmp_double(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

typedef struct bm_opts {
    size_t vec_bytes;
    int    grid_n;
    int    min_msgs, max_msgs;
    double budget;
    int    lat_iters, lat_samples;
    int    do_ddt, do_lat;
} bm_opts_t;

static void bm_interpose(int on)
{
    if (bm_interpose_fn != NULL) {
        bm_interpose_fn(on);
        BM_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
}

/* Alternation of pml/umr (A) and direct (B): A B B A A B B A ..., so that
 * each pair (2k, 2k+1) has one of each and neither always comes first. */
static int bm_alt_interposed(unsigned i)
{
    return ((i + i / 2) % 2) == 0;
}

/* One pattern in one mode; rank 0 returns the per-message times in t. With
 * td (pml/umr interposed, mode ddt), messages alternate with pml/umr out
 * of the call path: t gets the pml/umr times, td the direct ones, both
 * indexed by pair; messages 0 and 1 (one of each) are the warm-up. */
static int bm_run(bm_pattern_t *p, int mode, const bm_opts_t *o, double *t,
                  double *td)
{
    int peer = 1 - bm_rank, psize = 0, pos, n = 0, stop = 0;
    int warmup = (td != NULL) ? 2 : 1, direct = 0;
    double dt;
    char *buf, *packed = NULL;
    double t0, start;
    bm_blist_t sorted;
    unsigned msg;
    size_t span;

    if (bm_rank == 0) {
        span = p->sspan;
    } else {
        span = p->rspan;
    }
    buf = malloc(span);
    if (buf == NULL) {
        BM_FAIL("out of memory (%zu bytes)", span);
    }
    memset(buf, BM_GUARD_BYTE, span);
    sorted = bm_blist_sorted(&p->rb);
    if (mode == BM_MODE_PACK) {
        BM_MPI(MPI_Pack_size(1, (bm_rank == 0) ? p->stype : p->rtype,
                             MPI_COMM_WORLD, &psize));
        packed = malloc(psize);
    }

    start = MPI_Wtime();
    for (msg = 0; !stop; ++msg) {
        if (td != NULL) {
            direct = !bm_alt_interposed(msg);
            bm_interpose(!direct);
        }
        /* the first message (of each mode) is a warm-up, not timed */
        if (bm_rank == 0) {
            bm_fill(buf, &p->sb, msg);
            BM_MPI(MPI_Recv(NULL, 0, MPI_BYTE, peer, BM_TAG_READY,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            t0 = MPI_Wtime();
            if (mode != BM_MODE_PACK) {
                BM_MPI(MPI_Send(buf, 1, p->stype, peer, BM_TAG_DATA,
                                MPI_COMM_WORLD));
            } else {
                pos = 0;
                BM_MPI(MPI_Pack(buf, 1, p->stype, packed, psize, &pos,
                                MPI_COMM_WORLD));
                BM_MPI(MPI_Send(packed, pos, MPI_PACKED, peer, BM_TAG_DATA,
                                MPI_COMM_WORLD));
            }
            BM_MPI(MPI_Recv(NULL, 0, MPI_BYTE, peer, BM_TAG_ACK,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            dt = MPI_Wtime() - t0;
            if (msg >= (unsigned)warmup) {
                if (td == NULL) {
                    t[n++] = dt;
                } else {
                    (direct ? td : t)[(msg - warmup) / 2] = dt;
                    n += (msg - warmup) % 2; /* a pair is complete */
                }
            }
            stop = (n >= o->max_msgs) ||
                   ((n >= o->min_msgs) && (MPI_Wtime() - start > o->budget));
            /* alternating: stop only after the second message of a pair */
            stop = stop && ((td == NULL) ||
                            ((msg >= (unsigned)warmup) &&
                             ((msg - warmup) % 2 == 1)));
        } else {
            BM_MPI(MPI_Send(NULL, 0, MPI_BYTE, peer, BM_TAG_READY,
                            MPI_COMM_WORLD));
            if (mode != BM_MODE_PACK) {
                BM_MPI(MPI_Recv(buf, 1, p->rtype, peer, BM_TAG_DATA,
                                MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            } else {
                BM_MPI(MPI_Recv(packed, psize, MPI_PACKED, peer, BM_TAG_DATA,
                                MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                pos = 0;
                BM_MPI(MPI_Unpack(packed, psize, &pos, buf, 1, p->rtype,
                                  MPI_COMM_WORLD));
            }
            BM_MPI(MPI_Send(NULL, 0, MPI_BYTE, peer, BM_TAG_ACK,
                            MPI_COMM_WORLD));
        }
        /* rank 0 decides when to stop; rank 1 checks every message, the
         * whole buffer on the first two and the last */
        BM_MPI(MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD));
        if ((bm_rank == 1) && (msg == 1) && bm_corrupt) {
            /* -X: prove the check fails (1: a data byte, 2: a byte just
             * after the last block, 3: a byte far from every block) */
            size_t at = (bm_corrupt == 1) ? p->rb.b[0].off :
                        (bm_corrupt == 2) ? sorted.b[sorted.n - 1].off +
                                            sorted.b[sorted.n - 1].len :
                                            span - 1;
            if (at < span) {
                buf[at] ^= 0x10;
            }
        }
        if (bm_rank == 1) {
            if (bm_check(buf, span, &p->rb, &sorted, msg,
                         (msg <= 1) || stop, p->name) != 0) {
                BM_FAIL("%s %s (%s): wrong data received", p->name, p->param,
                        bm_mode_names[mode]);
            }
            bm_reset(buf, &p->rb);
        }
    }
    if (td != NULL) {
        bm_interpose(1);
    }
    free(sorted.b);
    free(packed);
    free(buf);
    return n;
}

/* Median and quartiles of n values (sorted in place). */
static void bm_quartiles(double *v, int n, double q[3])
{
    qsort(v, n, sizeof(*v), bm_cmp_double);
    q[0] = v[n / 4];
    q[1] = v[n / 2];
    q[2] = v[(3 * n) / 4];
}

static void bm_ddt_row(const bm_pattern_t *p, int mode, double *t, int n)
{
    double sz = (double)p->sb.bytes;
    size_t nb = p->sb.n;

    qsort(t, n, sizeof(*t), bm_cmp_double);
    printf("%-16s %-28s %10zu %8zu %8.0f %5s %11.1f %11.1f %9.3f %5d\n",
           p->name, p->param, p->sb.bytes, nb, sz / nb, bm_mode_names[mode],
           t[n / 2] * 1e6, t[0] * 1e6, sz / t[n / 2] / 1e9, n);
    printf("DATA\t%s\t%s\t%zu\t%zu\t%.1f\t%s\t%.3f\t%.3f\t%d\n", p->name,
           p->param, p->sb.bytes, nb, sz / nb, bm_mode_names[mode],
           t[n / 2] * 1e6, t[0] * 1e6, n);
}

static void bm_ddt(const bm_opts_t *o)
{
    double *t  = malloc(o->max_msgs * sizeof(double));
    double *td = malloc(o->max_msgs * sizeof(double));
    double *r  = malloc(o->max_msgs * sizeof(double)), q[3];
    int i, k, mode, n, alternate = (bm_interpose_fn != NULL);
    bm_pattern_t *p;

    if (bm_rank == 0) {
        printf("%-16s %-28s %10s %8s %8s %5s %11s %11s %9s %5s\n", "pattern",
               "param", "bytes", "blocks", "mean_B", "mode", "median_us",
               "min_us", "GB/s", "msgs");
    }
    for (i = 0; i < bm_num_patterns; ++i) {
        p = &bm_patterns[i];
        for (mode = BM_MODE_DDT; mode <= BM_MODE_PACK; ++mode) {
            n = bm_run(p, mode, o, t,
                       (alternate && (mode == BM_MODE_DDT)) ? td : NULL);
            if (bm_rank != 0) {
                continue;
            }
            if (alternate && (mode == BM_MODE_DDT)) {
                for (k = 0; k < n; ++k) {
                    r[k] = td[k] / t[k];
                }
                bm_quartiles(r, n, q);
                bm_ddt_row(p, BM_MODE_DDT, t, n);
                bm_ddt_row(p, BM_MODE_DIRECT, td, n);
                /* (ratios to 6 digits, not 4 decimals: a sample a busy
                 * machine held up 10,000 times longer is still > 0) */
                printf("PAIR\t%s\t%s\t%.6g\t%.6g\t%.6g\t%d\n", p->name,
                       p->param, q[1], q[0], q[2], n);
            } else {
                bm_ddt_row(p, mode, t, n);
            }
            fflush(stdout);
        }
    }
    free(r);
    free(td);
    free(t);
}

/* One receive of the ping-pong: MPI_Recv, or MPI_Irecv + MPI_Wait (the
 * halo-exchange style, where a wrapping PML cannot use the wrapped PML's
 * own blocking receive). */
static void bm_lat_recv(void *buf, size_t size, int peer, int nonblocking)
{
    MPI_Request rq;

    if (nonblocking) {
        BM_MPI(MPI_Irecv(buf, size, MPI_BYTE, peer, BM_TAG_LAT,
                         MPI_COMM_WORLD, &rq));
        BM_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        BM_MPI(MPI_Recv(buf, size, MPI_BYTE, peer, BM_TAG_LAT, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    }
}

/* One sample of the ping-pong: iters round trips of size bytes, each
 * message's first and last byte checked, then one more message checked in
 * full. Returns rank 0's half round trip. */
static double bm_lat_sample(unsigned char *sbuf, unsigned char *rbuf,
                            size_t size, int iters, int s, int nonblocking)
{
    int peer = 1 - bm_rank, it, k;
    double t0, t;

    BM_MPI(MPI_Barrier(MPI_COMM_WORLD));
    t0 = MPI_Wtime();
    for (it = 0; it < iters; ++it) {
        unsigned char stamp = (unsigned char)(it * 7 + s + 1);
        if (size > 0) {
            sbuf[0] = sbuf[size - 1] = stamp;
        }
        if (bm_rank == 0) {
            BM_MPI(MPI_Send(sbuf, size, MPI_BYTE, peer, BM_TAG_LAT,
                            MPI_COMM_WORLD));
            bm_lat_recv(rbuf, size, peer, nonblocking);
        } else {
            bm_lat_recv(rbuf, size, peer, nonblocking);
            BM_MPI(MPI_Send(sbuf, size, MPI_BYTE, peer, BM_TAG_LAT,
                            MPI_COMM_WORLD));
        }
        if ((size > 0) && ((rbuf[0] != stamp) || (rbuf[size - 1] != stamp))) {
            BM_FAIL("latency %zu B: round trip %d: wrong data", size, it);
        }
    }
    t = (MPI_Wtime() - t0) / iters / 2;
    /* the last message of a sample in full: fill, one more round */
    for (k = 0; k < (int)size; ++k) {
        sbuf[k] = (unsigned char)(k * 31 + s + size);
    }
    if (bm_rank == 0) {
        BM_MPI(MPI_Send(sbuf, size, MPI_BYTE, peer, BM_TAG_LAT,
                        MPI_COMM_WORLD));
    } else {
        BM_MPI(MPI_Recv(rbuf, size, MPI_BYTE, peer, BM_TAG_LAT,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if ((size > 0) && memcmp(rbuf, sbuf, size)) {
            BM_FAIL("latency %zu B: wrong data", size);
        }
    }
    return t;
}

/* Contiguous ping-pong, half round trip. LAT lines: MPI_Send/MPI_Recv;
 * LATI lines: MPI_Send/MPI_Irecv+MPI_Wait. With pml/umr interposed, the
 * samples alternate with samples taken with pml/umr out of the call path
 * (A B B A ...): LATD/LATID lines, and LATP/LATIP with the paired
 * differences. */
static void bm_latency(const bm_opts_t *o, int nonblocking)
{
    int ns = o->lat_samples, alternate = (bm_interpose_fn != NULL);
    double *a = malloc(ns * sizeof(double)), *d = malloc(ns * sizeof(double));
    double *diff = malloc(ns * sizeof(double)), *ratio = malloc(ns *
                                                                sizeof(double));
    unsigned char *sbuf = malloc(65536), *rbuf = malloc(65536);
    const char *kind = nonblocking ? "LATI" : "LAT";
    double qd[3], qr[3], x;
    int s, j, iters, on;
    size_t size;

    if (bm_rank == 0) {
        printf("\n# contiguous ping-pong, %s%s\n", nonblocking ?
               "MPI_Send + MPI_Irecv/MPI_Wait" : "MPI_Send + MPI_Recv",
               alternate ? "; pml/umr, and direct: pml/umr taken out of the "
                           "call path, samples alternating" : "");
        printf("%10s %11s %11s %8s", "bytes", "median_us", "min_us",
               "rtrips");
        if (alternate) {
            printf(" %11s %11s %11s %9s", "direct_us", "dmin_us", "diff_us",
                   "ratio");
        }
        printf("\n");
    }
    for (size = 0; size <= 65536; size = size ? 2 * size : 1) {
        /* all round trips up to 4 KiB (the pass-through's figures); fewer
         * above, where a round trip costs tens of microseconds */
        iters = (size <= 4096) ? o->lat_iters :
                (int)(o->lat_iters * 4096 / size);
        iters = (iters < 50) ? 50 : iters;
        for (s = -1; s < ns; ++s) { /* sample -1: warm-up */
            for (j = 0; j < (alternate ? 2 : 1); ++j) {
                on = bm_alt_interposed(2 * (s + 1) + j);
                if (alternate) {
                    bm_interpose(on);
                }
                x = bm_lat_sample(sbuf, rbuf, size, iters, s, nonblocking);
                if (s >= 0) {
                    ((alternate && !on) ? d : a)[s] = x;
                }
            }
        }
        if (alternate) {
            bm_interpose(1);
        }
        if (bm_rank != 0) {
            continue;
        }
        for (s = 0; alternate && (s < ns); ++s) {
            diff[s]  = a[s] - d[s];
            ratio[s] = d[s] / a[s];
        }
        qsort(a, ns, sizeof(*a), bm_cmp_double);
        printf("%10zu %11.3f %11.3f %8d", size, a[ns / 2] * 1e6, a[0] * 1e6,
               iters);
        if (alternate) {
            qsort(d, ns, sizeof(*d), bm_cmp_double);
            bm_quartiles(diff, ns, qd);
            bm_quartiles(ratio, ns, qr);
            printf(" %11.3f %11.3f %+11.3f %8.3fx\n", d[ns / 2] * 1e6,
                   d[0] * 1e6, qd[1] * 1e6, qr[1]);
            printf("%sD\t%zu\t%.4f\t%.4f\t%d\n", kind, size,
                   d[ns / 2] * 1e6, d[0] * 1e6, iters);
            printf("%sP\t%zu\t%.4f\t%.4f\t%.4f\t%.6g\t%d\n", kind, size,
                   qd[1] * 1e6, qd[0] * 1e6, qd[2] * 1e6, qr[1], ns);
        } else {
            printf("\n");
        }
        printf("%s\t%zu\t%.4f\t%.4f\t%d\n", kind, size, a[ns / 2] * 1e6,
               a[0] * 1e6, iters);
        fflush(stdout);
    }
    free(ratio);
    free(diff);
    free(d);
    free(a);
    free(sbuf);
    free(rbuf);
}

static void bm_make_patterns(const bm_opts_t *o)
{
    size_t block;
    int n = o->grid_n, i;

    for (block = 8; block <= 65536; block *= 2) {
        bm_pat_vector(block, o->vec_bytes);
    }
    bm_pat_face(n, 'x');
    bm_pat_face(n, 'y');
    bm_pat_face(n, 'z');
    bm_pat_subarray(2048, 2048, 1024, 1024, 512, 512);
    bm_pat_subarray(16384, 64, 8192, 32, 4096, 16);
    bm_pat_fft(128, 16);
    bm_pat_transpose(1024, 256);
    bm_pat_nas_lu_y(1020);
    bm_pat_nas_mg(130, 130, 130, 'x');
    bm_pat_nas_mg(130, 130, 130, 'y');
    bm_pat_nas_mg(130, 130, 130, 'z');
    bm_pat_milc(8, 8, 16, 16);
    bm_pat_milc(16, 16, 16, 16);
    bm_pat_lammps(20000, 3062);
    bm_pat_specfem(100000, 11797, 1);
    bm_pat_specfem(100000, 11797, 3);
    bm_pat_wrf(128, 64, 32, 3);

    for (i = 0; i < bm_num_patterns; ++i) {
        bm_pattern_t *p = &bm_patterns[i];
        BM_MPI(MPI_Type_commit(&p->stype));
        if (p->rtype != p->stype) {
            BM_MPI(MPI_Type_commit(&p->rtype));
        }
        if (p->sspan < bm_blist_end(&p->sb)) {
            p->sspan = bm_blist_end(&p->sb);
        }
        if (p->rspan < bm_blist_end(&p->rb)) {
            p->rspan = bm_blist_end(&p->rb);
        }
        if (p->rb.bytes != p->sb.bytes) {
            BM_FAIL("%s: send %zu bytes, receive %zu", p->name, p->sb.bytes,
                    p->rb.bytes);
        }
        bm_selfcheck(p->stype, &p->sb, p->sspan, p->name);
        bm_selfcheck(p->rtype, &p->rb, p->rspan, p->name);
    }
}

static void bm_free_patterns(void)
{
    int i;

    for (i = 0; i < bm_num_patterns; ++i) {
        bm_pattern_t *p = &bm_patterns[i];
        if (p->rtype != p->stype) {
            BM_MPI(MPI_Type_free(&p->rtype));
        }
        BM_MPI(MPI_Type_free(&p->stype));
        free(p->sb.b);
        free(p->rb.b);
    }
}

static void bm_usage(const char *prog)
{
    fprintf(stderr, "usage: mpirun -np 2 %s [-s vector_bytes] [-n grid_n] "
            "[-m min_messages] [-M max_messages] [-T seconds_per_pattern] "
            "[-p pattern_substring] [-l|-L] [-i round_trips] [-r samples] "
            "[-V max_ns]\n",
            prog);
}

int main(int argc, char **argv)
{
    bm_opts_t o = { 16ul << 20, 256, 5, 50, 1.0, 2000, 7, 1, 1 };
    int opt, size, len;
    char name[MPI_MAX_PROCESSOR_NAME];
    double vm_rt, vm_settle_ns = 0;

    BM_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &bm_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* pml/umr interposed in this job (its component is loaded with global
     * symbols): its benchmark hook gives the "direct" rows */
    *(void**)&bm_interpose_fn = dlsym(RTLD_DEFAULT,
                                      "mca_pml_umr_bench_interpose");
    if ((bm_interpose_fn != NULL) && (bm_interpose_fn(1) < 0)) {
        bm_interpose_fn = NULL;
    }
    while ((opt = getopt(argc, argv, "s:n:m:M:T:p:lLi:r:X:V:h")) != -1) {
        switch (opt) {
        case 's': o.vec_bytes = strtoul(optarg, NULL, 0); break;
        case 'n': o.grid_n = atoi(optarg); break;
        case 'm': o.min_msgs = atoi(optarg); break;
        case 'M': o.max_msgs = atoi(optarg); break;
        case 'T': o.budget = atof(optarg); break;
        case 'p': bm_filter = optarg; break;
        case 'l': o.do_ddt = 0; break;
        case 'L': o.do_lat = 0; break;
        case 'i': o.lat_iters = atoi(optarg); break;
        case 'r': o.lat_samples = atoi(optarg); break;
        case 'X': bm_corrupt = atoi(optarg); break;
        case 'V': vm_settle_ns = atof(optarg); break;
        default:
            if (bm_rank == 0) {
                bm_usage(argv[0]);
            }
            MPI_Finalize();
            return (opt == 'h') ? 0 : 1;
        }
    }
    if ((size != 2) || (o.vec_bytes < 65536) || (o.grid_n < 4) ||
        (o.min_msgs < 1) || (o.max_msgs < o.min_msgs) ||
        (o.lat_iters < 1) || (o.lat_samples < 1) || (vm_settle_ns < 0)) {
        if (bm_rank == 0) {
            fprintf(stderr, "bench_mpi_ddt: needs exactly 2 ranks, -s >= "
                    "65536, -n >= 4, 1 <= -m <= -M, -i, -r >= 1, "
                    "-V >= 0\n");
            bm_usage(argv[0]);
        }
        MPI_Finalize();
        return 1;
    }

    if (o.do_ddt) {
        bm_make_patterns(&o);
    }
    if (bm_rank == 0) {
        MPI_Get_processor_name(name, &len);
        printf("# bench_mpi_ddt on %s: rank 0 -> rank 1, every message "
               "verified; median of %d..%d messages (%.1f s budget a "
               "pattern)\n", name, o.min_msgs, o.max_msgs, o.budget);
        fflush(stdout);
    }
    /* the state of the VM this job runs in, at its start and end; with -V,
     * first redrawn (up to 20 times) until the probe is at most that */
    if ((vm_settle_ns > 0) &&
        (bm_vmstate_settle(MPI_COMM_WORLD, vm_settle_ns, 20, 20) < 0)) {
        BM_FAIL("-V %.1f: the VM state probe cannot run", vm_settle_ns);
    }
    bm_vmstate_probe(MPI_COMM_WORLD, "start", 5, 2000, &vm_rt);
    if (o.do_ddt) {
        bm_ddt(&o);
        bm_free_patterns();
    }
    if (o.do_lat) {
        bm_latency(&o, 0);
        bm_latency(&o, 1);
    }
    bm_vmstate_probe(MPI_COMM_WORLD, "end", 5, 2000, &vm_rt);
    BM_MPI(MPI_Finalize());
    return 0;
}
