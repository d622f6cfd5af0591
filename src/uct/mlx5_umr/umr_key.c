/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: building layout keys (see umr_key.h).
 */
#include "umr_config.h"

#include "umr_key.h"

#include <ucs/debug/log.h>
#include <ucs/sys/math.h>


/* Post the UMR configuring `mkey` as plan key `key`. */
static ucs_status_t
uct_mlx5_umr_key_post_one(uct_mlx5_umr_md_t *md, umr_eng_qp_t *qp,
                          const umr_layout_key_t *key, void *base,
                          const uint32_t *lkeys,
                          uct_mlx5_umr_mkey_t *const *mkeys,
                          uct_mlx5_umr_mkey_t *mkey, unsigned access,
                          uint64_t wr_id)
{
    umr_eng_interleaved_t ilv[md->config.mkey_entries];
    umr_eng_sge_t sge[md->config.mkey_entries];
    const umr_layout_entry_t *e;
    uint64_t addr;
    uint32_t lkey;
    unsigned i;

    /* the lowering limits come from the md: a plan always fits its keys */
    ucs_assertv(key->num_entries <= md->config.mkey_entries, "%u > %u",
                key->num_entries, md->config.mkey_entries);

    for (i = 0; i < key->num_entries; ++i) {
        e = &key->entries[i];
        if (e->child < 0) {
            addr = (uintptr_t)base + e->offset;
            lkey = lkeys[e->mem];
        } else {
            /* zero-based child key, already configured: current key value */
            addr = e->offset;
            lkey = mkeys[e->child]->eng->lkey;
        }

        if (key->kind == UMR_LAYOUT_KEY_INTERLEAVED) {
            ilv[i].addr        = addr;
            ilv[i].bytes_count = e->bytes_count;
            ilv[i].bytes_skip  = e->bytes_skip;
            ilv[i].lkey        = lkey;
        } else {
            sge[i].addr   = addr;
            sge[i].length = e->bytes_count;
            sge[i].lkey   = lkey;
        }
    }

    /* from now on the key needs a LOCAL_INV before it serves again
     * (umr_md.h, uct_mlx5_umr_mkey_t) */
    mkey->configured = 1;
    if (key->kind == UMR_LAYOUT_KEY_INTERLEAVED) {
        return md->eng->post_umr_interleaved(qp, mkey->eng, access,
                                             key->repeat, key->num_entries,
                                             ilv, wr_id, UMR_ENG_WR_SIGNALED);
    }

    return md->eng->post_umr_list(qp, mkey->eng, access, key->num_entries, sge,
                                  wr_id, UMR_ENG_WR_SIGNALED);
}

/* Post plan keys *next_p .. end - 1 (see uct_mlx5_umr_key_post). */
static ucs_status_t
uct_mlx5_umr_key_post_until(uct_mlx5_umr_md_t *md, umr_eng_qp_t *qp,
                            const umr_layout_plan_t *plan, void *base,
                            const uint32_t *lkeys,
                            uct_mlx5_umr_mkey_t *const *mkeys, unsigned access,
                            uint64_t wr_id, unsigned *next_p, unsigned end)
{
    ucs_status_t status;

    /* children first: a parent entry reads its child's current key */
    for (; *next_p < end; ++(*next_p)) {
        status = uct_mlx5_umr_key_post_one(md, qp, &plan->keys[*next_p], base,
                                           lkeys, mkeys, mkeys[*next_p],
                                           access, wr_id);
        if (status != UCS_OK) {
            return status;
        }
    }

    return UCS_OK;
}

ucs_status_t uct_mlx5_umr_key_post(uct_mlx5_umr_md_t *md, umr_eng_qp_t *qp,
                                   const umr_layout_plan_t *plan, void *base,
                                   const uint32_t *lkeys,
                                   uct_mlx5_umr_mkey_t *const *mkeys,
                                   unsigned access, uint64_t wr_id,
                                   unsigned *next_p)
{
    return uct_mlx5_umr_key_post_until(md, qp, plan, base, lkeys, mkeys,
                                       access, wr_id, next_p, plan->num_keys);
}

ucs_status_t uct_mlx5_umr_key_configure(uct_mlx5_umr_md_t *md,
                                        const umr_layout_plan_t *plan,
                                        void *base, const uint32_t *lkeys,
                                        uct_mlx5_umr_mkey_t *const *mkeys,
                                        unsigned access)
{
    unsigned next = 0, outstanding = 0, posted, end;
    ucs_status_t status, wstatus;

    if (md->umr_broken != UCS_OK) {
        return UCS_ERR_UNSUPPORTED;   /* said once, when it broke */
    }

    status = uct_mlx5_umr_qp_get(&md->umr);
    if (status != UCS_OK) {
        return status;
    }

    md->umr.wc_error = UMR_ENG_WC_SUCCESS;
    for (;;) {
        /* a device whose UMR fence rdma-core cannot give: one UMR at a
         * time, each waited for (caps.umr_wait) */
        end    = md->caps.umr_wait ? ucs_min(next + 1, plan->num_keys) :
                                     plan->num_keys;
        posted = next;
        status = uct_mlx5_umr_key_post_until(md, md->umr.qp, plan, base,
                                             lkeys, mkeys, access,
                                             md->umr.sn++, &next, end);
        posted                 = next - posted;
        outstanding           += posted;
        md->stats.umr_posted  += posted;
        if ((status == UCS_OK) && (next < plan->num_keys)) {
            status = uct_mlx5_umr_qp_wait(&md->umr, &outstanding, 0);
            if (status != UCS_OK) {
                break;
            }
            continue;
        }
        if ((status != UCS_ERR_NO_RESOURCE) || (outstanding == 0)) {
            break;
        }
        /* queue full: wait for one slot */
        status = uct_mlx5_umr_qp_wait(&md->umr, &outstanding, outstanding - 1);
        if (status != UCS_OK) {
            break;
        }
    }

    if ((status != UCS_OK) && (md->umr.wc_error == UMR_ENG_WC_SUCCESS)) {
        ucs_error("mlx5_umr md %p: posting UMR for key %u/%u failed: %s", md,
                  next + 1, plan->num_keys, ucs_status_string(status));
    }

    wstatus = uct_mlx5_umr_qp_wait(&md->umr, &outstanding, 0);
    if (status == UCS_OK) {
        status = wstatus;
    }
    if (md->umr.wc_error != UMR_ENG_WC_SUCCESS) {
        uct_mlx5_umr_md_umr_failed(md, md->umr.wc_error);
    }
    if (wstatus != UCS_OK) {
        /* the caller fails with wstatus either way. After a timeout too:
         * the UMRs are still posted, and a later wait would count their
         * completions as its own. A failed reset is logged and leaves no
         * QP, the next configuration tries again */
        (void)uct_mlx5_umr_qp_reset(&md->umr);
    }
    return status;
}
