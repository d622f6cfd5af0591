/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Property tests of the layout engine over seeded random nested layouts:
 * every query, pack/unpack (whole and by ranges), the block walk and the
 * lowered UMR plans (run through the hardware model) must agree with the
 * naive reference walker byte for byte.
 *
 * UMR_TEST_SEED=<n> picks the base seed, UMR_TEST_LAYOUT_ITERS=<n> the number
 * of layouts. A failure prints the seed of the failing layout and the layout.
 */
#include "umr_test_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace {

using namespace umr_test;

uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    return (v != nullptr) ? strtoull(v, nullptr, 0) : dflt;
}

struct stats {
    size_t layouts        = 0;
    size_t lowered_small  = 0;   /* plans under random limits */
    size_t exceeded_small = 0;   /* UCS_ERR_EXCEEDS_LIMIT under them */
    size_t nested         = 0;   /* plans with depth >= 2 */
    size_t nested3        = 0;   /* depth >= 3 */
    size_t interleaved    = 0;   /* keys with repeat > 1 */
    size_t grouped        = 0;   /* interleaved keys over interleaved keys */
    size_t split          = 0;   /* blocks cut by the 16-bit limit */
    size_t negative       = 0;   /* layouts with a backwards step */
    size_t empty          = 0;
};

/* a byte value only a given address can have */
inline uint8_t pattern(ptrdiff_t off)
{
    uint64_t x = (uint64_t)off * 0x9e3779b97f4a7c15ull;
    return (uint8_t)((x >> 56) ^ (x >> 24));
}

std::vector<std::pair<size_t, size_t>> random_pieces(std::mt19937_64 &rng,
                                                     size_t total)
{
    std::vector<std::pair<size_t, size_t>> pieces;
    size_t off = 0;

    while (off < total) {
        size_t n = std::uniform_int_distribution<size_t>(1, total - off)(rng);
        if (rng() % 2) {
            n = std::min<size_t>(n, 1 + rng() % 13); /* many small pieces */
        }
        pieces.emplace_back(off, n);
        off += n;
    }
    std::shuffle(pieces.begin(), pieces.end(), rng); /* any order works */
    return pieces;
}

int collect_block(void *arg, ptrdiff_t offset, size_t len)
{
    static_cast<block_list*>(arg)->emplace_back(offset, len);
    return 0;
}

void account_plan(const umr_layout_plan_t *plan, const hw_result &hw,
                  stats &st)
{
    st.nested  += (hw.max_depth >= 2);
    st.nested3 += (hw.max_depth >= 3);
    for (uint32_t k = 0; k < plan->num_keys; ++k) {
        const umr_layout_key_t &key = plan->keys[k];
        st.interleaved += (key.kind == UMR_LAYOUT_KEY_INTERLEAVED) &&
                          (key.repeat > 1);
        st.grouped     += (key.kind == UMR_LAYOUT_KEY_INTERLEAVED) &&
                          (key.entries[0].child >= 0);
    }
}

