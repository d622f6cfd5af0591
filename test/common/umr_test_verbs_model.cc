/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * The model of rdma-core on a ConnectX: see umr_test_verbs_model.h for the
 * rules (R1-R23), their sources in each release and those that differ.
 */
#include "umr_config.h"

#include "umr_test_verbs_model.h"
#include "umr_test_verbs_fake.h"
#include "umr_test_verbs_pin.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <map>

namespace umr_test {

namespace {

enum {
    FAB_KEYS     = 32768,   /* MRs and indirect keys of all processes */
    FAB_DESC     = 64,      /* descriptors an indirect key may hold */
    FAB_QPS      = 4096,
    FAB_QPN_BASE = 0x100,
    IOV_CHUNK    = 1024     /* IOV_MAX of process_vm_* */
};

enum { KEY_FREE, KEY_MR, KEY_MKEY };
enum { LAYOUT_NONE, LAYOUT_ILV, LAYOUT_LIST };

struct fab_desc {
    uint64_t addr;
    uint32_t bytes_count;   /* as the NIC holds it (16 bits for ILV) */
    uint32_t stride;        /* ILV: bytes_count + bytes_skip, 16 bits */
    uint32_t lkey;
};

struct fab_key {
    uint32_t kind;
    int32_t  pid;
    uint32_t tag;
    uint32_t access;
    uint32_t valid;         /* MKEY: configured and not invalidated */
    uint32_t update_tag;
    uint32_t max_indirection; /* MKEY: of its device (R34) */
    uint64_t pd;              /* its protection domain (R18) */
    uint32_t num_desc;
    uint32_t layout;
    uint32_t repeat;
    uint32_t num;
    uint64_t addr;          /* MR: VA */
    uint64_t length;        /* MR: bytes; MKEY: reglen */
    pin_frames pin;         /* MR: the pages it pinned (R21c) */
    fab_desc desc[FAB_DESC];
};

/* One QP in the shared table: its state and, from its INIT/RTR/RTS, the
 * addresses of both ends of its path (R24-R27). */
struct fab_qp {
    uint32_t in_use;
    int32_t  pid;
    uint32_t state;
    uint32_t dest_qpn;
    uint32_t host;               /* its port's host and fabric */
    uint32_t fabric;
    uint32_t subnet;             /* its host's IP subnet (R26, R33) */
    uint64_t pd;                 /* its protection domain (R18) */
    int32_t  event;              /* affiliated event for the owner, -1 none */
    uint8_t  link_layer;
    uint8_t  port_mtu;           /* its port's active MTU */
    uint8_t  path_mtu;           /* RTR */
    uint8_t  is_global;
    uint8_t  sgid_type;          /* IBV_GID_TYPE_* of the GID it sends from */
    uint8_t  timeout;            /* RTS */
    uint8_t  retry_cnt;
    uint8_t  max_rd_atomic;
    uint8_t  max_dest_rd_atomic; /* RTR */
    uint8_t  reserved[3];
    uint16_t lid;                /* its port's LID at INIT */
    uint16_t dlid;
    uint16_t pkey;               /* host order, of its pkey_index */
    uint16_t reserved2;
    uint8_t  port_gid[16];       /* GID 0 of its port */
    uint8_t  sgid[16];           /* RoCE: the GID it sends from */
    uint8_t  dgid[16];
};

/* A simulated host: its link and port events, shared by its processes. */
struct fab_host {
    uint32_t link_down;
    uint32_t lid;                /* 0: the LID its ports report */
    uint32_t gen;                /* port events so far */
    int32_t  ev[16];             /* IBV_EVENT_* of event n at [n % 16] */
    uint64_t wrs;                /* RDMA WRs that left or reached it */
    uint64_t down_after;         /* link down at this many (0: never) */
    uint32_t gid_set;            /* an entry of its GID table changed: */
    uint32_t gid_index;          /*   this one (R32) */
    uint8_t  gid[16];            /*   now this GID */
    uint8_t  gid_type;           /*   of this type */
    uint8_t  reserved[3];
    uint32_t sched_set;          /* its events are scheduled (R32) */
    uint32_t nsched;
    struct {
        int32_t  event;          /* IBV_EVENT_*, -1: raised already */
        uint32_t arg;            /* gid_change: the entry that changes */
        uint64_t at;             /* at this many RDMA WRs */
    } sched[8];
};

enum { FAB_MAGIC = 0x756d726dU };  /* "umrm": the table is initialised */

struct fabric {
    pthread_mutex_t lock;
    uint32_t        magic;
    uint32_t        key_cursor;
    uint32_t        qp_cursor;
    fab_host        hosts[MODEL_MAX_HOSTS];
    fab_key         keys[FAB_KEYS];
    fab_qp          qps[FAB_QPS];
};

void fab_init(fabric *f)
{
    pthread_mutexattr_t mattr;

    pthread_mutexattr_init(&mattr);
    pthread_mutexattr_setpshared(&mattr, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&mattr, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&f->lock, &mattr);
    pthread_mutexattr_destroy(&mattr);
    __atomic_store_n(&f->magic, FAB_MAGIC, __ATOMIC_RELEASE);
}

fabric *fab_create()
{
    fabric *f;

    f = (fabric*)mmap(NULL, sizeof(fabric), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (f == MAP_FAILED) {
        abort();
    }
    fab_init(f);
    return f;
}

/* Created before main(): every forked test process shares it (or, with
 * model_attach_shared, unrelated processes of one job). */
fabric *fab = fab_create();

struct fab_guard {
    fab_guard()
    {
        if (pthread_mutex_lock(&fab->lock) == EOWNERDEAD) {
            pthread_mutex_consistent(&fab->lock);
        }
    }
    ~fab_guard()
    {
        pthread_mutex_unlock(&fab->lock);
    }
};

bool pid_alive(int32_t pid)
{
    return (kill(pid, 0) == 0) || (errno != ESRCH);
}

/* A free key slot; slots of dead processes are taken back. Under lock. */
int fab_key_alloc()
{
    for (int pass = 0; pass < 2; ++pass) {
        for (uint32_t n = 0; n < FAB_KEYS; ++n) {
            uint32_t i = (fab->key_cursor + n) % FAB_KEYS;
            fab_key &k = fab->keys[i];
            if ((k.kind == KEY_FREE) ||
                ((pass == 1) && (k.pid != getpid()) && !pid_alive(k.pid))) {
                fab->key_cursor = i + 1;
                memset(&k, 0, offsetof(fab_key, desc));
                return (int)i;
            }
        }
    }
    return -1;
}

uint32_t key_index(uint32_t key)
{
    return key >> 8;
}

/* The slot a key names, or NULL (wrong index, free, tag). Under lock. */
fab_key *fab_key_get(uint32_t key)
{
    uint32_t idx = key_index(key);

    if ((idx == 0) || (idx > FAB_KEYS)) {
        return NULL;
    }
    fab_key &k = fab->keys[idx - 1];
    if ((k.kind == KEY_FREE) || (k.tag != (key & 0xff))) {
        return NULL;
    }
    return &k;
}

fab_qp *fab_qp_get(uint32_t qpn)
{
    if ((qpn < FAB_QPN_BASE) || (qpn >= FAB_QPN_BASE + FAB_QPS)) {
        return NULL;
    }
    fab_qp &q = fab->qps[qpn - FAB_QPN_BASE];
    return q.in_use ? &q : NULL;
}

/* What the model keeps of an open context (this process). */
struct ctx_state {
    uint32_t                           flags;     /* DEVX open flags */
    uint32_t                           host;
    uint32_t                           gen_seen;  /* host port events read */
    std::deque<struct ibv_async_event> events;
};

std::map<struct ibv_context*, ctx_state> &ctx_states()
{
    static std::map<struct ibv_context*, ctx_state> m;
    return m;
}

uint64_t align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

uint64_t roundup_pow2(uint64_t v)
{
    uint64_t r = 1;
    while (r < v) {
        r <<= 1;
    }
    return r;
}

const uint64_t RC_SEND_OPS = IBV_QP_EX_WITH_SEND |
                             IBV_QP_EX_WITH_SEND_WITH_INV |
                             IBV_QP_EX_WITH_SEND_WITH_IMM |
                             IBV_QP_EX_WITH_RDMA_WRITE |
                             IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
                             IBV_QP_EX_WITH_RDMA_READ |
                             IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
                             IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
                             IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW;

/* R1: verbs.c sq_overhead / _sq_overhead for an RC QP. */
uint32_t sq_overhead(const struct ibv_qp_init_attr_ex *attr,
                     const struct mlx5dv_qp_init_attr *dv_attr)
{
    uint64_t ops      = (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ?
                        attr->send_ops_flags : RC_SEND_OPS;
    uint64_t mlx5_ops = 0;
    uint64_t umr_ops  = MLX5DV_QP_EX_WITH_MR_INTERLEAVED |
                        MLX5DV_QP_EX_WITH_MR_LIST;
    uint32_t size     = 16;                           /* ctrl */

    if ((dv_attr != NULL) &&
        (dv_attr->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS)) {
        mlx5_ops = dv_attr->send_ops_flags;
    }
    if (model_get_rules().sq_overhead_mkey_configure) {
        umr_ops |= MLX5DV_QP_EX_WITH_MKEY_CONFIGURE;
    }

    if (ops & (IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
               IBV_QP_EX_WITH_RDMA_READ)) {
        size = std::max(size, 16u + 16u);             /* + raddr */
    }
    if (ops & (IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
               IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)) {
        size = std::max(size, 16u + 16u + 16u);
    }
    if ((ops & (IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV)) ||
        (mlx5_ops & umr_ops)) {
        size = std::max(size, 16u + 48u + 64u + 64u); /* UMR WQE */
    }
    return size;
}

/* R11: the length umr_strided_seg_create / umr_sg_list_create write. */
uint64_t umr_reglen(const model_wr &wr)
{
    if (wr.kind == model_wr::UMR_ILV) {
        uint64_t byte_count = 0;                      /* 64 bits: all */
        for (const struct mlx5dv_mr_interleaved &e : wr.ilv) {
            byte_count += e.bytes_count;
        }
        return byte_count * wr.repeat;
    }

    if (model_get_rules().list_length_64) {
        uint64_t byte_count = 0;                      /* 61.0+ (65.0) */
        for (const struct ibv_sge &s : wr.sge) {
            byte_count += s.length;
        }
        return byte_count;
    }

    uint32_t byte_count = 0;                          /* an int (44.0, 56.1) */
    for (const struct ibv_sge &s : wr.sge) {
        byte_count += s.length;
    }
    return (uint64_t)(int64_t)(int32_t)byte_count;
}

model_rules &active_rules()
{
    static model_rules rules = model_rules_installed();
    return rules;
}

/* ---- executing work ---------------------------------------------------- */

struct segment {
    uint64_t addr;
    uint64_t len;
};

/* Where [addr, addr + len) of key lands, all in the process `pid`.
 * need: IBV_ACCESS_* the access requires on the top key (0: none); pd: the
 * protection domain of the QP the top key is used on (R18). Returns 0 or an
 * ibv_wc_status. Under lock. */
int resolve(uint32_t key, uint64_t addr, uint64_t len, unsigned need,
            int32_t pid, int depth, std::vector<segment> &out, uint64_t pd)
{
    fab_key *k = fab_key_get(key);

    /* the keys under an indirect key are the process's own (a PD is one
     * context's); their PD and access are not checked: nothing documents
     * that the device does (R18) */
    if ((k == NULL) || (k->pid != pid) || ((depth == 0) && (k->pd != pd))) {
        return IBV_WC_REM_ACCESS_ERR;
    }
    /* R34: an indirect key at depth >= max_indirection of its device */
    if ((k->kind == KEY_MKEY) && ((uint32_t)depth >= k->max_indirection)) {
        return IBV_WC_REM_ACCESS_ERR;
    }
    if ((need & ~k->access) != 0) {
        return IBV_WC_REM_ACCESS_ERR;
    }

    if (k->kind == KEY_MR) {
        if ((addr < k->addr) || (len > k->length) ||
            (addr - k->addr > k->length - len)) {
            return IBV_WC_REM_ACCESS_ERR;
        }
        if (!pin_frames_ok(pid, &k->pin, addr, addr + len)) {    /* R21c */
            fprintf(stderr, "rdma-core model: MR 0x%x of pid %d: [0x%" PRIx64
                    ", +%" PRIu64 ") is not the memory it pinned any more "
                    "(dropped and mapped again since ibv_reg_mr): a NIC "
                    "would reach the old pages\n", key, pid, addr, len);
            return IBV_WC_REM_ACCESS_ERR;
        }
        if (len > 0) {
            out.push_back({addr, len});
        }
        return 0;
    }

    /* indirect key: zero-based */
    if (!k->valid || (addr > k->length) || (len > k->length - addr)) {
        return IBV_WC_REM_ACCESS_ERR;
    }

    while (len > 0) {
        uint64_t piece, at;
        uint32_t lkey;

        if (k->layout == LAYOUT_ILV) {
            uint64_t row = 0, off, cum = 0;
            uint32_t i;

            for (i = 0; i < k->num; ++i) {
                row += k->desc[i].bytes_count;
            }
            if (row == 0) {
                return IBV_WC_REM_ACCESS_ERR;
            }
            off = addr % row;
            for (i = 0; (i < k->num) && (cum + k->desc[i].bytes_count <= off);
                 ++i) {
                cum += k->desc[i].bytes_count;
            }
            const fab_desc &d = k->desc[i];
            piece = std::min<uint64_t>(d.bytes_count - (off - cum), len);
            at    = d.addr + (addr / row) * d.stride + (off - cum);
            lkey  = d.lkey;
        } else {
            uint64_t cum = 0;
            uint32_t i;

            for (i = 0; (i < k->num) && (cum + k->desc[i].bytes_count <= addr);
                 ++i) {
                cum += k->desc[i].bytes_count;
            }
            if (i == k->num) {
                return IBV_WC_REM_ACCESS_ERR;
            }
            const fab_desc &d = k->desc[i];
            piece = std::min<uint64_t>(d.bytes_count - (addr - cum), len);
            at    = d.addr + (addr - cum);
            lkey  = d.lkey;
        }

        int ret = resolve(lkey, at, piece, 0, pid, depth + 1, out, 0);
        if (ret) {
            return ret;
        }
        addr += piece;
        len  -= piece;
    }
    return 0;
}

/* Copies between the own buffer and segments of process pid, through
 * cross-memory attach even for the own process: pinned memory a NIC could
 * reach but the process made unreadable fails here instead of faulting. */
bool transfer(int32_t pid, const std::vector<segment> &segs, uint8_t *buf,
              bool to_segs)
{
    for (size_t i = 0; i < segs.size(); i += IOV_CHUNK) {
        size_t n = std::min<size_t>(IOV_CHUNK, segs.size() - i);
        std::vector<struct iovec> remote(n);
        struct iovec local;
        size_t total = 0;

        for (size_t j = 0; j < n; ++j) {
            remote[j].iov_base = (void*)(uintptr_t)segs[i + j].addr;
            remote[j].iov_len  = segs[i + j].len;
            total             += segs[i + j].len;
        }
        local.iov_base = buf;
        local.iov_len  = total;
        ssize_t ret = to_segs ?
                      process_vm_writev(pid, &local, 1, remote.data(), n, 0) :
                      process_vm_readv(pid, &local, 1, remote.data(), n, 0);
        if (ret != (ssize_t)total) {
            return false;
        }
        if (to_segs && (pid == getpid())) {
            /* the pages took the write: copy again in plain sight, so that
             * memory checkers (valgrind) see the bytes as written */
            const uint8_t *p = buf;
            for (size_t j = 0; j < n; ++j) {
                memcpy(remote[j].iov_base, p, remote[j].iov_len);
                p += remote[j].iov_len;
            }
        }
        buf += total;
    }
    return true;
}

uint32_t qpn_of(const fab_qp *q)
{
    return FAB_QPN_BASE + (uint32_t)(q - fab->qps);
}

fab_host &host_of(const fab_qp *q)
{
    return fab->hosts[q->host % MODEL_MAX_HOSTS];
}

/* A port event of `host`, for the contexts there (R29). Under lock. */
void host_event(fab_host &h, enum ibv_event_type type)
{
    h.ev[h.gen % 16] = type;
    ++h.gen;
}

/* A GID nobody else has, for a GID_CHANGE that adds an entry:
 * 2001:db8:ffff::<host + 1>, RoCE v2 (R32). */
void host_new_gid(fab_host &h, uint32_t index)
{
    uint32_t host = (uint32_t)(&h - fab->hosts);

    memset(h.gid, 0, sizeof(h.gid));
    h.gid[0]    = 0x20;
    h.gid[1]    = 0x01;
    h.gid[2]    = 0x0d;
    h.gid[3]    = 0xb8;
    h.gid[4]    = 0xff;
    h.gid[5]    = 0xff;
    h.gid[14]   = (uint8_t)((host + 1) >> 8);
    h.gid[15]   = (uint8_t)(host + 1);
    h.gid_type  = IBV_GID_TYPE_ROCE_V2;
    h.gid_index = index;
    h.gid_set   = 1;
}

/* R32: a port event of `host` with what comes with it: PORT_ERR / _ACTIVE
 * take the link down / up, LID_CHANGE gives the port another LID,
 * GID_CHANGE fills entry `arg` of the GID table; CLIENT_REREGISTER,
 * PKEY_CHANGE and SM_CHANGE change nothing the model has (a subnet manager
 * that re-registers its clients, or changes another pkey entry). Under
 * lock. */
void host_raise(fab_host &h, enum ibv_event_type type, uint32_t arg)
{
    switch (type) {
    case IBV_EVENT_PORT_ERR:
    case IBV_EVENT_PORT_ACTIVE:
        if (!h.link_down == (type == IBV_EVENT_PORT_ACTIVE)) {
            return;             /* no change, no event */
        }
        h.link_down = (type == IBV_EVENT_PORT_ERR);
        break;
    case IBV_EVENT_LID_CHANGE:
        h.lid = (h.lid ? h.lid : (uint32_t)(&h - fab->hosts) + 1) + 1000;
        break;
    case IBV_EVENT_GID_CHANGE:
        host_new_gid(h, arg);
        break;
    default:
        break;
    }
    host_event(h, type);
}

/* The LID of q's port now (R26). */
uint16_t cur_lid(const fab_qp *q)
{
    const fab_host &h = host_of(q);
    return h.lid ? (uint16_t)h.lid : q->lid;
}

/* fe80::/10 */
bool gid_is_link_local(const uint8_t *gid)
{
    return (gid[0] == 0xfe) && ((gid[1] & 0xc0) == 0x80);
}

/* R26: what `a` sends reaches `b`. */
bool path_one_way(const fab_qp *a, const fab_qp *b)
{
    if ((a->fabric != b->fabric) || (a->link_layer != b->link_layer) ||
        (a->path_mtu > b->port_mtu)) {
        return false;
    }
    if (a->link_layer == IBV_LINK_LAYER_ETHERNET) {
        /* a link-local address is not routed off its subnet (R26) */
        return a->is_global && !memcmp(a->dgid, b->sgid, sizeof(a->dgid)) &&
               (a->sgid_type == b->sgid_type) &&
               (!gid_is_link_local(a->dgid) || (a->subnet == b->subnet));
    }
    if ((a->dlid != cur_lid(b)) ||
        (a->is_global && memcmp(a->dgid, b->port_gid, sizeof(a->dgid)))) {
        return false;
    }
    /* one partition, at least one full member */
    return !((a->pkey ^ b->pkey) & 0x7fff) && ((a->pkey | b->pkey) & 0x8000);
}

/* R26: both directions (requests, and ACKs / read responses). */
bool path_ok(const fab_qp *a, const fab_qp *b)
{
    return !host_of(a).link_down && !host_of(b).link_down &&
           path_one_way(a, b) && path_one_way(b, a);
}

enum { PEER_READY, PEER_WAIT, PEER_GONE };

/* Whether the peer of `me` takes a packet now (R26). Under lock. */
int peer_status(const fab_qp *me, const fab_qp **peer_p)
{
    const fab_qp *peer = (me != NULL) ? fab_qp_get(me->dest_qpn) : NULL;

    *peer_p = peer;
    if ((peer == NULL) || !pid_alive(peer->pid) ||
        (peer->state == IBV_QPS_ERR)) {
        return PEER_GONE;
    }
    if ((peer->state < IBV_QPS_RTR) || (peer->dest_qpn != qpn_of(me)) ||
        !path_ok(me, peer)) {
        return PEER_WAIT;
    }
    return PEER_READY;
}

/* One more RDMA WR for host h: the link may go down now, scheduled events
 * come (R32). Under lock. */
void host_tick(fab_host &h)
{
    ++h.wrs;
    if (h.down_after && !h.link_down && (h.wrs >= h.down_after)) {
        h.link_down = 1;
        host_event(h, IBV_EVENT_PORT_ERR);
    }
    for (uint32_t i = 0; i < h.nsched; ++i) {
        if ((h.sched[i].event >= 0) && (h.wrs >= h.sched[i].at)) {
            host_raise(h, (enum ibv_event_type)h.sched[i].event,
                       h.sched[i].arg);
            h.sched[i].event = -1;
        }
    }
}

/* A host's NICs moved one more RDMA WR. A host whose link is down moves
 * none: the WRs of the fabric count for it instead, so that its scheduled
 * events (PORT_ACTIVE) come in a job that goes on without it (R32). */
void host_count_wr(fab_host &h)
{
    host_tick(h);
    for (fab_host &other : fab->hosts) {
        if (other.link_down && other.nsched && (&other != &h)) {
            host_tick(other);
        }
    }
}

/* R18, R27, R28: one RDMA write or read to a peer that takes packets.
 * `reads` counts the reads of this pass. Returns an ibv_wc_status. */
int exec_rdma(struct ibv_qp *qp, const model_wr &wr, unsigned *reads)
{
    bool write = (wr.kind == model_wr::RDMA_WRITE);
    std::vector<segment> lsegs, rsegs;
    uint64_t total = 0;
    int32_t rpid;
    int ret;

    pin_op_begin();
    {
        fab_guard g;
        fab_qp *me   = fab_qp_get(qp->qp_num);
        const fab_qp *cpeer;

        if (peer_status(me, &cpeer) != PEER_READY) {
            return IBV_WC_RETRY_EXC_ERR;
        }
        fab_qp *peer = const_cast<fab_qp*>(cpeer);
        rpid = peer->pid;

        /* R27: the requester sends up to its max_rd_atomic reads at once */
        if (!write &&
            (std::min<unsigned>(++*reads, me->max_rd_atomic) >
             peer->max_dest_rd_atomic)) {
            return IBV_WC_REM_INV_REQ_ERR;
        }

        for (const struct ibv_sge &s : wr.sge) {
            ret = resolve(s.lkey, s.addr, s.length,
                          write ? 0 : IBV_ACCESS_LOCAL_WRITE, getpid(), 0,
                          lsegs, me->pd);
            if (ret) {
                return IBV_WC_LOC_PROT_ERR;
            }
            total += s.length;
        }
        host_count_wr(host_of(me));
        if (peer->host != me->host) {
            host_count_wr(host_of(peer));
        }
        if (total == 0) {
            return 0;
        }
        ret = resolve(wr.key, wr.remote_addr, total,
                      write ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ,
                      rpid, 0, rsegs, peer->pd);
        if (ret) {
            /* R28: the responder's QP fails too, with an affiliated event */
            peer->state = IBV_QPS_ERR;
            peer->event = IBV_EVENT_QP_ACCESS_ERR;
            return IBV_WC_REM_ACCESS_ERR;
        }
    }

    /* (a failed copy: memory the model cannot reach - a NIC would, since
     * it is pinned; reported as the protection error of that side) */
    std::vector<uint8_t> bounce(total);
    if (write) {
        if (!transfer(getpid(), lsegs, bounce.data(), false)) {
            return IBV_WC_LOC_PROT_ERR;
        }
        if (!transfer(rpid, rsegs, bounce.data(), true)) {
            return pid_alive(rpid) ? IBV_WC_REM_ACCESS_ERR :
                                     IBV_WC_RETRY_EXC_ERR;
        }
    } else {
        if (!transfer(rpid, rsegs, bounce.data(), false)) {
            return pid_alive(rpid) ? IBV_WC_REM_ACCESS_ERR :
                                     IBV_WC_RETRY_EXC_ERR;
        }
        if (!transfer(getpid(), lsegs, bounce.data(), true)) {
            return IBV_WC_LOC_PROT_ERR;
        }
    }
    return 0;
}

/* R9-R12: a UMR configures the key. Returns an ibv_wc_status. */
int exec_umr(const model_wr &wr)
{
    fab_guard g;
    uint32_t key = (wr.mkey->lkey & ~0xffu);   /* index; tag checked below */
    uint32_t idx = key_index(key);
    bool ilv     = (wr.kind == model_wr::UMR_ILV);
    uint32_t n   = ilv ? wr.ilv.size() : wr.sge.size();

    if ((idx == 0) || (idx > FAB_KEYS)) {
        return IBV_WC_LOC_QP_OP_ERR;
    }
    fab_key &k = fab->keys[idx - 1];
    if ((k.kind != KEY_MKEY) || (k.pid != getpid())) {
        return IBV_WC_LOC_QP_OP_ERR;
    }
    /* R9: n interleaved entries take n + 1 descriptors */
    if ((n + (ilv ? 1 : 0)) > k.num_desc) {
        return IBV_WC_LOC_QP_OP_ERR;
    }
    /* R34: rdma-core's mask asks to modify the atomic access, which the
     * device does not let a UMR do */
    if (fake().hca.umr_modify_atomic_disabled) {
        return IBV_WC_LOC_QP_OP_ERR;
    }
    /* R23, man mlx5dv_wr_post: only a free key (new or invalidated) */
    if (fake().check_free && k.valid) {
        return IBV_WC_LOC_QP_OP_ERR;
    }

    if (ilv) {
        for (uint32_t i = 0; i < n; ++i) {
            const struct mlx5dv_mr_interleaved &e = wr.ilv[i];
            k.desc[i].addr        = e.addr;
            k.desc[i].bytes_count = (uint16_t)e.bytes_count;     /* R10 */
            k.desc[i].stride      = (uint16_t)(e.bytes_count + e.bytes_skip);
            k.desc[i].lkey        = e.lkey;
        }
        k.layout = LAYOUT_ILV;
        k.repeat = wr.repeat;
    } else {
        for (uint32_t i = 0; i < n; ++i) {
            const struct ibv_sge &s = wr.sge[i];
            k.desc[i].addr        = s.addr;
            k.desc[i].bytes_count = s.length;
            k.desc[i].stride      = 0;
            k.desc[i].lkey        = s.lkey;
        }
        k.layout = LAYOUT_LIST;
        k.repeat = 1;
    }
    k.num    = n;
    k.length = wr.reglen;                             /* R11 */
    k.access = wr.access;
    k.tag    = wr.tag;
    k.valid  = 1;
    return 0;
}

/* R19 */
int exec_local_inv(const model_wr &wr)
{
    fab_guard g;
    fab_key *k = fab_key_get(wr.key);

    if ((k == NULL) || (k->kind != KEY_MKEY) || (k->pid != getpid())) {
        return IBV_WC_LOC_PROT_ERR;
    }
    k->valid = 0;
    k->tag   = 0;       /* R19: rdma-core writes tag 0 with the MKEY mask */
    return 0;
}

enum ibv_wc_opcode wc_opcode(model_wr::kind_t kind)
{
    switch (kind) {
    case model_wr::RDMA_WRITE: return IBV_WC_RDMA_WRITE;
    case model_wr::RDMA_READ:  return IBV_WC_RDMA_READ;
    case model_wr::LOCAL_INV:  return IBV_WC_LOCAL_INV;
    default:                   return (enum ibv_wc_opcode)MLX5DV_WC_UMR;
    }
}

} // namespace

/* ---- QPs ------------------------------------------------------------------ */

int model_create_qp(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr,
                    const struct mlx5dv_qp_init_attr *dv_attr, model_qp *mqp)
{
    const uint64_t dv_ops  = MLX5DV_QP_EX_WITH_MR_INTERLEAVED |
                             MLX5DV_QP_EX_WITH_MR_LIST |
                             MLX5DV_QP_EX_WITH_MKEY_CONFIGURE |
                             MLX5DV_QP_EX_WITH_RAW_WQE |
                             MLX5DV_QP_EX_WITH_MEMCPY;
    const uint32_t desc_sz = fake().max_sq_desc_sz;      /* R30 */
    uint32_t overhead, size, inl_size, wqe_size, max_gather;
    uint64_t wq_size;

    /* R5 (model: RC QPs only) */
    if (attr->qp_type != IBV_QPT_RC) {
        return EOPNOTSUPP;
    }
    if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
        (attr->send_ops_flags & ~RC_SEND_OPS)) {
        return EOPNOTSUPP;
    }
    if ((dv_attr != NULL) &&
        (dv_attr->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS) &&
        ((dv_attr->send_ops_flags & ~dv_ops) ||
         (dv_attr->send_ops_flags & MLX5DV_QP_EX_WITH_MEMCPY))) {
        return EOPNOTSUPP;    /* MEMCPY: model, no DMA MMO */
    }
    if (attr->cap.max_send_wr == 0) {
        return EINVAL;        /* model: rdma-core makes a QP without SQ */
    }

    /* R1, R2 */
    overhead = sq_overhead(attr, dv_attr);
    inl_size = attr->cap.max_inline_data ?
               overhead + align_up(4 + attr->cap.max_inline_data, 16) : 0;
    max_gather = (desc_sz - overhead) / 16;
    if (attr->cap.max_send_sge > max_gather) {
        return EINVAL;
    }
    size     = overhead + attr->cap.max_send_sge * 16;
    size     = std::max(size, inl_size);
    if (size > desc_sz) {
        return EINVAL;
    }
    wqe_size = align_up(size, MODEL_SEND_WQE_BB);

    /* R4: the SQ in basic blocks */
    wq_size = roundup_pow2((uint64_t)attr->cap.max_send_wr * wqe_size);
    if (wq_size / MODEL_SEND_WQE_BB >
        (uint64_t)fake().dev_attr.orig_attr.max_qp_wr) {
        return EINVAL;
    }

    /* R3: what the provider writes back */
    mqp->max_inline_data      = wqe_size - overhead - 4;
    mqp->max_gs               = attr->cap.max_send_sge;
    mqp->max_post             = wq_size / wqe_size;
    mqp->sq_bytes             = wq_size;
    mqp->head                 = 0;
    mqp->tail                 = 0;
    mqp->err                  = 0;
    mqp->in_batch             = false;
    mqp->blocked_since        = 0;
    attr->cap.max_inline_data = mqp->max_inline_data;
    attr->cap.max_send_wr     = mqp->max_post;
    return 0;
}

uint32_t model_qp_alloc(const struct ibv_pd *pd)
{
    fab_guard g;

    for (uint32_t pass = 0; pass < 2; ++pass) {
        for (uint32_t n = 0; n < FAB_QPS; ++n) {
            uint32_t i = (fab->qp_cursor + n) % FAB_QPS;
            fab_qp &q  = fab->qps[i];
            if (!q.in_use ||
                ((pass == 1) && (q.pid != getpid()) && !pid_alive(q.pid))) {
                fab->qp_cursor = i + 1;
                memset(&q, 0, sizeof(q));
                q.in_use   = 1;
                q.pid      = getpid();
                q.state    = IBV_QPS_RESET;
                q.event    = -1;
                q.host     = fake().host % MODEL_MAX_HOSTS;
                q.fabric   = fake().fabric;
                q.subnet   = fake().subnet;
                q.pd       = (uintptr_t)pd;
                return FAB_QPN_BASE + i;
            }
        }
    }
    return 0;
}

void model_qp_release(uint32_t qpn)
{
    fab_guard g;
    fab_qp *q = fab_qp_get(qpn);

    if (q != NULL) {
        q->in_use = 0;
    }
}

/* R24: what each RC transition requires and allows besides the state
 * (kernel drivers/infiniband/core/verbs.c qp_state_table). */
struct qp_transition {
    enum ibv_qp_state cur, next;
    int               req, opt;
};

const qp_transition QP_TRANSITIONS[] = {
    {IBV_QPS_RESET, IBV_QPS_INIT,
     IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0},
    {IBV_QPS_INIT, IBV_QPS_INIT, 0,
     IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS},
    {IBV_QPS_INIT, IBV_QPS_RTR,
     IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
     IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX},
    {IBV_QPS_RTR, IBV_QPS_RTS,
     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
     IBV_QP_MAX_QP_RD_ATOMIC,
     IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
     IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE}
};

/* The port a QP is bound to, as the fake's ports[] has it; NULL if none. */
const fake_port *qp_port(unsigned port_num)
{
    if ((port_num == 0) || (port_num > fake().ports.size())) {
        return NULL;
    }
    return &fake().ports[port_num - 1];
}

/* R24: INIT binds the QP to a port and a pkey (under lock). */
int qp_bind_port(struct ibv_qp *qp, fab_qp *q, const struct ibv_qp_attr *attr,
                 int mask)
{
    unsigned port_num = (mask & IBV_QP_PORT) ? attr->port_num : q->reserved[0];
    const fake_port *port = qp_port(port_num);
    struct ibv_port_attr pattr;

    if (port == NULL) {
        return EINVAL;
    }
    if ((mask & IBV_QP_PKEY_INDEX) &&
        (attr->pkey_index >= std::max<size_t>(port->pkeys.size(), 1))) {
        return EINVAL;
    }
    pattr = port->attr;
    q->reserved[0] = port_num;
    q->link_layer  = (pattr.link_layer == IBV_LINK_LAYER_ETHERNET) ?
                     IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
    q->port_mtu    = pattr.active_mtu;
    q->lid         = pattr.lid;
    memset(q->port_gid, 0, sizeof(q->port_gid));
    if (!port->gids.empty()) {
        memcpy(q->port_gid, port->gids[0].gid.raw, sizeof(q->port_gid));
    }
    if (mask & IBV_QP_PKEY_INDEX) {
        q->pkey = port->pkeys.empty() ? 0xffff :
                  ntohs(port->pkeys[attr->pkey_index]);
    }
    return 0;
}

/* R24, R25: RTR sets the path to the peer (under lock). */
int qp_set_path(fab_qp *q, const struct ibv_qp_attr *attr)
{
    const fake_port *port = qp_port(q->reserved[0]);
    const struct ibv_global_route &grh = attr->ah_attr.grh;
    static const uint8_t zero[16] = {};

    if (port == NULL) {
        return EINVAL;
    }
    if ((q->link_layer == IBV_LINK_LAYER_ETHERNET) &&
        !attr->ah_attr.is_global) {
        return EINVAL;                  /* R25: RoCE needs the GRH */
    }
    if (attr->ah_attr.is_global &&
        ((grh.sgid_index >= port->gids.size()) ||
         !memcmp(port->gids[grh.sgid_index].gid.raw, zero, sizeof(zero)))) {
        return EINVAL;                  /* R25 */
    }
    q->is_global = attr->ah_attr.is_global;
    q->dlid      = attr->ah_attr.dlid;
    q->path_mtu  = attr->path_mtu;
    q->dest_qpn  = attr->dest_qp_num;
    q->max_dest_rd_atomic = attr->max_dest_rd_atomic;
    memset(q->sgid, 0, sizeof(q->sgid));
    memset(q->dgid, 0, sizeof(q->dgid));
    q->sgid_type = IBV_GID_TYPE_IB;
    if (q->is_global) {
        memcpy(q->sgid, port->gids[grh.sgid_index].gid.raw, sizeof(q->sgid));
        memcpy(q->dgid, grh.dgid.raw, sizeof(q->dgid));
        q->sgid_type = port->gids[grh.sgid_index].gid_type;
    }
    return 0;
}

/* R14, R24, R25 */
int model_modify_qp(struct ibv_qp *qp, const struct ibv_qp_attr *attr,
                    int mask)
{
    fab_guard g;
    fab_qp *q = fab_qp_get(qp->qp_num);
    const qp_transition *t = NULL;
    enum ibv_qp_state cur, next;
    int ret;

    if (q == NULL) {
        return EINVAL;
    }
    if (!(mask & IBV_QP_STATE)) {
        return 0;
    }
    cur  = (enum ibv_qp_state)q->state;
    next = attr->qp_state;
    if ((next == IBV_QPS_RESET) || (next == IBV_QPS_ERR)) {
        if (mask & ~IBV_QP_STATE) {
            return EINVAL;
        }
        if (next == IBV_QPS_RESET) {
            q->dest_qpn = 0;
        }
        q->state  = next;
        qp->state = next;
        return 0;
    }
    for (const qp_transition &tr : QP_TRANSITIONS) {
        if ((tr.cur == cur) && (tr.next == next)) {
            t = &tr;
        }
    }
    if ((t == NULL) || ((mask & t->req) != t->req) ||
        (mask & ~(t->req | t->opt | IBV_QP_STATE))) {
        return EINVAL;
    }
    if (mask & (IBV_QP_PORT | IBV_QP_PKEY_INDEX)) {
        ret = qp_bind_port(qp, q, attr, mask);
        if (ret) {
            return ret;
        }
    }
    if (next == IBV_QPS_RTR) {
        ret = qp_set_path(q, attr);
        if (ret) {
            return ret;
        }
    }
    if (next == IBV_QPS_RTS) {
        q->timeout       = attr->timeout;
        q->retry_cnt     = attr->retry_cnt;
        q->max_rd_atomic = attr->max_rd_atomic;
    }
    q->state  = next;
    qp->state = next;
    return 0;
}

/* ---- keys ----------------------------------------------------------------- */

/* R21 */
int model_reg_mr(void *addr, size_t length, int access, uint32_t *key_p,
                 const struct ibv_pd *pd)
{
    int ret = pin_check(addr, length, access, fake().kernel_before_6_2);

    if (ret) {
        return ret;
    }

    fab_guard g;
    int i = fab_key_alloc();

    if (i < 0) {
        return ENOMEM;
    }
    fab_key &k = fab->keys[i];
    k.kind   = KEY_MR;
    k.pid    = getpid();
    k.pd     = (uintptr_t)pd;
    k.tag    = 0;
    k.access = (uint32_t)access;
    k.addr   = (uintptr_t)addr;
    k.length = length;
    pin_bind(addr, length, &k.pin);
    *key_p   = ((uint32_t)(i + 1) << 8) | k.tag;
    return 0;
}

void model_dereg_mr(uint32_t key)
{
    fab_guard g;
    fab_key *k = fab_key_get(key);

    if (k != NULL) {
        if ((k->kind == KEY_MR) && (k->pid == getpid())) {
            pin_unbind(&k->pin);
        }
        k->kind = KEY_FREE;
    }
}

void model_ctx_opened(struct ibv_context *ctx, uint32_t flags)
{
    fab_guard g;
    ctx_state &st = ctx_states()[ctx];

    st.flags    = flags;
    st.host     = fake().host % MODEL_MAX_HOSTS;
    st.gen_seen = fab->hosts[st.host].gen;   /* events from now on */
    st.events.clear();
}

void model_ctx_closed(struct ibv_context *ctx)
{
    ctx_states().erase(ctx);
}

/* R13 */
int model_create_mkey(struct ibv_context *ctx,
                      struct mlx5dv_mkey_init_attr *attr, uint32_t *key_p)
{
    const uint32_t known = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT |
                           MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE |
                           MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO |
                           (fake().update_tag_kernel ?
                            MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG : 0) |
                           MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE;
    uint16_t num_desc;

