/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5 engine without a device: the engine is linked against the fake
 * rdma-core of test/common/umr_test_verbs_fake (-Wl,--wrap=...), and the
 * tests assert the exact arguments it hands to the verbs - creation
 * attributes, QP transitions, every ibv_wr_* / mlx5dv_wr_* call - plus what
 * it refuses before anything reaches the NIC and how it maps completions.
 */
#include "umr_config.h"
#include "engine_mlx5.h"
#include "engine_mlx5_compat.h"

#include "umr_test_verbs_fake.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <string.h>

#include <functional>
#include <vector>

using namespace umr_test;

namespace {

const unsigned SIGNALED_INLINE = IBV_SEND_INLINE | IBV_SEND_SIGNALED;

umr_eng_mlx5_qp_t *mqp(umr_eng_qp_t *qp)
{
    return (umr_eng_mlx5_qp_t*)qp;
}

umr_eng_mlx5_mkey_t *mmkey(umr_eng_mkey_t *mkey)
{
    return (umr_eng_mlx5_mkey_t*)mkey;
}

struct ibv_cq_ex *mcq(umr_eng_cq_t *cq)
{
    return ((umr_eng_mlx5_cq_t*)cq)->cq;
}

/* A port's speed beyond the 8-bit active_speed, where the headers have
 * active_speed_ex (rdma-core 49+: 56.1, 65.0); nothing on 44.0. */
#if UMR_ENG_MLX5_HAVE_SPEED_EX
void set_active_speed_ex(struct ibv_port_attr &attr, uint32_t speed)
{
    attr.active_speed_ex = speed;
}
#else
void set_active_speed_ex(struct ibv_port_attr &attr, uint32_t speed)
{
}
#endif

/* The engine posts the address of its slot as verbs wr_id. */
uint64_t user_wr_id(uint64_t verbs_wr_id)
{
    return ((umr_eng_mlx5_wr_t*)(uintptr_t)verbs_wr_id)->wr_id;
}

class test_engine_mlx5_wrap : public ::testing::Test {
protected:
    const umr_eng_ops_t *ops = &umr_eng_mlx5_ops;
    umr_eng_dev_t       *dev = NULL;
    umr_eng_cq_t        *cq  = NULL;
    umr_eng_qp_t        *qp  = NULL;
    umr_eng_mr_t        *mr  = NULL;
    std::vector<char>   buf;

    void SetUp() override
    {
        fake().reset();
        fake().model = false;   /* argument records only */
        /* no kernel MKEY_UPDATE_TAG: the ring of keys these tests check
         * (the rotating tag is tested on the model) */
        fake().update_tag_kernel = false;
        buf.resize(1 << 20);
    }

    void TearDown() override
    {
        if (mr != NULL) {
            EXPECT_EQ(UCS_OK, ops->mr_dereg(dev, mr));
        }
        if (qp != NULL) {
            ops->qp_destroy(qp);
        }
        if (cq != NULL) {
            ops->cq_destroy(cq);
        }
        if (dev != NULL) {
            ops->dev_close(dev);
        }
        EXPECT_EQ(0, fake().live_objects()) << "verbs objects leaked";
        EXPECT_EQ(0, fake().poll_misuse);
    }

    /* dev_open probes the largest UMR WQE with a CQ and QPs of its own
     * (destroyed again); the records start after it */
    void open_dev(const umr_eng_dev_params_t *params = NULL)
    {
        ASSERT_EQ(UCS_OK, ops->dev_open("mlx5_0", params, &dev));
        fake().qp_attrs.clear();
        fake().dv_qp_attrs.clear();
        fake().cq_attrs.clear();
        fake().modify_calls.clear();
    }

    ucs_status_t create_qp(unsigned sq_size = 16, unsigned max_sge = 4,
                           unsigned umr_entries = UMR_ENG_MLX5_MAX_LIST)
    {
        umr_eng_qp_params_t params = {};

        params.sq_size         = sq_size;
        params.max_sge         = max_sge;
        params.umr_list_entries = umr_entries;
        return ops->qp_create(dev, cq, &params, &qp);
    }

    /* open with params, a CQ and a QP (not connected) */
    void open_all_with(const umr_eng_dev_params_t *params)
    {
        open_dev(params);
        ASSERT_EQ(UCS_OK, ops->cq_create(dev, 16, &cq));
        ASSERT_EQ(UCS_OK, create_qp());
    }

    void close_all()
    {
        ops->qp_destroy(qp);
        ops->cq_destroy(cq);
        ops->dev_close(dev);
        qp  = NULL;
        cq  = NULL;
        dev = NULL;
    }

    /* open, CQ, QP connected to a peer, one MR over buf */
    void open_all(unsigned sq_size = 16, unsigned max_sge = 4)
    {
        umr_eng_mlx5_dev_addr_t raddr;
        umr_eng_mlx5_qp_addr_t rqp = {};

        open_dev();
        ASSERT_EQ(UCS_OK, ops->cq_create(dev, 64, &cq));
        ASSERT_EQ(UCS_OK, create_qp(sq_size, max_sge));
        ops->dev_get_addr(dev, &raddr);
        raddr.lid     = 9;
        rqp.qp_num    = 0x1234;
        rqp.mtu       = IBV_MTU_2048;
        rqp.rd_atomic = 16;
        ASSERT_EQ(UCS_OK, ops->qp_connect(qp, &raddr, &rqp));
        ASSERT_EQ(UCS_OK, ops->mr_reg(dev, buf.data(), buf.size(),
                                      UMR_ENG_ACCESS_LOCAL_WRITE |
                                      UMR_ENG_ACCESS_REMOTE_WRITE |
                                      UMR_ENG_ACCESS_REMOTE_READ, &mr));
        fake().calls.clear();
    }

    uint64_t base() const
    {
        return (uintptr_t)buf.data();
    }

    std::vector<umr_eng_interleaved_t> ilv(unsigned n, uint32_t count,
                                           uint32_t skip)
    {
        std::vector<umr_eng_interleaved_t> e(n);
        for (unsigned i = 0; i < n; ++i) {
            e[i].addr        = base() + i * 64;
            e[i].bytes_count = count;
            e[i].bytes_skip  = skip;
            e[i].lkey        = mr->lkey;
        }
        return e;
    }

    std::vector<umr_eng_sge_t> sges(unsigned n, uint32_t length)
    {
        std::vector<umr_eng_sge_t> s(n);
        for (unsigned i = 0; i < n; ++i) {
            s[i].addr   = base() + i * 2 * length;
            s[i].length = length;
            s[i].lkey   = mr->lkey;
        }
        return s;
    }

    /* Nothing reached the NIC, not even a wr_start. */
    void expect_nothing_posted(const char *what)
    {
        EXPECT_TRUE(fake().calls.empty())
            << what << ": " << fake().calls.size() << " verbs calls, first "
            << fake_wr_kind_str(fake().calls[0].kind);
    }

    /* Exactly START, <ops...>, COMPLETE(0) for one WR. */
    std::vector<fake_wr_call> one_wr()
    {
        std::vector<fake_wr_call> calls = fake().calls;
        EXPECT_GE(calls.size(), 3u);
        if (calls.size() < 3) {
            return {};
        }
        EXPECT_EQ(fake_wr_call::START, calls.front().kind);
        EXPECT_EQ(fake_wr_call::COMPLETE, calls.back().kind);
        EXPECT_EQ(0, calls.back().ret);
        return std::vector<fake_wr_call>(calls.begin() + 1, calls.end() - 1);
    }
};

/* ---------------------------------------------------------------------- */
/* discovery and open                                                       */
/* ---------------------------------------------------------------------- */

TEST_F(test_engine_mlx5_wrap, query_devices_lists_mlx5_only)
{
    char names[4][UMR_ENG_NAME_MAX];
    unsigned num = 99;

    fake().devices = { {"rxe0", false}, {"mlx5_0", true}, {"siw0", false},
                       {"mlx5_1", true} };
    ASSERT_EQ(UCS_OK, ops->query_devices(names, 4, &num));
    ASSERT_EQ(2u, num);
    EXPECT_STREQ("mlx5_0", names[0]);
    EXPECT_STREQ("mlx5_1", names[1]);

    /* fewer slots than devices: fill what fits */
    ASSERT_EQ(UCS_OK, ops->query_devices(names, 1, &num));
    EXPECT_EQ(1u, num);
    EXPECT_STREQ("mlx5_0", names[0]);
}

TEST_F(test_engine_mlx5_wrap, query_devices_none)
{
    char names[4][UMR_ENG_NAME_MAX];
    unsigned num = 99;

    fake().devices.clear();
    ASSERT_EQ(UCS_OK, ops->query_devices(names, 4, &num));
    EXPECT_EQ(0u, num);

    fake().devices = { {"rxe0", false} };
    num            = 99;
    ASSERT_EQ(UCS_OK, ops->query_devices(names, 4, &num));
    EXPECT_EQ(0u, num);

    /* no RDMA subsystem at all */
    fake().device_list_fails = true;
    num                      = 99;
    ASSERT_EQ(UCS_OK, ops->query_devices(names, 4, &num));
    EXPECT_EQ(0u, num);

    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ops->query_devices(names, 4, NULL));
}

