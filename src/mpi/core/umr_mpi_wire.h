/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core on the wire: the control message that stands for a
 * zero-copy message, and the answer that completes its send (the protocol
 * around them: umr_mpi_proto.h). Plain C, no MPI header, so that MPI
 * programs (the tests, the calibration) use the same figures. Peers agree
 * on this format through the version in their published addresses
 * (umr_mpi_rail.h): a peer of another one passes through.
 *
 * Z (UMR_MPI_CTL_SIZE) is just above 4 KiB: a receive of at most 4 KiB can
 * never match a control message, so it goes to the MPI with one compare
 * and nothing of ours (the 0 B - 4 KiB latency of a job is the MPI's). Z is
 * not a power of two, so that ordinary messages of exactly Z bytes, whose
 * first bytes are checked for the magic, are rare.
 */
#ifndef UMR_MPI_WIRE_H_
#define UMR_MPI_WIRE_H_

#include <stddef.h>
#include <stdint.h>

/* Size of a control message; the smallest message moved zero-copy. */
#define UMR_MPI_CTL_SIZE      4160
#define UMR_MPI_MAGIC0        0x6d6c7835756d7221ull  /* "mlx5umr!" */
#define UMR_MPI_MAGIC1        0xc3a1d20f5e7b9461ull

/* Control message flags */
#define UMR_MPI_CTL_ADDR      0x1   /* carries the sender's ep address */

/* Answer flags */
#define UMR_MPI_ACK_FALLBACK  0x1   /* send the data as DATA */
#define UMR_MPI_ACK_RETIRE    0x2   /* and retire the peer */
#define UMR_MPI_ACK_BUSY      0x4   /* no connection now (the budget of
                                       connected peers): this message only,
                                       no memo, no retirement */
#define UMR_MPI_ACK_NORAIL    0x8   /* with RETIRE: not a fault, no rail of
                                       the receiver's reaches the sender
                                       (the reason in the sender's line) */

/* Exactly Z bytes, sent on the user's (comm, dst, tag): the sender's
 * layout key, then its endpoint address (flag ADDR). */
typedef struct umr_mpi_ctl {
    uint64_t magic[2];
    uint64_t seq;          /* the send's sequence number, echoed in the
                              ack (never an address) */
    uint64_t length;       /* packed bytes of the message */
    uint64_t sblocks;      /* the sender's contiguous blocks: the receiver
                              weighs both layouts */
    uint32_t flags;
    uint16_t rkey_len;
    uint16_t addr_len;     /* sender's ep address follows the key */
    uint8_t  rail;
    uint8_t  pad[7];
    uint8_t  data[UMR_MPI_CTL_SIZE - 56];
} umr_mpi_ctl_t;

/* The receiver's answer: its get is done, or it declined (flags). A
 * control message truncated into a receive too small to show it (an MPI
 * that delivers no byte of a truncated message) cannot name its send: the
 * receiver then answers "by tag" (seq UMR_MPI_ACK_BY_TAG, the message's
 * communicator in `ctx`, an id both sides agree on, and its tag in `tag`),
 * and the sender releases its one zero-copy send to that peer on that
 * communicator with that tag (umr_mpi_proto.h). */
#define UMR_MPI_ACK_BY_TAG    0x1   /* never a send's sequence number */
#define UMR_MPI_SEQ_FIRST     0x2   /* the first sequence number */

typedef struct umr_mpi_ack {
    uint64_t seq;          /* the CTL's, or UMR_MPI_ACK_BY_TAG */
    uint64_t ctx;          /* an ack by tag: the communicator, else 0 */
    int32_t  error;        /* the MPI's error code of the receiver's get
                              (0: none; both sides run one MPI) */
    uint32_t flags;        /* UMR_MPI_ACK_* */
    int32_t  tag;          /* an ack by tag: the message's tag, else 0 */
    uint32_t pad;
} umr_mpi_ack_t;

#ifndef __cplusplus
_Static_assert(sizeof(umr_mpi_ctl_t) == UMR_MPI_CTL_SIZE,
               "a control message is Z bytes");
_Static_assert(sizeof(umr_mpi_ack_t) == 32, "an ack is 32 bytes");
#endif

/* Whether `head` (at least 16 bytes) starts with the magic. */
static inline int umr_mpi_wire_is_magic(const void *head)
{
    const uint64_t *m = (const uint64_t*)head;

    return (m[0] == UMR_MPI_MAGIC0) && (m[1] == UMR_MPI_MAGIC1);
}

/* The first bytes of a control message (`len` of them, as a truncated
 * receive holds them) name its send when they reach past its seq. */
#define UMR_MPI_CTL_SEQ_END   offsetof(umr_mpi_ctl_t, length)

#endif
