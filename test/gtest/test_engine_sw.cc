/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * sw engine: API basics, in one process (QPs connected to themselves).
 */
#include "test_engine_sw.h"

#include <set>

#include <cerrno>
#include <cstddef>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

TEST(test_engine_common, find_and_strings) {
    EXPECT_NE(nullptr, umr_eng_find("sw"));
    EXPECT_STREQ("sw", umr_eng_find("sw")->name);
    EXPECT_EQ(nullptr, umr_eng_find("bogus"));
    EXPECT_EQ(nullptr, umr_eng_find(""));
    EXPECT_EQ(nullptr, umr_eng_find(nullptr));
#if HAVE_UMR_MLX5_ENGINE
    EXPECT_NE(nullptr, umr_eng_find("mlx5"));
#else
    EXPECT_EQ(nullptr, umr_eng_find("mlx5"));
#endif

    std::set<std::string> strs;
    for (int s = UMR_ENG_WC_SUCCESS; s <= UMR_ENG_WC_GENERAL_ERR; ++s) {
        auto st = static_cast<umr_eng_wc_status_t>(s);
        strs.insert(umr_eng_wc_status_str(st));
        if (st == UMR_ENG_WC_SUCCESS) {
            EXPECT_EQ(UCS_OK, umr_eng_wc_status_to_ucs(st));
        } else {
            EXPECT_LT(umr_eng_wc_status_to_ucs(st), UCS_OK) << s;
        }
    }
    EXPECT_EQ(9u, strs.size()) << "every status has its own text";
    EXPECT_EQ(UCS_ERR_CANCELED,
              umr_eng_wc_status_to_ucs(UMR_ENG_WC_WR_FLUSH_ERR));
    EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT,
              umr_eng_wc_status_to_ucs(UMR_ENG_WC_RETRY_EXC_ERR));
    EXPECT_EQ(UCS_ERR_INVALID_ADDR,
              umr_eng_wc_status_to_ucs(UMR_ENG_WC_REM_ACCESS_ERR));
    EXPECT_STREQ("unknown completion status",
                 umr_eng_wc_status_str(static_cast<umr_eng_wc_status_t>(99)));
    EXPECT_STREQ("RDMA_WRITE", umr_eng_opcode_str(UMR_ENG_OP_RDMA_WRITE));
    EXPECT_STREQ("RDMA_READ", umr_eng_opcode_str(UMR_ENG_OP_RDMA_READ));
    EXPECT_STREQ("UMR", umr_eng_opcode_str(UMR_ENG_OP_UMR));
    EXPECT_STREQ("LOCAL_INV", umr_eng_opcode_str(UMR_ENG_OP_LOCAL_INV));
    EXPECT_STREQ("UNKNOWN",
                 umr_eng_opcode_str(static_cast<umr_eng_opcode_t>(42)));
}

TEST_F(test_engine_sw, query_reports_mlx5_limits) {
    umr_eng_caps_t caps;

    ops->dev_query(dev, &caps);
    EXPECT_STREQ("sw", caps.name);
    EXPECT_EQ(51u, caps.max_interleaved);
    EXPECT_EQ(52u, caps.max_list);
    EXPECT_EQ(65535u, caps.max_bytes_count);
    EXPECT_EQ(65535u, caps.max_stride);
    EXPECT_EQ(30u, caps.max_sge);
    EXPECT_EQ(1ull << 30, caps.max_msg);
    EXPECT_GT(caps.max_mkeys, 1000u);
    EXPECT_LE(caps.dev_addr_len, (size_t)UMR_ENG_ADDR_MAX);
    EXPECT_LE(caps.qp_addr_len, (size_t)UMR_ENG_ADDR_MAX);
    EXPECT_GT(caps.dev_addr_len, 0u);
    EXPECT_GT(caps.qp_addr_len, 0u);
}

