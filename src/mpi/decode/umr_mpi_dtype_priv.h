/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI layer: decoder internals shared by umr_mpi_dtype*.c.
 */
#ifndef UMR_MPI_DTYPE_PRIV_H_
#define UMR_MPI_DTYPE_PRIV_H_

#include "umr_mpi_dtype.h"

/* What the MPI library reports for a datatype. */
typedef struct umr_mpi_bounds {
    size_t    size;
    ptrdiff_t lb, extent;
    ptrdiff_t true_lb, true_extent;
} umr_mpi_bounds_t;

ucs_status_t umr_mpi_dtype_query(MPI_Datatype type, umr_mpi_bounds_t *b);

/* Short name of an MPI_COMBINER_* value, for logs. */
const char *umr_mpi_dtype_combiner_name(int combiner);

#endif
