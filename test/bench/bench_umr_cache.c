/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Transport key caches: lookup + release time against the number of cached
 * entries, for the local UMR key cache (khash + LRU lists) and the remote
 * key cache. Both should stay flat from tens to tens of thousands of
 * entries; the growth left is the memory hierarchy (more entries, more cache
 * misses), not a scan. Single process, sw engine md (nothing is posted).
 *
 * usage: bench_umr_cache [-n max_entries] [-r rounds]
 */
#include "umr_config.h"

#include "umr_test_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uct_md_h bench_md_open(unsigned max_entries)
{
    uct_component_h *components, component = NULL;
    uct_component_attr_t attr;
    uct_md_config_t *config;
    unsigned i, num;
    char pool[32];
    uct_md_h md;

    /* one indirect key per entry */
    snprintf(pool, sizeof(pool), "%u", max_entries);
    setenv("UCX_MLX5_UMR_MKEY_POOL_SIZE", pool, 1);
    setenv("UCX_MLX5_UMR_ENGINE", "sw", 1);

    if (uct_query_components(&components, &num) != UCS_OK) {
        return NULL;
    }
    for (i = 0; i < num; ++i) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        if ((uct_component_query(components[i], &attr) == UCS_OK) &&
            !strcmp(attr.name, "mlx5_umr")) {
            component = components[i];
        }
    }
    if ((component == NULL) ||
        (uct_md_config_read(component, NULL, NULL, &config) != UCS_OK)) {
        uct_release_component_list(components);
        return NULL;
    }
    if (uct_md_open(component, "sw", config, &md) != UCS_OK) {
        md = NULL;
    }
    uct_config_release(config);
    uct_release_component_list(components);
    return md;
}

int main(int argc, char **argv)
{
    unsigned max_entries = 16384, rounds = 20, n;
    umr_test_cache_result_t l, r, ls, rs;
    uct_md_h md;
    int c;

    while ((c = getopt(argc, argv, "n:r:")) != -1) {
        switch (c) {
        case 'n':
            max_entries = strtoul(optarg, NULL, 0);
            break;
        case 'r':
            rounds = strtoul(optarg, NULL, 0);
            break;
        default:
            fprintf(stderr, "usage: %s [-n max_entries] [-r rounds]\n",
                    argv[0]);
            return 2;
        }
    }

    md = bench_md_open(max_entries);
    if (md == NULL) {
        fprintf(stderr, "could not open an mlx5_umr md on the sw engine\n");
        return 1;
    }

    printf("# lookup + release, ns of thread CPU time per operation, fastest "
           "of %u passes over\n# all entries, in random order and in "
           "insertion order (seq)\n", rounds);
    printf("%8s | %10s %10s | %10s %10s\n", "entries", "key [ns]",
           "key seq", "rkey [ns]", "rkey seq");
    for (n = 16; n <= max_entries; n *= 4) {
        if ((umr_test_cache_run(md, n, rounds, 1, &l) != UCS_OK) ||
            (umr_test_cache_run(md, n, rounds, 0, &ls) != UCS_OK) ||
            (umr_test_rkey_cache_run(n, rounds, 1, &r) != UCS_OK) ||
            (umr_test_rkey_cache_run(n, rounds, 0, &rs) != UCS_OK) ||
            (l.hits != l.lookups) || (r.hits != r.lookups) ||
            (ls.hits != ls.lookups) || (rs.hits != rs.lookups)) {
            fprintf(stderr, "run with %u entries failed\n", n);
            uct_md_close(md);
            return 1;
        }
        printf("%8u | %10.1f %10.1f | %10.1f %10.1f\n", n,
               l.ns_per_lookup, ls.ns_per_lookup,
               r.ns_per_lookup, rs.ns_per_lookup);
    }

    uct_md_close(md);
    return 0;
}
