/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * The transport on the mlx5 engine between simulated hosts of the rdma-core
 * model (umr_test_verbs_model.h, R24-R30): what a first cluster run would
 * hit (issue 19). The parent is on host 0; a forked peer on another host
 * with its own link layer, LID, GID table and pkey table owns a target
 * buffer. One test per finding, named in its comment.
 */
#include "umr_test_proc.h"
#include "umr_test_uct.h"
#include "umr_test_verbs_fake.h"
#include "umr_test_verbs_model.h"
#include "umr_test_time.h"

#include "uct_umr.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <ucs/sys/compiler_def.h>

#include <functional>
#include <vector>

using namespace umr_test;

namespace {

enum { CMD_EXIT = 0, CMD_DUMP = 1 };

double now_sec()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

bool put_bytes(proc &p, const bytes_t &b)
{
    uint64_t len = b.size();
    return p.send(len) && ((len == 0) || p.send((const void*)b.data(), (size_t)len));
}

bool get_bytes(proc &p, bytes_t &b, double timeout = proc::DEFAULT_TIMEOUT)
{
    uint64_t len;
    if (!p.recv(len, timeout)) {
        return false;
    }
    b.resize(len);
    return (len == 0) || p.recv((void*)b.data(), (size_t)len, timeout);
}

/* What a simulated host is: set in the process before it opens a device. */
typedef std::function<void()> host_t;

host_t ib_host(uint32_t host, uint16_t lid,
               std::vector<uint16_t> pkeys = {0xffff})
{
    return [=]() {
        fake().host  = host;
        fake().ports = {fake_ib_port(lid, IBV_MTU_4096)};
        fake().ports[0].pkeys.clear();
        for (uint16_t k : pkeys) {
            fake().ports[0].pkeys.push_back(htons(k));
        }
        fake().ports[0].attr.pkey_tbl_len = pkeys.size();
    };
}

host_t roce_host(uint32_t host, bool v1, bool v2, bool ipv4)
{
    return [=]() {
        fake().host  = host;
        fake().ports = {fake_roce_host_port(host, IBV_MTU_1024, v1, v2,
                                            ipv4)};
    };
}

/* A RoCE v1/v2 host of IP subnet `subnet` without IPv4: link-local and
 * global IPv6 GIDs (R33); `dead`: GID entries without a route. */
host_t roce_ipv6_host(uint32_t host, uint32_t subnet, bool ipv4 = false,
                      std::vector<uint32_t> dead = {})
{
    return [=]() {
        fake().host   = host;
        fake().subnet = subnet;
        fake().ports  = {fake_roce_host_port(host, IBV_MTU_1024, true, true,
                                             ipv4, (int)subnet)};
        fake().ports[0].dead_gids = dead;
    };
}

/* The GID in an iface address (engine id, then umr_eng_mlx5_dev_addr_t:
 * link layer, port, LID, GID). */
bytes_t gid_of(const bytes_t &iface)
{
    return bytes_t(iface.begin() + 5, iface.begin() + 21);
}

bool gid_is_global_ipv6(const bytes_t &gid)
{
    return (gid[0] == 0x20) && (gid[1] == 0x01);
}

const size_t LEN = 64 * 1024;

/* The peer: opens the transport on its host, registers a LEN-byte target
 * (filled with 0x11), sends its device, iface and ep addresses, packed key
 * and address, connects to the parent's ep address (when it gets one) and
 * serves CMD_DUMP until CMD_EXIT. */
int peer_main(proc &p, const host_t &host, const config_t &md_cfg)
{
    uct_stack s;
    bytes_t buf(LEN, 0x11), peer_ep;
    uct_mem_h memh;
    uint32_t cmd;

    host();
    if (s.open("mlx5_0", md_cfg) != UCS_OK) {
        return 10;
    }
    uct_ep_h ep = s.create_ep();
    if ((ep == nullptr) || (s.reg(buf.data(), buf.size(), &memh) != UCS_OK)) {
        return 11;
    }
    uint64_t va = (uintptr_t)buf.data();
    if (!put_bytes(p, s.dev_addr()) || !put_bytes(p, s.iface_addr()) ||
        !put_bytes(p, s.ep_addr(ep)) || !put_bytes(p, s.pack(memh)) ||
        !p.send(va)) {
        return 12;
    }
    if (!get_bytes(p, peer_ep, 60) ||
        (!peer_ep.empty() && (s.connect(ep, s.dev_addr(), peer_ep) != UCS_OK))) {
        return 13;
    }
    /* connected (our QP ready to receive): the parent may post now */
    if (!peer_ep.empty() && !p.send(uint32_t(1))) {
        return 13;
    }
    for (;;) {
        if (!p.recv(cmd, 120.0)) {
            return 14;
        }
        if (cmd == CMD_EXIT) {
            break;
        }
        if ((cmd == CMD_DUMP) && !put_bytes(p, buf)) {
            return 15;
        }
    }
    s.dereg(memh);
    return 0;
}

class test_uct_mlx5_hosts : public ::testing::Test {
protected:
    struct peer_t {
        std::unique_ptr<proc> p;
        bytes_t               dev, iface, ep, packed;
        uint64_t              va = 0;
    };

