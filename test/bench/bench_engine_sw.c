/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * sw engine benchmark: strided put/get through UMR keys of the sw engine,
 * against contiguous cross-memory attach (process_vm_writev/readv of the
 * same number of bytes) and against pack + contiguous copy + unpack.
 *
 * A second table is the engine's own overhead: the same strided transfer
 * done by calling process_vm_writev/readv directly on the same iovecs
 * (raw_*: one iovec per block on both sides, IOV_MAX a call; rawb_*: the
 * local side packed to / unpacked from a bounce buffer with memcpy, the
 * remote side one iovec per block - what the engine itself does for small
 * local blocks). "x" is the engine's time over the better raw variant, and
 * ns/blk the difference per remote block: the cost the engine adds to
 * cross-memory attach (key lookups, bounds checks, queueing, completion).
 *
 * Two processes (fork), data = a vector of `block`-byte blocks with stride
 * 2 * block on both sides. Figures are cross-memory attach on this host,
 * not NIC figures.
 *
 * usage: bench_engine_sw [-d max_data_bytes] [-t seconds_per_point] [-r repeats]
 */
#include "umr_config.h"

#include "engine.h"
#include "layout.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BENCH_RW (UMR_ENG_ACCESS_LOCAL_WRITE | UMR_ENG_ACCESS_REMOTE_WRITE | \
                  UMR_ENG_ACCESS_REMOTE_READ)
#define BENCH_MAX_KEYS 64

enum { CMD_SETUP, CMD_UNPACK, CMD_PACK, CMD_FREE, CMD_QUIT };

typedef struct {
    uint32_t cmd;
    uint64_t block;
    uint64_t data;
} bench_req_t;

typedef struct {
    int32_t  status;
    uint32_t rkey;          /* strided key */
    uint64_t strided;       /* strided buffer */
    uint64_t bounce;        /* contiguous buffer, data bytes */
} bench_rep_t;

typedef struct {
    const umr_eng_ops_t *ops;
    umr_eng_dev_t       *dev;
    umr_eng_cq_t        *cq;
    umr_eng_qp_t        *qp;
    int                 rfd, wfd;
} bench_ep_t;

/* One side: a strided buffer, its layout and keys, and a bounce buffer. */
typedef struct {
    umr_layout_t *layout;
    char             *strided;
    char             *bounce;
    size_t           span;
    umr_eng_mr_t     *mr, *bmr;
    umr_eng_mkey_t   *mkeys[BENCH_MAX_KEYS];
    unsigned         num_mkeys;
} bench_side_t;

static double now_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void xfer(int fd, void *buf, size_t len, int out)
{
    char *p = buf;
    ssize_t n;

    while (len > 0) {
        n = out ? write(fd, p, len) : read(fd, p, len);
        if (n <= 0) {
            if ((n < 0) && (errno == EINTR)) {
                continue;
            }
            fprintf(stderr, "bench: pipe %s failed\n", out ? "write" : "read");
            exit(1);
        }
        p   += n;
        len -= n;
    }
}

static umr_eng_wc_status_t bench_wait(bench_ep_t *ep)
{
    umr_eng_wc_t wc;
    int n;

    do {
        n = ep->ops->cq_poll(ep->cq, &wc, 1);
    } while (n == 0);

    return (n < 0) ? UMR_ENG_WC_GENERAL_ERR : wc.status;
}

static void bench_check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "bench: %s failed\n", what);
        exit(1);
    }
}

static void bench_ep_open(bench_ep_t *ep)
{
    umr_eng_qp_params_t qp_params = {64, 4, 52};
    char mine[2][UMR_ENG_ADDR_MAX], theirs[2][UMR_ENG_ADDR_MAX];

    ep->ops = umr_eng_find("sw");
    bench_check(ep->ops != NULL, "umr_eng_find(sw)");
    bench_check(ep->ops->dev_open("sw", NULL, &ep->dev) == UCS_OK,
                "dev_open");
    bench_check(ep->ops->cq_create(ep->dev, 256, &ep->cq) == UCS_OK,
                "cq_create");
    bench_check(ep->ops->qp_create(ep->dev, ep->cq, &qp_params,
                                   &ep->qp) == UCS_OK, "qp_create");
    memset(mine, 0, sizeof(mine));
    ep->ops->dev_get_addr(ep->dev, mine[0]);
    ep->ops->qp_get_addr(ep->qp, mine[1]);
    xfer(ep->wfd, mine, sizeof(mine), 1);
    xfer(ep->rfd, theirs, sizeof(theirs), 0);
    bench_check(ep->ops->qp_connect(ep->qp, theirs[0], theirs[1]) == UCS_OK,
                "qp_connect");
}

