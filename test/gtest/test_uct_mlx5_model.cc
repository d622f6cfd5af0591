/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr UCT transport on the mlx5 engine, linked against the model of
 * rdma-core 44 (test/common/umr_test_verbs_fake.*, -Wl,--wrap): what the
 * transport asks of rdma-core when it opens, registers and connects, with
 * no device present.
 */
#include "umr_test_uct.h"
#include "umr_test_verbs_fake.h"

#include "uct_umr.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <errno.h>
#include <string.h>
#include <ucs/sys/compiler_def.h>

using namespace umr_test;

namespace {

class test_uct_mlx5_model : public ::testing::Test {
protected:
    void SetUp() override
    {
        fake().reset();
    }
};

/* Finding 1 of issue 10: the md sized its UMR QPs with max(interleaved,
 * list) = 52 entries and the mlx5 engine read that as 52 interleaved
 * entries (more than a 1 KiB WQE holds), so uct_md_open failed with
 * UCS_ERR_EXCEEDS_LIMIT on every ConnectX. */
TEST_F(test_uct_mlx5_model, md_iface_ep_open)
{
    uct_stack s;

    ASSERT_UCS_OK(s.open("mlx5_0"));

    /* the md's loopback QP (after dev_open's probe of the largest WQE):
     * one 1 KiB UMR WQE, i.e. 52 list / 51 interleaved entries
     * (providers/mlx5/verbs.c, mlx5_calc_send_wqe) */
    ASSERT_EQ(2u, fake().qp_attrs.size()) << "the probe's, the md's";
    EXPECT_EQ(828u, fake().qp_attrs[1].cap.max_inline_data);

    /* (a call into the md also links the transport's objects in) */
    uct_umr_md_stats_t stats;
    ASSERT_UCS_OK(uct_umr_md_get_stats(s.md, &stats));
    EXPECT_EQ(0u, stats.mkeys_created);

    uct_ep_h ep = s.create_ep();
    ASSERT_NE(nullptr, ep);
    ASSERT_EQ(3u, fake().qp_attrs.size());
    EXPECT_EQ(828u, fake().qp_attrs[2].cap.max_inline_data);
    s.destroy_ep(ep);
}

/* Finding 5 of issue 10: a 1 KiB UMR WQE is 16 basic blocks and rdma-core
 * caps the SQ in blocks, so a TX_QUEUE_LEN above max_qp_wr / 16 failed QP
 * creation (EINVAL); the iface now clamps it to the engine's caps. */
TEST_F(test_uct_mlx5_model, tx_queue_len_above_sq_blocks)
{
    uct_stack s;

    ASSERT_UCS_OK(s.open("mlx5_0", {}, {{"TX_QUEUE_LEN", "4096"}}));
    uct_ep_h ep = s.create_ep();
    ASSERT_NE(nullptr, ep);
    EXPECT_LE(fake().qp_attrs.back().cap.max_send_wr, 2048u);
    s.destroy_ep(ep);
}

/* Finding 8 of issue 19: the device's max_qp bounds the endpoints (the
 * iface's max_num_eps), from which pml/umr derives its budget of connected
 * peers; a device that reports none leaves UCX's own bound. */
TEST_F(test_uct_mlx5_model, max_num_eps_is_device_max_qp)
{
    uct_iface_attr_t attr;

    {
        fake().dev_attr.orig_attr.max_qp = 1000;
        uct_stack s;
        ASSERT_UCS_OK(s.open("mlx5_0"));
        ASSERT_UCS_OK(uct_iface_query(s.iface, &attr));
        EXPECT_EQ(1000u, attr.max_num_eps);
    }
    {
        fake().dev_attr.orig_attr.max_qp = 0;
        uct_stack s;
        ASSERT_UCS_OK(s.open("mlx5_0"));
        ASSERT_UCS_OK(uct_iface_query(s.iface, &attr));
        EXPECT_GT(attr.max_num_eps, (size_t)UINT32_MAX) << "UCX's default";
    }
}

/* Finding 8 of issue 19, data QPs sized for what they post: with
 * UCX_MLX5_UMR_EP_UMR=n the endpoint's QP asks rdma-core for the RDMA send
 * operations alone (no LOCAL_INV, no mlx5 UMR operations, no inline room),
 * and its send queue is what the model's rules R1-R4 (verbs.c
 * _sq_overhead, mlx5_calc_send_wqe, mlx5_calc_sq_size) give for RDMA WQEs.
 * The figure the transport reports per endpoint (uct_umr_iface_query,
 * pml/umr's budget line) is the model's, in both configurations. */
TEST_F(test_uct_mlx5_model, ep_qp_sized_for_rdma_only)
{
    /* R1: struct mlx5_wqe_ctrl_seg 16 B, mlx5_wqe_raddr_seg 16 B; a UMR
     * WQE adds mlx5_wqe_umr_ctrl_seg 48 + mlx5_wqe_mkey_context_seg 64 +
     * 64 (klm, at least 64) to the ctrl segment; mlx5_wqe_data_seg 16 B an
     * SGE; inline data after a 4 B header, 16 B aligned. R4: 64 B basic
     * blocks, the queue roundup_pow_of_two(WRs x WQE) */
    const uint64_t ctrl = 16, raddr = 16, umr = 16 + 48 + 64 + 64, sge = 16;
    const uint64_t bb = 64, wrs = 256;
    auto align = [](uint64_t v, uint64_t a) { return (v + a - 1) / a * a; };
    auto pow2  = [](uint64_t v) { uint64_t p = 1; while (p < v) p <<= 1;
                                  return p; };
    /* RDMA only, 4 SGEs: 32 + 64 = 96 -> 128 B, x 256 = 32 KiB */
    const uint64_t rdma_sq = pow2(wrs * align(ctrl + raddr + 4 * sge, bb));
    /* with UMR: 52 list entries inline, 16 x 52 - 4 B -> 192 + 832 = 1 KiB
     * (30 SGEs, 192 + 480, are fewer), x 256 = 256 KiB */
    const uint64_t umr_sq  = pow2(wrs * align(std::max(umr + 30 * sge,
                                  umr + align(4 + 16 * 52 - 4, 16)), bb));
    ASSERT_EQ(32768u, rdma_sq);
    ASSERT_EQ(262144u, umr_sq);

    for (const char *ep_umr : {"n", "y"}) {
        SCOPED_TRACE(std::string("EP_UMR=") + ep_umr);
        bool rdma_only = !strcmp(ep_umr, "n");
        fake().reset();
        uct_stack s;
        ASSERT_UCS_OK(s.open("mlx5_0", {}, {{"EP_UMR", ep_umr}}));
        uct_umr_iface_attr_t attr;
        ASSERT_UCS_OK(uct_umr_iface_query(s.iface, &attr));
        size_t before = fake().qp_attrs.size();
        uct_ep_h ep   = s.create_ep();
        ASSERT_NE(nullptr, ep);
        ASSERT_EQ(before + 1, fake().qp_attrs.size());

        const struct ibv_qp_init_attr_ex &qa = fake().qp_attrs.back();
        const struct mlx5dv_qp_init_attr &dv = fake().dv_qp_attrs.back();
        EXPECT_EQ(wrs, qa.cap.max_send_wr);
        EXPECT_EQ(rdma_only ? 4u : 30u, qa.cap.max_send_sge);
        if (rdma_only) {
            EXPECT_EQ(0u, qa.cap.max_inline_data);
            EXPECT_EQ((uint64_t)(IBV_QP_EX_WITH_RDMA_WRITE |
                                 IBV_QP_EX_WITH_RDMA_READ), qa.send_ops_flags)
                    << "LOCAL_INV alone would size UMR WQEs (R1)";
            EXPECT_FALSE((dv.comp_mask &
                          MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS) &&
                         dv.send_ops_flags) << "no mlx5 send operations";
        } else {
            EXPECT_EQ(828u, qa.cap.max_inline_data);
            EXPECT_TRUE(dv.send_ops_flags & MLX5DV_QP_EX_WITH_MR_LIST);
        }
        /* the model's send queue, and the transport's figure */
        EXPECT_EQ(rdma_only ? rdma_sq : umr_sq, fake().qp_sq_bytes.back());
        EXPECT_EQ(fake().qp_sq_bytes.back(), attr.ep_sq_bytes);
        EXPECT_EQ(rdma_only ? 0 : 1, attr.ep_umr);
        s.destroy_ep(ep);
    }
}

/* Finding 6 of issue 10: ibv_wr_complete ENOMEM (rdma-core's send queue
 * full) is UCS_ERR_NO_RESOURCE, not an I/O error that fails the endpoint:
 * the put is retried through the pending queue and its bytes arrive. */
TEST_F(test_uct_mlx5_model, wr_complete_enomem_recovers_through_pending)
{
    uct_stack s;
    std::vector<uint8_t> src(4096), dst(4096, 0);
    uct_mem_h smemh, dmemh;
    uct_rkey_bundle_t rkey;

    for (size_t i = 0; i < src.size(); ++i) {
        src[i] = (uint8_t)(i * 13 + 5);
    }
    ASSERT_UCS_OK(s.open("mlx5_0"));
    uct_ep_h a = s.create_ep(), b = s.create_ep();
    ASSERT_UCS_OK(s.connect(a, s.dev_addr(), s.ep_addr(b)));
    ASSERT_UCS_OK(s.connect(b, s.dev_addr(), s.ep_addr(a)));
    ASSERT_UCS_OK(s.reg(src.data(), src.size(), &smemh));
    ASSERT_UCS_OK(s.reg(dst.data(), dst.size(), &dmemh));
    ASSERT_UCS_OK(s.unpack(s.pack(dmemh), &rkey));

    struct pending_put {
        uct_pending_req_t uct;
        uct_ep_h          ep;
        uct_iov_t         iov;
        uint64_t          raddr;
        uct_rkey_t        rkey;
        test_comp         *comp;
        int               calls = 0;
        ucs_status_t      last  = UCS_OK;
    } req;
    test_comp comp;

    req.ep    = a;
    req.iov   = {src.data(), src.size(), smemh, 0, 1};
    req.raddr = (uintptr_t)dst.data();
    req.rkey  = rkey.rkey;
    req.comp  = &comp;
    req.uct.func = [](uct_pending_req_t *self) -> ucs_status_t {
        pending_put *r = ucs_container_of(self, pending_put, uct);
        ++r->calls;
        r->last = uct_ep_put_zcopy(r->ep, &r->iov, 1, r->raddr, r->rkey,
                                   &r->comp->uct);
        return (r->last == UCS_INPROGRESS) ? UCS_OK : r->last;
    };

    fake().wr_complete_ret        = ENOMEM;   /* the next post only */
    fake().wr_complete_fail_times = 1;
    ucs_status_t st = uct_ep_put_zcopy(a, &req.iov, 1, req.raddr, req.rkey,
                                       &comp.uct);
    ASSERT_EQ(UCS_ERR_NO_RESOURCE, st) << ucs_status_string(st);

    /* as UCT asks: queue it; if the ep says it has room, retry now */
    st = uct_ep_pending_add(a, &req.uct, 0);
    if (st == UCS_ERR_BUSY) {
        ASSERT_UCS_OK(req.uct.func(&req.uct));
    } else {
        ASSERT_UCS_OK(st);
        for (int i = 0; (i < 100000) && (req.calls == 0); ++i) {
            s.progress();
        }
        ASSERT_EQ(1, req.calls);
        ASSERT_UCS_OK(req.last == UCS_INPROGRESS ? UCS_OK : req.last);
    }
    ASSERT_TRUE(s.wait(comp));
    EXPECT_EQ(UCS_OK, comp.status);
    EXPECT_EQ(src, dst);

    s.release(&rkey);
    ASSERT_UCS_OK(s.dereg(smemh));
    ASSERT_UCS_OK(s.dereg(dmemh));
    s.destroy_ep(a);
    s.destroy_ep(b);
}

} // namespace
