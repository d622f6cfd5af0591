/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr sw engine: memory regions and indirect keys (entries of the key
 * table, engine_sw_key.c).
 */
#include "umr_config.h"

#include "engine_sw.h"
#include "umr_ucs_compat.h"  /* ucs_align_down */

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/sys.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

/*
 * A NIC pins every page of a memory region at registration and refuses one
 * it cannot access. Do the same: read one byte of every page of the range
 * (cross-memory attach on ourselves never faults), a batch of pages a call.
 * The caller says what a refusal means (an error, or a fallback).
 */
static ucs_status_t umr_eng_sw_mr_probe(void *addr, size_t length)
{
    enum { BATCH = 256 };
    size_t page = ucs_get_page_size();
    uintptr_t start = (uintptr_t)addr, end = start + length;
    uintptr_t p     = start;
    struct iovec riov[BATCH], liov;
    char scratch[BATCH];
    unsigned i, n;
    ssize_t ret;

    liov.iov_base = scratch;
    while (p < end) {
        for (n = 0; (n < BATCH) && (p < end); ++n) {
            riov[n].iov_base = (void*)p;
            riov[n].iov_len  = 1;
            p                = ucs_align_down(p, page) + page;
        }

        liov.iov_len = n;
        ret          = process_vm_readv(getpid(), &liov, 1, riov, n, 0);
        if (ret != (ssize_t)n) {
            i = (ret > 0) ? (unsigned)ret : 0;
            ucs_debug("sw engine: mr_reg: [%p, %p) is not readable: the page "
                      "at %p is not accessible (%s)", addr,
                      UCS_PTR_BYTE_OFFSET(addr, length),
                      (void*)ucs_align_down((uintptr_t)riov[i].iov_base, page),
                      (ret < 0) ? strerror(errno) : "short read");
            return UCS_ERR_INVALID_ADDR;
        }
    }

    return UCS_OK;
}

/*
 * Write access pins the pages for writing (kernel ib_umem_get: FOLL_WRITE
 * when ib_access_writable), which the kernel refuses where the process may
 * not write (a PROT_READ mapping, an mprotect'ed range): EFAULT. Read
 * access pins any readable page.
 */
static ucs_status_t umr_eng_sw_mr_probe_write(void *addr, size_t length,
                                              unsigned access)
{
    uintptr_t start = (uintptr_t)addr;

    if (!(access & (UMR_ENG_ACCESS_LOCAL_WRITE | UMR_ENG_ACCESS_REMOTE_WRITE |
                    UMR_ENG_ACCESS_REMOTE_ATOMIC)) ||
        (ucs_get_mem_prot(start, start + length) & PROT_WRITE)) {
        return UCS_OK;
    }

    ucs_debug("sw engine: mr_reg: [%p, %p) is not writable: write access "
              "0x%x refused (register it for remote reads only)", addr,
              UCS_PTR_BYTE_OFFSET(addr, length), access);
    return UCS_ERR_INVALID_ADDR;
}

/* A zeroed object of `size` bytes (a memory region, an mkey: `kind`) in
 * the key table of dev at *index_p, until umr_eng_sw_key_obj_free; its
 * entry is begun (*entry_p: the caller fills and ends it). NULL: no memory
 * or no free index (*status_p). */
static void *umr_eng_sw_key_obj_new(umr_eng_sw_dev_t *dev, size_t size,
                                    umr_eng_sw_kind_t kind, uint32_t *index_p,
                                    umr_eng_sw_kentry_t **entry_p,
                                    ucs_status_t *status_p)
{
    void *obj = ucs_calloc(1, size, "umr_eng_sw key object");

    if (obj == NULL) {
        *status_p = UCS_ERR_NO_MEMORY;
        return NULL;
    }

    *entry_p = umr_eng_sw_entry_new(dev, obj, kind, index_p);
    if (*entry_p == NULL) {
        ucs_free(obj);
        *status_p = UCS_ERR_NO_RESOURCE;
        return NULL;
    }

    dev->num_objs++;
    return obj;
}

