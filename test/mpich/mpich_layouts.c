/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Seeded random layouts, point to point: an unmodified MPI program (plain
 * MPI) whose every received byte is checked against the MPI's own
 * MPI_Pack of the sender's layout and MPI_Unpack into the receiver's.
 *
 * Ranks 2k and 2k+1 are partners. For each message, both draw the same
 * parameters from the seed: a size of T MPI_INTs (16 .. -m ints), the
 * sender's layout and the receiver's, each one of contiguous, vector,
 * subarray (2 or 3 dimensions, C or Fortran order), indexed, and a struct
 * of blocks resized to a larger extent (count > 1), built fresh for the
 * message and freed after it; the send call (Send, Isend, Ssend, Issend
 * with a Test loop, persistent Send_init/Start) and the receive call (Recv,
 * Irecv, Probe + Get_count + Recv, Iprobe loop + Recv, Improbe + Mrecv,
 * persistent Recv_init/Start, MPI_ANY_SOURCE/MPI_ANY_TAG), the tag and the
 * communicator (MPI_COMM_WORLD or the pair's own). The lower rank sends
 * first, then the higher.
 *
 * The receive buffer starts zeroed and is compared whole, with 64 bytes
 * after the layout's span: the layout's bytes as the reference says, the
 * gaps and the bytes after it still zero. The status: source, tag, and
 * MPI_Get_count of T ints (of the probe too).
 *
 * Prints a FAIL line for each check that fails, then one line a rank:
 *   layouts rank R: sent N gapped G received N bytes B errors E
 * (gapped: messages of at least -g bytes whose send layout has gaps).
 *
 * usage: mpich_layouts [-s SEED] [-n MESSAGES] [-m MAX_INTS] [-g BYTES]
 */
#include <mpi.h>

#include "mpi_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, nprocs, errors;

/* the pair's generator: the same numbers on both partners */
static uint64_t rng_state;

static unsigned rnd(unsigned n)   /* 0 .. n-1 */
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (n == 0) ? 0 : (unsigned)((rng_state >> 33) % n);
}

/* a random divisor of t that is at most max */
static int divisor(int t, int max)
{
    int d[64], n = 0, i;

    for (i = 1; (i <= t) && (i <= max) && (n < 64); ++i) {
        if ((t % i) == 0) {
            d[n++] = i;
        }
    }
    return d[rnd(n)];
}

/* T: products of 2, 3 and 5 (divisors for every layout) in [16, max] */
static int draw_ints(int max)
{
    int t;

    do {
        t = (1 << rnd(16)) * (rnd(2) ? 3 : 1) * (rnd(3) == 0 ? 9 : 1) *
            (rnd(3) ? 1 : 5);
    } while ((t < 16) || (t > max));
    return t;
}

enum { K_CONTIG, K_VECTOR, K_SUBARRAY, K_INDEXED, K_STRUCT, K_NUM };
static const char *kind_name[] = {"contig", "vector", "subarray", "indexed",
                                  "struct"};

typedef struct {
    MPI_Datatype type;     /* committed, freed after the message */
    int          count;
    int          kind;
    size_t       span;     /* bytes from the buffer's start it touches */
    int          gapped;   /* the layout has holes */
} layout_t;

