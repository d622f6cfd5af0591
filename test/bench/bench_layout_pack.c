/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Pack/unpack throughput of the layout engine against memcpy of the same
 * bytes and against MPI_Pack/MPI_Unpack of the equivalent MPI datatype.
 *
 * Shape: `total` bytes of blocks of B bytes at stride 2B (the measurement in
 * PATTERNS.md), B = 8 B .. 64 KiB; layout vector(n, B/8, 2B, double), MPI
 * hvector(n, B/8, 2B, MPI_DOUBLE). Every figure is the best of several
 * rounds (GB/s of packed bytes); the packed streams are checked equal.
 *
 *     ./bench_layout_pack [total_KiB=1024] [rounds=10]  (one process, no mpirun)
 *
 * 256 KiB stays in L2 and shows the per-block overhead of the kernels; 1 MiB
 * (2 MiB strided) is L3; 16 MiB and more measure memory. From 64 B blocks
 * up, the strided side pulls in the untouched neighbour lines too, so all
 * packers are bound by cache/memory bandwidth, not by their loops.
 */
#include "umr_layout.h"

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum {
    BENCH_MEMCPY,
    BENCH_PACK,
    BENCH_UNPACK,
    BENCH_MPI_PACK,
    BENCH_MPI_UNPACK,
    BENCH_LAST
} bench_kind_t;

typedef struct {
    umr_layout_t *layout;
    MPI_Datatype     type;
    char             *mem;     /* strided side */
    char             *buf;     /* packed side */
    char             *src;     /* contiguous source for memcpy */
    size_t           total;
} bench_case_t;

static double bench_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void bench_once(bench_case_t *c, bench_kind_t kind)
{
    int pos = 0;

    switch (kind) {
    case BENCH_MEMCPY:
        memcpy(c->buf, c->src, c->total);
        break;
    case BENCH_PACK:
        umr_layout_pack(c->layout, 1, c->mem, c->buf);
        break;
    case BENCH_UNPACK:
        umr_layout_unpack(c->layout, 1, c->mem, c->buf);
        break;
    case BENCH_MPI_PACK:
        MPI_Pack(c->mem, 1, c->type, c->buf, (int)c->total, &pos,
                 MPI_COMM_SELF);
        break;
    case BENCH_MPI_UNPACK:
        MPI_Unpack(c->buf, (int)c->total, &pos, c->mem, 1, c->type,
                   MPI_COMM_SELF);
        break;
    default:
        break;
    }
}

/* iterations of `kind` that take about 20 ms */
static int bench_iters(bench_case_t *c, bench_kind_t kind)
{
    double t0, t;

    bench_once(c, kind); /* warm up: page faults, caches */
    t0 = bench_now();
    bench_once(c, kind);
    t = bench_now() - t0;
    return (t > 0) ? (int)(0.02 / t) + 1 : 1000;
}

/*
 * Best GB/s of each kind over `rounds` rounds; the kinds alternate inside a
 * round so that noise from other processes hits all of them alike.
 */
static void bench_run(bench_case_t *c, int rounds, double *gb)
{
    int iters[BENCH_LAST], r, it, k;
    double t0, t;

    for (k = 0; k < BENCH_LAST; ++k) {
        iters[k] = bench_iters(c, (bench_kind_t)k);
        gb[k]    = 0;
    }
    for (r = 0; r < rounds; ++r) {
        for (k = 0; k < BENCH_LAST; ++k) {
            t0 = bench_now();
            for (it = 0; it < iters[k]; ++it) {
                bench_once(c, (bench_kind_t)k);
            }
            t = (bench_now() - t0) / iters[k];
            if (c->total / t / 1e9 > gb[k]) {
                gb[k] = c->total / t / 1e9;
            }
        }
    }
}

int main(int argc, char **argv)
{
    static const size_t blocks[] = {8, 16, 32, 64, 128, 256, 512, 1024,
                                    4096, 16384, 65536};
    size_t total = (size_t)((argc > 1) ? atoi(argv[1]) : 1024) << 10;
    int rounds   = (argc > 2) ? atoi(argv[2]) : 10;
    umr_layout_t *dbl;
    double gb[BENCH_LAST];
    bench_case_t c;
    char *check;
    size_t i, k;
    int ok, pos;

    MPI_Init(&argc, &argv);
    if (umr_layout_contig(8, &dbl) != UCS_OK) {
        return 1;
    }

    c.total = total;
    c.mem   = malloc(2 * total);
    c.buf   = malloc(total);
    c.src   = malloc(total);
    check   = malloc(total);
    if (!c.mem || !c.buf || !c.src || !check) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (k = 0; k < 2 * total; ++k) {
        c.mem[k] = (char)(k * 7 + (k >> 12));
    }
    memset(c.src, 1, total);
    memset(c.buf, 2, total);

    printf("# %zu KiB packed per operation, blocks of B bytes at stride 2B, "
           "best of %d rounds, GB/s\n", total >> 10, rounds);
    printf("# %8s %8s %8s %8s %8s %8s %9s %9s %8s\n", "B", "memcpy", "pack",
           "unpack", "MPI_Pack", "MPI_Unpk", "pack/mcpy", "pack/MPI",
           "unpk/MPI");
    for (i = 0; i < sizeof(blocks) / sizeof(blocks[0]); ++i) {
        size_t b = blocks[i], n = total / b;

        if (umr_layout_vector(n, b / 8, 2 * b, dbl, &c.layout) !=
            UCS_OK) {
            fprintf(stderr, "layout: %s\n", umr_layout_last_error());
            return 1;
        }
        MPI_Type_create_hvector((int)n, (int)(b / 8), (MPI_Aint)(2 * b),
                                MPI_DOUBLE, &c.type);
        MPI_Type_commit(&c.type);

        /* same bytes from both packers */
        umr_layout_pack(c.layout, 1, c.mem, c.buf);
        pos = 0;
        MPI_Pack(c.mem, 1, c.type, check, (int)total, &pos, MPI_COMM_SELF);
        ok = ((size_t)pos == total) && !memcmp(c.buf, check, total);

        bench_run(&c, rounds, gb);
        printf("  %8zu %8.2f %8.2f %8.2f %8.2f %8.2f %9.2f %9.2f %8.2f%s\n",
               b, gb[BENCH_MEMCPY], gb[BENCH_PACK], gb[BENCH_UNPACK],
               gb[BENCH_MPI_PACK], gb[BENCH_MPI_UNPACK],
               gb[BENCH_PACK] / gb[BENCH_MEMCPY],
               gb[BENCH_PACK] / gb[BENCH_MPI_PACK],
               gb[BENCH_UNPACK] / gb[BENCH_MPI_UNPACK],
               ok ? "" : "  MISMATCH");
        MPI_Type_free(&c.type);
        umr_layout_free(c.layout);
        if (!ok) {
            return 1;
        }
    }

    umr_layout_free(dbl);
    free(c.mem);
    free(c.buf);
    free(c.src);
    free(check);
    MPI_Finalize();
    return 0;
}
