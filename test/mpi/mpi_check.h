/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/* What the test/mpi programs share to report a failed check, to fill their
 * buffers and to check and hash what arrived. The including file includes
 * <mpi.h> and defines `static int rank, errors;`: FAIL prints one "FAIL
 * rank R FILE:LINE: ..." line (the scripts look for "^FAIL") and counts
 * it. */
#ifndef MPI_CHECK_H_
#define MPI_CHECK_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* the bytes of rank r's send buffer for `salt` */
static inline void check_fill(void *buf, size_t len, int r, int salt)
{
    unsigned char *c = buf;
    uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(r * 1000 + salt + 1);
    size_t i;

    for (i = 0; i < len; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        c[i] = (unsigned char)(x >> 56);
    }
}

/* Where `got` (len bytes, rcount x rtype) first differs from what rank
 * `src` sent from its buffer (check_fill with salt, slen bytes) as scount x
 * stype, by MPI's own pack and unpack (the bytes the receive type names,
 * the rest 0); len when it does not. */
static inline size_t check_unpacked(const void *got, size_t len, int rcount,
                                    MPI_Datatype rtype, int src, size_t slen,
                                    int scount, MPI_Datatype stype, int salt)
{
    char *sbuf = malloc(slen), *ref = calloc(1, len), *packed;
    int psize, pos = 0;
    size_t i;

    MPI_Pack_size(scount, stype, MPI_COMM_SELF, &psize);
    packed = malloc(psize);
    check_fill(sbuf, slen, src, salt);
    MPI_Pack(sbuf, scount, stype, packed, psize, &pos, MPI_COMM_SELF);
    psize = pos;
    pos   = 0;
    MPI_Unpack(packed, psize, &pos, ref, rcount, rtype, MPI_COMM_SELF);
    for (i = 0; (i < len) && (((const char*)got)[i] == ref[i]); ++i);
    free(sbuf); free(ref); free(packed);
    return i;
}

/* check_unpacked, with a FAIL line naming `what` when a byte differs; the
 * hash of `got`. */
#define check_verify(what, got, len, rcount, rtype, src, slen, scount, stype, \
                     salt) ({ \
        size_t at_ = check_unpacked(got, len, rcount, rtype, src, slen, \
                                    scount, stype, salt); \
        if (at_ < (size_t)(len)) { \
            FAIL("%s from rank %d: byte %zu of %zu differs", what, src, at_, \
                 (size_t)(len)); \
        } \
        hash_bytes(0xcbf29ce484222325ull, got, len); \
    })

#endif
