/**
 * mlx5_umr transport: per-endpoint cache of unpacked remote keys
 * (see umr_rcache.h).
 */
#include "umr_config.h"

#include "umr_rcache.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <string.h>


void uct_mlx5_umr_rcache_init(uct_mlx5_umr_rcache_t *rcache,
                              unsigned max_entries, uct_umr_ep_stats_t *stats)
{
    ucs_list_head_init(&rcache->lru);
    rcache->num_entries = 0;
    rcache->max_entries = max_entries;
    rcache->stats       = stats;
}

void uct_mlx5_umr_rcache_cleanup(uct_mlx5_umr_rcache_t *rcache)
{
    uct_mlx5_umr_rcache_entry_t *entry, *tmp;

    ucs_list_for_each_safe(entry, tmp, &rcache->lru, list) {
        if (entry->refcount != 0) {
            ucs_warn("mlx5_umr: remote key 0x%x still in use (%u) when its "
                     "endpoint is destroyed", entry->rkey.rkey,
                     entry->refcount);
        }
        ucs_list_del(&entry->list);
        ucs_free(entry);
    }
    rcache->num_entries = 0;
}

/* Free idle entries from the least recent end down to the bound. */
static void uct_mlx5_umr_rcache_trim(uct_mlx5_umr_rcache_t *rcache)
{
    uct_mlx5_umr_rcache_entry_t *entry, *prev;

    for (entry = ucs_list_tail(&rcache->lru, uct_mlx5_umr_rcache_entry_t,
                               list);
         (&entry->list != &rcache->lru) &&
         (rcache->num_entries > rcache->max_entries);
         entry = prev) {
        prev = ucs_list_prev(&entry->list, uct_mlx5_umr_rcache_entry_t, list);
        if (entry->refcount == 0) {
            ucs_list_del(&entry->list);
            ucs_free(entry);
            --rcache->num_entries;
        }
    }
}

ucs_status_t uct_mlx5_umr_rcache_get(uct_mlx5_umr_rcache_t *rcache,
                                     const void *rkey_buffer,
                                     uct_rkey_t *rkey_p)
{
    const uct_mlx5_umr_packed_rkey_t *packed = rkey_buffer;
    uct_mlx5_umr_rcache_entry_t *entry;

    if ((packed == NULL) || (rkey_p == NULL) ||
        (packed->magic != UCT_MLX5_UMR_RKEY_MAGIC) ||
        (packed->flags & ~UCT_MLX5_UMR_RKEY_FLAG_ZERO_BASED)) {
        ucs_error("mlx5_umr: ep rkey_unpack: buffer %p is not an mlx5_umr key",
                  packed);
        return UCS_ERR_INVALID_PARAM;
    }

    ucs_list_for_each(entry, &rcache->lru, list) {
        if (!memcmp(&entry->packed, packed, sizeof(*packed))) {
            ucs_list_del(&entry->list);
            ucs_list_add_head(&rcache->lru, &entry->list);
            ++entry->refcount;
            ++rcache->stats->rkey_hits;
            *rkey_p = (uintptr_t)&entry->rkey;
            return UCS_OK;
        }
    }

    entry = ucs_malloc(sizeof(*entry), "mlx5_umr rcache entry");
    if (entry == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    memcpy(&entry->packed, packed, sizeof(*packed));
    entry->rkey.rkey   = packed->rkey;
    entry->rkey.flags  = packed->flags;
    entry->rkey.base   = packed->base;
    entry->rkey.length = packed->length;
    entry->refcount    = 1;
    ucs_list_add_head(&rcache->lru, &entry->list);
    ++rcache->num_entries;
    ++rcache->stats->rkey_misses;
    uct_mlx5_umr_rcache_trim(rcache);

    *rkey_p = (uintptr_t)&entry->rkey;
    return UCS_OK;
}

ucs_status_t uct_mlx5_umr_rcache_put(uct_mlx5_umr_rcache_t *rcache,
                                     uct_rkey_t rkey)
{
    uct_mlx5_umr_rcache_entry_t *entry;

    /* only keys handed out by this cache are accepted */
    ucs_list_for_each(entry, &rcache->lru, list) {
        if ((uintptr_t)&entry->rkey == rkey) {
            if (entry->refcount == 0) {
                break;
            }
            --entry->refcount;
            uct_mlx5_umr_rcache_trim(rcache);
            return UCS_OK;
        }
    }

    ucs_error("mlx5_umr: ep rkey_release: 0x%lx is not a key in use from this "
              "endpoint's cache", (unsigned long)rkey);
    return UCS_ERR_INVALID_PARAM;
}
