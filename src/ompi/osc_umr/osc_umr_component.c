/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr component: MCA parameters, and window creation in front of the
 * osc component Open MPI would choose (the osc/monitoring pattern).
 *
 * query:  osc/umr's priority (osc_umr_priority, above the others), unless
 *         disabled, under MPI_THREAD_MULTIPLE, or the window's info says
 *         "osc_umr_enable" "false" (-1: Open MPI then selects as if osc/umr
 *         were not installed).
 * select: ask every other component (query), let the best one create the
 *         window, then put osc/umr in front of its module
 *         (osc_umr_win.h); when that is not possible the window is the
 *         wrapped module's, unchanged.
 */
#include "osc_umr.h"
#include "osc_umr_fault.h"
#include "osc_umr_module.h"
#include "common_umr.h"

#include <ompi/mca/osc/base/base.h>
#include <ompi/runtime/mpiruntime.h>
#include <ompi/runtime/params.h>
#include <opal/mca/base/mca_base_var.h>
#include <opal/mca/base/mca_base_var_enum.h>
#include <opal/util/info.h>

OMPI_DECLSPEC extern ompi_osc_base_component_t mca_osc_umr_component;

static int mca_osc_umr_component_register(void)
{
    static const mca_base_var_enum_value_t zcopy_values[] = {
        {MCA_OSC_UMR_ZCOPY_AUTO, "auto"},
        {MCA_OSC_UMR_ZCOPY_ON,   "on"},
        {MCA_OSC_UMR_ZCOPY_OFF,  "off"},
        {0, NULL}
    };
    const mca_base_component_t *c = &mca_osc_umr_component.osc_version;
    static const mca_base_var_enum_value_t packed_values[] = {
        {MCA_OSC_UMR_PACKED_AUTO, "auto"},
        {MCA_OSC_UMR_PACKED_ON,   "on"},
        {MCA_OSC_UMR_PACKED_OFF,  "off"},
        {0, NULL}
    };

    mca_osc_umr.self   = c;
    mca_osc_umr.enable = 1;
    mca_common_umr_param(c, "enable",
            "Put osc/umr in front of the osc component Open MPI selects (0: "
            "every window is exactly as without it)",
            MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_3, &mca_osc_umr.enable);

    mca_osc_umr.priority = 200;
    mca_common_umr_param(c, "priority",
            "Selection priority: above every other osc component, which "
            "osc/umr then asks to create the window",
            MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, &mca_osc_umr.priority);

    mca_osc_umr.zcopy_mode = MCA_OSC_UMR_ZCOPY_AUTO;
    mca_common_umr_param_enum(c, "zcopy", zcopy_values,
            "Zero-copy choice for put and get: auto (MPI_Win_create windows, "
            "a noncontiguous origin or target), on (also contiguous ones: "
            "tests), off (never: windows are left to the wrapped module)",
            OPAL_INFO_LVL_4, &mca_osc_umr.zcopy_mode);

    mca_osc_umr.min_size = 1;
    mca_common_umr_param(c, "min_size",
            "Smallest put or get (bytes of data) moved zero-copy",
            MCA_BASE_VAR_TYPE_UNSIGNED_LONG, OPAL_INFO_LVL_4,
            &mca_osc_umr.min_size);

    /* bench_osc_umr on the 2-core development VM (contrib/run-osc-bench.sh,
     * README): with 64 KiB blocks osc/umr was 0.76-1.10x of osc/rdma, with
     * 32 KiB blocks 1.1-1.4x, below that faster */
    mca_osc_umr.sw_max_block = 32768;
    mca_common_umr_param(c, "sw_max_block",
            "osc_umr_zcopy=auto on the sw engine (cross-memory attach): "
            "operations whose average contiguous block (the smaller of "
            "origin's and target's) is larger pass through, the wrapped "
            "module moving such blocks as fast (0: no limit)",
            MCA_BASE_VAR_TYPE_UNSIGNED_LONG, OPAL_INFO_LVL_4,
            &mca_osc_umr.sw_max_block);

    /* the rails' parameters, shared with pml/umr (used when osc/umr opens
     * the core itself) */
    mca_common_umr_params_register(c);

    mca_osc_umr.packed_mode = MCA_OSC_UMR_PACKED_AUTO;
    mca_common_umr_param_enum(c, "packed", packed_values,
            "Packed path for put and get (osc_umr_packed.h: the origin packs, "
            "one message, the target unpacks from its progress): auto (where "
            "the choice from measured costs takes it), on (instead of every "
            "zero-copy operation: tests), off (never)", OPAL_INFO_LVL_4,
            &mca_osc_umr.packed_mode);

    /* bench_osc_umr on the sw engine: a cross-memory-attach write costs
     * about 0.3 us a remote block, packing and unpacking about 0.1-0.2 ns
     * a byte a side (docs/osc_umr.md) */
    mca_osc_umr.packed_max_block = 1024;
    mca_common_umr_param(c, "packed_max_block",
            "osc_umr_packed=auto without packed figures in the costs file: "
            "on the sw engine, operations whose average contiguous block "
            "(the smaller of origin's and target's) is at most this many "
            "bytes go packed (0: none)",
            MCA_BASE_VAR_TYPE_UNSIGNED_LONG, OPAL_INFO_LVL_4,
            &mca_osc_umr.packed_max_block);

    /* the test variant's parameter (osc_umr_fault.h) */
    mca_osc_umr_test_register(c);

    mca_osc_umr.verbose = 0;
    (void)mca_base_component_var_register(c, "verbose",
            "Verbosity: 1 prints the counters of each rank at MPI_Finalize "
            "(\"osc_umr: rank N: zcopy_puts ...\") and each key a target "
            "could not answer; 5 windows and memory left to the wrapped "
            "module, refused operations and the costs used; 10 the key "
            "protocol, windows wrapped, attach and detach",
            MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_3,
            MCA_BASE_VAR_SCOPE_LOCAL, &mca_osc_umr.verbose);
    return OMPI_SUCCESS;
}

