/**
 * mlx5_umr transport: per-endpoint cache of unpacked remote keys.
 *
 * An MPI layer receives its peers' packed layout keys again and again (every
 * halo iteration); unpacking through the endpoint returns the same unpacked
 * key for the same packed bytes without an allocation. Entries are reference
 * counted; idle ones are evicted least recently used beyond max_entries and
 * all are freed with the endpoint.
 */
#ifndef UCT_MLX5_UMR_RCACHE_H_
#define UCT_MLX5_UMR_RCACHE_H_

#include "umr_md.h"


typedef struct uct_mlx5_umr_rcache_entry {
    ucs_list_link_t            list;    /* in rcache->lru, most recent first */
    uct_mlx5_umr_packed_rkey_t packed;
    uct_mlx5_umr_rkey_t        rkey;    /* what uct_rkey_t points to */
    unsigned                   refcount;
} uct_mlx5_umr_rcache_entry_t;


typedef struct uct_mlx5_umr_rcache {
    ucs_list_link_t    lru;
    unsigned           num_entries;
    unsigned           max_entries;
    uct_umr_ep_stats_t *stats;
} uct_mlx5_umr_rcache_t;


void uct_mlx5_umr_rcache_init(uct_mlx5_umr_rcache_t *rcache,
                              unsigned max_entries, uct_umr_ep_stats_t *stats);
void uct_mlx5_umr_rcache_cleanup(uct_mlx5_umr_rcache_t *rcache);

ucs_status_t uct_mlx5_umr_rcache_get(uct_mlx5_umr_rcache_t *rcache,
                                     const void *rkey_buffer,
                                     uct_rkey_t *rkey_p);
ucs_status_t uct_mlx5_umr_rcache_put(uct_mlx5_umr_rcache_t *rcache,
                                     uct_rkey_t rkey);

#endif
