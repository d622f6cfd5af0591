/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr's test parameters, in its test variant only (configure.ac:
 * UMR_TEST_HOOKS; pml_umr_test.c is compiled into hooks/mca_pml_umr.la
 * alone: what is installed registers none of them, and the functions
 * below do nothing there). Three level-9 MCA parameters:
 *
 *   pml_umr_test_fault    points of the zero-copy path that fail
 *                         (pml_umr_fault.h)
 *   pml_umr_test_version  check the Open MPI release as if this one were
 *                         running (the tests of the version check)
 *   pml_umr_bench         the benchmarks may take pml/umr out of the call
 *                         path between messages
 *                         (mca_pml_umr_bench_interpose, bench_mpi_ddt's
 *                         "direct" rows)
 */
#ifndef MCA_PML_UMR_TEST_H_
#define MCA_PML_UMR_TEST_H_

#include "umr_config.h"

#include <ompi_config.h>
#include <opal/mca/mca.h>

#include <stddef.h>

#if UMR_TEST_HOOKS

/* Register the test parameters of component `c`. */
void mca_pml_umr_test_register(const mca_base_component_t *c);

/* Once interposing: parse the faults (and set norail). */
void mca_pml_umr_test_init(void);

/* The release to act as (pml_umr_test_version), or NULL: the running one. */
const char *mca_pml_umr_test_version(void);

#else

static inline void mca_pml_umr_test_register(const mca_base_component_t *c)
{
}

static inline void mca_pml_umr_test_init(void)
{
}

static inline const char *mca_pml_umr_test_version(void)
{
    return NULL;
}

#endif

#endif
