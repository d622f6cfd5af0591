/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: cost model and costs file (see common_umr_cost.h).
 * Plain C, no MPI: the components log what mca_common_umr_cost_load()
 * reports.
 */
#include "common_umr_cost.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *mca_common_umr_cost_eng_names[] = { "sw", "mlx5" };
static const char *mca_common_umr_cost_op_names[]  = { "get", "put" };
static const char *mca_common_umr_cost_dens_names[] = { "dense", "sparse" };
static const char *mca_common_umr_cost_scope_names[] = { "local", "remote" };

/*
 * Built-in constants. sw: worse than anything measured on the development
 * VMs (about 1 us a remote block, 2 GB/s cross-memory attach) so that it
 * never beats the shared-memory PML below. mlx5: a ConnectX-class guess
 * (2 us an operation, ~12 GB/s, the NIC walks UMR entries at line rate).
 * Local PML: ob1 over shared memory at its best (PATTERNS.md: 1.6 GB/s at
 * 8 B blocks, up to 10 GB/s). Remote PML: a datatype pack pipeline over
 * the network at about 3 GB/s (1 GB/s at 8 B blocks).
 */
static void mca_common_umr_cost_default_pml(mca_common_umr_cost_pml_t *p,
                                            int remote)
{
    int i;

    p->measured = 0;
    p->ctrl_ns  = remote ? 5000.0 : 2000.0;
    for (i = 0; i < MCA_COMMON_UMR_COST_NUM_BLOCKS; ++i) {
        /* 8 B: 2 (local) / 1 (remote) GB/s, rising to 10 / 3 GB/s at 256 B */
        double lo = remote ? 1.0 : 0.5, hi = remote ? 0.33 : 0.1;
        double f  = (i >= 5) ? 1.0 : i / 5.0;

        p->op_ns[i]   = remote ? 3000.0 : 1000.0;
        p->byte_ns[i] = lo + (hi - lo) * f;
    }
}

void mca_common_umr_cost_defaults(mca_common_umr_cost_t *cost)
{
    static const mca_common_umr_cost_lin_t sw   = {20000.0, 1500.0, 200.0,
                                                    0.5};
    static const mca_common_umr_cost_lin_t mlx5 = {2000.0, 2.0, 2.0, 0.08};
    int op, d;

    memset(cost, 0, sizeof(*cost));
    for (op = 0; op < MCA_COMMON_UMR_COST_NUM_OPS; ++op) {
        for (d = 0; d < MCA_COMMON_UMR_COST_NUM_DENS; ++d) {
            cost->eng[MCA_COMMON_UMR_COST_SW][op][d]   = sw;
            cost->eng[MCA_COMMON_UMR_COST_MLX5][op][d] = mlx5;
        }
    }
    /* a connection at the budget: sw, an endpoint and its shared memory;
     * mlx5, a ConnectX-class guess: QP destroy, QP create (its send queue
     * pinned and mapped), three state changes, each a firmware command of
     * tens to hundreds of microseconds on a command interface the node's
     * ranks share */
    cost->connect_ns[MCA_COMMON_UMR_COST_SW]   = 50000.0;
    cost->connect_ns[MCA_COMMON_UMR_COST_MLX5] = 1000000.0;
    mca_common_umr_cost_default_pml(&cost->pml[MCA_COMMON_UMR_COST_LOCAL], 0);
    mca_common_umr_cost_default_pml(&cost->pml[MCA_COMMON_UMR_COST_REMOTE], 1);
    snprintf(cost->source, sizeof(cost->source), "built-in defaults");
}

static int mca_common_umr_cost_lookup(const char *name, const char **names,
                                      int num)
{
    int i;

    for (i = 0; i < num; ++i) {
        if (!strcmp(name, names[i])) {
            return i;
        }
    }
    return -1;
}

/* The file pml/umr read (mca_common_umr_cost_set_path). */
static char mca_common_umr_cost_file[512];

void mca_common_umr_cost_set_path(const char *path)
{
    snprintf(mca_common_umr_cost_file, sizeof(mca_common_umr_cost_file), "%s",
             (path != NULL) ? path : "");
}