TEST_F(test_engine_mlx5_wrap, dev_open_no_device)
{
    fake().devices = { {"rxe0", false} };
    EXPECT_EQ(UCS_ERR_NO_DEVICE, ops->dev_open("mlx5_0", NULL, &dev));
    EXPECT_EQ(UCS_ERR_NO_DEVICE, ops->dev_open("rxe0", NULL, &dev));
    fake().device_list_fails = true;
    EXPECT_EQ(UCS_ERR_NO_DEVICE, ops->dev_open("mlx5_0", NULL, &dev));
    EXPECT_EQ(NULL, dev);
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ops->dev_open(NULL, NULL, &dev));
}

TEST_F(test_engine_mlx5_wrap, dev_open_asks_devx_and_caps)
{
    umr_eng_caps_t caps;

    open_dev();
    EXPECT_EQ((uint32_t)MLX5DV_CONTEXT_FLAGS_DEVX, fake().open_flags);

    ops->dev_query(dev, &caps);
    EXPECT_STREQ("mlx5_0", caps.name);
    EXPECT_EQ(51u, caps.max_interleaved);
    EXPECT_EQ(52u, caps.max_list);
    EXPECT_EQ(65535u, caps.max_bytes_count);
    EXPECT_EQ(65535u, caps.max_stride);
    EXPECT_EQ(30u, caps.max_sge);
    /* issue 10 finding 5: 1 KiB UMR WQEs, 16 basic blocks each, and
     * rdma-core caps the SQ in blocks: 32768 / 16 work requests */
    EXPECT_EQ(2048u, caps.max_qp_wr);
    EXPECT_EQ(4u, caps.max_depth);
    EXPECT_EQ(UINT64_MAX, caps.max_ilv_bytes);
    EXPECT_EQ((uint64_t)INT32_MAX, caps.max_list_bytes);
    EXPECT_EQ((1u << 24) / UMR_ENG_MLX5_MKEY_RING, caps.max_mkeys);
    EXPECT_EQ(1ull << 30, caps.max_msg);
    EXPECT_EQ(1u, caps.num_ports);
    EXPECT_EQ(sizeof(umr_eng_mlx5_dev_addr_t), caps.dev_addr_len);
    EXPECT_EQ(sizeof(umr_eng_mlx5_qp_addr_t), caps.qp_addr_len);
    EXPECT_LE(caps.dev_addr_len, (size_t)UMR_ENG_ADDR_MAX);
    EXPECT_LE(caps.qp_addr_len, (size_t)UMR_ENG_ADDR_MAX);
    /* EDR 4x: 25.78125 Gb/s * 64/66 * 4 lanes / 8 */
    EXPECT_NEAR(12.5e9, caps.bandwidth, 1e6);
}

/* An XDR port as rdma-core 49+ reports it: NDR (128) in active_speed, XDR
 * (256) in active_speed_ex (man ibv_query_port). Built against 56.1 or 65.0
 * the engine rates it at XDR; 44.0's headers have no active_speed_ex, and
 * the same port reads as NDR (engine_mlx5_compat.h). */
TEST_F(test_engine_mlx5_wrap, port_speed_beyond_ndr)
{
    umr_eng_caps_t caps;

    fake().ports[0].attr.active_speed = 128;
    open_dev();
    ops->dev_query(dev, &caps);
    const double ndr = caps.bandwidth;
    /* NDR 4x: 106.25 Gb/s * 64/66 * 4 lanes / 8 */
    EXPECT_NEAR(106.25e9 * 64 / 66 * 4 / 8, ndr, 1e6);
    ops->dev_close(dev);
    dev = NULL;

    set_active_speed_ex(fake().ports[0].attr, 256);
    open_dev();
    ops->dev_query(dev, &caps);
    EXPECT_NEAR(UMR_ENG_MLX5_HAVE_SPEED_EX ? 2 * ndr : ndr, caps.bandwidth,
                1e6);
}

TEST_F(test_engine_mlx5_wrap, dev_open_failures_unwind)
{
    fake().open_errno = EOPNOTSUPP;
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, ops->dev_open("mlx5_0", NULL, &dev));
    EXPECT_EQ(0, fake().live_objects());

    fake().open_errno = 0;
    fake().ports[0].attr.state = IBV_PORT_DOWN;
    EXPECT_EQ(UCS_ERR_NO_DEVICE, ops->dev_open("mlx5_0", NULL, &dev));
    EXPECT_EQ(0, fake().live_objects());

    fake().ports[0].attr.state = IBV_PORT_ACTIVE;
    fake().alloc_pd_fails      = true;
    EXPECT_EQ(UCS_ERR_NO_MEMORY, ops->dev_open("mlx5_0", NULL, &dev));
    EXPECT_EQ(0, fake().live_objects());

    umr_eng_dev_params_t params;
    umr_eng_dev_params_init(&params);
    params.port               = 2;
    fake().alloc_pd_fails     = false;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ops->dev_open("mlx5_0", &params, &dev));
    EXPECT_EQ(0, fake().live_objects());
    EXPECT_EQ(NULL, dev);
}

TEST_F(test_engine_mlx5_wrap, dev_open_first_active_port)
{
    umr_eng_mlx5_dev_addr_t addr;

    fake().dev_attr.orig_attr.phys_port_cnt = 2;
    fake().ports = { fake_ib_port(3, IBV_MTU_4096),
                     fake_ib_port(5, IBV_MTU_2048) };
    fake().ports[0].attr.state = IBV_PORT_INIT;
    open_dev();
    ops->dev_get_addr(dev, &addr);
    EXPECT_EQ(2, addr.port_num);
    EXPECT_EQ(5, addr.lid);
    EXPECT_EQ(IBV_LINK_LAYER_INFINIBAND, addr.link_layer);
}

TEST_F(test_engine_mlx5_wrap, reachability)
{
    umr_eng_mlx5_dev_addr_t addr, peer;

    open_dev();
    ops->dev_get_addr(dev, &addr);
    peer     = addr;
    peer.lid = 100;
    EXPECT_TRUE(ops->dev_is_reachable(dev, &peer));
    peer.gid[3] ^= 1;   /* other IB subnet */
    EXPECT_FALSE(ops->dev_is_reachable(dev, &peer));
    peer            = addr;
    peer.link_layer = IBV_LINK_LAYER_ETHERNET;
    EXPECT_FALSE(ops->dev_is_reachable(dev, &peer));
}

/* ---------------------------------------------------------------------- */
/* QP creation and connection                                              */
/* ---------------------------------------------------------------------- */

TEST_F(test_engine_mlx5_wrap, qp_create_attributes)
{
    open_dev();
    ASSERT_EQ(UCS_OK, ops->cq_create(dev, 128, &cq));
    ASSERT_EQ(1u, fake().cq_attrs.size());
    EXPECT_EQ(128u, fake().cq_attrs[0].cqe);

    ASSERT_EQ(UCS_OK, create_qp(64, 3, 52));
    ASSERT_EQ(1u, fake().qp_attrs.size());
    const struct ibv_qp_init_attr_ex &a      = fake().qp_attrs[0];
    const struct mlx5dv_qp_init_attr &dv     = fake().dv_qp_attrs[0];
    EXPECT_EQ(IBV_QPT_RC, a.qp_type);
    EXPECT_EQ(0, a.sq_sig_all);
    EXPECT_EQ(64u, a.cap.max_send_wr);
    EXPECT_EQ(3u, a.cap.max_send_sge);
    /* 52 list entries (= 51 interleaved entries + the repeat header),
     * 16 B each, minus the 4-byte inline header: (828 + 4) / 16 = 52 */
    EXPECT_EQ(828u, a.cap.max_inline_data);
    EXPECT_EQ((uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS),
              a.comp_mask);
    EXPECT_EQ((uint64_t)(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ |
                         IBV_QP_EX_WITH_LOCAL_INV),
              a.send_ops_flags);
    EXPECT_EQ(ibv_cq_ex_to_cq(mcq(cq)), a.send_cq);
    EXPECT_NE((void*)NULL, a.pd);
    EXPECT_EQ((uint64_t)MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS, dv.comp_mask);
    EXPECT_EQ((uint64_t)(MLX5DV_QP_EX_WITH_MR_INTERLEAVED |
                         MLX5DV_QP_EX_WITH_MR_LIST),
              dv.send_ops_flags);
    EXPECT_EQ(51u, mqp(qp)->max_interleaved);
    EXPECT_EQ(52u, mqp(qp)->max_list);
    EXPECT_EQ(3u, mqp(qp)->max_sge);
}

