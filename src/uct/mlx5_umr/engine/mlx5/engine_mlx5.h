/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr engine, mlx5 backend (rdma-core 44.0, 56.1, 65.0; what differs
 * between releases is in engine_mlx5_compat.h): internal objects.
 *
 * Included by engine_mlx5*.c and by the wrap tests, which inspect what the
 * backend built. Nothing above the engine includes it.
 *
 * Key rotation. engine.h asks that every UMR post changes the key, so a
 * remote key packed before a reconfiguration fails instead of aliasing the
 * new layout. rdma-core writes (mkey->lkey & 0xff) into the mkey context
 * of every UMR and sets MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY, in
 * mlx5dv_wr_mr_interleaved/_list as in mlx5dv_wr_mkey_configure (qp.c
 * mlx5_send_wr_mkey_configure, which both call; the tag since 43.0, the
 * same code in 44.0, 56.1 and 65.0); a non-zero tag
 * needs the context's update-tag support, else the WR fails with
 * EOPNOTSUPP, and the NIC takes a new tag only on a key created with
 * MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG. So an engine mkey is one
 * hardware mkey created with UPDATE_TAG, and each UMR moves its 8-bit tag
 * to the next value: a stale key fails (the transport also invalidates
 * with LOCAL_INV first) until the tag wraps, after 256 reconfigurations.
 *
 * Without kernel support for UPDATE_TAG (mlx5dv_create_mkey fails with
 * EOPNOTSUPP) the tag cannot change; then, and only then, an engine mkey is
 * a ring of UMR_ENG_MLX5_MKEY_RING hardware mkeys with tag 0 and each UMR
 * configures the next member, so lkey/rkey still change on every post; a
 * stale key aliases again after UMR_ENG_MLX5_MKEY_RING reconfigurations.
 * Which of the two a device uses is probed once, at dev_open (one key
 * created with UPDATE_TAG and destroyed), so that caps.max_mkeys counts
 * engine mkeys of the mode in use: max_mr, or max_mr / the ring size.
 */
#ifndef UMR_ENGINE_MLX5_H_
#define UMR_ENGINE_MLX5_H_

#include "engine.h"

#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>
#include <ucs/sys/compiler_def.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Hardware mkeys behind one engine mkey (see "Key rotation" above). */
#define UMR_ENG_MLX5_MKEY_RING        8

/* UMR list entries a QP is sized for at most. The largest send WQE is
 * the device's max_sq_desc_sz (from the kernel, MLX5_CAP_GEN max_wqe_sz_sq;
 * rdma-core refuses a QP whose WQE exceeds it with EINVAL:
 * providers/mlx5/verbs.c mlx5_calc_send_wqe, 44.0:1615, 56.1:1639,
 * 65.0:1754), 1 KiB on the ConnectX adapters we know, and rdma-core has no
 * call that reports it: dev_open finds it by creating QPs of decreasing
 * WQE size (umr_eng_mlx5_dev_probe_wqe). A UMR WQE carries 192 B of segments
 * (ctrl 16, UMR ctrl 48, mkey context 64, one 64 B translation block:
 * _sq_overhead, which counts them for MR_INTERLEAVED / MR_LIST in every
 * release) and a 4 B inline header, so a 1 KiB WQE has max_inline_data
 * 1024 - 192 - 4 = 828 and the provider allows (828 + 4) / 16 = 52 list /
 * 51 interleaved entries (providers/mlx5/qp.c,
 * mlx5_send_wr_set_mkey_layout); a 512 B one 20 / 19. The engine never
 * asks for more than a 1 KiB WQE (the send queue grows with it). */
#define UMR_ENG_MLX5_MAX_LIST         52
#define UMR_ENG_MLX5_MAX_INTERLEAVED  (UMR_ENG_MLX5_MAX_LIST - 1)
#define UMR_ENG_MLX5_UMR_OVERHEAD     192   /* B of a UMR WQE before data */