void mca_common_umr_cost_path(char *buf, size_t len)
{
    if (mca_common_umr_cost_file[0] != '\0') {
        snprintf(buf, len, "%s", mca_common_umr_cost_file);
    } else {
        mca_common_umr_cost_default_path(buf, len);
    }
}

void mca_common_umr_cost_default_path(char *buf, size_t len)
{
    const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char host[256] = "localhost", *dot;

    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    if ((dot = strchr(host, '.')) != NULL) {
        *dot = '\0'; /* like hostname -s */
    }
    if ((cache != NULL) && (cache[0] != '\0')) {
        snprintf(buf, len, "%s/mlx5_umr/costs-%s.conf", cache, host);
    } else {
        snprintf(buf, len, "%s/.cache/mlx5_umr/costs-%s.conf",
                 home ? home : "", host);
    }
}

int mca_common_umr_cost_engine(const char *name)
{
    return (name == NULL) ? -1 :
           mca_common_umr_cost_lookup(name, mca_common_umr_cost_eng_names,
                                      MCA_COMMON_UMR_COST_NUM_ENG);
}

/* Splits `key` at dots into at most `max` fields (in place). */
static int mca_common_umr_cost_split(char *key, char **f, int max)
{
    int n = 0;

    for (f[n++] = key; *key != '\0'; ++key) {
        if (*key == '.') {
            if (n == max) {
                return max + 1;
            }
            *key   = '\0';
            f[n++] = key + 1;
        }
    }
    return n;
}

/* The index of a block size field ("8" .. "65536"), or -1. */
static int mca_common_umr_cost_block(const char *field)
{
    char *end;
    long blk;
    int b;

    errno = 0;
    blk   = strtol(field, &end, 10);
    for (b = 0; b < MCA_COMMON_UMR_COST_NUM_BLOCKS; ++b) {
        if ((errno == 0) && (end != field) && (*end == '\0') &&
            (blk == (1l << (b + MCA_COMMON_UMR_COST_MIN_LOG2)))) {
            return b;
        }
    }
    return -1;
}

/* 0, or -1 with `why` set: one "key = value" for `pml_name` (and the osc
 * component `osc_name`, if not NULL). */
