/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: per-endpoint cache of local UMR keys (see umr_cache.h).
 */
#include "umr_config.h"

#include "umr_cache.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <inttypes.h>
#include <string.h>


khint32_t uct_mlx5_umr_cache_entry_hash(const uct_mlx5_umr_cache_entry_t *e)
{
    return (khint32_t)(e->hash ^ (e->hash >> 32));
}

#if UMR_TEST_HOOKS
/* Identity comparisons made by lookups and inserts, all caches of the
 * process: what a test counts to show that a lookup compares O(1) entries
 * whatever the number cached (a list scan compared up to all of them). */
static unsigned long uct_mlx5_umr_cache_num_compares;

unsigned long uct_mlx5_umr_cache_compares(void)
{
    return uct_mlx5_umr_cache_num_compares;
}

#  define UCT_MLX5_UMR_CACHE_COUNT_COMPARE() (++uct_mlx5_umr_cache_num_compares)
#else
#  define UCT_MLX5_UMR_CACHE_COUNT_COMPARE()
#endif

int uct_mlx5_umr_cache_entry_equal(const uct_mlx5_umr_cache_entry_t *a,
                                   const uct_mlx5_umr_cache_entry_t *b)
{
    UCT_MLX5_UMR_CACHE_COUNT_COMPARE();
    return (a->hash == b->hash) && (a->blob_len == b->blob_len) &&
           !memcmp(a->blob, b->blob, a->blob_len) &&
           ((a->layout == NULL) == (b->layout == NULL)) &&
           ((a->layout == NULL) || umr_layout_equal(a->layout, b->layout));
}

KHASH_IMPL(uct_mlx5_umr_cache, uct_mlx5_umr_cache_entry_t*, char, 0,
           uct_mlx5_umr_cache_entry_hash, uct_mlx5_umr_cache_entry_equal);


static void uct_mlx5_umr_cache_entry_free(uct_mlx5_umr_cache_t *cache,
                                          uct_mlx5_umr_cache_entry_t *entry)
{
    unsigned i;

    for (i = 0; i < entry->num_mkeys; ++i) {
        if (entry->mkeys[i] != NULL) {
            uct_mlx5_umr_md_mkey_put(cache->md, entry->mkeys[i]);
        }
    }
    if (entry->layout != NULL) {
        umr_layout_free((umr_layout_t*)entry->layout);
    }
    ucs_free(entry);
}

/* Take the entry out of the cache; free it now or when its ops complete. */
static void uct_mlx5_umr_cache_unlink(uct_mlx5_umr_cache_t *cache,
                                      uct_mlx5_umr_cache_entry_t *entry)
{
    khiter_t it = kh_get(uct_mlx5_umr_cache, &cache->hash, entry);

    ucs_assert(it != kh_end(&cache->hash));
    kh_del(uct_mlx5_umr_cache, &cache->hash, it);
    ucs_list_del(&entry->list);
    --cache->num_entries;
    cache->stats->cache_entries = cache->num_entries;
    if (entry->inflight == 0) {
        uct_mlx5_umr_cache_entry_free(cache, entry);
    } else {
        entry->stale = 1;
    }
}

/* Evict the least recently used idle entry: O(1). */
static int uct_mlx5_umr_cache_evict(uct_mlx5_umr_cache_t *cache)
{
    if (ucs_list_is_empty(&cache->idle)) {
        return 0;
    }

    uct_mlx5_umr_cache_unlink(cache, ucs_list_tail(&cache->idle,
                                                   uct_mlx5_umr_cache_entry_t,
                                                   list));
    ++cache->stats->cache_evictions;
    return 1;
}

static int uct_mlx5_umr_cache_evict_idle(uct_mlx5_umr_md_listener_t *listener)
{
    return uct_mlx5_umr_cache_evict(ucs_container_of(listener,
                                                     uct_mlx5_umr_cache_t,
                                                     listener));
}

static void
uct_mlx5_umr_cache_drop_memh(uct_mlx5_umr_cache_t *cache, ucs_list_link_t *list,
                             uint64_t memh_id)
{
    uct_mlx5_umr_cache_entry_t *entry, *tmp;
    unsigned i;

    ucs_list_for_each_safe(entry, tmp, list, list) {
        for (i = 0; i < entry->num_memhs; ++i) {
            if (entry->memh_ids[i] == memh_id) {
                if (entry->inflight != 0) {
                    ucs_warn("mlx5_umr: memory deregistered while an "
                             "operation using it is in flight");
                }
                uct_mlx5_umr_cache_unlink(cache, entry);
                ++cache->stats->cache_invalidations;
                break;
            }
        }
    }
}

static void uct_mlx5_umr_cache_memh_dereg(uct_mlx5_umr_md_listener_t *listener,
                                          const uct_mlx5_umr_memh_t *memh)
{
    uct_mlx5_umr_cache_t *cache = ucs_container_of(listener,
                                                   uct_mlx5_umr_cache_t,
                                                   listener);

    /* deregistration is not on the data path: a scan is fine */
    uct_mlx5_umr_cache_drop_memh(cache, &cache->idle, memh->id);
    uct_mlx5_umr_cache_drop_memh(cache, &cache->busy, memh->id);
}

void uct_mlx5_umr_cache_init(uct_mlx5_umr_cache_t *cache,
                             uct_mlx5_umr_md_t *md, unsigned max_entries,
                             uct_umr_ep_stats_t *stats)
{
    cache->md                  = md;
    cache->max_entries         = max_entries;
    cache->num_entries         = 0;
    cache->stats               = stats;
    cache->listener.memh_dereg = uct_mlx5_umr_cache_memh_dereg;
    cache->listener.evict_idle = uct_mlx5_umr_cache_evict_idle;
    kh_init_inplace(uct_mlx5_umr_cache, &cache->hash);
    ucs_list_head_init(&cache->idle);
    ucs_list_head_init(&cache->busy);
    uct_mlx5_umr_md_listener_add(md, &cache->listener);
}

