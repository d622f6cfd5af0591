/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core (libumr_mpi): what every MPI binding of mlx5_umr
 * shares, with no MPI implementation's header. It moves noncontiguous MPI
 * data zero-copy through the mlx5_umr UCT transport between processes
 * named by their rank in MPI_COMM_WORLD; everything an MPI does (matching,
 * requests, progress, datatypes) it asks of its binding
 * (umr_mpi_binding.h). One header per object, each using those above it in
 * this list only:
 *
 *   umr_mpi_binding.h   what a binding supplies
 *   umr_mpi_type.h      a datatype as the core knows it (summary + layout)
 *   umr_mpi_wire.h      control message and ack on the wire
 *   umr_mpi.h           this: the process's state, counters, log
 *   umr_mpi_progress.h  one progress entry: work items, events
 *   umr_mpi_devices.h   which mlx5_umr devices become rails (UCT only)
 *   umr_mpi_rail.h      the UCT module, worker and rails; the address
 *                       peers read
 *   umr_mpi_keys.h      registration cache and layout keys per rail
 *   umr_mpi_peer.h      peers by world rank: the rail that reaches each,
 *                       the endpoint, the handshake, the connection budget
 *   umr_mpi_cost.h      the cost model and its file (plain C)
 *   umr_mpi_types.h     datatypes by the binding's key: a direct-mapped
 *                       front with the pass-through verdict
 *   umr_mpi_choice.h    the decision: pass through or zero-copy, one cache
 *                       by type, count, engine and operation
 *   umr_mpi_proto.h     the zero-copy protocol of point-to-point messages,
 *                       one state machine (its diagram is there)
 *
 * A binding's life with the core:
 *   umr_mpi_init(binding)                  before anything else
 *   umr_mpi_rails_open(params)             the rails and progress; publishes
 *                                          the address
 *   umr_mpi_peers_open(max, param)         the peers, the connection budget
 *   umr_mpi_types_open(ops)                its datatypes (at first use)
 *   umr_mpi_choice_init(...)               costs and bounds
 *   umr_mpi_proto_init(xfer_ops)           point-to-point: the protocol
 *   ... messages: umr_mpi_send_start, umr_mpi_recv_defer ...
 *   umr_mpi_peers_quiesce()                MPI_Finalize starts (the MPI
 *   umr_mpi_types_close()                  still works)
 *   umr_mpi_proto_fini(), umr_mpi_peers_close(),
 *   umr_mpi_rails_release(), _close()      at its end
 */
#ifndef UMR_MPI_H_
#define UMR_MPI_H_

#include "umr_config.h"      /* UMR_TEST_HOOKS */
#include "umr_mpi_binding.h"

#include <ucs/sys/compiler_def.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Counters of the core; a binding prints and publishes them with its own
 * (Open MPI: MPI_T performance variables). */
typedef struct umr_mpi_counters {
    /* protocol, sender */
    uint64_t zcopy_sends;       /* control messages sent */
    uint64_t zcopy_bytes;
    uint64_t fallbacks;         /* sends chosen zero-copy that passed through
                                   before anything was sent (keys,
                                   connection) */
    uint64_t fallback_sends;    /* data sent as DATA after a decline */
    uint64_t acks_dropped;      /* acks that named no send waiting for that
                                   peer's ack */
    uint64_t acks_posted;       /* ack receives posted now (0 once quiesced:
                                   cancelled) */
    /* protocol, receiver */
    uint64_t zcopy_recvs;       /* gets completed */
    uint64_t declined;          /* control messages declined (cost, no
                                   layout, no rail, no connection now) */
    uint64_t fault_declines;    /* control messages declined by a fault */
    /* the decision (umr_mpi_choice.h): taken once per candidate message on
     * each side; `computed` of them from the costs, the rest from the
     * cache */
    uint64_t decided_send;
    uint64_t decided_recv;
    uint64_t decided_rma;
    uint64_t computed;
    /* peers and rails */
    uint64_t connects;          /* endpoints connected */
    uint64_t retired;           /* peers retired to pass-through */
    uint64_t conns_live;        /* peers with an endpoint now */
    uint64_t conns_max;         /* its high-water mark (<= the budget) */
    uint64_t disconnects;       /* endpoints destroyed: the least recently
                                   used idle peer, to make room, or because
                                   the peer dropped its end */
    uint64_t budget_passthrough; /* zero-copy messages passed through for
                                    want of a connection: the budget full
                                    and every connected peer busy, or a
                                    disconnect under way (sender: of
                                    fallbacks; receiver: of declined) */
    uint64_t rails_retired;     /* rails retired (every peer on them) */
    uint64_t rails_reopened;    /* retired rails whose port came back */
    /* registrations */
    uint64_t keys_live;         /* registrations alive now (0 at the end) */
    uint64_t reg_hits;          /* registration cache: region reused */
    uint64_t reg_misses;        /* region registered */
    uint64_t lkey_hits;         /* layout key reused */
    uint64_t lkey_misses;       /* layout key made */
    uint64_t keys_reclaimed;    /* idle layout keys given back because the
                                   key pool ran short (least recently used
                                   first) */
    uint64_t errors;            /* zero-copy transfers or connections that
                                   failed */
} umr_mpi_counters_t;

