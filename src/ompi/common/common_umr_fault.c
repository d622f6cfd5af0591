/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: the components' test faults (see common_umr_fault.h;
 * the test variant's only).
 */
#include "common_umr_fault.h"
#include "umr_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mca_common_umr_fault_register(const mca_base_component_t *c,
                                   mca_common_umr_fault_t *f,
                                   const char *what)
{
    char help[512];
    size_t used;
    int i;

    used = (size_t)snprintf(help, sizeof(help),
                            "Testing only: points that fail (");
    for (i = 0; (i < f->n) && (used < sizeof(help)); ++i) {
        used += (size_t)snprintf(help + used, sizeof(help) - used, "%s%s",
                                 (i > 0) ? ", " : "", f->names[i]);
    }
    if (used < sizeof(help)) {
        (void)snprintf(help + used, sizeof(help) - used,
                       "; comma-separated): %s", what);
    }
    f->c    = c;
    f->spec = "";
    /* the help is copied by the registration */
    mca_common_umr_param(c, "test_fault", help, MCA_BASE_VAR_TYPE_STRING,
                         OPAL_INFO_LVL_9, &f->spec);
}

void mca_common_umr_fault_init(mca_common_umr_fault_t *f)
{
    char why[256];

    if (umr_mpi_faults_parse(f->spec, f->names, f->n, &f->mask, why,
                             sizeof(why)) < 0) {
        opal_output(0, "%s_%s: %s_%s_test_fault: %s", f->c->mca_type_name,
                    f->c->mca_component_name, f->c->mca_type_name,
                    f->c->mca_component_name, why);
    }
}