TEST_F(test_engine_sw, open_bad_name_and_params) {
    umr_eng_dev_t *d = nullptr;
    umr_eng_dev_params_t p = {};

    EXPECT_EQ(UCS_ERR_NO_DEVICE, ops->dev_open("mlx5_0", nullptr, &d));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ops->dev_open(nullptr, nullptr, &d));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ops->dev_open("sw", nullptr, nullptr));
    p.sw_max_keys = 1u << 24;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ops->dev_open("sw", &p, &d));
    EXPECT_EQ(nullptr, d);

    /* a tiny table runs out of keys with a status, not a crash */
    p.sw_max_keys = 2;
    ASSERT_EQ(UCS_OK, ops->dev_open("sw", &p, &d));
    char buf[64];
    umr_eng_mr_t *mr[3] = {};
    EXPECT_EQ(UCS_OK, ops->mr_reg(d, buf, sizeof(buf), 0, &mr[0]));
    EXPECT_EQ(UCS_OK, ops->mr_reg(d, buf, sizeof(buf), 0, &mr[1]));
    EXPECT_EQ(UCS_ERR_NO_RESOURCE, ops->mr_reg(d, buf, sizeof(buf), 0, &mr[2]));
    /* a freed key is reusable, under a new tag */
    uint32_t old = mr[0]->lkey;
    EXPECT_EQ(UCS_OK, ops->mr_dereg(d, mr[0]));
    EXPECT_EQ(UCS_OK, ops->mr_reg(d, buf, sizeof(buf), 0, &mr[0]));
    EXPECT_EQ(old >> 8, mr[0]->lkey >> 8);
    EXPECT_NE(old, mr[0]->lkey);
    EXPECT_EQ(UCS_OK, ops->mr_dereg(d, mr[0]));
    EXPECT_EQ(UCS_OK, ops->mr_dereg(d, mr[1]));
    ops->dev_close(d);
}

TEST_F(test_engine_sw, reachability) {
    char a[UMR_ENG_ADDR_MAX], b[UMR_ENG_ADDR_MAX];
    umr_eng_caps_t caps;

    ops->dev_query(dev, &caps);
    ops->dev_get_addr(dev, a);
    EXPECT_TRUE(ops->dev_is_reachable(dev, a));

    /* another boot id (another host) or another pid namespace */
    for (size_t i = 0; i < 24; i += 8) {
        memcpy(b, a, sizeof(a));
        b[i] ^= 0x5a;
        EXPECT_FALSE(ops->dev_is_reachable(dev, b)) << "byte " << i;
    }
    EXPECT_FALSE(ops->dev_is_reachable(dev, nullptr));
}

TEST_F(test_engine_sw, write_read_contig) {
    std::vector<char> src(8192), dst(8192, 0), back(8192, 0);
    umr_eng_mr_t *msrc, *mdst, *mback;
    umr_eng_qp_t *qp = loopback_qp();
    unsigned rw = UMR_ENG_ACCESS_LOCAL_WRITE | UMR_ENG_ACCESS_REMOTE_WRITE |
                  UMR_ENG_ACCESS_REMOTE_READ;

    ASSERT_NE(nullptr, qp);
    for (size_t i = 0; i < src.size(); ++i) {
        src[i] = (char)(i * 7 + 3);
    }
    ASSERT_EQ(UCS_OK, ops->mr_reg(dev, src.data(), src.size(), 0, &msrc));
    ASSERT_EQ(UCS_OK, ops->mr_reg(dev, dst.data(), dst.size(), rw, &mdst));
    ASSERT_EQ(UCS_OK, ops->mr_reg(dev, back.data(), back.size(), rw, &mback));

    umr_eng_sge_t sge = {(uintptr_t)src.data() + 100, 5000, msrc->lkey};
    ASSERT_EQ(UCS_OK, ops->post_rdma(qp, UMR_ENG_OP_RDMA_WRITE, &sge, 1,
                                     (uintptr_t)dst.data() + 10, mdst->rkey,
                                     1, UMR_ENG_WR_SIGNALED));
    /* never inline: nothing moved before the CQ is polled */
    EXPECT_EQ(0, dst[10]);
    ASSERT_EQ(UMR_ENG_WC_SUCCESS, complete_one(cq, 1));
    EXPECT_EQ(0, memcmp(dst.data() + 10, src.data() + 100, 5000));
    EXPECT_EQ(std::vector<char>(10, 0),
              std::vector<char>(dst.begin(), dst.begin() + 10));
    EXPECT_EQ(std::vector<char>(dst.size() - 5010, 0),
              std::vector<char>(dst.begin() + 5010, dst.end()));

    /* read back, two SGEs */
    umr_eng_sge_t sges[2] = {{(uintptr_t)back.data(), 3000, mback->lkey},
                             {(uintptr_t)back.data() + 4000, 2000,
                              mback->lkey}};
    ASSERT_EQ(UCS_OK, ops->post_rdma(qp, UMR_ENG_OP_RDMA_READ, sges, 2,
                                     (uintptr_t)dst.data() + 10, mdst->rkey,
                                     2, UMR_ENG_WR_SIGNALED));
    ASSERT_EQ(UMR_ENG_WC_SUCCESS, complete_one(cq, 2));
    EXPECT_EQ(0, memcmp(back.data(), src.data() + 100, 3000));
    EXPECT_EQ(0, memcmp(back.data() + 4000, src.data() + 3100, 2000));
    EXPECT_EQ(0, back[3500]);

    ops->qp_destroy(qp);
    EXPECT_EQ(UCS_OK, ops->mr_dereg(dev, msrc));
    EXPECT_EQ(UCS_OK, ops->mr_dereg(dev, mdst));
    EXPECT_EQ(UCS_OK, ops->mr_dereg(dev, mback));
}