TEST_F(test_engine_mlx5_wrap, qp_limits_follow_inline_read_back)
{
    umr_eng_caps_t caps;

    /* the provider granted less: dev_open's probe reads it back, so the
     * device's limits are those, and a QP sized for more is refused */
    fake().qp_inline_grant = 444;
    open_dev();
    ops->dev_query(dev, &caps);
    EXPECT_EQ(28u, caps.max_list);
    EXPECT_EQ(27u, caps.max_interleaved);
    EXPECT_EQ(28u, caps.max_sge) << "SGEs fit the WQE too";
    ASSERT_EQ(UCS_OK, ops->cq_create(dev, 64, &cq));
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT, create_qp(16, 4, 52));
    ops->cq_destroy(cq);
    cq = NULL;
    ops->dev_close(dev);
    dev = NULL;

    /* a QP granted less than its device probe said */
    fake().qp_inline_grant = 0;
    open_dev();
    ASSERT_EQ(UCS_OK, ops->cq_create(dev, 64, &cq));
    fake().qp_inline_grant = 444;
    ASSERT_EQ(UCS_OK, create_qp(16, 4, 52));
    umr_eng_mlx5_dev_addr_t raddr;
    umr_eng_mlx5_qp_addr_t rqp = {};
    ops->dev_get_addr(dev, &raddr);
    rqp.qp_num    = 0x1234;
    rqp.mtu       = IBV_MTU_2048;
    rqp.rd_atomic = 16;
    ASSERT_EQ(UCS_OK, ops->qp_connect(qp, &raddr, &rqp));
    ASSERT_EQ(UCS_OK, ops->mr_reg(dev, buf.data(), buf.size(),
                                  UMR_ENG_ACCESS_LOCAL_WRITE |
                                  UMR_ENG_ACCESS_REMOTE_WRITE |
                                  UMR_ENG_ACCESS_REMOTE_READ, &mr));
    fake().calls.clear();
    EXPECT_EQ(444u, mqp(qp)->max_inline_data);
    EXPECT_EQ(27u, mqp(qp)->max_interleaved);
    EXPECT_EQ(28u, mqp(qp)->max_list);

    umr_eng_mkey_t *mkey;
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 64, &mkey));
    auto e = ilv(28, 64, 64);
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
              ops->post_umr_interleaved(qp, mkey, 0, 2, 28, e.data(), 1, 0));
    expect_nothing_posted("28 interleaved entries, QP takes 27");
    EXPECT_EQ(UCS_OK,
              ops->post_umr_interleaved(qp, mkey, 0, 2, 27, e.data(), 1, 0));
    auto s = sges(29, 64);
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
              ops->post_umr_list(qp, mkey, 0, 29, s.data(), 2, 0));
    EXPECT_EQ(UCS_OK, ops->post_umr_list(qp, mkey, 0, 28, s.data(), 3, 0));
    EXPECT_EQ(2u, fake().posted().size());
    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, mkey));
}

/* issue 10 finding 4: rdma-core sums an interleaved key's length in 64 bits
 * (qp.c umr_strided_seg_create, 44.0, 56.1 and 65.0): a key over 4 GiB is
 * posted */
TEST_F(test_engine_mlx5_wrap, interleaved_key_over_4g)
{
    umr_eng_mkey_t *mkey;

    open_all();
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 8, &mkey));
    auto e = ilv(2, 65535, 0);
    ASSERT_EQ(UCS_OK, ops->post_umr_interleaved(qp, mkey, 0, 32769, 2,
                                                e.data(), 1, 0));
    auto posted = fake().posted();
    ASSERT_EQ(1u, posted.size());
    EXPECT_EQ(32769u, posted[0].repeat);
    EXPECT_GT(2ull * 65535 * 32769, (uint64_t)UINT32_MAX);
    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, mkey));
}

TEST_F(test_engine_mlx5_wrap, qp_create_bad_params)
{
    open_dev();
    ASSERT_EQ(UCS_OK, ops->cq_create(dev, 16, &cq));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, create_qp(0, 1, 52));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, create_qp(2049, 1, 52));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, create_qp(16, 0, 52));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, create_qp(16, 31, 52));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, create_qp(16, 1, 0));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, create_qp(16, 1, 1));
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT, create_qp(16, 1, 53));
    EXPECT_TRUE(fake().qp_attrs.empty());
    EXPECT_EQ(NULL, qp);

    fake().create_qp_errno = ENOMEM;
    EXPECT_EQ(UCS_ERR_NO_MEMORY, create_qp());
    EXPECT_EQ(0, fake().num_qp);
}

TEST_F(test_engine_mlx5_wrap, connect_ib_by_lid)
{
    umr_eng_mlx5_dev_addr_t raddr;
    umr_eng_mlx5_qp_addr_t rqp = {}, lqp;

    open_dev();
    ASSERT_EQ(UCS_OK, ops->cq_create(dev, 16, &cq));
    ASSERT_EQ(UCS_OK, create_qp());
    ops->dev_get_addr(dev, &raddr);
    raddr.lid     = 42;
    rqp.qp_num    = 0xabcde;
    rqp.mtu       = IBV_MTU_1024;
    rqp.rd_atomic = 4;          /* the peer takes 4 reads at once */
    ops->qp_get_addr(qp, &lqp);
    EXPECT_EQ(mqp(qp)->qp->qp_num, lqp.qp_num);
    EXPECT_EQ(IBV_MTU_4096, lqp.mtu);
    EXPECT_EQ(16, lqp.rd_atomic) << "our responder depth, for the peer";

    ASSERT_EQ(UCS_OK, ops->qp_connect(qp, &raddr, &rqp));
    ASSERT_EQ(3u, fake().modify_calls.size());

    const auto &init = fake().modify_calls[0];
    EXPECT_EQ(IBV_QPS_INIT, init.first.qp_state);
    EXPECT_EQ(IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
              IBV_QP_ACCESS_FLAGS, init.second);
    EXPECT_EQ(1, init.first.port_num);
    EXPECT_EQ(0, init.first.pkey_index) << "0xffff, a full member";
    EXPECT_EQ((unsigned)(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                         IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC),
              init.first.qp_access_flags);

    const auto &rtr = fake().modify_calls[1];
    EXPECT_EQ(IBV_QPS_RTR, rtr.first.qp_state);
    EXPECT_EQ(IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
              IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
              IBV_QP_MIN_RNR_TIMER, rtr.second);
    EXPECT_EQ(IBV_MTU_1024, rtr.first.path_mtu);   /* min of both sides */
    EXPECT_EQ(0xabcdeu, rtr.first.dest_qp_num);
    EXPECT_EQ(0, rtr.first.ah_attr.is_global);
    EXPECT_EQ(42, rtr.first.ah_attr.dlid);
    EXPECT_EQ(1, rtr.first.ah_attr.port_num);
    EXPECT_EQ(0, rtr.first.ah_attr.sl);
    EXPECT_EQ(16, rtr.first.max_dest_rd_atomic);

    const auto &rts = fake().modify_calls[2];
    EXPECT_EQ(IBV_QPS_RTS, rts.first.qp_state);
    EXPECT_EQ(IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
              IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
              rts.second);
    EXPECT_EQ(4, rts.first.max_rd_atomic) << "the peer's depth, not ours";
    /* UCX's defaults: TIMEOUT 1 s -> 4.096 us * 2^18, 7 retries (8.6 s in
     * all; before: 2^14 and 7, 0.54 s), RNR retry 7 */
    EXPECT_EQ(18, rts.first.timeout);
    EXPECT_EQ(7, rts.first.retry_cnt);
    EXPECT_EQ(7, rts.first.rnr_retry);

    EXPECT_EQ(UCS_ERR_ALREADY_EXISTS, ops->qp_connect(qp, &raddr, &rqp));
}

