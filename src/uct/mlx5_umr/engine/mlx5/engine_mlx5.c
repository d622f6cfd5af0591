/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr engine, mlx5 backend (rdma-core 44.0, 56.1, 65.0): the ops table.
 * Built only when rdma-core is found (HAVE_UMR_MLX5_ENGINE).
 */
#include "umr_config.h"

#include "engine_mlx5.h"

UMR_ENG_BACKEND_DEFINE(mlx5, UMR_ENG_ID_MLX5);