typedef struct umr_mpi_state {
    const umr_mpi_binding_t *b;   /* NULL until umr_mpi_init */
    int                     verbose;
    umr_mpi_counters_t      cnt;
} umr_mpi_state_t;

extern umr_mpi_state_t umr_mpi;

/* The binding of this process (kept, not copied), before anything else;
 * `verbose`: the log level the binding's parameter asks for. */
void umr_mpi_init(const umr_mpi_binding_t *b, int verbose);

/* A log line at `level` (written when umr_mpi.verbose >= level), prefixed
 * with the binding's name. */
void umr_mpi_log(const char *fmt, ...) UCS_F_PRINTF(1, 2);
#define UMR_MPI_VERBOSE(_lvl, ...) \
    UMR_MPI_VERBOSE_TO(umr_mpi_log, _lvl, __VA_ARGS__)

/* A line of a condition that may repeat: at level 1 the first time this
 * call site writes it in the process, at 20 after. */
#define UMR_MPI_VERBOSE_FIRST(...) \
    do { \
        static int _said; \
        UMR_MPI_VERBOSE(_said ? 20 : 1, __VA_ARGS__); \
        _said = 1; \
    } while (0)

/* The same for one-sided choices, prefixed with the binding's rma_name. */
void umr_mpi_log_rma(const char *fmt, ...) UCS_F_PRINTF(1, 2);
#define UMR_MPI_RMA_VERBOSE(_lvl, ...) \
    UMR_MPI_VERBOSE_TO(umr_mpi_log_rma, _lvl, __VA_ARGS__)

#define UMR_MPI_VERBOSE_TO(_log, _lvl, _fmt, ...) \
    do { \
        if (ucs_unlikely(umr_mpi.verbose >= (_lvl))) { \
            _log(_fmt, ## __VA_ARGS__); \
        } \
    } while (0)

/* A message's bytes copied, so that it may outlive the caller's buffer:
 * sent with `comp`, which frees the copy; free() it if the send fails. */
typedef struct umr_mpi_copy {
    umr_mpi_comp_t comp;
    uint64_t       data[];
} umr_mpi_copy_t;

/* A copy of `len` bytes of `data`; NULL: no memory. */
umr_mpi_copy_t *umr_mpi_copy_new(const void *data, size_t len);

/* An internal message of `len` bytes of `data` to `peer`, sent from a copy
 * (freed once sent): 0 or the binding's error. */
int umr_mpi_send_copy(int peer, umr_mpi_msg_kind_t kind, const void *data,
                      size_t len);

/* A message to the user through the binding (`topic`: its name there). */
void umr_mpi_warn(const char *topic, const char *fmt, ...) UCS_F_PRINTF(2, 3);

/* The test variant (configure.ac: UMR_TEST_HOOKS; hooks/libumr_mpi.la): points of the core's
 * zero-copy path that fail on request, as the transport fails there
 * (umr_mpi_set_faults). Other builds have none: the macro is 0. */
enum {
    UMR_MPI_FAULT_CONNECT,      /* receiver: the endpoint handshake fails */
    UMR_MPI_FAULT_KEY,          /* receiver: the receive registration */
    UMR_MPI_FAULT_MDWAIT,       /* receiver: the get's local key times out */
    UMR_MPI_FAULT_POST,         /* receiver: posting the get fails */
    UMR_MPI_FAULT_COMPLETION,   /* receiver: the get completes in error */
    UMR_MPI_FAULT_CTLSEND,      /* sender: posting the control message */
    UMR_MPI_FAULT_ACKPOST,      /* sender: posting the ack's receive */
    UMR_MPI_FAULT_NORAIL,       /* process: no rail reaches any peer */
    UMR_MPI_FAULT_NUM
};
#if UMR_TEST_HOOKS
extern unsigned umr_mpi_faults;
#  define UMR_MPI_FAULT(_point) \
    ucs_unlikely(umr_mpi_faults & (1u << (_point)))
#else
#  define UMR_MPI_FAULT(_point) 0
#endif
/* The faults to inject (bit i: point i); nothing in other builds. */
void umr_mpi_set_faults(unsigned mask);
#if UMR_TEST_HOOKS
/* The points' names, in their order: the one list a binding's test
 * parameter takes (Open MPI: pml_umr_test_fault; MPICH:
 * UMR_MPICH_TEST_FAULT). */
extern const char *const umr_mpi_fault_names[UMR_MPI_FAULT_NUM];
#define UMR_MPI_FAULT_NAMES "connect", "key", "mdwait", "post", \
                            "completion", "ctlsend", "ackpost", "norail"
/* A comma-separated list of fault names, among the `n` of `names` (the
 * core's above, or a binding's own points): 0 and its mask (bit i:
 * names[i]; "" or NULL: none), or -1 and `why` saying which is not one of
 * them and what they are. */
int umr_mpi_faults_parse(const char *spec, const char *const *names, int n,
                         unsigned *mask, char *why, size_t len);
#endif

#ifdef __cplusplus
}
#endif

#endif
