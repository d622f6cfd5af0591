/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Layouts shaped like the MPI datatypes of real applications (halo faces
 * of 2D/3D grids, subarrays and FFT slabs, NAS LU/MG faces, MILC, WRF,
 * LAMMPS and SPECFEM3D types) lower to the exact, small descriptors
 * expected of them. Every plan is
 * also run through the NIC model and compared with the reference walker.
 */
#include "umr_test_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace {

using namespace umr_test;

const spec_ptr dbl = contig(8);

class layout_apps : public ::testing::Test {
protected:
    void TearDown() override
    {
        umr_layout_plan_free(m_plan);
    }

    /* lowers with the default (ConnectX) limits and checks the bytes */
    const umr_layout_plan_t *lower(const spec_ptr &spec, size_t count = 1)
    {
        ucs_status_t status;
        umr_layout_limits_t lim;

        umr_layout_plan_free(m_plan);
        m_plan   = nullptr;
        m_layout = build(spec, &status);
        EXPECT_TRUE(m_layout) << status_str(status);
        if (!m_layout) {
            return nullptr;
        }
        status = umr_layout_lower(m_layout.get(), count, nullptr, &m_plan);
        EXPECT_EQ(UCS_OK, status) << umr_layout_last_error();
        if (status != UCS_OK) {
            return nullptr;
        }

        umr_layout_limits_default(&lim);
        hw_result hw = interpret_plan(m_plan, lim);
        EXPECT_TRUE(hw.ok) << hw.error;
        EXPECT_TRUE(hw.blocks == reference_blocks(spec, count))
            << "plan addresses other bytes: " << to_string(m_plan);
        return m_plan;
    }

    /* one interleaved key over memory with these entries and repeat */
    void expect_interleaved(const umr_layout_key_t &key, uint32_t repeat,
                            std::vector<umr_layout_entry_t> entries)
    {
        EXPECT_EQ(UMR_LAYOUT_KEY_INTERLEAVED, key.kind);
        EXPECT_EQ(repeat, key.repeat);
        ASSERT_EQ(entries.size(), key.num_entries);
        for (size_t i = 0; i < entries.size(); ++i) {
            EXPECT_EQ(entries[i].offset, key.entries[i].offset) << i;
            EXPECT_EQ(entries[i].bytes_count, key.entries[i].bytes_count) << i;
            EXPECT_EQ(entries[i].bytes_skip, key.entries[i].bytes_skip) << i;
            EXPECT_EQ(entries[i].child, key.entries[i].child) << i;
        }
    }

    void expect_single_interleaved(const umr_layout_plan_t *p,
                                   uint32_t repeat,
                                   std::vector<umr_layout_entry_t> entries)
    {
        ASSERT_NE(nullptr, p);
        ASSERT_EQ(1u, p->num_keys) << to_string(p);
        expect_interleaved(p->keys[0], repeat, entries);
        EXPECT_EQ(1u, p->cost.num_wqes);
        EXPECT_EQ(1u, p->cost.depth);
        EXPECT_EQ(entries.size(), p->cost.total_entries);
    }

    layout_ptr        m_layout;
    umr_layout_plan_t *m_plan = nullptr;
};

umr_layout_entry_t mem(int64_t offset, uint32_t bc, uint32_t skip)
{
    return umr_layout_entry_t{offset, bc, skip, -1};
}

/* ---- 3D halo faces, C order, x fastest: (x, y, z) at x + nx*(y + ny*z) -- */

TEST_F(layout_apps, grid64_x_face_is_one_entry)
{
    const size_t n = 64;
    auto p = lower(vector(n * n, 1, n * 8, dbl));
    expect_single_interleaved(p, 4096, {mem(0, 8, 504)});
    EXPECT_EQ(8.0, p->cost.mean_block); /* hostile: the transport packs */
}

TEST_F(layout_apps, grid64_y_face_is_one_entry)
{
    const size_t n = 64;
    auto p = lower(vector(n, n, n * n * 8, dbl));
    expect_single_interleaved(p, 64, {mem(0, 512, 32768 - 512)});
    EXPECT_EQ(512.0, p->cost.mean_block);
}