static int mca_osc_umr_component_open(void)
{
    mca_osc_umr.output = opal_output_open(NULL);
    opal_output_set_verbosity(mca_osc_umr.output,
                              mca_osc_umr.verbose);
    mca_osc_umr_test_init();
    return OMPI_SUCCESS;
}

/* The rails' parameters osc/umr registered (pml/umr not there) go with
 * it: their storage is libmca_common_umr's. */
static int mca_osc_umr_component_close(void)
{
    mca_common_umr_params_deregister();
    return OMPI_SUCCESS;
}

static int mca_osc_umr_component_init(bool enable_progress_threads,
                                      bool enable_mpi_threads)
{
    return OMPI_SUCCESS;
}

static int mca_osc_umr_component_finalize(void)
{
    const mca_osc_umr_counters_t *c = &mca_osc_umr.cnt;

    if (mca_osc_umr.opened) {
        mca_osc_umr.opened = 0;
        mca_common_umr_release();
        mca_common_umr_close();
    }

    if ((mca_osc_umr.verbose >= 1) &&
        (c->windows_wrapped + c->windows_plain > 0)) {
        opal_output(0, "osc_umr: rank %d: windows_wrapped %lu windows_plain "
                    "%lu zcopy_puts %lu zcopy_gets %lu zcopy_bytes %lu "
                    "passthrough %lu key_requests %lu key_ready %lu "
                    "key_refused %lu key_answers %lu key_errors %lu "
                    "zcopy_errors %lu attached %lu invals_sent %lu "
                    "invals_received %lu keys_dropped %lu "
                    "range_refused %lu key_unanswered %lu "
                    "answers_lost %lu kreq_retired %lu kreq_unreceived %lu "
                    "packed_puts %lu packed_gets %lu packed_bytes %lu "
                    "packed_refused %lu packed_unpacked %lu "
                    "packed_served %lu packed_tgt_refused %lu keys_short %lu",
                    mca_osc_umr.world_rank,
                    c->windows_wrapped, c->windows_plain, c->zcopy_puts,
                    c->zcopy_gets, c->zcopy_bytes, c->passthrough,
                    c->key_requests, c->key_ready, c->key_refused,
                    c->key_answers, c->key_errors, c->zcopy_errors,
                    c->attached, c->invals_sent, c->invals_received,
                    c->keys_dropped, c->range_refused, c->key_unanswered,
                    c->answers_lost, c->kreq_retired, c->kreq_unreceived,
                    c->packed_puts, c->packed_gets, c->packed_bytes,
                    c->packed_refused, c->packed_unpacked, c->packed_served,
                    c->packed_tgt_refused, c->keys_short);
    }
    return OMPI_SUCCESS;
}

