/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: what a message or a put/get costs, zero-copy through
 * an engine or through the wrapped MPI (its PML, its osc component), from
 * measured constants (umr_mpi_choice.h decides with them). Plain C.
 *
 * The constants come from a costs file written by contrib/umr-calibrate.sh
 * (path: the binding's parameter; Open MPI's pml_umr_cost_file). Format: one "key = value" a line,
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
#ifndef UMR_MPI_COST_H_
#define UMR_MPI_COST_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UMR_MPI_COST_VERSION      1
#define UMR_MPI_COST_MIN_LOG2     3   /* 8 B blocks */
#define UMR_MPI_COST_MAX_LOG2     16  /* 64 KiB blocks */
#define UMR_MPI_COST_NUM_BLOCKS   (UMR_MPI_COST_MAX_LOG2 - \
                                          UMR_MPI_COST_MIN_LOG2 + 1)
/* At or above this density (data bytes / span) a layout is "dense": one
 * DIVth (an integer, so that a density class is two integer operations) */
#define UMR_MPI_COST_DENSE_DIV    2
#define UMR_MPI_COST_DENSE        (1.0 / UMR_MPI_COST_DENSE_DIV)
/* Zero-copy only when its estimate is below this share of the PML's: the
 * model's error must not turn a win into a loss. */
#define UMR_MPI_COST_MARGIN       0.9

enum { UMR_MPI_COST_SW, UMR_MPI_COST_MLX5,
       UMR_MPI_COST_NUM_ENG };
enum { UMR_MPI_COST_GET, UMR_MPI_COST_PUT,
       UMR_MPI_COST_NUM_OPS };
enum { UMR_MPI_COST_DENSE_L, UMR_MPI_COST_SPARSE_L,
       UMR_MPI_COST_NUM_DENS };
enum { UMR_MPI_COST_LOCAL, UMR_MPI_COST_REMOTE,
       UMR_MPI_COST_NUM_SCOPES };

/* t = op + rentry * remote_blocks + lentry * local_blocks + byte * bytes */
typedef struct umr_mpi_cost_lin {
    double op_ns, rentry_ns, lentry_ns, byte_ns;
} umr_mpi_cost_lin_t;

typedef struct umr_mpi_cost_pml {
    int    measured;                              /* any key from the file */
    double ctrl_ns;
    double op_ns[UMR_MPI_COST_NUM_BLOCKS];    /* by log2(block) - 3 */
    double byte_ns[UMR_MPI_COST_NUM_BLOCKS];
} umr_mpi_cost_pml_t;

/* A wrapped osc module's put/get: op_ns + byte_ns * bytes, interpolated in
 * log2 of the mean block as the PML's. */
typedef struct umr_mpi_cost_osc {
    int    measured;                              /* any key from the file */
    double op_ns[UMR_MPI_COST_NUM_OPS][UMR_MPI_COST_NUM_BLOCKS];
    double byte_ns[UMR_MPI_COST_NUM_OPS][UMR_MPI_COST_NUM_BLOCKS];
} umr_mpi_cost_osc_t;

typedef struct umr_mpi_cost {
    umr_mpi_cost_lin_t eng[UMR_MPI_COST_NUM_ENG]
                              [UMR_MPI_COST_NUM_OPS]
                              [UMR_MPI_COST_NUM_DENS];
    umr_mpi_cost_pml_t pml[UMR_MPI_COST_NUM_SCOPES];
    umr_mpi_cost_osc_t osc[UMR_MPI_COST_NUM_SCOPES];
    int                    from_file;   /* 1: a file was read */
    char                   source[256]; /* the file, or "built-in defaults" */
} umr_mpi_cost_t;

/** The conservative built-in constants. */
void umr_mpi_cost_defaults(umr_mpi_cost_t *cost);

/**
 * Defaults, then the file at `path` (NULL or "": none) for the wrapped PML
 * `pml_name`. Returns 0 when the file was read, 1 when there is no such file
 * (defaults), -1 when it was rejected (defaults; `err` says which line and
 * why).
 */
int umr_mpi_cost_load(umr_mpi_cost_t *cost, const char *path,
                             const char *pml_name, char *err, size_t err_len);

/**
 * As umr_mpi_cost_load(), also reading the figures of the wrapped
 * osc component `osc_name` (NULL: none; osc.* lines are then only checked).
 */
int umr_mpi_cost_load_osc(umr_mpi_cost_t *cost,
                                 const char *path, const char *pml_name,
                                 const char *osc_name, char *err,
                                 size_t err_len);

/** ${XDG_CACHE_HOME:-$HOME/.cache}/mlx5_umr/costs-<short hostname>.conf,
 * the file contrib/umr-calibrate.sh writes by default. */
void umr_mpi_cost_default_path(char *buf, size_t len);

/** UMR_MPI_COST_SW / _MLX5 for an engine name, -1 if unknown. */
int umr_mpi_cost_engine(const char *name);

/**
 * Zero-copy: one `op` of `bytes` between `remote_blocks` and `local_blocks`
 * contiguous blocks, data covering `density` of its span, on engine `eng`,
 * plus the control message and ack through the wrapped PML (`scope`). ns.
 */
double umr_mpi_cost_zcopy(const umr_mpi_cost_t *cost, int eng,
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
double umr_mpi_cost_rma(const umr_mpi_cost_t *cost, int eng,
                               int op, size_t bytes, size_t remote_blocks,
                               size_t local_blocks, double density);

/**
 * The wrapped osc module moving one put/get (`op`) of `bytes` in blocks of
 * `mean_block` bytes (scope: the target on this host or not). ns; negative
 * when the file had no figures for that module.
 */
double umr_mpi_cost_osc(const umr_mpi_cost_t *cost, int scope,
                               int op, size_t bytes, double mean_block);

/** The wrapped PML sending `bytes` in blocks of `mean_block` bytes. ns. */
double umr_mpi_cost_pml(const umr_mpi_cost_t *cost, int scope,
                               size_t bytes, double mean_block);

/**
 * 1 when pml/umr's protocol (a control message, one get by the receiver of
 * `blocks` blocks on both sides, an ack) is expected faster than the
 * wrapped PML by the margin above; 0 otherwise. `blocks` 0 counts as one.
 */
int umr_mpi_cost_prefer_zcopy(const umr_mpi_cost_t *cost, int eng,
                                     int scope, size_t bytes, size_t blocks,
                                     double density);

#ifdef __cplusplus
}
#endif

#endif
