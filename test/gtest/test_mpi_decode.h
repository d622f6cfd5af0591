/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * MPI datatype decoder tests: shared checks. A decoded layout must say what
 * the MPI says (size, lb, extent, true bounds), pack exactly the bytes
 * MPI_Pack packs and unpack exactly as MPI_Unpack does (nothing outside the
 * type touched), for counts 1..3.
 */
#ifndef TEST_MPI_DECODE_H_
#define TEST_MPI_DECODE_H_

#include "umr_mpi_dtype.h"

#include <mpi.h>

#include <string>

namespace umr_mpi_test {

/* Frees an MPI datatype at the end of a scope. */
struct type_guard {
    MPI_Datatype t;
    explicit type_guard(MPI_Datatype type = MPI_DATATYPE_NULL) : t(type) {}
    ~type_guard() { if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t); }
    type_guard(const type_guard &) = delete;
    type_guard &operator=(const type_guard &) = delete;
};

/* Commits `type` if needed, then compares the layout with the MPI; returns
 * "" or what differs. counts 1..max_count. */
std::string compare_with_mpi(MPI_Datatype type, const umr_layout_t *layout,
                             unsigned max_count = 3, bool check_unpack = true);

/* Decodes (expecting UCS_OK) and compares; "" or the failure. */
std::string decode_and_compare(MPI_Datatype type, unsigned max_count = 3,
                               bool check_unpack = true);

} /* namespace umr_mpi_test */

#endif
