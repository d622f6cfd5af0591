/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr sw engine: the ops table. The backend is split like the mlx5 one:
 * engine_sw_dev.c (probe, devices), engine_sw_mem.c (memory regions and
 * indirect keys), engine_sw_key.c (the key table and key resolution),
 * engine_sw_qp.c (CQs and QPs), engine_sw_post.c (posting and polling) and
 * engine_sw_exec.c (the "NIC" that executes work requests).
 */
#include "umr_config.h"

#include "engine_sw.h"

UMR_ENG_BACKEND_DEFINE(sw, UMR_ENG_ID_SW);
