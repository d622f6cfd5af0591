/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Fault injection inside the engines, for tests only: compiled into the
 * test variant of the transport (configure.ac: UMR_TEST_HOOKS; hooks/
 * libuct_mlx5_umr.la and the layers the gtest suites link), absent from
 * what is installed. There, the environment variable
 *
 *   UCX_MLX5_UMR_TEST_FAULT=point[:after_n]
 *
 * (read once, when the first md opens) makes every call of one point fail
 * after the first after_n calls of it (default 0: from the first on),
 * in the process it is set in, on every engine (sw, and mlx5 on rdma-core
 * or on its model, test/model):
 *   connect     qp_connect of an endpoint returns UCS_ERR_UNREACHABLE (the
 *               md's own UMR queue pair, connected to itself, is left)
 *   post        post_rdma returns UCS_ERR_IO_ERROR
 *   completion  an RDMA read/write that succeeded completes with a
 *               remote access error (an error CQE)
 *   key         mkey_create (a new indirect key for the pool) returns
 *               UCS_ERR_NO_RESOURCE
 *   mdwait      the md's wait for its UMRs returns UCS_ERR_TIMED_OUT with
 *               them still posted (umr_qp.c), as a real timeout does
 * The md wraps its engine's ops table (umr_eng_fault_wrap); the md wait
 * asks UMR_ENG_FAULT(). A malformed value is an error naming the variable,
 * and no fault is injected.
 */
#ifndef UMR_ENGINE_FAULT_H_
#define UMR_ENGINE_FAULT_H_

#include "umr_config.h"
#include "engine.h"

typedef enum {
    UMR_ENG_FAULT_CONNECT,
    UMR_ENG_FAULT_POST,
    UMR_ENG_FAULT_COMPLETION,
    UMR_ENG_FAULT_KEY,
    UMR_ENG_FAULT_MDWAIT,
    UMR_ENG_FAULT_NUM
} umr_eng_fault_point_t;

#define UMR_ENG_FAULT_ENV "UCX_MLX5_UMR_TEST_FAULT"

#if UMR_TEST_HOOKS

extern int umr_eng_fault_point;   /* -1: none */

/* This call of `point` fails (counted). */
int umr_eng_fault_hit(umr_eng_fault_point_t point);

/* `ops`, or a table that injects the faults of UCX_MLX5_UMR_TEST_FAULT
 * around it. */
const umr_eng_ops_t *umr_eng_fault_wrap(const umr_eng_ops_t *ops);

/* The engine's own table under a wrapping one (the md's UMR queue pair). */
const umr_eng_ops_t *umr_eng_fault_unwrap(const umr_eng_ops_t *ops);

/* Parse "point[:after_n]" (0: ok, -1: malformed). */
int umr_eng_fault_parse(const char *spec, int *point, unsigned long *after);

#  define UMR_ENG_FAULT(_point) \
    (ucs_unlikely(umr_eng_fault_point == (int)(_point)) && \
     umr_eng_fault_hit(_point))

#else

static inline const umr_eng_ops_t *umr_eng_fault_wrap(const umr_eng_ops_t *ops)
{
    return ops;
}

static inline const umr_eng_ops_t *
umr_eng_fault_unwrap(const umr_eng_ops_t *ops)
{
    return ops;
}

#  define UMR_ENG_FAULT(_point) 0

#endif

#endif
