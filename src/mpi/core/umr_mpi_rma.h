/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: one-sided put and get through target layout keys, for
 * any binding. A window (umr_mpi_rma_win_t) is the core's view of an MPI
 * window: its memory at this rank, and a channel of the binding's between
 * its ranks (two kinds of short messages, in each pair's order).
 *
 * Keys (umr_mpi_rma_wire.h). The origin of a put or get looks the key of
 * (target, displacement, target layout, count) up in the window's cache;
 * on a miss it asks the target (one message: the layout encoded,
 * umr_layout_encode) and the operation goes to the MPI: the first use never
 * waits. The target answers from progress with the packed rkey of a layout
 * key over its window memory, after checking that every byte lies in the
 * window, or refuses. A refused key stays refused (its operations go to the
 * MPI); keys live until the window is freed.
 *
 * Operations. A ready key carries a put or get zero-copy on the transport;
 * it is complete (both ends' memory) when its completion ran, which the
 * binding waits for at the end of the MPI's epoch (umr_mpi_rma_wait). An
 * operation that fails in flight calls its `done` with an error: the
 * binding does it again through the MPI before the epoch ends.
 *
 * Free (collective, the binding's): umr_mpi_rma_sent tells what each rank
 * sent each other rank; with what the others sent it (an all-to-all of the
 * binding's), umr_mpi_rma_win_close takes every request and answer still on
 * the way, then frees.
 */
#ifndef UMR_MPI_RMA_H_
#define UMR_MPI_RMA_H_

#include "umr_mpi_keys.h"
#include "umr_mpi_peer.h"
#include "umr_mpi_rma_mem.h"
#include "umr_mpi_rma_wire.h"

#include <ucs/datastruct/khash.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kinds of the window's messages. */
enum {
    UMR_MPI_RMA_KREQ,          /* origin -> target: a key request */
    UMR_MPI_RMA_KANS,          /* target -> origin: its answer */
    UMR_MPI_RMA_INVAL,         /* dynamic: target -> origin: memory was
                                  detached, drop my keys */
    UMR_MPI_RMA_IACK,          /* origin -> target: dropped */
    UMR_MPI_RMA_KINDS
};
#define UMR_MPI_RMA_ANY (-1)   /* irecv: from any rank of the window */

/* What the binding supplies per window (`ctx`: its window). Ranks are the
 * window's; completions as umr_mpi_binding.h says. */
typedef struct umr_mpi_rma_ops {
    int  (*isend)(void *ctx, int rank, int kind, const void *buf, size_t len,
                  umr_mpi_comp_t *comp);
    int  (*irecv)(void *ctx, int rank, int kind, void *buf, size_t len,
                  umr_mpi_comp_t *comp, umr_mpi_req_h *req_p);
    void (*cancel)(umr_mpi_req_h req);
} umr_mpi_rma_ops_t;

enum {
    UMR_MPI_RMA_KEY_PENDING = 0,
    UMR_MPI_RMA_KEY_READY,
    UMR_MPI_RMA_KEY_REFUSED
};

struct umr_mpi_rma_win;

/* A receive of the window's: its completion (maybe inside the MPI) only
 * recorded, taken by progress (umr_mpi_rma_rx_take). */
typedef struct umr_mpi_rma_rx {
    umr_mpi_comp_t   comp;
    umr_mpi_req_h    req;       /* NULL: none posted */
    umr_mpi_status_t status;
    int              arrived;
} umr_mpi_rma_rx_t;

/* An origin's key of one target access. */
typedef struct umr_mpi_rma_key {
    struct umr_mpi_rma_win *w;
    ucs_list_link_t       stale;        /* dropped (dynamic windows) */
    umr_mpi_peer_t        *peer;
    int                   target;
    int                   state;
    int64_t               disp;
    size_t                count;
    umr_layout_t          *layout;      /* own copy: part of the key */
    uct_rkey_t            rkey;
    int                   has_rkey;
    umr_mpi_rma_rx_t      ans_rx;       /* the answer's receive */
    umr_mpi_rma_kans_t    ans;
} umr_mpi_rma_key_t;

KHASH_MAP_INIT_INT64(umr_mpi_rma_keys, umr_mpi_rma_key_t*)

/* The keys an origin holds, by access (the hash of target, displacement,
 * layout and count; another access with the same hash is never cached),
 * and those dropped, kept until the cache goes (an operation in flight may
 * use one). A binding may keep keys of its own in one: its key starts with
 * umr_mpi_rma_key_t (`size` bytes, zeroed; key->ans its answer's buffer,
 * key->w NULL). */
typedef struct umr_mpi_rma_kcache {
    khash_t(umr_mpi_rma_keys) keys;
    ucs_list_link_t           stale;
} umr_mpi_rma_kcache_t;

void umr_mpi_rma_kcache_init(umr_mpi_rma_kcache_t *kc);
/* Every key freed (none waits for its answer any more). */
void umr_mpi_rma_kcache_close(umr_mpi_rma_kcache_t *kc);

/* The key of this access, or NULL (another access has its hash, out of
 * memory). *fresh: made now (PENDING, its layout copied: the caller asks
 * for it; REFUSED: no memory for the copy). */
umr_mpi_rma_key_t *umr_mpi_rma_kcache_get(umr_mpi_rma_kcache_t *kc,
                                          size_t size, umr_mpi_peer_t *peer,
                                          int target, int64_t disp,
                                          const umr_layout_t *layout,
                                          size_t count, int *fresh);

/* The answer in key->ans arrived (`ok`: whole, for this key): READY with
 * its rkey unpacked, or REFUSED; 1 ready, 0 refused. */
int umr_mpi_rma_key_accept(umr_mpi_rma_key_t *key, int ok);

/* Every key of `target` dropped (a detach there): those still asked for
 * are refused when `refuse_pending` (their answers may name the detached
 * memory), else left to their answers. The number dropped. */
size_t umr_mpi_rma_kcache_drop(umr_mpi_rma_kcache_t *kc, int target,
                               int refuse_pending);

#define umr_mpi_rma_kcache_for_each(_key, _kc, _code) \
    kh_foreach_value(&(_kc)->keys, _key, _code)

typedef struct umr_mpi_rma_win {
    ucs_list_link_t          list;       /* in the core's windows */
    const umr_mpi_rma_ops_t  *ops;
    void                     *ctx;
    umr_mpi_rma_mem_t        mem;        /* this rank's window, the keys
                                            given over it */
    int                      rank, size;
    int                      *world;     /* window rank -> world rank */
    int                      osc;        /* the choice's id (umr_mpi_choice_osc) */
    int                      closing;
    /* dynamic windows (displacements are addresses) */
    int                      dynamic;
    uint8_t                  *given;     /* keys given each origin since
                                            the last detach */
    uint64_t                 inval_buf[2]; /* detached base, target */
    umr_mpi_rma_rx_t         inval_rx;
    int                      iacks_wanted;
    umr_mpi_comp_t           iack_comp;  /* one for every ack awaited */
    /* target */
    umr_mpi_rma_kreq_t       kreq;       /* the posted receive's buffer */
    umr_mpi_rma_rx_t         kreq_rx;
    int                      *taken;     /* requests taken, per origin */
    int                      *answered;  /* answers sent, per origin */
    /* origin */
    umr_mpi_rma_kcache_t     kc;
    int                      *sent;      /* requests sent, per target */
    int                      *ans_taken; /* answers taken, per target */
    int                      pending;    /* keys asked for, not answered */
    int                      *inflight;  /* operations in flight, per target */
    int                      inflight_total;
} umr_mpi_rma_win_t;

/* A put or get of the binding's: it embeds this, and `done` runs once the
 * operation completed (`ok` 0: it failed; do it again through the MPI). */
typedef struct umr_mpi_rma_op umr_mpi_rma_op_t;
struct umr_mpi_rma_op {
    uct_completion_t  comp;
    umr_mpi_rma_win_t *w;
    int               target;
    umr_mpi_region_t  *region;
    umr_mpi_rma_key_t *key;
    void              (*done)(umr_mpi_rma_op_t *op, int ok);
};

/* One operation as the binding sees it: `okey`/`tkey` its types' keys
 * (umr_mpi_types.h), `oinfo`/`tinfo` their summaries. */
typedef struct umr_mpi_rma_call {
    int                   is_put;
    int                   target;
    void                  *origin_addr;
    uintptr_t             okey;
    const umr_mpi_dtype_t *oinfo;
    size_t                ocount;
    int64_t               disp;
    uintptr_t             tkey;
    const umr_mpi_dtype_t *tinfo;
    size_t                tcount;
    int                   mode;         /* UMR_MPI_ZCOPY_AUTO, _ON, _OFF */
} umr_mpi_rma_call_t;

/* A window of `size` ranks (`world`: each one's world rank, copied) whose
 * memory here is [base, base + len) (`dynamic`: none, memory attached
 * later, displacements are addresses); the receive of key requests posted.
 * NULL: out of memory, or the receive could not be posted. `osc`: the
 * choice's id of the binding's one-sided costs. */
umr_mpi_rma_win_t *umr_mpi_rma_win_open(const umr_mpi_rma_ops_t *ops,
                                        void *ctx, void *base, size_t len,
                                        ptrdiff_t disp_unit, int dynamic,
                                        int rank, int size, const int *world,
                                        int osc);

/* Dynamic windows (umr_mpi_rma_win_open's `dynamic`): memory attached
 * here (-1: not recorded, its keys are refused), and detached: the keys
 * over it go back, and every origin given a key since the last detach drops
 * the keys it holds for this rank before this returns (each answers from
 * its progress). */
int  umr_mpi_rma_attach(umr_mpi_rma_win_t *w, void *base, size_t len);
void umr_mpi_rma_detach(umr_mpi_rma_win_t *w, void *base);

/* The requests this rank sent each rank of the window (size entries). */
const int *umr_mpi_rma_sent(const umr_mpi_rma_win_t *w);
/* The answers this rank sent each rank (after the requests are in). */
const int *umr_mpi_rma_answered(const umr_mpi_rma_win_t *w);

/* Every rank, at the window's free: take the requests the others sent here
 * (`sent_here`, from umr_mpi_rma_sent's all-to-all, NULL: do not wait),
 * answer them; then umr_mpi_rma_win_close with the answers the others sent
 * here (`answered_here`, NULL: do not wait); keys given go back. */
void umr_mpi_rma_win_settle(umr_mpi_rma_win_t *w, const int *sent_here);
void umr_mpi_rma_win_close(umr_mpi_rma_win_t *w, const int *answered_here);

/* The ready key that carries `c` zero-copy, or NULL: the binding hands it
 * to the MPI (not eligible, the choice, no key yet: asked for now, a
 * refused one). Nothing allocated: the pass-through costs a few compares
 * and two cache lookups. */
umr_mpi_rma_key_t *umr_mpi_rma_ready(umr_mpi_rma_win_t *w,
                                     const umr_mpi_rma_call_t *c);

/* Start `c` zero-copy through `key` (umr_mpi_rma_ready's) and `op` (the
 * binding's, its `done` set): 1 taken (`done` runs later, or has run
 * already), 0 the binding hands it to the MPI (the origin's memory does
 * not register, the transport refuses it now). */
int umr_mpi_rma_post(umr_mpi_rma_win_t *w, umr_mpi_rma_op_t *op,
                     const umr_mpi_rma_call_t *c, umr_mpi_rma_key_t *key);

/* Progress until the operations in flight to `target` (-1: every target)
 * completed. */
void umr_mpi_rma_wait(umr_mpi_rma_win_t *w, int target);

/* What the one-sided part counts (the names osc/umr prints). */
typedef struct umr_mpi_rma_counters {
    uint64_t zcopy_puts;
    uint64_t zcopy_gets;
    uint64_t rma_bytes;        /* moved zero-copy */
    uint64_t rma_passthrough;  /* puts and gets handed to the MPI */
    uint64_t rma_redone;       /* failed in flight, done again by the MPI */
    uint64_t key_requests;     /* origin: asked for */
    uint64_t key_ready;        /* origin: answered with a key */
    uint64_t key_refused;      /* origin: refused, or never asked */
    uint64_t key_answers;      /* target: keys given */
    uint64_t key_errors;       /* target: requests refused */
    uint64_t keys_dropped;     /* origin: dropped at a target's detach */
} umr_mpi_rma_counters_t;

extern umr_mpi_rma_counters_t umr_mpi_rma_cnt;

/* Test builds (UMR_TEST_HOOKS): points of the key protocol that fail on
 * request (umr_mpi_rma_set_faults); other builds have none. */
enum {
    UMR_MPI_RMA_FAULT_KREQ = 1,     /* origin: the request is not sent */
    UMR_MPI_RMA_FAULT_TKEY = 2,     /* target: the key's registration fails */
    UMR_MPI_RMA_FAULT_OREG = 4,     /* origin: its memory does not register */
    UMR_MPI_RMA_FAULT_FAIL = 8      /* origin: the operation completes in
                                       error (after it moved the data) */
};
#if UMR_TEST_HOOKS
extern unsigned umr_mpi_rma_faults;
#  define UMR_MPI_RMA_FAULT(_f) ucs_unlikely(umr_mpi_rma_faults & (_f))
#else
#  define UMR_MPI_RMA_FAULT(_f) 0
#endif
void umr_mpi_rma_set_faults(unsigned mask);
/* Their names, bit by bit (a binding's test setting lists them after the
 * core's, umr_mpi_fault_names). */
#define UMR_MPI_RMA_FAULT_NAMES "kreq", "tkey", "oreg", "rmafail"

#ifdef __cplusplus
}
#endif

#endif
