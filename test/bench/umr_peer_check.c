/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * umr_peer_check: what only two hosts show, for contrib/hw-check.sh --peer.
 * Two ranks (mpirun -np 2, one a host), each opens the transport on its
 * device and prints one "CHECK <name> PASS|FAIL|SKIPPED <detail>" line a
 * check (rank 0 prints the shared ones):
 *  - address: each side's view of the other (uct_iface_is_reachable: the
 *    same link layer, pkeys of one partition, IB subnet prefix / RoCE
 *    version and address family), the link layers, LIDs, GIDs and pkeys;
 *  - path_mtu: the smaller of the two ports' active MTUs (the RC path MTU);
 *  - put_layout_<r> / get_layout_<r>: rank r puts a pattern into the
 *    other's strided layout key and gets it back; every byte of the layout
 *    and the gaps between its blocks checked by the owner (both ways);
 *  - rnr: SKIPPED (the transport posts RDMA writes and reads only, no
 *    receive, so no RNR NAK can happen);
 *  - dead_peer: rank 1 closes its transport; rank 0's put to it must fail
 *    within the retry budget (-b SECONDS, from UCX_MLX5_UMR_TIMEOUT and
 *    RETRY_COUNT) instead of hanging.
 * Exit status 0 when no check failed.
 */
#include "umr_config.h"

#include "umr_example.h"
#include "umr_md.h"
#if HAVE_UMR_MLX5_ENGINE
#include "engine_mlx5.h"
#endif

#include <mpi.h>
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCKS  64
#define BLOCK   64
#define STRIDE  192

static int rank, failed;

