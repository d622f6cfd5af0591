/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr: the one decision whether a message moves zero-copy or goes to the
 * wrapped PML unchanged, from measured per-engine and per-PML costs
 * (common_umr_cost.h; contrib/umr-calibrate.sh writes them). Everything else
 * calls only mca_pml_umr_choose_zcopy().
 */
#ifndef MCA_PML_UMR_CHOOSE_H_
#define MCA_PML_UMR_CHOOSE_H_

#include <stddef.h>

#include "common_umr_cost.h"
#include "umr_mpi_dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* MCA parameter pml_umr_zcopy */
enum {
    MCA_PML_UMR_ZCOPY_AUTO = 0,   /* from the measured costs */
    MCA_PML_UMR_ZCOPY_ON   = 1,   /* every eligible message (tests) */
    MCA_PML_UMR_ZCOPY_OFF  = 2    /* never: everything passes through */
};

/* What the decision may look at about the peer. */
typedef struct mca_pml_umr_choose_peer {
    const char *engine;           /* "sw" or "mlx5" */
    int         same_host;
    const char *pml;              /* the wrapped PML: "ob1", "ucx", "cm" */
    int         reconnect;        /* the message must connect the peer at a
                                     full budget first: its cost is charged
                                     (mca_common_umr_peer_reconnects) */
} mca_pml_umr_choose_peer_t;

/*
 * Load the costs for the wrapped PML `pml_name` from `path` (MCA parameter
 * pml_umr_cost_file; NULL or "": the default path below). 0: read; 1: no
 * such file; -1: rejected (`msg` names the file and line). In every case
 * `msg` says where the costs come from, and without a readable file the
 * built-in conservative constants apply. Until it is called, the built-in
 * constants apply too.
 */
int mca_pml_umr_choose_init(const char *path, const char *pml_name,
                            char *msg, size_t len);

/* ${XDG_CACHE_HOME:-$HOME/.cache}/mlx5_umr/costs-<short hostname>.conf, the
 * file contrib/umr-calibrate.sh writes by default. */
void mca_pml_umr_choose_default_path(char *buf, size_t len);

/*
 * 1: move `count` elements of `dt` (packed size >= the minimum size, layout
 * not NULL) zero-copy to the peer; 0: pass through. `mode` is the MCA
 * parameter pml_umr_zcopy. Automatic: zero-copy only when the control
 * message, one get of the message's blocks through the peer's engine and
 * the ack are expected to take less than 0.9 of the wrapped PML's time for
 * the same datatype (mca_common_umr_cost_prefer_zcopy).
 */
int mca_pml_umr_choose_zcopy(const umr_mpi_dtype_t *dt, size_t count,
                             const mca_pml_umr_choose_peer_t *peer, int mode);

/*
 * The receiver's choice, knowing both layouts: 1 to get `bytes` from the
 * sender's `sblocks` blocks into `rblocks` blocks of its own (data covering
 * `density` of the receive span), 0 to decline (the sender then sends the
 * message through the wrapped PML). Forced on: 1; off: 0. Automatic: as
 * mca_pml_umr_choose_zcopy, with the get's cost over both block counts
 * against the wrapped PML packing the sender's blocks and unpacking into
 * the receiver's (the mean of its costs at either mean block).
 */
int mca_pml_umr_choose_recv(size_t bytes, size_t sblocks, size_t rblocks,
                            double density,
                            const mca_pml_umr_choose_peer_t *peer, int mode);

/*
 * Whether a type of `size` bytes over `extent` (MPI's; 0 or less: dense)
 * is dense for the costs (its data covers at least MCA_COMMON_UMR_COST_DENSE
 * of its extent): what mca_pml_umr_choose_zcopy() computes from the decoded
 * type, and the sender from Open MPI's own size and extent before decoding.
 */
static inline int mca_pml_umr_choose_is_dense(size_t size, ptrdiff_t extent)
{
    /* size / extent >= DENSE = 1 / DENSE_DIV in integers: no division,
     * no conversion (exact for any size an MPI type can have) */
    return (extent <= 0) ||
           (MCA_COMMON_UMR_COST_DENSE_DIV * size >= (size_t)extent);
}

/* Density classes of mca_pml_umr_choose_bounds_of() */
enum {
    MCA_PML_UMR_CHOOSE_SPARSE = 0,  /* mca_pml_umr_choose_is_dense() 0 */
    MCA_PML_UMR_CHOOSE_DENSE  = 1,  /* mca_pml_umr_choose_is_dense() 1 */
    MCA_PML_UMR_CHOOSE_ANY    = 2   /* either */
};

/*
 * What a message of a type of density class `dens` (MCA_PML_UMR_CHOOSE_*,
 * which Open MPI's size and extent tell; _ANY: either) must at least have
 * for mca_pml_umr_choose_zcopy() to choose zero-copy to a peer on `engine`
 * (same host or not), under `mode`, for messages of at least `min_size`
 * bytes: `*min_bytes` packed bytes and a mean contiguous block of
 * `*min_block` bytes (SIZE_MAX / HUGE_VAL: never). So the sender passes a
 * message through from what Open MPI knows of its datatype, before any
 * decoding (pml_umr_send.c). Computed once from the costs: a mean block
 * below every block size at which zero-copy can win for some message size,
 * or fewer bytes than any winning message has, cannot win.
 */
void mca_pml_umr_choose_bounds_of(const char *engine, int same_host, int mode,
                                  size_t min_size, int dens,
                                  size_t *min_bytes, double *min_block);

#ifdef __cplusplus
}
#endif

#endif
