/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr: an Open MPI PML that sits in front of the PML Open MPI selects
 * (ob1, ucx, cm) the way pml/monitoring does: Open MPI's point-to-point
 * binding of the mlx5_umr MPI core (src/mpi/core). It keeps matching in
 * the wrapped PML and moves eligible derived-datatype messages with the
 * core's zero-copy protocol (umr_mpi_proto.h: a control message of Z bytes
 * on the user's envelope, one get of the receiver, an ack); everything else
 * passes through unchanged. What it adds to the core is Open MPI's:
 *  - the pass-through test of every send before any decoding (its size,
 *    Open MPI's contiguity flags and description of the datatype, the
 *    verdict in the core's type front), one compare for a receive below Z;
 *  - the requests: a zero-copy send's, a receive's that may match a
 *    control message (or the wrapped PML's own, hooked in place), their
 *    completion, persistent and buffered sends;
 *  - what only Open MPI can tell: a message of Z bytes that starts with the
 *    magic (an escape, never sent raw), a control message truncated into a
 *    small receive, probes of control messages.
 * Endpoints are connected lazily by the core (umr_mpi_peer.h).
 */
#ifndef MCA_PML_UMR_H_
#define MCA_PML_UMR_H_

#include <ompi_config.h>
#include <ompi/communicator/communicator.h>
#include <ompi/datatype/ompi_datatype.h>
#include <ompi/mca/pml/pml.h>
#include <ompi/mca/pml/base/base.h>
#include <ompi/message/message.h>
#include <ompi/request/request.h>
#include <ompi/proc/proc.h>
#include <opal/class/opal_free_list.h>
#include <opal/util/output.h>

#include "umr_ompi_compat.h"
#include "umr_mpi_choice.h"
#include "umr_mpi_wire.h"

BEGIN_C_DECLS

/*
 * The component's objects, one header each (as ob1's), every one used from
 * above only:
 *   pml_umr_request.h  the request of a zero-copy send or a wrapped receive
 *                      (it holds the core's transfer, umr_mpi_proto.h)
 *   pml_umr_send.h     sends; pml_umr_recv.h receives; pml_umr_probe.h
 *                      probes and matched receives; pml_umr_hook.h the
 *                      wrapped PML's receives hooked in place
 * and below them libmca_common_umr (the core's binding over Open MPI) and
 * the core itself.
 */

/* Counters of pml/umr's own (the core's: umr_mpi.h), printed at finalize
 * with pml_umr_verbose >= 1. */
typedef struct mca_pml_umr_counters {
    uint64_t escapes;           /* magic-leading Z-byte messages sent as
                                   control messages */
    uint64_t recv_checked;      /* receives >= Z bytes hooked */
    uint64_t passthrough_sends; /* candidate sends passed through */
    uint64_t recv_inplace;      /* control messages that arrived in a
                                   hooked request of the wrapped PML */
    uint64_t prefiltered;       /* of passthrough_sends: passed through by
                                   the prefilter (density class, mean
                                   block), not decoded; a type held with
                                   that verdict passes by it after a few
                                   (umr_mpi_types_prefiltered), not counted
                                   here */
    uint64_t errors;            /* requests that could not be had */
} mca_pml_umr_counters_t;

typedef struct mca_pml_umr_globals {
    /* MCA parameters */
    int                    enable;
    int                    verbose;
    int                    zcopy_mode;      /* UMR_MPI_ZCOPY_* */
    unsigned long          min_size;        /* zero-copy at or above */
    int                    recv_inplace;    /* MCA_PML_UMR_INPLACE_*: hook the
                                               wrapped PML's receives */
    /* state */
    const mca_base_component_t *self;       /* mca_pml_umr_component */
    int                    output;
    int                    active;          /* interposed */
    mca_pml_base_component_t real_component;
    mca_pml_base_module_t  real;            /* the wrapped PML */
    int                    bsend_no_room;   /* a buffered escape without
                                               room in the attached buffer:
                                               the wrapped PML's error */
    opal_free_list_t       requests;
    ompi_request_free_fn_t hook_free_orig;  /* the wrapped PML's req_free */
    int                    stash_count;
    umr_mpi_bounds_t       bounds;          /* the core's (umr_mpi_choice.h),
                                               copied: the entry points read
                                               it without a load from the
                                               GOT */
    mca_pml_umr_counters_t cnt;
} mca_pml_umr_globals_t;

/* hidden: the entry points reach it without a load from the GOT (nothing
 * outside the component uses it) */
extern mca_pml_umr_globals_t mca_pml_umr
    __opal_attribute_visibility__("hidden");
OMPI_DECLSPEC extern mca_pml_base_component_t mca_pml_umr_component;

#define MCA_PML_UMR_VERBOSE(_lvl, ...) \
    opal_output_verbose(_lvl, mca_pml_umr.output, "pml_umr: " __VA_ARGS__)

/* The one way a user's send reaches the wrapped PML unchanged: every
 * message that passes through, a pass-through start of a persistent send
 * (the protocol's own messages, a declined message's data among them, go
 * through mca_common_umr_isend). Inline: a tail call from the entry
 * points. */
static inline int mca_pml_umr_pass(const void *buf, size_t count,
                                   ompi_datatype_t *dt, int dst, int tag,
                                   mca_pml_base_send_mode_t mode,
                                   ompi_communicator_t *comm,
                                   ompi_request_t **request)
{
    return mca_pml_umr.real.pml_isend(buf, count, dt, dst, tag, mode, comm,
                                      request);
}

END_C_DECLS

#endif