static int mca_common_umr_cost_set(mca_common_umr_cost_t *cost, char *key,
                                   double v, const char *pml_name,
                                   const char *osc_name, int *scopes,
                                   int *oscopes, const char **why)
{
    char *f[7] = { NULL };
    int n = mca_common_umr_cost_split(key, f, 6), e, o, d, s, b;
    mca_common_umr_cost_lin_t *lin;
    mca_common_umr_cost_pml_t *p;

    if ((n == 3) && !strcmp(f[0], "engine") && !strcmp(f[2], "connect_ns")) {
        e = mca_common_umr_cost_lookup(f[1], mca_common_umr_cost_eng_names,
                                       MCA_COMMON_UMR_COST_NUM_ENG);
        if (e < 0) {
            *why = "unknown engine";
            return -1;
        }
        cost->connect_ns[e] = v;
        return 0;
    }

    if ((n == 5) && !strcmp(f[0], "engine")) {
        e = mca_common_umr_cost_lookup(f[1], mca_common_umr_cost_eng_names,
                                       MCA_COMMON_UMR_COST_NUM_ENG);
        o = mca_common_umr_cost_lookup(f[2], mca_common_umr_cost_op_names,
                                       MCA_COMMON_UMR_COST_NUM_OPS);
        d = mca_common_umr_cost_lookup(f[3], mca_common_umr_cost_dens_names,
                                       MCA_COMMON_UMR_COST_NUM_DENS);
        if ((e < 0) || (o < 0) || (d < 0)) {
            *why = "unknown engine, operation or density";
            return -1;
        }
        lin = &cost->eng[e][o][d];
        if (!strcmp(f[4], "op_ns")) {
            lin->op_ns = v;
        } else if (!strcmp(f[4], "rentry_ns")) {
            lin->rentry_ns = v;
        } else if (!strcmp(f[4], "lentry_ns")) {
            lin->lentry_ns = v;
        } else if (!strcmp(f[4], "byte_ns")) {
            lin->byte_ns = v;
        } else {
            *why = "unknown engine cost";
            return -1;
        }
        return 0;
    }

    if (((n == 4) || (n == 6)) && !strcmp(f[0], "pml")) {
        s = mca_common_umr_cost_lookup(f[2], mca_common_umr_cost_scope_names,
                                       MCA_COMMON_UMR_COST_NUM_SCOPES);
        if (s < 0) {
            *why = "unknown scope (local or remote)";
            return -1;
        }
        if ((pml_name == NULL) || strcmp(f[1], pml_name)) {
            return 0; /* another PML's figures */
        }
        p = &cost->pml[s];
        if (!p->measured) {
            p->measured = 1;
            scopes[s]   = 1;
        }
        if ((n == 4) && !strcmp(f[3], "ctrl_ns")) {
            p->ctrl_ns = v;
            return 0;
        }
        if ((n == 6) && !strcmp(f[3], "ddt")) {
            b = mca_common_umr_cost_block(f[4]);
            if (b < 0) {
                *why = "block size not a power of 2 from 8 to 65536";
                return -1;
            }
            if (!strcmp(f[5], "op_ns")) {
                p->op_ns[b] = v;
                return 0;
            }
            if (!strcmp(f[5], "byte_ns")) {
                p->byte_ns[b] = v;
                return 0;
            }
        }
        *why = "unknown pml cost";
        return -1;
    }

    if (((n == 6) && !strcmp(f[0], "osc")) ||
        ((n == 5) && !strcmp(f[0], "packed"))) {
        /* packed.<scope>...: the osc shape without a component name */
        int packed = (n == 5);
        char *g[6] = { f[0], f[1], f[2], f[3], f[4], f[5] };
        mca_common_umr_cost_osc_t *oc;

        if (packed) {
            memmove(&g[2], &f[1], 4 * sizeof(*g));
        }

        s = mca_common_umr_cost_lookup(g[2], mca_common_umr_cost_scope_names,
                                       MCA_COMMON_UMR_COST_NUM_SCOPES);
        o = mca_common_umr_cost_lookup(g[3], mca_common_umr_cost_op_names,
                                       MCA_COMMON_UMR_COST_NUM_OPS);
        if ((s < 0) || (o < 0)) {
            *why = "unknown scope (local or remote) or operation (get or put)";
            return -1;
        }
        b = mca_common_umr_cost_block(g[4]);
        if (b < 0) {
            *why = "block size not a power of 2 from 8 to 65536";
            return -1;
        }
        if (strcmp(g[5], "op_ns") && strcmp(g[5], "byte_ns")) {
            *why = packed ? "unknown packed cost" : "unknown osc cost";
            return -1;
        }
        if (packed) {
            oc = &cost->packed[s];
            oscopes[MCA_COMMON_UMR_COST_NUM_SCOPES + s] = 1;
        } else if ((osc_name == NULL) || strcmp(f[1], osc_name)) {
            return 0; /* another component's figures */
        } else {
            oc         = &cost->osc[s];
            oscopes[s] = 1;
        }
        oc->measured = 1;
        if (!strcmp(g[5], "op_ns")) {
            oc->op_ns[o][b] = v;
        } else {
            oc->byte_ns[o][b] = v;
        }
        return 0;
    }

    *why = "unknown key";
    return -1;
}

static char *mca_common_umr_cost_trim(char *s)
{
    char *e;

    while (isspace((unsigned char)*s)) {
        ++s;
    }
    for (e = s + strlen(s); (e > s) && isspace((unsigned char)e[-1]); --e) {
    }
    *e = '\0';
    return s;
}

