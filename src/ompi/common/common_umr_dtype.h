/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: MPI datatypes as layouts. The decoder's per-datatype
 * cache (src/mpi/decode: an MPI attribute, about 180 instructions a lookup)
 * behind a small direct-mapped front keyed by the datatype's address; each
 * front slot also keeps the component's last choice per engine for a count
 * (memo), so that a message of a datatype and count seen before costs a few
 * compares.
 *
 * A type the send path's prefilter passes through again and again is never
 * decoded: after a few such sends in a row it is held (an attribute of its
 * own keyval, mca_common_umr_dtype_hold) and takes its slot without a
 * layout, so that the verdict is read inline as for a decoded type.
 *
 * Single-threaded like the components (they step aside under
 * MPI_THREAD_MULTIPLE). The decoder tells when an entry is freed with its
 * type (umr_mpi_dtype_cache_on_free), and the hold's attribute when a held
 * type is freed, before the address can be reused: a slot never outlives
 * its type.
 * The cache opens at first use (MPI is not initialised yet when a component
 * interposes) and closes when MPI_Finalize starts (an MPI_COMM_SELF
 * attribute), after the peers are quiesced (common_umr_peer.h).
 */
#ifndef MCA_COMMON_UMR_DTYPE_H_
#define MCA_COMMON_UMR_DTYPE_H_

#include "umr_mpi_dtype.h"

#include <ompi_config.h>
#include <ompi/datatype/ompi_datatype.h>

#include <stdint.h>

BEGIN_C_DECLS

#define MCA_COMMON_UMR_DTYPE_SLOTS  64      /* power of two */

typedef struct mca_common_umr_dtype_slot {
    ompi_datatype_t       *dt;           /* NULL: empty */
    size_t                pass_count;    /* the component's verdict: a
                                            message of this many elements
                                            passes through to every peer,
                                            whatever its rail (0: none
                                            known). Read inline by the send
                                            entry points: one compare */
    const umr_mpi_dtype_t *info;         /* NULL: held, not decoded yet
                                            (mca_common_umr_dtype_hold) */
    size_t                memo_count[2]; /* per engine: sw, mlx5 */
    const ompi_datatype_t *seen;         /* the type whose prefiltered
                                            sends in a row are counted here
                                            (not held: an address, never
                                            trusted for a verdict) */
    unsigned              seen_left;     /* such sends still to go before
                                            it is held */
    signed char           memo[2];       /* -1 none, 0 pass, 1 zero-copy */
} __opal_attribute_aligned__(64) mca_common_umr_dtype_slot_t;
                                         /* (a slot's address: one shift) */

/* The direct-mapped front, keyed by the datatype's address; a slot is
 * emptied when its type is freed (the decoder's attribute delete callback),
 * before the address can be reused. Read inline (below); written only by
 * mca_common_umr_dtype_lookup_slow and the owner of a slot's memo. */
OMPI_DECLSPEC extern mca_common_umr_dtype_slot_t
    mca_common_umr_dtype_front[MCA_COMMON_UMR_DTYPE_SLOTS];

/* The front slot `dt` maps to (whatever type it holds). */
static inline mca_common_umr_dtype_slot_t *
mca_common_umr_dtype_slot(const ompi_datatype_t *dt)
{
    uint64_t h = (uintptr_t)dt * 0x9e3779b97f4a7c15ull;

    return &mca_common_umr_dtype_front[h >> 58];   /* top 6 bits */
}

/* `dt` not in its front slot: decode (or find in the decoder's cache) and
 * take the slot. NULL when the datatype does not decode or the cache is
 * closed. */
OMPI_DECLSPEC mca_common_umr_dtype_slot_t *
mca_common_umr_dtype_lookup_slow(ompi_datatype_t *dt);

/* The front slot of `dt` (memo cleared and no verdict when it is new), or
 * NULL when the datatype does not decode or the cache is closed. A held
 * type is decoded here. */
static inline mca_common_umr_dtype_slot_t *
mca_common_umr_dtype_lookup(ompi_datatype_t *dt)
{
    mca_common_umr_dtype_slot_t *slot = mca_common_umr_dtype_slot(dt);

    if (OPAL_LIKELY((slot->dt == dt) && (slot->info != NULL))) {
        return slot;
    }
    return mca_common_umr_dtype_lookup_slow(dt);
}

/* Whether `count` elements of `dt` are known to pass through (the
 * component's verdict in the slot): no decoding, no lookup beyond the
 * slot, so a hot pass-through costs a hash and two compares. */
static inline int mca_common_umr_dtype_passes(const ompi_datatype_t *dt,
                                              size_t count)
{
    const mca_common_umr_dtype_slot_t *slot = mca_common_umr_dtype_slot(dt);

    return (slot->dt == dt) && (slot->pass_count == count);
}

/*
 * Holding a type the prefilter passes through (the send path's test before
 * any decoding; its verdict depends on the type and the count only): the
 * prefiltered sends of `dt` in a row are counted in its slot, and the one
 * that makes mca_common_umr_dtype_hold_after of them holds it
 * (mca_common_umr_dtype_hold), which gives the slot the verdict for its
 * count. Holding costs an attribute (a few hundred instructions, and its
 * delete when the type is freed), so a type made for one message and freed
 * must seldom be held: each held type that is freed makes the count 8
 * times longer (from 8 up to 4096). 1: hold `dt` now (out of line).
 */
OMPI_DECLSPEC extern unsigned mca_common_umr_dtype_hold_after;

static inline int mca_common_umr_dtype_prefiltered(const ompi_datatype_t *dt)
{
    mca_common_umr_dtype_slot_t *slot = mca_common_umr_dtype_slot(dt);

    if (OPAL_LIKELY(slot->seen == dt)) {
        return --slot->seen_left == 0;
    }
    slot->seen      = dt;
    slot->seen_left = mca_common_umr_dtype_hold_after - 1;
    return 0;
}

/* Hold `dt` with the verdict that `count` elements pass through: an
 * attribute of the hold's keyval (none for a predefined type: never
 * freed), whose delete callback empties the slot when the type is freed;
 * the slot takes the type without decoding it (info NULL: decoded at its
 * first lookup, which keeps the hold). A type in its slot already (held
 * or decoded: another count) takes the verdict for `count`. Nothing when
 * the attribute cannot be set or the cache is closed. */
OMPI_DECLSPEC void mca_common_umr_dtype_hold(ompi_datatype_t *dt,
                                             size_t count);

/* The decoded datatype, or NULL. */
static inline const umr_mpi_dtype_t *
mca_common_umr_dtype_get(ompi_datatype_t *dt)
{
    mca_common_umr_dtype_slot_t *slot = mca_common_umr_dtype_lookup(dt);

    return (slot != NULL) ? slot->info : NULL;
}

/* The contiguous blocks of one element of `dt`, from Open MPI's own
 * description of it (no decoding), and in *bytes the data they hold:
 * exact for a description of up to MCA_COMMON_UMR_DTYPE_WALK entries (a
 * vector, a subarray, a short indexed type), otherwise those of its first
 * entries (an indexed type's first blocks: their mean block is the
 * estimate). For choices, not for data. */
#define MCA_COMMON_UMR_DTYPE_WALK  8
OMPI_DECLSPEC size_t mca_common_umr_dtype_blocks(const ompi_datatype_t *dt,
                                                 size_t *bytes);

END_C_DECLS

#endif
