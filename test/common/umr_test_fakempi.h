/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * A fake MPI of two processes for the tests of the MPI core (src/mpi/core):
 * a socketpair between them carries framed messages on numbered channels
 * (the core's internal kinds, and the user's envelope), matched in order per
 * channel as MPI matches one (communicator, tag). It implements the core's
 * binding (umr_mpi_binding.h) with nothing of an MPI: completions run from
 * its progress (or at once, for a receive of what has arrived), requests are
 * its own, a receive may be cancelled while it has not matched, and a
 * receive smaller than its message is truncated (the status says how much
 * came). Data described by a layout is packed and unpacked with the layout
 * engine, as an MPI packs a datatype.
 *
 *     umr_test::fake_mpi mpi(rank, fd);   // one a process, rank 0 or 1
 *     umr_mpi_init(mpi.binding(), 0);
 *     ... umr_mpi_rails_open(...) publishes; mpi.exchange() swaps addresses
 *     mpi.run_until([&] { return done; });   // fake and core progress
 */
#ifndef UMR_TEST_FAKEMPI_H_
#define UMR_TEST_FAKEMPI_H_

#include "umr_mpi.h"

#include <umr_layout.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <vector>

namespace umr_test {

class fake_mpi {
public:
    /* Channels: the core's internal kinds (umr_mpi_msg_kind_t), then the
     * user's envelope (one communicator and tag) and the test's own
     * coordination. */
    enum { CHAN_USER = UMR_MPI_MSG_NUM, CHAN_SYNC, CHAN_NUM };
    /* The fake MPI's error codes. */
    enum { ERR_TRUNCATE = 15, ERR_OTHER = 16 };

    fake_mpi(int rank, int fd);
    ~fake_mpi();

    fake_mpi(const fake_mpi&) = delete;
    fake_mpi &operator=(const fake_mpi&) = delete;

    const umr_mpi_binding_t *binding() const { return &m_b; }
    int rank() const { return m_rank; }

    /* Send `len` bytes on `chan` (copied now); `comp` called once written. */
    int send(int chan, const void *buf, size_t len, umr_mpi_comp_t *comp);
    /* Send `count` elements of `layout` at `buf`, packed. */
    int send_layout(int chan, const void *buf, const umr_layout_t *layout,
                    size_t count, umr_mpi_comp_t *comp);
    /* Receive the next message of `chan` into `buf` (`len` bytes, or, with
     * `layout`, `count` elements of it: unpacked). */
    int recv(int chan, void *buf, size_t len, const umr_layout_t *layout,
             size_t count, umr_mpi_comp_t *comp, umr_mpi_req_h *req_p);
    void cancel(umr_mpi_req_h req);

    /* Write what is queued, read what came, deliver it. */
    void progress();
    /* Progress (the fake's and the core's) until `pred` holds; false after
     * `seconds` (scaled by UMR_TEST_TIME_MULTIPLIER). */
    bool run_until(const std::function<bool()> &pred, double seconds = 30);

    /* Swap the published addresses with the other process (after the rails
     * are open); and wait for it at a point of the test (both call it). */
    bool exchange();
    bool barrier();

private:
    struct posted;
    struct frame {
        std::vector<uint8_t> bytes;   /* header and payload */
        size_t               off;
        umr_mpi_comp_t       *comp;
    };

    void deliver(int chan, std::vector<uint8_t> &msg);
    void match(posted *p, std::vector<uint8_t> &msg);

    static fake_mpi *self;
    static int  b_isend(const void *buf, size_t len, int peer,
                        umr_mpi_msg_kind_t kind, umr_mpi_comp_t *comp);
    static int  b_irecv(void *buf, size_t len, int peer,
                        umr_mpi_msg_kind_t kind, umr_mpi_comp_t *comp,
                        umr_mpi_req_h *req_p);
    static void b_cancel(umr_mpi_req_h req);
    static void b_progress();
    static void b_progress_on(int on);
    static int  b_publish(const void *addr, size_t len);
    static int  b_lookup(int peer, const void **addr, size_t *len);
    static void b_log(const char *line);
    static void b_warn(const char *topic, const char *text);

    int                                       m_rank;
    int                                       m_fd;
    umr_mpi_binding_t                         m_b;
    std::deque<frame>                         m_out;
    std::vector<uint8_t>                      m_in;
    std::deque<std::vector<uint8_t>>          m_unexpected[CHAN_NUM];
    std::list<posted*>                        m_posted[CHAN_NUM];
    std::vector<uint8_t>                      m_own_addr, m_peer_addr;
};

} // namespace umr_test

#endif
