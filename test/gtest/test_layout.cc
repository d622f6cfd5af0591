/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Layout engine: constructors, canonical forms, queries, errors, pack
 * ranges, block walk and the lowering rules, one behaviour per test.
 */
#include "umr_test_layout.h"
#include "umr_test_time.h"
#include "layout_priv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <numeric>
#include <string>

namespace {

using namespace umr_test;

umr_layout_t *mk_contig(size_t len)
{
    umr_layout_t *l = nullptr;
    EXPECT_EQ(UCS_OK, umr_layout_contig(len, &l));
    return l;
}

umr_layout_t *mk_vector(size_t count, size_t bl, ptrdiff_t stride,
                        const umr_layout_t *inner)
{
    umr_layout_t *l = nullptr;
    EXPECT_EQ(UCS_OK, umr_layout_vector(count, bl, stride, inner, &l));
    return l;
}

std::string str(const umr_layout_t *l)
{
    char buf[512];
    return umr_layout_str(l, buf, sizeof(buf));
}

/* the canonical part of the description, after the summary */
std::string shape(const umr_layout_t *l)
{
    std::string s = str(l);
    return s.substr(s.find(": ") + 2);
}

void expect_same(const umr_layout_t *a, const umr_layout_t *b)
{
    EXPECT_TRUE(umr_layout_equal(a, b)) << str(a) << " vs " << str(b);
    EXPECT_EQ(umr_layout_hash(a), umr_layout_hash(b));
}

class layout : public ::testing::Test {
protected:
    void TearDown() override
    {
        for (umr_layout_t *l : m_owned) {
            umr_layout_free(l);
        }
    }

    umr_layout_t *own(umr_layout_t *l)
    {
        m_owned.push_back(l);
        return l;
    }

