/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr fault injection: its points (see pml_umr_fault.h; the test
 * variant's only).
 */
#include "pml_umr_fault.h"

/* the core's points, by their names there */
mca_common_umr_fault_t mca_pml_umr_faults = {
    .names = umr_mpi_fault_names,
    .n     = MCA_PML_UMR_FAULT_NUM,
};
