/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * halo3d: the faces of a 3D grid of doubles sent to a peer process through
 * the mlx5_umr transport, two ways, verified byte for byte:
 *
 *   zero-copy  one put from the face as a local layout (a UMR key the
 *              endpoint builds over the registered grid on the first
 *              iteration and caches) to the peer's face registered as a
 *              layout key (on a ConnectX: one RDMA write through two keys)
 *   pack       CPU pack into a bounce buffer, contiguous put, the peer unpacks
 *              (what MPI libraries over UCX do for derived datatypes)
 *
 * Both modes end each iteration with the same notification round trip to
 * the peer, so the difference is the data path alone.
 *
 * Two processes (fork) on one host; the engine comes from
 * UCX_MLX5_UMR_ENGINE (default here: sw). With the sw engine the data moves
 * through cross-memory attach: its timings say nothing about a NIC.
 *
 * Usage: halo3d [-n N[,N...]] [-i iterations] [-d device]
 */
#include "umr_example.h"

#include <ucs/time/time.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEMO_MAX_RKEY  UMR_EXAMPLE_MAX_RKEY
#define DEMO_GUARD     0xee

typedef struct demo_face {
    const char       *name;
    size_t           offset;        /* first byte of the face in the grid */
    umr_layout_t *layout;
    size_t           size;          /* packed bytes */
} demo_face_t;

typedef struct demo_ctx {
    int           sock;             /* to the peer */
    int           is_target;
    umr_example_t ex;               /* md, worker, iface, ep */
} demo_ctx_t;

#define DEMO_CHECK(_status, _what) \
    do { \
        ucs_status_t __s = (_status); \
        if (__s != UCS_OK) { \
            fprintf(stderr, "halo3d[%s]: %s failed: %s\n", \
                    ctx->is_target ? "target" : "initiator", (_what), \
                    ucs_status_string(__s)); \
            exit(1); \
        } \
    } while (0)

static void demo_send(demo_ctx_t *ctx, const void *buf, size_t len)
{
    if (write(ctx->sock, &len, sizeof(len)) != sizeof(len) ||
        write(ctx->sock, buf, len) != (ssize_t)len) {
        perror("halo3d: write to peer");
        exit(1);
    }
}

static size_t demo_recv(demo_ctx_t *ctx, void *buf, size_t max)
{
    size_t len, got = 0;
    ssize_t n;

    if (read(ctx->sock, &len, sizeof(len)) != sizeof(len) || len > max) {
        fprintf(stderr, "halo3d: peer closed or sent a bad message\n");
        exit(1);
    }
    while (got < len) {
        n = read(ctx->sock, (char*)buf + got, len - got);
        if (n <= 0) {
            perror("halo3d: read from peer");
            exit(1);
        }
        got += n;
    }
    return len;
}

/* umr_example_exchange_fn_t over the socket: both sides send first. */
static ucs_status_t demo_exchange(void *arg, const void *mine, size_t len,
                                  void *peer, size_t max)
{
    demo_send(arg, mine, len);
    demo_recv(arg, peer, max);
    return UCS_OK;
}

/* C order grid[z][y][x]: the three faces at x = 1, y = 1, z = 1. */
static void demo_make_faces(demo_ctx_t *ctx, size_t n, demo_face_t *faces)
{
    const size_t d = sizeof(double);
    size_t i;

    faces[0].name   = "x (8 B blocks)";
    faces[0].offset = 1 * d;
    DEMO_CHECK(umr_layout_vector(n * n, d, n * d, NULL, &faces[0].layout),
               "x face layout");
    faces[1].name   = "y (row blocks)";
    faces[1].offset = n * d;
    DEMO_CHECK(umr_layout_vector(n, n * d, n * n * d, NULL,
                                     &faces[1].layout), "y face layout");
    faces[2].name   = "z (contiguous)";
    faces[2].offset = n * n * d;
    DEMO_CHECK(umr_layout_contig(n * n * d, &faces[2].layout),
               "z face layout");
    for (i = 0; i < 3; ++i) {
        faces[i].size = umr_layout_size(faces[i].layout);
    }
}

