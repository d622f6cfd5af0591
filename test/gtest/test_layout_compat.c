/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * The layout engine's former names (uct_umr_layout.h, mlx5_umr 0.1) still
 * compile and reach the engine: a program written for them builds unchanged.
 */
#include "uct_umr_layout.h"

#include <string.h>

/* 0, or the step that failed. */
int umr_test_layout_compat(void)
{
    const char src[] = "aAbBcCdDeEfFgGhH";   /* 16 bytes and its NUL */
    uct_umr_layout_t *vec, *copy;
    char dst[8];

    /* every other byte: "abcdefgh" */
    if (uct_umr_layout_vector(8, 1, 2, NULL, &vec) != UCS_OK) {
        return 1;
    }
    if ((uct_umr_layout_size(vec) != 8) || (uct_umr_layout_extent(vec) != 15) ||
        (uct_umr_layout_num_blocks(vec) != 8) ||
        (uct_umr_layout_dup(vec, &copy) != UCS_OK)) {
        uct_umr_layout_free(vec);
        return 2;
    }
    if (!uct_umr_layout_equal(vec, copy) ||
        (uct_umr_layout_pack(copy, 1, src, dst) != UCS_OK) ||
        memcmp(dst, "abcdefgh", 8)) {
        uct_umr_layout_free(copy);
        uct_umr_layout_free(vec);
        return 3;
    }
    uct_umr_layout_free(copy);
    uct_umr_layout_free(vec);
    return (uct_umr_layout_contig(0, &vec) == UCS_OK) ?
           (uct_umr_layout_free(vec), 0) : 4;
}