/* A fresh type of `t` ints in all (count x type), of a random kind. */
static void layout_draw(layout_t *l, int t)
{
    MPI_Aint lb, extent, tlb, textent;
    MPI_Datatype inner;
    int i;

    l->kind  = rnd(K_NUM);
    l->count = 1;
    switch (l->kind) {
    case K_CONTIG:
        MPI_Type_contiguous(t, MPI_INT, &l->type);
        break;
    case K_VECTOR: {
        int b = divisor(t, 512);
        MPI_Type_vector(t / b, b, b + 1 + rnd(2 * b + 8), MPI_INT, &l->type);
        break;
    }
    case K_SUBARRAY: {
        int sizes[3], sub[3], starts[3], nd = 2 + rnd(2), rest = t;
        for (i = 0; i < nd; ++i) {
            sub[i]    = (i == nd - 1) ? rest : divisor(rest, 256);
            rest     /= sub[i];
            sizes[i]  = sub[i] + rnd(3) * rnd(17);
            starts[i] = rnd(sizes[i] - sub[i] + 1);
        }
        MPI_Type_create_subarray(nd, sizes, sub, starts,
                                 rnd(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN,
                                 MPI_INT, &l->type);
        break;
    }
    case K_INDEXED: {
        int nb = 1 + rnd(t < 256 ? t : 256), *len, *displ, left = t, at = 0;
        len   = malloc(nb * sizeof(int));
        displ = malloc(nb * sizeof(int));
        for (i = 0; i < nb; ++i) {
            len[i]   = (i == nb - 1) ? left :
                       1 + (int)rnd(2 * (left - (nb - 1 - i)) / (nb - i));
            left    -= len[i];
            displ[i] = at + rnd(3) * rnd(40);
            at       = displ[i] + len[i];
        }
        MPI_Type_indexed(nb, len, displ, MPI_INT, &l->type);
        free(len);
        free(displ);
        break;
    }
    default: {   /* K_STRUCT: e ints an element, blocks, a larger extent */
        int e = divisor(t, 1024), nb = 1 + rnd(e < 8 ? e : 8), left = e;
        int len[8];
        MPI_Aint displ[8], at = 0;
        MPI_Datatype types[8];
        for (i = 0; i < nb; ++i) {
            len[i]   = (i == nb - 1) ? left : 1 + (int)rnd(left - (nb - 1 - i));
            left    -= len[i];
            displ[i] = at + 4 * rnd(5) * rnd(9);
            at       = displ[i] + 4 * len[i];
            types[i] = MPI_INT;
        }
        MPI_Type_create_struct(nb, len, displ, types, &inner);
        MPI_Type_create_resized(inner, 0, at + 4 * rnd(3) * rnd(33), &l->type);
        MPI_Type_free(&inner);
        l->count = t / e;
        break;
    }
    }
    MPI_Type_commit(&l->type);
    MPI_Type_get_extent(l->type, &lb, &extent);
    MPI_Type_get_true_extent(l->type, &tlb, &textent);
    l->span   = (size_t)((l->count - 1) * extent + tlb + textent);
    l->gapped = (l->span != (size_t)t * sizeof(int));
}

typedef struct {
    int partner, low, n, maxints, gap_min;
    MPI_Comm pair;
    long sent, gapped, big, received, bytes;
} ctx_t;

static void send_one(ctx_t *c, const layout_t *s, void *buf, int dst,
                     int tag, MPI_Comm comm, int how)
{
    MPI_Request req;
    int flag = 0;

    switch (how) {
    case 0:
        MPI_Send(buf, s->count, s->type, dst, tag, comm);
        break;
    case 1:
        MPI_Isend(buf, s->count, s->type, dst, tag, comm, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        break;
    case 2:
        MPI_Ssend(buf, s->count, s->type, dst, tag, comm);
        break;
    case 3:
        MPI_Issend(buf, s->count, s->type, dst, tag, comm, &req);
        while (!flag) {
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        }
        break;
    default:
        MPI_Send_init(buf, s->count, s->type, dst, tag, comm, &req);
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Request_free(&req);
        break;
    }
}

/* the receive; the status in *st; the probe's count in *probed (-1: none) */
static void recv_one(const layout_t *r, void *buf, int src, int tag,
                     MPI_Comm comm, int how, MPI_Status *st, int *probed)
{
    MPI_Request req;
    MPI_Message msg;
    int flag = 0;

    *probed = -1;
    switch (how) {
    case 0:
        MPI_Recv(buf, r->count, r->type, src, tag, comm, st);
        break;
    case 1:
        MPI_Irecv(buf, r->count, r->type, src, tag, comm, &req);
        MPI_Wait(&req, st);
        break;
    case 2:
        MPI_Probe(src, tag, comm, st);
        MPI_Get_count(st, MPI_INT, probed);
        MPI_Recv(buf, r->count, r->type, st->MPI_SOURCE, st->MPI_TAG, comm, st);
        break;
    case 3:
        while (!flag) {
            MPI_Iprobe(src, tag, comm, &flag, st);
        }
        MPI_Get_count(st, MPI_INT, probed);
        MPI_Recv(buf, r->count, r->type, st->MPI_SOURCE, st->MPI_TAG, comm, st);
        break;
    case 4:
        while (!flag) {
            MPI_Improbe(src, tag, comm, &flag, &msg, st);
        }
        MPI_Get_count(st, MPI_INT, probed);
        MPI_Mrecv(buf, r->count, r->type, &msg, st);
        break;
    case 5:
        MPI_Recv(buf, r->count, r->type, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, st);
        break;
    default:
        MPI_Recv_init(buf, r->count, r->type, src, tag, comm, &req);
        MPI_Start(&req);
        MPI_Wait(&req, st);
        MPI_Request_free(&req);
        break;
    }
}

/* message i in direction dir (0: low -> high): both partners call it */
static void one_message(ctx_t *c, int i, int dir)
{
    int t = draw_ints(c->maxints), tag = rnd(30000), shows = rnd(5);
    int rhow = rnd(7), use_pair = rnd(2), sender = (dir == 0) == c->low;
    MPI_Comm comm = use_pair ? c->pair : MPI_COMM_WORLD;
    int peer = use_pair ? c->low : c->partner;   /* the partner there */
    int salt = 2 * i + dir, count, probed;
    layout_t s, r;
    MPI_Status st;
    char what[96];
    void *buf;

    layout_draw(&s, t);
    layout_draw(&r, t);
    if (sender) {
        buf = malloc(s.span);
        check_fill(buf, s.span, rank, salt);
        send_one(c, &s, buf, peer, tag, comm, shows);
        ++c->sent;
        c->gapped += s.gapped && (t * sizeof(int) >= (size_t)c->gap_min);
        c->big    += (t * sizeof(int) >= (size_t)c->gap_min);
    } else {
        buf = calloc(1, r.span + 64);
        recv_one(&r, buf, peer, tag, comm, rhow, &st, &probed);
        snprintf(what, sizeof(what), "message %d (%d ints, %s -> %s, send %d "
                 "recv %d)", i, t, kind_name[s.kind], kind_name[r.kind],
                 shows, rhow);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == t, "%s: count %d", what, count);
        CHECK((probed < 0) || (probed == t), "%s: probed count %d", what,
              probed);
        CHECK(st.MPI_SOURCE == peer, "%s: source %d", what, st.MPI_SOURCE);
        CHECK(st.MPI_TAG == tag, "%s: tag %d", what, st.MPI_TAG);
        (void)check_verify(what, buf, r.span + 64, r.count, r.type,
                           c->partner, s.span, s.count, s.type, salt);
        ++c->received;
        c->bytes += t * sizeof(int);
    }
    free(buf);
    MPI_Type_free(&s.type);
    MPI_Type_free(&r.type);
}

int main(int argc, char **argv)
{
    ctx_t c = {.n = 200, .maxints = 32768, .gap_min = 4161};
    unsigned long seed = 1;
    int opt, i;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    while ((opt = getopt(argc, argv, "s:n:m:g:")) != -1) {
        switch (opt) {
        case 's': seed      = strtoul(optarg, NULL, 0); break;
        case 'n': c.n       = atoi(optarg); break;
        case 'm': c.maxints = atoi(optarg); break;
        case 'g': c.gap_min = atoi(optarg); break;
        default:
            if (rank == 0) {
                fprintf(stderr, "usage: %s [-s SEED] [-n MESSAGES] "
                        "[-m MAX_INTS] [-g BYTES]\n", argv[0]);
            }
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    c.partner = rank ^ 1;
    c.low     = !(rank & 1);
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &c.pair);
    if (c.partner < nprocs) {
        rng_state = seed * 0x9e3779b97f4a7c15ull + (uint64_t)(rank / 2);
        for (i = 0; i < c.n; ++i) {
            one_message(&c, i, 0);
            one_message(&c, i, 1);
        }
    }
    MPI_Comm_free(&c.pair);
    printf("layouts rank %d: sent %ld gapped %ld big %ld received %ld bytes %ld "
           "errors %d\n", rank, c.sent, c.gapped, c.big, c.received, c.bytes,
           errors);
    MPI_Finalize();
    return errors != 0;
}