static void bench_ep_close(bench_ep_t *ep)
{
    ep->ops->qp_destroy(ep->qp);
    ep->ops->cq_destroy(ep->cq);
    ep->ops->dev_close(ep->dev);
}

/* Strided buffer + keys built from the layout engine's plan, and a bounce. */
static uint32_t bench_side_setup(bench_ep_t *ep, bench_side_t *s,
                                 size_t block, size_t data)
{
    umr_layout_plan_t *plan;
    umr_eng_interleaved_t il[64];
    umr_eng_sge_t sg[64];
    uint32_t k, e;

    umr_layout_t *blk;

    memset(s, 0, sizeof(*s));
    bench_check(umr_layout_contig(block, &blk) == UCS_OK, "contig");
    bench_check(umr_layout_vector(data / block, 1, 2 * block, blk,
                                      &s->layout) == UCS_OK, "vector");
    umr_layout_free(blk);
    s->span    = 2 * data;
    s->strided = malloc(s->span);
    s->bounce  = malloc(data);
    bench_check((s->strided != NULL) && (s->bounce != NULL), "malloc");
    memset(s->strided, 0x5a, s->span);
    memset(s->bounce, 0xa5, data);
    bench_check(ep->ops->mr_reg(ep->dev, s->strided, s->span, BENCH_RW,
                                &s->mr) == UCS_OK, "mr_reg");
    bench_check(ep->ops->mr_reg(ep->dev, s->bounce, data, BENCH_RW,
                                &s->bmr) == UCS_OK, "mr_reg bounce");
    bench_check(umr_layout_lower(s->layout, 1, NULL, &plan) == UCS_OK,
                "umr_layout_lower");
    bench_check(plan->num_keys <= BENCH_MAX_KEYS, "plan size");
    for (k = 0; k < plan->num_keys; ++k) {
        const umr_layout_key_t *key = &plan->keys[k];
        umr_eng_mkey_t *m;

        bench_check(key->num_entries <= 64, "entries");
        /* an interleaved UMR takes one more entry: the strided header */
        bench_check(ep->ops->mkey_create(ep->dev, key->num_entries + 1, &m) ==
                    UCS_OK, "mkey_create");
        s->mkeys[s->num_mkeys++] = m;
        for (e = 0; e < key->num_entries; ++e) {
            const umr_layout_entry_t *en = &key->entries[e];
            uint64_t addr = (en->child < 0) ?
                            (uintptr_t)(s->strided + en->offset) :
                            (uint64_t)en->offset;
            uint32_t lkey = (en->child < 0) ? s->mr->lkey :
                            s->mkeys[en->child]->lkey;
            il[e].addr = addr; il[e].bytes_count = en->bytes_count;
            il[e].bytes_skip = en->bytes_skip; il[e].lkey = lkey;
            sg[e].addr = addr; sg[e].length = en->bytes_count;
            sg[e].lkey = lkey;
        }
        bench_check(((key->kind == UMR_LAYOUT_KEY_INTERLEAVED) ?
                     ep->ops->post_umr_interleaved(ep->qp, m, BENCH_RW,
                                                   key->repeat,
                                                   key->num_entries, il, k,
                                                   UMR_ENG_WR_SIGNALED) :
                     ep->ops->post_umr_list(ep->qp, m, BENCH_RW,
                                            key->num_entries, sg, k,
                                            UMR_ENG_WR_SIGNALED)) == UCS_OK,
                    "post umr");
        bench_check(bench_wait(ep) == UMR_ENG_WC_SUCCESS, "umr completion");
    }
    umr_layout_plan_free(plan);
    return s->mkeys[s->num_mkeys - 1]->rkey;
}

static void bench_side_free(bench_ep_t *ep, bench_side_t *s)
{
    while (s->num_mkeys > 0) {
        ep->ops->mkey_destroy(ep->dev, s->mkeys[--s->num_mkeys]);
    }
    ep->ops->mr_dereg(ep->dev, s->mr);
    ep->ops->mr_dereg(ep->dev, s->bmr);
    umr_layout_free(s->layout);
    free(s->strided);
    free(s->bounce);
}

