/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr layout engine: CPU pack/unpack, byte ranges and block walks.
 *
 * One recursive copier serves whole and partial packs: it seeks into the
 * packed stream in O(1) per vector level (division) and O(log n) per list
 * level (binary search over prefix sums), so a range costs its own bytes
 * plus O(depth * log n), never a walk from the start. The kernel is picked
 * per node: one memcpy for a contiguous layout, a tight loop with a
 * constant-size copy for a vector of contiguous blocks, recursion otherwise.
 */
#ifdef HAVE_CONFIG_H
#  include "umr_config.h"
#endif

#include "layout_priv.h"

#include <string.h>

static void umr_layout_copy_node(const umr_layout_node_t *node, char *mem,
                                 size_t skip, size_t len, char *stream,
                                 int unpack);

/* indices, not pointer bumps: no pointer is formed past the last block */
#define UMR_LAYOUT_COPY_LOOP(_size) \
    if (unpack) { \
        for (i = 0; i < nfull; ++i) { \
            memcpy(mem + (ptrdiff_t)i * stride, stream + i * (_size), \
                   (_size)); \
        } \
    } else { \
        for (i = 0; i < nfull; ++i) { \
            memcpy(stream + i * (_size), mem + (ptrdiff_t)i * stride, \
                   (_size)); \
        } \
    }

/* Full blocks of a vector of contiguous blocks: the hot loop. */
static void umr_layout_copy_blocks(char *mem, ptrdiff_t stride, size_t blen,
                                   size_t nfull, char *stream, int unpack)
{
    size_t i;

    /* constant sizes let the compiler emit plain loads and stores */
    switch (blen) {
    case 1:   UMR_LAYOUT_COPY_LOOP(1);   break;
    case 2:   UMR_LAYOUT_COPY_LOOP(2);   break;
    case 4:   UMR_LAYOUT_COPY_LOOP(4);   break;
    case 8:   UMR_LAYOUT_COPY_LOOP(8);   break;
    case 12:  UMR_LAYOUT_COPY_LOOP(12);  break;
    case 16:  UMR_LAYOUT_COPY_LOOP(16);  break;
    case 24:  UMR_LAYOUT_COPY_LOOP(24);  break;
    case 32:  UMR_LAYOUT_COPY_LOOP(32);  break;
    case 40:  UMR_LAYOUT_COPY_LOOP(40);  break;
    case 48:  UMR_LAYOUT_COPY_LOOP(48);  break;
    case 64:  UMR_LAYOUT_COPY_LOOP(64);  break;
    /* up to 256 B inline copies beat a libc call per block; above, libc's
     * vectorised memcpy wins */
    case 96:  UMR_LAYOUT_COPY_LOOP(96);  break;
    case 128: UMR_LAYOUT_COPY_LOOP(128); break;
    case 192: UMR_LAYOUT_COPY_LOOP(192); break;
    case 256: UMR_LAYOUT_COPY_LOOP(256); break;
    default:  UMR_LAYOUT_COPY_LOOP(blen); break;
    }
}

static inline void umr_layout_copy_bytes(char *mem, char *stream, size_t len,
                                         int unpack)
{
    if (unpack) {
        memcpy(mem, stream, len);
    } else {
        memcpy(stream, mem, len);
    }
}

/* Stream bytes [skip, skip + len) of n copies of child, copy i at i*stride */
static void umr_layout_copy_rep(size_t n, ptrdiff_t stride,
                                const umr_layout_node_t *child, char *mem,
                                size_t skip, size_t len, char *stream,
                                int unpack)
{
    size_t csize = child->size;
    size_t i     = skip / csize;
    size_t off   = skip % csize;
    size_t chunk, nfull;

    (void)n;
    if (child->kind == UMR_LAYOUT_NODE_CONTIG) {
        mem += (ptrdiff_t)i * stride;
        if (off > 0) {
            chunk = csize - off;
            chunk = (chunk < len) ? chunk : len;
            umr_layout_copy_bytes(mem + off, stream, chunk, unpack);
            stream += chunk;
            len    -= chunk;
            if (len == 0) {
                return;
            }
            mem += stride; /* len > 0: block i + 1 exists */
        }
        nfull = len / csize;
        umr_layout_copy_blocks(mem, stride, csize, nfull, stream, unpack);
        len -= nfull * csize;
        if (len > 0) {
            umr_layout_copy_bytes(mem + (ptrdiff_t)nfull * stride,
                                  stream + nfull * csize, len, unpack);
        }
        return;
    }

    for (; len > 0; ++i, off = 0) {
        chunk = csize - off;
        chunk = (chunk < len) ? chunk : len;
        umr_layout_copy_node(child, mem + (ptrdiff_t)i * stride, off, chunk,
                             stream, unpack);
        stream += chunk;
        len    -= chunk;
    }
}

