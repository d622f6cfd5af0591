/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * vm_probe: where does this VM put the two CPUs a job runs on, and does the
 * memory a job uses matter? Two processes pinned to CPU 0 and CPU 1 bounce
 * one cache line (ping on the first line of a page, pong on the second) and
 * time the round trip. See README.md next to this file.
 *
 *   vm_probe pages [-m MiB] [-p pages] [-n round_trips]
 *       a MAP_SHARED anonymous mapping of MiB; for each of `pages` pages
 *       spread over it, the round trip on that page and, right after, on a
 *       reference page (the mapping's first), with both pages' guest-physical
 *       frames (/proc/self/pagemap, root). If the round trip depended on
 *       where a page is, pages would disagree with the reference.
 *       Line: PAGE <index> <pfn> <page_ns> <ref_ns>
 *   vm_probe time [-t seconds] [-i interval_ms] [-n round_trips]
 *                 [-w sleep|spin|both]
 *       the round trip on one page every interval: between probes CPU 0
 *       sleeps (sleep, default), spins (spin: both CPUs stay busy, like the
 *       ranks of an MPI job), or both sleep (both).
 *       Line: TIME <seconds> <median_ns> <min_ns> <max_ns> <steal>
 *       (steal: the guest's steal time in /proc/stat since the probe
 *       before, in ticks of 1/100 s summed over the CPUs; -1 if unknown)
 * Each figure is per round trip; a probe is 5 batches of round_trips / 5,
 * median (min, max) over the batches. Ends with a SUMMARY line: how many
 * probes, and how many differ by more than 2x (pages: from the reference
 * page probed right after; time: from the probe before).
 * Needs 2 CPUs. Exit 77 with a message if CPU 1 does not exist.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define VMP_PAGE    4096
#define VMP_BATCHES 5

typedef struct {
    volatile uint64_t ping;
    char              pad[56];
    volatile uint64_t pong;
} vmp_lines_t;

typedef struct {
    size_t   mib;
    int      pages;
    int      round_trips;
    double   seconds;
    int      interval_ms;
    int      wait_mode;  /* 0 sleep, 1 spin, 2 both sleep */
} vmp_opts_t;

static double vmp_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int vmp_pin(int cpu)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof(set), &set);
}

/* guest-physical frame of a mapped page, 0 if unknown (not root) */
static uint64_t vmp_pfn(int fd, const void *p)
{
    uint64_t entry;
    off_t off = (off_t)((uintptr_t)p / VMP_PAGE) * sizeof(entry);

    if ((fd < 0) || (pread(fd, &entry, sizeof(entry), off) != sizeof(entry)) ||
        !(entry >> 63)) {
        return 0;
    }
    return entry & ((1ull << 55) - 1);
}

