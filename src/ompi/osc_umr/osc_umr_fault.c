/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr fault injection (see osc_umr_fault.h).
 */
#include "osc_umr_fault.h"
#include "common_umr.h"

static const char *const mca_osc_umr_fault_names[MCA_OSC_UMR_FAULT_NUM] = {
    "answer", "queue", "kdesc", "tkey", "send", "repost", "drain",
    "pkt", "psend", "pdata"
};

mca_common_umr_fault_t mca_osc_umr_faults = {
    .names = mca_osc_umr_fault_names,
    .n     = MCA_OSC_UMR_FAULT_NUM,
};
