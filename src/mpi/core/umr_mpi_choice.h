/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: the one decision whether data moves zero-copy or
 * through the wrapped MPI unchanged, for point-to-point messages (the
 * sender, then the receiver, which knows both layouts) and one-sided
 * operations alike, from measured per-engine and per-MPI costs
 * (umr_mpi_cost.h; contrib/umr-calibrate.sh writes them).
 *
 * Each decision is taken once per candidate message on each side (the
 * counters decided_send, decided_recv, decided_rma) and its cost computed
 * once per entry of one cache, keyed by the datatype (the binding's key),
 * the count, the engine and the operation (and, for a receive, the
 * sender's blocks; for a put or get, the other side's type and count and
 * the wrapped component's costs): a loop of halo exchanges computes each
 * of its choices once. An entry goes with its type (umr_mpi_choice_forget,
 * from umr_mpi_types_forget). Declines write the cache too: a message the
 * receiver declined by cost, or whose layout is beyond the key budget,
 * makes its type and count pass from then on (umr_mpi_choice_pass); when
 * every engine of the rails says pass for a send, the verdict goes to the
 * type's front slot, read inline by the bindings (umr_mpi_types.h).
 */
#ifndef UMR_MPI_CHOICE_H_
#define UMR_MPI_CHOICE_H_

#include "umr_mpi_cost.h"
#include "umr_mpi_peer.h"
#include "umr_mpi_types.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The mode (Open MPI: pml_umr_zcopy, osc_umr_zcopy) */
enum {
    UMR_MPI_ZCOPY_AUTO = 0,   /* from the measured costs */
    UMR_MPI_ZCOPY_ON   = 1,   /* every eligible message (tests) */
    UMR_MPI_ZCOPY_OFF  = 2    /* never: everything passes through */
};

/* What a decision says. */
enum {
    UMR_MPI_PASS   = UMR_MPI_COST_PASS,   /* through the wrapped MPI,
                                             unchanged */
    UMR_MPI_ZCOPY  = UMR_MPI_COST_ZCOPY,  /* one zero-copy operation */
    UMR_MPI_PACKED = UMR_MPI_COST_PACKED  /* one-sided: packed through the
                                             wrapped MPI */
};

/* Operations of the cache's key. */
enum {
    UMR_MPI_OP_SEND = 0,
    UMR_MPI_OP_RECV,
    UMR_MPI_OP_PUT,
    UMR_MPI_OP_GET,
    UMR_MPI_OP_NUM
};

/* Density classes (umr_mpi_choice_is_dense) */
enum {
    UMR_MPI_SPARSE = 0,
    UMR_MPI_DENSE  = 1,
    UMR_MPI_ANY    = 2        /* either (umr_mpi_choice_bounds_of) */
};

/* Whether a type of `size` bytes over `extent` (0 or less: dense) is dense
 * for the costs (its data covers at least UMR_MPI_COST_DENSE of its
 * extent): what the choice computes from a decoded type, and a binding's
 * prefilter from its MPI's own size and extent before decoding. */
static inline int umr_mpi_choice_is_dense(size_t size, ptrdiff_t extent)
{
    /* size / extent >= 1 / DENSE_DIV in integers */
    return (extent <= 0) || (UMR_MPI_COST_DENSE_DIV * size >= (size_t)extent);
}

/* What a point-to-point message must at least have for zero-copy to win
 * on some rail of this process, per density class of its type: computed
 * once from the costs (umr_mpi_choice_init), read by the bindings'
 * prefilters before any decoding. */
typedef struct umr_mpi_bounds {
    size_t min_len;           /* packed bytes, either class */
    double min_block;         /* mean contiguous block, either class */
    size_t dens_min_len[2];   /* by class: UMR_MPI_SPARSE, _DENSE */
    double dens_min_block[2];
    int    engines;           /* the rails' engines: bit 0 sw, bit 1 mlx5 */
} umr_mpi_bounds_t;

extern umr_mpi_bounds_t umr_mpi_bounds;

/*
 * The point-to-point choice of this process: `mode`, messages of at least
 * `min_size` bytes, the costs for the wrapped PML `pml_name` from `path`
 * (NULL or "": the default path, umr_mpi_cost_default_path), and the
 * bounds above for the rails open now. 0: read; 1: no such file; -1:
 * rejected (`msg` names the file and line). In every case `msg` says where
 * the costs come from; without a readable file the built-in conservative
 * constants apply (they never choose the sw engine).
 */
int umr_mpi_choice_init(int mode, size_t min_size, const char *path,
                        const char *pml_name, char *msg, size_t len);
/* The costs file in use (the one umr_mpi_choice_init read, else the
 * default path): the one-sided costs come from it too. */
void umr_mpi_choice_path(char *buf, size_t len);

/*
 * The sender's decision for `count` elements of the type in `slot`
 * (packed size at least the minimum) to `peer` (a rail reaches it):
 * UMR_MPI_ZCOPY when the control message, one get of its blocks through
 * the peer's engine and the ack are expected to take less than
 * UMR_MPI_COST_MARGIN of the wrapped PML's time for the same datatype,
 * else UMR_MPI_PASS (and, when that holds for every engine of the rails,
 * or the type has no layout, the slot's verdict). A retired peer passes.
 * Inline when the slot's memo says zero-copy for this count on the peer's
 * engine and the peer is connected (or the budget has room): the same
 * verdict as the cache's, counted alike.
 */
int umr_mpi_choose_send_slow(umr_mpi_type_slot_t *slot, size_t count,
                             const umr_mpi_peer_t *peer);
/* (the trace line of a send's decision, at verbosity 30) */
void umr_mpi_choice_send_said(size_t count, const umr_mpi_peer_t *peer,
                              int verdict);

/* The bit of the peer's engine in umr_mpi_bounds.engines and a slot's
 * zcopy_engs. */
static inline uint8_t umr_mpi_choice_eng_bit(const umr_mpi_peer_t *peer)
{
    return peer->rail->is_sw ? 1 : 2;
}

static inline int umr_mpi_choose_send(umr_mpi_type_slot_t *slot,
                                      size_t count,
                                      const umr_mpi_peer_t *peer)
{
    if (ucs_likely((slot->zcopy_count == count) &&
                   !umr_mpi_peer_retired(peer) &&
                   (slot->zcopy_engs & umr_mpi_choice_eng_bit(peer)) &&
                   !umr_mpi_peer_reconnects(peer))) {
        ++umr_mpi.cnt.decided_send;
        if (ucs_unlikely(umr_mpi.verbose >= 30)) {
            umr_mpi_choice_send_said(count, peer, UMR_MPI_ZCOPY);
        }
        return UMR_MPI_ZCOPY;
    }
    return umr_mpi_choose_send_slow(slot, count, peer);
}

/* From now on `count` elements of `key` pass through on the engine of
 * `peer` (a decline by cost, a layout beyond the key budget). */
void umr_mpi_choice_pass(uintptr_t key, size_t count,
                         const umr_mpi_peer_t *peer);

/*
 * The receiver's decision, knowing both layouts: get `bytes` from the
 * sender's `sblocks` blocks into elements of `rinfo` (the receive type,
 * key `rkey`; NULL: one block, dense) from `peer`. UMR_MPI_ZCOPY, or
 * UMR_MPI_PASS to decline (the sender then sends the data through the
 * wrapped PML).
 */
int umr_mpi_choose_recv(uintptr_t rkey, const umr_mpi_dtype_t *rinfo,
                        size_t bytes, size_t sblocks,
                        const umr_mpi_peer_t *peer);

/*
 * One-sided: the costs of the wrapped osc component `osc_name` (loaded once
 * a component from the costs file), and the built-in rule when the file has
 * none for it: on the sw engine, blocks up to `packed_max_block` bytes go
 * packed (`packed`: the packed path may be chosen), up to `sw_max_block`
 * bytes (0: no limit) zero-copy, larger ones through the wrapped module; on
 * mlx5, every eligible operation zero-copy. A file with osc figures but no
 * packed ones keeps the packed part of that rule in front of its
 * estimates. Returns the component's id for umr_mpi_choose_rma (-1: too
 * many components, the built-in rule).
 */
int umr_mpi_choice_osc(const char *osc_name, size_t sw_max_block,
                       int packed, size_t packed_max_block);

/* The decision for one put or get (`op`) of `length` bytes between
 * `ocount` elements of `oinfo` (key `okey`) at the origin and `tcount` of
 * `tinfo` (`tkey`) at the target `peer`, through the component `osc`, under
 * `mode` (osc_umr_zcopy): UMR_MPI_ZCOPY, UMR_MPI_PACKED or UMR_MPI_PASS,
 * zero-copy or packed only below UMR_MPI_COST_MARGIN of the wrapped
 * module's time, the lower of the two (umr_mpi_cost_pick). */
int umr_mpi_choose_rma(int op, int osc, int mode, uintptr_t okey,
                       const umr_mpi_dtype_t *oinfo, size_t ocount,
                       uintptr_t tkey, const umr_mpi_dtype_t *tinfo,
                       size_t tcount, const umr_mpi_peer_t *peer);

/* The type `key` is freed: its entries go. */
void umr_mpi_choice_forget(uintptr_t key);

/* For the tests of the cost model: what a message must have for a
 * point-to-point zero-copy to win on `engine` ("sw", "mlx5"), same host or
 * not, per density class (UMR_MPI_SPARSE, _DENSE, _ANY); and the estimates
 * behind the decisions above, without the cache (`reconnect`: the peer
 * must be connected first at the budget, umr_mpi_peer_reconnects). */
void umr_mpi_choice_bounds_of(const char *engine, int same_host, int mode,
                              size_t min_size, int dens, size_t *min_bytes,
                              double *min_block);
int  umr_mpi_choice_prefer_send(const umr_mpi_dtype_t *t, size_t count,
                                int eng, int same_host, int reconnect,
                                int mode);
int  umr_mpi_choice_prefer_recv(size_t bytes, size_t sblocks, size_t rblocks,
                                double density, int eng, int same_host,
                                int reconnect, int mode);

#ifdef __cplusplus
}
#endif

#endif
