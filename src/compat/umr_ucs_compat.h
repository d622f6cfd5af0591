/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr: where UCS (libucs) releases differ, UCX 1.13 to 1.23.
 *
 * configure probes each difference (m4/ucx.m4, UMR_CHECK_UCX_INTERNALS) and
 * this header turns the results into one API, so no other file tests a UCX
 * version. The UCT side (ops tables of md, iface, component) is in
 * umr_uct_compat.h. Only UCS headers here: Open MPI components include it
 * beside Open MPI's own headers.
 */
#ifndef UMR_UCS_COMPAT_H_
#define UMR_UCS_COMPAT_H_

#include "umr_config.h"

#include <uct/api/uct.h>
#include <ucs/datastruct/mpool.h>
#include <ucs/memory/rcache.h>
#include <ucs/config/parser.h>
#include <ucs/sys/math.h>
#include <ucs/sys/stubs.h>
#ifdef HAVE_UCS_SYS_PTR_ARITH_H
#  include <ucs/sys/ptr_arith.h> /* ucs_align_down & co. since 1.17 */
#endif

#include <stdio.h>


/*
 * UCX's empty functions (ucs_empty_function_return_*) fill slots of any
 * signature, as in UCX's own transports. Since 1.19 they are declared (void),
 * so a direct cast trips -Wcast-function-type; void (*)(void) is the one
 * function type that converts to every other without that warning.
 */
#define UMR_UCS_STUB(_type, _func) ((_type)(void (*)(void))(_func))


/* ucs_mpool_init: positional arguments, or ucs_mpool_params_t since 1.14. */
static inline ucs_status_t
umr_ucs_mpool_init(ucs_mpool_t *mp, size_t elem_size, size_t align_offset,
                   size_t alignment, unsigned elems_per_chunk,
                   unsigned max_elems, ucs_mpool_ops_t *ops, const char *name)
{
#if UMR_UCS_MPOOL_PARAMS
    ucs_mpool_params_t params;

    ucs_mpool_params_reset(&params);
    params.elem_size       = elem_size;
    params.align_offset    = align_offset;
    params.alignment       = alignment;
    params.elems_per_chunk = elems_per_chunk;
    params.max_elems       = max_elems;
    params.ops             = ops;
    params.name            = name;
    return ucs_mpool_init(&params, mp);
#else
    return ucs_mpool_init(mp, 0, elem_size, align_offset, alignment,
                          elems_per_chunk, max_elems, ops, name);
#endif
}

/* Registration cache alignment: a parameter of the cache until 1.16, of
 * each ucs_rcache_get since 1.17. */
static inline void
umr_ucs_rcache_params_alignment(ucs_rcache_params_t *params, size_t alignment)
{
#ifdef HAVE_UCS_RCACHE_PARAMS_T_ALIGNMENT
    params->alignment     = alignment;
    params->max_alignment = alignment;
#endif
}

static inline ucs_status_t
umr_ucs_rcache_get(ucs_rcache_t *rcache, void *address, size_t length,
                   size_t alignment, int prot, void *arg,
                   ucs_rcache_region_t **region_p)
{
#if UMR_UCS_RCACHE_GET_ALIGNMENT
    return ucs_rcache_get(rcache, address, length, alignment, prot, arg,
                          region_p);
#else
    return ucs_rcache_get(rcache, address, length, prot, arg, region_p);
#endif
}

/*
 * uct_config_modify: until 1.16 it matches the bare names of a config table
 * ("PORT"); since 1.17 only names with the table's prefix ("MLX5_UMR_PORT").
 * Callers give the bare name and the table's prefix.
 */
static inline ucs_status_t
umr_ucs_config_modify(void *config, const char *prefix, const char *name,
                      const char *value)
{
#if UMR_UCS_CONFIG_PREFIXED_NAMES
    char full_name[128];

    if ((size_t)snprintf(full_name, sizeof(full_name), "%s%s", prefix,
                         name) >= sizeof(full_name)) {
        return UCS_ERR_INVALID_PARAM;
    }
    return uct_config_modify(config, full_name, value);
#else
    return uct_config_modify(config, name, value);
#endif
}

/* ucs_config_parser_fill_opts: the table and its prefix until 1.14, a
 * config table entry holding them since 1.15. */
static inline ucs_status_t
umr_ucs_config_fill_opts(void *opts, ucs_config_field_t *fields,
                         const char *env_prefix, const char *table_prefix,
                         int ignore_errors)
{
#if UMR_UCS_CONFIG_FILL_OPTS_ENTRY
    ucs_config_global_list_entry_t entry = {
        .name   = table_prefix,
        .prefix = table_prefix,
        .table  = fields
    };

    return ucs_config_parser_fill_opts(opts, &entry, env_prefix,
                                       ignore_errors);
#else
    return ucs_config_parser_fill_opts(opts, fields, env_prefix, table_prefix,
                                       ignore_errors);
#endif
}


#endif
