/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr engine: the narrow, verbs-shaped interface the transport runs on.
 *
 * Two backends implement it:
 *  - mlx5 (mlx5/): rdma-core (44.0, 56.1, 65.0: mlx5/engine_mlx5_compat.h),
 *                  DEVX, UMR through the extended QP API.
 *  - sw   (sw/):   software emulation across processes of one host through
 *                  cross-memory attach; enforces the NIC's contract so the
 *                  layers above are tested for real.
 *
 * Semantics both backends follow (those of an mlx5 RC QP):
 *  - Memory regions (mr) are addressed by virtual address. Indirect keys
 *    (mkey) are zero-based: addresses through them are byte offsets.
 *  - A 32-bit key is (index << 8 | tag). Every UMR post changes the key of
 *    the mkey (mkey->lkey/rkey change), so remote keys packed before a
 *    reconfiguration fail with a remote access error instead of aliasing
 *    (sw: rotates the tag; mlx5: rotates the tag too - every rdma-core
 *    release we build against writes the key's tag with each UMR - when the
 *    kernel lets a key's tag change (MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG),
 *    else it moves to the next of a ring of hardware mkeys: engine_mlx5.h,
 *    "Key rotation"; an old key fails once the transport has invalidated
 *    it, as it must).
 *  - Work requests on one QP execute in order; a UMR is fenced against the
 *    WRs that follow it on the same QP. Work only progresses and completes
 *    through cq_poll: never inside a post call.
 *  - Completions are generated for SIGNALED WRs and for every failed WR.
 *    After a failure the QP is in error state and every later WR on it
 *    completes with UMR_ENG_WC_WR_FLUSH_ERR.
 *  - A QP has sq_size slots. A slot is taken at post and freed when the
 *    completion of that WR, or of a later signaled WR of the same QP, is
 *    polled. Posting with no free slot returns UCS_ERR_NO_RESOURCE.
 *  - Limits are enforced at post: a descriptor that breaks a hardware limit
 *    (entries per UMR, 16-bit fields, SGEs per RDMA, message size) is
 *    refused with UCS_ERR_EXCEEDS_LIMIT/UCS_ERR_INVALID_PARAM before the
 *    NIC could see it; nothing is posted in that case.
 */
#ifndef UMR_ENGINE_H_
#define UMR_ENGINE_H_

#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UMR_ENG_NAME_MAX      32
#define UMR_ENG_ADDR_MAX      64   /* max size of a device or QP address */
#define UMR_ENG_CPU_WORDS     16   /* local_cpus: 1024 CPUs */

/* Access flags: values equal to IBV_ACCESS_* on purpose. */
enum {
    UMR_ENG_ACCESS_LOCAL_WRITE   = 1u << 0,
    UMR_ENG_ACCESS_REMOTE_WRITE  = 1u << 1,
    UMR_ENG_ACCESS_REMOTE_READ   = 1u << 2,
    UMR_ENG_ACCESS_REMOTE_ATOMIC = 1u << 3
};

/* Work request flags */
enum {
    UMR_ENG_WR_SIGNALED = 1u << 0,
    UMR_ENG_WR_FENCE    = 1u << 1   /* wait for prior RDMA reads */
};

typedef enum {
    UMR_ENG_OP_RDMA_WRITE,
    UMR_ENG_OP_RDMA_READ,
    UMR_ENG_OP_UMR,
    UMR_ENG_OP_LOCAL_INV
} umr_eng_opcode_t;

typedef enum {
    UMR_ENG_WC_SUCCESS,
    UMR_ENG_WC_LOC_LEN_ERR,      /* local length/limit violation */
    UMR_ENG_WC_LOC_PROT_ERR,     /* bad lkey, access or bounds (local) */
    UMR_ENG_WC_REM_ACCESS_ERR,   /* bad rkey, tag, access or bounds (remote) */
    UMR_ENG_WC_REM_OP_ERR,       /* remote operation failed */
    UMR_ENG_WC_RETRY_EXC_ERR,    /* peer unreachable / gone */
    UMR_ENG_WC_WR_FLUSH_ERR,     /* flushed: QP already in error */
    UMR_ENG_WC_MW_BIND_ERR,      /* UMR could not be applied */
    UMR_ENG_WC_GENERAL_ERR
} umr_eng_wc_status_t;

/* Mirrors struct ibv_sge. */
typedef struct umr_eng_sge {
    uint64_t addr;
    uint32_t length;
    uint32_t lkey;
} umr_eng_sge_t;