TEST_F(test_engine_mlx5_wrap, connect_roce_by_gid)
{
    umr_eng_mlx5_dev_addr_t laddr, raddr;
    umr_eng_mlx5_qp_addr_t rqp = {};

    fake().ports = { fake_roce_port(IBV_MTU_1024) };
    open_dev();
    ops->dev_get_addr(dev, &laddr);
    EXPECT_EQ(IBV_LINK_LAYER_ETHERNET, laddr.link_layer);
    /* auto: the RoCE v2 IPv4 GID (index 2) */
    EXPECT_EQ(0, memcmp(laddr.gid, fake().ports[0].gids[2].gid.raw, 16));

    ASSERT_EQ(UCS_OK, ops->cq_create(dev, 16, &cq));
    ASSERT_EQ(UCS_OK, create_qp());
    raddr         = laddr;
    raddr.gid[15] = 99;
    rqp.qp_num    = 0x77;
    rqp.mtu       = IBV_MTU_4096;
    rqp.rd_atomic = 16;
    ASSERT_EQ(UCS_OK, ops->qp_connect(qp, &raddr, &rqp));
    ASSERT_EQ(3u, fake().modify_calls.size());
    const struct ibv_qp_attr &rtr = fake().modify_calls[1].first;
    EXPECT_EQ(1, rtr.ah_attr.is_global);
    EXPECT_EQ(2, rtr.ah_attr.grh.sgid_index);
    EXPECT_EQ(0, memcmp(raddr.gid, rtr.ah_attr.grh.dgid.raw, 16));
    /* UCX's defaults (finding 3 of issue 19; before: 0, 0, 64) */
    EXPECT_EQ(106, rtr.ah_attr.grh.traffic_class) << "DSCP 26 on RoCE v2";
    EXPECT_EQ(255, rtr.ah_attr.grh.hop_limit);
    EXPECT_EQ(0, rtr.ah_attr.sl);
    EXPECT_EQ(0u, rtr.ah_attr.grh.flow_label);
    EXPECT_EQ(IBV_MTU_1024, rtr.path_mtu);
}

/* Finding 3 of issue 19: QoS and partition come from the parameters, with
 * UCX's defaults: the first full member of the pkey table (index 0 was
 * taken whatever it held), the traffic class 106 on RoCE v2 only. */
TEST_F(test_engine_mlx5_wrap, qos_and_pkey)
{
    umr_eng_mlx5_dev_addr_t addr;
    umr_eng_dev_params_t params;
    struct {
        int      req;
        uint16_t index, pkey;
    } picks[] = {
        {-1, 1, 0x8001},        /* auto: the first full member */
        {0x0002, 2, 0x8002},    /* that partition's full member */
        {0x7fff, 0, 0x7fff},    /* only a limited member there */
    };

    fake().ports[0].pkeys = {htons(0x7fff), htons(0x8001), htons(0x8002),
                             htons(0)};
    fake().ports[0].attr.pkey_tbl_len = 4;
    for (auto &pk : picks) {
        SCOPED_TRACE("pkey " + std::to_string(pk.req));
        umr_eng_dev_params_init(&params);
        params.pkey = pk.req;
        open_all_with(&params);
        ops->dev_get_addr(dev, &addr);
        EXPECT_EQ(pk.pkey, addr.pkey);
        umr_eng_mlx5_dev_addr_t raddr = addr;
        umr_eng_mlx5_qp_addr_t rqp    = {0x55, IBV_MTU_4096, 16};
        ASSERT_EQ(UCS_OK, ops->qp_connect(qp, &raddr, &rqp));
        EXPECT_EQ(pk.index, fake().modify_calls[0].first.pkey_index);
        close_all();
    }
    umr_eng_dev_params_init(&params);
    params.pkey = 0x0005;       /* not in the table */
    EXPECT_EQ(UCS_ERR_NO_ELEM, ops->dev_open("mlx5_0", &params, &dev));
    EXPECT_EQ(0, fake().live_objects());

    /* RoCE v1 only: traffic class 0; everything set by hand */
    fake().ports = {fake_roce_host_port(0, IBV_MTU_1024, true, false, true)};
    umr_eng_dev_params_init(&params);
    open_all_with(&params);
    ops->dev_get_addr(dev, &addr);
    EXPECT_EQ(UMR_ENG_MLX5_GID_ROCE_V1, addr.gid_version);
    EXPECT_EQ(4, addr.gid_family);
    umr_eng_mlx5_qp_addr_t rqp = {0x55, IBV_MTU_4096, 16};
    ASSERT_EQ(UCS_OK, ops->qp_connect(qp, &addr, &rqp));
    EXPECT_EQ(0, fake().modify_calls[1].first.ah_attr.grh.traffic_class);
    close_all();

    fake().ports = {fake_roce_host_port(0, IBV_MTU_1024, true, true, true)};
    umr_eng_dev_params_init(&params);
    params.traffic_class = 64;
    params.sl            = 3;
    params.hop_limit     = 32;
    params.flow_label    = 5;
    params.timeout       = 0.01;    /* 4.096 us * 2^11 = 8.4 ms */
    params.retry_count   = 2;
    params.rnr_retry     = 1;
    open_all_with(&params);
    ops->dev_get_addr(dev, &addr);
    ASSERT_EQ(UCS_OK, ops->qp_connect(qp, &addr, &rqp));
    const struct ibv_qp_attr &rtr = fake().modify_calls[1].first;
    const struct ibv_qp_attr &rts = fake().modify_calls[2].first;
    EXPECT_EQ(64, rtr.ah_attr.grh.traffic_class);
    EXPECT_EQ(3, rtr.ah_attr.sl);
    EXPECT_EQ(32, rtr.ah_attr.grh.hop_limit);
    EXPECT_EQ(5u, rtr.ah_attr.grh.flow_label);
    EXPECT_EQ(11, rts.timeout);
    EXPECT_EQ(2, rts.retry_cnt);
    EXPECT_EQ(1, rts.rnr_retry);
    close_all();

    umr_eng_dev_params_init(&params);
    params.retry_count = 8;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ops->dev_open("mlx5_0", &params, &dev));
    EXPECT_EQ(0, fake().live_objects());
}

/* UCX's conversion of the timeout (ib_device.c uct_ib_to_qp_fabric_time) */
TEST_F(test_engine_mlx5_wrap, qp_timeout_exponent)
{
    EXPECT_EQ(18, umr_eng_mlx5_qp_timeout(1.0));
    EXPECT_EQ(14, umr_eng_mlx5_qp_timeout(0.067));
    EXPECT_EQ(1, umr_eng_mlx5_qp_timeout(1e-9));
    EXPECT_EQ(1, umr_eng_mlx5_qp_timeout(8e-6));
    EXPECT_EQ(2, umr_eng_mlx5_qp_timeout(16e-6));
    EXPECT_EQ(31, umr_eng_mlx5_qp_timeout(8000.0));
    EXPECT_EQ(0, umr_eng_mlx5_qp_timeout(20000.0)) << "no timeout";
}

TEST_F(test_engine_mlx5_wrap, roce_explicit_gid_index)
{
    umr_eng_dev_params_t params;
    umr_eng_mlx5_dev_addr_t laddr;

    umr_eng_dev_params_init(&params);
    fake().ports     = { fake_roce_port(IBV_MTU_1024) };
    params.gid_index = 1;
    open_dev(&params);
    ops->dev_get_addr(dev, &laddr);
    EXPECT_EQ(0, memcmp(laddr.gid, fake().ports[0].gids[1].gid.raw, 16));
    ops->dev_close(dev);
    dev = NULL;

    params.gid_index = 3;   /* table has 3 entries */
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ops->dev_open("mlx5_0", &params, &dev));
}

