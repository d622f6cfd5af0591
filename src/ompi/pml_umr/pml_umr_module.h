/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr module: the function table installed in front of the wrapped PML
 * (pml_umr_module.c says which slots are pml/umr's), and the MPI_T
 * performance variables it publishes.
 */
#ifndef MCA_PML_UMR_MODULE_H_
#define MCA_PML_UMR_MODULE_H_

#include "pml_umr.h"

BEGIN_C_DECLS

/* the table installed in front of the wrapped PML */
extern mca_pml_base_module_t mca_pml_umr_module;
void mca_pml_umr_module_build(const mca_pml_base_module_t *real,
                              mca_pml_base_module_t *module);

/* MPI_T performance variables pml_umr_* (pml_umr_pvars.c) */
void mca_pml_umr_pvars_register(void);

END_C_DECLS

#endif