/* Mirrors struct mlx5dv_mr_interleaved. */
typedef struct umr_eng_interleaved {
    uint64_t addr;
    uint32_t bytes_count;
    uint32_t bytes_skip;
    uint32_t lkey;
} umr_eng_interleaved_t;

typedef struct umr_eng_dev  umr_eng_dev_t;
typedef struct umr_eng_cq   umr_eng_cq_t;
typedef struct umr_eng_qp   umr_eng_qp_t;

/* Registered contiguous memory. Backends embed this as the first member. */
typedef struct umr_eng_mr {
    void     *addr;
    size_t   length;
    uint32_t lkey;
    uint32_t rkey;
} umr_eng_mr_t;

/* Indirect (UMR) key. Backends embed this as the first member. */
typedef struct umr_eng_mkey {
    uint32_t lkey;          /* current key, tag included */
    uint32_t rkey;          /* equal to lkey on both backends */
    uint32_t max_entries;   /* as created */
} umr_eng_mkey_t;

/* The hardware limits of one device, in one place: the md copies them into
 * the layout engine's umr_layout_limits_t and the transport reads them from
 * the md; nothing above the engine repeats a hardware constant.
 *
 * Entry counts: a UMR WQE of a given inline size holds max_list list
 * entries, or max_interleaved = max_list - 1 interleaved entries (the
 * strided header takes one; rdma-core providers/mlx5/qp.c,
 * mlx5_send_wr_set_mkey_layout / umr_strided_seg_create, the same in 44.0,
 * 56.1 and 65.0). An indirect key created for
 * max_list descriptors takes either kind. */
typedef struct umr_eng_caps {
    char     name[UMR_ENG_NAME_MAX];  /* device name, e.g. "mlx5_0", "sw" */
    uint32_t max_interleaved;   /* entries per UMR interleaved (inline) */
    uint32_t max_list;          /* entries per UMR list (inline); also the
                                   descriptors of an indirect key */
    uint32_t max_depth;         /* levels of keys over keys (1: none) */
    uint32_t umr_wait;          /* 1: a UMR must have completed before a
                                   work request that uses its key, or
                                   another UMR, is posted (the device asks
                                   a fence the backend cannot give); 0: the
                                   QP orders them */
    uint64_t max_ilv_bytes;     /* bytes one interleaved key may address */
    uint64_t max_list_bytes;    /* bytes one list key may address */
    uint32_t max_bytes_count;   /* 16-bit field limit */
    uint32_t max_stride;        /* bytes_count + bytes_skip limit */
    uint32_t max_sge;           /* SGEs per RDMA write/read */
    uint32_t max_qp_wr;         /* largest sq_size */
    uint32_t max_qp;            /* QPs the device can hold (0: no limit
                                   known); the iface's max_num_eps */
    uint32_t max_mkeys;         /* indirect keys the device can hold */
    uint64_t max_msg;           /* largest RDMA message */
    uint64_t max_mr_size;
    unsigned num_ports;
    size_t   dev_addr_len;      /* <= UMR_ENG_ADDR_MAX */
    size_t   qp_addr_len;       /* <= UMR_ENG_ADDR_MAX */
    double   latency;           /* seconds, for iface performance estimates */
    double   bandwidth;         /* bytes/second */
    /* CPUs near the device (bit n of word n / 64: CPU n), as the kernel
     * lists them for its PCI function (mlx5: sysfs device/local_cpus, as
     * UCX's uct_ib_device_get_locality reads it); all set when unknown */
    uint64_t local_cpus[UMR_ENG_CPU_WORDS];
    int      numa_node;         /* -1 when unknown */
} umr_eng_caps_t;

/* Device parameters (UCX_MLX5_UMR_* md variables); umr_eng_dev_params_init
 * sets the defaults, which are UCX's for its rc transports. */
typedef struct umr_eng_dev_params {
    unsigned port;              /* 1-based; 0 = first active port */
    int      gid_index;         /* RoCE GID index; -1 = auto */
    size_t   sw_max_keys;       /* sw: key table capacity */
    double   sw_span_density;   /* sw: read whole span when the layout
                                   covers at least this fraction of it */
    /* mlx5: the RC connection (UCX_RC_* and UCX_IB_* of UCX) */
    double   timeout;           /* seconds a try waits for its ACK */
    unsigned retry_count;       /* tries after the first (0..7) */
    unsigned rnr_retry;         /* RNR retries (0..7, 7: for ever) */
    int      traffic_class;     /* GRH traffic class (RoCE v2: DSCP << 2),
                                   -1: auto (106 on RoCE v2, else 0) */
    int      sl;                /* IB service level / RoCE priority,
                                   -1: auto (0) */
    unsigned hop_limit;         /* GRH hop limit / RoCE v2 TTL */
    unsigned flow_label;        /* GRH flow label (0: the kernel derives
                                   the RoCE v2 UDP source port from the
                                   QP numbers) */
    int      pkey;              /* IB partition 0..0x7fff, -1: auto (the
                                   first full member of the port's table) */
} umr_eng_dev_params_t;

