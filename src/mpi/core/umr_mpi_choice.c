/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: pass through or zero-copy (see umr_mpi_choice.h). A
 * message goes zero-copy only when its estimate is below
 * UMR_MPI_COST_MARGIN of what the wrapped MPI takes for the same data, per
 * message (bytes, blocks, density) and per peer (engine, same host or
 * not). The constants come from the costs file (contrib/umr-calibrate.sh);
 * without one the built-in constants never choose the sw engine for
 * point-to-point.
 */
#include "umr_mpi_choice.h"

#include <ucs/sys/math.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* One decision of the cache: the key, then the verdict. */
typedef struct umr_mpi_choice_entry {
    uintptr_t a, b;          /* the type, the other side's (0: none) */
    size_t    ca, cb;        /* its count, the other's (receive: the
                                sender's blocks) */
    uint8_t   op, eng, src;  /* UMR_MPI_OP_*, UMR_MPI_COST_SW/_MLX5, the
                                costs (0: the PML's, 1 + an osc's) */
    uint8_t   used;
    uint8_t   verdict;       /* UMR_MPI_PASS, _ZCOPY, _PACKED */
} umr_mpi_choice_entry_t;

#define UMR_MPI_CHOICE_SLOTS   256      /* power of two */
#define UMR_MPI_CHOICE_OSCS    4        /* wrapped osc components */

/* The costs of a wrapped osc component. */
typedef struct umr_mpi_choice_osc {
    char           name[32];
    int            measured;   /* osc figures for it in the file */
    size_t         sw_max_block;
    int            packed;     /* the packed path may be chosen */
    size_t         packed_max_block;
    umr_mpi_cost_t cost;
} umr_mpi_choice_osc_t;

static struct {
    int                    mode;
    int                    loaded;
    char                   path[512];
    umr_mpi_cost_t         cost;           /* the wrapped PML's */
    umr_mpi_choice_osc_t   osc[UMR_MPI_CHOICE_OSCS];
    int                    nosc;
    umr_mpi_choice_entry_t tab[UMR_MPI_CHOICE_SLOTS];
} umr_mpi_choice;

umr_mpi_bounds_t umr_mpi_bounds;

static const umr_mpi_cost_t *umr_mpi_choice_costs(void)
{
    if (!umr_mpi_choice.loaded) {
        umr_mpi_cost_defaults(&umr_mpi_choice.cost);
        umr_mpi_choice.loaded = 1;
    }
    return &umr_mpi_choice.cost;
}

static int umr_mpi_choice_scope(int same_host)
{
    return same_host ? UMR_MPI_COST_LOCAL : UMR_MPI_COST_REMOTE;
}

/* ---- the estimates -------------------------------------------------- */

int umr_mpi_choice_prefer_send(const umr_mpi_dtype_t *t, size_t count,
                               int eng, int same_host, int reconnect,
                               int mode)
{
    double density;

    if (mode != UMR_MPI_ZCOPY_AUTO) {
        return mode == UMR_MPI_ZCOPY_ON;
    }
    if ((eng < 0) || (count == 0) || (t->size == 0)) {
        return 0;
    }
    /* the costs look at the density class only, so the class is what goes
     * in, by the very test the bindings' prefilters make on their MPI's
     * size and extent before decoding */
    density = umr_mpi_choice_is_dense(t->size, t->extent) ? 1.0 : 0.0;
    return (reconnect ? umr_mpi_cost_prefer_zcopy_connect :
                        umr_mpi_cost_prefer_zcopy)(
            umr_mpi_choice_costs(), eng, umr_mpi_choice_scope(same_host),
            t->size * count, t->num_blocks * count, density);
}

