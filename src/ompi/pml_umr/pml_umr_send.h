/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr sends: the pass-through test, then the core's zero-copy send
 * (umr_mpi_proto.h) behind a request of ours.
 */
#ifndef MCA_PML_UMR_SEND_H_
#define MCA_PML_UMR_SEND_H_

#include "pml_umr_request.h"

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
/* The core's transfer of a send: its control message, its data once
 * declined (umr_mpi_xfer_ops_t), and its end. */
int  mca_pml_umr_send_ctl(umr_mpi_xfer_t *x, umr_mpi_comp_t *comp);
int  mca_pml_umr_send_data(umr_mpi_xfer_t *x, umr_mpi_comp_t *comp);
void mca_pml_umr_send_done(mca_pml_umr_request_t *req);

END_C_DECLS

#endif