/* Returns "" or what went wrong. */
std::string check_one(const spec_ptr &spec, std::mt19937_64 &rng, stats &st,
                      const umr_layout_limits_t *must_fit = nullptr)
{
    std::ostringstream err;
    ucs_status_t status;

    layout_ptr l = build(spec, &status);
    if (!l) {
        err << "build failed: " << status_str(status) << ": "
            << umr_layout_last_error();
        return err.str();
    }

    /* queries */
    ref_layout ref    = reference(spec);
    block_list blocks = merge_blocks(ref.bytes);
    size_t size       = ref.bytes.size();
    bool contig       = (size == 0) ||
                        ((blocks.size() == 1) && (ref.true_lb() == ref.lb) &&
                         (ref.extent() == (ptrdiff_t)size));
    if ((umr_layout_size(l.get()) != size) ||
        (umr_layout_lb(l.get()) != ref.lb) ||
        (umr_layout_extent(l.get()) != ref.extent()) ||
        (umr_layout_true_lb(l.get()) != ref.true_lb()) ||
        (umr_layout_true_ub(l.get()) != ref.true_ub()) ||
        (umr_layout_num_blocks(l.get()) != blocks.size()) ||
        (!!umr_layout_is_contig(l.get()) != contig)) {
        err << "queries: got size " << umr_layout_size(l.get()) << " lb "
            << umr_layout_lb(l.get()) << " extent "
            << umr_layout_extent(l.get()) << " true ["
            << umr_layout_true_lb(l.get()) << ","
            << umr_layout_true_ub(l.get()) << ") blocks "
            << umr_layout_num_blocks(l.get()) << " contig "
            << umr_layout_is_contig(l.get()) << "; want size " << size
            << " lb " << ref.lb << " extent " << ref.extent() << " true ["
            << ref.true_lb() << "," << ref.true_ub() << ") blocks "
            << blocks.size() << " contig " << contig;
        return err.str();
    }

    /* same constructors, same key; dup is equal */
    layout_ptr again = build(spec);
    umr_layout_t *dup = nullptr;
    if (!again || !umr_layout_equal(l.get(), again.get()) ||
        (umr_layout_hash(l.get()) != umr_layout_hash(again.get())) ||
        (umr_layout_dup(l.get(), &dup) != UCS_OK) ||
        !umr_layout_equal(l.get(), dup)) {
        umr_layout_free(dup);
        return "rebuilt layout or dup is not equal";
    }
    umr_layout_free(dup);

    size_t count = 1 + rng() % 3;
    std::vector<ptrdiff_t> stream = reference_stream(ref, count);
    size_t total = stream.size();
    st.empty += (total == 0);
    for (size_t k = 1; k < total; ++k) {
        if (stream[k] < stream[k - 1]) {
            ++st.negative;
            break;
        }
    }

    /* memory covering the bytes, the bounds and a margin on both sides */
    ptrdiff_t lo = 0, hi = 1;
    ptrdiff_t span_lb = PTRDIFF_MAX, span_ub = PTRDIFF_MIN;
    for (ptrdiff_t x : stream) {
        lo      = std::min(lo, x);
        hi      = std::max(hi, x + 1);
        span_lb = std::min(span_lb, x);
        span_ub = std::max(span_ub, x + 1);
    }
    const ptrdiff_t pad = 64;
    std::vector<uint8_t> mem(hi - lo + 2 * pad);
    uint8_t *base = mem.data() + pad - lo;
    for (size_t k = 0; k < mem.size(); ++k) {
        mem[k] = pattern((ptrdiff_t)k + lo - pad);
    }

    /* pack */
    std::vector<uint8_t> packed(total + 32, 0xa5), want(total);
    for (size_t k = 0; k < total; ++k) {
        want[k] = pattern(stream[k]);
    }
    status = umr_layout_pack(l.get(), count, base, packed.data());
    if ((status != UCS_OK) ||
        !std::equal(want.begin(), want.end(), packed.begin()) ||
        (std::count(packed.begin() + total, packed.end(), 0xa5) != 32)) {
        err << "pack x" << count << ": " << status_str(status)
            << " or bytes differ";
        return err.str();
    }

    /* pack by ranges, in random order */
    std::vector<uint8_t> ranged(total + 32, 0x5a);
    for (auto &pc : random_pieces(rng, total)) {
        status = umr_layout_pack_range(l.get(), count, base, pc.first,
                                       pc.second,
                                       ranged.data() + pc.first);
        if (status != UCS_OK) {
            err << "pack_range [" << pc.first << ",+" << pc.second
                << "): " << status_str(status);
            return err.str();
        }
    }
    if (!std::equal(want.begin(), want.end(), ranged.begin()) ||
        (std::count(ranged.begin() + total, ranged.end(), 0x5a) != 32)) {
        err << "pack_range x" << count << ": bytes differ";
        return err.str();
    }

    /* unpack: the stream lands where the layout says, nowhere else */
    std::vector<uint8_t> src(total);
    for (auto &b : src) {
        b = (uint8_t)rng();
    }
    std::vector<uint8_t> expect(mem), got(mem), got_ranged(mem);
    for (size_t k = 0; k < total; ++k) {
        expect[stream[k] - lo + pad] = src[k]; /* later bytes win */
    }
    status = umr_layout_unpack(l.get(), count, got.data() + pad - lo,
                               src.data());
    if ((status != UCS_OK) || (got != expect)) {
        err << "unpack x" << count << ": " << status_str(status)
            << " or memory differs";
        return err.str();
    }
    /* ranges in stream order: overlapping layouts keep "later wins" */
    auto pieces = random_pieces(rng, total);
    std::sort(pieces.begin(), pieces.end());
    for (auto &pc : pieces) {
        status = umr_layout_unpack_range(l.get(), count,
                                         got_ranged.data() + pad - lo,
                                         pc.first, pc.second,
                                         src.data() + pc.first);
        if (status != UCS_OK) {
            err << "unpack_range: " << status_str(status);
            return err.str();
        }
    }
    if (got_ranged != expect) {
        return "unpack_range: memory differs";
    }

    /* block walk */
    block_list want_blocks = merge_blocks(stream), walked;
    status = umr_layout_for_each_block(l.get(), count, collect_block, &walked);
    if ((status != UCS_OK) || (walked != want_blocks)) {
        err << "for_each_block: " << status_str(status) << " got "
            << to_string(walked) << " want " << to_string(want_blocks);
        return err.str();
    }

    /* lowering with the real limits (or must_fit) always fits these */
    umr_layout_plan_t *plan = nullptr;
    umr_layout_limits_t lim;
    umr_layout_limits_default(&lim);
    if (must_fit != nullptr) {
        lim = *must_fit;
    }
    status = umr_layout_lower(l.get(), count, must_fit, &plan);
    if (total == 0) {
        if (status != UCS_ERR_INVALID_PARAM) {
            return "lower of an empty layout did not fail with INVALID_PARAM";
        }
        return "";
    }
    if (status != UCS_OK) {
        err << "lower (default limits): " << status_str(status) << ": "
            << umr_layout_last_error();
        return err.str();
    }
    hw_result hw = interpret_plan(plan, lim);
    if (!hw.ok || (hw.blocks != want_blocks) || (plan->span_lb != span_lb) ||
        (plan->span_ub != span_ub)) {
        err << "plan (default limits) " << (hw.ok ? "addresses other bytes"
                                                  : hw.error)
            << ": " << to_string(plan) << "; got " << to_string(hw.blocks)
            << " want " << to_string(want_blocks) << " span ["
            << plan->span_lb << "," << plan->span_ub << ") want [" << span_lb
            << "," << span_ub << ")";
        umr_layout_plan_free(plan);
        return err.str();
    }
    account_plan(plan, hw, st);
    umr_layout_plan_free(plan);

    /* small random limits: splitting and nesting paths */
    lim    = random_limits(rng);
    status = umr_layout_lower(l.get(), count, &lim, &plan);
    if (status == UCS_ERR_EXCEEDS_LIMIT) {
        ++st.exceeded_small;
        return "";
    }
    if (status != UCS_OK) {
        err << "lower (small limits): " << status_str(status);
        return err.str();
    }
    hw = interpret_plan(plan, lim);
    if (!hw.ok || (hw.blocks != want_blocks)) {
        err << "plan (limits il " << lim.max_interleaved << " list "
            << lim.max_list << " bc " << lim.max_bytes_count << " stride "
            << lim.max_stride << " list_bytes " << lim.max_list_bytes
            << " key_bytes " << lim.max_key_bytes << " depth "
            << lim.max_depth << " keys " << lim.max_keys << ") "
            << (hw.ok ? "addresses other bytes" : hw.error) << ": "
            << to_string(plan) << "; got " << to_string(hw.blocks)
            << " want " << to_string(want_blocks);
        umr_layout_plan_free(plan);
        return err.str();
    }
    ++st.lowered_small;
    account_plan(plan, hw, st);
    for (uint32_t k = 0; k < plan->num_keys; ++k) {
        for (uint32_t i = 0; i < plan->keys[k].num_entries; ++i) {
            st.split += (plan->keys[k].kind == UMR_LAYOUT_KEY_INTERLEAVED) &&
                        (plan->keys[k].entries[i].bytes_count ==
                         lim.max_bytes_count) &&
                        (plan->keys[k].entries[i].child < 0);
        }
    }
    umr_layout_plan_free(plan);
    return "";
}