static int bench_target(bench_ep_t *ep)
{
    bench_side_t side;
    bench_req_t req;
    bench_rep_t rep;
    int have = 0;

    bench_ep_open(ep);
    for (;;) {
        xfer(ep->rfd, &req, sizeof(req), 0);
        memset(&rep, 0, sizeof(rep));
        switch (req.cmd) {
        case CMD_SETUP:
            rep.rkey    = bench_side_setup(ep, &side, req.block, req.data);
            rep.strided = (uintptr_t)side.strided;
            rep.bounce  = (uintptr_t)side.bounce;
            have        = 1;
            break;
        case CMD_UNPACK:
            rep.status = umr_layout_unpack(side.layout, 1, side.strided,
                                           side.bounce);
            break;
        case CMD_PACK:
            rep.status = umr_layout_pack(side.layout, 1, side.strided,
                                         side.bounce);
            break;
        case CMD_FREE:
            bench_side_free(ep, &side);
            have = 0;
            break;
        default:
            if (have) {
                bench_side_free(ep, &side);
            }
            bench_ep_close(ep);
            return 0;
        }
        xfer(ep->wfd, &rep, sizeof(rep), 1);
    }
}

static bench_rep_t bench_call(bench_ep_t *ep, uint32_t cmd, size_t block,
                              size_t data)
{
    bench_req_t req;
    bench_rep_t rep;

    memset(&req, 0, sizeof(req)); /* no uninitialised padding on the pipe */
    req.cmd   = cmd;
    req.block = block;
    req.data  = data;
    xfer(ep->wfd, &req, sizeof(req), 1);
    xfer(ep->rfd, &rep, sizeof(rep), 0);
    return rep;
}

typedef enum {
    BENCH_SW_PUT, BENCH_SW_GET, BENCH_CMA_PUT, BENCH_CMA_GET,
    BENCH_PACK_PUT, BENCH_PACK_GET, BENCH_MAIN_LAST,
    BENCH_RAW_PUT = BENCH_MAIN_LAST, BENCH_RAW_GET, BENCH_RAWB_PUT,
    BENCH_RAWB_GET, BENCH_LAST
} bench_kind_t;

static const char *bench_names[BENCH_LAST] = {
    "sw_put", "sw_get", "cma_put", "cma_get", "pack_put", "pack_get",
    "raw_put", "raw_get", "rawb_put", "rawb_get"
};

#define BENCH_IOV_MAX 1024  /* IOV_MAX of process_vm_* */

/*
 * The strided transfer by direct process_vm_* calls: remote iovecs one per
 * block of the peer's strided buffer, local iovecs one per block (bounce 0)
 * or the local bounce buffer packed/unpacked with memcpy (bounce 1).
 */
static int bench_raw(bench_side_t *l, const bench_rep_t *r, pid_t peer,
                     size_t block, size_t data, int is_put, int bounce)
{
    static struct iovec liov[BENCH_IOV_MAX], riov[BENCH_IOV_MAX];
    size_t nblocks = data / block, b = 0, i, n;
    char *rbase    = (char*)(uintptr_t)r->strided;
    ssize_t ret;

    while (b < nblocks) {
        n = nblocks - b;
        if (n > BENCH_IOV_MAX) {
            n = BENCH_IOV_MAX;
        }
        for (i = 0; i < n; ++i) {
            riov[i].iov_base = rbase + (b + i) * 2 * block;
            riov[i].iov_len  = block;
            if (!bounce) {
                liov[i].iov_base = l->strided + (b + i) * 2 * block;
                liov[i].iov_len  = block;
            } else if (is_put) {
                memcpy(l->bounce + i * block, l->strided + (b + i) * 2 * block,
                       block);
            }
        }
        if (bounce) {
            liov[0].iov_base = l->bounce;
            liov[0].iov_len  = n * block;
        }
        ret = is_put ? process_vm_writev(peer, liov, bounce ? 1 : n, riov, n, 0) :
                       process_vm_readv(peer, liov, bounce ? 1 : n, riov, n, 0);
        if (ret != (ssize_t)(n * block)) {
            return -1;
        }
        if (bounce && !is_put) {
            for (i = 0; i < n; ++i) {
                memcpy(l->strided + (b + i) * 2 * block, l->bounce + i * block,
                       block);
            }
        }
        b += n;
    }
    return 0;
}

