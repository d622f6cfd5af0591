/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: the binding's progress inside MPICH's own, for MPICH over
 * UCX (ch4:ucx, Debian's build).
 *
 * A zero-copy message needs its receiver's binding to act once MPICH has
 * matched its control message (look at it, get the data, answer the
 * sender), and the sender waits for that answer. A receiver that waits
 * inside MPICH for something else (MPI_Barrier, MPI_Wait of an MPICH
 * request, a collective) runs none of the binding's calls, and MPICH calls
 * nothing of a tool from its progress: a program that works without the
 * library (MPI_Irecv; MPI_Barrier | MPI_Ssend; MPI_Barrier) would wait
 * for ever. MPICH's progress over UCX calls ucp_worker_progress at every
 * turn: the library, loaded before MPICH's libraries, defines it, calls
 * UCX's own, and then, while the binding has requests to watch or the core
 * has work in flight, runs one round of the binding's progress. Only calls
 * from MPICH itself count (UCX's own waits call ucp_worker_progress too),
 * and never inside the binding's own progress, nor in another thread than
 * the one that called MPI_Init.
 *
 * MPICH-family MPIs over another network layer (MPICH over OFI, Intel MPI,
 * MVAPICH) do not call it: there the binding progresses in its own calls
 * and in the poll function of its requests only (docs/mpich.md).
 */
#include "umr_config.h"

#include "umr_mpich.h"
#include "umr_mpich_core.h"
#include "umr_mpich_watch.h"

#include <ucp/api/ucp.h>

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>

typedef unsigned (*umr_mpich_ucp_progress_t)(ucp_worker_h worker);

static umr_mpich_ucp_progress_t umr_mpich_ucp_progress_real;
/* where MPI's library (the one that defines PMPI_Send) is mapped */
static uintptr_t umr_mpich_mpi_lo, umr_mpich_mpi_hi;

static int umr_mpich_hook_phdr(struct dl_phdr_info *info, size_t size,
                               void *arg)
{
    uintptr_t pc = (uintptr_t)arg, lo, hi;
    int i;

    for (i = 0; i < info->dlpi_phnum; ++i) {
        if (info->dlpi_phdr[i].p_type != PT_LOAD) {
            continue;
        }
        lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
        hi = lo + info->dlpi_phdr[i].p_memsz;
        if ((pc >= lo) && (pc < hi)) {
            umr_mpich_mpi_lo = lo;
            umr_mpich_mpi_hi = hi;
            return 1;
        }
    }
    return 0;
}

static void umr_mpich_hook_init(void)
{
    void *pmpi = dlsym(RTLD_DEFAULT, "PMPI_Send");

    umr_mpich_ucp_progress_real =
        (umr_mpich_ucp_progress_t)dlsym(RTLD_NEXT, "ucp_worker_progress");
    if (pmpi != NULL) {
        dl_iterate_phdr(umr_mpich_hook_phdr, pmpi);
    }
}

unsigned ucp_worker_progress(ucp_worker_h worker)
{
    uintptr_t caller = (uintptr_t)__builtin_return_address(0);
    unsigned count;

    if (ucs_unlikely(umr_mpich_ucp_progress_real == NULL)) {
        umr_mpich_hook_init();
    }
    if (umr_mpich_ucp_progress_real == NULL) {
        return 0;   /* no UCX in the process: nobody else calls this */
    }
    count = umr_mpich_ucp_progress_real(worker);
    /* (an MPICH progress thread runs it too: the binding is the main
     * thread's, below MPI_THREAD_MULTIPLE) */
    if (umr_mpich.active && (caller >= umr_mpich_mpi_lo) &&
        pthread_equal(pthread_self(), umr_mpich.thread) &&
        (caller < umr_mpich_mpi_hi) &&
        ((umr_mpich_watch_count > 0) || umr_mpich_progress_wanted)) {
        umr_mpich_progress();
    }
    return count;
}
