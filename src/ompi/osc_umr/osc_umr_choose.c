/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: zero-copy or the wrapped module (see osc_umr_choose.h).
 */
#include "osc_umr_choose.h"
#include "common_umr_cost.h"

#include <stdio.h>
#include <string.h>

/* The costs files read, one a wrapped component (osc/rdma, osc/ucx, ...). */
#define MCA_OSC_UMR_CHOOSE_MAX 4

typedef struct mca_osc_umr_choose_costs {
    char                  name[32];
    int                   measured;    /* osc figures for it in the file */
    mca_common_umr_cost_t cost;
} mca_osc_umr_choose_costs_t;

static mca_osc_umr_choose_costs_t mca_osc_umr_choose_tab[MCA_OSC_UMR_CHOOSE_MAX];
static int mca_osc_umr_choose_n;

void mca_osc_umr_choose_win(mca_osc_umr_win_t *w, const char *osc_name)
{
    mca_osc_umr_choose_costs_t *c = NULL;
    char path[512], err[512];
    int i, rc;

    w->choose_costs = NULL;
    if (osc_name == NULL) {
        return;
    }
    for (i = 0; i < mca_osc_umr_choose_n; ++i) {
        if (!strcmp(mca_osc_umr_choose_tab[i].name, osc_name)) {
            c = &mca_osc_umr_choose_tab[i];
            break;
        }
    }
    if (c == NULL) {
        if (mca_osc_umr_choose_n == MCA_OSC_UMR_CHOOSE_MAX) {
            return;
        }
        c = &mca_osc_umr_choose_tab[mca_osc_umr_choose_n++];
        snprintf(c->name, sizeof(c->name), "%s", osc_name);
        mca_common_umr_cost_path(path, sizeof(path));
        rc = mca_common_umr_cost_load_osc(&c->cost, path, NULL, osc_name, err,
                                          sizeof(err));
        c->measured = (rc == 0) &&
                      c->cost.osc[MCA_COMMON_UMR_COST_LOCAL].measured;
        if (rc < 0) {
            MCA_OSC_UMR_VERBOSE(1, "costs file rejected (%s): built-in rule",
                                err);
        } else if (rc > 0) {
            MCA_OSC_UMR_VERBOSE(5, "no costs file %s: built-in rule "
                                "(osc_umr_sw_max_block on the sw engine)",
                                path);
        } else if (!c->measured) {
            MCA_OSC_UMR_VERBOSE(5, "costs file %s has no osc.%s figures: "
                                "built-in rule (osc_umr_sw_max_block on the "
                                "sw engine)", path, osc_name);
        } else {
            MCA_OSC_UMR_VERBOSE(5, "costs for osc/%s from %s", osc_name,
                                path);
        }
    }
    w->choose_costs = c->measured ? &c->cost : NULL;
    snprintf(w->osc_name, sizeof(w->osc_name), "%s", osc_name);
}

/* The built-in rule: on the sw engine, by the smaller of the two sides'
 * average contiguous blocks: packed up to osc_umr_packed_max_block
 * (`packed`: the file has no packed figures), zero-copy up to
 * osc_umr_sw_max_block, larger ones through the wrapped module; on mlx5
 * zero-copy. */
static int mca_osc_umr_choose_builtin(mca_common_umr_peer_t *peer,
                                      size_t mean, int packed, int zcopy_rule)
{
    if (!peer->rail->is_sw) {
        return MCA_COMMON_UMR_COST_ZCOPY;
    }
    if (packed && (mca_osc_umr.packed_mode != MCA_OSC_UMR_PACKED_OFF) &&
        (mean <= mca_osc_umr.packed_max_block)) {
        return MCA_COMMON_UMR_COST_PACKED;
    }
    if (!zcopy_rule) {
        return -1;   /* the costs decide */
    }
    return ((mca_osc_umr.sw_max_block == 0) ||
            (mean <= mca_osc_umr.sw_max_block)) ?
           MCA_COMMON_UMR_COST_ZCOPY : MCA_COMMON_UMR_COST_PASS;
}