/* A QP that posts RDMA only (umr_eng_qp_params_t rdma_only) asks for the
 * RDMA send operations alone: its WQE carries ctrl 16 + remote address 16
 * B before the SGEs (verbs.c _sq_overhead, the same in 44.0:1463,
 * 56.1:1486, 65.0:1601), 16 B an SGE (mlx5_calc_send_wqe), no inline room;
 * with 4 SGEs 96 B -> 128 B, 2 basic blocks instead of a 1 KiB UMR WQE's
 * 16. Without mlx5 send operations rdma-core leaves the mlx5dv UMR builders
 * NULL (qp.c mlx5_qp_fill_wr_pfns sets them only "if (mlx5_ops)", 44.0:3595,
 * 56.1 and 65.0:3602; mlx5dv_wr_mr_* call through them unchecked): the
 * engine refuses a UMR on such a QP before it could reach rdma-core. */
#define UMR_ENG_MLX5_RDMA_OVERHEAD    32    /* B of an RDMA WQE before SGEs */
#define UMR_ENG_MLX5_SGE_BYTES        16    /* struct mlx5_wqe_data_seg */

/* Descriptors one indirect key may be created for: the 16-bit max_entries
 * rounded up to a multiple of 4 (verbs.c _mlx5dv_create_mkey). */
#define UMR_ENG_MLX5_MAX_MKEY_ENTRIES (UINT16_MAX & ~3u)

/* Keys over keys the engine lets the layout engine build at most: the
 * device's max_indirection may allow fewer (engine_mlx5_hca.c), never
 * more. */
#define UMR_ENG_MLX5_MAX_DEPTH        4

/* 16-bit bytes_count and stride (bytes_count + bytes_skip) fields. */
#define UMR_ENG_MLX5_MAX_BYTES_COUNT  UINT16_MAX
#define UMR_ENG_MLX5_MAX_STRIDE       UINT16_MAX

/* rdma-core sums list lengths in an int up to 60.x (44.0, 56.1; qp.c
 * umr_sg_list_create), in 64 bits from 61.0 (65.0): lists stay under 2 GiB
 * on every release, since the library loaded at run time may be an older
 * one (engine_mlx5_compat.h). The interleaved length is 64 bits in all,
 * sum(bytes_count) * repeat (umr_strided_seg_create): an interleaved key
 * has no 4 GiB limit; the product of 51 16-bit counts and a 32-bit repeat
 * cannot overflow. */
#define UMR_ENG_MLX5_MAX_LIST_BYTES   ((uint64_t)INT32_MAX)
#define UMR_ENG_MLX5_MAX_ILV_BYTES    UINT64_MAX

/* A UMR WQE of 1 KiB is 16 basic blocks of 64 B, and rdma-core caps the
 * send queue in basic blocks (verbs.c mlx5_calc_sq_size: roundup_pow_of_two(
 * max_send_wr * wqe_size) / 64 <= max_send_wqebb): a QP holds
 * max_qp_wr / 16 work requests (max_qp_wr / 8 with 512 B WQEs). */
#define UMR_ENG_MLX5_WQE_BB           64
#define UMR_ENG_MLX5_WQE_BBS          16

#define UMR_ENG_MLX5_ACCESS_MASK \
    (UMR_ENG_ACCESS_LOCAL_WRITE | UMR_ENG_ACCESS_REMOTE_WRITE | \
     UMR_ENG_ACCESS_REMOTE_READ | UMR_ENG_ACCESS_REMOTE_ATOMIC)

/* Inline data that makes room for `n` UMR list entries (n - 1
 * interleaved): rdma-core allows list n <= (inl + 4) / 16 and interleaved
 * n <= (inl + 4) / 16 - 1 (providers/mlx5/qp.c,
 * mlx5_send_wr_set_mkey_layout). */
#define UMR_ENG_MLX5_INLINE_FOR_LIST(_n)  (16u * (_n) - 4u)

/* RoCE version of a GID in the device address (UCX packs the same into
 * its ib address flags, ib_iface.c uct_ib_iface_address_pack). */
enum {
    UMR_ENG_MLX5_GID_IB      = 0,
    UMR_ENG_MLX5_GID_ROCE_V1 = 1,
    UMR_ENG_MLX5_GID_ROCE_V2 = 2
};

