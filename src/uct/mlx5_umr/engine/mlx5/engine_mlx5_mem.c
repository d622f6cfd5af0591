/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr engine, mlx5 backend: memory regions and indirect mkeys.
 */
#include "umr_config.h"

#include "engine_mlx5.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/math.h>

#include <errno.h>
#include <string.h>

ucs_status_t umr_eng_mlx5_mr_reg(umr_eng_dev_t *ndev, void *addr,
                                 size_t length, unsigned access,
                                 umr_eng_mr_t **mr_p)
{
    ucs_status_t status;
    umr_eng_mlx5_dev_t *dev = (umr_eng_mlx5_dev_t*)ndev;
    umr_eng_mlx5_mr_t *mr;
    int ibv_access;

    if ((addr == NULL) || (length == 0)) {
        ucs_error("%s: mr_reg: empty region (addr %p length %zu)",
                  dev->caps.name, addr, length);
        return UCS_ERR_INVALID_PARAM;
    }

    if (access & ~UMR_ENG_MLX5_ACCESS_MASK) {
        ucs_error("%s: mr_reg: access 0x%x has unsupported flags 0x%x",
                  dev->caps.name, access, access & ~UMR_ENG_MLX5_ACCESS_MASK);
        return UCS_ERR_INVALID_PARAM;
    }

    /* refusals of the memory (too long, not pinnable): the caller says
     * what they mean (an error, or a fallback) */
    if (length > dev->caps.max_mr_size) {
        ucs_debug("%s: mr_reg: length %zu exceeds max_mr_size %lu",
                  dev->caps.name, length, dev->caps.max_mr_size);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    mr = ucs_calloc(1, sizeof(*mr), "umr_eng_mlx5_mr");
    if (mr == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    /* engine access values are IBV_ACCESS_* on purpose (engine.h) */
    ibv_access = (int)access;
    mr->mr     = ibv_reg_mr(dev->pd, addr, length, ibv_access);
    if (mr->mr == NULL) {
        /* EFAULT: the kernel could not pin the range (ib_umem_get). The
         * caller logs it as its flags say (a fallback hides it) */
        status = (errno == ENOMEM) ? UCS_ERR_NO_MEMORY :
                 (errno == EFAULT) ? UCS_ERR_INVALID_ADDR : UCS_ERR_IO_ERROR;
        ucs_debug("%s: ibv_reg_mr(%p, %zu, access 0x%x) failed: %m",
                  dev->caps.name, addr, length, access);
        ucs_free(mr);
        return status;
    }

    mr->super.addr   = addr;
    mr->super.length = length;
    mr->super.lkey   = mr->mr->lkey;
    mr->super.rkey   = mr->mr->rkey;
    *mr_p            = &mr->super;
    return UCS_OK;
}

ucs_status_t umr_eng_mlx5_mr_dereg(umr_eng_dev_t *ndev, umr_eng_mr_t *umr)
{
    umr_eng_mlx5_dev_t *dev = (umr_eng_mlx5_dev_t*)ndev;
    umr_eng_mlx5_mr_t *mr   = ucs_derived_of(umr, umr_eng_mlx5_mr_t);
    int ret;

    ret = ibv_dereg_mr(mr->mr);
    if (ret) {
        ucs_error("%s: ibv_dereg_mr(lkey 0x%x) failed: %s", dev->caps.name,
                  umr->lkey, strerror(ret));
        return UCS_ERR_IO_ERROR;
    }

    ucs_free(mr);
    return UCS_OK;
}

static void umr_eng_mlx5_mkey_ring_destroy(umr_eng_mlx5_dev_t *dev,
                                           umr_eng_mlx5_mkey_t *mkey)
{
    unsigned i;
    int ret;

    for (i = 0; i < UMR_ENG_MLX5_MKEY_RING; ++i) {
        if (mkey->ring[i] == NULL) {
            continue;
        }
        ret = mlx5dv_destroy_mkey(mkey->ring[i]);
        if (ret) {
            ucs_warn("%s: mlx5dv_destroy_mkey(0x%x) failed: %s",
                     dev->caps.name, mkey->ring[i]->lkey, strerror(ret));
        }
        mkey->ring[i] = NULL;
    }
}

ucs_status_t umr_eng_mlx5_mkey_create(umr_eng_dev_t *ndev,
                                      uint32_t max_entries,
                                      umr_eng_mkey_t **mkey_p)
{
    umr_eng_mlx5_dev_t *dev = (umr_eng_mlx5_dev_t*)ndev;
    struct mlx5dv_mkey_init_attr attr;
    umr_eng_mlx5_mkey_t *mkey;
    ucs_status_t status;
    unsigned i;

    /* mlx5dv_mkey_init_attr.max_entries is 16 bits, and rdma-core rounds it
     * up to a multiple of 4 and writes that back into it (verbs.c
     * _mlx5dv_create_mkey): above 65532 the count written back wraps */
    if ((max_entries == 0) || (max_entries > UMR_ENG_MLX5_MAX_MKEY_ENTRIES)) {
        ucs_error("%s: mkey_create: max_entries %u out of range [1, %u]",
                  dev->caps.name, max_entries, UMR_ENG_MLX5_MAX_MKEY_ENTRIES);
        return UCS_ERR_INVALID_PARAM;
    }

    mkey = ucs_calloc(1, sizeof(*mkey), "umr_eng_mlx5_mkey");
    if (mkey == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    /* one key whose tag rotates, if the kernel lets the tag change (probed
     * at dev_open), else a ring */
    if (dev->update_tag) {
        memset(&attr, 0, sizeof(attr));
        attr.pd           = dev->pd;
        attr.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT |
                            MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG;
        attr.max_entries  = max_entries;
        mkey->ring[0]     = mlx5dv_create_mkey(&attr);
        if (mkey->ring[0] == NULL) {
            ucs_error("%s: mlx5dv_create_mkey(INDIRECT|UPDATE_TAG, "
                      "max_entries %u) failed: %m", dev->caps.name,
                      max_entries);
            status = (errno == ENOMEM) ? UCS_ERR_NO_MEMORY : UCS_ERR_IO_ERROR;
            ucs_free(mkey);
            return status;
        }
        mkey->update_tag        = 1;
        mkey->cur               = 0;
        mkey->super.lkey        = mkey->ring[0]->lkey;
        mkey->super.rkey        = mkey->ring[0]->rkey;
        /* the provider may round max_entries up and writes it back */
        mkey->super.max_entries = attr.max_entries;
        *mkey_p                 = &mkey->super;
        return UCS_OK;
    }

    for (i = 0; i < UMR_ENG_MLX5_MKEY_RING; ++i) {
        memset(&attr, 0, sizeof(attr));
        attr.pd           = dev->pd;
        attr.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT;
        attr.max_entries  = max_entries;
        mkey->ring[i]     = mlx5dv_create_mkey(&attr);
        if (mkey->ring[i] == NULL) {
            ucs_error("%s: mlx5dv_create_mkey(INDIRECT, max_entries %u) "
                      "failed: %m", dev->caps.name, max_entries);
            status = (errno == ENOMEM) ? UCS_ERR_NO_MEMORY :
                     (errno == EOPNOTSUPP) ? UCS_ERR_UNSUPPORTED :
                     UCS_ERR_IO_ERROR;
            goto err_destroy;
        }
    }

    mkey->cur               = 0;
    mkey->super.lkey        = mkey->ring[0]->lkey;
    mkey->super.rkey        = mkey->ring[0]->rkey;
    mkey->super.max_entries = max_entries;
    *mkey_p                 = &mkey->super;
    return UCS_OK;

err_destroy:
    umr_eng_mlx5_mkey_ring_destroy(dev, mkey);
    ucs_free(mkey);
    return status;
}

ucs_status_t umr_eng_mlx5_mkey_destroy(umr_eng_dev_t *ndev,
                                       umr_eng_mkey_t *umkey)
{
    umr_eng_mlx5_mkey_t *mkey = ucs_derived_of(umkey, umr_eng_mlx5_mkey_t);

    umr_eng_mlx5_mkey_ring_destroy((umr_eng_mlx5_dev_t*)ndev, mkey);
    ucs_free(mkey);
    return UCS_OK;
}
