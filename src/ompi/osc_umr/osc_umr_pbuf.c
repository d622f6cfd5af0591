/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr's packed path: the buffers kept for packed bytes, shared by the
 * origin's and the target's side (see osc_umr_packed_priv.h).
 */
#include "osc_umr_packed_priv.h"

#include <stdlib.h>

void *mca_osc_umr_pbuf_take(mca_osc_umr_pbuf_t *b, size_t len)
{
    void *p;

    if (b->busy || (len > MCA_OSC_UMR_PBUF_KEEP)) {
        return malloc(len);
    }
    if (len > b->cap) {
        p = realloc(b->buf, len);
        if (p == NULL) {
            return malloc(len);
        }
        b->buf = p;
        b->cap = len;
    }
    b->busy = 1;
    return b->buf;
}

void mca_osc_umr_pbuf_give(mca_osc_umr_pbuf_t *b, void *p)
{
    if ((p != NULL) && (p == b->buf)) {
        b->busy = 0;
    } else {
        free(p);
    }
}
