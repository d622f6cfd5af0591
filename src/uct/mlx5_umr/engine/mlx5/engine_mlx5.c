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

const umr_eng_ops_t umr_eng_mlx5_ops = {
    .name                 = "mlx5",
    .id                   = UMR_ENG_ID_MLX5,
    .query_devices        = umr_eng_mlx5_query_devices,
    .dev_open             = umr_eng_mlx5_dev_open,
    .dev_close            = umr_eng_mlx5_dev_close,
    .dev_query            = umr_eng_mlx5_dev_query,
    .dev_get_addr         = umr_eng_mlx5_dev_get_addr,
    .dev_is_reachable     = umr_eng_mlx5_dev_is_reachable,
    .mr_reg               = umr_eng_mlx5_mr_reg,
    .mr_dereg             = umr_eng_mlx5_mr_dereg,
    .mkey_create          = umr_eng_mlx5_mkey_create,
    .mkey_destroy         = umr_eng_mlx5_mkey_destroy,
    .cq_create            = umr_eng_mlx5_cq_create,
    .cq_destroy           = umr_eng_mlx5_cq_destroy,
    .cq_poll              = umr_eng_mlx5_cq_poll,
    .qp_create            = umr_eng_mlx5_qp_create,
    .qp_destroy           = umr_eng_mlx5_qp_destroy,
    .qp_sq_bytes          = umr_eng_mlx5_qp_sq_bytes,
    .qp_get_addr          = umr_eng_mlx5_qp_get_addr,
    .qp_connect           = umr_eng_mlx5_qp_connect,
    .qp_fail              = umr_eng_mlx5_qp_fail,
    .dev_poll_events      = umr_eng_mlx5_dev_poll_events,
    .post_umr_interleaved = umr_eng_mlx5_post_umr_interleaved,
    .post_umr_list        = umr_eng_mlx5_post_umr_list,
    .post_local_inv       = umr_eng_mlx5_post_local_inv,
    .post_rdma            = umr_eng_mlx5_post_rdma
};
