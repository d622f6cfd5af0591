/**
 * mlx5_umr transport: per-endpoint cache of local UMR keys (see umr_cache.h).
 */
#include "umr_config.h"

#include "umr_cache.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <inttypes.h>
#include <string.h>


uint64_t uct_mlx5_umr_cache_hash(const void *blob, size_t len)
{
    const uint8_t *p = blob;
    uint64_t h       = 0xcbf29ce484222325ull; /* FNV-1a */
    size_t i;

    for (i = 0; i < len; ++i) {
        h = (h ^ p[i]) * 0x100000001b3ull;
    }
    return h;
}

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
        uct_umr_layout_free(entry->layout);
    }
    ucs_free(entry);
}

/* Take the entry out of the cache; free it now or when its ops complete. */
static void uct_mlx5_umr_cache_unlink(uct_mlx5_umr_cache_t *cache,
                                      uct_mlx5_umr_cache_entry_t *entry)
{
    ucs_list_del(&entry->list);
    --cache->num_entries;
    cache->stats->cache_entries = cache->num_entries;
    if (entry->inflight == 0) {
        uct_mlx5_umr_cache_entry_free(cache, entry);
    } else {
        entry->stale = 1;
    }
}

static void uct_mlx5_umr_cache_memh_dereg(uct_mlx5_umr_md_listener_t *listener,
                                          const uct_mlx5_umr_memh_t *memh)
{
    uct_mlx5_umr_cache_t *cache = ucs_container_of(listener,
                                                   uct_mlx5_umr_cache_t,
                                                   listener);
    uct_mlx5_umr_cache_entry_t *entry, *tmp;
    unsigned i;

    ucs_list_for_each_safe(entry, tmp, &cache->lru, list) {
        for (i = 0; i < entry->num_memhs; ++i) {
            if (entry->memh_ids[i] == memh->id) {
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

void uct_mlx5_umr_cache_init(uct_mlx5_umr_cache_t *cache,
                             uct_mlx5_umr_md_t *md, unsigned max_entries,
                             uct_umr_ep_stats_t *stats)
{
    cache->md                  = md;
    cache->max_entries         = max_entries;
    cache->num_entries         = 0;
    cache->stats               = stats;
    cache->listener.memh_dereg = uct_mlx5_umr_cache_memh_dereg;
    ucs_list_head_init(&cache->lru);
    uct_mlx5_umr_md_listener_add(md, &cache->listener);
}

void uct_mlx5_umr_cache_cleanup(uct_mlx5_umr_cache_t *cache)
{
    uct_mlx5_umr_cache_entry_t *entry, *tmp;

    ucs_list_for_each_safe(entry, tmp, &cache->lru, list) {
        ucs_list_del(&entry->list);
        uct_mlx5_umr_cache_entry_free(cache, entry);
    }
    cache->num_entries = 0;
    uct_mlx5_umr_md_listener_remove(cache->md, &cache->listener);
}

uct_mlx5_umr_cache_entry_t *
uct_mlx5_umr_cache_lookup(uct_mlx5_umr_cache_t *cache, uint64_t hash,
                          const void *blob, size_t blob_len,
                          const uct_umr_layout_t *layout)
{
    uct_mlx5_umr_cache_entry_t *entry;

    ucs_list_for_each(entry, &cache->lru, list) {
        if ((entry->hash == hash) && (entry->blob_len == blob_len) &&
            !memcmp(entry->blob, blob, blob_len) &&
            ((layout == NULL) ||
             ((entry->layout != NULL) &&
              uct_umr_layout_equal(entry->layout, layout)))) {
            ucs_list_del(&entry->list);
            ucs_list_add_head(&cache->lru, &entry->list);
            ++entry->inflight;
            ++cache->stats->cache_hits;
            return entry;
        }
    }

    return NULL;
}

static int uct_mlx5_umr_cache_evict(uct_mlx5_umr_cache_t *cache)
{
    uct_mlx5_umr_cache_entry_t *entry;

    /* from the least recently used end */
    for (entry = ucs_list_tail(&cache->lru, uct_mlx5_umr_cache_entry_t, list);
         &entry->list != &cache->lru;
         entry = ucs_list_prev(&entry->list, uct_mlx5_umr_cache_entry_t,
                               list)) {
        if (entry->inflight == 0) {
            uct_mlx5_umr_cache_unlink(cache, entry);
            ++cache->stats->cache_evictions;
            return 1;
        }
    }

    return 0;
}

ucs_status_t
uct_mlx5_umr_cache_insert(uct_mlx5_umr_cache_t *cache, uint64_t hash,
                          const void *blob, size_t blob_len,
                          const uct_umr_layout_t *layout,
                          const uint64_t *memh_ids, unsigned num_memhs,
                          unsigned num_mkeys,
                          uct_mlx5_umr_cache_entry_t **entry_p)
{
    uct_mlx5_umr_cache_entry_t *entry;
    ucs_status_t status;
    size_t size;
    unsigned i;

    while (cache->num_entries >= cache->max_entries) {
        if (!uct_mlx5_umr_cache_evict(cache)) {
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
    entry->blob      = (void*)(entry->memh_ids + num_memhs);
    entry->hash      = hash;
    entry->blob_len  = blob_len;
    entry->num_memhs = num_memhs;
    entry->num_mkeys = num_mkeys;
    entry->inflight  = 1;
    memcpy(entry->memh_ids, memh_ids, num_memhs * sizeof(*memh_ids));
    memcpy(entry->blob, blob, blob_len);
    if (layout != NULL) {
        status = uct_umr_layout_dup(layout, &entry->layout);
        if (status != UCS_OK) {
            ucs_free(entry);
            return status;
        }
    }

    for (i = 0; i < num_mkeys; ++i) {
        status = uct_mlx5_umr_md_mkey_get(cache->md, &entry->mkeys[i]);
        if ((status == UCS_ERR_NO_RESOURCE) &&
            uct_mlx5_umr_cache_evict(cache)) {
            --i; /* an evicted entry gave its keys back: retry */
            continue;
        }
        if (status != UCS_OK) {
            uct_mlx5_umr_cache_entry_free(cache, entry);
            return status;
        }
    }

    ucs_list_add_head(&cache->lru, &entry->list);
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
    if ((--entry->inflight == 0) && entry->stale) {
        uct_mlx5_umr_cache_entry_free(cache, entry);
    }
}
