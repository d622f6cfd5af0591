/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: Open MPI's datatypes for the core's type front
 * (umr_mpi_types.h), keyed by the ompi_datatype_t's address: the decoder of
 * src/mpi/decode (compiled for Open MPI's ABI, its cache an MPI attribute)
 * decodes them; a type Open MPI built itself, without construction
 * arguments, is taken without decoding (no layout: it passes through). A
 * held type gets an attribute of its own keyval, whose delete callback
 * tells the core when the type is freed, as the decoder's does for its
 * entries.
 *
 * The decoder's cache opens at first use (MPI is not initialised yet when
 * a component interposes) and closes when MPI_Finalize starts (an
 * MPI_COMM_SELF attribute), after the core's peers are quiesced
 * (umr_mpi_peer.h) while MPI_COMM_WORLD still works.
 */
#ifndef MCA_COMMON_UMR_DTYPE_H_
#define MCA_COMMON_UMR_DTYPE_H_

#include "umr_mpi_types.h"
#include "umr_mpi_dtype.h"

#include <ompi_config.h>
#include <ompi/datatype/ompi_datatype.h>

BEGIN_C_DECLS

/* The core's key of an Open MPI datatype. */
static inline uintptr_t mca_common_umr_type_key(const ompi_datatype_t *dt)
{
    return (uintptr_t)dt;
}

/* Give the core its type operations (at the rails' opening). */
OMPI_DECLSPEC void mca_common_umr_types_init(void);
/* Open the decoder's cache now if it is not yet, so that MPI_Finalize
 * quiesces the core (a process whose first zero-copy message decodes no
 * type: a buffered escape). 0: closed (MPI_Finalize started) or failed. */
OMPI_DECLSPEC int mca_common_umr_types_open(void);

/* The decoded summary of `dt` (the core's front), or NULL. */
static inline const umr_mpi_dtype_t *mca_common_umr_type(ompi_datatype_t *dt)
{
    umr_mpi_type_slot_t *slot =
        umr_mpi_types_lookup(mca_common_umr_type_key(dt));

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
