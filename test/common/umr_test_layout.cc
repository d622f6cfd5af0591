/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Shared layout test utilities: see umr_test_layout.h.
 */
#include "umr_test_layout.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <sstream>

namespace umr_test {

/* ---- specs -------------------------------------------------------------- */

spec_ptr contig(size_t len)
{
    auto s  = std::make_shared<layout_spec>();
    s->kind = layout_spec::CONTIG;
    s->len  = len;
    return s;
}

spec_ptr vector(size_t count, size_t blocklen, ptrdiff_t stride,
                spec_ptr inner)
{
    auto s      = std::make_shared<layout_spec>();
    s->kind     = layout_spec::VECTOR;
    s->count    = count;
    s->blocklen = blocklen;
    s->stride   = stride;
    s->inners.push_back(inner);
    return s;
}

spec_ptr indexed(const std::vector<size_t> &blocklens,
                 const std::vector<ptrdiff_t> &displs, spec_ptr inner)
{
    auto s       = std::make_shared<layout_spec>();
    s->kind      = layout_spec::INDEXED;
    s->blocklens = blocklens;
    s->displs    = displs;
    s->inners.push_back(inner);
    return s;
}

spec_ptr structure(const std::vector<size_t> &blocklens,
                   const std::vector<ptrdiff_t> &displs,
                   const std::vector<spec_ptr> &inners)
{
    auto s       = std::make_shared<layout_spec>();
    s->kind      = layout_spec::STRUCT;
    s->blocklens = blocklens;
    s->displs    = displs;
    s->inners    = inners;
    return s;
}

spec_ptr resized(spec_ptr inner, ptrdiff_t lb, ptrdiff_t extent)
{
    auto s    = std::make_shared<layout_spec>();
    s->kind   = layout_spec::RESIZED;
    s->lb     = lb;
    s->extent = extent;
    s->inners.push_back(inner);
    return s;
}

static void spec_str(const spec_ptr &s, std::ostringstream &os)
{
    if (!s) {
        os << "B";
        return;
    }
    switch (s->kind) {
    case layout_spec::CONTIG:
        os << "contig(" << s->len << ")";
        break;
    case layout_spec::VECTOR:
        os << "vector(" << s->count << "," << s->blocklen << "," << s->stride
           << ",";
        spec_str(s->inners[0], os);
        os << ")";
        break;
    case layout_spec::INDEXED:
    case layout_spec::STRUCT:
        os << ((s->kind == layout_spec::INDEXED) ? "indexed([" : "struct([");
        for (size_t i = 0; i < s->blocklens.size(); ++i) {
            os << (i ? " " : "") << s->blocklens[i] << "@" << s->displs[i];
            if (s->kind == layout_spec::STRUCT) {
                os << ":";
                spec_str(s->inners[i], os);
            }
        }
        os << "]";
        if (s->kind == layout_spec::INDEXED) {
            os << ",";
            spec_str(s->inners[0], os);
        }
        os << ")";
        break;
    case layout_spec::RESIZED:
        os << "resized(";
        spec_str(s->inners[0], os);
        os << "," << s->lb << "," << s->extent << ")";
        break;
    }
}

std::string to_string(const spec_ptr &spec)
{
    std::ostringstream os;
    spec_str(spec, os);
    return os.str();
}

std::string status_str(ucs_status_t status)
{
    switch (status) {
    case UCS_OK:                return "UCS_OK";
    case UCS_ERR_INVALID_PARAM: return "UCS_ERR_INVALID_PARAM";
    case UCS_ERR_NO_MEMORY:     return "UCS_ERR_NO_MEMORY";
    case UCS_ERR_EXCEEDS_LIMIT: return "UCS_ERR_EXCEEDS_LIMIT";
    case UCS_ERR_UNSUPPORTED:   return "UCS_ERR_UNSUPPORTED";
    default:                    return "status " + std::to_string((int)status);
    }
}

layout_ptr build(const spec_ptr &s, ucs_status_t *status_p)
{
    ucs_status_t dummy;
    ucs_status_t &status = status_p ? *status_p : dummy;
    umr_layout_t *out = nullptr;
    std::vector<layout_ptr> inners;
    std::vector<const umr_layout_t*> raw;

    status = UCS_OK;
    if (!s) {
        /* "one byte" as a standalone layout */
        status = umr_layout_contig(1, &out);
        return layout_ptr(out);
    }

    for (const spec_ptr &in : s->inners) {
        if (!in) {
            raw.push_back(nullptr);
            continue;
        }
        inners.push_back(build(in, &status));
        if (!inners.back()) {
            return layout_ptr();
        }
        raw.push_back(inners.back().get());
    }

    switch (s->kind) {
    case layout_spec::CONTIG:
        status = umr_layout_contig(s->len, &out);
        break;
    case layout_spec::VECTOR:
        status = umr_layout_vector(s->count, s->blocklen, s->stride,
                                   raw[0], &out);
        break;
    case layout_spec::INDEXED:
        status = umr_layout_indexed(s->blocklens.size(),
                                    s->blocklens.data(), s->displs.data(),
                                    raw[0], &out);
        break;
    case layout_spec::STRUCT:
        status = umr_layout_struct(s->blocklens.size(),
                                   s->blocklens.data(), s->displs.data(),
                                   raw.data(), &out);
        break;
    case layout_spec::RESIZED:
        status = umr_layout_resized(raw[0], s->lb, s->extent, &out);
        break;
    }
    return layout_ptr((status == UCS_OK) ? out : nullptr);
}

/* ---- naive reference ---------------------------------------------------- */

ptrdiff_t ref_layout::true_lb() const
{
    return bytes.empty() ? 0 : *std::min_element(bytes.begin(), bytes.end());
}

ptrdiff_t ref_layout::true_ub() const
{
    return bytes.empty() ? 0 :
           (*std::max_element(bytes.begin(), bytes.end()) + 1);
}

namespace {

/* MPI-3.1 4.1.7: explicit markers beat data bounds; empty types without
 * markers have no effect (no alignment in specs: epsilon is 0) */
struct bounds {
    bool      any[2] = {false, false};   /* lb: [0] data, [1] markers */
    bool      anu[2] = {false, false};   /* ub */
    ptrdiff_t lb[2]  = {0, 0};
    ptrdiff_t ub[2]  = {0, 0};