static int mca_common_umr_cost_fail(char *err, size_t err_len, const char *fmt,
                                    ...)
{
    va_list ap;

    if ((err != NULL) && (err_len > 0)) {
        va_start(ap, fmt);
        vsnprintf(err, err_len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int mca_common_umr_cost_load(mca_common_umr_cost_t *cost, const char *path,
                             const char *pml_name, char *err, size_t err_len)
{
    return mca_common_umr_cost_load_osc(cost, path, pml_name, NULL, err,
                                        err_len);
}

int mca_common_umr_cost_load_osc(mca_common_umr_cost_t *cost,
                                 const char *path, const char *pml_name,
                                 const char *osc_name, char *err,
                                 size_t err_len)
{
    int scopes[MCA_COMMON_UMR_COST_NUM_SCOPES] = {0}, lineno = 0, version = 0;
    /* osc figures, then packed ones, per scope */
    int oscopes[2 * MCA_COMMON_UMR_COST_NUM_SCOPES] = {0};
    char line[512], *eq, *key, *val, *end, *hash;
    const char *why;
    FILE *f;
    double v;

    mca_common_umr_cost_defaults(cost);
    if (err_len > 0) {
        err[0] = '\0';
    }
    if ((path == NULL) || (path[0] == '\0')) {
        return 1;
    }
    f = fopen(path, "r");
    if (f == NULL) {
        if (errno == ENOENT) {
            return 1;
        }
        return mca_common_umr_cost_fail(err, err_len, "%s: %s", path,
                                        strerror(errno));
    }

    while (fgets(line, sizeof(line), f) != NULL) {
        ++lineno;
        if (strchr(line, '\n') == NULL && !feof(f)) {
            why = "line too long";
            goto bad;
        }
        if ((hash = strchr(line, '#')) != NULL) {
            *hash = '\0';
        }
        key = mca_common_umr_cost_trim(line);
        if (*key == '\0') {
            continue;
        }
        eq = strchr(key, '=');
        if (eq == NULL) {
            why = "expected key = value";
            goto bad;
        }
        *eq = '\0';
        key = mca_common_umr_cost_trim(key);
        val = mca_common_umr_cost_trim(eq + 1);
        if (!strcmp(key, "host") || !strcmp(key, "date") ||
            !strcmp(key, "note")) {
            continue;
        }
        errno = 0;
        v     = strtod(val, &end);
        if ((*val == '\0') || (*end != '\0') || (errno != 0) || !isfinite(v) ||
            (v < 0)) {
            why = "value is not a non-negative number";
            goto bad;
        }
        if (!strcmp(key, "version")) {
            if (v != MCA_COMMON_UMR_COST_VERSION) {
                why = "unsupported version (this build reads version 1)";
                goto bad;
            }
            version = 1;
            continue;
        }
        if (!version) {
            why = "the first key must be 'version = 1'";
            goto bad;
        }
        if (mca_common_umr_cost_set(cost, key, v, pml_name, osc_name, scopes,
                                    oscopes, &why) != 0) {
            goto bad;
        }
    }
    fclose(f);
    if (!version) {
        mca_common_umr_cost_defaults(cost);
        return mca_common_umr_cost_fail(err, err_len, "%s:%d: no 'version = 1'",
                                        path, lineno);
    }
    /* a local-only calibration: the remote PML is at least as slow */
    if (scopes[MCA_COMMON_UMR_COST_LOCAL] &&
        !scopes[MCA_COMMON_UMR_COST_REMOTE]) {
        cost->pml[MCA_COMMON_UMR_COST_REMOTE] =
            cost->pml[MCA_COMMON_UMR_COST_LOCAL];
        cost->pml[MCA_COMMON_UMR_COST_REMOTE].measured = 0;
    }
    if (oscopes[MCA_COMMON_UMR_COST_LOCAL] &&
        !oscopes[MCA_COMMON_UMR_COST_REMOTE]) {
        cost->osc[MCA_COMMON_UMR_COST_REMOTE] =
            cost->osc[MCA_COMMON_UMR_COST_LOCAL];
    }
    if (oscopes[MCA_COMMON_UMR_COST_NUM_SCOPES + MCA_COMMON_UMR_COST_LOCAL] &&
        !oscopes[MCA_COMMON_UMR_COST_NUM_SCOPES + MCA_COMMON_UMR_COST_REMOTE]) {
        cost->packed[MCA_COMMON_UMR_COST_REMOTE] =
            cost->packed[MCA_COMMON_UMR_COST_LOCAL];
    }
    cost->from_file = 1;
    snprintf(cost->source, sizeof(cost->source), "%s", path);
    return 0;

bad:
    fclose(f);
    mca_common_umr_cost_defaults(cost);
    return mca_common_umr_cost_fail(err, err_len, "%s:%d: %s", path, lineno,
                                    why);
}

double mca_common_umr_cost_zcopy(const mca_common_umr_cost_t *cost, int eng,
                                 int op, int scope, size_t bytes,
                                 size_t remote_blocks, size_t local_blocks,
                                 double density)
{
    const mca_common_umr_cost_lin_t *l;

    if ((eng < 0) || (eng >= MCA_COMMON_UMR_COST_NUM_ENG) || (op < 0) ||
        (op >= MCA_COMMON_UMR_COST_NUM_OPS) || (scope < 0) ||
        (scope >= MCA_COMMON_UMR_COST_NUM_SCOPES)) {
        return INFINITY;
    }
    l = &cost->eng[eng][op][(density >= MCA_COMMON_UMR_COST_DENSE) ?
                            MCA_COMMON_UMR_COST_DENSE_L :
                            MCA_COMMON_UMR_COST_SPARSE_L];
    return cost->pml[scope].ctrl_ns + l->op_ns +
           l->rentry_ns * (double)remote_blocks +
           l->lentry_ns * (double)local_blocks + l->byte_ns * (double)bytes;
}

/* op + byte * bytes, op and byte linear in log2(block) between the
 * measured block sizes, clamped. */
static double mca_common_umr_cost_interp(const double *op_ns,
                                         const double *byte_ns, size_t bytes,
                                         double mean_block)
{
    double x, w, op, byte;
    int i;

    x = (mean_block > 0) ? log2(mean_block) - MCA_COMMON_UMR_COST_MIN_LOG2 : 0;
    if (x <= 0) {
        op   = op_ns[0];
        byte = byte_ns[0];
    } else if (x >= MCA_COMMON_UMR_COST_NUM_BLOCKS - 1) {
        op   = op_ns[MCA_COMMON_UMR_COST_NUM_BLOCKS - 1];
        byte = byte_ns[MCA_COMMON_UMR_COST_NUM_BLOCKS - 1];
    } else {
        i    = (int)x;
        w    = x - i;
        op   = op_ns[i] + w * (op_ns[i + 1] - op_ns[i]);
        byte = byte_ns[i] + w * (byte_ns[i + 1] - byte_ns[i]);
    }
    return op + byte * (double)bytes;
}

double mca_common_umr_cost_pml(const mca_common_umr_cost_t *cost, int scope,
                               size_t bytes, double mean_block)
{
    if ((scope < 0) || (scope >= MCA_COMMON_UMR_COST_NUM_SCOPES)) {
        return 0; /* unknown: the PML always wins */
    }
    return mca_common_umr_cost_interp(cost->pml[scope].op_ns,
                                      cost->pml[scope].byte_ns, bytes,
                                      mean_block);
}

/* A put/get of the osc figures `tab` (per scope): ns, or -1 unmeasured. */
static double mca_common_umr_cost_rma_tab(const mca_common_umr_cost_osc_t *tab,
                                          int scope, int op, size_t bytes,
                                          double mean_block)
{
    if ((scope < 0) || (scope >= MCA_COMMON_UMR_COST_NUM_SCOPES) ||
        (op < 0) || (op >= MCA_COMMON_UMR_COST_NUM_OPS) ||
        !tab[scope].measured) {
        return -1;
    }
    return mca_common_umr_cost_interp(tab[scope].op_ns[op],
                                      tab[scope].byte_ns[op], bytes,
                                      mean_block);
}

double mca_common_umr_cost_osc(const mca_common_umr_cost_t *cost, int scope,
                               int op, size_t bytes, double mean_block)
{
    return mca_common_umr_cost_rma_tab(cost->osc, scope, op, bytes,
                                       mean_block);
}

double mca_common_umr_cost_packed(const mca_common_umr_cost_t *cost,
                                  int scope, int op, size_t bytes,
                                  double mean_block)
{
    return mca_common_umr_cost_rma_tab(cost->packed, scope, op, bytes,
                                       mean_block);
}

int mca_common_umr_cost_pick(double pass, double zcopy, double packed)
{
    double limit = (pass >= 0) ? MCA_COMMON_UMR_COST_MARGIN * pass : INFINITY;
    int z = (zcopy >= 0) && (zcopy < limit);
    int k = (packed >= 0) && (packed < limit);

    if (z && (!k || (zcopy <= packed))) {
        return MCA_COMMON_UMR_COST_ZCOPY;
    }
    return k ? MCA_COMMON_UMR_COST_PACKED : MCA_COMMON_UMR_COST_PASS;
}

double mca_common_umr_cost_rma(const mca_common_umr_cost_t *cost, int eng,
                               int op, size_t bytes, size_t remote_blocks,
                               size_t local_blocks, double density)
{
    const mca_common_umr_cost_lin_t *l;
    double t;

    if ((eng < 0) || (eng >= MCA_COMMON_UMR_COST_NUM_ENG) || (op < 0) ||
        (op >= MCA_COMMON_UMR_COST_NUM_OPS)) {
        return INFINITY;
    }
    l = &cost->eng[eng][op][(density >= MCA_COMMON_UMR_COST_DENSE) ?
                            MCA_COMMON_UMR_COST_DENSE_L :
                            MCA_COMMON_UMR_COST_SPARSE_L];
    t = l->op_ns + l->rentry_ns * (double)remote_blocks +
        l->lentry_ns * (double)local_blocks + l->byte_ns * (double)bytes;
    if ((eng == MCA_COMMON_UMR_COST_SW) && (local_blocks > remote_blocks) &&
        (l->rentry_ns > l->lentry_ns)) {
        t += (l->rentry_ns - l->lentry_ns) *
             (double)(local_blocks - remote_blocks);
    }
    return t;
}

int mca_common_umr_cost_prefer_zcopy(const mca_common_umr_cost_t *cost, int eng,
                                     int scope, size_t bytes, size_t blocks,
                                     double density)
{
    double z, p;

    if (blocks == 0) {
        blocks = 1;
    }
    z = mca_common_umr_cost_zcopy(cost, eng, MCA_COMMON_UMR_COST_GET, scope,
                                  bytes, blocks, blocks, density);
    p = mca_common_umr_cost_pml(cost, scope, bytes, (double)bytes / blocks);
    return z < MCA_COMMON_UMR_COST_MARGIN * p;
}

double mca_common_umr_cost_connect(const mca_common_umr_cost_t *cost, int eng,
                                   int scope)
{
    if ((eng < 0) || (eng >= MCA_COMMON_UMR_COST_NUM_ENG) || (scope < 0) ||
        (scope >= MCA_COMMON_UMR_COST_NUM_SCOPES)) {
        return INFINITY;
    }
    return cost->connect_ns[eng] + 2.0 * cost->pml[scope].ctrl_ns;
}

int mca_common_umr_cost_prefer_zcopy_connect(const mca_common_umr_cost_t *cost,
                                             int eng, int scope, size_t bytes,
                                             size_t blocks, double density)
{
    double z, p;

    if (blocks == 0) {
        blocks = 1;
    }
    z = mca_common_umr_cost_zcopy(cost, eng, MCA_COMMON_UMR_COST_GET, scope,
                                  bytes, blocks, blocks, density) +
        mca_common_umr_cost_connect(cost, eng, scope);
    p = mca_common_umr_cost_pml(cost, scope, bytes, (double)bytes / blocks);
    return z < MCA_COMMON_UMR_COST_MARGIN * p;
}

unsigned long mca_common_umr_cost_conns_budget(unsigned long max_qp,
                                               unsigned locals,
                                               unsigned long long node_bytes,
                                               unsigned long long ep_sq_bytes)
{
    unsigned long long by_qp = 0, by_mem = 0, b;

    locals = (locals > 0) ? locals : 1;
    if (max_qp > 0) {
        by_qp = max_qp / 4 / locals;
        by_qp = (by_qp > 0) ? by_qp : 1;
    }
    if ((node_bytes > 0) && (ep_sq_bytes > 0)) {
        by_mem = node_bytes / MCA_COMMON_UMR_CONNS_MEM_SHARE / locals /
                 ep_sq_bytes;
        by_mem = (by_mem > 0) ? by_mem : 1;
    }
    b = (by_qp == 0) ? by_mem : (by_mem == 0) ? by_qp :
        ((by_qp < by_mem) ? by_qp : by_mem);
    return (b > (unsigned long long)ULONG_MAX) ? ULONG_MAX : (unsigned long)b;
}
