/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr (pml/umr and osc/umr): what a message or a put/get
 * costs, zero-copy through an engine or through the
 * wrapped PML, from measured constants (pml_umr_choose.c decides with it).
 *
 * The constants come from a costs file written by contrib/umr-calibrate.sh
 * (path: MCA parameter pml_umr_cost_file). Format: one "key = value" a line,
 * '#' starts a comment, blank lines are ignored; values are non-negative
 * numbers, times in nanoseconds:
 *
 *   version = 1                                    required, first key
 *   engine.<eng>.<op>.<dens>.op_ns = N             per operation
 *   engine.<eng>.<op>.<dens>.rentry_ns = N         per remote contiguous block
 *   engine.<eng>.<op>.<dens>.lentry_ns = N         per local contiguous block
 *   engine.<eng>.<op>.<dens>.byte_ns = N           per byte
 *       <eng>  sw | mlx5        <op> get | put
 *       <dens> dense (the data covers at least half of its span) | sparse
 *   engine.<eng>.connect_ns = N                    a connection made at the
 *                                                  budget of connected peers:
 *                                                  the least recently used
 *                                                  peer's endpoint destroyed,
 *                                                  one created and connected
 *                                                  (mlx5: QP destroy, QP
 *                                                  create, three state
 *                                                  changes, all through the
 *                                                  device's command interface
 *                                                  the node's ranks share);
 *                                                  the handshake's two
 *                                                  messages are ctrl_ns each
 *   pml.<pml>.<scope>.ctrl_ns = N                  pml/umr's control message
 *                                                  (Z bytes) and ack through
 *                                                  the wrapped PML
 *   pml.<pml>.<scope>.ddt.<block>.op_ns = N        the wrapped PML sending a
 *   pml.<pml>.<scope>.ddt.<block>.byte_ns = N      datatype of <block>-byte
 *                                                  blocks, <block> = 8, 16,
 *                                                  .., 65536
 *       <pml>  the wrapped PML's name (ob1, ucx, ...); lines of other PMLs
 *              are skipped        <scope> local (same host) | remote
 *   osc.<osc>.<scope>.<op>.<block>.op_ns = N       the wrapped osc module
 *   osc.<osc>.<scope>.<op>.<block>.byte_ns = N     (rdma, ucx, ...) moving
 *                                                  one put/get (<op>) of
 *                                                  <block>-byte blocks
 *       <osc>  the wrapped osc component's name; lines of other components
 *              are skipped (osc/umr reads them for the component it wraps;
 *              pml/umr skips them all). Without them osc/umr keeps its
 *              built-in rule (osc_umr_sw_max_block).
 *   packed.<scope>.<op>.<block>.op_ns = N          osc/umr's packed path
 *   packed.<scope>.<op>.<block>.byte_ns = N        (the origin packs, one
 *                                                  message through the
 *                                                  wrapped PML, the target
 *                                                  unpacks and acknowledges)
 *                                                  moving one put/get of
 *                                                  <block>-byte blocks.
 *              Without them osc/umr's built-in rule decides the packed
 *              path (osc_umr_packed_max_block).
 *   host = ..., date = ..., note = ...             free text, not read
 *
 * Any other key, a malformed line or a version other than 1 rejects the
 * whole file (the error names the line) and the built-in defaults apply.
 * Keys absent from a valid file keep their built-in default. The built-in
 * defaults are conservative: with them the sw engine never wins over a
 * shared-memory PML (its measured costs on a 2-core VM are far worse than
 * ob1's pack pipeline), and the mlx5 figures are a ConnectX-class guess to be
 * replaced by a calibration on the hardware. A remote scope missing from the
 * file uses the local one.
 */
#ifndef MCA_COMMON_UMR_COST_H_
#define MCA_COMMON_UMR_COST_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MCA_COMMON_UMR_COST_VERSION      1
#define MCA_COMMON_UMR_COST_MIN_LOG2     3   /* 8 B blocks */
#define MCA_COMMON_UMR_COST_MAX_LOG2     16  /* 64 KiB blocks */
#define MCA_COMMON_UMR_COST_NUM_BLOCKS   (MCA_COMMON_UMR_COST_MAX_LOG2 - \
                                          MCA_COMMON_UMR_COST_MIN_LOG2 + 1)
/* At or above this density (data bytes / span) a layout is "dense": one
 * DIVth (an integer, so that a density class is two integer operations) */
#define MCA_COMMON_UMR_COST_DENSE_DIV    2
#define MCA_COMMON_UMR_COST_DENSE        (1.0 / MCA_COMMON_UMR_COST_DENSE_DIV)
/* Zero-copy only when its estimate is below this share of the PML's: the
 * model's error must not turn a win into a loss. */
#define MCA_COMMON_UMR_COST_MARGIN       0.9

enum { MCA_COMMON_UMR_COST_SW, MCA_COMMON_UMR_COST_MLX5,
       MCA_COMMON_UMR_COST_NUM_ENG };
enum { MCA_COMMON_UMR_COST_GET, MCA_COMMON_UMR_COST_PUT,
       MCA_COMMON_UMR_COST_NUM_OPS };
enum { MCA_COMMON_UMR_COST_DENSE_L, MCA_COMMON_UMR_COST_SPARSE_L,
       MCA_COMMON_UMR_COST_NUM_DENS };
enum { MCA_COMMON_UMR_COST_LOCAL, MCA_COMMON_UMR_COST_REMOTE,
       MCA_COMMON_UMR_COST_NUM_SCOPES };

/* t = op + rentry * remote_blocks + lentry * local_blocks + byte * bytes */
typedef struct mca_common_umr_cost_lin {
    double op_ns, rentry_ns, lentry_ns, byte_ns;
} mca_common_umr_cost_lin_t;

typedef struct mca_common_umr_cost_pml {
    int    measured;                              /* any key from the file */
    double ctrl_ns;
    double op_ns[MCA_COMMON_UMR_COST_NUM_BLOCKS];    /* by log2(block) - 3 */
    double byte_ns[MCA_COMMON_UMR_COST_NUM_BLOCKS];
} mca_common_umr_cost_pml_t;

/* A wrapped osc module's put/get: op_ns + byte_ns * bytes, interpolated in
 * log2 of the mean block as the PML's. */
typedef struct mca_common_umr_cost_osc {
    int    measured;                              /* any key from the file */
    double op_ns[MCA_COMMON_UMR_COST_NUM_OPS][MCA_COMMON_UMR_COST_NUM_BLOCKS];
    double byte_ns[MCA_COMMON_UMR_COST_NUM_OPS][MCA_COMMON_UMR_COST_NUM_BLOCKS];
} mca_common_umr_cost_osc_t;

typedef struct mca_common_umr_cost {
    mca_common_umr_cost_lin_t eng[MCA_COMMON_UMR_COST_NUM_ENG]
                              [MCA_COMMON_UMR_COST_NUM_OPS]
                              [MCA_COMMON_UMR_COST_NUM_DENS];
    mca_common_umr_cost_pml_t pml[MCA_COMMON_UMR_COST_NUM_SCOPES];
    mca_common_umr_cost_osc_t osc[MCA_COMMON_UMR_COST_NUM_SCOPES];
    mca_common_umr_cost_osc_t packed[MCA_COMMON_UMR_COST_NUM_SCOPES];
    double                    connect_ns[MCA_COMMON_UMR_COST_NUM_ENG];
    int                    from_file;   /* 1: a file was read */
    char                   source[256]; /* the file, or "built-in defaults" */
} mca_common_umr_cost_t;

/** The conservative built-in constants. */
void mca_common_umr_cost_defaults(mca_common_umr_cost_t *cost);

/**
 * Defaults, then the file at `path` (NULL or "": none) for the wrapped PML
 * `pml_name`. Returns 0 when the file was read, 1 when there is no such file
 * (defaults), -1 when it was rejected (defaults; `err` says which line and
 * why).
 */
int mca_common_umr_cost_load(mca_common_umr_cost_t *cost, const char *path,
                             const char *pml_name, char *err, size_t err_len);

/**
 * As mca_common_umr_cost_load(), also reading the figures of the wrapped
 * osc component `osc_name` (NULL: none; osc.* lines are then only checked).
 */
int mca_common_umr_cost_load_osc(mca_common_umr_cost_t *cost,
                                 const char *path, const char *pml_name,
                                 const char *osc_name, char *err,
                                 size_t err_len);

/** ${XDG_CACHE_HOME:-$HOME/.cache}/mlx5_umr/costs-<short hostname>.conf,
 * the file contrib/umr-calibrate.sh writes by default. */
void mca_common_umr_cost_default_path(char *buf, size_t len);

/** The costs file of this process: pml/umr sets the one it read (its
 * parameter pml_umr_cost_file, or the default path); osc/umr reads the
 * same (the default path when pml/umr set none). */
void mca_common_umr_cost_set_path(const char *path);
void mca_common_umr_cost_path(char *buf, size_t len);

/** MCA_COMMON_UMR_COST_SW / _MLX5 for an engine name, -1 if unknown. */
int mca_common_umr_cost_engine(const char *name);

/**
 * Zero-copy: one `op` of `bytes` between `remote_blocks` and `local_blocks`
 * contiguous blocks, data covering `density` of its span, on engine `eng`,
 * plus the control message and ack through the wrapped PML (`scope`). ns.
 */
double mca_common_umr_cost_zcopy(const mca_common_umr_cost_t *cost, int eng,
                                 int op, int scope, size_t bytes,
                                 size_t remote_blocks, size_t local_blocks,
                                 double density);

/**
 * One RMA operation `op` through engine `eng` (no control message: osc/umr's
 * target key is cached; pml/umr adds its control message): `bytes` between
 * `remote_blocks` and `local_blocks` contiguous blocks. On the sw engine a
 * local block costs what a remote one does when there are more of them
 * (cross-memory attach walks both iovec lists alike; the calibration fits
 * the local figure on layouts with as many blocks on both sides). ns.
 */
double mca_common_umr_cost_rma(const mca_common_umr_cost_t *cost, int eng,
                               int op, size_t bytes, size_t remote_blocks,
                               size_t local_blocks, double density);

/**
 * The wrapped osc module moving one put/get (`op`) of `bytes` in blocks of
 * `mean_block` bytes (scope: the target on this host or not). ns; negative
 * when the file had no figures for that module.
 */
double mca_common_umr_cost_osc(const mca_common_umr_cost_t *cost, int scope,
                               int op, size_t bytes, double mean_block);

/**
 * osc/umr's packed path moving one put/get (`op`) of `bytes` in blocks of
 * `mean_block` bytes. ns; negative when the file had no packed figures.
 */
double mca_common_umr_cost_packed(const mca_common_umr_cost_t *cost,
                                  int scope, int op, size_t bytes,
                                  double mean_block);

/* How a put/get moves (mca_common_umr_cost_pick). */
enum { MCA_COMMON_UMR_COST_PASS, MCA_COMMON_UMR_COST_ZCOPY,
       MCA_COMMON_UMR_COST_PACKED };

/**
 * The fastest of three estimates (ns) for one put/get: through the wrapped
 * module (`pass`), zero-copy, packed; a negative estimate is not a
 * candidate. Zero-copy or packed only below MCA_COMMON_UMR_COST_MARGIN of
 * the wrapped module's time (no `pass` estimate: the lower of the two);
 * MCA_COMMON_UMR_COST_PASS when neither is.
 */
int mca_common_umr_cost_pick(double pass, double zcopy, double packed);

/** The wrapped PML sending `bytes` in blocks of `mean_block` bytes. ns. */
double mca_common_umr_cost_pml(const mca_common_umr_cost_t *cost, int scope,
                               size_t bytes, double mean_block);

/**
 * 1 when pml/umr's protocol (a control message, one get by the receiver of
 * `blocks` blocks on both sides, an ack) is expected faster than the
 * wrapped PML by the margin above; 0 otherwise. `blocks` 0 counts as one.
 */
int mca_common_umr_cost_prefer_zcopy(const mca_common_umr_cost_t *cost, int eng,
                                     int scope, size_t bytes, size_t blocks,
                                     double density);

/**
 * A connection made for one message at the budget of connected peers
 * (another peer's endpoint goes): connect_ns of the engine and the
 * handshake's two control messages through the wrapped PML (`scope`). ns.
 */
double mca_common_umr_cost_connect(const mca_common_umr_cost_t *cost, int eng,
                                   int scope);

/**
 * As mca_common_umr_cost_prefer_zcopy, for a peer that must be connected
 * first at the budget: zero-copy only when it saves more than the
 * connection costs.
 */
int mca_common_umr_cost_prefer_zcopy_connect(const mca_common_umr_cost_t *cost,
                                             int eng, int scope, size_t bytes,
                                             size_t blocks, double density);

/**
 * The default budget of connected peers of one rank: a quarter of the
 * device's QPs (`max_qp`, 0: no limit known) and 1/MCA_COMMON_UMR_CONNS_MEM_
 * SHARE of the node's memory (`node_bytes`, 0: unknown), shared by `locals`
 * ranks, at `ep_sq_bytes` of send queue a connected peer (0: unknown). The
 * smaller of the two, at least 1; 0 when neither is known.
 */
#define MCA_COMMON_UMR_CONNS_MEM_SHARE 16
unsigned long mca_common_umr_cost_conns_budget(unsigned long max_qp,
                                               unsigned locals,
                                               unsigned long long node_bytes,
                                               unsigned long long ep_sq_bytes);

#ifdef __cplusplus
}
#endif

#endif
