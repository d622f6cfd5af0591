/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr fault injection (see osc_umr_fault.h; the test variant's only).
 */
#include "osc_umr_fault.h"

static const char *const mca_osc_umr_fault_names[MCA_OSC_UMR_FAULT_NUM] = {
    "answer", "queue", "kdesc", "tkey", "send", "repost", "drain",
    "pkt", "psend", "pdata"
};

mca_common_umr_fault_t mca_osc_umr_faults = {
    .names = mca_osc_umr_fault_names,
    .n     = MCA_OSC_UMR_FAULT_NUM,
};

void mca_osc_umr_test_register(const mca_base_component_t *c)
{
    mca_common_umr_fault_register(c, &mca_osc_umr_faults,
            "the target side of the key protocol, to test the refusals "
            "(osc_umr_fault.h)");
}

void mca_osc_umr_test_init(void)
{
    mca_common_umr_fault_init(&mca_osc_umr_faults);
}
