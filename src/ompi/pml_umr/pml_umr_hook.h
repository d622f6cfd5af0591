/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr: the wrapped PML's own receive requests, hooked in place (see
 * pml_umr_hook.c for the states and where each assumption holds).
 */
#ifndef MCA_PML_UMR_HOOK_H_
#define MCA_PML_UMR_HOOK_H_

#include "pml_umr.h"

BEGIN_C_DECLS

enum {
    MCA_PML_UMR_INPLACE_OFF = 0,
    MCA_PML_UMR_INPLACE_OB1,
    MCA_PML_UMR_INPLACE_UCX
};

void mca_pml_umr_hook_init(void);
void mca_pml_umr_hook_fini(void);
/* the wrapped PML's irecv, hooked */
int  mca_pml_umr_hook_irecv(void *buf, size_t count, ompi_datatype_t *dt,
                            int src, int tag, ompi_communicator_t *comm,
                            ompi_request_t **request);
/* req_start of ob1's persistent receives of Z bytes or more */
int  mca_pml_umr_hook_start(size_t count, ompi_request_t **requests);

END_C_DECLS

#endif
