/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Probes of mlx5_umr iface internals (see umr_test_probe.h).
 */
#include "umr_config.h"

#include "umr_test_probe.h"

#include "umr_iface.h"

int umr_test_iface_progress_armed(uct_iface_h tl_iface)
{
    uct_mlx5_umr_iface_t *iface = ucs_derived_of(tl_iface,
                                                 uct_mlx5_umr_iface_t);

    return iface->super.prog.id != UCS_CALLBACKQ_ID_NULL;
}

unsigned umr_test_iface_pending_eps(uct_iface_h tl_iface)
{
    uct_mlx5_umr_iface_t *iface = ucs_derived_of(tl_iface,
                                                 uct_mlx5_umr_iface_t);

    return ucs_list_length(&iface->pending_eps);
}
