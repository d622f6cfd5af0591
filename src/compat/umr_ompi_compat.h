/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr: where Open MPI's internals differ between its releases, 4.1 to
 * 6.0, for pml/umr (src/ompi/pml_umr).
 *
 * configure probes each difference (m4/ompi.m4, UMR_CHECK_OMPI_INTERNALS:
 * declarations, module members, headers) and this header turns the results
 * into one API, so no other file tests an Open MPI version. The layout of
 * the PML module table is pinned at the end: a release that adds a slot
 * pml/umr does not know fails to compile here, instead of running with a
 * slot pml/umr never decided about.
 *
 * What needs nothing here (checked in each release's source and headers):
 * the request, receive request and datatype structures pml/umr reads
 * (ompi_request_t, mca_pml_base_request_t, opal_convertor_*), the request
 * completion protocol (ompi_request_complete, ompi_request_set_callback),
 * the modex macros (OPAL_MODEX_SEND/RECV), ompi_mpi_state and the
 * communicator calls pml/umr makes. The one communicator id it reads is
 * umr_ompi_comm_gid() below (never the local ids of 5.0).
 */
#ifndef UMR_OMPI_COMPAT_H_
#define UMR_OMPI_COMPAT_H_

#include "umr_config.h"

#include <ompi_config.h>
#include <ompi/mca/pml/pml.h>
#include <ompi/runtime/params.h>
#ifdef HAVE_OPAL_MCA_PMIX_PMIX_INTERNAL_H
#  include <opal/mca/pmix/pmix-internal.h>   /* 5.0 */
#else
#  include <opal/mca/pmix/pmix.h>            /* 4.1 */
#endif

#include "umr_ompi_abi.h"

#include <opal/util/show_help.h>

#include <stdarg.h>
#include <stddef.h>


/* Whether opal_show_help reads the help files of out-of-tree components:
 * up to 5.0 it searches the directories opal_show_help_add_dir() adds; from
 * 6.0 the help texts are compiled into libopen-pal, and another file is not
 * found there (src/ompi/common/common_umr_help.c then renders it). */
#if defined(HAVE_DECL_OPAL_SHOW_HELP_GET_CONTENT) && \
    HAVE_DECL_OPAL_SHOW_HELP_GET_CONTENT
#  define UMR_OMPI_HELP_FILES_AT_RUN_TIME 0
#else
#  define UMR_OMPI_HELP_FILES_AT_RUN_TIME 1
#endif


/* A 64-bit id of a communicator, the same in all its processes (an answer
 * names the communicator of the message it answers, pml_umr_wire.h): 4.1's
 * context id (agreed by all members), from 5.0 the extended id (its
 * c_index is local to each process). */
#include <ompi/communicator/communicator.h>
static inline uint64_t umr_ompi_comm_gid(const ompi_communicator_t *comm)
{
#if defined(HAVE_DECL_OMPI_COMM_GET_EXTENDED_CID) && \
    HAVE_DECL_OMPI_COMM_GET_EXTENDED_CID
    ompi_comm_extended_cid_t cid = ompi_comm_get_extended_cid(comm);

    return (cid.cid_base * 0x9e3779b97f4a7c15ull) ^ cid.cid_sub.u64;
#else
    return comm->c_contextid;
#endif
}


/* Memory of the buffer the user attached for buffered sends
 * (MPI_Buffer_attach), as the wrapped PMLs take it for theirs: NULL when
 * none is attached or it has no room (MPI_ERR_BUFFER). Released with
 * umr_ompi_bsend_free, which lets MPI_Buffer_detach return. From 6.0 the
 * buffer is the communicator's (or its session's, or the process's). */
#include <ompi/mca/pml/base/pml_base_bsend.h>
static inline void *umr_ompi_bsend_alloc(ompi_communicator_t *comm,
                                         size_t len)
{
#ifdef HAVE_OMPI_BSEND_BUFFER_TYPE_T
    return mca_pml_base_bsend_request_alloc_buf(comm, len);
#else
    (void)comm;
    return mca_pml_base_bsend_request_alloc_buf(len);
#endif
}

static inline void umr_ompi_bsend_free(ompi_communicator_t *comm, void *addr)
{
#ifdef HAVE_OMPI_BSEND_BUFFER_TYPE_T
    (void)mca_pml_base_bsend_request_free(comm, addr);
#else
    (void)comm;
    (void)mca_pml_base_bsend_request_free(addr);
#endif
}

/* The PML framework's component version: 2.0.0 up to 4.1, 2.1.0 from 5.0
 * (the component structure is mca_pml_base_component_t in both). */
#if HAVE_DECL_MCA_PML_BASE_VERSION_2_1_0
#  define UMR_OMPI_PML_BASE_VERSION MCA_PML_BASE_VERSION_2_1_0
#else
#  define UMR_OMPI_PML_BASE_VERSION MCA_PML_BASE_VERSION_2_0_0
#endif

/* The modex scope of data every process of the job may read: PMIx's own
 * PMIX_GLOBAL from 5.0, OPAL's alias of it before. */
#if HAVE_DECL_PMIX_GLOBAL
#  define UMR_OMPI_MODEX_GLOBAL PMIX_GLOBAL
#else
#  define UMR_OMPI_MODEX_GLOBAL OPAL_PMIX_GLOBAL
#endif

/* Whether MPI fault tolerance (ULFM, mpi_ft_enable) is on: Open MPI then
 * reads every PML request as an ob1 request (ompi_request_is_failed_fn in
 * ompi/request/req_ft.c), which pml/umr's own requests are not. Built in
 * from 5.0 (Debian's builds have it), off unless asked for. */
static inline int umr_ompi_ft_enabled(void)
{
#if HAVE_DECL_OMPI_FTMPI_ENABLED
    return ompi_ftmpi_enabled;
#else
    return 0;
#endif
}


/* ---- the PML module table ------------------------------------------------
 *
 * Every slot of mca_pml_base_module_t, in order, with the releases that have
 * it. UMR_OMPI_PML_FN_SLOTS(_X) lists the function slots (the tests print
 * them); the struct below mirrors the whole table.
 */
#ifdef HAVE_MCA_PML_BASE_MODULE_T_PML_REVOKE_COMM
#  define UMR_OMPI_PML_SLOT_REVOKE_COMM(_X)    _X(pml_revoke_comm)    /* 5.0 */
#else
#  define UMR_OMPI_PML_SLOT_REVOKE_COMM(_X)
#endif
#ifdef HAVE_MCA_PML_BASE_MODULE_T_PML_FT_EVENT
#  define UMR_OMPI_PML_SLOT_FT_EVENT(_X)       _X(pml_ft_event)       /* to 4.1 */
#else
#  define UMR_OMPI_PML_SLOT_FT_EVENT(_X)
#endif
#ifdef HAVE_MCA_PML_BASE_MODULE_T_PML_GET_TRANSPORTS
#  define UMR_OMPI_PML_SLOT_GET_TRANSPORTS(_X) _X(pml_get_transports) /* 5.0 */
#else
#  define UMR_OMPI_PML_SLOT_GET_TRANSPORTS(_X)
#endif

#define UMR_OMPI_PML_FN_SLOTS_HEAD(_X) \
    _X(pml_add_procs) _X(pml_del_procs) _X(pml_enable) _X(pml_progress) \
    _X(pml_add_comm) _X(pml_del_comm) UMR_OMPI_PML_SLOT_REVOKE_COMM(_X) \
    _X(pml_irecv_init) _X(pml_irecv) _X(pml_recv) _X(pml_isend_init) \
    _X(pml_isend) _X(pml_send) _X(pml_iprobe) _X(pml_probe) _X(pml_start) \
    _X(pml_improbe) _X(pml_mprobe) _X(pml_imrecv) _X(pml_mrecv) \
    _X(pml_dump) UMR_OMPI_PML_SLOT_FT_EVENT(_X)
#define UMR_OMPI_PML_FN_SLOTS(_X) \
    UMR_OMPI_PML_FN_SLOTS_HEAD(_X) UMR_OMPI_PML_SLOT_GET_TRANSPORTS(_X)

#define UMR_OMPI_PML_FN_MEMBER(_slot) void (*_slot)(void);

/* The table as pml/umr knows it: the function slots, then the limits and
 * flags, then (5.0) pml_get_transports. */
struct umr_ompi_pml_module_known {
    UMR_OMPI_PML_FN_SLOTS_HEAD(UMR_OMPI_PML_FN_MEMBER)
    uint32_t pml_max_contextid;
    int      pml_max_tag;
    int      pml_flags;
    UMR_OMPI_PML_SLOT_GET_TRANSPORTS(UMR_OMPI_PML_FN_MEMBER)
};

#define UMR_OMPI_PML_SLOT_CHECK(_slot) \
    _Static_assert(offsetof(mca_pml_base_module_t, _slot) == \
                   offsetof(struct umr_ompi_pml_module_known, _slot), \
                   "mca_pml_base_module_t: " #_slot " is not where pml/umr " \
                   "expects it: this Open MPI has PML module slots pml/umr " \
                   "does not know (port src/compat/umr_ompi_compat.h)");
UMR_OMPI_PML_FN_SLOTS(UMR_OMPI_PML_SLOT_CHECK)
UMR_OMPI_PML_SLOT_CHECK(pml_flags)
_Static_assert(sizeof(mca_pml_base_module_t) ==
               sizeof(struct umr_ompi_pml_module_known),
               "mca_pml_base_module_t is larger than the slots pml/umr "
               "knows: this Open MPI has PML module slots pml/umr does not "
               "know (port src/compat/umr_ompi_compat.h)");

/* osc/umr (src/ompi/osc_umr): the osc framework's versions. Component 3.0.0
 * with int counts and displacement units in 4.1 and 5.0; from 6.0
 * component 4.0.0, size_t counts (MPI-4 large counts) and ptrdiff_t
 * displacement units (ompi/mca/osc/osc.h of each release). */
#include <ompi/mca/osc/osc.h>

#ifdef OMPI_OSC_BASE_VERSION_4_0_0
#  define UMR_OMPI_OSC_BASE_VERSION OMPI_OSC_BASE_VERSION_4_0_0
typedef size_t    umr_ompi_osc_count_t;
typedef ptrdiff_t umr_ompi_osc_disp_unit_t;
#else
#  define UMR_OMPI_OSC_BASE_VERSION OMPI_OSC_BASE_VERSION_3_0_0
typedef int       umr_ompi_osc_count_t;
typedef int       umr_ompi_osc_disp_unit_t;
#endif

/* The osc module table osc/umr copies and patches: the same 29 function
 * slots, in the same order, in 4.1, 5.0 and 6.0. A release that adds one
 * fails here instead of running with a slot osc/umr never decided about. */
_Static_assert(sizeof(ompi_osc_base_module_t) == 29 * sizeof(void (*)(void)),
               "ompi_osc_base_module_t has slots osc/umr does not know "
               "(port src/compat/umr_ompi_compat.h and osc_umr_win.c)");

#endif
