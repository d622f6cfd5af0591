/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "umr_mpich_next.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

umr_mpich_next_t umr_mpich_next_tab;

/* The next MPI_X after this library, else the MPI's own PMPI_X (this
 * library linked after the MPI: then nothing of it is called, but the table
 * is whole). */
static void *umr_mpich_next_lookup(const char *name, const char *pname)
{
    void *fn = dlsym(RTLD_NEXT, name);

    return (fn != NULL) ? fn : dlsym(RTLD_DEFAULT, pname);
}

/* The wrappers take MPICH's handles (ints): under another ABI (Open MPI's
 * handles are pointers) not even a pass-through call would be right. */
static void umr_mpich_next_die(const char *why)
{
    fprintf(stderr, "umr_mpich: %s: libumr_mpich.so serves MPIs of the MPICH "
            "ABI (libmpi.so.12: MPICH, MVAPICH, Intel MPI); do not preload "
            "it here\n", why);
    abort();
}

void umr_mpich_next_resolve(void)
{
#define UMR_MPICH_NEXT_SET(_name) \
    umr_mpich_next_tab._name = (__typeof__(PMPI_##_name)*) \
        umr_mpich_next_lookup("MPI_" #_name, "PMPI_" #_name);
    UMR_MPICH_CALLS(UMR_MPICH_NEXT_SET)
#undef UMR_MPICH_NEXT_SET
    if (dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world") != NULL) {
        umr_mpich_next_die("this is an Open MPI job (use pml/umr)");
    }
    if (umr_mpich_next_tab.Init == NULL) {
        umr_mpich_next_die("no MPI library in this process");
    }
    __atomic_store_n(&umr_mpich_next_tab.ready, 1, __ATOMIC_RELEASE);
}
