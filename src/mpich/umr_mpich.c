/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: the binding's entry points into the job.
 */
#include "umr_config.h"

#include <mpi.h>
#include <dlfcn.h>
#include <stddef.h>

int MPI_Finalize(void)
{
    int (*next)(void) = (int (*)(void))dlsym(RTLD_NEXT, "MPI_Finalize");

    return (next != NULL) ? next() : PMPI_Finalize();
}