int umr_mpi_choice_prefer_recv(size_t bytes, size_t sblocks, size_t rblocks,
                               double density, int eng, int same_host,
                               int reconnect, int mode)
{
    const umr_mpi_cost_t *c = umr_mpi_choice_costs();
    int scope               = umr_mpi_choice_scope(same_host);
    double z, p;

    if (mode != UMR_MPI_ZCOPY_AUTO) {
        return mode == UMR_MPI_ZCOPY_ON;
    }
    if ((eng < 0) || (bytes == 0)) {
        return 0;
    }
    sblocks = (sblocks > 0) ? sblocks : 1;
    rblocks = (rblocks > 0) ? rblocks : 1;
    /* the control message, then one get of the sender's blocks into the
     * receiver's (umr_mpi_cost.h: on the sw engine more receive blocks
     * than send blocks are charged at the send blocks' cost) */
    z = c->pml[scope].ctrl_ns +
        umr_mpi_cost_rma(c, eng, UMR_MPI_COST_GET, bytes, sblocks, rblocks,
                         density) +
        (reconnect ? umr_mpi_cost_connect(c, eng, scope) : 0);
    p = 0.5 * (umr_mpi_cost_pml(c, scope, bytes, (double)bytes / sblocks) +
               umr_mpi_cost_pml(c, scope, bytes, (double)bytes / rblocks));
    return z < UMR_MPI_COST_MARGIN * p;
}

/* Where zero-copy can win at a mean block of m bytes for messages of at
 * least `min_size` bytes: its cost minus the margin times the PML's is
 * linear in the bytes (blocks = bytes / m), a + b * bytes. The smallest
 * winning size, or SIZE_MAX when none wins. */
static size_t umr_mpi_choice_min_win(const umr_mpi_cost_t *c, int eng,
                                     int scope, int dens, double m,
                                     size_t min_size)
{
    const umr_mpi_cost_lin_t *l = &c->eng[eng][UMR_MPI_COST_GET][dens];
    double p0 = umr_mpi_cost_pml(c, scope, 0, m);
    double p1 = umr_mpi_cost_pml(c, scope, 1, m) - p0;   /* per byte */
    double a  = c->pml[scope].ctrl_ns + l->op_ns - UMR_MPI_COST_MARGIN * p0;
    double b  = (l->rentry_ns + l->lentry_ns) / m + l->byte_ns -
                UMR_MPI_COST_MARGIN * p1;
    double x;

    if (a + b * (double)min_size < 0) {
        return min_size;
    }
    if (b >= 0) {
        return SIZE_MAX;
    }
    x = ceil(-a / b);
    return (x >= (double)SIZE_MAX) ? SIZE_MAX : (size_t)x;
}

void umr_mpi_choice_bounds_of(const char *engine, int same_host, int mode,
                              size_t min_size, int dens_class,
                              size_t *min_bytes, double *min_block)
{
    const umr_mpi_cost_t *c = umr_mpi_choice_costs();
    int eng   = umr_mpi_cost_engine(engine), dens, i;
    int scope = umr_mpi_choice_scope(same_host);
    size_t b;
    double m;

    *min_bytes = SIZE_MAX;
    *min_block = HUGE_VAL;
    if (mode == UMR_MPI_ZCOPY_ON) {
        *min_bytes = min_size;
        *min_block = 0;
        return;
    }
    if ((mode != UMR_MPI_ZCOPY_AUTO) || (eng < 0)) {
        return;
    }
    /* mean blocks from 1 B to 1 GiB, 16 a factor of two: the PML's costs
     * are interpolated in log2(block), so the steps follow them closely;
     * the bound is the step below the first that wins (conservative) */
    for (i = 0; i <= 30 * 16; ++i) {
        m = exp2(i / 16.0);
        for (dens = 0; dens < UMR_MPI_COST_NUM_DENS; ++dens) {
            if ((dens_class != UMR_MPI_ANY) &&
                ((dens == UMR_MPI_COST_DENSE_L) !=
                 (dens_class == UMR_MPI_DENSE))) {
                continue;
            }
            b = umr_mpi_choice_min_win(c, eng, scope, dens, m, min_size);
            if (b == SIZE_MAX) {
                continue;
            }
            if (*min_block == HUGE_VAL) {
                *min_block = exp2((i - 1) / 16.0);
            }
            if (b < *min_bytes) {
                *min_bytes = b;
            }
        }
    }
    if (*min_block == HUGE_VAL) {
        *min_bytes = SIZE_MAX;
    } else if (*min_block < 1) {
        *min_block = 0;
    }
}

/* What a message must have for zero-copy to win on any rail, for types of
 * each density class and for either (the bindings' prefilters). */
