/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: Open MPI's binding of the mlx5_umr MPI core
 * (src/mpi/core, umr_mpi.h), shared by pml/umr and osc/umr, placed as Open
 * MPI places code shared by components (opal/mca/common/NAME ->
 * libmca_common_NAME). One header per object:
 *
 *   common_umr_binding.h   the core's binding over Open MPI: internal
 *                          messages through the wrapped PML, progress,
 *                          the addresses (modex, window allgathers), logs
 *   common_umr_dtype.h     MPI datatypes for the core (the decoder of
 *                          src/mpi/decode, compiled for Open MPI's ABI)
 *   common_umr_memhooks.h  Open MPI's memory hooks feed UCM
 *   common_umr_help.h      messages to users (opal_show_help)
 *
 * This header is the bottom of them: the binding's log stream and the
 * components' shared parameters.
 */
#ifndef MCA_COMMON_UMR_H_
#define MCA_COMMON_UMR_H_

#include <ompi_config.h>
#include <opal/util/output.h>
#include <opal/mca/base/mca_base_var.h>
#include <opal/prefetch.h>

#include <stdint.h>

BEGIN_C_DECLS

typedef struct mca_common_umr {
    int        output;   /* the first binder's verbose stream */
    const char *who;     /* its name in log lines: "pml_umr" */
} mca_common_umr_t;

OMPI_DECLSPEC extern mca_common_umr_t mca_common_umr;

#define MCA_COMMON_UMR_VERBOSE(_lvl, _fmt, ...) \
    opal_output_verbose(_lvl, mca_common_umr.output, "%s: " _fmt, \
                        mca_common_umr.who, ## __VA_ARGS__)

/* The first component's verbose stream and name, before anything else (its
 * messages to users name it). */
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

/* The same for an int parameter whose values are named by `values` (its
 * enumerator "<type>_<component>_<name>"). */
OMPI_DECLSPEC void
mca_common_umr_param_enum(const mca_base_component_t *c, const char *name,
                          const mca_base_var_enum_value_t *values,
                          const char *help, int level, int *storage);

END_C_DECLS

#endif