    std::vector<umr_layout_t*> m_owned;
};

/* ---- constructors and queries -------------------------------------------- */

TEST_F(layout, contig_queries)
{
    umr_layout_t *c = own(mk_contig(24));

    EXPECT_EQ(24u, umr_layout_size(c));
    EXPECT_EQ(24, umr_layout_extent(c));
    EXPECT_EQ(0, umr_layout_lb(c));
    EXPECT_EQ(0, umr_layout_true_lb(c));
    EXPECT_EQ(24, umr_layout_true_ub(c));
    EXPECT_EQ(1u, umr_layout_num_blocks(c));
    EXPECT_TRUE(umr_layout_is_contig(c));
}

TEST_F(layout, empty_layouts)
{
    umr_layout_t *e0 = own(mk_contig(0));
    umr_layout_t *e1 = own(mk_vector(0, 4, 16, nullptr));
    umr_layout_t *e2 = own(mk_vector(5, 0, 16, nullptr));

    for (umr_layout_t *e : {e0, e1, e2}) {
        EXPECT_EQ(0u, umr_layout_size(e));
        EXPECT_EQ(0, umr_layout_extent(e));
        EXPECT_EQ(0u, umr_layout_num_blocks(e));
        EXPECT_EQ(UCS_OK, umr_layout_pack(e, 3, nullptr, nullptr));
    }
    expect_same(e1, e2);
}

TEST_F(layout, null_inner_is_one_byte)
{
    umr_layout_t *v = own(mk_vector(4, 1, 3, nullptr));

    EXPECT_EQ(4u, umr_layout_size(v));
    EXPECT_EQ(10, umr_layout_extent(v));
    EXPECT_EQ(4u, umr_layout_num_blocks(v));
}

TEST_F(layout, mpi_bounds_of_negative_stride)
{
    umr_layout_t *c = own(mk_contig(4));
    umr_layout_t *v = own(mk_vector(3, 1, -16, c));

    EXPECT_EQ(-32, umr_layout_lb(v));
    EXPECT_EQ(36, umr_layout_extent(v));
    EXPECT_EQ(-32, umr_layout_true_lb(v));
    EXPECT_EQ(4, umr_layout_true_ub(v));
    EXPECT_FALSE(umr_layout_is_contig(v));
}

TEST_F(layout, resized_changes_bounds_not_bytes)
{
    umr_layout_t *c = own(mk_contig(8)), *r = nullptr, *v;

    ASSERT_EQ(UCS_OK, umr_layout_resized(c, -4, 32, &r));
    own(r);
    EXPECT_EQ(-4, umr_layout_lb(r));
    EXPECT_EQ(32, umr_layout_extent(r));
    EXPECT_EQ(0, umr_layout_true_lb(r));
    EXPECT_EQ(8, umr_layout_true_ub(r));
    EXPECT_FALSE(umr_layout_equal(c, r));

    /* the element extent of a vector's block comes from the resized type */
    v = own(mk_vector(1, 3, 0, r));
    EXPECT_EQ("vec(3,32,8)", shape(v));
    EXPECT_EQ(3u, umr_layout_num_blocks(v));
}

TEST_F(layout, constructors_do_not_own_inners)
{
    umr_layout_t *c = mk_contig(8);
    umr_layout_t *v = own(mk_vector(4, 1, 16, c));
    umr_layout_t *d = nullptr;

    umr_layout_free(c);
    ASSERT_EQ(UCS_OK, umr_layout_dup(v, &d));
    umr_layout_free(d);
    EXPECT_EQ(32u, umr_layout_size(v));
    EXPECT_EQ("vec(4,16,8)", shape(v));
}

TEST_F(layout, stable_hash)
{
    /* equal layouts hash equally across processes and runs (the value is
     * part of the cache-key format): a fresh run of this program, with
     * its own address space and heap, builds the same layout another way
     * and must print the same hash */
    umr_layout_t *c = own(mk_contig(8));
    umr_layout_t *v = own(mk_vector(4, 1, 64, c));
    const char *child   = getenv("UMR_TEST_HASH_CHILD");

    if (child != nullptr) {
        std::vector<void*> junk; /* move the heap */
        for (size_t i = 1; i < 64; ++i) {
            junk.push_back(malloc(i * 24));
        }
        umr_layout_t *bytes = own(mk_vector(4, 8, 64, nullptr));
        printf("UMR_HASH=%llx\n",
               (unsigned long long)umr_layout_hash(bytes));
        for (void *p : junk) {
            free(p);
        }
        return;
    }

    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    ASSERT_GT(len, 0);
    exe[len] = '\0';
    std::string cmd = std::string("UMR_TEST_HASH_CHILD=1 '") + exe +
                      "' --gtest_filter=layout.stable_hash 2>&1";
    FILE *f = popen(cmd.c_str(), "r");
    ASSERT_NE(nullptr, f);
    char line[512];
    unsigned long long peer = 0;
    bool found = false;
    while (fgets(line, sizeof(line), f) != nullptr) {
        found = found || (sscanf(line, "UMR_HASH=%llx", &peer) == 1);
    }
    EXPECT_EQ(0, pclose(f)) << cmd;
    ASSERT_TRUE(found) << "no hash from " << cmd;
    EXPECT_NE(0u, umr_layout_hash(v));
    EXPECT_EQ((unsigned long long)umr_layout_hash(v), peer);
}

/* ---- normalisation ------------------------------------------------------- */

TEST_F(layout, touching_vector_is_contiguous)
{
    umr_layout_t *c  = own(mk_contig(8));
    umr_layout_t *v  = own(mk_vector(16, 1, 8, c));
    umr_layout_t *c2 = own(mk_contig(128));

    expect_same(v, c2);
    EXPECT_TRUE(umr_layout_is_contig(v));
    EXPECT_EQ("128", shape(v));
}

TEST_F(layout, count_one_collapses)
{
    umr_layout_t *c = own(mk_contig(4));
    umr_layout_t *v = own(mk_vector(1, 3, 999, c));

    EXPECT_EQ("12", shape(v));
    EXPECT_EQ(12, umr_layout_extent(v));
}

TEST_F(layout, regular_indexed_becomes_vector)
{
    umr_layout_t *c = own(mk_contig(4)), *ix = nullptr;
    umr_layout_t *v = own(mk_vector(3, 2, 100, c));
    size_t bl[]         = {2, 2, 2};
    ptrdiff_t d[]       = {0, 100, 200};

    ASSERT_EQ(UCS_OK, umr_layout_indexed(3, bl, d, c, &ix));
    own(ix);
    expect_same(ix, v);
    EXPECT_EQ("vec(3,100,8)", shape(ix));
}

TEST_F(layout, regular_struct_becomes_vector)
{
    umr_layout_t *c = own(mk_contig(8)), *c2 = own(mk_contig(8));
    umr_layout_t *s = nullptr;
    size_t bl[]         = {1, 1, 1, 1};
    ptrdiff_t d[]       = {64, 96, 128, 160};
    const umr_layout_t *in[] = {c, c2, c, c2};

    ASSERT_EQ(UCS_OK, umr_layout_struct(4, bl, d, in, &s));
    own(s);
    EXPECT_EQ("vec(4,32,8)", shape(s));
    EXPECT_EQ(64, umr_layout_true_lb(s));
}

TEST_F(layout, adjacent_blocks_merge)
{
    umr_layout_t *c = own(mk_contig(8)), *ix = nullptr;
    size_t bl[]         = {1, 2, 1};
    ptrdiff_t d[]       = {0, 8, 24};

    ASSERT_EQ(UCS_OK, umr_layout_indexed(3, bl, d, c, &ix));
    own(ix);
    EXPECT_EQ("32", shape(ix));
    EXPECT_TRUE(umr_layout_is_contig(ix));
}

TEST_F(layout, nested_trivial_wrappers_collapse)
{
    umr_layout_t *c = own(mk_contig(16)), *s = nullptr, *ix = nullptr;
    size_t one[]        = {1};
    ptrdiff_t zero[]    = {0};
    const umr_layout_t *in[] = {c};

    ASSERT_EQ(UCS_OK, umr_layout_struct(1, one, zero, in, &s));
    own(s);
    ASSERT_EQ(UCS_OK, umr_layout_indexed(1, one, zero, s, &ix));
    own(ix);
    expect_same(ix, c);
}

TEST_F(layout, nested_vectors_flatten)
{
    /* vector of vectors whose inner span is the outer stride: one vector */
    umr_layout_t *c  = own(mk_contig(8));
    umr_layout_t *in = own(mk_vector(4, 1, 16, c));
    umr_layout_t *r  = nullptr, *v, *flat;

    ASSERT_EQ(UCS_OK, umr_layout_resized(in, 0, 64, &r));
    own(r);
    v    = own(mk_vector(3, 1, 64, r));
    flat = own(mk_vector(12, 1, 16, c));
    EXPECT_EQ("vec(12,16,8)", shape(v));
    EXPECT_EQ(shape(flat), shape(v));
}

TEST_F(layout, different_layouts_differ)
{
    umr_layout_t *c = own(mk_contig(8));
    umr_layout_t *a = own(mk_vector(3, 1, 16, c));
    umr_layout_t *b = own(mk_vector(3, 1, 24, c));
    umr_layout_t *r = nullptr;

    ASSERT_EQ(UCS_OK, umr_layout_resized(a, 0, 100, &r));
    own(r);
    EXPECT_FALSE(umr_layout_equal(a, b));
    EXPECT_FALSE(umr_layout_equal(a, r));
    EXPECT_NE(umr_layout_hash(a), umr_layout_hash(b));
    EXPECT_NE(umr_layout_hash(a), umr_layout_hash(r));
}

/* ---- errors --------------------------------------------------------------- */

TEST_F(layout, null_out_pointer)
{
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, umr_layout_contig(4, nullptr));
    EXPECT_NE(nullptr, strstr(umr_layout_last_error(), "layout_p"));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              umr_layout_vector(2, 1, 4, nullptr, nullptr));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              umr_layout_resized(nullptr, 0, 1, nullptr));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, umr_layout_dup(nullptr, nullptr));
}