    if ((attr->create_flags == 0) || (attr->create_flags & ~known)) {
        return EOPNOTSUPP;
    }
    if (attr->create_flags & (MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE |
                              MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO)) {
        return EOPNOTSUPP;   /* model: no signature or crypto keys */
    }
    /* rdma-core's num_desc is 16 bits: 65533..65535 wrap to 0 */
    num_desc = (uint16_t)align_up(attr->max_entries, 4);

    /* a DEVX object: the kernel refuses it on a context without DEVX */
    auto it = ctx_states().find(ctx);
    if ((it == ctx_states().end()) ||
        !(it->second.flags & MLX5DV_CONTEXT_FLAGS_DEVX)) {
        return EINVAL;
    }
    if (num_desc > FAB_DESC) {
        return ENOMEM;   /* the model's table, not rdma-core */
    }

    fab_guard g;
    int i = fab_key_alloc();
    if (i < 0) {
        return ENOMEM;
    }
    fab_key &k = fab->keys[i];
    k.kind       = KEY_MKEY;
    k.pid        = getpid();
    k.tag        = 0;
    k.valid      = 0;                 /* free until a UMR configures it */
    k.num_desc   = num_desc;
    k.update_tag = !!(attr->create_flags &
                      MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG);
    k.max_indirection = fake().hca.max_indirection;
    k.pd              = (uintptr_t)attr->pd;
    attr->max_entries = num_desc;
    *key_p       = ((uint32_t)(i + 1) << 8) | k.tag;
    return 0;
}

void model_destroy_mkey(uint32_t key)
{
    fab_guard g;
    uint32_t idx = key_index(key);

    if ((idx > 0) && (idx <= FAB_KEYS) &&
        (fab->keys[idx - 1].kind == KEY_MKEY) &&
        (fab->keys[idx - 1].pid == getpid())) {
        fab->keys[idx - 1].kind = KEY_FREE;
    }
}

model_key_info model_key_query(uint32_t key)
{
    fab_guard g;
    fab_key *k = fab_key_get(key);
    model_key_info info = {};

    if (k != NULL) {
        info.exists     = true;
        info.valid      = k->valid;
        info.tag        = k->tag;
        info.length     = k->length;
        info.num_desc   = k->num_desc;
        info.update_tag = k->update_tag;
        info.bound      = (k->kind == KEY_MR) && (k->pin.npages > 0);
    }
    return info;
}

/* ---- posting ----------------------------------------------------------- */

void model_wr_start(struct ibv_qp_ex *qpx, model_qp *mqp)
{
    mqp->batch.clear();
    mqp->err         = 0;
    mqp->in_batch    = true;
    mqp->fm_small_rb = mqp->fm_small;
}

/* R34: the fence rdma-core gives a WQE (_common_wqe_init_op: IBV_SEND_FENCE
 * or the fm_cache a UMR / LOCAL_INV leaves for the next WQE). */
static void model_wqe_fence(model_qp *mqp, model_wr &wr)
{
    wr.fence      = (wr.wr_flags & IBV_SEND_FENCE) ? MODEL_WQE_FENCE_SMALL_AND :
                    mqp->fm_small ? MODEL_WQE_FENCE_SMALL :
                                    MODEL_WQE_FENCE_NONE;
    mqp->fm_small = (wr.kind == model_wr::UMR_ILV) ||
                    (wr.kind == model_wr::UMR_LIST) ||
                    (wr.kind == model_wr::LOCAL_INV);
}

/* R15: mlx5_wq_overflow(head - tail + nreq >= max_post) */
static bool sq_full(const model_qp *mqp)
{
    return (mqp->head + mqp->posted.size() - mqp->tail) + mqp->batch.size() >=
           mqp->max_post;
}

/* R6-R8, R11, R12, R15: the UMR builders, in rdma-core's order
 * (mlx5_send_wr_mkey_configure, _set_mkey_access_flags, _set_mkey_layout):
 * the INLINE and tag checks replace an earlier error of the batch, the
 * others keep the first. */
static void model_umr_add(model_qp *mqp, model_wr &wr)
{
    bool ilv   = (wr.kind == model_wr::UMR_ILV);
    uint32_t n = ilv ? wr.ilv.size() : wr.sge.size();
    uint32_t slots, num_desc;

    if (!(wr.wr_flags & IBV_SEND_INLINE)) {              /* R6 */
        mqp->err = EOPNOTSUPP;
        return;
    }
    if (sq_full(mqp) && !mqp->err) {                     /* R15 */
        mqp->err = ENOMEM;
    }
    if ((wr.tag != 0) && !fake().update_tag_kernel) {    /* R12 */
        mqp->err = EOPNOTSUPP;
        return;
    }
    if (mqp->err) {
        return;
    }
    if (wr.access & ~(uint32_t)(IBV_ACCESS_LOCAL_WRITE | /* R8 */
                                IBV_ACCESS_REMOTE_WRITE |
                                IBV_ACCESS_REMOTE_READ |
                                IBV_ACCESS_REMOTE_ATOMIC)) {
        mqp->err = EINVAL;
        return;
    }
    {
        fab_guard g;
        uint32_t idx = key_index(wr.mkey->lkey);
        num_desc = ((idx > 0) && (idx <= FAB_KEYS)) ?
                   fab->keys[idx - 1].num_desc : 0;
    }
    slots = (mqp->max_inline_data + 4) / 16 - (ilv ? 1 : 0);
    if (n > std::min(slots, num_desc)) {                 /* R7 */
        mqp->err = ENOMEM;
        return;
    }
    wr.reglen = umr_reglen(wr);                          /* R11 */
    model_wqe_fence(mqp, wr);                            /* R34 */
    mqp->batch.push_back(wr);
}

/* R6-R8, R12, R15, R17: what the builders check. */
void model_wr_add(struct ibv_qp_ex *qpx, model_qp *mqp, model_wr &wr)
{
    if ((wr.kind == model_wr::UMR_ILV) || (wr.kind == model_wr::UMR_LIST)) {
        model_umr_add(mqp, wr);
        return;
    }

    if (mqp->err) {
        return;
    }

    if (sq_full(mqp)) {                                  /* R15 */
        mqp->err = ENOMEM;
        return;
    }

    if (((wr.kind == model_wr::RDMA_WRITE) ||
         (wr.kind == model_wr::RDMA_READ)) &&
        (wr.sge.size() > mqp->max_gs)) {                 /* R17 */
        mqp->err = ENOMEM;
        return;
    }
    model_wqe_fence(mqp, wr);                            /* R34 */
    mqp->batch.push_back(wr);
}

void model_wr_abort(model_qp *mqp)
{
    mqp->batch.clear();
    mqp->err      = 0;
    mqp->in_batch = false;
    mqp->fm_small = mqp->fm_small_rb;
}

/* R34: a UMR WQE (LOCAL_INV included) behind work not executed yet waits
 * for it only with the fence the device asks: umr_fence small takes
 * rdma-core's small fence or small-and-fence, strong none of them (rdma-core
 * has no strong ordering to give), none needs none. */
static bool model_umr_fenced(const model_wr &wr)
{
    switch (fake().hca.umr_fence) {
    case MODEL_FENCE_NONE:  return true;
    case MODEL_FENCE_SMALL: return wr.fence != MODEL_WQE_FENCE_NONE;
    default:                return false;
    }
}

/* R16: the doorbell posts the batch, or rolls it back. */
int model_wr_complete(struct ibv_qp_ex *qpx, model_qp *mqp)
{
    int err = mqp->err;

    mqp->in_batch = false;
    mqp->err      = 0;
    if (err) {
        mqp->fm_small = mqp->fm_small_rb;           /* R16: rolled back */
    }
    for (size_t i = 0; !err && (i < mqp->batch.size()); ++i) {
        model_wr &wr = mqp->batch[i];
        bool umr     = (wr.kind == model_wr::UMR_ILV) ||
                       (wr.kind == model_wr::UMR_LIST) ||
                       (wr.kind == model_wr::LOCAL_INV);
        /* R34: an unfenced UMR overtakes the work before it */
        if (umr && !mqp->posted.empty() && !model_umr_fenced(wr)) {
            wr.early        = true;
            wr.early_status = (wr.kind == model_wr::LOCAL_INV) ?
                              exec_local_inv(wr) : exec_umr(wr);
        }
        mqp->posted.push_back(wr);
    }
    mqp->batch.clear();
    return err;
}

/* the tests' UMR_TEST_TIME_MULTIPLIER (slow runs under valgrind) */
static double time_multiplier()
{
    const char *env = getenv("UMR_TEST_TIME_MULTIPLIER");
    double m        = (env != NULL) ? atof(env) : 1.0;
    return (m >= 1.0) ? m : 1.0;
}

static double now_sec()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* R26: how long an RC requester retries before RETRY_EXC: 4.096 us *
 * 2^timeout per try, retry_cnt + 1 tries; timeout 0 never gives up. */
static double retry_budget(uint8_t timeout, uint8_t retry_cnt)
{
    if (timeout == 0) {
        return 1e30;
    }
    return 4.096e-6 * (double)(1ull << std::min<uint8_t>(timeout, 31)) *
           (retry_cnt + 1) * time_multiplier();
}

/* R14, R18-R20, R26-R28: the NIC executes what was posted, in order. */
void model_progress(struct ibv_qp *qp, model_qp *mqp)
{
    struct ibv_cq_ex *cq = (struct ibv_cq_ex*)qp->send_cq;
    size_t done          = 0;
    unsigned reads       = 0;
    double budget        = 0;
    bool rts;

    {
        fab_guard g;
        fab_qp *q = fab_qp_get(qp->qp_num);
        rts       = (q != NULL) && (q->state == IBV_QPS_RTS);
        if (q != NULL) {
            budget = retry_budget(q->timeout, q->retry_cnt);
        }
    }

    for (; done < mqp->posted.size(); ++done) {
        const model_wr &wr = mqp->posted[done];
        fake_cqe cqe       = {};
        int status;

        if (!rts) {
            status = IBV_WC_WR_FLUSH_ERR;
        } else if ((wr.kind == model_wr::RDMA_WRITE) ||
                   (wr.kind == model_wr::RDMA_READ)) {
            const fab_qp *peer;
            int ps;
            {
                fab_guard g;
                ps = peer_status(fab_qp_get(qp->qp_num), &peer);
            }
            if (ps == PEER_WAIT) {
                if (mqp->blocked_since == 0) {
                    mqp->blocked_since = now_sec();
                }
                if (now_sec() - mqp->blocked_since < budget) {
                    break;      /* the NIC retries; again at the next poll */
                }
            }
            mqp->blocked_since = 0;
            status = (ps == PEER_READY) ? exec_rdma(qp, wr, &reads) :
                                          IBV_WC_RETRY_EXC_ERR;
        } else if (wr.early) {
            status = wr.early_status;                   /* R34 */
        } else if (wr.kind == model_wr::LOCAL_INV) {
            status = exec_local_inv(wr);
        } else {
            status = exec_umr(wr);
        }

        if (status && rts) {
            /* the first failure moves the QP to ERR; the rest flushes */
            fab_guard g;
            fab_qp *q = fab_qp_get(qp->qp_num);
            if (q != NULL) {
                q->state = IBV_QPS_ERR;
            }
            qp->state = IBV_QPS_ERR;
            rts       = false;
        }

        cqe.wr_id  = wr.wr_id;
        cqe.status = (enum ibv_wc_status)status;
        cqe.opcode = wc_opcode(wr.kind);
        cqe.qp     = qp;
        cqe.seq    = mqp->head++;
        if (status || (wr.wr_flags & IBV_SEND_SIGNALED)) {
            fake().push_cqe(cq, cqe);
        }
    }
    mqp->posted.erase(mqp->posted.begin(), mqp->posted.begin() + done);
}

/* ---- hosts, the fabric, async events ------------------------------------- */

int model_attach_shared(const char *name)
{
    size_t size = sizeof(fabric);
    /* how long another process may take between creating the table and
     * sizing / initializing it: microseconds, but a busy machine may not
     * run it for seconds (a hang guard, in 1 ms steps) */
    long wait_ms = (long)(60000 * time_multiplier());
    struct stat st;
    fabric *f;
    int fd, created = 1;
    long i;

    fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if ((fd < 0) && (errno == EEXIST)) {
        created = 0;
        fd      = shm_open(name, O_RDWR, 0600);
    }
    if (fd < 0) {
        return errno;
    }
    if (created) {
        if (ftruncate(fd, size) != 0) {
            int err = errno;
            close(fd);
            shm_unlink(name);
            return err;
        }
    } else {
        /* the creator sizes it: wait for that */
        for (i = 0; (fstat(fd, &st) == 0) && ((size_t)st.st_size < size) &&
                    (i < wait_ms); ++i) {
            usleep(1000);
        }
        if ((fstat(fd, &st) != 0) || ((size_t)st.st_size != size)) {
            close(fd);
            return EPROTO;    /* another build's table, or no creator */
        }
    }
    f = (fabric*)mmap(NULL, size, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_NORESERVE, fd, 0);
    close(fd);
    if (f == MAP_FAILED) {
        return errno;
    }
    if (created) {
        fab_init(f);
    } else {
        for (i = 0; (__atomic_load_n(&f->magic, __ATOMIC_ACQUIRE) !=
                     FAB_MAGIC) && (i < wait_ms); ++i) {
            usleep(1000);
        }
        if (f->magic != FAB_MAGIC) {
            munmap(f, size);
            return EPROTO;
        }
    }
    munmap(fab, size);      /* the private table: nothing in it yet */
    fab = f;
    return 0;
}

void model_hosts_reset()
{
    fab_guard g;

    for (fab_host &h : fab->hosts) {
        h.link_down  = 0;
        h.lid        = 0;
        h.down_after = 0;
        h.gid_set    = 0;
        h.sched_set  = 0;
        h.nsched     = 0;
    }
}

void model_host_set_link(uint32_t host, bool up)
{
    fab_guard g;
    fab_host &h = fab->hosts[host % MODEL_MAX_HOSTS];

    if (!h.link_down == up) {
        return;
    }
    h.link_down = !up;
    host_event(h, up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR);
}

void model_host_link_down_after(uint32_t host, uint64_t wrs)
{
    fab_guard g;
    fab_host &h = fab->hosts[host % MODEL_MAX_HOSTS];

    if (h.down_after == 0) {       /* the first of the host's processes */
        h.down_after = h.wrs + wrs;
    }
}

void model_host_set_lid(uint32_t host, uint16_t lid)
{
    fab_guard g;
    fab_host &h = fab->hosts[host % MODEL_MAX_HOSTS];

    h.lid = lid;
    host_event(h, IBV_EVENT_LID_CHANGE);
}

void model_host_raise(uint32_t host, enum ibv_event_type event,
                      uint32_t arg)
{
    fab_guard g;
    host_raise(fab->hosts[host % MODEL_MAX_HOSTS], event, arg);
}

void model_host_set_gid(uint32_t host, uint32_t index, const uint8_t gid[16],
                        enum ibv_gid_type type)
{
    fab_guard g;
    fab_host &h = fab->hosts[host % MODEL_MAX_HOSTS];

