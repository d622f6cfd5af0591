/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: the two lists of the endpoint caches (local keys,
 * remote keys). An entry in use is on `busy` and never evicted; an idle one
 * is on `idle`, most recently released at the head, evicted from the tail.
 */
#ifndef UCT_MLX5_UMR_LRU_H_
#define UCT_MLX5_UMR_LRU_H_

#include <ucs/datastruct/list.h>


/* One more user of a cached entry (*users of them): the first takes it off
 * the idle list. */
static inline void uct_mlx5_umr_lru_hold(ucs_list_link_t *busy,
                                         ucs_list_link_t *elem,
                                         unsigned *users)
{
    if ((*users)++ == 0) {
        ucs_list_del(elem);
        ucs_list_add_head(busy, elem);
    }
}

#endif
