/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr fault injection (see pml_umr_fault.h).
 */
#include <stddef.h>

#include "pml_umr_fault.h"
#include "common_umr.h"

unsigned mca_pml_umr_fault_mask;

static const char *const mca_pml_umr_fault_names[MCA_PML_UMR_FAULT_NUM] = {
    "connect", "key", "mdwait", "post", "completion", "ctlsend",
    "ackpost", "norail"
};

int mca_pml_umr_fault_init(const char *spec, char *why, size_t len)
{
    return mca_common_umr_fault_parse(spec, mca_pml_umr_fault_names,
                                      MCA_PML_UMR_FAULT_NUM,
                                      &mca_pml_umr_fault_mask, why, len);
}
