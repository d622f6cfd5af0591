/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * A fake rdma-core for tests that need no device: see umr_test_verbs_fake.h.
 */
#include "umr_test_verbs_fake.h"
#include "umr_test_verbs_model.h"
#include "umr_test_verbs_preload.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <set>

namespace umr_test {

namespace {

struct fake_qp {
    struct ibv_qp_ex    qpx;    /* qp_base first: ibv_qp* == ibv_qp_ex* */
    struct mlx5dv_qp_ex mqpx;
    model_qp            model;
};

struct fake_cq_state {
    std::deque<fake_cqe> queue;
    fake_cqe             cur;
    bool                 polling;
};

struct fake_globals {
    verbs_fake                                      state;
    std::vector<struct ibv_device*>                 ibdevs;
    std::map<struct ibv_cq_ex*, fake_cq_state>      cqs;
    uint32_t                                        mr_seq;
    uint32_t                                        mkey_seq;
    int                                             mkey_creates;
    uint32_t                                        qp_seq;
    std::set<struct ibv_qp*>                        live_qps;

    fake_globals();
    ~fake_globals();
};

fake_globals &globals()
{
    static fake_globals g;
    return g;
}

void free_ibdevs()
{
    for (struct ibv_device *dev : globals().ibdevs) {
        free(dev);
    }
    globals().ibdevs.clear();
}

/* The device list was made from this configuration (names and sysfs);
 * remembers it for the next call when not. */
bool fake_devices_built(const std::vector<fake_device> &devices)
{
    static std::vector<std::pair<std::string, std::string> > built;
    std::vector<std::pair<std::string, std::string> > now;

    for (const fake_device &d : devices) {
        now.push_back({d.name, d.local_cpus});
    }
    if ((now == built) && (globals().ibdevs.size() == devices.size())) {
        return true;
    }
    built = now;
    return false;
}

/* The device's sysfs directory, as rdma-core gives it in ibdev_path: for a
 * fake device with local_cpus, a scratch tree holding device/local_cpus
 * (what the engine reads, as UCX reads /sys/class/infiniband/X/device). */
void fake_sysfs(struct ibv_device *dev, const fake_device &d)
{
    std::string dir = "/sys/class/infiniband/" + d.name;
    FILE *f;

    if (!d.local_cpus.empty()) {
        dir = "/tmp/umr-model-sysfs." + std::to_string(getpid());
        mkdir(dir.c_str(), 0700);
        dir += "/" + d.name;
        mkdir(dir.c_str(), 0700);
        mkdir((dir + "/device").c_str(), 0700);
        f = fopen((dir + "/device/local_cpus").c_str(), "w");
        if (f != NULL) {
            fprintf(f, "%s\n", d.local_cpus.c_str());
            fclose(f);
        }
    }
    snprintf(dev->ibdev_path, sizeof(dev->ibdev_path), "%s", dir.c_str());
}

void record(struct ibv_qp_ex *qpx, fake_wr_call::kind_t kind,
            fake_wr_call &call)
{
    call.kind     = kind;
    call.qpx      = qpx;
    call.wr_id    = qpx->wr_id;
    call.wr_flags = qpx->wr_flags;
    fake().calls.push_back(call);
}

void record(struct ibv_qp_ex *qpx, fake_wr_call::kind_t kind)
{
    fake_wr_call call = {};
    record(qpx, kind, call);
}

fake_globals::fake_globals() : mr_seq(0), mkey_seq(0), mkey_creates(0),
                               qp_seq(0)
{
    state.defaults();
}

fake_globals::~fake_globals()
{
    for (struct ibv_device *dev : ibdevs) {
        free(dev);
    }
    for (auto &cq : cqs) {
        free(cq.first);
    }
}

/* ---- WR builders of the fake QP ---- */

fake_qp *fqp_of(struct ibv_qp_ex *qpx)
{
    return (fake_qp*)qpx;
}

/* model mode: the WR a builder adds to the batch */
void model_add(struct ibv_qp_ex *qpx, model_wr::kind_t kind, model_wr &wr)
{
    if (!fake().model) {
        return;
    }
    wr.kind     = kind;
    wr.wr_id    = qpx->wr_id;
    wr.wr_flags = qpx->wr_flags;
    model_wr_add(qpx, &fqp_of(qpx)->model, wr);
}

void fake_wr_start(struct ibv_qp_ex *qpx)
{
    record(qpx, fake_wr_call::START);
    if (fake().model) {
        model_wr_start(qpx, &fqp_of(qpx)->model);
    }
}

int fake_wr_complete(struct ibv_qp_ex *qpx)
{
    fake_wr_call call = {};

    call.ret = fake().wr_complete_ret;
    if ((call.ret != 0) && (fake().wr_complete_fail_times > 0) &&
        (--fake().wr_complete_fail_times == 0)) {
        fake().wr_complete_ret = 0;       /* this was the last one */
    }
    if (fake().model) {
        if (call.ret != 0) {
            model_wr_abort(&fqp_of(qpx)->model);
        } else {
            call.ret = model_wr_complete(qpx, &fqp_of(qpx)->model);
        }
    }
    record(qpx, fake_wr_call::COMPLETE, call);
    return call.ret;
}

void fake_wr_abort(struct ibv_qp_ex *qpx)
{
    record(qpx, fake_wr_call::ABORT);
    if (fake().model) {
        model_wr_abort(&fqp_of(qpx)->model);
    }
}

void fake_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
                        uint64_t remote_addr)
{
    fake_wr_call call = {};

    call.key         = rkey;
    call.remote_addr = remote_addr;
    record(qpx, fake_wr_call::RDMA_WRITE, call);

    model_wr wr = {};
    wr.key         = rkey;
    wr.remote_addr = remote_addr;
    model_add(qpx, model_wr::RDMA_WRITE, wr);
}

void fake_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
                       uint64_t remote_addr)
{
    fake_wr_call call = {};

    call.key         = rkey;
    call.remote_addr = remote_addr;
    record(qpx, fake_wr_call::RDMA_READ, call);

    model_wr wr = {};
    wr.key         = rkey;
    wr.remote_addr = remote_addr;
    model_add(qpx, model_wr::RDMA_READ, wr);
}

