/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr: the component's state (pml_umr.h), below every object.
 */
#include "pml_umr.h"
#include "pml_umr_choose.h"
#include "pml_umr_wire.h"

mca_pml_umr_globals_t mca_pml_umr = {
    .enable     = 1,
    .zcopy_mode = MCA_PML_UMR_ZCOPY_AUTO,
    .min_size   = MCA_PML_UMR_CTL_SIZE,
};
