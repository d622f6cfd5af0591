/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr sw engine: internal types and functions shared by engine_sw*.c.
 *
 * The "NIC" of this backend is a key table in ordinary memory plus
 * cross-memory attach (process_vm_readv/writev):
 *
 *   key table (mmap'ed once, never moves; peers read it remotely)
 *   +--------+---------+---------+-----+---------+
 *   | header | entry 1 | entry 2 | ... | entry N |   64 bytes each
 *   +--------+---------+---------+-----+---------+
 *                 |  MR: (addr, length)
 *                 |  INDIRECT: descriptor array ----> umr_eng_sw_desc_t[]
 *                 |  QP: connected peer (cookie, qpn)
 *
 * A 32-bit key (or qpn) is (index << 8 | tag). Every entry carries a
 * seqlock generation (odd while the owner rewrites it) and the header a
 * table-wide generation bumped on every change, so a peer that cached
 * entries re-validates only when something changed.
 *
 * Work requests are queued at post and executed by cq_poll, in QP order and
 * synchronously, so FENCE (wait for prior reads) always holds. Like a UCT
 * worker in single-thread mode, a device and everything made from it are
 * used by one thread at a time; peers run concurrently in their processes.
 */
#ifndef UMR_ENGINE_SW_H_
#define UMR_ENGINE_SW_H_

#include "engine.h"

#include <ucs/datastruct/khash.h>
#include <ucs/datastruct/list.h>
#include <ucs/sys/math.h>
#include <ucs/time/time.h>

#include <inttypes.h>
#include <sys/types.h>
#include <sys/uio.h>

#define UMR_ENG_SW_DEV_NAME         "sw"
#define UMR_ENG_SW_MAGIC            0x31574e45524d55ull /* "UMRENW1" */
#define UMR_ENG_SW_IOV_MAX          1024      /* IOV_MAX of process_vm_* */
#define UMR_ENG_SW_MAX_DEPTH        4         /* indirect keys nested (the
                                                 layout engine's default) */
#define UMR_ENG_SW_MAX_KEYS_DEFAULT 65536
#define UMR_ENG_SW_MAX_KEYS_LIMIT   (1u << 24) /* 24-bit key index */
#define UMR_ENG_SW_SPAN_DEFAULT     0.5
#define UMR_ENG_SW_BATCH_BYTES      (4ul << 20) /* bounce/span buffer size */
#define UMR_ENG_SW_SPAN_IOV_MAX     65536     /* segments per span read */
#define UMR_ENG_SW_IOV_COST         2048      /* one iovec costs about as
                                                 much as copying this many
                                                 bytes (~0.5 us, measured) */
#define UMR_ENG_SW_CACHE_MAX        4096      /* remote entries cached */
#define UMR_ENG_SW_RETRY_TIMEOUT    2.0       /* seconds a WR waits for the
                                                 peer QP to connect */
#define UMR_ENG_SW_EXEC_BUDGET      64        /* WRs executed per cq_poll */

/* mlx5 limits reported by dev_query (1 KiB inline UMR WQE, rdma-core 44). */
#define UMR_ENG_SW_MAX_INTERLEAVED  51u
#define UMR_ENG_SW_MAX_LIST         52u
#define UMR_ENG_SW_MAX_BYTES_COUNT  0xffffu
#define UMR_ENG_SW_MAX_STRIDE       0xffffu
#define UMR_ENG_SW_MAX_SGE          30u
#define UMR_ENG_SW_MAX_QP_WR        32768u
#define UMR_ENG_SW_MAX_MSG          (1ull << 30)
#define UMR_ENG_SW_MAX_LIST_BYTES   0x7fffffffull /* rdma-core sums in int */
#define UMR_ENG_SW_MAX_ILV_BYTES    UINT64_MAX    /* rdma-core 44 sums in 64
                                                     bits */
#define UMR_ENG_SW_MAX_MKEY_ENTRIES 4096u

#define UMR_ENG_SW_ACCESS_ALL       (UMR_ENG_ACCESS_LOCAL_WRITE | \
                                     UMR_ENG_ACCESS_REMOTE_WRITE | \
                                     UMR_ENG_ACCESS_REMOTE_READ | \
                                     UMR_ENG_ACCESS_REMOTE_ATOMIC)