void fake_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
    fake_wr_call call = {};

    call.key = invalidate_rkey;
    record(qpx, fake_wr_call::LOCAL_INV, call);

    model_wr wr = {};
    wr.key = invalidate_rkey;
    model_add(qpx, model_wr::LOCAL_INV, wr);
}

void fake_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
                          const struct ibv_sge *sg_list)
{
    fake_wr_call call = {};

    call.sge.assign(sg_list, sg_list + num_sge);
    record(qpx, fake_wr_call::SET_SGE_LIST, call);

    /* the SGEs of the RDMA WR just built (R17: qp.c set_sge_list) */
    model_qp *mqp = &fqp_of(qpx)->model;
    if (fake().model && !mqp->err && !mqp->batch.empty()) {
        if (num_sge > mqp->max_gs) {
            mqp->err = ENOMEM;
        } else {
            mqp->batch.back().sge.assign(sg_list, sg_list + num_sge);
        }
    }
}

struct ibv_qp_ex *qpx_of(struct mlx5dv_qp_ex *mqpx)
{
    return &((fake_qp*)((char*)mqpx - offsetof(fake_qp, mqpx)))->qpx;
}

void fake_wr_mr_interleaved(struct mlx5dv_qp_ex *mqpx,
                            struct mlx5dv_mkey *mkey, uint32_t access_flags,
                            uint32_t repeat_count, uint16_t num_interleaved,
                            struct mlx5dv_mr_interleaved *data)
{
    fake_wr_call call = {};

    call.mkey   = mkey;
    call.key    = mkey->lkey;
    call.access = access_flags;
    call.repeat = repeat_count;
    call.ilv.assign(data, data + num_interleaved);
    record(qpx_of(mqpx), fake_wr_call::MR_INTERLEAVED, call);

    model_wr wr = {};
    wr.mkey   = mkey;
    wr.tag    = mkey->lkey & 0xff;
    wr.access = access_flags;
    wr.repeat = repeat_count;
    wr.ilv.assign(data, data + num_interleaved);
    model_add(qpx_of(mqpx), model_wr::UMR_ILV, wr);
}

void fake_wr_mr_list(struct mlx5dv_qp_ex *mqpx, struct mlx5dv_mkey *mkey,
                     uint32_t access_flags, uint16_t num_sges,
                     struct ibv_sge *sge)
{
    fake_wr_call call = {};

    call.mkey   = mkey;
    call.key    = mkey->lkey;
    call.access = access_flags;
    call.sge.assign(sge, sge + num_sges);
    record(qpx_of(mqpx), fake_wr_call::MR_LIST, call);

    model_wr wr = {};
    wr.mkey   = mkey;
    wr.tag    = mkey->lkey & 0xff;
    wr.access = access_flags;
    wr.sge.assign(sge, sge + num_sges);
    model_add(qpx_of(mqpx), model_wr::UMR_LIST, wr);
}

/* R31: rdma-core leaves the mlx5dv UMR builders NULL on a QP created
 * without mlx5 send operations, and mlx5dv_wr_mr_* call through them
 * unchecked: a crash. The model stops with the reason instead. */
[[noreturn]] void fake_wr_mr_none(const char *what)
{
    fprintf(stderr, "rdma-core model: %s on a QP created without mlx5 send "
            "operations: rdma-core has no builder there (NULL, R31: "
            "qp.c mlx5_qp_fill_wr_pfns), the process would crash\n", what);
    abort();
}

void fake_wr_mr_interleaved_none(struct mlx5dv_qp_ex *, struct mlx5dv_mkey *,
                                 uint32_t, uint32_t, uint16_t,
                                 struct mlx5dv_mr_interleaved *)
{
    fake_wr_mr_none("mlx5dv_wr_mr_interleaved");
}

void fake_wr_mr_list_none(struct mlx5dv_qp_ex *, struct mlx5dv_mkey *,
                          uint32_t, uint16_t, struct ibv_sge *)
{
    fake_wr_mr_none("mlx5dv_wr_mr_list");
}

/* ---- fake extended CQ ---- */

fake_cq_state *cq_state(struct ibv_cq_ex *cq)
{
    auto it = globals().cqs.find(cq);
    return (it == globals().cqs.end()) ? NULL : &it->second;
}

void cq_load(struct ibv_cq_ex *cq, fake_cq_state *st)
{
    st->cur = st->queue.front();
    st->queue.pop_front();
    /* a polled completion frees its WR and every earlier one (R15) */
    if ((st->cur.qp != NULL) && globals().live_qps.count(st->cur.qp)) {
        model_qp *mqp = &((fake_qp*)st->cur.qp)->model;
        if (st->cur.seq + 1 > mqp->tail) {
            mqp->tail = st->cur.seq + 1;
        }
    }
    cq->wr_id  = st->cur.wr_id;
    cq->status = st->cur.status;
}

