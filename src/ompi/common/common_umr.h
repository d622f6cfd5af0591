/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: what the Open MPI components over mlx5_umr share
 * (pml/umr now, osc/umr next), placed as Open MPI places code shared by
 * components (opal/mca/common/NAME -> libmca_common_NAME). One header per
 * object, each used from above only:
 *
 *   common_umr_devices.h   which mlx5_umr devices become rails (plain C)
 *   common_umr_rail.h      the UCT module, worker and rails; the modex
 *   common_umr_progress.h  progress: work items, deferred frees
 *   common_umr_keys.h      registration cache and layout keys per rail
 *   common_umr_peer.h      peers: the rail that reaches each, endpoints,
 *                          the connection handshake
 *   common_umr_dtype.h     MPI datatype -> layout, cached (the decoder of
 *                          src/mpi/decode behind a direct-mapped front)
 *
 * This header is the bottom of them: the library's log stream and counters.
 */
#ifndef MCA_COMMON_UMR_H_
#define MCA_COMMON_UMR_H_

#include <ompi_config.h>
#include <opal/util/output.h>
#include <opal/mca/base/mca_base_var.h>
#include <opal/prefetch.h>

#include <stdint.h>

BEGIN_C_DECLS

/* Counters of the shared objects; the component prints and publishes them
 * with its own (MPI_T performance variables). */
typedef struct mca_common_umr_counters {
    uint64_t connects;          /* endpoints connected */
    uint64_t keys_live;         /* registrations alive now (0 at the end) */
    uint64_t errors;            /* connections that failed */
    uint64_t reg_hits;          /* registration cache: region reused */
    uint64_t reg_misses;        /* region registered */
    uint64_t lkey_hits;         /* layout key reused */
    uint64_t lkey_misses;       /* layout key made */
    uint64_t retired;           /* peers retired to pass-through */
    uint64_t conns_live;        /* peers with an endpoint now */
    uint64_t conns_max;         /* its high-water mark (<= the budget,
                                   pml_umr_max_conns) */
    uint64_t disconnects;       /* endpoints destroyed: the least recently
                                   used idle peer, to make room, or because
                                   the peer dropped its end */
    uint64_t budget_passthrough; /* zero-copy messages passed through for
                                    want of a connection: the budget full
                                    and every connected peer busy, or a
                                    disconnect under way (sender: of
                                    fallbacks; receiver: of declined) */
    uint64_t rails_retired;     /* rails retired (every peer on them) */
    uint64_t rails_reopened;    /* retired rails whose port came back */
    uint64_t keys_reclaimed;    /* idle layout keys given back because the
                                   key pool ran short (least recently used
                                   first) */
} mca_common_umr_counters_t;

typedef struct mca_common_umr {
    int                       output;   /* the component's verbose stream */
    const char                *who;     /* its name in log lines: "pml_umr" */
    mca_common_umr_counters_t cnt;
} mca_common_umr_t;

OMPI_DECLSPEC extern mca_common_umr_t mca_common_umr;

#define MCA_COMMON_UMR_VERBOSE(_lvl, _fmt, ...) \
    opal_output_verbose(_lvl, mca_common_umr.output, "%s: " _fmt, \
                        mca_common_umr.who, ## __VA_ARGS__)

/* The component's verbose stream and name (before anything else). */
OMPI_DECLSPEC void mca_common_umr_init(int output, const char *who);

/* A read-only MCA parameter of component `c`, its default already in
 * *storage: the registration every parameter of ours shares. */
static inline void mca_common_umr_param(const mca_base_component_t *c,
                                        const char *name, const char *help,
                                        mca_base_var_type_t type, int level,
                                        void *storage)
{
    (void)mca_base_component_var_register(c, name, help, type, NULL, 0, 0,
                                          (mca_base_var_info_lvl_t)level,
                                          MCA_BASE_VAR_SCOPE_READONLY,
                                          storage);
}

END_C_DECLS

#endif