TEST_F(layout, null_arrays)
{
    umr_layout_t *l = nullptr;
    size_t bl[]         = {1, 1};
    ptrdiff_t d[]       = {0, 8};

    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              umr_layout_indexed(2, nullptr, d, nullptr, &l));
    EXPECT_NE(nullptr, strstr(umr_layout_last_error(), "blocklens"));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              umr_layout_indexed(2, bl, nullptr, nullptr, &l));
    EXPECT_NE(nullptr, strstr(umr_layout_last_error(), "displs"));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              umr_layout_struct(2, bl, d, nullptr, &l));
    EXPECT_NE(nullptr, strstr(umr_layout_last_error(), "inners"));
    EXPECT_EQ(nullptr, l);

    /* count 0 needs no arrays: an empty layout */
    ASSERT_EQ(UCS_OK, umr_layout_struct(0, nullptr, nullptr, nullptr,
                                            &l));
    EXPECT_EQ(0u, umr_layout_size(l));
    umr_layout_free(l);
}

TEST_F(layout, negative_counts)
{
    umr_layout_t *l = nullptr;
    size_t bl[]         = {(size_t)-3};
    ptrdiff_t d[]       = {0};

    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              umr_layout_vector((size_t)-1, 1, 4, nullptr, &l));
    EXPECT_NE(nullptr, strstr(umr_layout_last_error(), "count"));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              umr_layout_vector(2, (size_t)-1, 4, nullptr, &l));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              umr_layout_indexed(1, bl, d, nullptr, &l));
    EXPECT_NE(nullptr, strstr(umr_layout_last_error(), "blocklens[0]"));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              umr_layout_indexed((size_t)-1, bl, d, nullptr, &l));
    EXPECT_EQ(nullptr, l);
}

TEST_F(layout, size_and_extent_overflow)
{
    umr_layout_t *big = own(mk_contig((size_t)1 << 40));
    umr_layout_t *c   = own(mk_contig(8));
    umr_layout_t *l   = nullptr;
    size_t bl[]           = {1, 1};
    ptrdiff_t d[]         = {PTRDIFF_MAX - 4, 0};

    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
              umr_layout_contig((size_t)PTRDIFF_MAX + 1, &l));
    /* size: 2^40 * 2^24 bytes */
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
              umr_layout_vector((size_t)1 << 24, 1, 1, big, &l));
    /* extent: 3 strides of 2^62 */
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
              umr_layout_vector(3, 1, (ptrdiff_t)1 << 62, c, &l));
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
              umr_layout_vector(3, 1, PTRDIFF_MIN / 2, c, &l));
    /* displacement + extent */
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT, umr_layout_indexed(2, bl, d, c, &l));
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
              umr_layout_resized(c, PTRDIFF_MAX, 2, &l));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, umr_layout_resized(c, 0, -8, &l));
    EXPECT_NE(nullptr, strstr(umr_layout_last_error(), "extent"));
    EXPECT_EQ(nullptr, l);
}