    uct_stack s;

    void SetUp() override
    {
        fake().reset();
    }

    /* this process on `host`, the transport opened there */
    void open(const host_t &host, const config_t &md_cfg = config_t(),
              const config_t &iface_cfg = config_t())
    {
        host();
        ASSERT_UCS_OK(s.open("mlx5_0", md_cfg, iface_cfg));
    }

    void start(peer_t &peer, const host_t &host,
               const config_t &md_cfg = config_t())
    {
        peer.p.reset(new proc([host, md_cfg](proc &p) {
            return peer_main(p, host, md_cfg);
        }));
        ASSERT_TRUE(get_bytes(*peer.p, peer.dev));
        ASSERT_TRUE(get_bytes(*peer.p, peer.iface));
        ASSERT_TRUE(get_bytes(*peer.p, peer.ep));
        ASSERT_TRUE(get_bytes(*peer.p, peer.packed));
        ASSERT_TRUE(peer.p->recv(peer.va));
    }

    bool reachable(const peer_t &peer)
    {
        return uct_iface_is_reachable(s.iface,
                                      (const uct_device_addr_t*)
                                              peer.dev.data(),
                                      (const uct_iface_addr_t*)
                                              peer.iface.data());
    }

    /* our ep to the peer, connected both ways */
    uct_ep_h connect(peer_t &peer)
    {
        uct_ep_h ep = s.create_ep();
        EXPECT_NE(nullptr, ep);
        EXPECT_UCS_OK_(s.connect(ep, peer.dev, peer.ep));
        EXPECT_TRUE(put_bytes(*peer.p, s.ep_addr(ep)));
        /* Wait until the peer's QP takes packets: a write posted before
         * is retried by the NIC (model rule R26), and with a budget of a
         * few ms (retry_budget_configurable) a loaded machine would see
         * RETRY_EXC on a link that is up. */
        uint32_t connected = 0;
        EXPECT_TRUE(peer.p->recv(connected, 60.0) && (connected == 1))
                << "the peer did not connect";
        return ep;
    }

    static void EXPECT_UCS_OK_(ucs_status_t st)
    {
        EXPECT_EQ(UCS_OK, st) << ucs_status_string(st);
    }

    /* a put of `len` bytes of src to the peer's buffer at `off`: the
     * completion's status (UCS_ERR_TIMED_OUT: none within `timeout`) */
    ucs_status_t put(uct_ep_h ep, peer_t &peer, bytes_t &src, size_t off,
                     double timeout = 30)
    {
        uct_rkey_bundle_t rkey;
        uct_mem_h memh;
        test_comp comp;
        ucs_status_t st;

        EXPECT_UCS_OK_(s.reg(src.data(), src.size(), &memh));
        EXPECT_UCS_OK_(s.unpack(peer.packed, &rkey));
        uct_iov_t iov = {src.data(), src.size(), memh, 0, 1};
        st = uct_ep_put_zcopy(ep, &iov, 1, peer.va + off, rkey.rkey,
                              &comp.uct);
        if (st == UCS_INPROGRESS) {
            st = s.wait(comp, timeout) ? comp.status : UCS_ERR_TIMED_OUT;
        }
        s.release(&rkey);
        EXPECT_UCS_OK_(s.dereg(memh));
        return st;
    }

    bytes_t dump(peer_t &peer)
    {
        bytes_t b;
        uint32_t cmd = CMD_DUMP;
        EXPECT_TRUE(peer.p->send(cmd));
        EXPECT_TRUE(get_bytes(*peer.p, b));
        return b;
    }

    void stop(peer_t &peer)
    {
        uint32_t cmd = CMD_EXIT;
        peer.p->send(cmd);
        EXPECT_TRUE(peer.p->join());
    }

    static bytes_t pattern(size_t len, uint8_t seed)
    {
        bytes_t b(len);
        for (size_t i = 0; i < len; ++i) {
            b[i] = (uint8_t)(i * 7 + seed);
        }
        return b;
    }

