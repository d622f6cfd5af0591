/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr fault injection (see osc_umr_fault.h).
 */
#include "osc_umr_fault.h"
#include "common_umr.h"

unsigned mca_osc_umr_fault_mask;

static const char *const mca_osc_umr_fault_names[MCA_OSC_UMR_FAULT_NUM] = {
    "answer", "queue", "kdesc", "tkey", "send", "repost",
    "drain"
};

int mca_osc_umr_fault_init(const char *spec, char *why, size_t len)
{
    return mca_common_umr_fault_parse(spec, mca_osc_umr_fault_names,
                                      MCA_OSC_UMR_FAULT_NUM,
                                      &mca_osc_umr_fault_mask, why, len);
}
