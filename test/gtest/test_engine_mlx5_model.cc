/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * The model of rdma-core (test/common/umr_test_verbs_model.h): one test per
 * rule, named as in the header's table, through the wrapped verbs
 * themselves; the rules that differ between releases are checked for each
 * release of the support matrix against that release's facts, and the
 * model is checked to follow the release the tests are built and run
 * against. Then the mlx5 engine's key tags on the model.
 */
#include "umr_config.h"

#include "umr_test_verbs_fake.h"
#include "umr_test_verbs_model.h"
#include "umr_test_time.h"

#include "engine.h"
#include "mlx5/engine_mlx5.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <tuple>
#include <vector>

using namespace umr_test;

namespace {

const uint64_t RC_OPS = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ |
                        IBV_QP_EX_WITH_LOCAL_INV;
const uint64_t UMR_DV_OPS = MLX5DV_QP_EX_WITH_MR_INTERLEAVED |
                            MLX5DV_QP_EX_WITH_MR_LIST;
const int      RW     = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                        IBV_ACCESS_REMOTE_READ;

/* The releases of the support matrix and what their source does where
 * releases differ (umr_test_verbs_model.h, DIFFERS), written down from the
 * source, not from the model's rules. */
struct release_facts {
    unsigned    major, minor;
    const char  *where;
    uint32_t    inline_mkey_configure_only; /* R1: max_inline_data read back
                                               for 828 B on an RDMA_WRITE QP
                                               with MKEY_CONFIGURE only */
    bool        list_length_64;             /* R11 */
};

const release_facts RELEASES[] = {
    /* verbs.c _sq_overhead without MKEY_CONFIGURE: 32 + 832 -> 896 - 36 */
    {44, 0, "Debian 12",       860, false},
    /* with it: 192 + 832 = 1 KiB -> 828; umr_sg_list_create: int */
    {56, 1, "Debian 13",       828, false},
    /* umr_sg_list_create: uint64_t (e23cb0a72) */
    {65, 0, "Debian unstable", 828, true}
};

std::string release_str(unsigned major, unsigned minor)
{
    return std::to_string(major) + "." + std::to_string(minor);
}

/* The release configure found, if the model was checked against it. */
const release_facts *installed_release()
{
    for (const release_facts &r : RELEASES) {
        if ((r.major == UMR_RDMA_CORE_MAJOR) &&
            (r.minor == UMR_RDMA_CORE_MINOR)) {
            return &r;
        }
    }
    return NULL;
}

/* Runs check(facts) under each release's rules, then under the rules the
 * model takes by itself (reset()) with the installed release's facts: a
 * model that applied another release's rule fails the last pass. */
template <typename F> void for_each_release(F check)
{
    for (const release_facts &r : RELEASES) {
        SCOPED_TRACE("rules of rdma-core " + release_str(r.major, r.minor) +
                     " (" + r.where + ")");
        model_set_rules(model_rules_for(r.major, r.minor));
        check(r);
    }
    model_set_rules(model_rules_installed());

    const release_facts *inst = installed_release();
    ASSERT_NE(nullptr, inst)
        << "rdma-core " << release_str(UMR_RDMA_CORE_MAJOR,
                                       UMR_RDMA_CORE_MINOR)
        << " (configure, pkg-config libmlx5) is not a release the model was "
           "checked against: read its providers/mlx5 source and add it";
    SCOPED_TRACE("the model's own rules, installed rdma-core " +
                 release_str(inst->major, inst->minor));
    check(*inst);
}

class test_verbs_model : public ::testing::Test {
protected:
    struct ibv_device   **list = NULL;
    struct ibv_context  *ctx   = NULL;
    struct ibv_pd       *pd    = NULL;
    struct ibv_cq_ex    *cq    = NULL;
    std::vector<struct ibv_qp*> qps;
    std::vector<struct ibv_mr*> mrs;
    std::vector<struct mlx5dv_mkey*> mkeys;
    std::vector<uint8_t> src, dst;

    void SetUp() override
    {
        struct mlx5dv_context_attr dattr = {};
        struct ibv_cq_init_attr_ex cattr = {};

        fake().reset();
        ASSERT_TRUE(fake().model);
        list             = ibv_get_device_list(NULL);
        dattr.flags      = MLX5DV_CONTEXT_FLAGS_DEVX;
        ctx              = mlx5dv_open_device(list[0], &dattr);
        ASSERT_NE(nullptr, ctx);
        pd               = ibv_alloc_pd(ctx);
        cattr.cqe        = 256;
        cq               = ibv_create_cq_ex(ctx, &cattr);
        ASSERT_NE(nullptr, cq);
        src.resize(64 * 1024);
        dst.resize(64 * 1024);
        for (size_t i = 0; i < src.size(); ++i) {
            src[i] = (uint8_t)(i * 7 + 1);
        }
    }

    void TearDown() override
    {
        for (auto *m : mkeys) mlx5dv_destroy_mkey(m);
        for (auto *m : mrs) ibv_dereg_mr(m);
        for (auto *q : qps) ibv_destroy_qp(q);
        ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
        ibv_dealloc_pd(pd);
        ibv_close_device(ctx);
        ibv_free_device_list(list);
    }

    struct ibv_qp_init_attr_ex qp_attr(uint32_t wr, uint32_t sge,
                                       uint32_t inl, uint64_t ops = RC_OPS)
    {
        struct ibv_qp_init_attr_ex a = {};
        a.qp_type             = IBV_QPT_RC;
        a.send_cq             = ibv_cq_ex_to_cq(cq);
        a.recv_cq             = ibv_cq_ex_to_cq(cq);
        a.cap.max_send_wr     = wr;
        a.cap.max_send_sge    = sge;
        a.cap.max_inline_data = inl;
        a.pd                  = pd;
        a.comp_mask           = IBV_QP_INIT_ATTR_PD |
                                IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
        a.send_ops_flags      = ops;
        return a;
    }

    struct ibv_qp *create(struct ibv_qp_init_attr_ex &a,
                          uint64_t dv_ops = UMR_DV_OPS)
    {
        struct mlx5dv_qp_init_attr dv = {};
        dv.comp_mask      = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS;
        dv.send_ops_flags = dv_ops;
        struct ibv_qp *qp = mlx5dv_create_qp(ctx, &a, &dv);
        if (qp != NULL) {
            qps.push_back(qp);
        }
        return qp;
    }

    /* the attributes each transition requires (R24); RTR to `dest` on this
     * port (IB: its LID; RoCE: its GID 0) */
    int modify(struct ibv_qp *qp, enum ibv_qp_state st, uint32_t dest = 0)
    {
        struct ibv_qp_attr attr = {};
        int mask = IBV_QP_STATE;
        attr.qp_state = st;
        if (st == IBV_QPS_INIT) {
            attr.port_num        = 1;
            attr.qp_access_flags = RW;
            mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
        } else if (st == IBV_QPS_RTR) {
            attr.dest_qp_num        = dest;
            attr.path_mtu           = fake().ports[0].attr.active_mtu;
            attr.max_dest_rd_atomic = 16;
            attr.ah_attr.port_num   = 1;
            attr.ah_attr.dlid       = fake().ports[0].attr.lid;
            if (fake().ports[0].attr.link_layer == IBV_LINK_LAYER_ETHERNET) {
                attr.ah_attr.is_global     = 1;
                attr.ah_attr.grh.dgid      = fake().ports[0].gids[0].gid;
                attr.ah_attr.grh.hop_limit = 64;
            }
            mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                    IBV_QP_MIN_RNR_TIMER;
        } else if (st == IBV_QPS_RTS) {
            attr.timeout       = 14;
            attr.retry_cnt     = 7;
            attr.rnr_retry     = 7;
            attr.max_rd_atomic = 16;
            mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
        }
        return ibv_modify_qp(qp, &attr, mask);
    }

    /* an RC QP connected to itself, 1 KiB WQEs (52 list entries) */
    struct ibv_qp *loop_qp(uint32_t wr = 64)
    {
        auto a = qp_attr(wr, 4, 828);
        struct ibv_qp *qp = create(a);
        EXPECT_NE(nullptr, qp);
        EXPECT_EQ(0, modify(qp, IBV_QPS_INIT));
        EXPECT_EQ(0, modify(qp, IBV_QPS_RTR, qp->qp_num));
        EXPECT_EQ(0, modify(qp, IBV_QPS_RTS));
        return qp;
    }

    struct ibv_mr *reg(std::vector<uint8_t> &b, int access = RW)
    {
        struct ibv_mr *mr = ibv_reg_mr(pd, b.data(), b.size(), access);
        EXPECT_NE(nullptr, mr);
        mrs.push_back(mr);
        return mr;
    }

    struct mlx5dv_mkey *mkey(uint16_t n, uint32_t flags =
                             MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT)
    {
        struct mlx5dv_mkey_init_attr a = {};
        a.pd           = pd;
        a.create_flags = flags;
        a.max_entries  = n;
        struct mlx5dv_mkey *m = mlx5dv_create_mkey(&a);
        if (m != NULL) {
            mkeys.push_back(m);
        }
        return m;
    }

    int umr_ilv(struct ibv_qp *qp, struct mlx5dv_mkey *m, uint32_t repeat,
                std::vector<struct mlx5dv_mr_interleaved> e,
                unsigned flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED,
                uint32_t access = RW)
    {
        struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
        ibv_wr_start(qpx);
        qpx->wr_id    = 7;
        qpx->wr_flags = flags;
        mlx5dv_wr_mr_interleaved(mlx5dv_qp_ex_from_ibv_qp_ex(qpx), m, access,
                                 repeat, e.size(), e.data());
        return ibv_wr_complete(qpx);
    }

    int umr_list(struct ibv_qp *qp, struct mlx5dv_mkey *m,
                 std::vector<struct ibv_sge> s, uint32_t access = RW)
    {
        struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
        ibv_wr_start(qpx);
        qpx->wr_id    = 8;
        qpx->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
        mlx5dv_wr_mr_list(mlx5dv_qp_ex_from_ibv_qp_ex(qpx), m, access,
                          s.size(), s.data());
        return ibv_wr_complete(qpx);
    }

    int rdma(struct ibv_qp *qp, bool write, uint32_t rkey, uint64_t raddr,
             std::vector<struct ibv_sge> s, uint64_t wr_id = 9)
    {
        struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
        ibv_wr_start(qpx);
        qpx->wr_id    = wr_id;
        qpx->wr_flags = IBV_SEND_SIGNALED;
        if (write) {
            ibv_wr_rdma_write(qpx, rkey, raddr);
        } else {
            ibv_wr_rdma_read(qpx, rkey, raddr);
        }
        ibv_wr_set_sge_list(qpx, s.size(), s.data());
        return ibv_wr_complete(qpx);
    }

    int local_inv(struct ibv_qp *qp, uint32_t key)
    {
        struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
        ibv_wr_start(qpx);
        qpx->wr_id    = 10;
        qpx->wr_flags = IBV_SEND_SIGNALED;
        ibv_wr_local_inv(qpx, key);
        return ibv_wr_complete(qpx);
    }