TEST_F(test_engine_mlx5_wrap, connect_failure_resets_qp)
{
    umr_eng_mlx5_dev_addr_t raddr;
    umr_eng_mlx5_qp_addr_t rqp = {};

    open_dev();
    ASSERT_EQ(UCS_OK, ops->cq_create(dev, 16, &cq));
    ASSERT_EQ(UCS_OK, create_qp());
    ops->dev_get_addr(dev, &raddr);

    raddr.link_layer = IBV_LINK_LAYER_ETHERNET;
    EXPECT_EQ(UCS_ERR_UNREACHABLE, ops->qp_connect(qp, &raddr, &rqp));
    EXPECT_TRUE(fake().modify_calls.empty());

    raddr.link_layer          = IBV_LINK_LAYER_INFINIBAND;
    fake().modify_fail_state  = IBV_QPS_RTR;
    EXPECT_EQ(UCS_ERR_IO_ERROR, ops->qp_connect(qp, &raddr, &rqp));
    ASSERT_EQ(3u, fake().modify_calls.size());
    EXPECT_EQ(IBV_QPS_RESET, fake().modify_calls[2].first.qp_state);

    /* not connected: nothing may be posted */
    auto s = std::vector<umr_eng_sge_t>(1);
    fake().calls.clear();
    EXPECT_EQ(UCS_ERR_NOT_CONNECTED,
              ops->post_rdma(qp, UMR_ENG_OP_RDMA_WRITE, s.data(), 1, 0, 1, 0,
                             0));
    expect_nothing_posted("post before connect");

    /* and connecting again works */
    fake().modify_fail_state = IBV_QPS_UNKNOWN;
    EXPECT_EQ(UCS_OK, ops->qp_connect(qp, &raddr, &rqp));
}

/* ---------------------------------------------------------------------- */
/* UMR posts: exact arguments                                               */
/* ---------------------------------------------------------------------- */

TEST_F(test_engine_mlx5_wrap, umr_interleaved_exact_args)
{
    umr_eng_mkey_t *mkey;
    umr_eng_interleaved_t e[3];

    open_all();
    e[0] = { base() + 0,    256, 768,  mr->lkey };
    e[1] = { base() + 4096, 100, 924,  mr->lkey };
    e[2] = { base() + 8192, 8,   1016, mr->lkey };
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 8, &mkey));
    umr_eng_mlx5_mkey_t *m = mmkey(mkey);

    ASSERT_EQ(UCS_OK, ops->post_umr_interleaved(
                      qp, mkey, UMR_ENG_ACCESS_REMOTE_READ |
                      UMR_ENG_ACCESS_REMOTE_WRITE, 100, 3, e, 0xfeed,
                      UMR_ENG_WR_SIGNALED));

    auto calls = one_wr();
    ASSERT_EQ(1u, calls.size());
    const fake_wr_call &c = calls[0];
    EXPECT_EQ(fake_wr_call::MR_INTERLEAVED, c.kind);
    EXPECT_EQ(SIGNALED_INLINE, c.wr_flags);
    EXPECT_EQ(0xfeedu, user_wr_id(c.wr_id));
    EXPECT_EQ(m->ring[1], c.mkey);
    EXPECT_EQ((uint32_t)(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE),
              c.access);
    EXPECT_EQ(100u, c.repeat);
    ASSERT_EQ(3u, c.ilv.size());
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(e[i].addr, c.ilv[i].addr) << i;
        EXPECT_EQ(e[i].bytes_count, c.ilv[i].bytes_count) << i;
        EXPECT_EQ(e[i].bytes_skip, c.ilv[i].bytes_skip) << i;
        EXPECT_EQ(mr->lkey, c.ilv[i].lkey) << i;
    }
    /* the key changed to the configured ring member */
    EXPECT_EQ(m->ring[1]->lkey, mkey->lkey);
    EXPECT_EQ(m->ring[1]->rkey, mkey->rkey);

    /* unsignaled and fenced variants; behind the UMR still in flight the
     * device's small UMR fence is asked (umr_fence small, R34) */
    fake().calls.clear();
    ASSERT_EQ(UCS_OK, ops->post_umr_interleaved(qp, mkey, 0, 1, 1, e, 1, 0));
    EXPECT_EQ((unsigned)(IBV_SEND_INLINE | IBV_SEND_FENCE),
              one_wr()[0].wr_flags);
    fake().calls.clear();
    ASSERT_EQ(UCS_OK, ops->post_umr_interleaved(qp, mkey, 0, 1, 1, e, 1,
                                                UMR_ENG_WR_FENCE));
    EXPECT_EQ((unsigned)(IBV_SEND_INLINE | IBV_SEND_FENCE),
              one_wr()[0].wr_flags);
    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, mkey));
}

TEST_F(test_engine_mlx5_wrap, umr_list_exact_args)
{
    umr_eng_mkey_t *mkey;

    open_all();
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 52, &mkey));
    auto s = sges(52, 1000);
    s[7].lkey = 0xdead;   /* entries keep their own keys (nesting) */
    ASSERT_EQ(UCS_OK, ops->post_umr_list(qp, mkey,
                                         UMR_ENG_ACCESS_LOCAL_WRITE |
                                         UMR_ENG_ACCESS_REMOTE_ATOMIC,
                                         52, s.data(), 77,
                                         UMR_ENG_WR_SIGNALED));
    auto calls = one_wr();
    ASSERT_EQ(1u, calls.size());
    const fake_wr_call &c = calls[0];
    EXPECT_EQ(fake_wr_call::MR_LIST, c.kind);
    EXPECT_EQ(SIGNALED_INLINE, c.wr_flags);
    EXPECT_EQ(77u, user_wr_id(c.wr_id));
    EXPECT_EQ(mmkey(mkey)->ring[1]->lkey, c.key);
    EXPECT_EQ((uint32_t)(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC),
              c.access);
    ASSERT_EQ(52u, c.sge.size());
    for (unsigned i = 0; i < 52; ++i) {
        EXPECT_EQ(s[i].addr, c.sge[i].addr) << i;
        EXPECT_EQ(s[i].length, c.sge[i].length) << i;
        EXPECT_EQ(s[i].lkey, c.sge[i].lkey) << i;
    }
    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, mkey));
}

TEST_F(test_engine_mlx5_wrap, rdma_exact_args)
{
    open_all();
    auto s = sges(3, 4096);

    ASSERT_EQ(UCS_OK, ops->post_rdma(qp, UMR_ENG_OP_RDMA_WRITE, s.data(), 3,
                                     0x100, 0xabc42, 5, UMR_ENG_WR_SIGNALED));
    auto calls = one_wr();
    ASSERT_EQ(2u, calls.size());
    EXPECT_EQ(fake_wr_call::RDMA_WRITE, calls[0].kind);
    EXPECT_EQ(0xabc42u, calls[0].key);
    EXPECT_EQ(0x100u, calls[0].remote_addr);
    EXPECT_EQ((unsigned)IBV_SEND_SIGNALED, calls[0].wr_flags);
    EXPECT_EQ(5u, user_wr_id(calls[0].wr_id));
    EXPECT_EQ(fake_wr_call::SET_SGE_LIST, calls[1].kind);
    ASSERT_EQ(3u, calls[1].sge.size());
    for (unsigned i = 0; i < 3; ++i) {
        EXPECT_EQ(s[i].addr, calls[1].sge[i].addr);
        EXPECT_EQ(s[i].length, calls[1].sge[i].length);
        EXPECT_EQ(mr->lkey, calls[1].sge[i].lkey);
    }

    fake().calls.clear();
    ASSERT_EQ(UCS_OK, ops->post_rdma(qp, UMR_ENG_OP_RDMA_READ, s.data(), 1,
                                     0, 0x99, 6, UMR_ENG_WR_FENCE));
    calls = one_wr();
    ASSERT_EQ(2u, calls.size());
    EXPECT_EQ(fake_wr_call::RDMA_READ, calls[0].kind);
    EXPECT_EQ(0x99u, calls[0].key);
    EXPECT_EQ(0u, calls[0].remote_addr);
    EXPECT_EQ((unsigned)IBV_SEND_FENCE, calls[0].wr_flags);
    EXPECT_EQ(1u, calls[1].sge.size());
}

