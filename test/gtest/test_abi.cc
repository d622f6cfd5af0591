/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * ABI guard, matching build: the module's compiled class sizes equal the
 * running libuct's, and the guard lets the module register.
 */
#include "umr_abi.h"

#include <uct/api/version.h>
#include <gtest/gtest.h>

#include <string>

TEST(abi, classes_match_running_libuct)
{
    int n = 0;
    for (const umr_abi_class_t *c = uct_mlx5_umr_abi_classes(); c->name; ++c, ++n) {
        EXPECT_GT(c->compiled_size, 0u) << c->name;
        EXPECT_EQ(c->compiled_size, c->running_size) << c->name;
    }
    EXPECT_EQ(4, n);
}

TEST(abi, build_version_is_installed_version)
{
    EXPECT_EQ(std::string(UCT_VERNO_STRING),
              std::string(uct_mlx5_umr_abi_build_version()));
}

TEST(abi, check_passes)
{
    EXPECT_EQ(1, uct_mlx5_umr_abi_check());
}