static void umr_mpi_choice_bounds(size_t min_size)
{
    static const char *names[] = {"sparse", "dense"};
    size_t min_bytes, len[2] = {SIZE_MAX, SIZE_MAX};
    double min_block, block[2] = {HUGE_VAL, HUGE_VAL};
    umr_mpi_bounds_t *bd = &umr_mpi_bounds;
    const umr_mpi_rail_t *rail;
    int i, remote, d;

    bd->engines = 0;
    for (i = 0; i < umr_mpi_rails.nrails; ++i) {
        rail         = &umr_mpi_rails.rails[i];
        bd->engines |= rail->is_sw ? 1 : 2;
        /* sw reaches the same host only; mlx5 either */
        for (remote = 0; remote <= !rail->is_sw; ++remote) {
            for (d = UMR_MPI_SPARSE; d <= UMR_MPI_DENSE; ++d) {
                umr_mpi_choice_bounds_of(rail->is_sw ? "sw" : "mlx5",
                                         !remote, umr_mpi_choice.mode,
                                         min_size, d, &min_bytes,
                                         &min_block);
                len[d]   = ucs_min(min_bytes, len[d]);
                block[d] = (min_block < block[d]) ? min_block : block[d];
            }
        }
    }
    for (d = UMR_MPI_SPARSE; d <= UMR_MPI_DENSE; ++d) {
        bd->dens_min_len[d]   = ucs_max(len[d], min_size);
        bd->dens_min_block[d] = block[d];
        if (len[d] == SIZE_MAX) {
            UMR_MPI_VERBOSE(2, "zero-copy cannot win on any rail with these "
                            "costs for %s types: they pass through",
                            names[d]);
        } else {
            UMR_MPI_VERBOSE(2, "zero-copy only for messages of %s types of "
                            "at least %zu bytes with a mean block of at "
                            "least %.0f bytes", names[d],
                            bd->dens_min_len[d], block[d]);
        }
    }
    bd->min_len   = ucs_min(bd->dens_min_len[0], bd->dens_min_len[1]);
    bd->min_block = (block[0] < block[1]) ? block[0] : block[1];
}

int umr_mpi_choice_init(int mode, size_t min_size, const char *path,
                        const char *pml_name, char *msg, size_t len)
{
    int ret, i;

    umr_mpi_choice.mode = mode;
    if ((path == NULL) || (path[0] == '\0')) {
        umr_mpi_cost_default_path(umr_mpi_choice.path,
                                  sizeof(umr_mpi_choice.path));
    } else {
        snprintf(umr_mpi_choice.path, sizeof(umr_mpi_choice.path), "%s",
                 path);
    }
    ret = umr_mpi_cost_load(&umr_mpi_choice.cost, umr_mpi_choice.path,
                            pml_name, msg, len);
    umr_mpi_choice.loaded = 1;
    if ((ret > 0) && (len > 0)) {
        snprintf(msg, len, "no costs file %s: built-in constants (run "
                 "contrib/umr-calibrate.sh)", umr_mpi_choice.path);
    } else if ((ret == 0) && (len > 0)) {
        snprintf(msg, len, "costs for pml %s from %s", pml_name,
                 umr_mpi_choice.path);
    }
    memset(umr_mpi_choice.tab, 0, sizeof(umr_mpi_choice.tab));
    for (i = 0; i < UMR_MPI_TYPE_SLOTS; ++i) {
        umr_mpi_type_front[i].zcopy_engs = 0;   /* the cache's memo */
    }
    umr_mpi_types_on_forget(umr_mpi_choice_forget);
    umr_mpi_choice_bounds(min_size);
    return ret;
}

void umr_mpi_choice_path(char *buf, size_t len)
{
    if (umr_mpi_choice.path[0] != '\0') {
        snprintf(buf, len, "%s", umr_mpi_choice.path);
    } else {
        umr_mpi_cost_default_path(buf, len);
    }
}

/* ---- the cache -------------------------------------------------------- */

static umr_mpi_choice_entry_t *
umr_mpi_choice_slot(uintptr_t a, size_t ca, uintptr_t b, size_t cb, int op,
                    int eng, int src)
{
    uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (ca * 0xc2b2ae3d27d4eb4full) ^
                 (b * 0x165667b19e3779f9ull) ^ (cb * 0x27d4eb2f165667c5ull) ^
                 ((uint64_t)((op << 16) | (eng << 8) | src) *
                  0xff51afd7ed558ccdull);

    return &umr_mpi_choice.tab[(h >> 40) & (UMR_MPI_CHOICE_SLOTS - 1)];
}