/* Asynchronous events of a device (dev_poll_events). */
typedef enum {
    UMR_ENG_EVENT_PORT_ERR,     /* the port went down: no QP of the device
                                   reaches anyone any more */
    UMR_ENG_EVENT_PORT_ACTIVE,  /* the port is up again, our address as
                                   it was */
    UMR_ENG_EVENT_ADDR_CHANGE,  /* our address changed (the LID, the GID or
                                   pkey in use, read again after a port
                                   event): peers address us by the old one */
    UMR_ENG_EVENT_QP_FAILED,    /* one QP (event.qp) is in error: fatal,
                                   request or access error */
    UMR_ENG_EVENT_DEVICE_FATAL, /* the device is gone */
    UMR_ENG_EVENT_OTHER         /* nothing to act on */
} umr_eng_event_type_t;

typedef struct umr_eng_event {
    umr_eng_event_type_t type;
    umr_eng_qp_t         *qp;   /* UMR_ENG_EVENT_QP_FAILED only */
    int                  raw;   /* the backend's own code (logs) */
} umr_eng_event_t;

typedef struct umr_eng_qp_params {
    unsigned sq_size;           /* send queue slots (work requests) */
    unsigned max_sge;           /* SGEs per RDMA WR */
    unsigned umr_list_entries;  /* sizes the inline UMR WQE, counted as
                                   list entries (1 .. caps.max_list); the
                                   QP then takes umr_list_entries - 1
                                   interleaved entries. Ignored (0) when
                                   rdma_only */
    int      rdma_only;         /* the QP posts RDMA writes and reads only:
                                   created without the UMR and LOCAL_INV
                                   send operations and without the inline
                                   UMR room, so its send queue is sized for
                                   RDMA WQEs (mlx5: 32 B + 16 B an SGE,
                                   instead of 1 KiB UMR WQEs). A UMR or
                                   LOCAL_INV post on it fails with
                                   UCS_ERR_UNSUPPORTED, nothing posted */
} umr_eng_qp_params_t;

typedef struct umr_eng_wc {
    uint64_t            wr_id;
    umr_eng_opcode_t    opcode;
    umr_eng_wc_status_t status;
    umr_eng_qp_t        *qp;
} umr_eng_wc_t;

/* Which backend an ops table is: compare ids, never names. */
typedef enum {
    UMR_ENG_ID_SW,
    UMR_ENG_ID_MLX5,
    UMR_ENG_ID_LAST
} umr_eng_id_t;

