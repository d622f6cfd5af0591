/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * The MPI core's zero-copy protocol (src/mpi/core, umr_mpi_proto.h) between
 * two real processes, without any MPI: each test forks two processes joined
 * by a socketpair, the fake MPI of umr_test_fakempi.h, which binds the core
 * as an MPI binding does; the sw engine moves the data between them. Rank 0
 * sends one message as a binding would (its control message on the user's
 * channel), rank 1 receives it (a receive of the user's channel that got Z
 * bytes with the magic hands its transfer to the core). Each checks the
 * bytes where the receive layout says and nowhere else, the status, and
 * the core's counters; a process exits non-zero on any failure.
 */
#include "umr_test_fakempi.h"
#include "umr_test_proc.h"

#include "umr_config.h"
#include "umr_mpi_choice.h"
#include "umr_mpi_proto.h"
#include "umr_mpi_rail.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace {

using umr_test::fake_mpi;

/* A datatype as a binding gives it to the core: its key is this. */
struct test_type {
    umr_mpi_dtype_t info;
    umr_layout_t    *layout;

    test_type(size_t blocks, size_t block, ptrdiff_t stride)
    {
        umr_layout_t *bytes = nullptr;

        EXPECT_EQ(UCS_OK, umr_layout_contig(block, &bytes));
        EXPECT_EQ(UCS_OK, umr_layout_vector(blocks, 1, stride, bytes,
                                            &layout));
        umr_layout_free(bytes);
        umr_mpi_dtype_of_layout(&info, layout);
    }
    ~test_type() { umr_layout_free(layout); }

    uintptr_t key() const { return reinterpret_cast<uintptr_t>(this); }
};

/* A request of the fake binding: the core's transfer, and what the binding
 * keeps of the user's message. */
struct test_req {
    umr_mpi_xfer_t  x;
    fake_mpi        *mpi;
    test_type       *type;
    int             done;
    umr_mpi_comp_t  user;        /* the user's receive */
    int             user_done;
    umr_mpi_status_t user_st;

    static test_req *of(umr_mpi_xfer_t *x)
    {
        return reinterpret_cast<test_req*>(x);   /* x is the first member */
    }
};

int ops_ctl_send(umr_mpi_xfer_t *x, umr_mpi_comp_t *comp)
{
    return test_req::of(x)->mpi->send(fake_mpi::CHAN_USER, &x->ctl,
                                      UMR_MPI_CTL_SIZE, comp);
}

int ops_data_send(umr_mpi_xfer_t *x, umr_mpi_comp_t *comp)
{
    test_req *r = test_req::of(x);

    return r->mpi->send_layout(UMR_MPI_MSG_DATA, x->buf, r->type->layout,
                               x->count, comp);
}

int ops_data_recv(umr_mpi_xfer_t *x, umr_mpi_comp_t *comp)
{
    test_req *r = test_req::of(x);

    return r->mpi->recv(UMR_MPI_MSG_DATA, x->buf, 0, r->type->layout,
                        x->count, comp, nullptr);
}

void ops_peek(umr_mpi_xfer_t *x, void *out, size_t len)
{
    test_req *r = test_req::of(x);

    memset(out, 0, len);
    if (len > x->length) {
        len = x->length;
    }
    EXPECT_EQ(UCS_OK, umr_layout_pack_range(r->type->layout, x->count, x->buf,
                                            0, len, out));
}

void ops_complete(umr_mpi_xfer_t *x)
{
    test_req::of(x)->done = 1;
}

const umr_mpi_xfer_ops_t xops = {
    ops_ctl_send, ops_data_send, ops_data_recv, ops_peek, ops_complete
};

const umr_mpi_dtype_t *types_info(uintptr_t key)
{
    return &reinterpret_cast<test_type*>(key)->info;
}

int types_hold(uintptr_t)
{
    return 0;
}

const umr_mpi_types_ops_t tops = {types_info, types_hold};

/* A costs file in which the sw engine never wins (the built-in
 * constants): an automatic choice declines. */
const char *no_costs = "/nonexistent/mlx5_umr-costs.conf";

