/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr's zero-copy choice (pml_umr_choose.c): forced modes, the costs
 * file it reads (default path, missing, rejected), and that the automatic
 * choice follows the measured costs per message and per peer.
 */
#include "pml_umr_choose.h"
#include "common_umr_cost.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {

class pml_umr_choose : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/pml_umr_choose_XXXXXX";
        ASSERT_NE(nullptr, mkdtemp(tmpl));
        m_dir  = tmpl;
        m_path = m_dir + "/costs.conf";
    }

    void TearDown() override
    {
        unlink(m_path.c_str());
        rmdir(m_dir.c_str());
    }

    int init(const std::string &text, const char *pml = "ob1")
    {
        FILE *f = fopen(m_path.c_str(), "w");
        EXPECT_NE(nullptr, f);
        fputs(text.c_str(), f);
        fclose(f);
        return mca_pml_umr_choose_init(m_path.c_str(), pml, m_msg,
                                       sizeof(m_msg));
    }

    /* `count` elements of a vector type: `blocks` blocks of `block` bytes
     * per element at stride `stride` */
    static umr_mpi_dtype_t vec(size_t blocks, size_t block, size_t stride)
    {
        umr_mpi_dtype_t dt = {};
        dt.layout     = reinterpret_cast<umr_layout_t*>(1); /* unused */
        dt.size       = blocks * block;
        dt.extent     = (blocks - 1) * stride + block;
        dt.num_blocks = blocks;
        return dt;
    }

    std::string m_dir, m_path;
    char        m_msg[512];
};

const mca_pml_umr_choose_peer_t sw_peer   = { "sw", 1 };
const mca_pml_umr_choose_peer_t mlx5_peer = { "mlx5", 0 };

TEST_F(pml_umr_choose, forced_modes_ignore_costs)
{
    umr_mpi_dtype_t x_face = vec(65536, 8, 2048); /* hostile */

    ASSERT_EQ(1, mca_pml_umr_choose_init("/nonexistent/costs.conf", "ob1",
                                         m_msg, sizeof(m_msg)));
    EXPECT_EQ(1, mca_pml_umr_choose_zcopy(&x_face, 1, &sw_peer,
                                          MCA_PML_UMR_ZCOPY_ON));
    EXPECT_EQ(0, mca_pml_umr_choose_zcopy(&x_face, 1, &sw_peer,
                                          MCA_PML_UMR_ZCOPY_OFF));
    EXPECT_EQ(0, mca_pml_umr_choose_zcopy(&x_face, 1, &sw_peer,
                                          MCA_PML_UMR_ZCOPY_AUTO));
}

TEST_F(pml_umr_choose, missing_file_builtin_constants)
{
    umr_mpi_dtype_t big = vec(256, 65536, 131072); /* 16 MiB, 64 KiB */

    EXPECT_EQ(1, mca_pml_umr_choose_init("/nonexistent/costs.conf", "ob1",
                                         m_msg, sizeof(m_msg)));
    EXPECT_NE(std::string::npos,
              std::string(m_msg).find("/nonexistent/costs.conf")) << m_msg;
    /* built-in: never sw, mlx5 for large blocks to a remote peer */
    EXPECT_EQ(0, mca_pml_umr_choose_zcopy(&big, 1, &sw_peer,
                                          MCA_PML_UMR_ZCOPY_AUTO));
    EXPECT_EQ(1, mca_pml_umr_choose_zcopy(&big, 1, &mlx5_peer,
                                          MCA_PML_UMR_ZCOPY_AUTO));
    /* an unknown engine never */
    mca_pml_umr_choose_peer_t other = { "gpu", 0 };
    EXPECT_EQ(0, mca_pml_umr_choose_zcopy(&big, 1, &other,
                                          MCA_PML_UMR_ZCOPY_AUTO));
}