/* The entry of this key, or NULL (the caller computes and stores). */
static umr_mpi_choice_entry_t *
umr_mpi_choice_find(umr_mpi_choice_entry_t *e, uintptr_t a, size_t ca,
                    uintptr_t b, size_t cb, int op, int eng, int src)
{
    return (e->used && (e->a == a) && (e->ca == ca) && (e->b == b) &&
            (e->cb == cb) && (e->op == op) && (e->eng == eng) &&
            (e->src == src)) ? e : NULL;
}

static void umr_mpi_choice_set(umr_mpi_choice_entry_t *e, uintptr_t a,
                               size_t ca, uintptr_t b, size_t cb, int op,
                               int eng, int src, int verdict)
{
    e->a       = a;
    e->ca      = ca;
    e->b       = b;
    e->cb      = cb;
    e->op      = op;
    e->eng     = eng;
    e->src     = src;
    e->used    = 1;
    e->verdict = verdict;
}

/* A decision computed now, kept. */
static int umr_mpi_choice_store(umr_mpi_choice_entry_t *e, uintptr_t a,
                                size_t ca, uintptr_t b, size_t cb, int op,
                                int eng, int src, int verdict)
{
    umr_mpi_choice_set(e, a, ca, b, cb, op, eng, src, verdict);
    ++umr_mpi.cnt.computed;
    return verdict;
}

void umr_mpi_choice_forget(uintptr_t key)
{
    int i;

    for (i = 0; i < UMR_MPI_CHOICE_SLOTS; ++i) {
        if ((umr_mpi_choice.tab[i].a == key) ||
            (umr_mpi_choice.tab[i].b == key)) {
            umr_mpi_choice.tab[i].used = 0;
        }
    }
}

static int umr_mpi_choice_eng(const umr_mpi_peer_t *peer)
{
    return peer->rail->is_sw ? UMR_MPI_COST_SW : UMR_MPI_COST_MLX5;
}

void umr_mpi_choice_send_said(size_t count, const umr_mpi_peer_t *peer,
                              int verdict)
{
    UMR_MPI_VERBOSE(30, "send of %zu elements to rank %d: %s", count,
                    peer->world_rank,
                    (verdict == UMR_MPI_PASS) ? "pass through" : "zero-copy");
}

/* The sender's verdict for engine `eng`, from the cache or computed. */
static int umr_mpi_choice_send_on(umr_mpi_type_slot_t *slot, size_t count,
                                  int eng)
{
    umr_mpi_choice_entry_t *e = umr_mpi_choice_slot(slot->key, count, 0, 0,
                                                    UMR_MPI_OP_SEND, eng, 0);

    if (umr_mpi_choice_find(e, slot->key, count, 0, 0, UMR_MPI_OP_SEND, eng,
                            0) != NULL) {
        return e->verdict;
    }
    return umr_mpi_choice_store(e, slot->key, count, 0, 0, UMR_MPI_OP_SEND,
                                eng, 0,
                                umr_mpi_choice_prefer_send(slot->info, count,
                                    eng, eng == UMR_MPI_COST_SW, 0,
                                    umr_mpi_choice.mode) ?
                                UMR_MPI_ZCOPY : UMR_MPI_PASS);
}

/* `count` elements of the slot's type pass through on engine `eng`: when
 * they do on every engine of the rails, that is the slot's verdict, which
 * the entry points read inline. A verdict of pass through never turns: the
 * choice is the same for the same type and count, and only declines write
 * a decision (to pass). */
static void umr_mpi_choice_pass_all(umr_mpi_type_slot_t *slot, size_t count)
{
    if (((umr_mpi_bounds.engines & 1) &&
         (umr_mpi_choice_send_on(slot, count, UMR_MPI_COST_SW) !=
          UMR_MPI_PASS)) ||
        ((umr_mpi_bounds.engines & 2) &&
         (umr_mpi_choice_send_on(slot, count, UMR_MPI_COST_MLX5) !=
          UMR_MPI_PASS))) {
        return;
    }
    slot->pass_count = count;
}

