/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr receives: receives that may match a control message are posted
 * to the wrapped PML unchanged, either hooked in place (pml_umr_hook.h) or
 * behind a pml/umr request. When the wrapped PML completes one with exactly
 * Z bytes that start with the magic, the core takes it (umr_mpi_proto.h:
 * CLASSIFY, then the get or a decline).
 */
#ifndef MCA_PML_UMR_RECV_H_
#define MCA_PML_UMR_RECV_H_

#include "pml_umr_request.h"

BEGIN_C_DECLS

int mca_pml_umr_irecv(void *buf, size_t count, ompi_datatype_t *dt, int src,
                      int tag, ompi_communicator_t *comm,
                      ompi_request_t **request);
int mca_pml_umr_recv(void *buf, size_t count, ompi_datatype_t *dt, int src,
                     int tag, ompi_communicator_t *comm,
                     ompi_status_public_t *status);
int mca_pml_umr_irecv_init(void *buf, size_t count, ompi_datatype_t *dt,
                           int src, int tag, ompi_communicator_t *comm,
                           ompi_request_t **request);
/* MCA_PML_CALL(start): pml/umr's persistent requests, ob1's hooked in
 * place, anything else to the wrapped PML. */
int mca_pml_umr_start(size_t count, ompi_request_t **requests);

/* The core's transfer of a receive: the DATA receive of a declined
 * message, a look at the first bytes, and its end (umr_mpi_xfer_ops_t). */
int  mca_pml_umr_recv_data(umr_mpi_xfer_t *x, umr_mpi_comp_t *comp);
void mca_pml_umr_recv_peek(umr_mpi_xfer_t *x, void *out, size_t len);
void mca_pml_umr_recv_done(mca_pml_umr_request_t *req);

END_C_DECLS

#endif