TEST_F(test_engine_mlx5_wrap, local_inv_exact_args)
{
    umr_eng_mkey_t *mkey;

    open_all();
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 4, &mkey));
    auto s = sges(2, 64);
    ASSERT_EQ(UCS_OK, ops->post_umr_list(qp, mkey, 0, 2, s.data(), 1, 0));
    uint32_t key = mkey->lkey;
    fake().calls.clear();
    ASSERT_EQ(UCS_OK, ops->post_local_inv(qp, mkey, 9, UMR_ENG_WR_SIGNALED));
    auto calls = one_wr();
    ASSERT_EQ(1u, calls.size());
    EXPECT_EQ(fake_wr_call::LOCAL_INV, calls[0].kind);
    EXPECT_EQ(key, calls[0].key);
    /* behind the UMR in flight: the small UMR fence (R34) */
    EXPECT_EQ((unsigned)(IBV_SEND_SIGNALED | IBV_SEND_FENCE),
              calls[0].wr_flags);
    EXPECT_EQ(9u, user_wr_id(calls[0].wr_id));
    EXPECT_EQ(key, mkey->lkey);   /* invalidation does not rotate */
    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, mkey));
}

/* ---------------------------------------------------------------------- */
/* limits: refused before anything reaches the NIC                          */
/* ---------------------------------------------------------------------- */

TEST_F(test_engine_mlx5_wrap, over_limit_never_reaches_nic)
{
    umr_eng_mkey_t *mkey, *small;

    open_all(16, 4);
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 64, &mkey));
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 4, &small));
    uint32_t key0 = mkey->lkey;

    struct limit_case {
        const char   *what;
        ucs_status_t expected;
        std::function<ucs_status_t()> post;
    };

    auto e52 = ilv(52, 64, 64);
    auto s53 = sges(53, 64);
    std::vector<limit_case> cases = {
        { "52 interleaved entries", UCS_ERR_EXCEEDS_LIMIT, [&] {
              return ops->post_umr_interleaved(qp, mkey, 0, 1, 52,
                                               e52.data(), 1, 0); } },
        { "entries over mkey max_entries", UCS_ERR_EXCEEDS_LIMIT, [&] {
              return ops->post_umr_interleaved(qp, small, 0, 1, 5,
                                               e52.data(), 1, 0); } },
        /* issue 10 finding 2: rdma-core writes n + 1 entries (the strided
         * header) but checks only n against the key */
        { "interleaved entries + header over mkey max_entries",
          UCS_ERR_EXCEEDS_LIMIT, [&] {
              return ops->post_umr_interleaved(qp, small, 0, 1, 4,
                                               e52.data(), 1, 0); } },
        { "bytes_count 65536", UCS_ERR_EXCEEDS_LIMIT, [&] {
              auto e = ilv(1, 65536, 0);
              return ops->post_umr_interleaved(qp, mkey, 0, 1, 1, e.data(),
                                               1, 0); } },
        { "bytes_count + bytes_skip 65536", UCS_ERR_EXCEEDS_LIMIT, [&] {
              auto e = ilv(2, 1000, 64535);   /* entry 0: 65535, legal */
              e[1].bytes_skip = 64536;
              return ops->post_umr_interleaved(qp, mkey, 0, 1, 2, e.data(),
                                               1, 0); } },
        { "bytes_skip near 2^32 (no wrap)", UCS_ERR_EXCEEDS_LIMIT, [&] {
              auto e = ilv(1, 16, UINT32_MAX - 8);
              return ops->post_umr_interleaved(qp, mkey, 0, 1, 1, e.data(),
                                               1, 0); } },
        { "bytes_count 0", UCS_ERR_INVALID_PARAM, [&] {
              auto e = ilv(1, 0, 16);
              return ops->post_umr_interleaved(qp, mkey, 0, 1, 1, e.data(),
                                               1, 0); } },
        { "repeat 0", UCS_ERR_INVALID_PARAM, [&] {
              auto e = ilv(1, 16, 16);
              return ops->post_umr_interleaved(qp, mkey, 0, 0, 1, e.data(),
                                               1, 0); } },
        { "0 entries", UCS_ERR_INVALID_PARAM, [&] {
              return ops->post_umr_interleaved(qp, mkey, 0, 1, 0,
                                               e52.data(), 1, 0); } },
        { "access MW_BIND", UCS_ERR_INVALID_PARAM, [&] {
              auto e = ilv(1, 16, 16);
              return ops->post_umr_interleaved(qp, mkey, IBV_ACCESS_MW_BIND,
                                               1, 1, e.data(), 1, 0); } },
        { "access ZERO_BASED", UCS_ERR_INVALID_PARAM, [&] {
              auto s = sges(1, 16);
              return ops->post_umr_list(qp, mkey, IBV_ACCESS_ZERO_BASED, 1,
                                        s.data(), 1, 0); } },
        { "53 list entries", UCS_ERR_EXCEEDS_LIMIT, [&] {
              return ops->post_umr_list(qp, mkey, 0, 53, s53.data(), 1, 0); } },
        { "list over INT_MAX bytes", UCS_ERR_EXCEEDS_LIMIT, [&] {
              auto s = sges(2, 1u << 30);
              return ops->post_umr_list(qp, mkey, 0, 2, s.data(), 1, 0); } },
        { "list length 0", UCS_ERR_INVALID_PARAM, [&] {
              auto s = sges(3, 64);
              s[1].length = 0;
              return ops->post_umr_list(qp, mkey, 0, 3, s.data(), 1, 0); } },
        { "5 SGEs on a 4-SGE QP", UCS_ERR_EXCEEDS_LIMIT, [&] {
              auto s = sges(5, 64);
              return ops->post_rdma(qp, UMR_ENG_OP_RDMA_WRITE, s.data(), 5,
                                    0, 1, 1, 0); } },
        { "message over max_msg", UCS_ERR_EXCEEDS_LIMIT, [&] {
              auto s = sges(2, (1u << 29) + 1);
              return ops->post_rdma(qp, UMR_ENG_OP_RDMA_READ, s.data(), 2,
                                    0, 1, 1, 0); } },
        { "RDMA with opcode UMR", UCS_ERR_INVALID_PARAM, [&] {
              auto s = sges(1, 64);
              return ops->post_rdma(qp, UMR_ENG_OP_UMR, s.data(), 1, 0, 1,
                                    1, 0); } },
        { "unknown WR flag", UCS_ERR_INVALID_PARAM, [&] {
              auto s = sges(1, 64);
              return ops->post_rdma(qp, UMR_ENG_OP_RDMA_WRITE, s.data(), 1,
                                    0, 1, 1, 1u << 7); } },
        { "NULL mkey", UCS_ERR_INVALID_PARAM, [&] {
              return ops->post_local_inv(qp, NULL, 1, 0); } },
    };

    for (const limit_case &c : cases) {
        fake().calls.clear();
        EXPECT_EQ(c.expected, c.post()) << c.what;
        expect_nothing_posted(c.what);
        EXPECT_EQ(key0, mkey->lkey) << c.what << ": key rotated";
        EXPECT_EQ(0u, mqp(qp)->sq_head) << c.what << ": slot taken";
    }

    /* the largest legal descriptors do pass */
    fake().calls.clear();
    auto e = ilv(51, 65535, 0);
    e[1].bytes_count = 1;
    e[1].bytes_skip  = 65534;
    EXPECT_EQ(UCS_OK, ops->post_umr_interleaved(qp, mkey, 0, 1, 51, e.data(),
                                                1, 0));
    auto s = sges(2, (1u << 30) - 1);
    EXPECT_EQ(UCS_OK, ops->post_umr_list(qp, mkey, 0, 2, s.data(), 1, 0));
    EXPECT_EQ(2u, fake().posted().size());

    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, mkey));
    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, small));
}

