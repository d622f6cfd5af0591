/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: the md's UMR queue pair, the bottom unit of key
 * building.
 *
 * A loopback QP (connected to itself: a UMR needs a QP in RTS) with its CQ,
 * on which layout registrations configure their indirect keys and invalidate
 * them, and the one wait for their completions (the hardware rule: another
 * QP, or a peer, may use a UMR key only after the UMR completed). After a
 * failed work request the QP is in error state: it is destroyed and created
 * again. umr_key.c posts on it, umr_md.c and umr_md_layout.c own it; it calls
 * nothing above the engine.
 */
#ifndef UCT_MLX5_UMR_QP_H_
#define UCT_MLX5_UMR_QP_H_

#include "engine.h"

#include <ucs/datastruct/list.h>


/* Indirect key owned by the md's pool. A key a UMR may have configured
 * since it was created or last invalidated is "configured": it goes back
 * to the pool's dirty list and is invalidated (LOCAL_INV) before a UMR
 * configures it again, as man mlx5dv_wr_post asks ("Unregister the mkey to
 * enable another pattern registration should be done via ...
 * IBV_WR_LOCAL_INV", mlx5dv_wr_post.3.md:106,120 in 44.0, 56.1, 65.0;
 * rdma-core's own UMR does not set CHECK_FREE, qp.c
 * mlx5_send_wr_mkey_configure, so it would work without in those three
 * releases, but the library loaded at run time may be a later one). */
typedef struct uct_mlx5_umr_mkey {
    umr_eng_mkey_t  *eng;
    ucs_list_link_t list;            /* free or dirty list */
    int             configured;      /* a UMR since creation/LOCAL_INV */
} uct_mlx5_umr_mkey_t;


typedef struct uct_mlx5_umr_qp_config {
    unsigned            queue_len;    /* send queue length */
    uint32_t            list_entries; /* UMR list entries a WR may carry */
    double              timeout;      /* seconds to wait for a UMR */
} uct_mlx5_umr_qp_config_t;


typedef struct uct_mlx5_umr_qp {
    const umr_eng_ops_t      *eng;
    umr_eng_dev_t            *dev;
    const void               *md;     /* the owner, for log lines */
    umr_eng_cq_t             *cq;
    umr_eng_qp_t             *qp;     /* NULL after a failed re-creation */
    uint64_t                 sn;      /* wr_id of the next work request */
    umr_eng_wc_status_t      wc_error; /* the first failed completion the
                                          waits saw since the caller reset
                                          it to SUCCESS */
    uct_mlx5_umr_qp_config_t config;
} uct_mlx5_umr_qp_t;


/* Create the QP of `md` (only named in log lines). */
ucs_status_t uct_mlx5_umr_qp_init(uct_mlx5_umr_qp_t *qp, const void *md,
                                  const umr_eng_ops_t *eng, umr_eng_dev_t *dev,
                                  const uct_mlx5_umr_qp_config_t *config);

void uct_mlx5_umr_qp_cleanup(uct_mlx5_umr_qp_t *qp);

/* The QP exists (created again if a reset could not). */
ucs_status_t uct_mlx5_umr_qp_get(uct_mlx5_umr_qp_t *qp);

/* After a failed WR the QP is in error state: start over with a new one.
 * On failure there is no QP (qp->qp NULL, nothing kept that was freed)
 * until uct_mlx5_umr_qp_get() manages to create one. */
ucs_status_t uct_mlx5_umr_qp_reset(uct_mlx5_umr_qp_t *qp);

/* Wait until at most `until` of `*outstanding` signaled WRs are left; first
 * error wins. */
ucs_status_t uct_mlx5_umr_qp_wait(uct_mlx5_umr_qp_t *qp, unsigned *outstanding,
                                  unsigned until);

/* Make keys a peer may still hold fail before they are reused (local
 * invalidate, last key first, waited for); on success they are no longer
 * configured. On failure the keys may still be valid: the caller must not
 * reuse them. */
ucs_status_t uct_mlx5_umr_qp_invalidate(uct_mlx5_umr_qp_t *qp,
                                        uct_mlx5_umr_mkey_t *const *mkeys,
                                        unsigned num_mkeys);

#endif
