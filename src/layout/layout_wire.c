/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr layout engine: a layout as bytes another process can rebuild
 * (umr_layout_encode / _decode, umr_layout.h). 64-bit words, native byte
 * order (both ends run the same build, as every wire of the project
 * assumes): disp, lb, extent, then the map's nodes in preorder:
 *   CONTIG: 0, len
 *   VECTOR: 1, count, stride, child
 *   LIST:   2, count, then count x (disp, node)
 * The decoder rebuilds with the public constructors: the same bytes in the
 * same order, lb and extent (bound markers and alignment, which only
 * matter to constructors built on the result, are not carried).
 */
#include "layout_priv.h"

#include <stdlib.h>
#include <string.h>

#define UMR_LAYOUT_WIRE_DEPTH 32

typedef struct {
    uint64_t *w;
    size_t   n, max;
} umr_layout_wbuf_t;

static int umr_layout_wput(umr_layout_wbuf_t *b, uint64_t v)
{
    if (b->n == b->max) {
        return -1;
    }
    b->w[b->n++] = v;
    return 0;
}

static int umr_layout_encode_node(umr_layout_wbuf_t *b,
                                  const umr_layout_node_t *node, int depth)
{
    size_t i;

    if (depth > UMR_LAYOUT_WIRE_DEPTH) {
        return -1;
    }
    switch (node->kind) {
    case UMR_LAYOUT_NODE_CONTIG:
        return umr_layout_wput(b, 0) | umr_layout_wput(b, node->contig.len);
    case UMR_LAYOUT_NODE_VECTOR:
        if (umr_layout_wput(b, 1) || umr_layout_wput(b, node->vector.count) ||
            umr_layout_wput(b, (uint64_t)node->vector.stride)) {
            return -1;
        }
        return umr_layout_encode_node(b, node->vector.child, depth + 1);
    default:
        if (umr_layout_wput(b, 2) || umr_layout_wput(b, node->list.count)) {
            return -1;
        }
        for (i = 0; i < node->list.count; ++i) {
            if (umr_layout_wput(b, (uint64_t)node->list.entries[i].disp) ||
                umr_layout_encode_node(b, node->list.entries[i].node,
                                       depth + 1)) {
                return -1;
            }
        }
        return 0;
    }
}

ucs_status_t umr_layout_encode(const umr_layout_t *layout, void *buf,
                               size_t max, size_t *len_p)
{
    umr_layout_wbuf_t b = { .w = buf, .n = 0, .max = max / sizeof(uint64_t) };

    if ((layout == NULL) || (layout->root == NULL)) {
        return umr_layout_error(UCS_ERR_INVALID_PARAM, "no data to encode");
    }
    if (((uintptr_t)buf % sizeof(uint64_t)) ||
        umr_layout_wput(&b, (uint64_t)layout->disp) ||
        umr_layout_wput(&b, (uint64_t)layout->lb) ||
        umr_layout_wput(&b, (uint64_t)layout->extent) ||
        umr_layout_encode_node(&b, layout->root, 0)) {
        return umr_layout_error(UCS_ERR_EXCEEDS_LIMIT, "encoding longer than "
                                "%zu bytes", max);
    }
    *len_p = b.n * sizeof(uint64_t);
    return UCS_OK;
}

typedef struct {
    const uint64_t *w;
    size_t         n, pos;
} umr_layout_rbuf_t;

static int umr_layout_rget(umr_layout_rbuf_t *b, uint64_t *v)
{
    if (b->pos == b->n) {
        return -1;
    }
    *v = b->w[b->pos++];
    return 0;
}

static ucs_status_t umr_layout_decode_node(umr_layout_rbuf_t *b, int depth,
                                           umr_layout_t **layout_p)
{
    uint64_t kind, count, v = 0;
    const umr_layout_t **inners;
    umr_layout_t *child = NULL;
    ptrdiff_t *disps;
    size_t *ones, i;
    ucs_status_t status;

    if ((depth > UMR_LAYOUT_WIRE_DEPTH) || umr_layout_rget(b, &kind) ||
        umr_layout_rget(b, &count)) {
        return umr_layout_error(UCS_ERR_INVALID_PARAM, "truncated encoding");
    }
    if (kind == 0) {
        return umr_layout_contig(count, layout_p);
    }
    if (kind == 1) {
        if (umr_layout_rget(b, &v)) {
            return umr_layout_error(UCS_ERR_INVALID_PARAM,
                                    "truncated encoding");
        }
        status = umr_layout_decode_node(b, depth + 1, &child);
        if (status == UCS_OK) {
            status = umr_layout_vector(count, 1, (ptrdiff_t)v, child,
                                       layout_p);
            umr_layout_free(child);
        }
        return status;
    }
    /* a list's entries each take at least three words: bounded by the
     * bytes left before anything is allocated */
    if ((kind != 2) || (count > (b->n - b->pos) / 3)) {
        return umr_layout_error(UCS_ERR_INVALID_PARAM, "bad node");
    }
    inners = calloc(count, sizeof(*inners) + sizeof(*disps) + sizeof(*ones));
    if (inners == NULL) {
        return umr_layout_error(UCS_ERR_NO_MEMORY, "out of memory");
    }
    disps  = (ptrdiff_t*)(inners + count);
    ones   = (size_t*)(disps + count);
    status = UCS_OK;
    for (i = 0; (i < count) && (status == UCS_OK); ++i) {
        ones[i] = 1;
        status  = umr_layout_rget(b, &v) ?
                  umr_layout_error(UCS_ERR_INVALID_PARAM,
                                   "truncated encoding") :
                  umr_layout_decode_node(b, depth + 1,
                                         (umr_layout_t**)&inners[i]);
        disps[i] = (ptrdiff_t)v;
    }
    if (status == UCS_OK) {
        status = umr_layout_struct(count, ones, disps, inners, layout_p);
    }
    for (i = 0; i < count; ++i) {
        if (inners[i] != NULL) {
            umr_layout_free((umr_layout_t*)inners[i]);
        }
    }
    free(inners);
    return status;
}

ucs_status_t umr_layout_decode(const void *buf, size_t len,
                               umr_layout_t **layout_p)
{
    umr_layout_rbuf_t b = { .w = buf, .n = len / sizeof(uint64_t), .pos = 0 };
    uint64_t disp, lb, extent;
    umr_layout_t *root = NULL, *placed = NULL;
    const umr_layout_t *inner;
    ptrdiff_t d;
    size_t one = 1;
    ucs_status_t status;

    if (((uintptr_t)buf % sizeof(uint64_t)) || (len % sizeof(uint64_t)) ||
        umr_layout_rget(&b, &disp) || umr_layout_rget(&b, &lb) ||
        umr_layout_rget(&b, &extent)) {
        return umr_layout_error(UCS_ERR_INVALID_PARAM, "bad encoding");
    }
    status = umr_layout_decode_node(&b, 0, &root);
    if (status != UCS_OK) {
        return status;
    }
    if (b.pos != b.n) {
        umr_layout_free(root);
        return umr_layout_error(UCS_ERR_INVALID_PARAM, "trailing words");
    }
    inner  = root;
    d      = (ptrdiff_t)disp;
    status = umr_layout_struct(1, &one, &d, &inner, &placed);
    umr_layout_free(root);
    if (status != UCS_OK) {
        return status;
    }
    status = umr_layout_resized(placed, (ptrdiff_t)lb, (ptrdiff_t)extent,
                                layout_p);
    umr_layout_free(placed);
    return status;
}
