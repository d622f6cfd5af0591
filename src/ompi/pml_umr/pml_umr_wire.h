/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr on the wire: the control message that stands for a zero-copy
 * message, and the answer that completes its send. Plain C, no Open MPI
 * headers, so that MPI programs (the tests, the calibration) can use the
 * same figures. Peers agree on this format through the modex version
 * (MCA_COMMON_UMR_MODEX_VERSION): a peer of another one passes through.
 *
 * Z (MCA_PML_UMR_CTL_SIZE) is just above 4 KiB: a receive of at most 4 KiB
 * can never match a control message, so it goes to the wrapped PML with one
 * compare and no request of ours (the 0 B - 4 KiB latency of a job is the
 * wrapped PML's). Z is not a power of two, so that ordinary messages of
 * exactly Z bytes, whose first bytes are checked for the magic, are rare.
 *
 * Protocol of one zero-copy message (S sender, R receiver; every message
 * through the wrapped PML; the data stays in S's buffer, untouched, until
 * S's request completes):
 *
 *   S: CTL --(user's comm, dst, tag: Z bytes, key + block summary)--> R
 *   R: matches it as the user's receive, then decides with both layouts
 *      (pml_umr_choose_recv) and the state of the peer:
 *      a) zero-copy: one get from S's layout key into the receive layout,
 *         then ACK(error) --(MPI_COMM_WORLD, MCA_PML_UMR_TAG_ACK)--> S;
 *         S completes its request (error: the receiver's get failed).
 *      b) decline (zero-copy would lose; or any fault on R's side before
 *         or during the get: connect, key, post, completion): R posts a
 *         receive of the data into the user's buffer on (MPI_COMM_WORLD,
 *         S, MCA_PML_UMR_TAG_DATA), then ACK(FALLBACK[|RETIRE]) --> S;
 *         S sends the data through the wrapped PML on that tag and
 *         completes its request when that send does. RETIRE: the peer is
 *         retired on both sides (pass-through from then on; one verbose
 *         line and a counter each). Both sides handle the declined
 *         messages of a pair in the same order (one tag, FIFO per pair),
 *         so the data of each lands in its own receive.
 *         BUSY (no connection now: the budget of connected peers,
 *         common_umr_peer.h): this message only, no retirement, and the
 *         sender does not remember the type as one to pass through.
 *   S states: CTL_SENT (events: control message sent, answer) ->
 *             done (ACK) | DATA_SENT (FALLBACK: + the data send) -> done
 *   R states: CLASSIFY (Z bytes arrived: magic?) -> CTL -> GET (connected)
 *             -> done (ACK sent) | FALLBACK (data receive posted, ACK sent)
 *             -> done
 * A dead peer is an error of the wrapped PML's messages above (as without
 * pml/umr), never a wait for an answer that cannot come.
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
/* The data of a declined message, S to R on MPI_COMM_WORLD. */
#define MCA_PML_UMR_TAG_DATA     (-0x700011)

/* Control message flags */
#define MCA_PML_UMR_CTL_ADDR     0x1   /* carries the sender's ep address */

/* Answer flags */
#define MCA_PML_UMR_ACK_FALLBACK 0x1   /* send the data on TAG_DATA */
#define MCA_PML_UMR_ACK_RETIRE   0x2   /* and retire the peer */
#define MCA_PML_UMR_ACK_BUSY     0x4   /* no connection now (the budget of
                                          connected peers): this message
                                          only, no memo, no retirement */

/* Exactly Z bytes, sent through the wrapped PML on the user's (comm, dst,
 * tag): the sender's layout key, then its endpoint address (flag ADDR). */
typedef struct mca_pml_umr_ctl {
    uint64_t magic[2];
    uint64_t sreq;         /* sender's request, echoed in the ack */
    uint64_t length;       /* packed bytes of the message */
    uint64_t sblocks;      /* the sender's contiguous blocks: the receiver
                              weighs both layouts */
    uint32_t flags;
    uint16_t rkey_len;
    uint16_t addr_len;     /* sender's ep address follows the key */
    uint8_t  rail;
    uint8_t  pad[7];
    uint8_t  data[MCA_PML_UMR_CTL_SIZE - 56];
} mca_pml_umr_ctl_t;

/* The receiver's answer, on MCA_PML_UMR_TAG_ACK: its get is done, or it
 * declined (flags). A control message truncated into a receive too small
 * to show it (pml ucx delivers no byte of a truncated message) cannot name
 * its send: the receiver then answers "by tag" (sreq
 * MCA_PML_UMR_ACK_BY_TAG, the status's tag in `tag`), and the sender
 * releases its one zero-copy send to that peer with that tag
 * (pml_umr_send.c). */
#define MCA_PML_UMR_ACK_BY_TAG   0x1   /* never a request's address */

typedef struct mca_pml_umr_ack {
    uint64_t sreq;
    int32_t  error;        /* MPI error class of the receiver's get */
    uint32_t flags;        /* MCA_PML_UMR_ACK_* */
    int32_t  tag;          /* an ack by tag: the message's tag, else 0 */
    uint32_t pad;
} mca_pml_umr_ack_t;

static inline int mca_pml_umr_ctl_is_magic(const mca_pml_umr_ctl_t *ctl)
{
    return (ctl->magic[0] == MCA_PML_UMR_MAGIC0) &&
           (ctl->magic[1] == MCA_PML_UMR_MAGIC1);
}

#endif
