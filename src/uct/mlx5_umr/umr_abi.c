/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr ABI guard: see umr_abi.h.
 */
#include "umr_config.h"
#include "umr_abi.h"

#include <uct/base/uct_iface.h>
#include <ucs/debug/log.h>

#include <dlfcn.h>
#include <string.h>

/* Tests build a copy of this file with a non-zero skew to prove that the
 * guard refuses a library whose class sizes differ from the build. */
#ifndef UMR_ABI_TEST_SKEW
#  define UMR_ABI_TEST_SKEW 0
#endif

#ifndef UMR_UCX_BUILD_VERSION
#  error "UMR_UCX_BUILD_VERSION must come from configure"
#endif

/* 1.13 headers declare no uct_iface_t_class, but libuct exports it. */
extern ucs_class_t uct_iface_t_class;

#define UMR_ABI_CLASS(_type) \
    { #_type, sizeof(_type) + UMR_ABI_TEST_SKEW, 0 }

const umr_abi_class_t *uct_mlx5_umr_abi_classes(void)
{
    static umr_abi_class_t classes[] = {
        UMR_ABI_CLASS(uct_iface_t),
        UMR_ABI_CLASS(uct_ep_t),
        UMR_ABI_CLASS(uct_base_iface_t),
        UMR_ABI_CLASS(uct_base_ep_t),
        { NULL, 0, 0 }
    };

    /* Read at call time: the running library's values, not the headers'. */
    classes[0].running_size = uct_iface_t_class.size;
    classes[1].running_size = uct_ep_t_class.size;
    classes[2].running_size = uct_base_iface_t_class.size;
    classes[3].running_size = uct_base_ep_t_class.size;
    return classes;
}

const char *uct_mlx5_umr_abi_build_version(void)
{
    return UMR_UCX_BUILD_VERSION;
}

const char *uct_mlx5_umr_abi_running_version(void)
{
    const char *(*get_version)(void);

    /* libuct/libucs export no version; libucp does, when it is loaded. */
    *(void**)&get_version = dlsym(RTLD_DEFAULT, "ucp_get_version_string");
    return (get_version != NULL) ? get_version() : NULL;
}

int uct_mlx5_umr_abi_check(void)
{
    const umr_abi_class_t *cls;
    const char *running;

    for (cls = uct_mlx5_umr_abi_classes(); cls->name != NULL; ++cls) {
        if (cls->compiled_size != cls->running_size) {
            ucs_error("mlx5_umr: not registering: built for UCX %s, but the "
                      "running libuct's %s is %zu bytes instead of %zu; "
                      "rebuild mlx5_umr against this UCX",
                      uct_mlx5_umr_abi_build_version(), cls->name,
                      cls->running_size, cls->compiled_size);
            return 0;
        }
    }

    running = uct_mlx5_umr_abi_running_version();
    if ((running != NULL) &&
        strcmp(running, uct_mlx5_umr_abi_build_version())) {
        ucs_error("mlx5_umr: not registering: built for UCX %s, but the "
                  "running UCX is %s; rebuild mlx5_umr against this UCX",
                  uct_mlx5_umr_abi_build_version(), running);
        return 0;
    }

    return 1;
}