/* An element's true bounds may lie far from its lb and extent (resized),
 * so nesting can pull them more than ptrdiff_t apart although every extent
 * fits: such a layout cannot be addressed (the transport takes ub - lb as a
 * registration length) and is refused. The shape is the fuzzer's (seed
 * seed-true-span-overflow): 7 bytes 1.23e18 apart going down, resized to
 * extent 1, twice 7.38e18 apart going up. */
TEST_F(layout, true_span_overflow)
{
    umr_layout_t *c = own(mk_contig(1));
    umr_layout_t *down, *small, *l = nullptr;
    size_t bl[]         = {1, 1};
    ptrdiff_t far[]     = {PTRDIFF_MAX / 2 + 64, PTRDIFF_MIN / 2 - 64};
    ptrdiff_t at[]      = {0, 0};
    const umr_layout_t *parts[2];

    ASSERT_EQ(UCS_OK, umr_layout_vector(7, 1, -1229782938247303442l, c,
                                            &down));
    own(down);
    EXPECT_EQ(6 * 1229782938247303442l + 1,
              umr_layout_true_ub(down) - umr_layout_true_lb(down));
    ASSERT_EQ(UCS_OK, umr_layout_resized(down, 0, 1, &small));
    own(small);
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
              umr_layout_vector(2, 1, 7378697629483820653l, small, &l));
    EXPECT_NE(nullptr, strstr(umr_layout_last_error(), "true bounds"));
    EXPECT_EQ(nullptr, l);
    /* an eighth of that stride fits: the bytes are addressable */
    ASSERT_EQ(UCS_OK,
              umr_layout_vector(2, 1, 7378697629483820653l / 8, small,
                                &l));
    own(l);

    /* two parts pulled apart in a struct are refused as well */
    ASSERT_EQ(UCS_OK, umr_layout_indexed(1, bl, &far[0], c, &l));
    parts[0] = own(l);
    ASSERT_EQ(UCS_OK, umr_layout_indexed(1, bl, &far[1], c, &l));
    parts[1] = own(l);
    ASSERT_EQ(UCS_OK, umr_layout_resized(parts[0], 0, 8, &l));
    parts[0] = own(l);
    ASSERT_EQ(UCS_OK, umr_layout_resized(parts[1], 0, 8, &l));
    parts[1] = own(l);
    l = nullptr;
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
              umr_layout_struct(2, bl, at, parts, &l));
    EXPECT_EQ(nullptr, l);
}

TEST_F(layout, pack_argument_errors)
{
    umr_layout_t *c = own(mk_contig(8));
    umr_layout_t *v = own(mk_vector(4, 1, 16, c));
    char mem[64] = {0}, out[64];

    EXPECT_EQ(UCS_ERR_INVALID_PARAM, umr_layout_pack(nullptr, 1, mem, out));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, umr_layout_pack(v, 1, nullptr, out));
    EXPECT_NE(nullptr, strstr(umr_layout_last_error(), "base"));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, umr_layout_unpack(v, 1, mem, nullptr));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              umr_layout_pack_range(v, 1, mem, 30, 3, out));
    EXPECT_NE(nullptr, strstr(umr_layout_last_error(), "exceeds"));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              umr_layout_pack_range(v, 1, mem, SIZE_MAX, 2, out));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              umr_layout_unpack_range(v, 1, mem, 33, 0, out));
    EXPECT_EQ(UCS_OK, umr_layout_pack_range(v, 1, mem, 32, 0, out));
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
              umr_layout_pack(v, SIZE_MAX / 8, mem, out));
}

/* ---- pack ----------------------------------------------------------------- */

TEST_F(layout, pack_overlapping_and_backwards)
{
    umr_layout_t *c = own(mk_contig(4));
    umr_layout_t *v = own(mk_vector(3, 1, -2, c)); /* 0..3, -2..1, -4..-1 */
    char mem[16], out[12];

    for (int i = 0; i < 16; ++i) {
        mem[i] = (char)i;
    }
    ASSERT_EQ(UCS_OK, umr_layout_pack(v, 1, mem + 8, out));
    const char want[] = {8, 9, 10, 11, 6, 7, 8, 9, 4, 5, 6, 7};
    EXPECT_EQ(0, memcmp(want, out, sizeof(want)));
}