TEST_F(layout_apps, grid64_z_face_is_contiguous)
{
    const size_t n = 64;
    auto p = lower(contig(n * n * 8));
    ASSERT_NE(nullptr, p);
    ASSERT_EQ(1u, p->num_keys);
    EXPECT_EQ(UMR_LAYOUT_KEY_LIST, p->keys[0].kind);
    EXPECT_EQ(1u, p->keys[0].num_entries);
    EXPECT_TRUE(umr_layout_is_contig(m_layout.get()));
}

TEST_F(layout_apps, grid128_y_face_stride_over_16_bits_is_lists)
{
    /* 128 rows of 1 KiB, 128 KiB apart: 3 lists (52 + 52 + 24) under one */
    const size_t n = 128;
    auto p = lower(vector(n, n, n * n * 8, dbl));
    ASSERT_NE(nullptr, p);
    ASSERT_EQ(4u, p->num_keys) << to_string(p);
    EXPECT_EQ(52u, p->keys[0].num_entries);
    EXPECT_EQ(52u, p->keys[1].num_entries);
    EXPECT_EQ(24u, p->keys[2].num_entries);
    EXPECT_EQ(UMR_LAYOUT_KEY_LIST, p->keys[3].kind);
    ASSERT_EQ(3u, p->keys[3].num_entries);
    EXPECT_EQ(0, p->keys[3].entries[0].child);
    EXPECT_EQ(2, p->keys[3].entries[2].child);
    EXPECT_EQ(2u, p->cost.depth);
    EXPECT_EQ(1024.0, p->cost.mean_block);
}

TEST_F(layout_apps, grid128_x_face)
{
    const size_t n = 128;
    expect_single_interleaved(lower(vector(n * n, 1, n * 8, dbl)), 16384,
                              {mem(0, 8, 1016)});
}

/* ---- subarrays ------------------------------------------------------------ */

/* MPI_Type_create_subarray(2, {1024, 1024}, {100, 200}, {10, 20}, C, double) */
spec_ptr subarray_2d()
{
    const ptrdiff_t row = 1024 * 8;
    return resized(indexed({1}, {(10 * 1024 + 20) * 8},
                           vector(100, 200, row, dbl)),
                   0, 1024 * row);
}

TEST_F(layout_apps, subarray_2d_is_one_entry)
{
    expect_single_interleaved(lower(subarray_2d()), 100,
                              {mem((10 * 1024 + 20) * 8, 1600, 8192 - 1600)});
}

TEST_F(layout_apps, subarray_2d_count_2_is_two_keys_in_a_list)
{
    /* arrays 8 MiB apart: the count cannot be the repeat */
    auto p = lower(subarray_2d(), 2);
    ASSERT_NE(nullptr, p);
    ASSERT_EQ(3u, p->num_keys) << to_string(p);
    expect_interleaved(p->keys[0], 100,
                       {mem((10 * 1024 + 20) * 8, 1600, 6592)});
    expect_interleaved(p->keys[1], 100,
                       {mem((8 << 20) + (10 * 1024 + 20) * 8, 1600, 6592)});
    EXPECT_EQ(UMR_LAYOUT_KEY_LIST, p->keys[2].kind);
    ASSERT_EQ(2u, p->keys[2].num_entries);
    EXPECT_EQ(0, p->keys[2].entries[0].child);
    EXPECT_EQ(160000u, p->keys[2].entries[0].bytes_count);
    EXPECT_EQ(1, p->keys[2].entries[1].child);
}

TEST_F(layout_apps, fft_slab_flattens_to_one_entry)
{
    /* subarray(3, {64,64,64}, {64,64,16}, {0,0,16}): the two outer
     * dimensions are one regular sequence of 128 B rows */
    const ptrdiff_t row = 64 * 8, plane = 64 * row;
    spec_ptr rows = vector(64, 16, row, dbl);
    auto p = lower(indexed({1}, {16 * 8}, vector(64, 1, plane, rows)));
    expect_single_interleaved(p, 4096, {mem(128, 128, 384)});
}