enum { CMD_DONE, CMD_UNPACK, CMD_VERIFY, CMD_RESET, CMD_QUIT };
typedef struct { int cmd; int face; } demo_cmd_t;

/* The initiator's grid: byte i is (i * 7) mod 256, so misplaced bytes show. */
static char *demo_initiator_grid(size_t n)
{
    size_t grid_bytes = n * n * n * sizeof(double), i;
    char *grid = malloc(grid_bytes);

    for (i = 0; i < grid_bytes; ++i) {
        grid[i] = (char)(i * 7);
    }
    return grid;
}

static void demo_target(demo_ctx_t *ctx, size_t n, const demo_face_t *faces)
{
    size_t grid_bytes = n * n * n * sizeof(double);
    char *grid = malloc(grid_bytes);
    /* written by the peer through CMA, which valgrind cannot see */
    char *bounce = calloc(1, n * n * sizeof(double));
    char *expect = malloc(grid_bytes), *face_buf = malloc(n * n * sizeof(double));
    char *src = demo_initiator_grid(n);
    uct_mem_h memh[3], bounce_memh;
    char rkeys[4][DEMO_MAX_RKEY];
    demo_cmd_t cmd;
    size_t i;
    int ok;

    memset(grid, DEMO_GUARD, grid_bytes);
    for (i = 0; i < 3; ++i) {
        DEMO_CHECK(uct_umr_mem_reg(ctx->ex.md, grid + faces[i].offset,
                                   faces[i].layout, 1, 0, &memh[i]),
                   "uct_umr_mem_reg (target face)");
        DEMO_CHECK(uct_md_mkey_pack(ctx->ex.md, memh[i], rkeys[i]), "mkey_pack");
    }
    DEMO_CHECK(uct_md_mem_reg(ctx->ex.md, bounce, n * n * sizeof(double),
                              UCT_MD_MEM_ACCESS_ALL, &bounce_memh), "mem_reg");
    DEMO_CHECK(uct_md_mkey_pack(ctx->ex.md, bounce_memh, rkeys[3]), "mkey_pack");
    for (i = 0; i < 4; ++i) {
        demo_send(ctx, rkeys[i], ctx->ex.rkey_size);
    }
    {
        uint64_t addr = (uintptr_t)bounce;
        demo_send(ctx, &addr, sizeof(addr));
    }

    for (;;) {
        demo_recv(ctx, &cmd, sizeof(cmd));
        ok = 1;
        switch (cmd.cmd) {
        case CMD_UNPACK:
            DEMO_CHECK(umr_layout_unpack(faces[cmd.face].layout, 1,
                                             grid + faces[cmd.face].offset,
                                             bounce), "unpack");
            break;
        case CMD_VERIFY:
            /* The face holds the initiator's values; every other byte
             * still holds the guard. */
            memset(expect, DEMO_GUARD, grid_bytes);
            DEMO_CHECK(umr_layout_pack(faces[cmd.face].layout, 1,
                                           src + faces[cmd.face].offset,
                                           face_buf), "pack");
            DEMO_CHECK(umr_layout_unpack(faces[cmd.face].layout, 1,
                                             expect + faces[cmd.face].offset,
                                             face_buf), "unpack");
            ok = !memcmp(grid, expect, grid_bytes);
            break;
        case CMD_RESET:
            memset(grid, DEMO_GUARD, grid_bytes);
            break;
        }
        demo_send(ctx, &ok, sizeof(ok));
        if (cmd.cmd == CMD_QUIT) {
            break;
        }
    }

    for (i = 0; i < 3; ++i) {
        uct_md_mem_dereg(ctx->ex.md, memh[i]);
    }
    uct_md_mem_dereg(ctx->ex.md, bounce_memh);
    free(grid); free(bounce); free(expect); free(face_buf); free(src);
}

static int demo_command(demo_ctx_t *ctx, int cmd, int face)
{
    demo_cmd_t c = { cmd, face };
    int ok;

    demo_send(ctx, &c, sizeof(c));
    demo_recv(ctx, &ok, sizeof(ok));
    return ok;
}

