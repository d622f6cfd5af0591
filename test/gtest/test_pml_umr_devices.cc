/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr's device selection (src/mpi/core/umr_mpi_devices.c, the MCA
 * parameter pml_umr_devices), without mpirun: automatic, include and
 * exclude lists, ports as UCX_NET_DEVICES writes them, every rejection
 * (the message names the parameter, the bad name and the devices that
 * exist), and the device list of the real mlx5_umr component on the sw
 * engine. The same selection over several mlx5 devices and ports runs on
 * the rdma-core model in gtest_uct_mlx5_model (test_pml_umr_devices_model).
 */
#include "umr_mpi_devices.h"
#include "test_pml_umr_devices.h"
#include "uct_umr.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <string>
#include <vector>

using umr_test::devsel;

namespace {

class pml_umr_devices : public ::testing::Test {
protected:
    devsel m_sel{{"sw", "mlx5_0", "mlx5_1"}};
};

TEST_F(pml_umr_devices, automatic_is_sw_then_every_mlx5_device)
{
    for (const char *value : {"", "  ", (const char*)nullptr}) {
        SCOPED_TRACE(value ? value : "(null)");
        ASSERT_EQ(0, m_sel.select(value)) << m_sel.msg;
        EXPECT_EQ("sw mlx5_0 mlx5_1", m_sel.plan_str());
        for (unsigned i = 0; i < m_sel.plan.num; ++i) {
            EXPECT_EQ(0, m_sel.plan.dev[i].named);
            EXPECT_EQ(0u, m_sel.plan.dev[i].port);
        }
    }
}

/* Finding 9 of issue 19: the automatic mlx5 devices nearest first, the
 * local rank choosing among the equally near; named ones as named. */
TEST_F(pml_umr_devices, nearest_first_local_rank_spreads)
{
    devsel sel({"sw", "mlx5_0", "mlx5_1", "mlx5_2"});
    const unsigned near[] = {0, 1, 4, 4};

    ASSERT_EQ(0, sel.select("")) << sel.msg;
    umr_mpi_devices_order(&sel.plan, near, 0);
    EXPECT_EQ("sw mlx5_1 mlx5_2 mlx5_0", sel.plan_str());
    ASSERT_EQ(0, sel.select("")) << sel.msg;
    umr_mpi_devices_order(&sel.plan, near, 1);
    EXPECT_EQ("sw mlx5_2 mlx5_1 mlx5_0", sel.plan_str());
    ASSERT_EQ(0, sel.select("")) << sel.msg;
    umr_mpi_devices_order(&sel.plan, near, 2);
    EXPECT_EQ("sw mlx5_1 mlx5_2 mlx5_0", sel.plan_str());

    /* named: the user's order */
    const unsigned near2[] = {0, 4, 1};
    ASSERT_EQ(0, sel.select("sw,mlx5_0,mlx5_2")) << sel.msg;
    umr_mpi_devices_order(&sel.plan, near2, 1);
    EXPECT_EQ("sw mlx5_0 mlx5_2", sel.plan_str());

    /* one device: nothing to choose */
    devsel one({"sw", "mlx5_0"});
    const unsigned near1[] = {0, 0};
    ASSERT_EQ(0, one.select("")) << one.msg;
    umr_mpi_devices_order(&one.plan, near1, 5);
    EXPECT_EQ("sw mlx5_0", one.plan_str());
}

TEST_F(pml_umr_devices, include_only_the_named_ones)
{
    ASSERT_EQ(0, m_sel.select("sw")) << m_sel.msg;
    EXPECT_EQ("sw", m_sel.plan_str());
    EXPECT_EQ(1, m_sel.plan.dev[0].named);

    ASSERT_EQ(0, m_sel.select("mlx5_1")) << m_sel.msg;
    EXPECT_EQ("mlx5_1", m_sel.plan_str());   /* no sw: same host passes */

    /* sw first whatever its place; mlx5 devices in the order given */
    ASSERT_EQ(0, m_sel.select("mlx5_1, mlx5_0,sw")) << m_sel.msg;
    EXPECT_EQ("sw mlx5_1 mlx5_0", m_sel.plan_str());
    for (unsigned i = 0; i < m_sel.plan.num; ++i) {
        EXPECT_EQ(1, m_sel.plan.dev[i].named);
    }
    ASSERT_EQ(0, m_sel.select("mlx5_0,,")) << m_sel.msg;
    EXPECT_EQ("mlx5_0", m_sel.plan_str());
}

TEST_F(pml_umr_devices, include_with_ports)
{
    ASSERT_EQ(0, m_sel.select("mlx5_1:2,sw")) << m_sel.msg;
    EXPECT_EQ("sw mlx5_1:2", m_sel.plan_str());
    ASSERT_EQ(0, m_sel.select("mlx5_0:1,mlx5_1:255")) << m_sel.msg;
    EXPECT_EQ("mlx5_0:1 mlx5_1:255", m_sel.plan_str());
}

TEST_F(pml_umr_devices, exclude)
{
    ASSERT_EQ(0, m_sel.select("^sw")) << m_sel.msg;
    EXPECT_EQ("mlx5_0 mlx5_1", m_sel.plan_str());
    ASSERT_EQ(0, m_sel.select("^mlx5_0")) << m_sel.msg;
    EXPECT_EQ("sw mlx5_1", m_sel.plan_str());
    ASSERT_EQ(0, m_sel.select(" ^mlx5_1,mlx5_0")) << m_sel.msg;
    EXPECT_EQ("sw", m_sel.plan_str());
    ASSERT_EQ(0, m_sel.select("^sw,mlx5_1,mlx5_0")) << m_sel.msg;
    EXPECT_EQ("", m_sel.plan_str());
    EXPECT_EQ(0u, m_sel.plan.num);
    for (unsigned i = 0; i < m_sel.plan.num; ++i) {
        EXPECT_EQ(0, m_sel.plan.dev[i].named);
    }
}

/* Every rejection: -1, no device planned, and a message that names the
 * parameter, what is wrong, and (for names) the devices there are. */
TEST_F(pml_umr_devices, rejected)
{
    static const struct {
        const char *value, *why;
        bool       lists_devices;
    } cases[] = {
        {"mlx5_9",            "no device \"mlx5_9\"",                true},
        {"sw,mlx5_9",         "no device \"mlx5_9\"",                true},
        {"^mlx5_9",           "no device \"mlx5_9\"",                true},
        {"MLX5_0",            "no device \"MLX5_0\"",                true},
        {"mlx5_0:1:1",        "\"mlx5_0:1:1\": a port is a number",  true},
        {"sw:1",              "\"sw:1\": the sw device has no ports", true},
        {"mlx5_0:0",          "\"mlx5_0:0\": a port is a number",    true},
        {"mlx5_0:256",        "\"mlx5_0:256\": a port is a number",  true},
        {"mlx5_0:",           "\"mlx5_0:\": a port is a number",     true},
        {"mlx5_0:x",          "\"mlx5_0:x\": a port is a number",    true},
        {"mlx5_0:1x",         "\"mlx5_0:1x\": a port is a number",   true},
        {"mlx5_0:-1",         "\"mlx5_0:-1\": a port is a number",   true},
        {":1",                "\":1\": not a device name",           true},
        {"^mlx5_0:1",         "\"mlx5_0:1\": a port cannot be excluded", false},
        {"sw,sw",             "\"sw\" is named twice",               false},
        {"mlx5_0:1,mlx5_0:2", "\"mlx5_0\" is named twice",           false},
        {"^",                 "names no device",                     true},
        {",",                 "names no device",                     true},
        {"^ , ",              "names no device",                     true},
        {"mlx5_0123456789012345678901234567890", "not a device name", true},
    };

    for (const auto &c : cases) {
        SCOPED_TRACE(c.value);
        EXPECT_EQ(-1, m_sel.select(c.value));
        EXPECT_EQ(0u, m_sel.plan.num);
        std::string msg = m_sel.msg;
        EXPECT_EQ(0u, msg.find(std::string("pml_umr_devices=\"") +
                               c.value + "\"")) << msg;
        EXPECT_NE(std::string::npos, msg.find(c.why)) << msg;
        if (c.lists_devices) {
            EXPECT_NE(std::string::npos,
                      msg.find("(devices here: sw, mlx5_0, mlx5_1)")) << msg;
        }
    }
}

TEST_F(pml_umr_devices, more_names_than_fit)
{
    std::vector<std::string> many{"sw"};
    std::string value = "sw";
    for (int i = 0; i < UMR_MPI_DEVICES_MAX; ++i) {
        many.push_back("mlx5_" + std::to_string(i));
        value += "," + many.back();
    }
    devsel sel{many};
    EXPECT_EQ(-1, sel.select(value.c_str()));
    EXPECT_NE(std::string::npos, std::string(sel.msg).find("more than 16"))
        << sel.msg;
    /* 16 names fit */
    value = value.substr(3);
    ASSERT_EQ(0, sel.select(value.c_str())) << sel.msg;
    EXPECT_EQ(16u, sel.plan.num);
}

TEST_F(pml_umr_devices, nothing_here)
{
    devsel none{{}};

    ASSERT_EQ(0, none.select("")) << none.msg;
    EXPECT_EQ(0u, none.plan.num);
    EXPECT_EQ(-1, none.select("sw"));
    EXPECT_NE(std::string::npos,
              std::string(none.msg).find("no device \"sw\" (no device here)"))
        << none.msg;
}

/* The real mlx5_umr component (sw engine; no mlx5 device on CI): what the
 * parameter's names are matched against, following UCX_MLX5_UMR_ENGINE. */
TEST_F(pml_umr_devices, component_devices)
{
    uct_component_h comp = umr_test::devsel_component();
    ASSERT_NE(nullptr, comp);

    std::vector<std::string> names;
    std::string engine;

    umr_test::env_guard sw("UCX_MLX5_UMR_ENGINE", "sw");
    ASSERT_UCS_OK(umr_test::devsel_query(comp, &names, &engine));
    EXPECT_EQ("sw", engine);
    ASSERT_EQ(1u, names.size());
    EXPECT_EQ("sw", names[0]);

    /* mlx5 only: no sw device (an mlx5 device, if this host has one) */
    umr_test::env_guard mlx5("UCX_MLX5_UMR_ENGINE", "mlx5");
    ASSERT_UCS_OK(umr_test::devsel_query(comp, &names, &engine));
    EXPECT_EQ("mlx5", engine);
    for (const auto &n : names) {
        EXPECT_NE("sw", n);
    }

    umr_test::env_guard automatic("UCX_MLX5_UMR_ENGINE", nullptr);
    ASSERT_UCS_OK(umr_test::devsel_query(comp, &names, &engine));
    EXPECT_EQ("auto", engine);
    ASSERT_GE(names.size(), 1u);
    EXPECT_EQ("sw", names[0]);

    /* the planned sw device opens as an md */
    devsel sel{names};
    ASSERT_EQ(0, sel.select("sw")) << sel.msg;
    uct_md_h md;
    ASSERT_UCS_OK(umr_mpi_devices_md_open(comp, &sel.plan.dev[0], &md));
    EXPECT_EQ("sw", umr_test::devsel_md_dev(md));
    /* an mlx5_umr md (the call also links the transport in) */
    uct_umr_md_stats_t stats;
    EXPECT_EQ(UCS_OK, uct_umr_md_get_stats(md, &stats));
    uct_md_close(md);
}

} // namespace