typedef struct umr_eng_ops {
    const char   *name;         /* "mlx5" or "sw" */
    umr_eng_id_t id;

    /* Names of the devices this backend can open, NUL-separated into
     * names[max][UMR_ENG_NAME_MAX]. No device: *num_p = 0, UCS_OK. */
    ucs_status_t (*query_devices)(char (*names)[UMR_ENG_NAME_MAX],
                                  unsigned max, unsigned *num_p);

    ucs_status_t (*dev_open)(const char *name,
                             const umr_eng_dev_params_t *params,
                             umr_eng_dev_t **dev_p);
    void         (*dev_close)(umr_eng_dev_t *dev);
    void         (*dev_query)(umr_eng_dev_t *dev, umr_eng_caps_t *caps);
    /* Device address: what a peer needs to judge reachability. Address
     * buffers (device and QP) may be unaligned: backends memcpy them. */
    void         (*dev_get_addr)(umr_eng_dev_t *dev, void *addr);
    int          (*dev_is_reachable)(umr_eng_dev_t *dev,
                                     const void *remote_dev_addr);

    ucs_status_t (*mr_reg)(umr_eng_dev_t *dev, void *addr, size_t length,
                           unsigned access, umr_eng_mr_t **mr_p);
    ucs_status_t (*mr_dereg)(umr_eng_dev_t *dev, umr_eng_mr_t *mr);

    ucs_status_t (*mkey_create)(umr_eng_dev_t *dev, uint32_t max_entries,
                                umr_eng_mkey_t **mkey_p);
    ucs_status_t (*mkey_destroy)(umr_eng_dev_t *dev, umr_eng_mkey_t *mkey);

    ucs_status_t (*cq_create)(umr_eng_dev_t *dev, unsigned size,
                              umr_eng_cq_t **cq_p);
    void         (*cq_destroy)(umr_eng_cq_t *cq);
    /* Returns the number of completions written (>= 0), or a negative
     * ucs_status_t on a fatal CQ error. Drives the sw backend's work. */
    int          (*cq_poll)(umr_eng_cq_t *cq, umr_eng_wc_t *wcs, int max);

    ucs_status_t (*qp_create)(umr_eng_dev_t *dev, umr_eng_cq_t *cq,
                              const umr_eng_qp_params_t *params,
                              umr_eng_qp_t **qp_p);
    void         (*qp_destroy)(umr_eng_qp_t *qp);
    /* Bytes of send queue a QP created with `params` on `dev` takes: mlx5,
     * the NIC's queue in host memory as rdma-core sizes it (WQE size from
     * the send operations, SGEs and inline room, rounded to 64 B basic
     * blocks; the queue a power of two of them); sw, its work request
     * slots. 0 when qp_create would refuse the parameters. What a
     * connected peer costs (pml/umr's budget line). */
    size_t       (*qp_sq_bytes)(umr_eng_dev_t *dev,
                                const umr_eng_qp_params_t *params);
    void         (*qp_get_addr)(umr_eng_qp_t *qp, void *addr);
    ucs_status_t (*qp_connect)(umr_eng_qp_t *qp, const void *remote_dev_addr,
                               const void *remote_qp_addr);
    /* Move the QP to error: what is outstanding completes with
     * UMR_ENG_WC_WR_FLUSH_ERR, later posts too (a port that went down). */
    void         (*qp_fail)(umr_eng_qp_t *qp);

    /* Up to `max` asynchronous events of the device, never blocking;
     * returns how many (0: none now). */
    int          (*dev_poll_events)(umr_eng_dev_t *dev,
                                    umr_eng_event_t *events, int max);

    ucs_status_t (*post_umr_interleaved)(umr_eng_qp_t *qp,
                                         umr_eng_mkey_t *mkey,
                                         unsigned access, uint32_t repeat,
                                         unsigned num_entries,
                                         const umr_eng_interleaved_t *entries,
                                         uint64_t wr_id, unsigned flags);
    ucs_status_t (*post_umr_list)(umr_eng_qp_t *qp, umr_eng_mkey_t *mkey,
                                  unsigned access, unsigned num_sge,
                                  const umr_eng_sge_t *sge,
                                  uint64_t wr_id, unsigned flags);
    ucs_status_t (*post_local_inv)(umr_eng_qp_t *qp, umr_eng_mkey_t *mkey,
                                   uint64_t wr_id, unsigned flags);
    /* opcode is UMR_ENG_OP_RDMA_WRITE or UMR_ENG_OP_RDMA_READ. */
    ucs_status_t (*post_rdma)(umr_eng_qp_t *qp, umr_eng_opcode_t opcode,
                              const umr_eng_sge_t *sge, unsigned num_sge,
                              uint64_t remote_addr, uint32_t rkey,
                              uint64_t wr_id, unsigned flags);
} umr_eng_ops_t;

extern const umr_eng_ops_t umr_eng_sw_ops;
extern const umr_eng_ops_t umr_eng_mlx5_ops;   /* only when built with rdma-core */

/* Backend by name ("mlx5", "sw"); NULL if not built in. */
const umr_eng_ops_t *umr_eng_find(const char *name);

/* The default device parameters (UCX's for the RC connection). */
void umr_eng_dev_params_init(umr_eng_dev_params_t *params);

/* The CPUs of a sysfs cpumask ("ff,00000000": 32-bit hex words, the
 * highest first, as local_cpus lists them) into a UMR_ENG_CPU_WORDS mask;
 * 0 on success, -1 on a malformed string. */
int umr_eng_cpumask_parse(const char *str, uint64_t *mask);

/* Human-readable status and its UCS mapping. */
const char   *umr_eng_wc_status_str(umr_eng_wc_status_t status);
ucs_status_t umr_eng_wc_status_to_ucs(umr_eng_wc_status_t status);
const char   *umr_eng_opcode_str(umr_eng_opcode_t opcode);

#ifdef __cplusplus
}
#endif

#endif
