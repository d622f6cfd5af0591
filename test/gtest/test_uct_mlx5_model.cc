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

    /* the md's loopback QP: one 1 KiB UMR WQE, i.e. 52 list / 51
     * interleaved entries (providers/mlx5/verbs.c, mlx5_calc_send_wqe) */
    ASSERT_GE(fake().qp_attrs.size(), 1u);
    EXPECT_EQ(828u, fake().qp_attrs[0].cap.max_inline_data);

    /* (a call into the md also links the transport's objects in) */
    uct_umr_md_stats_t stats;
    ASSERT_UCS_OK(uct_umr_md_get_stats(s.md, &stats));
    EXPECT_EQ(0u, stats.mkeys_created);

    uct_ep_h ep = s.create_ep();
    ASSERT_NE(nullptr, ep);
    ASSERT_EQ(2u, fake().qp_attrs.size());
    EXPECT_EQ(828u, fake().qp_attrs[1].cap.max_inline_data);
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

} // namespace
