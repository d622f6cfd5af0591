/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: the packed path. A put or get whose blocks are too small for
 * zero-copy on the rail in use (osc_umr_choose.h) moves as one message of
 * packed bytes through the wrapped PML on the window's private
 * communicator (osc_umr_wire.h): the origin packs (a contiguous origin is
 * sent as it is), the target unpacks into the window from its progress and
 * acknowledges; a get asks, the target packs from the window and sends the
 * bytes, the origin unpacks them (a contiguous origin receives them in
 * place). Over ob1/vader a message beyond the eager size is one
 * cross-memory-attach copy: one system call an operation where zero-copy
 * makes one a block.
 *
 * Where the packed bytes go is the target's packed destination, made with
 * the layout key (osc_umr_kreq.c: the same range check, one decoded
 * layout; the answer's `handle`): a packed operation needs the key as
 * zero-copy does, and goes through the wrapped module until it is there.
 *
 * Completion is osc/umr's as for zero-copy: every synchronisation call
 * waits first for the packed operations to its targets (puts acknowledged,
 * gets' bytes unpacked), MPI_Rput/MPI_Rget requests complete with theirs.
 * The target does its part from its progress: in any MPI call that
 * progresses (a wait, a barrier, a synchronisation call, MPI_Win_free).
 * A target that never enters MPI holds its origins' flush, unlock or
 * complete until it does (as MPICH's active messages do; zero-copy needs
 * nothing of it). A put the target cannot take (no memory for its bytes) is
 * acknowledged as refused and a get answered with zero bytes: the origin
 * redoes them through the wrapped module, at the synchronisation call or,
 * with a request, from progress.
 */
#ifndef MCA_OSC_UMR_PACKED_H_
#define MCA_OSC_UMR_PACKED_H_

#include "osc_umr_win.h"
#include "osc_umr_key.h"
#include "osc_umr_rma.h"

#include "umr_mpi_dtype.h"

BEGIN_C_DECLS

/* Target: where a key's packed bytes go (made with the key). */
typedef struct mca_osc_umr_pdst {
    char         *addr;       /* the first element in the window */
    umr_layout_t *layout;     /* NULL: freed (detached) */
    size_t       count;
    size_t       len;         /* packed bytes */
    char         *att_base;   /* dynamic: the attached region */
    int          src;         /* the origin it was made for */
} mca_osc_umr_pdst_t;

/* Window state (w->pk); init/fini with the key protocol. */
int  mca_osc_umr_packed_init(mca_osc_umr_win_t *w);
void mca_osc_umr_packed_fini(mca_osc_umr_win_t *w);

/* Target: a packed destination for `src` (owns `layout` on success):
 * its handle, or MCA_OSC_UMR_KANS_NO_HANDLE. */
uint32_t mca_osc_umr_packed_dst_add(mca_osc_umr_win_t *w, int src,
                                    char *addr, char *att_base,
                                    umr_layout_t *layout, size_t count);
/* Dynamic windows: the destinations in a detached region go. */
void mca_osc_umr_packed_dst_detach(mca_osc_umr_win_t *w, const char *base);

/* Origin: start the put/get `c` of `length` bytes packed, through `key`
 * (key->handle): the operation (in flight until acknowledged or its bytes
 * are in), or NULL (nothing sent: the caller uses the wrapped module). The
 * user's MPI_Rput/MPI_Rget request is set by mca_osc_umr_packed_set_req. */
struct mca_osc_umr_pop;
struct mca_osc_umr_pop *mca_osc_umr_packed_start(mca_osc_umr_win_t *w,
                                                 mca_osc_umr_key_t *key,
                                                 const mca_osc_umr_call_t *c,
                                                 const umr_mpi_dtype_t *oinfo,
                                                 size_t length);
void mca_osc_umr_packed_set_req(struct mca_osc_umr_pop *op,
                                ompi_request_t *req);

/* Progress: both sides (headers taken, bytes unpacked, acknowledgements
 * sent and taken, operations completed). */
void mca_osc_umr_packed_progress(mca_osc_umr_win_t *w);

/* Wait until the packed operations to `target` (-1: all) are complete;
 * refused ones go to w->failed (redone by the caller). */
void mca_osc_umr_packed_wait(mca_osc_umr_win_t *w, int target);

END_C_DECLS

#endif