static void check(const char *name, int ok, const char *fmt, ...)
{
    char detail[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    printf("CHECK %s %s %s\n", name, (ok > 0) ? "PASS" :
           (ok == 0) ? "FAIL" : "SKIPPED", detail);
    fflush(stdout);
    failed |= (ok == 0);
}

static ucs_status_t exchange(void *arg, const void *mine, size_t len,
                             void *peer, size_t max)
{
    int other = 1 - rank;

    if (len > max) {
        return UCS_ERR_BUFFER_TOO_SMALL;
    }
    return (MPI_Sendrecv(mine, (int)len, MPI_BYTE, other, 7, peer, (int)max,
                         MPI_BYTE, other, 7, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE) == MPI_SUCCESS) ?
           UCS_OK : UCS_ERR_IO_ERROR;
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The port facts a peer compares (mlx5 engine): link layer, LID, GID,
 * pkey, active MTU; zeros on another engine. */
typedef struct {
    uint8_t  link_layer, mtu, gid[16];
    uint16_t lid, pkey;
} port_facts_t;

static void my_facts(umr_example_t *ex, port_facts_t *f)
{
    uct_mlx5_umr_md_t *md = uct_mlx5_umr_md_from_handle(ex->md);

    memset(f, 0, sizeof(*f));
#if HAVE_UMR_MLX5_ENGINE
    if ((md != NULL) && (md->eng->id == UMR_ENG_ID_MLX5)) {
        umr_eng_mlx5_dev_t *d = (umr_eng_mlx5_dev_t*)md->dev;
        f->link_layer = d->link_layer;
        f->mtu        = d->active_mtu;
        f->lid        = d->lid;
        f->pkey       = d->pkey;
        memcpy(f->gid, d->gid.raw, 16);
    }
#endif
}

/* 1 when each side reaches the other. */
static int address_checks(umr_example_t *ex)
{
    char dev[UMR_EXAMPLE_MAX_ADDR], iface[UMR_EXAMPLE_MAX_ADDR];
    char pdev[UMR_EXAMPLE_MAX_ADDR], piface[UMR_EXAMPLE_MAX_ADDR];
    char g0[INET6_ADDRSTRLEN], g1[INET6_ADDRSTRLEN];
    port_facts_t f[2];
    int reach[2], r;

    memset(iface, 0, sizeof(iface));
    uct_iface_get_device_address(ex->iface, (uct_device_addr_t*)dev);
    uct_iface_get_address(ex->iface, (uct_iface_addr_t*)iface);
    exchange(NULL, dev, sizeof(dev), pdev, sizeof(pdev));
    exchange(NULL, iface, sizeof(iface), piface, sizeof(piface));
    r = uct_iface_is_reachable(ex->iface, (uct_device_addr_t*)pdev,
                               (uct_iface_addr_t*)piface);
    my_facts(ex, &f[rank]);
    MPI_Allgather(&r, 1, MPI_INT, reach, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Allgather(&f[rank], sizeof(f[0]), MPI_BYTE, f, sizeof(f[0]), MPI_BYTE,
                  MPI_COMM_WORLD);
    if (rank != 0) {
        return reach[0] && reach[1];
    }
    inet_ntop(AF_INET6, f[0].gid, g0, sizeof(g0));
    inet_ntop(AF_INET6, f[1].gid, g1, sizeof(g1));
    check("address", reach[0] && reach[1], "rank 0 reaches 1: %s, 1 reaches "
          "0: %s; link layer %u / %u, lid %u / %u, gid %s / %s, pkey 0x%04x "
          "/ 0x%04x", reach[0] ? "yes" : "no", reach[1] ? "yes" : "no",
          f[0].link_layer, f[1].link_layer, f[0].lid, f[1].lid, g0, g1,
          f[0].pkey, f[1].pkey);
    if (f[0].mtu && f[1].mtu) {
        check("path_mtu", 1, "%d B (ports: %d B / %d B)",
              128 << ((f[0].mtu < f[1].mtu) ? f[0].mtu : f[1].mtu),
              128 << f[0].mtu, 128 << f[1].mtu);
    } else {
        check("path_mtu", -1, "not an mlx5 device");
    }
    return reach[0] && reach[1];
}

static void comp_cb(uct_completion_t *c)
{
    (void)c;
}

/* One get of `len` bytes from the peer's key into `buf`, waited for. */
static ucs_status_t get_wait(umr_example_t *ex, void *buf, size_t len,
                             uct_mem_h memh, uct_rkey_t rkey)
{
    uct_completion_t comp = { .func = comp_cb, .count = 1, .status = UCS_OK };
    uct_iov_t iov         = { buf, len, memh, 0, 1 };
    ucs_status_t status;

    while ((status = uct_ep_get_zcopy(ex->ep, &iov, 1, 0, rkey, &comp)) ==
           UCS_ERR_NO_RESOURCE) {
        uct_worker_progress(ex->worker);
    }
    if (status == UCS_INPROGRESS) {
        while (comp.count > 0) {
            uct_worker_progress(ex->worker);
        }
        status = comp.status;
    }
    return status;
}

/* Rank `actor` puts into the other's layout key and gets it back. */
static void layout_checks(umr_example_t *ex, int actor)
{
    size_t span = BLOCKS * STRIDE, len = BLOCKS * BLOCK, i, b;
    uint8_t *mem = malloc(span), *src = malloc(len), *back = malloc(len);
    uct_mem_h lmemh = NULL, smemh = NULL, bmemh = NULL;
    char packed[UMR_EXAMPLE_MAX_RKEY], ppacked[UMR_EXAMPLE_MAX_RKEY];
    uct_rkey_bundle_t rkey;
    umr_layout_t *layout = NULL;
    ucs_status_t status = UCS_OK, st;
    char name[32];
    int ok = 1;

    memset(mem, 0x11, span);
    for (i = 0; i < len; ++i) {
        src[i] = (uint8_t)(i * 7 + actor + 1);
    }
    umr_layout_vector(BLOCKS, BLOCK, STRIDE, NULL, &layout);
    st = uct_umr_mem_reg(ex->md, mem, layout, 1, 0, &lmemh);
    memset(packed, 0, sizeof(packed));
    if (st == UCS_OK) {
        uct_md_mkey_pack(ex->md, lmemh, packed);
    }
    exchange(NULL, packed, sizeof(packed), ppacked, sizeof(ppacked));
    uct_md_mem_reg(ex->md, src, len, UCT_MD_MEM_ACCESS_ALL, &smemh);
    uct_md_mem_reg(ex->md, back, len, UCT_MD_MEM_ACCESS_ALL, &bmemh);

    snprintf(name, sizeof(name), "put_layout_%d", actor);
    if (rank == actor) {
        uct_iov_t iov = { src, len, smemh, 0, 1 };
        status = uct_rkey_unpack(ex->component, ppacked, &rkey);
        if (status == UCS_OK) {
            status = umr_example_put_wait(ex, &iov, NULL, 0, rkey.rkey);
        }
    }
    MPI_Bcast(&status, sizeof(status), MPI_BYTE, actor, MPI_COMM_WORLD);
    if (rank != actor) {   /* the owner checks its layout and the gaps */
        for (b = 0; (b < BLOCKS) && ok; ++b) {
            for (i = 0; (i < STRIDE) && ok; ++i) {
                uint8_t want = (i < BLOCK) ?
                               (uint8_t)((b * BLOCK + i) * 7 + actor + 1) :
                               0x11;
                ok = (mem[b * STRIDE + i] == want);
            }
        }
        check(name, (st == UCS_OK) && (status == UCS_OK) && ok,
              "rank %d into rank %d's %d x %d B blocks %d B apart: %s", actor,
              rank, BLOCKS, BLOCK, STRIDE, (st != UCS_OK) ?
              "layout registration failed" : (status != UCS_OK) ?
              ucs_status_string(status) : ok ? "every byte right" :
              "wrong bytes");
    }

    snprintf(name, sizeof(name), "get_layout_%d", actor);
    if (rank == actor) {
        memset(back, 0, len);
        if (status == UCS_OK) {
            status = get_wait(ex, back, len, bmemh, rkey.rkey);
        }
        check(name, (status == UCS_OK) && !memcmp(back, src, len),
              "rank %d from rank %d's layout key: %s", actor, 1 - actor,
              (status != UCS_OK) ? ucs_status_string(status) :
              memcmp(back, src, len) ? "wrong bytes" : "every byte right");
        uct_rkey_release(ex->component, &rkey);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    uct_md_mem_dereg(ex->md, bmemh);
    uct_md_mem_dereg(ex->md, smemh);
    if (lmemh != NULL) {
        uct_md_mem_dereg(ex->md, lmemh);
    }
    umr_layout_free(layout);
    free(back);
    free(src);
    free(mem);
}

/* Rank 1 closes its transport; rank 0's put to it fails within `budget`
 * seconds. */
static void dead_peer_check(umr_example_t *ex, double budget)
{
    uint8_t buf[64] = {0};
    char packed[UMR_EXAMPLE_MAX_RKEY], ppacked[UMR_EXAMPLE_MAX_RKEY];
    uct_mem_h memh = NULL;
    uct_rkey_bundle_t rkey;
    ucs_status_t status;
    double t0;

    uint64_t va = (uintptr_t)buf, pva = 0;

    memset(packed, 0, sizeof(packed));
    uct_md_mem_reg(ex->md, buf, sizeof(buf), UCT_MD_MEM_ACCESS_ALL, &memh);
    uct_md_mkey_pack(ex->md, memh, packed);
    exchange(NULL, packed, sizeof(packed), ppacked, sizeof(ppacked));
    exchange(NULL, &va, sizeof(va), &pva, sizeof(pva));
    if (rank == 1) {
        uct_md_mem_dereg(ex->md, memh);
        umr_example_close(ex);
        MPI_Barrier(MPI_COMM_WORLD);    /* closed */
        MPI_Barrier(MPI_COMM_WORLD);    /* rank 0 done */
        return;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    uct_iov_t iov = { buf, sizeof(buf), memh, 0, 1 };
    t0     = now();
    status = uct_rkey_unpack(ex->component, ppacked, &rkey);
    if (status == UCS_OK) {
        status = umr_example_put_wait(ex, &iov, NULL, pva, rkey.rkey);
        uct_rkey_release(ex->component, &rkey);
    }
    t0 = now() - t0;
    check("dead_peer", (status != UCS_OK) && (t0 <= budget),
          "a put to a closed peer: %s after %.2f s (budget %.2f s)",
          ucs_status_string(status), t0, budget);
    MPI_Barrier(MPI_COMM_WORLD);
    uct_md_mem_dereg(ex->md, memh);
    umr_example_close(ex);
}

int main(int argc, char **argv)
{
    const char *dev = NULL;
    double budget   = 30;
    umr_example_t ex;
    int size, opt;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((opt = getopt(argc, argv, "d:b:")) != -1) {
        if (opt == 'd') {
            dev = optarg;
        } else if (opt == 'b') {
            budget = atof(optarg);
        } else {
            fprintf(stderr, "usage: %s [-d DEVICE] [-b SECONDS]\n", argv[0]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (size != 2) {
        fprintf(stderr, "umr_peer_check: 2 ranks, one a host (got %d)\n",
                size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (umr_example_open(&ex, dev) != UCS_OK) {
        fprintf(stderr, "umr_peer_check rank %d: %s\n", rank, ex.error);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (!address_checks(&ex)) {
        if (rank == 0) {
            check("the_rest", -1, "the hosts do not reach each other");
        }
        umr_example_close(&ex);
        MPI_Finalize();
        return 1;
    }
    if (umr_example_connect(&ex, exchange, NULL) != UCS_OK) {
        fprintf(stderr, "umr_peer_check rank %d: %s\n", rank, ex.error);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    layout_checks(&ex, 0);
    layout_checks(&ex, 1);
    if (rank == 0) {
        check("rnr", -1, "the transport posts RDMA writes and reads only: no "
              "receive, no RNR NAK");
    }
    dead_peer_check(&ex, budget);

    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    MPI_Finalize();
    return failed ? 1 : 0;
}