    /* the next completion: {status, opcode, wr_id}; status -1 if none */
    struct wc { int status; int opcode; uint64_t wr_id; };
    wc poll()
    {
        struct ibv_poll_cq_attr pa = {};
        wc w = {-1, -1, 0};
        if (ibv_start_poll(cq, &pa) == 0) {
            w.status = cq->status;
            w.wr_id  = cq->wr_id;
            w.opcode = ibv_wc_read_opcode(cq);
            ibv_end_poll(cq);
        }
        return w;
    }
};

TEST_F(test_verbs_model, inline_read_back)
{
    /* R1, R3: 828 B inline -> 192 + 832 = 1 KiB WQE -> read back 828 */
    auto a = qp_attr(16, 1, 828);
    ASSERT_NE(nullptr, create(a));
    EXPECT_EQ(828u, a.cap.max_inline_data);
    EXPECT_EQ(16u, a.cap.max_send_wr);
    /* a smaller request rounds up to the 64 B block: 100 -> 192 + 112 =
     * 304 -> 320 B WQE -> 320 - 192 - 4 = 124 */
    a = qp_attr(16, 1, 100);
    ASSERT_NE(nullptr, create(a));
    EXPECT_EQ(124u, a.cap.max_inline_data);

    for_each_release([&](const release_facts &r) {
        /* MR_INTERLEAVED / MR_LIST alone count the UMR segments in every
         * release (verbs.c _sq_overhead): no LOCAL_INV needed */
        auto b = qp_attr(16, 1, 828, IBV_QP_EX_WITH_RDMA_WRITE);
        ASSERT_NE(nullptr, create(b));
        EXPECT_EQ(828u, b.cap.max_inline_data);
        /* neither UMR nor LOCAL_INV: ctrl + raddr, 32 B: 828 -> 32 + 832 =
         * 864 -> 896 B WQE -> 896 - 32 - 4 = 860 */
        b = qp_attr(16, 1, 828, IBV_QP_EX_WITH_RDMA_WRITE);
        ASSERT_NE(nullptr, create(b, 0));
        EXPECT_EQ(860u, b.cap.max_inline_data);
        /* without IBV_QP_INIT_ATTR_SEND_OPS_FLAGS every RC op counts */
        b = qp_attr(16, 1, 828, 0);
        b.comp_mask = IBV_QP_INIT_ATTR_PD;
        ASSERT_NE(nullptr, create(b, 0));
        EXPECT_EQ(828u, b.cap.max_inline_data);
    });
}

/* R1, DIFFERS: MKEY_CONFIGURE counts the UMR segments from 44.1 on */
TEST_F(test_verbs_model, sq_overhead_mkey_configure)
{
    for_each_release([&](const release_facts &r) {
        auto a = qp_attr(16, 1, 828, IBV_QP_EX_WITH_RDMA_WRITE);
        ASSERT_NE(nullptr, create(a, MLX5DV_QP_EX_WITH_MKEY_CONFIGURE));
        EXPECT_EQ(r.inline_mkey_configure_only, a.cap.max_inline_data);
    });
}

TEST_F(test_verbs_model, send_ops_flags)
{
    auto a = qp_attr(16, 1, 828, RC_OPS | IBV_QP_EX_WITH_TSO);
    errno = 0;
    EXPECT_EQ(nullptr, create(a));
    EXPECT_EQ(EOPNOTSUPP, errno);
    a = qp_attr(16, 1, 828);
    a.qp_type = IBV_QPT_UD;
    EXPECT_EQ(nullptr, create(a));
    EXPECT_EQ(EOPNOTSUPP, errno);
    /* qp.c mlx5_qp_fill_wr_pfns: the mlx5 ops an RC QP takes */
    a = qp_attr(16, 1, 828);
    EXPECT_NE(nullptr, create(a, UMR_DV_OPS | MLX5DV_QP_EX_WITH_MKEY_CONFIGURE |
                                 MLX5DV_QP_EX_WITH_RAW_WQE));
    a = qp_attr(16, 1, 828);
    errno = 0;
    EXPECT_EQ(nullptr, create(a, UMR_DV_OPS | (MLX5DV_QP_EX_WITH_MEMCPY << 1)));
    EXPECT_EQ(EOPNOTSUPP, errno);
}

TEST_F(test_verbs_model, umr_needs_inline)
{
    struct ibv_qp *qp = loop_qp();
    struct ibv_mr *mr = reg(src);
    struct mlx5dv_mkey *m = mkey(4);
    EXPECT_EQ(EOPNOTSUPP, umr_ilv(qp, m, 1, {{(uintptr_t)src.data(), 8, 8,
                                             mr->lkey}}, IBV_SEND_SIGNALED));
    EXPECT_EQ(-1, poll().status) << "nothing executed";

    /* mlx5_send_wr_mkey_configure sets EOPNOTSUPP over an earlier error of
     * the batch (here R17's ENOMEM) */
    struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
    struct mlx5dv_mr_interleaved e = {(uintptr_t)src.data(), 8, 8, mr->lkey};
    std::vector<struct ibv_sge> many(5, {(uintptr_t)src.data(), 8, mr->lkey});
    ibv_wr_start(qpx);
    qpx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_rdma_write(qpx, mr->rkey, (uintptr_t)src.data());
    ibv_wr_set_sge_list(qpx, many.size(), many.data());
    mlx5dv_wr_mr_interleaved(mlx5dv_qp_ex_from_ibv_qp_ex(qpx), m, RW, 1, 1,
                             &e);
    EXPECT_EQ(EOPNOTSUPP, ibv_wr_complete(qpx));
    EXPECT_EQ(-1, poll().status) << "nothing executed";
}

TEST_F(test_verbs_model, umr_entries_enomem)
{
    struct ibv_qp *qp = loop_qp();
    struct ibv_mr *mr = reg(src);
    struct mlx5dv_mkey *m = mkey(64);
    std::vector<struct mlx5dv_mr_interleaved> e(52, {(uintptr_t)src.data(),
                                                     8, 8, mr->lkey});
    /* R7: (828 + 4) / 16 - 1 = 51 interleaved */
    EXPECT_EQ(ENOMEM, umr_ilv(qp, m, 1, e));
    e.pop_back();
    EXPECT_EQ(0, umr_ilv(qp, m, 1, e));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    /* and the key's descriptors: 8 */
    struct mlx5dv_mkey *small = mkey(8);
    std::vector<struct ibv_sge> s(9, {(uintptr_t)src.data(), 8, mr->lkey});
    EXPECT_EQ(ENOMEM, umr_list(qp, small, s));
}

TEST_F(test_verbs_model, umr_access_einval)
{
    struct ibv_qp *qp = loop_qp();
    struct ibv_mr *mr = reg(src);
    EXPECT_EQ(EINVAL, umr_ilv(qp, mkey(4), 1, {{(uintptr_t)src.data(), 8, 8,
                                                mr->lkey}},
                              IBV_SEND_INLINE, IBV_ACCESS_MW_BIND));
    /* the access setter runs before the layout setter: too many entries
     * and a bad access flag give EINVAL, not R7's ENOMEM */
    std::vector<struct ibv_sge> s(9, {(uintptr_t)src.data(), 8, mr->lkey});
    EXPECT_EQ(EINVAL, umr_list(qp, mkey(8), s, RW | IBV_ACCESS_MW_BIND));
    EXPECT_EQ(ENOMEM, umr_list(qp, mkey(8), s));
    EXPECT_EQ(-1, poll().status) << "nothing executed";
}

TEST_F(test_verbs_model, interleaved_header_entry)
{
    struct ibv_qp *qp = loop_qp();
    struct ibv_mr *mr = reg(src);
    struct mlx5dv_mkey *m = mkey(4);
    std::vector<struct mlx5dv_mr_interleaved> e(4, {(uintptr_t)src.data(), 8,
                                                    8, mr->lkey});
    /* R9: rdma-core accepts 4 on a 4-descriptor key, the NIC does not */
    EXPECT_EQ(0, umr_ilv(qp, m, 1, e));
    EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, poll().status);
}

TEST_F(test_verbs_model, sixteen_bit_truncation)
{
    struct ibv_qp *qp = loop_qp();
    struct ibv_mr *smr = reg(src), *dmr = reg(dst);
    struct mlx5dv_mkey *m = mkey(4);
    /* R10: stride 65536 + 16 is written as 16: blocks land 16 apart */
    EXPECT_EQ(0, umr_ilv(qp, m, 2, {{(uintptr_t)dst.data(), 16, 65536,
                                     dmr->lkey}}));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    EXPECT_EQ(0, rdma(qp, true, m->rkey, 0,
                      {{(uintptr_t)src.data(), 32, smr->lkey}}));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    EXPECT_EQ(0, memcmp(dst.data(), src.data(), 32));
}

TEST_F(test_verbs_model, interleaved_over_4g)
{
    struct ibv_qp *qp = loop_qp();
    struct ibv_mr *mr = reg(src);
    struct mlx5dv_mkey *m = mkey(4);
    /* R11: 2 x 65535 x 32769 > 4 GiB, summed in 64 bits */
    EXPECT_EQ(0, umr_ilv(qp, m, 32769, {{(uintptr_t)src.data(), 65535, 0,
                                         mr->lkey},
                                        {(uintptr_t)src.data(), 65535, 0,
                                         mr->lkey}}));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    EXPECT_EQ(2ull * 65535 * 32769, model_key_query(m->lkey).length);
}

/* R11, DIFFERS: 2 x 1.5 GiB in a list key. 44.0 and 56.1 sum it in an int
 * (umr_sg_list_create): -1 GiB, sign-extended into the 64-bit key length;
 * 65.0 in a uint64_t: 3 GiB. */
TEST_F(test_verbs_model, list_length_sum)
{
    struct ibv_qp *qp = loop_qp();
    struct ibv_mr *mr = reg(src);
    struct mlx5dv_mkey *m = mkey(4);

    for_each_release([&](const release_facts &r) {
        EXPECT_EQ(0, umr_list(qp, m, {{(uintptr_t)src.data(), 3u << 29,
                                       mr->lkey},
                                      {(uintptr_t)src.data(), 3u << 29,
                                       mr->lkey}}));
        EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
        EXPECT_EQ(r.list_length_64 ? (3ull << 30) : 0xffffffffc0000000ull,
                  model_key_query(m->lkey).length);
    });
}

TEST_F(test_verbs_model, tag_rules)
{
    struct ibv_qp *qp = loop_qp();
    struct ibv_mr *mr = reg(src);
    std::vector<struct mlx5dv_mr_interleaved> e = {{(uintptr_t)src.data(), 8,
                                                    8, mr->lkey}};
    /* R12: a key created without UPDATE_TAG takes a new tag as well:
     * rdma-core creates the same key either way (before, the model failed
     * the UMR: a rule of its own) */
    struct mlx5dv_mkey *plain = mkey(4);
    plain->lkey = plain->rkey = (plain->lkey & ~0xffu) | 0x05;
    EXPECT_EQ(0, umr_ilv(qp, plain, 1, e));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    EXPECT_EQ(0x05u, model_key_query(plain->lkey).tag);

    struct ibv_qp *qp2 = loop_qp();
    struct mlx5dv_mkey *m = mkey(4, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT |
                                    MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG);
    ASSERT_NE(nullptr, m);
    uint32_t old = m->lkey;
    m->lkey = m->rkey = (old & ~0xffu) | 0x06;
    EXPECT_EQ(0, umr_ilv(qp2, m, 1, e));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    EXPECT_EQ(0x06u, model_key_query(m->lkey).tag);
    EXPECT_FALSE(model_key_query(old).exists) << "the old tag is gone";

    /* without kernel support a non-zero tag is EOPNOTSUPP at the builder */
    fake().update_tag_kernel = false;
    m->lkey = m->rkey = (old & ~0xffu) | 0x07;
    EXPECT_EQ(EOPNOTSUPP, umr_ilv(qp2, m, 1, e));
}

TEST_F(test_verbs_model, create_mkey_rules)
{
    struct mlx5dv_mkey_init_attr a = {};
    a.pd           = pd;
    a.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT;
    a.max_entries  = 5;
    struct mlx5dv_mkey *m = mlx5dv_create_mkey(&a);
    ASSERT_NE(nullptr, m);
    mkeys.push_back(m);
    EXPECT_EQ(8u, model_key_query(m->lkey).num_desc) << "rounded up to 4";
    EXPECT_EQ(8u, a.max_entries) << "and written back";

    /* create_flags 0 or unknown: EOPNOTSUPP; INDIRECT itself is not
     * checked (verbs.c _mlx5dv_create_mkey: every key is a KLM key) */
    errno = 0;
    EXPECT_EQ(nullptr, mkey(4, 0));
    EXPECT_EQ(EOPNOTSUPP, errno);
    errno = 0;
    EXPECT_EQ(nullptr, mkey(4, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT |
                               (MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE
                                << 1)));
    EXPECT_EQ(EOPNOTSUPP, errno);
    EXPECT_NE(nullptr, mkey(4, MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE));

    /* 65535 rounds up to 65536 in the 16-bit num_desc: a key without
     * descriptors, on which every UMR fails (R7) */
    a.max_entries = 65535;
    m = mlx5dv_create_mkey(&a);
    ASSERT_NE(nullptr, m);
    mkeys.push_back(m);
    EXPECT_EQ(0u, a.max_entries);
    EXPECT_EQ(0u, model_key_query(m->lkey).num_desc);
    struct ibv_mr *mr = reg(src);
    EXPECT_EQ(ENOMEM, umr_list(loop_qp(), m, {{(uintptr_t)src.data(), 8,
                                               mr->lkey}}));

    fake().update_tag_kernel = false;
    errno = 0;
    EXPECT_EQ(nullptr, mkey(4, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT |
                               MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG));
    EXPECT_EQ(EOPNOTSUPP, errno);

    /* no DEVX: the kernel refuses the DEVX object, EINVAL */
    struct mlx5dv_context_attr dattr = {};
    struct ibv_context *plain = mlx5dv_open_device(list[0], &dattr);
    struct ibv_pd *ppd = ibv_alloc_pd(plain);
    a.pd           = ppd;
    a.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT;
    a.max_entries  = 4;
    errno = 0;
    EXPECT_EQ(nullptr, mlx5dv_create_mkey(&a));
    EXPECT_EQ(EINVAL, errno);
    ibv_dealloc_pd(ppd);
    ibv_close_device(plain);
}

/* R23: a UMR does not check that the key is free: a configured key takes a
 * new layout without LOCAL_INV, and RDMA through it follows the new one */
TEST_F(test_verbs_model, reconfigure_without_inv)
{
    struct ibv_qp *qp = loop_qp();
    struct ibv_mr *smr = reg(src), *dmr = reg(dst);
    struct mlx5dv_mkey *m = mkey(4);

    EXPECT_EQ(0, umr_list(qp, m, {{(uintptr_t)dst.data(), 16, dmr->lkey}}));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    EXPECT_EQ(0, umr_list(qp, m, {{(uintptr_t)dst.data() + 4096, 16,
                                   dmr->lkey}}));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    EXPECT_EQ(0, rdma(qp, true, m->rkey, 0,
                      {{(uintptr_t)src.data(), 16, smr->lkey}}));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    EXPECT_EQ(0, memcmp(dst.data() + 4096, src.data(), 16));
    EXPECT_NE(0, memcmp(dst.data(), src.data(), 16));
}