TEST_F(pml_umr_choose, default_path)
{
    char buf[512], host[256] = {};
    const char *old = getenv("XDG_CACHE_HOME"), *old_home = getenv("HOME");
    std::string saved = old ? old : "", saved_home = old_home ? old_home : "";

    gethostname(host, sizeof(host) - 1);
    std::string shorthost = std::string(host).substr(
            0, std::string(host).find('.'));
    setenv("XDG_CACHE_HOME", "/x/cache", 1);
    mca_pml_umr_choose_default_path(buf, sizeof(buf));
    EXPECT_EQ("/x/cache/mlx5_umr/costs-" + shorthost + ".conf",
              std::string(buf));
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/x/home", 1);
    mca_pml_umr_choose_default_path(buf, sizeof(buf));
    EXPECT_EQ("/x/home/.cache/mlx5_umr/costs-" + shorthost + ".conf",
              std::string(buf));
    /* an empty path means the default (here: under our scratch dir) */
    setenv("XDG_CACHE_HOME", m_dir.c_str(), 1);
    mca_pml_umr_choose_default_path(buf, sizeof(buf));
    EXPECT_EQ(m_dir + "/mlx5_umr/costs-" + shorthost + ".conf",
              std::string(buf));
    EXPECT_EQ(1, mca_pml_umr_choose_init("", "ob1", m_msg, sizeof(m_msg)));
    EXPECT_NE(std::string::npos, std::string(m_msg).find(buf)) << m_msg;
    EXPECT_EQ(1, mca_pml_umr_choose_init(nullptr, "ob1", m_msg,
                                         sizeof(m_msg)));
    EXPECT_NE(std::string::npos, std::string(m_msg).find(buf)) << m_msg;

    if (old) {
        setenv("XDG_CACHE_HOME", saved.c_str(), 1);
    } else {
        unsetenv("XDG_CACHE_HOME");
    }
    if (old_home) {
        setenv("HOME", saved_home.c_str(), 1);
    }
}

TEST_F(pml_umr_choose, rejected_file_builtin_constants)
{
    umr_mpi_dtype_t big = vec(256, 65536, 131072);

    /* this file would make sw always win, but it does not parse */
    EXPECT_EQ(-1, init("version = 1\n"
                       "engine.sw.get.dense.op_ns = 0\n"
                       "engine.sw.get.dense.byte_ns = 0\n"
                       "engine.sw.get.dense.rentry_ns = zero\n"));
    EXPECT_NE(std::string::npos, std::string(m_msg).find(":4:")) << m_msg;
    EXPECT_EQ(0, mca_pml_umr_choose_zcopy(&big, 1, &sw_peer,
                                          MCA_PML_UMR_ZCOPY_AUTO));
}

/* sw costs 1000 ns a remote block and nothing else, the local PML 1 ns a
 * byte: zero-copy from blocks of about 1 KiB (with the 0.9 margin and both
 * sides' blocks: rentry + lentry = 1100 ns a block vs 0.9 ns a byte). */
TEST_F(pml_umr_choose, follows_measured_costs_per_message_and_peer)
{
    std::string text = "version = 1\n";
    for (const char *d : {"dense", "sparse"}) {
        text += std::string("engine.sw.get.") + d + ".op_ns = 0\n" +
                "engine.sw.get." + d + ".rentry_ns = 1000\n" +
                "engine.sw.get." + d + ".lentry_ns = 100\n" +
                "engine.sw.get." + d + ".byte_ns = 0\n";
    }
    text += "pml.ob1.local.ctrl_ns = 0\n";
    for (int b = 8; b <= 65536; b *= 2) {
        text += "pml.ob1.local.ddt." + std::to_string(b) + ".op_ns = 0\n";
        text += "pml.ob1.local.ddt." + std::to_string(b) + ".byte_ns = 1\n";
    }
    ASSERT_EQ(0, init(text)) << m_msg;

    for (size_t block = 8; block <= 65536; block *= 2) {
        umr_mpi_dtype_t dt = vec((1 << 20) / block, block, 2 * block);
        int expect = (1100.0 / block) < 0.9;
        EXPECT_EQ(expect, mca_pml_umr_choose_zcopy(&dt, 1, &sw_peer,
                                                   MCA_PML_UMR_ZCOPY_AUTO))
                << "block " << block;
        /* count scales bytes and blocks alike: the same answer */
        EXPECT_EQ(expect, mca_pml_umr_choose_zcopy(&dt, 3, &sw_peer,
                                                   MCA_PML_UMR_ZCOPY_AUTO))
                << "block " << block << " x3";
    }

    /* the same message to a remote peer over mlx5 uses mlx5's figures (the
     * built-in guess) and the local PML figures standing in for remote */
    umr_mpi_dtype_t small_blocks = vec(1 << 17, 8, 16);
    EXPECT_EQ(0, mca_pml_umr_choose_zcopy(&small_blocks, 1, &sw_peer,
                                          MCA_PML_UMR_ZCOPY_AUTO));
    EXPECT_EQ(1, mca_pml_umr_choose_zcopy(&small_blocks, 1, &mlx5_peer,
                                          MCA_PML_UMR_ZCOPY_AUTO));
}