int fake_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
    fake_cq_state *st = cq_state(cq);

    /* model: the NIC works on the QPs of this CQ */
    if (fake().model) {
        for (struct ibv_qp *qp : globals().live_qps) {
            if ((struct ibv_cq_ex*)qp->send_cq == cq) {
                model_progress(qp, &((fake_qp*)qp)->model);
            }
        }
    }

    ++fake().num_start_poll;
    if (st->polling) {
        ++fake().poll_misuse;
    }
    if (fake().start_poll_ret) {
        return fake().start_poll_ret;
    }
    if (st->queue.empty()) {
        return ENOENT;
    }
    cq_load(cq, st);
    st->polling = true;
    return 0;
}

int fake_next_poll(struct ibv_cq_ex *cq)
{
    fake_cq_state *st = cq_state(cq);

    if (!st->polling) {
        ++fake().poll_misuse;
    }
    if (st->queue.empty()) {
        return ENOENT;
    }
    cq_load(cq, st);
    return 0;
}

void fake_end_poll(struct ibv_cq_ex *cq)
{
    fake_cq_state *st = cq_state(cq);

    ++fake().num_end_poll;
    if (!st->polling) {
        ++fake().poll_misuse;
    }
    st->polling = false;
}

enum ibv_wc_opcode fake_read_opcode(struct ibv_cq_ex *cq)
{
    fake_cq_state *st = cq_state(cq);

    if (!st->polling) {
        ++fake().poll_misuse;
    }
    return st->cur.opcode;
}

uint32_t fake_read_vendor_err(struct ibv_cq_ex *cq)
{
    return cq_state(cq)->cur.vendor_err;
}

/* ---- ops of the fake verbs_context (the inline verbs call these) ---- */

int fake_query_device_ex(struct ibv_context *ctx,
                         const struct ibv_query_device_ex_input *input,
                         struct ibv_device_attr_ex *attr, size_t attr_size)
{
    memcpy(attr, &fake().dev_attr,
           (attr_size < sizeof(*attr)) ? attr_size : sizeof(*attr));
    return 0;
}

int fake_query_port(struct ibv_context *ctx, uint8_t port_num,
                    struct ibv_port_attr *attr, size_t attr_len)
{
    if ((port_num == 0) || (port_num > fake().ports.size())) {
        return EINVAL;
    }
    struct ibv_port_attr pattr = fake().ports[port_num - 1].attr;

    if (fake().model) {
        model_port_overlay(ctx, port_num, &pattr);   /* R29 */
    }
    memcpy(attr, &pattr,
           (attr_len < sizeof(*attr)) ? attr_len : sizeof(*attr));
    return 0;
}

struct ibv_cq_ex *fake_create_cq_ex(struct ibv_context *ctx,
                                    struct ibv_cq_init_attr_ex *attr)
{
    struct ibv_cq_ex *cq;

    fake().cq_attrs.push_back(*attr);
    cq = (struct ibv_cq_ex*)calloc(1, sizeof(*cq));
    cq->context             = ctx;
    cq->cqe                 = attr->cqe;
    cq->start_poll          = fake_start_poll;
    cq->next_poll           = fake_next_poll;
    cq->end_poll            = fake_end_poll;
    cq->read_opcode         = fake_read_opcode;
    cq->read_vendor_err     = fake_read_vendor_err;
    globals().cqs[cq].polling = false;
    preload_own(cq);
    ++fake().num_cq;
    return cq;
}

/* Before main(): the model's defaults hold for tests that never reset(). */
const int fake_static_init = (globals(), 0);

} // namespace

verbs_fake &fake()
{
    return globals().state;
}

fake_port fake_ib_port(uint16_t lid, enum ibv_mtu mtu)
{
    fake_port port = {};
    struct ibv_gid_entry gid = {};

    port.attr.state        = IBV_PORT_ACTIVE;
    port.attr.link_layer   = IBV_LINK_LAYER_INFINIBAND;
    port.attr.lid          = lid;
    port.attr.active_mtu   = mtu;
    port.attr.max_mtu      = IBV_MTU_4096;
    port.attr.max_msg_sz   = 1u << 30;
    port.attr.gid_tbl_len  = 1;
    port.attr.active_width = 2;   /* 4x */
    port.attr.active_speed = 32;  /* EDR */
    gid.gid.raw[0]         = 0xfe;
    gid.gid.raw[1]         = 0x80;
    gid.gid.raw[14]        = (uint8_t)(lid >> 8);
    gid.gid.raw[15]        = (uint8_t)lid;
    gid.gid_type           = IBV_GID_TYPE_IB;
    port.gids.push_back(gid);
    /* the default partition, full member (what a subnet manager sets) */
    port.pkeys.push_back(htons(0xffff));
    port.attr.pkey_tbl_len = port.pkeys.size();
    return port;
}

fake_port fake_roce_port(enum ibv_mtu mtu)
{
    fake_port port = {};
    struct ibv_gid_entry gid = {};

    port.attr.state        = IBV_PORT_ACTIVE;
    port.attr.link_layer   = IBV_LINK_LAYER_ETHERNET;
    port.attr.active_mtu   = mtu;
    port.attr.max_mtu      = IBV_MTU_4096;
    port.attr.max_msg_sz   = 1u << 30;
    port.attr.active_width = 2;
    port.attr.active_speed = 64;

    /* 0: RoCE v1 link-local, 1: RoCE v2 IPv6, 2: RoCE v2 IPv4-mapped */
    gid.gid.raw[0]  = 0xfe;
    gid.gid.raw[1]  = 0x80;
    gid.gid.raw[15] = 0x01;
    gid.gid_type    = IBV_GID_TYPE_ROCE_V1;
    port.gids.push_back(gid);
    gid.gid_type    = IBV_GID_TYPE_ROCE_V2;
    port.gids.push_back(gid);
    memset(gid.gid.raw, 0, sizeof(gid.gid.raw));
    gid.gid.raw[10] = 0xff;
    gid.gid.raw[11] = 0xff;
    gid.gid.raw[12] = 10;
    gid.gid.raw[15] = 7;
    port.gids.push_back(gid);
    port.attr.gid_tbl_len = port.gids.size();
    /* RoCE: one pkey, the default (the kernel's table for Ethernet) */
    port.pkeys.push_back(htons(0xffff));
    port.attr.pkey_tbl_len = port.pkeys.size();
    return port;
}