    memcpy(h.gid, gid, sizeof(h.gid));
    h.gid_type  = (uint8_t)type;
    h.gid_index = index;
    h.gid_set   = 1;
    host_event(h, IBV_EVENT_GID_CHANGE);
}

int model_host_events_after(uint32_t host,
                            const std::vector<model_host_sched> &events)
{
    fab_guard g;
    fab_host &h = fab->hosts[host % MODEL_MAX_HOSTS];

    if (events.size() > sizeof(h.sched) / sizeof(h.sched[0])) {
        return EINVAL;
    }
    if (h.sched_set) {             /* the first of the host's processes */
        return 0;
    }
    h.sched_set = 1;
    for (const model_host_sched &e : events) {
        h.sched[h.nsched].event = e.event;
        h.sched[h.nsched].arg   = e.arg;
        h.sched[h.nsched].at    = h.wrs + e.wrs;
        ++h.nsched;
    }
    return 0;
}

bool model_gid_overlay(struct ibv_context *ctx, uint32_t index,
                       struct ibv_gid_entry *entry)
{
    auto it = ctx_states().find(ctx);
    uint32_t host = (it != ctx_states().end()) ? it->second.host :
                    fake().host % MODEL_MAX_HOSTS;
    fab_guard g;
    const fab_host &h = fab->hosts[host];

