/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * gtest_uct_mlx5_model: the transport suites of test_uct.cc run on the mlx5
 * engine over the model of rdma-core 44 (umr_test_verbs_model.h).
 */
#include "umr_test_uct.h"

namespace {

/* before main(): every suite of this program opens "mlx5_0" (the model's
 * device) unless UMR_TEST_DEV says otherwise */
const int model_dev_init = (umr_test::uct_test_set_default_dev("mlx5_0"), 0);

} // namespace
