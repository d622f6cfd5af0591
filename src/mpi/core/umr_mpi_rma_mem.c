/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: a target's window memory and the keys given over it
 * (umr_mpi_rma_mem.h).
 */
#include "umr_mpi_rma_mem.h"
#include "umr_mpi.h"

#include <ucs/debug/assert.h>
#include <ucs/debug/memtrack_int.h>

#include <stdlib.h>
#include <string.h>

static void umr_mpi_rma_mem_release(umr_mpi_region_t **regions)
{
    int i;

    for (i = 0; i < UMR_MPI_MAX_RAILS; ++i) {
        if (regions[i] != NULL) {
            umr_mpi_region_put(regions[i]);
            regions[i] = NULL;
        }
    }
}

/* [base, base + len) registered on every rail into `regions` (all NULL):
 * 0, or -1 with none kept. */
static int umr_mpi_rma_mem_hold(void *base, size_t len,
                                umr_mpi_region_t **regions)
{
    int i;

    for (i = 0; i < umr_mpi_rails.nrails; ++i) {
        if (umr_mpi_region_get(&umr_mpi_rails.rails[i], base, len,
                               PROT_READ | PROT_WRITE, &regions[i],
                               NULL) != UCS_OK) {
            regions[i] = NULL;
            umr_mpi_rma_mem_release(regions);
            return -1;
        }
    }
    return 0;
}

int umr_mpi_rma_mem_open(umr_mpi_rma_mem_t *m, void *base, size_t len,
                         ptrdiff_t disp_unit, int dynamic, int hold)
{
    memset(m, 0, sizeof(*m));
    ucs_array_init_dynamic(&m->att);
    ucs_array_init_dynamic(&m->tkeys);
    m->base      = base;
    m->len       = len;
    m->disp_unit = disp_unit;
    m->dynamic   = dynamic;
    m->hold      = hold;
    if (hold && !dynamic && (len > 0)) {
        return umr_mpi_rma_mem_hold(base, len, m->regions);
    }
    return 0;
}

void umr_mpi_rma_mem_close(umr_mpi_rma_mem_t *m)
{
    umr_mpi_rma_tkey_t *tkey;
    umr_mpi_rma_att_t *att;

    /* the window is gone: its layout keys give their keys back now */
    ucs_array_for_each(tkey, &m->tkeys) {
        umr_mpi_lkey_drop(tkey->region, tkey->lkey);
    }
    ucs_array_for_each(att, &m->att) {
        umr_mpi_rma_mem_release(att->regions);
    }
    umr_mpi_rma_mem_release(m->regions);
    ucs_array_cleanup_dynamic(&m->tkeys);
    ucs_array_cleanup_dynamic(&m->att);
    ucs_array_init_dynamic(&m->tkeys);
    ucs_array_init_dynamic(&m->att);
}

int umr_mpi_rma_mem_attach(umr_mpi_rma_mem_t *m, void *base, size_t len)
{
    umr_mpi_rma_att_t *att;

    if (ucs_array_append(umr_mpi_rma_atts, &m->att) != UCS_OK) {
        return -1;
    }
    att = ucs_array_last(&m->att);
    memset(att, 0, sizeof(*att));
    if (m->hold && (umr_mpi_rma_mem_hold(base, len, att->regions) != 0)) {
        ucs_array_set_length(&m->att, ucs_array_length(&m->att) - 1);
        return -1;
    }
    att->base = base;
    att->len  = len;
    return 0;
}

const umr_mpi_rma_att_t *umr_mpi_rma_mem_attached(const umr_mpi_rma_mem_t *m,
                                                  const void *base)
{
    umr_mpi_rma_att_t *att;

    ucs_array_for_each(att, &m->att) {
        if (att->base == base) {
            return att;
        }
    }
    return NULL;
}

const umr_mpi_rma_att_t *umr_mpi_rma_mem_find(const umr_mpi_rma_mem_t *m,
                                              uintptr_t lo, uintptr_t hi)
{
    umr_mpi_rma_att_t *att;

    ucs_array_for_each(att, &m->att) {
        if ((lo >= (uintptr_t)att->base) &&
            (hi <= (uintptr_t)att->base + att->len)) {
            return att;
        }
    }
    return NULL;
}

/* Remove element `i` of `_array` (the last one takes its place). */
#define UMR_MPI_RMA_MEM_REMOVE(_array, _i) \
    do { \
        ucs_array_elem(_array, _i) = *ucs_array_last(_array); \
        ucs_array_set_length(_array, ucs_array_length(_array) - 1); \
    } while (0)

