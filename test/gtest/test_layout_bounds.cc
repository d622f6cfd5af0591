/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Layout engine: MPI's bound rules (MPI-3.1 4.1.6-4.1.7, issue 12 finding 1).
 * An lb/ub set by resized is an explicit marker: inherited by every
 * constructor built on it and taking precedence over data bounds in
 * vector/indexed/struct; empty types without markers have no effect on
 * bounds; an unmarked extent is rounded up to the largest alignment. The
 * expected values are what Open MPI 4.1 reports for the same MPI types
 * (where Open MPI follows the standard; gtest_mpi_decode compares directly).
 */
#include "umr_test_layout.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace {

struct layouts {
    std::vector<umr_layout_t*> v;
    ~layouts() { for (umr_layout_t *l : v) umr_layout_free(l); }
    umr_layout_t *own(umr_layout_t *l) { v.push_back(l); return l; }

    umr_layout_t *contig(size_t len)
    {
        umr_layout_t *l = nullptr;
        EXPECT_EQ(UCS_OK, umr_layout_contig(len, &l));
        return own(l);
    }
    umr_layout_t *resized(const umr_layout_t *in, ptrdiff_t lb,
                          ptrdiff_t extent)
    {
        umr_layout_t *l = nullptr;
        EXPECT_EQ(UCS_OK, umr_layout_resized(in, lb, extent, &l));
        return own(l);
    }
    umr_layout_t *vector(size_t count, size_t bl, ptrdiff_t stride,
                         const umr_layout_t *in)
    {
        umr_layout_t *l = nullptr;
        EXPECT_EQ(UCS_OK, umr_layout_vector(count, bl, stride, in, &l));
        return own(l);
    }
    umr_layout_t *indexed(std::vector<size_t> bl,
                          std::vector<ptrdiff_t> d,
                          const umr_layout_t *in)
    {
        umr_layout_t *l = nullptr;
        EXPECT_EQ(UCS_OK, umr_layout_indexed(bl.size(), bl.data(),
                                                 d.data(), in, &l));
        return own(l);
    }
    umr_layout_t *structure(std::vector<size_t> bl,
                            std::vector<ptrdiff_t> d,
                            std::vector<const umr_layout_t*> in)
    {
        umr_layout_t *l = nullptr;
        EXPECT_EQ(UCS_OK, umr_layout_struct(bl.size(), bl.data(),
                                                d.data(), in.data(), &l));
        return own(l);
    }
    umr_layout_t *aligned(const umr_layout_t *in, size_t align)
    {
        umr_layout_t *l = nullptr;
        EXPECT_EQ(UCS_OK, umr_layout_align(in, align, &l));
        return own(l);
    }
};

#define EXPECT_BOUNDS(_l, _lb, _extent) \
    do { \
        EXPECT_EQ((ptrdiff_t)(_lb), umr_layout_lb(_l)); \
        EXPECT_EQ((ptrdiff_t)(_extent), umr_layout_extent(_l)); \
    } while (0)

/* packs (l, count) from a memory whose byte at offset o is (o & 0xff) */
std::vector<uint8_t> pack_offsets(const umr_layout_t *l, size_t count,
                                  ptrdiff_t lo, size_t span)
{
    std::vector<uint8_t> mem(span), out(umr_layout_size(l) * count);
    for (size_t i = 0; i < span; ++i) {
        mem[i] = (uint8_t)(((ptrdiff_t)i + lo) & 0xff);
    }
    EXPECT_EQ(UCS_OK, umr_layout_pack(l, count, mem.data() - lo,
                                          out.data()));
    return out;
}

} /* namespace */

/* issue 12: struct(2, {1,1}, {100, 8}, {resized(contig(8), -4, 16), contig(2)}) */
TEST(layout_bounds, struct_marker_beats_data_bounds)
{
    layouts L;
    umr_layout_t *r = L.resized(L.contig(8), -4, 16);
    umr_layout_t *s = L.structure({1, 1}, {100, 8}, {r, L.contig(2)});

    EXPECT_BOUNDS(s, 96, 16);
    EXPECT_EQ(8, umr_layout_true_lb(s));
    EXPECT_EQ(108, umr_layout_true_ub(s));
    EXPECT_EQ(10u, umr_layout_size(s));

    /* the second element is 16 bytes further, not 104 */
    std::vector<uint8_t> got = pack_offsets(s, 2, 0, 256), want;
    for (int e = 0; e < 2; ++e) {
        for (int i = 0; i < 8; ++i) want.push_back(100 + 16 * e + i);
        for (int i = 0; i < 2; ++i) want.push_back(8 + 16 * e + i);
    }
    EXPECT_EQ(want, got);
}

/* issue 12: struct{subarray(1,{10},{3},{2},float) at 0, 6 B at 64} */
TEST(layout_bounds, struct_subarray_member)
{
    layouts L;
    /* the subarray: 3 floats from element 2, resized to the whole array */
    umr_layout_t *sub = L.resized(L.indexed({1}, {8}, L.contig(12)), 0,
                                  40);
    umr_layout_t *s   = L.structure({1, 1}, {0, 64}, {sub, L.contig(6)});

    EXPECT_BOUNDS(sub, 0, 40);
    EXPECT_BOUNDS(s, 0, 40);
    EXPECT_EQ(8, umr_layout_true_lb(s));
    EXPECT_EQ(70, umr_layout_true_ub(s));
}

/* markers replicate with the copies of a vector and an indexed type, and
 * reach a struct around them */