static int vmp_cmp(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

/* ping side: n round trips on l in VMP_BATCHES batches, continuing the
 * sequence *seq; med/min/max per round trip */
static void vmp_ping(vmp_lines_t *l, uint64_t *seq, int n, double *res)
{
    double b[VMP_BATCHES], start;
    int i, k, per = n / VMP_BATCHES;

    for (k = 0; k < VMP_BATCHES; ++k) {
        start = vmp_now_ns();
        for (i = 0; i < per; ++i) {
            l->ping = ++*seq;
            while (l->pong != *seq) {
            }
        }
        b[k] = (vmp_now_ns() - start) / per;
    }
    qsort(b, VMP_BATCHES, sizeof(b[0]), vmp_cmp);
    res[0] = b[VMP_BATCHES / 2];
    res[1] = b[0];
    res[2] = b[VMP_BATCHES - 1];
}

/* pong side: answer n / VMP_BATCHES * VMP_BATCHES round trips */
static void vmp_pong(vmp_lines_t *l, uint64_t *seq, int n)
{
    int i, total = n / VMP_BATCHES * VMP_BATCHES;

    for (i = 0; i < total; ++i) {
        ++*seq;
        while (l->ping != *seq) {
        }
        l->pong = *seq;
    }
}

static vmp_lines_t *vmp_page(char *base, size_t index)
{
    return (vmp_lines_t*)(base + index * VMP_PAGE);
}

static size_t vmp_sample(const vmp_opts_t *o, int k)
{
    size_t total = (o->mib << 20) / VMP_PAGE;

    return 1 + (size_t)k * ((total - 1) / o->pages);
}

static int vmp_run_pages(const vmp_opts_t *o, char *base, int is_ping,
                         int *flips)
{
    uint64_t seq_page, seq_ref = 0;
    double page[3], ref[3];
    int fd = -1, k;

    if (is_ping) {
        fd = open("/proc/self/pagemap", O_RDONLY);
        printf("# PAGE index pfn page_ns ref_ns; reference page pfn %llu\n",
               (unsigned long long)vmp_pfn(fd, base));
    }
    for (k = 0; k < o->pages; ++k) {
        seq_page = 0;
        if (!is_ping) {
            vmp_pong(vmp_page(base, vmp_sample(o, k)), &seq_page,
                     o->round_trips);
            vmp_pong(vmp_page(base, 0), &seq_ref, o->round_trips);
            continue;
        }
        vmp_ping(vmp_page(base, vmp_sample(o, k)), &seq_page, o->round_trips,
                 page);
        vmp_ping(vmp_page(base, 0), &seq_ref, o->round_trips, ref);
        printf("PAGE %zu %llu %.1f %.1f\n", vmp_sample(o, k),
               (unsigned long long)vmp_pfn(fd, vmp_page(base,
                                                        vmp_sample(o, k))),
               page[0], ref[0]);
        /* a page that disagrees with the reference taken right after it */
        *flips += (page[0] > 2 * ref[0]) || (ref[0] > 2 * page[0]);
    }
    if (fd >= 0) {
        close(fd);
    }
    return o->pages;
}

/* total steal time of the guest (/proc/stat "cpu" line, 8th value), -1 if
 * unknown */
static long long vmp_steal(void)
{
    long long v[8];
    FILE *f = fopen("/proc/stat", "r");
    int n;

    if (f == NULL) {
        return -1;
    }
    n = fscanf(f, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1],
               &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    return (n == 8) ? v[7] : -1;
}

static void vmp_idle(const vmp_opts_t *o)
{
    double end = vmp_now_ns() + o->interval_ms * 1e6;

    if (o->wait_mode == 1) {
        while (vmp_now_ns() < end) {
        }
    } else {
        usleep(o->interval_ms * 1000);
    }
}

static int vmp_run_time(const vmp_opts_t *o, char *base, int is_ping,
                        int *flips)
{
    double res[3], prev = 0, start = vmp_now_ns();
    int probes = (int)(o->seconds * 1000 / o->interval_ms), k;
    long long steal = vmp_steal(), now_steal;
    uint64_t seq = 0;

    for (k = 0; k < probes; ++k) {
        if (!is_ping) {
            vmp_pong(vmp_page(base, 0), &seq, o->round_trips);
            if (o->wait_mode == 2) {
                usleep(o->interval_ms * 500);
            }
            continue;
        }
        vmp_ping(vmp_page(base, 0), &seq, o->round_trips, res);
        now_steal = vmp_steal();
        printf("TIME %.3f %.1f %.1f %.1f %lld\n",
               (vmp_now_ns() - start) / 1e9, res[0], res[1], res[2],
               ((steal < 0) || (now_steal < 0)) ? -1 : now_steal - steal);
        steal = now_steal;
        fflush(stdout);
        *flips += (k > 0) && ((res[0] > 2 * prev) || (prev > 2 * res[0]));
        prev = res[0];
        vmp_idle(o);
    }
    return probes;
}

static void vmp_usage(void)
{
    fprintf(stderr, "usage: vm_probe pages [-m MiB] [-p pages] "
            "[-n round_trips]\n"
            "       vm_probe time [-t seconds] [-i interval_ms] "
            "[-n round_trips] [-w sleep|spin|both]\n");
}

int main(int argc, char **argv)
{
    vmp_opts_t o = { 512, 512, 10000, 60, 100, 0 };
    int opt, is_time, probes, flips = 0, status;
    size_t len;
    char *base;
    pid_t pid;

    if ((argc < 2) || (strcmp(argv[1], "pages") && strcmp(argv[1], "time"))) {
        vmp_usage();
        return 1;
    }
    is_time = !strcmp(argv[1], "time");
    optind = 2;
    while ((opt = getopt(argc, argv, "m:p:n:t:i:w:")) != -1) {
        switch (opt) {
        case 'm': o.mib = strtoul(optarg, NULL, 0); break;
        case 'p': o.pages = atoi(optarg); break;
        case 'n': o.round_trips = atoi(optarg); break;
        case 't': o.seconds = atof(optarg); break;
        case 'i': o.interval_ms = atoi(optarg); break;
        case 'w':
            o.wait_mode = !strcmp(optarg, "sleep") ? 0 :
                          !strcmp(optarg, "spin") ? 1 :
                          !strcmp(optarg, "both") ? 2 : -1;
            break;
        default: vmp_usage(); return 1;
        }
    }
    if ((o.mib < 1) || (o.pages < 1) ||
        ((o.mib << 20) / VMP_PAGE <= (size_t)o.pages) ||
        (o.round_trips < VMP_BATCHES) || (o.seconds <= 0) ||
        (o.interval_ms < 1) || (o.wait_mode < 0)) {
        fprintf(stderr, "vm_probe: -m >= 1 with more pages than -p >= 1, "
                "-n >= %d, -t > 0, -i >= 1, -w sleep|spin|both\n",
                VMP_BATCHES);
        return 1;
    }
    if (vmp_pin(1) != 0) {
        fprintf(stderr, "vm_probe: cannot run on CPU 1 (%s): needs 2 CPUs\n",
                strerror(errno));
        return 77;
    }

    len = o.mib << 20;
    base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                -1, 0);
    if (base == MAP_FAILED) {
        fprintf(stderr, "vm_probe: mmap of %zu MiB: %s\n", o.mib,
                strerror(errno));
        return 1;
    }
    memset(base, 0, len); /* every page present before the fork */

    pid = fork();
    if (pid < 0) {
        perror("vm_probe: fork");
        return 1;
    }
    if (pid == 0) { /* pong, on CPU 1 */
        if (is_time) {
            vmp_run_time(&o, base, 0, &flips);
        } else {
            vmp_run_pages(&o, base, 0, &flips);
        }
        _exit(0);
    }
    if (vmp_pin(0) != 0) {
        perror("vm_probe: CPU 0");
        kill(pid, SIGKILL);
        return 1;
    }
    probes = is_time ? vmp_run_time(&o, base, 1, &flips) :
                       vmp_run_pages(&o, base, 1, &flips);
    if ((waitpid(pid, &status, 0) != pid) || !WIFEXITED(status) ||
        (WEXITSTATUS(status) != 0)) {
        fprintf(stderr, "vm_probe: the pong process failed\n");
        return 1;
    }
    printf("SUMMARY %s probes %d differ_2x %d\n", argv[1], probes, flips);
    return 0;
}
