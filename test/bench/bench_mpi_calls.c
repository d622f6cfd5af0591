/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * bench_mpi_calls: what single MPI point-to-point calls cost, counted in
 * instructions by callgrind (contrib/passthrough-cost.sh), so that the PML
 * stack under them (ob1, ucx, pml/umr in front of either) can be compared
 * without timing noise. An unmodified MPI program: it knows nothing of
 * pml/umr. Without valgrind it runs and verifies as a plain MPI program.
 *
 * Phases, one per (kind, datatype, size), rank 0 <-> rank 1, each -n
 * iterations after -w warm-up iterations:
 *   isend  rank 0: MPI_Isend + MPI_Wait; rank 1 has posted its receive
 *   irecv  rank 1: MPI_Irecv + MPI_Wait, posted before rank 0 sends
 *   recv   rank 1: MPI_Recv of a message that has already arrived (rank 0
 *          sends the data, then a 0-byte "sync" message on another tag;
 *          rank 1 receives "sync" first, which the PML can only match after
 *          it has seen the data message)
 *   fresh  as isend, with a vector type made for each message and freed
 *          after it (MPI_BYTE as isend)
 *   pp     MPI_Send/MPI_Recv ping-pong, both ranks
 * Datatypes: MPI_BYTE of 0, 8, 64, 1024, 4096 and 65536 bytes, and a
 * vector of doubles (blocks of 8 doubles, stride 16) of 512 B (below
 * pml/umr's minimum size) and 64 KiB (above it). Every message is checked
 * on the receiver: every data byte, and for the vector every gap byte and
 * for MPI_BYTE the byte after the message still hold the guard. Each
 * iteration starts with a 0-byte "go" message so that the sender never runs
 * ahead of the receiver: the queues are in the same state at every
 * iteration's measured call.
 *
 * Counting: every measured call goes through one of the non-inlined marker
 * functions bm_op_{isend,irecv,recv,send,wait}. Run under
 *   valgrind --tool=callgrind --collect-atstart=no --toggle-collect='bm_op_*'
 * callgrind counts only instructions executed inside these calls (and
 * everything they call). Each phase zeroes the counters after its warm-up
 * (CALLGRIND_ZERO_STATS) and dumps them at its end with the phase's name
 * (CALLGRIND_DUMP_STATS_AT("phase <kind> <type> <bytes> <iters>")), so every
 * dump file holds one phase of one rank; the script reads the inclusive cost
 * of each bm_op_* function there. Blocking parts (MPI_Wait, MPI_Recv of a
 * message still in flight, MPI_Send of a rendezvous message) spin in
 * progress for as long as the peer takes, so their counts vary with timing;
 * the script says which are stable.
 *
 * Output (rank 0): "PHASE <kind> <type> <bytes> <iters> ok" per phase.
 *
 * usage: mpirun -np 2 bench_mpi_calls [-n iters] [-w warmup] [-k kinds]
 *                                      [-X 1|2]
 *   -k: comma-separated kinds to run (default isend,irecv,recv,pp;
 *       fresh on request)
 *   -X: the first non-empty message checked has its first data byte (1)
 *       or the guard byte after its data (2) damaged: the run must fail
 */
#include <mpi.h>
#define BM_PROG "bench_mpi_calls"
#include "bench_mpi.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__has_include)
#  if __has_include(<valgrind/callgrind.h>)
#    include <valgrind/callgrind.h>
#  endif
#endif
#ifndef CALLGRIND_DUMP_STATS_AT
/* built without valgrind's headers: runs, but a callgrind run of it cannot
 * tell the phases apart (the script refuses such a build) */
#  define CALLGRIND_ZERO_STATS
#  define CALLGRIND_DUMP_STATS_AT(_s) ((void)(_s))
#  define BM_HAVE_CALLGRIND 0
#else
#  define BM_HAVE_CALLGRIND 1
#endif

#define BM_MAX_BYTES   65536
#define BM_GUARD_BYTE  0xa5
#define BM_NOINLINE    __attribute__((noinline, noclone))

enum { BM_TAG_GO = 21, BM_TAG_DATA, BM_TAG_SYNC, BM_TAG_REPLY };


/* ---- the measured calls: callgrind collects only inside these ----------- */

BM_NOINLINE int bm_op_isend(const void *buf, int count, MPI_Datatype dt,
                            int peer, int tag, MPI_Request *req)
{
    return MPI_Isend(buf, count, dt, peer, tag, MPI_COMM_WORLD, req);
}

BM_NOINLINE int bm_op_irecv(void *buf, int count, MPI_Datatype dt, int peer,
                            int tag, MPI_Request *req)
{
    return MPI_Irecv(buf, count, dt, peer, tag, MPI_COMM_WORLD, req);
}

BM_NOINLINE int bm_op_send(const void *buf, int count, MPI_Datatype dt,
                           int peer, int tag)
{
    return MPI_Send(buf, count, dt, peer, tag, MPI_COMM_WORLD);
}

BM_NOINLINE int bm_op_recv(void *buf, int count, MPI_Datatype dt, int peer,
                           int tag, MPI_Status *status)
{
    return MPI_Recv(buf, count, dt, peer, tag, MPI_COMM_WORLD, status);
}

BM_NOINLINE int bm_op_wait(MPI_Request *req, MPI_Status *status)
{
    return MPI_Wait(req, status);
}

/* ---- datatypes and verification ----------------------------------------- */

typedef struct bm_type {
    const char   *name;      /* "byte" or "vector" */
    MPI_Datatype dt;
    int          count;      /* elements of dt in one message */
    size_t       bytes;      /* data bytes of one message */
    size_t       span;       /* bytes of buffer it covers */
    size_t       block;      /* vector: block and stride in bytes */
    size_t       stride;
} bm_type_t;

static unsigned char *bm_sbuf, *bm_rbuf;
static int bm_corrupt;

static inline unsigned char bm_pattern(size_t off, int iter, size_t bytes)
{
    return (unsigned char)((off * 7) ^ (off >> 8) ^ (iter * 13) ^ bytes ^ 0x5c);
}

/* Is `off` a data byte of one message of t? */
static inline int bm_is_data(const bm_type_t *t, size_t off)
{
    if (t->stride == 0) {
        return off < t->bytes;
    }
    return (off < t->span) && ((off % t->stride) < t->block);
}

static void bm_fill_send(const bm_type_t *t, int iter)
{
    size_t i;

    for (i = 0; i < t->span; ++i) {
        bm_sbuf[i] = bm_pattern(i, iter, t->bytes);
    }
}

static void bm_fill_recv(const bm_type_t *t)
{
    memset(bm_rbuf, BM_GUARD_BYTE, t->span + 64);
}

static void bm_check_recv(const bm_type_t *t, int iter, const MPI_Status *st,
                          const char *kind)
{
    size_t i;
    int n;

    if (bm_corrupt && (t->bytes > 0)) {
        /* -X: damage one received byte, once (the check must fail) */
        bm_rbuf[(bm_corrupt == 1) ? 0 : t->span] ^= 0xff;
        bm_corrupt = 0;
    }

    BM_MPI(MPI_Get_count(st, MPI_BYTE, &n));
    if ((size_t)n != t->bytes) {
        BM_FAIL("%s %s %zu iteration %d: received %d bytes", kind, t->name,
                t->bytes, iter, n);
    }
    for (i = 0; i < t->span + 64; ++i) {
        unsigned char want = bm_is_data(t, i) ? bm_pattern(i, iter, t->bytes) :
                             BM_GUARD_BYTE;
        if (bm_rbuf[i] != want) {
            BM_FAIL("%s %s %zu iteration %d: byte %zu is 0x%02x, expected "
                    "0x%02x (%s)", kind, t->name, t->bytes, iter, i,
                    bm_rbuf[i], want, bm_is_data(t, i) ? "data" : "guard");
        }
    }
}

/* ---- phases ------------------------------------------------------------- */

static void bm_go_send(int peer)
{
    BM_MPI(MPI_Send(NULL, 0, MPI_BYTE, peer, BM_TAG_GO, MPI_COMM_WORLD));
}

static void bm_go_recv(int peer)
{
    BM_MPI(MPI_Recv(NULL, 0, MPI_BYTE, peer, BM_TAG_GO, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
}

/* isend: rank 0 counts MPI_Isend and MPI_Wait of each message. */
static void bm_iter_isend(const bm_type_t *t, int iter)
{
    MPI_Request req;
    MPI_Status st;

    if (bm_rank == 0) {
        bm_fill_send(t, iter);
        bm_go_recv(1);
        BM_MPI(bm_op_isend(bm_sbuf, t->count, t->dt, 1, BM_TAG_DATA, &req));
        BM_MPI(bm_op_wait(&req, MPI_STATUS_IGNORE));
    } else {
        bm_fill_recv(t);
        BM_MPI(MPI_Irecv(bm_rbuf, t->count, t->dt, 0, BM_TAG_DATA,
                         MPI_COMM_WORLD, &req));
        bm_go_send(0);
        BM_MPI(MPI_Wait(&req, &st));
        bm_check_recv(t, iter, &st, "isend");
    }
}

/* fresh: as isend, but rank 0 sends a vector type made for this message
 * and freed after it (a type used once: pml/umr must not decode it to pass
 * it through); MPI_BYTE as isend. */
static void bm_iter_fresh(const bm_type_t *t, int iter)
{
    MPI_Datatype dt = t->dt;
    MPI_Request req;

    if ((bm_rank != 0) || (t->stride == 0)) {
        bm_iter_isend(t, iter);
        return;
    }
    BM_MPI(MPI_Type_vector((int)(t->bytes / t->block),
                           (int)(t->block / sizeof(double)),
                           (int)(t->stride / sizeof(double)), MPI_DOUBLE,
                           &dt));
    BM_MPI(MPI_Type_commit(&dt));
    bm_fill_send(t, iter);
    bm_go_recv(1);
    BM_MPI(bm_op_isend(bm_sbuf, t->count, dt, 1, BM_TAG_DATA, &req));
    BM_MPI(bm_op_wait(&req, MPI_STATUS_IGNORE));
    BM_MPI(MPI_Type_free(&dt));
}

/* irecv: rank 1 counts MPI_Irecv (posted before the data is sent) and
 * MPI_Wait. */
static void bm_iter_irecv(const bm_type_t *t, int iter)
{
    MPI_Request req;
    MPI_Status st;

    if (bm_rank == 0) {
        bm_fill_send(t, iter);
        bm_go_recv(1);
        BM_MPI(MPI_Send(bm_sbuf, t->count, t->dt, 1, BM_TAG_DATA,
                        MPI_COMM_WORLD));
    } else {
        bm_fill_recv(t);
        BM_MPI(bm_op_irecv(bm_rbuf, t->count, t->dt, 0, BM_TAG_DATA, &req));
        bm_go_send(0);
        BM_MPI(bm_op_wait(&req, &st));
        bm_check_recv(t, iter, &st, "irecv");
    }
}

/* recv: rank 1 counts MPI_Recv of a message that has already arrived. */
static void bm_iter_recv(const bm_type_t *t, int iter)
{
    MPI_Request req;
    MPI_Status st;

    if (bm_rank == 0) {
        bm_fill_send(t, iter);
        bm_go_recv(1);
        BM_MPI(MPI_Isend(bm_sbuf, t->count, t->dt, 1, BM_TAG_DATA,
                         MPI_COMM_WORLD, &req));
        BM_MPI(MPI_Send(NULL, 0, MPI_BYTE, 1, BM_TAG_SYNC, MPI_COMM_WORLD));
        BM_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        bm_fill_recv(t);
        bm_go_send(0);
        BM_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, BM_TAG_SYNC, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        BM_MPI(bm_op_recv(bm_rbuf, t->count, t->dt, 0, BM_TAG_DATA, &st));
        bm_check_recv(t, iter, &st, "recv");
    }
}

/* pp: MPI_Send/MPI_Recv ping-pong, both ranks count both calls; the reply
 * carries the same data back (rank 1 sends what it received). */
static void bm_iter_pp(const bm_type_t *t, int iter)
{
    MPI_Status st;

    if (bm_rank == 0) {
        bm_fill_send(t, iter);
        bm_fill_recv(t);
        BM_MPI(bm_op_send(bm_sbuf, t->count, t->dt, 1, BM_TAG_DATA));
        BM_MPI(bm_op_recv(bm_rbuf, t->count, t->dt, 1, BM_TAG_REPLY, &st));
        bm_check_recv(t, iter, &st, "pp reply");
    } else {
        bm_fill_recv(t);
        BM_MPI(bm_op_recv(bm_rbuf, t->count, t->dt, 0, BM_TAG_DATA, &st));
        bm_check_recv(t, iter, &st, "pp");
        /* gaps of the reply's send buffer are not sent: any content */
        memcpy(bm_sbuf, bm_rbuf, t->span);
        BM_MPI(bm_op_send(bm_sbuf, t->count, t->dt, 0, BM_TAG_REPLY));
    }
}

typedef struct bm_kind {
    const char *name;
    void       (*iter)(const bm_type_t *t, int iter);
} bm_kind_t;

static const bm_kind_t bm_kinds[] = {
    { "isend", bm_iter_isend },
    { "irecv", bm_iter_irecv },
    { "recv",  bm_iter_recv  },
    { "pp",    bm_iter_pp    },
    { "fresh", bm_iter_fresh },
};

static void bm_phase(const bm_kind_t *k, const bm_type_t *t, int warmup,
                     int iters)
{
    char name[128];
    int i;

    for (i = 0; i < warmup; ++i) {
        k->iter(t, i);
    }
    BM_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CALLGRIND_ZERO_STATS;
    for (i = 0; i < iters; ++i) {
        k->iter(t, warmup + i);
    }
    snprintf(name, sizeof(name), "phase %s %s %zu %d", k->name, t->name,
             t->bytes, iters);
    CALLGRIND_DUMP_STATS_AT(name);
    BM_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (bm_rank == 0) {
        printf("PHASE %s %s %zu %d ok\n", k->name, t->name, t->bytes, iters);
        fflush(stdout);
    }
}

static void bm_type_bytes(bm_type_t *t, size_t bytes)
{
    memset(t, 0, sizeof(*t));
    t->name  = "byte";
    t->dt    = MPI_BYTE;
    t->count = (int)bytes;
    t->bytes = bytes;
    t->span  = bytes;
}

/* vector of doubles: blocks of 8 doubles (64 B), stride 16 doubles */
static void bm_type_vector(bm_type_t *t, size_t bytes)
{
    const size_t dbl = 8, stride = 16;
    size_t blocks = bytes / (dbl * sizeof(double));

    memset(t, 0, sizeof(*t));
    t->name   = "vector";
    t->count  = 1;
    t->bytes  = bytes;
    t->block  = dbl * sizeof(double);
    t->stride = stride * sizeof(double);
    t->span   = (blocks - 1) * t->stride + t->block;
    BM_MPI(MPI_Type_vector((int)blocks, (int)dbl, (int)stride, MPI_DOUBLE,
                           &t->dt));
    BM_MPI(MPI_Type_commit(&t->dt));
}

/* Is `name` one of the comma-separated list? */
static int bm_in_list(const char *list, const char *name)
{
    size_t len = strlen(name);
    const char *p;

    for (p = list; (p = strstr(p, name)) != NULL; p += len) {
        if (((p == list) || (p[-1] == ',')) &&
            ((p[len] == ',') || (p[len] == '\0'))) {
            return 1;
        }
    }
    return 0;
}

/* Every entry of the -k list names a kind. */
static int bm_kinds_valid(const char *list)
{
    const char *p = list, *end;
    size_t k, len;
    int found;

    do {
        end   = strchr(p, ',');
        len   = end ? (size_t)(end - p) : strlen(p);
        found = 0;
        for (k = 0; k < sizeof(bm_kinds) / sizeof(bm_kinds[0]); ++k) {
            found |= (strlen(bm_kinds[k].name) == len) &&
                     !strncmp(p, bm_kinds[k].name, len);
        }
        if (!found) {
            return 0;
        }
        p = end + 1;
    } while (end != NULL);
    return 1;
}

static void bm_usage(void)
{
    fprintf(stderr, "usage: mpirun -np 2 bench_mpi_calls [-n iters] "
            "[-w warmup] [-k isend,irecv,recv,pp,fresh] [-X 1|2]\n");
}

int main(int argc, char **argv)
{
    static const size_t byte_sizes[] = { 0, 8, 64, 1024, 4096, 65536 };
    static const size_t vec_sizes[]  = { 512, 65536 };
    const size_t nb = sizeof(byte_sizes) / sizeof(byte_sizes[0]);
    const size_t nv = sizeof(vec_sizes) / sizeof(vec_sizes[0]);
    bm_type_t types[8];
    const char *kinds = "isend,irecv,recv,pp";
    int iters = 200, warmup = 20, size, c;
    size_t i, k, nt = 0;

    BM_MPI(MPI_Init(&argc, &argv));
    BM_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &bm_rank));
    BM_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
    while ((c = getopt(argc, argv, "n:w:k:X:h")) != -1) {
        switch (c) {
        case 'X': bm_corrupt = atoi(optarg); break;
        case 'n': iters  = atoi(optarg); break;
        case 'w': warmup = atoi(optarg); break;
        case 'k': kinds  = optarg; break;
        default:
            if (bm_rank == 0) {
                bm_usage();
            }
            MPI_Finalize();
            return (c == 'h') ? 0 : 1;
        }
    }
    if ((size != 2) || (iters < 1) || (warmup < 0) || (bm_corrupt < 0) ||
        (bm_corrupt > 2)) {
        if (bm_rank == 0) {
            fprintf(stderr, "bench_mpi_calls: needs exactly 2 ranks (got %d), "
                    "-n >= 1 (got %d), -w >= 0 (got %d), -X 0..2 (got %d)\n",
                    size, iters, warmup, bm_corrupt);
            bm_usage();
        }
        MPI_Finalize();
        return 1;
    }
    if (!bm_kinds_valid(kinds)) {
        if (bm_rank == 0) {
            fprintf(stderr, "bench_mpi_calls: -k '%s': kinds are isend, "
                    "irecv, recv, pp, fresh\n", kinds);
        }
        MPI_Finalize();
        return 1;
    }

    bm_sbuf = malloc(2 * BM_MAX_BYTES + 64);
    bm_rbuf = malloc(2 * BM_MAX_BYTES + 64);
    if ((bm_sbuf == NULL) || (bm_rbuf == NULL)) {
        BM_FAIL("out of memory");
    }
    for (i = 0; i < nb; ++i) {
        bm_type_bytes(&types[nt++], byte_sizes[i]);
    }
    for (i = 0; i < nv; ++i) {
        bm_type_vector(&types[nt++], vec_sizes[i]);
    }
    if (bm_rank == 0) {
        printf("bench_mpi_calls: %d iterations per phase after %d warm-up, "
               "kinds %s, callgrind markers %s\n", iters, warmup, kinds,
               BM_HAVE_CALLGRIND ? "yes" : "no (built without "
               "valgrind/callgrind.h)");
        fflush(stdout);
    }

    for (k = 0; k < sizeof(bm_kinds) / sizeof(bm_kinds[0]); ++k) {
        if (!bm_in_list(kinds, bm_kinds[k].name)) {
            continue;
        }
        for (i = 0; i < nt; ++i) {
            bm_phase(&bm_kinds[k], &types[i], warmup, iters);
        }
    }

    for (i = nb; i < nt; ++i) {
        BM_MPI(MPI_Type_free(&types[i].dt));
    }
    free(bm_sbuf);
    free(bm_rbuf);
    BM_MPI(MPI_Finalize());
    return 0;
}
