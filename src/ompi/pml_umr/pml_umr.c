/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr: the component's state (pml_umr.h), below every object.
 */
#include "pml_umr.h"
#include "umr_mpi_choice.h"

mca_pml_umr_globals_t mca_pml_umr = {
    .enable     = 1,
    .zcopy_mode = UMR_MPI_ZCOPY_AUTO,
    .min_size   = UMR_MPI_CTL_SIZE,
};
