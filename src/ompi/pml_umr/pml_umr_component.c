/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr component: MCA parameters, and the interposition in front of the
 * PML that wins selection (the pml/monitoring pattern).
 *
 * open:  add "umr" to the selection list only so that its name is accepted;
 *        init returns no module, so pml/umr never wins.
 * close: called by the framework on the losers right after selection. Keep
 *        the component loaded, save the winner's component and module, open
 *        the transport and install a copy of the winner's table with pml/umr's
 *        send/recv/probe entry points. Anything that fails leaves the winner
 *        in place untouched (one log line says why).
 * finalize (as the selected component): restore the winner, close the
 *        transport, print counters, and finalize the winner.
 */
#include "pml_umr.h"
#include "pml_umr_fault.h"
#include "pml_umr_hook.h"
#include "pml_umr_module.h"
#include "pml_umr_recv.h"
#include "pml_umr_request.h"
#include "pml_umr_send.h"
#include "pml_umr_test.h"
#include "common_umr.h"
#include "common_umr_binding.h"
#include "umr_mpi_env.h"
#include "common_umr_help.h"
#include "umr_mpi_choice.h"
#include "umr_mpi_dtype.h"
#include "umr_mpi_proto.h"

#include <ompi/mca/pml/base/pml_base_request.h>
#include <ompi/runtime/mpiruntime.h>
#include <ompi/runtime/params.h>
#include <ompi/version.h>
#include <opal/mca/base/mca_base_component_repository.h>
#include <opal/mca/base/mca_base_var.h>
#include <opal/mca/base/mca_base_var_enum.h>
#include <opal/mca/base/mca_base_pvar.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MCA_PML_UMR_HELP_DIR
#define MCA_PML_UMR_HELP_DIR NULL
#endif

static int mca_pml_umr_component_fini(void);

/* The core's transfers of pml/umr's requests end here. */
static void mca_pml_umr_xfer_complete(umr_mpi_xfer_t *x)
{
    mca_pml_umr_request_t *req = mca_pml_umr_request_of(x);

    if (req->kind == MCA_PML_UMR_REQ_SEND) {
        mca_pml_umr_send_done(req);
    } else {
        mca_pml_umr_recv_done(req);
    }
}

/* The user-message side of the binding (umr_mpi_proto.h). */
static const umr_mpi_xfer_ops_t mca_pml_umr_xfer_ops = {
    .ctl_send  = mca_pml_umr_send_ctl,
    .data_send = mca_pml_umr_send_data,
    .data_recv = mca_pml_umr_recv_data,
    .peek      = mca_pml_umr_recv_peek,
    .complete  = mca_pml_umr_xfer_complete
};

static int mca_pml_umr_component_register(void)
{
    static const mca_base_var_enum_value_t zcopy_values[] = {
        {UMR_MPI_ZCOPY_AUTO, "auto"},
        {UMR_MPI_ZCOPY_ON,   "on"},
        {UMR_MPI_ZCOPY_OFF,  "off"},
        {0, NULL}
    };
    const mca_base_component_t *c = &mca_pml_umr_component.pmlm_version;

    mca_pml_umr.enable = 1;
    mca_common_umr_param(c, "enable",
            "Interpose pml/umr in front of the selected PML (0: the job runs "
            "exactly as without it)",
            MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_3, &mca_pml_umr.enable);

    mca_pml_umr.verbose = 0;
    (void)mca_base_component_var_register(c, "verbose",
            "Verbosity: 1 prints the counters of each rank at MPI_Finalize "
            "(\"pml_umr: rank N: zcopy_sends ...\"), why a job or a peer "
            "passes through and the budget of connected peers; 2 the costs "
            "of the zero-copy choice; 5 the rails and the UCT module opened; "
            "10 peers and registrations; 20 each control message and decline",
            MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_3,
            MCA_BASE_VAR_SCOPE_LOCAL, &mca_pml_umr.verbose);

    mca_pml_umr.zcopy_mode = UMR_MPI_ZCOPY_AUTO;
    mca_common_umr_param_enum(c, "zcopy", zcopy_values,
            "Zero-copy choice for eligible messages: auto (per message, from "
            "the layout and the peer's engine), on (always: tests), off "
            "(never: everything passes through)", OPAL_INFO_LVL_4,
            &mca_pml_umr.zcopy_mode);

    mca_pml_umr.min_size = UMR_MPI_CTL_SIZE;
    mca_common_umr_param(c, "min_size",
            "Smallest message (packed bytes) moved zero-copy; values below "
            "the control message size (4160) are raised to it",
            MCA_BASE_VAR_TYPE_UNSIGNED_LONG, OPAL_INFO_LVL_4,
            &mca_pml_umr.min_size);

    mca_pml_umr.recv_inplace = 1;
    mca_common_umr_param(c, "recv_inplace",
            "Nonblocking receives of at least the control message size (4160 "
            "bytes) are the wrapped PML's own requests, hooked in place "
            "(ob1, ucx; 0, and any other PML: a pml/umr request wraps each)",
            MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_5, &mca_pml_umr.recv_inplace);

    /* the rails' parameters, shared with osc/umr */
    mca_common_umr_params_register(c);

    /* the test variant's parameters (pml_umr_test.h) */
    mca_pml_umr_test_register(c);

    /* the transport's variables count as used before pml ucx's UCP
     * worker looks for unused ones (umr_mpi_env.h) */
    if (mca_pml_umr.enable && umr_mpi_ucx_tls_allows()) {
        umr_mpi_env_claim();
    }

    /* listed by ompi_info; registered again once interposed, because the
     * framework deregisters a closed component's variables */
    mca_pml_umr.self = c;
    mca_pml_umr_pvars_register();
    return OMPI_SUCCESS;
}