/* What a peer needs to judge reachability and build an address vector:
 * UCX's uct_ib_iface_is_reachable compares the pkeys, the link layers, the
 * IB subnet prefixes and, on RoCE, the RoCE versions and address families
 * of the GIDs in use; a RoCE v1 host and a RoCE v2 one, or an IPv4 GID and
 * an IPv6 one, do not talk. */
typedef struct UCS_S_PACKED umr_eng_mlx5_dev_addr {
    uint8_t  link_layer;        /* IBV_LINK_LAYER_INFINIBAND / _ETHERNET */
    uint8_t  port_num;
    uint16_t lid;               /* IB only */
    uint8_t  gid[16];           /* IB: port GID 0; RoCE: GID at gid_index */
    uint8_t  gid_version;       /* UMR_ENG_MLX5_GID_* */
    uint8_t  gid_family;        /* RoCE: 4 (IPv4-mapped GID) or 6; IB: 0 */
    uint16_t pkey;              /* the partition key in use, host order */
} umr_eng_mlx5_dev_addr_t;

typedef struct UCS_S_PACKED umr_eng_mlx5_qp_addr {
    uint32_t qp_num;
    uint8_t  mtu;               /* enum ibv_mtu */
    uint8_t  rd_atomic;         /* RDMA reads this side takes at once
                                   (its max_dest_rd_atomic): the peer's
                                   max_rd_atomic is at most this */
} umr_eng_mlx5_qp_addr_t;

/* The fence a device asks on a UMR WQE: the HCA capability umr_fence
 * (engine_mlx5_hca.c). */
enum {
    UMR_ENG_MLX5_FENCE_STRONG = 0,
    UMR_ENG_MLX5_FENCE_SMALL  = 1,
    UMR_ENG_MLX5_FENCE_NONE   = 2
};

/* What the device says of UMR and indirect keys (DEVX QUERY_HCA_CAP,
 * engine_mlx5_hca.c); when the query fails, what is safe on any device. */
typedef struct umr_eng_mlx5_hca_caps {
    int      queried;                    /* the device answered */
    char     error[64];                  /* why not */
    uint8_t  umr_fence;                  /* UMR_ENG_MLX5_FENCE_* */
    uint8_t  max_indirection;            /* levels of indirect keys */
    uint8_t  log_max_klm_list_size;      /* descriptors of a key, log2 */
    uint8_t  umr_modify_atomic_disabled; /* a UMR may not touch atomics */
    uint8_t  umr_indirect_mkey_disabled;
    uint8_t  atomic;                     /* the device does atomics */
    uint8_t  ooo_sl_mask_cap;            /* the vport context says which
                                            SLs route adaptively */
    int      ooo_sl_mask_read;           /* IB: ooo_sl_mask was read */
    uint16_t ooo_sl_mask;                /* SLs with adaptive routing (out
                                            of order delivery) */
} umr_eng_mlx5_hca_caps_t;

typedef struct umr_eng_mlx5_dev {
    struct ibv_context  *ctx;
    struct ibv_pd       *pd;
    uint8_t             port_num;
    uint8_t             link_layer;
    uint16_t            lid;
    int                 gid_index;
    union ibv_gid       gid;
    uint8_t             gid_version;        /* UMR_ENG_MLX5_GID_* */
    uint8_t             gid_family;         /* RoCE: 4 or 6 */
    enum ibv_mtu        active_mtu;
    uint8_t             max_rd_atomic;      /* initiator depth */
    uint8_t             max_dest_rd_atomic; /* responder depth */
    int                 update_tag;         /* kernel lets a key's tag
                                               change: one hardware mkey
                                               per engine mkey, no ring */
    uint32_t            max_list;           /* list entries of the largest
                                               WQE the device allows (<= 52,
                                               umr_eng_mlx5_dev_probe_wqe) */
    uint32_t            wqe_bbs;            /* its size in basic blocks */
    uint32_t            max_send_wqebb;     /* basic blocks a send queue may
                                               have (the device's max_qp_wr:
                                               rdma-core's max_send_wqebb) */
    umr_eng_mlx5_hca_caps_t hca;            /* read at open */
    /* the RC connection (umr_eng_dev_params_t, resolved) */
    uint16_t            pkey_index;
    uint16_t            pkey;
    uint8_t             traffic_class;
    uint8_t             sl;
    uint8_t             hop_limit;
    uint32_t            flow_label;
    uint8_t             qp_timeout;         /* 4.096 us * 2^qp_timeout */
    uint8_t             retry_cnt;
    uint8_t             rnr_retry;
    umr_eng_caps_t      caps;
} umr_eng_mlx5_dev_t;

