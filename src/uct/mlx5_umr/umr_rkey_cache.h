/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: per-endpoint cache of unpacked remote keys.
 *
 * An MPI layer receives its peers' packed layout keys again and again (every
 * halo iteration); unpacking through the endpoint returns the same unpacked
 * key for the same packed bytes without an allocation. Entries are reference
 * counted; idle ones are evicted least recently used beyond max_entries and
 * all are freed with the endpoint.
 *
 *   by_packed: khash, packed key bytes -> entry   (unpack: O(1))
 *   by_rkey:   khash, uct_rkey_t -> entry         (release: O(1), and only
 *                                                  keys handed out here)
 *   idle:      [most recently released] <-> ... <-> [least recent]
 *   busy:      entries in use (never evicted)
 */
#ifndef UCT_MLX5_UMR_RKEY_CACHE_H_
#define UCT_MLX5_UMR_RKEY_CACHE_H_

#include "umr_md.h"

#include <ucs/datastruct/khash.h>


typedef struct uct_mlx5_umr_rkey_cache_entry {
    ucs_list_link_t            list;    /* in cache->idle or cache->busy */
    uct_mlx5_umr_packed_rkey_t packed;
    uct_mlx5_umr_rkey_t        rkey;    /* what uct_rkey_t points to */
    unsigned                   refcount;
} uct_mlx5_umr_rkey_cache_entry_t;


khint32_t
uct_mlx5_umr_rkey_cache_packed_hash(const uct_mlx5_umr_packed_rkey_t *packed);
int uct_mlx5_umr_rkey_cache_packed_equal(const uct_mlx5_umr_packed_rkey_t *a,
                                         const uct_mlx5_umr_packed_rkey_t *b);

KHASH_TYPE(uct_mlx5_umr_rkey_cache_packed, const uct_mlx5_umr_packed_rkey_t*,
           uct_mlx5_umr_rkey_cache_entry_t*);
KHASH_TYPE(uct_mlx5_umr_rkey_cache_rkey, uint64_t,
           uct_mlx5_umr_rkey_cache_entry_t*);


typedef struct uct_mlx5_umr_rkey_cache {
    khash_t(uct_mlx5_umr_rkey_cache_packed) by_packed;
    khash_t(uct_mlx5_umr_rkey_cache_rkey)   by_rkey;
    ucs_list_link_t    idle;         /* LRU: head = most recently released */
    ucs_list_link_t    busy;
    unsigned           num_entries;
    unsigned           max_entries;
    uct_umr_ep_stats_t *stats;
} uct_mlx5_umr_rkey_cache_t;


void uct_mlx5_umr_rkey_cache_init(uct_mlx5_umr_rkey_cache_t *cache,
                                  unsigned max_entries,
                                  uct_umr_ep_stats_t *stats);
void uct_mlx5_umr_rkey_cache_cleanup(uct_mlx5_umr_rkey_cache_t *cache);

ucs_status_t uct_mlx5_umr_rkey_cache_get(uct_mlx5_umr_rkey_cache_t *cache,
                                         const void *rkey_buffer,
                                         uct_rkey_t *rkey_p);
ucs_status_t uct_mlx5_umr_rkey_cache_put(uct_mlx5_umr_rkey_cache_t *cache,
                                         uct_rkey_t rkey);

#endif