/* The loader checks only the MCA version: pml/umr uses Open MPI's internal
 * structures (requests, PML module, datatypes), so it runs only in the
 * release it was built against (ompi_version_string is the release's ident
 * string, e.g. "5.0.7", the same macro at build time), and only when the
 * classes it uses have the sizes it was compiled with (src/compat/
 * umr_ompi_abi.h: a rebuild of the release with other options may change
 * them). The test variant may fake a mismatch (pml_umr_test.h). */
static int mca_pml_umr_version_ok(void)
{
    const char *running = mca_pml_umr_test_version();
    static const struct {
        const char        *name;
        size_t            size;
        const opal_class_t *cls;
    } classes[] = {
#define MCA_PML_UMR_ABI_CLASS(_t) {#_t, sizeof(_t), &_t##_class},
        UMR_OMPI_ABI_CLASSES(MCA_PML_UMR_ABI_CLASS)
    };
    size_t i;

    if (running == NULL) {
        running = ompi_version_string;
    }
    if (strcmp(running, OMPI_IDENT_STRING)) {
        mca_common_umr_show_help("help-mpi-pml-umr.txt", "version-mismatch",
                                 OMPI_IDENT_STRING, running);
        return 0;
    }
    for (i = 0; i < sizeof(classes) / sizeof(classes[0]); ++i) {
        if (classes[i].cls->cls_sizeof != classes[i].size) {
            mca_common_umr_show_help("help-mpi-pml-umr.txt", "class-size", running,
                                     classes[i].name,
                                     classes[i].cls->cls_sizeof,
                                     classes[i].size);
            return 0;
        }
    }
    return 1;
}

static int mca_pml_umr_component_open(void)
{
    mca_pml_umr.output = opal_output_open(NULL);
    /* help-mpi-pml-umr.txt and help-mpi-common-umr.txt: installed, or
     * beside the libraries in the build tree */
    mca_common_umr_help_add((const void*)&mca_pml_umr_component,
                            MCA_PML_UMR_HELP_DIR);
    opal_output_set_verbosity(mca_pml_umr.output, mca_pml_umr.verbose);
    return OMPI_SUCCESS;
}

/* The PML selection names pml/umr and nothing else ("--mca pml umr"): no
 * PML will be selected, and Open MPI's own message reads as if pml/umr were
 * not installed. */
