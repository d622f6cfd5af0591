/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: datatypes by the binding's key (see umr_mpi_types.h).
 */
#include "umr_mpi_types.h"

#include <string.h>

umr_mpi_type_slot_t umr_mpi_type_front[UMR_MPI_TYPE_SLOTS];
unsigned umr_mpi_types_hold_after = 8;

static const umr_mpi_types_ops_t *umr_mpi_types_ops;   /* NULL: closed */
static void (*umr_mpi_types_forget_fn)(uintptr_t key);

void umr_mpi_types_open(const umr_mpi_types_ops_t *ops)
{
    umr_mpi_types_ops = ops;
}

void umr_mpi_types_close(void)
{
    umr_mpi_types_ops = NULL;
    memset(umr_mpi_type_front, 0, sizeof(umr_mpi_type_front));
}

umr_mpi_type_slot_t *umr_mpi_types_lookup_slow(uintptr_t key)
{
    umr_mpi_type_slot_t *slot = umr_mpi_types_slot(key);
    const umr_mpi_dtype_t *info;

    if ((slot->key == key) && (slot->info != NULL)) {
        return slot;
    }
    if ((umr_mpi_types_ops == NULL) ||
        (NULL == (info = umr_mpi_types_ops->info(key)))) {
        return NULL;
    }
    /* (a held type: the binding's hold stays, harmless beside its entry) */
    slot->key        = key;
    slot->info       = info;
    slot->pass_count = 0;
    return slot;
}

void umr_mpi_types_hold(uintptr_t key, size_t count)
{
    umr_mpi_type_slot_t *slot = umr_mpi_types_slot(key);

    slot->seen = 0;
    if (slot->key == key) {
        slot->pass_count = count;
        return;
    }
    if ((umr_mpi_types_ops == NULL) || (umr_mpi_types_ops->hold(key) != 0)) {
        return;
    }
    slot->key        = key;
    slot->info       = NULL;
    slot->pass_count = count;
}

void umr_mpi_types_on_forget(void (*fn)(uintptr_t key))
{
    umr_mpi_types_forget_fn = fn;
}

void umr_mpi_types_forget(uintptr_t key, int held)
{
    umr_mpi_type_slot_t *slot = umr_mpi_types_slot(key);

    if (slot->key == key) {
        slot->key = 0;
    }
    if (slot->seen == key) {
        slot->seen = 0;
    }
    /* a type made for a few messages: the next one is held later
     * (umr_mpi_types_prefiltered) */
    if (held && (umr_mpi_types_hold_after < 4096)) {
        umr_mpi_types_hold_after *= 8;
    }
    if (umr_mpi_types_forget_fn != NULL) {
        umr_mpi_types_forget_fn(key);
    }
}