int umr_mpi_choose_send_slow(umr_mpi_type_slot_t *slot, size_t count,
                             const umr_mpi_peer_t *peer)
{
    int verdict;

    ++umr_mpi.cnt.decided_send;
    if (slot->info->layout == NULL) {
        /* a type that cannot go zero-copy (not expressible, or built by the
         * MPI itself): this count passes through for every peer */
        slot->pass_count = count;
        return UMR_MPI_PASS;
    }
    if (umr_mpi_peer_retired(peer)) {
        return UMR_MPI_PASS;   /* the peer's, not the type's */
    }
    verdict = umr_mpi_choice_send_on(slot, count, umr_mpi_choice_eng(peer));
    if (verdict == UMR_MPI_PASS) {
        umr_mpi_choice_pass_all(slot, count);
    } else {
        /* the memo the inline path reads (one count a slot) */
        if (slot->zcopy_count != count) {
            slot->zcopy_count = count;
            slot->zcopy_engs  = 0;
        }
        slot->zcopy_engs |= umr_mpi_choice_eng_bit(peer);
        if (ucs_unlikely(umr_mpi_peer_reconnects(peer)) &&
            !umr_mpi_choice_prefer_send(slot->info, count,
                                        umr_mpi_choice_eng(peer),
                                        peer->rail->is_sw, 1,
                                        umr_mpi_choice.mode)) {
            /* not worth a connection at the budget (not kept: the peer's,
             * not the type's) */
            verdict = UMR_MPI_PASS;
        }
    }
    umr_mpi_choice_send_said(count, peer, verdict);
    return verdict;
}

void umr_mpi_choice_pass(uintptr_t key, size_t count,
                         const umr_mpi_peer_t *peer)
{
    int eng                   = umr_mpi_choice_eng(peer);
    umr_mpi_choice_entry_t *e = umr_mpi_choice_slot(key, count, 0, 0,
                                                    UMR_MPI_OP_SEND, eng, 0);
    umr_mpi_type_slot_t *slot = umr_mpi_types_slot(key);

    umr_mpi_choice_set(e, key, count, 0, 0, UMR_MPI_OP_SEND, eng, 0,
                       UMR_MPI_PASS);
    if ((slot->key == key) && (slot->zcopy_count == count)) {
        slot->zcopy_engs &= ~umr_mpi_choice_eng_bit(peer);
    }
    if ((slot->key == key) && (slot->info != NULL)) {
        umr_mpi_choice_pass_all(slot, count);
    }
}

int umr_mpi_choose_recv(uintptr_t rkey, const umr_mpi_dtype_t *rinfo,
                        size_t bytes, size_t sblocks,
                        const umr_mpi_peer_t *peer)
{
    int eng       = umr_mpi_choice_eng(peer);
    int reconnect = umr_mpi_peer_reconnects(peer);
    umr_mpi_choice_entry_t *e;
    size_t rblocks = 1;
    double density = 1.0;
    int verdict;

    ++umr_mpi.cnt.decided_recv;
    /* a connection to make at the budget is the peer's now, not kept */
    e = umr_mpi_choice_slot(rkey, bytes, 0, sblocks, UMR_MPI_OP_RECV, eng, 0);
    if (!reconnect &&
        (umr_mpi_choice_find(e, rkey, bytes, 0, sblocks, UMR_MPI_OP_RECV, eng,
                             0) != NULL)) {
        return e->verdict;
    }
    if ((rinfo != NULL) && (rinfo->layout != NULL) && (rinfo->size > 0)) {
        rblocks = rinfo->num_blocks * ((bytes + rinfo->size - 1) /
                                       rinfo->size);
        density = (rinfo->extent > 0) ?
                  (double)rinfo->size / (double)rinfo->extent : 1.0;
    }
    verdict = umr_mpi_choice_prefer_recv(bytes, sblocks, rblocks, density,
                                         eng, eng == UMR_MPI_COST_SW,
                                         reconnect, umr_mpi_choice.mode) ?
              UMR_MPI_ZCOPY : UMR_MPI_PASS;
    UMR_MPI_VERBOSE(20, "receive of %zu bytes from rank %d (%zu into %zu "
                    "blocks): %s", bytes, peer->world_rank, sblocks, rblocks,
                    (verdict == UMR_MPI_PASS) ? "declined" : "zero-copy");
    if (reconnect) {
        return verdict;
    }
    return umr_mpi_choice_store(e, rkey, bytes, 0, sblocks, UMR_MPI_OP_RECV,
                                eng, 0, verdict);
}

