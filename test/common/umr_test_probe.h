/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Probes of mlx5_umr iface internals for transport tests (state that the UCT
 * API does not show): whether progress is registered with the worker, and
 * how many endpoints the pending dispatch visits.
 */
#ifndef UMR_TEST_PROBE_H_
#define UMR_TEST_PROBE_H_

#include <uct/api/uct.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if the iface's progress callback is registered with its worker. */
int umr_test_iface_progress_armed(uct_iface_h iface);

/* Endpoints on the iface's pending dispatch list. */
unsigned umr_test_iface_pending_eps(uct_iface_h iface);

#ifdef __cplusplus
}
#endif

#endif