void uct_mlx5_umr_cache_cleanup(uct_mlx5_umr_cache_t *cache)
{
    uct_mlx5_umr_cache_entry_t *entry, *tmp;

    ucs_list_splice_tail(&cache->idle, &cache->busy);
    ucs_list_for_each_safe(entry, tmp, &cache->idle, list) {
        ucs_list_del(&entry->list);
        uct_mlx5_umr_cache_entry_free(cache, entry);
    }
    kh_destroy_inplace(uct_mlx5_umr_cache, &cache->hash);
    cache->num_entries = 0;
    uct_mlx5_umr_md_listener_remove(cache->md, &cache->listener);
}

uct_mlx5_umr_cache_entry_t *
uct_mlx5_umr_cache_lookup(uct_mlx5_umr_cache_t *cache, const void *blob,
                          size_t blob_len, const umr_layout_t *layout)
{
    uct_mlx5_umr_cache_entry_t probe, *entry;
    khiter_t it;

    probe.hash     = uct_mlx5_umr_hash(blob, blob_len);
    probe.blob     = blob;
    probe.blob_len = blob_len;
    probe.layout   = layout;
    it             = kh_get(uct_mlx5_umr_cache, &cache->hash, &probe);
    if (it == kh_end(&cache->hash)) {
        return NULL;
    }

    entry = kh_key(&cache->hash, it);
    if (entry->inflight++ == 0) {
        ucs_list_del(&entry->list);
        ucs_list_add_head(&cache->busy, &entry->list);
    }
    ++cache->stats->cache_hits;
    return entry;
}

ucs_status_t
uct_mlx5_umr_cache_insert(uct_mlx5_umr_cache_t *cache, const void *blob,
                          size_t blob_len, const umr_layout_t *layout,
                          const uint64_t *memh_ids, unsigned num_memhs,
                          unsigned num_mkeys,
                          uct_mlx5_umr_cache_entry_t **entry_p)
{
    uct_mlx5_umr_cache_entry_t *entry;
    umr_layout_t *layout_copy;
    ucs_status_t status;
    size_t size;
    unsigned i;
    int ret;

    status = uct_mlx5_umr_md_mkeys_check(cache->md, num_mkeys);
    if (status != UCS_OK) {
        return status;
    }

    while (cache->num_entries >= cache->max_entries) {
        if (!uct_mlx5_umr_cache_evict(cache)) {
            ++cache->stats->no_resource;
            return UCS_ERR_NO_RESOURCE;
        }
    }

    /* one allocation: entry, key pointers, memh ids, blob */
    size  = sizeof(*entry) + (num_mkeys * sizeof(*entry->mkeys)) +
            (num_memhs * sizeof(*memh_ids)) + blob_len;
    entry = ucs_calloc(1, size, "mlx5_umr cache entry");
    if (entry == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    entry->mkeys     = (void*)(entry + 1);
    entry->memh_ids  = (void*)(entry->mkeys + num_mkeys);
    entry->blob      = entry->memh_ids + num_memhs;
    entry->hash      = uct_mlx5_umr_hash(blob, blob_len);
    entry->blob_len  = blob_len;
    entry->num_memhs = num_memhs;
    entry->num_mkeys = num_mkeys;
    entry->inflight  = 1;
    memcpy(entry->memh_ids, memh_ids, num_memhs * sizeof(*memh_ids));
    memcpy((void*)entry->blob, blob, blob_len);
    if (layout != NULL) {
        status = umr_layout_dup(layout, &layout_copy);
        if (status != UCS_OK) {
            ucs_free(entry);
            return status;
        }
        entry->layout = layout_copy;
    }

    /* the md reclaims idle keys of every cache when its pool is dry */
    for (i = 0; i < num_mkeys; ++i) {
        status = uct_mlx5_umr_md_mkey_get(cache->md, &entry->mkeys[i]);
        if (status != UCS_OK) {
            if (status == UCS_ERR_NO_RESOURCE) {
                ++cache->stats->no_resource;
            }
            uct_mlx5_umr_cache_entry_free(cache, entry);
            return status;
        }
    }

    kh_put(uct_mlx5_umr_cache, &cache->hash, entry, &ret);
    if (ret == UCS_KH_PUT_FAILED) {
        uct_mlx5_umr_cache_entry_free(cache, entry);
        return UCS_ERR_NO_MEMORY;
    }
    ucs_assert(ret != UCS_KH_PUT_KEY_PRESENT); /* callers looked it up */

    ucs_list_add_head(&cache->busy, &entry->list);
    ++cache->num_entries;
    ++cache->stats->cache_misses;
    cache->stats->cache_entries = cache->num_entries;
    *entry_p = entry;
    return UCS_OK;
}

void uct_mlx5_umr_cache_remove(uct_mlx5_umr_cache_t *cache,
                               uct_mlx5_umr_cache_entry_t *entry)
{
    entry->inflight = 0;
    uct_mlx5_umr_cache_unlink(cache, entry);
}

void uct_mlx5_umr_cache_release(uct_mlx5_umr_cache_t *cache,
                                uct_mlx5_umr_cache_entry_t *entry)
{
    ucs_assert(entry->inflight > 0);
    if (--entry->inflight != 0) {
        return;
    }

    if (entry->stale) {
        uct_mlx5_umr_cache_entry_free(cache, entry);
    } else {
        ucs_list_del(&entry->list);
        ucs_list_add_head(&cache->idle, &entry->list);
    }
}
