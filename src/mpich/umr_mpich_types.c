/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "umr_config.h"

#include "umr_mpich_types.h"
#include "umr_mpich.h"

#include "umr_mpi_dtype.h"
#include "umr_mpi_types.h"

#include <ucs/datastruct/khash.h>

/* messages in flight by type; a negative count: freed by the user, to be
 * freed when its messages end */
KHASH_MAP_INIT_INT(umr_mpich_inflight, int)
static khash_t(umr_mpich_inflight) umr_mpich_inflight;
static int umr_mpich_inflight_types;

/* MPICH's predefined types are never freed (their handles' kind bits: 01) */
static inline int umr_mpich_type_builtin(MPI_Datatype type)
{
    return ((unsigned)type >> 30) == 1;
}

void umr_mpich_type_hold(MPI_Datatype type)
{
    khiter_t k;
    int ret;

    if (umr_mpich_type_builtin(type)) {
        return;
    }
    k = kh_put(umr_mpich_inflight, &umr_mpich_inflight, type, &ret);
    if (ret < 0) {
        return;   /* no memory: not counted (the free is not deferred) */
    }
    if (ret > 0) {
        kh_val(&umr_mpich_inflight, k) = 0;
        ++umr_mpich_inflight_types;
    }
    kh_val(&umr_mpich_inflight, k) += (kh_val(&umr_mpich_inflight, k) < 0) ?
                                      -1 : 1;
}

void umr_mpich_type_release(MPI_Datatype type)
{
    khiter_t k;
    int *n;

    if (umr_mpich_type_builtin(type) || (umr_mpich_inflight_types == 0)) {
        return;
    }
    k = kh_get(umr_mpich_inflight, &umr_mpich_inflight, type);
    if (k == kh_end(&umr_mpich_inflight)) {
        return;
    }
    n   = &kh_val(&umr_mpich_inflight, k);
    *n += (*n < 0) ? 1 : -1;
    if (*n == 0) {
        kh_del(umr_mpich_inflight, &umr_mpich_inflight, k);
        --umr_mpich_inflight_types;
    } else if (*n == -1) {
        /* the user freed it: its last message ended */
        kh_del(umr_mpich_inflight, &umr_mpich_inflight, k);
        --umr_mpich_inflight_types;
        PMPI_Type_free(&type);
    }
}

int MPI_Type_free(MPI_Datatype *type)
{
    khiter_t k;
    int *n;

    if (umr_mpich_inflight_types > 0) {
        k = kh_get(umr_mpich_inflight, &umr_mpich_inflight, *type);
        if ((k != kh_end(&umr_mpich_inflight)) &&
            (*(n = &kh_val(&umr_mpich_inflight, k)) > 0)) {
            *n    = -*n - 1;   /* n in flight, then the free */
            *type = MPI_DATATYPE_NULL;
            return MPI_SUCCESS;
        }
    }
    return umr_mpich_next()->Type_free(type);
}

/* ---- the core's view ------------------------------------------------------ */

static const umr_mpi_dtype_t *umr_mpich_type_info(uintptr_t key)
{
    return umr_mpi_dtype_get((MPI_Datatype)key);
}

/* types are not held without decoding: each candidate message is looked
 * up */
static int umr_mpich_type_hold_front(uintptr_t key)
{
    return -1;
}

static void umr_mpich_type_freed(MPI_Datatype type)
{
    umr_mpi_types_forget((uintptr_t)type, 0);
}

static const umr_mpi_types_ops_t umr_mpich_types_ops = {
    .info = umr_mpich_type_info,
    .hold = umr_mpich_type_hold_front
};

void umr_mpich_types_open(void)
{
    umr_mpi_dtype_cache_init();
    umr_mpi_dtype_cache_on_free(umr_mpich_type_freed);
    umr_mpi_types_open(&umr_mpich_types_ops);
}

void umr_mpich_types_close(void)
{
    umr_mpi_dtype_cache_fini();
    umr_mpi_dtype_cache_on_free(NULL);
    umr_mpi_types_close();
}
