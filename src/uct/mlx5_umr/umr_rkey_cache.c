/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: per-endpoint cache of unpacked remote keys
 * (see umr_rkey_cache.h).
 */
#include "umr_config.h"

#include "umr_rkey_cache.h"
#include "umr_lru.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <string.h>


khint32_t
uct_mlx5_umr_rkey_cache_packed_hash(const uct_mlx5_umr_packed_rkey_t *packed)
{
    uint64_t h = uct_mlx5_umr_hash(packed, sizeof(*packed));

    return (khint32_t)(h ^ (h >> 32));
}

int uct_mlx5_umr_rkey_cache_packed_equal(const uct_mlx5_umr_packed_rkey_t *a,
                                         const uct_mlx5_umr_packed_rkey_t *b)
{
    return !memcmp(a, b, sizeof(*a));
}

KHASH_IMPL(uct_mlx5_umr_rkey_cache_packed, const uct_mlx5_umr_packed_rkey_t*,
           uct_mlx5_umr_rkey_cache_entry_t*, 1,
           uct_mlx5_umr_rkey_cache_packed_hash,
           uct_mlx5_umr_rkey_cache_packed_equal);
KHASH_IMPL(uct_mlx5_umr_rkey_cache_rkey, uint64_t,
           uct_mlx5_umr_rkey_cache_entry_t*, 1, kh_int64_hash_func,
           kh_int64_hash_equal);


void uct_mlx5_umr_rkey_cache_init(uct_mlx5_umr_rkey_cache_t *cache,
                                  unsigned max_entries,
                                  uct_umr_ep_stats_t *stats)
{
    kh_init_inplace(uct_mlx5_umr_rkey_cache_packed, &cache->by_packed);
    kh_init_inplace(uct_mlx5_umr_rkey_cache_rkey, &cache->by_rkey);
    ucs_list_head_init(&cache->idle);
    ucs_list_head_init(&cache->busy);
    cache->num_entries = 0;
    cache->max_entries = max_entries;
    cache->stats       = stats;
}

void uct_mlx5_umr_rkey_cache_cleanup(uct_mlx5_umr_rkey_cache_t *cache)
{
    uct_mlx5_umr_rkey_cache_entry_t *entry, *tmp;

    ucs_list_for_each(entry, &cache->busy, list) {
        ucs_warn("mlx5_umr: remote key 0x%x still in use (%u) when its "
                 "endpoint is destroyed", entry->rkey.rkey, entry->refcount);
    }

    ucs_list_splice_tail(&cache->idle, &cache->busy);
    ucs_list_for_each_safe(entry, tmp, &cache->idle, list) {
        ucs_list_del(&entry->list);
        ucs_free(entry);
    }
    kh_destroy_inplace(uct_mlx5_umr_rkey_cache_packed, &cache->by_packed);
    kh_destroy_inplace(uct_mlx5_umr_rkey_cache_rkey, &cache->by_rkey);
    cache->num_entries = 0;
}

static void
uct_mlx5_umr_rkey_cache_remove(uct_mlx5_umr_rkey_cache_t *cache,
                               uct_mlx5_umr_rkey_cache_entry_t *entry)
{
    khiter_t it;

    it = kh_get(uct_mlx5_umr_rkey_cache_packed, &cache->by_packed,
                &entry->packed);
    kh_del(uct_mlx5_umr_rkey_cache_packed, &cache->by_packed, it);
    it = kh_get(uct_mlx5_umr_rkey_cache_rkey, &cache->by_rkey,
                (uintptr_t)&entry->rkey);
    kh_del(uct_mlx5_umr_rkey_cache_rkey, &cache->by_rkey, it);
    ucs_list_del(&entry->list);
    --cache->num_entries;
    ucs_free(entry);
}

