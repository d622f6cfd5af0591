/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * The state of the machine an MPI job runs in, as seen by its two ranks: the
 * round trip of one cache line between them (bm_vmstate_probe).
 *
 * On a VM the host places the two vCPUs where it likes, and a job whose ranks
 * busy-poll keeps the placement it started with: on our 2-vCPU KVM guests the
 * same round trip is ~50 ns, ~120 ns or ~500 ns depending on where the vCPUs
 * run, and 0-byte MPI latency follows it (contrib/vm-probe/README.md). The
 * benchmark prints the probe at the start and the end of a job so that
 * runs in the same state can be compared with each other.
 */
#ifndef BENCH_VMSTATE_H_
#define BENCH_VMSTATE_H_

#include <mpi.h>

/**
 * Cache-line ping-pong between ranks 0 and 1 of @a comm through a shared
 * memory page (POSIX shm): @a batches batches of @a round_trips round trips.
 * Collective over @a comm. Rank 0 prints
 *   VMSTATE <when> <median_ns> <min_ns> <max_ns> <round_trips>
 * (per round trip: median, min and max over the batches) and returns the
 * median in @a rt_ns (rank 0 only; other ranks get 0). Returns 0, or -1 with
 * a message on stderr (and a "VMSTATE <when> -" line) when the ranks cannot
 * share memory (not exactly 2 ranks, not on one host, shm failure).
 */
int bm_vmstate_probe(MPI_Comm comm, const char *when, int batches,
                     int round_trips, double *rt_ns);

/**
 * Start in a state whose round trip is at most @a max_ns: probe ("settle",
 * 5 x 1000 round trips); while it is above, every rank sleeps @a sleep_ms
 * (both vCPUs idle, so the host places them again) and probes again, at
 * most @a tries probes. Collective over @a comm. Returns 1 when a probe
 * reached @a max_ns, 0 when none did, -1 when the probe cannot run or the
 * arguments are wrong (max_ns > 0, tries >= 1, sleep_ms >= 0).
 */
int bm_vmstate_settle(MPI_Comm comm, double max_ns, int tries, int sleep_ms);

#endif
