/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr cost model: the costs file (every key, every rejection), the
 * built-in defaults (the sw engine never beats a shared-memory PML with
 * them), interpolation of the wrapped PML's cost by block size, and the
 * zero-copy formula.
 */
#include "common_umr_cost.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace {

class pml_umr_cost : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/pml_umr_cost_XXXXXX";
        int fd      = mkstemp(tmpl);
        ASSERT_GE(fd, 0);
        close(fd);
        m_path = tmpl;
    }

    void TearDown() override { unlink(m_path.c_str()); }

    void write(const std::string &text)
    {
        FILE *f = fopen(m_path.c_str(), "w");
        ASSERT_NE(nullptr, f);
        fputs(text.c_str(), f);
        fclose(f);
    }

    /* load m_path for ob1; returns the status, fills m_cost and m_err */
    int load(const std::string &text, const char *pml = "ob1")
    {
        write(text);
        return mca_common_umr_cost_load(&m_cost, m_path.c_str(), pml, m_err,
                                        sizeof(m_err));
    }

    /* the file is rejected with an error naming `line`, defaults restored */
    void expect_rejected(const std::string &text, int line)
    {
        mca_common_umr_cost_t defaults;

        SCOPED_TRACE(text);
        mca_common_umr_cost_defaults(&defaults);
        EXPECT_EQ(-1, load(text));
        std::string where = m_path + ":" + std::to_string(line) + ":";
        EXPECT_EQ(0, std::string(m_err).find(where)) << m_err;
        EXPECT_EQ(0, m_cost.from_file);
        EXPECT_STREQ("built-in defaults", m_cost.source);
        EXPECT_EQ(defaults.eng[MCA_COMMON_UMR_COST_SW][0][0].op_ns,
                  m_cost.eng[MCA_COMMON_UMR_COST_SW][0][0].op_ns);
        EXPECT_EQ(defaults.pml[0].ctrl_ns, m_cost.pml[0].ctrl_ns);
    }

    std::string        m_path;
    mca_common_umr_cost_t m_cost;
    char               m_err[512];
};

TEST_F(pml_umr_cost, engine_names)
{
    EXPECT_EQ(MCA_COMMON_UMR_COST_SW, mca_common_umr_cost_engine("sw"));
    EXPECT_EQ(MCA_COMMON_UMR_COST_MLX5, mca_common_umr_cost_engine("mlx5"));
    EXPECT_EQ(-1, mca_common_umr_cost_engine("mlx5_0"));
    EXPECT_EQ(-1, mca_common_umr_cost_engine(nullptr));
}

/* With the built-in constants, zero-copy over sw is never cheaper than the
 * local PML, for any block size, message size and density. */
TEST_F(pml_umr_cost, defaults_never_choose_sw)
{
    mca_common_umr_cost_defaults(&m_cost);
    for (size_t block = 4; block <= (1ul << 24); block *= 2) {
        for (size_t bytes = 1024; bytes <= (1ul << 28); bytes *= 4) {
            if (block > bytes) {
                continue;
            }
            for (double density : {1.0, 0.5, 0.1, 1.0 / 256}) {
                for (int op = 0; op < MCA_COMMON_UMR_COST_NUM_OPS; ++op) {
                    size_t blocks = bytes / block;
                    double z = mca_common_umr_cost_zcopy(
                            &m_cost, MCA_COMMON_UMR_COST_SW, op,
                            MCA_COMMON_UMR_COST_LOCAL, bytes, blocks, blocks,
                            density);
                    double p = mca_common_umr_cost_pml(
                            &m_cost, MCA_COMMON_UMR_COST_LOCAL, bytes, block);
                    EXPECT_GT(z, p) << "block " << block << " bytes " << bytes
                                    << " density " << density;
                }
            }
        }
    }
}

/* The mlx5 guess lets large-block messages to remote peers go zero-copy
 * and keeps 8-byte blocks of a small message on the PML. */
