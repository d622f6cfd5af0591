/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: the transport's variables (UCX_MLX5_UMR_*) count as
 * used by the process from component registration on.
 *
 * UCX warns of every UCX_* variable no configuration table has read yet
 * when the first UCP worker is created (ucs_config_parser_print_env_vars_
 * once, UCX 1.13 to 1.23): pml ucx creates its worker at selection, before
 * pml/umr loads the transport that reads UCX_MLX5_UMR_*. A variable counts
 * as used once a table read it (ucs_config_parser_fill_opts marks it), so
 * pml/umr reads each one set, at registration, through a table of its own.
 * The transport still checks the names when it opens (a misspelt one gets
 * its own warning, umr_config_check.c).
 */
#ifndef MCA_COMMON_UMR_ENV_H_
#define MCA_COMMON_UMR_ENV_H_

#include <ompi_config.h>

BEGIN_C_DECLS

/* Mark every UCX_MLX5_UMR_* variable of the environment as read. For a
 * component that will load the transport (enabled, and UCX_TLS names
 * mlx5_umr: mca_common_umr_ucx_tls_allows). */
OMPI_DECLSPEC void mca_common_umr_env_claim(void);

END_C_DECLS

#endif
