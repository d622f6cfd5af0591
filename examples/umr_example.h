/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * umr_example: the UCT plumbing the examples share - open the mlx5_umr
 * component's md, worker, iface and one endpoint, connect it ep-to-ep to a
 * peer, post a put and wait for it, close everything.
 *
 * How the addresses reach the peer is the caller's business (a socket, MPI):
 * it is one exchange callback. Every call returns a ucs_status_t; on failure
 * umr_example_t::error names what failed, and the caller decides how to die.
 */
#ifndef UMR_EXAMPLE_H_
#define UMR_EXAMPLE_H_

#include "uct_umr.h"

#include <uct/api/uct.h>
#include <ucs/async/async.h>

#define UMR_EXAMPLE_MAX_ADDR  256   /* device and ep addresses, each */
#define UMR_EXAMPLE_MAX_RKEY  256   /* one packed rkey */

typedef struct umr_example {
    uct_component_h     component;
    uct_md_h            md;
    ucs_async_context_t *async;
    uct_worker_h        worker;
    uct_iface_h         iface;
    uct_ep_h            ep;
    size_t              rkey_size;  /* packed, <= UMR_EXAMPLE_MAX_RKEY */
    char                error[256]; /* what failed, for "<error> failed: ..." */
} umr_example_t;

/*
 * Sends `len` bytes of `mine` to the peer and receives the peer's bytes of
 * the same kind into `peer` (at most `max`). Both sides call it in the same
 * order. Returns UCS_OK or an error.
 */
typedef ucs_status_t (*umr_example_exchange_fn_t)(void *arg, const void *mine,
                                                  size_t len, void *peer,
                                                  size_t max);

/* dev NULL: the component's first device (which follows the engine). */
ucs_status_t umr_example_open(umr_example_t *ex, const char *dev);

ucs_status_t umr_example_connect(umr_example_t *ex,
                                 umr_example_exchange_fn_t exchange, void *arg);

/*
 * One put, retried while the send queue is full, then a flush; returns once
 * both completed, so the source may be reused. layout NULL: a put_zcopy of
 * the one entry `iov`; otherwise uct_umr_ep_put_layout of one `layout` at
 * iov->buffer in iov->memh (its whole packed size).
 */
ucs_status_t umr_example_put_wait(umr_example_t *ex, const uct_iov_t *iov,
                                  const umr_layout_t *layout,
                                  uint64_t remote_addr, uct_rkey_t rkey);

void umr_example_close(umr_example_t *ex);

#endif
