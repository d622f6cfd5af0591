/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * umr_layout_encode / umr_layout_decode (a target layout carried in a
 * one-sided key request, umr_mpi_rma_wire.h): seeded random nested layouts
 * come back equal (the same bytes in the same order, lb and extent) and
 * pack the same stream; bad bytes (every truncation, random words) are
 * refused or decode to some layout, never crash; an encoding longer than
 * the buffer, an empty layout and a misaligned buffer are refused.
 *
 * UMR_TEST_SEED=<n> picks the base seed, UMR_TEST_LAYOUT_ITERS=<n> the
 * number of layouts.
 */
#include "umr_test_layout.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

namespace {

using namespace umr_test;

uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    return (v != nullptr) ? strtoull(v, nullptr, 0) : dflt;
}

std::vector<uint8_t> pack_of(const umr_layout_t *l, size_t count,
                             const std::vector<uint8_t> &mem, ptrdiff_t base)
{
    std::vector<uint8_t> out(umr_layout_size(l) * count);

    EXPECT_EQ(UCS_OK, umr_layout_pack(l, count, mem.data() + base,
                                      out.data()));
    return out;
}

TEST(layout_wire, random_layouts_round_trip)
{
    uint64_t seed  = env_u64("UMR_TEST_SEED", 4242);
    uint64_t iters = env_u64("UMR_TEST_LAYOUT_ITERS", 2000);
    std::vector<uint64_t> buf(8192);
    size_t done = 0;

    for (uint64_t i = 0; i < iters; ++i) {
        std::mt19937_64 rng(seed + i);
        spec_ptr spec   = random_layout(rng);
        layout_ptr l    = build(spec);
        umr_layout_t *d = nullptr;
        size_t len      = 0;

        if (!l || (umr_layout_size(l.get()) == 0)) {
            continue;   /* empty: never encoded (next test) */
        }
        ASSERT_EQ(UCS_OK, umr_layout_encode(l.get(), buf.data(),
                                            buf.size() * 8, &len))
            << "seed " << (seed + i) << ": " << to_string(spec);
        ASSERT_EQ(UCS_OK, umr_layout_decode(buf.data(), len, &d))
            << "seed " << (seed + i) << ": " << umr_layout_last_error();
        layout_ptr dp(d);
        EXPECT_TRUE(umr_layout_equal(l.get(), d))
            << "seed " << (seed + i) << ": " << to_string(spec);
        EXPECT_EQ(umr_layout_extent(l.get()), umr_layout_extent(d));
        EXPECT_EQ(umr_layout_lb(l.get()), umr_layout_lb(d));
        EXPECT_EQ(umr_layout_num_blocks(l.get()), umr_layout_num_blocks(d));

        /* three elements pack the same stream */
        ptrdiff_t lo = std::min<ptrdiff_t>(umr_layout_true_lb(l.get()),
                           umr_layout_true_lb(l.get()) +
                           2 * umr_layout_extent(l.get()));
        ptrdiff_t hi = std::max<ptrdiff_t>(umr_layout_true_ub(l.get()),
                           umr_layout_true_ub(l.get()) +
                           2 * umr_layout_extent(l.get()));
        std::vector<uint8_t> mem(hi - lo);
        for (size_t b = 0; b < mem.size(); ++b) {
            mem[b] = (uint8_t)(b * 131 + 7);
        }
        EXPECT_EQ(pack_of(l.get(), 3, mem, -lo), pack_of(d, 3, mem, -lo))
            << "seed " << (seed + i);
        ++done;
    }
    EXPECT_GT(done, iters / 2);
}

TEST(layout_wire, bad_bytes_refused_never_crash)
{
    std::mt19937_64 rng(99);
    std::vector<uint64_t> buf(8192), junk(64);
    size_t len = 0, cut, refused = 0;
    umr_layout_t *d;

    for (int i = 0; i < 200; ++i) {
        spec_ptr spec = random_layout(rng);
        layout_ptr l  = build(spec);

        if (!l || (umr_layout_size(l.get()) == 0) ||
            (umr_layout_encode(l.get(), buf.data(), buf.size() * 8, &len) !=
             UCS_OK)) {
            continue;
        }
        /* every truncation: refused (the words left never make a whole
         * layout) */
        for (cut = 0; cut < len; cut += 8) {
            d = nullptr;
            EXPECT_NE(UCS_OK, umr_layout_decode(buf.data(), cut, &d)) << cut;
            ++refused;
        }
        /* not a multiple of 8 bytes */
        EXPECT_NE(UCS_OK, umr_layout_decode(buf.data(), len - 1, &d));
        /* an encoding longer than the buffer given */
        if (len > 8) {
            EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
                      umr_layout_encode(l.get(), buf.data(), len - 8, &cut));
        }
    }
    EXPECT_GT(refused, 0u);
    /* random words: refused, or some valid layout; no crash, no leak */
    for (int i = 0; i < 2000; ++i) {
        for (auto &w : junk) {
            w = rng() % 5;   /* small words: kinds and counts that parse */
        }
        d = nullptr;
        if (umr_layout_decode(junk.data(), 8 * (1 + rng() % junk.size()),
                              &d) == UCS_OK) {
            umr_layout_free(d);
        }
    }
}

TEST(layout_wire, empty_and_misaligned_refused)
{
    std::vector<uint64_t> buf(16);
    umr_layout_t *empty = nullptr, *l = nullptr, *d = nullptr;
    size_t len;

    ASSERT_EQ(UCS_OK, umr_layout_contig(0, &empty));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              umr_layout_encode(empty, buf.data(), 128, &len));
    ASSERT_EQ(UCS_OK, umr_layout_contig(16, &l));
    EXPECT_NE(UCS_OK, umr_layout_encode(l, (char*)buf.data() + 4, 64, &len));
    ASSERT_EQ(UCS_OK, umr_layout_encode(l, buf.data(), 128, &len));
    EXPECT_NE(UCS_OK, umr_layout_decode((char*)buf.data() + 4, len, &d));
    umr_layout_free(empty);
    umr_layout_free(l);
}

} /* namespace */
