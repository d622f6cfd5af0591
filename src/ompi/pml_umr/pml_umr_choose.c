/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr: zero-copy or pass through (see pml_umr_choose.h), from measured
 * costs (pml_umr_cost.h): a message goes zero-copy only when its control
 * message, one get of its blocks through the peer's engine and the ack are
 * expected to take less than 0.9 of what the wrapped PML takes to send the
 * same datatype, per message (bytes, blocks, density) and per peer (engine,
 * same host or not). The constants come from the costs file
 * (contrib/umr-calibrate.sh); without one the built-in constants never
 * choose the sw engine.
 */
#include "pml_umr_choose.h"
#include "pml_umr_cost.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static mca_pml_umr_cost_t mca_pml_umr_choose_cost;
static int mca_pml_umr_choose_loaded;

void mca_pml_umr_choose_default_path(char *buf, size_t len)
{
    const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char host[256] = "localhost", *dot;

    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    if ((dot = strchr(host, '.')) != NULL) {
        *dot = '\0'; /* like hostname -s */
    }
    if ((cache != NULL) && (cache[0] != '\0')) {
        snprintf(buf, len, "%s/mlx5_umr/costs-%s.conf", cache, host);
    } else {
        snprintf(buf, len, "%s/.cache/mlx5_umr/costs-%s.conf",
                 home ? home : "", host);
    }
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
    ret = mca_pml_umr_cost_load(&mca_pml_umr_choose_cost, path, pml_name,
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

static const mca_pml_umr_cost_t *mca_pml_umr_choose_costs(void)
{
    if (!mca_pml_umr_choose_loaded) {
        mca_pml_umr_cost_defaults(&mca_pml_umr_choose_cost);
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
    eng = mca_pml_umr_cost_engine(peer->engine);
    if ((eng < 0) || (count == 0) || (dt->size == 0)) {
        return 0;
    }
    /* data bytes over the bytes they spread across */
    density = (dt->extent > 0) ? (double)dt->size / (double)dt->extent : 1.0;
    return mca_pml_umr_cost_prefer_zcopy(mca_pml_umr_choose_costs(), eng,
                                         peer->same_host ?
                                         MCA_PML_UMR_COST_LOCAL :
                                         MCA_PML_UMR_COST_REMOTE,
                                         dt->size * count,
                                         dt->num_blocks * count, density);
}
