/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: the mlx5_umr MPI core's binding over Open MPI
 * (umr_mpi_binding.h), shared by pml/umr and osc/umr:
 *  - internal messages go through the PML the components do not wrap
 *    (pml/umr's wrapped PML, or the selected one when pml/umr is not
 *    there) on MPI_COMM_WORLD, each kind on a negative tag (never matched
 *    by MPI_ANY_TAG, even in pml ucx's 24-bit tag field, far below the
 *    collectives'); their requests are freed in progress once complete;
 *  - the core's progress runs from opal_progress while the core asks;
 *  - the addresses: pml/umr publishes this process's in the modex (it
 *    opens the rails before the modex exchange); osc/umr, which may open
 *    them later (pml/umr not there), adds every window's ranks' from an
 *    allgather at window creation (mca_common_umr_addrs_learn);
 *  - log lines go to the first component's verbose stream, messages to
 *    users through opal_show_help (help-mpi-common-umr.txt).
 */
#ifndef MCA_COMMON_UMR_BINDING_H_
#define MCA_COMMON_UMR_BINDING_H_

#include "common_umr.h"
#include "common_umr_tags.h"

#include "umr_mpi.h"
#include "umr_mpi_rail.h"

#include <ompi_config.h>
#include <ompi/communicator/communicator.h>
#include <ompi/datatype/ompi_datatype.h>
#include <ompi/mca/pml/pml.h>
#include <ompi/proc/proc.h>

BEGIN_C_DECLS

/* The parameters of the rails (umr_mpi_rails_params_t, budget, costs),
 * shared by pml/umr and osc/umr and named pml_umr_* (where users set them,
 * whichever component opens the core; a value may be NULL: its default).
 * pml/umr registers them as its own; osc/umr registers them only when
 * pml/umr has not (--mca pml ob1), and deregisters them when it closes. */
typedef struct mca_common_umr_params {
    char *uct_module;
    char *devices;
    char *max_conns;
    char *cost_file;
} mca_common_umr_params_t;

OMPI_DECLSPEC extern mca_common_umr_params_t mca_common_umr_params;
OMPI_DECLSPEC void mca_common_umr_params_register(const mca_base_component_t *c);
OMPI_DECLSPEC void mca_common_umr_params_deregister(void);

/* The PML the internal messages go through (pml/umr: its wrapped PML;
 * default: the selected one, mca_pml). */
OMPI_DECLSPEC extern mca_pml_base_module_t *mca_common_umr_pml;

/* The tag of an internal message on MPI_COMM_WORLD (common_umr_tags.h). */
static inline int mca_common_umr_tag(umr_mpi_msg_kind_t kind)
{
    static const int tags[UMR_MPI_MSG_NUM] = {
        [UMR_MPI_MSG_ACK]   = MCA_COMMON_UMR_TAG_ACK,
        [UMR_MPI_MSG_CONN]  = MCA_COMMON_UMR_TAG_CONN,
        [UMR_MPI_MSG_READY] = MCA_COMMON_UMR_TAG_READY,
        [UMR_MPI_MSG_DISC]  = MCA_COMMON_UMR_TAG_DISC,
        [UMR_MPI_MSG_DATA]  = MCA_COMMON_UMR_TAG_DATA
    };

    return tags[kind];
}

/*
 * Bind the core, and open its rails: `who` (its name in log lines) with
 * its verbose stream `output` at `verbose`, `beside` an address in the
 * component's shared object (where to look for the UCT module), `modex`:
 * the modex exchange is still to come (pml/umr, at its interposition), so
 * the address is published there and peers are read from it; else
 * (osc/umr after MPI_Init) only window allgathers tell the addresses. A
 * second call (the other component) shares what the first opened.
 * OMPI_SUCCESS, or an error after one log line (pass everything through).
 */
OMPI_DECLSPEC int mca_common_umr_open(const char *who, int output,
                                      int verbose, const void *beside,
                                      const mca_base_component_t *modex,
                                      uint32_t flags);
/* A component's verbosity reaches the core too (the highest asked for:
 * the core's lines are of every component's work). */
OMPI_DECLSPEC void mca_common_umr_verbose(int level);

/* The last component's end: counters are printed between release and
 * close (registrations gone, keys_live 0). */
OMPI_DECLSPEC void mca_common_umr_release(void);
OMPI_DECLSPEC void mca_common_umr_close(void);

/* A send or a receive of the components' through the PML they do not
 * wrap (an internal message, a control message, a declined message's
 * data): `comp` (may be NULL) is called once it completes, maybe now, and
 * the request is freed in progress; *req_p (may be NULL) receives it
 * first, to cancel. 0 or the PML's error. */
OMPI_DECLSPEC int mca_common_umr_isend(const void *buf, size_t count,
                                       ompi_datatype_t *dt, int rank, int tag,
                                       mca_pml_base_send_mode_t mode,
                                       ompi_communicator_t *comm,
                                       umr_mpi_comp_t *comp);
OMPI_DECLSPEC int mca_common_umr_irecv(void *buf, size_t count,
                                       ompi_datatype_t *dt, int rank, int tag,
                                       ompi_communicator_t *comm,
                                       umr_mpi_comp_t *comp,
                                       ompi_request_t **req_p);
/* A complete (or completing) request of the components', freed in
 * progress, not inside its own completion callback. */
OMPI_DECLSPEC void mca_common_umr_reap_add(ompi_request_t *req);
/* The same, with `buf` (malloc'd) freed once the request is. */
OMPI_DECLSPEC void mca_common_umr_reap_add_buf(ompi_request_t *req,
                                               void *buf);

/* The world rank of the process `rank` of `comm` when it is of this job,
 * else -1 (a spawned process: passed through). */
static inline int mca_common_umr_world_rank(ompi_communicator_t *comm,
                                            int rank)
{
    ompi_proc_t *proc = ompi_comm_peer_lookup(comm, rank);

    return OPAL_LIKELY(proc->super.proc_name.jobid ==
                       OMPI_PROC_MY_NAME->jobid) ?
           (int)proc->super.proc_name.vpid : -1;
}

/* This process's published address (umr_mpi_addr_t), and the addresses of
 * a window's ranks gathered at its creation (`addrs`: `n` of them, one a
 * rank of `comm`): peers not known before may be resolved again. */
OMPI_DECLSPEC const umr_mpi_addr_t *mca_common_umr_addr_own(void);
OMPI_DECLSPEC void mca_common_umr_addrs_learn(ompi_communicator_t *comm,
                                              const umr_mpi_addr_t *addrs,
                                              int n);

END_C_DECLS

#endif
