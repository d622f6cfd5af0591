/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr: where the MPI standard's API differs between the MPI libraries
 * the datatype decoder (src/mpi/decode) and the MPI tests meet: public
 * mpi.h only, any MPI. configure probes each difference (m4/mpi.m4) and
 * this header turns the results into one API, so no other file tests an MPI
 * version.
 */
#ifndef UMR_MPI_COMPAT_H_
#define UMR_MPI_COMPAT_H_

#ifdef HAVE_CONFIG_H
#  include "umr_config.h"
#endif

#include <mpi.h>

/* MPI-4.0's large-count type queries: configure's probes of the default
 * MPI (umr_config.h), or, for a file compiled against another MPI (the
 * MPICH binding, src/mpich), that MPI's own probe, given as
 * -DUMR_MPI_LARGE_COUNT=0|1. */
#ifndef UMR_MPI_LARGE_COUNT
#  if HAVE_DECL_PMPI_TYPE_SIZE_C && HAVE_DECL_PMPI_TYPE_GET_EXTENT_C && \
      HAVE_DECL_PMPI_TYPE_GET_TRUE_EXTENT_C
#    define UMR_MPI_LARGE_COUNT 1
#  else
#    define UMR_MPI_LARGE_COUNT 0
#  endif
#endif

/* A datatype's size and bounds as MPI_Count: MPI-4.0's large-count queries
 * (Open MPI 6.0, MPICH 4.0), else MPI-3's _x ones, which MPI-4.1
 * deprecates. */
#if UMR_MPI_LARGE_COUNT
#  define umr_mpi_type_size_count            PMPI_Type_size_c
#  define umr_mpi_type_get_extent_count      PMPI_Type_get_extent_c
#  define umr_mpi_type_get_true_extent_count PMPI_Type_get_true_extent_c
#else
#  define umr_mpi_type_size_count            PMPI_Type_size_x
#  define umr_mpi_type_get_extent_count      PMPI_Type_get_extent_x
#  define umr_mpi_type_get_true_extent_count PMPI_Type_get_true_extent_x
#endif

#endif