TEST_F(pml_umr_cost, defaults_mlx5_remote)
{
    mca_common_umr_cost_defaults(&m_cost);
    auto z = [&](size_t bytes, size_t block) {
        return mca_common_umr_cost_zcopy(&m_cost, MCA_COMMON_UMR_COST_MLX5,
                                         MCA_COMMON_UMR_COST_GET,
                                         MCA_COMMON_UMR_COST_REMOTE, bytes,
                                         bytes / block, bytes / block, 0.5);
    };
    auto p = [&](size_t bytes, size_t block) {
        return mca_common_umr_cost_pml(&m_cost, MCA_COMMON_UMR_COST_REMOTE, bytes,
                                       block);
    };
    EXPECT_LT(z(16ul << 20, 4096), p(16ul << 20, 4096));
    EXPECT_LT(z(16ul << 20, 256), p(16ul << 20, 256));
    EXPECT_GT(z(2048, 8), p(2048, 8));
}

TEST_F(pml_umr_cost, missing_file_gives_defaults)
{
    mca_common_umr_cost_t defaults;

    mca_common_umr_cost_defaults(&defaults);
    EXPECT_EQ(1, mca_common_umr_cost_load(&m_cost, "/nonexistent/costs.conf",
                                          "ob1", m_err, sizeof(m_err)));
    EXPECT_STREQ("", m_err);
    EXPECT_EQ(0, m_cost.from_file);
    EXPECT_EQ(0, memcmp(&defaults, &m_cost, sizeof(m_cost)));
    EXPECT_EQ(1, mca_common_umr_cost_load(&m_cost, nullptr, "ob1", m_err,
                                          sizeof(m_err)));
    EXPECT_EQ(1, mca_common_umr_cost_load(&m_cost, "", "ob1", m_err,
                                          sizeof(m_err)));
}

TEST_F(pml_umr_cost, reads_every_key)
{
    ASSERT_EQ(0, load("# calibrated\n"
                      "version = 1\n"
                      "host = node1   # free text\n"
                      "date = 2026-11-30 14:00:00\n"
                      "note = anything = at all\n"
                      "\n"
                      "engine.sw.get.dense.op_ns = 5000\n"
                      "engine.sw.get.dense.rentry_ns = 12.5\n"
                      "engine.sw.get.dense.lentry_ns = 3\n"
                      "engine.sw.get.dense.byte_ns = 0.25\n"
                      "engine.sw.put.sparse.rentry_ns = 900\n"
                      "engine.mlx5.get.sparse.byte_ns = 0.07\n"
                      "  pml.ob1.local.ctrl_ns = 1800  \n"
                      "pml.ob1.local.ddt.8.op_ns = 700\n"
                      "pml.ob1.local.ddt.8.byte_ns = 0.6\n"
                      "pml.ob1.local.ddt.65536.byte_ns = 0.09\n"
                      "pml.ucx.local.ctrl_ns = 99999\n"
                      "pml.ucx.remote.ddt.8.op_ns = 1\n"));
    EXPECT_STREQ("", m_err);
    EXPECT_EQ(1, m_cost.from_file);
    EXPECT_EQ(m_path, m_cost.source);

    const mca_common_umr_cost_lin_t &sw_gd =
            m_cost.eng[MCA_COMMON_UMR_COST_SW][MCA_COMMON_UMR_COST_GET]
                      [MCA_COMMON_UMR_COST_DENSE_L];
    EXPECT_EQ(5000, sw_gd.op_ns);
    EXPECT_EQ(12.5, sw_gd.rentry_ns);
    EXPECT_EQ(3, sw_gd.lentry_ns);
    EXPECT_EQ(0.25, sw_gd.byte_ns);
    EXPECT_EQ(900, m_cost.eng[MCA_COMMON_UMR_COST_SW][MCA_COMMON_UMR_COST_PUT]
                             [MCA_COMMON_UMR_COST_SPARSE_L].rentry_ns);
    EXPECT_EQ(0.07, m_cost.eng[MCA_COMMON_UMR_COST_MLX5][MCA_COMMON_UMR_COST_GET]
                              [MCA_COMMON_UMR_COST_SPARSE_L].byte_ns);

    /* ob1's lines, not ucx's */
    const mca_common_umr_cost_pml_t &loc = m_cost.pml[MCA_COMMON_UMR_COST_LOCAL];
    EXPECT_EQ(1, loc.measured);
    EXPECT_EQ(1800, loc.ctrl_ns);
    EXPECT_EQ(700, loc.op_ns[0]);
    EXPECT_EQ(0.6, loc.byte_ns[0]);
    EXPECT_EQ(0.09, loc.byte_ns[MCA_COMMON_UMR_COST_NUM_BLOCKS - 1]);

    /* no remote ob1 lines: remote = local */
    const mca_common_umr_cost_pml_t &rem = m_cost.pml[MCA_COMMON_UMR_COST_REMOTE];
    EXPECT_EQ(1800, rem.ctrl_ns);
    EXPECT_EQ(700, rem.op_ns[0]);
    EXPECT_EQ(0.09, rem.byte_ns[MCA_COMMON_UMR_COST_NUM_BLOCKS - 1]);

    /* the same file for ucx: its lines */
    ASSERT_EQ(0, mca_common_umr_cost_load(&m_cost, m_path.c_str(), "ucx", m_err,
                                          sizeof(m_err)));
    EXPECT_EQ(99999, m_cost.pml[MCA_COMMON_UMR_COST_LOCAL].ctrl_ns);
    EXPECT_EQ(1, m_cost.pml[MCA_COMMON_UMR_COST_REMOTE].op_ns[0]);
}