TEST(layout_random, nested_layouts_match_reference)
{
    uint64_t seed  = env_u64("UMR_TEST_SEED", 20261129);
    uint64_t iters = env_u64("UMR_TEST_LAYOUT_ITERS", 10000);
    stats st;

    printf("[ layout   ] base seed %llu, %llu layouts "
           "(UMR_TEST_SEED / UMR_TEST_LAYOUT_ITERS)\n",
           (unsigned long long)seed, (unsigned long long)iters);
    for (uint64_t i = 0; i < iters; ++i) {
        std::mt19937_64 rng(seed + i);
        spec_ptr spec = random_layout(rng);
        std::string msg = check_one(spec, rng, st);
        ++st.layouts;
        ASSERT_EQ("", msg) << "seed " << (seed + i) << " (rerun with "
                           << "UMR_TEST_SEED=" << (seed + i)
                           << " UMR_TEST_LAYOUT_ITERS=1)\n  layout "
                           << to_string(spec);
    }

    printf("[ layout   ] %zu layouts: %zu with backward steps, %zu empty; "
           "plans: %zu nested (%zu depth>=3), %zu interleaved keys with "
           "repeat, %zu over grouped keys, %zu split 16-bit pieces; small "
           "limits: %zu lowered, %zu exceeded\n", st.layouts, st.negative,
           st.empty, st.nested, st.nested3, st.interleaved, st.grouped,
           st.split, st.lowered_small, st.exceeded_small);

    /* the generator must reach the paths this test exists for */
    if (iters >= 1000) {
        EXPECT_GT(st.negative, iters / 50);
        EXPECT_GT(st.nested, iters / 20);
        EXPECT_GT(st.nested3, iters / 200);
        EXPECT_GT(st.interleaved, iters / 10);
        EXPECT_GT(st.grouped, iters / 100);
        EXPECT_GT(st.split, iters / 50);
        EXPECT_GT(st.lowered_small, iters / 2);
    }
}

/* Deeper and bigger layouts, fewer of them. */
TEST(layout_random, deep_layouts_match_reference)
{
    uint64_t seed  = env_u64("UMR_TEST_SEED", 777) + 1000000;
    uint64_t iters = env_u64("UMR_TEST_LAYOUT_ITERS", 10000) / 10;
    random_params p;
    umr_layout_limits_t big;
    stats st;

    /* 8 KiB of 1-byte blocks can need thousands of keys: allow them */
    umr_layout_limits_default(&big);
    big.max_keys  = 1u << 20;
    big.max_depth = 8;
    p.max_depth = 7;
    p.max_size  = 8192;
    p.max_span  = 65536;
    p.max_count = 9;
    printf("[ layout   ] base seed %llu, %llu deep layouts\n",
           (unsigned long long)seed, (unsigned long long)iters);
    for (uint64_t i = 0; i < iters; ++i) {
        std::mt19937_64 rng(seed + i);
        spec_ptr spec = random_layout(rng, p);
        std::string msg = check_one(spec, rng, st, &big);
        ASSERT_EQ("", msg) << "seed " << (seed + i) << " (deep)\n  layout "
                           << to_string(spec);
    }
}

} /* namespace */
