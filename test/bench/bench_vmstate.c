/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * bm_vmstate_probe: see bench_vmstate.h.
 *
 * Rank 0 creates a one-page POSIX shared memory object, tells rank 1 its name
 * and both map it. Rank 0 writes a sequence number into the first cache
 * line and waits for rank 1 to echo it in the second one. A waiter yields the
 * CPU now and then, so that the probe ends even when both ranks share one
 * CPU (it then measures the scheduler, and says so by its size).
 *
 * bm_vmstate_settle redraws the state: a vCPU that idles halts (this guest's
 * haltpoll polls 0 ns), and the host may wake it elsewhere.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_vmstate.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define BM_VMSTATE_LINE       64
#define BM_VMSTATE_SPINS      (1u << 14) /* spins between sched_yield() */
#define BM_VMSTATE_MAX_BATCH  64

typedef struct {
    volatile uint64_t ping;
    char              pad[BM_VMSTATE_LINE - sizeof(uint64_t)];
    volatile uint64_t pong;
} bm_vmstate_lines_t;

static double bm_vmstate_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void bm_vmstate_wait(volatile uint64_t *flag, uint64_t value)
{
    unsigned spins = 0;

    while (*flag != value) {
        if (++spins == BM_VMSTATE_SPINS) {
            sched_yield();
            spins = 0;
        }
    }
}

static int bm_vmstate_cmp(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

/* rank 0: the ping side, times every batch */
static void bm_vmstate_ping(bm_vmstate_lines_t *l, int batches,
                            int round_trips, double *batch_ns)
{
    uint64_t seq = 0;
    double start;
    int b, i;

    for (b = 0; b < batches; ++b) {
        start = bm_vmstate_now_ns();
        for (i = 0; i < round_trips; ++i) {
            l->ping = ++seq;
            bm_vmstate_wait(&l->pong, seq);
        }
        batch_ns[b] = (bm_vmstate_now_ns() - start) / round_trips;
    }
}

/* rank 1: the pong side */
static void bm_vmstate_pong(bm_vmstate_lines_t *l, int batches,
                            int round_trips)
{
    uint64_t seq, total = (uint64_t)batches * round_trips;

    for (seq = 1; seq <= total; ++seq) {
        bm_vmstate_wait(&l->ping, seq);
        l->pong = seq;
    }
}

/* rank 0 creates and names the object; both map it. Returns the mapping or
 * NULL; every rank learns whether all of them succeeded */
static bm_vmstate_lines_t *bm_vmstate_map(MPI_Comm comm, int rank,
                                          const char *when)
{
    char name[64] = "";
    void *p = MAP_FAILED;
    int fd = -1, ok, all_ok;

    if (rank == 0) {
        snprintf(name, sizeof(name), "/bm_vmstate.%d", (int)getpid());
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if ((fd >= 0) && (ftruncate(fd, getpagesize()) != 0)) {
            close(fd);
            fd = -1;
        }
    }
    MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, comm);
    if (rank == 1) {
        fd = shm_open(name, O_RDWR, 0);
    }
    if (fd >= 0) {
        p = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE, MAP_SHARED,
                 fd, 0);
        close(fd);
    }
    ok = (p != MAP_FAILED) || (rank > 1);
    if (!ok) {
        fprintf(stderr, "bm_vmstate_probe(%s): rank %d cannot map shared "
                "memory object '%s': %s\n", when, rank, name,
                strerror(errno));
    }
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
    if (rank == 0) {
        shm_unlink(name); /* both ranks hold their mapping by now */
    }
    if (!all_ok) {
        if (p != MAP_FAILED) {
            munmap(p, getpagesize());
        }
        return NULL;
    }
    return (p == MAP_FAILED) ? NULL : p;
}

int bm_vmstate_probe(MPI_Comm comm, const char *when, int batches,
                     int round_trips, double *rt_ns)
{
    double batch_ns[BM_VMSTATE_MAX_BATCH];
    bm_vmstate_lines_t *l;
    MPI_Comm node;
    int rank, size, node_size;

    *rt_ns = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if ((batches < 1) || (batches > BM_VMSTATE_MAX_BATCH) ||
        (round_trips < 1)) {
        if (rank == 0) {
            fprintf(stderr, "bm_vmstate_probe(%s): batches must be 1..%d "
                    "and round_trips >= 1 (got %d, %d)\n", when,
                    BM_VMSTATE_MAX_BATCH, batches, round_trips);
        }
        return -1;
    }
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    if ((size != 2) || (node_size != 2)) {
        if (rank == 0) {
            fprintf(stderr, "bm_vmstate_probe(%s): needs 2 ranks on one host "
                    "(%d ranks, %d on this host)\n", when, size, node_size);
            printf("VMSTATE %s -\n", when);
        }
        return -1;
    }

    l = bm_vmstate_map(comm, rank, when);
    if (l == NULL) {
        if (rank == 0) {
            printf("VMSTATE %s -\n", when);
        }
        return -1;
    }
    MPI_Barrier(comm); /* ftruncate() zeroed both lines */
    if (rank == 0) {
        bm_vmstate_ping(l, batches, round_trips, batch_ns);
        qsort(batch_ns, batches, sizeof(batch_ns[0]), bm_vmstate_cmp);
        *rt_ns = batch_ns[batches / 2];
        printf("VMSTATE %s %.1f %.1f %.1f %d\n", when, *rt_ns, batch_ns[0],
               batch_ns[batches - 1], batches * round_trips);
        fflush(stdout);
    } else {
        bm_vmstate_pong(l, batches, round_trips);
    }
    munmap((void*)l, getpagesize());
    MPI_Barrier(comm);
    return 0;
}

int bm_vmstate_settle(MPI_Comm comm, double max_ns, int tries, int sleep_ms)
{
    double rt_ns;
    int rank, i;

    MPI_Comm_rank(comm, &rank);
    if ((max_ns <= 0) || (tries < 1) || (sleep_ms < 0)) {
        if (rank == 0) {
            fprintf(stderr, "bm_vmstate_settle: max_ns > 0, tries >= 1, "
                    "sleep_ms >= 0 (got %.1f, %d, %d)\n", max_ns, tries,
                    sleep_ms);
        }
        return -1;
    }
    for (i = 0; i < tries; ++i) {
        if (i > 0) {
            usleep(sleep_ms * 1000);
        }
        if (bm_vmstate_probe(comm, "settle", 5, 1000, &rt_ns) != 0) {
            return -1;
        }
        MPI_Bcast(&rt_ns, 1, MPI_DOUBLE, 0, comm);
        if (rt_ns <= max_ns) {
            return 1;
        }
    }
    return 0;
}
