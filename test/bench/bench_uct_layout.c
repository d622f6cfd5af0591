/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * UCT benchmark of strided layout keys: put and get between two processes
 * through the mlx5_umr transport's public API (uct_umr_mem_reg layout keys),
 * against the same bytes moved contiguously.
 *
 * The target (forked child) registers a vector of `block`-byte blocks at
 * stride 1x, 2x or 4x the block as one layout key, and the same number of
 * bytes contiguously; the initiator moves `bytes` per operation into
 * (put) or out of (get) the layout from a local layout of the same shape
 * (default) or from contiguous local memory (-L), and contiguously for
 * comparison. A stride of 1x is contiguous after normalisation.
 *
 * Each point: one verified transfer (every byte where the layout says),
 * then `repeats` timed runs of back-to-back operations until all completed
 * (32 MiB, or about 0.25 s a run for slow points; 4 MiB / 0.05 s with -q);
 * the median run is reported as us per operation and GB/s (1e9 B/s).
 * The engine follows UCX_MLX5_UMR_ENGINE (sw|mlx5|auto): on sw the figures
 * are cross-memory attach on this host, NOT NIC figures.
 *
 * usage: bench_uct_layout [-q] [-c] [-L | -M] [-s bytes] [-r repeats]
 *                         [-b min_block] [-B max_block] [-d device]
 *   -q  quick: 8 B, 512 B, 64 KiB blocks, 256 KiB per op, 3 repeats
 *   -c  machine-readable output: CSV with a header line (comments start '#')
 *   -L  contiguous local memory (the remote side stays a layout)
 *   -M  local key cache misses: the local layout is at another base each
 *       operation (BENCH_MISS_BASES bases a byte apart, cycled: more than
 *       the endpoint's key cache holds, so every timed operation configures
 *       a local key - on the endpoint's QP with UCX_MLX5_UMR_EP_UMR=y, on
 *       the md's QP, waited for, with n - and evicts one). Without -M the
 *       timed operations are cache hits.
 * Exit status: 0 (every transfer verified), 1 (failure), 77 (no device for
 * the selected engine, e.g. UCX_MLX5_UMR_ENGINE=mlx5 without a ConnectX).
 */
#include "umr_example.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BENCH_MAX_REPEATS 64
#define BENCH_MISS_BASES  257   /* > UCX_MLX5_UMR_CACHE_SIZE (64) */

enum { CMD_SETUP, CMD_CHECK, CMD_FILL, CMD_FREE, CMD_QUIT };
enum { OP_PUT, OP_GET };

typedef struct {
    uint32_t cmd;
    uint32_t op;            /* CHECK/FILL: which key (layout or contig) */
    uint64_t block;
    uint64_t stride;
    uint64_t bytes;
    uint64_t seed;
} bench_req_t;

typedef struct {
    int32_t  status;
    uint32_t mismatches;    /* CHECK */
    uint64_t contig_va;     /* SETUP: VA of the contiguous buffer */
} bench_rep_t;

typedef struct {
    size_t   min_block, max_block, bytes;
    unsigned repeats;
    int      quick, csv, local_contig, miss;
    const char *dev;
} bench_opts_t;

typedef struct {
    int           fd;
    umr_example_t ex;
} bench_ctx_t;

static void bench_die(const char *what, ucs_status_t status)
{
    fprintf(stderr, "bench_uct_layout: %s failed: %s\n", what,
            ucs_status_string(status));
    exit(1);
}

static int bench_io(int fd, void *buf, size_t len, int out)
{
    char *p = buf;
    ssize_t n;

    while (len > 0) {
        n = out ? write(fd, p, len) : read(fd, p, len);
        if (n <= 0) {
            if ((n < 0) && (errno == EINTR)) {
                continue;
            }
            return -1;
        }
        p   += n;
        len -= (size_t)n;
    }
    return 0;
}

#define BENCH_SEND(_fd, _v) bench_io(_fd, (void*)&(_v), sizeof(_v), 1)
#define BENCH_RECV(_fd, _v) bench_io(_fd, &(_v), sizeof(_v), 0)

static ucs_status_t bench_exchange(void *arg, const void *mine, size_t len,
                                   void *peer, size_t max)
{
    int fd       = *(int*)arg;
    uint64_t n   = len, pn;

    if ((BENCH_SEND(fd, n) != 0) || (bench_io(fd, (void*)mine, len, 1) != 0) ||
        (BENCH_RECV(fd, pn) != 0) || (pn > max) ||
        (bench_io(fd, peer, pn, 0) != 0)) {
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

/* Byte k of the packed stream of a configuration. */
static inline uint8_t bench_pattern(uint64_t k, uint64_t seed)
{
    return (uint8_t)((k * 131u) ^ (k >> 8) ^ seed);
}

/* Offset in a strided buffer of stream byte k. */
static inline size_t bench_at(size_t k, size_t block, size_t stride)
{
    return (k / block) * stride + (k % block);
}

/* UCX_MLX5_UMR_EP_UMR as the transport reads it: n/no/off/0 are false,
 * anything else (unset: the default y) true */
static int bench_ep_umr_on(const char *v)
{
    return (v == NULL) || !(!strcasecmp(v, "n") || !strcasecmp(v, "no") ||
                            !strcasecmp(v, "off") || !strcmp(v, "0"));
}

static double bench_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------------ */
/* Target                                                                   */

typedef struct {
    umr_layout_t *layout;
    char             *strided, *contig;
    uct_mem_h        lmemh, cmemh;
    size_t           block, stride, bytes;
} bench_target_t;

static void bench_target_free(bench_target_t *t, umr_example_t *ex)
{
    if (t->layout != NULL) {
        uct_md_mem_dereg(ex->md, t->lmemh);
        uct_md_mem_dereg(ex->md, t->cmemh);
        umr_layout_free(t->layout);
        free(t->strided);
        free(t->contig);
    }
    memset(t, 0, sizeof(*t));
}

static ucs_status_t bench_target_setup(bench_target_t *t, umr_example_t *ex,
                                       const bench_req_t *req, int fd)
{
    size_t nblocks = req->bytes / req->block;
    char rkeys[2][UMR_EXAMPLE_MAX_RKEY];
    bench_rep_t rep = {0};
    ucs_status_t status;

    t->block   = req->block;
    t->stride  = req->stride;
    t->bytes   = req->bytes;
    t->strided = calloc(1, nblocks * req->stride);
    t->contig  = calloc(1, req->bytes);
    if ((t->strided == NULL) || (t->contig == NULL)) {
        return UCS_ERR_NO_MEMORY;
    }
    status = umr_layout_vector(nblocks, req->block, req->stride, NULL,
                               &t->layout);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_umr_mem_reg(ex->md, t->strided, t->layout, 1, 0, &t->lmemh);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_md_mem_reg(ex->md, t->contig, req->bytes,
                            UCT_MD_MEM_ACCESS_ALL, &t->cmemh);
    if (status != UCS_OK) {
        uct_md_mem_dereg(ex->md, t->lmemh);
        return status;
    }
    status = uct_md_mkey_pack(ex->md, t->lmemh, rkeys[0]);
    if (status == UCS_OK) {
        status = uct_md_mkey_pack(ex->md, t->cmemh, rkeys[1]);
    }
    rep.status    = status;
    rep.contig_va = (uintptr_t)t->contig;
    if ((BENCH_SEND(fd, rep) != 0) ||
        (bench_io(fd, rkeys, sizeof(rkeys), 1) != 0)) {
        return UCS_ERR_IO_ERROR;
    }
    return status;
}

/* CHECK: every stream byte in place, nothing between the blocks. FILL: the
 * stream pattern into both buffers (for gets). */
static uint32_t bench_target_check_fill(bench_target_t *t,
                                        const bench_req_t *req)
{
    size_t span = (t->bytes / t->block) * t->stride;
    uint32_t bad = 0;
    size_t k, i;

    if (req->cmd == CMD_FILL) {
        for (k = 0; k < t->bytes; ++k) {
            t->strided[bench_at(k, t->block, t->stride)] =
                    bench_pattern(k, req->seed);
            t->contig[k] = bench_pattern(k, req->seed);
        }
        return 0;
    }

    if (req->op == 0) {
        for (k = 0; k < t->bytes; ++k) {
            bad += t->strided[bench_at(k, t->block, t->stride)] !=
                   (char)bench_pattern(k, req->seed);
        }
        for (i = 0; i < span; ++i) {    /* the gaps stay zero */
            bad += ((i % t->stride) >= t->block) && (t->strided[i] != 0);
        }
    } else {
        for (k = 0; k < t->bytes; ++k) {
            bad += t->contig[k] != (char)bench_pattern(k, req->seed);
        }
    }
    return bad;
}

static int bench_target(int fd, const char *dev)
{
    bench_ctx_t ctx = {.fd = fd};
    bench_target_t t = {0};
    bench_rep_t rep;
    bench_req_t req;
    ucs_status_t status;

    status = umr_example_open(&ctx.ex, dev);
    if (status != UCS_OK) {
        /* the initiator reports it */
        return (status == UCS_ERR_NO_DEVICE) ? 77 : 1;
    }
    status = umr_example_connect(&ctx.ex, bench_exchange, &ctx.fd);
    if (status != UCS_OK) {
        fprintf(stderr, "target: %s failed: %s\n", ctx.ex.error,
                ucs_status_string(status));
        return 1;
    }

    while (BENCH_RECV(fd, req) == 0) {
        memset(&rep, 0, sizeof(rep));
        switch (req.cmd) {
        case CMD_SETUP:
            bench_target_free(&t, &ctx.ex);
            if (bench_target_setup(&t, &ctx.ex, &req, fd) != UCS_OK) {
                return 1;
            }
            continue;
        case CMD_CHECK:
        case CMD_FILL:
            rep.mismatches = bench_target_check_fill(&t, &req);
            break;
        case CMD_FREE:
            bench_target_free(&t, &ctx.ex);
            break;
        case CMD_QUIT:
            bench_target_free(&t, &ctx.ex);
            umr_example_close(&ctx.ex);
            return 0;
        }
        if (BENCH_SEND(fd, rep) != 0) {
            return 1;
        }
    }
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Initiator                                                                */

typedef struct {
    uct_completion_t super;
    int              done;
} bench_comp_t;

static void bench_comp_cb(uct_completion_t *self)
{
    ((bench_comp_t*)self)->done = 1;
}

typedef struct {
    int                    op;
    uct_iov_t              iov;        /* local side */
    const umr_layout_t *layout;    /* local layout, or NULL (iov) */
    uint64_t               raddr;
    uct_rkey_t             rkey;
    unsigned               bases;      /* -M: cycle the local base over
                                          this many bytes (0: fixed) */
    unsigned               *cursor;    /* the next base, across runs */
} bench_xfer_t;

static ucs_status_t bench_post(umr_example_t *ex, const bench_xfer_t *x,
                               uct_completion_t *comp)
{
    char *base = x->iov.buffer;
    ucs_status_t status;

    if (x->bases != 0) {
        base += *x->cursor;
        *x->cursor = (*x->cursor + 1) % x->bases;
    }
    for (;;) {
        if (x->layout != NULL) {
            status = (x->op == OP_PUT) ?
                     uct_umr_ep_put_layout(ex->ep, x->iov.memh, base,
                                           x->layout, 1, 0, x->iov.length,
                                           x->raddr, x->rkey, comp) :
                     uct_umr_ep_get_layout(ex->ep, x->iov.memh, base,
                                           x->layout, 1, 0, x->iov.length,
                                           x->raddr, x->rkey, comp);
        } else {
            status = (x->op == OP_PUT) ?
                     uct_ep_put_zcopy(ex->ep, &x->iov, 1, x->raddr, x->rkey,
                                      comp) :
                     uct_ep_get_zcopy(ex->ep, &x->iov, 1, x->raddr, x->rkey,
                                      comp);
        }
        if (status != UCS_ERR_NO_RESOURCE) {
            return status;
        }
        uct_worker_progress(ex->worker);
    }
}

/* `iters` operations back to back, all completed; seconds, or < 0. One
 * completion counts them: one more than posted until the loop ends. */
static double bench_run(umr_example_t *ex, const bench_xfer_t *x,
                        unsigned iters)
{
    bench_comp_t comp = {
        .super = {.func = bench_comp_cb, .count = 1, .status = UCS_OK},
        .done  = 0
    };
    ucs_status_t status;
    double t0 = bench_now();
    unsigned i;

    for (i = 0; i < iters; ++i) {
        ++comp.super.count;     /* completions come from progress only */
        status = bench_post(ex, x, &comp.super);
        if (status == UCS_OK) {
            --comp.super.count;
        } else if (status != UCS_INPROGRESS) {
            fprintf(stderr, "bench_uct_layout: %s failed: %s\n",
                    (x->op == OP_PUT) ? "put" : "get",
                    ucs_status_string(status));
            --comp.super.count;
            break;
        }
    }
    if (--comp.super.count == 0) {
        comp.done = 1;
    }
    while (!comp.done) {
        uct_worker_progress(ex->worker);
    }
    if ((i < iters) || (comp.super.status != UCS_OK)) {
        if (i == iters) {
            fprintf(stderr, "bench_uct_layout: %s completed with %s\n",
                    (x->op == OP_PUT) ? "put" : "get",
                    ucs_status_string(comp.super.status));
        }
        return -1;
    }
    return bench_now() - t0;
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

/* Median us per operation over the repeats, or < 0 on failure. */
static double bench_measure(umr_example_t *ex, const bench_xfer_t *x,
                            const bench_opts_t *o)
{
    double t[BENCH_MAX_REPEATS], warm;
    double run_time = o->quick ? 0.05 : 0.25;   /* seconds per timed run */
    size_t budget   = o->quick ? (4ul << 20) : (32ul << 20);
    unsigned iters  = (unsigned)(budget / x->iov.length);
    unsigned r;

    warm = bench_run(ex, x, 2);     /* warm up: keys, caches */
    if (warm < 0) {
        return -1;
    }
    /* enough operations for `budget` bytes, but no run much longer than
     * run_time (slow points: tiny blocks through cross-memory attach) */
    if ((warm > 0) && (iters > run_time / (warm / 2))) {
        iters = (unsigned)(run_time / (warm / 2));
    }
    iters = (iters < 2) ? 2 : (iters > 2000) ? 2000 : iters;
    for (r = 0; r < o->repeats; ++r) {
        t[r] = bench_run(ex, x, iters);
        if (t[r] < 0) {
            return -1;
        }
        t[r] = t[r] * 1e6 / iters;
    }
    qsort(t, o->repeats, sizeof(t[0]), bench_cmp_double);
    return t[o->repeats / 2];
}

typedef struct {
    bench_ctx_t      *ctx;
    const bench_opts_t *o;
    char             *local;        /* strided or contiguous local buffer */
    size_t           local_size;
    uct_mem_h        local_memh;    /* plain registration of `local` */
    char             *clocal;       /* contiguous local buffer */
    uct_mem_h        clocal_memh;
} bench_init_t;

static int bench_request(bench_ctx_t *ctx, bench_req_t *req, bench_rep_t *rep)
{
    return (BENCH_SEND(ctx->fd, *req) != 0) ||
           (BENCH_RECV(ctx->fd, *rep) != 0);
}

/* Local stream byte k: where, in the local buffer of this configuration. */
static size_t bench_local_at(const bench_opts_t *o, size_t k, size_t block,
                             size_t stride)
{
    return o->local_contig ? k : bench_at(k, block, stride);
}

/* One configuration: verify once, then time layout and contiguous, put and
 * get. Prints two rows. Returns 0 or -1. */
static int bench_point(bench_init_t *in, size_t block, size_t stride,
                       uint64_t seed)
{
    const bench_opts_t *o = in->o;
    umr_example_t *ex     = &in->ctx->ex;
    size_t bytes          = o->bytes, nblocks = bytes / block, k;
    char rkeys[2][UMR_EXAMPLE_MAX_RKEY];
    uct_rkey_bundle_t lkey, ckey;
    umr_layout_t *layout;
    bench_req_t req       = {.cmd = CMD_SETUP, .block = block,
                             .stride = stride, .bytes = bytes, .seed = seed};
    bench_rep_t rep;
    bench_xfer_t x, cx, tx;
    unsigned cursor = 0;
    double us[2][2];
    ucs_status_t status;
    uint32_t bad;
    int op, ret = -1;

    if ((BENCH_SEND(in->ctx->fd, req) != 0) ||
        (BENCH_RECV(in->ctx->fd, rep) != 0) ||
        (bench_io(in->ctx->fd, rkeys, sizeof(rkeys), 0) != 0) ||
        (rep.status != UCS_OK)) {
        fprintf(stderr, "bench_uct_layout: target setup (block %zu stride "
                "%zu) failed\n", block, stride);
        return -1;
    }
    status = umr_layout_vector(nblocks, block, stride, NULL, &layout);
    if (status != UCS_OK) {
        bench_die("umr_layout_vector", status);
    }
    if ((uct_rkey_unpack(ex->component, rkeys[0], &lkey) != UCS_OK) ||
        (uct_rkey_unpack(ex->component, rkeys[1], &ckey) != UCS_OK)) {
        bench_die("uct_rkey_unpack", UCS_ERR_INVALID_PARAM);
    }

    /* the local side: the same layout over registered memory (the ep
     * caches its key), or contiguous memory */
    memset(&x, 0, sizeof(x));
    x.iov.buffer = in->local;
    x.iov.length = bytes;
    x.iov.memh   = in->local_memh;
    x.iov.count  = 1;
    x.layout     = o->local_contig ? NULL : layout;
    x.raddr      = 0;                /* layout keys are zero-based */
    x.rkey       = lkey.rkey;
    cx           = x;
    cx.iov.buffer = in->clocal;
    cx.iov.memh   = in->clocal_memh;
    cx.layout     = NULL;
    cx.raddr      = rep.contig_va;
    cx.rkey       = ckey.rkey;

    for (op = OP_PUT; op <= OP_GET; ++op) {
        x.op = cx.op = op;

        /* verify the layout transfer once: every byte, nothing else */
        memset(in->local, 0, in->local_size);
        if (op == OP_PUT) {
            for (k = 0; k < bytes; ++k) {
                in->local[bench_local_at(o, k, block, stride)] =
                        bench_pattern(k, seed);
            }
        } else {
            req.cmd = CMD_FILL;
            if (bench_request(in->ctx, &req, &rep) != 0) {
                goto out;
            }
        }
        if (bench_run(ex, &x, 1) < 0) {
            goto out;
        }
        if (op == OP_PUT) {
            req.cmd = CMD_CHECK;
            req.op  = 0;
            if (bench_request(in->ctx, &req, &rep) != 0) {
                goto out;
            }
            bad = rep.mismatches;
        } else {
            bad = 0;
            for (k = 0; k < bytes; ++k) {
                bad += in->local[bench_local_at(o, k, block, stride)] !=
                       (char)bench_pattern(k, seed);
            }
        }
        if (bad != 0) {
            fprintf(stderr, "bench_uct_layout: %s block %zu stride %zu: %u "
                    "bytes wrong\n", (op == OP_PUT) ? "put" : "get", block,
                    stride, bad);
            goto out;
        }

        /* timed: with -M each operation at the next base */
        tx = x;
        if (o->miss) {
            tx.bases  = BENCH_MISS_BASES;
            tx.cursor = &cursor;
        }
        us[op][0] = bench_measure(ex, &tx, o);
        us[op][1] = bench_measure(ex, &cx, o);
        if ((us[op][0] < 0) || (us[op][1] < 0)) {
            goto out;
        }
    }

    for (op = OP_PUT; op <= OP_GET; ++op) {
        printf(o->csv ? "%s,%zu,%zu,%zu,%.3f,%.4f,%.3f,%.4f\n" :
                        "%-4s %8zu %8zu %9zu %11.2f %8.3f %11.2f %8.3f\n",
               (op == OP_PUT) ? "put" : "get", block, stride, bytes,
               us[op][0], bytes / us[op][0] * 1e-3, us[op][1],
               bytes / us[op][1] * 1e-3);
    }
    fflush(stdout);
    ret = 0;

out:
    uct_rkey_release(ex->component, &lkey);
    uct_rkey_release(ex->component, &ckey);
    umr_layout_free(layout);
    req.cmd = CMD_FREE;
    if ((bench_request(in->ctx, &req, &rep) != 0) && (ret == 0)) {
        ret = -1;
    }
    return ret;
}

static const char *bench_device_name(umr_example_t *ex, char *buf, size_t max)
{
    uct_tl_resource_desc_t *res;
    unsigned num;

    snprintf(buf, max, "?");
    if ((uct_md_query_tl_resources(ex->md, &res, &num) == UCS_OK)) {
        if (num > 0) {
            snprintf(buf, max, "%s", res[0].dev_name);
        }
        uct_release_tl_resource_list(res);
    }
    return buf;
}

static int bench_initiator(int fd, const bench_opts_t *o)
{
    static const size_t quick_blocks[] = {8, 512, 65536};
    bench_ctx_t ctx = {.fd = fd};
    bench_init_t in = {.ctx = &ctx, .o = o};
    bench_req_t quit = {.cmd = CMD_QUIT};
    ucs_status_t status;
    size_t block, stride, mult, qi = 0;
    char devname[64];
    int failed = 0;

    status = umr_example_open(&ctx.ex, o->dev);
    if (status != UCS_OK) {
        fprintf(stderr, "bench_uct_layout: %s failed: %s\n", ctx.ex.error,
                ucs_status_string(status));
        return (status == UCS_ERR_NO_DEVICE) ? 77 : 1;
    }
    status = umr_example_connect(&ctx.ex, bench_exchange, &ctx.fd);
    if (status != UCS_OK) {
        fprintf(stderr, "bench_uct_layout: %s failed: %s\n", ctx.ex.error,
                ucs_status_string(status));
        umr_example_close(&ctx.ex);
        return 1;
    }

    /* the largest local buffer: max_block blocks at 4x, registered once */
    in.local_size = o->local_contig ? o->bytes :
                    4 * o->bytes + (o->miss ? BENCH_MISS_BASES : 0);
    in.local      = calloc(1, in.local_size);
    in.clocal     = calloc(1, o->bytes);
    if ((in.local == NULL) || (in.clocal == NULL)) {
        bench_die("allocating local buffers", UCS_ERR_NO_MEMORY);
    }
    status = uct_md_mem_reg(ctx.ex.md, in.local, in.local_size,
                            UCT_MD_MEM_ACCESS_ALL, &in.local_memh);
    if (status == UCS_OK) {
        status = uct_md_mem_reg(ctx.ex.md, in.clocal, o->bytes,
                                UCT_MD_MEM_ACCESS_ALL, &in.clocal_memh);
    }
    if (status != UCS_OK) {
        bench_die("uct_md_mem_reg", status);
    }

    bench_device_name(&ctx.ex, devname, sizeof(devname));
    printf("# bench_uct_layout: device %s (UCX_MLX5_UMR_ENGINE=%s)%s\n",
           devname, getenv("UCX_MLX5_UMR_ENGINE") ?: "auto",
           strcmp(devname, "sw") ? "" :
           ": sw engine, cross-memory attach on this host, NOT NIC figures");
    printf("# remote: one layout key over a vector of <block> B blocks at "
           "<stride>; local: %s\n", o->local_contig ? "contiguous memory" :
           o->miss ? "the same layout at another of 257 bases each operation "
                     "(uct_umr_ep_{put,get}_layout): every one a local key "
                     "cache miss" :
           "the same layout (uct_umr_ep_{put,get}_layout)");
    if (o->miss) {
        printf("# local keys configured on the %s (UCX_MLX5_UMR_EP_UMR=%s)\n",
               bench_ep_umr_on(getenv("UCX_MLX5_UMR_EP_UMR")) ?
               "endpoint's QP" : "md's QP, waited for",
               getenv("UCX_MLX5_UMR_EP_UMR") ?: "y");
    }
    printf("# <bytes> per operation; median of %u runs; layout_* vs "
           "contig_* (the same bytes, contiguous on both sides); "
           "GB/s = 1e9 B/s\n", o->repeats);
    printf(o->csv ? "op,block,stride,bytes,layout_us,layout_gbps,contig_us,"
                    "contig_gbps\n" :
                    "op      block   stride     bytes   layout_us  "
                    "layout_GB/s   contig_us  contig_GB/s\n");

    for (block = o->min_block; block <= o->max_block;
         block = o->quick ? ((++qi < 3) ? quick_blocks[qi] : SIZE_MAX) :
                            block * 2) {
        if (block > o->bytes) {
            break;
        }
        for (mult = 1; mult <= 4; mult *= 2) {
            stride = block * mult;
            if (bench_point(&in, block, stride, block ^ mult) != 0) {
                failed = 1;
                goto out;
            }
        }
    }

out:
    if ((BENCH_SEND(fd, quit) != 0)) {
        failed = 1;
    }
    uct_md_mem_dereg(ctx.ex.md, in.local_memh);
    uct_md_mem_dereg(ctx.ex.md, in.clocal_memh);
    free(in.local);
    free(in.clocal);
    umr_example_close(&ctx.ex);
    return failed;
}

static void bench_usage(const char *prog)
{
    fprintf(stderr, "usage: %s [-q] [-c] [-L | -M] [-s bytes] [-r repeats] "
            "[-b min_block] [-B max_block] [-d device]\n"
            "  -q quick (8 B, 512 B, 64 KiB blocks; 256 KiB; 3 repeats)\n"
            "  -c CSV output   -L contiguous local side\n"
            "  -M a local key cache miss every operation\n"
            "engine: UCX_MLX5_UMR_ENGINE=sw|mlx5|auto\n", prog);
}

int main(int argc, char **argv)
{
    bench_opts_t o = {.min_block = 8, .max_block = 65536,
                      .bytes = 1ul << 20, .repeats = 5};
    int opt, sv[2], status, rc;
    pid_t pid;

    while ((opt = getopt(argc, argv, "qcLMs:r:b:B:d:h")) != -1) {
        switch (opt) {
        case 'q': o.quick = 1; o.bytes = 256ul << 10; o.repeats = 3; break;
        case 'c': o.csv = 1; break;
        case 'L': o.local_contig = 1; break;
        case 'M': o.miss = 1; break;
        case 's': o.bytes = strtoull(optarg, NULL, 0); break;
        case 'r': o.repeats = (unsigned)atoi(optarg); break;
        case 'b': o.min_block = strtoull(optarg, NULL, 0); break;
        case 'B': o.max_block = strtoull(optarg, NULL, 0); break;
        case 'd': o.dev = optarg; break;
        default:  bench_usage(argv[0]); return (opt == 'h') ? 0 : 1;
        }
    }
    if (o.quick) {
        o.min_block = 8;
        o.max_block = 65536;
    }
    if (o.miss && o.local_contig) {
        fprintf(stderr, "bench_uct_layout: -M needs a local layout (not "
                "-L)\n");
        bench_usage(argv[0]);
        return 1;
    }
    if ((o.repeats < 1) || (o.repeats > BENCH_MAX_REPEATS) ||
        (o.min_block < 1) || (o.min_block > o.max_block) ||
        (o.bytes < o.max_block) || (o.bytes % o.max_block) ||
        (o.max_block & (o.max_block - 1)) ||
        (o.min_block & (o.min_block - 1))) {
        fprintf(stderr, "bench_uct_layout: blocks must be powers of 2 with "
                "min <= max <= bytes, bytes a multiple of max, 1 <= repeats "
                "<= %d\n", BENCH_MAX_REPEATS);
        bench_usage(argv[0]);
        return 1;
    }

    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        perror("socketpair");
        return 1;
    }
    fflush(stdout);
    pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        close(sv[0]);
        _exit(bench_target(sv[1], o.dev));
    }

    close(sv[1]);
    rc = bench_initiator(sv[0], &o);
    close(sv[0]);
    if (waitpid(pid, &status, 0) != pid) {
        perror("waitpid");
        return 1;
    }
    if (rc == 77) {
        printf("# skipped: no mlx5_umr device for this engine\n");
        return 77;
    }
    if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0)) {
        fprintf(stderr, "bench_uct_layout: target %s %d\n",
                WIFEXITED(status) ? "exited with" : "killed by signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        rc = 1;
    }
    return rc;
}
