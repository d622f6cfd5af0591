/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: the packed path's window state, shared by its origin side
 * (osc_umr_packed.c) and its target side (osc_umr_packed_tgt.c).
 */
#ifndef MCA_OSC_UMR_PACKED_PRIV_H_
#define MCA_OSC_UMR_PACKED_PRIV_H_

#include "osc_umr_packed.h"
#include "osc_umr_wire.h"

#include <ucs/datastruct/array.inl>

BEGIN_C_DECLS

/* The largest packed operation (bytes): one message through the PML. */
#define MCA_OSC_UMR_PACKED_MAX  (1ul << 30)
/* The largest buffer a window keeps for packed bytes (larger ones are
 * allocated an operation). */
#define MCA_OSC_UMR_PBUF_KEEP   (16ul << 20)

/* A buffer the window keeps for packed bytes, one user at a time: no
 * allocation, and no fresh pages to fault in, an operation. */
typedef struct mca_osc_umr_pbuf {
    void   *buf;
    size_t cap;
    int    busy;
} mca_osc_umr_pbuf_t;

/* `len` bytes: the kept buffer when it is free (grown to `len`), else one
 * of their own; NULL without memory. */
void *mca_osc_umr_pbuf_take(mca_osc_umr_pbuf_t *b, size_t len);
/* Done with `p` (from take, or NULL). */
void mca_osc_umr_pbuf_give(mca_osc_umr_pbuf_t *b, void *p);

UCS_ARRAY_DEFINE_INLINE(mca_osc_umr_pdsts, size_t, mca_osc_umr_pdst_t)

typedef struct mca_osc_umr_packed {
    /* origin */
    opal_list_t         ops;          /* in flight, in the order started */
    uint64_t            *sent;        /* per target: last sequence sent */
    uint64_t            *refused_seen; /* ... refusals counted */
    uint64_t            *inflight;    /* ... operations in flight */
    uint64_t            ninflight;
    ompi_request_t      *ack_req;     /* receive of acknowledgements */
    mca_osc_umr_pack_t  ack;
    mca_osc_umr_pbuf_t  obuf;         /* packed origin bytes */

    /* target */
    ucs_array_t(mca_osc_umr_pdsts) dst;  /* packed destinations, by
                                             handle */
    ompi_request_t      *pkt_req;     /* receive of headers (NULL: to post
                                         again at the next progress) */
    void                *pkt_buf;     /* MCA_OSC_UMR_PKT_SIZE */
    opal_list_t         tq;           /* headers waiting their turn */
    uint64_t            *done;        /* per origin: last sequence done */
    uint64_t            *refused;     /* ... puts refused */
    uint8_t             *ack_owed;    /* ... an acknowledgement to send */
    int                 nowed;
    mca_osc_umr_pack_t  *ack_buf;     /* ... the last one sent */
    ompi_request_t      **ack_sreq;   /* ... and its send */
    mca_osc_umr_pbuf_t  tbuf;         /* a put's bytes */
    mca_osc_umr_pbuf_t  reply;        /* a get's bytes ... */
    ompi_request_t      *reply_sreq;  /* ... while their send is on */
} mca_osc_umr_packed_t;

/* Target side (osc_umr_packed_tgt.c). */
int  mca_osc_umr_packed_tgt_post(mca_osc_umr_win_t *w);
void mca_osc_umr_packed_tgt_progress(mca_osc_umr_win_t *w);
void mca_osc_umr_packed_tgt_fini(mca_osc_umr_win_t *w);

END_C_DECLS

#endif
