/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr receives: receives that may match a control message are posted
 * to the wrapped PML unchanged, either hooked in place (pml_umr_hook.h) or
 * behind a pml/umr request. When the wrapped PML completes one with exactly
 * Z bytes from a pml/umr peer, progress checks the magic and, for a control
 * message, gets the data from the sender's layout key into the receive
 * layout and acks.
 */
#ifndef MCA_PML_UMR_RECV_H_
#define MCA_PML_UMR_RECV_H_

#include "pml_umr.h"

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

/* A receive request's next step (mca_pml_umr.recv_run: progress runs it,
 * and a matched probe's control message at once). */
void mca_pml_umr_recv_run(mca_common_umr_work_t *work);

END_C_DECLS

#endif
