/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr engine, mlx5 backend: the HCA capabilities rdma-core does not
 * report, read through DEVX as UCX reads them (ib_mlx5dv_md.c
 * uct_ib_mlx5dv_md_open: QUERY_HCA_CAP, general capabilities, current
 * values, through mlx5dv_devx_general_cmd). mlx5dv_query_device reports
 * none of them (struct mlx5dv_context: CQE compression, striding RQ,
 * dynamic UARs, ...).
 *
 * The fields, their offsets in the command layout (include/linux/mlx5/
 * mlx5_ifc.h struct mlx5_ifc_cmd_hca_cap_bits; the same in rdma-core's
 * providers/mlx5/mlx5_ifc.h and UCX's ib_mlx5_ifc.h) and who reads them:
 *  - umr_fence (2 bits at 0x20a): the fence the device asks on a UMR WQE.
 *    The kernel fences its own UMRs with it (main.c mlx5_get_umr_fence:
 *    STRONG 0 -> strong ordering, SMALL 1 -> initiator small fence, NONE 2
 *    -> none; wr.c mlx5_ib_post_send: fence = dev->umr_fence on the UMR WQE,
 *    the initiator small fence on the next). rdma-core fences only the WQE
 *    after a UMR (qp.c mlx5_send_wr_mkey_configure: fm_cache = small); the
 *    UMR itself carries a fence only with IBV_SEND_FENCE, which is
 *    MLX5_WQE_CTRL_FENCE, small and fence (4 << 5; _common_wqe_init_op).
 *  - max_indirection (8 bits at 0x100): levels of indirect keys the device
 *    follows (kernel odp.c pagefault_single_data_segment: an indirect key
 *    at depth >= max_indirection, the top key at depth 0, fails).
 *  - log_max_klm_list_size (6 bits at 0x11a): descriptors of one indirect
 *    key, as a power of two.
 *  - umr_modify_atomic_disabled (1 bit at 0x208): a UMR may not change the
 *    atomic access of a key (kernel umr.c umr_check_mkey_mask: -EPERM for a
 *    UMR whose mask has MLX5_MKEY_MASK_A). rdma-core sets that mask bit in
 *    every UMR (qp.c mlx5_send_wr_set_mkey_access_flags, called by
 *    mlx5dv_wr_mr_interleaved / _list). UCX reads the bit for its indirect
 *    atomic keys (UCT_IB_MLX5_MD_FLAG_INDIRECT_ATOMICS).
 *  - umr_indirect_mkey_disabled (1 bit at 0x209), atomic (1 bit at 0x21e).
 *  - ooo_sl_mask (1 bit at 0x138): the vport context tells which service
 *    levels route adaptively (out of order); on IB UCX then reads the mask
 *    (16 bits at 0x290 of hca_vport_context, QUERY_HCA_VPORT_CONTEXT 0x762
 *    with the port at 0x4c/4: ib_mlx5_dv.c
 *    uct_ib_mlx5_devx_query_ooo_sl_mask, ib_mlx5.c uct_ib_mlx5_select_sl:
 *    with AR_ENABLE=auto the SL asked, and whether it routes adaptively).
 */
#include "umr_config.h"

#include "engine_mlx5.h"

#include <ucs/debug/log.h>

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#define UMR_ENG_MLX5_CMD_OP_QUERY_HCA_CAP  0x100
#define UMR_ENG_MLX5_CAP_GENERAL           0x0
#define UMR_ENG_MLX5_HCA_CAP_OPMOD_CUR     0x1
#define UMR_ENG_MLX5_CMD_HDR_BYTES         16     /* in/out headers */
#define UMR_ENG_MLX5_HCA_CAP_BYTES         4096   /* the capability union */
#define UMR_ENG_MLX5_CMD_OP_QUERY_VPORT_CTX 0x762
#define UMR_ENG_MLX5_VPORT_CTX_BYTES       512

/* A field of a big-endian command layout: bit offset and width, as
 * mlx5_ifc.h gives them. */
static unsigned umr_eng_mlx5_ifc_get(const void *buf, unsigned bit,
                                     unsigned width)
{
    uint32_t dw;

    memcpy(&dw, (const char*)buf + (bit / 32) * 4, sizeof(dw));
    return (ntohl(dw) >> (32 - (bit % 32) - width)) & ((1ull << width) - 1);
}

static void umr_eng_mlx5_ifc_set(void *buf, unsigned bit, unsigned width,
                                 unsigned value)
{
    unsigned shift = 32 - (bit % 32) - width;
    uint32_t mask  = (uint32_t)(((1ull << width) - 1) << shift);
    uint32_t dw;

    memcpy(&dw, (char*)buf + (bit / 32) * 4, sizeof(dw));
    dw = htonl((ntohl(dw) & ~mask) | ((value << shift) & mask));
    memcpy((char*)buf + (bit / 32) * 4, &dw, sizeof(dw));
}

void umr_eng_mlx5_hca_caps_unknown(umr_eng_mlx5_hca_caps_t *hca)
{
    /* what is safe on any device: UMRs waited for, no nesting */
    memset(hca, 0, sizeof(*hca));
    hca->umr_fence       = UMR_ENG_MLX5_FENCE_STRONG;
    hca->max_indirection = 1;
}

void umr_eng_mlx5_hca_caps_query(struct ibv_context *ctx, const char *name,
                                 umr_eng_mlx5_hca_caps_t *hca)
{
    uint32_t in[UMR_ENG_MLX5_CMD_HDR_BYTES / 4];
    uint32_t out[(UMR_ENG_MLX5_CMD_HDR_BYTES +
                  UMR_ENG_MLX5_HCA_CAP_BYTES) / 4];
    const void *cap = (const char*)out + UMR_ENG_MLX5_CMD_HDR_BYTES;
    int ret;

    umr_eng_mlx5_hca_caps_unknown(hca);
    memset(in, 0, sizeof(in));
    memset(out, 0, sizeof(out));
    /* query_hca_cap_in: opcode (16 bits at 0), op_mod (16 bits at 0x30) */
    umr_eng_mlx5_ifc_set(in, 0, 16, UMR_ENG_MLX5_CMD_OP_QUERY_HCA_CAP);
    umr_eng_mlx5_ifc_set(in, 0x30, 16, (UMR_ENG_MLX5_CAP_GENERAL << 1) |
                                       UMR_ENG_MLX5_HCA_CAP_OPMOD_CUR);
    ret = mlx5dv_devx_general_cmd(ctx, in, sizeof(in), out, sizeof(out));
    if (ret != 0) {
        /* rdma-core returns the errno (and sets it) */
        snprintf(hca->error, sizeof(hca->error), "%s",
                 strerror((ret > 0) ? ret : errno));
        ucs_debug("%s: DEVX QUERY_HCA_CAP failed (%s): UMRs waited for, no "
                  "nested keys", name, hca->error);
        return;
    }

    hca->queried                    = 1;
    hca->umr_fence                  = umr_eng_mlx5_ifc_get(cap, 0x20a, 2);
    hca->max_indirection            = umr_eng_mlx5_ifc_get(cap, 0x100, 8);
    hca->log_max_klm_list_size      = umr_eng_mlx5_ifc_get(cap, 0x11a, 6);
    hca->umr_modify_atomic_disabled = umr_eng_mlx5_ifc_get(cap, 0x208, 1);
    hca->umr_indirect_mkey_disabled = umr_eng_mlx5_ifc_get(cap, 0x209, 1);
    hca->atomic                     = umr_eng_mlx5_ifc_get(cap, 0x21e, 1);
    hca->ooo_sl_mask_cap            = umr_eng_mlx5_ifc_get(cap, 0x138, 1);
    if (hca->umr_fence > UMR_ENG_MLX5_FENCE_NONE) {
        hca->umr_fence = UMR_ENG_MLX5_FENCE_STRONG;  /* reserved: as the kernel */
    }
    ucs_debug("%s: umr_fence %u max_indirection %u log_max_klm_list_size %u "
              "umr_modify_atomic_disabled %u umr_indirect_mkey_disabled %u",
              name, hca->umr_fence, hca->max_indirection,
              hca->log_max_klm_list_size, hca->umr_modify_atomic_disabled,
              hca->umr_indirect_mkey_disabled);
}

void umr_eng_mlx5_hca_query_ooo_sl(struct ibv_context *ctx, const char *name,
                                   uint8_t port, umr_eng_mlx5_hca_caps_t *hca)
{
    uint32_t in[UMR_ENG_MLX5_CMD_HDR_BYTES / 4];
    uint32_t out[(UMR_ENG_MLX5_CMD_HDR_BYTES +
                  UMR_ENG_MLX5_VPORT_CTX_BYTES) / 4];
    int ret;

    hca->ooo_sl_mask_read = 0;
    hca->ooo_sl_mask      = 0;
    if (!hca->ooo_sl_mask_cap) {
        return;
    }
    memset(in, 0, sizeof(in));
    memset(out, 0, sizeof(out));
    umr_eng_mlx5_ifc_set(in, 0, 16, UMR_ENG_MLX5_CMD_OP_QUERY_VPORT_CTX);
    umr_eng_mlx5_ifc_set(in, 0x4c, 4, port);
    ret = mlx5dv_devx_general_cmd(ctx, in, sizeof(in), out, sizeof(out));
    if (ret != 0) {
        ucs_debug("%s:%u: QUERY_HCA_VPORT_CONTEXT failed: %s", name, port,
                  strerror((ret > 0) ? ret : errno));
        return;
    }
    hca->ooo_sl_mask_read = 1;
    hca->ooo_sl_mask      = umr_eng_mlx5_ifc_get(
            (const char*)out + UMR_ENG_MLX5_CMD_HDR_BYTES, 0x290, 16);
}

const char *umr_eng_mlx5_fence_str(unsigned fence)
{
    switch (fence) {
    case UMR_ENG_MLX5_FENCE_NONE:  return "none";
    case UMR_ENG_MLX5_FENCE_SMALL: return "small";
    default:                  return "strong";
    }
}