void umr_mpi_rma_mem_detach(umr_mpi_rma_mem_t *m, const void *base)
{
    umr_mpi_rma_att_t *att = (umr_mpi_rma_att_t*)umr_mpi_rma_mem_attached(
                                                    m, base);
    umr_mpi_rma_tkey_t *tkey;
    size_t i;

    if (att == NULL) {
        return;
    }
    /* no new key over it: the requests already taken were answered */
    for (i = ucs_array_length(&m->tkeys); i-- > 0;) {
        tkey = &ucs_array_elem(&m->tkeys, i);
        if (tkey->att == base) {
            umr_mpi_lkey_drop(tkey->region, tkey->lkey);
            UMR_MPI_RMA_MEM_REMOVE(&m->tkeys, i);
        }
    }
    umr_mpi_rma_mem_release(att->regions);
    UMR_MPI_RMA_MEM_REMOVE(&m->att, att - ucs_array_begin(&m->att));
}

/* The bytes `count` elements of `layout` touch at displacement `disp` lie
 * in the window (dynamic: in one attached region, the displacement being an
 * address); *addr_p: where the first element starts, *att_p: that region
 * (NULL: a created window). */
static int umr_mpi_rma_mem_in(const umr_mpi_rma_mem_t *m, int64_t disp,
                              const umr_layout_t *layout, size_t count,
                              char **addr_p, char **att_p)
{
    const umr_mpi_rma_att_t *att;
    ptrdiff_t off, rep, lo, hi;

    if ((count == 0) || (count >= ((size_t)1 << 40)) ||
        __builtin_mul_overflow((ptrdiff_t)disp, m->disp_unit, &off) ||
        __builtin_mul_overflow((ptrdiff_t)(count - 1),
                               umr_layout_extent(layout), &rep) ||
        __builtin_add_overflow(umr_layout_true_lb(layout),
                               (rep < 0) ? rep : 0, &lo) ||
        __builtin_add_overflow(umr_layout_true_ub(layout),
                               (rep > 0) ? rep : 0, &hi) || (hi <= lo)) {
        return 0;
    }
    if (m->dynamic) {
        /* addresses: no wrap-around, in one attached region */
        if (((lo < 0) && ((uintptr_t)off < (uintptr_t)-lo)) ||
            ((uintptr_t)off + (uintptr_t)hi < (uintptr_t)off)) {
            return 0;
        }
        att = umr_mpi_rma_mem_find(m, (uintptr_t)off + (uintptr_t)lo,
                                   (uintptr_t)off + (uintptr_t)hi);
        if (att == NULL) {
            return 0;
        }
        *addr_p = (char*)(uintptr_t)off;
        *att_p  = att->base;
        return 1;
    }
    if (__builtin_add_overflow(off, lo, &lo) ||
        __builtin_add_overflow(off, hi, &hi)) {
        return 0;
    }
    *addr_p = m->base + off;
    *att_p  = NULL;
    return (lo >= 0) && (hi <= (ptrdiff_t)m->len);
}

umr_mpi_peer_t *umr_mpi_rma_mem_origin(int world, const void *addr,
                                       size_t alen)
{
    umr_mpi_peer_t *peer = umr_mpi_peer_get(world);

    if ((peer == NULL) ||
        ((alen > 0) && (umr_mpi_peer_handshake(peer, addr, alen) < 0))) {
        return NULL;
    }
    umr_mpi_peer_pin(peer);
    return peer;
}

int umr_mpi_rma_mem_key(umr_mpi_rma_mem_t *m, umr_mpi_peer_t *peer,
                        int64_t disp, umr_layout_t *layout,
                        size_t count, int fail, uint8_t *rkey, char **addr_p,
                        char **att_p)
{
    umr_mpi_rma_tkey_t *tkey;
    umr_mpi_dtype_t t;
    const char *why = NULL;

    if (!umr_mpi_rma_mem_in(m, disp, layout, count, addr_p, att_p)) {
        return UMR_MPI_RMA_KANS_OUT_OF_WINDOW;
    }
    if (ucs_array_append(umr_mpi_rma_tkeys, &m->tkeys) != UCS_OK) {
        return UMR_MPI_RMA_KANS_NO_KEY;
    }
    tkey = ucs_array_last(&m->tkeys);
    umr_mpi_dtype_of_layout(&t, layout);
    if (fail ||
        (umr_mpi_lkey_acquire(peer->rail, *addr_p, &t, count,
                              PROT_READ | PROT_WRITE, &tkey->region,
                              &tkey->lkey, &why) != UCS_OK)) {
        UMR_MPI_RMA_VERBOSE(10, "no layout key over the window: %s",
                            (why != NULL) ? why : "test fault");
        ucs_array_set_length(&m->tkeys, ucs_array_length(&m->tkeys) - 1);
        return UMR_MPI_RMA_KANS_NO_KEY;
    }
    tkey->att = *att_p;
    memcpy(rkey, tkey->lkey->rkey, peer->rail->rkey_size);
    return UMR_MPI_RMA_KANS_OK;
}