TEST_F(pml_umr_cost, keys_absent_keep_defaults)
{
    mca_common_umr_cost_t defaults;

    mca_common_umr_cost_defaults(&defaults);
    ASSERT_EQ(0, load("version = 1\nengine.sw.get.dense.op_ns = 1\n"));
    EXPECT_EQ(1, m_cost.eng[0][0][0].op_ns);
    EXPECT_EQ(defaults.eng[0][0][0].rentry_ns, m_cost.eng[0][0][0].rentry_ns);
    EXPECT_EQ(defaults.eng[1][1][1].byte_ns, m_cost.eng[1][1][1].byte_ns);
    EXPECT_EQ(0, memcmp(&defaults.pml, &m_cost.pml, sizeof(m_cost.pml)));
}

TEST_F(pml_umr_cost, rejects_bad_files)
{
    expect_rejected("engine.sw.get.dense.op_ns = 1\n", 1);
    expect_rejected("# no version\n\n", 2); /* reported at the end */
    expect_rejected("version = 2\n", 1);
    expect_rejected("version = 1\nfoo = 1\n", 2);
    expect_rejected("version = 1\n\njust text\n", 3);
    expect_rejected("version = 1\n = 3\n", 2);
    expect_rejected("version = 1\nengine.sw.get.dense.op_ns = \n", 2);
    expect_rejected("version = 1\nengine.sw.get.dense.op_ns = -1\n", 2);
    expect_rejected("version = 1\nengine.sw.get.dense.op_ns = 1x\n", 2);
    expect_rejected("version = 1\nengine.sw.get.dense.op_ns = nan\n", 2);
    expect_rejected("version = 1\nengine.sw.get.dense.op_ns = inf\n", 2);
    expect_rejected("version = 1\nengine.gpu.get.dense.op_ns = 1\n", 2);
    expect_rejected("version = 1\nengine.sw.send.dense.op_ns = 1\n", 2);
    expect_rejected("version = 1\nengine.sw.get.medium.op_ns = 1\n", 2);
    expect_rejected("version = 1\nengine.sw.get.dense.cost = 1\n", 2);
    expect_rejected("version = 1\nengine.sw.get.dense.op_ns.x = 1\n", 2);
    expect_rejected("version = 1\npml.ob1.nearby.ctrl_ns = 1\n", 2);
    expect_rejected("version = 1\npml.ob1.local.ddt.12.op_ns = 1\n", 2);
    expect_rejected("version = 1\npml.ob1.local.ddt.4.op_ns = 1\n", 2);
    expect_rejected("version = 1\npml.ob1.local.ddt.131072.op_ns = 1\n", 2);
    expect_rejected("version = 1\npml.ob1.local.ddt.8k.op_ns = 1\n", 2);
    expect_rejected("version = 1\npml.ob1.local.ddt.8.lat_ns = 1\n", 2);
    expect_rejected("version = 1\npml.ob1.local.latency = 1\n", 2);
    expect_rejected("version = 1\n" + std::string(600, 'x') + " = 1\n", 2);
}

