/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr on the wire: the control message that stands for a zero-copy
 * message, and the acknowledgement that completes its send. Plain C, no
 * Open MPI headers, so that MPI programs (the tests, the calibration) can
 * use the same figures.
 *
 * Z (MCA_PML_UMR_CTL_SIZE) is just above 4 KiB: a receive of at most 4 KiB
 * can never match a control message, so it goes to the wrapped PML with one
 * compare and no request of ours (the 0 B - 4 KiB latency of a job is the
 * wrapped PML's). Z is not a power of two, so that ordinary messages of
 * exactly Z bytes, whose first bytes are checked for the magic, are rare.
 */
#ifndef MCA_PML_UMR_WIRE_H_
#define MCA_PML_UMR_WIRE_H_

#include <stdint.h>

/* Size of a control message; the smallest message moved zero-copy. */
#define MCA_PML_UMR_CTL_SIZE     4160
#define MCA_PML_UMR_MAGIC0       0x6d6c7835756d7221ull  /* "mlx5umr!" */
#define MCA_PML_UMR_MAGIC1       0xc3a1d20f5e7b9461ull

/* The acknowledgements' tag on MPI_COMM_WORLD: negative (never matched by
 * MPI_ANY_TAG) even in pml ucx's 24-bit tag field, far below the
 * collectives', beside the handshake's (common_umr_peer.h). */
#define MCA_PML_UMR_TAG_ACK      (-0x700001)

/* Control message flags */
#define MCA_PML_UMR_CTL_ADDR     0x1   /* carries the sender's ep address */

/* Exactly Z bytes, sent through the wrapped PML on the user's (comm, dst,
 * tag): the sender's layout key, then its endpoint address (flag ADDR). */
typedef struct mca_pml_umr_ctl {
    uint64_t magic[2];
    uint64_t sreq;         /* sender's request, echoed in the ack */
    uint64_t length;       /* packed bytes of the message */
    uint32_t flags;
    uint16_t rkey_len;
    uint16_t addr_len;     /* sender's ep address follows the key */
    uint8_t  rail;
    uint8_t  pad[7];
    uint8_t  data[MCA_PML_UMR_CTL_SIZE - 48];
} mca_pml_umr_ctl_t;

/* The receiver's answer once its get is done, on MCA_PML_UMR_TAG_ACK.
 * A control message truncated into a receive too small to show it (pml
 * ucx delivers no byte of a truncated message) cannot name its send: the
 * receiver then answers "by tag" (sreq MCA_PML_UMR_ACK_BY_TAG, the
 * status's tag in `tag`), and the sender releases its one zero-copy send
 * to that peer with that tag (pml_umr_send.c). */
#define MCA_PML_UMR_ACK_BY_TAG   0x1   /* never a request's address */

typedef struct mca_pml_umr_ack {
    uint64_t sreq;
    int32_t  error;        /* MPI error class of the receiver's get */
    int32_t  tag;          /* an ack by tag: the message's tag, else 0 */
} mca_pml_umr_ack_t;

static inline int mca_pml_umr_ctl_is_magic(const mca_pml_umr_ctl_t *ctl)
{
    return (ctl->magic[0] == MCA_PML_UMR_MAGIC0) &&
           (ctl->magic[1] == MCA_PML_UMR_MAGIC1);
}

#endif
