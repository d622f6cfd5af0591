/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/*
 * test_verbs_model_preload.sh: what an ordinary verbs caller sees with the
 * model preloaded. Prints "devices N NAME..." of ibv_get_device_list, and,
 * for each, whether mlx5dv_open_device gives a context whose port 1 is
 * active ("open NAME lid L state S"). Exit 0 unless a call crashed.
 */
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#include <stdio.h>

int main(void)
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
