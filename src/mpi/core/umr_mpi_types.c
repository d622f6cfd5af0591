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

/* `slot` holds `key` from now on, with nothing known of it but `info`
 * and the verdict that `pass_count` elements pass through. */
static void umr_mpi_types_take(umr_mpi_type_slot_t *slot, uintptr_t key,
                               const umr_mpi_dtype_t *info, size_t pass_count)
{
    slot->key         = key;
    slot->info        = info;
    slot->pass_count  = pass_count;
    slot->zcopy_count = 0;
    slot->zcopy_engs  = 0;
    slot->big_blocks  = 0;
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
    umr_mpi_types_take(slot, key, info, 0);
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
    umr_mpi_types_take(slot, key, NULL, count);
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
