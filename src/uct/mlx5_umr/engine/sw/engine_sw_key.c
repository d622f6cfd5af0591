/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr sw engine: the key table and key resolution.
 *
 * Local keys are read straight from our table; a peer's keys are read with
 * process_vm_readv and cached per QP. The cache is trusted only while the
 * peer's table generation is unchanged; otherwise each entry is re-read
 * once (seqlock generation compare) before it is used again.
 */
#include "umr_config.h"

#include "engine_sw.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/sys.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define UMR_ENG_SW_SEQLOCK_TRIES 1000

/* Peers read these with fixed offsets: their layout is the wire format. */
_Static_assert(sizeof(umr_eng_sw_kentry_t) == 64, "key entry size");
_Static_assert(sizeof(umr_eng_sw_table_hdr_t) == 64, "table header size");
_Static_assert(sizeof(umr_eng_sw_dev_addr_t) <= UMR_ENG_ADDR_MAX, "dev addr");
_Static_assert(sizeof(umr_eng_sw_qp_addr_t) <= UMR_ENG_ADDR_MAX, "qp addr");

static void *umr_eng_sw_map(size_t size)
{
    void *ptr;

    /* Reserved once: the table address travels in the device address and
     * must never move; pages are only touched when keys are used. */
    ptr = mmap(NULL, size, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return (ptr == MAP_FAILED) ? NULL : ptr;
}

ucs_status_t umr_eng_sw_table_init(umr_eng_sw_dev_t *dev, size_t max_keys)
{
    uint64_t cookie;

    dev->max_keys   = max_keys;
    dev->table_size = max_keys * sizeof(umr_eng_sw_kentry_t);
    dev->table      = umr_eng_sw_map(dev->table_size);
    if (dev->table == NULL) {
        ucs_error("sw engine: failed to reserve a key table of %zu keys: %m",
                  max_keys);
        goto err;
    }

    dev->objs = umr_eng_sw_map(max_keys * sizeof(*dev->objs));
    if (dev->objs == NULL) {
        ucs_error("sw engine: failed to reserve the object table: %m");
        goto err_unmap_table;
    }

    dev->free_q = umr_eng_sw_map(max_keys * sizeof(*dev->free_q));
    if (dev->free_q == NULL) {
        ucs_error("sw engine: failed to reserve the free key queue: %m");
        goto err_unmap_objs;
    }

    /* A peer compares the cookie on every operation, so a recycled pid or
     * a closed device is detected instead of read as a key table. */
    cookie = ucs_generate_uuid((uintptr_t)dev);

    dev->hdr            = (umr_eng_sw_table_hdr_t*)dev->table;
    dev->hdr->magic     = UMR_ENG_SW_MAGIC;
    dev->hdr->cookie    = cookie;
    dev->hdr->gen       = 1;
    dev->hdr->pid       = getpid();
    dev->hdr->max_keys  = max_keys;
    dev->free_head      = 1;    /* index 0 is the header: no key is 0 */
    dev->free_q_head    = 0;
    dev->free_count     = 0;
    return UCS_OK;

err_unmap_objs:
    munmap(dev->objs, max_keys * sizeof(*dev->objs));
err_unmap_table:
    munmap(dev->table, dev->table_size);
err:
    return UCS_ERR_NO_MEMORY;
}

void umr_eng_sw_table_cleanup(umr_eng_sw_dev_t *dev)
{
    /* Peers holding our address must see a dead table, not stale keys. */
    dev->hdr->magic = 0;
    munmap(dev->free_q, dev->max_keys * sizeof(*dev->free_q));
    munmap(dev->objs, dev->max_keys * sizeof(*dev->objs));
    munmap(dev->table, dev->table_size);
}

/*
 * Never-used indices go first, then freed ones in FIFO order, so a key
 * index is reused as late as possible: together with the tag rotation a
 * stale key fails instead of aliasing a new registration.
 */
static ucs_status_t umr_eng_sw_index_alloc(umr_eng_sw_dev_t *dev, void *obj,
                                           uint32_t *index_p)
{
    uint32_t index;

    if (dev->free_head < dev->max_keys) {
        index = dev->free_head++;
    } else if (dev->free_count > 0) {
        index            = dev->free_q[dev->free_q_head];
        dev->free_q_head = (dev->free_q_head + 1) % dev->max_keys;
        dev->free_count--;
    } else {
        ucs_debug("sw engine: key table full (%u keys)", dev->max_keys - 1);
        return UCS_ERR_NO_RESOURCE;
    }

    dev->objs[index] = obj;
    *index_p         = index;
    return UCS_OK;
}

void umr_eng_sw_index_free(umr_eng_sw_dev_t *dev, uint32_t index)
{
    umr_eng_sw_kentry_t *entry = umr_eng_sw_entry_begin(dev, index);

    entry->kind  = UMR_ENG_SW_KIND_FREE;
    entry->valid = 0;
    entry->tag++;
    umr_eng_sw_entry_end(dev, entry);

    dev->objs[index] = NULL;
    dev->free_q[(dev->free_q_head + dev->free_count++) % dev->max_keys] =
            index;
}

umr_eng_sw_kentry_t *umr_eng_sw_entry_begin(umr_eng_sw_dev_t *dev,
                                            uint32_t index)
{
    umr_eng_sw_kentry_t *entry = &dev->table[index];

    __atomic_store_n(&entry->gen, entry->gen + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    return entry;
}

void umr_eng_sw_entry_end(umr_eng_sw_dev_t *dev, umr_eng_sw_kentry_t *entry)
{
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&entry->gen, entry->gen + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&dev->hdr->gen, dev->hdr->gen + 1, __ATOMIC_RELEASE);
}

umr_eng_sw_kentry_t *umr_eng_sw_entry_new(umr_eng_sw_dev_t *dev, void *obj,
                                          umr_eng_sw_kind_t kind,
                                          uint32_t *index_p)
{
    umr_eng_sw_kentry_t *entry;

    if (umr_eng_sw_index_alloc(dev, obj, index_p) != UCS_OK) {
        return NULL;
    }

    entry        = umr_eng_sw_entry_begin(dev, *index_p);
    entry->kind  = kind;
    entry->tag++;
    entry->valid = 0;
    return entry;
}

void umr_eng_sw_space_init_local(umr_eng_sw_space_t *space,
                                 umr_eng_sw_dev_t *dev)
{
    memset(space, 0, sizeof(*space));
    space->is_local = 1;
    space->dev      = dev;
    space->pid      = getpid();
    space->table    = (uintptr_t)dev->table;
    space->max_keys = dev->max_keys;
    space->cookie   = dev->hdr->cookie;
}

void umr_eng_sw_space_init_remote(umr_eng_sw_space_t *space,
                                  const umr_eng_sw_dev_addr_t *addr)
{
    memset(space, 0, sizeof(*space));
    space->pid      = addr->pid;
    space->table    = addr->table;
    space->max_keys = addr->max_keys;
    space->cookie   = addr->cookie;
    space->epoch    = 1;
    kh_init_inplace(umr_eng_sw_kcache, &space->cache);
}

static void umr_eng_sw_space_flush(umr_eng_sw_space_t *space)
{
    umr_eng_sw_cslot_t *slot;

    kh_foreach_value(&space->cache, slot, {
        ucs_free(slot->descs);
        ucs_free(slot);
    });
    kh_clear(umr_eng_sw_kcache, &space->cache);
}

void umr_eng_sw_space_cleanup(umr_eng_sw_space_t *space)
{
    if (space->is_local || (space->table == 0)) {
        return;
    }

    umr_eng_sw_space_flush(space);
    kh_destroy_inplace(umr_eng_sw_kcache, &space->cache);
    space->table = 0;
}

/* Returns 0 or a negative errno; a short read is -EFAULT. */
int umr_eng_sw_space_read(const umr_eng_sw_space_t *space, uint64_t addr,
                          void *buf, size_t len)
{
    struct iovec liov = {.iov_base = buf, .iov_len = len};
    struct iovec riov = {.iov_base = (void*)(uintptr_t)addr, .iov_len = len};
    ssize_t ret;

    ret = process_vm_readv(space->pid, &liov, 1, &riov, 1, 0);
    if (ret < 0) {
        return -errno;
    }

    return (ret == (ssize_t)len) ? 0 : -EFAULT;
}

/* The peer process is gone, or the pid now belongs to someone else. */
static int umr_eng_sw_errno_is_gone(int err)
{
    return (err == -ESRCH) || (err == -EPERM);
}

umr_eng_wc_status_t umr_eng_sw_space_begin(umr_eng_sw_space_t *space,
                                           umr_eng_qp_t *qp, int *wait_p)
{
    uint32_t peer_index = UMR_ENG_SW_KEY_INDEX(qp->peer_qpn);
    umr_eng_sw_table_hdr_t hdr;
    umr_eng_sw_kentry_t qpe;
    struct iovec liov[2], riov[2];
    ssize_t ret;

    *wait_p = 0;
    if (space->is_local) {
        return UMR_ENG_WC_SUCCESS;
    }

    liov[0].iov_base = &hdr;
    liov[0].iov_len  = sizeof(hdr);
    liov[1].iov_base = &qpe;
    liov[1].iov_len  = sizeof(qpe);
    riov[0].iov_base = (void*)(uintptr_t)space->table;
    riov[0].iov_len  = sizeof(hdr);
    riov[1].iov_base = (void*)(uintptr_t)(space->table +
                                          peer_index * sizeof(qpe));
    riov[1].iov_len  = sizeof(qpe);

    ret = process_vm_readv(space->pid, liov, 2, riov, 2, 0);
    if (ret != (ssize_t)(sizeof(hdr) + sizeof(qpe))) {
        ucs_debug("sw engine: peer pid %d unreachable: %m", (int)space->pid);
        return UMR_ENG_WC_RETRY_EXC_ERR;
    }

    if ((hdr.magic != UMR_ENG_SW_MAGIC) || (hdr.cookie != space->cookie) ||
        (hdr.pid != (uint32_t)space->pid)) {
        ucs_debug("sw engine: peer pid %d no longer owns the device",
                  (int)space->pid);
        return UMR_ENG_WC_RETRY_EXC_ERR;
    }

    if ((qpe.kind != UMR_ENG_SW_KIND_QP) ||
        (qpe.tag != UMR_ENG_SW_KEY_TAG(qp->peer_qpn))) {
        ucs_debug("sw engine: peer qp 0x%x was destroyed", qp->peer_qpn);
        return UMR_ENG_WC_RETRY_EXC_ERR;
    }

    if (!qpe.valid) {
        /* Like a NIC retrying until the peer QP reaches RTR. */
        *wait_p = 1;
        return UMR_ENG_WC_GENERAL_ERR;
    }

    if ((qpe.peer_cookie != qp->dev->hdr->cookie) ||
        (qpe.peer_qpn != qp->qpn)) {
        ucs_debug("sw engine: peer qp 0x%x is connected to another qp",
                  qp->peer_qpn);
        return UMR_ENG_WC_RETRY_EXC_ERR;
    }

    if (hdr.gen != space->seen_gen) {
        space->seen_gen = hdr.gen;
        space->epoch++;
        if (kh_size(&space->cache) > UMR_ENG_SW_CACHE_MAX) {
            umr_eng_sw_space_flush(space);
        }
    }

    return UMR_ENG_WC_SUCCESS;
}

static umr_eng_wc_status_t umr_eng_sw_bad_key(const umr_eng_sw_space_t *space)
{
    return space->is_local ? UMR_ENG_WC_LOC_PROT_ERR :
                             UMR_ENG_WC_REM_ACCESS_ERR;
}

static umr_eng_wc_status_t
umr_eng_sw_read_error(const umr_eng_sw_space_t *space, int err)
{
    return umr_eng_sw_errno_is_gone(err) ? UMR_ENG_WC_RETRY_EXC_ERR :
                                           umr_eng_sw_bad_key(space);
}

/* Read a consistent (even generation) copy of a peer's entry. */
static int umr_eng_sw_read_entry(umr_eng_sw_space_t *space, uint32_t index,
                                 umr_eng_sw_kentry_t *entry)
{
    uint64_t addr = space->table + (uint64_t)index * sizeof(*entry);
    int tries, err;

    for (tries = 0; tries < UMR_ENG_SW_SEQLOCK_TRIES; ++tries) {
        err = umr_eng_sw_space_read(space, addr, entry, sizeof(*entry));
        if (err != 0) {
            return err;
        }

        if (!(entry->gen & 1)) {
            return 0;
        }
    }

    return -EAGAIN;
}

/* Peer memory is not trusted: refuse entries a real device could not hold. */
static int umr_eng_sw_entry_is_sane(const umr_eng_sw_kentry_t *entry)
{
    if (entry->kind != UMR_ENG_SW_KIND_INDIRECT) {
        return 1;
    }

    return (entry->num_entries > 0) &&
           (entry->num_entries <= UMR_ENG_SW_MAX_MKEY_ENTRIES) &&
           ((entry->layout == UMR_ENG_SW_LAYOUT_LIST) ||
            ((entry->layout == UMR_ENG_SW_LAYOUT_INTERLEAVED) &&
             (entry->stride_data > 0)));
}

/* The walk in key_fill relies on counts > 0 that add up to the entry. */
static int umr_eng_sw_descs_are_sane(const umr_eng_sw_kentry_t *entry,
                                     const umr_eng_sw_desc_t *descs)
{
    uint64_t sum = 0;
    uint32_t i;

    for (i = 0; i < entry->num_entries; ++i) {
        if (descs[i].bytes_count == 0) {
            return 0;
        }
        sum += descs[i].bytes_count;
    }

    if (entry->layout == UMR_ENG_SW_LAYOUT_LIST) {
        return sum == entry->length;
    }

    return (sum == entry->stride_data) &&
           (entry->length == entry->repeat * entry->stride_data);
}

static umr_eng_wc_status_t
umr_eng_sw_remote_lookup(umr_eng_sw_space_t *space, uint32_t index,
                         const umr_eng_sw_kentry_t **entry_p,
                         const umr_eng_sw_desc_t **descs_p)
{
    umr_eng_sw_cslot_t *slot;
    umr_eng_sw_kentry_t entry, check;
    umr_eng_sw_desc_t *descs;
    khiter_t iter;
    size_t size;
    int tries, err, ret;

    iter = kh_get(umr_eng_sw_kcache, &space->cache, index);
    if (iter != kh_end(&space->cache)) {
        slot = kh_val(&space->cache, iter);
    } else {
        slot = ucs_calloc(1, sizeof(*slot), "umr_eng_sw key cache");
        if (slot == NULL) {
            return UMR_ENG_WC_GENERAL_ERR;
        }

        iter = kh_put(umr_eng_sw_kcache, &space->cache, index, &ret);
        if (ret < 0) {
            ucs_free(slot);
            return UMR_ENG_WC_GENERAL_ERR;
        }

        kh_val(&space->cache, iter) = slot;
    }

    if (slot->epoch == space->epoch) {
        goto out;
    }

    for (tries = 0; tries < UMR_ENG_SW_SEQLOCK_TRIES; ++tries) {
        err = umr_eng_sw_read_entry(space, index, &entry);
        if (err != 0) {
            return umr_eng_sw_read_error(space, err);
        }

        if ((slot->epoch != 0) && (entry.gen == slot->entry.gen)) {
            break; /* unchanged: the cached descriptors still hold */
        }

        if (!umr_eng_sw_entry_is_sane(&entry)) {
            return umr_eng_sw_bad_key(space);
        }

        if ((entry.kind != UMR_ENG_SW_KIND_INDIRECT) || !entry.valid) {
            slot->entry = entry;
            break;
        }

        if (entry.num_entries > slot->descs_cap) {
            descs = ucs_realloc(slot->descs,
                                entry.num_entries * sizeof(*descs),
                                "umr_eng_sw cached descs");
            if (descs == NULL) {
                return UMR_ENG_WC_GENERAL_ERR;
            }

            slot->descs     = descs;
            slot->descs_cap = entry.num_entries;
        }

        size = entry.num_entries * sizeof(*slot->descs);
        err  = umr_eng_sw_space_read(space, entry.addr, slot->descs, size);
        if (err != 0) {
            return umr_eng_sw_read_error(space, err);
        }

        if (!umr_eng_sw_descs_are_sane(&entry, slot->descs)) {
            slot->epoch = 0;
            return umr_eng_sw_bad_key(space);
        }

        /* seqlock: the descriptors belong to this entry only if it did
         * not change while they were read */
        err = umr_eng_sw_read_entry(space, index, &check);
        if (err != 0) {
            return umr_eng_sw_read_error(space, err);
        }

        if (check.gen == entry.gen) {
            slot->entry = entry;
            break;
        }
    }

    if (tries == UMR_ENG_SW_SEQLOCK_TRIES) {
        return umr_eng_sw_bad_key(space);
    }

    slot->epoch = space->epoch;
out:
    *entry_p = &slot->entry;
    *descs_p = slot->descs;
    return UMR_ENG_WC_SUCCESS;
}

static UCS_F_ALWAYS_INLINE umr_eng_wc_status_t
umr_eng_sw_lookup(umr_eng_sw_space_t *space, uint32_t index,
                  const umr_eng_sw_kentry_t **entry_p,
                  const umr_eng_sw_desc_t **descs_p)
{
    const umr_eng_sw_kentry_t *entry;

    if ((index == 0) || (index >= space->max_keys)) {
        return umr_eng_sw_bad_key(space);
    }

    if (!space->is_local) {
        return umr_eng_sw_remote_lookup(space, index, entry_p, descs_p);
    }

    entry    = &space->dev->table[index];
    *entry_p = entry;
    *descs_p = (entry->kind == UMR_ENG_SW_KIND_INDIRECT) ?
               (const umr_eng_sw_desc_t*)(uintptr_t)entry->addr : NULL;
    return UMR_ENG_WC_SUCCESS;
}

/* Returns the bytes appended: less than len when the list is full. */
static UCS_F_ALWAYS_INLINE uint64_t
umr_eng_sw_iovs_append(umr_eng_sw_iovs_t *iovs, uint64_t addr, uint64_t len)
{
    struct iovec *last;

    if (len > (iovs->max_bytes - iovs->bytes)) {
        len = iovs->max_bytes - iovs->bytes;
    }

    if (len == 0) {
        return 0;
    }

    last = (iovs->count > 0) ? &iovs->iov[iovs->count - 1] : NULL;
    if ((last != NULL) &&
        ((uintptr_t)last->iov_base + last->iov_len == addr)) {
        last->iov_len += len;
    } else if (iovs->count < iovs->max) {
        iovs->iov[iovs->count].iov_base = (void*)(uintptr_t)addr;
        iovs->iov[iovs->count].iov_len  = len;
        iovs->count++;
    } else {
        return 0;
    }

    iovs->bytes += len;
    return len;
}

static umr_eng_wc_status_t
umr_eng_sw_mr_fill(const umr_eng_sw_space_t *space,
                   const umr_eng_sw_kentry_t *entry, uint32_t key,
                   uint64_t addr, uint64_t len, umr_eng_sw_iovs_t *iovs)
{
    if ((addr < entry->addr) || ((addr - entry->addr) > entry->length) ||
        (len > (entry->length - (addr - entry->addr)))) {
        ucs_debug("sw engine: [0x%" PRIx64 ", +%" PRIu64 ") outside mr "
                  "key 0x%x", addr, len, key);
        return umr_eng_sw_bad_key(space);
    }

    umr_eng_sw_iovs_append(iovs, addr, len);
    return UMR_ENG_WC_SUCCESS;
}

/* The entry of `key` if it is a usable MR, else NULL (take the slow path,
 * which reports the error). Valid for the rest of this operation. */
static const umr_eng_sw_kentry_t *
umr_eng_sw_mr_memo(umr_eng_sw_space_t *space, uint32_t key, unsigned access)
{
    const umr_eng_sw_kentry_t *entry;
    const umr_eng_sw_desc_t *descs;

    if ((umr_eng_sw_lookup(space, UMR_ENG_SW_KEY_INDEX(key), &entry,
                           &descs) != UMR_ENG_WC_SUCCESS) ||
        (entry->kind != UMR_ENG_SW_KIND_MR) ||
        (entry->tag != UMR_ENG_SW_KEY_TAG(key)) ||
        ((entry->access & access) != access)) {
        return NULL;
    }

    return entry;
}

static umr_eng_wc_status_t
umr_eng_sw_key_fill_rec(umr_eng_sw_space_t *space, uint32_t key,
                        uint64_t addr, uint64_t len, unsigned access,
                        umr_eng_sw_iovs_t *iovs, unsigned depth)
{
    const umr_eng_sw_kentry_t *entry, *mr = NULL;
    const umr_eng_sw_desc_t *descs, *desc;
    umr_eng_wc_status_t status;
    uint64_t r, rem, chunk, child, step, done;
    uint32_t i, mr_key = 0;

    status = umr_eng_sw_lookup(space, UMR_ENG_SW_KEY_INDEX(key), &entry,
                               &descs);
    if (status != UMR_ENG_WC_SUCCESS) {
        return status;
    }

    /* depth counts indirect keys (cycles end here too), not the MR below */
    if ((entry->kind == UMR_ENG_SW_KIND_INDIRECT) &&
        (depth > UMR_ENG_SW_MAX_DEPTH)) {
        ucs_debug("sw engine: key 0x%x nested deeper than %d", key,
                  UMR_ENG_SW_MAX_DEPTH);
        return umr_eng_sw_bad_key(space);
    }

    if (((entry->kind != UMR_ENG_SW_KIND_MR) &&
         (entry->kind != UMR_ENG_SW_KIND_INDIRECT)) ||
        (entry->tag != UMR_ENG_SW_KEY_TAG(key)) ||
        ((entry->kind == UMR_ENG_SW_KIND_INDIRECT) && !entry->valid) ||
        ((entry->access & access) != access)) {
        ucs_debug("sw engine: key 0x%x invalid, stale or without access 0x%x",
                  key, access);
        return umr_eng_sw_bad_key(space);
    }

    if (entry->kind == UMR_ENG_SW_KIND_MR) {
        return umr_eng_sw_mr_fill(space, entry, key, addr, len, iovs);
    }

    if ((addr > entry->length) || (len > (entry->length - addr))) {
        ucs_debug("sw engine: [%" PRIu64 ", +%" PRIu64 ") outside mkey 0x%x "
                  "of %" PRIu64 " bytes", addr, len, key, entry->length);
        return umr_eng_sw_bad_key(space);
    }

    if (len == 0) {
        return UMR_ENG_WC_SUCCESS;
    }

    if (entry->layout == UMR_ENG_SW_LAYOUT_INTERLEAVED) {
        r   = addr / entry->stride_data;
        rem = addr % entry->stride_data;
    } else {
        r   = 0;
        rem = addr;
    }

    for (i = 0; rem >= descs[i].bytes_count; ++i) {
        rem -= descs[i].bytes_count;
        if (i + 1 == entry->num_entries) {
            return umr_eng_sw_bad_key(space); /* inconsistent peer entry */
        }
    }

    for (;;) {
        desc  = &descs[i];
        chunk = ucs_min(desc->bytes_count - rem, len);
        step  = r * ((uint64_t)desc->bytes_count + desc->bytes_skip) + rem;
        if (__builtin_add_overflow(desc->addr, step, &child)) {
            return umr_eng_sw_bad_key(space);
        }

        /* fast path: blocks of one MR, the common leaf, skip the lookup */
        if ((mr == NULL) || (desc->lkey != mr_key)) {
            mr = umr_eng_sw_mr_memo(space, desc->lkey, access);
            mr_key = desc->lkey;
        }

        done   = iovs->bytes;
        status = (mr != NULL) ?
                 umr_eng_sw_mr_fill(space, mr, mr_key, child, chunk, iovs) :
                 umr_eng_sw_key_fill_rec(space, desc->lkey, child, chunk,
                                         access, iovs, depth + 1);
        if ((status != UMR_ENG_WC_SUCCESS) || ((iovs->bytes - done) < chunk)) {
            return status;
        }

        len -= chunk;
        if (len == 0) {
            return UMR_ENG_WC_SUCCESS;
        }

        rem = 0;
        if (++i == entry->num_entries) {
            i = 0;
            ++r;
        }
    }
}

umr_eng_wc_status_t umr_eng_sw_key_fill(umr_eng_sw_space_t *space,
                                        uint32_t key, uint64_t addr,
                                        uint64_t len, unsigned access,
                                        umr_eng_sw_iovs_t *iovs)
{
    return umr_eng_sw_key_fill_rec(space, key, addr, len, access, iovs, 1);
}