typedef struct umr_eng_mlx5_mr {
    umr_eng_mr_t        super;
    struct ibv_mr       *mr;
} umr_eng_mlx5_mr_t;

typedef struct umr_eng_mlx5_mkey {
    umr_eng_mkey_t      super;
    int                 update_tag;         /* one key, tag rotates: ring[0] */
    unsigned            cur;                /* ring member in use */
    struct mlx5dv_mkey  *ring[UMR_ENG_MLX5_MKEY_RING];
} umr_eng_mlx5_mkey_t;

typedef struct umr_eng_mlx5_cq {
    umr_eng_mlx5_dev_t  *dev;
    struct ibv_cq_ex    *cq;
} umr_eng_mlx5_cq_t;

typedef struct umr_eng_mlx5_qp umr_eng_mlx5_qp_t;

/* One send queue slot. The verbs wr_id of a WR is the address of its slot,
 * which gives back the QP, the caller's wr_id and the opcode (error
 * completions carry no valid opcode). */
typedef struct umr_eng_mlx5_wr {
    umr_eng_mlx5_qp_t   *qp;
    uint64_t            seq;
    uint64_t            wr_id;
    umr_eng_opcode_t    opcode;
} umr_eng_mlx5_wr_t;

struct umr_eng_mlx5_qp {
    umr_eng_mlx5_dev_t  *dev;
    umr_eng_mlx5_cq_t   *cq;
    struct ibv_qp       *qp;
    struct ibv_qp_ex    *qpx;
    struct mlx5dv_qp_ex *mqpx;
    int                 connected;
    int                 rdma_only;          /* no UMR, no LOCAL_INV */
    unsigned            sq_size;
    size_t              sq_bytes;           /* its send queue, from what
                                               the provider wrote back */
    unsigned            max_sge;
    uint32_t            max_inline_data;    /* as read back after create */
    uint32_t            max_interleaved;
    uint32_t            max_list;
    uint64_t            sq_head;            /* WRs posted */
    uint64_t            sq_tail;            /* WRs whose slot was freed */
    umr_eng_mlx5_wr_t   *wrs;               /* sq_size slots */
};

/* engine_mlx5_dev.c */
ucs_status_t umr_eng_mlx5_query_devices(char (*names)[UMR_ENG_NAME_MAX],
                                        unsigned max, unsigned *num_p);
ucs_status_t umr_eng_mlx5_dev_open(const char *name,
                                   const umr_eng_dev_params_t *params,
                                   umr_eng_dev_t **dev_p);
void         umr_eng_mlx5_dev_close(umr_eng_dev_t *dev);
void         umr_eng_mlx5_dev_query(umr_eng_dev_t *dev, umr_eng_caps_t *caps);
void         umr_eng_mlx5_dev_get_addr(umr_eng_dev_t *dev, void *addr);
int          umr_eng_mlx5_dev_is_reachable(umr_eng_dev_t *dev,
                                           const void *remote_dev_addr);

/* engine_mlx5_mem.c */
ucs_status_t umr_eng_mlx5_mr_reg(umr_eng_dev_t *dev, void *addr,
                                 size_t length, unsigned access,
                                 umr_eng_mr_t **mr_p);
ucs_status_t umr_eng_mlx5_mr_dereg(umr_eng_dev_t *dev, umr_eng_mr_t *mr);
ucs_status_t umr_eng_mlx5_mkey_create(umr_eng_dev_t *dev,
                                      uint32_t max_entries,
                                      umr_eng_mkey_t **mkey_p);
ucs_status_t umr_eng_mlx5_mkey_destroy(umr_eng_dev_t *dev,
                                       umr_eng_mkey_t *mkey);

/* engine_mlx5_qp.c */
ucs_status_t umr_eng_mlx5_cq_create(umr_eng_dev_t *dev, unsigned size,
                                    umr_eng_cq_t **cq_p);
