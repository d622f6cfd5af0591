/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: what a binding supplies. The core (src/mpi/core) knows
 * no MPI: it moves data zero-copy between processes it names by their rank
 * in MPI_COMM_WORLD, and asks its binding for everything an MPI does. Two
 * bindings implement this: Open MPI's components over its PML interface
 * (src/ompi/common), and a PMPI library for MPICH-family MPIs, whose
 * requests are generalized requests driven by a poll function.
 *
 * Messages. The core sends two sorts of messages:
 *  - internal ones (kinds below), a few bytes each, between two processes:
 *    the binding carries them on a channel of its own that no user message
 *    can match (Open MPI: MPI_COMM_WORLD with negative tags through the
 *    wrapped PML; PMPI: a private duplicate of MPI_COMM_WORLD, one ordinary
 *    tag a kind). Messages of one kind between two processes are matched in
 *    the order they were sent (MPI's non-overtaking rule), which the
 *    protocol relies on;
 *  - the user's: a zero-copy message's control message goes on the user's
 *    own envelope (communicator, destination, tag, send mode), so that
 *    matching, ordering, wildcards, probes and cancel stay the MPI's; a
 *    declined message's data is handed to the MPI untouched (the user's
 *    buffer, count and datatype) on the binding's channel (kind DATA).
 *    These go through the transfer's operations (umr_mpi_xfer_ops_t,
 *    umr_mpi_proto.h).
 *
 * Every operation returns 0 or the MPI's error code (handed back to the
 * binding in a transfer's error, never interpreted by the core).
 *
 * Completions. Each operation that takes a completion (umr_mpi_comp_t)
 * calls it exactly once, with the operation's status: maybe before the
 * call that started it returns (after it has written its request handle),
 * maybe from inside the MPI's progress. There the core only records the event and queues work
 * for its progress (umr_mpi_progress.h); a binding may rely on that. The
 * binding frees its own requests; the core only cancels the receives it
 * posted (the callback then still runs, `cancelled` set unless the message
 * matched first).
 *
 * Start. Each process publishes a few bytes (its rails' addresses,
 * umr_mpi_rail.h) and reads its peers' when it first needs them (Open MPI:
 * the modex, or an allgather at window creation when the modex holds
 * nothing; PMPI: an allgather at MPI_Init).
 *
 * Threads: the core is single-threaded, like the MPI calls of a process
 * below MPI_THREAD_MULTIPLE (bindings step aside under it).
 */
#ifndef UMR_MPI_BINDING_H_
#define UMR_MPI_BINDING_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kinds of internal messages; the binding gives each its own tag. */
typedef enum {
    UMR_MPI_MSG_CONN,    /* handshake: an endpoint address (umr_mpi_peer.h) */
    UMR_MPI_MSG_READY,   /* handshake: connected back */
    UMR_MPI_MSG_DISC,    /* an endpoint was dropped (the connection budget) */
    UMR_MPI_MSG_ACK,     /* the receiver's answer (umr_mpi_wire.h) */
    UMR_MPI_MSG_DATA,    /* a declined message's data (data_send/_recv) */
    UMR_MPI_MSG_NUM
} umr_mpi_msg_kind_t;

/* A binding's request, opaque to the core. */
typedef struct umr_mpi_req *umr_mpi_req_h;

/* How an operation ended. */
typedef struct umr_mpi_status {
    int    error;       /* 0, or the MPI's error code, handed back to the
                           binding unchanged (a dead peer: an MPI error) */
    int    cancelled;   /* a receive the core cancelled before it matched */
    size_t length;      /* bytes received (the MPI's count, in bytes) */
} umr_mpi_status_t;

/* A completion: the core embeds one in the object an operation belongs to
 * (an ack slot, a peer, a transfer) and finds the object from it, so that
 * neither side allocates anything to be called back. */
typedef struct umr_mpi_comp umr_mpi_comp_t;
typedef void (*umr_mpi_comp_cb_t)(umr_mpi_comp_t *comp,
                                  const umr_mpi_status_t *status);
struct umr_mpi_comp {
    umr_mpi_comp_cb_t cb;
};

/* The process's side of the interface: one binding a process (Open MPI's
 * pml/umr and osc/umr share one, through libmca_common_umr). */
typedef struct umr_mpi_binding {
    const char *name;        /* first word of every log line ("pml_umr") */
    const char *rma_name;    /* that of the lines of one-sided choices
                                ("osc_umr"); NULL: `name` */
    const char *version;     /* what peers must run to talk to us: the MPI
                                release and anything of the binding's that
                                goes on the wire (umr_mpi_rail.h) */
    int        world_rank;   /* this process in MPI_COMM_WORLD */
    int        world_size;
    int        local_rank;   /* among the processes of this host */
    int        local_size;
    int        err_truncate; /* the MPI's MPI_ERR_TRUNCATE */
    int        err_other;    /* the MPI's MPI_ERR_OTHER */

    /* An internal message of `len` bytes to `peer` (a world rank). `buf`
     * stays the caller's until `comp` is called (the core frees it there);
     * `comp` may be NULL (then `buf` outlives the send). */
    int  (*isend)(const void *buf, size_t len, int peer,
                  umr_mpi_msg_kind_t kind, umr_mpi_comp_t *comp);
    /* The receive of the next internal message of `kind` from `peer`, into
     * `buf` (`len` bytes at most; a longer one: error set). `*req_p` (may
     * be NULL: never cancelled) is written before `comp` can be called. */
    int  (*irecv)(void *buf, size_t len, int peer, umr_mpi_msg_kind_t kind,
                  umr_mpi_comp_t *comp, umr_mpi_req_h *req_p);
    /* Cancel a receive posted by irecv whose callback has not run. */
    void (*cancel)(umr_mpi_req_h req);

    /* Drive the MPI once (the core waits: MPI_Finalize's quiesce, a
     * window's completion). Runs umr_mpi_progress() too. */
    void (*progress)(void);
    /* Call umr_mpi_progress() from the MPI's progress (on = 1) or stop
     * (on = 0): the core asks while it has work in flight. */
    void (*progress_on)(int on);

    /* Start: publish this process's address bytes / read a peer's (NULL
     * and 0 when it published none). The core copies what it reads. */
    int  (*publish)(const void *addr, size_t len);
    int  (*lookup)(int peer, const void **addr, size_t *len);
    /* Release what lookup returned (NULL: nothing to release). */
    void (*lookup_done)(const void *addr);

    /* One log line (no newline), written when the core's verbosity
     * (umr_mpi.verbose) reaches its level. */
    void (*log)(const char *line);
    /* A message to the user (the binding's help system; `topic` names it,
     * `text` is complete: one line). */
    void (*warn)(const char *topic, const char *text);
} umr_mpi_binding_t;

#ifdef __cplusplus
}
#endif

#endif
