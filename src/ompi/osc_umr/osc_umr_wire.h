/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr on the wire: an origin asks a target for the layout key of
 * (window, displacement, datatype, count); the target answers from its
 * progress. Both go through the wrapped PML on the window's private
 * communicator (osc_umr_win.h), so they never meet a user's message. Plain C.
 *
 * A request is at most MCA_OSC_UMR_KREQ_SIZE bytes (below pml/umr's control
 * message size, so pml/umr passes it through with one compare): the
 * origin's endpoint address (when the peers have not shaken hands yet,
 * umr_mpi_peer.h), then Open MPI's packed description of the target
 * datatype (ompi_datatype_get_pack_description). A description that does
 * not fit (an indexed type of more than about 250 blocks: two ints a
 * block) comes apart, up to MCA_OSC_UMR_KDESC_MAX bytes: the origin first
 * sends it on its own tag (MCA_OSC_UMR_TAG_KDESC, behind a header naming
 * the request), then the request with MCA_OSC_UMR_KREQ_DESC_APART; the
 * target, on taking such a request, receives the description from that
 * origin (osc_umr_kreq.h). Each origin's requests are answered in the order
 * they were sent.
 */
#ifndef MCA_OSC_UMR_WIRE_H_
#define MCA_OSC_UMR_WIRE_H_

#include "umr_mpi_rma_wire.h"

#include <stdint.h>

#define MCA_OSC_UMR_TAG_KREQ    (-0x700011)
#define MCA_OSC_UMR_TAG_KANS    (-0x700012)
#define MCA_OSC_UMR_TAG_INVAL   (-0x700013)
#define MCA_OSC_UMR_TAG_KDESC   (-0x700014)
#define MCA_OSC_UMR_TAG_PKT     (-0x700015)   /* packed: origin -> target */
#define MCA_OSC_UMR_TAG_PDATA   (-0x700016)   /* ... a put's bytes apart */
#define MCA_OSC_UMR_TAG_PACK    (-0x700017)   /* target -> origin: acks */
#define MCA_OSC_UMR_TAG_PGET    (-0x700018)   /* ... a get's packed bytes */

#define MCA_OSC_UMR_KREQ_SIZE   4096
#define MCA_OSC_UMR_KREQ_MAGIC  0x6f7363756d72326bull   /* "osc umr2k" */
#define MCA_OSC_UMR_KDESC_MAGIC 0x6f7363756d723264ull   /* "osc umr2d" */
/* The largest description sent apart (an indexed type of about two
 * million blocks; the target's transport refuses a layout it cannot key,
 * UCX_MLX5_UMR_MKEY_POOL_SIZE, long before that). */
#define MCA_OSC_UMR_KDESC_MAX   (16ul << 20)

/* kreq flags */
#define MCA_OSC_UMR_KREQ_DESC_APART 0x1   /* the description came before,
                                             on MCA_OSC_UMR_TAG_KDESC */

typedef struct mca_osc_umr_kreq {
    uint64_t magic;
    uint64_t id;          /* the origin's key entry, echoed */
    int64_t  disp;        /* target displacement (units of disp_unit) */
    uint64_t count;       /* target count */
    uint32_t desc_len;    /* packed datatype description */
    uint16_t addr_len;    /* origin's endpoint address (0: none) */
    uint16_t flags;       /* MCA_OSC_UMR_KREQ_DESC_APART */
    uint8_t  data[MCA_OSC_UMR_KREQ_SIZE - 40];   /* address, description
                                                    (unless apart) */
} mca_osc_umr_kreq_t;

/* The head of a description sent apart; desc_len bytes follow. */
typedef struct mca_osc_umr_kdesc {
    uint64_t magic;
    uint64_t id;          /* the request's id */
} mca_osc_umr_kdesc_t;

/* The answer: the core's (umr_mpi_rma_wire.h), its `handle` the target's
 * packed destination of the access (osc_umr_packed.h). Status: the
 * core's, and one of ours. */
typedef umr_mpi_rma_kans_t mca_osc_umr_kans_t;

