/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr: where UCT (libuct) releases differ, UCX 1.13 to 1.23.
 *
 * mlx5_umr derives from UCT's internal classes and fills its internal ops
 * tables, which change between releases. configure probes each difference
 * (m4/ucx.m4, UMR_CHECK_UCX_INTERNALS: signatures, ops members,
 * declarations) and this header turns the results into one API for the
 * transport, so no other file tests a UCX version. The counts at the end
 * make a build against a UCX with an ops slot this header does not know fail
 * to compile, instead of leaving the slot NULL for UCX to call.
 */
#ifndef UMR_UCT_COMPAT_H_
#define UMR_UCT_COMPAT_H_

#include "umr_ucs_compat.h"

#include <uct/base/uct_md.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_component.h>

#include <stddef.h>
#include <string.h>


/* ---- md ops ------------------------------------------------------------ */

/* md query: uct_md_attr_v2_t since 1.14, its capabilities unnested. */
#if UMR_UCT_MD_QUERY_V2
typedef uct_md_attr_v2_t umr_uct_md_attr_t;
#  define UMR_UCT_MD_CAP(_attr) (*(_attr))
#else
typedef uct_md_attr_t umr_uct_md_attr_t;
#  define UMR_UCT_MD_CAP(_attr) ((_attr)->cap)
#endif

/* The defaults UCX gives an md's attributes before the md fills its own. */
static inline void umr_uct_md_attr_init(umr_uct_md_attr_t *md_attr)
{
#if HAVE_DECL_UCT_MD_BASE_MD_QUERY
    uct_md_base_md_query(md_attr);
#else
    memset(md_attr, 0, sizeof(*md_attr));
#  ifdef HAVE_UCT_MD_ATTR_V2_T_REG_ALIGNMENT
    md_attr->reg_alignment = 1;
#  endif
#endif
}

/* mem_reg: flags, or uct_md_mem_reg_params_t since 1.14. */
#if UMR_UCT_MD_MEM_REG_PARAMS
typedef const uct_md_mem_reg_params_t *umr_uct_mem_reg_arg_t;
#  define umr_uct_mem_reg_flags(_arg) \
    UCT_MD_MEM_REG_FIELD_VALUE(_arg, flags, FIELD_FLAGS, 0)
#else
typedef unsigned umr_uct_mem_reg_arg_t;
#  define umr_uct_mem_reg_flags(_arg) (_arg)
#endif

/* mkey_pack: the packed range's address and length since 1.16 (the whole
 * registration is packed either way). */
#if UMR_UCT_MD_MKEY_PACK_ADDRESS
#  define UMR_UCT_MKEY_PACK_RANGE_ARGS void *address, size_t length,
#else
#  define UMR_UCT_MKEY_PACK_RANGE_ARGS
#endif


/* ---- component ops ----------------------------------------------------- */

/* rkey_unpack: uct_rkey_unpack_params_t since 1.19 (nothing in it changes
 * how an mlx5_umr key is unpacked). */
#if UMR_UCT_RKEY_UNPACK_PARAMS
#  define UMR_UCT_RKEY_UNPACK_PARAMS_ARG const uct_rkey_unpack_params_t *params,
#else
#  define UMR_UCT_RKEY_UNPACK_PARAMS_ARG
#endif


/* ---- iface ops --------------------------------------------------------- */

/* is_reachable_v2 (1.15): the device scope came with it, or later. */
#ifdef HAVE_UCT_IFACE_IS_REACHABLE_PARAMS_T_SCOPE
#  define umr_uct_is_reachable_scope_device(_params) \
    (((_params)->field_mask & UCT_IFACE_IS_REACHABLE_FIELD_SCOPE) && \
     ((_params)->scope == UCT_IFACE_REACHABILITY_SCOPE_DEVICE))
#else
#  define umr_uct_is_reachable_scope_device(_params) 0
#endif


/* ---- guards: every ops slot of this UCX is known ----------------------- */

/* Counts, from the probes, of the function slots this header knows. */
enum {
    UMR_UCT_MD_OPS_KNOWN = 10 /* close .. mkey_pack, detect_memory_type */
#ifdef HAVE_UCT_MD_OPS_T_IS_SOCKADDR_ACCESSIBLE
        + 1
#endif
#ifdef HAVE_UCT_MD_OPS_T_MEM_ATTACH
        + 1
#endif
#ifdef HAVE_UCT_MD_OPS_T_MEM_ELEM_PACK
        + 1
#endif
#ifdef HAVE_UCT_MD_OPS_T_MEM_ELEM_RELEASE
        + 1
#endif
    ,
    UMR_UCT_IFACE_INTERNAL_OPS_KNOWN = 4 /* estimate_perf .. ep_invalidate */
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_CONNECT_TO_EP_V2
        + 1
#endif
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_IFACE_IS_REACHABLE_V2
        + 1
#endif
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_IS_CONNECTED
        + 1
#endif
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_GET_DEVICE_EP
        + 1
#endif
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_IFACE_QUERY_V2
        + 1
#endif
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_IFACE_MEM_ELEMENT_PACK
        + 1
#endif
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_PUT_SGL_ZCOPY
        + 1
#endif
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_GET_SGL_ZCOPY
        + 1
#endif
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_OUTSTANDING_PURGE
        + 1
#endif
    ,
    UMR_UCT_COMPONENT_OPS_KNOWN = 6 /* query_md_resources .. rkey_release */
#ifdef HAVE_UCT_COMPONENT_T_RKEY_COMPARE
        + 1
#endif
};

#ifdef __cplusplus
#  define UMR_UCX_STATIC_ASSERT static_assert
#else
#  define UMR_UCX_STATIC_ASSERT _Static_assert
#endif

#define UMR_UCX_UNKNOWN_SLOTS_MSG(_what) \
    "this UCX's " _what " has slots that mlx5_umr does not fill; UCX would " \
    "call them through NULL: port src/compat/umr_uct_compat.h and " \
    "m4/ucx.m4 to this release"

UMR_UCX_STATIC_ASSERT(sizeof(uct_md_ops_t) ==
               UMR_UCT_MD_OPS_KNOWN * sizeof(uct_md_close_func_t),
               UMR_UCX_UNKNOWN_SLOTS_MSG("uct_md_ops_t"));
UMR_UCX_STATIC_ASSERT(sizeof(uct_iface_internal_ops_t) ==
               UMR_UCT_IFACE_INTERNAL_OPS_KNOWN *
               sizeof(uct_iface_estimate_perf_func_t),
               UMR_UCX_UNKNOWN_SLOTS_MSG("uct_iface_internal_ops_t"));
UMR_UCX_STATIC_ASSERT(offsetof(uct_component_t, md_config) -
               offsetof(uct_component_t, query_md_resources) ==
               UMR_UCT_COMPONENT_OPS_KNOWN *
               sizeof(uct_component_query_md_resources_func_t),
               UMR_UCX_UNKNOWN_SLOTS_MSG("uct_component_t"));

#endif