TEST_F(test_engine_mlx5_wrap, wr_complete_error_propagates)
{
    umr_eng_mkey_t *mkey;

    open_all(4);
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 8, &mkey));
    uint32_t key0 = mkey->lkey;
    auto e        = ilv(2, 64, 64);
    auto s        = sges(2, 64);

    /* issue 10 finding 6: ENOMEM is the provider's full send queue
     * (qp.c mlx5_wq_overflow): UCS_ERR_NO_RESOURCE, retried after
     * progress; any other error is an I/O error */
    const struct {
        int          ret;
        ucs_status_t status;
    } errs[] = {{ENOMEM, UCS_ERR_NO_RESOURCE}, {EINVAL, UCS_ERR_IO_ERROR},
                {EOPNOTSUPP, UCS_ERR_IO_ERROR}};
    for (const auto &err : errs) {
        fake().wr_complete_ret = err.ret;
        for (int i = 0; i < 8; ++i) {   /* more than sq_size: no slot leaks */
            EXPECT_EQ(err.status,
                      ops->post_umr_interleaved(qp, mkey, 0, 4, 2, e.data(),
                                                1, UMR_ENG_WR_SIGNALED));
            EXPECT_EQ(err.status,
                      ops->post_umr_list(qp, mkey, 0, 2, s.data(), 1, 0));
            EXPECT_EQ(err.status, ops->post_local_inv(qp, mkey, 1, 0));
            EXPECT_EQ(err.status,
                      ops->post_rdma(qp, UMR_ENG_OP_RDMA_WRITE, s.data(), 2,
                                     0, 1, 1, 0));
        }
    }
    EXPECT_TRUE(fake().posted().empty());
    EXPECT_EQ(key0, mkey->lkey);
    EXPECT_EQ(0u, mqp(qp)->sq_head);

    fake().wr_complete_ret = 0;
    EXPECT_EQ(UCS_OK, ops->post_umr_interleaved(qp, mkey, 0, 4, 2, e.data(),
                                                1, 0));
    EXPECT_NE(key0, mkey->lkey);
    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, mkey));
}

/* ---------------------------------------------------------------------- */
/* key rotation                                                             */
/* ---------------------------------------------------------------------- */

TEST_F(test_engine_mlx5_wrap, mkey_ring_created_indirect)
{
    umr_eng_mkey_t *mkey;

    open_all();
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 40, &mkey));
    ASSERT_EQ((size_t)UMR_ENG_MLX5_MKEY_RING, fake().mkey_attrs.size());
    for (const auto &a : fake().mkey_attrs) {
        EXPECT_EQ((uint32_t)MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT,
                  a.create_flags);
        EXPECT_EQ(40, a.max_entries);
        EXPECT_NE((void*)NULL, a.pd);
    }
    EXPECT_EQ(40u, mkey->max_entries);
    EXPECT_EQ(mmkey(mkey)->ring[0]->lkey, mkey->lkey);
    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, mkey));

    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ops->mkey_create(dev, 0, &mkey));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ops->mkey_create(dev, 65536, &mkey));

    /* a failure in the middle of the ring unwinds what was created */
    fake().mkey_attrs.clear();
    fake().mkey_fail_at = UMR_ENG_MLX5_MKEY_RING + 3;
    EXPECT_EQ(UCS_ERR_NO_MEMORY, ops->mkey_create(dev, 8, &mkey));
    EXPECT_EQ(0, fake().num_mkey);

    /* rdma-core rounds max_entries up to a multiple of 4 in 16 bits
     * (verbs.c _mlx5dv_create_mkey): 65533 would be a key of 0 entries */
    fake().mkey_attrs.clear();
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ops->mkey_create(dev, 65533, &mkey));
    EXPECT_TRUE(fake().mkey_attrs.empty()) << "refused before rdma-core";
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 65532, &mkey));
    EXPECT_EQ(65532u, mkey->max_entries);
    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, mkey));
}

TEST_F(test_engine_mlx5_wrap, key_rotates_on_every_umr)
{
    umr_eng_mkey_t *mkey;
    std::vector<uint32_t> keys;

    open_all();
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 8, &mkey));
    umr_eng_mlx5_mkey_t *m = mmkey(mkey);
    auto e = ilv(1, 64, 64);
    auto s = sges(1, 64);

    keys.push_back(mkey->lkey);
    for (unsigned i = 0; i < 2 * UMR_ENG_MLX5_MKEY_RING; ++i) {
        uint32_t before = mkey->lkey;
        fake().calls.clear();
        ucs_status_t status = (i % 2) ?
            ops->post_umr_list(qp, mkey, 0, 1, s.data(), i, 0) :
            ops->post_umr_interleaved(qp, mkey, 0, 2, 1, e.data(), i, 0);
        ASSERT_EQ(UCS_OK, status) << i;
        auto calls = one_wr();
        ASSERT_EQ(1u, calls.size());
        /* the UMR configured the key the engine now reports */
        EXPECT_EQ(mkey->lkey, calls[0].key) << i;
        EXPECT_NE(before, mkey->lkey) << i;
        EXPECT_EQ(m->ring[(i + 1) % UMR_ENG_MLX5_MKEY_RING]->lkey,
                  mkey->lkey) << i;
        keys.push_back(mkey->lkey);

        /* a LOCAL_INV names the current key */
        fake().calls.clear();
        ASSERT_EQ(UCS_OK, ops->post_local_inv(qp, mkey, 0, 0));
        EXPECT_EQ(mkey->lkey, one_wr()[0].key);

        /* drain: signal nothing, free the slots by hand */
        mqp(qp)->sq_tail = mqp(qp)->sq_head;
    }

    /* a key comes back only after a full ring of reconfigurations */
    for (size_t i = 0; i < keys.size(); ++i) {
        for (size_t j = i + 1; j < keys.size(); ++j) {
            if ((j - i) % UMR_ENG_MLX5_MKEY_RING) {
                EXPECT_NE(keys[i], keys[j]) << i << " vs " << j;
            } else {
                EXPECT_EQ(keys[i], keys[j]) << i << " vs " << j;
            }
        }
    }
    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, mkey));
}

/* ---------------------------------------------------------------------- */
/* send queue accounting and completions                                    */
/* ---------------------------------------------------------------------- */

TEST_F(test_engine_mlx5_wrap, sq_slots_freed_by_signaled_completion)
{
    umr_eng_wc_t wc[4];

    open_all(4);
    auto s = sges(1, 64);
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(UCS_OK, ops->post_rdma(qp, UMR_ENG_OP_RDMA_WRITE, s.data(),
                                         1, 0, 1, 100 + i, 0));
    }
    ASSERT_EQ(UCS_OK, ops->post_rdma(qp, UMR_ENG_OP_RDMA_WRITE, s.data(), 1,
                                     0, 1, 103, UMR_ENG_WR_SIGNALED));
    uint64_t signaled_id = fake().calls[fake().calls.size() - 3].wr_id;

    fake().calls.clear();
    EXPECT_EQ(UCS_ERR_NO_RESOURCE,
              ops->post_rdma(qp, UMR_ENG_OP_RDMA_WRITE, s.data(), 1, 0, 1, 9,
                             0));
    expect_nothing_posted("full send queue");
    EXPECT_EQ(0, ops->cq_poll(cq, wc, 4));
    EXPECT_EQ(UCS_ERR_NO_RESOURCE,
              ops->post_rdma(qp, UMR_ENG_OP_RDMA_WRITE, s.data(), 1, 0, 1, 9,
                             0));

    fake().push_cqe(mcq(cq), { signaled_id, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
                               0 });
    ASSERT_EQ(1, ops->cq_poll(cq, wc, 4));
    EXPECT_EQ(103u, wc[0].wr_id);
    EXPECT_EQ(UMR_ENG_OP_RDMA_WRITE, wc[0].opcode);
    EXPECT_EQ(UMR_ENG_WC_SUCCESS, wc[0].status);
    EXPECT_EQ(qp, wc[0].qp);

    /* the completion freed its slot and the 3 unsignaled ones before it */
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(UCS_OK, ops->post_rdma(qp, UMR_ENG_OP_RDMA_WRITE, s.data(),
                                         1, 0, 1, i, 0)) << i;
    }
    EXPECT_EQ(UCS_ERR_NO_RESOURCE,
              ops->post_rdma(qp, UMR_ENG_OP_RDMA_WRITE, s.data(), 1, 0, 1, 9,
                             0));
}

