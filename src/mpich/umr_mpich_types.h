/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: the datatypes of the messages the binding carries. A
 * program may free a datatype while a message of it is in flight; MPICH
 * keeps its own messages' types alive, but the binding's messages outlive
 * the call with the type's handle (a declined message's data, a receive's
 * classification), and PMPI has no way to take a reference. So the binding
 * counts its messages in flight per derived type, and MPI_Type_free of a
 * type still in use is done when the last of them ends (the user's handle
 * is MPI_DATATYPE_NULL at once, as MPI says).
 */
#ifndef UMR_MPICH_TYPES_H_
#define UMR_MPICH_TYPES_H_

#include <mpi.h>

/* A message of the binding's of `type` starts / ends. */
void umr_mpich_type_hold(MPI_Datatype type);
void umr_mpich_type_release(MPI_Datatype type);

/* The core's view of the binding's datatypes (umr_mpi_types_open). */
void umr_mpich_types_open(void);
void umr_mpich_types_close(void);

#endif