TEST_F(test_verbs_model, qp_states)
{
    auto a = qp_attr(16, 1, 828);
    struct ibv_qp *qp = create(a);
    EXPECT_EQ(EINVAL, modify(qp, IBV_QPS_RTS)) << "RESET -> RTS";
    EXPECT_EQ(0, modify(qp, IBV_QPS_INIT));
    EXPECT_EQ(EINVAL, modify(qp, IBV_QPS_RTS)) << "INIT -> RTS";
    EXPECT_EQ(0, modify(qp, IBV_QPS_RTR, qp->qp_num));
    /* posted while not in RTS: flushed */
    struct ibv_mr *mr = reg(src);
    EXPECT_EQ(0, rdma(qp, true, mr->rkey, (uintptr_t)src.data(),
                      {{(uintptr_t)src.data(), 8, mr->lkey}}));
    EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, poll().status);
}

TEST_F(test_verbs_model, full_sq_enomem)
{
    struct ibv_qp *qp = loop_qp(4);   /* max_post 4 */
    struct ibv_mr *mr = reg(src);
    std::vector<struct ibv_sge> s = {{(uintptr_t)src.data(), 8, mr->lkey}};
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(0, rdma(qp, true, mr->rkey, (uintptr_t)src.data() + 64,
                          s));
    }
    EXPECT_EQ(ENOMEM, rdma(qp, true, mr->rkey, (uintptr_t)src.data() + 64,
                           s)) << "4 WRs outstanding";
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);  /* frees one */
    EXPECT_EQ(0, rdma(qp, true, mr->rkey, (uintptr_t)src.data() + 64, s));
}

TEST_F(test_verbs_model, batch_rollback)
{
    struct ibv_qp *qp = loop_qp();
    struct ibv_mr *mr = reg(src), *dmr = reg(dst);
    struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
    struct ibv_sge s = {(uintptr_t)src.data(), 8, mr->lkey};
    std::vector<struct ibv_sge> many(5, s);

    ibv_wr_start(qpx);
    qpx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_rdma_write(qpx, dmr->rkey, (uintptr_t)dst.data());
    ibv_wr_set_sge_list(qpx, 1, &s);
    ibv_wr_rdma_write(qpx, dmr->rkey, (uintptr_t)dst.data());
    ibv_wr_set_sge_list(qpx, many.size(), many.data());   /* R17: > 4 */
    EXPECT_EQ(ENOMEM, ibv_wr_complete(qpx));
    EXPECT_EQ(-1, poll().status) << "the first WR was rolled back too";
    EXPECT_NE(0, memcmp(dst.data(), src.data(), 8));
}

TEST_F(test_verbs_model, sge_enomem)
{
    struct ibv_qp *qp = loop_qp();
    struct ibv_mr *mr = reg(src);
    std::vector<struct ibv_sge> s(5, {(uintptr_t)src.data(), 8, mr->lkey});
    EXPECT_EQ(ENOMEM, rdma(qp, true, mr->rkey, (uintptr_t)src.data(), s));
    s.pop_back();
    EXPECT_EQ(0, rdma(qp, true, mr->rkey, (uintptr_t)src.data() + 1024, s));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
}

TEST_F(test_verbs_model, remote_access_errors)
{
    struct ibv_qp *qp = loop_qp();
    struct ibv_mr *smr = reg(src), *dmr = reg(dst, IBV_ACCESS_LOCAL_WRITE);
    std::vector<struct ibv_sge> s = {{(uintptr_t)src.data(), 64, smr->lkey}};

    /* no REMOTE_WRITE on the target */
    EXPECT_EQ(0, rdma(qp, true, dmr->rkey, (uintptr_t)dst.data(), s));
    EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, poll().status);
    EXPECT_EQ(IBV_WC_WR_FLUSH_ERR,
              (rdma(qp, true, smr->rkey, (uintptr_t)src.data(), s),
               poll().status)) << "the QP is in error now";

    /* bounds, unknown key, stale key, on a fresh QP each */
    struct ibv_mr *ok = reg(dst);
    struct { uint32_t key; uint64_t addr; } bad[] = {
        {ok->rkey, (uintptr_t)dst.data() + dst.size() - 8},
        {ok->rkey ^ 0x4000000, (uintptr_t)dst.data()},
        {ok->rkey ^ 0x01, (uintptr_t)dst.data()}};
    for (auto b : bad) {
        struct ibv_qp *q = loop_qp();
        EXPECT_EQ(0, rdma(q, true, b.key, b.addr, s));
        EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, poll().status);
    }
    /* a bad lkey: a local protection error */
    struct ibv_qp *q = loop_qp();
    EXPECT_EQ(0, rdma(q, true, ok->rkey, (uintptr_t)dst.data(),
                      {{(uintptr_t)src.data(), 64, smr->lkey ^ 0x4000000}}));
    EXPECT_EQ(IBV_WC_LOC_PROT_ERR, poll().status);
}

/* R18: the key named in a work request is checked against the PD of the
 * QP it is used on (IBTA memory region validation); the keys an indirect
 * key points to are not. Before, the model checked the process only: a key
 * of another PD of the process passed. */
TEST_F(test_verbs_model, pd_of_the_qp)
{
    struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
    ASSERT_NE(nullptr, pd2);
    struct ibv_mr *other = ibv_reg_mr(pd2, dst.data(), dst.size(), RW);
    ASSERT_NE(nullptr, other);
    struct ibv_mr *smr = reg(src), *dmr = reg(dst);
    std::vector<struct ibv_sge> s = {{(uintptr_t)src.data(), 64, smr->lkey}};

    struct ibv_qp *qp = loop_qp();
    EXPECT_EQ(0, rdma(qp, true, other->rkey, (uintptr_t)dst.data(), s));
    EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, poll().status) << "rkey of another PD";
    qp = loop_qp();
    EXPECT_EQ(0, rdma(qp, true, dmr->rkey, (uintptr_t)dst.data(),
                      {{(uintptr_t)dst.data(), 64, other->lkey}}));
    EXPECT_EQ(IBV_WC_LOC_PROT_ERR, poll().status) << "lkey of another PD";

    /* an indirect key of this PD over an MR of the other: followed */
    qp = loop_qp();
    struct mlx5dv_mkey *m = mkey(4);
    EXPECT_EQ(0, umr_list(qp, m, {{(uintptr_t)dst.data(), 64,
                                   other->lkey}}));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    EXPECT_EQ(0, rdma(qp, true, m->rkey, 0, s));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    EXPECT_EQ(0, memcmp(dst.data(), src.data(), 64));

    EXPECT_EQ(0, ibv_dereg_mr(other));
    EXPECT_EQ(0, ibv_dealloc_pd(pd2));
}

TEST_F(test_verbs_model, local_inv)
{
    struct ibv_qp *qp = loop_qp();
    struct ibv_mr *smr = reg(src), *dmr = reg(dst);
    struct mlx5dv_mkey *m = mkey(4);
    /* nested: a list key over an interleaved key */
    EXPECT_EQ(0, umr_ilv(qp, m, 4, {{(uintptr_t)dst.data(), 8, 8,
                                     dmr->lkey}}));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    struct mlx5dv_mkey *top = mkey(4);
    EXPECT_EQ(0, umr_list(qp, top, {{8, 16, m->lkey}}));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    EXPECT_EQ(0, rdma(qp, true, top->rkey, 0,
                      {{(uintptr_t)src.data(), 16, smr->lkey}}));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    /* top [0, 16) = m [8, 24) = rows 1 and 2: dst + 16, dst + 32 */
    EXPECT_EQ(0, memcmp(dst.data() + 16, src.data(), 8));
    EXPECT_EQ(0, memcmp(dst.data() + 32, src.data() + 8, 8));

    EXPECT_EQ(0, local_inv(qp, m->lkey));
    wc w = poll();
    EXPECT_EQ(IBV_WC_SUCCESS, w.status);
    EXPECT_EQ(IBV_WC_LOCAL_INV, w.opcode);
    EXPECT_FALSE(model_key_query(m->lkey).valid);
    /* rdma-core's LOCAL_INV writes tag 0 (R19; before, the model kept it) */
    struct mlx5dv_mkey *t = mkey(4, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT |
                                    MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG);
    t->lkey = t->rkey = (t->lkey & ~0xffu) | 0x09;
    EXPECT_EQ(0, umr_list(qp, t, {{(uintptr_t)dst.data(), 16, dmr->lkey}}));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    EXPECT_EQ(0, local_inv(qp, t->lkey));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    EXPECT_FALSE(model_key_query(t->lkey).exists) << "tag 9 is gone";
    EXPECT_TRUE(model_key_query(t->lkey & ~0xffu).exists) << "tag 0 now";
    EXPECT_EQ(0, rdma(qp, true, top->rkey, 0,
                      {{(uintptr_t)src.data(), 16, smr->lkey}}));
    EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, poll().status)
            << "through an invalidated child";
    struct ibv_qp *q = loop_qp();
    EXPECT_EQ(0, local_inv(q, smr->lkey));
    EXPECT_EQ(IBV_WC_LOC_PROT_ERR, poll().status) << "not an indirect key";
}

TEST_F(test_verbs_model, completions)
{
    struct ibv_qp *qp = loop_qp();
    struct ibv_mr *smr = reg(src), *dmr = reg(dst);
    struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
    struct ibv_sge s = {(uintptr_t)src.data(), 128, smr->lkey};

    ibv_wr_start(qpx);
    qpx->wr_id    = 1;
    qpx->wr_flags = 0;                               /* unsignaled */
    ibv_wr_rdma_write(qpx, dmr->rkey, (uintptr_t)dst.data());
    ibv_wr_set_sge_list(qpx, 1, &s);
    qpx->wr_id    = 2;
    qpx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_rdma_read(qpx, dmr->rkey, (uintptr_t)dst.data());
    s.addr += 1024;
    ibv_wr_set_sge_list(qpx, 1, &s);
    EXPECT_EQ(0, ibv_wr_complete(qpx));
    wc w = poll();
    EXPECT_EQ(IBV_WC_SUCCESS, w.status);
    EXPECT_EQ(2u, w.wr_id);
    EXPECT_EQ(IBV_WC_RDMA_READ, w.opcode);
    EXPECT_EQ(-1, poll().status) << "no completion for the unsignaled WR";
    EXPECT_EQ(0, memcmp(src.data() + 1024, src.data(), 128));
    EXPECT_EQ(0, memcmp(dst.data(), src.data(), 128));
}

TEST_F(test_verbs_model, reg_mr_efault)
{
    size_t page = sysconf(_SC_PAGESIZE);
    char *mem = (char*)mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, (void*)mem);
    ASSERT_EQ(0, mprotect(mem + page, page, PROT_NONE));
    errno = 0;
    EXPECT_EQ(nullptr, ibv_reg_mr(pd, mem + page - 8, 16, RW));
    EXPECT_EQ(EFAULT, errno);
    struct ibv_mr *mr = ibv_reg_mr(pd, mem, page, RW);
    EXPECT_NE(nullptr, mr);
    ibv_dereg_mr(mr);
    munmap(mem, 2 * page);
}

/* A file of `len` bytes (byte i: i * 13 + 5) mapped with `prot` and
 * `flags` (MAP_PRIVATE or MAP_SHARED); the file is unlinked already. */
static char *map_file(size_t len, int prot, int flags)
{
    char path[] = "/tmp/umr-model-pin-XXXXXX";
    int fd      = mkstemp(path);
    std::vector<char> bytes(len);
    void *p;

    if (fd < 0) {
        return NULL;
    }
    unlink(path);
    for (size_t i = 0; i < len; ++i) {
        bytes[i] = (char)(i * 13 + 5);
    }
    if (write(fd, bytes.data(), len) != (ssize_t)len) {
        close(fd);
        return NULL;
    }
    p = mmap(NULL, len, prot, flags, fd, 0);
    close(fd);
    return (p == MAP_FAILED) ? NULL : (char*)p;
}

/* R21a: remote write or atomic access needs local write (kernel
 * ib_check_mr_access), whatever the memory. */
TEST_F(test_verbs_model, reg_mr_access_needs_local_write)
{
    for (int access : {(int)IBV_ACCESS_REMOTE_WRITE,
                       (int)IBV_ACCESS_REMOTE_ATOMIC,
                       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ}) {
        errno = 0;
        EXPECT_EQ(nullptr, ibv_reg_mr(pd, src.data(), 64, access)) << access;
        EXPECT_EQ(EINVAL, errno) << access;
    }
    reg(src, IBV_ACCESS_REMOTE_READ);
    reg(src, 0);
}

/* R21b (issue 30 finding 1): write access pins for writing, which the
 * kernel refuses on memory the process may only read; read access pins any
 * readable page, and its key serves remote reads only. Before: the model
 * registered a PROT_READ mapping with write access. */
