/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: messages to users, Open MPI's way (opal_show_help with
 * help-*.txt files: help-mpi-pml-umr.txt, help-mpi-common-umr.txt). Each
 * library names where its help file is: beside it in the build tree, or
 * the installed data directory. Where Open MPI reads only its own compiled-in
 * help texts (6.0), the message is rendered from the same file here and
 * printed by each process.
 */
#ifndef MCA_COMMON_UMR_HELP_H_
#define MCA_COMMON_UMR_HELP_H_

#include <ompi_config.h>

BEGIN_C_DECLS

/* Search for help files in `installed` (may be NULL) and in the build
 * folder of the library that holds `symbol`. */
OMPI_DECLSPEC void mca_common_umr_help_add(const void *symbol,
                                           const char *installed);

/* opal_show_help(file, topic, false, ...). */
OMPI_DECLSPEC void mca_common_umr_show_help(const char *file,
                                            const char *topic, ...);

END_C_DECLS

#endif