    if (!h.gid_set || (h.gid_index != index)) {
        return false;
    }
    memset(entry, 0, sizeof(*entry));
    memcpy(entry->gid.raw, h.gid, sizeof(entry->gid.raw));
    entry->gid_type = h.gid_type;
    return true;
}

/* ---- device capabilities (R34) ------------------------------------------ */

model_hca_caps model_hca_defaults()
{
    model_hca_caps c = {};

    c.devx_errno                 = 0;
    c.umr_fence                  = MODEL_FENCE_SMALL;
    c.max_indirection            = 4;
    c.log_max_klm_list_size      = 16;
    c.umr_modify_atomic_disabled = 0;
    c.atomic                     = 1;
    return c;
}

namespace {

/* A field of a big-endian command layout (mlx5_ifc.h bit offsets). */
void ifc_set(void *buf, size_t len, unsigned bit, unsigned width,
             unsigned value)
{
    unsigned shift = 32 - (bit % 32) - width;
    uint32_t mask  = (uint32_t)(((1ull << width) - 1) << shift);
    uint32_t dw;

    if ((bit / 32 + 1) * 4 > len) {
        return;
    }
    memcpy(&dw, (char*)buf + (bit / 32) * 4, sizeof(dw));
    dw = htonl((ntohl(dw) & ~mask) | ((value << shift) & mask));
    memcpy((char*)buf + (bit / 32) * 4, &dw, sizeof(dw));
}

unsigned ifc_get(const void *buf, size_t len, unsigned bit, unsigned width)
{
    uint32_t dw;

    if ((bit / 32 + 1) * 4 > len) {
        return 0;
    }
    memcpy(&dw, (const char*)buf + (bit / 32) * 4, sizeof(dw));
    return (ntohl(dw) >> (32 - (bit % 32) - width)) & ((1ull << width) - 1);
}

} // namespace

/* R34: QUERY_HCA_CAP (opcode 0x100, op_mod general << 1 | current) answers
 * from the device spec at mlx5_ifc.h's offsets (cmd_hca_cap_bits:
 * max_indirection 0x100/8, log_max_klm_list_size 0x11a/6,
 * umr_modify_atomic_disabled 0x208/1, umr_fence 0x20a/2, atomic 0x21e/1;
 * the capability after a 16-byte header); other commands EOPNOTSUPP (model).
 * rdma-core returns the errno and sets errno (verbs.c
 * _mlx5dv_devx_general_cmd -> execute_ioctl). */
int model_devx_general_cmd(struct ibv_context *ctx, const void *in,
                           size_t inlen, void *out, size_t outlen)
{
    const model_hca_caps &c = fake().hca;
    auto it                 = ctx_states().find(ctx);
    unsigned opcode, op_mod;
    char *cap;

    if ((it == ctx_states().end()) ||
        !(it->second.flags & MLX5DV_CONTEXT_FLAGS_DEVX)) {
        return EINVAL;      /* kernel devx.c devx_get_uid: no DEVX context */
    }
    if (c.devx_errno) {
        return c.devx_errno;
    }
    opcode = ifc_get(in, inlen, 0, 16);
    op_mod = ifc_get(in, inlen, 0x30, 16);
    memset(out, 0, outlen);
    if ((opcode == 0x762) && c.ooo_sl_cap && (outlen >= 16 + 0x2a0 / 8)) {
        ifc_set((char*)out + 16, outlen - 16, 0x290, 16, c.ooo_sl_mask);
        return 0;
    }
    if ((opcode != 0x100) || ((op_mod >> 1) != 0) || (outlen < 16 + 256)) {
        return EOPNOTSUPP;
    }
    cap = (char*)out + 16;
    ifc_set(cap, outlen - 16, 0x100, 8, c.max_indirection);
    ifc_set(cap, outlen - 16, 0x11a, 6, c.log_max_klm_list_size);
    ifc_set(cap, outlen - 16, 0x208, 1, c.umr_modify_atomic_disabled);
    ifc_set(cap, outlen - 16, 0x20a, 2, c.umr_fence);
    ifc_set(cap, outlen - 16, 0x21e, 1, c.atomic);
    ifc_set(cap, outlen - 16, 0x138, 1, c.ooo_sl_cap);
    return 0;
}

int model_create_ah(struct ibv_context *ctx, const struct ibv_ah_attr *attr)
{
    struct ibv_gid_entry entry;
    const fake_port *port = qp_port(attr->port_num);
    static const uint8_t zero[16] = {};

    if (port == NULL) {
        return EINVAL;
    }
    if (port->attr.link_layer != IBV_LINK_LAYER_ETHERNET) {
        return 0;
    }
    if (!attr->is_global) {
        return EINVAL;              /* RoCE: a GRH always */
    }
    if (model_gid_overlay(ctx, attr->grh.sgid_index, &entry)) {
        return 0;
    }
    if ((attr->grh.sgid_index >= port->gids.size()) ||
        !memcmp(port->gids[attr->grh.sgid_index].gid.raw, zero,
                sizeof(zero))) {
        return EINVAL;
    }
    if (std::find(port->dead_gids.begin(), port->dead_gids.end(),
                  attr->grh.sgid_index) != port->dead_gids.end()) {
        return EADDRNOTAVAIL;       /* no netdev route for it */
    }
    return 0;
}

bool model_host_link_up(uint32_t host)
{
    fab_guard g;
    return !fab->hosts[host % MODEL_MAX_HOSTS].link_down;
}

void model_qp_raise(uint32_t qpn, enum ibv_event_type event)
{
    fab_guard g;
    fab_qp *q = fab_qp_get(qpn);

    if (q != NULL) {
        q->state = IBV_QPS_ERR;
        q->event = event;
    }
}

int model_qp_state(uint32_t qpn)
{
    fab_guard g;
    fab_qp *q = fab_qp_get(qpn);

    return (q != NULL) ? (int)q->state : -1;
}

/* R29: the port as the host's link and LID are now. */
void model_port_overlay(struct ibv_context *ctx, uint8_t port_num,
                        struct ibv_port_attr *attr)
{
    auto it = ctx_states().find(ctx);
    uint32_t host = (it != ctx_states().end()) ? it->second.host :
                    fake().host % MODEL_MAX_HOSTS;
    fab_guard g;
    const fab_host &h = fab->hosts[host];