    void add(const ref_layout &in, ptrdiff_t l, ptrdiff_t u)
    {
        bool data = !in.bytes.empty();
        if (data || in.lb_marked) {
            int m = in.lb_marked;
            lb[m]  = any[m] ? std::min(lb[m], l) : l;
            any[m] = true;
        }
        if (data || in.ub_marked) {
            int m = in.ub_marked;
            ub[m]  = anu[m] ? std::max(ub[m], u) : u;
            anu[m] = true;
        }
    }

    void get(ref_layout &out) const
    {
        out.lb_marked = any[1];
        out.ub_marked = anu[1];
        out.lb = any[1] ? lb[1] : (any[0] ? lb[0] : 0);
        out.ub = anu[1] ? ub[1] : (anu[0] ? ub[0] : 0);
    }
};

/* appends `blocklen` copies of inner at disp + j * extent(inner) */
void ref_block(const ref_layout &in, size_t blocklen, ptrdiff_t disp,
               ref_layout &out, bounds &b)
{
    for (size_t j = 0; j < blocklen; ++j) {
        ptrdiff_t pos = disp + (ptrdiff_t)j * in.extent();
        for (ptrdiff_t x : in.bytes) {
            out.bytes.push_back(pos + x);
        }
        b.add(in, pos + in.lb, pos + in.ub);
    }
}

} /* namespace */

ref_layout reference(const spec_ptr &s)
{
    ref_layout out;
    bounds b;

    if (!s) {
        out.bytes = {0};
        out.ub    = 1;
        return out;
    }

    switch (s->kind) {
    case layout_spec::CONTIG:
        for (size_t i = 0; i < s->len; ++i) {
            out.bytes.push_back((ptrdiff_t)i);
        }
        out.ub = (ptrdiff_t)s->len;
        return out;
    case layout_spec::VECTOR: {
        ref_layout in = reference(s->inners[0]);
        for (size_t i = 0; i < s->count; ++i) {
            ref_block(in, s->blocklen, (ptrdiff_t)i * s->stride, out, b);
        }
        break;
    }
    case layout_spec::INDEXED:
    case layout_spec::STRUCT: {
        std::vector<ref_layout> ins;
        for (const spec_ptr &in : s->inners) {
            ins.push_back(reference(in));
        }
        for (size_t i = 0; i < s->blocklens.size(); ++i) {
            ref_block(ins[(s->kind == layout_spec::STRUCT) ? i : 0],
                      s->blocklens[i], s->displs[i], out, b);
        }
        break;
    }
    case layout_spec::RESIZED:
        out           = reference(s->inners[0]);
        out.lb        = s->lb;
        out.ub        = s->lb + s->extent;
        out.lb_marked = true;
        out.ub_marked = true;
        return out;
    }

    b.get(out);
    return out;
}

std::vector<ptrdiff_t> reference_stream(const ref_layout &ref, size_t count)
{
    std::vector<ptrdiff_t> stream;

    for (size_t i = 0; i < count; ++i) {
        for (ptrdiff_t x : ref.bytes) {
            stream.push_back((ptrdiff_t)i * ref.extent() + x);
        }
    }
    return stream;
}

block_list merge_blocks(const std::vector<ptrdiff_t> &bytes)
{
    block_list blocks;

    for (ptrdiff_t x : bytes) {
        if (!blocks.empty() &&
            (blocks.back().first + (ptrdiff_t)blocks.back().second == x)) {
            ++blocks.back().second;
        } else {
            blocks.emplace_back(x, 1);
        }
    }
    return blocks;
}

block_list reference_blocks(const spec_ptr &spec, size_t count)
{
    return merge_blocks(reference_stream(reference(spec), count));
}

std::string to_string(const block_list &blocks, size_t max_blocks)
{
    std::ostringstream os;

    os << blocks.size() << " blocks:";
    for (size_t i = 0; (i < blocks.size()) && (i < max_blocks); ++i) {
        os << " " << blocks[i].first << "+" << blocks[i].second;
    }
    if (blocks.size() > max_blocks) {
        os << " ...";
    }
    return os.str();
}

/* ---- random layouts ----------------------------------------------------- */

namespace {

struct gen {
    std::mt19937_64     &rng;
    const random_params &p;

