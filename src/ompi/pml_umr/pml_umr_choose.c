/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr: zero-copy or pass through (see pml_umr_choose.h), from measured
 * costs (common_umr_cost.h): a message goes zero-copy only when its control
 * message, one get of its blocks through the peer's engine and the ack are
 * expected to take less than 0.9 of what the wrapped PML takes to send the
 * same datatype, per message (bytes, blocks, density) and per peer (engine,
 * same host or not). The constants come from the costs file
 * (contrib/umr-calibrate.sh); without one the built-in constants never
 * choose the sw engine.
 */
#include "pml_umr_choose.h"
#include "common_umr_cost.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static mca_common_umr_cost_t mca_pml_umr_choose_cost;
static int mca_pml_umr_choose_loaded;

void mca_pml_umr_choose_default_path(char *buf, size_t len)
{
    mca_common_umr_cost_default_path(buf, len);
}

int mca_pml_umr_choose_init(const char *path, const char *pml_name,
                            char *msg, size_t len)
{
    char def[512];
    int ret;

    if ((path == NULL) || (path[0] == '\0')) {
        mca_pml_umr_choose_default_path(def, sizeof(def));
        path = def;
    }
    /* osc/umr reads the same file (common_umr_cost.h) */
    mca_common_umr_cost_set_path(path);
    ret = mca_common_umr_cost_load(&mca_pml_umr_choose_cost, path, pml_name,
                                   msg, len);
    mca_pml_umr_choose_loaded = 1;
    if ((ret > 0) && (len > 0)) {
        snprintf(msg, len, "no costs file %s: built-in constants (run "
                 "contrib/umr-calibrate.sh)", path);
    } else if ((ret == 0) && (len > 0)) {
        snprintf(msg, len, "costs for pml %s from %s", pml_name, path);
    }
    return ret;
}

static const mca_common_umr_cost_t *mca_pml_umr_choose_costs(void)
{
    if (!mca_pml_umr_choose_loaded) {
        mca_common_umr_cost_defaults(&mca_pml_umr_choose_cost);
        mca_pml_umr_choose_loaded = 1;
    }
    return &mca_pml_umr_choose_cost;
}

int mca_pml_umr_choose_zcopy(const umr_mpi_dtype_t *dt, size_t count,
                             const mca_pml_umr_choose_peer_t *peer, int mode)
{
    double density;
    int eng;

    if (mode != MCA_PML_UMR_ZCOPY_AUTO) {
        return mode == MCA_PML_UMR_ZCOPY_ON;
    }
    eng = mca_common_umr_cost_engine(peer->engine);
    if ((eng < 0) || (count == 0) || (dt->size == 0)) {
        return 0;
    }
    /* data bytes over the bytes they spread across: the costs look at its
     * class only, so the class is what goes in, by the very test the
     * sender's bounds make on Open MPI's size and extent before decoding
     * (mca_pml_umr_choose_is_dense, mca_pml_umr_choose_bounds_of) */
    density = mca_pml_umr_choose_is_dense(dt->size, dt->extent) ? 1.0 : 0.0;
    return (peer->reconnect ? mca_common_umr_cost_prefer_zcopy_connect :
                              mca_common_umr_cost_prefer_zcopy)(
            mca_pml_umr_choose_costs(), eng,
            peer->same_host ? MCA_COMMON_UMR_COST_LOCAL :
                              MCA_COMMON_UMR_COST_REMOTE,
            dt->size * count, dt->num_blocks * count, density);
}