enum {
    MCA_OSC_UMR_KANS_OK            = UMR_MPI_RMA_KANS_OK,
    MCA_OSC_UMR_KANS_BAD_REQUEST   = UMR_MPI_RMA_KANS_BAD_REQUEST,
    MCA_OSC_UMR_KANS_NO_PEER       = UMR_MPI_RMA_KANS_NO_PEER,
    MCA_OSC_UMR_KANS_OUT_OF_WINDOW = UMR_MPI_RMA_KANS_OUT_OF_WINDOW,
    MCA_OSC_UMR_KANS_NO_KEY        = UMR_MPI_RMA_KANS_NO_KEY,
    MCA_OSC_UMR_KANS_UNSUPPORTED        /* datatype not expressible */
};

#define MCA_OSC_UMR_KANS_NO_HANDLE UMR_MPI_RMA_KANS_NO_HANDLE

/* Dynamic windows: a target that detaches memory tells every origin it
 * gave a key since its last detach to drop the keys it holds for that
 * target (a synchronous send: MPI_Win_detach returns once each origin has
 * matched it; osc_umr_dyn.h). */
#define MCA_OSC_UMR_INVAL_MAGIC 0x6f7363756d723164ull   /* "osc umr1d" */

typedef struct mca_osc_umr_inval {
    uint64_t magic;
    uint64_t base;        /* the detached region (for the trace) */
    uint64_t len;
} mca_osc_umr_inval_t;

/* The packed path (osc_umr_packed.h): a put or get whose blocks are too
 * small for zero-copy moves as one message of packed bytes. The origin
 * sends a header on MCA_OSC_UMR_TAG_PKT naming the packed destination the
 * target gave with the key (the answer's `handle`: window address, layout
 * and count, checked in the window when the key was made); a put's bytes
 * follow in the same message up to MCA_OSC_UMR_PKT_INLINE bytes, or
 * right after it on MCA_OSC_UMR_TAG_PDATA. The target takes each origin's
 * headers in order: it unpacks a put into the window and acknowledges on
 * MCA_OSC_UMR_TAG_PACK (cumulative: every put of that origin up to `seq`;
 * `refused` counts the puts it could not take, which the origin redoes
 * through the wrapped module), or packs a get's bytes from the window and
 * sends them on MCA_OSC_UMR_TAG_PGET (zero bytes: refused). */
#define MCA_OSC_UMR_PKT_SIZE    4096
#define MCA_OSC_UMR_PKT_MAGIC   0x6f7363756d723370ull   /* "osc umr3p" */
#define MCA_OSC_UMR_PACK_MAGIC  0x6f7363756d723361ull   /* "osc umr3a" */

enum {
    MCA_OSC_UMR_PKT_PUT       = 1,   /* bytes in this message */
    MCA_OSC_UMR_PKT_PUT_APART = 2,   /* bytes on MCA_OSC_UMR_TAG_PDATA */
    MCA_OSC_UMR_PKT_GET       = 3
};

typedef struct mca_osc_umr_pkt {
    uint64_t magic;
    uint64_t seq;         /* the origin's count of packed ops to this
                             target on this window, this one included */
    uint64_t len;         /* packed bytes */
    uint32_t handle;      /* the target's packed destination */
    uint32_t op;          /* MCA_OSC_UMR_PKT_* */
    /* MCA_OSC_UMR_PKT_PUT: len bytes follow */
} mca_osc_umr_pkt_t;

/* A put's bytes that go with the header: the whole within the PML's
 * eager size (4 KiB on btl/vader) with room for the PML's own header. */
#define MCA_OSC_UMR_PKT_INLINE  \
    (MCA_OSC_UMR_PKT_SIZE - sizeof(mca_osc_umr_pkt_t) - 64)

typedef struct mca_osc_umr_pack {
    uint64_t magic;
    uint64_t seq;         /* every packed op of this origin up to seq is
                             done at the target */
    uint64_t refused;     /* puts of this origin the target refused, in
                             all (the origin redoes those it has not seen
                             acknowledged: a put written twice is the
                             same put) */
} mca_osc_umr_pack_t;

#endif
