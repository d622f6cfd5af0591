/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Layout keys in real jobs, an unmodified MPI program that
 * test_umr_keys.sh runs with and without the components (np even: each
 * rank works with rank ^ 1).
 *
 * Usage: umr_keys case...
 *   bottom  a struct of two separately allocated arrays (one on the heap,
 *           one mmap'ed far from it), built with MPI_Get_address, sent from
 *           MPI_BOTTOM and received the same way, ROUNDS times; then a
 *           vector sent from an ordinary buffer and received into such a
 *           struct (only the receiver's memory spans both)
 *   scattered  a struct of 9 one-page allocations with an unmapped page
 *           between each two, from MPI_BOTTOM both ways, ROUNDS times
 *   p2p     LAYOUTS ever new indexed types (irregular blocks of 32 to 64
 *           bytes: several keys each), each sent USES times both ways and
 *           freed
 *   win     WINDOWS windows created one after the other over the same
 *           buffer, each put into USES times with a new indexed target type
 *           (the origin a vector), under fence, then freed
 * Every receive and window is compared byte for byte with what MPI's own
 * pack/unpack make of the sender's data (gaps included: 0). Prints "check
 * CASE rank R HASH" lines and "FAIL ..." lines. LAYOUTS and WINDOWS:
 * UMR_KEYS_LAYOUTS (default 40), USES: UMR_KEYS_USES (default 3).
 */
#include <mpi.h>

#include "mpi_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define ROUNDS    10
#define BLOCKS    150           /* blocks of a p2p or window layout */
#define MAX_DBL   (BLOCKS * 12) /* doubles a layout spans, at most */

static int rank, nprocs, peer, errors, layouts = 40, uses = 3;

static void report(const char *name, uint64_t h)
{
    printf("check %s rank %d %016llx\n", name, rank, (unsigned long long)h);
}

/* ---- bottom: a struct of separate allocations, from MPI_BOTTOM --------- */

#define BOT_HEAP  3000          /* doubles on the heap (below the mmap
                                   threshold) */
#define BOT_MAP   (64 * 1024)   /* doubles in their own mapping */

typedef struct {
    double       *heap, *map;
    MPI_Datatype type;          /* both arrays, absolute addresses */
} bottom_t;

static void bottom_make(bottom_t *b)
{
    int bl[2] = {BOT_HEAP, BOT_MAP};
    MPI_Aint dp[2];
    MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_DOUBLE};

    b->heap = malloc(BOT_HEAP * sizeof(double));
    b->map  = mmap(NULL, BOT_MAP * sizeof(double), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(b->map != MAP_FAILED, "mmap failed");
    MPI_Get_address(b->heap, &dp[0]);
    MPI_Get_address(b->map, &dp[1]);
    MPI_Type_create_struct(2, bl, dp, ty, &b->type);
    MPI_Type_commit(&b->type);
}

static void bottom_free(bottom_t *b)
{
    MPI_Type_free(&b->type);
    free(b->heap);
    munmap(b->map, BOT_MAP * sizeof(double));
}

/* The struct's data gathered in one buffer (what MPI_Pack makes of it). */
static void bottom_gather(const bottom_t *b, double *to)
{
    memcpy(to, b->heap, BOT_HEAP * sizeof(double));
    memcpy(to + BOT_HEAP, b->map, BOT_MAP * sizeof(double));
}

static void bottom_case(void)
{
    const size_t len = (BOT_HEAP + BOT_MAP) * sizeof(double);
    double *flat = malloc(len);
    bottom_t s, r;
    MPI_Datatype vec;
    MPI_Request req;
    uint64_t h = 0;
    int round;

    bottom_make(&s);
    bottom_make(&r);
    for (round = 0; round < ROUNDS; ++round) {
        check_fill(flat, len, rank, round);
        memcpy(s.heap, flat, BOT_HEAP * sizeof(double));
        memcpy(s.map, flat + BOT_HEAP, BOT_MAP * sizeof(double));
        memset(r.heap, 0, BOT_HEAP * sizeof(double));
        memset(r.map, 0, BOT_MAP * sizeof(double));
        MPI_Irecv(MPI_BOTTOM, 1, r.type, peer, round, MPI_COMM_WORLD, &req);
        MPI_Send(MPI_BOTTOM, 1, s.type, peer, round, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        bottom_gather(&r, flat);
        h ^= check_verify("bottom", flat, len, len / sizeof(double),
                          MPI_DOUBLE, peer, len, len / sizeof(double),
                          MPI_DOUBLE, round);
    }
    report("bottom", h);

    /* an ordinary vector into the struct: the receiver's memory alone
     * spans both allocations */
    {
        size_t slen = 2 * len;
        double *sbuf = malloc(slen);

        MPI_Type_vector(BOT_HEAP + BOT_MAP, 1, 2, MPI_DOUBLE, &vec);
        MPI_Type_commit(&vec);
        h = 0;
        for (round = 0; round < ROUNDS; ++round) {
            check_fill(sbuf, slen, rank, 100 + round);
            memset(r.heap, 0, BOT_HEAP * sizeof(double));
            memset(r.map, 0, BOT_MAP * sizeof(double));
            MPI_Irecv(MPI_BOTTOM, 1, r.type, peer, round, MPI_COMM_WORLD,
                      &req);
            MPI_Send(sbuf, 1, vec, peer, round, MPI_COMM_WORLD);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            bottom_gather(&r, flat);
            h ^= check_verify("bottom_recv", flat, len, len / sizeof(double),
                              MPI_DOUBLE, peer, slen, 1, vec, 100 + round);
        }
        report("bottom_recv", h);
        MPI_Type_free(&vec);
        free(sbuf);
    }
    bottom_free(&s);
    bottom_free(&r);
    free(flat);
}

/* ---- scattered: more allocations than one key joins ------------------- */

#define SCAT_N    9             /* one page each, an unmapped page between */

static void scattered_case(void)
{
    const size_t page = sysconf(_SC_PAGESIZE), per = page / sizeof(double);
    const size_t len  = SCAT_N * page;
    double *flat = malloc(len);
    char *s = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *r = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int bl[SCAT_N];
    MPI_Aint sdp[SCAT_N], rdp[SCAT_N];
    MPI_Datatype ty[SCAT_N], stype, rtype;
    MPI_Request req;
    uint64_t h = 0;
    int i, round;

    CHECK((s != MAP_FAILED) && (r != MAP_FAILED), "mmap failed");
    for (i = 0; i < SCAT_N; ++i) {
        munmap(s + (2 * i + 1) * page, page);
        munmap(r + (2 * i + 1) * page, page);
        bl[i] = per;
        ty[i] = MPI_DOUBLE;
        MPI_Get_address(s + 2 * i * page, &sdp[i]);
        MPI_Get_address(r + 2 * i * page, &rdp[i]);
    }
    MPI_Type_create_struct(SCAT_N, bl, sdp, ty, &stype);
    MPI_Type_create_struct(SCAT_N, bl, rdp, ty, &rtype);
    MPI_Type_commit(&stype);
    MPI_Type_commit(&rtype);
    for (round = 0; round < ROUNDS; ++round) {
        check_fill(flat, len, rank, round);
        for (i = 0; i < SCAT_N; ++i) {
            memcpy(s + 2 * i * page, (char*)flat + i * page, page);
            memset(r + 2 * i * page, 0, page);
        }
        MPI_Irecv(MPI_BOTTOM, 1, rtype, peer, round, MPI_COMM_WORLD, &req);
        MPI_Send(MPI_BOTTOM, 1, stype, peer, round, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (i = 0; i < SCAT_N; ++i) {
            memcpy((char*)flat + i * page, r + 2 * i * page, page);
        }
        h ^= check_verify("scattered", flat, len, len / sizeof(double),
                          MPI_DOUBLE, peer, len, len / sizeof(double),
                          MPI_DOUBLE, round);
    }
    report("scattered", h);
    MPI_Type_free(&stype);
    MPI_Type_free(&rtype);
    for (i = 0; i < SCAT_N; ++i) {
        munmap(s + 2 * i * page, page);
        munmap(r + 2 * i * page, page);
    }
    free(flat);
}

/* ---- ever new layouts --------------------------------------------------- */

/* Layout `i`: BLOCKS blocks of 4 to 8 doubles at irregular gaps (no
 * regular stride: a list key of about 52 blocks each, and a key over
 * them), different for every i. *ndbl: the doubles it holds. */
static MPI_Datatype layout_make(int i, int *ndbl)
{
    int bl[BLOCKS], dp[BLOCKS], b, d = 0, n = 0;
    MPI_Datatype t;

    for (b = 0; b < BLOCKS; ++b) {
        bl[b] = 4 + (b + i) % 5;
        dp[b] = d;
        d    += bl[b] + 1 + (b * 7 + i) % 4;
        n    += bl[b];
    }
    MPI_Type_indexed(BLOCKS, bl, dp, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    *ndbl = n;
    return t;
}

static void p2p_case(void)
{
    const size_t len = MAX_DBL * sizeof(double);
    char *sbuf = malloc(len), *rbuf = malloc(len);
    MPI_Request req;
    MPI_Datatype t;
    uint64_t h = 0;
    int i, u, n, salt;

    for (i = 0; i < layouts; ++i) {
        t = layout_make(i, &n);
        for (u = 0; u < uses; ++u) {
            salt = i * 100 + u;
            check_fill(sbuf, len, rank, salt);
            memset(rbuf, 0, len);
            MPI_Irecv(rbuf, 1, t, peer, u, MPI_COMM_WORLD, &req);
            MPI_Send(sbuf, 1, t, peer, u, MPI_COMM_WORLD);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            h ^= check_verify("p2p", rbuf, len, 1, t, peer, len, 1, t, salt);
        }
        MPI_Type_free(&t);
    }
    report("p2p", h);
    free(sbuf); free(rbuf);
}

/* An origin of `n` doubles: blocks of 4 with a gap of one (the last one
 * shorter). */
static MPI_Datatype origin_make(int n)
{
    int nb = (n + 3) / 4, *bl = malloc(nb * sizeof(int)),
        *dp = malloc(nb * sizeof(int)), b;
    MPI_Datatype t;

    for (b = 0; b < nb; ++b) {
        bl[b] = (n - 4 * b < 4) ? n - 4 * b : 4;
        dp[b] = 5 * b;
    }
    MPI_Type_indexed(nb, bl, dp, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    free(bl); free(dp);
    return t;
}

static void win_case(void)
{
    const size_t len = MAX_DBL * sizeof(double);
    const size_t olen = 2 * len;
    char *base = malloc(len), *obuf = malloc(olen);
    int i, u, n, salt;
    MPI_Datatype t, o;
    uint64_t h = 0;
    MPI_Win win;

    for (i = 0; i < layouts; ++i) {
        t = layout_make(1000 + i, &n);
        o = origin_make(n);
        MPI_Win_create(base, len, sizeof(double), MPI_INFO_NULL,
                       MPI_COMM_WORLD, &win);
        for (u = 0; u < uses; ++u) {
            salt = i * 100 + u;
            check_fill(obuf, olen, rank, salt);
            memset(base, 0, len);   /* outside an epoch: the gaps stay 0 */
            MPI_Win_fence(0, win);
            MPI_Put(obuf, 1, o, peer, 0, 1, t, win);
            MPI_Win_fence(0, win);
            h ^= check_verify("win", base, len, 1, t, peer, olen, 1, o, salt);
        }
        MPI_Win_free(&win);
        MPI_Type_free(&t);
        MPI_Type_free(&o);
    }
    report("win", h);
    free(base); free(obuf);
}

static const struct {
    const char *name;
    void       (*run)(void);
} cases[] = {
    {"bottom", bottom_case},
    {"scattered", scattered_case},
    {"p2p",    p2p_case},
    {"win",    win_case},
};

int main(int argc, char **argv)
{
    const char *v;
    size_t c;
    int a, total;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if ((v = getenv("UMR_KEYS_LAYOUTS")) != NULL) {
        layouts = atoi(v);
    }
    if ((v = getenv("UMR_KEYS_USES")) != NULL) {
        uses = atoi(v);
    }
    if ((nprocs % 2) != 0) {
        FAIL("needs an even number of ranks, not %d", nprocs);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    peer = rank ^ 1;
    for (a = 1; a < argc; ++a) {
        for (c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
            if (!strcmp(argv[a], cases[c].name)) {
                cases[c].run();
                break;
            }
        }
        if (c == sizeof(cases) / sizeof(cases[0])) {
            FAIL("no case %s", argv[a]);
        }
    }
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("umr_keys: %d failure(s)\n", total);
    }
    MPI_Finalize();
    return total != 0;
}
