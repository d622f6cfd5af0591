/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: the UCT component and its registration.
 *
 * Registration happens in a constructor, not through UCS_MODULE_INIT: a stock
 * libuct loads modules only from its compiled-in list, so this module is
 * normally LD_PRELOADed, and UCS_MODULE_INIT is not called for a preloaded
 * module. Nothing is registered unless the ABI guard accepts the running
 * UCX: our classes derive from internal UCX structs.
 */
#include "umr_config.h"

#include "umr_md.h"
#include "umr_iface.h"
#include "umr_abi.h"

#include <uct/base/uct_component.h>

#include <dlfcn.h>
#include <string.h>


uct_component_t uct_mlx5_umr_component = {
    .query_md_resources = uct_mlx5_umr_query_md_resources,
    .md_open            = uct_mlx5_umr_md_open,
    .cm_open            = UMR_UCS_STUB(uct_component_cm_open_func_t,
                                       ucs_empty_function_return_unsupported),
    .rkey_unpack        = uct_mlx5_umr_rkey_unpack,
    .rkey_ptr           = UMR_UCS_STUB(uct_component_rkey_ptr_func_t,
                                       ucs_empty_function_return_unsupported),
    .rkey_release       = uct_mlx5_umr_rkey_release,
#ifdef HAVE_UCT_COMPONENT_T_RKEY_COMPARE /* UCX 1.16 */
    .rkey_compare       = uct_mlx5_umr_rkey_compare,
#endif
    .name               = UCT_MLX5_UMR_NAME,
    .md_config          = {
        .name           = "mlx5_umr memory domain",
        .prefix         = UCT_MLX5_UMR_CONFIG_PREFIX,
        .table          = uct_mlx5_umr_md_config_table,
        .size           = sizeof(uct_mlx5_umr_md_config_t),
    },
    .cm_config          = UCS_CONFIG_EMPTY_GLOBAL_LIST_ENTRY,
    .tl_list            = UCT_COMPONENT_TL_LIST_INITIALIZER(&uct_mlx5_umr_component),
    .flags              = 0,
    .md_vfs_init        = UMR_UCS_STUB(uct_component_md_vfs_init_func_t,
                                       ucs_empty_function)
};

static int uct_mlx5_umr_registered;

/* Another copy of this module (a second file of it: an installed one beside
 * the one a program links, HPC-X's beside ours) registered the component
 * already. Its symbols interpose ours, so registering again would put the
 * first copy's entries on UCX's lists twice and make them cycles. */
static int uct_mlx5_umr_registered_elsewhere(void)
{
    uct_component_t *component;

    ucs_list_for_each(component, &uct_components_list, list) {
        if (!strcmp(component->name, UCT_MLX5_UMR_NAME)) {
            return 1;
        }
    }
    return 0;
}

UCS_STATIC_INIT {
    Dl_info self;

    if (uct_mlx5_umr_registered_elsewhere()) {
        ucs_debug("mlx5_umr: another copy of the module is registered "
                  "already: this copy (%s) stays out",
                  dladdr((void*)uct_mlx5_umr_registered_elsewhere, &self) ?
                  self.dli_fname : "?");
        return;
    }
    if (!uct_mlx5_umr_abi_check()) {
        return; /* the guard logged why */
    }

    uct_component_register(&uct_mlx5_umr_component);
    uct_tl_register(&uct_mlx5_umr_component, &uct_mlx5_umr_tl);
    uct_mlx5_umr_registered = 1;
}

UCS_STATIC_CLEANUP {
    if (!uct_mlx5_umr_registered) {
        return;
    }

    uct_tl_unregister(&uct_mlx5_umr_tl);
    uct_component_unregister(&uct_mlx5_umr_component);
    uct_mlx5_umr_registered = 0;
}
