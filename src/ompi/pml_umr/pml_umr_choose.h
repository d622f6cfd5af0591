/**
 * pml/umr: the one decision whether a message moves zero-copy or goes to the
 * wrapped PML unchanged. Issue 9 replaces the body of
 * mca_pml_umr_choose_zcopy() with measured per-engine costs; everything else
 * calls only this function.
 */
#ifndef MCA_PML_UMR_CHOOSE_H_
#define MCA_PML_UMR_CHOOSE_H_

#include <stddef.h>

#include "umr_mpi_dtype.h"

/* MCA parameter pml_umr_zcopy */
enum {
    MCA_PML_UMR_ZCOPY_AUTO = 0,   /* the rule below */
    MCA_PML_UMR_ZCOPY_ON   = 1,   /* every eligible message (tests) */
    MCA_PML_UMR_ZCOPY_OFF  = 2    /* never: everything passes through */
};

/* What the decision may look at about the peer. */
typedef struct mca_pml_umr_choose_peer {
    const char *engine;           /* "sw" or "mlx5" */
    int         same_host;
    const char *pml;              /* the wrapped PML: "ob1", "ucx", "cm" */
} mca_pml_umr_choose_peer_t;

/*
 * 1: move `count` elements of `dt` (packed size >= the minimum size, layout
 * not NULL) zero-copy to the peer; 0: pass through. `mode` is the MCA
 * parameter pml_umr_zcopy.
 */
int mca_pml_umr_choose_zcopy(const umr_mpi_dtype_t *dt, size_t count,
                             const mca_pml_umr_choose_peer_t *peer, int mode);

#endif
