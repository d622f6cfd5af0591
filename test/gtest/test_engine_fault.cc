/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * The test variant's fault injection in the engines (engine_fault.h): the
 * knob's syntax, and the wrapping table (test_pml_umr_fallback.sh and
 * test_pml_umr_model_faults.sh inject each point in real jobs).
 */
#include <gtest/gtest.h>

extern "C" {
#include "engine_fault.h"
}

#include <stdlib.h>

TEST(engine_fault, parse)
{
    unsigned long after = 99;
    int point           = -1;

    EXPECT_EQ(0, umr_eng_fault_parse("connect", &point, &after));
    EXPECT_EQ(UMR_ENG_FAULT_CONNECT, point);
    EXPECT_EQ(0ul, after);
    EXPECT_EQ(0, umr_eng_fault_parse("mdwait:3", &point, &after));
    EXPECT_EQ(UMR_ENG_FAULT_MDWAIT, point);
    EXPECT_EQ(3ul, after);
    EXPECT_EQ(0, umr_eng_fault_parse("completion:0", &point, &after));
    EXPECT_EQ(UMR_ENG_FAULT_COMPLETION, point);
    EXPECT_EQ(0, umr_eng_fault_parse("key", &point, &after));
    EXPECT_EQ(UMR_ENG_FAULT_KEY, point);
    EXPECT_EQ(0, umr_eng_fault_parse("post:12", &point, &after));
    EXPECT_EQ(UMR_ENG_FAULT_POST, point);
    EXPECT_EQ(12ul, after);
    for (const char *bad : {"", "con", "connects", "post:", "key:x", "key:-1",
                            "completion:5x", ":3", "mdwait:3:4"}) {
        EXPECT_EQ(-1, umr_eng_fault_parse(bad, &point, &after)) << bad;
    }
}

/* post:2: the first two posts pass, every later one fails; no other point
 * fails; the wrapping table is the engine's but for the wrapped calls. */
TEST(engine_fault, wrap_and_count)
{
    const umr_eng_ops_t *w;

    setenv(UMR_ENG_FAULT_ENV, "post:2", 1);
    w = umr_eng_fault_wrap(&umr_eng_sw_ops);
    unsetenv(UMR_ENG_FAULT_ENV);
    ASSERT_NE(&umr_eng_sw_ops, w);
    EXPECT_EQ(UMR_ENG_ID_SW, w->id);
    EXPECT_EQ(&umr_eng_sw_ops, umr_eng_fault_unwrap(w));
    EXPECT_EQ(&umr_eng_sw_ops, umr_eng_fault_unwrap(&umr_eng_sw_ops));
    EXPECT_EQ(umr_eng_sw_ops.dev_open, w->dev_open);
    EXPECT_EQ(umr_eng_sw_ops.post_umr_list, w->post_umr_list);
    EXPECT_NE(umr_eng_sw_ops.post_rdma, w->post_rdma);
    EXPECT_NE(umr_eng_sw_ops.qp_connect, w->qp_connect);
    EXPECT_EQ(w, umr_eng_fault_wrap(&umr_eng_sw_ops));   /* one table */
    EXPECT_FALSE(UMR_ENG_FAULT(UMR_ENG_FAULT_CONNECT));
    EXPECT_FALSE(UMR_ENG_FAULT(UMR_ENG_FAULT_MDWAIT));
    EXPECT_FALSE(UMR_ENG_FAULT(UMR_ENG_FAULT_POST));
    EXPECT_FALSE(UMR_ENG_FAULT(UMR_ENG_FAULT_POST));
    EXPECT_TRUE(UMR_ENG_FAULT(UMR_ENG_FAULT_POST));
    EXPECT_TRUE(UMR_ENG_FAULT(UMR_ENG_FAULT_POST));
    EXPECT_FALSE(UMR_ENG_FAULT(UMR_ENG_FAULT_KEY));
}
