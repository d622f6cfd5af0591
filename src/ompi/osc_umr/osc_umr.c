/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: the component's state (osc_umr.h), apart from the component
 * structure so that every object uses it from above.
 */
#include "osc_umr.h"

mca_osc_umr_t mca_osc_umr;