TEST_F(layout, pack_range_seeks_without_walking)
{
    /* 2^30 elements of 8 bytes on the same memory (stride 0): a range at
     * the end must cost its own bytes, not a walk over 8 GiB */
    umr_layout_t *c = own(mk_contig(8));
    umr_layout_t *v = own(mk_vector((size_t)1 << 30, 1, 0, c));
    std::vector<size_t> bl(100000, 1);
    std::vector<ptrdiff_t> d(bl.size());
    umr_layout_t *ix = nullptr;
    uint64_t mem = 0x0706050403020100ull, out = 0, got = 0;
    std::vector<char> big(bl.size() * 17);

    for (size_t i = 0; i < d.size(); ++i) {
        d[i] = (ptrdiff_t)(i * 17 + (i % 3)); /* irregular: a real list */
    }
    ASSERT_EQ(UCS_OK, umr_layout_indexed(bl.size(), bl.data(), d.data(),
                                             nullptr, &ix));
    own(ix);
    EXPECT_EQ(bl.size(), umr_layout_num_blocks(ix));

    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 1000; ++i) {
        ASSERT_EQ(UCS_OK, umr_layout_pack_range(
                  v, 1, &mem, ((size_t)8 << 30) - 5, 4, &out));
        ASSERT_EQ(UCS_OK, umr_layout_pack_range(
                  ix, 1, big.data(), 99990 - (i % 50), 1, &out));
    }
    double sec = std::chrono::duration<double>(
                 std::chrono::steady_clock::now() - t0).count();
    /* a hang guard, not a speed claim: walking from the stream start would
     * take 2^30 steps a call */
    EXPECT_LT(sec, umr_test::scaled(20.0))
            << "range packs walk from the stream start";

    /* and they are right: the last 5 bytes of the stream, first 4 of them */
    ASSERT_EQ(UCS_OK, umr_layout_pack_range(v, 1, &mem,
                                                ((size_t)8 << 30) - 5, 4,
                                                &got));
    EXPECT_EQ(0x06050403u, (uint32_t)got);
    big[99990 * 17 + 99990 % 3] = 42;
    ASSERT_EQ(UCS_OK, umr_layout_pack_range(ix, 1, big.data(), 99990, 1,
                                                &got));
    EXPECT_EQ(42, (char)got);
}

TEST_F(layout, pack_range_fragments)
{
    /* MTU-like fragments of a strided layout reassemble the whole pack */
    umr_layout_t *c = own(mk_contig(40));
    umr_layout_t *v = own(mk_vector(50, 1, 64, c));
    std::vector<uint8_t> mem(50 * 64), whole(2000), frag(2000);

    std::iota(mem.begin(), mem.end(), 0);
    ASSERT_EQ(UCS_OK, umr_layout_pack(v, 1, mem.data(), whole.data()));
    for (size_t off = 0; off < 2000; off += 333) {
        size_t len = std::min<size_t>(333, 2000 - off);
        ASSERT_EQ(UCS_OK, umr_layout_pack_range(v, 1, mem.data(), off,
                                                    len, frag.data() + off));
    }
    EXPECT_EQ(whole, frag);
}

/* ---- block walk ----------------------------------------------------------- */

int count_blocks(void *arg, ptrdiff_t offset, size_t len)
{
    ++*static_cast<int*>(arg);
    return 0;
}

int stop_after_two(void *arg, ptrdiff_t offset, size_t len)
{
    return ++*static_cast<int*>(arg) == 2;
}

TEST_F(layout, for_each_block)
{
    umr_layout_t *c = own(mk_contig(8));
    umr_layout_t *v = own(mk_vector(10, 1, 16, c));
    umr_layout_t *r = nullptr;
    int n = 0;

    /* the vector's extent is 152: elements touch, last and first merge */
    ASSERT_EQ(UCS_OK, umr_layout_for_each_block(v, 3, count_blocks, &n));
    EXPECT_EQ(28, n);
    n = 0;
    ASSERT_EQ(UCS_OK, umr_layout_for_each_block(v, 3, stop_after_two, &n));
    EXPECT_EQ(2, n);

    /* with a gap between elements nothing merges */
    ASSERT_EQ(UCS_OK, umr_layout_resized(v, 0, 160, &r));
    own(r);
    n = 0;
    ASSERT_EQ(UCS_OK, umr_layout_for_each_block(r, 3, count_blocks, &n));
    EXPECT_EQ(30, n);
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              umr_layout_for_each_block(v, 1, nullptr, nullptr));
}

/* ---- lowering rules ------------------------------------------------------- */

class layout_lower : public layout {
protected:
    umr_layout_plan_t *lower(const umr_layout_t *l, size_t count,
                             const umr_layout_limits_t *lim = nullptr)
    {
        umr_layout_plan_t *plan = nullptr;
        EXPECT_EQ(UCS_OK, umr_layout_lower(l, count, lim, &plan))
            << umr_layout_last_error();
        if (plan != nullptr) {
            m_plans.emplace_back(plan);
        }
        return plan;
    }

    void TearDown() override
    {
        for (auto p : m_plans) {
            umr_layout_plan_free(p);
        }
        layout::TearDown();
    }

    std::vector<umr_layout_plan_t*> m_plans;
};

void expect_entry(const umr_layout_entry_t &e, int64_t offset, uint32_t bc,
                  uint32_t skip, int32_t child)
{
    EXPECT_EQ(offset, e.offset);
    EXPECT_EQ(bc, e.bytes_count);
    EXPECT_EQ(skip, e.bytes_skip);
    EXPECT_EQ(child, e.child);
}

TEST_F(layout_lower, contiguous_is_one_list_entry)
{
    umr_layout_t *c = own(mk_contig(4096));
    umr_layout_plan_t *p = lower(c, 3);

    ASSERT_NE(nullptr, p);
    ASSERT_EQ(1u, p->num_keys);
    EXPECT_EQ(UMR_LAYOUT_KEY_LIST, p->keys[0].kind);
    ASSERT_EQ(1u, p->keys[0].num_entries);
    expect_entry(p->keys[0].entries[0], 0, 3 * 4096, 0, -1);
    EXPECT_EQ(4096.0 * 3, p->cost.mean_block);
}