TEST_F(test_engine_sw, umr_interleaved_list_nested) {
    const size_t size = 4096;
    std::vector<unsigned char> mem(size, 0xee), src(size);
    umr_eng_mr_t *mr, *msrc;
    umr_eng_mkey_t *strided, *list, *top;
    umr_eng_qp_t *qp = loopback_qp();
    unsigned rw = UMR_ENG_ACCESS_LOCAL_WRITE | UMR_ENG_ACCESS_REMOTE_WRITE |
                  UMR_ENG_ACCESS_REMOTE_READ;

    ASSERT_NE(nullptr, qp);
    for (size_t i = 0; i < size; ++i) {
        src[i] = (unsigned char)(i % 251);
    }
    ASSERT_EQ(UCS_OK, ops->mr_reg(dev, mem.data(), size, rw, &mr));
    ASSERT_EQ(UCS_OK, ops->mr_reg(dev, src.data(), size, 0, &msrc));
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 4, &strided));
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 4, &list));
    ASSERT_EQ(UCS_OK, ops->mkey_create(dev, 4, &top));

    /* strided: 3 x (8 bytes at 0 + 4 bytes at 1000), periods 16 and 12 */
    umr_eng_interleaved_t il[2] = {
        {(uintptr_t)mem.data(), 8, 8, mr->lkey},
        {(uintptr_t)mem.data() + 1000, 4, 8, mr->lkey}};
    uint32_t before = strided->lkey;
    ASSERT_EQ(UCS_OK, ops->post_umr_interleaved(qp, strided, rw, 3, 2, il, 10,
                                                UMR_ENG_WR_SIGNALED));
    EXPECT_NE(before, strided->lkey) << "UMR rotates the tag";
    EXPECT_EQ(before >> 8, strided->lkey >> 8);
    EXPECT_EQ(strided->lkey, strided->rkey);
    /* list: 5 bytes at 2000, then 7 bytes at 3000 */
    umr_eng_sge_t ls[2] = {{(uintptr_t)mem.data() + 2000, 5, mr->lkey},
                           {(uintptr_t)mem.data() + 3000, 7, mr->lkey}};
    ASSERT_EQ(UCS_OK, ops->post_umr_list(qp, list, rw, 2, ls, 11,
                                         UMR_ENG_WR_SIGNALED));
    /* top: list over both (zero-based offsets into the children) */
    umr_eng_sge_t ts[2] = {{4, 30, strided->lkey}, {0, 12, list->lkey}};
    ASSERT_EQ(UCS_OK, ops->post_umr_list(qp, top, rw, 2, ts, 12,
                                         UMR_ENG_WR_SIGNALED));
    auto wcs = poll_n(cq, 3);
    ASSERT_EQ(3u, wcs.size());
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(10 + i, wcs[i].wr_id);
        EXPECT_EQ(UMR_ENG_OP_UMR, wcs[i].opcode);
        EXPECT_EQ(UMR_ENG_WC_SUCCESS, wcs[i].status);
        EXPECT_EQ(qp, wcs[i].qp);
    }

    /* write 42 bytes of top from src */
    umr_eng_sge_t sge = {(uintptr_t)src.data(), 42, msrc->lkey};
    ASSERT_EQ(UCS_OK, ops->post_rdma(qp, UMR_ENG_OP_RDMA_WRITE, &sge, 1, 0,
                                     top->rkey, 13, UMR_ENG_WR_SIGNALED));
    ASSERT_EQ(UMR_ENG_WC_SUCCESS, complete_one(cq, 13));

    /* expected: strided stream = s[0..8)=mem[0..8), s[8..12)=mem[1000..1004),
     * s[12..20)=mem[16..24), s[20..24)=mem[1012..1016), s[24..32)=mem[32..40),
     * s[32..36)=mem[1024..1028); top[0..30) = strided[4..34). */
    std::vector<unsigned char> exp(size, 0xee);
    std::vector<size_t> sstream;
    for (size_t r = 0; r < 3; ++r) {
        for (size_t i = 0; i < 8; ++i) sstream.push_back(r * 16 + i);
        for (size_t i = 0; i < 4; ++i) sstream.push_back(1000 + r * 12 + i);
    }
    std::vector<size_t> top_stream(sstream.begin() + 4, sstream.begin() + 34);
    for (size_t i = 0; i < 5; ++i) top_stream.push_back(2000 + i);
    for (size_t i = 0; i < 7; ++i) top_stream.push_back(3000 + i);
    ASSERT_EQ(42u, top_stream.size());
    for (size_t i = 0; i < 42; ++i) {
        exp[top_stream[i]] = src[i];
    }
    for (size_t i = 0; i < size; ++i) {
        ASSERT_EQ(exp[i], mem[i]) << "byte " << i;
    }

    /* and read it back through the same key into a fresh buffer */
    std::vector<unsigned char> back(64, 0);
    umr_eng_mr_t *mback;
    ASSERT_EQ(UCS_OK, ops->mr_reg(dev, back.data(), back.size(),
                                  UMR_ENG_ACCESS_LOCAL_WRITE, &mback));
    umr_eng_sge_t bs = {(uintptr_t)back.data() + 1, 40, mback->lkey};
    ASSERT_EQ(UCS_OK, ops->post_rdma(qp, UMR_ENG_OP_RDMA_READ, &bs, 1, 2,
                                     top->rkey, 14, UMR_ENG_WR_SIGNALED));
    ASSERT_EQ(UMR_ENG_WC_SUCCESS, complete_one(cq, 14));
    EXPECT_EQ(0, back[0]);
    EXPECT_EQ(0, memcmp(back.data() + 1, src.data() + 2, 40));
    EXPECT_EQ(0, back[41]);

    ops->qp_destroy(qp);
    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, top));
    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, list));
    EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, strided));
    EXPECT_EQ(UCS_OK, ops->mr_dereg(dev, mr));
    EXPECT_EQ(UCS_OK, ops->mr_dereg(dev, msrc));
    EXPECT_EQ(UCS_OK, ops->mr_dereg(dev, mback));
}

