/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: its settings, one table of environment variables
 * (UMR_MPICH_*), parsed with UCX's value parsers. A bad value turns the
 * binding off for the job (everything passes through) after one line
 * naming the variable; an unknown UMR_MPICH_* variable gets one line
 * naming the known ones. Documented in docs/mpich.md.
 */
#ifndef UMR_MPICH_CONFIG_H_
#define UMR_MPICH_CONFIG_H_

#include <stddef.h>

#define UMR_MPICH_ENV_PREFIX "UMR_MPICH_"

typedef struct umr_mpich_config {
    int      enable;      /* 0: the job runs as without the library */
    int      zcopy;       /* UMR_MPI_ZCOPY_AUTO, _ON, _OFF */
    size_t   min_size;    /* smallest message moved zero-copy (bytes;
                             UCS_MEMUNITS_INF: none) */
    size_t   rma_min_block; /* put/get: blocks up to it go to MPICH */
    char     *cost_file;  /* measured costs ("": the host's default) */
    unsigned verbose;     /* 1: counters at MPI_Finalize */
    char     *devices;    /* the devices that become rails ("": auto) */
    char     *max_conns;  /* the budget of connected peers ("auto") */
    char     *uct_module; /* the UCT module ("": beside the library) */
    char     *test_fault; /* test builds: the core's fault points */
    unsigned fault_mask;  /* and as its mask (umr_mpi_set_faults) */
} umr_mpich_config_t;

/* Read the environment into `cfg` (defaults first). 0, or -1 with the
 * first bad variable described in `err`; `warn` (may be empty) names an
 * unknown UMR_MPICH_* variable. */
int  umr_mpich_config_read(umr_mpich_config_t *cfg, char *err, size_t err_len,
                           char *warn, size_t warn_len);
void umr_mpich_config_release(umr_mpich_config_t *cfg);

#endif