void         umr_eng_mlx5_cq_destroy(umr_eng_cq_t *cq);
ucs_status_t umr_eng_mlx5_qp_create(umr_eng_dev_t *dev, umr_eng_cq_t *cq,
                                    const umr_eng_qp_params_t *params,
                                    umr_eng_qp_t **qp_p);
void         umr_eng_mlx5_qp_destroy(umr_eng_qp_t *qp);
size_t       umr_eng_mlx5_qp_sq_bytes(umr_eng_dev_t *dev,
                                      const umr_eng_qp_params_t *params);
void         umr_eng_mlx5_qp_get_addr(umr_eng_qp_t *qp, void *addr);
ucs_status_t umr_eng_mlx5_qp_connect(umr_eng_qp_t *qp,
                                     const void *remote_dev_addr,
                                     const void *remote_qp_addr);
void         umr_eng_mlx5_qp_fail(umr_eng_qp_t *qp);

/* engine_mlx5_hca.c */
void         umr_eng_mlx5_hca_caps_unknown(umr_eng_mlx5_hca_caps_t *hca);
void         umr_eng_mlx5_hca_caps_query(struct ibv_context *ctx,
                                         const char *name,
                                         umr_eng_mlx5_hca_caps_t *hca);
/* IB: the SLs of `port` that route adaptively, as UCX reads them
 * (uct_ib_mlx5_devx_query_ooo_sl_mask); hca->ooo_sl_mask_read says if. */
void         umr_eng_mlx5_hca_query_ooo_sl(struct ibv_context *ctx,
                                           const char *name, uint8_t port,
                                           umr_eng_mlx5_hca_caps_t *hca);
const char   *umr_eng_mlx5_fence_str(unsigned fence);

/* engine_mlx5_dev.c: asynchronous events */
int          umr_eng_mlx5_dev_poll_events(umr_eng_dev_t *dev,
                                          umr_eng_event_t *events, int max);

/* The exponent of the RC timeout (4.096 us * 2^n) nearest to `seconds`, as
 * UCX computes it (ib_device.c uct_ib_to_qp_fabric_time): 1 at least, 0
 * (no timeout) from 2^32 on. */
uint8_t      umr_eng_mlx5_qp_timeout(double seconds);

/* What a hardware check prints of an open device (contrib/hw-check.sh):
 * one "NAME VALUE" line a fact, to `stream`. */
void         umr_eng_mlx5_dev_print_facts(umr_eng_dev_t *dev, void *stream);

/* engine_mlx5_post.c */
int          umr_eng_mlx5_cq_poll(umr_eng_cq_t *cq, umr_eng_wc_t *wcs,
                                  int max);
ucs_status_t umr_eng_mlx5_post_umr_interleaved(
        umr_eng_qp_t *qp, umr_eng_mkey_t *mkey, unsigned access,
        uint32_t repeat, unsigned num_entries,
        const umr_eng_interleaved_t *entries, uint64_t wr_id, unsigned flags);
ucs_status_t umr_eng_mlx5_post_umr_list(umr_eng_qp_t *qp,
                                        umr_eng_mkey_t *mkey,
                                        unsigned access, unsigned num_sge,
                                        const umr_eng_sge_t *sge,
                                        uint64_t wr_id, unsigned flags);
ucs_status_t umr_eng_mlx5_post_local_inv(umr_eng_qp_t *qp,
                                         umr_eng_mkey_t *mkey,
                                         uint64_t wr_id, unsigned flags);
ucs_status_t umr_eng_mlx5_post_rdma(umr_eng_qp_t *qp,
                                    umr_eng_opcode_t opcode,
                                    const umr_eng_sge_t *sge,
                                    unsigned num_sge, uint64_t remote_addr,
                                    uint32_t rkey, uint64_t wr_id,
                                    unsigned flags);

/* Map a verbs completion status / opcode (success only) to the engine's. */
umr_eng_wc_status_t umr_eng_mlx5_wc_status(enum ibv_wc_status status);
int                 umr_eng_mlx5_wc_opcode(enum ibv_wc_opcode opcode,
                                           umr_eng_opcode_t *opcode_p);

#ifdef __cplusplus
}
#endif

#endif
