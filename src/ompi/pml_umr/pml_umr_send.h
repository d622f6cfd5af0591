/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr sends: the pass-through test, the zero-copy send (a layout key
 * and a control message through the wrapped PML) and its acknowledgement.
 */
#ifndef MCA_PML_UMR_SEND_H_
#define MCA_PML_UMR_SEND_H_

#include "pml_umr.h"

BEGIN_C_DECLS

int mca_pml_umr_isend(const void *buf, size_t count, ompi_datatype_t *dt,
                      int dst, int tag, mca_pml_base_send_mode_t mode,
                      ompi_communicator_t *comm, ompi_request_t **request);
int mca_pml_umr_send(const void *buf, size_t count, ompi_datatype_t *dt,
                     int dst, int tag, mca_pml_base_send_mode_t mode,
                     ompi_communicator_t *comm);
int mca_pml_umr_isend_init(const void *buf, size_t count, ompi_datatype_t *dt,
                           int dst, int tag, mca_pml_base_send_mode_t mode,
                           ompi_communicator_t *comm, ompi_request_t **request);
/* MPI_Finalize has started (run by mca_common_umr_peers_quiesce): the
 * ack receives still posted are cancelled and freed. */
void mca_pml_umr_send_quiesce(void);
/* At finalize: the table of the sends waiting for their ack. */
void mca_pml_umr_send_fini(void);

END_C_DECLS

#endif
