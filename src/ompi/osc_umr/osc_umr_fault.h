/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr fault injection, in its test variant only (configure.ac:
 * UMR_TEST_HOOKS; osc_umr_fault.c is compiled into hooks/mca_osc_umr.la
 * alone: what is installed has no such parameter, and there
 * mca_osc_umr_fault() is 0, which the compiler drops), for the tests of
 * the target's refusals: the level-9 MCA parameter osc_umr_test_fault
 * names points of the target side of the key protocol (osc_umr_kreq.c)
 * and of the packed path that then fail as they fail when memory or the
 * PML runs out (empty, the default: none, one load and a branch at each
 * point):
 *   answer  the answer's buffer cannot be allocated (the window's spare
 *           answer for that origin is sent instead, when it is free)
 *   queue   a request that must wait its turn cannot be kept
 *   kdesc   the buffer of a description sent apart cannot be allocated
 *   tkey    the layout key over the window memory cannot be made (key pool
 *           dry, lowering beyond the key budget)
 *   send    sending the answer fails (the origin's key is refused when the
 *           window is freed)
 *   repost  the receive of key requests cannot be posted again after one
 *           arrives: the window's target side retires (its later requests
 *           received and refused only when the window is freed)
 *   drain   ... and at the window's free those requests cannot be
 *           received either (left unmatched: the window's communicator is
 *           kept, the origins refuse those keys)
 *   pkt     the packed path (osc_umr_packed.h): the target cannot take a
 *           packed put's bytes or a get's (no memory): refused, the origin
 *           redoes it through the wrapped module
 *   psend   the origin's packed header cannot be sent: the operation goes
 *           through the wrapped module at once
 *   pdata   the origin's send of a put's bytes apart cannot be posted at
 *           its first try: it is posted again from progress (the target
 *           waits for them)
 * A comma-separated list fails at each of them. The transport's own faults
 * (UCX_MLX5_UMR_TEST_FAULT, engine_fault.h) apply as well.
 */
#ifndef MCA_OSC_UMR_FAULT_H_
#define MCA_OSC_UMR_FAULT_H_

#include "common_umr_fault.h"

enum {
    MCA_OSC_UMR_FAULT_ANSWER,
    MCA_OSC_UMR_FAULT_QUEUE,
    MCA_OSC_UMR_FAULT_KDESC,
    MCA_OSC_UMR_FAULT_TKEY,
    MCA_OSC_UMR_FAULT_SEND,
    MCA_OSC_UMR_FAULT_REPOST,
    MCA_OSC_UMR_FAULT_DRAIN,
    MCA_OSC_UMR_FAULT_PKT,
    MCA_OSC_UMR_FAULT_PSEND,
    MCA_OSC_UMR_FAULT_PDATA,
    MCA_OSC_UMR_FAULT_NUM
};

#if UMR_TEST_HOOKS

/* Registered, parsed and named in the help by libmca_common_umr
 * (common_umr_fault.h): the points are this file's. */
extern mca_common_umr_fault_t mca_osc_umr_faults;

/* Register the parameter of component `c`; parse its value. */
void mca_osc_umr_test_register(const mca_base_component_t *c);
void mca_osc_umr_test_init(void);

/* Whether the target side fails at `point` now. */
static inline int mca_osc_umr_fault(int point)
{
    return mca_common_umr_fault_at(&mca_osc_umr_faults, point);
}

#else

static inline void mca_osc_umr_test_register(const mca_base_component_t *c)
{
}

static inline void mca_osc_umr_test_init(void)
{
}

static inline int mca_osc_umr_fault(int point)
{
    return 0;
}

#endif

#endif
