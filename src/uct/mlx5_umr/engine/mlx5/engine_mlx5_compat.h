/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr engine, mlx5 backend: the rdma-core releases it builds against,
 * and what differs between them, in one place. Fed by the configure probes
 * of m4/verbs.m4 (HAVE_*); nothing else in the backend tests a probe or a
 * release number.
 *
 * Releases of the support matrix: 44.0 (Debian 12), 56.1 (Debian 13),
 * 65.0 (Debian unstable). What the backend relies on is the same in all
 * three (read in each release's source; the table with file:function:line
 * per release is test/common/umr_test_verbs_model.h):
 *  - mlx5dv_wr_mr_interleaved / _list and every ibv_wr_* are static inline
 *    calls through the function pointers of struct mlx5dv_qp_ex /
 *    ibv_qp_ex; ibv_qp_to_qp_ex (libibverbs) and mlx5dv_qp_ex_from_ibv_qp_ex
 *    (libmlx5, MLX5_1.10) are exported functions.
 *  - a UMR completes with MLX5DV_WC_UMR == IBV_WC_DRIVER1 (135 in all three;
 *    56 added IBV_WC_FLUSH = 8 below IBV_WC_RECV, which moves nothing).
 *  - inline UMR entries (max_inline_data + 4) / 16 (list) and one less
 *    (interleaved), 16-bit bytes_count and stride, IBV_SEND_INLINE required,
 *    the access flags a UMR key takes, the tag check of the context's
 *    MKEY_UPDATE_TAG support, mlx5dv_create_mkey through DEVX, the send
 *    queue sized in 64 B basic blocks: identical code in all three.
 *
 * Differences the headers show (probed):
 *  - struct ibv_port_attr.active_speed_ex (49.0+: 56.1, 65.0): a port faster
 *    than NDR (XDR) reports NDR in the 8-bit active_speed and its real speed
 *    here. 44.0 has no such field (an XDR port reads as NDR there).
 *
 * Differences only the library's behaviour shows: not switched here. The
 * backend is built to be right on every release, because libmlx5.so.1 keeps
 * its soname (1.24.44.0, 1.25.56.1, 1.27.65.0) and a binary built against
 * one release may run on another:
 *  - umr_sg_list_create sums a UMR list's lengths in an int up to 60.x
 *    (44.0, 56.1) and in a uint64_t from 61.0 (65.0; commit e23cb0a72,
 *    backported to 56.4, 60.2 and other stable releases): the backend keeps
 *    list keys under 2 GiB (UMR_ENG_MLX5_MAX_LIST_BYTES) on every release.
 *  - _sq_overhead counts MLX5DV_QP_EX_WITH_MKEY_CONFIGURE from 44.1 / 45.0
 *    (commit 24850871b): the backend does not ask for MKEY_CONFIGURE, and
 *    every release counts the MR_INTERLEAVED / MR_LIST it asks for.
 * The tests' model of rdma-core follows each of these per release.
 */
#ifndef UMR_ENGINE_MLX5_COMPAT_H_
#define UMR_ENGINE_MLX5_COMPAT_H_

#include "umr_config.h"

#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>
#include <stdint.h>

#ifdef HAVE_STRUCT_IBV_PORT_ATTR_ACTIVE_SPEED_EX
#  define UMR_ENG_MLX5_HAVE_SPEED_EX 1

/* IB speed code of a port (1 SDR ... 128 NDR, 256 XDR): active_speed_ex
 * when set, else active_speed (man ibv_query_port, rdma-core 49+). */
static inline uint32_t
umr_eng_mlx5_port_speed(const struct ibv_port_attr *attr)
{
    return (attr->active_speed_ex != 0) ? attr->active_speed_ex :
                                          attr->active_speed;
}
#else
#  define UMR_ENG_MLX5_HAVE_SPEED_EX 0

static inline uint32_t
umr_eng_mlx5_port_speed(const struct ibv_port_attr *attr)
{
    return attr->active_speed;
}
#endif

#endif
