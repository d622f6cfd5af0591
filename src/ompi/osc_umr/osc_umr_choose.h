/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: zero-copy or the wrapped module, for one put/get
 * (osc_umr_zcopy=auto), from the costs file pml/umr reads
 * (pml_umr_cost_file, format common_umr_cost.h): one RMA operation through
 * the peer's engine between the origin's and the target's blocks (the
 * target key is cached: no message) against the wrapped osc component's
 * measured cost of a put/get of that mean block (osc.<component>.<scope>.*;
 * osc/rdma over btl/vader makes one process_vm_writev/readv a block).
 * The packed path (osc_umr_packed.h) is the third candidate, from the
 * file's packed.<scope>.* figures: zero-copy or packed only below
 * MCA_COMMON_UMR_COST_MARGIN of the wrapped module's time, the lower of
 * the two (mca_common_umr_cost_pick). A file without figures for the
 * wrapped component leaves the built-in rule: on the sw engine, blocks up
 * to osc_umr_packed_max_block go packed, up to osc_umr_sw_max_block
 * zero-copy, larger ones through the wrapped module; on mlx5, every
 * eligible operation zero-copy. A file without packed figures keeps the
 * packed part of that rule in front of its estimates.
 *
 * Level 5 of osc_umr_verbose says where a window's costs come from; level
 * 10 gives the estimates behind every change of the choice for a target.
 */
#ifndef MCA_OSC_UMR_CHOOSE_H_
#define MCA_OSC_UMR_CHOOSE_H_

#include "osc_umr_win.h"
#include "common_umr_cost.h"
#include "common_umr_peer.h"

#include "umr_mpi_dtype.h"

BEGIN_C_DECLS

/* The costs of the wrapped component `osc_name` for window `w` (loaded once
 * a component; w->choose_costs NULL: the built-in rule). */
void mca_osc_umr_choose_win(mca_osc_umr_win_t *w, const char *osc_name);

/* How this put/get moves: MCA_COMMON_UMR_COST_ZCOPY, _PACKED (the packed
 * path, osc_umr_packed.h) or _PASS (the wrapped module). */
int mca_osc_umr_choose(mca_osc_umr_win_t *w, mca_common_umr_peer_t *peer,
                       int target, int is_put, size_t length,
                       const umr_mpi_dtype_t *oinfo, size_t origin_count,
                       const umr_mpi_dtype_t *tinfo, size_t target_count);

END_C_DECLS

#endif