    if (h.link_down) {
        attr->state = IBV_PORT_DOWN;
    }
    if (h.lid) {
        attr->lid = h.lid;
    }
    if (h.gid_set && (h.gid_index >= (uint32_t)attr->gid_tbl_len)) {
        attr->gid_tbl_len = (int)h.gid_index + 1;   /* R32: one more */
    }
}

/* R29 */
int model_get_async_event(struct ibv_context *ctx,
                          const std::vector<struct ibv_qp*> &qps,
                          struct ibv_async_event *event)
{
    auto it = ctx_states().find(ctx);
    struct ibv_async_event ev;
    int flags;

    if (it == ctx_states().end()) {
        errno = EINVAL;
        return -1;
    }
    ctx_state &st = it->second;
    {
        fab_guard g;
        const fab_host &h = fab->hosts[st.host];
        if (h.gen - st.gen_seen > 16) {
            st.gen_seen = h.gen - 16;    /* older ones were overwritten */
        }
        for (; st.gen_seen != h.gen; ++st.gen_seen) {
            memset(&ev, 0, sizeof(ev));
            ev.event_type       = (enum ibv_event_type)h.ev[st.gen_seen % 16];
            ev.element.port_num = 1;
            st.events.push_back(ev);
        }
        for (struct ibv_qp *qp : qps) {
            fab_qp *q = fab_qp_get(qp->qp_num);
            if ((q != NULL) && (q->pid == getpid()) && (q->event >= 0)) {
                memset(&ev, 0, sizeof(ev));
                ev.event_type = (enum ibv_event_type)q->event;
                ev.element.qp = qp;
                q->event      = -1;
                st.events.push_back(ev);
            }
        }
    }

