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
#include "umr_mpich_core.h"
#include "umr_mpich_held.h"

#include "umr_mpi.h"
#include "umr_mpi_dtype.h"
#include "umr_mpi_env.h"
#include "umr_mpi_rail.h"
#include "umr_mpi_rma.h"
#include "umr_mpi_wire.h"

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
    umr_mpich.started = 1;
    if (umr_mpich.cfg.min_size < UMR_MPI_CTL_SIZE) {
        umr_mpich.cfg.min_size = UMR_MPI_CTL_SIZE;
    }
    if (umr_mpich_core_start() != 0) {
        if (umr_mpich.cfg.verbose >= 1) {
            umr_mpich_line("no rail (UCX_TLS, UMR_MPICH_DEVICES, the UCT "
                           "module): everything passes through");
        }
        return;
    }
    umr_mpich.thread = pthread_self();
    umr_mpich.active = 1;
}

/* `mem_regs`: the rails' registrations, counted before they close */
static void umr_mpich_counters(uint64_t mem_regs)
{
    const umr_mpi_counters_t *c = &umr_mpi.cnt;
    const umr_mpi_rma_counters_t *r = &umr_mpi_rma_cnt;
    umr_mpi_dtype_stats_t ds;

    umr_mpi_dtype_cache_stats(&ds);
    umr_mpich_line("zcopy_sends %lu zcopy_recvs %lu zcopy_bytes %lu "
                   "passthrough_sends %lu connects %lu reg_hits %lu "
                   "reg_misses %lu lkey_hits %lu lkey_misses %lu keys_live %lu "
                   "errors %lu held %d fallbacks %lu decoded %lu declined %lu "
                   "fault_declines %lu fallback_sends %lu acks_dropped %lu "
                   "acks_posted %lu retired %lu conns_max %lu disconnects %lu "
                   "budget_passthrough %lu rails_retired %lu rails_reopened %lu "
                   "keys_reclaimed %lu mem_regs %lu decided_send %lu "
                   "decided_recv %lu computed %lu",
                   c->zcopy_sends, c->zcopy_recvs, c->zcopy_bytes,
                   umr_mpich.cnt.passthrough_sends, c->connects, c->reg_hits,
                   c->reg_misses, c->lkey_hits, c->lkey_misses, c->keys_live,
                   c->errors, umr_mpich_held_count, c->fallbacks,
                   ds.decoded + ds.unsupported, c->declined,
                   c->fault_declines, c->fallback_sends, c->acks_dropped,
                   c->acks_posted, c->retired, c->conns_max, c->disconnects,
                   c->budget_passthrough, c->rails_retired, c->rails_reopened,
                   c->keys_reclaimed, mem_regs,
                   c->decided_send, c->decided_recv, c->computed);
    umr_mpich_line("zcopy_puts %lu zcopy_gets %lu rma_bytes %lu "
                   "rma_passthrough %lu rma_redone %lu key_requests %lu "
                   "key_ready %lu key_refused %lu key_answers %lu "
                   "key_errors %lu keys_dropped %lu decided_rma %lu "
                   "rma_requests %lu rma_requests_later %lu",
                   r->zcopy_puts, r->zcopy_gets, r->rma_bytes,
                   r->rma_passthrough, r->rma_redone, r->key_requests,
                   r->key_ready, r->key_refused, r->key_answers,
                   r->key_errors, r->keys_dropped, c->decided_rma,
                   umr_mpich.cnt.rma_requests,
                   umr_mpich.cnt.rma_requests_later);
}

static void umr_mpich_stop(void)
{
    uint64_t mem_regs;

    if (!umr_mpich.active) {
        return;
    }
    umr_mpich.active  = 0;
    umr_mpich.p2p     = 0;
    umr_mpich.started = 0;
    mem_regs          = umr_mpi_rails_mem_regs();
    umr_mpich_core_stop();
    if (umr_mpich.cfg.verbose >= 1) {
        umr_mpich_counters(mem_regs);
    }
}

/* Before the MPI starts: the transport's UCX_MLX5_UMR_* variables read, so
 * that MPICH's UCP worker, created inside MPI_Init, does not call them
 * unused (umr_mpi_env.h). */
static void umr_mpich_claim_env(void)
{
    if (umr_mpi_ucx_tls_allows()) {
        umr_mpi_env_claim();
    }
}

int MPI_Init(int *argc, char ***argv)
{
    int rc, provided;

    umr_mpich_claim_env();
    rc = umr_mpich_next()->Init(argc, argv);

    if (rc == MPI_SUCCESS) {
        PMPI_Query_thread(&provided);
        umr_mpich_start(provided);
    }
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc;

    umr_mpich_claim_env();
    rc = umr_mpich_next()->Init_thread(argc, argv, required, provided);

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
