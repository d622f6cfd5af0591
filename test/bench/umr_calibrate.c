/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * umr_calibrate: measures the constants pml/umr's zero-copy choice uses
 * (src/mpi/core/umr_mpi_cost.h documents them and the file format).
 * Run by contrib/umr-calibrate.sh; two MPI ranks, on one host (scope
 * "local") or on two (scope "remote"):
 *
 *   engine.<eng>.{get,put}.{dense,sparse}.*   rank 0 gets from / puts to
 *       rank 1's layout keys through the mlx5_umr transport's public API
 *       (uct_umr_mem_reg, uct_umr_ep_{get,put}_layout), contiguous and
 *       strided on either side, blocks of 8 B .. 4 KiB at stride 2x (dense)
 *       and 8x (sparse), up to 16 MiB; least-squares fit of op + rentry *
 *       remote blocks + lentry * local blocks + byte * bytes, weighted by
 *       1/time. Every configuration's first transfer is verified.
 *   pml.<pml>.<scope>.ctrl_ns   a Z-byte message and a 16 B answer through
 *       the running PML (pml/umr's control message and ack); <pml> is
 *       "mpich" when built against an MPICH-family MPI (test/mpich:
 *       libumr_mpich.so's figures, MPICH itself carrying the messages)
 *   pml.<pml>.<scope>.ddt.<block>.{op,byte}_ns   MPI_Send/MPI_Recv of a
 *       vector of <block>-byte blocks (stride 2x) through the running PML,
 *       minus one 0-byte message: per byte from 1 MiB to 16 MiB, per
 *       message what is left at 64 KiB
 *   osc.<osc>.<scope>.{put,get}.<block>.{op,byte}_ns   MPI_Put/MPI_Get and
 *       MPI_Win_flush from rank 0 between a contiguous buffer and a vector
 *       of <block>-byte blocks (stride 2x) in rank 1's MPI_Win_create
 *       window, through the osc component Open MPI chose (<osc>: the first
 *       word of the window's name; osc/umr kept out by the window's info):
 *       per byte from max(256 KiB, 64 blocks) to 4x that (at most 8 MiB),
 *       per operation what is left at 16 blocks (osc/umr's choice,
 *       umr_mpi_choice.c). Each point's first put is read back and checked.
 *   packed.<scope>.{put,get}.<block>.{op,byte}_ns   the same through
 *       osc/umr's packed path (-P: run with osc/umr and pml/umr loaded and
 *       osc_umr_packed=on, contrib/umr-calibrate.sh; only these figures).
 *
 * Times are the fastest of repeated operations (-q: 5, else 9). Rank 0 writes the lines to -o
 * (default stdout). The sw engine's figures are cross-memory attach on this
 * host, not NIC figures.
 *
 * usage: mpirun -np 2 umr_calibrate [-o file] [-d device] [-q] [-E] [-O] [-P]
 *          -q: fewer repeats; -E: no engine figures; -O: no osc figures;
 *          -P: the packed path's figures alone
 *        umr_calibrate --crossover FILE PML   (no mpirun: from a costs
 *          file, the block sizes from which pml/umr chooses zero-copy)
 */
#include "umr_example.h"
#include "umr_example_pml.h"
#include "umr_mpi_cost.h"
#include "umr_mpi_wire.h"

#include <mpi.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define UC_TAG_SETUP   31
#define UC_TAG_DATA    32
#define UC_TAG_ACK     33
#define UC_MAX_POINTS  64
#define UC_BUF_BYTES   (66ul << 20)  /* 8 MiB at stride 8x, and more */
#define UC_MAX_SAMPLES 64

static int uc_rank;
static int uc_samples = 9;

#define UC_FAIL(_fmt, ...) \
    do { \
        fprintf(stderr, "umr_calibrate[rank %d]: " _fmt "\n", uc_rank, \
                ## __VA_ARGS__); \
        MPI_Abort(MPI_COMM_WORLD, 1); \
        exit(1); \
    } while (0)

#define UC_MPI(_call) \
    do { \
        if ((_call) != MPI_SUCCESS) { \
            UC_FAIL("%s failed", #_call); \
        } \
    } while (0)

#define UC_UCS(_call, _what) \
    do { \
        ucs_status_t __s = (_call); \
        if (__s != UCS_OK) { \
            UC_FAIL("%s failed: %s", (_what), ucs_status_string(__s)); \
        } \
    } while (0)

static int uc_cmp_double(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

/*
 * The fastest of n samples: the machine may be shared, and what the choice
 * needs is the cost of an undisturbed operation on both sides of the
 * comparison alike (the benchmarks report medians).
 */
static double uc_best(double *t, int n)
{
    qsort(t, n, sizeof(*t), uc_cmp_double);
    return t[0];
}

/* ---- PML figures -------------------------------------------------------- */

/* Half of a 0-byte round trip: what one message of the protocol costs. */
static double uc_pml_pingpong(size_t out, size_t back, int iters)
{
    /* the largest message: pml/umr's control message */
    static char sbuf[UMR_MPI_CTL_SIZE], rbuf[UMR_MPI_CTL_SIZE];
    double t[UC_MAX_SAMPLES], t0;
    int s, i, peer = 1 - uc_rank;

    if ((out > sizeof(sbuf)) || (back > sizeof(sbuf))) {
        UC_FAIL("ping-pong of %zu/%zu B: buffers of %zu B", out, back,
                sizeof(sbuf));
    }
    for (s = -1; s < uc_samples; ++s) {
        UC_MPI(MPI_Barrier(MPI_COMM_WORLD));
        t0 = MPI_Wtime();
        for (i = 0; i < iters; ++i) {
            if (uc_rank == 0) {
                UC_MPI(MPI_Send(sbuf, out, MPI_BYTE, peer, UC_TAG_DATA,
                                MPI_COMM_WORLD));
                UC_MPI(MPI_Recv(rbuf, back, MPI_BYTE, peer, UC_TAG_ACK,
                                MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            } else {
                UC_MPI(MPI_Recv(rbuf, out, MPI_BYTE, peer, UC_TAG_DATA,
                                MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                UC_MPI(MPI_Send(sbuf, back, MPI_BYTE, peer, UC_TAG_ACK,
                                MPI_COMM_WORLD));
            }
        }
        if (s >= 0) {
            t[s] = (MPI_Wtime() - t0) / iters;
        }
    }
    return uc_best(t, uc_samples) * 1e9;
}

/* One vector message of `bytes` in `block`-byte blocks (stride 2x) and a
 * 0-byte ack, ns, median; the receiver checks the first message. */
static double uc_pml_ddt(char *buf, size_t block, size_t bytes)
{
    double t[UC_MAX_SAMPLES], t0;
    int peer = 1 - uc_rank, s;
    size_t n = bytes / block, i;
    MPI_Datatype v;

    UC_MPI(MPI_Type_vector(n, block, 2 * block, MPI_BYTE, &v));
    UC_MPI(MPI_Type_commit(&v));
    for (s = -1; s < uc_samples; ++s) {
        if (uc_rank == 0) {
            for (i = 0; i < n; ++i) {
                memset(buf + 2 * i * block, (int)(i + s) & 0xff, block);
            }
        } else {
            memset(buf, 0, 2 * bytes);
        }
        UC_MPI(MPI_Barrier(MPI_COMM_WORLD));
        t0 = MPI_Wtime();
        if (uc_rank == 0) {
            UC_MPI(MPI_Send(buf, 1, v, peer, UC_TAG_DATA, MPI_COMM_WORLD));
            UC_MPI(MPI_Recv(NULL, 0, MPI_BYTE, peer, UC_TAG_ACK,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            UC_MPI(MPI_Recv(buf, 1, v, peer, UC_TAG_DATA, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            UC_MPI(MPI_Send(NULL, 0, MPI_BYTE, peer, UC_TAG_ACK,
                            MPI_COMM_WORLD));
            for (i = 0; i < n; ++i) {
                if ((unsigned char)buf[2 * i * block + block - 1] !=
                    ((i + s) & 0xff)) {
                    UC_FAIL("PML vector of %zu B blocks: wrong data", block);
                }
            }
        }
        if (s >= 0) {
            t[s] = MPI_Wtime() - t0;
        }
    }
    UC_MPI(MPI_Type_free(&v));
    return uc_best(t, uc_samples) * 1e9;
}

static void uc_pml_figures(FILE *out, char *buf, const char *pml,
                           const char *scope)
{
    double zero, ctrl, t[3], sz[3], byte, op;
    size_t block;
    int i;

    zero = uc_pml_pingpong(0, 0, 500) / 2;
    ctrl = uc_pml_pingpong(UMR_MPI_CTL_SIZE, 16, 500);
    if (uc_rank == 0) {
        fprintf(out, "pml.%s.%s.ctrl_ns = %.0f\n", pml, scope, ctrl);
    }
    for (block = 8; block <= 65536; block *= 2) {
        /* per byte: the slope between 1 MiB and 16 MiB (large messages run
         * from memory, not from the caches); per message: what is left of
         * the smallest size */
        sz[0] = (block * 16 > 65536) ? block * 16 : 65536;
        sz[1] = 1ul << 20;
        sz[2] = 16ul << 20;
        for (i = 0; i < 3; ++i) {
            t[i] = uc_pml_ddt(buf, block, sz[i]) - zero;
        }
        byte = (t[2] - t[1]) / (sz[2] - sz[1]);
        if (byte <= 0) {
            byte = t[2] / sz[2]; /* noise: the largest message alone */
        }
        op = t[0] - byte * sz[0];
        if (uc_rank == 0) {
            fprintf(out, "pml.%s.%s.ddt.%zu.op_ns = %.0f\n", pml, scope, block,
                    (op > 0) ? op : 0);
            fprintf(out, "pml.%s.%s.ddt.%zu.byte_ns = %.4f   # %.2f GB/s\n",
                    pml, scope, block, byte, 1 / byte);
            fflush(out);
        }
    }
}

/* ---- osc figures -------------------------------------------------------- */

#define UC_OSC_MAX_BYTES (8ul << 20)

/* One MPI_Put (or MPI_Get) and MPI_Win_flush by rank 0 of `bytes` from
 * `obuf` into `block`-byte blocks at stride 2x at rank 1's window; ns, best
 * of the samples (rank 1 only joins the barriers). The first put of a point
 * is read back and checked. */
static double uc_osc_op(MPI_Win win, char *obuf, char *check, int is_put,
                        size_t block, size_t bytes)
{
    double t[UC_MAX_SAMPLES], t0 = 0;
    size_t n = bytes / block, i;
    MPI_Datatype v;
    int s;

    UC_MPI(MPI_Type_vector(n, block, 2 * block, MPI_BYTE, &v));
    UC_MPI(MPI_Type_commit(&v));
    for (s = -1; s < uc_samples; ++s) {
        if (uc_rank == 0) {
            memset(obuf, (s + (int)block) & 0xff, bytes);
        }
        UC_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (uc_rank == 0) {
            t0 = MPI_Wtime();
            if (is_put) {
                UC_MPI(MPI_Put(obuf, bytes, MPI_BYTE, 1, 0, 1, v, win));
            } else {
                UC_MPI(MPI_Get(obuf, bytes, MPI_BYTE, 1, 0, 1, v, win));
            }
            UC_MPI(MPI_Win_flush(1, win));
            if (s >= 0) {
                t[s] = MPI_Wtime() - t0;
            }
            if (is_put && (s == -1)) {
                memset(check, 0, bytes);
                UC_MPI(MPI_Get(check, bytes, MPI_BYTE, 1, 0, 1, v, win));
                UC_MPI(MPI_Win_flush(1, win));
                for (i = 0; i < bytes; i += block) {
                    if (((unsigned char)check[i] != ((s + (int)block) & 0xff)) ||
                        ((unsigned char)check[i + block - 1] !=
                         ((s + (int)block) & 0xff))) {
                        UC_FAIL("osc put of %zu B blocks: wrong data", block);
                    }
                }
            }
        }
    }
    UC_MPI(MPI_Type_free(&v));
    return (uc_rank == 0) ? uc_best(t, uc_samples) * 1e9 : 0;
}

/* The wrapped osc module's figures (osc.<name>.*), or with `packed` osc/umr's
 * packed path's (packed.*: the window with osc/umr in front). */
static void uc_osc_figures(FILE *out, const char *scope, int packed)
{
    static const char *ops[2] = {"get", "put"};
    char name[MPI_MAX_OBJECT_NAME] = "", *sp, *wbuf, *obuf, *check;
    char err[MPI_MAX_ERROR_STRING];
    double t[3], sz[3], byte, op;
    size_t block;
    MPI_Info info;
    MPI_Win win;
    int i, is_put, len, rc, failed;

    wbuf  = calloc(1, 2 * UC_OSC_MAX_BYTES);
    obuf  = malloc(UC_OSC_MAX_BYTES);
    check = malloc(UC_OSC_MAX_BYTES);
    if ((wbuf == NULL) || (obuf == NULL) || (check == NULL)) {
        UC_FAIL("out of memory");
    }
    /* the wrapped module alone: osc/umr, if it is there, stays out (in
     * front for the packed path) */
    UC_MPI(MPI_Info_create(&info));
    UC_MPI(MPI_Info_set(info, "osc_umr_enable", packed ? "true" : "false"));
    /* A PML/osc pair that cannot make the window (Open MPI 5.0.7's osc/ucx
     * under pml ucx here: MPI_ERR_WIN) costs its osc figures only. */
    UC_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rc = MPI_Win_create(wbuf, 2 * UC_OSC_MAX_BYTES, 1, info, MPI_COMM_WORLD,
                        &win);
    UC_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    UC_MPI(MPI_Info_free(&info));
    failed = (rc != MPI_SUCCESS);
    UC_MPI(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX,
                         MPI_COMM_WORLD));
    if (failed) {
        if (rc == MPI_SUCCESS) {
            UC_FAIL("MPI_Win_create failed on another rank only");
        }
        if (uc_rank == 0) {
            MPI_Error_string(rc, err, &len);
            fprintf(stderr, "umr_calibrate: no osc figures with this PML: "
                    "MPI_Win_create failed (%s); osc/umr keeps its built-in "
                    "rule for this osc component\n", err);
        }
        free(check); free(obuf); free(wbuf);
        return;
    }
    UC_MPI(MPI_Win_get_name(win, name, &len));
    if ((sp = strchr(name, ' ')) != NULL) {
        *sp = '\0';   /* Open MPI: "<component> window <n>" */
    }
    if (name[0] == '\0') {
        UC_FAIL("the window has no name: which osc component is it?");
    }
    UC_MPI(MPI_Win_lock_all(0, win));
    for (is_put = 0; is_put <= 1; ++is_put) {
        for (block = 8; block <= 65536; block *= 2) {
            sz[0] = (block * 16 > 4096) ? block * 16 : 4096;
            sz[1] = (block * 64 > (256ul << 10)) ? block * 64 : (256ul << 10);
            sz[2] = (sz[1] * 4 < UC_OSC_MAX_BYTES) ? sz[1] * 4 :
                                                     UC_OSC_MAX_BYTES;
            for (i = 0; i < 3; ++i) {
                t[i] = uc_osc_op(win, obuf, check, is_put, block, sz[i]);
            }
            if (uc_rank != 0) {
                continue;
            }
            byte = (t[2] - t[1]) / (sz[2] - sz[1]);
            if (byte <= 0) {
                byte = t[2] / sz[2]; /* noise: the largest operation alone */
            }
            op = t[0] - byte * sz[0];
            if (packed) {
                fprintf(out, "packed.%s.%s.%zu.op_ns = %.0f\n", scope,
                        ops[is_put], block, (op > 0) ? op : 0);
                fprintf(out, "packed.%s.%s.%zu.byte_ns = %.4f   # %.2f GB/s\n",
                        scope, ops[is_put], block, byte, 1 / byte);
            } else {
                fprintf(out, "osc.%s.%s.%s.%zu.op_ns = %.0f\n", name, scope,
                        ops[is_put], block, (op > 0) ? op : 0);
                fprintf(out, "osc.%s.%s.%s.%zu.byte_ns = %.4f   # %.2f GB/s\n",
                        name, scope, ops[is_put], block, byte, 1 / byte);
            }
            fflush(out);
        }
    }
    UC_MPI(MPI_Win_unlock_all(win));
    UC_MPI(MPI_Win_free(&win));
    free(check);
    free(obuf);
    free(wbuf);
}

/* ---- engine figures ----------------------------------------------------- */

typedef struct uc_point {
    double r, l, bytes, t;  /* remote blocks, local blocks, bytes, ns */
} uc_point_t;

static ucs_status_t uc_exchange(void *arg, const void *mine, size_t len,
                                void *peer, size_t max)
{
    int peer_rank = 1 - uc_rank;

    UC_MPI(MPI_Sendrecv(mine, len, MPI_BYTE, peer_rank, UC_TAG_SETUP, peer,
                        max, MPI_BYTE, peer_rank, UC_TAG_SETUP, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    return UCS_OK;
}

static void uc_comp_cb(uct_completion_t *self)
{
}

/* One get or put of the whole layout pair, waited for (+ flush). */
static void uc_op(umr_example_t *u, int is_get, uct_mem_h memh, char *base,
                  const umr_layout_t *l, size_t bytes, uct_rkey_t rkey)
{
    uct_completion_t comp = { .func = uc_comp_cb, .count = 2,
                              .status = UCS_OK };
    ucs_status_t status;

    do {
        status = is_get ?
                 uct_umr_ep_get_layout(u->ep, memh, base, l, 1, 0, bytes, 0,
                                       rkey, &comp) :
                 uct_umr_ep_put_layout(u->ep, memh, base, l, 1, 0, bytes, 0,
                                       rkey, &comp);
        if (status == UCS_ERR_NO_RESOURCE) {
            uct_worker_progress(u->worker);
        }
    } while (status == UCS_ERR_NO_RESOURCE);
    if (status == UCS_OK) {
        --comp.count;
    } else if (status != UCS_INPROGRESS) {
        UC_FAIL("uct_umr_ep_%s_layout: %s", is_get ? "get" : "put",
                ucs_status_string(status));
    }
    while ((status = uct_ep_flush(u->ep, 0, &comp)) == UCS_ERR_NO_RESOURCE) {
        uct_worker_progress(u->worker);
    }
    if (status == UCS_OK) {
        --comp.count;
    } else if (status != UCS_INPROGRESS) {
        UC_FAIL("uct_ep_flush: %s", ucs_status_string(status));
    }
    while (comp.count > 0) {
        uct_worker_progress(u->worker);
    }
    if (comp.status != UCS_OK) {
        UC_FAIL("%s completion: %s", is_get ? "get" : "put",
                ucs_status_string(comp.status));
    }
}

/* `bytes` in blocks of `block` at `stride` (block 0: one contiguous run) */
static umr_layout_t *uc_layout(size_t block, size_t stride, size_t bytes)
{
    umr_layout_t *l, *b;

    if (block == 0) {
        UC_UCS(umr_layout_contig(bytes, &l), "contig layout");
        return l;
    }
    UC_UCS(umr_layout_contig(block, &b), "block layout");
    UC_UCS(umr_layout_vector(bytes / block, 1, stride, b, &l),
           "vector layout");
    umr_layout_free(b);
    return l;
}

/*
 * One configuration: rank 1 registers its side as a layout key, rank 0 moves
 * `bytes` between its layout and that key. The first transfer is checked
 * (rank 1's packed stream against rank 0's). Returns ns (median) on rank 0.
 */
static double uc_engine_point(umr_example_t *u, uct_mem_h memh, char *buf,
                              char *tmp, int is_get, size_t lblock,
                              size_t rblock, size_t stride_mul, size_t bytes)
{
    umr_layout_t *mine = uc_layout((uc_rank == 0) ? lblock : rblock,
                                   ((uc_rank == 0) ? lblock : rblock) *
                                   stride_mul, bytes);
    static unsigned seq;
    char rkey_buf[UMR_EXAMPLE_MAX_RKEY];
    double t[UC_MAX_SAMPLES], t0;
    uct_rkey_bundle_t rkey;
    uct_mem_h lmemh = NULL;
    int s, bad = 0;
    size_t i;

    if (uc_rank == 1) {
        UC_UCS(uct_umr_mem_reg(u->md, buf, mine, 1, 0, &lmemh),
               "uct_umr_mem_reg");
        UC_UCS(uct_md_mkey_pack(u->md, lmemh, rkey_buf), "uct_md_mkey_pack");
        UC_MPI(MPI_Send(rkey_buf, u->rkey_size, MPI_BYTE, 0, UC_TAG_SETUP,
                        MPI_COMM_WORLD));
    } else {
        UC_MPI(MPI_Recv(rkey_buf, u->rkey_size, MPI_BYTE, 1, UC_TAG_SETUP,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        UC_UCS(uct_rkey_unpack(u->component, rkey_buf, &rkey),
               "uct_rkey_unpack");
    }

    /* checked transfer: the source's packed stream must arrive; the
     * destination starts from a cleared span, the pattern changes with
     * every configuration */
    ++seq;
    for (i = 0; i < bytes; ++i) {
        tmp[i] = (char)(i * 13 + seq);
    }
    if (((uc_rank == 1) && is_get) || ((uc_rank == 0) && !is_get)) {
        UC_UCS(umr_layout_unpack(mine, 1, buf, tmp), "unpack (source)");
    } else {
        memset(buf, 0, umr_layout_true_ub(mine));
    }
    UC_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (uc_rank == 0) {
        uc_op(u, is_get, memh, buf, mine, bytes, rkey.rkey);
    }
    UC_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if ((uc_rank == 0) == is_get) { /* the destination checks */
        UC_UCS(umr_layout_pack(mine, 1, buf, tmp + bytes), "pack (check)");
        for (i = 0; i < bytes; ++i) {
            bad |= (tmp[bytes + i] != (char)(i * 13 + seq));
        }
    }
    UC_MPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_LOR,
                         MPI_COMM_WORLD));
    if (bad) {
        UC_FAIL("%s of %zu B (local blocks %zu, remote blocks %zu, stride "
                "%zux): wrong data", is_get ? "get" : "put", bytes, lblock,
                rblock, stride_mul);
    }

    if (uc_rank == 0) {
        for (s = 0; s < uc_samples; ++s) {
            t0 = MPI_Wtime();
            uc_op(u, is_get, memh, buf, mine, bytes, rkey.rkey);
            t[s] = MPI_Wtime() - t0;
        }
        uct_rkey_release(u->component, &rkey);
    }
    UC_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (uc_rank == 1) {
        uct_md_mem_dereg(u->md, lmemh);
    }
    umr_layout_free(mine);
    return (uc_rank == 0) ? uc_best(t, uc_samples) * 1e9 : 0;
}

/* Weighted least squares of t = op + r*R + l*L + b*B, weights 1/t: between
 * relative error (1/t^2, which lets the small cached transfers set the
 * per-byte cost) and absolute error (which ignores the small ones). */
static void uc_fit(const uc_point_t *p, int n, double x[4], double *max_err)
{
    double a[4][5] = {{0}}, f, w, row[4], pred;
    int i, j, k;

    for (i = 0; i < n; ++i) {
        row[0] = 1; row[1] = p[i].r; row[2] = p[i].l; row[3] = p[i].bytes;
        w = 1.0 / p[i].t;
        for (j = 0; j < 4; ++j) {
            for (k = 0; k < 4; ++k) {
                a[j][k] += w * row[j] * row[k];
            }
            a[j][4] += w * row[j] * p[i].t;
        }
    }
    for (j = 0; j < 4; ++j) { /* Gauss-Jordan, partial pivoting */
        int piv = j;
        for (i = j + 1; i < 4; ++i) {
            if (fabs(a[i][j]) > fabs(a[piv][j])) {
                piv = i;
            }
        }
        for (k = 0; k < 5; ++k) {
            f = a[j][k]; a[j][k] = a[piv][k]; a[piv][k] = f;
        }
        if (a[j][j] == 0) {
            UC_FAIL("singular fit");
        }
        for (i = 0; i < 4; ++i) {
            if (i != j) {
                f = a[i][j] / a[j][j];
                for (k = j; k < 5; ++k) {
                    a[i][k] -= f * a[j][k];
                }
            }
        }
    }
    for (j = 0; j < 4; ++j) {
        x[j] = a[j][4] / a[j][j];
        if (x[j] < 0) {
            x[j] = 0; /* a negative cost is noise */
        }
    }
    for (i = 0, *max_err = 0; i < n; ++i) {
        pred = x[0] + x[1] * p[i].r + x[2] * p[i].l + x[3] * p[i].bytes;
        f    = fabs(pred - p[i].t) / p[i].t;
        *max_err = (f > *max_err) ? f : *max_err;
    }
}

static void uc_engine_figures(FILE *out, umr_example_t *u, const char *eng,
                              char *buf, char *tmp)
{
    static const size_t blocks[] = { 8, 64, 512, 4096 };
    /* up to 16 MiB: large messages run from memory, not from the caches */
    static const size_t contig[] = { 64, 65536, 1ul << 20, 16ul << 20 };
    static const char *dens_names[] = { "dense", "sparse" };
    static const size_t stride_mul[] = { 2, 8 };
    uc_point_t pts[UC_MAX_POINTS];
    double x[4], err;
    uct_mem_h memh;
    size_t i, bytes, b;
    int is_get, d, n, side;

    UC_UCS(uct_md_mem_reg(u->md, buf, UC_BUF_BYTES, UCT_MD_MEM_ACCESS_ALL,
                          &memh), "uct_md_mem_reg");
    for (is_get = 1; is_get >= 0; --is_get) {
        for (d = 0; d < 2; ++d) {
            n = 0;
            for (i = 0; i < sizeof(contig) / sizeof(contig[0]); ++i) {
                pts[n].r = pts[n].l = 1;
                pts[n].bytes = contig[i];
                pts[n++].t = uc_engine_point(u, memh, buf, tmp, is_get, 0, 0,
                                             1, contig[i]);
            }
            for (i = 0; i < sizeof(blocks) / sizeof(blocks[0]); ++i) {
                b     = blocks[i];
                bytes = b * 2048;
                if (bytes > (8ul << 20)) {
                    bytes = 8ul << 20;
                }
                for (side = 0; side < 3; ++side) { /* remote, local, both */
                    size_t lb = (side != 0) ? b : 0, rb = (side != 1) ? b : 0;
                    pts[n].r     = rb ? (double)(bytes / b) : 1;
                    pts[n].l     = lb ? (double)(bytes / b) : 1;
                    pts[n].bytes = bytes;
                    pts[n++].t   = uc_engine_point(u, memh, buf, tmp, is_get,
                                                   lb, rb, stride_mul[d],
                                                   bytes);
                }
            }
            if (uc_rank != 0) {
                continue;
            }
            uc_fit(pts, n, x, &err);
            fprintf(out, "# %s %s %s (stride %zux): %d points, fit within "
                    "%.0f%%\n", eng, is_get ? "get" : "put", dens_names[d],
                    stride_mul[d], n, err * 100);
            fprintf(out, "engine.%s.%s.%s.op_ns = %.0f\n", eng,
                    is_get ? "get" : "put", dens_names[d], x[0]);
            fprintf(out, "engine.%s.%s.%s.rentry_ns = %.2f\n", eng,
                    is_get ? "get" : "put", dens_names[d], x[1]);
            fprintf(out, "engine.%s.%s.%s.lentry_ns = %.2f\n", eng,
                    is_get ? "get" : "put", dens_names[d], x[2]);
            fprintf(out, "engine.%s.%s.%s.byte_ns = %.4f   # %.2f GB/s\n",
                    eng, is_get ? "get" : "put", dens_names[d], x[3],
                    (x[3] > 0) ? 1 / x[3] : INFINITY);
            fflush(out);
        }
    }
    uct_md_mem_dereg(u->md, memh);
}

/* The md the example opened: "sw" is the sw engine, anything else mlx5. */
static const char *uc_engine_name(umr_example_t *u, const char *dev)
{
    uct_md_resource_desc_t mds[8];
    uct_component_attr_t attr = {
        .field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT
    };

    if (dev == NULL) {
        UC_UCS(uct_component_query(u->component, &attr), "component query");
        if ((attr.md_resource_count == 0) || (attr.md_resource_count > 8)) {
            UC_FAIL("%u mlx5_umr devices", attr.md_resource_count);
        }
        attr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        attr.md_resources = mds;
        UC_UCS(uct_component_query(u->component, &attr), "component query");
        dev = mds[0].md_name;
    }
    return strcmp(dev, "sw") ? "mlx5" : "sw";
}

/* ---- crossover (no MPI) ------------------------------------------------- */

static int uc_crossover(const char *path, const char *pml)
{
    static const size_t sizes[] = { 64ul << 10, 1ul << 20, 16ul << 20 };
    static const double dens[] = { 0.5, 0.125, 1.0 / 256 };
    umr_mpi_cost_t cost;
    char err[512];
    size_t b, i, d;
    int ret, eng, scope;

    ret = umr_mpi_cost_load(&cost, path, pml, err, sizeof(err));
    if (ret != 0) {
        fprintf(stderr, "umr_calibrate: %s\n", ret > 0 ? "no costs file" : err);
        return 1;
    }
    printf("# %s over %s with %s: smallest block size (powers of 2, "
           "8 B .. 64 KiB) from which a vector message goes zero-copy\n",
           strcmp(pml, "mpich") ? "pml/umr" : "libumr_mpich.so", pml, path);
    printf("%-6s %-7s %-9s", "engine", "scope", "density");
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        printf(" %10zu KiB", sizes[i] >> 10);
    }
    printf("\n");
    for (eng = 0; eng < UMR_MPI_COST_NUM_ENG; ++eng) {
        scope = (eng == UMR_MPI_COST_SW) ? UMR_MPI_COST_LOCAL :
                                               UMR_MPI_COST_REMOTE;
        for (d = 0; d < sizeof(dens) / sizeof(dens[0]); ++d) {
            printf("%-6s %-7s %-9.4f", eng ? "mlx5" : "sw",
                   scope ? "remote" : "local", dens[d]);
            for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
                /* the smallest block from which every larger one goes
                 * zero-copy; '*' when some smaller one does too */
                int below = 0, from = -1, k = 0;
                for (b = 8; b <= 65536; b *= 2, ++k) {
                    int z = umr_mpi_cost_prefer_zcopy(&cost, eng, scope,
                                                          sizes[i],
                                                          sizes[i] / b,
                                                          dens[d]);
                    if (z && (from < 0)) {
                        from = k;
                    } else if (!z && (from >= 0)) {
                        below = 1;
                        from  = -1;
                    }
                }
                if (from < 0) {
                    printf(" %14s", "never");
                } else {
                    printf(" %12zu B%s", (size_t)8 << from, below ? "*" : "");
                }
            }
            printf("\n");
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = NULL, *dev = NULL, *pml, *scope;
    char host[MPI_MAX_PROCESSOR_NAME], peer_host[MPI_MAX_PROCESSOR_NAME];
    int opt, size, len, engine = 1, osc = 1, packed = 0;
    char *buf, *tmp;
    umr_example_t u;
    FILE *out = stdout;
    time_t now;

    if ((argc == 4) && !strcmp(argv[1], "--crossover")) {
        return uc_crossover(argv[2], argv[3]);
    }

    UC_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &uc_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((opt = getopt(argc, argv, "o:d:qEOPh")) != -1) {
        switch (opt) {
        case 'o': path = optarg; break;
        case 'd': dev = optarg; break;
        case 'q': uc_samples = 5; break;
        case 'E': engine = 0; break;
        case 'O': osc = 0; break;
        case 'P': packed = 1; break;
        default:
            if (uc_rank == 0) {
                fprintf(stderr, "usage: mpirun -np 2 %s [-o file] [-d device] "
                        "[-q] [-E] [-O] [-P]\n       %s --crossover FILE PML\n",
                        argv[0], argv[0]);
            }
            MPI_Finalize();
            return (opt == 'h') ? 0 : 1;
        }
    }
    if (size != 2) {
        UC_FAIL("needs exactly 2 ranks");
    }
    if ((uc_rank == 0) && (path != NULL) && !(out = fopen(path, "w"))) {
        UC_FAIL("cannot write %s", path);
    }

    MPI_Get_processor_name(host, &len);
    memcpy(peer_host, host, sizeof(host));
    UC_MPI(MPI_Bcast(peer_host, sizeof(peer_host), MPI_CHAR, 1,
                     MPI_COMM_WORLD));
    scope = strcmp(host, peer_host) ? "remote" : "local";
#ifdef MPICH_VERSION
    /* built with an MPICH-family mpicc (test/mpich): MPICH's own costs,
     * the ones libumr_mpich.so reads (pml.mpich.*) */
    pml   = "mpich";
#else
    pml   = umr_example_pml_name();
#endif
    buf   = calloc(1, UC_BUF_BYTES);
    tmp   = malloc(2 * (16ul << 20));
    if ((buf == NULL) || (tmp == NULL)) {
        UC_FAIL("out of memory");
    }

    if (uc_rank == 0) {
        now = time(NULL);
        fprintf(out, "# umr_calibrate: %s, %s PML %s, rank 1 on %s; best of "
                "%d\n", host, scope, pml, peer_host, uc_samples);
        fprintf(out, "version = 1\nhost = %s\ndate = %s", host, ctime(&now));
        fflush(out);
    }
    if (packed) {
        /* osc/umr's packed path only (its run: contrib/umr-calibrate.sh) */
        uc_osc_figures(out, scope, 1);
        engine = 0;
    } else {
        uc_pml_figures(out, buf, pml, scope);
        if (osc) {
            uc_osc_figures(out, scope, 0);
        }
    }

    if (engine) {
        UC_UCS(umr_example_open(&u, dev), u.error);
        UC_UCS(umr_example_connect(&u, uc_exchange, NULL), u.error);
        uc_engine_figures(out, &u, uc_engine_name(&u, dev), buf, tmp);
        UC_MPI(MPI_Barrier(MPI_COMM_WORLD));
        umr_example_close(&u);
    }

    if ((uc_rank == 0) && (out != stdout)) {
        fclose(out);
    }
    free(tmp);
    free(buf);
    UC_MPI(MPI_Finalize());
    return 0;
}