    int64_t range(int64_t lo, int64_t hi) /* inclusive */
    {
        return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    }

    bool chance(int percent) { return range(0, 99) < percent; }

    size_t count()
    {
        /* counts > 1 mostly; 0 and 1 sometimes (empty and collapse) */
        return chance(5) ? (size_t)range(0, 1) : (size_t)range(2, p.max_count);
    }

    spec_ptr leaf()
    {
        static const size_t lens[] = {1, 2, 3, 4, 8, 8, 12, 16, 24, 40, 64};
        if (chance(25)) {
            return nullptr;
        }
        if (chance(3)) {
            return contig(0);
        }
        return contig(lens[range(0, sizeof(lens) / sizeof(lens[0]) - 1)]);
    }

    ptrdiff_t spacing(ptrdiff_t ext, size_t blocklen)
    {
        ptrdiff_t dense = (ptrdiff_t)blocklen * std::max<ptrdiff_t>(ext, 1);
        ptrdiff_t s;

        switch (range(0, 5)) {
        case 0:  s = dense; break;                       /* touching */
        case 1:  s = dense + range(1, 16); break;        /* small gaps */
        case 2:  s = dense * range(2, 4); break;         /* stride x block */
        case 3:  s = range(0, dense + 8); break;         /* overlapping */
        default: s = dense + range(0, 64); break;
        }
        return (p.negative && chance(20)) ? -s : s;
    }

    bool fits(const spec_ptr &s)
    {
        ref_layout r = reference(s);
        return (r.bytes.size() <= p.max_size) &&
               (r.true_ub() - r.true_lb() <= p.max_span) &&
               (std::abs(r.lb) <= p.max_span) && (std::abs(r.ub) <= p.max_span);
    }