/* ---- one-sided -------------------------------------------------------- */

int umr_mpi_choice_osc(const char *osc_name, size_t sw_max_block,
                       int packed, size_t packed_max_block)
{
    umr_mpi_choice_osc_t *c;
    char path[512], err[512];
    int i, rc;

    for (i = 0; i < umr_mpi_choice.nosc; ++i) {
        c = &umr_mpi_choice.osc[i];
        if (!strcmp(c->name, osc_name) && (c->sw_max_block == sw_max_block) &&
            (c->packed == packed) &&
            (c->packed_max_block == packed_max_block)) {
            return i;
        }
    }
    if (umr_mpi_choice.nosc == UMR_MPI_CHOICE_OSCS) {
        return -1;
    }
    c = &umr_mpi_choice.osc[umr_mpi_choice.nosc];
    snprintf(c->name, sizeof(c->name), "%s", osc_name);
    c->sw_max_block     = sw_max_block;
    c->packed           = packed;
    c->packed_max_block = packed_max_block;
    umr_mpi_choice_path(path, sizeof(path));
    rc = umr_mpi_cost_load_osc(&c->cost, path, NULL, osc_name, err,
                               sizeof(err));
    c->measured = (rc == 0) && c->cost.osc[UMR_MPI_COST_LOCAL].measured;
    if (rc < 0) {
        UMR_MPI_RMA_VERBOSE(1, "costs file rejected (%s): built-in rule", err);
    } else if (rc > 0) {
        UMR_MPI_RMA_VERBOSE(5, "no costs file %s: built-in rule (blocks up to "
                            "%zu B on the sw engine)", path, sw_max_block);
    } else if (!c->measured) {
        UMR_MPI_RMA_VERBOSE(5, "costs file %s has no osc.%s figures: built-in "
                            "rule (blocks up to %zu B on the sw engine)", path,
                            osc_name, sw_max_block);
    } else {
        UMR_MPI_RMA_VERBOSE(5, "costs for osc/%s from %s", osc_name, path);
    }
    return umr_mpi_choice.nosc++;
}

/* The built-in rule: on the sw engine, by the smaller of the two sides'
 * average contiguous blocks (`mean`): packed up to packed_max_block
 * (`packed`: the file has no packed figures), zero-copy up to sw_max_block,
 * larger ones through the wrapped module; on mlx5 zero-copy. -1: the costs
 * decide (`zcopy_rule` 0). */
static int umr_mpi_choice_rma_builtin(const umr_mpi_choice_osc_t *c,
                                      const umr_mpi_peer_t *peer, size_t mean,
                                      int packed, int zcopy_rule)
{
    if (!peer->rail->is_sw) {
        return UMR_MPI_ZCOPY;
    }
    if (packed && (c != NULL) && c->packed && (mean <= c->packed_max_block)) {
        return UMR_MPI_PACKED;
    }
    if (!zcopy_rule) {
        return -1;
    }
    return ((c == NULL) || (c->sw_max_block == 0) ||
            (mean <= c->sw_max_block)) ? UMR_MPI_ZCOPY : UMR_MPI_PASS;
}

static const char *umr_mpi_choice_rma_str(int choice)
{
    return (choice == UMR_MPI_ZCOPY)  ? "zero-copy" :
           (choice == UMR_MPI_PACKED) ? "packed" :
           "through the wrapped module";
}