TEST_F(layout_lower, list_keys_stay_under_2GiB)
{
    /* rdma-core sums list lengths in an int: 5 GiB contiguous has no plan */
    umr_layout_t *c = own(mk_contig((size_t)5 << 30));
    umr_layout_plan_t *p = nullptr;
    umr_layout_limits_t lim;

    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT, umr_layout_lower(c, 1, nullptr, &p));
    EXPECT_NE(nullptr, strstr(umr_layout_last_error(), "max_list_bytes"))
        << umr_layout_last_error();

    /* 3 GiB strided is one interleaved key: only lists have the limit */
    umr_layout_t *b = own(mk_contig(4096));
    umr_layout_t *v = own(mk_vector((size_t)3 << 18, 1, 8192, b));
    p = lower(v, 1);
    ASSERT_NE(nullptr, p);
    ASSERT_EQ(1u, p->num_keys) << to_string(p);
    EXPECT_EQ((size_t)3 << 30, p->keys[0].length);
    EXPECT_EQ(3u << 18, p->keys[0].repeat);

    /* 1.5 GiB contiguous: entries and list under 2^31 - 1 bytes */
    umr_layout_t *m = own(mk_contig((size_t)3 << 29));
    p = lower(m, 1);
    ASSERT_NE(nullptr, p);
    umr_layout_limits_default(&lim);
    hw_result hw = interpret_plan(p, lim);
    ASSERT_TRUE(hw.ok) << hw.error;
    ASSERT_EQ(1u, hw.blocks.size());
    EXPECT_EQ((size_t)3 << 29, hw.blocks[0].second);
}

TEST_F(layout_lower, strided_vector_is_one_interleaved_entry)
{
    umr_layout_t *c = own(mk_contig(256));
    umr_layout_t *v = own(mk_vector(1000, 1, 4096, c));
    umr_layout_plan_t *p = lower(v, 1);

    ASSERT_NE(nullptr, p);
    ASSERT_EQ(1u, p->num_keys) << to_string(p);
    EXPECT_EQ(UMR_LAYOUT_KEY_INTERLEAVED, p->keys[0].kind);
    EXPECT_EQ(1000u, p->keys[0].repeat);
    ASSERT_EQ(1u, p->keys[0].num_entries);
    expect_entry(p->keys[0].entries[0], 0, 256, 4096 - 256, -1);
    EXPECT_EQ(1u, p->cost.num_wqes);
    EXPECT_EQ(1u, p->cost.total_entries);
    EXPECT_EQ(1u, p->cost.depth);
    EXPECT_EQ(256000u, p->cost.total_bytes);
    EXPECT_EQ(256.0, p->cost.mean_block);
}

TEST_F(layout_lower, count_is_the_repeat)
{
    /* (vector of 2 blocks, count 100): 2 entries, repeat 100 */
    umr_layout_t *c = own(mk_contig(64));
    umr_layout_t *v = own(mk_vector(2, 1, 128, c));
    umr_layout_plan_t *p = lower(v, 100);

    ASSERT_NE(nullptr, p);
    ASSERT_EQ(1u, p->num_keys) << to_string(p);
    EXPECT_EQ(100u, p->keys[0].repeat);
    ASSERT_EQ(2u, p->keys[0].num_entries);
    expect_entry(p->keys[0].entries[0], 0, 64, 192 - 64, -1);
    expect_entry(p->keys[0].entries[1], 128, 64, 192 - 64, -1);
}

TEST_F(layout_lower, big_blocks_split_never_truncate)
{
    /* 50000 B blocks at stride 60000: one entry (both fields fit) */
    umr_layout_t *c1 = own(mk_contig(50000));
    umr_layout_t *v1 = own(mk_vector(100, 1, 60000, c1));
    umr_layout_plan_t *p = lower(v1, 1);

    ASSERT_NE(nullptr, p);
    ASSERT_EQ(1u, p->keys[0].num_entries) << to_string(p);
    expect_entry(p->keys[0].entries[0], 0, 50000, 10000, -1);

    /* bytes_count limit 1000: a 2500 B block takes 3 entries */
    umr_layout_t *c2 = own(mk_contig(2500));
    umr_layout_t *v2 = own(mk_vector(10, 1, 4000, c2));
    umr_layout_limits_t lim;
    umr_layout_limits_default(&lim);
    lim.max_bytes_count = 1000;
    p = lower(v2, 1, &lim);
    ASSERT_NE(nullptr, p);
    ASSERT_EQ(1u, p->num_keys) << to_string(p);
    EXPECT_EQ(10u, p->keys[0].repeat);
    ASSERT_EQ(3u, p->keys[0].num_entries);
    expect_entry(p->keys[0].entries[0], 0, 1000, 3000, -1);
    expect_entry(p->keys[0].entries[1], 1000, 1000, 3000, -1);
    expect_entry(p->keys[0].entries[2], 2000, 500, 3500, -1);

    /* 100000 B blocks do not fit 16 bits with any stride: a list */
    umr_layout_t *c3 = own(mk_contig(100000));
    umr_layout_t *v3 = own(mk_vector(4, 1, 200000, c3));
    p = lower(v3, 1);
    ASSERT_NE(nullptr, p);
    ASSERT_EQ(1u, p->num_keys) << to_string(p);
    EXPECT_EQ(UMR_LAYOUT_KEY_LIST, p->keys[0].kind);
    ASSERT_EQ(4u, p->keys[0].num_entries);
    expect_entry(p->keys[0].entries[3], 600000, 100000, 0, -1);
}

