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
 * Single-threaded like the components (they step aside under
 * MPI_THREAD_MULTIPLE). The decoder tells when an entry is freed with its
 * type (umr_mpi_dtype_cache_on_free), before the address can be reused.
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
    const umr_mpi_dtype_t *info;
    size_t                memo_count[2]; /* per engine: sw, mlx5 */
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
 * NULL when the datatype does not decode or the cache is closed. */
static inline mca_common_umr_dtype_slot_t *
mca_common_umr_dtype_lookup(ompi_datatype_t *dt)
{
    mca_common_umr_dtype_slot_t *slot = mca_common_umr_dtype_slot(dt);

    if (OPAL_LIKELY(slot->dt == dt)) {
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