TEST_F(test_verbs_model, reg_mr_write_access_on_read_only_mapping)
{
    size_t page = sysconf(_SC_PAGESIZE), len = 2 * page;
    char *file  = map_file(len, PROT_READ, MAP_PRIVATE);
    char *anon  = (char*)mmap(NULL, len, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(nullptr, file);
    ASSERT_NE(MAP_FAILED, (void*)anon);
    memcpy(anon, file, len);
    ASSERT_EQ(0, mprotect(anon, len, PROT_READ));

    for (char *mem : {file, anon}) {
        SCOPED_TRACE((mem == file) ? "PROT_READ file mapping" :
                                     "mprotect'ed to PROT_READ");
        for (int access : {(int)IBV_ACCESS_LOCAL_WRITE, RW,
                           IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ}) {
            errno = 0;
            EXPECT_EQ(nullptr, ibv_reg_mr(pd, mem + 8, len - 16, access))
                    << "access " << access;
            EXPECT_EQ(EFAULT, errno) << "access " << access;
        }
        struct ibv_mr *ro = ibv_reg_mr(pd, mem, len, IBV_ACCESS_REMOTE_READ);
        ASSERT_NE(nullptr, ro);
        mrs.push_back(ro);

        /* a peer reads it; a write through its key is refused */
        struct ibv_qp *qp = loop_qp();
        struct ibv_mr *dmr = reg(dst), *smr = reg(src);
        memset(dst.data(), 0, len);
        EXPECT_EQ(0, rdma(qp, false, ro->rkey, (uintptr_t)mem + 100,
                          {{(uintptr_t)dst.data(), (uint32_t)(len - 200),
                            dmr->lkey}}));
        EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
        EXPECT_EQ(0, memcmp(dst.data(), file + 100, len - 200));
        EXPECT_EQ(0, rdma(qp, true, ro->rkey, (uintptr_t)mem,
                          {{(uintptr_t)src.data(), 64, smr->lkey}}));
        EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, poll().status);
        EXPECT_EQ(0, memcmp(mem, file, len)) << "the mapping was written";

        /* nor can it be the destination of a local write */
        struct ibv_qp *q = loop_qp();
        EXPECT_EQ(0, rdma(q, false, smr->rkey, (uintptr_t)src.data(),
                          {{(uintptr_t)mem, 64, ro->lkey}}));
        EXPECT_EQ(IBV_WC_LOC_PROT_ERR, poll().status);
    }
    for (struct ibv_mr *m : mrs) {
        ibv_dereg_mr(m);
    }
    mrs.clear();
    munmap(file, len);
    munmap(anon, len);
}

/* R21b: before Linux 6.2 a read-only registration pins with FOLL_WRITE |
 * FOLL_FORCE, which a private mapping takes (copy on write) and a shared
 * one without write permission refuses; from 6.2 on both take it. */
TEST_F(test_verbs_model, reg_mr_read_only_before_linux_6_2)
{
    size_t len   = 2 * sysconf(_SC_PAGESIZE);
    char *shared = map_file(len, PROT_READ, MAP_SHARED);
    char *priv   = map_file(len, PROT_READ, MAP_PRIVATE);
    ASSERT_NE(nullptr, shared);
    ASSERT_NE(nullptr, priv);

    for (bool before : {false, true}) {
        SCOPED_TRACE(before ? "Linux 6.1" : "Linux 6.2");
        fake().kernel_before_6_2 = before;
        struct ibv_mr *mr = ibv_reg_mr(pd, shared, len,
                                       IBV_ACCESS_REMOTE_READ);
        if (before) {
            EXPECT_EQ(nullptr, mr);
            EXPECT_EQ(EFAULT, errno);
        } else {
            EXPECT_NE(nullptr, mr);
        }
        if (mr != NULL) {
            ibv_dereg_mr(mr);
        }
        mr = ibv_reg_mr(pd, priv, len, IBV_ACCESS_REMOTE_READ);
        EXPECT_NE(nullptr, mr);
        if (mr != NULL) {
            ibv_dereg_mr(mr);
        }
    }
    munmap(shared, len);
    munmap(priv, len);
}

/* R21c (issue 30 finding 6): an MR addresses the pages it pinned; after
 * munmap and a new mapping at the same address (or MADV_DONTNEED) the
 * process has other pages there, and an access through the old MR fails in
 * the model (a NIC would reach the old pages). Before: the model copied by
 * virtual address and read the new pages. A fork, whose copy-on-write
 * moves the parent's pages as the kernel would not for pinned ones, keeps
 * the binding. */
TEST_F(test_verbs_model, mr_bound_to_pages)
{
    size_t page = sysconf(_SC_PAGESIZE), len = 4 * page;
    char *mem   = (char*)mmap(NULL, len, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, (void*)mem);
    memset(mem, 'a', len);
    struct ibv_mr *mr  = ibv_reg_mr(pd, mem, len, RW);
    ASSERT_NE(nullptr, mr);
    struct ibv_mr *dmr = reg(dst), *smr = reg(src);
    if (!model_key_query(mr->lkey).bound) {
        ibv_dereg_mr(mr);
        munmap(mem, len);
        GTEST_SKIP() << "this process sees no page frames in "
                        "/proc/self/pagemap (needs CAP_SYS_ADMIN): the model "
                        "cannot bind an MR to its pages here";
    }
    auto read_page = [&](size_t at) {
        struct ibv_qp *qp = loop_qp();
        EXPECT_EQ(0, rdma(qp, false, mr->rkey, (uintptr_t)mem + at,
                          {{(uintptr_t)dst.data(), (uint32_t)page,
                            dmr->lkey}}));
        return poll().status;
    };

    /* the registered pages: read as they are */
    EXPECT_EQ(IBV_WC_SUCCESS, read_page(0));
    EXPECT_EQ('a', dst[0]);

    /* a fork: the parent writes its pages after it */
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        _exit(0);
    }
    memset(mem, 'b', len);
    EXPECT_EQ(IBV_WC_SUCCESS, read_page(0)) << "after fork";
    EXPECT_EQ('b', dst[0]);
    int st;
    waitpid(child, &st, 0);

    /* page 1 dropped (MADV_DONTNEED) and written again: another page */
    ASSERT_EQ(0, madvise(mem + page, page, MADV_DONTNEED));
    memset(mem + page, 'c', page);
    EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, read_page(page)) << "after DONTNEED";
    EXPECT_EQ(IBV_WC_SUCCESS, read_page(2 * page)) << "the other pages";

    /* unmapped, and other memory mapped at the same address */
    ASSERT_EQ(0, munmap(mem, len));
    ASSERT_EQ((void*)mem, mmap(mem, len, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS |
                               MAP_FIXED_NOREPLACE, -1, 0));
    memset(mem, 'd', len);
    memset(dst.data(), 0, page);
    EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, read_page(2 * page))
            << "a read through the old MR got the new pages' '"
            << (char)dst[0] << "'";
    /* as the local side too */
    struct ibv_qp *q = loop_qp();
    EXPECT_EQ(0, rdma(q, false, smr->rkey, (uintptr_t)src.data(),
                      {{(uintptr_t)mem, 64, mr->lkey}}));
    EXPECT_EQ(IBV_WC_LOC_PROT_ERR, poll().status);

    /* registered again: bound to the new pages */
    struct ibv_mr *again = ibv_reg_mr(pd, mem, len, RW);
    ASSERT_NE(nullptr, again);
    struct ibv_qp *q2 = loop_qp();
    EXPECT_EQ(0, rdma(q2, false, again->rkey, (uintptr_t)mem,
                      {{(uintptr_t)dst.data(), (uint32_t)page, dmr->lkey}}));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    EXPECT_EQ('d', dst[0]);
    ibv_dereg_mr(again);
    ibv_dereg_mr(mr);
    munmap(mem, len);
}

/* The model follows the release configure found, and that is the release
 * the tests run against (the loaded libmlx5.so.1's file name). */
TEST(test_verbs_model_release, rules_follow_installed_rdma_core)
{
    const release_facts *inst = installed_release();
    ASSERT_NE(nullptr, inst)
        << "rdma-core " << release_str(UMR_RDMA_CORE_MAJOR,
                                       UMR_RDMA_CORE_MINOR)
        << " is not a release the model was checked against";

    model_set_rules(model_rules_for(44, 0));
    fake().reset();
    EXPECT_EQ(inst->major, model_get_rules().major);
    EXPECT_EQ(inst->minor, model_get_rules().minor);
    EXPECT_EQ(inst->list_length_64, model_get_rules().list_length_64);
    EXPECT_EQ(inst->inline_mkey_configure_only == 828u,
              model_get_rules().sq_overhead_mkey_configure);

    /* libmlx5.so.1 -> libmlx5.so.1.<abi>.<major>.<minor> */
    void *handle = dlopen("libmlx5.so.1", RTLD_LAZY | RTLD_LOCAL);
    ASSERT_NE(nullptr, handle) << dlerror();
    struct link_map *map = NULL;
    ASSERT_EQ(0, dlinfo(handle, RTLD_DI_LINKMAP, &map)) << dlerror();
    char *path = realpath(map->l_name, NULL);
    ASSERT_NE(nullptr, path) << map->l_name;
    const char *name = strrchr(path, '/');
    unsigned abi_major, abi_minor, major, minor;
    int n = sscanf((name != NULL) ? name + 1 : path, "libmlx5.so.%u.%u.%u.%u",
                   &abi_major, &abi_minor, &major, &minor);
    EXPECT_EQ(4, n) << path;
    EXPECT_EQ(release_str(inst->major, inst->minor),
              release_str(major, minor))
        << path << ": the tests run against another rdma-core than "
                   "configure found";
    free(path);
    dlclose(handle);
}

/* R22: the fake stands on these. Every symbol the tests wrap
 * (UMR_VERBS_FAKE_WRAP, engine_mlx5.am) is exported by the installed
 * libraries, and every builder the engine calls is inline (no symbol), so
 * it reaches the fake's function pointers. */
TEST(test_verbs_model_release, wrap_assumptions_hold)
{
    static const char *exported[] = {
        "ibv_get_device_list", "ibv_free_device_list", "ibv_get_device_name",
        "mlx5dv_is_supported", "mlx5dv_open_device", "ibv_close_device",
        "ibv_query_gid", "_ibv_query_gid_ex", "ibv_query_pkey",
        "ibv_get_async_event", "ibv_ack_async_event", "ibv_alloc_pd",
        "ibv_dealloc_pd", "ibv_reg_mr", "ibv_reg_mr_iova2", "ibv_dereg_mr",
        "mlx5dv_create_mkey", "mlx5dv_destroy_mkey", "ibv_destroy_cq",
        "mlx5dv_create_qp", "ibv_qp_to_qp_ex", "mlx5dv_qp_ex_from_ibv_qp_ex",
        "ibv_modify_qp", "ibv_destroy_qp", "ibv_create_ah", "ibv_destroy_ah",
        "mlx5dv_devx_general_cmd"
    };
    static const char *inlined[] = {
        "mlx5dv_wr_mr_interleaved", "mlx5dv_wr_mr_list", "ibv_wr_start",
        "ibv_wr_complete", "ibv_wr_abort", "ibv_wr_rdma_write",
        "ibv_wr_rdma_read", "ibv_wr_local_inv", "ibv_wr_set_sge_list",
        "ibv_start_poll", "ibv_next_poll", "ibv_end_poll",
        "ibv_wc_read_opcode", "ibv_wc_read_vendor_err", "ibv_create_cq_ex",
        "ibv_query_device_ex", "ibv_cq_ex_to_cq"
    };
    /* libmlx5 needs libibverbs: its handle finds the symbols of both */
    void *handle = dlopen("libmlx5.so.1", RTLD_LAZY | RTLD_LOCAL);
    ASSERT_NE(nullptr, handle) << dlerror();
    for (const char *sym : exported) {
        EXPECT_NE(nullptr, dlsym(handle, sym)) << sym << " is not exported";
    }
    for (const char *sym : inlined) {
        EXPECT_EQ(nullptr, dlsym(handle, sym))
            << sym << " is a library function: the fake would not see it";
    }
    dlclose(handle);
}

TEST_F(test_verbs_model, wqe_over_1k_einval)
{
    auto a = qp_attr(16, 1, 829);       /* 192 + 848 > 1024 */
    errno = 0;
    EXPECT_EQ(nullptr, create(a));
    EXPECT_EQ(EINVAL, errno);
    a = qp_attr(16, 53, 0);             /* (1024 - 192) / 16 = 52 SGEs */
    EXPECT_EQ(nullptr, create(a));
    EXPECT_EQ(EINVAL, errno);
    a = qp_attr(16, 52, 0);
    EXPECT_NE(nullptr, create(a));
}

TEST_F(test_verbs_model, sq_in_basic_blocks)
{
    /* R4: 1 KiB WQEs are 16 blocks; max_qp_wr 32768 blocks -> 2048 */
    auto a = qp_attr(2048, 1, 828);
    EXPECT_NE(nullptr, create(a));
    a = qp_attr(2049, 1, 828);
    errno = 0;
    EXPECT_EQ(nullptr, create(a));
    EXPECT_EQ(EINVAL, errno);
    /* the roundup: 1500 WRs -> 2 MiB -> 32768 blocks, max_post 2048 */
    a = qp_attr(1500, 1, 828);
    ASSERT_NE(nullptr, create(a));
    EXPECT_EQ(2048u, a.cap.max_send_wr);
}

/* R31: no mlx5 send operations, no UMR builders (rdma-core: NULL, a crash
 * in mlx5dv_wr_mr_*; the model: a message and abort()). The RC builders,
 * wr_local_inv included, exist regardless; RDMA works. And R1-R4 size such
 * a QP for RDMA WQEs: with the RDMA operations alone, 256 WRs of 4 SGEs
 * take 32 KiB; LOCAL_INV alone brings the UMR segments back (64 KiB). */