TEST(layout_bounds, markers_through_vector_and_indexed)
{
    layouts L;
    umr_layout_t *r = L.resized(L.contig(8), -4, 16);
    umr_layout_t *v = L.vector(3, 1, 32, r);
    EXPECT_BOUNDS(v, -4, 80);                        /* Open MPI: -4, 80 */

    umr_layout_t *i = L.indexed({1, 2}, {40, 0}, r);
    EXPECT_BOUNDS(i, -4, 56);                        /* [-4, 52) */

    /* unmarked data beyond the vector's markers does not move them */
    umr_layout_t *s = L.structure({1, 1}, {0, 200}, {v, L.contig(4)});
    EXPECT_BOUNDS(s, -4, 80);
    umr_layout_t *s2 = L.structure({1, 1}, {0, -50}, {i, L.contig(4)});
    EXPECT_BOUNDS(s2, -4, 56);

    /* two marked members: min/max of the markers */
    umr_layout_t *s3 = L.structure({1, 1}, {0, 100}, {v, r});
    EXPECT_BOUNDS(s3, -4, 116);
}

/* resized of resized: the outer markers replace the inner ones */
TEST(layout_bounds, nested_resized)
{
    layouts L;
    umr_layout_t *r1 = L.resized(L.contig(8), 0, 100);
    umr_layout_t *r2 = L.resized(r1, 8, 16);
    EXPECT_BOUNDS(r2, 8, 16);
    umr_layout_t *s = L.structure({1, 1}, {0, 64}, {r2, L.contig(1)});
    EXPECT_BOUNDS(s, 8, 16);
}

/* an empty type keeps the bounds resized gave it, in every constructor */
TEST(layout_bounds, empty_type_keeps_resized_bounds)
{
    layouts L;
    umr_layout_t *e = L.resized(L.contig(0), 8, 16);
    EXPECT_BOUNDS(e, 8, 16);
    EXPECT_EQ(0u, umr_layout_size(e));

    /* Open MPI: lb 108, extent 16 */
    umr_layout_t *s = L.structure({1, 1}, {100, 0}, {e, L.contig(4)});
    EXPECT_BOUNDS(s, 108, 16);
    EXPECT_EQ(4u, umr_layout_size(s));

    umr_layout_t *v = L.vector(3, 1, 100, e);
    EXPECT_BOUNDS(v, 8, 216);
    EXPECT_EQ(0u, umr_layout_size(v));
}

/* an empty type without markers has no effect on bounds (MPI-3.1 4.1:
 * "no elements are generated in the type map and there is no effect on
 * datatype bounds or extent"; Open MPI 4.1 deviates for struct members) */
TEST(layout_bounds, empty_type_without_markers_has_no_bounds)
{
    layouts L;
    umr_layout_t *s = L.structure({1, 1}, {100, 0},
                                  {L.contig(0), L.contig(4)});
    EXPECT_BOUNDS(s, 0, 4);

    umr_layout_t *v = L.vector(3, 1, 10, L.contig(0));
    EXPECT_BOUNDS(v, 0, 0);

    umr_layout_t *i = L.indexed({2, 1}, {50, -50}, L.contig(0));
    EXPECT_BOUNDS(i, 0, 0);

    /* a zero-length block has no effect either */
    umr_layout_t *z = L.structure({0, 1}, {1000, 4},
                                  {L.contig(8), L.contig(4)});
    EXPECT_BOUNDS(z, 4, 4);
}

/* MPI's epsilon: an unmarked extent rounds up to the largest alignment */
TEST(layout_bounds, alignment_pads_unmarked_extent)
{
    layouts L;
    umr_layout_t *d = L.aligned(L.contig(8), 8);
    umr_layout_t *c = L.contig(1);
    umr_layout_t *i = L.aligned(L.contig(4), 4);

    EXPECT_EQ(8u, umr_layout_alignment(d));
    EXPECT_EQ(1u, umr_layout_alignment(c));
    EXPECT_BOUNDS(d, 0, 8);                               /* not padded */

    umr_layout_t *s = L.structure({1, 1}, {0, 8}, {d, c});
    EXPECT_BOUNDS(s, 0, 16);                              /* {double; char} */
    EXPECT_EQ(8u, umr_layout_alignment(s));
    EXPECT_EQ(9u, umr_layout_size(s));

    umr_layout_t *h = L.vector(2, 1, 6, i);
    EXPECT_BOUNDS(h, 0, 12);                              /* Open MPI: 12 */

    /* a pair type: struct {short@0; int@4} is 8 bytes */
    umr_layout_t *p = L.structure({1, 1}, {0, 4},
                                  {L.aligned(L.contig(2), 2), i});
    EXPECT_BOUNDS(p, 0, 8);

    /* an upper marker is never padded; the alignment stays with resized */
    umr_layout_t *r = L.resized(s, 0, 9);
    EXPECT_BOUNDS(r, 0, 9);
    EXPECT_EQ(8u, umr_layout_alignment(r));
    umr_layout_t *v = L.vector(2, 1, 9, r);
    EXPECT_BOUNDS(v, 0, 18);
    umr_layout_t *s2 = L.structure({1, 1}, {0, 9}, {s, c});
    EXPECT_BOUNDS(s2, 0, 16);

    /* bytes (alignment 1) are never padded */
    umr_layout_t *b = L.structure({1, 1}, {0, 8}, {L.contig(8), c});
    EXPECT_BOUNDS(b, 0, 9);
}

TEST(layout_bounds, align_rejects_bad_alignment)
{
    layouts L;
    umr_layout_t *c = L.contig(8), *l = nullptr;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, umr_layout_align(c, 0, &l));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, umr_layout_align(c, 12, &l));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, umr_layout_align(c, 8192, &l));
    EXPECT_NE(nullptr, strstr(umr_layout_last_error(), "power of 2"));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, umr_layout_align(c, 8, nullptr));
}