/* The estimate of one put or get: UMR_MPI_ZCOPY, _PACKED or _PASS. */
static int umr_mpi_choice_rma_prefer(int op, const umr_mpi_choice_osc_t *c,
                                     size_t length,
                                     const umr_mpi_dtype_t *oinfo,
                                     size_t ocount,
                                     const umr_mpi_dtype_t *tinfo,
                                     size_t tcount,
                                     const umr_mpi_peer_t *peer)
{
    /* a contiguous type's elements make one block */
    size_t lblocks = oinfo->is_contig ? 1 : oinfo->num_blocks * ocount;
    size_t rblocks = tinfo->is_contig ? 1 : tinfo->num_blocks * tcount;
    size_t blocks  = ucs_max(lblocks, rblocks);
    size_t mean    = blocks ? length / blocks : length;
    int cop        = (op == UMR_MPI_OP_PUT) ? UMR_MPI_COST_PUT :
                                              UMR_MPI_COST_GET;
    int eng        = umr_mpi_choice_eng(peer);
    int scope      = umr_mpi_choice_scope(peer->rail->is_sw);
    double density, z, p, k = -1;
    char packed[64] = "";
    int choice;

    if ((c == NULL) || !c->measured) {
        choice = umr_mpi_choice_rma_builtin(c, peer, mean, 1, 1);
        UMR_MPI_RMA_VERBOSE(10, "%s to %d: %zu bytes, mean block %zu B: %s "
                            "(built-in rule: no osc figures, sw engine "
                            "packed up to %zu B blocks, zero-copy up to "
                            "%zu B)",
                            (op == UMR_MPI_OP_PUT) ? "put" : "get",
                            peer->world_rank, length, mean,
                            umr_mpi_choice_rma_str(choice),
                            (c != NULL) ? c->packed_max_block : 0,
                            (c != NULL) ? c->sw_max_block : 0);
        return choice;
    }
    density = (tinfo->extent > 0) ?
              (double)tinfo->size / (double)tinfo->extent : 1.0;
    z = umr_mpi_cost_rma(&c->cost, eng, cop, length, rblocks, lblocks,
                         density);
    p = umr_mpi_cost_osc(&c->cost, scope, cop, length, (double)mean);
    if (c->packed) {
        k = umr_mpi_cost_packed(&c->cost, scope, cop, length, (double)mean);
    }
    choice = (k < 0) ? umr_mpi_choice_rma_builtin(c, peer, mean, 1, 0) : -1;
    if (choice < 0) {
        choice = (p > 0) ? umr_mpi_cost_pick(p, z, k) : UMR_MPI_PASS;
    }
    if (k >= 0) {
        snprintf(packed, sizeof(packed), ", packed %.0f ns,", k);
    }
    UMR_MPI_RMA_VERBOSE(10, "%s to %d: %zu bytes, %zu target / %zu origin "
                        "blocks: zero-copy %.0f ns (%s engine)%s against "
                        "%.0f ns through osc/%s (%s, %zu B blocks): %s",
                        (op == UMR_MPI_OP_PUT) ? "put" : "get",
                        peer->world_rank, length, rblocks, lblocks, z,
                        peer->rail->is_sw ? "sw" : "mlx5", packed, p, c->name,
                        (scope == UMR_MPI_COST_LOCAL) ? "local" : "remote",
                        mean, umr_mpi_choice_rma_str(choice));
    return choice;
}

int umr_mpi_choose_rma(int op, int osc, int mode, uintptr_t okey,
                       const umr_mpi_dtype_t *oinfo, size_t ocount,
                       uintptr_t tkey, const umr_mpi_dtype_t *tinfo,
                       size_t tcount, const umr_mpi_peer_t *peer)
{
    const umr_mpi_choice_osc_t *c = (osc >= 0) ? &umr_mpi_choice.osc[osc] :
                                                 NULL;
    int eng                       = umr_mpi_choice_eng(peer);
    umr_mpi_choice_entry_t *e;

    ++umr_mpi.cnt.decided_rma;
    if (mode != UMR_MPI_ZCOPY_AUTO) {
        return (mode == UMR_MPI_ZCOPY_ON) ? UMR_MPI_ZCOPY : UMR_MPI_PASS;
    }
    e = umr_mpi_choice_slot(tkey, tcount, okey, ocount, op, eng, osc + 1);
    if (umr_mpi_choice_find(e, tkey, tcount, okey, ocount, op, eng,
                            osc + 1) != NULL) {
        return e->verdict;
    }
    return umr_mpi_choice_store(e, tkey, tcount, okey, ocount, op, eng,
                                osc + 1,
                                umr_mpi_choice_rma_prefer(op, c,
                                    oinfo->size * ocount, oinfo, ocount,
                                    tinfo, tcount, peer));
}
