/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr fault injection, in its test variant only (configure.ac:
 * UMR_TEST_HOOKS; pml_umr_fault.c is compiled into hooks/mca_pml_umr.la
 * alone: what is installed has none, and there mca_pml_umr_fault() is 0,
 * which the compiler drops; pml_umr_test.h has the variant's parameters).
 *
 * pml_umr_test_fault, for the tests of the fallback: it names points of
 * the receiver's zero-copy path that then fail as the transport fails
 * there (empty, the default: none, one load and a branch at each point):
 *   connect     the endpoint handshake fails (a failed connect)
 *   key         the receive registration / layout key cannot be made (key
 *               exhaustion)
 *   mdwait      the get's local layout key times out (md UMR timeout)
 *   post        posting the get fails (a QP that does not take work)
 *   completion  the get completes with an error (QP error, remote access
 *               error), after the data may have been written
 * and of the sender's:
 *   ctlsend     posting the control message fails (as the wrapped PML's
 *               send to a peer it cannot reach): the send ends with that
 *               error, its ack receive stays posted (a spare)
 *   ackpost     posting the receive of a control message's ack fails (out
 *               of memory): nothing is sent; a zero-copy message passes
 *               through, an escape fails (it never goes raw)
 * and one of the process's:
 *   norail      no rail of this process reaches any peer (as though
 *               uct_iface_is_reachable said no to each): pml/umr peers
 *               are reached without a rail (MCA_COMMON_UMR_PEER_NORAIL);
 *               the tests set it on one rank only, a reachability that
 *               differs between the two sides
 * A comma-separated list fails at each of them.
 */
#ifndef MCA_PML_UMR_FAULT_H_
#define MCA_PML_UMR_FAULT_H_

#include "common_umr_fault.h"

enum {
    MCA_PML_UMR_FAULT_CONNECT,
    MCA_PML_UMR_FAULT_KEY,
    MCA_PML_UMR_FAULT_MDWAIT,
    MCA_PML_UMR_FAULT_POST,
    MCA_PML_UMR_FAULT_COMPLETION,
    MCA_PML_UMR_FAULT_CTLSEND,
    MCA_PML_UMR_FAULT_ACKPOST,
    MCA_PML_UMR_FAULT_NORAIL,
    MCA_PML_UMR_FAULT_NUM
};

#if UMR_TEST_HOOKS

/* Registered, parsed and named in the help by libmca_common_umr
 * (common_umr_fault.h; pml_umr_test.c): the points are this file's. */
extern mca_common_umr_fault_t mca_pml_umr_faults;

/* Whether the zero-copy path fails at `point` now. */
static inline int mca_pml_umr_fault(int point)
{
    return mca_common_umr_fault_at(&mca_pml_umr_faults, point);
}

#else

static inline int mca_pml_umr_fault(int point)
{
    return 0;
}

#endif

#endif