    /* prunes at every level so a deep layout never gets big */
    spec_ptr node(unsigned depth)
    {
        spec_ptr s = node_raw(depth);
        return fits(s) ? s : leaf();
    }

    spec_ptr node_raw(unsigned depth)
    {
        if ((depth == 0) || chance(15)) {
            return leaf();
        }

        switch (range(0, 4)) {
        case 0: {
            spec_ptr in = node(depth - 1);
            ref_layout r = reference(in);
            /* one draw per statement: the sequence must not depend on the
             * compiler's argument evaluation order */
            size_t bl = chance(10) ? 0 : (size_t)range(1, 3);
            size_t n  = count();
            ptrdiff_t stride = spacing(r.extent(), bl);
            return vector(n, bl, stride, in);
        }
        case 1: {
            spec_ptr in = node(depth - 1);
            ref_layout r = reference(in);
            size_t n = count();
            std::vector<size_t> bls;
            std::vector<ptrdiff_t> ds;
            bool regular = chance(30); /* must become a vector */
            size_t bl0 = (size_t)range(1, 3);
            ptrdiff_t step = spacing(r.extent(), bl0), d = range(-32, 32);
            for (size_t i = 0; i < n; ++i) {
                size_t bl = regular ? bl0 : (chance(10) ? 0 :
                                             (size_t)range(1, 3));
                bls.push_back(bl);
                ds.push_back(d);
                d += regular ? step : spacing(r.extent(), bl);
            }
            if (!regular && p.negative && chance(20)) {
                std::shuffle(ds.begin(), ds.end(), rng);
            }
            return indexed(bls, ds, in);
        }
        case 2: {
            size_t n = (size_t)range(1, 4);
            std::vector<size_t> bls;
            std::vector<ptrdiff_t> ds;
            std::vector<spec_ptr> ins;
            ptrdiff_t d = range(-16, 16);
            for (size_t i = 0; i < n; ++i) {
                ins.push_back(node(depth - 1));
                ref_layout r = reference(ins.back());
                size_t bl = chance(10) ? 0 : (size_t)range(1, 2);
                bls.push_back(bl);
                ds.push_back(d - r.lb);
                d += (ptrdiff_t)bl * r.extent() + (chance(50) ? 0 :
                                                   range(-4, 24));
            }
            if (p.negative && chance(15)) {
                std::shuffle(ds.begin(), ds.end(), rng);
            }
            return structure(bls, ds, ins);
        }
        case 3: {
            spec_ptr in = node(depth - 1);
            ref_layout r = reference(in);
            ptrdiff_t lb = r.lb + range(-8, 8);
            ptrdiff_t ext = std::max<ptrdiff_t>(0, r.extent() +
                                                   range(-8, 24));
            return resized(in, lb, ext);
        }
        default:
            return contig((size_t)range(1, 128));
        }
    }
};

} /* namespace */

spec_ptr random_layout(std::mt19937_64 &rng, const random_params &p)
{
    gen g{rng, p};

    return g.node(p.max_depth);
}

umr_layout_limits_t random_limits(std::mt19937_64 &rng)
{
    auto pick = [&](uint64_t lo, uint64_t hi) {
        return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
    };
    umr_layout_limits_t lim;

    umr_layout_limits_default(&lim);
    lim.max_interleaved = (uint32_t)pick(1, 8);
    lim.max_list        = (uint32_t)pick(2, 8);
    lim.max_bytes_count = (uint32_t)pick(1, 64);
    lim.max_stride      = (uint32_t)std::max<uint64_t>(lim.max_bytes_count,
                                                       pick(1, 512));
    lim.max_list_bytes  = pick(64, 4096);
    lim.max_key_bytes   = (pick(0, 3) == 0) ? pick(64, 8192) : UINT64_MAX / 2;
    lim.max_depth       = (uint32_t)pick(2, 8);
    lim.max_keys        = (uint32_t)pick(8, 4096);
    return lim;
}

/* ---- hardware model ------------------------------------------------------ */

namespace {

struct key_map {
    block_list            blocks;   /* merged memory blocks */
    std::vector<uint64_t> prefix;   /* key bytes before blocks[i] */
    uint64_t              length = 0;
    uint32_t              depth  = 0;
};

void append(key_map &m, ptrdiff_t off, uint64_t len)
{
    if (!m.blocks.empty() &&
        (m.blocks.back().first + (ptrdiff_t)m.blocks.back().second == off)) {
        m.blocks.back().second += len;
    } else {
        m.prefix.push_back(m.length);
        m.blocks.emplace_back(off, len);
    }
    m.length += len;
}

/* appends bytes [off, off + len) of child's address space */
void append_child(key_map &m, const key_map &child, uint64_t off, uint64_t len)
{
    size_t i = std::upper_bound(child.prefix.begin(), child.prefix.end(),
                                off) - child.prefix.begin() - 1;

    while (len > 0) {
        uint64_t in  = off - child.prefix[i];
        uint64_t n   = std::min<uint64_t>(child.blocks[i].second - in, len);
        append(m, child.blocks[i].first + (ptrdiff_t)in, n);
        off += n;
        len -= n;
        ++i;
    }
}

} /* namespace */

#define HW_FAIL(...) \
    do { \
        char _buf[256]; \
        snprintf(_buf, sizeof(_buf), __VA_ARGS__); \
        res.error = _buf; \
        return res; \
    } while (0)

hw_result interpret_plan(const umr_layout_plan_t *plan,
                         const umr_layout_limits_t &lim)
{
    hw_result res;
    std::vector<key_map> maps;
    std::vector<uint32_t> refs;
    uint64_t total_entries = 0, mem_blocks = 0;

    if ((plan == nullptr) || (plan->num_keys == 0)) {
        HW_FAIL("empty plan");
    }
    if (plan->num_keys > lim.max_keys) {
        HW_FAIL("%u keys > max_keys %u", plan->num_keys, lim.max_keys);
    }
    maps.resize(plan->num_keys);
    refs.resize(plan->num_keys, 0);

    for (uint32_t k = 0; k < plan->num_keys; ++k) {
        const umr_layout_key_t &key = plan->keys[k];
        key_map &m = maps[k];
        bool il = (key.kind == UMR_LAYOUT_KEY_INTERLEAVED);

        if ((key.kind != UMR_LAYOUT_KEY_INTERLEAVED) &&
            (key.kind != UMR_LAYOUT_KEY_LIST)) {
            HW_FAIL("key %u: bad kind %d", k, (int)key.kind);
        }
        if ((key.num_entries == 0) ||
            (key.num_entries > (il ? lim.max_interleaved : lim.max_list))) {
            HW_FAIL("key %u: %u entries (limit %u)", k, key.num_entries,
                    il ? lim.max_interleaved : lim.max_list);
        }
        if (il ? (key.repeat == 0) : (key.repeat != 1)) {
            HW_FAIL("key %u: repeat %u", k, key.repeat);
        }
        total_entries += key.num_entries;
        m.depth = 1;

        for (uint32_t r = 0; r < key.repeat; ++r) {
            for (uint32_t i = 0; i < key.num_entries; ++i) {
                const umr_layout_entry_t &e = key.entries[i];
                uint64_t stride = (uint64_t)e.bytes_count + e.bytes_skip;
                int64_t off     = e.offset + (int64_t)(r * stride);

                if (r == 0) {
                    if (e.bytes_count == 0) {
                        HW_FAIL("key %u entry %u: bytes_count 0", k, i);
                    }
                    if (il && ((e.bytes_count > lim.max_bytes_count) ||
                               (stride > lim.max_stride))) {
                        HW_FAIL("key %u entry %u: bytes_count %u skip %u "
                                "break the 16-bit fields (%u, %u)", k, i,
                                e.bytes_count, e.bytes_skip,
                                lim.max_bytes_count, lim.max_stride);
                    }
                    if (!il && (e.bytes_skip != 0)) {
                        HW_FAIL("key %u entry %u: list with skip", k, i);
                    }
                    if ((e.child < -1) || (e.child >= (int32_t)k)) {
                        HW_FAIL("key %u entry %u: child %d not before it",
                                k, i, e.child);
                    }
                    if (e.child >= 0) {
                        ++refs[e.child];
                        m.depth = std::max(m.depth, maps[e.child].depth + 1);
                    } else {
                        mem_blocks += key.repeat;
                    }
                }

                if (e.child < 0) {
                    append(m, (ptrdiff_t)off, e.bytes_count);
                    if ((off < plan->span_lb) ||
                        (off + (int64_t)e.bytes_count > plan->span_ub)) {
                        HW_FAIL("key %u entry %u: memory %" PRId64 "+%u "
                                "outside span [%td, %td)", k, i, off,
                                e.bytes_count, plan->span_lb, plan->span_ub);
                    }
                } else {
                    const key_map &c = maps[e.child];
                    if ((off < 0) ||
                        ((uint64_t)off + e.bytes_count > c.length)) {
                        HW_FAIL("key %u entry %u: %" PRId64 "+%u outside "
                                "child key %d of %" PRIu64 " bytes", k, i,
                                off, e.bytes_count, e.child, c.length);
                    }
                    append_child(m, c, (uint64_t)off, e.bytes_count);
                }
            }
        }

        if (m.length != key.length) {
            HW_FAIL("key %u: length %" PRIu64 " but addresses %" PRIu64, k,
                    key.length, m.length);
        }
        if (!il && (m.length > lim.max_list_bytes)) {
            HW_FAIL("key %u: list of %" PRIu64 " bytes > %" PRIu64, k,
                    m.length, lim.max_list_bytes);
        }
        if (m.length > lim.max_key_bytes) {
            HW_FAIL("key %u: %" PRIu64 " bytes > max_key_bytes", k, m.length);
        }
        if (m.depth > lim.max_depth) {
            HW_FAIL("key %u: depth %u > %u", k, m.depth, lim.max_depth);
        }
    }

    for (uint32_t k = 0; k + 1 < plan->num_keys; ++k) {
        if (refs[k] == 0) {
            HW_FAIL("key %u is never used", k);
        }
    }

    const key_map &top = maps.back();
    if ((plan->cost.num_wqes != plan->num_keys) ||
        (plan->cost.total_entries != total_entries) ||
        (plan->cost.depth != top.depth) ||
        (plan->cost.total_bytes != top.length)) {
        HW_FAIL("cost {wqes %u entries %u depth %u bytes %" PRIu64 "} != "
                "plan {%u, %" PRIu64 ", %u, %" PRIu64 "}",
                plan->cost.num_wqes, plan->cost.total_entries,
                plan->cost.depth, plan->cost.total_bytes, plan->num_keys,
                total_entries, top.depth, top.length);
    }

    res.ok         = true;
    res.blocks     = top.blocks;
    res.max_depth  = top.depth;
    res.mem_blocks = mem_blocks;
    return res;
}

std::string to_string(const umr_layout_plan_t *plan, size_t max_entries)
{
    std::ostringstream os;

    os << plan->num_keys << " keys (depth " << plan->cost.depth << ", "
       << plan->cost.total_entries << " entries):";
    for (uint32_t k = 0; k < plan->num_keys; ++k) {
        const umr_layout_key_t &key = plan->keys[k];
        os << " [" << k << " "
           << ((key.kind == UMR_LAYOUT_KEY_INTERLEAVED) ? "IL" : "LIST")
           << " x" << key.repeat << " len " << key.length << ":";
        for (uint32_t i = 0; (i < key.num_entries) && (i < max_entries); ++i) {
            const umr_layout_entry_t &e = key.entries[i];
            os << " ";
            if (e.child >= 0) {
                os << "k" << e.child << ":";
            }
            os << e.offset << "+" << e.bytes_count;
            if (e.bytes_skip) {
                os << "/" << e.bytes_skip;
            }
        }
        if (key.num_entries > max_entries) {
            os << " ...";
        }
        os << "]";
    }
    return os.str();
}

} /* namespace umr_test */