/* One operation of `kind`, `data` bytes; returns 0 on success. */
static int bench_one(bench_ep_t *ep, bench_kind_t kind, bench_side_t *l,
                     const bench_rep_t *r, pid_t peer, size_t block,
                     size_t data)
{
    struct iovec liov = {l->bounce, data};
    struct iovec riov = {(void*)(uintptr_t)r->bounce, data};
    umr_eng_sge_t sge = {0, (uint32_t)data, l->mkeys[l->num_mkeys - 1]->lkey};
    bench_rep_t rep;
    ssize_t ret;

    switch (kind) {
    case BENCH_SW_PUT:
    case BENCH_SW_GET:
        if (ep->ops->post_rdma(ep->qp, (kind == BENCH_SW_PUT) ?
                               UMR_ENG_OP_RDMA_WRITE : UMR_ENG_OP_RDMA_READ,
                               &sge, 1, 0, r->rkey, 1,
                               UMR_ENG_WR_SIGNALED) != UCS_OK) {
            return -1;
        }
        return (bench_wait(ep) == UMR_ENG_WC_SUCCESS) ? 0 : -1;
    case BENCH_CMA_PUT:
        ret = process_vm_writev(peer, &liov, 1, &riov, 1, 0);
        return (ret == (ssize_t)data) ? 0 : -1;
    case BENCH_CMA_GET:
        ret = process_vm_readv(peer, &liov, 1, &riov, 1, 0);
        return (ret == (ssize_t)data) ? 0 : -1;
    case BENCH_PACK_PUT:
        umr_layout_pack(l->layout, 1, l->strided, l->bounce);
        ret = process_vm_writev(peer, &liov, 1, &riov, 1, 0);
        rep = bench_call(ep, CMD_UNPACK, 0, 0);
        return ((ret == (ssize_t)data) && (rep.status == UCS_OK)) ? 0 : -1;
    case BENCH_PACK_GET:
        rep = bench_call(ep, CMD_PACK, 0, 0);
        ret = process_vm_readv(peer, &liov, 1, &riov, 1, 0);
        umr_layout_unpack(l->layout, 1, l->strided, l->bounce);
        return ((ret == (ssize_t)data) && (rep.status == UCS_OK)) ? 0 : -1;
    case BENCH_RAW_PUT:
    case BENCH_RAW_GET:
    case BENCH_RAWB_PUT:
    case BENCH_RAWB_GET:
        return bench_raw(l, r, peer, block, data,
                         (kind == BENCH_RAW_PUT) || (kind == BENCH_RAWB_PUT),
                         (kind == BENCH_RAWB_PUT) || (kind == BENCH_RAWB_GET));
    default:
        return -1;
    }
}

