/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/* What the test/mpi programs share to report a failed check and to hash
 * what arrived. The including file defines `static int rank, errors;`:
 * FAIL prints one "FAIL rank R FILE:LINE: ..." line (the scripts look for
 * "^FAIL") and counts it. */
#ifndef MPI_CHECK_H_
#define MPI_CHECK_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FAIL(...) do { \
        printf("FAIL rank %d %s:%d: ", rank, __FILE__, __LINE__); \
        printf(__VA_ARGS__); printf("\n"); ++errors; \
    } while (0)

#define CHECK(_cond, ...) do { if (!(_cond)) FAIL(__VA_ARGS__); } while (0)

/* FNV-1a over n bytes, continuing from h (start: 0xcbf29ce484222325) */
static inline uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;

    while (n-- > 0) {
        h = (h ^ *c++) * 0x100000001b3ull;
    }
    return h;
}

#endif