TEST_F(test_verbs_model, no_umr_builders_without_mlx5_send_ops)
{
    const uint64_t rdma_ops = IBV_QP_EX_WITH_RDMA_WRITE |
                              IBV_QP_EX_WITH_RDMA_READ;
    auto a = qp_attr(256, 4, 0, rdma_ops);
    struct ibv_qp *qp = create(a, 0);
    ASSERT_NE(nullptr, qp);
    /* ctrl 16 + raddr 16 + 4 x 16 = 96 -> 128 B; 256 x 128 = 32 KiB */
    EXPECT_EQ(32768u, fake().qp_sq_bytes.back());
    EXPECT_EQ(256u, a.cap.max_send_wr);
    EXPECT_EQ(128u - 32 - 4, a.cap.max_inline_data) << "R3";
    auto b = qp_attr(256, 4, 0, rdma_ops | IBV_QP_EX_WITH_LOCAL_INV);
    ASSERT_NE(nullptr, create(b, 0));
    /* 192 + 64 = 256 B WQEs: 64 KiB */
    EXPECT_EQ(65536u, fake().qp_sq_bytes.back());

    struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
    EXPECT_NE(nullptr, (void*)qpx->wr_local_inv) << "RC builders: all";
    EXPECT_NE(nullptr, (void*)qpx->wr_rdma_write);

    ASSERT_EQ(0, modify(qp, IBV_QPS_INIT));
    ASSERT_EQ(0, modify(qp, IBV_QPS_RTR, qp->qp_num));
    ASSERT_EQ(0, modify(qp, IBV_QPS_RTS));
    struct ibv_mr *smr = reg(src), *dmr = reg(dst);
    struct mlx5dv_mkey *m = mkey(4);
    ASSERT_NE(nullptr, m);
    EXPECT_DEATH(umr_list(qp, m, {{(uintptr_t)src.data(), 8, smr->lkey}}),
                 "mlx5dv_wr_mr_list on a QP created without mlx5 send "
                 "operations");
    EXPECT_DEATH(umr_ilv(qp, m, 1, {{(uintptr_t)src.data(), 8, 8,
                                     smr->lkey}}),
                 "mlx5dv_wr_mr_interleaved on a QP created without mlx5 "
                 "send operations");
    /* the same QP moves data */
    EXPECT_EQ(0, rdma(qp, true, dmr->rkey, (uintptr_t)dst.data(),
                      {{(uintptr_t)src.data(), 64, smr->lkey}}));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    EXPECT_EQ(0, memcmp(src.data(), dst.data(), 64));
}

/* ---- addressing, the fabric, async events (R24-R30) ------------------- */

/* One end of a connection: a simulated host with its port. */
struct side {
    uint32_t  host;
    fake_port port;
    uint32_t  fabric;
    uint32_t  subnet = 0;
};

side ib_side(uint32_t host, uint16_t lid, enum ibv_mtu mtu = IBV_MTU_4096)
{
    return {host, fake_ib_port(lid, mtu), 0};
}

/* How one end connects (defaults: what a correct connection sets). */
struct conn {
    int      dlid       = -1;   /* -1: the peer's LID */
    int      sgid_index = -1;   /* RoCE: -1 the last GID; IB: no GRH */
    int      dgid_index = -1;   /* -1: the peer's sgid_index entry */
    bool     grh        = true; /* RoCE only */
    int      mtu        = -1;   /* -1: the smaller active MTU */
    uint16_t pkey_index = 0;
    uint8_t  timeout    = 14;
    uint8_t  retry_cnt  = 7;
    uint8_t  rd_atomic  = 16;   /* max_rd_atomic */
    uint8_t  dest_rd    = 16;   /* max_dest_rd_atomic */
};

class test_verbs_model_fabric : public test_verbs_model {
protected:
    void use(const side &s)
    {
        fake().host   = s.host;
        fake().fabric = s.fabric;
        fake().subnet = s.subnet;
        fake().ports  = {s.port};
    }

    struct ibv_qp *qp_on(const side &s)
    {
        use(s);
        auto a = qp_attr(64, 4, 828);
        return create(a);
    }

    static int last_gid(const side &s)
    {
        return (int)s.port.gids.size() - 1;
    }

    /* INIT, RTR, RTS of `qp` (on `me`) to `dest` (on `peer`) */
    int connect(struct ibv_qp *qp, const side &me, const side &peer,
                uint32_t dest, const conn &c = conn())
    {
        bool roce = (me.port.attr.link_layer == IBV_LINK_LAYER_ETHERNET);
        struct ibv_qp_attr attr = {};
        int ret;

        use(me);
        attr.qp_state        = IBV_QPS_INIT;
        attr.port_num        = 1;
        attr.pkey_index      = c.pkey_index;
        attr.qp_access_flags = RW;
        ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
                                       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
        if (ret) {
            return ret;
        }

        memset(&attr, 0, sizeof(attr));
        attr.qp_state           = IBV_QPS_RTR;
        attr.dest_qp_num        = dest;
        attr.path_mtu           = (c.mtu >= 0) ? (enum ibv_mtu)c.mtu :
                                  std::min(me.port.attr.active_mtu,
                                           peer.port.attr.active_mtu);
        attr.max_dest_rd_atomic = c.dest_rd;
        attr.min_rnr_timer      = 12;
        attr.ah_attr.port_num   = 1;
        attr.ah_attr.dlid       = (c.dlid >= 0) ? c.dlid : peer.port.attr.lid;
        if ((roce && c.grh) || (!roce && (c.sgid_index >= 0))) {
            int sgid = (c.sgid_index >= 0) ? c.sgid_index : last_gid(me);
            int dgid = (c.dgid_index >= 0) ? c.dgid_index :
                       std::min(sgid, last_gid(peer));
            attr.ah_attr.is_global      = 1;
            attr.ah_attr.grh.sgid_index = sgid;
            attr.ah_attr.grh.hop_limit  = 64;
            attr.ah_attr.grh.dgid       = peer.port.gids[dgid].gid;
        }
        ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
                                       IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                       IBV_QP_RQ_PSN |
                                       IBV_QP_MAX_DEST_RD_ATOMIC |
                                       IBV_QP_MIN_RNR_TIMER);
        if (ret) {
            return ret;
        }

        memset(&attr, 0, sizeof(attr));
        attr.qp_state      = IBV_QPS_RTS;
        attr.timeout       = c.timeout;
        attr.retry_cnt     = c.retry_cnt;
        attr.rnr_retry     = 7;
        attr.max_rd_atomic = c.rd_atomic;
        return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT |
                                        IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                        IBV_QP_SQ_PSN |
                                        IBV_QP_MAX_QP_RD_ATOMIC);
    }

    /* a QP on a and one on b, connected both ways (ca on a, cb on b) */
    std::pair<struct ibv_qp*, struct ibv_qp*>
    pair(const side &a, const side &b, const conn &ca = conn(),
         const conn &cb = conn())
    {
        struct ibv_qp *qa = qp_on(a), *qb = qp_on(b);
        EXPECT_NE(nullptr, qa);
        EXPECT_NE(nullptr, qb);
        EXPECT_EQ(0, connect(qa, a, b, qb->qp_num, ca));
        EXPECT_EQ(0, connect(qb, b, a, qa->qp_num, cb));
        return {qa, qb};
    }

    /* a write of 64 B from qp into dst; the completion's status (-1: none
     * within `seconds`) */
    int write_status(struct ibv_qp *qp, double seconds = 5)
    {
        struct ibv_mr *smr = reg(src), *dmr = reg(dst);
        EXPECT_EQ(0, rdma(qp, true, dmr->rkey, (uintptr_t)dst.data(),
                          {{(uintptr_t)src.data(), 64, smr->lkey}}));
        return poll_for(seconds).status;
    }

    /* `seconds` scaled (umr_test_time.h), as the model's retry budgets */
    wc poll_for(double seconds)
    {
        double end = now() + umr_test::scaled(seconds);
        wc w;
        do {
            w = poll();
        } while ((w.status < 0) && (now() < end));
        return w;
    }

    static double now()
    {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec * 1e-9;
    }

    /* the next async event of the fixture's context; -1 if none */
    int next_event(struct ibv_async_event *ev)
    {
        int flags = fcntl(ctx->async_fd, F_GETFL);
        fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK);
        return ibv_get_async_event(ctx, ev);
    }
};

/* R24 */
TEST_F(test_verbs_model_fabric, modify_qp_required_attrs)
{
    auto a = qp_attr(16, 1, 828);
    struct ibv_qp *qp = create(a);
    struct ibv_qp_attr attr = {};

    attr.qp_state = IBV_QPS_INIT;
    attr.port_num = 1;
    EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PORT))
            << "INIT without PKEY_INDEX and ACCESS_FLAGS";
    attr.pkey_index = 1;
    EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PORT |
                                               IBV_QP_PKEY_INDEX |
                                               IBV_QP_ACCESS_FLAGS))
            << "pkey_index 1 of a table of 1";
    attr.pkey_index = 0;
    EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PORT |
                                               IBV_QP_PKEY_INDEX |
                                               IBV_QP_ACCESS_FLAGS |
                                               IBV_QP_TIMEOUT))
            << "an attribute INIT does not take";
    EXPECT_EQ(0, modify(qp, IBV_QPS_INIT));

    memset(&attr, 0, sizeof(attr));
    attr.qp_state    = IBV_QPS_RTR;
    attr.dest_qp_num = qp->qp_num;
    EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, IBV_QP_STATE |
                                               IBV_QP_DEST_QPN))
            << "RTR without AV, PATH_MTU, RQ_PSN, MAX_DEST_RD_ATOMIC, "
               "MIN_RNR_TIMER";
    EXPECT_EQ(0, modify(qp, IBV_QPS_RTR, qp->qp_num));
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTS;
    EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT))
            << "RTS without RETRY_CNT, RNR_RETRY, SQ_PSN, MAX_QP_RD_ATOMIC";
    EXPECT_EQ(0, modify(qp, IBV_QPS_RTS));
    attr.qp_state = IBV_QPS_ERR;
    EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT));
    EXPECT_EQ(0, ibv_modify_qp(qp, &attr, IBV_QP_STATE));
}

/* R25 */
TEST_F(test_verbs_model_fabric, roce_needs_grh)
{
    side a = {0, fake_roce_host_port(0, IBV_MTU_1024, true, true, true), 0};
    side b = {1, fake_roce_host_port(1, IBV_MTU_1024, true, true, true), 0};
    struct ibv_qp *qa = qp_on(a), *qb = qp_on(b);
    conn no_grh, bad_index;

    no_grh.grh = false;
    EXPECT_EQ(EINVAL, connect(qa, a, b, qb->qp_num, no_grh));
    bad_index.sgid_index = 9;
    bad_index.dgid_index = 0;
    struct ibv_qp *qc = qp_on(a);
    EXPECT_EQ(EINVAL, connect(qc, a, b, qb->qp_num, bad_index));
    struct ibv_qp *qd = qp_on(a);
    EXPECT_EQ(0, connect(qd, a, b, qb->qp_num));
}

/* R33: ibv_create_ah on RoCE wants a GRH from a GID entry that exists,
 * is not empty and has a route; on IB anything goes. */
TEST_F(test_verbs_model_fabric, create_ah_rules)
{
    fake().ports = {fake_roce_host_port(0, IBV_MTU_1024, true, true, true)};
    fake().ports[0].dead_gids = {3};
    struct ibv_ah_attr attr = {};
    attr.port_num       = 1;
    attr.is_global      = 1;
    attr.grh.sgid_index = 1;
    attr.grh.dgid       = fake().ports[0].gids[1].gid;
    struct ibv_ah *ah   = ibv_create_ah(pd, &attr);
    ASSERT_NE(nullptr, ah);
    EXPECT_EQ(0, ibv_destroy_ah(ah));
    attr.grh.sgid_index = 9;
    EXPECT_EQ(nullptr, ibv_create_ah(pd, &attr));
    EXPECT_EQ(EINVAL, errno);
    attr.grh.sgid_index = 3;
    EXPECT_EQ(nullptr, ibv_create_ah(pd, &attr));
    EXPECT_EQ(EADDRNOTAVAIL, errno);
    attr.grh.sgid_index = 1;
    attr.is_global      = 0;
    EXPECT_EQ(nullptr, ibv_create_ah(pd, &attr));
    EXPECT_EQ(EINVAL, errno);
    fake().ports = {fake_ib_port(7, IBV_MTU_4096)};
    ah = ibv_create_ah(pd, &attr);
    ASSERT_NE(nullptr, ah);
    EXPECT_EQ(0, ibv_destroy_ah(ah));
}

/* R26, R33: a link-local GID reaches a peer of its own subnet only; the
 * global GIDs reach across subnets. */
TEST_F(test_verbs_model_fabric, link_local_stays_on_its_subnet)
{
    conn fast, ll, global;
    fast.timeout     = 4;
    fast.retry_cnt   = 1;
    ll               = fast;
    ll.sgid_index    = 1;      /* fe80 v2 */
    global           = fast;
    global.sgid_index = 3;     /* 2001:db8:N:: v2 */
    side a = {0, fake_roce_host_port(0, IBV_MTU_1024, true, true, false, 1),
              0, 1};
    side b = {1, fake_roce_host_port(1, IBV_MTU_1024, true, true, false, 2),
              0, 2};
    side c = {2, fake_roce_host_port(2, IBV_MTU_1024, true, true, false, 1),
              0, 1};
    struct ibv_qp *qa, *qb;

    std::tie(qa, qb) = pair(a, b, ll, ll);
    EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, write_status(qa)) << "link-local, "
                                                         "two subnets";
    std::tie(qa, qb) = pair(a, b, global, global);
    EXPECT_EQ(IBV_WC_SUCCESS, write_status(qa)) << "global, two subnets";
    std::tie(qa, qb) = pair(a, c, ll, ll);
    EXPECT_EQ(IBV_WC_SUCCESS, write_status(qa)) << "link-local, one subnet";
}