/* One process of a test: the fake MPI and the core over the sw engine. */
class side {
public:
    side(int rank, int fd, int mode) : mpi(rank, fd)
    {
        umr_mpi_rails_params_t rp = {};
        char msg[512];

        setenv("UCX_MLX5_UMR_ENGINE", "sw", 1);
        umr_mpi_init(mpi.binding(), getenv("UMR_TEST_CORE_VERBOSE") ?
                                    atoi(getenv("UMR_TEST_CORE_VERBOSE")) : 0);
        rp.uct_module    = UMR_TEST_UCT_MODULE;
        rp.devices       = "sw";
        rp.devices_param = "devices";
        rp.flags         = UMR_MPI_ADDR_P2P;
        up = (umr_mpi_rails_open(&rp) == UCS_OK) && mpi.exchange();
        EXPECT_TRUE(up) << "rank " << rank << ": rails";
        if (!up) {
            return;
        }
        EXPECT_EQ(UCS_OK, umr_mpi_peers_open(-1, "max_conns"));
        umr_mpi_types_open(&tops);
        umr_mpi_choice_init(mode, UMR_MPI_CTL_SIZE, no_costs, "fake", msg,
                            sizeof(msg));
        umr_mpi_proto_init(&xops);
    }

    ~side()
    {
        if (!up) {
            return;
        }
        EXPECT_TRUE(mpi.barrier());
        umr_mpi_peers_quiesce();
        umr_mpi_types_close();
        umr_mpi_proto_fini();
        umr_mpi_peers_close();
        umr_mpi_rails_release();
        EXPECT_EQ(0u, umr_mpi.cnt.keys_live) << "rank " << mpi.rank();
        umr_mpi_rails_close();
    }

    /* Send `count` elements of `t` at `buf` as a binding sends one
     * zero-copy message: its decision (a held verdict aside), then the
     * protocol; true once it completed. `escape`: Z bytes of user data
     * with the magic, sent without a key. */
    bool send(test_req &r, test_type *t, void *buf, size_t count, int tag,
              bool escape = false)
    {
        umr_mpi_type_slot_t *slot = umr_mpi_types_lookup(t->key());

        init_req(r, t, buf, count, tag);
        r.x.peer   = escape ? umr_mpi_peer_proto(1) : umr_mpi_peer_get(1);
        r.x.info   = escape ? nullptr : &t->info;
        r.x.escape = escape;
        r.x.length = t->info.size * count;
        EXPECT_NE(nullptr, r.x.peer);
        if (!escape && (umr_mpi_choose_send(slot, count, r.x.peer) !=
                        UMR_MPI_ZCOPY)) {
            ADD_FAILURE() << "the sender's decision: pass through";
            return false;
        }
        EXPECT_EQ(UMR_MPI_SENT, umr_mpi_send_start(&r.x));
        return mpi.run_until([&] { return r.done != 0; });
    }

    /* Receive the next message of the user's channel into `count`
     * elements of `t` at `buf`, as a binding does: a message of Z bytes
     * that starts with the magic goes to the core. */
    bool recv(test_req &r, test_type *t, void *buf, size_t count)
    {
        uint64_t head[2];

        init_req(r, t, buf, count, 0);
        r.user.cb = [](umr_mpi_comp_t *c, const umr_mpi_status_t *st) {
            test_req *q = reinterpret_cast<test_req*>(
                    reinterpret_cast<char*>(c) - offsetof(test_req, user));
            q->user_st   = *st;
            q->user_done = 1;
        };
        mpi.recv(fake_mpi::CHAN_USER, buf, 0, t->layout, count, &r.user,
                 nullptr);
        if (!mpi.run_until([&] { return r.user_done != 0; })) {
            return false;
        }
        r.x.length = t->info.size * count;
        r.x.rank   = 0;
        ops_peek(&r.x, head, sizeof(head));
        if ((r.user_st.length != UMR_MPI_CTL_SIZE) ||
            !umr_mpi_wire_is_magic(head)) {
            return true;   /* not a control message: the MPI's own */
        }
        umr_mpi_recv_start(&r.x);
        return mpi.run_until([&] { return r.done != 0; });
    }

    fake_mpi mpi;
    bool     up;

private:
    void init_req(test_req &r, test_type *t, void *buf, size_t count,
                  int tag)
    {
        memset(&r, 0, sizeof(r));
        r.mpi     = &mpi;
        r.type    = t;
        r.x.buf   = buf;
        r.x.count = count;
        r.x.key   = t->key();
        r.x.ctx   = 1;
        r.x.tag   = tag;
    }
};