fake_port fake_roce_host_port(uint32_t host, enum ibv_mtu mtu, bool v1,
                              bool v2, bool ipv4, int subnet)
{
    fake_port port = fake_roce_port(mtu);
    struct ibv_gid_entry gid = {};
    unsigned pass;

    port.gids.clear();
    for (pass = 0; pass < 3; ++pass) {
        if (((pass == 1) && (subnet < 0)) || ((pass == 2) && !ipv4)) {
            continue;
        }
        memset(gid.gid.raw, 0, sizeof(gid.gid.raw));
        if (pass == 0) {                   /* fe80::<host + 1> */
            gid.gid.raw[0]  = 0xfe;
            gid.gid.raw[1]  = 0x80;
            gid.gid.raw[14] = (uint8_t)((host + 1) >> 8);
            gid.gid.raw[15] = (uint8_t)(host + 1);
        } else if (pass == 1) {            /* 2001:db8:<subnet>::<host+1> */
            gid.gid.raw[0]  = 0x20;
            gid.gid.raw[1]  = 0x01;
            gid.gid.raw[2]  = 0x0d;
            gid.gid.raw[3]  = 0xb8;
            gid.gid.raw[4]  = (uint8_t)(subnet >> 8);
            gid.gid.raw[5]  = (uint8_t)subnet;
            gid.gid.raw[14] = (uint8_t)((host + 1) >> 8);
            gid.gid.raw[15] = (uint8_t)(host + 1);
        } else {                           /* ::ffff:10.0.h.l */
            gid.gid.raw[10] = 0xff;
            gid.gid.raw[11] = 0xff;
            gid.gid.raw[12] = 10;
            gid.gid.raw[14] = (uint8_t)(host / 256);
            gid.gid.raw[15] = (uint8_t)(host % 256 + 1);
        }
        if (v1) {
            gid.gid_type = IBV_GID_TYPE_ROCE_V1;
            port.gids.push_back(gid);
        }
        if (v2) {
            gid.gid_type = IBV_GID_TYPE_ROCE_V2;
            port.gids.push_back(gid);
        }
    }
    port.attr.gid_tbl_len = port.gids.size();
    return port;
}

void verbs_fake::reset()
{
    free_ibdevs();
    for (auto &cq : globals().cqs) {
        free(cq.first);
    }
    globals().cqs.clear();
    globals().mr_seq       = 0;
    globals().mkey_seq     = 0;
    globals().mkey_creates = 0;
    globals().qp_seq       = 0;

    defaults();
    model_hosts_reset();
}

void verbs_fake::defaults()
{
    model             = true;
    model_set_rules(model_rules_installed());
    update_tag_kernel = true;
    devices.assign(1, fake_device{"mlx5_0", true});
    device_list_fails = false;
    open_errno        = 0;
    memset(&dev_attr, 0, sizeof(dev_attr));
    dev_attr.orig_attr.max_qp_wr           = 32768;
    dev_attr.orig_attr.max_qp              = 4096;  /* the model's FAB_QPS */
    dev_attr.orig_attr.max_sge             = 30;
    dev_attr.orig_attr.max_mr              = 1 << 24;
    dev_attr.orig_attr.max_mr_size         = ~0ull;
    dev_attr.orig_attr.phys_port_cnt       = 1;
    dev_attr.orig_attr.max_qp_rd_atom      = 16;
    dev_attr.orig_attr.max_qp_init_rd_atom = 16;
    ports.assign(1, fake_ib_port(7, IBV_MTU_4096));
    alloc_pd_fails    = false;
    mkey_fail_at      = 0;
    create_qp_errno   = 0;
    qp_inline_grant   = 0;
    modify_fail_state = IBV_QPS_UNKNOWN;
    wr_complete_ret   = 0;
    wr_complete_fail_times = 0;
    start_poll_ret    = 0;
    max_sq_desc_sz    = MODEL_MAX_SQ_DESC_SZ;
    host              = 0;
    fabric            = 0;
    subnet            = 0;
    check_free        = false;
    kernel_before_6_2 = false;
    hca               = model_hca_defaults();

    open_flags = 0;
    calls.clear();
    qp_attrs.clear();
    dv_qp_attrs.clear();
    qp_sq_bytes.clear();
    modify_calls.clear();
    mkey_attrs.clear();
    cq_attrs.clear();
    poll_misuse    = 0;
    num_start_poll = 0;
    num_end_poll   = 0;
    num_ctx = num_pd = num_mr = num_mkey = num_cq = num_qp = 0;
    num_dev_lists = 0;
}

int verbs_fake::live_objects() const
{
    return num_ctx + num_pd + num_mr + num_mkey + num_cq + num_qp +
           num_dev_lists + num_ah;
}

std::vector<fake_wr_call> verbs_fake::posted() const
{
    std::vector<fake_wr_call> out, batch;

    for (const fake_wr_call &call : calls) {
        switch (call.kind) {
        case fake_wr_call::START:
        case fake_wr_call::ABORT:
            batch.clear();
            break;
        case fake_wr_call::COMPLETE:
            if (call.ret == 0) {
                out.insert(out.end(), batch.begin(), batch.end());
            }
            batch.clear();
            break;
        default:
            batch.push_back(call);
            break;
        }
    }
    return out;
}

