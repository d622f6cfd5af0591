/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * A fake MPI of two processes (see umr_test_fakempi.h).
 */
#include "umr_test_fakempi.h"
#include "umr_test_time.h"

#include "umr_mpi_progress.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

namespace umr_test {

/* What goes before each message on the socket. */
struct hdr {
    uint32_t chan;
    uint32_t pad;
    uint64_t len;
};

struct fake_mpi::posted {
    int                chan;
    void               *buf;
    size_t             len;
    const umr_layout_t *layout;
    size_t             count;
    umr_mpi_comp_t     *comp;
};

fake_mpi *fake_mpi::self;

fake_mpi::fake_mpi(int rank, int fd) : m_rank(rank), m_fd(fd)
{
    self = this;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    memset(&m_b, 0, sizeof(m_b));
    m_b.name         = "fake";
    m_b.version      = "fake-mpi-1";
    m_b.world_rank   = rank;
    m_b.world_size   = 2;
    m_b.local_rank   = rank;
    m_b.local_size   = 2;
    m_b.err_truncate = ERR_TRUNCATE;
    m_b.err_other    = ERR_OTHER;
    m_b.isend        = b_isend;
    m_b.irecv        = b_irecv;
    m_b.cancel       = b_cancel;
    m_b.progress     = b_progress;
    m_b.progress_on  = b_progress_on;
    m_b.publish      = b_publish;
    m_b.lookup       = b_lookup;
    m_b.lookup_done  = nullptr;
    m_b.log          = b_log;
    m_b.warn         = b_warn;
}

fake_mpi::~fake_mpi()
{
    for (auto &l : m_posted) {
        for (posted *p : l) {
            delete p;
        }
    }
    self = nullptr;
}

int fake_mpi::send(int chan, const void *buf, size_t len, umr_mpi_comp_t *comp)
{
    hdr h = {static_cast<uint32_t>(chan), 0, len};
    frame f;

    f.bytes.resize(sizeof(h) + len);
    memcpy(f.bytes.data(), &h, sizeof(h));
    if (len > 0) {
        memcpy(f.bytes.data() + sizeof(h), buf, len);
    }
    f.off  = 0;
    f.comp = comp;
    m_out.push_back(std::move(f));
    return 0;
}

int fake_mpi::send_layout(int chan, const void *buf,
                          const umr_layout_t *layout, size_t count,
                          umr_mpi_comp_t *comp)
{
    std::vector<uint8_t> packed(umr_layout_size(layout) * count);

    if (umr_layout_pack(layout, count, buf, packed.data()) != UCS_OK) {
        return ERR_OTHER;
    }
    return send(chan, packed.data(), packed.size(), comp);
}

/* `msg` lands in `p`: copied or unpacked, truncated to what `p` holds. */
void fake_mpi::match(posted *p, std::vector<uint8_t> &msg)
{
    size_t cap = p->layout ? umr_layout_size(p->layout) * p->count : p->len;
    size_t n   = (msg.size() < cap) ? msg.size() : cap;
    umr_mpi_status_t st = {0, 0, n};

    if (p->layout != nullptr) {
        if ((n > 0) && (umr_layout_unpack_range(p->layout, p->count, p->buf,
                                                0, n, msg.data()) != UCS_OK)) {
            st.error = ERR_OTHER;
        }
    } else if (n > 0) {
        memcpy(p->buf, msg.data(), n);
    }
    if (msg.size() > cap) {
        st.error = ERR_TRUNCATE;
    }
    if (p->comp != nullptr) {
        p->comp->cb(p->comp, &st);
    }
}

int fake_mpi::recv(int chan, void *buf, size_t len, const umr_layout_t *layout,
                   size_t count, umr_mpi_comp_t *comp, umr_mpi_req_h *req_p)
{
    posted *p = new posted{chan, buf, len, layout, count, comp};

    if (req_p != nullptr) {
        *req_p = reinterpret_cast<umr_mpi_req_h>(p);
    }
    if (!m_unexpected[chan].empty()) {
        std::vector<uint8_t> msg = std::move(m_unexpected[chan].front());

        m_unexpected[chan].pop_front();
        match(p, msg);
        delete p;
        return 0;
    }
    m_posted[chan].push_back(p);
    return 0;
}

void fake_mpi::cancel(umr_mpi_req_h req)
{
    posted *p = reinterpret_cast<posted*>(req);
    umr_mpi_status_t st = {0, 1, 0};

    m_posted[p->chan].remove(p);
    if (p->comp != nullptr) {
        p->comp->cb(p->comp, &st);
    }
    delete p;
}

void fake_mpi::deliver(int chan, std::vector<uint8_t> &msg)
{
    posted *p;

    if (m_posted[chan].empty()) {
        m_unexpected[chan].push_back(std::move(msg));
        return;
    }
    p = m_posted[chan].front();
    m_posted[chan].pop_front();
    match(p, msg);
    delete p;
}

void fake_mpi::progress()
{
    uint8_t buf[65536];
    ssize_t n;
    hdr h;

    while (!m_out.empty()) {
        frame &f = m_out.front();

        n = write(m_fd, f.bytes.data() + f.off, f.bytes.size() - f.off);
        if (n <= 0) {
            break;
        }
        f.off += n;
        if (f.off < f.bytes.size()) {
            break;
        }
        umr_mpi_comp_t *comp = f.comp;
        umr_mpi_status_t st  = {0, 0, f.bytes.size() - sizeof(hdr)};

        m_out.pop_front();
        if (comp != nullptr) {
            comp->cb(comp, &st);
        }
    }
    while ((n = read(m_fd, buf, sizeof(buf))) > 0) {
        m_in.insert(m_in.end(), buf, buf + n);
    }
    while (m_in.size() >= sizeof(h)) {
        memcpy(&h, m_in.data(), sizeof(h));
        if (m_in.size() < sizeof(h) + h.len) {
            break;
        }
        std::vector<uint8_t> msg(m_in.begin() + sizeof(h),
                                 m_in.begin() + sizeof(h) + h.len);
        m_in.erase(m_in.begin(), m_in.begin() + sizeof(h) + h.len);
        deliver(h.chan, msg);
    }
}

bool fake_mpi::run_until(const std::function<bool()> &pred, double seconds)
{
    auto end = std::chrono::steady_clock::now() +
               std::chrono::duration<double>(scaled(seconds));

    while (!pred()) {
        if (std::chrono::steady_clock::now() > end) {
            return false;
        }
        progress();
        umr_mpi_progress();
    }
    return true;
}

bool fake_mpi::exchange()
{
    bool got = false;
    struct done_comp : umr_mpi_comp_t {
        bool *flag;
    } c;

    m_peer_addr.resize(m_own_addr.size());
    c.cb   = [](umr_mpi_comp_t *comp, const umr_mpi_status_t *) {
        *static_cast<done_comp*>(comp)->flag = true;
    };
    c.flag = &got;
    send(CHAN_SYNC, m_own_addr.data(), m_own_addr.size(), nullptr);
    recv(CHAN_SYNC, m_peer_addr.data(), m_peer_addr.size(), nullptr, 0, &c,
         nullptr);
    return run_until([&] { return got; });
}

bool fake_mpi::barrier()
{
    bool got = false;
    uint8_t one = 1, in;
    struct done_comp : umr_mpi_comp_t {
        bool *flag;
    } c;

    c.cb   = [](umr_mpi_comp_t *comp, const umr_mpi_status_t *) {
        *static_cast<done_comp*>(comp)->flag = true;
    };
    c.flag = &got;
    send(CHAN_SYNC, &one, 1, nullptr);
    recv(CHAN_SYNC, &in, 1, nullptr, 0, &c, nullptr);
    return run_until([&] { return got && m_out.empty(); });
}

/* ---- the binding ------------------------------------------------------ */

int fake_mpi::b_isend(const void *buf, size_t len, int peer,
                      umr_mpi_msg_kind_t kind, umr_mpi_comp_t *comp)
{
    return (peer == 1 - self->m_rank) ? self->send(kind, buf, len, comp) :
                                        ERR_OTHER;
}

int fake_mpi::b_irecv(void *buf, size_t len, int peer, umr_mpi_msg_kind_t kind,
                      umr_mpi_comp_t *comp, umr_mpi_req_h *req_p)
{
    return (peer == 1 - self->m_rank) ?
           self->recv(kind, buf, len, nullptr, 0, comp, req_p) : ERR_OTHER;
}

void fake_mpi::b_cancel(umr_mpi_req_h req)
{
    self->cancel(req);
}

void fake_mpi::b_progress()
{
    self->progress();
    umr_mpi_progress();
}

void fake_mpi::b_progress_on(int on)
{
    (void)on;   /* the tests' loops run the core's progress anyway */
}

int fake_mpi::b_publish(const void *addr, size_t len)
{
    const uint8_t *a = static_cast<const uint8_t*>(addr);

    self->m_own_addr.assign(a, a + len);
    return 0;
}

int fake_mpi::b_lookup(int peer, const void **addr, size_t *len)
{
    if ((peer != 1 - self->m_rank) || self->m_peer_addr.empty()) {
        *addr = nullptr;
        *len  = 0;
        return 0;
    }
    *addr = self->m_peer_addr.data();
    *len  = self->m_peer_addr.size();
    return 0;
}

void fake_mpi::b_log(const char *line)
{
    fprintf(stderr, "[%d] %s\n", self->m_rank, line);
}

void fake_mpi::b_warn(const char *topic, const char *text)
{
    fprintf(stderr, "[%d] %s (%s)\n", self->m_rank, text, topic);
}

} // namespace umr_test