/* `n` bytes of a pattern of `seed`. */
std::vector<uint8_t> pattern(size_t n, unsigned seed)
{
    std::vector<uint8_t> v(n);

    for (size_t i = 0; i < n; ++i) {
        v[i] = static_cast<uint8_t>(i * 131 + seed * 7 + (i >> 9));
    }
    return v;
}

/* The receive buffer holds `stream` where `t` says (its first bytes) and
 * `fill` everywhere else. */
::testing::AssertionResult holds(const test_type &t, size_t count,
                                 const std::vector<uint8_t> &buf,
                                 const std::vector<uint8_t> &stream,
                                 uint8_t fill)
{
    size_t len = t.info.size * count;
    std::vector<uint8_t> want(buf.size(), fill), ones(len, 0xff);
    std::vector<uint8_t> mask(buf.size(), 0);
    size_t n = (stream.size() < len) ? stream.size() : len;

    umr_layout_unpack_range(t.layout, count, want.data(), 0, n,
                            stream.data());
    umr_layout_unpack_range(t.layout, count, mask.data(), 0, n, ones.data());
    for (size_t i = 0; i < buf.size(); ++i) {
        if (buf[i] != want[i]) {
            return ::testing::AssertionFailure()
                   << "byte " << i << " (" << (mask[i] ? "in" : "outside")
                   << " the layout): " << int(buf[i]) << ", not "
                   << int(want[i]);
        }
    }
    return ::testing::AssertionSuccess();
}

class mpi_core : public ::testing::Test {
protected:
    typedef std::function<int(int fd)> body_t;

    /* Rank 0 runs `s`, rank 1 `r`, each in a process of its own. */
    void run(const body_t &s, const body_t &r)
    {
        int sv[2];

        ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
        umr_test::proc p0([&](umr_test::proc&) { close(sv[1]); return s(sv[0]); });
        umr_test::proc p1([&](umr_test::proc&) { close(sv[0]); return r(sv[1]); });
        close(sv[0]);
        close(sv[1]);
        EXPECT_TRUE(p0.join(umr_test::proc::scaled(120))) << "rank 0";
        EXPECT_TRUE(p1.join(umr_test::proc::scaled(120))) << "rank 1";
    }
};

/* A vector sent zero-copy into another vector of the same bytes: one get,
 * every byte where the receive layout says, nothing elsewhere, and each
 * side decided once. */
TEST_F(mpi_core, zcopy_vector)
{
    run([](int fd) {
        side s(0, fd, UMR_MPI_ZCOPY_ON);
        test_type t(1024, 8, 32);
        std::vector<uint8_t> buf = pattern(1024 * 32, 1);
        test_req r;

        EXPECT_TRUE(s.send(r, &t, buf.data(), 1, 7));
        EXPECT_EQ(0, r.x.error);
        EXPECT_EQ(1u, umr_mpi.cnt.zcopy_sends);
        EXPECT_EQ(1u, umr_mpi.cnt.decided_send);
        EXPECT_EQ(0u, umr_mpi.cnt.fallback_sends);
        return 0;
    }, [](int fd) {
        side s(1, fd, UMR_MPI_ZCOPY_ON);
        test_type src(1024, 8, 32), t(512, 16, 48);
        std::vector<uint8_t> buf(512 * 48, 0xee), stream(8192);
        test_req r;

        umr_layout_pack(src.layout, 1, pattern(1024 * 32, 1).data(),
                        stream.data());
        EXPECT_TRUE(s.recv(r, &t, buf.data(), 1));
        EXPECT_EQ(UMR_MPI_X_DONE, r.x.state);
        EXPECT_EQ(0, r.x.error);
        EXPECT_EQ(8192u, r.x.moved);
        EXPECT_TRUE(holds(t, 1, buf, stream, 0xee));
        EXPECT_EQ(1u, umr_mpi.cnt.zcopy_recvs);
        EXPECT_EQ(1u, umr_mpi.cnt.decided_recv);
        EXPECT_EQ(0u, umr_mpi.cnt.declined);
        return 0;
    });
}

/* The receiver, knowing both layouts, declines (built-in costs: the sw
 * engine never wins): the data comes as DATA, untouched, and the sender
 * remembers the verdict for the type and count. */