void verbs_fake::push_cqe(struct ibv_cq_ex *cq, const fake_cqe &cqe)
{
    cq_state(cq)->queue.push_back(cqe);
}

size_t verbs_fake::cq_depth(struct ibv_cq_ex *cq) const
{
    return cq_state(cq)->queue.size();
}

/* ---- the registry of the model's objects (umr_test_verbs_preload.h) ---- */

namespace {

struct object_registry {
    std::mutex            lock;
    std::set<const void*> objs;
};

object_registry &registry()
{
    static object_registry *r = new object_registry();   /* never freed:
                                                            used at exit */
    return *r;
}

} // namespace

void preload_own(const void *obj)
{
    std::lock_guard<std::mutex> g(registry().lock);
    registry().objs.insert(obj);
}

void preload_disown(const void *obj)
{
    std::lock_guard<std::mutex> g(registry().lock);
    registry().objs.erase(obj);
}

bool preload_owns(const void *obj)
{
    std::lock_guard<std::mutex> g(registry().lock);
    return (obj != NULL) && registry().objs.count(obj);
}

const char *fake_wr_kind_str(fake_wr_call::kind_t kind)
{
    static const char *names[] = {
        "START", "RDMA_WRITE", "RDMA_READ", "LOCAL_INV", "SET_SGE_LIST",
        "MR_INTERLEAVED", "MR_LIST", "COMPLETE", "ABORT"
    };
    return names[kind];
}

} // namespace umr_test

using namespace umr_test;

