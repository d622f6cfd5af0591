/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libFuzzer target over the layout engine: the input is a small program of
 * constructor calls on a stack of layouts (any count, stride, displacement,
 * lb or extent the bytes spell, overflowing ones included), followed by the
 * queries, pack/unpack (whole and by ranges), the block walk and lowering
 * under default and fuzzed limits.
 *
 * Besides crashes and sanitizer reports, it aborts on a wrong answer:
 * pack_range disagreeing with pack, unpack not inverting pack, or a plan
 * that breaks its limits or addresses other bytes than the layout.
 *
 *     make -C test/fuzz fuzz FUZZ_SECONDS=60
 */
#include "layout.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_STACK      8
#define FUZZ_MAX_BYTES  (1u << 16)   /* pack only what fits a small buffer */
#define FUZZ_MAX_SPAN   (1 << 22)

#define FUZZ_CHECK(_cond) \
    do { \
        if (!(_cond)) { \
            fprintf(stderr, "fuzz_layout: check failed: %s (line %d)\n", \
                    #_cond, __LINE__); \
            abort(); \
        } \
    } while (0)

typedef struct {
    const uint8_t *p;
    size_t        left;
} fuzz_in_t;

static uint64_t fuzz_take(fuzz_in_t *in, unsigned bytes)
{
    uint64_t v = 0;

    while ((bytes-- > 0) && (in->left > 0)) {
        v = (v << 8) | *in->p++;
        --in->left;
    }
    return v;
}

/* mostly small values, sometimes anything (to reach the overflow checks) */
static int64_t fuzz_value(fuzz_in_t *in, int64_t small)
{
    uint8_t sel = (uint8_t)fuzz_take(in, 1);

    if (sel < 200) {
        return (int64_t)(fuzz_take(in, 2) % (uint64_t)(2 * small + 1)) - small;
    }
    return (int64_t)fuzz_take(in, 8);
}

static size_t fuzz_count(fuzz_in_t *in, size_t small)
{
    int64_t v = fuzz_value(in, (int64_t)small);

    /* the magnitude, negated as unsigned: INT64_MIN has no int64_t one */
    return (v < 0) ? -(size_t)v : (size_t)v;
}

/* ---- block collection ---------------------------------------------------- */

typedef struct {
    ptrdiff_t *off;
    size_t    num;
    size_t    cap;
} fuzz_bytes_t;

static void fuzz_bytes_add(fuzz_bytes_t *b, ptrdiff_t off, size_t len)
{
    size_t i;

    for (i = 0; i < len; ++i) {
        if (b->num == b->cap) {
            b->cap = b->cap ? (b->cap * 2) : 256;
            b->off = realloc(b->off, b->cap * sizeof(*b->off));
            FUZZ_CHECK(b->off != NULL);
        }
        b->off[b->num++] = off + (ptrdiff_t)i;
    }
}

static int fuzz_block_cb(void *arg, ptrdiff_t offset, size_t len)
{
    fuzz_bytes_add(arg, offset, len);
    return 0;
}

/* Byte addresses of key k's address space, by the NIC's formulas. */
static void fuzz_key_bytes(const umr_layout_plan_t *plan,
                           const umr_layout_limits_t *lim, uint32_t k,
                           fuzz_bytes_t *maps, fuzz_bytes_t *out)
{
    const umr_layout_key_t *key = &plan->keys[k];
    const umr_layout_entry_t *e;
    uint32_t r, i;
    uint64_t j;
    int64_t off;

    FUZZ_CHECK((key->num_entries >= 1) &&
               (key->num_entries <= ((key->kind == UMR_LAYOUT_KEY_LIST) ?
                                     lim->max_list : lim->max_interleaved)));
    FUZZ_CHECK((key->kind == UMR_LAYOUT_KEY_LIST) ? (key->repeat == 1) :
                                                    (key->repeat >= 1));
    for (r = 0; r < key->repeat; ++r) {
        for (i = 0; i < key->num_entries; ++i) {
            e   = &key->entries[i];
            off = e->offset + (int64_t)r * (e->bytes_count + e->bytes_skip);
            FUZZ_CHECK(e->bytes_count > 0);
            if (key->kind == UMR_LAYOUT_KEY_INTERLEAVED) {
                FUZZ_CHECK(e->bytes_count <= lim->max_bytes_count);
                FUZZ_CHECK(e->bytes_count + (uint64_t)e->bytes_skip <=
                           lim->max_stride);
            } else {
                FUZZ_CHECK(e->bytes_skip == 0);
            }
            FUZZ_CHECK((e->child >= -1) && (e->child < (int32_t)k));
            if (e->child < 0) {
                fuzz_bytes_add(out, off, e->bytes_count);
                continue;
            }
            FUZZ_CHECK((off >= 0) && ((uint64_t)off + e->bytes_count <=
                                      maps[e->child].num));
            for (j = 0; j < e->bytes_count; ++j) {
                fuzz_bytes_add(out, maps[e->child].off[off + j], 1);
            }
        }
    }
    FUZZ_CHECK(out->num == key->length);
    FUZZ_CHECK((key->kind != UMR_LAYOUT_KEY_LIST) ||
               (key->length <= lim->max_list_bytes));
}

static void fuzz_check_plan(const umr_layout_t *layout, size_t count,
                            const umr_layout_limits_t *lim,
                            const fuzz_bytes_t *want)
{
    umr_layout_plan_t *plan = NULL;
    umr_layout_limits_t defaults;
    fuzz_bytes_t *maps;
    ucs_status_t status;
    uint32_t k;

    status = umr_layout_lower(layout, count, lim, &plan);
    if (lim == NULL) {
        umr_layout_limits_default(&defaults);
        lim = &defaults;
    }
    if (want->num == 0) {
        FUZZ_CHECK(status == UCS_ERR_INVALID_PARAM);
        return;
    }
    if (status != UCS_OK) {
        FUZZ_CHECK((status == UCS_ERR_EXCEEDS_LIMIT) ||
                   (status == UCS_ERR_INVALID_PARAM));
        FUZZ_CHECK(umr_layout_last_error()[0] != '\0');
        return;
    }

    FUZZ_CHECK((plan->num_keys >= 1) && (plan->num_keys <= lim->max_keys));
    FUZZ_CHECK(plan->cost.depth <= lim->max_depth);
    FUZZ_CHECK(plan->cost.num_wqes == plan->num_keys);
    FUZZ_CHECK(plan->cost.total_bytes == want->num);
    maps = calloc(plan->num_keys, sizeof(*maps));
    FUZZ_CHECK(maps != NULL);
    for (k = 0; k < plan->num_keys; ++k) {
        fuzz_key_bytes(plan, lim, k, maps, &maps[k]);
    }
    FUZZ_CHECK(maps[plan->num_keys - 1].num == want->num);
    FUZZ_CHECK(!memcmp(maps[plan->num_keys - 1].off, want->off,
                       want->num * sizeof(*want->off)));
    for (k = 0; k < plan->num_keys; ++k) {
        free(maps[k].off);
    }
    free(maps);
    umr_layout_plan_free(plan);
}

/* ---- the program --------------------------------------------------------- */

static umr_layout_t *fuzz_pick(umr_layout_t **stack, unsigned depth,
                               fuzz_in_t *in)
{
    uint8_t i = (uint8_t)fuzz_take(in, 1);

    /* NULL (one byte) is a legal inner too */
    return ((depth == 0) || (i % (depth + 1) == depth)) ? NULL :
           stack[i % depth];
}

static umr_layout_t *fuzz_construct(fuzz_in_t *in,
                                    umr_layout_t **stack,
                                    unsigned depth)
{
    const umr_layout_t *inners[8];
    umr_layout_t *out = NULL;
    ptrdiff_t displs[8];
    size_t bls[8], n, i;
    ucs_status_t status;
    ptrdiff_t lb;

    switch (fuzz_take(in, 1) % 6) {
    case 0:
        status = umr_layout_contig(fuzz_count(in, 300), &out);
        break;
    case 1:
        n      = fuzz_count(in, 12);
        i      = fuzz_count(in, 4);
        lb     = fuzz_value(in, 600);
        status = umr_layout_vector(n, i, lb, fuzz_pick(stack, depth, in),
                                   &out);
        break;
    case 2:
    case 3:
        n = fuzz_take(in, 1) % 9;
        for (i = 0; i < n; ++i) {
            bls[i]    = fuzz_count(in, 3);
            displs[i] = fuzz_value(in, 2000);
            inners[i] = fuzz_pick(stack, depth, in);
        }
        /* sometimes NULL arrays: must fail cleanly */
        if (fuzz_take(in, 1) == 0xff) {
            status = umr_layout_indexed(n, NULL, displs, inners[0], &out);
        } else if (fuzz_take(in, 1) & 1) {
            status = umr_layout_indexed(n, bls, displs,
                                        n ? inners[0] : NULL, &out);
        } else {
            status = umr_layout_struct(n, bls, displs, inners, &out);
        }
        break;
    case 4:
        lb     = fuzz_value(in, 500);
        status = umr_layout_resized(fuzz_pick(stack, depth, in), lb,
                                    fuzz_value(in, 1000), &out);
        break;
    default:
        i = fuzz_take(in, 1);
        if (i & 1) {
            status = umr_layout_dup(fuzz_pick(stack, depth, in), &out);
        } else {
            /* MPI alignment (epsilon padding); odd byte values are invalid
             * alignments and must fail cleanly */
            n      = (i & 0x80) ? (i >> 1) : ((size_t)1 << ((i >> 1) % 14));
            status = umr_layout_align(fuzz_pick(stack, depth, in), n,
                                      &out);
        }
        break;
    }

    if (status != UCS_OK) {
        FUZZ_CHECK(out == NULL);
        FUZZ_CHECK(umr_layout_last_error()[0] != '\0');
    }
    return (status == UCS_OK) ? out : NULL;
}

static void fuzz_exercise(const umr_layout_t *l, size_t count,
                          fuzz_in_t *in)
{
    umr_layout_limits_t lim;
    fuzz_bytes_t want = {NULL, 0, 0};
    size_t size = umr_layout_size(l), total, i, off, len;
    ptrdiff_t lo, hi, span, ext = umr_layout_extent(l);
    uint8_t *mem, *packed, *ranged, *back;
    char str[256];

    umr_layout_str(l, str, sizeof(str));
    FUZZ_CHECK(umr_layout_hash(l) == umr_layout_hash(l));
    FUZZ_CHECK(umr_layout_equal(l, l));

    /* a layout's true span fits in ptrdiff_t (the engine refuses others);
     * the harness must not overflow computing it either */
    if (__builtin_mul_overflow(size, count, &total) ||
        (total > FUZZ_MAX_BYTES) || (count > 64) || (ext > FUZZ_MAX_SPAN) ||
        (ext < -FUZZ_MAX_SPAN) ||
        __builtin_sub_overflow(umr_layout_true_ub(l),
                               umr_layout_true_lb(l), &span) ||
        (span > FUZZ_MAX_SPAN - (ptrdiff_t)count * ext)) {
        /* too big to touch memory; argument checks still must hold */
        FUZZ_CHECK(umr_layout_pack_range(l, count, NULL, SIZE_MAX, 2,
                                             NULL) != UCS_OK);
        return;
    }

    FUZZ_CHECK(umr_layout_for_each_block(l, count, fuzz_block_cb, &want) ==
               UCS_OK);
    FUZZ_CHECK(want.num == total);

    /* the harness's memory is [lo, hi) around a base: blocks far from it
     * (a true lb near PTRDIFF_MIN is a valid layout) are not touched, and
     * nothing here may overflow computing where they are */
    lo = hi = 0;
    for (i = 0; i < want.num; ++i) {
        if ((want.off[i] < -FUZZ_MAX_SPAN) || (want.off[i] >= FUZZ_MAX_SPAN)) {
            free(want.off);
            return;
        }
        lo = (want.off[i] < lo) ? want.off[i] : lo;
        hi = (want.off[i] + 1 > hi) ? (want.off[i] + 1) : hi;
    }
    if (hi - lo > FUZZ_MAX_SPAN) {
        free(want.off);
        return;
    }
    mem    = malloc(hi - lo + 1);
    packed = malloc(total + 1);
    ranged = malloc(total + 1);
    back   = calloc(1, hi - lo + 1);
    FUZZ_CHECK(mem && packed && ranged && back);
    for (i = 0; i < (size_t)(hi - lo); ++i) {
        mem[i] = (uint8_t)(i * 131 + (i >> 8));
    }

    FUZZ_CHECK(umr_layout_pack(l, count, mem - lo, packed) == UCS_OK);
    for (i = 0; i < total; ++i) {
        FUZZ_CHECK(packed[i] == mem[want.off[i] - lo]);
    }
    for (off = 0; off < total; off += len) {
        len = 1 + fuzz_take(in, 2) % (total - off);
        FUZZ_CHECK(umr_layout_pack_range(l, count, mem - lo, off, len,
                                             ranged + off) == UCS_OK);
    }
    FUZZ_CHECK(!memcmp(packed, ranged, total));
    FUZZ_CHECK(umr_layout_unpack(l, count, back - lo, packed) == UCS_OK);
    for (i = 0; i < total; ++i) {
        FUZZ_CHECK(back[want.off[i] - lo] == mem[want.off[i] - lo]);
    }
    FUZZ_CHECK(umr_layout_unpack_range(l, count, back - lo, 0, total,
                                           packed) == UCS_OK);

    fuzz_check_plan(l, count, NULL, &want);
    umr_layout_limits_default(&lim);
    fuzz_check_plan(l, count, &lim, &want);
    lim.max_interleaved = 1 + fuzz_take(in, 1) % 8;
    lim.max_list        = 1 + fuzz_take(in, 1) % 8;
    lim.max_bytes_count = 1 + fuzz_take(in, 1) % 64;
    lim.max_stride      = 1 + fuzz_take(in, 2) % 1024;
    lim.max_list_bytes  = 1 + fuzz_take(in, 2);
    lim.max_key_bytes   = 1 + fuzz_take(in, 3);
    lim.max_depth       = 1 + fuzz_take(in, 1) % 8;
    lim.max_keys        = 1 + fuzz_take(in, 2) % 4096;
    fuzz_check_plan(l, count, &lim, &want);

    free(want.off);
    free(mem);
    free(packed);
    free(ranged);
    free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    umr_layout_t *stack[FUZZ_STACK], *l;
    fuzz_in_t in = {data, size};
    unsigned depth = 0, i, ops;

    ops = 1 + fuzz_take(&in, 1) % 12;
    for (i = 0; (i < ops) && (in.left > 0); ++i) {
        l = fuzz_construct(&in, stack, depth);
        if (l == NULL) {
            continue;
        }
        if (depth == FUZZ_STACK) {
            umr_layout_free(stack[0]);
            memmove(stack, stack + 1, (FUZZ_STACK - 1) * sizeof(*stack));
            --depth;
        }
        stack[depth++] = l;
    }

    if (depth > 0) {
        fuzz_exercise(stack[depth - 1], fuzz_count(&in, 4), &in);
    }
    for (i = 0; i < depth; ++i) {
        umr_layout_free(stack[i]);
    }
    return 0;
}
