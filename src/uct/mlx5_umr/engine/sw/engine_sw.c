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

const umr_eng_ops_t umr_eng_sw_ops = {
    .name                 = "sw",
    .id                   = UMR_ENG_ID_SW,
    .query_devices        = umr_eng_sw_query_devices,
    .dev_open             = umr_eng_sw_dev_open,
    .dev_close            = umr_eng_sw_dev_close,
    .dev_query            = umr_eng_sw_dev_query,
    .dev_get_addr         = umr_eng_sw_dev_get_addr,
    .dev_is_reachable     = umr_eng_sw_dev_is_reachable,
    .mr_reg               = umr_eng_sw_mr_reg,
    .mr_dereg             = umr_eng_sw_mr_dereg,
    .mkey_create          = umr_eng_sw_mkey_create,
    .mkey_destroy         = umr_eng_sw_mkey_destroy,
    .cq_create            = umr_eng_sw_cq_create,
    .cq_destroy           = umr_eng_sw_cq_destroy,
    .cq_poll              = umr_eng_sw_cq_poll,
    .qp_create            = umr_eng_sw_qp_create,
    .qp_destroy           = umr_eng_sw_qp_destroy,
    .qp_sq_bytes          = umr_eng_sw_qp_sq_bytes,
    .qp_get_addr          = umr_eng_sw_qp_get_addr,
    .qp_connect           = umr_eng_sw_qp_connect,
    .qp_fail              = umr_eng_sw_qp_fail,
    .dev_poll_events      = umr_eng_sw_dev_poll_events,
    .post_umr_interleaved = umr_eng_sw_post_umr_interleaved,
    .post_umr_list        = umr_eng_sw_post_umr_list,
    .post_local_inv       = umr_eng_sw_post_local_inv,
    .post_rdma            = umr_eng_sw_post_rdma
};