int mca_pml_umr_choose_recv(size_t bytes, size_t sblocks, size_t rblocks,
                            double density,
                            const mca_pml_umr_choose_peer_t *peer, int mode)
{
    const mca_common_umr_cost_t *c;
    int eng, scope;
    double z, p;

    if (mode != MCA_PML_UMR_ZCOPY_AUTO) {
        return mode == MCA_PML_UMR_ZCOPY_ON;
    }
    eng = mca_common_umr_cost_engine(peer->engine);
    if ((eng < 0) || (bytes == 0)) {
        return 0;
    }
    c      = mca_pml_umr_choose_costs();
    scope  = peer->same_host ? MCA_COMMON_UMR_COST_LOCAL :
                               MCA_COMMON_UMR_COST_REMOTE;
    sblocks = (sblocks > 0) ? sblocks : 1;
    rblocks = (rblocks > 0) ? rblocks : 1;
    /* the control message, then one get of the sender's blocks into the
     * receiver's (common_umr_cost.h: on the sw engine more receive blocks
     * than send blocks are charged at the send blocks' cost) */
    z = c->pml[scope].ctrl_ns +
        mca_common_umr_cost_rma(c, eng, MCA_COMMON_UMR_COST_GET, bytes,
                                sblocks, rblocks, density) +
        (peer->reconnect ? mca_common_umr_cost_connect(c, eng, scope) : 0);
    p = 0.5 * (mca_common_umr_cost_pml(c, scope, bytes,
                                       (double)bytes / sblocks) +
               mca_common_umr_cost_pml(c, scope, bytes,
                                       (double)bytes / rblocks));
    return z < MCA_COMMON_UMR_COST_MARGIN * p;
}

/* Where zero-copy can win at a mean block of m bytes for messages of at
 * least `min_size` bytes: its cost minus the margin times the PML's is
 * linear in the bytes (blocks = bytes / m), a + b * bytes. The smallest
 * winning size, or SIZE_MAX when none wins. */
static size_t mca_pml_umr_choose_min_win(const mca_common_umr_cost_t *c,
                                         int eng, int scope, int dens,
                                         double m, size_t min_size)
{
    const mca_common_umr_cost_lin_t *l =
        &c->eng[eng][MCA_COMMON_UMR_COST_GET][dens];
    double p0 = mca_common_umr_cost_pml(c, scope, 0, m);
    double p1 = mca_common_umr_cost_pml(c, scope, 1, m) - p0;  /* per byte */
    double a  = c->pml[scope].ctrl_ns + l->op_ns -
                MCA_COMMON_UMR_COST_MARGIN * p0;
    double b  = (l->rentry_ns + l->lentry_ns) / m + l->byte_ns -
                MCA_COMMON_UMR_COST_MARGIN * p1;
    double x;

    if (a + b * (double)min_size < 0) {
        return min_size;
    }
    if (b >= 0) {
        return SIZE_MAX;
    }
    x = ceil(-a / b);
    return (x >= (double)SIZE_MAX) ? SIZE_MAX : (size_t)x;
}

void mca_pml_umr_choose_bounds_of(const char *engine, int same_host, int mode,
                                  size_t min_size, int dens_class,
                                  size_t *min_bytes, double *min_block)
{
    const mca_common_umr_cost_t *c = mca_pml_umr_choose_costs();
    int eng = mca_common_umr_cost_engine(engine), dens, i;
    int scope = same_host ? MCA_COMMON_UMR_COST_LOCAL :
                            MCA_COMMON_UMR_COST_REMOTE;
    size_t b;
    double m;

    *min_bytes = SIZE_MAX;
    *min_block = HUGE_VAL;
    if (mode == MCA_PML_UMR_ZCOPY_ON) {
        *min_bytes = min_size;
        *min_block = 0;
        return;
    }
    if ((mode != MCA_PML_UMR_ZCOPY_AUTO) || (eng < 0)) {
        return;
    }
    /* mean blocks from 1 B to 1 GiB, 16 a factor of two: the PML's costs
     * are interpolated in log2(block), so the steps follow them closely;
     * the bound is the step below the first that wins (conservative) */
    for (i = 0; i <= 30 * 16; ++i) {
        m = exp2(i / 16.0);
        for (dens = 0; dens < MCA_COMMON_UMR_COST_NUM_DENS; ++dens) {
            if ((dens_class != MCA_PML_UMR_CHOOSE_ANY) &&
                ((dens == MCA_COMMON_UMR_COST_DENSE_L) !=
                 (dens_class == MCA_PML_UMR_CHOOSE_DENSE))) {
                continue;
            }
            b = mca_pml_umr_choose_min_win(c, eng, scope, dens, m, min_size);
            if (b == SIZE_MAX) {
                continue;
            }
            if (*min_block == HUGE_VAL) {
                *min_block = exp2((i - 1) / 16.0);
            }
            if (b < *min_bytes) {
                *min_bytes = b;
            }
        }
    }
    if (*min_block == HUGE_VAL) {
        *min_bytes = SIZE_MAX;
    } else if (*min_block < 1) {
        *min_block = 0;
    }
}
