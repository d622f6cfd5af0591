/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/*
 * test_verbs_model_preload.sh: what an ordinary verbs caller sees with the
 * model preloaded. Prints "devices N NAME..." of ibv_get_device_list, and,
 * for each, whether mlx5dv_open_device gives a context whose port 1 is
 * active ("open NAME lid L state S"). With the argument "reg", it then
 * registers memory the process may only read - a PROT_READ file mapping,
 * private and shared, and an anonymous buffer mprotect'ed to PROT_READ -
 * with write and with read access, one line each: "reg NAME WHAT write|read
 * ERRNO" (0: registered). Exit 0 unless a call crashed.
 */
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define REG_LEN 8192

/* REG_LEN bytes the process may only read: what = 0, 1: a file mapped
 * PROT_READ (MAP_PRIVATE, MAP_SHARED); 2: mprotect'ed anonymous memory */
static void *read_only_memory(int what)
{
    char path[] = "/tmp/model-client-XXXXXX", buf[REG_LEN];
    int fd;
    void *p;

    if (what == 2) {
        p = mmap(NULL, REG_LEN, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED) {
            memset(p, 7, REG_LEN);
            mprotect(p, REG_LEN, PROT_READ);
        }
        return (p == MAP_FAILED) ? NULL : p;
    }
    fd = mkstemp(path);
    if (fd < 0) {
        return NULL;
    }
    unlink(path);
    memset(buf, 7, sizeof(buf));
    p = (write(fd, buf, sizeof(buf)) == sizeof(buf)) ?
        mmap(NULL, REG_LEN, PROT_READ, what ? MAP_SHARED : MAP_PRIVATE, fd,
             0) : MAP_FAILED;
    close(fd);
    return (p == MAP_FAILED) ? NULL : p;
}

static void reg_read_only(struct ibv_context *ctx, const char *name)
{
    static const char *whats[] = {"file-private", "file-shared", "mprotect"};
    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    struct ibv_mr *mr;
    int what, w, access;
    void *mem;

    for (what = 0; (pd != NULL) && (what < 3); ++what) {
        mem = read_only_memory(what);
        for (w = 1; (mem != NULL) && (w >= 0); --w) {
            access = w ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                         IBV_ACCESS_REMOTE_READ : IBV_ACCESS_REMOTE_READ;
            errno  = 0;
            mr     = ibv_reg_mr(pd, mem, REG_LEN, access);
            printf("reg %s %s %s %d\n", name, whats[what], w ? "write" : "read",
                   (mr != NULL) ? 0 : errno);
            if (mr != NULL) {
                ibv_dereg_mr(mr);
            }
        }
        if (mem != NULL) {
            munmap(mem, REG_LEN);
        }
    }
    if (pd != NULL) {
        ibv_dealloc_pd(pd);
    }
}

int main(int argc, char **argv)
{
    struct mlx5dv_context_attr attr = { .flags = MLX5DV_CONTEXT_FLAGS_DEVX };
    struct ibv_device **list;
    struct ibv_port_attr port;
    struct ibv_context *ctx;
    int i, num = 0;

    list = ibv_get_device_list(&num);
    printf("devices %d", (list != NULL) ? num : -1);
    for (i = 0; (list != NULL) && (i < num); ++i) {
        printf(" %s", ibv_get_device_name(list[i]));
    }
    printf("\n");
    for (i = 0; (list != NULL) && (i < num); ++i) {
        if (!mlx5dv_is_supported(list[i])) {
            continue;
        }
        ctx = mlx5dv_open_device(list[i], &attr);
        if ((ctx != NULL) && (ibv_query_port(ctx, 1, &port) == 0)) {
            printf("open %s lid %u state %d\n", ibv_get_device_name(list[i]),
                   port.lid, port.state);
            if ((argc > 1) && !strcmp(argv[1], "reg")) {
                reg_read_only(ctx, ibv_get_device_name(list[i]));
            }
        }
        if (ctx != NULL) {
            ibv_close_device(ctx);
        }
    }
    if (list != NULL) {
        ibv_free_device_list(list);
    }
    return 0;
}
