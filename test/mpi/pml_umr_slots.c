/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * What the running job's PML table holds, after MPI_Init: for every slot of
 * Open MPI's mca_pml_base_module_t (src/compat/umr_ompi_compat.h lists
 * them per release) the library its function is in and the offset there
 * (the same in every run of one installation), or NULL; then the limits,
 * the flags and the name of the selected PML component. test_pml_umr.sh
 * runs it with and without pml/umr: every slot pml/umr does not intercept
 * must be the wrapped PML's own function (pml_revoke_comm and
 * pml_get_transports on 5.0 included), and the limits, flags and name the
 * same.
 *
 * Output lines: "slot NAME LIB+0xOFFSET" or "slot NAME NULL",
 * "limit max_contextid N", "limit max_tag N", "flags 0xN", "component NAME"
 * (rank 0's table).
 */
#include "umr_ompi_compat.h"

#include <ompi/mca/pml/base/base.h>

#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static void slot(const char *name, void (*fn)(void))
{
    Dl_info info;
    const char *lib;

    if (fn == NULL) {
        printf("slot %s NULL\n", name);
        return;
    }
    if (!dladdr((void*)fn, &info) || (info.dli_fname == NULL)) {
        printf("slot %s unknown\n", name);
        return;
    }
    lib = strrchr(info.dli_fname, '/');
    lib = (lib != NULL) ? lib + 1 : info.dli_fname;
    printf("slot %s %s+0x%lx\n", name, lib,
           (unsigned long)((char*)fn - (char*)info.dli_fbase));
}

int main(int argc, char **argv)
{
    int rank;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
#define PML_UMR_SLOTS_PRINT(_slot) slot(#_slot, (void (*)(void))mca_pml._slot);
        UMR_OMPI_PML_FN_SLOTS(PML_UMR_SLOTS_PRINT)
        printf("limit max_contextid %lu\n",
               (unsigned long)mca_pml.pml_max_contextid);
        printf("limit max_tag %d\n", mca_pml.pml_max_tag);
        printf("flags 0x%x\n", (unsigned)mca_pml.pml_flags);
        printf("component %s\n",
               mca_pml_base_selected_component.pmlm_version.mca_component_name);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
