/**
 * pml/umr: zero-copy or pass through (see pml_umr_choose.h).
 *
 * First rule, to be replaced by measured costs (issue 9): an mlx5 rail moves
 * a message zero-copy when its blocks average at least 256 B (PATTERNS.md:
 * blocks of 24 B and less are hostile to UMR, 256 B and up is where it must
 * win). The sw engine (cross-memory attach, ~0.5 us per block) loses to the
 * wrapped PML's shared-memory pipeline on this class of machine except for
 * very large blocks, so it needs 64 KiB blocks on average.
 */
#include "pml_umr_choose.h"

#include <string.h>

#define MCA_PML_UMR_CHOOSE_MLX5_BLOCK  256
#define MCA_PML_UMR_CHOOSE_SW_BLOCK    65536

int mca_pml_umr_choose_zcopy(const umr_mpi_dtype_t *dt, size_t count,
                             const mca_pml_umr_choose_peer_t *peer, int mode)
{
    size_t blocks, min_block;

    if (mode != MCA_PML_UMR_ZCOPY_AUTO) {
        return mode == MCA_PML_UMR_ZCOPY_ON;
    }
    blocks    = dt->num_blocks * count;
    min_block = strcmp(peer->engine, "sw") ? MCA_PML_UMR_CHOOSE_MLX5_BLOCK :
                                             MCA_PML_UMR_CHOOSE_SW_BLOCK;
    return (blocks > 0) && (dt->size * count / blocks >= min_block);
}
