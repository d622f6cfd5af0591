/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr module: the function table installed in front of the wrapped PML.
 *
 * It is a copy of the wrapped PML's own table with pml/umr's entry points in
 * the slots it intercepts (sends, receives, probes, starts, and add_procs).
 * Every other slot is the wrapped PML's function itself, called with no
 * pml/umr code in between: progress, del_procs, enable, add_comm, del_comm,
 * dump, and per release pml_ft_event (to 4.1), pml_revoke_comm and
 * pml_get_transports (5.0), as well as the limits and flags (max_contextid,
 * max_tag, and the flags with MCA_PML_BASE_FLAG_REQUIRE_WORLD and
 * MCA_PML_BASE_FLAG_SUPPORTS_EXT_CID as the wrapped PML set them). A slot
 * the wrapped PML left NULL stays NULL, so Open MPI's defaults for it apply
 * as without pml/umr (5.0's selection fills pml_revoke_comm after the
 * interposition). src/compat/umr_ompi_compat.h stops the build on a release
 * whose table has a slot pml/umr does not know.
 */
#include "pml_umr_module.h"
#include "pml_umr_probe.h"
#include "pml_umr_recv.h"
#include "pml_umr_send.h"

mca_pml_base_module_t mca_pml_umr_module;

/* MPI_T performance variables: registered again once interposed (the
 * framework deregistered them when it closed pml/umr, a loser of the
 * selection). */
static int mca_pml_umr_add_procs(struct ompi_proc_t **procs, size_t nprocs)
{
    static int pvars_done;

    if (!pvars_done) {
        mca_pml_umr_pvars_register();
        pvars_done = 1;
    }
    return mca_pml_umr.real.pml_add_procs(procs, nprocs);
}

void mca_pml_umr_module_build(const mca_pml_base_module_t *real,
                              mca_pml_base_module_t *module)
{
    *module                = *real;
    module->pml_add_procs  = mca_pml_umr_add_procs;
    module->pml_irecv_init = mca_pml_umr_irecv_init;
    module->pml_irecv      = mca_pml_umr_irecv;
    module->pml_recv       = mca_pml_umr_recv;
    module->pml_isend_init = mca_pml_umr_isend_init;
    module->pml_isend      = mca_pml_umr_isend;
    module->pml_send       = mca_pml_umr_send;
    module->pml_iprobe     = mca_pml_umr_iprobe;
    module->pml_probe      = mca_pml_umr_probe;
    module->pml_start      = mca_pml_umr_start;
    module->pml_improbe    = mca_pml_umr_improbe;
    module->pml_mprobe     = mca_pml_umr_mprobe;
    module->pml_imrecv     = mca_pml_umr_imrecv;
    module->pml_mrecv      = mca_pml_umr_mrecv;
}
