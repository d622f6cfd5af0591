/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * ABI guard, deliberately wrong build: umr_abi.c is compiled here with
 * UMR_ABI_TEST_SKEW=8, as if the headers did not match the running libuct.
 * The guard must refuse, and say which class and which sizes.
 */
#include "umr_abi.h"

#include <ucs/debug/log_def.h>
#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

static std::vector<std::string> logged_errors;

static ucs_log_func_rc_t
capture_log(const char *file, unsigned line, const char *function,
            ucs_log_level_t level, const ucs_log_component_config_t *comp,
            const char *message, va_list ap)
{
    char buf[512];

    if (level <= UCS_LOG_LEVEL_ERROR) {
        vsnprintf(buf, sizeof(buf), message, ap);
        logged_errors.push_back(buf);
    }
    return UCS_LOG_FUNC_RC_STOP;
}

TEST(abi_skew, sizes_differ)
{
    const umr_abi_class_t *c = uct_mlx5_umr_abi_classes();
    ASSERT_NE(nullptr, c->name);
    EXPECT_EQ(c->running_size + 8, c->compiled_size) << c->name;
}

TEST(abi_skew, check_refuses_with_one_clear_line)
{
    logged_errors.clear();
    ucs_log_push_handler(capture_log);
    int ok = uct_mlx5_umr_abi_check();
    ucs_log_pop_handler();

    EXPECT_EQ(0, ok);
    ASSERT_EQ(1u, logged_errors.size());
    const std::string &msg = logged_errors[0];
    EXPECT_NE(std::string::npos, msg.find("not registering")) << msg;
    EXPECT_NE(std::string::npos, msg.find("uct_iface_t")) << msg;
    EXPECT_NE(std::string::npos, msg.find("rebuild")) << msg;
}