TEST_F(pml_umr_cost, unreadable_file)
{
    char dir[] = "/tmp/pml_umr_cost_dir_XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(dir));
    /* a directory opens but cannot be read as lines: it must not crash */
    int ret = mca_common_umr_cost_load(&m_cost, dir, "ob1", m_err, sizeof(m_err));
    EXPECT_EQ(-1, ret);
    EXPECT_NE(std::string::npos, std::string(m_err).find(dir)) << m_err;
    EXPECT_STREQ("built-in defaults", m_cost.source);
    rmdir(dir);
}

TEST_F(pml_umr_cost, pml_cost_interpolates_by_block)
{
    std::string text = "version = 1\n";
    for (int b = 0; b < MCA_COMMON_UMR_COST_NUM_BLOCKS; ++b) {
        text += "pml.ob1.local.ddt." + std::to_string(8 << b) + ".op_ns = " +
                std::to_string(1000 * (b + 1)) + "\n";
        text += "pml.ob1.local.ddt." + std::to_string(8 << b) +
                ".byte_ns = " + std::to_string(0.1 * (b + 1)) + "\n";
    }
    ASSERT_EQ(0, load(text)) << m_err;
    auto p = [&](size_t bytes, double block) {
        return mca_common_umr_cost_pml(&m_cost, MCA_COMMON_UMR_COST_LOCAL, bytes,
                                       block);
    };
    EXPECT_DOUBLE_EQ(1000 + 0.1 * 4096, p(4096, 8));
    EXPECT_DOUBLE_EQ(2000 + 0.2 * 4096, p(4096, 16));
    /* halfway in log2 between 8 and 16 */
    EXPECT_NEAR(1500 + 0.15 * 4096, p(4096, 8 * std::sqrt(2.0)), 1e-6);
    /* clamped below 8 B and above 64 KiB */
    EXPECT_DOUBLE_EQ(p(4096, 8), p(4096, 4));
    EXPECT_DOUBLE_EQ(p(4096, 8), p(4096, 0));
    EXPECT_DOUBLE_EQ(14000 + 1.4 * (1 << 20), p(1 << 20, 65536));
    EXPECT_DOUBLE_EQ(p(1 << 20, 65536), p(1 << 20, 1 << 20));
    /* an unknown scope: the PML always wins */
    EXPECT_EQ(0, mca_common_umr_cost_pml(&m_cost, 7, 4096, 64));
}

TEST_F(pml_umr_cost, zcopy_formula_and_density)
{
    ASSERT_EQ(0, load("version = 1\n"
                      "engine.sw.get.dense.op_ns = 100\n"
                      "engine.sw.get.dense.rentry_ns = 10\n"
                      "engine.sw.get.dense.lentry_ns = 1\n"
                      "engine.sw.get.dense.byte_ns = 0.5\n"
                      "engine.sw.get.sparse.op_ns = 200\n"
                      "engine.sw.get.sparse.rentry_ns = 20\n"
                      "engine.sw.get.sparse.lentry_ns = 2\n"
                      "engine.sw.get.sparse.byte_ns = 1\n"
                      "pml.ob1.local.ctrl_ns = 1000\n"
                      "pml.ob1.remote.ctrl_ns = 3000\n")) << m_err;
    auto z = [&](int scope, double density) {
        return mca_common_umr_cost_zcopy(&m_cost, MCA_COMMON_UMR_COST_SW,
                                         MCA_COMMON_UMR_COST_GET, scope, 1000, 30, 7,
                                         density);
    };
    EXPECT_DOUBLE_EQ(1000 + 100 + 300 + 7 + 500, z(MCA_COMMON_UMR_COST_LOCAL, 1));
    EXPECT_DOUBLE_EQ(z(MCA_COMMON_UMR_COST_LOCAL, 1),
                     z(MCA_COMMON_UMR_COST_LOCAL, MCA_COMMON_UMR_COST_DENSE));
    EXPECT_DOUBLE_EQ(1000 + 200 + 600 + 14 + 1000,
                     z(MCA_COMMON_UMR_COST_LOCAL, 0.49));
    EXPECT_DOUBLE_EQ(3000 + 200 + 600 + 14 + 1000,
                     z(MCA_COMMON_UMR_COST_REMOTE, 0.1));
    EXPECT_TRUE(std::isinf(mca_common_umr_cost_zcopy(&m_cost, -1, 0, 0, 1, 1, 1,
                                                     1)));
    EXPECT_TRUE(std::isinf(mca_common_umr_cost_zcopy(&m_cost, 0, 2, 0, 1, 1, 1,
                                                     1)));
    EXPECT_TRUE(std::isinf(mca_common_umr_cost_zcopy(&m_cost, 0, 0, 2, 1, 1, 1,
                                                     1)));
}