/* The density of the datatype picks the dense or the sparse figures. */
TEST_F(pml_umr_choose, density_picks_the_figures)
{
    std::string text = "version = 1\n"
                       "engine.sw.get.dense.rentry_ns = 10\n"
                       "engine.sw.get.sparse.rentry_ns = 100000\n"
                       "pml.ob1.local.ctrl_ns = 0\n";
    for (const char *d : {"dense", "sparse"}) {
        text += std::string("engine.sw.get.") + d + ".op_ns = 0\n" +
                "engine.sw.get." + d + ".lentry_ns = 0\n" +
                "engine.sw.get." + d + ".byte_ns = 0\n";
    }
    for (int b = 8; b <= 65536; b *= 2) {
        text += "pml.ob1.local.ddt." + std::to_string(b) + ".byte_ns = 1\n";
        text += "pml.ob1.local.ddt." + std::to_string(b) + ".op_ns = 0\n";
    }
    ASSERT_EQ(0, init(text)) << m_msg;
    umr_mpi_dtype_t dense  = vec(1024, 1024, 2048);  /* density ~0.5 */
    umr_mpi_dtype_t sparse = vec(1024, 1024, 8192);  /* density ~0.125 */
    EXPECT_EQ(1, mca_pml_umr_choose_zcopy(&dense, 1, &sw_peer,
                                          MCA_PML_UMR_ZCOPY_AUTO));
    EXPECT_EQ(0, mca_pml_umr_choose_zcopy(&sparse, 1, &sw_peer,
                                          MCA_PML_UMR_ZCOPY_AUTO));
}

/* sw at 250 ns a block on either side, the PML at 1 ns a byte: zero-copy
 * wins from about 600 B blocks (500 ns a block < 0.9 ns a byte). */
static std::string costs_blocks()
{
    std::string text = "version = 1\npml.ob1.local.ctrl_ns = 0\n";
    for (const char *d : {"dense", "sparse"}) {
        text += std::string("engine.sw.get.") + d + ".op_ns = 0\n" +
                "engine.sw.get." + d + ".rentry_ns = 250\n" +
                "engine.sw.get." + d + ".lentry_ns = 250\n" +
                "engine.sw.get." + d + ".byte_ns = 0\n";
    }
    for (int b = 8; b <= 65536; b *= 2) {
        text += "pml.ob1.local.ddt." + std::to_string(b) + ".byte_ns = 1\n";
        text += "pml.ob1.local.ddt." + std::to_string(b) + ".op_ns = 0\n";
    }
    return text;
}

/* The bounds the sender tests before decoding never pass through a message
 * the full choice would send zero-copy, and pass through what cannot win. */
