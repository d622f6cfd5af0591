/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Fault injection under an mlx5_umr md (transport tests): replaces the md's
 * engine ops with wrappers that fail on request and count what was created
 * and destroyed, so error paths of the md can be driven without a broken
 * device. Only the md's own objects (its UMR QP/CQ, keys, registrations) go
 * through the wrappers: ifaces opened before the install keep the real ops.
 */
#ifndef UMR_TEST_ENG_FAULT_H_
#define UMR_TEST_ENG_FAULT_H_

#include <uct/api/uct.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct umr_test_eng_fault {
    /* requests */
    unsigned fail_wcs;          /* next N polled completions fail */
    unsigned fail_qp_create;    /* next N qp_create calls fail */
    int      hold_wcs;          /* while set, polls find nothing: the UMRs
                                   posted meanwhile complete late */
    /* counters */
    unsigned qp_created;
    unsigned qp_destroyed;
    unsigned cq_created;
    unsigned cq_destroyed;
    unsigned bad_destroys;      /* destroy of a QP/CQ not alive (double) */
    unsigned late_wcs;          /* completions polled, after the hold, of
                                   work requests posted during it */
} umr_test_eng_fault_t;

/* Wrap md's engine; f stays owned by the caller and must outlive the md or
 * the remove call. Returns UCS_ERR_INVALID_PARAM for a non-mlx5_umr md. */
ucs_status_t umr_test_eng_fault_install(uct_md_h md, umr_test_eng_fault_t *f);
void umr_test_eng_fault_remove(uct_md_h md);

#ifdef __cplusplus
}
#endif

#endif