/* Free idle entries from the least recent end down to the bound: O(1) each. */
static void uct_mlx5_umr_rkey_cache_trim(uct_mlx5_umr_rkey_cache_t *cache)
{
    while ((cache->num_entries > cache->max_entries) &&
           !ucs_list_is_empty(&cache->idle)) {
        uct_mlx5_umr_rkey_cache_remove(
                cache, ucs_list_tail(&cache->idle,
                                     uct_mlx5_umr_rkey_cache_entry_t, list));
    }
}

ucs_status_t uct_mlx5_umr_rkey_cache_get(uct_mlx5_umr_rkey_cache_t *cache,
                                         const void *rkey_buffer,
                                         uct_rkey_t *rkey_p)
{
    const uct_mlx5_umr_packed_rkey_t *packed = rkey_buffer;
    uct_mlx5_umr_rkey_cache_entry_t *entry;
    ucs_status_t status;
    khiter_t it;
    int ret;

    if (rkey_p == NULL) {
        ucs_error("mlx5_umr: ep rkey_unpack: rkey_p is NULL");
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_mlx5_umr_rkey_check(packed, "ep rkey_unpack");
    if (status != UCS_OK) {
        return status;
    }

    it = kh_get(uct_mlx5_umr_rkey_cache_packed, &cache->by_packed, packed);
    if (it != kh_end(&cache->by_packed)) {
        entry = kh_val(&cache->by_packed, it);
        uct_mlx5_umr_lru_hold(&cache->busy, &entry->list, &entry->refcount);
        ++cache->stats->rkey_hits;
        *rkey_p = (uintptr_t)&entry->rkey;
        return UCS_OK;
    }

    entry = ucs_malloc(sizeof(*entry), "mlx5_umr cache entry");
    if (entry == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    memcpy(&entry->packed, packed, sizeof(*packed));
    uct_mlx5_umr_rkey_init(&entry->rkey, packed);
    entry->refcount = 1;

    it = kh_put(uct_mlx5_umr_rkey_cache_packed, &cache->by_packed,
                &entry->packed, &ret);
    if (ret == UCS_KH_PUT_FAILED) {
        goto err_free;
    }
    kh_val(&cache->by_packed, it) = entry;

    it = kh_put(uct_mlx5_umr_rkey_cache_rkey, &cache->by_rkey,
                (uintptr_t)&entry->rkey, &ret);
    if (ret == UCS_KH_PUT_FAILED) {
        it = kh_get(uct_mlx5_umr_rkey_cache_packed, &cache->by_packed,
                    &entry->packed);
        kh_del(uct_mlx5_umr_rkey_cache_packed, &cache->by_packed, it);
        goto err_free;
    }
    kh_val(&cache->by_rkey, it) = entry;

    ucs_list_add_head(&cache->busy, &entry->list);
    ++cache->num_entries;
    ++cache->stats->rkey_misses;
    uct_mlx5_umr_rkey_cache_trim(cache);

    *rkey_p = (uintptr_t)&entry->rkey;
    return UCS_OK;

err_free:
    ucs_free(entry);
    return UCS_ERR_NO_MEMORY;
}

ucs_status_t uct_mlx5_umr_rkey_cache_put(uct_mlx5_umr_rkey_cache_t *cache,
                                         uct_rkey_t rkey)
{
    uct_mlx5_umr_rkey_cache_entry_t *entry;
    khiter_t it;

    /* only keys handed out by this cache, and still in use, are accepted */
    it = kh_get(uct_mlx5_umr_rkey_cache_rkey, &cache->by_rkey, rkey);
    if ((it == kh_end(&cache->by_rkey)) ||
        (kh_val(&cache->by_rkey, it)->refcount == 0)) {
        ucs_error("mlx5_umr: ep rkey_release: 0x%lx is not a key in use from "
                  "this endpoint's cache", (unsigned long)rkey);
        return UCS_ERR_INVALID_PARAM;
    }

    entry = kh_val(&cache->by_rkey, it);
    if (--entry->refcount == 0) {
        ucs_list_del(&entry->list);
        ucs_list_add_head(&cache->idle, &entry->list);
        uct_mlx5_umr_rkey_cache_trim(cache);
    }
    return UCS_OK;
}
