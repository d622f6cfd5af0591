/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: start and end of the binding in a job (MPI_Init,
 * MPI_Init_thread, MPI_Finalize). The binding starts after the MPI did;
 * a process that never calls MPI_Init (MPI-4 sessions only) or runs
 * MPI_THREAD_MULTIPLE passes everything through.
 *
 * MPICH has no interface through which a tool adds MPI_T performance
 * variables (its registration is internal to libmpi): the counters are
 * printed at MPI_Finalize (UMR_MPICH_VERBOSE=1), not published as MPI_T
 * variables.
 */
#include "umr_config.h"

#include "umr_mpich.h"

#include <stdarg.h>
#include <stdio.h>

umr_mpich_t umr_mpich;

void umr_mpich_line(const char *fmt, ...)
{
    char line[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "umr_mpich: rank %d: %s\n", umr_mpich.world_rank, line);
}

/* After the MPI started with thread level `provided`. */
static void umr_mpich_start(int provided)
{
    char err[256], warn[1024];
    int bad;

    PMPI_Comm_rank(MPI_COMM_WORLD, &umr_mpich.world_rank);
    bad = umr_mpich_config_read(&umr_mpich.cfg, err, sizeof(err), warn,
                                sizeof(warn));
    if (warn[0] != '\0') {
        umr_mpich_line("%s", warn);
    }
    if (bad) {
        umr_mpich_line("%s: everything passes through", err);
        return;
    }
    if (!umr_mpich.cfg.enable) {
        return;
    }
    if (provided == MPI_THREAD_MULTIPLE) {
        if (umr_mpich.cfg.verbose >= 1) {
            umr_mpich_line("MPI_THREAD_MULTIPLE: everything passes through");
        }
        return;
    }
    umr_mpich.active = 1;
}

static void umr_mpich_stop(void)
{
    const umr_mpich_counters_t *c = &umr_mpich.cnt;

    if (!umr_mpich.active) {
        return;
    }
    if (umr_mpich.cfg.verbose >= 1) {
        umr_mpich_line("zcopy_sends 0 zcopy_recvs 0 zcopy_bytes 0 "
                       "passthrough_sends %lu", (unsigned long)c->passthrough_sends);
    }
    umr_mpich.active = 0;
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = umr_mpich_next()->Init(argc, argv), provided;

    if (rc == MPI_SUCCESS) {
        PMPI_Query_thread(&provided);
        umr_mpich_start(provided);
    }
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = umr_mpich_next()->Init_thread(argc, argv, required, provided);

    if (rc == MPI_SUCCESS) {
        umr_mpich_start(*provided);
    }
    return rc;
}

int MPI_Finalize(void)
{
    umr_mpich_stop();
    umr_mpich_config_release(&umr_mpich.cfg);
    return umr_mpich_next()->Finalize();
}