ucs_status_t umr_eng_sw_mr_reg(umr_eng_dev_t *edev, void *addr,
                                      size_t length, unsigned access,
                                      umr_eng_mr_t **mr_p)
{
    umr_eng_sw_dev_t *dev = (umr_eng_sw_dev_t*)edev;
    umr_eng_sw_kentry_t *entry;
    umr_eng_sw_mr_t *mr;
    ucs_status_t status;
    uint32_t index;
    uintptr_t end;

    if ((dev == NULL) || (mr_p == NULL)) {
        return UCS_ERR_INVALID_PARAM;
    }

    if ((addr == NULL) || (length == 0) ||
        __builtin_add_overflow((uintptr_t)addr, length, &end)) {
        ucs_error("sw engine: mr_reg: bad range addr %p length %zu", addr,
                  length);
        return UCS_ERR_INVALID_PARAM;
    }

    /* verbs rules: known flags only; remote write/atomic need local write */
    if ((access & ~UMR_ENG_SW_ACCESS_ALL) ||
        ((access & (UMR_ENG_ACCESS_REMOTE_WRITE |
                    UMR_ENG_ACCESS_REMOTE_ATOMIC)) &&
         !(access & UMR_ENG_ACCESS_LOCAL_WRITE))) {
        ucs_error("sw engine: mr_reg: invalid access flags 0x%x", access);
        return UCS_ERR_INVALID_PARAM;
    }

    status = umr_eng_sw_mr_probe(addr, length);
    if (status == UCS_OK) {
        status = umr_eng_sw_mr_probe_write(addr, length, access);
    }
    if (status != UCS_OK) {
        return status;
    }

    mr = umr_eng_sw_key_obj_new(dev, sizeof(*mr), UMR_ENG_SW_KIND_MR, &index,
                                &entry, &status);
    if (mr == NULL) {
        return status;
    }

    entry->valid   = 1;
    entry->access  = access;
    entry->addr    = (uintptr_t)addr;
    entry->length  = length;
    umr_eng_sw_entry_end(dev, entry);

    mr->dev          = dev;
    mr->super.addr   = addr;
    mr->super.length = length;
    mr->super.lkey   = UMR_ENG_SW_KEY(index, entry->tag);
    mr->super.rkey   = mr->super.lkey;
    *mr_p = &mr->super;
    return UCS_OK;
}

/* The object behind `lkey` (a memory region, an mkey: `kind`) leaves the
 * key table of edev and is freed; `func` names the caller in the log. */
static ucs_status_t umr_eng_sw_key_obj_free(umr_eng_dev_t *edev, void *obj,
                                            uint32_t lkey, const char *func,
                                            const char *kind)
{
    umr_eng_sw_dev_t *dev = (umr_eng_sw_dev_t*)edev;

    if (!umr_eng_sw_owns(dev, lkey, obj)) {
        ucs_error("sw engine: %s: %p is not %s of %p", func, obj, kind, dev);
        return UCS_ERR_INVALID_PARAM;
    }

    umr_eng_sw_index_free(dev, UMR_ENG_SW_KEY_INDEX(lkey));
    dev->num_objs--;
    ucs_free(obj);
    return UCS_OK;
}

ucs_status_t umr_eng_sw_mr_dereg(umr_eng_dev_t *edev,
                                        umr_eng_mr_t *emr)
{
    return umr_eng_sw_key_obj_free(edev, emr, (emr == NULL) ? 0 : emr->lkey,
                                   "mr_dereg", "a memory region");
}

ucs_status_t umr_eng_sw_mkey_create(umr_eng_dev_t *edev,
                                           uint32_t max_entries,
                                           umr_eng_mkey_t **mkey_p)
{
    umr_eng_sw_dev_t *dev = (umr_eng_sw_dev_t*)edev;
    umr_eng_sw_kentry_t *entry;
    umr_eng_sw_mkey_t *mkey;
    ucs_status_t status;
    uint32_t index;

    if ((dev == NULL) || (mkey_p == NULL) || (max_entries == 0)) {
        ucs_error("sw engine: mkey_create: invalid max_entries %u",
                  max_entries);
        return UCS_ERR_INVALID_PARAM;
    }

    if (max_entries > UMR_ENG_SW_MAX_MKEY_ENTRIES) {
        ucs_error("sw engine: mkey_create: max_entries %u > %u", max_entries,
                  UMR_ENG_SW_MAX_MKEY_ENTRIES);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    mkey = umr_eng_sw_key_obj_new(dev, sizeof(*mkey) + max_entries *
                                  sizeof(*mkey->descs),
                                  UMR_ENG_SW_KIND_INDIRECT, &index, &entry,
                                  &status);
    if (mkey == NULL) {
        return status;
    }

    /* Created free, like an mlx5 UMR mkey: unusable until a UMR. */
    entry->access      = 0;
    entry->num_entries = 0;
    entry->addr        = (uintptr_t)mkey->descs;
    entry->length      = 0;
    umr_eng_sw_entry_end(dev, entry);

    mkey->dev               = dev;
    mkey->index             = index;
    mkey->super.lkey        = UMR_ENG_SW_KEY(index, entry->tag);
    mkey->super.rkey        = mkey->super.lkey;
    mkey->super.max_entries = max_entries;
    *mkey_p = &mkey->super;
    return UCS_OK;
}

ucs_status_t umr_eng_sw_mkey_destroy(umr_eng_dev_t *edev,
                                            umr_eng_mkey_t *emkey)
{
    return umr_eng_sw_key_obj_free(edev, emkey,
                                   (emkey == NULL) ? 0 : emkey->lkey,
                                   "mkey_destroy", "an mkey");
}
