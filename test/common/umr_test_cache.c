/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Transport key caches driven directly (see umr_test_cache.h).
 */
#include "umr_config.h"

#include "umr_test_cache.h"

#include "umr_cache.h"
#include "umr_rkey_cache.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CPU time of this thread: a shared, loaded machine preempts the process,
 * and wall time would count the time it did not run. */
static double umr_test_cache_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Keep the fastest pass: interference only ever adds time. */
static void umr_test_cache_best(umr_test_cache_result_t *result, double ns,
                                unsigned n)
{
    if ((result->ns_per_lookup == 0) || (ns / n < result->ns_per_lookup)) {
        result->ns_per_lookup = ns / n;
    }
}

/* A scrambled visiting order (odd multiplier mod n is a permutation for
 * powers of 2; any n: a simple shuffle with a fixed seed). */
static unsigned *umr_test_cache_order(unsigned n, int random_order)
{
    unsigned *order = malloc(n * sizeof(*order));
    unsigned i, j, t;
    uint64_t x = 88172645463325252ull;

    if (order == NULL) {
        return NULL;
    }
    for (i = 0; i < n; ++i) {
        order[i] = i;
    }
    for (i = n; random_order && (i > 1); --i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        j        = (unsigned)(x % i);
        t        = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    return order;
}

/* The key caches' compare count: the test variant's (UMR_TEST_HOOKS), 0
 * in the benchmarks, which time the installed code. */
static unsigned long umr_test_cache_compares(void)
{
#if UMR_TEST_HOOKS
    return uct_mlx5_umr_cache_compares();
#else
    return 0;
#endif
}

ucs_status_t umr_test_cache_run(uct_md_h uct_md, unsigned n, unsigned rounds,
                                int random_order,
                                umr_test_cache_result_t *result)
{
    uct_mlx5_umr_md_t *md = uct_mlx5_umr_md_from_handle(uct_md);
    uct_mlx5_umr_cache_entry_t *entry;
    uct_mlx5_umr_cache_t cache;
    uct_umr_ep_stats_t stats;
    ucs_status_t status  = UCS_OK;
    unsigned long compares;
    uint64_t blob[4], id;
    unsigned *order;
    unsigned i, r;
    double t0;

    if ((md == NULL) || (n == 0) || (result == NULL)) {
        return UCS_ERR_INVALID_PARAM;
    }
    order = umr_test_cache_order(n, random_order);
    if (order == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    memset(&stats, 0, sizeof(stats));
    memset(result, 0, sizeof(*result));
    uct_mlx5_umr_cache_init(&cache, md, n, &stats);
    for (i = 0; i < n; ++i) {
        /* the shape of a layout key's identity: memh, layout, base, count */
        id      = i;
        blob[0] = i;
        blob[1] = 0x9e3779b97f4a7c15ull * (i + 1);
        blob[2] = 0x10000 + (uint64_t)i * 64;
        blob[3] = 1;
        status  = uct_mlx5_umr_cache_insert(&cache, blob, sizeof(blob), NULL,
                                            &id, 1, 1, &entry);
        if (status != UCS_OK) {
            goto out;
        }
        uct_mlx5_umr_cache_release(&cache, entry);
    }

    compares = umr_test_cache_compares();
    for (r = 0; r < rounds; ++r) {
        t0 = umr_test_cache_now();
        for (i = 0; i < n; ++i) {
            blob[0] = order[i];
            blob[1] = 0x9e3779b97f4a7c15ull * (order[i] + 1);
            blob[2] = 0x10000 + (uint64_t)order[i] * 64;
            blob[3] = 1;
            entry   = uct_mlx5_umr_cache_lookup(&cache, blob, sizeof(blob),
                                                NULL);
            ++result->lookups;
            if (entry != NULL) {
                ++result->hits;
                uct_mlx5_umr_cache_release(&cache, entry);
            }
        }
        umr_test_cache_best(result, umr_test_cache_now() - t0, n);
    }
    result->compares_per_lookup = (double)(umr_test_cache_compares() -
                                           compares) /
                                  (double)ucs_max(result->lookups, 1);
out:
    uct_mlx5_umr_cache_cleanup(&cache);
    free(order);
    return status;
}

ucs_status_t umr_test_rkey_cache_run(unsigned n, unsigned rounds,
                                     int random_order,
                                     umr_test_cache_result_t *result)
{
    uct_mlx5_umr_packed_rkey_t *packed;
    uct_mlx5_umr_rkey_cache_t rcache;
    uct_umr_ep_stats_t stats;
    ucs_status_t status = UCS_OK;
    uct_rkey_t rkey;
    unsigned *order;
    unsigned i, r;
    double t0;

    if ((n == 0) || (result == NULL)) {
        return UCS_ERR_INVALID_PARAM;
    }
    order  = umr_test_cache_order(n, random_order);
    packed = calloc(n, sizeof(*packed));
    if ((order == NULL) || (packed == NULL)) {
        free(order);
        free(packed);
        return UCS_ERR_NO_MEMORY;
    }

    memset(&stats, 0, sizeof(stats));
    memset(result, 0, sizeof(*result));
    uct_mlx5_umr_rkey_cache_init(&rcache, n, &stats);
    for (i = 0; i < n; ++i) {
        packed[i].magic  = UCT_MLX5_UMR_RKEY_MAGIC;
        packed[i].flags  = UCT_MLX5_UMR_RKEY_FLAG_ZERO_BASED;
        packed[i].rkey   = (i + 1) << 8;
        packed[i].length = 4096;
        status = uct_mlx5_umr_rkey_cache_get(&rcache, &packed[i], &rkey);
        if ((status != UCS_OK) ||
            ((status = uct_mlx5_umr_rkey_cache_put(&rcache, rkey)) != UCS_OK)) {
            goto out;
        }
    }

    for (r = 0; r < rounds; ++r) {
        t0 = umr_test_cache_now();
        for (i = 0; i < n; ++i) {
            status = uct_mlx5_umr_rkey_cache_get(&rcache, &packed[order[i]],
                                                 &rkey);
            if (status != UCS_OK) {
                goto out;
            }
            ++result->lookups;
            status = uct_mlx5_umr_rkey_cache_put(&rcache, rkey);
            if (status != UCS_OK) {
                goto out;
            }
        }
        umr_test_cache_best(result, umr_test_cache_now() - t0, n);
    }
    result->hits          = stats.rkey_hits;
out:
    uct_mlx5_umr_rkey_cache_cleanup(&rcache);
    free(order);
    free(packed);
    return status;
}