TEST_F(pml_umr_choose, bounds_never_exclude_a_winning_message)
{
    size_t min_bytes;
    double min_block;

    /* built-in constants: sw never wins */
    ASSERT_EQ(1, mca_pml_umr_choose_init("/nonexistent/costs.conf", "ob1",
                                         m_msg, sizeof(m_msg)));
    mca_pml_umr_choose_bounds_of("sw", 1, MCA_PML_UMR_ZCOPY_AUTO, 4160,
                                 MCA_PML_UMR_CHOOSE_ANY, &min_bytes,
                                 &min_block);
    EXPECT_EQ(SIZE_MAX, min_bytes);
    mca_pml_umr_choose_bounds_of("sw", 1, MCA_PML_UMR_ZCOPY_ON, 4160,
                                 MCA_PML_UMR_CHOOSE_ANY, &min_bytes,
                                 &min_block);
    EXPECT_EQ(4160u, min_bytes);
    EXPECT_EQ(0.0, min_block);
    mca_pml_umr_choose_bounds_of("sw", 1, MCA_PML_UMR_ZCOPY_OFF, 4160,
                                 MCA_PML_UMR_CHOOSE_ANY, &min_bytes,
                                 &min_block);
    EXPECT_EQ(SIZE_MAX, min_bytes);

    ASSERT_EQ(0, init(costs_blocks())) << m_msg;
    mca_pml_umr_choose_bounds_of("sw", 1, MCA_PML_UMR_ZCOPY_AUTO, 4160,
                                 MCA_PML_UMR_CHOOSE_ANY, &min_bytes,
                                 &min_block);
    EXPECT_GT(min_block, 400.0);
    EXPECT_LT(min_block, 600.0);
    EXPECT_GE(min_bytes, 4160u);
    /* every vector the choice sends zero-copy is within the bounds */
    int winners = 0;
    for (size_t block = 8; block <= 65536; block += block / 4 + 1) {
        for (size_t blocks = 1; blocks <= 8192; blocks *= 3) {
            umr_mpi_dtype_t dt = vec(blocks, block, 2 * block);
            if ((dt.size < 4160) ||
                !mca_pml_umr_choose_zcopy(&dt, 1, &sw_peer,
                                          MCA_PML_UMR_ZCOPY_AUTO)) {
                continue;
            }
            ++winners;
            EXPECT_GE((double)block, min_block) << blocks << " x " << block;
            EXPECT_GE(dt.size, min_bytes) << blocks << " x " << block;
        }
    }
    EXPECT_GT(winners, 10);
}

/* Bounds of one density class: the class the choice puts a type in is the
 * one mca_pml_umr_choose_is_dense() tells (from size and extent alone),
 * no message of that class the choice sends zero-copy is outside them,
 * and a class that can never win passes everything. */