#define UMR_ENG_SW_KEY_INDEX(_key)  ((_key) >> 8)
#define UMR_ENG_SW_KEY_TAG(_key)    ((uint8_t)((_key) & 0xff))
#define UMR_ENG_SW_KEY(_idx, _tag)  (((uint32_t)(_idx) << 8) | (uint8_t)(_tag))

typedef enum {
    UMR_ENG_SW_KIND_FREE,
    UMR_ENG_SW_KIND_MR,
    UMR_ENG_SW_KIND_INDIRECT,
    UMR_ENG_SW_KIND_QP
} umr_eng_sw_kind_t;

typedef enum {
    UMR_ENG_SW_LAYOUT_INTERLEAVED,
    UMR_ENG_SW_LAYOUT_LIST
} umr_eng_sw_layout_t;

/* Table entry: plain data at a fixed address, read by peers. */
typedef struct umr_eng_sw_kentry {
    uint32_t gen;           /* seqlock: odd while being rewritten */
    uint8_t  kind;          /* umr_eng_sw_kind_t */
    uint8_t  tag;
    uint8_t  valid;         /* INDIRECT: configured and not invalidated;
                               QP: connected */
    uint8_t  layout;        /* INDIRECT: umr_eng_sw_layout_t */
    uint32_t access;
    uint32_t repeat;        /* INDIRECT interleaved */
    uint32_t num_entries;   /* INDIRECT */
    uint32_t peer_qpn;      /* QP: qpn of the connected peer QP */
    uint64_t addr;          /* MR: start address; INDIRECT: descriptors */
    uint64_t length;        /* MR/INDIRECT: bytes addressed */
    uint64_t peer_cookie;   /* QP: cookie of the connected peer device */
    uint64_t stride_data;   /* INDIRECT interleaved: data bytes per repeat */
    uint64_t reserved;
} umr_eng_sw_kentry_t;

typedef struct umr_eng_sw_table_hdr {
    uint64_t magic;
    uint64_t cookie;        /* random per device: detects pid reuse */
    uint64_t gen;           /* bumped on every entry change */
    uint32_t pid;
    uint32_t max_keys;
    uint64_t reserved[4];
} umr_eng_sw_table_hdr_t;

/* Descriptor of an indirect key, in the owner's memory. */
typedef struct umr_eng_sw_desc {
    uint64_t addr;          /* VA (MR lkey) or zero-based offset (mkey) */
    uint32_t bytes_count;
    uint32_t bytes_skip;    /* 0 for a list */
    uint32_t lkey;
    uint32_t reserved;
} umr_eng_sw_desc_t;

typedef struct umr_eng_sw_dev_addr {
    uint64_t boot_id[2];
    uint64_t pid_ns;
    uint64_t table;
    uint64_t cookie;
    uint32_t pid;
    uint32_t max_keys;
} umr_eng_sw_dev_addr_t;

typedef struct umr_eng_sw_qp_addr {
    uint64_t cookie;        /* of the device owning the QP */
    uint32_t pid;
    uint32_t qpn;
} umr_eng_sw_qp_addr_t;

/* A cached copy of a peer's entry (and its descriptors). */
typedef struct umr_eng_sw_cslot {
    umr_eng_sw_kentry_t entry;
    umr_eng_sw_desc_t   *descs;
    uint32_t            descs_cap;
    uint64_t            epoch;      /* space epoch it was last verified in */
} umr_eng_sw_cslot_t;

KHASH_MAP_INIT_INT(umr_eng_sw_kcache, umr_eng_sw_cslot_t*);

/* Where keys are interpreted: our own table or a connected peer's. */
typedef struct umr_eng_sw_space {
    int                   is_local;
    struct umr_eng_sw_dev *dev;         /* local: the device */
    pid_t                 pid;          /* remote */
    uint64_t              table;
    uint32_t              max_keys;
    uint64_t              cookie;
    uint64_t              seen_gen;     /* table gen the cache matches */
    uint64_t              epoch;
    khash_t(umr_eng_sw_kcache) cache;
} umr_eng_sw_space_t;