TEST_F(test_engine_mlx5_wrap, cq_poll_maps_opcodes_and_statuses)
{
    umr_eng_mkey_t *mkey;
    umr_eng_wc_t wc[16];

    open_all(16);
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 8, &mkey));
    auto e = ilv(1, 64, 64);
    auto s = sges(1, 64);

    /* post one WR of each kind, remember their verbs wr_ids */
    std::vector<uint64_t> ids;
    auto posted_id = [&]() {
        for (auto it = fake().calls.rbegin(); it != fake().calls.rend(); ++it) {
            if (it->kind != fake_wr_call::START &&
                it->kind != fake_wr_call::COMPLETE) {
                return it->wr_id;
            }
        }
        return (uint64_t)0;
    };
    ASSERT_EQ(UCS_OK, ops->post_umr_interleaved(qp, mkey, 0, 1, 1, e.data(),
                                                10, UMR_ENG_WR_SIGNALED));
    ids.push_back(posted_id());
    ASSERT_EQ(UCS_OK, ops->post_local_inv(qp, mkey, 11, UMR_ENG_WR_SIGNALED));
    ids.push_back(posted_id());
    ASSERT_EQ(UCS_OK, ops->post_rdma(qp, UMR_ENG_OP_RDMA_WRITE, s.data(), 1,
                                     0, 1, 12, UMR_ENG_WR_SIGNALED));
    ids.push_back(posted_id());
    ASSERT_EQ(UCS_OK, ops->post_rdma(qp, UMR_ENG_OP_RDMA_READ, s.data(), 1,
                                     0, 1, 13, UMR_ENG_WR_SIGNALED));
    ids.push_back(posted_id());

    struct ibv_cq_ex *c = mcq(cq);
    fake().push_cqe(c, { ids[0], IBV_WC_SUCCESS, (ibv_wc_opcode)MLX5DV_WC_UMR,
                         0 });
    fake().push_cqe(c, { ids[1], IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, 0 });
    fake().push_cqe(c, { ids[2], IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 0 });
    fake().push_cqe(c, { ids[3], IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 0 });

    /* max bounds each call; order is kept */
    ASSERT_EQ(3, ops->cq_poll(cq, wc, 3));
    ASSERT_EQ(1, ops->cq_poll(cq, wc + 3, 3));
    EXPECT_EQ(0, ops->cq_poll(cq, wc, 3));
    const umr_eng_opcode_t expected[] = {
        UMR_ENG_OP_UMR, UMR_ENG_OP_LOCAL_INV, UMR_ENG_OP_RDMA_WRITE,
        UMR_ENG_OP_RDMA_READ
    };
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(10u + i, wc[i].wr_id) << i;
        EXPECT_EQ(expected[i], wc[i].opcode) << i;
        EXPECT_EQ(UMR_ENG_WC_SUCCESS, wc[i].status) << i;
        EXPECT_EQ(qp, wc[i].qp) << i;
    }
    EXPECT_EQ(fake().num_start_poll - 1, fake().num_end_poll)
        << "end_poll must follow every successful start_poll only";

    /* errors: the opcode is not valid in the CQE, the engine knows it */
    fake().push_cqe(c, { ids[2], IBV_WC_REM_ACCESS_ERR, (ibv_wc_opcode)0x7f,
                         0x88 });
    fake().push_cqe(c, { ids[3], IBV_WC_WR_FLUSH_ERR, (ibv_wc_opcode)0x7f,
                         0 });
    fake().push_cqe(c, { ids[0], IBV_WC_LOC_QP_OP_ERR, (ibv_wc_opcode)0x7f,
                         0 });
    fake().push_cqe(c, { ids[2], IBV_WC_LOC_QP_OP_ERR, (ibv_wc_opcode)0x7f,
                         0 });
    /* success with an opcode nothing posted */
    fake().push_cqe(c, { ids[2], IBV_WC_SUCCESS, IBV_WC_SEND, 0 });
    fake().push_cqe(c, { ids[2], IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 0 });
    ASSERT_EQ(6, ops->cq_poll(cq, wc, 16));
    EXPECT_EQ(UMR_ENG_WC_REM_ACCESS_ERR, wc[0].status);
    EXPECT_EQ(UMR_ENG_OP_RDMA_WRITE, wc[0].opcode);
    EXPECT_EQ(12u, wc[0].wr_id);
    EXPECT_EQ(UMR_ENG_WC_WR_FLUSH_ERR, wc[1].status);
    EXPECT_EQ(UMR_ENG_OP_RDMA_READ, wc[1].opcode);
    EXPECT_EQ(UMR_ENG_WC_MW_BIND_ERR, wc[2].status);  /* a UMR that failed */
    EXPECT_EQ(UMR_ENG_OP_UMR, wc[2].opcode);
    EXPECT_EQ(UMR_ENG_WC_GENERAL_ERR, wc[3].status);
    EXPECT_EQ(UMR_ENG_WC_GENERAL_ERR, wc[4].status);
    EXPECT_EQ(UMR_ENG_WC_GENERAL_ERR, wc[5].status);  /* opcode mismatch */

    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, mkey));
}

TEST_F(test_engine_mlx5_wrap, cq_poll_errors_and_bounds)
{
    umr_eng_wc_t wc[2];

    open_all();
    int starts = fake().num_start_poll;
    EXPECT_EQ(0, ops->cq_poll(cq, wc, 0));
    EXPECT_EQ(starts, fake().num_start_poll) << "max 0 must not poll";
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ops->cq_poll(cq, wc, -1));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ops->cq_poll(cq, NULL, 2));
    EXPECT_EQ(0, ops->cq_poll(cq, wc, 2));

    fake().start_poll_ret = EIO;
    EXPECT_EQ(UCS_ERR_IO_ERROR, ops->cq_poll(cq, wc, 2));
    EXPECT_EQ(0, fake().num_end_poll);
}

TEST(test_engine_mlx5_status, every_ibv_status_maps)
{
    const struct {
        enum ibv_wc_status  ibv;
        umr_eng_wc_status_t eng;
    } map[] = {
        { IBV_WC_SUCCESS,            UMR_ENG_WC_SUCCESS },
        { IBV_WC_LOC_LEN_ERR,        UMR_ENG_WC_LOC_LEN_ERR },
        { IBV_WC_LOC_QP_OP_ERR,      UMR_ENG_WC_GENERAL_ERR },
        { IBV_WC_LOC_EEC_OP_ERR,     UMR_ENG_WC_GENERAL_ERR },
        { IBV_WC_LOC_PROT_ERR,       UMR_ENG_WC_LOC_PROT_ERR },
        { IBV_WC_WR_FLUSH_ERR,       UMR_ENG_WC_WR_FLUSH_ERR },
        { IBV_WC_MW_BIND_ERR,        UMR_ENG_WC_MW_BIND_ERR },
        { IBV_WC_BAD_RESP_ERR,       UMR_ENG_WC_GENERAL_ERR },
        { IBV_WC_LOC_ACCESS_ERR,     UMR_ENG_WC_LOC_PROT_ERR },
        { IBV_WC_REM_INV_REQ_ERR,    UMR_ENG_WC_REM_OP_ERR },
        { IBV_WC_REM_ACCESS_ERR,     UMR_ENG_WC_REM_ACCESS_ERR },
        { IBV_WC_REM_OP_ERR,         UMR_ENG_WC_REM_OP_ERR },
        { IBV_WC_RETRY_EXC_ERR,      UMR_ENG_WC_RETRY_EXC_ERR },
        { IBV_WC_RNR_RETRY_EXC_ERR,  UMR_ENG_WC_RETRY_EXC_ERR },
        { IBV_WC_LOC_RDD_VIOL_ERR,   UMR_ENG_WC_GENERAL_ERR },
        { IBV_WC_REM_INV_RD_REQ_ERR, UMR_ENG_WC_REM_OP_ERR },
        { IBV_WC_REM_ABORT_ERR,      UMR_ENG_WC_REM_OP_ERR },
        { IBV_WC_INV_EECN_ERR,       UMR_ENG_WC_GENERAL_ERR },
        { IBV_WC_INV_EEC_STATE_ERR,  UMR_ENG_WC_GENERAL_ERR },
        { IBV_WC_FATAL_ERR,          UMR_ENG_WC_GENERAL_ERR },
        { IBV_WC_RESP_TIMEOUT_ERR,   UMR_ENG_WC_RETRY_EXC_ERR },
        { IBV_WC_GENERAL_ERR,        UMR_ENG_WC_GENERAL_ERR },
    };

    for (const auto &m : map) {
        EXPECT_EQ(m.eng, umr_eng_mlx5_wc_status(m.ibv))
            << ibv_wc_status_str(m.ibv);
    }
}

TEST(test_engine_mlx5_ops, table_complete)
{
    const umr_eng_ops_t *ops = &umr_eng_mlx5_ops;

    EXPECT_STREQ("mlx5", ops->name);
    EXPECT_EQ(ops, umr_eng_find("mlx5"));
    const void *const *slot = (const void *const*)&ops->query_devices;
    const void *const *end  = (const void *const*)(ops + 1);
    for (; slot < end; ++slot) {
        EXPECT_NE((const void*)NULL, *slot)
            << "slot " << (slot - (const void *const*)ops);
    }
}

} // namespace