    /* a put across hosts arrives, byte for byte, and nothing else moved */
    void expect_put_arrives(uct_ep_h ep, peer_t &peer)
    {
        bytes_t src = pattern(4096, 3);
        ASSERT_EQ(UCS_OK, put(ep, peer, src, 1024));
        bytes_t got = dump(peer), want(LEN, 0x11);
        std::copy(src.begin(), src.end(), want.begin() + 1024);
        EXPECT_TRUE(got == want) << "the peer's buffer is not what was put";
    }
};

/* The baseline: IB hosts on one subnet, and RoCE v2 hosts with IPv4, reach
 * each other and move bytes. */
TEST_F(test_uct_mlx5_hosts, ib_hosts_move_data)
{
    peer_t peer;
    ASSERT_NO_FATAL_FAILURE(open(ib_host(0, 1)));
    ASSERT_NO_FATAL_FAILURE(start(peer, ib_host(1, 2)));
    ASSERT_TRUE(reachable(peer));
    expect_put_arrives(connect(peer), peer);
    stop(peer);
}

TEST_F(test_uct_mlx5_hosts, roce_v2_hosts_move_data)
{
    peer_t peer;
    ASSERT_NO_FATAL_FAILURE(open(roce_host(0, true, true, true)));
    ASSERT_NO_FATAL_FAILURE(start(peer, roce_host(1, true, true, true)));
    ASSERT_TRUE(reachable(peer));
    expect_put_arrives(connect(peer), peer);
    stop(peer);
}

/* Finding 1: RoCE reachability compares the RoCE version and the address
 * family of the GIDs in use (UCX: uct_ib_iface_roce_is_reachable). A RoCE
 * v2 / IPv4 host and a RoCE v1-only / IPv6-only host are unreachable to each
 * other; before, any RoCE peer was reachable and the connection's first
 * write waited out the retry budget and failed (RETRY_EXC). */
TEST_F(test_uct_mlx5_hosts, mixed_roce_versions_unreachable)
{
    peer_t peer;
    ASSERT_NO_FATAL_FAILURE(open(roce_host(0, false, true, true)));
    ASSERT_NO_FATAL_FAILURE(start(peer, roce_host(1, true, false, false)));
    EXPECT_FALSE(reachable(peer)) << "RoCE v2/IPv4 and RoCE v1/IPv6";
    peer.p->send(uint64_t(0));          /* the peer connects to nothing */
    stop(peer);
}

TEST_F(test_uct_mlx5_hosts, roce_ipv4_and_ipv6_unreachable)
{
    peer_t peer;
    ASSERT_NO_FATAL_FAILURE(open(roce_host(0, false, true, true)));
    ASSERT_NO_FATAL_FAILURE(start(peer, roce_host(1, false, true, false)));
    EXPECT_FALSE(reachable(peer)) << "RoCE v2 IPv4 and RoCE v2 IPv6";
    peer.p->send(uint64_t(0));
    stop(peer);
}

/* Finding 1 (and 3): IB peers of two partitions are unreachable (UCX
 * uct_ib_iface_is_reachable: pkeys equal, one a full member). */
TEST_F(test_uct_mlx5_hosts, ib_partitions_unreachable)
{
    peer_t peer;
    ASSERT_NO_FATAL_FAILURE(open(ib_host(0, 1, {0x8001})));
    ASSERT_NO_FATAL_FAILURE(start(peer, ib_host(1, 2, {0x8002})));
    EXPECT_FALSE(reachable(peer)) << "pkeys 0x8001 and 0x8002";
    peer.p->send(uint64_t(0));
    stop(peer);
}

/* Finding 2: the retry budget is UCX's (TIMEOUT 1 s, RETRY_COUNT 7: 8.6 s),
 * so a link that is down for 1.5 s (a subnet manager sweep, a burst) loses
 * nothing; before (timeout 14, 7 retries: 0.54 s) the write failed. */
TEST_F(test_uct_mlx5_hosts, link_flap_within_retry_budget)
{
    peer_t peer;
    ASSERT_NO_FATAL_FAILURE(open(ib_host(0, 1)));
    ASSERT_NO_FATAL_FAILURE(start(peer, ib_host(1, 2)));
    uct_ep_h ep = connect(peer);
    expect_put_arrives(ep, peer);

    bytes_t src = pattern(8192, 9);
    uct_rkey_bundle_t rkey;
    uct_mem_h memh;
    test_comp comp;
    ASSERT_UCS_OK(s.reg(src.data(), src.size(), &memh));
    ASSERT_UCS_OK(s.unpack(peer.packed, &rkey));
    uct_iov_t iov = {src.data(), src.size(), memh, 0, 1};

    model_host_set_link(1, false);
    ASSERT_EQ(UCS_INPROGRESS, uct_ep_put_zcopy(ep, &iov, 1, peer.va,
                                               rkey.rkey, &comp.uct));
    double up_at = now_sec() + 1.5;
    while ((now_sec() < up_at) && (comp.fired == 0)) {
        s.progress();
    }
    EXPECT_EQ(0, comp.fired) << "failed while the link was down: "
                             << ucs_status_string(comp.status);
    model_host_set_link(1, true);
    ASSERT_TRUE(s.wait(comp, 30));
    EXPECT_EQ(UCS_OK, comp.status) << ucs_status_string(comp.status);
    bytes_t got = dump(peer);
    EXPECT_TRUE(std::equal(src.begin(), src.end(), got.begin()));
    s.release(&rkey);
    ASSERT_UCS_OK(s.dereg(memh));
    stop(peer);
}

/* Finding 2: the budget is configurable (UCX_MLX5_UMR_TIMEOUT,
 * _RETRY_COUNT): 10 ms x 2 tries gives up long before UCX's 8.6 s (the
 * bound is well above 20 ms: a busy machine stretches any wait). */
TEST_F(test_uct_mlx5_hosts, retry_budget_configurable)
{
    peer_t peer;
    config_t cfg = {{"TIMEOUT", "10ms"}, {"RETRY_COUNT", "1"}};
    ASSERT_NO_FATAL_FAILURE(open(ib_host(0, 1), cfg));
    ASSERT_NO_FATAL_FAILURE(start(peer, ib_host(1, 2), cfg));
    uct_ep_h ep = connect(peer);
    expect_put_arrives(ep, peer);

    model_host_set_link(1, false);
    bytes_t src = pattern(4096, 5);
    double start_at = now_sec();
    EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, put(ep, peer, src, 0));
    EXPECT_LT(now_sec() - start_at, umr_test::scaled(4.0))
        << "the configured 20 ms, not UCX's 8.6 s";
    model_host_set_link(1, true);
    stop(peer);
}

