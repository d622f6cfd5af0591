/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr layout engine: queries, equality, description, size helpers.
 */
#ifdef HAVE_CONFIG_H
#  include "umr_config.h"
#endif

#include "layout_priv.h"

#include <stdarg.h>
#include <stdio.h>

/* ---- queries ----------------------------------------------------------- */

/* A summary computed at construction, or what it reads as without a layout
 * (NULL: no bytes, contiguous). */
#define UMR_LAYOUT_QUERY(_type, _name, _field, _none) \
    _type umr_layout_##_name(const umr_layout_t *layout) \
    { \
        return (layout != NULL) ? layout->_field : (_none); \
    }

UMR_LAYOUT_QUERY(size_t,    size,       size,       0)
UMR_LAYOUT_QUERY(ptrdiff_t, extent,     extent,     0)
UMR_LAYOUT_QUERY(ptrdiff_t, lb,         lb,         0)
UMR_LAYOUT_QUERY(size_t,    alignment,  align,      1)
UMR_LAYOUT_QUERY(ptrdiff_t, true_lb,    true_lb,    0)
UMR_LAYOUT_QUERY(ptrdiff_t, true_ub,    true_ub,    0)
UMR_LAYOUT_QUERY(size_t,    num_blocks, num_blocks, 0)
UMR_LAYOUT_QUERY(int,       is_contig,  is_contig,  1)
UMR_LAYOUT_QUERY(uint64_t,  hash,       hash,       0)

int umr_layout_equal(const umr_layout_t *a, const umr_layout_t *b)
{
    if (a == b) {
        return 1;
    }
    if ((a == NULL) || (b == NULL)) {
        return 0;
    }
    return (a->hash == b->hash) && (a->disp == b->disp) && (a->lb == b->lb) &&
           (a->extent == b->extent) && (a->size == b->size) &&
           umr_layout_node_equal(a->root, b->root);
}

typedef struct {
    char   *buf;
    size_t max;
    size_t pos;
} umr_layout_strbuf_t;

static void umr_layout_strbuf_add(umr_layout_strbuf_t *sb, const char *fmt,
                                  ...) __attribute__((format(printf, 2, 3)));

static void umr_layout_strbuf_add(umr_layout_strbuf_t *sb, const char *fmt,
                                  ...)
{
    va_list ap;
    int n;

    if (sb->pos + 1 >= sb->max) {
        return;
    }
    va_start(ap, fmt);
    n = vsnprintf(sb->buf + sb->pos, sb->max - sb->pos, fmt, ap);
    va_end(ap);
    if (n > 0) {
        sb->pos += ((size_t)n < sb->max - sb->pos) ? (size_t)n :
                                                     (sb->max - sb->pos - 1);
    }
}

static void umr_layout_node_str(const umr_layout_node_t *node,
                                umr_layout_strbuf_t *sb)
{
    size_t i;

    if (sb->pos + 1 >= sb->max) {
        return;
    }
    switch (node->kind) {
    case UMR_LAYOUT_NODE_CONTIG:
        umr_layout_strbuf_add(sb, "%zu", node->contig.len);
        break;
    case UMR_LAYOUT_NODE_VECTOR:
        umr_layout_strbuf_add(sb, "vec(%zu,%td,", node->vector.count,
                              node->vector.stride);
        umr_layout_node_str(node->vector.child, sb);
        umr_layout_strbuf_add(sb, ")");
        break;
    case UMR_LAYOUT_NODE_LIST:
        umr_layout_strbuf_add(sb, "list(");
        for (i = 0; (i < node->list.count) && (sb->pos + 1 < sb->max); ++i) {
            umr_layout_strbuf_add(sb, "%s%td:", (i > 0) ? "," : "",
                                  node->list.entries[i].disp);
            umr_layout_node_str(node->list.entries[i].node, sb);
        }
        umr_layout_strbuf_add(sb, ")");
        break;
    }
}

const char *umr_layout_str(const umr_layout_t *layout, char *buf,
                           size_t max)
{
    umr_layout_strbuf_t sb = {buf, max, 0};

    if ((buf == NULL) || (max == 0)) {
        return buf;
    }
    buf[0] = '\0';
    if (layout == NULL) {
        umr_layout_strbuf_add(&sb, "(null)");
        return buf;
    }
    umr_layout_strbuf_add(&sb, "size %zu lb %td extent %td at %td: ",
                          layout->size, layout->lb, layout->extent,
                          layout->disp);
    if (layout->root == NULL) {
        umr_layout_strbuf_add(&sb, "empty");
    } else {
        umr_layout_node_str(layout->root, &sb);
    }
    return buf;
}

ucs_status_t umr_layout_total_size(const umr_layout_t *layout,
                                   size_t count, size_t *total_p)
{
    if (__builtin_mul_overflow(layout->size, count, total_p) ||
        (*total_p > PTRDIFF_MAX)) {
        return umr_layout_error(UCS_ERR_EXCEEDS_LIMIT,
                                "count %zu x size %zu overflows", count,
                                layout->size);
    }
    return UCS_OK;
}

ucs_status_t umr_layout_span(const umr_layout_t *layout, size_t count,
                             ptrdiff_t *lb_p, ptrdiff_t *ub_p)
{
    ptrdiff_t lo, hi, span;

    if (count == 0) {
        *lb_p = *ub_p = 0;
        return UCS_OK;
    }
    /* callers take ub - lb as a length: it must fit too */
    if (!umr_layout_placement_span(count, layout->extent, &lo, &hi) ||
        __builtin_add_overflow(layout->true_lb, lo, lb_p) ||
        __builtin_add_overflow(layout->true_ub, hi, ub_p) ||
        __builtin_sub_overflow(*ub_p, *lb_p, &span)) {
        return umr_layout_error(UCS_ERR_EXCEEDS_LIMIT,
                                "count %zu x extent %td overflows", count,
                                layout->extent);
    }
    return UCS_OK;
}
