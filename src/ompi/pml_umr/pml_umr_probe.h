/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr probes and matched receives: a probe must report a zero-copy
 * message's real size, so a probed control message is taken out of the
 * wrapped PML into pml/umr's stash (pml_umr_probe.c); while the stash is
 * not empty, receives and probes look there first.
 */
#ifndef MCA_PML_UMR_PROBE_H_
#define MCA_PML_UMR_PROBE_H_

#include "pml_umr_request.h"

#include <ompi/message/message.h>

BEGIN_C_DECLS

int mca_pml_umr_iprobe(int src, int tag, ompi_communicator_t *comm,
                       int *matched, ompi_status_public_t *status);
int mca_pml_umr_probe(int src, int tag, ompi_communicator_t *comm,
                      ompi_status_public_t *status);
int mca_pml_umr_improbe(int src, int tag, ompi_communicator_t *comm,
                        int *matched, ompi_message_t **message,
                        ompi_status_public_t *status);
int mca_pml_umr_mprobe(int src, int tag, ompi_communicator_t *comm,
                       ompi_message_t **message, ompi_status_public_t *status);
int mca_pml_umr_imrecv(void *buf, size_t count, ompi_datatype_t *dt,
                       ompi_message_t **message, ompi_request_t **request);
int mca_pml_umr_mrecv(void *buf, size_t count, ompi_datatype_t *dt,
                      ompi_message_t **message, ompi_status_public_t *status);

/* A receive (irecv, recv, start of a persistent pml/umr receive) while the
 * stash is not empty: OMPI_ERR_NOT_FOUND when no stashed message matches
 * (then post to the wrapped PML). `req` NULL: allocate one. */
int mca_pml_umr_stash_irecv(mca_pml_umr_request_t *req, void *buf,
                            size_t count, ompi_datatype_t *dt, int src,
                            int tag, ompi_communicator_t *comm,
                            ompi_request_t **request);

END_C_DECLS

#endif
