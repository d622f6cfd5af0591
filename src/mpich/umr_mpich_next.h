/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: the MPI functions the binding's entry points hand calls
 * to. Each wrapped MPI_X calls the next definition of MPI_X in the
 * process, looked up with dlsym(RTLD_NEXT): another PMPI tool loaded after
 * this library (its MPI_X calls PMPI_X) or the MPI library itself, so the
 * binding stacks with other tools. The binding's own internal calls use
 * PMPI_X directly: no tool sees them.
 *
 * The table is resolved at the first call that needs it (the MPI library
 * may be loaded after this one: dlopen by a Python program); a function
 * that the MPI of the job does not have (an older MPICH-ABI release) stays
 * NULL: no program of that MPI calls it.
 */
#ifndef UMR_MPICH_NEXT_H_
#define UMR_MPICH_NEXT_H_

#include <mpi.h>
#include <ucs/sys/compiler_def.h>

/* Every MPI function the binding defines: one entry each. */
#define UMR_MPICH_CALLS(_) \
    _(Init) _(Init_thread) _(Finalize) \
    _(Send) _(Bsend) _(Ssend) _(Rsend) \
    _(Isend) _(Ibsend) _(Issend) _(Irsend) \
    _(Send_c) _(Bsend_c) _(Ssend_c) _(Rsend_c) \
    _(Isend_c) _(Ibsend_c) _(Issend_c) _(Irsend_c) \
    _(Send_init) _(Bsend_init) _(Ssend_init) _(Rsend_init) _(Recv_init) \
    _(Send_init_c) _(Bsend_init_c) _(Ssend_init_c) _(Rsend_init_c) \
    _(Recv_init_c) _(Start) _(Startall) _(Request_free) _(Cancel) \
    _(Request_get_status) _(Type_free) \
    _(Recv) _(Irecv) _(Recv_c) _(Irecv_c) \
    _(Sendrecv) _(Sendrecv_c) _(Sendrecv_replace) _(Sendrecv_replace_c) \
    _(Isendrecv) _(Isendrecv_c) _(Isendrecv_replace) \
    _(Isendrecv_replace_c) \
    _(Probe) _(Iprobe) _(Mprobe) _(Improbe) \
    _(Mrecv) _(Imrecv) _(Mrecv_c) _(Imrecv_c) \
    _(Alltoallw) _(Alltoallw_c) \
    _(Neighbor_alltoallw) _(Neighbor_alltoallw_c) \
    _(Win_create) _(Win_allocate) _(Win_free) \
    _(Win_create_dynamic) _(Win_attach) _(Win_detach) \
    _(Put) _(Get) _(Rput) _(Rget) \
    _(Win_fence) _(Win_unlock) _(Win_unlock_all) _(Win_flush) \
    _(Win_flush_all) _(Win_flush_local) _(Win_flush_local_all) \
    _(Win_complete)

typedef struct umr_mpich_next {
#define UMR_MPICH_NEXT_FIELD(_name) __typeof__(PMPI_##_name) *_name;
    UMR_MPICH_CALLS(UMR_MPICH_NEXT_FIELD)
#undef UMR_MPICH_NEXT_FIELD
    int ready;
} umr_mpich_next_t;

extern umr_mpich_next_t umr_mpich_next_tab;

void umr_mpich_next_resolve(void);

/* The table, resolved */
static inline const umr_mpich_next_t *umr_mpich_next(void)
{
    if (ucs_unlikely(!umr_mpich_next_tab.ready)) {
        umr_mpich_next_resolve();
    }
    return &umr_mpich_next_tab;
}

#endif