/* The choice: zero-copy only below MARGIN of the PML's estimate, with the
 * get costs, the same block count on both sides and the block mean. */
TEST_F(pml_umr_cost, prefer_zcopy_margin)
{
    /* zcopy of 1 MiB in 1024 blocks: 100 + 10 * 1024 * 2 + 1 MiB * 0 = 20580
     * ns; the PML: 0 + byte * 1 MiB at 1024-byte blocks */
    auto with_pml_byte = [&](double byte_ns) {
        std::string text = "version = 1\n"
                           "engine.sw.get.sparse.op_ns = 100\n"
                           "engine.sw.get.sparse.rentry_ns = 10\n"
                           "engine.sw.get.sparse.lentry_ns = 10\n"
                           "engine.sw.get.sparse.byte_ns = 0\n"
                           "engine.sw.put.sparse.op_ns = 1e9\n"
                           "pml.ob1.local.ctrl_ns = 0\n";
        for (int b = 0; b < MCA_COMMON_UMR_COST_NUM_BLOCKS; ++b) {
            text += "pml.ob1.local.ddt." + std::to_string(8 << b) +
                    ".op_ns = 0\npml.ob1.local.ddt." + std::to_string(8 << b) +
                    ".byte_ns = " + std::to_string(byte_ns) + "\n";
        }
        EXPECT_EQ(0, load(text)) << m_err;
        return mca_common_umr_cost_prefer_zcopy(&m_cost, MCA_COMMON_UMR_COST_SW,
                                                MCA_COMMON_UMR_COST_LOCAL, 1 << 20,
                                                1024, 0.1);
    };
    double z = 100 + 10 * 1024 * 2, pml_equal = z / (1 << 20);
    EXPECT_EQ(0, with_pml_byte(pml_equal));          /* a tie: PML */
    EXPECT_EQ(0, with_pml_byte(pml_equal / 0.95));   /* 5% better: PML */
    EXPECT_EQ(1, with_pml_byte(pml_equal / 0.85));   /* 15% better: zcopy */
    /* 0 blocks counts as one; an unknown engine never goes zero-copy */
    EXPECT_EQ(0, mca_common_umr_cost_prefer_zcopy(&m_cost, -1,
                                                  MCA_COMMON_UMR_COST_LOCAL, 1 << 20,
                                                  0, 1));
    mca_common_umr_cost_defaults(&m_cost);
    EXPECT_EQ(0, mca_common_umr_cost_prefer_zcopy(&m_cost, MCA_COMMON_UMR_COST_SW,
                                                  MCA_COMMON_UMR_COST_LOCAL,
                                                  64 << 20, 1, 1));
}


/* Finding 7 of the ConnectX review: a message whose peer must be connected
 * at a full budget pays the connection (an LRU peer's endpoint goes, one is
 * created and connected: QP destroy, QP create, three state changes, and
 * the handshake's two messages). A 256 KiB remote message of 4 KiB blocks
 * that wins zero-copy over a connected peer passes through when it would
 * connect first; a 64 MiB one still goes zero-copy. Costs file key
 * engine.<eng>.connect_ns. */
