/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: a target's window memory, for any binding's key
 * protocol (umr_mpi_rma.h, and osc/umr's): where keys may point (a created
 * window: [base, base + len), displacements in disp_unit; a dynamic one:
 * the regions attached, displacements are addresses) and the layout keys
 * given over it, kept until the memory is detached or the window freed.
 * `hold`: the memory stays registered on every rail while it is the
 * window's (created: from open, dynamic: from each attach), so that the
 * keys over it share one registration.
 */
#ifndef UMR_MPI_RMA_MEM_H_
#define UMR_MPI_RMA_MEM_H_

#include "umr_mpi_keys.h"
#include "umr_mpi_peer.h"
#include "umr_mpi_rail.h"
#include "umr_mpi_rma_wire.h"

#include <ucs/datastruct/array.inl>

#ifdef __cplusplus
extern "C" {
#endif

/* A layout key given to an origin. */
typedef struct umr_mpi_rma_tkey {
    umr_mpi_region_t *region;
    umr_mpi_lkey_t   *lkey;
    char             *att;          /* dynamic: its attached region */
} umr_mpi_rma_tkey_t;

/* Dynamic windows: memory attached here. */
typedef struct umr_mpi_rma_att {
    char             *base;
    size_t           len;
    umr_mpi_region_t *regions[UMR_MPI_MAX_RAILS];   /* held (`hold`) */
} umr_mpi_rma_att_t;

UCS_ARRAY_DEFINE_INLINE(umr_mpi_rma_tkeys, size_t, umr_mpi_rma_tkey_t)
UCS_ARRAY_DEFINE_INLINE(umr_mpi_rma_atts, size_t, umr_mpi_rma_att_t)

typedef struct umr_mpi_rma_mem {
    char               *base;
    size_t             len;
    ptrdiff_t          disp_unit;
    int                dynamic;
    int                hold;
    umr_mpi_region_t   *regions[UMR_MPI_MAX_RAILS];  /* created, held */
    ucs_array_t(umr_mpi_rma_atts)  att;     /* dynamic: attached */
    ucs_array_t(umr_mpi_rma_tkeys) tkeys;
} umr_mpi_rma_mem_t;

/* A window's memory here (`dynamic`: none yet); 0, or -1 when `hold` and
 * it does not register (nothing kept). */
int  umr_mpi_rma_mem_open(umr_mpi_rma_mem_t *m, void *base, size_t len,
                          ptrdiff_t disp_unit, int dynamic, int hold);
/* Its keys given back, its registrations released. */
void umr_mpi_rma_mem_close(umr_mpi_rma_mem_t *m);

/* Dynamic: record memory attached (0; -1: not recorded, no key over it:
 * out of memory, or `hold` and it does not register); the region recorded
 * at `base`, or NULL; the region that holds [lo, hi), or NULL. */
int umr_mpi_rma_mem_attach(umr_mpi_rma_mem_t *m, void *base, size_t len);
const umr_mpi_rma_att_t *umr_mpi_rma_mem_attached(const umr_mpi_rma_mem_t *m,
                                                  const void *base);
const umr_mpi_rma_att_t *umr_mpi_rma_mem_find(const umr_mpi_rma_mem_t *m,
                                              uintptr_t lo, uintptr_t hi);
/* Dynamic: forget the region at `base` (recorded), its keys given back. */
void umr_mpi_rma_mem_detach(umr_mpi_rma_mem_t *m, const void *base);

/* The peer of the origin of a key request: rank `world`, its endpoint
 * address (`alen` bytes, 0: none) taken, pinned (its RMA comes through that
 * endpoint: never disconnected); NULL: no rail to it (the request's answer
 * UMR_MPI_RMA_KANS_NO_PEER). */
umr_mpi_peer_t *umr_mpi_rma_mem_origin(int world, const void *addr,
                                       size_t alen);

/* The key of `count` elements of `layout` at displacement `disp` for an
 * origin behind `peer`: its packed rkey (peer->rail->rkey_size bytes) into
 * `rkey`; *addr_p where the first element starts, *att_p its attached
 * region (NULL: created). 0 (UMR_MPI_RMA_KANS_OK), or the answer's status:
 * UMR_MPI_RMA_KANS_OUT_OF_WINDOW (a byte outside), _NO_KEY (`fail`, or the
 * registration or the layout key failed). */
int umr_mpi_rma_mem_key(umr_mpi_rma_mem_t *m, umr_mpi_peer_t *peer,
                        int64_t disp, umr_layout_t *layout,
                        size_t count, int fail, uint8_t *rkey, char **addr_p,
                        char **att_p);

#ifdef __cplusplus
}
#endif

#endif
