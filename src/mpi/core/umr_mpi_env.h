/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * The transport's variables (UCX_MLX5_UMR_*) count as used by the process
 * from the binding's start on.
 *
 * UCX warns of every UCX_* variable no configuration table has read yet
 * when the first UCP worker is created (ucs_config_parser_print_env_vars_
 * once, UCX 1.13 to 1.23): the MPI's UCX layer (Open MPI's pml ucx, MPICH's
 * ch4:ucx) creates its worker before the binding loads the transport that
 * reads UCX_MLX5_UMR_*. A variable counts as used once a table read it
 * (ucs_config_parser_fill_opts marks it), so the binding reads each one
 * set through a table of its own before the MPI's worker exists: pml/umr at
 * registration, libumr_mpich.so before MPI_Init. The transport still checks
 * the names when it opens (a misspelt one gets its own warning,
 * umr_config_check.c).
 */
#ifndef UMR_MPI_ENV_H_
#define UMR_MPI_ENV_H_

/* Mark every UCX_MLX5_UMR_* variable of the environment as read. For a
 * binding that will load the transport (enabled, and UCX_TLS names
 * mlx5_umr: umr_mpi_ucx_tls_allows). */
void umr_mpi_env_claim(void);

#endif
