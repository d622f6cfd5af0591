/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: the key protocol of one-sided operations on the wire
 * (umr_mpi_rma.h), plain C. A request names the origin's key entry (echoed
 * in the answer, which the origin checks), the target displacement (units
 * of the target's disp_unit) and count, then carries the origin's endpoint
 * address while the two have not shaken hands (umr_mpi_peer.h) and the
 * target layout encoded (umr_layout_encode). A layout whose encoding does
 * not fit is never asked for: its operations go to the MPI. Each origin's
 * requests to a target are answered in their order.
 */
#ifndef UMR_MPI_RMA_WIRE_H_
#define UMR_MPI_RMA_WIRE_H_

#include <stdint.h>

#define UMR_MPI_RMA_KREQ_SIZE   4096
#define UMR_MPI_RMA_KREQ_MAGIC  0x756d726d70696b72ull   /* "umrmpikr" */
#define UMR_MPI_RMA_KANS_RKEY   256

typedef struct umr_mpi_rma_kreq {
    uint64_t magic;
    uint64_t id;          /* the origin's key entry, echoed */
    int64_t  disp;
    uint64_t count;
    int32_t  origin;      /* the origin's rank in the window */
    uint16_t addr_len;    /* its endpoint address (0: none) */
    uint16_t layout_len;  /* the encoded layout, after the address padded
                             to 8 bytes */
    uint8_t  data[UMR_MPI_RMA_KREQ_SIZE - 40] __attribute__((aligned(8)));
} umr_mpi_rma_kreq_t;

#define UMR_MPI_RMA_KREQ_HDR    40

/* Answer status */
enum {
    UMR_MPI_RMA_KANS_OK = 0,
    UMR_MPI_RMA_KANS_BAD_REQUEST,   /* malformed request */
    UMR_MPI_RMA_KANS_NO_PEER,       /* no rail to the origin, handshake */
    UMR_MPI_RMA_KANS_OUT_OF_WINDOW, /* the bytes are not all in the window */
    UMR_MPI_RMA_KANS_NO_KEY         /* registration or layout key failed */
};

/* No destination handle with this key. */
#define UMR_MPI_RMA_KANS_NO_HANDLE UINT32_MAX

typedef struct umr_mpi_rma_kans {
    uint64_t id;
    int32_t  status;
    uint16_t rkey_len;
    uint16_t pad;
    uint32_t handle;      /* a binding's handle of the target's destination
                             of this access (osc/umr's packed path), or
                             UMR_MPI_RMA_KANS_NO_HANDLE */
    uint32_t pad2;
    uint8_t  rkey[UMR_MPI_RMA_KANS_RKEY];
} umr_mpi_rma_kans_t;

#endif
