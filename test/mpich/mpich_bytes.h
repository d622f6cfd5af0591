/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/*
 * What the one-sided test programs of test/mpich share: seeded bytes, the
 * bytes a transfer must leave (MPI_Pack/MPI_Unpack), their comparison, and
 * a window with every rank's mirror of every window.
 */
#ifndef MPICH_BYTES_H_
#define MPICH_BYTES_H_

#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* `len` bytes that depend on `salt` and on their offset */
static inline void fill(void *buf, size_t len, uint64_t salt)
{
    uint8_t *p = buf;
    size_t i;

    for (i = 0; i < len; ++i) {
        uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ salt * 0x632be59bd9b4e019ull;
        p[i] = (uint8_t)((x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ull >> 56);
    }
}

/* Unpack `src_type`'s bytes of `src` into `dst` by `dst_type`. */
static inline void copy_by_types(const void *src, MPI_Datatype src_type,
                                 void *dst, MPI_Datatype dst_type)
{
    int bytes, pos = 0;
    void *packed;

    MPI_Pack_size(1, src_type, MPI_COMM_SELF, &bytes);
    packed = malloc(bytes);
    MPI_Pack(src, 1, src_type, packed, bytes, &pos, MPI_COMM_SELF);
    pos = 0;
    MPI_Unpack(packed, bytes, &pos, dst, 1, dst_type, MPI_COMM_SELF);
    free(packed);
}

/* 0, or 1 after a FAIL line naming `what`, `rank` and the first byte that
 * differs */
static inline int compare_bytes(const char *what, int rank, const uint8_t *got,
                                const uint8_t *exp, size_t len)
{
    size_t i;

    for (i = 0; i < len; ++i) {
        if (got[i] != exp[i]) {
            printf("FAIL %s rank %d: byte %zu is 0x%02x, expected 0x%02x\n",
                   what, rank, i, got[i], exp[i]);
            return 1;
        }
    }
    return 0;
}

/* Every rank's window of `len` bytes as seeded, in mirror[r] (what rank
 * r's holds: the caller applies each put to it); this rank's copy of its
 * own in *mem_p, an MPI_Win_create window of ints on MPI_COMM_WORLD. */
static inline uint8_t **mirror_window(int rank, int size, size_t len,
                                      uint8_t **mem_p, MPI_Win *win)
{
    uint8_t **mirror = calloc(size, sizeof(*mirror));
    int i;

    for (i = 0; i < size; ++i) {
        mirror[i] = malloc(len);
        fill(mirror[i], len, 1000 + i);
    }
    *mem_p = malloc(len);
    memcpy(*mem_p, mirror[rank], len);
    MPI_Win_create(*mem_p, len, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   win);
    return mirror;
}

static inline void mirror_free(uint8_t **mirror, int size, uint8_t *mem)
{
    int i;

    for (i = 0; i < size; ++i) {
        free(mirror[i]);
    }
    free(mirror);
    free(mem);
}

#endif