    if (st.events.empty()) {
        flags = fcntl(ctx->async_fd, F_GETFL);
        if ((flags < 0) || !(flags & O_NONBLOCK)) {
            fprintf(stderr, "rdma-core model: ibv_get_async_event() on a "
                    "blocking async_fd (%d) with no event pending would "
                    "block for ever\n", ctx->async_fd);
            abort();
        }
        errno = EAGAIN;
        return -1;
    }
    *event = st.events.front();
    st.events.pop_front();
    return 0;
}

/* ---- the rules of each release -------------------------------------- */

model_rules model_rules_for(unsigned major, unsigned minor)
{
    /* R11: the first release of each stable branch with e23cb0a72
     * (umr_sg_list_create sums in a uint64_t); every 61.0+ has it */
    static const struct {
        unsigned major, minor;
    } list64_backports[] = {
        {44, 12}, {45, 11}, {46, 10}, {47, 9}, {48, 8}, {49, 8}, {50, 7},
        {51, 7}, {52, 6}, {53, 6}, {54, 5}, {55, 4}, {56, 4}, {57, 3},
        {58, 2}, {59, 2}, {60, 2}
    };
    model_rules rules = {};

    rules.major = major;
    rules.minor = minor;
    /* R1: 24850871b, in 45.0 and backported to 44.1 */
    rules.sq_overhead_mkey_configure = (major > 44) ||
                                       ((major == 44) && (minor >= 1));
    rules.list_length_64 = (major >= 61);
    for (const auto &b : list64_backports) {
        if ((major == b.major) && (minor >= b.minor)) {
            rules.list_length_64 = true;
        }
    }
    return rules;
}

model_rules model_rules_installed()
{
    return model_rules_for(UMR_RDMA_CORE_MAJOR, UMR_RDMA_CORE_MINOR);
}

const model_rules &model_get_rules()
{
    return active_rules();
}

void model_set_rules(const model_rules &rules)
{
    active_rules() = rules;
}

} // namespace umr_test
