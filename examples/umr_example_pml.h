/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * The PML Open MPI selected, for the examples' and benchmarks' headers.
 *
 * No public API gives it, so it is read from Open MPI's selected component
 * structure. The prefix below mirrors mca_base_component_2_1_0_t of Open MPI
 * 4.x; the project and framework names are checked, so another layout or
 * another MPI gives "unknown", never garbage.
 */
#ifndef UMR_EXAMPLE_PML_H_
#define UMR_EXAMPLE_PML_H_

#include <dlfcn.h>
#include <string.h>

typedef struct umr_example_ompi_component {
    int  mca_version[3];
    char project_name[16];
    int  project_version[3];
    char type_name[32];
    int  type_version[3];
    char component_name[64];
} umr_example_ompi_component_t;

static inline const char *umr_example_pml_name(void)
{
    const umr_example_ompi_component_t *c =
        dlsym(RTLD_DEFAULT, "mca_pml_base_selected_component");

    if ((c == NULL) ||
        strncmp(c->project_name, "ompi", sizeof(c->project_name)) ||
        strncmp(c->type_name, "pml", sizeof(c->type_name)) ||
        (memchr(c->component_name, 0, sizeof(c->component_name)) == NULL)) {
        return "unknown";
    }
    return c->component_name;
}

#endif