/* Finding 3: the pkey is the first full member of the port's table (UCX
 * PKEY=auto), not index 0. Both hosts' index 0 holds a limited member of
 * the default partition; two limited members cannot talk (IBTA), so index
 * 0 on both sides lost every packet. */
TEST_F(test_uct_mlx5_hosts, pkey_first_full_member)
{
    peer_t peer;
    ASSERT_NO_FATAL_FAILURE(open(ib_host(0, 1, {0x7fff, 0x8001})));
    ASSERT_NO_FATAL_FAILURE(start(peer, ib_host(1, 2, {0x7fff, 0x8001})));
    ASSERT_TRUE(reachable(peer));
    uct_ep_h ep = connect(peer);
    bytes_t src = pattern(4096, 3);
    EXPECT_EQ(UCS_OK, put(ep, peer, src, 0, 30));
    stop(peer);
}

/* Finding 4: read depths are exchanged. The peer's device holds one
 * incoming read (max_qp_rd_atom 1); a get fragmented into four reads, with
 * this side's depth of 16, overran it (IBV_WC_REM_INV_REQ_ERR). */
TEST_F(test_uct_mlx5_hosts, read_depth_is_the_peers)
{
    peer_t peer;
    ASSERT_NO_FATAL_FAILURE(open(ib_host(0, 1), config_t(), {{"MAX_MSG", "4k"}}));
    host_t shallow = [](){
        ib_host(1, 2)();
        fake().dev_attr.orig_attr.max_qp_rd_atom = 1;
    };
    ASSERT_NO_FATAL_FAILURE(start(peer, shallow));
    uct_ep_h ep = connect(peer);

    bytes_t dst(16384, 0);
    uct_rkey_bundle_t rkey;
    uct_mem_h memh;
    test_comp comp;
    ASSERT_UCS_OK(s.reg(dst.data(), dst.size(), &memh));
    ASSERT_UCS_OK(s.unpack(peer.packed, &rkey));
    uct_iov_t iov = {dst.data(), dst.size(), memh, 0, 1};
    ucs_status_t st = uct_ep_get_zcopy(ep, &iov, 1, peer.va, rkey.rkey,
                                       &comp.uct);
    if (st == UCS_INPROGRESS) {
        ASSERT_TRUE(s.wait(comp, 30));
        st = comp.status;
    }
    EXPECT_EQ(UCS_OK, st) << ucs_status_string(st);
    EXPECT_EQ(bytes_t(dst.size(), 0x11), dst);
    s.release(&rkey);
    ASSERT_UCS_OK(s.dereg(memh));
    stop(peer);
}

/* A list layout of n blocks of 64 B, 192 B apart (irregular enough to be a
 * UMR list, one entry a block). */
umr_layout_t *blocks_layout(size_t n)
{
    std::vector<size_t> lens(n, 64);
    std::vector<ptrdiff_t> displs(n);
    umr_layout_t *layout = NULL;
    for (size_t i = 0; i < n; ++i) {
        displs[i] = i * 192 + (i % 3) * 8;
    }
    EXPECT_EQ(UCS_OK, umr_layout_indexed(n, lens.data(), displs.data(),
                                             NULL, &layout));
    return layout;
}

/* One process, two connected eps: put `n`-block layouts of src into dst,
 * `rounds` times each of `kinds` different layouts; every byte checked.
 * `expect` another status than UCS_OK: the first put ends with it. */
