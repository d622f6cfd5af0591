/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: MPI one-sided put and get of derived datatypes as one zero-copy
 * operation each, in front of the osc component Open MPI would choose (the
 * osc/monitoring pattern: that component creates the window; osc/umr keeps
 * its module and patches put/get and the synchronisation calls in its
 * function table, osc_umr_win.h).
 *
 *   osc_umr_module.h osc/umr in front of a window's module: wrap, free,
 *                    progress
 *   osc_umr_win.h    the window's state: the wrapped table, the private
 *                    communicator, the window memory (the core's,
 *                    umr_mpi_rma_mem.h), the zero-copy operations in
 *                    flight per target
 *   osc_umr_wire.h   the key request (plain C); the answer is the core's
 *   osc_umr_key.h    target layout keys: asked for on first use, built by
 *                    the target from its progress, cached by the origin
 *                    (the core's key cache, umr_mpi_rma.h)
 *   osc_umr_kreq.h   the target's side: requests answered in each origin's
 *                    order, long descriptions received apart
 *   osc_umr_rma.h    put/get through a key, or through the wrapped module;
 *                    created windows: target ranges checked
 *                    (MPI_ERR_RMA_RANGE)
 *   osc_umr_sync.h   every synchronisation call completes osc/umr's
 *                    operations before the wrapped one runs
 *
 * Rails, peers, registrations, the choice and progress are the mlx5_umr MPI
 * core's (src/mpi/core), bound to Open MPI by libmca_common_umr
 * (src/ompi/common): opened by pml/umr when it is there, else by osc/umr
 * at the first window it wraps; the ranks of each window tell their
 * addresses at its creation.
 *
 * This header: the component, its parameters and counters.
 */
#ifndef MCA_OSC_UMR_H_
#define MCA_OSC_UMR_H_

#include "umr_ompi_compat.h"
#include "common_umr_binding.h"

#include <ompi_config.h>
#include <ompi/mca/osc/osc.h>
#include <opal/util/output.h>

#include <stdint.h>

BEGIN_C_DECLS

/* Window info key: "false" keeps osc/umr out of that window. */
#define MCA_OSC_UMR_INFO_ENABLE "osc_umr_enable"

enum {
    MCA_OSC_UMR_ZCOPY_AUTO = 0,    /* noncontiguous either side, Win_create */
    MCA_OSC_UMR_ZCOPY_ON   = 1,    /* every eligible operation (tests) */
    MCA_OSC_UMR_ZCOPY_OFF  = 2     /* never: windows are left unwrapped */
};

/* osc_umr_packed: the packed path (osc_umr_packed.h) */
enum {
    MCA_OSC_UMR_PACKED_AUTO = 0,   /* where the choice takes it */
    MCA_OSC_UMR_PACKED_ON   = 1,   /* instead of every zero-copy (tests) */
    MCA_OSC_UMR_PACKED_OFF  = 2    /* never */
};

typedef struct mca_osc_umr_counters {
    uint64_t windows_wrapped;   /* windows with osc/umr in front */
    uint64_t windows_plain;     /* windows left to the wrapped module */
    uint64_t zcopy_puts;        /* puts moved through a target key */
    uint64_t zcopy_gets;
    uint64_t zcopy_bytes;
    uint64_t passthrough;       /* eligible put/get sent to the wrapped
                                   module (key not there yet, peer not
                                   ready, not chosen) */
    uint64_t key_requests;      /* origin: keys asked for */
    uint64_t key_ready;         /* origin: keys that arrived */
    uint64_t key_refused;       /* origin: answers with an error */
    uint64_t key_answers;       /* target: requests answered with a key */
    uint64_t key_errors;        /* target: requests answered with an error */
    uint64_t zcopy_errors;      /* operations that failed and were redone
                                   through the wrapped module */
    uint64_t attached;          /* dynamic, target: attaches registered */
    uint64_t invals_sent;       /* dynamic, target: origins told to drop
                                   their keys (at detach) */
    uint64_t invals_received;   /* dynamic, origin: such messages taken */
    uint64_t keys_dropped;      /* dynamic, origin: keys dropped by them */
    uint64_t range_refused;     /* created windows: put/get refused with
                                   MPI_ERR_RMA_RANGE (target range outside
                                   the target's window) */
    uint64_t key_unanswered;    /* origin: keys whose answer never came
                                   (refused when the window is freed;
                                   also counted in key_refused) */
    uint64_t answers_lost;      /* target: answers that could not be sent
                                   (also counted in key_errors) */
    uint64_t kreq_retired;      /* target: windows whose receive of key
                                   requests could not be posted again */
    uint64_t kreq_unreceived;   /* target: requests sent to such a window
                                   that not even its free could receive
                                   (their origins' key_unanswered) */
    uint64_t packed_puts;       /* origin: puts moved packed
                                   (osc_umr_packed.h) */
    uint64_t packed_gets;
    uint64_t packed_bytes;
    uint64_t packed_refused;    /* origin: packed ops the target refused,
                                   redone through the wrapped module */
    uint64_t packed_unpacked;   /* target: packed puts unpacked */
    uint64_t packed_served;     /* target: packed gets answered */
    uint64_t packed_tgt_refused; /* target: packed ops refused */
    uint64_t keys_short;        /* origin: put/get passed through because
                                   its origin layout got no key now (the
                                   key pool's keys in use; also counted in
                                   passthrough) */
} mca_osc_umr_counters_t;

/* The component's state (osc_umr.c; the component structure itself,
 * mca_osc_umr_component, is osc_umr_component.c's). */
typedef struct mca_osc_umr {
    const mca_base_component_t *self;   /* the component, once registered */
    int                       enable;
    int                       priority;
    int                       zcopy_mode;
    int                       verbose;
    unsigned long             min_size;
    unsigned long             sw_max_block;
    int                       packed_mode;
    unsigned long             packed_max_block;
    int                       output;
    int                       world_rank;
    int                       nwins;    /* wrapped windows alive */
    int                       opened;   /* osc/umr opened the core (pml/umr
                                           did not): closed at finalize */
    mca_osc_umr_counters_t    cnt;
} mca_osc_umr_t;

extern mca_osc_umr_t mca_osc_umr;

/* osc/umr's messages go through the PML the components do not wrap
 * (common_umr_binding.h), never through pml/umr's entry points. */
#define MCA_OSC_UMR_PML_CALL(_call) mca_common_umr_pml->pml_ ## _call

#define MCA_OSC_UMR_VERBOSE(_lvl, _fmt, ...) \
    opal_output_verbose(_lvl, mca_osc_umr.output, "osc_umr: " _fmt, \
                        ## __VA_ARGS__)

END_C_DECLS

#endif