static int mca_pml_umr_named_alone(void)
{
    const char **value = NULL;
    char *copy, *tok, *save = NULL;
    int idx, alone = 0;

    idx = mca_base_var_find("ompi", "pml", NULL, NULL);
    if ((idx < 0) ||
        (mca_base_var_get_value(idx, &value, NULL, NULL) != OPAL_SUCCESS) ||
        (value == NULL) || (*value == NULL) || ((*value)[0] == '\0') ||
        ((*value)[0] == '^') || (NULL == (copy = strdup(*value)))) {
        return 0;
    }
    for (tok = strtok_r(copy, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (strcmp(tok, "umr")) {
            free(copy);
            return 0;
        }
        alone = 1;
    }
    free(copy);
    return alone;
}

static mca_pml_base_module_t *
mca_pml_umr_component_init(int *priority, bool enable_progress_threads,
                           bool enable_mpi_threads)
{
    if (mca_pml_umr_named_alone()) {
        mca_common_umr_show_help("help-mpi-pml-umr.txt", "alone");
    }
    return NULL; /* never selected: interposed from close */
}

static int mca_pml_umr_counters_print(void)
{
    const mca_pml_umr_counters_t *c = &mca_pml_umr.cnt;
    const umr_mpi_counters_t *s     = &umr_mpi.cnt;
    umr_mpi_dtype_stats_t ds;

    if (mca_pml_umr.verbose >= 1) {
        umr_mpi_dtype_cache_stats(&ds);
        opal_output(0, "pml_umr: rank %d: zcopy_sends %lu zcopy_recvs %lu "
                    "zcopy_bytes %lu escapes %lu recv_checked %lu "
                    "passthrough_sends %lu connects %lu reg_hits %lu "
                    "reg_misses %lu lkey_hits %lu lkey_misses %lu "
                    "keys_live %lu errors %lu stash %d inplace %lu "
                    "fallbacks %lu prefiltered %lu decoded %lu declined %lu "
                    "fault_declines %lu fallback_sends %lu acks_dropped %lu "
                    "acks_posted %lu retired %lu conns_max %lu disconnects "
                    "%lu budget_passthrough %lu rails_retired %lu "
                    "rails_reopened %lu keys_reclaimed %lu mem_regs %lu "
                    "decided_send %lu decided_recv %lu computed %lu",
                    ompi_comm_rank(&ompi_mpi_comm_world.comm),
                    s->zcopy_sends, s->zcopy_recvs, s->zcopy_bytes, c->escapes,
                    c->recv_checked, c->passthrough_sends, s->connects,
                    s->reg_hits, s->reg_misses, s->lkey_hits, s->lkey_misses,
                    s->keys_live, c->errors + s->errors,
                    mca_pml_umr.stash_count, c->recv_inplace, s->fallbacks,
                    c->prefiltered, ds.decoded + ds.unsupported, s->declined,
                    s->fault_declines, s->fallback_sends, s->acks_dropped,
                    s->acks_posted, s->retired, s->conns_max, s->disconnects,
                    s->budget_passthrough, s->rails_retired,
                    s->rails_reopened, s->keys_reclaimed,
                    umr_mpi_rails_mem_regs(), s->decided_send,
                    s->decided_recv, s->computed);
    }
    return OMPI_SUCCESS;
}

/* The automatic choice, for the PML just wrapped (umr_mpi_choice.h): one
 * line when the costs file is rejected, its source at verbosity 2. */
static void mca_pml_umr_choice_init(void)
{
    char msg[768];

    if (umr_mpi_choice_init(mca_pml_umr.zcopy_mode, mca_pml_umr.min_size,
                            mca_common_umr_params.cost_file,
                            mca_pml_umr.real_component.pmlm_version.
                            mca_component_name, msg, sizeof(msg)) < 0) {
        mca_common_umr_show_help("help-mpi-pml-umr.txt", "costs-rejected",
                                 msg);
    } else {
        MCA_PML_UMR_VERBOSE(2, "%s", msg);
    }
    mca_pml_umr.bounds = umr_mpi_bounds;
}

static int mca_pml_umr_interpose(void)
{
    const char *name;

    mca_common_umr_init(mca_pml_umr.output, "pml_umr");
    if (!mca_pml_umr.enable) {
        MCA_PML_UMR_VERBOSE(1, "disabled (pml_umr_enable=0)");
        return OMPI_ERR_NOT_AVAILABLE;
    }
    if (ompi_mpi_thread_multiple) {
        MCA_PML_UMR_VERBOSE(1, "MPI_THREAD_MULTIPLE: passing everything "
                            "through");
        return OMPI_ERR_NOT_AVAILABLE;
    }
    /* Open MPI 5 selects the PML for the first MPI session or for
     * MPI_Init, whichever comes first; MPI_COMM_WORLD (which pml/umr's
     * internal messages use) exists only with MPI_Init. A process that
     * does not interpose publishes no modex data, so its peers pass
     * through to it too. */
    if (ompi_mpi_state != OMPI_MPI_STATE_INIT_STARTED) {
        MCA_PML_UMR_VERBOSE(1, "PML selected for an MPI session, not for "
                            "MPI_Init (no MPI_COMM_WORLD): passing "
                            "everything through");
        return OMPI_ERR_NOT_AVAILABLE;
    }
    if (umr_ompi_ft_enabled()) {
        MCA_PML_UMR_VERBOSE(1, "MPI fault tolerance (mpi_ft_enable) is on: "
                            "passing everything through");
        return OMPI_ERR_NOT_AVAILABLE;
    }
    if (!mca_pml_umr_version_ok()) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    if (mca_pml_umr.min_size < UMR_MPI_CTL_SIZE) {
        mca_pml_umr.min_size = UMR_MPI_CTL_SIZE;
    }
    /* test faults first: `norail` acts on the first peer resolved */
    mca_pml_umr_test_init();
    /* the core, its rails published in the modex (to come): peers take us
     * for one of theirs only once they are open */
    if (mca_common_umr_open("pml_umr", mca_pml_umr.output,
                            mca_pml_umr.verbose, &mca_pml_umr_component,
                            &mca_pml_umr_component.pmlm_version,
                            UMR_MPI_ADDR_P2P) != OMPI_SUCCESS) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    mca_pml_umr_requests_init();
    mca_pml_umr_hook_init();
    umr_mpi_proto_init(&mca_pml_umr_xfer_ops);

    mca_pml_umr.real_component = mca_pml_base_selected_component;
    mca_pml_umr.real           = mca_pml;
    mca_common_umr_pml         = &mca_pml_umr.real;
    /* ob1's and ucx's receive requests are known (pml_umr_hook.c) */
    if (mca_pml_umr.recv_inplace) {
        name = mca_pml_umr.real_component.pmlm_version.mca_component_name;
        mca_pml_umr.recv_inplace = !strcmp(name, "ob1") ?
                                   MCA_PML_UMR_INPLACE_OB1 :
                                   !strcmp(name, "ucx") ?
                                   MCA_PML_UMR_INPLACE_UCX :
                                   MCA_PML_UMR_INPLACE_OFF;
    }
    /* what the wrapped PML says of a buffered send without room in the
     * attached buffer: ob1 MPI_ERR_BUFFER, pml ucx OMPI_ERROR
     * (MPI_ERR_OTHER) */
    mca_pml_umr.bsend_no_room =
        strcmp(mca_pml_umr.real_component.pmlm_version.mca_component_name,
               "ucx") ? OMPI_ERR_BUFFER : OMPI_ERROR;
    mca_pml_umr_choice_init();

    mca_pml_umr_module_build(&mca_pml_umr.real, &mca_pml_umr_module);
    mca_pml = mca_pml_umr_module;
    /* The selected component stays the wrapped one, so that what Open MPI
     * reports about it (the comm_method hook, error messages) names it as
     * without pml/umr; only its finalize is pml/umr's, which restores it
     * and finalizes it (as pml/v does). */
    mca_pml_base_selected_component.pmlm_finalize =
        mca_pml_umr_component_fini;
    mca_pml_umr.active = 1;
    MCA_PML_UMR_VERBOSE(5, "interposed in front of pml %s",
                        mca_pml_umr.real_component.pmlm_version.mca_component_name);
    return OMPI_SUCCESS;
}

static int mca_pml_umr_component_close(void)
{
    /* Only right after a selection: the framework closes the losers. Not in
     * ompi_info, nor when we are closed at the end. */
    if (mca_pml_umr.active || (mca_pml.pml_send == NULL) ||
        (mca_pml.pml_send == mca_pml_umr_send)) {
        return OMPI_SUCCESS;
    }
    if (OPAL_SUCCESS != mca_base_component_repository_retain_component(
                mca_pml_umr_component.pmlm_version.mca_type_name,
                mca_pml_umr_component.pmlm_version.mca_component_name)) {
        return OMPI_SUCCESS;
    }
    if (mca_pml_umr_interpose() != OMPI_SUCCESS) {
        mca_base_component_repository_release(
                &mca_pml_umr_component.pmlm_version);
    }
    return OMPI_SUCCESS;
}

static int mca_pml_umr_component_fini(void)
{
    mca_pml_base_component_t real = mca_pml_umr.real_component;

    if (!mca_pml_umr.active) {
        return OMPI_SUCCESS;
    }
    mca_pml_umr_requests_fini();
    mca_pml_umr_hook_fini();
    umr_mpi_proto_fini();
    mca_common_umr_release();
    mca_pml_umr_counters_print();
    mca_common_umr_close();
    mca_pml_base_selected_component = real;
    mca_pml                         = mca_pml_umr.real;
    mca_pml_umr.active              = 0;
    /* the extra reference from close stays: our code may still be on the
     * stack of the caller (as pml/monitoring does) */
    return (real.pmlm_finalize != NULL) ? real.pmlm_finalize() : OMPI_SUCCESS;
}

mca_pml_base_component_t mca_pml_umr_component = {
    .pmlm_version = {
        UMR_OMPI_PML_BASE_VERSION,
        .mca_component_name            = "umr",
        MCA_BASE_MAKE_VERSION(component, OMPI_MAJOR_VERSION,
                              OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION),
        .mca_open_component            = mca_pml_umr_component_open,
        .mca_close_component           = mca_pml_umr_component_close,
        .mca_register_component_params = mca_pml_umr_component_register,
    },
    .pmlm_data = {
        MCA_BASE_METADATA_PARAM_NONE
    },
    .pmlm_init     = mca_pml_umr_component_init,
    .pmlm_finalize = mca_pml_umr_component_fini,
};