void put_layouts(uct_stack &s, size_t n, unsigned kinds, unsigned rounds,
                 ucs_status_t expect = UCS_OK)
{
    uct_ep_h a = s.create_ep(), b = s.create_ep();
    ASSERT_NE(nullptr, a);
    ASSERT_NE(nullptr, b);
    ASSERT_UCS_OK(s.connect(a, s.dev_addr(), s.ep_addr(b)));
    ASSERT_UCS_OK(s.connect(b, s.dev_addr(), s.ep_addr(a)));
    size_t span = (n + kinds) * 192 + 64;
    bytes_t src(span), dst(n * 64 + 64, 0);
    uct_mem_h smemh, dmemh;
    uct_rkey_bundle_t rkey;
    for (size_t i = 0; i < src.size(); ++i) {
        src[i] = (uint8_t)(i * 13 + 1);
    }
    ASSERT_UCS_OK(s.reg(src.data(), src.size(), &smemh));
    ASSERT_UCS_OK(s.reg(dst.data(), dst.size(), &dmemh));
    ASSERT_UCS_OK(s.unpack(s.pack(dmemh), &rkey));
    umr_layout_t *layout = blocks_layout(n);

    for (unsigned r = 0; r < rounds; ++r) {
        for (unsigned k = 0; k < kinds; ++k) {
            SCOPED_TRACE("round " + std::to_string(r) + " layout " +
                         std::to_string(k));
            uint8_t *base = src.data() + k * 192;
            test_comp comp;
            ucs_status_t st = uct_umr_ep_put_layout(a, smemh, base, layout,
                                                    1, 0, n * 64,
                                                    (uintptr_t)dst.data(),
                                                    rkey.rkey, &comp.uct);
            if (st == UCS_INPROGRESS) {
                ASSERT_TRUE(s.wait(comp));
                st = comp.status;
            }
            if (expect != UCS_OK) {
                EXPECT_EQ(expect, st) << ucs_status_string(st);
                r = rounds;
                break;
            }
            ASSERT_EQ(UCS_OK, st) << ucs_status_string(st);
            for (size_t i = 0; i < n; ++i) {
                size_t at = i * 192 + (i % 3) * 8;
                ASSERT_EQ(0, memcmp(dst.data() + i * 64, base + at, 64))
                        << "block " << i;
            }
        }
    }
    umr_layout_free(layout);
    s.release(&rkey);
    ASSERT_UCS_OK(s.dereg(smemh));
    ASSERT_UCS_OK(s.dereg(dmemh));
    s.destroy_ep(a);
    s.destroy_ep(b);
}

/* Finding 5: the largest send WQE is the device's (max_sq_desc_sz), not a
 * constant 1 KiB. On a device that allows 512 B (20 list entries) the md's
 * QP creation failed (EINVAL) and the rail was gone; now the entries come
 * from the device and a 40-block layout is a key over keys. */
TEST_F(test_uct_mlx5_hosts, small_max_sq_desc_sz)
{
    fake().max_sq_desc_sz = 512;
    ASSERT_UCS_OK(s.open("mlx5_0"));
    size_t before = fake().qp_attrs.size();
    uct_ep_h ep   = s.create_ep();
    ASSERT_NE(nullptr, ep);
    ASSERT_EQ(before + 1, fake().qp_attrs.size());
    EXPECT_EQ(316u, fake().qp_attrs.back().cap.max_inline_data)
            << "a 512 B WQE: 20 list entries";
    EXPECT_LE(fake().qp_attrs.back().cap.max_send_sge, 20u);
    s.destroy_ep(ep);
    put_layouts(s, 40, 1, 2);
}

uint64_t umr_posted(uct_stack &s)
{
    uct_umr_md_stats_t st;
    EXPECT_EQ(UCS_OK, uct_umr_md_get_stats(s.md, &st));
    return st.umr_posted;
}

uint64_t umr_failed(uct_stack &s)
{
    uct_umr_md_stats_t st;
    EXPECT_EQ(UCS_OK, uct_umr_md_get_stats(s.md, &st));
    return st.umr_failed;
}

/* Finding 5 of the ConnectX review: the nesting depth is the device's
 * (max_indirection, R34). On a device that follows one level of indirect
 * keys a 40-block layout with 20 entries a key needs two: before, the plan
 * nested anyway and the NIC failed the write (the rail's endpoint in
 * error); now the layout is refused at post, before anything moves. */
TEST_F(test_uct_mlx5_hosts, nesting_no_deeper_than_the_device)
{
    fake().max_sq_desc_sz      = 512;
    fake().hca.max_indirection = 1;
    ASSERT_UCS_OK(s.open("mlx5_0"));
    put_layouts(s, 40, 1, 1, UCS_ERR_EXCEEDS_LIMIT);
    EXPECT_EQ(0u, umr_failed(s));
}

/* Finding 5: where rdma-core cannot give the fence the device asks on a
 * UMR (umr_fence strong) each UMR is waited for: the endpoints' local keys
 * are configured on the md's QP, one UMR at a time (before: on the
 * endpoint's QP, right before the RDMA, as on any device). Every byte
 * right, nested keys included. */
TEST_F(test_uct_mlx5_hosts, strong_umr_fence_waits_for_each_umr)
{
    fake().max_sq_desc_sz = 512;
    fake().hca.umr_fence  = MODEL_FENCE_STRONG;
    ASSERT_UCS_OK(s.open("mlx5_0"));
    uint64_t before = umr_posted(s);
    put_layouts(s, 40, 3, 2);
    EXPECT_GE(umr_posted(s), before + 3 * 3) << "the md's QP took them";
    EXPECT_EQ(0u, umr_failed(s));
}

/* Finding 5: a UMR that completes in error breaks the layout path of the
 * rail once. On a device where a UMR may not touch the atomic access
 * (umr_modify_atomic_disabled: rdma-core asks it in every UMR, R34) the
 * first layout registration fails its UMR; from then on layouts fall back
 * without a UMR (umr_failed 1, no UMR posted, the md's QP not reset again),
 * and the endpoints copy small layouts through their buffer, every byte
 * right. Before: a failed UMR, a QP reset and a failed message each time. */