TEST_F(mpi_core, decline_by_cost)
{
    run([](int fd) {
        side s(0, fd, UMR_MPI_ZCOPY_ON);
        test_type t(1024, 8, 32);
        std::vector<uint8_t> buf = pattern(1024 * 32, 2);
        test_req r;

        EXPECT_TRUE(s.send(r, &t, buf.data(), 1, 7));
        EXPECT_EQ(0, r.x.error);
        EXPECT_EQ(1u, umr_mpi.cnt.fallback_sends);
        /* every engine of the rails (sw) passes: the type's verdict */
        EXPECT_TRUE(umr_mpi_types_passes(t.key(), 1));
        EXPECT_FALSE(umr_mpi_types_passes(t.key(), 2));
        return 0;
    }, [](int fd) {
        side s(1, fd, UMR_MPI_ZCOPY_AUTO);
        test_type src(1024, 8, 32), t(1024, 8, 16);
        std::vector<uint8_t> buf(1024 * 16, 0x5a), stream(8192);
        test_req r;

        umr_layout_pack(src.layout, 1, pattern(1024 * 32, 2).data(),
                        stream.data());
        EXPECT_TRUE(s.recv(r, &t, buf.data(), 1));
        EXPECT_EQ(UMR_MPI_X_DONE, r.x.state);
        EXPECT_EQ(0, r.x.error);
        EXPECT_EQ(8192u, r.x.moved);
        EXPECT_TRUE(holds(t, 1, buf, stream, 0x5a));
        EXPECT_EQ(1u, umr_mpi.cnt.declined);
        EXPECT_EQ(0u, umr_mpi.cnt.zcopy_recvs);
        EXPECT_EQ(0u, umr_mpi.cnt.retired);
        return 0;
    });
}

/* An escape (Z bytes of user data that start with the magic) goes as a
 * control message without a key, which the receiver declines: the data
 * follows as DATA, byte for byte. */
TEST_F(mpi_core, escape_goes_keyless)
{
    run([](int fd) {
        side s(0, fd, UMR_MPI_ZCOPY_ON);
        test_type t(UMR_MPI_CTL_SIZE / 8, 8, 8);
        std::vector<uint8_t> buf = pattern(UMR_MPI_CTL_SIZE, 3);
        uint64_t magic[2] = {UMR_MPI_MAGIC0, UMR_MPI_MAGIC1};
        test_req r;

        memcpy(buf.data(), magic, sizeof(magic));
        EXPECT_TRUE(s.send(r, &t, buf.data(), 1, 9, true));
        EXPECT_EQ(0, r.x.error);
        EXPECT_EQ(1u, umr_mpi.cnt.fallback_sends);
        return 0;
    }, [](int fd) {
        side s(1, fd, UMR_MPI_ZCOPY_ON);
        test_type t(UMR_MPI_CTL_SIZE / 8, 8, 8);
        std::vector<uint8_t> buf(UMR_MPI_CTL_SIZE, 0), want;
        uint64_t magic[2] = {UMR_MPI_MAGIC0, UMR_MPI_MAGIC1};
        test_req r;

        want = pattern(UMR_MPI_CTL_SIZE, 3);
        memcpy(want.data(), magic, sizeof(magic));
        EXPECT_TRUE(s.recv(r, &t, buf.data(), 1));
        EXPECT_EQ(UMR_MPI_X_DONE, r.x.state);
        EXPECT_TRUE(buf == want);
        EXPECT_EQ(1u, umr_mpi.cnt.declined);
        EXPECT_EQ(0u, umr_mpi.cnt.retired);
        return 0;
    });
}

/* A receive smaller than the message: the get moves what fits, the status
 * says MPI_ERR_TRUNCATE (the MPI's) and the whole length, and the sender
 * completes without an error. */
TEST_F(mpi_core, truncated_by_the_receive)
{
    run([](int fd) {
        side s(0, fd, UMR_MPI_ZCOPY_ON);
        test_type t(1024, 8, 32);
        std::vector<uint8_t> buf = pattern(1024 * 32, 4);
        test_req r;

        EXPECT_TRUE(s.send(r, &t, buf.data(), 1, 7));
        EXPECT_EQ(0, r.x.error);
        return 0;
    }, [](int fd) {
        side s(1, fd, UMR_MPI_ZCOPY_ON);
        test_type src(1024, 8, 32), t(600, 8, 24);
        std::vector<uint8_t> buf(600 * 24, 0x33), stream(8192);
        test_req r;

        umr_layout_pack(src.layout, 1, pattern(1024 * 32, 4).data(),
                        stream.data());
        EXPECT_TRUE(s.recv(r, &t, buf.data(), 1));
        EXPECT_EQ(fake_mpi::ERR_TRUNCATE, r.x.error);
        EXPECT_EQ(8192u, r.x.moved);
        EXPECT_TRUE(holds(t, 1, buf, stream, 0x33));
        EXPECT_EQ(1u, umr_mpi.cnt.zcopy_recvs);
        return 0;
    });
}

