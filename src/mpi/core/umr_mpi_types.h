/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: datatypes, by a key the binding gives (its MPI's
 * datatype handle: Open MPI's ompi_datatype_t pointer, MPICH's int). A
 * small direct-mapped front keyed by it holds what the binding's decoder
 * made of the type (umr_mpi_type.h) and the verdict of the choice for one
 * count (umr_mpi_choice.h: that many elements pass through to every peer),
 * so that a message of a type and count seen before costs a few compares
 * and no decoding.
 *
 * A type the binding's prefilter passes through again and again (its test
 * before any decoding, which depends on the type and the count only) is
 * never decoded: after a few such sends in a row it is held (the binding's
 * hold, which must tell umr_mpi_types_forget when the type is freed) and
 * takes its slot without a decoded summary, so that the verdict is read
 * inline as for a decoded type.
 *
 * The binding tells when a type it gave is freed (umr_mpi_types_forget,
 * from its decoder's delete callback and its hold's), before the handle
 * can be reused: a slot never outlives its type. The front opens at first
 * use (the binding's decoder may need MPI initialised) and closes when the
 * binding says (MPI_Finalize).
 */
#ifndef UMR_MPI_TYPES_H_
#define UMR_MPI_TYPES_H_

#include "umr_mpi.h"
#include "umr_mpi_type.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UMR_MPI_TYPE_SLOTS  64      /* power of two */

typedef struct umr_mpi_type_slot {
    uintptr_t             key;          /* 0: empty */
    size_t                pass_count;   /* the choice's verdict: a message
                                           of this many elements passes
                                           through to every peer, whatever
                                           its rail (0: none known). Read
                                           inline by the bindings' send
                                           entry points: one compare */
    const umr_mpi_dtype_t *info;        /* NULL: held, not decoded yet */
    uintptr_t             seen;         /* the type whose prefiltered sends
                                           in a row are counted here (not
                                           held: a handle, never trusted
                                           for a verdict) */
    unsigned              seen_left;    /* such sends still to go before
                                           it is held */
    /* the choice's memo of a zero-copy send (umr_mpi_choose_send, read
     * inline): `zcopy_count` elements go zero-copy on the engines of
     * `zcopy_engs` (bit 0 sw, bit 1 mlx5), as the choice's cache says */
    size_t                zcopy_count;
    uint8_t               zcopy_engs;
    uint8_t               big_blocks;   /* the binding's own test of the
                                           type's blocks passed (kept for
                                           the binding's prefilter) */
} __attribute__((aligned(64))) umr_mpi_type_slot_t;
                                        /* (a slot's address: one shift) */

extern umr_mpi_type_slot_t umr_mpi_type_front[UMR_MPI_TYPE_SLOTS];

/* What the binding does with its types. */
typedef struct umr_mpi_types_ops {
    /* The summary of the type `key` (decoded once, kept by the binding
     * until the type is freed), or NULL when it cannot be read (the front
     * then keeps nothing). */
    const umr_mpi_dtype_t *(*info)(uintptr_t key);
    /* Keep track of `key` without decoding it: 0 when the binding will call
     * umr_mpi_types_forget(key) when the type is freed (or never frees it). */
    int (*hold)(uintptr_t key);
} umr_mpi_types_ops_t;

/* The front, open from now on / closed (emptied, nothing taken any more). */
void umr_mpi_types_open(const umr_mpi_types_ops_t *ops);
void umr_mpi_types_close(void);

/* The front slot `key` maps to (whatever type it holds). */
static inline umr_mpi_type_slot_t *umr_mpi_types_slot(uintptr_t key)
{
    return &umr_mpi_type_front[(key * 0x9e3779b97f4a7c15ull) >> 58];
}

/* `key` not in its slot with a summary: find it through the binding and
 * take the slot. NULL when the type does not decode or the front is
 * closed. */
umr_mpi_type_slot_t *umr_mpi_types_lookup_slow(uintptr_t key);

/* The slot of `key` (no verdict when it is new), or NULL. A held type is
 * decoded here. */
static inline umr_mpi_type_slot_t *umr_mpi_types_lookup(uintptr_t key)
{
    umr_mpi_type_slot_t *slot = umr_mpi_types_slot(key);

    if (ucs_likely((slot->key == key) && (slot->info != NULL))) {
        return slot;
    }
    return umr_mpi_types_lookup_slow(key);
}

/* Whether `count` elements of `key` are known to pass through (the
 * verdict in its slot): a hash and two compares, no call. */
static inline int umr_mpi_types_passes(uintptr_t key, size_t count)
{
    const umr_mpi_type_slot_t *slot = umr_mpi_types_slot(key);

    return (slot->key == key) && (slot->pass_count == count);
}

/* A send of `key` the binding's prefilter passed: counted in its slot; 1
 * when it is the umr_mpi_types_hold_after-th in a row, and `key` is to be
 * held now (umr_mpi_types_hold, out of line). Holding costs the binding a
 * few hundred instructions (an attribute, and its delete), so a type made
 * for one message and freed must seldom be held: each held type that is
 * freed makes the run 8 times longer (from 8 up to 4096). */
extern unsigned umr_mpi_types_hold_after;

static inline int umr_mpi_types_prefiltered(uintptr_t key)
{
    umr_mpi_type_slot_t *slot = umr_mpi_types_slot(key);

    if (ucs_likely(slot->seen == key)) {
        return --slot->seen_left == 0;
    }
    slot->seen      = key;
    slot->seen_left = umr_mpi_types_hold_after - 1;
    return 0;
}

/* Hold `key` with the verdict that `count` elements pass through: the slot
 * takes it without a summary (decoded at its first lookup, which keeps the
 * verdict). A type in its slot already (held or decoded) takes the verdict
 * for `count`. Nothing when the binding cannot hold it or the front is
 * closed. */
void umr_mpi_types_hold(uintptr_t key, size_t count);

/* The binding frees the type `key` (its decoder's entry goes, or its
 * hold): its slot empties, and what others keep of it goes (the choice's
 * entries: umr_mpi_types_on_forget). `held`: it was held (the next type
 * is held later). */
void umr_mpi_types_forget(uintptr_t key, int held);
void umr_mpi_types_on_forget(void (*fn)(uintptr_t key));

#ifdef __cplusplus
}
#endif

#endif
