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
 * Protocol of one zero-copy message: one protocol, one way to fall back.
 * S is the sender, R the receiver; every message goes through the wrapped
 * PML; S's data stays in S's buffer, untouched, until S's request
 * completes, so whatever happens S can still send it through the wrapped
 * PML. Messages:
 *
 *   CTL   S -> R  (user's comm, dst, tag; Z bytes): magic, the send's
 *                 sequence number, length, S's block count, S's layout key
 *                 (+ S's endpoint address while not connected). A CTL
 *                 without a key (an escape, user data of Z bytes that
 *                 starts with the magic, to a retired peer or rail, to a
 *                 peer no rail reaches, of a type without a layout,
 *                 buffered (sent from a copy in the attached buffer, the
 *                 user's send complete at once), or whose key could not be
 *                 made: it never goes raw, whatever the send mode) is
 *                 always declined. S and R each decide that the other is a
 *                 pml/umr peer from the modex alone (same protocol, same
 *                 job, not self: mca_common_umr_peer_get_umr), whatever
 *                 their rails reach, so S escapes exactly what R takes for
 *                 a CTL.
 *   ACK   R -> S  (MPI_COMM_WORLD, MCA_PML_UMR_TAG_ACK): names S's send by
 *                 the CTL's sequence number (seq), or, when R never saw
 *                 the CTL's bytes, the message's communicator and tag (seq
 *                 MCA_PML_UMR_ACK_BY_TAG, cid, tag); flags:
 *                   0                  done: R's get finished (error: its
 *                                      MPI error class, 0 on success)
 *                   FALLBACK           declined: send the data on DATA
 *                   FALLBACK|RETIRE    declined by a fault: also retire
 *                                      the peer (both sides pass through
 *                                      from now on; one verbose line and
 *                                      the counter `retired` each)
 *                   FALLBACK|RETIRE|NORAIL  declined, no rail of R's
 *                                      reaches S (not a fault): S retires
 *                                      R (its line names the reason)
 *                   FALLBACK|BUSY      declined for want of a connection
 *                                      (the budget of connected peers,
 *                                      common_umr_peer.h): this message
 *                                      only, no retirement, and the sender
 *                                      does not remember the type as one
 *                                      to pass through
 *   DATA  S -> R  (MPI_COMM_WORLD, MCA_PML_UMR_TAG_DATA): the message
 *                 itself, (buf, count, datatype) through the wrapped PML,
 *                 into R's receive, posted before R sent FALLBACK. Both
 *                 sides handle the declined messages of a pair in the same
 *                 order (one tag, FIFO per pair), so each lands in its own
 *                 receive; a receive smaller than the message gets
 *                 MPI_ERR_TRUNCATE from the wrapped PML itself.
 *
 * Sequence numbers: S numbers each zero-copy send (each CTL it posts; a
 * persistent send gets a new one at each start) from one 64-bit counter a
 * process that starts at MCA_PML_UMR_SEQ_FIRST and is never reused; no
 * address of S's goes on the wire. An ACK is taken only when it names a
 * send of S's that waits for its ack from the very peer the ACK came from
 * (by seq: a hash of the waiting sends, then the peer; by tag: the one
 * waiting send to that peer on that communicator with that tag). Anything
 * else (a duplicate, an ACK that comes after its send completed, a
 * malformed one, one of another peer's send) is dropped: one verbose line,
 * the counter `acks_dropped`, and a new ACK receive is posted for that
 * peer in place of the one it took, so the ACKs still to come each find
 * one. ACK receives still posted when MPI_Finalize starts (spares: after a
 * CTL that could not be sent) are cancelled then. Nothing is read through a value that came on the wire.
 *
 * Sender request (pml_umr_send.c):
 *   CHOOSE     pass-through test (size, contiguity, prefilter, peer,
 *              decoded layout, memo of past declines, costs): pass ->
 *              the wrapped PML's own send, no request of ours.
 *   KEY        layout key + endpoint: on any failure (beyond the key
 *              budget, key pool dry, endpoint, no connection within the
 *              budget of connected peers) nothing was sent yet -> the
 *              wrapped PML's own send (counter `fallbacks`), but an
 *              escape goes as a keyless CTL; an md UMR timeout (or an md
 *              the transport retired) also retires the rail. Then the ACK
 *              receive and the entry among the sends waiting for acks: if
 *              either cannot be had (out of memory), nothing was sent: the
 *              wrapped PML's own send, but an escape (keyless already)
 *              fails the user's send with OMPI_ERR_OUT_OF_RESOURCE
 *              (counter `errors`, one line): never raw.
 *   CTL_SENT   CTL posted, ACK receive posted; events 2 (CTL sent, ACK):
 *              ACK done      -> DONE when the CTL send completed too
 *              ACK FALLBACK  -> DATA_SENT (+1 event; RETIRE: peer retired;
 *                               by cost: this type and count pass through
 *                               from now on)
 *              CTL send error-> DONE with that error (a dead peer: an MPI
 *                               error of the wrapped PML, never a wait)
 *   DATA_SENT  DATA posted (counter `fallback_sends`) -> DONE when it
 *              completes (with its error, if any)
 *   DONE       the user's request completes; the key is released.
 *
 * Receive (pml_umr_recv.c; pml_umr_hook.c for receives hooked in place):
 *   POSTED     the wrapped PML's receive, unchanged. It completes with:
 *                 not Z bytes / no magic    -> its own status (pass-through)
 *                 Z bytes with the magic    -> CLASSIFY
 *                 MPI_ERR_TRUNCATE, receive smaller than Z (a CTL that did
 *                 not fit)                  -> TRUNC
 *   CLASSIFY   from progress: a pml/umr peer (by the modex, a rail reaching
 *              it or not: as S decided) and the magic -> CTL, else the
 *              wrapped PML's status.
 *   CTL        no rail of R's reaches S -> DECLINE (a CTL with a key:
 *              +RETIRE|NORAIL; no rail needed to decline);
 *              retired peer or rail, malformed CTL -> DECLINE+RETIRE;
 *              keyless escape, zero-copy would lose (pml_umr_choose_recv,
 *              both layouts), receive type not decoded -> DECLINE;
 *              no connection within the budget of connected peers (every
 *              connected peer busy, or S still believes in an end dropped
 *              here) -> DECLINE+BUSY;
 *              connect (fault -> DECLINE+RETIRE) ->
 *              GET (at once, or once the peer is connected).
 *   GET        rkey, receive region (key fault -> DECLINE+RETIRE), the get
 *              (receive layout beyond the key budget -> DECLINE; md wait,
 *              post or completion fault -> DECLINE+RETIRE; no resource ->
 *              retried from progress) -> ACK(done) -> DONE. A fault that
 *              is the rail's (md UMR timeout; the transport retired the
 *              md: port down) retires the rail as well: every peer on it
 *              is then declined at CTL without another try. A receive
 *              smaller than the message gets what fits and
 *              MPI_ERR_TRUNCATE (what the wrapped PML would say).
 *   DECLINE    post the DATA receive into the user's buffer, then
 *              ACK(FALLBACK[|RETIRE]) (counters `declined`,
 *              `fault_declines`) -> DONE when DATA arrives (its status:
 *              the length, MPI_ERR_TRUNCATE). If that receive cannot be
 *              posted: ACK(done, MPI_ERR_OTHER), DONE with MPI_ERR_OTHER.
 *   TRUNC      (a message of exactly Z bytes) the CTL's first 24 bytes in
 *              the buffer (ob1, room for them) name S's send: ACK(done)
 *              at once; the first 16 without the magic (ob1): data, no
 *              answer; otherwise (pml ucx delivers nothing of a truncated
 *              message; a receive of less than 24 bytes) ACK(done) by
 *              (cid, tag) from progress, and S releases its one send to R
 *              on that communicator with that tag (when several such sends
 *              wait at once, it cannot tell which: they keep waiting). The
 *              receive itself completes with the wrapped PML's status
 *              (MPI_ERR_TRUNCATE). Watched: blocking receives, nonblocking
 *              and persistent receives of a derived datatype, and
 *              contiguous nonblocking and persistent ones on a
 *              communicator whose errors are not fatal (a fatal truncation
 *              ends the job anyway).
 *   DONE       the user's receive completes.
 *
 * On fault or decline nothing S sent is lost: the CTL was matched by R's
 * receive and the data follows as DATA; on a truncation R answers so S's
 * request completes. A dead peer is an error of the wrapped PML's messages
 * above (as without pml/umr), never a wait for an answer that cannot come.
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
#define MCA_PML_UMR_ACK_NORAIL   0x8   /* with RETIRE: not a fault, no rail
                                          of the receiver's reaches the
                                          sender (the reason in the
                                          sender's line) */

/* Exactly Z bytes, sent through the wrapped PML on the user's (comm, dst,
 * tag): the sender's layout key, then its endpoint address (flag ADDR). */
typedef struct mca_pml_umr_ctl {
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
    uint8_t  data[MCA_PML_UMR_CTL_SIZE - 56];
} mca_pml_umr_ctl_t;

/* The receiver's answer, on MCA_PML_UMR_TAG_ACK: its get is done, or it
 * declined (flags). A control message truncated into a receive too small
 * to show it (pml ucx delivers no byte of a truncated message) cannot name
 * its send: the receiver then answers "by tag" (seq
 * MCA_PML_UMR_ACK_BY_TAG, the status's communicator in `cid` and tag in
 * `tag`), and the sender releases its one zero-copy send to that peer on
 * that communicator with that tag (pml_umr_send.c). */
#define MCA_PML_UMR_ACK_BY_TAG   0x1   /* never a send's sequence number */
#define MCA_PML_UMR_SEQ_FIRST    0x2   /* the first sequence number */

typedef struct mca_pml_umr_ack {
    uint64_t seq;          /* the CTL's, or MCA_PML_UMR_ACK_BY_TAG */
    uint64_t cid;          /* an ack by tag: the communicator, the same id
                              on both sides (umr_ompi_comm_gid), else 0 */
    int32_t  error;        /* MPI error class of the receiver's get */
    uint32_t flags;        /* MCA_PML_UMR_ACK_* */
    int32_t  tag;          /* an ack by tag: the message's tag, else 0 */
    uint32_t pad;
} mca_pml_umr_ack_t;

#ifndef __cplusplus
/* the format peers agree on through the modex version */
_Static_assert(sizeof(mca_pml_umr_ctl_t) == MCA_PML_UMR_CTL_SIZE,
               "a control message is Z bytes");
_Static_assert(sizeof(mca_pml_umr_ack_t) == 32, "an ack is 32 bytes");
#endif

static inline int mca_pml_umr_ctl_is_magic(const mca_pml_umr_ctl_t *ctl)
{
    return (ctl->magic[0] == MCA_PML_UMR_MAGIC0) &&
           (ctl->magic[1] == MCA_PML_UMR_MAGIC1);
}

#endif