/* A control message truncated unseen (an MPI that delivers no byte of a
 * truncated message) is answered by tag: the sender's one waiting send on
 * that communicator and tag completes. */
TEST_F(mpi_core, ack_by_tag)
{
    run([](int fd) {
        side s(0, fd, UMR_MPI_ZCOPY_ON);
        test_type t(1024, 8, 32);
        std::vector<uint8_t> buf = pattern(1024 * 32, 5);
        test_req r;

        EXPECT_TRUE(s.send(r, &t, buf.data(), 1, 42));
        EXPECT_EQ(0, r.x.error);
        EXPECT_EQ(0u, umr_mpi.cnt.acks_dropped);
        return 0;
    }, [](int fd) {
        side s(1, fd, UMR_MPI_ZCOPY_ON);
        uint8_t small[8];
        struct : umr_mpi_comp_t { int *error; } c;
        int error = 0;

        /* the control message into 8 bytes: truncated */
        c.cb    = [](umr_mpi_comp_t *p, const umr_mpi_status_t *st) {
            *static_cast<decltype(c)*>(p)->error = st->error;
        };
        c.error = &error;
        s.mpi.recv(fake_mpi::CHAN_USER, small, sizeof(small), nullptr, 0, &c,
                   nullptr);
        EXPECT_TRUE(s.mpi.run_until([&] { return error != 0; }));
        EXPECT_EQ(fake_mpi::ERR_TRUNCATE, error);
        umr_mpi_ack_truncated(umr_mpi_peer_proto(0), UMR_MPI_ACK_BY_TAG, 1,
                              42);
        return 0;
    });
}

/* Acks that name no send waiting for them (a forged number, a duplicate)
 * are dropped and counted; the real one completes the send. */
TEST_F(mpi_core, forged_acks_dropped)
{
    run([](int fd) {
        side s(0, fd, UMR_MPI_ZCOPY_ON);
        test_type t(1024, 8, 32);
        std::vector<uint8_t> buf = pattern(1024 * 32, 6);
        test_req r;

        EXPECT_TRUE(s.send(r, &t, buf.data(), 1, 7));
        EXPECT_EQ(0, r.x.error);
        EXPECT_TRUE(s.mpi.run_until([] {
            return umr_mpi.cnt.acks_dropped == 2;
        }));
        return 0;
    }, [](int fd) {
        side s(1, fd, UMR_MPI_ZCOPY_ON);
        test_type src(1024, 8, 32);
        std::vector<uint8_t> buf(1024 * 32, 0), stream(8192);
        umr_mpi_ack_t ack = {};
        test_req r;

        ack.seq = 0xdeadbeef00000010ull;
        s.mpi.send(UMR_MPI_MSG_ACK, &ack, sizeof(ack), nullptr);
        s.mpi.send(UMR_MPI_MSG_ACK, &ack, 16, nullptr);   /* malformed */
        umr_layout_pack(src.layout, 1, pattern(1024 * 32, 6).data(),
                        stream.data());
        EXPECT_TRUE(s.recv(r, &src, buf.data(), 1));
        EXPECT_TRUE(holds(src, 1, buf, stream, 0));
        return 0;
    });
}

/* A message of Z bytes without the magic is no control message: the
 * receive keeps the MPI's own status. */
TEST_F(mpi_core, plain_message_of_z_bytes)
{
    run([](int fd) {
        side s(0, fd, UMR_MPI_ZCOPY_ON);
        std::vector<uint8_t> buf = pattern(UMR_MPI_CTL_SIZE, 7);

        s.mpi.send(fake_mpi::CHAN_USER, buf.data(), buf.size(), nullptr);
        return 0;
    }, [](int fd) {
        side s(1, fd, UMR_MPI_ZCOPY_ON);
        test_type t(UMR_MPI_CTL_SIZE / 8, 8, 8);
        std::vector<uint8_t> buf(UMR_MPI_CTL_SIZE, 0);
        test_req r;

        EXPECT_TRUE(s.recv(r, &t, buf.data(), 1));
        EXPECT_EQ(UMR_MPI_X_IDLE, r.x.state);
        EXPECT_TRUE(buf == pattern(UMR_MPI_CTL_SIZE, 7));
        EXPECT_EQ(0u, umr_mpi.cnt.decided_recv);
        return 0;
    });
}

