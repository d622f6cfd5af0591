/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr's device selection (pml_umr_devices) on the rdma-core 44 model
 * (gtest_uct_mlx5_model): two ConnectX devices and a verbs device of another
 * vendor, one of them with two ports. The names the parameter matches are
 * the mlx5_umr component's mds (what ucx_info -d lists for mlx5_umr); the
 * chosen device and port are the ones the md opens.
 */
#include "test_pml_umr_devices.h"
#include "umr_test_verbs_fake.h"

#include <gtest/gtest.h>

#include <sched.h>
#include <stdio.h>

using namespace umr_test;

namespace {

class test_pml_umr_devices_model : public ::testing::Test {
protected:
    void SetUp() override
    {
        fake().reset();
        fake().devices = {{"mlx5_0", true}, {"irdma0", false},
                          {"mlx5_1", true}};
        /* every device of the model has these two ports: 1 down, 2 up */
        fake().dev_attr.orig_attr.phys_port_cnt = 2;
        fake().ports.assign(2, fake_ib_port(7, IBV_MTU_4096));
        fake().ports[0].attr.state = IBV_PORT_DOWN;
        m_comp = devsel_component();
        ASSERT_NE(nullptr, m_comp);
    }

    void TearDown() override
    {
        EXPECT_EQ(0, fake().live_objects());
    }

    /* select `value` among the component's devices and open the first
     * mlx5 device of the plan that opens, as pml/umr's rails do: its name,
     * or "" */
    std::string open_first_mlx5(const char *value, int local_rank = -1)
    {
        std::vector<std::string> names;
        std::string engine, dev;

        EXPECT_EQ(UCS_OK, devsel_query(m_comp, &names, &engine));
        devsel sel(names);
        if (sel.select(value) != 0) {
            return "error: " + std::string(sel.msg);
        }
        if (local_rank >= 0) {
            /* as pml/umr's rails do: the nearest first */
            umr_mpi_devices_nearest(m_comp, &sel.plan, local_rank);
        }
        for (unsigned i = 0; i < sel.plan.num; ++i) {
            uct_md_h md;
            if (!strcmp(sel.plan.dev[i].name, "sw") ||
                (umr_mpi_devices_md_open(m_comp, &sel.plan.dev[i], &md) !=
                 UCS_OK)) {
                continue;
            }
            dev = devsel_md_dev(md);
            if (sel.plan.dev[i].port) {
                dev += ":" + std::to_string(sel.plan.dev[i].port);
            }
            uct_md_close(md);
            break;
        }
        return dev;
    }