static void umr_layout_copy_node(const umr_layout_node_t *node, char *mem,
                                 size_t skip, size_t len, char *stream,
                                 int unpack)
{
    const umr_layout_list_entry_t *e;
    size_t lo, hi, mid, chunk, off;

    switch (node->kind) {
    case UMR_LAYOUT_NODE_CONTIG:
        umr_layout_copy_bytes(mem + skip, stream, len, unpack);
        break;
    case UMR_LAYOUT_NODE_VECTOR:
        umr_layout_copy_rep(node->vector.count, node->vector.stride,
                            node->vector.child, mem, skip, len, stream,
                            unpack);
        break;
    case UMR_LAYOUT_NODE_LIST:
        /* last entry starting at or before skip */
        lo = 0;
        hi = node->list.count - 1;
        while (lo < hi) {
            mid = lo + (hi - lo + 1) / 2;
            if (node->list.prefix[mid] <= skip) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        for (off = skip - node->list.prefix[lo]; len > 0; ++lo, off = 0) {
            e     = &node->list.entries[lo];
            chunk = e->node->size - off;
            chunk = (chunk < len) ? chunk : len;
            umr_layout_copy_node(e->node, mem + e->disp, off, chunk, stream,
                                 unpack);
            stream += chunk;
            len    -= chunk;
        }
        break;
    }
}

static ucs_status_t umr_layout_copy(const char *func,
                                    const umr_layout_t *layout,
                                    size_t count, char *base, size_t offset,
                                    size_t len, char *stream, int unpack)
{
    ucs_status_t status;
    ptrdiff_t lo, hi;
    size_t total;

    if (layout == NULL) {
        return umr_layout_error(UCS_ERR_INVALID_PARAM, "%s: layout is NULL",
                                func);
    }
    status = umr_layout_total_size(layout, count, &total);
    if (status != UCS_OK) {
        return status;
    }
    if ((offset > total) || (len > total - offset)) {
        return umr_layout_error(UCS_ERR_INVALID_PARAM,
                                "%s: range [%zu, +%zu) exceeds the %zu "
                                "packed bytes", func, offset, len, total);
    }
    if (len == 0) {
        return UCS_OK;
    }
    if ((base == NULL) || (stream == NULL)) {
        return umr_layout_error(UCS_ERR_INVALID_PARAM, "%s: %s is NULL",
                                func, (base == NULL) ? "base" : "buffer");
    }
    if (umr_layout_span(layout, count, &lo, &hi) != UCS_OK) {
        return umr_layout_error(UCS_ERR_EXCEEDS_LIMIT,
                                "%s: count %zu x extent %td overflows", func,
                                count, layout->extent);
    }

    if (layout->is_contig) {
        umr_layout_copy_bytes(base + layout->true_lb + offset, stream, len,
                              unpack);
        return UCS_OK;
    }

    umr_layout_copy_rep(count, layout->extent, layout->root,
                        base + layout->disp, offset, len, stream, unpack);
    return UCS_OK;
}

ucs_status_t umr_layout_pack(const umr_layout_t *layout, size_t count,
                             const void *base, void *dst)
{
    return umr_layout_copy("pack", layout, count, (char*)base, 0,
                           (layout != NULL) ? layout->size * count : 0,
                           (char*)dst, 0);
}

ucs_status_t umr_layout_unpack(const umr_layout_t *layout,
                               size_t count, void *base, const void *src)
{
    return umr_layout_copy("unpack", layout, count, (char*)base, 0,
                           (layout != NULL) ? layout->size * count : 0,
                           (char*)src, 1);
}

ucs_status_t umr_layout_pack_range(const umr_layout_t *layout,
                                   size_t count, const void *base,
                                   size_t offset, size_t len, void *dst)
{
    return umr_layout_copy("pack_range", layout, count, (char*)base, offset,
                           len, (char*)dst, 0);
}

ucs_status_t umr_layout_unpack_range(const umr_layout_t *layout,
                                     size_t count, void *base,
                                     size_t offset, size_t len,
                                     const void *src)
{
    return umr_layout_copy("unpack_range", layout, count, (char*)base, offset,
                           len, (char*)src, 1);
}

/* ---- block walk -------------------------------------------------------- */

typedef struct {
    umr_layout_block_cb_t cb;
    void                  *arg;
    ptrdiff_t             offset;   /* pending block */
    size_t                len;
} umr_layout_walk_t;

static int umr_layout_walk_emit(umr_layout_walk_t *w, ptrdiff_t offset,
                                size_t len)
{
    if ((w->len > 0) && (w->offset + (ptrdiff_t)w->len == offset)) {
        w->len += len;
        return 0;
    }
    if ((w->len > 0) && w->cb(w->arg, w->offset, w->len)) {
        return 1;
    }
    w->offset = offset;
    w->len    = len;
    return 0;
}

static int umr_layout_walk_node(umr_layout_walk_t *w,
                                const umr_layout_node_t *node,
                                ptrdiff_t offset)
{
    const umr_layout_node_t *child;
    ptrdiff_t pos;
    size_t i;

    switch (node->kind) {
    case UMR_LAYOUT_NODE_CONTIG:
        return umr_layout_walk_emit(w, offset, node->contig.len);
    case UMR_LAYOUT_NODE_VECTOR:
        child = node->vector.child;
        for (i = 0; i < node->vector.count; ++i) {
            pos = offset + (ptrdiff_t)i * node->vector.stride;
            if ((child->kind == UMR_LAYOUT_NODE_CONTIG) ?
                umr_layout_walk_emit(w, pos, child->contig.len) :
                umr_layout_walk_node(w, child, pos)) {
                return 1;
            }
        }
        return 0;
    case UMR_LAYOUT_NODE_LIST:
        for (i = 0; i < node->list.count; ++i) {
            if (umr_layout_walk_node(w, node->list.entries[i].node,
                                     offset + node->list.entries[i].disp)) {
                return 1;
            }
        }
        return 0;
    }
    return 0;
}

int umr_layout_node_for_each_block(const umr_layout_node_t *node,
                                   ptrdiff_t offset, umr_layout_block_cb_t cb,
                                   void *arg)
{
    umr_layout_walk_t w = {cb, arg, 0, 0};

    if (umr_layout_walk_node(&w, node, offset)) {
        return 1;
    }
    return (w.len > 0) ? w.cb(w.arg, w.offset, w.len) : 0;
}

ucs_status_t umr_layout_for_each_block(const umr_layout_t *layout,
                                       size_t count,
                                       umr_layout_block_cb_t cb, void *arg)
{
    umr_layout_walk_t w = {cb, arg, 0, 0};
    ptrdiff_t lo, hi;
    size_t i;

    if ((layout == NULL) || (cb == NULL)) {
        return umr_layout_error(UCS_ERR_INVALID_PARAM,
                                "for_each_block: %s is NULL",
                                (layout == NULL) ? "layout" : "cb");
    }
    if ((layout->root == NULL) || (count == 0)) {
        return UCS_OK;
    }
    if (umr_layout_span(layout, count, &lo, &hi) != UCS_OK) {
        return umr_layout_error(UCS_ERR_EXCEEDS_LIMIT,
                                "for_each_block: count %zu x extent %td "
                                "overflows", count, layout->extent);
    }

    for (i = 0; i < count; ++i) {
        if (umr_layout_walk_node(&w, layout->root, layout->disp +
                                 (ptrdiff_t)i * layout->extent)) {
            return UCS_OK;
        }
    }
    if (w.len > 0) {
        w.cb(w.arg, w.offset, w.len);
    }
    return UCS_OK;
}