TEST_F(layout_lower, many_blocks_per_element_group_under_one_key)
{
    /* 1000 records of 4 KiB, 60 fields of 8 B each 64 B apart: 60 pieces
     * per repeat do not fit one key (51): two group keys (51 + 9 pieces)
     * over memory, and a top key interleaving them back */
    umr_layout_t *c   = own(mk_contig(8));
    umr_layout_t *rec = own(mk_vector(60, 1, 64, c)), *r = nullptr;

    ASSERT_EQ(UCS_OK, umr_layout_resized(rec, 0, 4096, &r));
    own(r);
    umr_layout_plan_t *p = lower(r, 1000);
    ASSERT_NE(nullptr, p);
    ASSERT_EQ(3u, p->num_keys) << to_string(p);
    EXPECT_EQ(51u, p->keys[0].num_entries);
    EXPECT_EQ(9u, p->keys[1].num_entries);
    expect_entry(p->keys[0].entries[1], 64, 8, 4088, -1);
    expect_entry(p->keys[1].entries[0], 51 * 64, 8, 4088, -1);
    EXPECT_EQ(1000u, p->keys[2].repeat);
    ASSERT_EQ(2u, p->keys[2].num_entries);
    expect_entry(p->keys[2].entries[0], 0, 51 * 8, 0, 0);
    expect_entry(p->keys[2].entries[1], 0, 9 * 8, 0, 1);
    EXPECT_EQ(2u, p->cost.depth);

    umr_layout_limits_t lim;
    umr_layout_limits_default(&lim);
    hw_result hw = interpret_plan(p, lim);
    ASSERT_TRUE(hw.ok) << hw.error;
    EXPECT_EQ(60000u, hw.blocks.size());
    EXPECT_EQ((block_list::value_type(4096 * 999 + 59 * 64, 8)),
              hw.blocks.back());
}

TEST_F(layout_lower, negative_stride_is_a_list_in_stream_order)
{
    umr_layout_t *c = own(mk_contig(512));
    umr_layout_t *v = own(mk_vector(4, 1, -1024, c));
    umr_layout_plan_t *p = lower(v, 1);

    ASSERT_NE(nullptr, p);
    ASSERT_EQ(1u, p->num_keys) << to_string(p);
    EXPECT_EQ(UMR_LAYOUT_KEY_LIST, p->keys[0].kind);
    ASSERT_EQ(4u, p->keys[0].num_entries);
    for (int i = 0; i < 4; ++i) {
        expect_entry(p->keys[0].entries[i], -1024 * i, 512, 0, -1);
    }
    EXPECT_EQ(-3072, p->span_lb);
    EXPECT_EQ(512, p->span_ub);
}

TEST_F(layout_lower, many_entries_nest_lists)
{
    /* 200 irregular blocks: 4 list keys of <= 52 under a top list */
    std::vector<size_t> bl(200, 1);
    std::vector<ptrdiff_t> d(200);
    umr_layout_t *c = own(mk_contig(64)), *ix = nullptr;

    for (size_t i = 0; i < d.size(); ++i) {
        d[i] = (ptrdiff_t)(i * 100 + (i * i) % 7);
    }
    ASSERT_EQ(UCS_OK, umr_layout_indexed(200, bl.data(), d.data(), c,
                                             &ix));
    own(ix);
    umr_layout_plan_t *p = lower(ix, 1);
    ASSERT_NE(nullptr, p);
    ASSERT_EQ(5u, p->num_keys) << to_string(p);
    for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(UMR_LAYOUT_KEY_LIST, p->keys[k].kind);
        EXPECT_EQ((k < 3) ? 52u : 44u, p->keys[k].num_entries);
    }
    ASSERT_EQ(4u, p->keys[4].num_entries);
    for (int k = 0; k < 4; ++k) {
        expect_entry(p->keys[4].entries[k], 0, p->keys[k].length, 0, k);
    }
    EXPECT_EQ(2u, p->cost.depth);
    EXPECT_EQ(204u, p->cost.total_entries);
    EXPECT_EQ(64.0, p->cost.mean_block);
}

/* A scatter/gather list (the transport's list key over a long iov): blocks
 * keep their memory index, only adjacent blocks of one memory merge, and
 * 200 blocks nest like any list. */
