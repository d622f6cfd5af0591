/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: its log stream and the components' parameters (see
 * common_umr.h).
 */
#include "common_umr.h"

#include <stdio.h>

mca_common_umr_t mca_common_umr = {
    .output = -1,
    .who    = "umr",
};

void mca_common_umr_init(int output, const char *who)
{
    if (mca_common_umr.output < 0) {
        mca_common_umr.output = output;
        mca_common_umr.who    = who;
    }
}

void mca_common_umr_param_enum(const mca_base_component_t *c, const char *name,
                               const mca_base_var_enum_value_t *values,
                               const char *help, int level, int *storage)
{
    mca_base_var_enum_t *e = NULL;
    char ename[160];

    snprintf(ename, sizeof(ename), "%s_%s_%s", c->mca_type_name,
             c->mca_component_name, name);
    (void)mca_base_var_enum_create(ename, values, &e);
    (void)mca_base_component_var_register(c, name, help, MCA_BASE_VAR_TYPE_INT,
                                          e, 0, 0,
                                          (mca_base_var_info_lvl_t)level,
                                          MCA_BASE_VAR_SCOPE_READONLY,
                                          storage);
    if (e != NULL) {
        OBJ_RELEASE(e);
    }
}