typedef struct umr_eng_sw_dev {
    umr_eng_caps_t         caps;
    umr_eng_sw_table_hdr_t *hdr;
    umr_eng_sw_kentry_t    *table;      /* table[0] overlaps the header */
    size_t                 table_size;  /* bytes mapped */
    uint32_t               max_keys;
    void                   **objs;      /* index -> mr/mkey/qp object */
    uint32_t               *free_q;     /* ring of freed indices (FIFO):
                                           a freed key is reused as late as
                                           possible */
    uint32_t               free_q_head;
    uint32_t               free_count;
    uint32_t               free_head;   /* first never-used index */
    uint64_t               boot_id[2];
    uint64_t               pid_ns;
    double                 span_density;
    void                   *bounce;     /* UMR_ENG_SW_BATCH_BYTES */
    void                   *span;       /* UMR_ENG_SW_BATCH_BYTES */
    struct iovec           *riov;       /* UMR_ENG_SW_IOV_MAX each */
    struct iovec           *liov;
    struct iovec           *ciov;
    struct iovec           *siov;       /* UMR_ENG_SW_SPAN_IOV_MAX */
    umr_eng_sw_space_t     local;
    unsigned               num_objs;    /* live mr/mkey/qp/cq, for leaks */
} umr_eng_sw_dev_t;

typedef struct umr_eng_sw_mr {
    umr_eng_mr_t     super;
    umr_eng_sw_dev_t *dev;
} umr_eng_sw_mr_t;

typedef struct umr_eng_sw_mkey {
    umr_eng_mkey_t    super;
    umr_eng_sw_dev_t  *dev;
    uint32_t          index;
    umr_eng_sw_desc_t descs[];          /* max_entries, read by peers */
} umr_eng_sw_mkey_t;

typedef struct umr_eng_sw_wr {
    uint64_t         wr_id;
    uint64_t         seq;
    umr_eng_opcode_t opcode;
    unsigned         flags;
    unsigned         num;             /* SGEs or UMR entries */
    uint32_t         key;             /* UMR/INV: mkey value; RDMA: rkey */
    uint64_t         remote_addr;
    unsigned         access;
    uint32_t         repeat;
    umr_eng_sw_layout_t layout;
    ucs_time_t       first_try;       /* 0 until the WR first waited */
    struct umr_eng_sw_mkey *mkey;     /* UMR/INV target */
} umr_eng_sw_wr_t;

typedef struct umr_eng_sw_wc {
    umr_eng_wc_t wc;
    uint64_t     seq;
} umr_eng_sw_wc_t;

struct umr_eng_cq {
    umr_eng_sw_dev_t *dev;
    unsigned         size;
    unsigned         head;              /* next to poll */
    unsigned         count;
    ucs_list_link_t  qps;
    umr_eng_sw_wc_t  ring[];            /* size */
};

struct umr_eng_qp {
    umr_eng_sw_dev_t    *dev;
    umr_eng_cq_t        *cq;
    ucs_list_link_t     list;           /* in cq->qps */
    uint32_t            index;
    uint32_t            qpn;
    unsigned            sq_size;
    unsigned            max_sge;
    unsigned            max_umr_entries;    /* 0: RDMA only */
    int                 rdma_only;          /* no UMR, no LOCAL_INV */
    uint64_t            sq_pi;          /* next seq to post */
    uint64_t            sq_exec;        /* next seq to execute */
    uint64_t            sq_ci;          /* oldest seq holding a slot */
    umr_eng_sw_wr_t     *wrs;           /* sq_size */
    umr_eng_sge_t       *sges;          /* sq_size * max_sge */
    umr_eng_sw_desc_t   *descs;         /* sq_size * max_umr_entries */
    int                 in_error;
    int                 connected;
    uint32_t            peer_qpn;
    umr_eng_sw_space_t  remote;
};

static inline umr_eng_sw_desc_t *umr_eng_sw_wr_descs(umr_eng_qp_t *qp,
                                                     const umr_eng_sw_wr_t *wr)
{
    return qp->descs + (wr->seq % qp->sq_size) * qp->max_umr_entries;
}