TEST_F(pml_umr_cost, reconnect_in_the_choice)
{
    mca_common_umr_cost_defaults(&m_cost);
    EXPECT_EQ(1, mca_common_umr_cost_prefer_zcopy(&m_cost,
                                                  MCA_COMMON_UMR_COST_MLX5,
                                                  MCA_COMMON_UMR_COST_REMOTE,
                                                  256 << 10, 64, 0.5));
    EXPECT_EQ(0, mca_common_umr_cost_prefer_zcopy_connect(
                         &m_cost, MCA_COMMON_UMR_COST_MLX5,
                         MCA_COMMON_UMR_COST_REMOTE, 256 << 10, 64, 0.5));
    EXPECT_EQ(1, mca_common_umr_cost_prefer_zcopy_connect(
                         &m_cost, MCA_COMMON_UMR_COST_MLX5,
                         MCA_COMMON_UMR_COST_REMOTE, 64 << 20, 16384, 0.5));
    EXPECT_DOUBLE_EQ(1e6 + 2 * m_cost.pml[MCA_COMMON_UMR_COST_REMOTE].ctrl_ns,
                     mca_common_umr_cost_connect(&m_cost,
                                                 MCA_COMMON_UMR_COST_MLX5,
                                                 MCA_COMMON_UMR_COST_REMOTE));

    ASSERT_EQ(0, load("version = 1\nengine.mlx5.connect_ns = 0\n")) << m_err;
    EXPECT_EQ(1, mca_common_umr_cost_prefer_zcopy_connect(
                         &m_cost, MCA_COMMON_UMR_COST_MLX5,
                         MCA_COMMON_UMR_COST_REMOTE, 256 << 10, 64, 0.5))
            << "a measured free connection charges the handshake only";
    EXPECT_EQ(-1, load("version = 1\nengine.gpu.connect_ns = 1\n"));
}

/* Finding 7: the default budget of connected peers is a quarter of the
 * device's QPs and 1/16 of the node's memory over the endpoints' send
 * queues, both shared by the node's ranks: at max_qp 131072 and 256 KiB a
 * peer, 64 ranks on a 256 GiB node take 512 each by the QPs (8 GiB of send
 * queues on the node), on a 16 GiB node 64 by the memory (1 GiB). */
TEST_F(pml_umr_cost, conns_budget_from_qps_and_memory)
{
    const unsigned long long GiB = 1ull << 30, sq = 256 << 10;

    EXPECT_EQ(512ul, mca_common_umr_cost_conns_budget(131072, 64, 256 * GiB,
                                                      sq));
    EXPECT_EQ(64ul, mca_common_umr_cost_conns_budget(131072, 64, 16 * GiB,
                                                     sq));
    EXPECT_EQ(512ul, mca_common_umr_cost_conns_budget(131072, 64, 0, sq))
            << "memory unknown: the QPs";
    EXPECT_EQ(64ul, mca_common_umr_cost_conns_budget(0, 64, 16 * GiB, sq))
            << "QPs unknown: the memory";
    EXPECT_EQ(1ul, mca_common_umr_cost_conns_budget(8, 64, 1 << 20, sq))
            << "at least one";
    EXPECT_EQ(0ul, mca_common_umr_cost_conns_budget(0, 1, 0, 0));
}


/* osc/umr's part (osc_umr_choose.h): the wrapped osc component's put/get
 * figures, read for the component named, skipped for others and by pml/umr,
 * checked in every case. */