TEST_F(pml_umr_choose, bounds_per_density_class)
{
    size_t min_bytes[3];
    double min_block[3];
    int d, winners[2] = {0, 0};

    /* contrib/passthrough-cost-choose.conf: sparse free, dense 1 s */
    std::string text = "version = 1\n";
    for (const char *op : {"get", "put"}) {
        text += std::string("engine.sw.") + op + ".sparse.op_ns = 0\n" +
                "engine.sw." + op + ".sparse.rentry_ns = 0\n" +
                "engine.sw." + op + ".sparse.lentry_ns = 0\n" +
                "engine.sw." + op + ".sparse.byte_ns = 0\n" +
                "engine.sw." + op + ".dense.op_ns = 1000000000\n" +
                "engine.sw." + op + ".dense.rentry_ns = 1000\n" +
                "engine.sw." + op + ".dense.lentry_ns = 1000\n" +
                "engine.sw." + op + ".dense.byte_ns = 10\n";
    }
    ASSERT_EQ(0, init(text)) << m_msg;
    for (d = 0; d < 3; ++d) {
        mca_pml_umr_choose_bounds_of("sw", 1, MCA_PML_UMR_ZCOPY_AUTO, 4160, d,
                                     &min_bytes[d], &min_block[d]);
    }
    EXPECT_EQ(SIZE_MAX, min_bytes[MCA_PML_UMR_CHOOSE_DENSE]);
    EXPECT_EQ(HUGE_VAL, min_block[MCA_PML_UMR_CHOOSE_DENSE]);
    EXPECT_EQ(4160u, min_bytes[MCA_PML_UMR_CHOOSE_SPARSE]);
    EXPECT_EQ(0.0, min_block[MCA_PML_UMR_CHOOSE_SPARSE]);
    /* either: what the sparse class allows */
    EXPECT_EQ(min_bytes[MCA_PML_UMR_CHOOSE_SPARSE],
              min_bytes[MCA_PML_UMR_CHOOSE_ANY]);
    EXPECT_EQ(min_block[MCA_PML_UMR_CHOOSE_SPARSE],
              min_block[MCA_PML_UMR_CHOOSE_ANY]);
    /* forced: both classes as before */
    mca_pml_umr_choose_bounds_of("sw", 1, MCA_PML_UMR_ZCOPY_ON, 4160,
                                 MCA_PML_UMR_CHOOSE_DENSE, &min_bytes[0],
                                 &min_block[0]);
    EXPECT_EQ(4160u, min_bytes[0]);
    EXPECT_EQ(0.0, min_block[0]);

    /* costs by which both classes win from some block on (sparse 250 ns
     * a block on either side, dense 1 us): every vector the choice sends
     * zero-copy is within its class's bounds */
    text = costs_blocks();
    for (const char *e : {"rentry_ns", "lentry_ns"}) {
        text += std::string("engine.sw.get.dense.") + e + " = 1000\n";
    }
    ASSERT_EQ(0, init(text)) << m_msg;
    for (d = 0; d < 2; ++d) {
        mca_pml_umr_choose_bounds_of("sw", 1, MCA_PML_UMR_ZCOPY_AUTO, 4160, d,
                                     &min_bytes[d], &min_block[d]);
    }
    EXPECT_GT(min_block[MCA_PML_UMR_CHOOSE_DENSE],
              2 * min_block[MCA_PML_UMR_CHOOSE_SPARSE]);
    for (size_t block = 8; block <= 65536; block += block / 4 + 1) {
        for (size_t blocks = 1; blocks <= 8192; blocks *= 3) {
            for (size_t stride : {block, 2 * block - 8, 2 * block, 8 * block}) {
                umr_mpi_dtype_t dt = vec(blocks, block, stride);
                d = mca_pml_umr_choose_is_dense(dt.size, dt.extent);
                if ((dt.size < 4160) ||
                    !mca_pml_umr_choose_zcopy(&dt, 1, &sw_peer,
                                              MCA_PML_UMR_ZCOPY_AUTO)) {
                    continue;
                }
                ++winners[d];
                EXPECT_GE((double)block, min_block[d]) << blocks << " x "
                                                       << block << " / "
                                                       << stride;
                EXPECT_GE(dt.size, min_bytes[d]) << blocks << " x " << block
                                                 << " / " << stride;
            }
        }
    }
    EXPECT_GT(winners[0], 10);
    EXPECT_GT(winners[1], 10);
}

/* The receiver, knowing both layouts, declines what the sender's side
 * alone would send zero-copy. */
TEST_F(pml_umr_choose, receiver_weighs_both_layouts)
{
    ASSERT_EQ(0, init(costs_blocks())) << m_msg;
    umr_mpi_dtype_t rows = vec(256, 2048, 8192);   /* subarray rows */
    EXPECT_EQ(1, mca_pml_umr_choose_zcopy(&rows, 1, &sw_peer,
                                          MCA_PML_UMR_ZCOPY_AUTO));
    /* into the same rows: zero-copy; into single doubles: declined */
    EXPECT_EQ(1, mca_pml_umr_choose_recv(rows.size, 256, 256, 0.25,
                                         &sw_peer, MCA_PML_UMR_ZCOPY_AUTO));
    EXPECT_EQ(0, mca_pml_umr_choose_recv(rows.size, 256, 65536, 0.001,
                                         &sw_peer, MCA_PML_UMR_ZCOPY_AUTO));
    /* forced: never declined; off: always */
    EXPECT_EQ(1, mca_pml_umr_choose_recv(rows.size, 256, 65536, 0.001,
                                         &sw_peer, MCA_PML_UMR_ZCOPY_ON));
    EXPECT_EQ(0, mca_pml_umr_choose_recv(rows.size, 256, 256, 0.25,
                                         &sw_peer, MCA_PML_UMR_ZCOPY_OFF));
}

} // namespace