TEST_F(test_uct_mlx5_hosts, umr_error_breaks_the_layout_path_once)
{
    fake().hca.umr_modify_atomic_disabled = 1;
    ASSERT_UCS_OK(s.open("mlx5_0"));
    bytes_t buf(64 * 192, 7);
    umr_layout_t *layout = blocks_layout(8);
    uct_mem_h memh;

    EXPECT_NE(UCS_OK, uct_umr_mem_reg(s.md, buf.data(), layout, 1, 0,
                                      &memh));
    EXPECT_EQ(1u, umr_failed(s));
    uint64_t posted = umr_posted(s);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(UCS_ERR_UNSUPPORTED,
                  uct_umr_mem_reg(s.md, buf.data(), layout, 1,
                                  UCT_MD_MEM_FLAG_HIDE_ERRORS, &memh));
    }
    EXPECT_EQ(posted, umr_posted(s)) << "no UMR posted any more";
    put_layouts(s, 8, 3, 2);
    size_t qps = fake().qp_attrs.size();
    put_layouts(s, 8, 3, 2);
    EXPECT_EQ(1u, umr_failed(s));
    EXPECT_EQ(posted, umr_posted(s));
    EXPECT_EQ(qps + 2, fake().qp_attrs.size())
            << "the two new endpoints' QPs, no QP created again";
    umr_layout_free(layout);
}

/* Finding 6: a key is configured again only after a LOCAL_INV, as man
 * mlx5dv_wr_post asks (the model with check_free fails a UMR on a key that
 * is not free, as a UMR with CHECK_FREE would). A cache of 2 entries and 6
 * layouts sends keys back to the pool and out again: before, the second use
 * of a key failed its UMR. */
TEST_F(test_uct_mlx5_hosts, keys_reused_only_after_local_inv)
{
    fake().check_free = true;
    ASSERT_UCS_OK(s.open("mlx5_0", config_t(), {{"CACHE_SIZE", "2"}}));
    put_layouts(s, 8, 6, 3);
}

/* Finding 7: async events are read from progress. The port of this host
 * goes down: every endpoint of the rail is reported failed at once, an idle
 * one too, and the rail reaches no one any more; before, only an endpoint
 * with work failed, after the retry budget, and the rail stayed. */
struct err_rec {
    std::vector<uct_ep_h>     eps;
    std::vector<ucs_status_t> statuses;
};

ucs_status_t record_err(void *arg, uct_ep_h ep, ucs_status_t status)
{
    err_rec *rec = (err_rec*)arg;
    rec->eps.push_back(ep);
    rec->statuses.push_back(status);
    return UCS_OK;
}

TEST_F(test_uct_mlx5_hosts, port_error_retires_the_rail)
{
    peer_t p1, p2;
    err_rec rec;
    s.err_handler     = record_err;
    s.err_handler_arg = &rec;
    ASSERT_NO_FATAL_FAILURE(open(ib_host(0, 1)));
    ASSERT_NO_FATAL_FAILURE(start(p1, ib_host(1, 2)));
    ASSERT_NO_FATAL_FAILURE(start(p2, ib_host(2, 3)));
    uct_ep_h busy = connect(p1), idle = connect(p2);
    expect_put_arrives(busy, p1);
    expect_put_arrives(idle, p2);

    model_host_set_link(0, false);
    bytes_t src = pattern(4096, 1);
    double start_at = now_sec();
    EXPECT_TRUE(UCS_STATUS_IS_ERR(put(busy, p1, src, 0)));
    EXPECT_LT(now_sec() - start_at, umr_test::scaled(4.0))
        << "not after the retry budget (8.6 s)";
    for (int i = 0; (i < 1000) && (rec.eps.size() < 2); ++i) {
        s.progress();
    }
    ASSERT_EQ(2u, rec.eps.size()) << "both endpoints, the idle one too";
    EXPECT_EQ(UCS_ERR_UNREACHABLE, rec.statuses[0]);
    EXPECT_TRUE(((rec.eps[0] == busy) && (rec.eps[1] == idle)) ||
                ((rec.eps[0] == idle) && (rec.eps[1] == busy)));
    EXPECT_FALSE(reachable(p1)) << "the rail is retired";
    uct_ep_h late = s.create_ep();
    ASSERT_NE(nullptr, late);
    EXPECT_EQ(UCS_ERR_UNREACHABLE, s.connect(late, p1.dev, p1.ep));
    model_host_set_link(0, true);
    stop(p1);
    stop(p2);
}

/* Finding 7: an affiliated event on one endpoint's QP (QP_FATAL) fails that
 * endpoint, though nothing was posted on it, and no other. */
