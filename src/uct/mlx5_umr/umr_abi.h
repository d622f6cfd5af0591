/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr ABI guard.
 *
 * The module derives from UCX internal classes whose layout is not part of
 * UCX's public ABI. It is built against UCX's source headers of one version;
 * loaded into another libuct whose classes differ it would corrupt memory.
 * So before registering anything the module compares the sizes it was
 * compiled with against the `<class>_class.size` the running libuct exports,
 * and the UCX version (when libucp is loaded and can tell it).
 */
#ifndef UMR_ABI_H_
#define UMR_ABI_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct umr_abi_class {
    const char *name;           /* e.g. "uct_base_iface_t" */
    size_t     compiled_size;   /* sizeof() at build time */
    size_t     running_size;    /* _class.size of the running library */
} umr_abi_class_t;

/* The classes the module derives from, terminated by name == NULL. */
const umr_abi_class_t *uct_mlx5_umr_abi_classes(void);

/* UCX version the module was built for, e.g. "1.13.1". */
const char *uct_mlx5_umr_abi_build_version(void);

/* Version of the UCX running in this process, or NULL if it cannot tell. */
const char *uct_mlx5_umr_abi_running_version(void);

/**
 * Returns 1 if the running UCX matches the build; otherwise logs one error
 * line naming the mismatch and returns 0. The module registers nothing then.
 */
int uct_mlx5_umr_abi_check(void);

#ifdef __cplusplus
}
#endif

#endif