static int demo_initiator(demo_ctx_t *ctx, size_t n, const demo_face_t *faces,
                          int iters)
{
    char *grid = demo_initiator_grid(n), *bounce = malloc(n * n * sizeof(double));
    char rkey_buf[DEMO_MAX_RKEY];
    uct_rkey_bundle_t rkeys[4];
    uct_mem_h grid_memh, bounce_memh;
    uint64_t remote_bounce;
    uct_umr_ep_stats_t st0, st1;
    int f, it, failures = 0;

    /* The grid is registered once, as plain memory: each face is a layout
     * over it, turned into a UMR key by the endpoint and cached there. */
    DEMO_CHECK(uct_md_mem_reg(ctx->ex.md, grid, n * n * n * sizeof(double),
                              UCT_MD_MEM_ACCESS_ALL, &grid_memh), "mem_reg");
    DEMO_CHECK(uct_md_mem_reg(ctx->ex.md, bounce, n * n * sizeof(double),
                              UCT_MD_MEM_ACCESS_ALL, &bounce_memh), "mem_reg");
    for (f = 0; f < 4; ++f) {
        demo_recv(ctx, rkey_buf, sizeof(rkey_buf));
        DEMO_CHECK(uct_rkey_unpack(ctx->ex.component, rkey_buf, &rkeys[f]),
                   "uct_rkey_unpack");
    }
    demo_recv(ctx, &remote_bounce, sizeof(remote_bounce));

    for (f = 0; f < 3; ++f) {
        double t_zcopy, t_pack;
        uct_iov_t iov;
        ucs_time_t t0;
        int ok_z, ok_p;

        /* zero-copy: local layout (cached key) -> remote layout key */
        uct_umr_ep_get_stats(ctx->ex.ep, &st0);
        iov = (uct_iov_t){ .buffer = grid + faces[f].offset,
                           .memh = grid_memh };
        t0 = ucs_get_time();
        for (it = 0; it < iters; ++it) {
            DEMO_CHECK(umr_example_put_wait(&ctx->ex, &iov, faces[f].layout, 0,
                                            rkeys[f].rkey), ctx->ex.error);
            demo_command(ctx, CMD_DONE, f);
        }
        t_zcopy = ucs_time_to_usec(ucs_get_time() - t0) / iters;
        uct_umr_ep_get_stats(ctx->ex.ep, &st1);
        ok_z = demo_command(ctx, CMD_VERIFY, f);
        demo_command(ctx, CMD_RESET, f);

        /* pack: CPU pack, contiguous put, peer unpacks */
        iov = (uct_iov_t){ .buffer = bounce, .length = faces[f].size,
                           .memh = bounce_memh, .count = 1 };
        t0 = ucs_get_time();
        for (it = 0; it < iters; ++it) {
            DEMO_CHECK(umr_layout_pack(faces[f].layout, 1,
                                           grid + faces[f].offset, bounce),
                       "pack");
            DEMO_CHECK(umr_example_put_wait(&ctx->ex, &iov, NULL, remote_bounce,
                                            rkeys[3].rkey), ctx->ex.error);
            demo_command(ctx, CMD_UNPACK, f);
        }
        t_pack = ucs_time_to_usec(ucs_get_time() - t0) / iters;
        ok_p = demo_command(ctx, CMD_VERIFY, f);
        demo_command(ctx, CMD_RESET, f);

        printf("| %4zu^3 | %-15s | %8zu | %10.1f | %10.1f | %6.2fx | %-9s | %4llu/%-4llu | %-5s |\n",
               n, faces[f].name, faces[f].size, t_zcopy, t_pack,
               t_pack / t_zcopy,
               (st1.pack_fallbacks > st0.pack_fallbacks) ? "pack" : "UMR",
               (unsigned long long)(st1.cache_hits - st0.cache_hits),
               (unsigned long long)(st1.cache_misses - st0.cache_misses),
               (ok_z && ok_p) ? "ok" : "WRONG");
        failures += !ok_z + !ok_p;
    }

    demo_command(ctx, CMD_QUIT, 0);
    for (f = 0; f < 4; ++f) {
        uct_rkey_release(ctx->ex.component, &rkeys[f]);
    }
    uct_md_mem_dereg(ctx->ex.md, grid_memh);
    uct_md_mem_dereg(ctx->ex.md, bounce_memh);
    free(grid); free(bounce);
    return failures;
}

