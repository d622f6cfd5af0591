/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr's test parameters (see pml_umr_test.h; the test variant's only).
 */
#include "pml_umr_test.h"
#include "pml_umr.h"
#include "pml_umr_fault.h"
#include "pml_umr_module.h"
#include "pml_umr_send.h"
#include "common_umr.h"
#include "common_umr_peer.h"

static char *mca_pml_umr_test_version_param;
static int  mca_pml_umr_bench;

void mca_pml_umr_test_register(const mca_base_component_t *c)
{
    mca_pml_umr_test_version_param = "";
    mca_common_umr_param(c, "test_version",
            "Testing only: check the Open MPI release as if this one were "
            "running (empty: the running release)",
            MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_9,
            &mca_pml_umr_test_version_param);
    mca_common_umr_fault_register(c, &mca_pml_umr_faults,
            "the receiver's zero-copy path (connect .. completion), to "
            "test the fallback to the wrapped PML, and the sender's "
            "(ctlsend: posting the control message; pml_umr_fault.h)");
    mca_pml_umr_bench = 0;
    mca_common_umr_param(c, "bench",
            "Benchmarks only: allow the benchmark programs to take pml/umr "
            "out of the call path between messages "
            "(mca_pml_umr_bench_interpose, the \"direct\" rows of "
            "bench_mpi_ddt)",
            MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_9, &mca_pml_umr_bench);
}

void mca_pml_umr_test_init(void)
{
    mca_common_umr_fault_init(&mca_pml_umr_faults);
    mca_common_umr_peers_norail = mca_pml_umr_fault(MCA_PML_UMR_FAULT_NORAIL);
}

const char *mca_pml_umr_test_version(void)
{
    const char *v = mca_pml_umr_test_version_param;

    return ((v != NULL) && (v[0] != '\0')) ? v : NULL;
}

/* For benchmarks (bench_mpi_ddt's "direct" mode): take pml/umr out of the
 * call path (on = 0), so that the wrapped PML's entry points are called
 * directly, or put it back (on = 1), in the same job: the same memory, the
 * same processes, side by side. Only between messages, with every rank
 * switching before the next message (a barrier). Returns the previous state,
 * or -1 when pml/umr is not interposed or pml_umr_bench is off. Looked up
 * with dlsym. */
OMPI_DECLSPEC int mca_pml_umr_bench_interpose(int on)
{
    int prev;

    if (!mca_pml_umr.active || !mca_pml_umr_bench) {
        return -1;
    }
    prev = (mca_pml.pml_send == mca_pml_umr_send);
    mca_pml = on ? mca_pml_umr_module : mca_pml_umr.real;
    return prev;
}