TEST_F(pml_umr_cost, osc_figures)
{
    const std::string text = "version = 1\n"
                             "osc.rdma.local.put.8.op_ns = 100\n"
                             "osc.rdma.local.put.8.byte_ns = 2\n"
                             "osc.rdma.local.put.65536.op_ns = 100\n"
                             "osc.rdma.local.put.65536.byte_ns = 0.5\n"
                             "osc.rdma.local.get.8.op_ns = 300\n"
                             "osc.ucx.local.put.8.op_ns = 7\n";

    write(text);
    ASSERT_EQ(0, mca_common_umr_cost_load_osc(&m_cost, m_path.c_str(), "ob1",
                                              "rdma", m_err, sizeof(m_err)))
        << m_err;
    EXPECT_EQ(1, m_cost.osc[MCA_COMMON_UMR_COST_LOCAL].measured);
    /* a local-only calibration stands for the remote scope */
    EXPECT_EQ(1, m_cost.osc[MCA_COMMON_UMR_COST_REMOTE].measured);
    EXPECT_DOUBLE_EQ(100 + 2 * 1000.0,
                     mca_common_umr_cost_osc(&m_cost, MCA_COMMON_UMR_COST_LOCAL,
                                             MCA_COMMON_UMR_COST_PUT, 1000, 8));
    EXPECT_DOUBLE_EQ(100 + 0.5 * 1000.0,
                     mca_common_umr_cost_osc(&m_cost, MCA_COMMON_UMR_COST_LOCAL,
                                             MCA_COMMON_UMR_COST_PUT, 1000,
                                             65536));
    EXPECT_DOUBLE_EQ(300, mca_common_umr_cost_osc(&m_cost,
                                                  MCA_COMMON_UMR_COST_LOCAL,
                                                  MCA_COMMON_UMR_COST_GET, 0,
                                                  8));
    /* osc/ucx's line was not rdma's */
    EXPECT_DOUBLE_EQ(100, m_cost.osc[0].op_ns[MCA_COMMON_UMR_COST_PUT][0]);

    /* pml/umr reads the same file and skips them */
    ASSERT_EQ(0, load(text)) << m_err;
    EXPECT_EQ(0, m_cost.osc[MCA_COMMON_UMR_COST_LOCAL].measured);
    EXPECT_LT(mca_common_umr_cost_osc(&m_cost, MCA_COMMON_UMR_COST_LOCAL,
                                      MCA_COMMON_UMR_COST_PUT, 1000, 8), 0);
}

TEST_F(pml_umr_cost, osc_rejected)
{
    expect_rejected("version = 1\nosc.rdma.local.put.12.op_ns = 1\n", 2);
    expect_rejected("version = 1\nosc.rdma.near.put.8.op_ns = 1\n", 2);
    expect_rejected("version = 1\nosc.rdma.local.send.8.op_ns = 1\n", 2);
    expect_rejected("version = 1\nosc.rdma.local.put.8.lat_ns = 1\n", 2);
    expect_rejected("version = 1\nosc.rdma.local.put.8 = 1\n", 2);
    /* another component's malformed line is still malformed */
    expect_rejected("version = 1\nosc.ucx.local.put.x.op_ns = 1\n", 2);
}

/* osc/umr's packed path: packed.<scope>.<op>.<block> figures, read whatever
 * the component (they are osc/umr's own), malformed ones reject the file. */
TEST_F(pml_umr_cost, packed_figures)
{
    const std::string text = "version = 1\n"
                             "packed.local.put.8.op_ns = 5000\n"
                             "packed.local.put.8.byte_ns = 0.75\n"
                             "packed.local.put.65536.op_ns = 5000\n"
                             "packed.local.put.65536.byte_ns = 0.25\n"
                             "packed.local.get.8.op_ns = 7000\n";

    write(text);
    ASSERT_EQ(0, mca_common_umr_cost_load_osc(&m_cost, m_path.c_str(), "ob1",
                                              "rdma", m_err, sizeof(m_err)))
        << m_err;
    EXPECT_EQ(1, m_cost.packed[MCA_COMMON_UMR_COST_LOCAL].measured);
    EXPECT_EQ(1, m_cost.packed[MCA_COMMON_UMR_COST_REMOTE].measured);
    EXPECT_EQ(0, m_cost.osc[MCA_COMMON_UMR_COST_LOCAL].measured);
    EXPECT_DOUBLE_EQ(5000 + 0.75 * 1000.0,
                     mca_common_umr_cost_packed(&m_cost,
                                                MCA_COMMON_UMR_COST_LOCAL,
                                                MCA_COMMON_UMR_COST_PUT, 1000,
                                                8));
    EXPECT_DOUBLE_EQ(5000 + 0.25 * 1000.0,
                     mca_common_umr_cost_packed(&m_cost,
                                                MCA_COMMON_UMR_COST_REMOTE,
                                                MCA_COMMON_UMR_COST_PUT, 1000,
                                                65536));
    EXPECT_DOUBLE_EQ(7000, mca_common_umr_cost_packed(&m_cost,
                                                      MCA_COMMON_UMR_COST_LOCAL,
                                                      MCA_COMMON_UMR_COST_GET,
                                                      0, 8));
    /* without figures: negative, not a candidate */
    ASSERT_EQ(0, load("version = 1\n")) << m_err;
    EXPECT_LT(mca_common_umr_cost_packed(&m_cost, MCA_COMMON_UMR_COST_LOCAL,
                                         MCA_COMMON_UMR_COST_PUT, 1000, 8), 0);
    expect_rejected("version = 1\npacked.local.put.12.op_ns = 1\n", 2);
    expect_rejected("version = 1\npacked.near.put.8.op_ns = 1\n", 2);
    expect_rejected("version = 1\npacked.local.send.8.op_ns = 1\n", 2);
    expect_rejected("version = 1\npacked.local.put.8.lat_ns = 1\n", 2);
    expect_rejected("version = 1\npacked.local.put.8 = 1\n", 2);
    expect_rejected("version = 1\npacked.rdma.local.put.8.op_ns = 1\n", 2);
}