static int mca_osc_umr_component_query(ompi_win_t *win, void **base,
                                       size_t size,
                                       umr_ompi_osc_disp_unit_t disp_unit,
                                       ompi_communicator_t *comm,
                                       opal_info_t *info, int flavor)
{
    bool value = true;
    int flag   = 0;

    if (!mca_osc_umr.enable || ompi_mpi_thread_multiple) {
        return -1;
    }
    /* a window's info may keep osc/umr out of it (benchmarks compare the
     * two side by side): the window is then created exactly as without */
    if ((info != NULL) &&
        (opal_info_get_bool(info, (char*)MCA_OSC_UMR_INFO_ENABLE, &value,
                            &flag) == OPAL_SUCCESS) && flag && !value) {
        return -1;
    }
    return mca_osc_umr.priority;
}

static int mca_osc_umr_component_select(ompi_win_t *win, void **base,
                                        size_t size,
                                        umr_ompi_osc_disp_unit_t disp_unit,
                                        ompi_communicator_t *comm,
                                        opal_info_t *info, int flavor,
                                        int *model)
{
    ompi_osc_base_component_t *best = NULL, *component;
    mca_base_component_list_item_t *cli;
    int best_priority = -1, priority, rc;

    OPAL_LIST_FOREACH(cli, &ompi_osc_base_framework.framework_components,
                      mca_base_component_list_item_t) {
        component = (ompi_osc_base_component_t*)cli->cli_component;
        if (component == &mca_osc_umr_component) {
            continue;
        }
        priority = component->osc_query(win, base, size, disp_unit, comm, info,
                                        flavor);
        if (priority > best_priority) {
            best          = component;
            best_priority = priority;
        }
    }
    if (best == NULL) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    rc = best->osc_select(win, base, size, disp_unit, comm, info, flavor,
                          model);
    if (rc != OMPI_SUCCESS) {
        return rc;
    }
    MCA_OSC_UMR_VERBOSE(10, "window created by osc/%s",
                        best->osc_version.mca_component_name);
    mca_osc_umr.world_rank =
            ompi_comm_rank(&ompi_mpi_comm_world.comm);
    return mca_osc_umr_module_wrap(win, (base != NULL) ? *base : NULL, size,
                                   disp_unit, comm, flavor,
                                   best->osc_version.mca_component_name);
}

ompi_osc_base_component_t mca_osc_umr_component = {
        .osc_version = {
            UMR_OMPI_OSC_BASE_VERSION,
            .mca_component_name            = "umr",
            MCA_BASE_MAKE_VERSION(component, OMPI_MAJOR_VERSION,
                                  OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION),
            .mca_open_component            = mca_osc_umr_component_open,
            .mca_close_component           = mca_osc_umr_component_close,
            .mca_register_component_params = mca_osc_umr_component_register,
        },
        .osc_data = {
            MCA_BASE_METADATA_PARAM_NONE
        },
        .osc_init     = mca_osc_umr_component_init,
        .osc_query    = mca_osc_umr_component_query,
        .osc_select   = mca_osc_umr_component_select,
        .osc_finalize = mca_osc_umr_component_finalize,
};
