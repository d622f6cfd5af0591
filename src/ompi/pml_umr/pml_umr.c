/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr: the component's state (pml_umr.h), below every object. The
 * parameters' defaults are set where they are registered
 * (pml_umr_component.c).
 */
#include "pml_umr.h"

mca_pml_umr_globals_t mca_pml_umr;