TEST_F(test_uct_mlx5_hosts, qp_fatal_fails_that_endpoint)
{
    peer_t p1, p2;
    err_rec rec;
    s.err_handler     = record_err;
    s.err_handler_arg = &rec;
    ASSERT_NO_FATAL_FAILURE(open(ib_host(0, 1)));
    ASSERT_NO_FATAL_FAILURE(start(p1, ib_host(1, 2)));
    ASSERT_NO_FATAL_FAILURE(start(p2, ib_host(2, 3)));
    uct_ep_h hit = connect(p1), other = connect(p2);
    expect_put_arrives(hit, p1);

    uint32_t qpn;
    bytes_t addr = s.ep_addr(hit);
    memcpy(&qpn, addr.data(), sizeof(qpn));
    model_qp_raise(qpn, IBV_EVENT_QP_FATAL);
    /* work on the other endpoint runs progress, which reads the events
     * (once a millisecond); the bound a hang guard */
    double until = now_sec() + umr_test::scaled(60);
    while (rec.eps.empty() && (now_sec() < until)) {
        expect_put_arrives(other, p2);
        for (int i = 0; i < 100; ++i) {
            s.progress();
        }
    }
    ASSERT_EQ(1u, rec.eps.size());
    EXPECT_EQ(UCS_ERR_CONNECTION_RESET, rec.statuses[0]);
    EXPECT_EQ(hit, rec.eps[0]);
    expect_put_arrives(other, p2);
    stop(p1);
    stop(p2);
}

/* Finding 7: our LID changed (a subnet manager assigned another): peers
 * address the old one, so the rail is retired as for a port error. */
TEST_F(test_uct_mlx5_hosts, lid_change_retires_the_rail)
{
    peer_t peer;
    err_rec rec;
    s.err_handler     = record_err;
    s.err_handler_arg = &rec;
    ASSERT_NO_FATAL_FAILURE(open(ib_host(0, 1)));
    ASSERT_NO_FATAL_FAILURE(start(peer, ib_host(1, 2)));
    uct_ep_h ep = connect(peer);
    expect_put_arrives(ep, peer);
    ASSERT_TRUE(reachable(peer));

    model_host_set_lid(0, 77);
    double until = now_sec() + umr_test::scaled(60);   /* a hang guard */
    while (rec.eps.empty() && (now_sec() < until)) {
        s.progress();
        reachable(peer);        /* reads the events too */
    }
    ASSERT_EQ(1u, rec.eps.size());
    EXPECT_EQ(ep, rec.eps[0]);
    EXPECT_FALSE(reachable(peer));
    stop(peer);
}

/* Reads the port events raised so far: reachability reads them when a
 * millisecond has passed since the last read. */
void read_events(const std::function<bool()> &reachable)
{
    for (int i = 0; i < 3; ++i) {
        usleep(2000);
        reachable();
    }
}

/* Issue 30, finding 4: port events that leave our address as it was - a
 * subnet manager that took over re-registers every port
 * (CLIENT_REREGISTER), a pkey entry we do not use changed, another SM -
 * leave the rail up: the endpoint works, the peer is reachable. Before, the
 * first three retired the rail (endpoint failed UNREACHABLE). */
TEST_F(test_uct_mlx5_hosts, client_reregister_keeps_the_rail)
{
    peer_t peer;
    err_rec rec;
    s.err_handler     = record_err;
    s.err_handler_arg = &rec;
    ASSERT_NO_FATAL_FAILURE(open(ib_host(0, 1)));
    ASSERT_NO_FATAL_FAILURE(start(peer, ib_host(1, 2)));
    uct_ep_h ep = connect(peer);
    expect_put_arrives(ep, peer);

    model_host_raise(0, IBV_EVENT_CLIENT_REREGISTER);
    model_host_raise(0, IBV_EVENT_PKEY_CHANGE);
    model_host_raise(0, IBV_EVENT_SM_CHANGE);
    read_events([&]() { return reachable(peer); });
    for (int i = 0; i < 100; ++i) {
        s.progress();
    }
    EXPECT_TRUE(rec.eps.empty()) << "an endpoint failed";
    EXPECT_TRUE(reachable(peer)) << "the rail was retired";
    expect_put_arrives(ep, peer);
    stop(peer);
}

/* Issue 30, finding 4: on RoCE a GID table entry that is not ours changed
 * (an address added to a netdev): the rail stays up; the GID in use
 * changed: retired (peers address the old one). */
TEST_F(test_uct_mlx5_hosts, gid_change_retires_only_for_the_gid_in_use)
{
    peer_t peer;
    err_rec rec;
    s.err_handler     = record_err;
    s.err_handler_arg = &rec;
    ASSERT_NO_FATAL_FAILURE(open(roce_host(0, true, true, true)));
    ASSERT_NO_FATAL_FAILURE(start(peer, roce_host(1, true, true, true)));
    uct_ep_h ep = connect(peer);
    expect_put_arrives(ep, peer);

    uint32_t entries = fake().ports[0].gids.size();
    model_host_raise(0, IBV_EVENT_GID_CHANGE, entries);   /* a new entry */
    read_events([&]() { return reachable(peer); });
    s.progress();
    EXPECT_TRUE(rec.eps.empty()) << "an endpoint failed";
    EXPECT_TRUE(reachable(peer)) << "the rail was retired";
    expect_put_arrives(ep, peer);

    /* the GID in use (RoCE v2 IPv4, the last entry) is another now */
    uint8_t gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 9, 9, 9};
    model_host_set_gid(0, entries - 1, gid, IBV_GID_TYPE_ROCE_V2);
    double until = now_sec() + 5;
    while (rec.eps.empty() && (now_sec() < until)) {
        s.progress();
        reachable(peer);
    }
    ASSERT_EQ(1u, rec.eps.size());
    EXPECT_EQ(UCS_ERR_UNREACHABLE, rec.statuses[0]);
    EXPECT_FALSE(reachable(peer));
    stop(peer);
}