/* ---- NAS ------------------------------------------------------------------ */

TEST_F(layout_apps, nas_lu_y)
{
    /* vector(DIM3, 5 doubles, stride (DIM2 + 2) * 40 B), DIM = 64 */
    auto p = lower(vector(64, 5, 66 * 40, dbl));
    expect_single_interleaved(p, 64, {mem(0, 40, 66 * 40 - 40)});
}

/* hvector(DIM3-2) of vector(DIM2-2, 1 double, stride DIM1): interior only */
spec_ptr nas_mg_x(size_t d1, size_t d2, size_t d3)
{
    return vector(d3 - 2, 1, d1 * d2 * 8, vector(d2 - 2, 1, d1 * 8, dbl));
}

TEST_F(layout_apps, nas_mg_x_small_is_one_key_of_16_entries)
{
    /* 34x18x18: a plane is 4896 B, within 16 bits: 16 rows per repeat */
    std::vector<umr_layout_entry_t> rows;
    for (int i = 0; i < 16; ++i) {
        rows.push_back(mem(i * 272, 8, 4896 - 8));
    }
    expect_single_interleaved(lower(nas_mg_x(34, 18, 18)), 16, rows);
}

TEST_F(layout_apps, full_x_face_flattens_to_one_entry)
{
    /* with all DIM2 rows the planes continue the row stride: one entry */
    expect_single_interleaved(lower(vector(18, 1, 34 * 18 * 8,
                                           vector(18, 1, 34 * 8, dbl))),
                              324, {mem(0, 8, 264)});
}

TEST_F(layout_apps, nas_mg_x_large_is_a_key_per_plane)
{
    /* 514x258x258: planes 1 MiB apart, one interleaved key per plane
     * (256 rows), 5 lists of <= 52 of them and a top list: 262 keys */
    auto p = lower(nas_mg_x(514, 258, 258));
    ASSERT_NE(nullptr, p);
    ASSERT_EQ(262u, p->num_keys);
    expect_interleaved(p->keys[0], 256, {mem(0, 8, 4112 - 8)});
    expect_interleaved(p->keys[1], 256, {mem(514 * 258 * 8, 8, 4112 - 8)});
    /* the first list is made when the 53rd plane key arrives */
    EXPECT_EQ(UMR_LAYOUT_KEY_INTERLEAVED, p->keys[52].kind);
    EXPECT_EQ(UMR_LAYOUT_KEY_LIST, p->keys[53].kind);
    EXPECT_EQ(52u, p->keys[53].num_entries);
    EXPECT_EQ(UMR_LAYOUT_KEY_LIST, p->keys[261].kind);
    EXPECT_EQ(5u, p->keys[261].num_entries);
    EXPECT_EQ(3u, p->cost.depth);
    EXPECT_EQ(256u + 256u + 5u, p->cost.total_entries);
}

TEST_F(layout_apps, nas_mg_y)
{
    /* vector(DIM3-2, DIM1-2 doubles, stride DIM1*DIM2), 34x18x18 */
    expect_single_interleaved(lower(vector(16, 32, 34 * 18 * 8, dbl)), 16,
                              {mem(0, 256, 4896 - 256)});
}

TEST_F(layout_apps, nas_mg_z)
{
    /* vector(DIM2-2, DIM1-2 doubles, stride DIM1): 16 B gaps */
    expect_single_interleaved(lower(vector(16, 32, 34 * 8, dbl)), 16,
                              {mem(0, 256, 16)});
}

/* ---- MILC, WRF ------------------------------------------------------------ */