TEST_F(layout_lower, blocks_keep_their_memory)
{
    std::vector<umr_layout_block_t> b = {
        {1000, 64, 0}, {1064, 32, 0},   /* adjacent, same memory: merge */
        {1096, 16, 1},                  /* adjacent, other memory: kept */
        {0, 0, 2},                      /* empty: skipped */
        {-500, 8, 2}};
    umr_layout_plan_t *p = nullptr;

    ASSERT_EQ(UCS_OK, umr_layout_lower_blocks(b.data(), b.size(), nullptr, &p))
        << umr_layout_last_error();
    m_plans.emplace_back(p);
    ASSERT_EQ(1u, p->num_keys);
    ASSERT_EQ(3u, p->keys[0].num_entries);
    expect_entry(p->keys[0].entries[0], 1000, 96, 0, -1);
    expect_entry(p->keys[0].entries[1], 1096, 16, 0, -1);
    expect_entry(p->keys[0].entries[2], -500, 8, 0, -1);
    EXPECT_EQ(0u, p->keys[0].entries[0].mem);
    EXPECT_EQ(1u, p->keys[0].entries[1].mem);
    EXPECT_EQ(2u, p->keys[0].entries[2].mem);
    EXPECT_EQ(-500, p->span_lb);
    EXPECT_EQ(1112, p->span_ub);
    EXPECT_EQ(120u, p->cost.total_bytes);

    std::vector<umr_layout_block_t> many(200);
    for (size_t i = 0; i < many.size(); ++i) {
        many[i] = {(int64_t)(i * 100), 64, (uint32_t)i};
    }
    ASSERT_EQ(UCS_OK, umr_layout_lower_blocks(many.data(), many.size(),
                                              nullptr, &p));
    m_plans.emplace_back(p);
    ASSERT_EQ(5u, p->num_keys) << to_string(p);
    for (uint32_t k = 0; k < 4; ++k) {
        for (uint32_t e = 0; e < p->keys[k].num_entries; ++e) {
            EXPECT_EQ(k * 52 + e, p->keys[k].entries[e].mem);
            EXPECT_EQ((int64_t)(k * 52 + e) * 100, p->keys[k].entries[e].offset);
        }
    }
    EXPECT_EQ(200u * 64, p->cost.total_bytes);

    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              umr_layout_lower_blocks(b.data() + 3, 1, nullptr, &p));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              umr_layout_lower_blocks(nullptr, 1, nullptr, &p));
}

TEST_F(layout_lower, limits_errors)
{
    std::vector<size_t> bl(200, 1);
    std::vector<ptrdiff_t> d(200);
    umr_layout_t *c = own(mk_contig(64)), *ix = nullptr;
    umr_layout_t *e = own(mk_contig(0));
    umr_layout_plan_t *p = nullptr;
    umr_layout_limits_t lim;

    for (size_t i = 0; i < d.size(); ++i) {
        d[i] = (ptrdiff_t)(i * 100 + (i * i) % 7);
    }
    ASSERT_EQ(UCS_OK, umr_layout_indexed(200, bl.data(), d.data(), c,
                                             &ix));
    own(ix);

    EXPECT_EQ(UCS_ERR_INVALID_PARAM, umr_layout_lower(nullptr, 1, nullptr, &p));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, umr_layout_lower(ix, 1, nullptr, nullptr));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, umr_layout_lower(ix, 0, nullptr, &p));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, umr_layout_lower(e, 5, nullptr, &p));

    umr_layout_limits_default(&lim);
    lim.max_list = 0;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, umr_layout_lower(ix, 1, &lim, &p));

    umr_layout_limits_default(&lim);
    lim.max_depth = 1; /* 200 blocks need a key over keys */
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT, umr_layout_lower(ix, 1, &lim, &p));
    EXPECT_NE(nullptr, strstr(umr_layout_last_error(), "max_depth"));

    umr_layout_limits_default(&lim);
    lim.max_keys = 4; /* needs 5 */
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT, umr_layout_lower(ix, 1, &lim, &p));
    EXPECT_NE(nullptr, strstr(umr_layout_last_error(), "max_keys"));

    umr_layout_limits_default(&lim);
    lim.max_list = 1; /* a list of one entry can never hold two */
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT, umr_layout_lower(ix, 1, &lim, &p));
    EXPECT_EQ(nullptr, p);
}

TEST_F(layout_lower, huge_layout_fails_fast)
{
    /* 2^36 one-byte blocks at a negative stride can never fit 1024 keys:
     * the walk must stop early, not build 2^36 items */
    umr_layout_t *v = own(mk_vector((size_t)1 << 36, 1, -2, nullptr));
    umr_layout_plan_t *p = nullptr;

    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT, umr_layout_lower(v, 1, nullptr, &p));
    double sec = std::chrono::duration<double>(
                 std::chrono::steady_clock::now() - t0).count();
    /* a hang guard, not a speed claim: 2^36 items would take hours */
    EXPECT_LT(sec, umr_test::scaled(20.0));
}

} /* namespace */