/* R26: each broken piece of a path: the write retries for the budget, then
 * RETRY_EXC; a working path moves the bytes. */
TEST_F(test_verbs_model_fabric, path_checks)
{
    conn fast;               /* 4.096 us * 2^4 * 2 = 131 us */
    fast.timeout   = 4;
    fast.retry_cnt = 1;

    struct ibv_qp *qa, *qb;
    std::tie(qa, qb) = pair(ib_side(0, 7), ib_side(1, 8), fast, fast);
    EXPECT_EQ(IBV_WC_SUCCESS, write_status(qa)) << "IB, right LIDs";
    EXPECT_EQ(0, memcmp(dst.data(), src.data(), 64));

    struct {
        const char *what;
        side a, b;
        conn ca, cb;
    } broken[] = {
        {"a dlid that is not the peer's", ib_side(0, 7), ib_side(1, 8),
         fast, fast},
        {"pkeys of two partitions", ib_side(0, 7), ib_side(1, 8), fast, fast},
        {"pkeys, neither a full member", ib_side(0, 7), ib_side(1, 8), fast,
         fast},
        {"path_mtu above the peer's port", ib_side(0, 7, IBV_MTU_4096),
         ib_side(1, 8, IBV_MTU_2048), fast, fast},
        {"another fabric", ib_side(0, 7), ib_side(1, 8), fast, fast},
        {"RoCE v2 to RoCE v1",
         {0, fake_roce_host_port(0, IBV_MTU_1024, false, true, true), 0},
         {1, fake_roce_host_port(1, IBV_MTU_1024, true, false, false), 0},
         fast, fast},
        {"RoCE, a dgid that is not the peer's sgid",
         {0, fake_roce_host_port(0, IBV_MTU_1024, true, true, true), 0},
         {1, fake_roce_host_port(1, IBV_MTU_1024, true, true, true), 0},
         fast, fast},
    };
    broken[0].ca.dlid = 9;
    broken[1].b.port.pkeys = {htons(0x8001)};
    broken[2].a.port.pkeys = {htons(0x0001)};
    broken[2].b.port.pkeys = {htons(0x0001)};
    broken[3].ca.mtu = IBV_MTU_4096;
    broken[4].b.fabric = 1;
    broken[6].ca.dgid_index = 0;     /* the peer's v1 link-local GID */

    for (auto &t : broken) {
        SCOPED_TRACE(t.what);
        std::tie(qa, qb) = pair(t.a, t.b, t.ca, t.cb);
        double start = now();
        EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, write_status(qa));
        EXPECT_GE(now() - start, 4.096e-6 * 16 * 2);
        EXPECT_EQ(IBV_QPS_ERR, model_qp_state(qa->qp_num));
    }
}

/* R26: the budget is 4.096 us * 2^timeout * (retry_cnt + 1); a link that is
 * down for less than that loses nothing. */
TEST_F(test_verbs_model_fabric, retry_budget)
{
    conn c;                  /* 4.096 us * 2^13 * 4 = 134 ms */
    c.timeout   = 13;
    c.retry_cnt = 3;
    struct ibv_qp *qa, *qb;

    std::tie(qa, qb) = pair(ib_side(0, 7), ib_side(1, 8), c, c);
    model_host_set_link(1, false);
    double start = now();
    EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, write_status(qa));
    EXPECT_GE(now() - start, 0.134);
    EXPECT_LT(now() - start, umr_test::scaled(5.0));
    model_host_set_link(1, true);

    /* down for 30 ms: the retries carry the write over it. (A budget of
     * 4.3 s, not 134 ms: the test's own 30 ms may stretch on a busy
     * machine, and would then outlast a small budget.) */
    conn slow;               /* 4.096 us * 2^18 * 4 = 4.3 s */
    slow.timeout   = 18;
    slow.retry_cnt = 3;
    std::tie(qa, qb) = pair(ib_side(0, 7), ib_side(1, 8), slow, slow);
    struct ibv_mr *smr = reg(src), *dmr = reg(dst);
    model_host_set_link(1, false);
    ASSERT_EQ(0, rdma(qa, true, dmr->rkey, (uintptr_t)dst.data(),
                      {{(uintptr_t)src.data(), 64, smr->lkey}}));
    EXPECT_EQ(-1, poll_for(0.03).status);
    model_host_set_link(1, true);
    EXPECT_EQ(IBV_WC_SUCCESS, poll_for(5).status);
}

/* R27 */
TEST_F(test_verbs_model_fabric, read_depth)
{
    struct ibv_mr *smr = reg(src), *dmr = reg(dst);
    conn deep, shallow, one;
    deep.rd_atomic    = 4;    /* the requester would send 4 reads */
    shallow.dest_rd   = 1;    /* the responder holds 1 */
    one.rd_atomic     = 1;
    struct ibv_qp *qa, *qb;

    for (bool fits : {false, true}) {
        SCOPED_TRACE(fits ? "max_rd_atomic 1" : "max_rd_atomic 4");
        std::tie(qa, qb) = pair(ib_side(0, 7), ib_side(1, 8),
                                fits ? one : deep, shallow);
        for (int i = 0; i < 3; ++i) {
            ASSERT_EQ(0, rdma(qa, false, smr->rkey,
                              (uintptr_t)src.data() + 64 * i,
                              {{(uintptr_t)dst.data() + 64 * i, 64,
                                dmr->lkey}}, i));
        }
        wc w = poll_for(5);
        EXPECT_EQ(IBV_WC_SUCCESS, w.status) << "the first read";
        w = poll_for(5);
        EXPECT_EQ(fits ? IBV_WC_SUCCESS : IBV_WC_REM_INV_REQ_ERR, w.status);
        while (poll_for(0.01).status >= 0) {
        }
    }
}

/* R28, R29: a remote access error fails the responder's QP too and tells
 * its owner. */
TEST_F(test_verbs_model_fabric, responder_access_error)
{
    struct ibv_mr *smr = reg(src), *ro = reg(dst, IBV_ACCESS_LOCAL_WRITE);
    struct ibv_async_event ev;
    struct ibv_qp *qa, *qb;

    std::tie(qa, qb) = pair(ib_side(0, 7), ib_side(0, 7));
    EXPECT_EQ(-1, next_event(&ev));
    EXPECT_EQ(EAGAIN, errno);
    ASSERT_EQ(0, rdma(qa, true, ro->rkey, (uintptr_t)dst.data(),
                      {{(uintptr_t)src.data(), 64, smr->lkey}}));
    EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, poll_for(5).status);
    EXPECT_EQ(IBV_QPS_ERR, model_qp_state(qb->qp_num));
    ASSERT_EQ(0, next_event(&ev));
    EXPECT_EQ(IBV_EVENT_QP_ACCESS_ERR, ev.event_type);
    EXPECT_EQ(qb, ev.element.qp);
    ibv_ack_async_event(&ev);
    EXPECT_EQ(-1, next_event(&ev));
}

/* R29 */
TEST_F(test_verbs_model_fabric, async_events)
{
    struct ibv_port_attr pattr;
    struct ibv_async_event ev;

    ASSERT_EQ(0, ibv_query_port(ctx, 1, &pattr));
    EXPECT_EQ(IBV_PORT_ACTIVE, pattr.state);

    model_host_set_link(0, false);
    ASSERT_EQ(0, next_event(&ev));
    EXPECT_EQ(IBV_EVENT_PORT_ERR, ev.event_type);
    EXPECT_EQ(1, ev.element.port_num);
    ASSERT_EQ(0, ibv_query_port(ctx, 1, &pattr));
    EXPECT_EQ(IBV_PORT_DOWN, pattr.state);
    model_host_set_link(0, true);
    ASSERT_EQ(0, next_event(&ev));
    EXPECT_EQ(IBV_EVENT_PORT_ACTIVE, ev.event_type);

    model_host_set_lid(0, 99);
    ASSERT_EQ(0, next_event(&ev));
    EXPECT_EQ(IBV_EVENT_LID_CHANGE, ev.event_type);
    ASSERT_EQ(0, ibv_query_port(ctx, 1, &pattr));
    EXPECT_EQ(99, pattr.lid);

    struct ibv_qp *qp = loop_qp();
    model_qp_raise(qp->qp_num, IBV_EVENT_QP_FATAL);
    ASSERT_EQ(0, next_event(&ev));
    EXPECT_EQ(IBV_EVENT_QP_FATAL, ev.event_type);
    EXPECT_EQ(qp, ev.element.qp);
    EXPECT_EQ(-1, next_event(&ev));

    /* another host's events are not this context's */
    model_host_set_link(3, false);
    EXPECT_EQ(-1, next_event(&ev));
    model_host_set_link(3, true);
}

/* R32: each port event and what comes with it; events scheduled after a
 * number of RDMA work requests. */
TEST_F(test_verbs_model_fabric, port_events_and_their_effect)
{
    struct ibv_port_attr pattr, before;
    struct ibv_gid_entry entry;
    struct ibv_async_event ev;
    union ibv_gid gid0;

    ASSERT_EQ(0, ibv_query_port(ctx, 1, &before));
    ASSERT_EQ(0, ibv_query_gid(ctx, 1, 0, &gid0));
    for (enum ibv_event_type t : {IBV_EVENT_CLIENT_REREGISTER,
                                  IBV_EVENT_PKEY_CHANGE,
                                  IBV_EVENT_SM_CHANGE}) {
        model_host_raise(0, t);
        ASSERT_EQ(0, next_event(&ev));
        EXPECT_EQ(t, ev.event_type);
        EXPECT_EQ(1, ev.element.port_num);
        ASSERT_EQ(0, ibv_query_port(ctx, 1, &pattr));
        EXPECT_EQ(before.lid, pattr.lid) << "nothing changes with it";
        EXPECT_EQ(before.gid_tbl_len, pattr.gid_tbl_len);
    }

    /* GID_CHANGE adds entry gid_tbl_len: a global IPv6 RoCE v2 GID */
    model_host_raise(0, IBV_EVENT_GID_CHANGE, before.gid_tbl_len);
    ASSERT_EQ(0, next_event(&ev));
    EXPECT_EQ(IBV_EVENT_GID_CHANGE, ev.event_type);
    ASSERT_EQ(0, ibv_query_port(ctx, 1, &pattr));
    EXPECT_EQ(before.gid_tbl_len + 1, pattr.gid_tbl_len);
    ASSERT_EQ(0, ibv_query_gid_ex(ctx, 1, before.gid_tbl_len, &entry, 0));
    EXPECT_EQ(0x20, entry.gid.raw[0]);
    EXPECT_EQ(IBV_GID_TYPE_ROCE_V2, entry.gid_type);
    ASSERT_EQ(0, ibv_query_gid(ctx, 1, 0, &entry.gid));
    EXPECT_EQ(0, memcmp(&gid0, &entry.gid, sizeof(gid0))) << "GID 0 kept";

    model_host_raise(0, IBV_EVENT_LID_CHANGE);
    ASSERT_EQ(0, next_event(&ev));
    EXPECT_EQ(IBV_EVENT_LID_CHANGE, ev.event_type);
    ASSERT_EQ(0, ibv_query_port(ctx, 1, &pattr));
    EXPECT_NE(before.lid, pattr.lid);

    /* after 2 RDMA work requests: PORT_ERR, after 3: PORT_ACTIVE (the WRs
     * of another host count while this one's link is down) */
    ASSERT_EQ(0, model_host_events_after(0, {{IBV_EVENT_PORT_ERR, 2, 0},
                                             {IBV_EVENT_PORT_ACTIVE, 3, 0}}));
    EXPECT_EQ(-1, next_event(&ev));
    struct ibv_mr *smr = reg(src), *dmr = reg(dst);
    struct ibv_qp *qa, *qb, *qc, *qd;
    std::tie(qa, qb) = pair(ib_side(0, pattr.lid), ib_side(0, pattr.lid));
    std::tie(qc, qd) = pair(ib_side(1, 8), ib_side(1, 8));
    for (int i = 0; i < 2; ++i) {
        ASSERT_EQ(0, rdma(qa, true, dmr->rkey, (uintptr_t)dst.data(),
                          {{(uintptr_t)src.data(), 64, smr->lkey}}));
        EXPECT_EQ(IBV_WC_SUCCESS, poll_for(5).status);
    }
    EXPECT_FALSE(model_host_link_up(0));
    ASSERT_EQ(0, rdma(qc, true, dmr->rkey, (uintptr_t)dst.data(),
                      {{(uintptr_t)src.data(), 64, smr->lkey}}));
    EXPECT_EQ(IBV_WC_SUCCESS, poll_for(5).status);
    EXPECT_TRUE(model_host_link_up(0));
    ASSERT_EQ(0, next_event(&ev));
    EXPECT_EQ(IBV_EVENT_PORT_ERR, ev.event_type);
    ASSERT_EQ(0, next_event(&ev));
    EXPECT_EQ(IBV_EVENT_PORT_ACTIVE, ev.event_type);
    ASSERT_EQ(0, ibv_query_port(ctx, 1, &pattr));
    EXPECT_EQ(IBV_PORT_ACTIVE, pattr.state);
}

