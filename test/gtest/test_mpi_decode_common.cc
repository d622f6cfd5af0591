/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * MPI datatype decoder tests: comparisons with the MPI library.
 */
#include "test_mpi_decode.h"
#include "umr_mpi_compat.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <vector>

namespace umr_mpi_test {

namespace {

/* a byte value only a given address can have */
inline uint8_t pattern(ptrdiff_t off, uint8_t salt)
{
    uint64_t x = (uint64_t)(off + 977 * salt) * 0x9e3779b97f4a7c15ull;
    return (uint8_t)((x >> 56) ^ (x >> 24));
}

} /* namespace */

std::string compare_with_mpi(MPI_Datatype type, const umr_layout_t *layout,
                             unsigned max_count, bool check_unpack)
{
    MPI_Count size, lb, extent, tlb, textent;
    std::ostringstream err;

    umr_mpi_type_size_count(type, &size);
    umr_mpi_type_get_extent_count(type, &lb, &extent);
    umr_mpi_type_get_true_extent_count(type, &tlb, &textent);

    if ((MPI_Count)umr_layout_size(layout) != size) {
        err << "size " << umr_layout_size(layout) << ", MPI " << size;
    } else if (umr_layout_lb(layout) != lb) {
        err << "lb " << umr_layout_lb(layout) << ", MPI " << lb;
    } else if (umr_layout_extent(layout) != extent) {
        err << "extent " << umr_layout_extent(layout) << ", MPI "
            << extent;
    } else if ((size > 0) && (umr_layout_true_lb(layout) != tlb)) {
        err << "true lb " << umr_layout_true_lb(layout) << ", MPI "
            << tlb;
    } else if ((size > 0) && (umr_layout_true_ub(layout) !=
                              tlb + textent)) {
        err << "true ub " << umr_layout_true_ub(layout) << ", MPI "
            << tlb + textent;
    }
    if (!err.str().empty() || (size == 0)) {
        return err.str();
    }

    for (unsigned count = 1; count <= max_count; ++count) {
        /* every byte (count, type) may touch, plus guard bytes */
        ptrdiff_t last = (ptrdiff_t)(count - 1) * (ptrdiff_t)extent;
        ptrdiff_t lo   = std::min<ptrdiff_t>(tlb, tlb + last) - 64;
        ptrdiff_t hi   = std::max<ptrdiff_t>(tlb + textent,
                                             tlb + textent + last) + 64;
        size_t span    = (size_t)(hi - lo);
        size_t total   = (size_t)size * count;
        std::vector<uint8_t> mem(span), mpi_out(total + 64), umr_out(total);
        uint8_t *base  = mem.data() - lo;
        int pos        = 0;

        for (size_t i = 0; i < span; ++i) {
            mem[i] = pattern((ptrdiff_t)i, (uint8_t)count);
        }
        if (MPI_Pack(base, (int)count, type, mpi_out.data(),
                     (int)mpi_out.size(), &pos, MPI_COMM_WORLD) !=
            MPI_SUCCESS) {
            return "MPI_Pack failed";
        }
        if ((size_t)pos != total) {
            err << "MPI_Pack packed " << pos << " bytes, expected " << total;
            return err.str();
        }
        ucs_status_t status = umr_layout_pack(layout, count, base,
                                              umr_out.data());
        if (status != UCS_OK) {
            err << "umr_layout_pack: " << ucs_status_string(status);
            return err.str();
        }
        for (size_t i = 0; i < total; ++i) {
            if (umr_out[i] != mpi_out[i]) {
                err << "count " << count << ": packed byte " << i << " of "
                    << total << " is " << (int)umr_out[i] << ", MPI_Pack "
                    << (int)mpi_out[i];
                return err.str();
            }
        }
        if (!check_unpack) {
            continue;
        }

        /* unpack a new stream into two copies of the memory */
        std::vector<uint8_t> stream(total), mpi_mem(mem), umr_mem(mem);
        for (size_t i = 0; i < total; ++i) {
            stream[i] = pattern((ptrdiff_t)i + 100003, 7);
        }
        pos = 0;
        if (MPI_Unpack(stream.data(), (int)total, &pos,
                       mpi_mem.data() - lo, (int)count, type,
                       MPI_COMM_WORLD) != MPI_SUCCESS) {
            return "MPI_Unpack failed";
        }
        status = umr_layout_unpack(layout, count, umr_mem.data() - lo,
                                   stream.data());
        if (status != UCS_OK) {
            err << "umr_layout_unpack: " << ucs_status_string(status);
            return err.str();
        }
        for (size_t i = 0; i < span; ++i) {
            if (umr_mem[i] != mpi_mem[i]) {
                err << "count " << count << ": after unpack, byte at offset "
                    << (ptrdiff_t)i + lo << " is " << (int)umr_mem[i]
                    << ", MPI_Unpack " << (int)mpi_mem[i]
                    << ((mpi_mem[i] == mem[i]) ? " (untouched by MPI)" : "");
                return err.str();
            }
        }
    }
    return "";
}

std::string decode_and_compare(MPI_Datatype type, unsigned max_count,
                               bool check_unpack)
{
    umr_layout_t *layout = nullptr;
    ucs_status_t status      = umr_mpi_dtype_decode(type, &layout);

    if (status != UCS_OK) {
        return std::string("umr_mpi_dtype_decode: ") +
               ucs_status_string(status);
    }
    std::string err = compare_with_mpi(type, layout, max_count, check_unpack);
    umr_layout_free(layout);
    return err;
}

} /* namespace umr_mpi_test */
