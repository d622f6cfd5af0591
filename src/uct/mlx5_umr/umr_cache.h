/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: per-endpoint cache of local UMR keys.
 *
 * A local iov with more entries than the NIC takes SGEs becomes one UMR
 * list key configured on the endpoint's own QP (the next WR on that QP is
 * fenced behind the UMR, so no wait is needed). Applications send the same
 * iov every iteration, so keys are cached, identified by the exact
 * descriptor list, or, for a local layout, by (memory handle, layout hash,
 * base, count) and the layout itself (a hash match alone never aliases two
 * layouts):
 *
 *   hash:  khash set of entries, keyed by (identity blob, layout)
 *   idle:  [most recently released] <-> entry <-> ... <-> [least recent]
 *   busy:  entries with operations in flight (never evicted)
 *   entry: hash, identity blob, memory handle ids, indirect keys
 *          (children..., top), in-flight count
 *
 * Lookup, release and eviction are O(1): a hit moves the entry to the busy
 * list, the release of its last operation moves it to the head of the idle
 * list, and eviction takes the idle tail. Bounded: at max_entries the least
 * recently used idle entry is evicted and its keys go back to the md pool;
 * the md also asks every cache to give up idle keys when its pool runs dry.
 * A mem_dereg of any memory handle an entry uses drops the entry (the md
 * calls the listener).
 */
#ifndef UCT_MLX5_UMR_CACHE_H_
#define UCT_MLX5_UMR_CACHE_H_

#include "umr_md.h"

#include <ucs/datastruct/khash.h>


typedef struct uct_mlx5_umr_cache_entry {
    ucs_list_link_t     list;        /* in cache->idle or cache->busy */
    uint64_t            hash;
    size_t              blob_len;
    const void          *blob;       /* identity */
    const umr_layout_t *layout;  /* identity too, when set (own copy) */
    unsigned            num_memhs;
    uint64_t            *memh_ids;
    unsigned            num_mkeys;
    uct_mlx5_umr_mkey_t **mkeys;     /* top key last */
    uint32_t            lkey;        /* top key, valid once configured */
    uint64_t            length;
    unsigned            inflight;    /* operations using the key */
    int                 stale;       /* out of the cache, freed when idle */
} uct_mlx5_umr_cache_entry_t;


khint32_t uct_mlx5_umr_cache_entry_hash(const uct_mlx5_umr_cache_entry_t *e);
int uct_mlx5_umr_cache_entry_equal(const uct_mlx5_umr_cache_entry_t *a,
                                   const uct_mlx5_umr_cache_entry_t *b);

KHASH_TYPE(uct_mlx5_umr_cache, uct_mlx5_umr_cache_entry_t*, char);

#if UMR_TEST_HOOKS
/* Entry comparisons made so far by all key caches of the process: the
 * test variant's only (configure.ac: UMR_TEST_HOOKS). */
unsigned long uct_mlx5_umr_cache_compares(void);
#endif


typedef struct uct_mlx5_umr_cache {
    uct_mlx5_umr_md_listener_t listener;
    uct_mlx5_umr_md_t          *md;
    khash_t(uct_mlx5_umr_cache) hash;
    ucs_list_link_t            idle;     /* LRU: head = most recent */
    ucs_list_link_t            busy;
    unsigned                   num_entries;
    unsigned                   max_entries;
    uct_umr_ep_stats_t         *stats;
} uct_mlx5_umr_cache_t;


void uct_mlx5_umr_cache_init(uct_mlx5_umr_cache_t *cache,
                             uct_mlx5_umr_md_t *md, unsigned max_entries,
                             uct_umr_ep_stats_t *stats);
void uct_mlx5_umr_cache_cleanup(uct_mlx5_umr_cache_t *cache);

/* Hit: the entry (one more operation in flight), else NULL. */
uct_mlx5_umr_cache_entry_t *
uct_mlx5_umr_cache_lookup(uct_mlx5_umr_cache_t *cache, const void *blob,
                          size_t blob_len, const umr_layout_t *layout);

/*
 * Miss: a new entry with num_mkeys keys from the md pool, evicting the least
 * recent idle entry at the bound; one operation in flight. The caller
 * configures the keys and sets lkey/length. UCS_ERR_NO_RESOURCE while every
 * entry is in flight or the pool is empty (it clears as operations
 * complete); UCS_ERR_EXCEEDS_LIMIT when the pool, less the keys held by
 * layout registrations, can never hold num_mkeys keys.
 */
ucs_status_t
uct_mlx5_umr_cache_insert(uct_mlx5_umr_cache_t *cache, const void *blob,
                          size_t blob_len, const umr_layout_t *layout,
                          const uint64_t *memh_ids, unsigned num_memhs,
                          unsigned num_mkeys,
                          uct_mlx5_umr_cache_entry_t **entry_p);

/* Drop a just-inserted entry whose keys could not be configured. */
void uct_mlx5_umr_cache_remove(uct_mlx5_umr_cache_t *cache,
                               uct_mlx5_umr_cache_entry_t *entry);

/* An operation using the entry completed. */
void uct_mlx5_umr_cache_release(uct_mlx5_umr_cache_t *cache,
                                uct_mlx5_umr_cache_entry_t *entry);

#endif
