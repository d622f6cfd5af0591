/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: its log stream and counters (see common_umr.h).
 */
#include "common_umr.h"

mca_common_umr_t mca_common_umr = {
    .output = -1,
    .who    = "umr",
};

void mca_common_umr_init(int output, const char *who)
{
    mca_common_umr.output = output;
    mca_common_umr.who    = who;
}