static int demo_run(int is_target, int sock, size_t n, int iters,
                    const char *dev)
{
    demo_ctx_t ctx_s = { .sock = sock, .is_target = is_target }, *ctx = &ctx_s;
    demo_face_t faces[3];
    int failures = 0, f;

    DEMO_CHECK(umr_example_open(&ctx->ex, dev), ctx->ex.error);
    DEMO_CHECK(umr_example_connect(&ctx->ex, demo_exchange, ctx),
               ctx->ex.error);
    demo_make_faces(ctx, n, faces);
    if (is_target) {
        demo_target(ctx, n, faces);
    } else {
        failures = demo_initiator(ctx, n, faces, iters);
    }
    for (f = 0; f < 3; ++f) {
        umr_layout_free(faces[f].layout);
    }
    umr_example_close(&ctx->ex);
    return failures;
}

int main(int argc, char **argv)
{
    size_t sizes[8] = { 32, 128 }, num_sizes = 2, s;
    const char *dev = "sw";
    int iters = 200, c, sv[2], status, failures = 0;
    char *tok, *list;
    pid_t pid;

    while ((c = getopt(argc, argv, "n:i:d:h")) != -1) {
        switch (c) {
        case 'n':
            num_sizes = 0;
            list = strdup(optarg);
            for (tok = strtok(list, ","); tok && num_sizes < 8;
                 tok = strtok(NULL, ",")) {
                sizes[num_sizes++] = strtoul(tok, NULL, 0);
            }
            free(list);
            break;
        case 'i': iters = atoi(optarg); break;
        case 'd': dev = optarg; break;
        default:
            fprintf(stderr, "usage: %s [-n N[,N...]] [-i iterations] [-d device]\n",
                    argv[0]);
            return c == 'h' ? 0 : 2;
        }
    }
    for (s = 0; s < num_sizes; ++s) {
        if (sizes[s] < 4 || sizes[s] > 1024 || iters < 1) {
            fprintf(stderr, "halo3d: grid edge must be 4..1024 and iterations >= 1\n");
            return 2;
        }
    }
    setenv("UCX_MLX5_UMR_ENGINE", getenv("UCX_MLX5_UMR_ENGINE") ?: "sw", 1);

    printf("halo3d: faces of an N^3 grid of doubles to a peer process, %d iterations, "
           "device '%s', engine %s\n", iters, dev, getenv("UCX_MLX5_UMR_ENGINE"));
    printf("Times are per face per iteration, including one notification round trip in both modes.\n");
    if (!strcmp(getenv("UCX_MLX5_UMR_ENGINE"), "sw")) {
        printf("sw engine: data moves by cross-memory attach; these are NOT NIC figures.\n");
    }
    printf("\n| grid   | face            | bytes    | zcopy [us] | pack [us]  | pack/zc | data path | hit/miss  | check |\n");
    printf("|--------|-----------------|----------|------------|------------|---------|-----------|-----------|-------|\n");
    fflush(stdout);

    for (s = 0; s < num_sizes; ++s) {
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
            perror("socketpair");
            return 1;
        }
        pid = fork();
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        if (pid == 0) {
            close(sv[0]);
            _exit(demo_run(1, sv[1], sizes[s], iters, dev) ? 1 : 0);
        }
        close(sv[1]);
        failures += demo_run(0, sv[0], sizes[s], iters, dev);
        close(sv[0]);
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            fprintf(stderr, "halo3d: target process failed (status 0x%x)\n", status);
            failures++;
        }
        fflush(stdout);
    }

    printf("\n%s\n", failures ? "halo3d: FAILED: some faces arrived wrong" :
                                "halo3d: all faces verified byte for byte");
    return failures ? 1 : 0;
}