static inline umr_eng_sge_t *umr_eng_sw_wr_sges(umr_eng_qp_t *qp,
                                                const umr_eng_sw_wr_t *wr)
{
    return qp->sges + (wr->seq % qp->sq_size) * qp->max_sge;
}

/* An object of ours, still registered at the index its key names? */
static inline int umr_eng_sw_owns(umr_eng_sw_dev_t *dev, uint32_t key,
                                  void *obj)
{
    uint32_t index = UMR_ENG_SW_KEY_INDEX(key);

    return (dev != NULL) && (obj != NULL) && (index > 0) &&
           (index < dev->max_keys) && (dev->objs[index] == obj);
}

/* The ops of engine.h, umr_eng_sw_<op>: the device ops and dev_poll_events
 * in engine_sw_dev.c (probe, devices, capabilities, addressing), mr_* and
 * mkey_* in engine_sw_mem.c, cq_create/cq_destroy and qp_* in
 * engine_sw_qp.c, cq_poll and post_* in engine_sw_post.c. */
UMR_ENG_BACKEND_DECLARE(sw)

/* engine_sw_dev.c */
int          umr_eng_sw_probe(void);

/* engine_sw_key.c: key tables and resolution */
ucs_status_t umr_eng_sw_table_init(umr_eng_sw_dev_t *dev, size_t max_keys);
void umr_eng_sw_table_cleanup(umr_eng_sw_dev_t *dev);
void umr_eng_sw_index_free(umr_eng_sw_dev_t *dev, uint32_t index);
umr_eng_sw_kentry_t *umr_eng_sw_entry_begin(umr_eng_sw_dev_t *dev,
                                            uint32_t index);
void umr_eng_sw_entry_end(umr_eng_sw_dev_t *dev, umr_eng_sw_kentry_t *entry);
/* Takes an index for obj and begins rewriting its entry as a new object of
 * `kind`, not valid yet, under a new tag (keys of the index's earlier
 * objects stay dead); the caller fills the rest and ends it. NULL when the
 * key table is full. */
umr_eng_sw_kentry_t *umr_eng_sw_entry_new(umr_eng_sw_dev_t *dev, void *obj,
                                          umr_eng_sw_kind_t kind,
                                          uint32_t *index_p);

void umr_eng_sw_space_init_local(umr_eng_sw_space_t *space,
                                 umr_eng_sw_dev_t *dev);
void umr_eng_sw_space_init_remote(umr_eng_sw_space_t *space,
                                  const umr_eng_sw_dev_addr_t *addr);
void umr_eng_sw_space_cleanup(umr_eng_sw_space_t *space);
int umr_eng_sw_space_read(const umr_eng_sw_space_t *space, uint64_t addr,
                          void *buf, size_t len);

/* Segment list filled by key resolution; adjacent segments merge. */
typedef struct umr_eng_sw_iovs {
    struct iovec *iov;
    unsigned     count;
    unsigned     max;
    size_t       bytes;
    size_t       max_bytes;
} umr_eng_sw_iovs_t;

/*
 * Check the peer is alive and its QP connected back to `qp` (remote only);
 * refreshes the entry cache generation. Returns SUCCESS, RETRY_EXC_ERR, or
 * GENERAL_ERR with *wait_p set when the peer QP is not connected yet.
 */
umr_eng_wc_status_t umr_eng_sw_space_begin(umr_eng_sw_space_t *space,
                                           umr_eng_qp_t *qp, int *wait_p);

/*
 * Append the segments of [addr, addr + len) addressed through `key` (VA for
 * an MR, zero-based offset for an indirect key) to iovs, until len bytes or
 * the iovs limits. Checks tag, validity, access (every level) and bounds.
 */
umr_eng_wc_status_t umr_eng_sw_key_fill(umr_eng_sw_space_t *space,
                                        uint32_t key, uint64_t addr,
                                        uint64_t len, unsigned access,
                                        umr_eng_sw_iovs_t *iovs);

/* engine_sw_exec.c: the "NIC" */
int umr_eng_sw_cq_progress(umr_eng_cq_t *cq);
void umr_eng_sw_cq_purge_qp(umr_eng_cq_t *cq, umr_eng_qp_t *qp);


#endif
