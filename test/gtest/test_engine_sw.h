/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Fixture and helpers of the sw engine suites (test_engine_sw*.cc).
 */
#ifndef TEST_ENGINE_SW_H_
#define TEST_ENGINE_SW_H_

#include "umr_config.h"

#include "engine.h"
#include "umr_test_proc.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

class test_engine_sw : public ::testing::Test {
protected:
    const umr_eng_ops_t *ops;
    umr_eng_dev_t       *dev;
    umr_eng_cq_t        *cq;

    test_engine_sw() : ops(nullptr), dev(nullptr), cq(nullptr) {}

    void SetUp() override {
        char names[4][UMR_ENG_NAME_MAX];
        unsigned num = 0;

        ops = umr_eng_find("sw");
        ASSERT_NE(nullptr, ops);
        ASSERT_EQ(UCS_OK, ops->query_devices(names, 4, &num));
        /* The sw engine runs wherever cross-memory attach works, which
         * includes CI: no device here is a failure, not a skip. */
        ASSERT_EQ(1u, num) << "cross-memory attach unavailable";
        ASSERT_STREQ("sw", names[0]);
        ASSERT_EQ(UCS_OK, ops->dev_open("sw", nullptr, &dev));
        ASSERT_EQ(UCS_OK, ops->cq_create(dev, 1024, &cq));
    }

    void TearDown() override {
        if (cq != nullptr) {
            ops->cq_destroy(cq);
        }
        if (dev != nullptr) {
            ops->dev_close(dev);
        }
    }

    static umr_eng_qp_params_t qp_params(unsigned sq_size = 256) {
        umr_eng_qp_params_t p = {};
        p.sq_size         = sq_size;
        p.max_sge         = 16;
        p.umr_list_entries = 52;
        return p;
    }

    /* A QP connected to itself: remote keys are our own keys. */
    umr_eng_qp_t *loopback_qp(unsigned sq_size = 256) {
        umr_eng_qp_params_t p = qp_params(sq_size);
        char daddr[UMR_ENG_ADDR_MAX], qaddr[UMR_ENG_ADDR_MAX];
        umr_eng_qp_t *qp      = nullptr;

        EXPECT_EQ(UCS_OK, ops->qp_create(dev, cq, &p, &qp));
        if (qp == nullptr) {
            return nullptr;
        }
        ops->dev_get_addr(dev, daddr);
        ops->qp_get_addr(qp, qaddr);
        EXPECT_EQ(UCS_OK, ops->qp_connect(qp, daddr, qaddr));
        return qp;
    }

    /* Poll `cq` until `n` completions arrived (or the timeout). */
    std::vector<umr_eng_wc_t> poll_n(umr_eng_cq_t *c, size_t n,
                                     double timeout = 10.0) {
        std::vector<umr_eng_wc_t> out;
        umr_eng_wc_t wcs[16];
        double deadline = now() + umr_test::proc::scaled(timeout);
        int ret;

        while ((out.size() < n) && (now() < deadline)) {
            ret = ops->cq_poll(c, wcs, 16);
            EXPECT_GE(ret, 0);
            if (ret < 0) {
                break;
            }
            out.insert(out.end(), wcs, wcs + ret);
        }
        EXPECT_EQ(n, out.size()) << "completions missing after " << timeout
                                 << " s";
        return out;
    }

    /* Post-and-complete one signaled WR; returns its completion status. */
    umr_eng_wc_status_t complete_one(umr_eng_cq_t *c, uint64_t wr_id) {
        std::vector<umr_eng_wc_t> wcs = poll_n(c, 1);
        if (wcs.empty()) {
            return UMR_ENG_WC_GENERAL_ERR;
        }
        EXPECT_EQ(wr_id, wcs[0].wr_id);
        return wcs[0].status;
    }

    static double now() {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec * 1e-9;
    }
};

#endif