TEST_F(test_verbs_model_fabric, async_event_on_blocking_fd_aborts)
{
    struct ibv_async_event ev;

    EXPECT_DEATH(ibv_get_async_event(ctx, &ev), "would block for ever");
}

/* R30 */
TEST_F(test_verbs_model_fabric, small_max_sq_desc_sz)
{
    fake().max_sq_desc_sz = 512;
    auto a = qp_attr(16, 1, 828);
    errno = 0;
    EXPECT_EQ(nullptr, create(a));
    EXPECT_EQ(EINVAL, errno);
    a = qp_attr(16, 1, 316);           /* 192 + 320 = 512 */
    ASSERT_NE(nullptr, create(a));
    EXPECT_EQ(316u, a.cap.max_inline_data);
}

/* R23, man mlx5dv_wr_post: with check_free, only a free key takes a UMR */
TEST_F(test_verbs_model_fabric, check_free_needs_local_inv)
{
    struct ibv_qp *qp = loop_qp();
    struct ibv_mr *dmr = reg(dst);
    struct mlx5dv_mkey *m = mkey(4);

    fake().check_free = true;
    EXPECT_EQ(0, umr_list(qp, m, {{(uintptr_t)dst.data(), 16, dmr->lkey}}));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status) << "a new key is free";
    EXPECT_EQ(0, local_inv(qp, m->lkey));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    EXPECT_EQ(0, umr_list(qp, m, {{(uintptr_t)dst.data(), 16, dmr->lkey}}));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status) << "invalidated: free again";
    EXPECT_EQ(0, umr_list(qp, m, {{(uintptr_t)dst.data(), 32, dmr->lkey}}));
    EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, poll().status) << "configured, not free";
}

/* ---- the mlx5 engine's keys on the model (issue 10 finding 3) ---------- */

/* R34: the device's capabilities, as DEVX QUERY_HCA_CAP answers them, and
 * what the device does with them: an indirect key deeper than
 * max_indirection fails; a UMR fails where the device does not let a UMR
 * touch the atomic access (rdma-core's mask always has the bit); a UMR
 * behind work not executed yet overtakes it unless it carries the fence
 * umr_fence asks (small: rdma-core's small fence or IBV_SEND_FENCE;
 * strong: none that rdma-core can give). */
TEST_F(test_verbs_model, device_capabilities)
{
    uint32_t in[4] = {}, out[4 + 1024] = {};
    in[0] = htonl(0x100u << 16);            /* QUERY_HCA_CAP */
    in[1] = htonl(1);                       /* general, current */
    fake().hca.max_indirection = 3;
    fake().hca.umr_fence       = MODEL_FENCE_STRONG;
    ASSERT_EQ(0, mlx5dv_devx_general_cmd(ctx, in, sizeof(in), out,
                                         sizeof(out)));
    EXPECT_EQ(3u, ntohl(out[4 + 8]) >> 24) << "max_indirection 0x100/8";
    EXPECT_EQ(16u, ntohl(out[4 + 8]) & 0x3f) << "log_max_klm_list_size";
    EXPECT_EQ(0u, (ntohl(out[4 + 16]) >> 20) & 3) << "umr_fence strong";
    in[1] = htonl(2 << 1);                  /* another capability type */
    EXPECT_EQ(EOPNOTSUPP, mlx5dv_devx_general_cmd(ctx, in, sizeof(in), out,
                                                  sizeof(out)));

    /* depth: three levels of keys on a device that follows two */
    fake().hca = model_hca_defaults();
    fake().hca.max_indirection = 2;
    struct ibv_qp *qp = loop_qp();
    struct ibv_mr *smr = reg(src), *dmr = reg(dst);
    struct mlx5dv_mkey *k1 = mkey(4), *k2 = mkey(4), *k3 = mkey(4);
    EXPECT_EQ(0, umr_list(qp, k1, {{(uintptr_t)dst.data(), 64, dmr->lkey}}));
    EXPECT_EQ(0, umr_list(qp, k2, {{0, 64, k1->lkey}}));
    EXPECT_EQ(0, umr_list(qp, k3, {{0, 64, k2->lkey}}));
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
    }
    std::vector<struct ibv_sge> s = {{(uintptr_t)src.data(), 64, smr->lkey}};
    EXPECT_EQ(0, rdma(qp, true, k2->rkey, 0, s));
    EXPECT_EQ(IBV_WC_SUCCESS, poll().status) << "two levels";
    EXPECT_EQ(0, rdma(qp, true, k3->rkey, 0, s));
    EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, poll().status) << "three levels";

    /* a UMR where the device keeps atomic access out of UMR's reach */
    fake().hca.umr_modify_atomic_disabled = 1;
    qp = loop_qp();
    EXPECT_EQ(0, umr_list(qp, k1, {{(uintptr_t)dst.data(), 64, dmr->lkey}},
                          IBV_ACCESS_LOCAL_WRITE));
    EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, poll().status);
    fake().hca.umr_modify_atomic_disabled = 0;

    /* fences: a write through a key, then a UMR that moves the key's tag,
     * rung before the write executed */
    struct mlx5dv_mkey *kf = mkey(4, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT |
                                     MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG);
    ASSERT_NE(nullptr, kf);
    for (int fence : {MODEL_FENCE_NONE, MODEL_FENCE_SMALL,
                      MODEL_FENCE_STRONG}) {
        for (bool flag : {false, true}) {
            SCOPED_TRACE("umr_fence " + std::to_string(fence) +
                         (flag ? " IBV_SEND_FENCE" : ""));
            fake().hca.umr_fence = fence;
            qp = loop_qp();
            EXPECT_EQ(0, umr_list(qp, kf, {{(uintptr_t)dst.data(), 64,
                                            dmr->lkey}}));
            EXPECT_EQ(IBV_WC_SUCCESS, poll().status);
            EXPECT_EQ(0, rdma(qp, true, kf->rkey, 0, s));
            uint32_t next = (kf->lkey & ~0xffu) | ((kf->lkey + 1) & 0xffu);
            kf->lkey = kf->rkey = next;
            struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
            ibv_wr_start(qpx);
            qpx->wr_id    = 11;
            qpx->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED |
                            (flag ? IBV_SEND_FENCE : 0);
            mlx5dv_wr_mr_list(mlx5dv_qp_ex_from_ibv_qp_ex(qpx), kf, RW, 1,
                              &s[0]);
            ASSERT_EQ(0, ibv_wr_complete(qpx));
            bool waits = (fence == MODEL_FENCE_NONE) ||
                         ((fence == MODEL_FENCE_SMALL) && flag);
            EXPECT_EQ(waits ? IBV_WC_SUCCESS : IBV_WC_REM_ACCESS_ERR,
                      poll().status) << "the write";
            poll();
        }
    }
}

class test_engine_mlx5_model : public ::testing::Test {
protected:
    const umr_eng_ops_t *ops = &umr_eng_mlx5_ops;
    umr_eng_dev_t *dev = NULL;
    umr_eng_cq_t  *cq  = NULL;
    umr_eng_qp_t  *qp  = NULL;
    umr_eng_mr_t  *mr  = NULL;
    std::vector<uint8_t> buf = std::vector<uint8_t>(4096);

    void SetUp() override
    {
        fake().reset();
    }

    void open()
    {
        uint64_t daddr[8], qaddr[8];
        umr_eng_qp_params_t p = {};

        ASSERT_EQ(UCS_OK, ops->dev_open("mlx5_0", NULL, &dev));
        ASSERT_EQ(UCS_OK, ops->cq_create(dev, 64, &cq));
        p.sq_size = 16; p.max_sge = 4; p.umr_list_entries = 52;
        ASSERT_EQ(UCS_OK, ops->qp_create(dev, cq, &p, &qp));
        ops->dev_get_addr(dev, daddr);
        ops->qp_get_addr(qp, qaddr);
        ASSERT_EQ(UCS_OK, ops->qp_connect(qp, daddr, qaddr));
        ASSERT_EQ(UCS_OK, ops->mr_reg(dev, buf.data(), buf.size(),
                                      UMR_ENG_ACCESS_LOCAL_WRITE |
                                      UMR_ENG_ACCESS_REMOTE_WRITE |
                                      UMR_ENG_ACCESS_REMOTE_READ, &mr));
    }

    void TearDown() override
    {
        if (mr) ops->mr_dereg(dev, mr);
        if (qp) ops->qp_destroy(qp);
        if (cq) ops->cq_destroy(cq);
        if (dev) ops->dev_close(dev);
    }

    umr_eng_wc_status_t wait_one()
    {
        umr_eng_wc_t wc;
        for (int i = 0; i < 1000; ++i) {
            if (ops->cq_poll(cq, &wc, 1) == 1) {
                return wc.status;
            }
        }
        return UMR_ENG_WC_GENERAL_ERR;
    }

    ucs_status_t configure(umr_eng_mkey_t *m)
    {
        umr_eng_interleaved_t e = {(uintptr_t)buf.data(), 8, 8, mr->lkey};
        return ops->post_umr_interleaved(qp, m, UMR_ENG_ACCESS_REMOTE_WRITE |
                                         UMR_ENG_ACCESS_REMOTE_READ |
                                         UMR_ENG_ACCESS_LOCAL_WRITE, 4, 1, &e,
                                         1, UMR_ENG_WR_SIGNALED);
    }

    umr_eng_wc_status_t write_via(uint32_t rkey)
    {
        umr_eng_sge_t s = {(uintptr_t)buf.data() + 2048, 8, mr->lkey};
        EXPECT_EQ(UCS_OK, ops->post_rdma(qp, UMR_ENG_OP_RDMA_WRITE, &s, 1, 0,
                                         rkey, 2, UMR_ENG_WR_SIGNALED));
        return wait_one();
    }
};

TEST_F(test_engine_mlx5_model, key_tag_rotates_on_one_key)
{
    umr_eng_mkey_t *m;

    open();
    fake().mkey_attrs.clear();
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 52, &m));
    /* one hardware key, created with UPDATE_TAG (before: a ring of 8) */
    ASSERT_EQ(1u, fake().mkey_attrs.size());
    EXPECT_TRUE(fake().mkey_attrs[0].create_flags &
                MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG);

    ASSERT_EQ(UCS_OK, configure(m));
    ASSERT_EQ(UMR_ENG_WC_SUCCESS, wait_one());
    uint32_t first = m->rkey;
    EXPECT_EQ(UMR_ENG_WC_SUCCESS, write_via(first));

    ASSERT_EQ(UCS_OK, ops->post_local_inv(qp, m, 3, UMR_ENG_WR_SIGNALED));
    ASSERT_EQ(UMR_ENG_WC_SUCCESS, wait_one());
    ASSERT_EQ(UCS_OK, configure(m));
    ASSERT_EQ(UMR_ENG_WC_SUCCESS, wait_one());
    EXPECT_EQ(first >> 8, m->rkey >> 8) << "the same hardware key";
    EXPECT_EQ((first + 1) & 0xff, m->rkey & 0xff) << "the next tag";
    EXPECT_EQ(UMR_ENG_WC_SUCCESS, write_via(m->rkey));
    EXPECT_EQ(UMR_ENG_WC_REM_ACCESS_ERR, write_via(first))
            << "a stale remote key fails";
    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, m));
}

TEST_F(test_engine_mlx5_model, ring_without_kernel_update_tag)
{
    umr_eng_mkey_t *m;

    fake().update_tag_kernel = false;
    open();
    fake().mkey_attrs.clear();
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 52, &m));
    /* dev_open found no UPDATE_TAG support: the ring, no new attempt */
    ASSERT_EQ((size_t)UMR_ENG_MLX5_MKEY_RING, fake().mkey_attrs.size());
    for (const auto &a : fake().mkey_attrs) {
        EXPECT_FALSE(a.create_flags & MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG);
    }
    ASSERT_EQ(UCS_OK, configure(m));
    ASSERT_EQ(UMR_ENG_WC_SUCCESS, wait_one());
    uint32_t first = m->rkey;
    ASSERT_EQ(UCS_OK, ops->post_local_inv(qp, m, 3, UMR_ENG_WR_SIGNALED));
    ASSERT_EQ(UMR_ENG_WC_SUCCESS, wait_one());
    ASSERT_EQ(UCS_OK, configure(m));
    ASSERT_EQ(UMR_ENG_WC_SUCCESS, wait_one());
    EXPECT_NE(first, m->rkey);
    EXPECT_EQ(UMR_ENG_WC_SUCCESS, write_via(m->rkey));
    EXPECT_EQ(UMR_ENG_WC_REM_ACCESS_ERR, write_via(first));
    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, m));
}

/* caps.max_mkeys counts engine mkeys of the mode in use: with UPDATE_TAG
 * one hardware key each (max_mr of them), without it a ring each. The
 * probe at dev_open leaves no key behind, and the keys created afterwards
 * are what max_mkeys promised. */
