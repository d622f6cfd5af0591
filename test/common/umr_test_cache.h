/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Transport key caches driven directly (tests and benchmarks): fill a cache
 * of an mlx5_umr md with n entries, look them up, and report what it cost.
 */
#ifndef UMR_TEST_CACHE_H_
#define UMR_TEST_CACHE_H_

#include <uct/api/uct.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct umr_test_cache_result {
    double   compares_per_lookup; /* identity comparisons per lookup (the
                                     test variant, UMR_TEST_HOOKS; else
                                     0: not measured) */
    double   ns_per_lookup;       /* lookup + release, CPU time of the
                                     fastest pass (bench) */
    uint64_t hits;                /* lookups that found their entry */
    uint64_t lookups;
} umr_test_cache_result_t;

/* Local key cache of md (needs UCX_MLX5_UMR_MKEY_POOL_SIZE >= n): n entries
 * of one key each, then `rounds` passes of n lookups + releases in a
 * scrambled order. */
ucs_status_t umr_test_cache_run(uct_md_h md, unsigned n, unsigned rounds,
                                int random_order,
                                umr_test_cache_result_t *result);

/* Remote key cache: n packed keys unpacked (misses), then `rounds` passes of
 * n unpack + release hits. compares_per_lookup is not measured (0). */
ucs_status_t umr_test_rkey_cache_run(unsigned n, unsigned rounds,
                                 int random_order,
                                 umr_test_cache_result_t *result);

#ifdef __cplusplus
}
#endif

#endif
