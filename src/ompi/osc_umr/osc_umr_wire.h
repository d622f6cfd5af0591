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
 * common_umr_peer.h), then Open MPI's packed description of the target
 * datatype (ompi_datatype_get_pack_description). Types whose description
 * does not fit are never asked for (the wrapped module moves them).
 */
#ifndef MCA_OSC_UMR_WIRE_H_
#define MCA_OSC_UMR_WIRE_H_

#include <stdint.h>

#define MCA_OSC_UMR_TAG_KREQ    (-0x700011)
#define MCA_OSC_UMR_TAG_KANS    (-0x700012)
#define MCA_OSC_UMR_TAG_INVAL   (-0x700013)

#define MCA_OSC_UMR_KREQ_SIZE   4096
#define MCA_OSC_UMR_KREQ_MAGIC  0x6f7363756d72316bull   /* "osc umr1k" */
#define MCA_OSC_UMR_KANS_RKEY   256                     /* = MAX_RKEY */

typedef struct mca_osc_umr_kreq {
    uint64_t magic;
    uint64_t id;          /* the origin's key entry, echoed */
    int64_t  disp;        /* target displacement (units of disp_unit) */
    uint64_t count;       /* target count */
    uint32_t desc_len;    /* packed datatype description */
    uint16_t addr_len;    /* origin's endpoint address (0: none) */
    uint16_t pad;
    uint8_t  data[MCA_OSC_UMR_KREQ_SIZE - 40];   /* address, description */
} mca_osc_umr_kreq_t;

/* Answer status */
enum {
    MCA_OSC_UMR_KANS_OK = 0,
    MCA_OSC_UMR_KANS_BAD_REQUEST,   /* malformed request */
    MCA_OSC_UMR_KANS_NO_PEER,       /* no rail to the origin, handshake */
    MCA_OSC_UMR_KANS_UNSUPPORTED,   /* datatype not expressible */
    MCA_OSC_UMR_KANS_OUT_OF_WINDOW, /* the bytes are not all in the window */
    MCA_OSC_UMR_KANS_NO_KEY         /* registration or layout key failed */
};

typedef struct mca_osc_umr_kans {
    uint64_t id;
    int32_t  status;
    uint16_t rkey_len;
    uint16_t pad;
    uint8_t  rkey[MCA_OSC_UMR_KANS_RKEY];
} mca_osc_umr_kans_t;

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

#endif