TEST_F(test_engine_mlx5_model, max_mkeys_follows_update_tag_mode)
{
    static const uint32_t max_mr = 1u << 20;

    for (bool kernel : {true, false}) {
        SCOPED_TRACE(kernel ? "kernel with UPDATE_TAG" :
                              "kernel without UPDATE_TAG");
        umr_eng_caps_t caps;
        umr_eng_mkey_t *m;

        fake().reset();
        fake().update_tag_kernel          = kernel;
        fake().dev_attr.orig_attr.max_mr = max_mr;
        open();
        ASSERT_EQ(0, fake().num_mkey) << "the probe's key is destroyed";
        ops->dev_query(dev, &caps);
        EXPECT_EQ(kernel ? max_mr : max_mr / UMR_ENG_MLX5_MKEY_RING,
                  caps.max_mkeys);

        fake().mkey_attrs.clear();
        ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 8, &m));
        EXPECT_EQ(kernel ? 1 : (int)UMR_ENG_MLX5_MKEY_RING, fake().num_mkey);
        EXPECT_EQ((size_t)fake().num_mkey, fake().mkey_attrs.size())
                << "no refused attempt after the probe";
        EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, m));
        TearDown();
        mr = NULL; qp = NULL; cq = NULL; dev = NULL;
        EXPECT_EQ(0, fake().live_objects());
    }
}

/* Finding 5 of issue 19: the UMR entries are the device's. dev_open finds
 * the largest WQE the device takes (R30: max_sq_desc_sz) and derives the
 * entries, the SGEs and the send queue depth from it; the probe's QPs and CQ
 * are gone afterwards. */
TEST_F(test_engine_mlx5_model, limits_from_max_sq_desc_sz)
{
    struct {
        uint32_t desc_sz, list, sge, qp_wr;
    } devs[] = {
        {1024, 52, 30, 32768 / 16},
        {512, 20, 20, 32768 / 8},
        {2048, 52, 30, 32768 / 16},   /* never more than a 1 KiB WQE */
    };
    for (auto &d : devs) {
        SCOPED_TRACE("max_sq_desc_sz " + std::to_string(d.desc_sz));
        umr_eng_caps_t caps;
        fake().reset();
        fake().max_sq_desc_sz = d.desc_sz;
        ASSERT_EQ(UCS_OK, ops->dev_open("mlx5_0", NULL, &dev));
        EXPECT_EQ(0, fake().num_qp);
        EXPECT_EQ(0, fake().num_cq);
        ops->dev_query(dev, &caps);
        EXPECT_EQ(d.list, caps.max_list);
        EXPECT_EQ(d.list - 1, caps.max_interleaved);
        EXPECT_EQ(d.sge, caps.max_sge);
        EXPECT_EQ(d.qp_wr, caps.max_qp_wr);
        umr_eng_qp_params_t p = {};
        p.sq_size = caps.max_qp_wr; p.max_sge = caps.max_sge;
        p.umr_list_entries = caps.max_list;
        ASSERT_EQ(UCS_OK, ops->cq_create(dev, 64, &cq));
        ASSERT_EQ(UCS_OK, ops->qp_create(dev, cq, &p, &qp))
                << "a QP of the device's limits is created";
        ops->qp_destroy(qp);
        ops->cq_destroy(cq);
        ops->dev_close(dev);
        qp = NULL; cq = NULL; dev = NULL;
        EXPECT_EQ(0, fake().live_objects());
    }
}

/* Issue 19 finding 8: an RDMA-only QP (umr_eng_qp_params_t rdma_only).
 * The engine asks rdma-core for the RDMA send operations alone, no inline
 * room and no mlx5 send operations, so the model (R1-R4) gives it a queue
 * of RDMA WQEs; qp_sq_bytes and the QP's own figure (from what the provider
 * wrote back) are the model's, with and without UMR and on a device of
 * 512 B WQEs. A UMR or LOCAL_INV on it is refused with UCS_ERR_UNSUPPORTED
 * before rdma-core (whose UMR builders are NULL there, R31: the model
 * would abort the test); RDMA through it works. */
TEST_F(test_engine_mlx5_model, rdma_only_qp)
{
    uint64_t daddr[8], qaddr[8];

    open();
    umr_eng_caps_t caps;
    ops->dev_query(dev, &caps);
    struct { unsigned sq, sge, list; int rdma_only; uint64_t bytes; } cases[] = {
        {256, 4, 0, 1, 32768},         /* (32 + 4 x 16 -> 128) x 256 */
        {64, 4, 0, 1, 8192},           /* 128 x 64 */
        {256, 30, 0, 1, 131072},       /* (32 + 480 = 512) x 256 */
        {256, 30, 52, 0, 262144},      /* 1 KiB UMR WQEs x 256 */
        {100, 1, 20, 0, 65536},        /* 192 + 320 = 512 B x 100 -> 2^16 */
    };
    for (auto &c : cases) {
        SCOPED_TRACE("sq " + std::to_string(c.sq) + " sge " +
                     std::to_string(c.sge) + (c.rdma_only ? " RDMA only" :
                     " UMR " + std::to_string(c.list)));
        umr_eng_qp_params_t p = {};
        umr_eng_qp_t *q;
        p.sq_size = c.sq; p.max_sge = c.sge; p.umr_list_entries = c.list;
        p.rdma_only = c.rdma_only;
        ASSERT_EQ(UCS_OK, ops->qp_create(dev, cq, &p, &q));
        EXPECT_EQ(c.bytes, fake().qp_sq_bytes.back()) << "the model's";
        EXPECT_EQ(c.bytes, ops->qp_sq_bytes(dev, &p)) << "the engine's";
        EXPECT_EQ(c.bytes, ((umr_eng_mlx5_qp_t*)q)->sq_bytes)
                << "from what the provider wrote back";
        const struct ibv_qp_init_attr_ex &qa = fake().qp_attrs.back();
        const struct mlx5dv_qp_init_attr &dv = fake().dv_qp_attrs.back();
        if (c.rdma_only) {
            EXPECT_EQ(0u, qa.cap.max_inline_data);
            EXPECT_EQ(0u, qa.send_ops_flags & IBV_QP_EX_WITH_LOCAL_INV);
            EXPECT_EQ(0u, dv.comp_mask &
                          MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS);
        }
        ops->qp_destroy(q);
    }
    umr_eng_qp_params_t bad = {};
    bad.sq_size = 256; bad.max_sge = caps.max_sge + 1; bad.rdma_only = 1;
    EXPECT_EQ(0u, ops->qp_sq_bytes(dev, &bad));
    bad.max_sge = 4; bad.sq_size = caps.max_qp_wr + 1;
    EXPECT_EQ(0u, ops->qp_sq_bytes(dev, &bad));

    /* the data path of an RDMA-only QP connected to itself */
    umr_eng_qp_params_t p = {};
    umr_eng_qp_t *q;
    umr_eng_mkey_t *m;
    p.sq_size = 16; p.max_sge = 4; p.rdma_only = 1;
    ASSERT_EQ(UCS_OK, ops->qp_create(dev, cq, &p, &q));
    ops->dev_get_addr(dev, daddr);
    ops->qp_get_addr(q, qaddr);
    ASSERT_EQ(UCS_OK, ops->qp_connect(q, daddr, qaddr));
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 8, &m));
    size_t calls = fake().calls.size();
    umr_eng_interleaved_t e = {(uintptr_t)buf.data(), 8, 8, mr->lkey};
    umr_eng_sge_t l         = {(uintptr_t)buf.data(), 64, mr->lkey};
    EXPECT_EQ(UCS_ERR_UNSUPPORTED,
              ops->post_umr_interleaved(q, m, UMR_ENG_ACCESS_LOCAL_WRITE, 4,
                                        1, &e, 1, UMR_ENG_WR_SIGNALED));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED,
              ops->post_umr_list(q, m, UMR_ENG_ACCESS_LOCAL_WRITE, 1, &l, 2,
                                 UMR_ENG_WR_SIGNALED));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED,
              ops->post_local_inv(q, m, 3, UMR_ENG_WR_SIGNALED));
    EXPECT_EQ(calls, fake().calls.size()) << "nothing reached rdma-core";

    for (size_t i = 0; i < 256; ++i) {
        buf[i] = (uint8_t)(i * 3 + 1);
    }
    umr_eng_sge_t s[4];
    for (unsigned i = 0; i < 4; ++i) {
        s[i] = {(uintptr_t)buf.data() + 64 * i, 16, mr->lkey};
    }
    ASSERT_EQ(UCS_OK, ops->post_rdma(q, UMR_ENG_OP_RDMA_WRITE, s, 4,
                                     (uintptr_t)buf.data() + 2048, mr->rkey,
                                     4, UMR_ENG_WR_SIGNALED));
    umr_eng_wc_t wc = {};
    for (int i = 0; (i < 1000) && (ops->cq_poll(cq, &wc, 1) == 0); ++i) {
    }
    EXPECT_EQ(UMR_ENG_WC_SUCCESS, wc.status);
    for (unsigned i = 0; i < 64; ++i) {
        EXPECT_EQ(buf[64 * (i / 16) + i % 16], buf[2048 + i]) << i;
    }
    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, m));
    ops->qp_destroy(q);
}

/* The probe failing for another reason than EOPNOTSUPP: the device cannot
 * create indirect keys; dev_open fails and unwinds what it opened. */
TEST_F(test_engine_mlx5_model, update_tag_probe_failure_unwinds)
{
    fake().mkey_fail_at = 1;
    EXPECT_EQ(UCS_ERR_NO_MEMORY, ops->dev_open("mlx5_0", NULL, &dev));
    EXPECT_EQ(nullptr, dev);
    EXPECT_EQ(0, fake().live_objects());
}

/* Finding 5 of the ConnectX review: the device's capabilities bound the
 * engine's choices. Before, the nesting depth was 4 whatever the device
 * said, the entries of a key were not bounded by log_max_klm_list_size, and
 * nothing said a UMR needs waiting for. */
TEST_F(test_engine_mlx5_model, hca_caps_bound_the_choices)
{
    umr_eng_caps_t c;

    open();
    ops->dev_query(dev, &c);
    EXPECT_EQ(4u, c.max_depth);
    EXPECT_EQ(0u, c.umr_wait) << "umr_fence small: fenced, not waited for";
    TearDown();
    mr = NULL; qp = NULL; cq = NULL; dev = NULL;

    fake().hca.max_indirection       = 2;
    fake().hca.log_max_klm_list_size = 4;
    fake().hca.umr_fence             = MODEL_FENCE_STRONG;
    ASSERT_EQ(UCS_OK, ops->dev_open("mlx5_0", NULL, &dev));
    ops->dev_query(dev, &c);
    EXPECT_EQ(2u, c.max_depth) << "the device follows two levels";
    EXPECT_EQ(16u, c.max_list) << "2^4 descriptors a key";
    EXPECT_EQ(15u, c.max_interleaved);
    EXPECT_EQ(1u, c.umr_wait) << "rdma-core cannot fence a UMR strongly";
    ops->dev_close(dev);
    dev = NULL;

    /* no answer: what is safe anywhere */
    fake().hca            = model_hca_defaults();
    fake().hca.devx_errno = EPERM;
    ASSERT_EQ(UCS_OK, ops->dev_open("mlx5_0", NULL, &dev));
    ops->dev_query(dev, &c);
    EXPECT_EQ(1u, c.max_depth);
    EXPECT_EQ(1u, c.umr_wait);
    ops->dev_close(dev);
    dev = NULL;

    /* no indirect keys at all: no device for this transport */
    fake().hca                 = model_hca_defaults();
    fake().hca.max_indirection = 0;
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, ops->dev_open("mlx5_0", NULL, &dev));
    EXPECT_EQ(nullptr, dev);
    EXPECT_EQ(0, fake().live_objects());
}

/* Finding 5: a UMR posted behind work in flight on its QP carries the fence
 * the device asks (umr_fence small: IBV_SEND_FENCE, R34). Before, the UMR
 * that moves a key's tag overtook the write through the old key, which then
 * failed with a remote access error. */
TEST_F(test_engine_mlx5_model, umr_behind_work_is_fenced)
{
    umr_eng_mkey_t *m;

    open();
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 52, &m));
    ASSERT_EQ(UCS_OK, configure(m));
    ASSERT_EQ(UMR_ENG_WC_SUCCESS, wait_one());
    umr_eng_sge_t s = {(uintptr_t)buf.data() + 2048, 8, mr->lkey};
    ASSERT_EQ(UCS_OK, ops->post_rdma(qp, UMR_ENG_OP_RDMA_WRITE, &s, 1, 0,
                                     m->rkey, 2, UMR_ENG_WR_SIGNALED));
    ASSERT_EQ(UCS_OK, configure(m));
    EXPECT_EQ(UMR_ENG_WC_SUCCESS, wait_one()) << "the write, before the UMR";
    EXPECT_EQ(UMR_ENG_WC_SUCCESS, wait_one()) << "the UMR";
    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, m));
}

/* Finding 5: where a UMR may not touch the atomic access
 * (umr_modify_atomic_disabled) the engine does not ask it: refused before
 * rdma-core, nothing posted. */
TEST_F(test_engine_mlx5_model, umr_atomic_access_only_where_allowed)
{
    umr_eng_mkey_t *m;

    fake().hca.umr_modify_atomic_disabled = 1;
    open();
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 52, &m));
    umr_eng_interleaved_t e = {(uintptr_t)buf.data(), 8, 8, mr->lkey};
    size_t calls = fake().calls.size();
    EXPECT_EQ(UCS_ERR_UNSUPPORTED,
              ops->post_umr_interleaved(qp, m, UMR_ENG_ACCESS_REMOTE_ATOMIC,
                                        4, 1, &e, 1, UMR_ENG_WR_SIGNALED));
    EXPECT_EQ(calls, fake().calls.size()) << "nothing reached rdma-core";
    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, m));
}

} // namespace