static void usage(const char *prog)
{
    fprintf(stderr, "usage: %s [-d max_data_bytes] [-t seconds_per_point] "
            "[-r repeats]\n", prog);
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

/* Median over `repeats` runs of seconds per operation of `kind`. */
static double bench_point(bench_ep_t *ep, bench_kind_t kind, bench_side_t *l,
                          const bench_rep_t *r, pid_t peer, size_t block,
                          size_t data, double min_time, int repeats)
{
    double runs[16], t0, t;
    int i, iters;

    bench_check(bench_one(ep, kind, l, r, peer, block, data) == 0,
                bench_names[kind]); /* warm-up */
    for (i = 0; i < repeats; ++i) {
        iters = 0;
        t0    = now_sec();
        do {
            bench_check(bench_one(ep, kind, l, r, peer, block, data) == 0,
                        bench_names[kind]);
            ++iters;
            t = now_sec() - t0;
        } while ((t < min_time) || (iters < 3));
        runs[i] = t / iters;
    }
    qsort(runs, repeats, sizeof(runs[0]), bench_cmp_double);
    return runs[repeats / 2];
}

#define BENCH_MAX_POINTS 16

int main(int argc, char **argv)
{
    size_t max_data = 8ul << 20;
    double min_time = 0.1;
    int repeats     = 3;
    double sec[BENCH_MAX_POINTS][BENCH_LAST], best, nblk;
    size_t blocks[BENCH_MAX_POINTS], datas[BENCH_MAX_POINTS];
    int p2c[2], c2p[2], opt, status, np = 0, i, put;
    bench_ep_t ep = {0};
    bench_side_t local;
    bench_rep_t rep;
    size_t block, data;
    pid_t pid;
    int k;

    while ((opt = getopt(argc, argv, "d:t:r:h")) != -1) {
        switch (opt) {
        case 'd': max_data = strtoul(optarg, NULL, 0); break;
        case 't': min_time = atof(optarg); break;
        case 'r': repeats = atoi(optarg); break;
        default:  usage(argv[0]); return (opt == 'h') ? 0 : 1;
        }
    }
    if ((repeats < 1) || (repeats > 16) || (max_data < 65536)) {
        fprintf(stderr, "bench: -r must be 1..16 and -d at least 65536\n");
        return 1;
    }

    bench_check(!pipe(p2c) && !pipe(c2p), "pipe");
    fflush(stdout);
    pid = fork();
    bench_check(pid >= 0, "fork");
    if (pid == 0) {
        close(p2c[1]);
        close(c2p[0]);
        ep.rfd = p2c[0];
        ep.wfd = c2p[1];
        _exit(bench_target(&ep));
    }
    /* only the child holds these ends: its death is EOF here, not a hang */
    close(p2c[0]);
    close(c2p[1]);
    ep.rfd = c2p[0];
    ep.wfd = p2c[1];
    bench_ep_open(&ep);

    printf("# sw engine (cross-memory attach on this host, NOT NIC figures)\n");
    printf("# strided = vector of <block> blocks, stride 2*block, both sides;"
           " GB/s of data (1e9 B/s), median of %d runs\n", repeats);
    printf("# sw_*: one RDMA through UMR keys; cma_*: contiguous "
           "process_vm_* of the same bytes; pack_*: pack + contiguous "
           "process_vm_* + unpack\n");
    printf("%8s %10s", "block", "data");
    for (k = 0; k < BENCH_MAIN_LAST; ++k) {
        printf(" %9s", bench_names[k]);
    }
    printf("\n");

    /* first point: one 64-byte block, the per-operation cost */
    for (block = 64; block <= 65536; block *= 2) {
        if (np == 0) {
            data = block;
        } else {
            /* small blocks cost ~0.5 us each: keep every point short */
            data = ((block < 256) && (block * 32768 < max_data)) ?
                   block * 32768 : max_data;
            data = (data / block) * block;
        }
        rep = bench_call(&ep, CMD_SETUP, block, data);
        bench_side_setup(&ep, &local, block, data);
        printf("%8zu %10zu", block, data);
        for (k = 0; k < BENCH_LAST; ++k) {
            sec[np][k] = bench_point(&ep, k, &local, &rep, pid, block, data,
                                     min_time, repeats);
            if (k < BENCH_MAIN_LAST) {
                printf(" %9.2f", (double)data / sec[np][k] / 1e9);
                fflush(stdout);
            }
        }
        printf("\n");
        blocks[np] = block;
        datas[np]  = data;
        ++np;
        bench_side_free(&ep, &local);
        bench_call(&ep, CMD_FREE, 0, 0);
        if (np == 1) {
            block = 4; /* then the sweep from 8 B */
        }
    }

    printf("\n# sw engine overhead over raw cross-memory attach of the same "
           "iovecs (us per operation, median of %d runs)\n", repeats);
    printf("# raw: process_vm_* on one iovec per block on both sides; rawb: "
           "local side through a memcpy'd bounce buffer\n");
    printf("# x = sw / min(raw, rawb); ns/blk = (sw - min(raw, rawb)) per "
           "remote block\n");
    printf("%8s %10s %8s", "block", "data", "blocks");
    for (put = 1; put >= 0; --put) {
        const char *op = put ? "put" : "get";
        printf(" %9s_%s %8s_%s %8s_%s %5s_%s %6s_%s", "raw", op, "rawb", op,
               "sw", op, "x", op, "ns/blk", op);
    }
    printf("\n");
    for (i = 0; i < np; ++i) {
        nblk = (double)(datas[i] / blocks[i]);
        printf("%8zu %10zu %8.0f", blocks[i], datas[i], nblk);
        for (put = 1; put >= 0; --put) {
            double raw  = sec[i][put ? BENCH_RAW_PUT : BENCH_RAW_GET];
            double rawb = sec[i][put ? BENCH_RAWB_PUT : BENCH_RAWB_GET];
            double sw   = sec[i][put ? BENCH_SW_PUT : BENCH_SW_GET];

            best = (raw < rawb) ? raw : rawb;
            printf(" %13.2f %12.2f %11.2f %9.2f %10.1f", raw * 1e6,
                   rawb * 1e6, sw * 1e6, sw / best, (sw - best) * 1e9 / nblk);
        }
        printf("\n");
    }

    {
        bench_req_t req;
        memset(&req, 0, sizeof(req));
        req.cmd = CMD_QUIT;
        xfer(ep.wfd, &req, sizeof(req), 1);
    }
    bench_ep_close(&ep);
    bench_check(waitpid(pid, &status, 0) == pid, "waitpid");
    bench_check(WIFEXITED(status) && (WEXITSTATUS(status) == 0),
                "target exit status");
    return 0;
}