    uct_component_h m_comp = nullptr;
};

TEST_F(test_pml_umr_devices_model, devices_are_the_mlx5_mds)
{
    std::vector<std::string> names;
    std::string engine;

    {
        env_guard e("UCX_MLX5_UMR_ENGINE", nullptr);
        ASSERT_UCS_OK(devsel_query(m_comp, &names, &engine));
        EXPECT_EQ("auto", engine);
        EXPECT_EQ((std::vector<std::string>{"sw", "mlx5_0", "mlx5_1"}), names);
    }
    {
        env_guard e("UCX_MLX5_UMR_ENGINE", "mlx5");
        ASSERT_UCS_OK(devsel_query(m_comp, &names, &engine));
        EXPECT_EQ((std::vector<std::string>{"mlx5_0", "mlx5_1"}), names);
    }
    {
        env_guard e("UCX_MLX5_UMR_ENGINE", "sw");
        ASSERT_UCS_OK(devsel_query(m_comp, &names, &engine));
        EXPECT_EQ((std::vector<std::string>{"sw"}), names);
    }
}

TEST_F(test_pml_umr_devices_model, chosen_device_opens)
{
    env_guard e("UCX_MLX5_UMR_ENGINE", nullptr);

    EXPECT_EQ("mlx5_0", open_first_mlx5(""));        /* automatic: first */
    EXPECT_EQ("mlx5_1", open_first_mlx5("mlx5_1"));
    EXPECT_EQ("mlx5_1", open_first_mlx5("sw,mlx5_1,mlx5_0"));
    EXPECT_EQ("mlx5_1", open_first_mlx5("^mlx5_0"));
    EXPECT_EQ("",       open_first_mlx5("sw"));      /* no mlx5 rail */
    EXPECT_EQ("",       open_first_mlx5("^mlx5_0,mlx5_1"));

    /* another vendor's verbs device is not an mlx5_umr device */
    std::string r = open_first_mlx5("irdma0");
    EXPECT_EQ(0u, r.find("error: pml_umr_devices=\"irdma0\": no device "
                         "\"irdma0\" (devices here: sw, mlx5_0, mlx5_1)")) << r;
}

/* mlx5_0:2 as UCX_NET_DEVICES writes it: the md opens on port 2; port 1
 * is down, so naming it fails instead of opening another port, and the
 * next device named is tried. */
TEST_F(test_pml_umr_devices_model, port_is_the_one_named)
{
    env_guard e("UCX_MLX5_UMR_ENGINE", nullptr);

    EXPECT_EQ("mlx5_1:2", open_first_mlx5("mlx5_1:2"));
    EXPECT_EQ("",         open_first_mlx5("mlx5_1:1"));
    EXPECT_EQ("",         open_first_mlx5("mlx5_1:3"));   /* 2 ports */
    EXPECT_EQ("mlx5_0:2", open_first_mlx5("mlx5_1:1,mlx5_0:2"));
    EXPECT_EQ("mlx5_0",   open_first_mlx5("mlx5_0"));     /* first active */

    /* UCX_MLX5_UMR_PORT applies when no port is named, not otherwise */
    env_guard p("UCX_MLX5_UMR_PORT", "1");
    EXPECT_EQ("",         open_first_mlx5("mlx5_0"));
    EXPECT_EQ("mlx5_0:2", open_first_mlx5("mlx5_0:2"));
}

/* The mask local_cpus has in sysfs for CPU `cpu` alone ("00000001,00000000"
 * for CPU 32). */
std::string cpumask_of(int cpu)
{
    std::string s;
    char word[16];

    for (int w = cpu / 32; w >= 0; --w) {
        snprintf(word, sizeof(word), "%08x",
                 (w == cpu / 32) ? (1u << (cpu % 32)) : 0u);
        s += (s.empty() ? "" : ",") + std::string(word);
    }
    return s;
}

/* Finding 9 of issue 19: with several HCAs the automatic choice takes the
 * one whose local CPUs (md_attr.local_cpus, from the device's sysfs
 * directory as UCX reads it) hold the process's CPUs; among equally near
 * ones the local rank picks, so the ranks of a node spread. Before, every
 * rank took the first device that opened. Devices named by the parameter
 * keep the user's order. */
TEST_F(test_pml_umr_devices_model, nearest_device_first)
{
    env_guard e("UCX_MLX5_UMR_ENGINE", nullptr);
    cpu_set_t saved, one;
    int cpu;

    ASSERT_EQ(0, sched_getaffinity(0, sizeof(saved), &saved));
    for (cpu = 0; !CPU_ISSET(cpu, &saved); ++cpu) {
    }
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
    std::string near = cpumask_of(cpu), far = cpumask_of(cpu + 1);

    fake().devices = {{"mlx5_0", true, far}, {"irdma0", false, ""},
                      {"mlx5_1", true, near}};
    EXPECT_EQ("mlx5_1", open_first_mlx5("", 0)) << "the near one";
    EXPECT_EQ("mlx5_1", open_first_mlx5("", 1)) << "whatever the local rank";
    EXPECT_EQ("mlx5_0", open_first_mlx5("mlx5_0,mlx5_1", 0)) << "as named";

    /* two near devices: the ranks of the node take turns */
    fake().devices = {{"mlx5_0", true, near}, {"irdma0", false, ""},
                      {"mlx5_1", true, near}};
    EXPECT_EQ("mlx5_0", open_first_mlx5("", 0));
    EXPECT_EQ("mlx5_1", open_first_mlx5("", 1));
    EXPECT_EQ("mlx5_0", open_first_mlx5("", 2));

    /* no sysfs file: every CPU is near, as UCX takes it */
    fake().devices = {{"mlx5_0", true, ""}, {"mlx5_1", true, near}};
    EXPECT_EQ("mlx5_1", open_first_mlx5("", 1));

    ASSERT_EQ(0, sched_setaffinity(0, sizeof(saved), &saved));
}

} // namespace