/* Issue 30, finding 4: PORT_ERR fails every endpoint; PORT_ACTIVE with the
 * address unchanged opens the rail again for new connections: a peer is
 * reachable, a new endpoint connects and moves data. Before, the rail
 * stayed retired for the rest of the job. */
TEST_F(test_uct_mlx5_hosts, port_active_reopens_the_rail)
{
    peer_t p1, p2;
    err_rec rec;
    s.err_handler     = record_err;
    s.err_handler_arg = &rec;
    ASSERT_NO_FATAL_FAILURE(open(ib_host(0, 1)));
    ASSERT_NO_FATAL_FAILURE(start(p1, ib_host(1, 2)));
    uct_ep_h ep = connect(p1);
    expect_put_arrives(ep, p1);

    model_host_set_link(0, false);
    double until = now_sec() + 5;
    while (rec.eps.empty() && (now_sec() < until)) {
        s.progress();
        reachable(p1);
    }
    ASSERT_EQ(1u, rec.eps.size());
    EXPECT_EQ(UCS_ERR_UNREACHABLE, rec.statuses[0]);
    EXPECT_FALSE(reachable(p1)) << "retired while the port is down";

    model_host_set_link(0, true);
    read_events([&]() { return reachable(p1); });
    EXPECT_TRUE(reachable(p1)) << "the rail stayed retired";
    ASSERT_NO_FATAL_FAILURE(start(p2, ib_host(2, 3)));
    uct_ep_h late = connect(p2);
    expect_put_arrives(late, p2);
    EXPECT_EQ(1u, rec.eps.size()) << "the new endpoint failed";
    stop(p1);
    stop(p2);
}

/* Issue 30, finding 3: IPv6-only RoCE hosts on two subnets (a routed
 * fabric): the link-local GIDs (fe80::) reach no other subnet, the global
 * ones do. Each host takes its RoCE v2 global IPv6 GID, as UCX >= 1.21
 * does, and a put arrives. Before, the first RoCE v2 IPv6 entry, the
 * link-local one: the put failed RETRY_EXC (an endpoint timeout). */
TEST_F(test_uct_mlx5_hosts, ipv6_hosts_on_two_subnets_move_data)
{
    peer_t peer;
    config_t cfg = {{"TIMEOUT", "10ms"}, {"RETRY_COUNT", "1"}};
    ASSERT_NO_FATAL_FAILURE(open(roce_ipv6_host(0, 1), cfg));
    ASSERT_NO_FATAL_FAILURE(start(peer, roce_ipv6_host(1, 2), cfg));
    EXPECT_TRUE(gid_is_global_ipv6(gid_of(s.iface_addr())));
    EXPECT_TRUE(gid_is_global_ipv6(gid_of(peer.iface)));
    ASSERT_TRUE(reachable(peer));
    uct_ep_h ep = connect(peer);
    expect_put_arrives(ep, peer);
    stop(peer);
}

/* Issue 30, finding 3: a GID entry that does not work (no route through
 * its netdev: ibv_create_ah fails, R33) is passed over as UCX does
 * (uct_ib_device_test_roce_gid_index): the IPv4 entry is dead, the global
 * IPv6 one is taken. Before, the IPv4 entry was taken unchecked. */
TEST_F(test_uct_mlx5_hosts, gid_choice_checks_an_address_handle)
{
    peer_t peer;
    /* fe80 v1, fe80 v2, global v1, global v2, IPv4 v1, IPv4 v2 */
    ASSERT_NO_FATAL_FAILURE(open(roce_ipv6_host(0, 1, true, {5})));
    ASSERT_NO_FATAL_FAILURE(start(peer, roce_ipv6_host(1, 1, true, {5})));
    EXPECT_TRUE(gid_is_global_ipv6(gid_of(s.iface_addr())));
    uct_ep_h ep = connect(peer);
    expect_put_arrives(ep, peer);
    stop(peer);
}

/* Issue 30, finding 3: UCX_MLX5_UMR_GID_INDEX takes the entry asked for, as
 * UCX_IB_GID_INDEX does, even a link-local one; a bad index fails the open
 * with one line naming it. */
TEST_F(test_uct_mlx5_hosts, gid_index_overrides_the_choice)
{
    roce_ipv6_host(0, 1)();
    ASSERT_UCS_OK(s.open("mlx5_0", {{"GID_INDEX", "1"}}));
    bytes_t gid = gid_of(s.iface_addr());
    EXPECT_EQ(0xfe, gid[0]);
    EXPECT_EQ(0x80, gid[1]);
    s.close();
    EXPECT_NE(UCS_OK, s.open("mlx5_0", {{"GID_INDEX", "9"}}));
}

} // namespace