/* The three-way pick: zero-copy or packed only below the margin of the
 * wrapped module's time, the lower of the two; a negative estimate is no
 * candidate; no wrapped figure: the lower candidate. */
TEST_F(pml_umr_cost, pick)
{
    EXPECT_EQ(MCA_COMMON_UMR_COST_ZCOPY, mca_common_umr_cost_pick(1000, 100, 200));
    EXPECT_EQ(MCA_COMMON_UMR_COST_PACKED, mca_common_umr_cost_pick(1000, 200, 100));
    EXPECT_EQ(MCA_COMMON_UMR_COST_ZCOPY, mca_common_umr_cost_pick(1000, 100, 100));
    EXPECT_EQ(MCA_COMMON_UMR_COST_PACKED, mca_common_umr_cost_pick(1000, 950, 100));
    EXPECT_EQ(MCA_COMMON_UMR_COST_ZCOPY, mca_common_umr_cost_pick(1000, 100, 950));
    EXPECT_EQ(MCA_COMMON_UMR_COST_PASS, mca_common_umr_cost_pick(1000, 950, 950));
    EXPECT_EQ(MCA_COMMON_UMR_COST_PASS, mca_common_umr_cost_pick(1000, 900, -1));
    EXPECT_EQ(MCA_COMMON_UMR_COST_ZCOPY, mca_common_umr_cost_pick(1000, 899, -1));
    EXPECT_EQ(MCA_COMMON_UMR_COST_PACKED, mca_common_umr_cost_pick(1000, -1, 10));
    EXPECT_EQ(MCA_COMMON_UMR_COST_PACKED, mca_common_umr_cost_pick(-1, 50, 10));
    EXPECT_EQ(MCA_COMMON_UMR_COST_PASS, mca_common_umr_cost_pick(-1, -1, -1));
}

/* One RMA operation: no control message; on the sw engine more local than
 * remote blocks are charged at the remote block's cost. */
TEST_F(pml_umr_cost, rma_estimate)
{
    ASSERT_EQ(0, load("version = 1\n"
                      "engine.sw.put.sparse.op_ns = 1000\n"
                      "engine.sw.put.sparse.rentry_ns = 10\n"
                      "engine.sw.put.sparse.lentry_ns = 4\n"
                      "engine.sw.put.sparse.byte_ns = 0.5\n"
                      "pml.ob1.local.ctrl_ns = 99999\n")) << m_err;
    EXPECT_DOUBLE_EQ(1000 + 10 * 100 + 4 * 100 + 0.5 * 800,
                     mca_common_umr_cost_rma(&m_cost, MCA_COMMON_UMR_COST_SW,
                                             MCA_COMMON_UMR_COST_PUT, 800, 100,
                                             100, 0.25));
    EXPECT_DOUBLE_EQ(1000 + 10 * 1 + 4 * 100 + 6 * 99 + 0.5 * 800,
                     mca_common_umr_cost_rma(&m_cost, MCA_COMMON_UMR_COST_SW,
                                             MCA_COMMON_UMR_COST_PUT, 800, 1,
                                             100, 0.25));
    EXPECT_TRUE(std::isinf(mca_common_umr_cost_rma(&m_cost, 5, 0, 1, 1, 1, 1)));
}

} // namespace