static const char *mca_osc_umr_choice_str(int choice)
{
    return (choice == MCA_COMMON_UMR_COST_ZCOPY)  ? "zero-copy" :
           (choice == MCA_COMMON_UMR_COST_PACKED) ? "packed" :
           "through the wrapped module";
}

int mca_osc_umr_choose(mca_osc_umr_win_t *w, mca_common_umr_peer_t *peer,
                       int target, int is_put, size_t length,
                       const umr_mpi_dtype_t *oinfo, size_t origin_count,
                       const umr_mpi_dtype_t *tinfo, size_t target_count)
{
    const mca_common_umr_cost_t *c = w->choose_costs;
    /* a contiguous type's elements make one block */
    size_t lblocks = oinfo->is_contig ? 1 : oinfo->num_blocks * origin_count;
    size_t rblocks = tinfo->is_contig ? 1 : tinfo->num_blocks * target_count;
    size_t blocks  = (lblocks > rblocks) ? lblocks : rblocks;
    size_t mean    = blocks ? length / blocks : length;
    int op    = is_put ? MCA_COMMON_UMR_COST_PUT : MCA_COMMON_UMR_COST_GET;
    int eng   = peer->rail->is_sw ? MCA_COMMON_UMR_COST_SW :
                                    MCA_COMMON_UMR_COST_MLX5;
    int scope = peer->rail->is_sw ? MCA_COMMON_UMR_COST_LOCAL :
                                    MCA_COMMON_UMR_COST_REMOTE;
    double density, z, p, k = -1;
    int choice;

    if (c == NULL) {
        choice = mca_osc_umr_choose_builtin(peer, mean, 1, 1);
        if (choice != w->choice[target]) {
            MCA_OSC_UMR_VERBOSE(10, "%s to %d: %zu bytes, mean block %zu B: "
                                "%s (built-in rule: no osc figures, sw "
                                "engine packed up to %lu B blocks, zero-copy "
                                "up to %lu B)", is_put ? "put" : "get",
                                target, length, mean,
                                mca_osc_umr_choice_str(choice),
                                mca_osc_umr.packed_max_block,
                                mca_osc_umr.sw_max_block);
            w->choice[target] = (int8_t)choice;
        }
        return choice;
    }
    density = (tinfo->extent > 0) ?
              (double)tinfo->size / (double)tinfo->extent : 1.0;
    z = mca_common_umr_cost_rma(c, eng, op, length, rblocks, lblocks,
                                density);
    p = mca_common_umr_cost_osc(c, scope, op, length, (double)mean);
    if (mca_osc_umr.packed_mode != MCA_OSC_UMR_PACKED_OFF) {
        k = mca_common_umr_cost_packed(c, scope, op, length, (double)mean);
    }
    choice = (k < 0) ? mca_osc_umr_choose_builtin(peer, mean, 1, 0) : -1;
    if (choice < 0) {
        choice = (p > 0) ? mca_common_umr_cost_pick(p, z, k) :
                           MCA_COMMON_UMR_COST_PASS;
    }
    if (choice != w->choice[target]) {
        char packed[64] = "";

        if (k >= 0) {
            snprintf(packed, sizeof(packed), ", packed %.0f ns,", k);
        }
        MCA_OSC_UMR_VERBOSE(10, "%s to %d: %zu bytes, %zu target / %zu "
                            "origin blocks: zero-copy %.0f ns (%s engine)%s "
                            "against %.0f ns through osc/%s (%s, %zu B "
                            "blocks): %s", is_put ? "put" : "get", target,
                            length, rblocks, lblocks, z,
                            peer->rail->is_sw ? "sw" : "mlx5", packed, p,
                            w->osc_name,
                            (scope == MCA_COMMON_UMR_COST_LOCAL) ? "local" :
                            "remote", mean, mca_osc_umr_choice_str(choice));
        w->choice[target] = (int8_t)choice;
    }
    return choice;
}