/* Where cross-memory attach is forbidden (here by seccomp, in a child), the
 * engine reports no device and refuses to open one: no crash, no error. */
TEST(test_engine_sw_probe, no_cma_no_device) {
    umr_test::proc child([](umr_test::proc &) {
        struct sock_filter filter[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                     offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_writev, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = {sizeof(filter) / sizeof(filter[0]), filter};
        const umr_eng_ops_t *ops = umr_eng_find("sw");
        char names[2][UMR_ENG_NAME_MAX];
        umr_eng_dev_t *dev = nullptr;
        unsigned num       = 7;

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
            return 10;
        }
        EXPECT_EQ(UCS_OK, ops->query_devices(names, 2, &num));
        EXPECT_EQ(0u, num);
        EXPECT_EQ(UCS_ERR_UNSUPPORTED, ops->dev_open("sw", nullptr, &dev));
        EXPECT_EQ(nullptr, dev);
        return 0;
    });
    EXPECT_TRUE(child.join());
}

/* Keys are recycled FIFO: a freed index comes back only after every other
 * freed one, under a new tag; churn never exhausts the table. */
TEST_F(test_engine_sw, key_churn_recycles_fifo) {
    umr_eng_dev_params_t p = {};
    umr_eng_dev_t *d;
    char buf[64];
    p.sw_max_keys = 8;
    ASSERT_EQ(UCS_OK, ops->dev_open("sw", &p, &d));
    std::vector<umr_eng_mr_t*> mrs(8);
    for (auto &m : mrs) {
        ASSERT_EQ(UCS_OK, ops->mr_reg(d, buf, sizeof(buf), 0, &m));
    }
    std::vector<uint32_t> freed;
    for (int round = 0; round < 1000; ++round) {
        size_t i = (round * 5) % mrs.size();
        freed.push_back(mrs[i]->lkey);
        ASSERT_EQ(UCS_OK, ops->mr_dereg(d, mrs[i]));
        ASSERT_EQ(UCS_OK, ops->mr_reg(d, buf, sizeof(buf), 0, &mrs[i]));
        EXPECT_EQ(freed.front() >> 8, mrs[i]->lkey >> 8) << round;
        EXPECT_NE(freed.front(), mrs[i]->lkey) << round;
        freed.erase(freed.begin());
    }
    /* several pending: handed out in the order they were freed */
    const size_t order[4] = {3, 1, 0, 2};
    std::vector<uint32_t> idx;
    for (size_t i : order) {
        idx.push_back(mrs[i]->lkey >> 8);
        ASSERT_EQ(UCS_OK, ops->mr_dereg(d, mrs[i]));
    }
    for (size_t k = 0; k < 4; ++k) {
        ASSERT_EQ(UCS_OK, ops->mr_reg(d, buf, sizeof(buf), 0, &mrs[order[k]]));
        EXPECT_EQ(idx[k], mrs[order[k]]->lkey >> 8) << k;
    }
    for (auto m : mrs) {
        EXPECT_EQ(UCS_OK, ops->mr_dereg(d, m));
    }
    ops->dev_close(d);
}
