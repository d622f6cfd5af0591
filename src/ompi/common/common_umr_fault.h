/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: the components' test faults. Test variant only
 * (configure.ac: UMR_TEST_HOOKS; common_umr_fault.c is compiled into
 * hooks/libmca_common_umr.la alone): what is installed has no test fault
 * parameter.
 */
#ifndef MCA_COMMON_UMR_FAULT_H_
#define MCA_COMMON_UMR_FAULT_H_

#include "common_umr.h"

BEGIN_C_DECLS

#if UMR_TEST_HOOKS

/* A component's test faults: the level-9 MCA parameter
 * <type>_<component>_test_fault names points of the component (`names`,
 * `n` of them, its own enum's order) that then fail; bit i of `mask` is set
 * when names[i] does (empty, the default: none). Each component defines
 * one, with its names (pml_umr_fault.h, osc_umr_fault.h). */
typedef struct mca_common_umr_fault {
    const char *const          *names;
    int                        n;
    unsigned                   mask;
    char                       *spec;   /* the parameter's value */
    const mca_base_component_t *c;      /* set by the registration */
} mca_common_umr_fault_t;

/* Register the parameter of component `c`; its help lists the names, then
 * `what` (what fails, what for). */
void mca_common_umr_fault_register(const mca_base_component_t *c,
                                   mca_common_umr_fault_t *f,
                                   const char *what);

/* Parse the parameter's value into f->mask: a value that names anything
 * else injects nothing and says so (one line naming the parameter and the
 * names it takes). */
void mca_common_umr_fault_init(mca_common_umr_fault_t *f);

/* Whether the component fails at `point` now (one load and a branch). */
static inline int mca_common_umr_fault_at(const mca_common_umr_fault_t *f,
                                          int point)
{
    return OPAL_UNLIKELY(f->mask & (1u << point));
}

#endif

END_C_DECLS

#endif