#if UMR_TEST_HOOKS
/* A get that completes in error (a remote access error): the receiver
 * declines and retires the peer, the data comes as DATA, the sender
 * retires the receiver too. */
TEST_F(mpi_core, fault_declines_and_retires)
{
    run([](int fd) {
        side s(0, fd, UMR_MPI_ZCOPY_ON);
        test_type t(1024, 8, 32);
        std::vector<uint8_t> buf = pattern(1024 * 32, 8);
        test_req r;

        EXPECT_TRUE(s.send(r, &t, buf.data(), 1, 7));
        EXPECT_EQ(0, r.x.error);
        EXPECT_EQ(1u, umr_mpi.cnt.retired);
        EXPECT_TRUE(umr_mpi_peer_passes(1));
        return 0;
    }, [](int fd) {
        side s(1, fd, UMR_MPI_ZCOPY_ON);
        test_type src(1024, 8, 32), t(512, 16, 48);
        std::vector<uint8_t> buf(512 * 48, 0x11), stream(8192);
        test_req r;

        umr_mpi_set_faults(1u << UMR_MPI_FAULT_COMPLETION);
        umr_layout_pack(src.layout, 1, pattern(1024 * 32, 8).data(),
                        stream.data());
        EXPECT_TRUE(s.recv(r, &t, buf.data(), 1));
        EXPECT_EQ(0, r.x.error);
        EXPECT_TRUE(holds(t, 1, buf, stream, 0x11));
        EXPECT_EQ(1u, umr_mpi.cnt.fault_declines);
        EXPECT_EQ(1u, umr_mpi.cnt.retired);
        umr_mpi_set_faults(0);
        return 0;
    });
}
#endif

/* A control message whose key has another length than the rail's: a
 * malformed one is declined and its sender retired, never used. */
TEST_F(mpi_core, malformed_ctl_declined)
{
    run([](int fd) {
        side s(0, fd, UMR_MPI_ZCOPY_ON);
        test_type t(1024, 8, 32);
        std::vector<uint8_t> buf = pattern(1024 * 32, 9);
        umr_mpi_ctl_t ctl;
        umr_mpi_ack_t ack;
        bool answered = false;
        struct : umr_mpi_comp_t { bool *flag; } c;

        memset(&ctl, 0, sizeof(ctl));
        ctl.magic[0] = UMR_MPI_MAGIC0;
        ctl.magic[1] = UMR_MPI_MAGIC1;
        ctl.seq      = 1234;
        ctl.length   = 8192;
        ctl.rkey_len = 3;
        c.cb   = [](umr_mpi_comp_t *p, const umr_mpi_status_t *) {
            *static_cast<decltype(c)*>(p)->flag = true;
        };
        c.flag = &answered;
        s.mpi.recv(UMR_MPI_MSG_ACK, &ack, sizeof(ack), nullptr, 0, &c,
                   nullptr);
        s.mpi.send(fake_mpi::CHAN_USER, &ctl, sizeof(ctl), nullptr);
        EXPECT_TRUE(s.mpi.run_until([&] { return answered; }));
        EXPECT_EQ(1234u, ack.seq);
        EXPECT_EQ(UMR_MPI_ACK_FALLBACK | UMR_MPI_ACK_RETIRE, ack.flags);
        s.mpi.send_layout(UMR_MPI_MSG_DATA, buf.data(), t.layout, 1,
                          nullptr);
        return 0;
    }, [](int fd) {
        side s(1, fd, UMR_MPI_ZCOPY_ON);
        test_type src(1024, 8, 32);
        std::vector<uint8_t> buf(1024 * 32, 0), stream(8192);
        test_req r;

        umr_layout_pack(src.layout, 1, pattern(1024 * 32, 9).data(),
                        stream.data());
        EXPECT_TRUE(s.recv(r, &src, buf.data(), 1));
        EXPECT_EQ(0, r.x.error);
        EXPECT_TRUE(holds(src, 1, buf, stream, 0));
        EXPECT_EQ(1u, umr_mpi.cnt.fault_declines);
        EXPECT_EQ(1u, umr_mpi.cnt.retired);
        return 0;
    });
}

} // namespace
