/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr: an Open MPI PML that sits in front of the PML Open MPI selects
 * (ob1, ucx, cm) the way pml/monitoring does, and moves eligible derived-
 * datatype messages with one zero-copy get through the mlx5_umr transport.
 *
 * Protocol (matching stays in the real PML):
 *  - A message is eligible when its packed size is at least
 *    MCA_PML_UMR_CTL_SIZE (Z), what Open MPI knows of its datatype (size,
 *    density class, mean block) does not rule zero-copy out
 *    (pml_umr_choose_bounds_of: no decoding before that), its datatype
 *    decodes to a layout, the peer is
 *    reachable over a rail, not retired, and pml_umr_choose says
 *    zero-copy. The sender
 *    registers the data as one layout key and sends, through the real PML on
 *    the user's (comm, dest, tag), a control message of exactly Z bytes that
 *    starts with a 16-byte magic and carries the key.
 *  - Receives whose capacity is below Z go straight to the real PML: an
 *    eligible message never matches them. Larger receives are posted to the
 *    real PML unchanged; when one completes with exactly Z bytes from a peer
 *    that runs pml/umr, the first bytes are checked for the magic. A control
 *    message is then turned into one get from the sender's layout key into
 *    the receive layout, which overwrites every byte the control message
 *    landed on; an acknowledgement on MPI_COMM_WORLD (tag
 *    MCA_PML_UMR_TAG_ACK) completes the sender's request. The receiver,
 *    knowing both layouts, may decline, and any fault on its zero-copy
 *    path declines too: the data then comes through the wrapped PML
 *    (pml_umr_wire.h has the whole protocol).
 *  - A message of exactly Z bytes starting with the magic is never sent
 *    raw, whatever its mode and datatype (the escape): zero-copy, or a
 *    control message without a key that the receiver declines (a type
 *    without a layout; a buffered send, from pml/umr's copy of its data),
 *    so a receiver never mistakes it.
 *  - Endpoints are connected lazily (common_umr_peer.h): the first control
 *    messages carry the sender's endpoint address; the receiver connects,
 *    answers with its own address (MCA_COMMON_UMR_TAG_CONN) and starts gets
 *    once the sender has connected back (MCA_COMMON_UMR_TAG_READY). All of
 *    it is nonblocking.
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
#include "common_umr_progress.h"

BEGIN_C_DECLS

/*
 * The component's objects, one header each (as ob1's), every one used from
 * above only:
 *   pml_umr_wire.h     control message and ack (plain C)
 *   pml_umr_request.h  the request of a zero-copy send or a wrapped receive
 *   pml_umr_send.h     sends; pml_umr_recv.h receives; pml_umr_probe.h
 *                      probes and matched receives; pml_umr_hook.h the
 *                      wrapped PML's receives hooked in place
 *   pml_umr_choose.h   zero-copy or not (common_umr_cost.h: the cost model)
 * and below them libmca_common_umr (src/ompi/common): rails, peers,
 * registrations and layout keys, progress, datatypes.
 */

/* Counters of pml/umr's own (common_umr.h has the shared objects'),
 * printed at finalize with pml_umr_verbose >= 1. */
typedef struct mca_pml_umr_counters {
    uint64_t zcopy_sends;       /* control messages sent */
    uint64_t zcopy_recvs;       /* gets completed */
    uint64_t zcopy_bytes;
    uint64_t escapes;           /* magic-leading Z-byte messages sent zcopy */
    uint64_t recv_checked;      /* receives >= Z bytes hooked */
    uint64_t passthrough_sends; /* candidate sends passed through */
    uint64_t fallbacks;         /* sends chosen zero-copy that passed
                                   through (keys, connection) */
    uint64_t errors;
    uint64_t recv_inplace;      /* control messages that arrived in a
                                   hooked request of the wrapped PML */
    uint64_t declined;          /* control messages declined by cost */
    uint64_t fault_declines;    /* control messages declined by a fault */
    uint64_t fallback_sends;    /* data sent through the wrapped PML after
                                   a decline */
    uint64_t prefiltered;       /* of passthrough_sends: passed through by
                                   the prefilter (density class, mean
                                   block), not decoded; a type held with
                                   that verdict passes by it after a few
                                   (mca_common_umr_dtype_prefiltered),
                                   not counted here */
    uint64_t acks_dropped;      /* acks that named no send waiting for
                                   that peer's ack (pml_umr_wire.h) */
    uint64_t acks_posted;       /* ack receives posted now (0 once
                                   MPI_Finalize started: cancelled) */
} mca_pml_umr_counters_t;

typedef struct mca_pml_umr_globals {
    /* MCA parameters */
    int                    enable;
    int                    verbose;
    int                    zcopy_mode;      /* see pml_umr_choose.h */
    unsigned long          min_size;        /* zero-copy at or above */
    char                   *uct_module;     /* path of libuct_mlx5_umr.so */
    char                   *cost_file;      /* costs of the zero-copy choice */
    char                   *devices;        /* common_umr_devices.h */
    char                   *max_conns_param;/* budget of connected peers */
    int                    max_conns;       /* parsed (common_umr_peer.h) */
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
    mca_common_umr_work_fn_t recv_run;      /* a receive's next step
                                               (pml_umr_recv.c) */
    int                    stash_count;
    size_t                 zc_min_len;      /* below: pass through (the
                                               minimum size and what the
                                               costs allow on the rails) */
    double                 zc_min_block;    /* mean block below: pass
                                               through without decoding */
    /* the same two for types of one density class (index
     * MCA_PML_UMR_CHOOSE_SPARSE, _DENSE), which Open MPI's size and extent
     * tell */
    size_t                 zc_dens_min_len[2];
    double                 zc_dens_min_block[2];
    int                    engines;         /* the rails' engines: bit 0
                                               sw, bit 1 mlx5 (a verdict
                                               of pass through holds for
                                               every peer when it holds for
                                               each of them) */
    mca_pml_umr_counters_t cnt;
} mca_pml_umr_globals_t;

/* hidden: the entry points reach it without a load from the GOT (nothing
 * outside the component uses it) */
extern mca_pml_umr_globals_t mca_pml_umr
    __opal_attribute_visibility__("hidden");
OMPI_DECLSPEC extern mca_pml_base_component_t mca_pml_umr_component;

#define MCA_PML_UMR_VERBOSE(_lvl, ...) \
    opal_output_verbose(_lvl, mca_pml_umr.output, "pml_umr: " __VA_ARGS__)

END_C_DECLS

#endif