TEST_F(layout_apps, milc_su3_zdown)
{
    /* hvector(2) of vector(DIM5 = 16, DIM2*DIM3/2 = 32 su3 vectors of 24 B,
     * stride 4 blocks): 768 B blocks; the two halves 96 KiB apart */
    spec_ptr su3 = contig(24);
    spec_ptr inner = vector(16, 32, 3072, su3);
    auto p = lower(vector(2, 1, 98304, inner));
    ASSERT_NE(nullptr, p);
    ASSERT_EQ(3u, p->num_keys) << to_string(p);
    expect_interleaved(p->keys[0], 16, {mem(0, 768, 3072 - 768)});
    expect_interleaved(p->keys[1], 16, {mem(98304, 768, 3072 - 768)});
    EXPECT_EQ(UMR_LAYOUT_KEY_LIST, p->keys[2].kind);
    EXPECT_EQ(2u, p->keys[2].num_entries);
    EXPECT_EQ(768.0, p->cost.mean_block);
}

TEST_F(layout_apps, wrf_struct_of_equal_hvectors_is_a_vector)
{
    /* two fields 1 MiB apart, the same patch of each: a struct of equal
     * members at constant spacing is canonically a vector */
    spec_ptr patch = vector(10, 10, 800, dbl);
    spec_ptr two   = structure({1, 1}, {0, 1 << 20}, {patch, patch});
    auto p = lower(two);
    ASSERT_NE(nullptr, p);
    char buf[128];
    EXPECT_STREQ("vec(2,1048576,vec(10,800,80))",
                 strchr(umr_layout_str(m_layout.get(), buf, sizeof(buf)),
                        ':') + 2);
    ASSERT_EQ(3u, p->num_keys) << to_string(p);
    expect_interleaved(p->keys[0], 10, {mem(0, 80, 720)});
    expect_interleaved(p->keys[1], 10, {mem(1 << 20, 80, 720)});
}

/* ---- particle codes: irregular, hostile, lists ---------------------------- */

std::vector<ptrdiff_t> atoms(std::mt19937_64 &rng, size_t n, size_t natoms,
                             ptrdiff_t size)
{
    std::vector<ptrdiff_t> idx(natoms);
    for (size_t i = 0; i < natoms; ++i) {
        idx[i] = (ptrdiff_t)i;
    }
    std::shuffle(idx.begin(), idx.end(), rng);
    idx.resize(n);
    std::sort(idx.begin(), idx.end());
    for (ptrdiff_t &x : idx) {
        x *= size;
    }
    return idx;
}

TEST_F(layout_apps, lammps_struct_of_6_indexed_blocks)
{
    /* 6 per-atom arrays (x, v, f, ...) of 3 doubles, 114 atoms of 1000 */
    std::mt19937_64 rng(114);
    std::vector<spec_ptr> fields;
    std::vector<ptrdiff_t> where;
    std::vector<ptrdiff_t> idx = atoms(rng, 114, 1000, 24);
    for (int f = 0; f < 6; ++f) {
        fields.push_back(indexed(std::vector<size_t>(idx.size(), 3), idx,
                                 dbl));
        where.push_back(f * 24000);
    }
    auto p = lower(structure(std::vector<size_t>(6, 1), where, fields));
    ASSERT_NE(nullptr, p);

    size_t blocks = umr_layout_num_blocks(m_layout.get());
    EXPECT_LE(blocks, 6u * 114);
    size_t lists = (blocks + 51) / 52;
    EXPECT_EQ(lists + 1, p->num_keys) << to_string(p);
    for (uint32_t k = 0; k < p->num_keys; ++k) {
        EXPECT_EQ(UMR_LAYOUT_KEY_LIST, p->keys[k].kind);
    }
    EXPECT_EQ(2u, p->cost.depth);
    EXPECT_LT(p->cost.mean_block, 32.0); /* hostile: the transport packs */
}

TEST_F(layout_apps, specfem3d_indexed_floats)
{
    std::mt19937_64 rng(493);
    std::vector<ptrdiff_t> idx = atoms(rng, 493, 5000, 4);
    auto p = lower(indexed(std::vector<size_t>(idx.size(), 1), idx,
                           contig(4)));
    ASSERT_NE(nullptr, p);
    size_t blocks = umr_layout_num_blocks(m_layout.get());
    EXPECT_EQ((blocks + 51) / 52 + 1, p->num_keys);
    EXPECT_LT(p->cost.mean_block, 8.0);
}

} /* namespace */