/* ---- the wrapped (exported) verbs ---- */
extern "C" {

struct ibv_device **FAKE_API(ibv_get_device_list)(int *num_devices)
{
    struct ibv_device **list;
    size_t i;

#ifdef UMR_MODEL_PRELOAD
    FAKE_FORWARD(preload_is_client(__builtin_return_address(0)),
                 ibv_get_device_list, "IBVERBS_1.1", num_devices);
    preload_init();
#endif
    if (fake().device_list_fails) {
        errno = ENOSYS;
        return NULL;
    }

    if (!fake_devices_built(fake().devices)) {
        free_ibdevs();
        for (const fake_device &d : fake().devices) {
            struct ibv_device *dev =
                    (struct ibv_device*)calloc(1, sizeof(*dev));
            strncpy(dev->name, d.name.c_str(), sizeof(dev->name) - 1);
            strncpy(dev->dev_name, d.name.c_str(), sizeof(dev->dev_name) - 1);
            fake_sysfs(dev, d);
            globals().ibdevs.push_back(dev);
            preload_own(dev);
        }
    }

    list = (struct ibv_device**)calloc(globals().ibdevs.size() + 1,
                                       sizeof(*list));
    for (i = 0; i < globals().ibdevs.size(); ++i) {
        list[i] = globals().ibdevs[i];
    }
    if (num_devices != NULL) {
        *num_devices = (int)i;
    }
    ++fake().num_dev_lists;
    preload_own(list);
    return list;
}

void FAKE_API(ibv_free_device_list)(struct ibv_device **list)
{
    FAKE_FORWARD(preload_owns(list), ibv_free_device_list, "IBVERBS_1.1",
                 list);
    preload_disown(list);
    --fake().num_dev_lists;
    free(list);
}

const char *FAKE_API(ibv_get_device_name)(struct ibv_device *device)
{
    FAKE_FORWARD(preload_owns(device), ibv_get_device_name, "IBVERBS_1.1",
                 device);
    return device->name;
}

bool FAKE_API(mlx5dv_is_supported)(struct ibv_device *device)
{
    FAKE_FORWARD(preload_owns(device), mlx5dv_is_supported, "MLX5_1.8",
                 device);
    for (size_t i = 0; i < globals().ibdevs.size(); ++i) {
        if (globals().ibdevs[i] == device) {
            return fake().devices[i].mlx5;
        }
    }
    return false;
}

struct ibv_context *
FAKE_API(mlx5dv_open_device)(struct ibv_device *device,
                          struct mlx5dv_context_attr *attr)
{
    struct verbs_context *vctx;

    FAKE_FORWARD(preload_owns(device), mlx5dv_open_device, "MLX5_1.7",
                 device, attr);
    fake().open_flags = attr->flags;
    if (fake().open_errno) {
        errno = fake().open_errno;
        return NULL;
    }

    vctx = (struct verbs_context*)calloc(1, sizeof(*vctx));
    vctx->sz                 = sizeof(*vctx);
    vctx->query_device_ex    = fake_query_device_ex;
    vctx->query_port         = fake_query_port;
    vctx->create_cq_ex       = fake_create_cq_ex;
    vctx->context.device     = device;
    vctx->context.abi_compat = __VERBS_ABI_IS_EXTENDED;
    vctx->context.async_fd   = eventfd(0, EFD_CLOEXEC);   /* R29 */
    vctx->context.cmd_fd     = -1;
    model_ctx_opened(&vctx->context, attr->flags);
    preload_own(&vctx->context);
    ++fake().num_ctx;
    return &vctx->context;
}

int FAKE_API(ibv_close_device)(struct ibv_context *ctx)
{
    FAKE_FORWARD(preload_owns(ctx), ibv_close_device, "IBVERBS_1.1", ctx);
    preload_disown(ctx);
    model_ctx_closed(ctx);
    if (ctx->async_fd >= 0) {
        close(ctx->async_fd);
    }
    free((char*)ctx - offsetof(struct verbs_context, context));
    --fake().num_ctx;
    return 0;
}

int FAKE_API(ibv_query_gid)(struct ibv_context *ctx, uint8_t port_num, int index,
                         union ibv_gid *gid)
{
    FAKE_FORWARD(preload_owns(ctx), ibv_query_gid, "IBVERBS_1.1", ctx,
                 port_num, index, gid);
    struct ibv_gid_entry changed;
    if (fake().model && (port_num == 1) && (index >= 0) &&
        model_gid_overlay(ctx, (uint32_t)index, &changed)) {   /* R32 */
        *gid = changed.gid;
        return 0;
    }
    if ((port_num == 0) || (port_num > fake().ports.size()) || (index < 0) ||
        ((size_t)index >= fake().ports[port_num - 1].gids.size())) {
        return -1;
    }
    *gid = fake().ports[port_num - 1].gids[index].gid;
    return 0;
}

int FAKE_API(_ibv_query_gid_ex)(struct ibv_context *ctx, uint32_t port_num,
                             uint32_t gid_index, struct ibv_gid_entry *entry,
                             uint32_t flags, size_t entry_size)
{
    FAKE_FORWARD(preload_owns(ctx), _ibv_query_gid_ex, "IBVERBS_1.11", ctx,
                 port_num, gid_index, entry, flags, entry_size);
    if (fake().model && (port_num == 1) &&
        model_gid_overlay(ctx, gid_index, entry)) {            /* R32 */
        entry->gid_index = gid_index;
        entry->port_num  = port_num;
        return 0;
    }
    if ((port_num == 0) || (port_num > fake().ports.size()) ||
        (gid_index >= fake().ports[port_num - 1].gids.size())) {
        return EINVAL;
    }
    *entry            = fake().ports[port_num - 1].gids[gid_index];
    entry->gid_index  = gid_index;
    entry->port_num   = port_num;
    return 0;
}

int FAKE_API(ibv_query_pkey)(struct ibv_context *ctx, uint8_t port_num,
                          int index, __be16 *pkey)
{
    FAKE_FORWARD(preload_owns(ctx), ibv_query_pkey, "IBVERBS_1.1", ctx,
                 port_num, index, pkey);
    if ((port_num == 0) || (port_num > fake().ports.size()) || (index < 0) ||
        ((size_t)index >= fake().ports[port_num - 1].pkeys.size())) {
        return EINVAL;
    }
    *pkey = fake().ports[port_num - 1].pkeys[index];
    return 0;
}

/* R29: the events of the context's port and QPs; -1 / EAGAIN when none */
int FAKE_API(ibv_get_async_event)(struct ibv_context *ctx,
                               struct ibv_async_event *event)
{
    std::vector<struct ibv_qp*> qps;

    FAKE_FORWARD(preload_owns(ctx), ibv_get_async_event, "IBVERBS_1.1", ctx,
                 event);
    for (struct ibv_qp *qp : globals().live_qps) {
        if (qp->context == ctx) {
            qps.push_back(qp);
        }
    }
    return model_get_async_event(ctx, qps, event);
}

/* the model raises port events (nothing to acknowledge) and QP events */
void FAKE_API(ibv_ack_async_event)(struct ibv_async_event *event)
{
#ifdef UMR_MODEL_PRELOAD
    bool qp_event = (event->event_type == IBV_EVENT_QP_FATAL) ||
                    (event->event_type == IBV_EVENT_QP_REQ_ERR) ||
                    (event->event_type == IBV_EVENT_QP_ACCESS_ERR);
    bool port_event = (event->event_type == IBV_EVENT_PORT_ERR) ||
                      (event->event_type == IBV_EVENT_PORT_ACTIVE) ||
                      (event->event_type == IBV_EVENT_LID_CHANGE) ||
                      (event->event_type == IBV_EVENT_GID_CHANGE) ||
                      (event->event_type == IBV_EVENT_PKEY_CHANGE) ||
                      (event->event_type == IBV_EVENT_SM_CHANGE) ||
                      (event->event_type == IBV_EVENT_CLIENT_REREGISTER);

    FAKE_FORWARD(port_event || (qp_event && preload_owns(event->element.qp)),
                 ibv_ack_async_event, "IBVERBS_1.1", event);
#endif
}

struct ibv_pd *FAKE_API(ibv_alloc_pd)(struct ibv_context *ctx)
{
    struct ibv_pd *pd;

    FAKE_FORWARD(preload_owns(ctx), ibv_alloc_pd, "IBVERBS_1.1", ctx);
    if (fake().alloc_pd_fails) {
        errno = ENOMEM;
        return NULL;
    }
    pd          = (struct ibv_pd*)calloc(1, sizeof(*pd));
    pd->context = ctx;
    pd->handle  = 0x77;
    preload_own(pd);
    ++fake().num_pd;
    return pd;
}

/* R34: the device's capabilities, in both modes */
int FAKE_API(mlx5dv_devx_general_cmd)(struct ibv_context *ctx, const void *in,
                                      size_t inlen, void *out, size_t outlen)
{
    int ret;

    FAKE_FORWARD(preload_owns(ctx), mlx5dv_devx_general_cmd, "MLX5_1.7", ctx,
                 in, inlen, out, outlen);
    ret = model_devx_general_cmd(ctx, in, inlen, out, outlen);
    if (ret) {
        errno = ret;
    }
    return ret;
}

/* R33 */
struct ibv_ah *FAKE_API(ibv_create_ah)(struct ibv_pd *pd,
                                       struct ibv_ah_attr *attr)
{
    struct ibv_ah *ah;
    int ret;

    FAKE_FORWARD(preload_owns(pd), ibv_create_ah, "IBVERBS_1.1", pd, attr);
    ret = fake().model ? model_create_ah(pd->context, attr) : 0;
    if (ret) {
        errno = ret;
        return NULL;
    }
    ah          = (struct ibv_ah*)calloc(1, sizeof(*ah));
    ah->context = pd->context;
    ah->pd      = pd;
    preload_own(ah);
    ++fake().num_ah;
    return ah;
}

int FAKE_API(ibv_destroy_ah)(struct ibv_ah *ah)
{
    FAKE_FORWARD(preload_owns(ah), ibv_destroy_ah, "IBVERBS_1.1", ah);
    preload_disown(ah);
    free(ah);
    --fake().num_ah;
    return 0;
}

int FAKE_API(ibv_dealloc_pd)(struct ibv_pd *pd)
{
    FAKE_FORWARD(preload_owns(pd), ibv_dealloc_pd, "IBVERBS_1.1", pd);
    preload_disown(pd);
    free(pd);
    --fake().num_pd;
    return 0;
}

static struct ibv_mr *fake_reg_mr(struct ibv_pd *pd, void *addr,
                                  size_t length, int access)
{
    struct ibv_mr *mr;
    uint32_t key;
    int ret;

    if (fake().model) {
        ret = model_reg_mr(addr, length, access, &key, pd);
        if (ret) {
            errno = ret;
            return NULL;
        }
    } else {
        key = 0x1000u + (++globals().mr_seq) * 0x100u + 0x11u;
    }

    mr          = (struct ibv_mr*)calloc(1, sizeof(*mr));
    mr->context = pd->context;
    mr->pd      = pd;
    mr->addr    = addr;
    mr->length  = length;
    mr->lkey    = key;
    mr->rkey    = mr->lkey;
    preload_own(mr);
    ++fake().num_mr;
    return mr;
}

struct ibv_mr *FAKE_API(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
                                 int access)
{
    FAKE_FORWARD(preload_owns(pd), ibv_reg_mr, "IBVERBS_1.1", pd, addr,
                 length, access);
    return fake_reg_mr(pd, addr, length, access);
}

struct ibv_mr *FAKE_API(ibv_reg_mr_iova2)(struct ibv_pd *pd, void *addr,
                                       size_t length, uint64_t iova,
                                       unsigned int access)
{
    FAKE_FORWARD(preload_owns(pd), ibv_reg_mr_iova2, "IBVERBS_1.8", pd, addr,
                 length, iova, access);
    return fake_reg_mr(pd, addr, length, (int)access);
}

int FAKE_API(ibv_dereg_mr)(struct ibv_mr *mr)
{
    FAKE_FORWARD(preload_owns(mr), ibv_dereg_mr, "IBVERBS_1.1", mr);
    preload_disown(mr);
    if (fake().model) {
        model_dereg_mr(mr->lkey);
    }
    free(mr);
    --fake().num_mr;
    return 0;
}

struct mlx5dv_mkey *
FAKE_API(mlx5dv_create_mkey)(struct mlx5dv_mkey_init_attr *attr)
{
    struct mlx5dv_mkey *mkey;

    FAKE_FORWARD(preload_owns(attr->pd), mlx5dv_create_mkey, "MLX5_1.10",
                 attr);
    /* record mode: a kernel without MKEY_UPDATE_TAG (nothing recorded) */
    if (!fake().model &&
        (attr->create_flags & MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG) &&
        !fake().update_tag_kernel) {
        errno = EOPNOTSUPP;
        return NULL;
    }

    fake().mkey_attrs.push_back(*attr);
    if (++globals().mkey_creates == fake().mkey_fail_at) {
        errno = ENOMEM;
        return NULL;
    }

    mkey = (struct mlx5dv_mkey*)calloc(1, sizeof(*mkey));
    if (fake().model) {
        int ret = model_create_mkey(attr->pd->context, attr, &mkey->lkey);
        if (ret) {
            free(mkey);
            errno = ret;
            return NULL;
        }
    } else {
        mkey->lkey = ((0x200u + (++globals().mkey_seq)) << 8) | 0x42u;
    }
    mkey->rkey = mkey->lkey;
    preload_own(mkey);
    ++fake().num_mkey;
    return mkey;
}

int FAKE_API(mlx5dv_destroy_mkey)(struct mlx5dv_mkey *mkey)
{
    FAKE_FORWARD(preload_owns(mkey), mlx5dv_destroy_mkey, "MLX5_1.10", mkey);
    preload_disown(mkey);
    if (fake().model) {
        model_destroy_mkey(mkey->lkey);
    }
    free(mkey);
    --fake().num_mkey;
    return 0;
}

int FAKE_API(ibv_destroy_cq)(struct ibv_cq *cq)
{
    FAKE_FORWARD(preload_owns(cq), ibv_destroy_cq, "IBVERBS_1.1", cq);
    preload_disown(cq);
    struct ibv_cq_ex *cqx = (struct ibv_cq_ex*)cq;

    globals().cqs.erase(cqx);
    free(cqx);
    --fake().num_cq;
    return 0;
}

struct ibv_qp *FAKE_API(mlx5dv_create_qp)(struct ibv_context *ctx,
                                       struct ibv_qp_init_attr_ex *attr,
                                       struct mlx5dv_qp_init_attr *dv_attr)
{
    fake_qp *qp;

    FAKE_FORWARD(preload_owns(ctx), mlx5dv_create_qp, "MLX5_1.3", ctx, attr,
                 dv_attr);
    fake().qp_attrs.push_back(*attr);
    fake().dv_qp_attrs.push_back(*dv_attr);
    fake().qp_sq_bytes.push_back(0);
    if (fake().create_qp_errno) {
        errno = fake().create_qp_errno;
        return NULL;
    }

    qp = new fake_qp();
    if (fake().model) {
        int ret = model_create_qp(ctx, attr, dv_attr, &qp->model);
        if (ret == 0) {
            qp->qpx.qp_base.qp_num = model_qp_alloc(attr->pd);
            ret = (qp->qpx.qp_base.qp_num == 0) ? ENOMEM : 0;
        }
        if (ret) {
            delete qp;
            errno = ret;
            return NULL;
        }
        fake().qp_sq_bytes.back() = qp->model.sq_bytes;
    } else {
        qp->qpx.qp_base.qp_num = 0x300u + (++globals().qp_seq);
    }
    qp->qpx.qp_base.context    = ctx;
    qp->qpx.qp_base.qp_context = attr->qp_context;
    qp->qpx.qp_base.pd         = attr->pd;
    qp->qpx.qp_base.send_cq = attr->send_cq;
    qp->qpx.qp_base.recv_cq = attr->recv_cq;
    qp->qpx.qp_base.qp_type = attr->qp_type;
    qp->qpx.qp_base.state   = IBV_QPS_RESET;
    qp->qpx.wr_start        = fake_wr_start;
    qp->qpx.wr_complete     = fake_wr_complete;
    qp->qpx.wr_abort        = fake_wr_abort;
    qp->qpx.wr_rdma_write   = fake_wr_rdma_write;
    qp->qpx.wr_rdma_read    = fake_wr_rdma_read;
    qp->qpx.wr_local_inv    = fake_wr_local_inv;
    qp->qpx.wr_set_sge_list = fake_wr_set_sge_list;
    if ((dv_attr != NULL) &&
        (dv_attr->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS) &&
        (dv_attr->send_ops_flags != 0)) {
        qp->mqpx.wr_mr_interleaved = fake_wr_mr_interleaved;
        qp->mqpx.wr_mr_list        = fake_wr_mr_list;
    } else {
        /* R31: no mlx5 send operations, no UMR builders */
        qp->mqpx.wr_mr_interleaved = fake_wr_mr_interleaved_none;
        qp->mqpx.wr_mr_list        = fake_wr_mr_list_none;
    }

    globals().live_qps.insert(&qp->qpx.qp_base);
    preload_own(&qp->qpx.qp_base);
    /* the provider writes back what it granted */
    if (!fake().model && (fake().qp_inline_grant != 0)) {
        attr->cap.max_inline_data = fake().qp_inline_grant;
    }
    ++fake().num_qp;
    return &qp->qpx.qp_base;
}

struct ibv_qp_ex *FAKE_API(ibv_qp_to_qp_ex)(struct ibv_qp *qp)
{
    FAKE_FORWARD(preload_owns(qp), ibv_qp_to_qp_ex, "IBVERBS_1.6", qp);
    return &((fake_qp*)qp)->qpx;
}

struct mlx5dv_qp_ex *FAKE_API(mlx5dv_qp_ex_from_ibv_qp_ex)(struct ibv_qp_ex *qpx)
{
    FAKE_FORWARD(preload_owns(&qpx->qp_base), mlx5dv_qp_ex_from_ibv_qp_ex,
                 "MLX5_1.10", qpx);
    return &((fake_qp*)qpx)->mqpx;
}

int FAKE_API(ibv_modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
                         int mask)
{
    FAKE_FORWARD(preload_owns(qp), ibv_modify_qp, "IBVERBS_1.1", qp, attr,
                 mask);
    fake().modify_calls.push_back(std::make_pair(*attr, mask));
    if ((mask & IBV_QP_STATE) && (attr->qp_state == fake().modify_fail_state)) {
        return EINVAL;
    }
    if (fake().model) {
        return model_modify_qp(qp, attr, mask);
    }
    if (mask & IBV_QP_STATE) {
        qp->state = attr->qp_state;
    }
    return 0;
}

int FAKE_API(ibv_destroy_qp)(struct ibv_qp *qp)
{
    FAKE_FORWARD(preload_owns(qp), ibv_destroy_qp, "IBVERBS_1.1", qp);
    preload_disown(qp);
    if (fake().model) {
        model_qp_release(qp->qp_num);
    }
    globals().live_qps.erase(qp);
    delete (fake_qp*)qp;
    --fake().num_qp;
    return 0;
}

#ifdef UMR_MODEL_PRELOAD
/* Exported forms of verbs the headers inline through the context's ops
 * (they call these only for a context without the op: never the model's,
 * but the engine imports them, so they are served here too). */
int FAKE_API(ibv_query_port)(struct ibv_context *context, uint8_t port_num,
                             struct _compat_ibv_port_attr *port_attr)
{
    FAKE_FORWARD(preload_owns(context), ibv_query_port, "IBVERBS_1.1",
                 context, port_num, port_attr);
    /* the old layout: up to `flags` (libibverbs/verbs.c) */
    return fake_query_port(context, port_num,
                           (struct ibv_port_attr*)port_attr,
                           offsetof(struct ibv_port_attr, flags) +
                           sizeof(uint8_t));
}

int FAKE_API(ibv_query_device)(struct ibv_context *context,
                               struct ibv_device_attr *device_attr)
{
    FAKE_FORWARD(preload_owns(context), ibv_query_device, "IBVERBS_1.1",
                 context, device_attr);
    *device_attr = fake().dev_attr.orig_attr;
    return 0;
}
#endif

} // extern "C"
