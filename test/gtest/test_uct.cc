/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr UCT transport: md/iface/ep over two real processes, on the
 * device uct_test_dev() names: gtest_uct runs them on the sw engine,
 * gtest_uct_mlx5_model on the mlx5 engine over the model of rdma-core 44
 * (same source, same tests).
 *
 * The parent is the initiator; a forked child owns the target buffers,
 * registers them (contiguous or as a layout), passes the packed keys over a
 * pipe and, when told, sends its buffers back so the parent can check every
 * byte: where the layout says and nowhere else. Seeds are printed; rerun a
 * failure with UMR_TEST_SEED=<seed>.
 */
#include "umr_test_cache.h"
#include "umr_test_eng_fault.h"
#include "umr_test_probe.h"
#include "umr_test_layout.h"
#include "umr_test_proc.h"
#include "umr_test_uct.h"

#include "uct_umr.h"

#include <gtest/gtest.h>
#include <ucs/debug/log_def.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <sys/mman.h>
#include <unistd.h>

using namespace umr_test;

namespace {

enum { OP_PUT, OP_GET };
/* read-only target memory: an anonymous buffer mprotect'ed to PROT_READ,
 * a file mapped PROT_READ (MAP_PRIVATE) */
enum { RO_NONE, RO_MPROTECT, RO_FILE };
enum { LOCAL_CONTIG, LOCAL_IOV, LOCAL_LAYOUT };
enum { REMOTE_CONTIG, REMOTE_LAYOUT };

const char *op_names[]     = {"put", "get"};
const char *local_names[]  = {"contig", "iov", "layout"};
const char *remote_names[] = {"contig", "layout"};

const size_t GUARD = 64;

/* The test's random source; its seed is printed so that a failure can be
 * rerun with UMR_TEST_SEED. */
std::mt19937_64 seeded_rng(uint64_t *seed_p = nullptr)
{
    const char *env = getenv("UMR_TEST_SEED");
    uint64_t seed   = env ? strtoull(env, NULL, 0) : std::random_device()();

    printf("[ SEED     ] UMR_TEST_SEED=%llu\n", (unsigned long long)seed);
    if (seed_p != nullptr) {
        *seed_p = seed;
    }
    return std::mt19937_64(seed);
}

/* A buffer addressed as a stream: byte k of the key is buf[stream[k]]. */
struct region {
    bool                   is_layout = false;
    layout_ptr             layout;
    size_t                 count     = 0;
    ptrdiff_t              base_off  = 0;   /* base = buf + base_off */
    bytes_t                init;            /* initial contents */
    std::vector<ptrdiff_t> stream;          /* buffer index of key byte k */
    std::string            desc;
    int                    read_only = RO_NONE; /* memory the target may only
                                                   read, registered for
                                                   remote reads alone */
};

/* Random layout with distinct bytes, placed in a buffer with guards. */
void make_layout_region(std::mt19937_64 &rng, region &r, size_t min_bytes)
{
    random_params params;
    params.max_size = 1024;
    params.max_span = 8192;

    for (int attempt = 0; attempt < 1000; ++attempt) {
        spec_ptr spec  = random_layout(rng, params);
        size_t count   = 1 + rng() % 3;
        ref_layout ref = reference(spec);
        if (ref.bytes.empty()) {
            continue;
        }
        if (ref.bytes.size() * count < min_bytes) {
            count = (min_bytes + ref.bytes.size() - 1) / ref.bytes.size();
            if (count > 64) {
                continue;
            }
        }
        std::vector<ptrdiff_t> s = reference_stream(ref, count);
        std::set<ptrdiff_t> uniq(s.begin(), s.end());
        if (uniq.size() != s.size()) {
            continue; /* overlapping bytes: the result would be ambiguous */
        }
        layout_ptr l = build(spec);
        if (!l) {
            continue;
        }

        ptrdiff_t lo = *uniq.begin(), hi = *uniq.rbegin();
        r.is_layout = true;
        r.layout    = std::move(l);
        r.count     = count;
        r.base_off  = GUARD - lo;
        r.init.resize((hi - lo + 1) + 2 * GUARD);
        r.stream.clear();
        for (ptrdiff_t off : s) {
            r.stream.push_back(off + r.base_off);
        }
        r.desc = to_string(spec) + " x" + std::to_string(count);
        return;
    }
    FAIL() << "could not generate a layout";
}

void make_contig_region(region &r, size_t len)
{
    r.is_layout = false;
    r.init.resize(len + 2 * GUARD);
    r.base_off = GUARD;
    r.stream.resize(len);
    for (size_t i = 0; i < len; ++i) {
        r.stream[i] = GUARD + i;
    }
    r.desc = "contig(" + std::to_string(len) + ")";
}

void fill_random(std::mt19937_64 &rng, bytes_t &b)
{
    for (auto &x : b) {
        x = (uint8_t)rng();
    }
}

bool send_bytes(proc &p, const bytes_t &b)
{
    uint64_t len = b.size();
    return p.send(len) && (len == 0 || p.send((const void*)b.data(), (size_t)len));
}

bool recv_bytes(proc &p, bytes_t &b)
{
    uint64_t len;
    if (!p.recv(len)) {
        return false;
    }
    b.resize(len);
    return (len == 0) || p.recv((void*)b.data(), (size_t)len);
}

std::string first_diff(const bytes_t &got, const bytes_t &want)
{
    std::ostringstream os;
    size_t n = 0;
    for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
        if (got[i] != want[i]) {
            if (n++ < 8) {
                os << " [" << i << "] got " << (int)got[i] << " want "
                   << (int)want[i];
            }
        }
    }
    os << " (" << n << " bytes differ of " << got.size() << ")";
    return os.str();
}

enum : uint32_t { CMD_DUMP = 1, CMD_DEREG = 2, CMD_EXIT = 3 };

/* `init` in memory the process may only read (r.read_only), or NULL. */
uint8_t *map_read_only(const region &r)
{
    size_t len = r.init.size();
    void *p;

    if (r.read_only == RO_MPROTECT) {
        p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if ((p == MAP_FAILED) || (memcpy(p, r.init.data(), len),
                                  mprotect(p, len, PROT_READ) != 0)) {
            return NULL;
        }
        return (uint8_t*)p;
    }
    char path[] = "/tmp/umr-test-ro-XXXXXX";
    int fd      = mkstemp(path);
    if (fd < 0) {
        return NULL;
    }
    unlink(path);
    p = (write(fd, r.init.data(), len) == (ssize_t)len) ?
        mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    return (p == MAP_FAILED) ? NULL : (uint8_t*)p;
}

/* Register a read-only target region for remote reads alone, a layout over
 * a contiguous handle of the whole buffer (*span_p); a registration with
 * write access must be refused (as the kernel refuses it: ib_umem_get).
 * 0, or the target's exit code. */
int reg_read_only(uct_stack &s, region &r, uint8_t *mem, uct_mem_h *memh_p,
                  uct_mem_h *span_p)
{
    const unsigned ro = UCT_MD_MEM_ACCESS_REMOTE_GET |
                        UCT_MD_MEM_ACCESS_LOCAL_READ;
    uint8_t *base     = mem + r.base_off;
    uct_mem_h rw;

    if (uct_md_mem_reg(s.md, mem, r.init.size(), UCT_MD_MEM_ACCESS_ALL |
                       UCT_MD_MEM_FLAG_HIDE_ERRORS, &rw) != UCS_ERR_INVALID_ADDR) {
        return 20;      /* write access granted on read-only memory */
    }
    if (!r.is_layout) {
        return (uct_md_mem_reg(s.md, base, r.stream.size(), ro, memh_p) ==
                UCS_OK) ? 0 : 21;
    }
    if ((uct_md_mem_reg(s.md, mem, r.init.size(), ro, span_p) != UCS_OK) ||
        (uct_umr_mem_reg_over(s.md, base, r.layout.get(), r.count, span_p, 1,
                              ro, memh_p) != UCS_OK)) {
        return 22;
    }
    return 0;
}

/*
 * The target: registers every region, sends (dev addr, ep addr, keys, VAs),
 * connects back, then serves commands until CMD_EXIT.
 */
int target_main(proc &p, std::vector<region> &regions, const config_t &md_cfg,
                const config_t &iface_cfg)
{
    uct_stack s;
    std::vector<bytes_t> bufs;
    std::vector<uint8_t*> mems;          /* bufs[i], or read-only memory */
    std::vector<uct_mem_h> memhs, spans;
    bytes_t peer_dev, peer_ep;
    uint32_t cmd, idx;
    int ret;

    if (s.open(uct_test_dev(), md_cfg, iface_cfg) != UCS_OK) {
        return 10;
    }

    uct_ep_h ep = s.create_ep();
    if (ep == nullptr) {
        return 11;
    }

    bufs.resize(regions.size());
    mems.resize(regions.size());
    memhs.resize(regions.size(), nullptr);
    spans.resize(regions.size(), nullptr);
    for (size_t i = 0; i < regions.size(); ++i) {
        region &r = regions[i];
        if (r.read_only != RO_NONE) {
            mems[i] = map_read_only(r);
            ret     = (mems[i] != NULL) ?
                      reg_read_only(s, r, mems[i], &memhs[i], &spans[i]) : 23;
            if (ret != 0) {
                return ret;
            }
            continue;
        }
        bufs[i]   = r.init;
        mems[i]   = bufs[i].data();
        void *base = bufs[i].data() + r.base_off;
        ucs_status_t st = r.is_layout ?
                uct_umr_mem_reg(s.md, base, r.layout.get(), r.count, 0,
                                &memhs[i]) :
                s.reg(base, r.stream.size(), &memhs[i]);
        if (st != UCS_OK) {
            return 12;
        }
    }

    if (!send_bytes(p, s.dev_addr()) || !send_bytes(p, s.ep_addr(ep))) {
        return 13;
    }
    for (size_t i = 0; i < regions.size(); ++i) {
        uint64_t va = (uintptr_t)mems[i] + regions[i].base_off;
        if (!send_bytes(p, s.pack(memhs[i])) || !p.send(va)) {
            return 14;
        }
    }

    if (!recv_bytes(p, peer_dev) || !recv_bytes(p, peer_ep) ||
        (s.connect(ep, peer_dev, peer_ep) != UCS_OK)) {
        return 15;
    }

    for (;;) {
        if (!p.recv(cmd, 120.0)) {
            return 16;
        }
        if (cmd == CMD_EXIT) {
            break;
        } else if (cmd == CMD_DUMP) {
            for (size_t i = 0; i < regions.size(); ++i) {
                if (!send_bytes(p, bytes_t(mems[i], mems[i] +
                                           regions[i].init.size()))) {
                    return 17;
                }
            }
        } else if (cmd == CMD_DEREG) {
            if (!p.recv(idx) || (idx >= memhs.size()) ||
                (s.dereg(memhs[idx]) != UCS_OK)) {
                return 18;
            }
            memhs[idx] = nullptr;
            p.send(uint32_t(0));
        }
    }

    for (size_t i = 0; i < regions.size(); ++i) {
        for (uct_mem_h m : {memhs[i], spans[i]}) {
            if (m != nullptr) {
                s.dereg(m);
            }
        }
        if (regions[i].read_only != RO_NONE) {
            munmap(mems[i], regions[i].init.size());
        }
    }
    return 0;
}

} // namespace


class test_uct_md : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_UCS_OK(m_s.open(uct_test_dev()));
    }

    uct_stack m_s;
};

TEST_F(test_uct_md, query)
{
    EXPECT_TRUE(m_s.md_attr.cap.flags & UCT_MD_FLAG_REG);
    EXPECT_TRUE(m_s.md_attr.cap.flags & UCT_MD_FLAG_NEED_RKEY);
    EXPECT_FALSE(m_s.md_attr.cap.flags & UCT_MD_FLAG_ALLOC);
    EXPECT_EQ(24u, m_s.md_attr.rkey_packed_size);

    const uct_iface_attr_t &a = m_s.iface_attr;
    uint64_t need = UCT_IFACE_FLAG_PUT_ZCOPY | UCT_IFACE_FLAG_GET_ZCOPY |
                    UCT_IFACE_FLAG_PUT_SHORT | UCT_IFACE_FLAG_PUT_BCOPY |
                    UCT_IFACE_FLAG_GET_BCOPY | UCT_IFACE_FLAG_PENDING |
                    UCT_IFACE_FLAG_CONNECT_TO_EP;
    EXPECT_EQ(need, a.cap.flags & need);
    /* no active messages, no atomics, no connect-to-iface */
    EXPECT_FALSE(a.cap.flags & (UCT_IFACE_FLAG_AM_SHORT |
                                UCT_IFACE_FLAG_AM_BCOPY |
                                UCT_IFACE_FLAG_AM_ZCOPY |
                                UCT_IFACE_FLAG_CONNECT_TO_IFACE));
    EXPECT_EQ(0u, a.cap.atomic64.op_flags);
    /* far above a NIC's 30 SGEs: many entries become one UMR list key */
    EXPECT_GE(a.cap.put.max_iov, 256u);
    EXPECT_GE(a.cap.get.max_iov, 256u);
    EXPECT_GT(a.ep_addr_len, 0u);
    EXPECT_GT(a.device_addr_len, 0u);
    /* never looks better than shared memory for contiguous data */
    EXPECT_GT(ucs_linear_func_apply(a.latency, 1), 1e-6);
}

TEST_F(test_uct_md, reachable_self_not_other_engine)
{
    bytes_t dev = m_s.dev_addr(), ifa = m_s.iface_addr();
    EXPECT_TRUE(uct_iface_is_reachable(m_s.iface,
                                       (uct_device_addr_t*)dev.data(),
                                       (uct_iface_addr_t*)ifa.data()));
    ifa[0] ^= 0xff; /* another engine */
    EXPECT_FALSE(uct_iface_is_reachable(m_s.iface,
                                        (uct_device_addr_t*)dev.data(),
                                        (uct_iface_addr_t*)ifa.data()));
}

TEST_F(test_uct_md, rkey_pack_unpack_both_kinds)
{
    std::vector<uint8_t> buf(4096);
    uct_mem_h contig, lay;
    umr_layout_t *vec;
    uct_rkey_bundle_t rk;

    ASSERT_UCS_OK(m_s.reg(buf.data(), buf.size(), &contig));
    ASSERT_UCS_OK(umr_layout_vector(16, 32, 128, NULL, &vec));
    ASSERT_UCS_OK(uct_umr_mem_reg(m_s.md, buf.data(), vec, 2, 0, &lay));
    umr_layout_free(vec); /* the memh keeps its own copy */

    for (uct_mem_h m : {contig, lay}) {
        bytes_t packed = m_s.pack(m);
        ASSERT_EQ(m_s.md_attr.rkey_packed_size, packed.size());
        ASSERT_UCS_OK(m_s.unpack(packed, &rk));
        EXPECT_NE(0u, rk.rkey);
        m_s.release(&rk);
    }

    uct_umr_md_stats_t st;
    ASSERT_UCS_OK(uct_umr_md_get_stats(m_s.md, &st));
    EXPECT_EQ(1u, st.layout_regs);
    EXPECT_GE(st.mkeys_in_use, 1u);

    ASSERT_UCS_OK(m_s.dereg(lay));
    ASSERT_UCS_OK(m_s.dereg(contig));
    ASSERT_UCS_OK(uct_umr_md_get_stats(m_s.md, &st));
    EXPECT_EQ(0u, st.mkeys_in_use);
    EXPECT_EQ(st.mkeys_created, st.mkeys_free);
}

TEST_F(test_uct_md, bad_input)
{
    std::vector<uint8_t> buf(1024);
    umr_layout_t *vec, *empty;
    uct_rkey_bundle_t rk;
    uct_mem_h memh;

    ASSERT_UCS_OK(umr_layout_vector(4, 8, 64, NULL, &vec));
    ASSERT_UCS_OK(umr_layout_contig(0, &empty));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_umr_mem_reg(m_s.md, buf.data(), NULL, 1, 0, &memh));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_umr_mem_reg(m_s.md, buf.data(), vec, 0, 0, &memh));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_umr_mem_reg(m_s.md, NULL, vec, 1, 0, &memh));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_umr_mem_reg(m_s.md, buf.data(), empty, 1, 0, &memh));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_umr_mem_reg(NULL, buf.data(), vec, 1, 0, &memh));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, m_s.reg(buf.data(), 0, &memh));

    /* garbage is not a key */
    bytes_t junk(m_s.md_attr.rkey_packed_size, 0xab);
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, m_s.unpack(junk, &rk));

    uct_umr_md_stats_t mst;
    uct_umr_ep_stats_t est;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_umr_md_get_stats(NULL, &mst));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_umr_ep_get_stats(NULL, &est));

    umr_layout_free(vec);
    umr_layout_free(empty);
}

/* A UMR of the md does not complete in time, and the reset that follows
 * cannot create a new QP: the md must keep nothing it freed, refuse
 * registrations cleanly while it has no QP, recover once a QP can be
 * created, and destroy each QP and CQ exactly once (before the fix it
 * destroyed the freed ones again at close). */
TEST_F(test_uct_md, umr_qp_reset_failure)
{
    std::vector<uint8_t> buf(64 * 1024);
    umr_test_eng_fault_t f = {};
    umr_layout_t *vec;
    uct_mem_h memh;

    m_s.close();
    ASSERT_UCS_OK(m_s.open(uct_test_dev(), {{"REG_TIMEOUT", "0.05s"}}));
    ASSERT_UCS_OK(umr_layout_vector(16, 64, 256, NULL, &vec));
    ASSERT_UCS_OK(umr_test_eng_fault_install(m_s.md, &f));

    f.hold_wcs       = 1;
    f.fail_qp_create = 1;
    EXPECT_EQ(UCS_ERR_TIMED_OUT,
              uct_umr_mem_reg(m_s.md, buf.data(), vec, 1, 0, &memh));
    EXPECT_EQ(1u, f.qp_destroyed) << "the QP with UMRs in flight is "
                                     "destroyed";
    EXPECT_EQ(0u, f.qp_created);
    f.hold_wcs = 0;

    /* still no QP and none can be created: a clean error */
    f.fail_qp_create = 1;
    EXPECT_EQ(UCS_ERR_NO_MEMORY,
              uct_umr_mem_reg(m_s.md, buf.data(), vec, 1, 0, &memh));

    /* a QP can be created again: registration works end to end */
    ASSERT_UCS_OK(uct_umr_mem_reg(m_s.md, buf.data(), vec, 1, 0, &memh));
    EXPECT_EQ(1u, f.qp_created);
    ASSERT_UCS_OK(m_s.dereg(memh));

    uct_umr_md_stats_t mst;
    ASSERT_UCS_OK(uct_umr_md_get_stats(m_s.md, &mst));
    EXPECT_EQ(0u, mst.mkeys_in_use);

    m_s.close();
    umr_test_eng_fault_remove(NULL);
    EXPECT_EQ(0u, f.bad_destroys) << "a QP or CQ destroyed twice";
    EXPECT_EQ(f.qp_created + 1, f.qp_destroyed);
    EXPECT_EQ(f.cq_created + 1, f.cq_destroyed);
    umr_layout_free(vec);
}

/* A UMR that completes in error breaks the layout path of the md once
 * (finding 5 of the ConnectX review): the registration fails, counter
 * umr_failed 1, the QP in error is reset once; later registrations are
 * refused at once (UCS_ERR_UNSUPPORTED: the callers fall back), with no UMR
 * posted and no QP destroyed or created. Before: a failed UMR and a QP
 * reset for every registration. */
TEST_F(test_uct_md, umr_error_breaks_the_layout_path)
{
    std::vector<uint8_t> buf(64 * 1024);
    umr_test_eng_fault_t f = {};
    umr_layout_t *vec;
    uct_mem_h memh;
    uct_umr_md_stats_t mst;

    ASSERT_UCS_OK(umr_layout_vector(16, 64, 256, NULL, &vec));
    ASSERT_UCS_OK(umr_test_eng_fault_install(m_s.md, &f));
    f.fail_wcs = 1;
    EXPECT_EQ(UCS_ERR_IO_ERROR,
              uct_umr_mem_reg(m_s.md, buf.data(), vec, 1, 0, &memh));
    f.fail_wcs = 0;
    ASSERT_UCS_OK(uct_umr_md_get_stats(m_s.md, &mst));
    EXPECT_EQ(1u, mst.umr_failed);
    uint64_t posted = mst.umr_posted;
    unsigned resets = f.qp_destroyed;
    EXPECT_EQ(1u, resets);

    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(UCS_ERR_UNSUPPORTED,
                  uct_umr_mem_reg(m_s.md, buf.data(), vec, 1,
                                  UCT_MD_MEM_FLAG_HIDE_ERRORS, &memh));
    }
    ASSERT_UCS_OK(uct_umr_md_get_stats(m_s.md, &mst));
    EXPECT_EQ(1u, mst.umr_failed);
    EXPECT_EQ(posted, mst.umr_posted) << "no UMR posted any more";
    EXPECT_EQ(resets, f.qp_destroyed) << "no QP reset any more";
    EXPECT_EQ(0u, mst.mkeys_in_use);

    m_s.close();
    umr_test_eng_fault_remove(NULL);
    EXPECT_EQ(0u, f.bad_destroys);
    umr_layout_free(vec);
}

/* Issue 18 finding 4: an md UMR that does not complete in time. The wait
 * gives up with UCS_ERR_TIMED_OUT while the UMRs are still posted; before
 * the fix the QP stayed, the keys went back to the pool, and the next
 * registration's wait counted the late completions as its own and returned
 * before its UMRs had completed (a peer could read a key not yet
 * configured). Now a timeout resets the QP like any other failure: the late
 * completions are never counted, and the keys are invalidated before they
 * serve again. */
TEST_F(test_uct_md, umr_timeout_resets_the_qp)
{
    std::vector<uint8_t> buf(64 * 1024);
    umr_test_eng_fault_t f = {};
    umr_layout_t *vec;
    uct_mem_h memh;

    m_s.close();
    ASSERT_UCS_OK(m_s.open(uct_test_dev(), {{"REG_TIMEOUT", "0.05s"}}));
    ASSERT_UCS_OK(umr_layout_vector(16, 64, 256, NULL, &vec));
    ASSERT_UCS_OK(umr_test_eng_fault_install(m_s.md, &f));

    f.hold_wcs = 1;
    EXPECT_EQ(UCS_ERR_TIMED_OUT,
              uct_umr_mem_reg(m_s.md, buf.data(), vec, 1, 0, &memh));
    EXPECT_EQ(1u, f.qp_destroyed) << "a timed-out UMR leaves the QP reset";
    EXPECT_EQ(1u, f.qp_created);

    f.hold_wcs = 0;
    for (int i = 0; i < 3; ++i) {
        ASSERT_UCS_OK(uct_umr_mem_reg(m_s.md, buf.data(), vec, 1, 0, &memh));
        ASSERT_UCS_OK(m_s.dereg(memh));
    }
    EXPECT_EQ(0u, f.late_wcs) << "a wait counted completions of UMRs posted "
                                 "before the timeout as its own";

    uct_umr_md_stats_t mst;
    ASSERT_UCS_OK(uct_umr_md_get_stats(m_s.md, &mst));
    EXPECT_EQ(0u, mst.mkeys_in_use);

    m_s.close();
    umr_test_eng_fault_remove(NULL);
    EXPECT_EQ(0u, f.bad_destroys) << "a QP or CQ destroyed twice";
    umr_layout_free(vec);
}

/* Issue 30 finding 2: a layout key over the caller's registration
 * (uct_umr_mem_reg_over) registers nothing again - one memory registration
 * (mem_regs: a pin and its translation entries on a NIC) per buffer,
 * whatever the keys over it - and asks no more access than it has;
 * uct_umr_mem_reg registers its span itself. Before, pml/umr's layout keys
 * went through uct_umr_mem_reg over its cached regions: every buffer was
 * registered twice. */
TEST_F(test_uct_md, layout_over_memh_pins_once)
{
    const unsigned ro = UCT_MD_MEM_ACCESS_REMOTE_GET |
                        UCT_MD_MEM_ACCESS_LOCAL_READ;
    std::vector<uint8_t> buf(64 * 1024);
    uct_mem_h contig, ro_memh, lay[3], bad;
    uct_umr_md_stats_t st;
    umr_layout_t *vec;

    ASSERT_UCS_OK(umr_layout_vector(16, 64, 256, NULL, &vec));
    ASSERT_UCS_OK(m_s.reg(buf.data(), buf.size(), &contig));
    ASSERT_UCS_OK(uct_umr_mem_reg_over(m_s.md, buf.data(), vec, 1, &contig,
                                       1, 0, &lay[0]));
    ASSERT_UCS_OK(uct_umr_mem_reg_over(m_s.md, buf.data() + 8192, vec, 4,
                                       &contig, 1, 0, &lay[1]));
    ASSERT_UCS_OK(uct_umr_md_get_stats(m_s.md, &st));
    EXPECT_EQ(1u, st.mem_regs) << "a layout key registered its memory again";
    EXPECT_EQ(2u, st.layout_regs);
    ASSERT_UCS_OK(uct_umr_mem_reg(m_s.md, buf.data(), vec, 1, 0, &lay[2]));
    ASSERT_UCS_OK(uct_umr_md_get_stats(m_s.md, &st));
    EXPECT_EQ(2u, st.mem_regs) << "uct_umr_mem_reg registers its own span";

    /* blocks outside the handle, a layout handle, no handle: refused */
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_umr_mem_reg_over(m_s.md, buf.data() + buf.size() - 1024,
                                   vec, 1, &contig, 1, 0, &bad));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_umr_mem_reg_over(m_s.md, buf.data(), vec, 1, &lay[0], 1,
                                   0, &bad));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_umr_mem_reg_over(m_s.md, buf.data(), vec, 1, NULL, 0, 0,
                                   &bad));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_umr_mem_reg_over(m_s.md, buf.data(), vec, 1, &contig,
                                   UCT_UMR_MEM_REG_MAX_MEMHS + 1, 0, &bad));
    /* a key for remote writes over memory registered for reads: refused;
     * one for reads: fine */
    ASSERT_UCS_OK(uct_md_mem_reg(m_s.md, buf.data(), 16384, ro, &ro_memh));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_umr_mem_reg_over(m_s.md, buf.data(), vec, 1, &ro_memh, 1,
                                   0, &bad));
    ASSERT_UCS_OK(uct_umr_mem_reg_over(m_s.md, buf.data(), vec, 1, &ro_memh,
                                       1, ro, &bad));

    for (uct_mem_h m : {bad, lay[0], lay[1], lay[2], ro_memh, contig}) {
        ASSERT_UCS_OK(m_s.dereg(m));
    }
    ASSERT_UCS_OK(uct_umr_md_get_stats(m_s.md, &st));
    EXPECT_EQ(0u, st.mkeys_in_use) << "a refused registration kept a key";
    umr_layout_free(vec);
}

TEST_F(test_uct_md, not_connected_ep_refuses)
{
    std::vector<uint8_t> buf(64);
    uct_ep_h ep = m_s.create_ep();
    ASSERT_NE(nullptr, ep);
    EXPECT_EQ(UCS_ERR_NOT_CONNECTED,
              uct_ep_put_short(ep, buf.data(), 8, 0, 0));
}


/* uct.h: am_alignment is a power of 2, am_align_offset needs it and lies
 * below it. An RMA-only transport must still refuse what the API forbids. */
TEST_F(test_uct_md, iface_open_checks_am_alignment)
{
    struct {
        uint64_t    fields;
        size_t      align, offset;
        ucs_status_t want;
    } cases[] = {
        {UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT,      0,  0, UCS_ERR_INVALID_PARAM},
        {UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT,      3,  0, UCS_ERR_INVALID_PARAM},
        {UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT,     24,  0, UCS_ERR_INVALID_PARAM},
        {UCT_IFACE_PARAM_FIELD_AM_ALIGN_OFFSET,   0,  4, UCS_ERR_INVALID_PARAM},
        {UCT_IFACE_PARAM_FIELD_AM_ALIGN_OFFSET,   0,  0, UCS_ERR_INVALID_PARAM},
        {UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT |
         UCT_IFACE_PARAM_FIELD_AM_ALIGN_OFFSET,   8,  8, UCS_ERR_INVALID_PARAM},
        {UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT |
         UCT_IFACE_PARAM_FIELD_AM_ALIGN_OFFSET,   8, 12, UCS_ERR_INVALID_PARAM},
        {UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT,      1,  0, UCS_OK},
        {UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT,     64,  0, UCS_OK},
        {UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT |
         UCT_IFACE_PARAM_FIELD_AM_ALIGN_OFFSET,   8,  7, UCS_OK},
        {UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT |
         UCT_IFACE_PARAM_FIELD_AM_ALIGN_OFFSET,   1,  0, UCS_OK},
    };
    uct_iface_config_t *config;

    ASSERT_UCS_OK(uct_md_iface_config_read(m_s.md, "mlx5_umr", NULL, NULL,
                                           &config));
    for (const auto &c : cases) {
        uct_iface_params_t params;
        uct_iface_h iface = nullptr;

        memset(&params, 0, sizeof(params));
        params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                      UCT_IFACE_PARAM_FIELD_DEVICE | c.fields;
        params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
        params.mode.device.tl_name  = "mlx5_umr";
        params.mode.device.dev_name = uct_test_dev().c_str();
        params.am_alignment         = c.align;
        params.am_align_offset      = c.offset;

        ucs_status_t st = uct_iface_open(m_s.md, m_s.worker, &params, config,
                                         &iface);
        EXPECT_EQ(c.want, st) << "fields 0x" << std::hex << c.fields
                              << std::dec << " am_alignment " << c.align
                              << " am_align_offset " << c.offset << ": "
                              << ucs_status_string(st);
        if (st == UCS_OK) {
            uct_iface_close(iface);
        }
    }
    uct_config_release(config);
}


/* UCP opens ifaces with a feature request: by default it sees nothing. */
TEST(test_uct_ucp_lanes, hidden_from_feature_requests_by_default)
{
    for (const char *val : {"n", "y"}) {
        uct_stack s;
        s.request_features = true;
        ASSERT_UCS_OK(s.open(uct_test_dev(), {}, {{"UCP_LANES", val}}));
        if (!strcmp(val, "n")) {
            EXPECT_EQ((uint64_t)UCT_IFACE_FLAG_CONNECT_TO_EP,
                      s.iface_attr.cap.flags);
        } else {
            EXPECT_TRUE(s.iface_attr.cap.flags & UCT_IFACE_FLAG_PUT_ZCOPY);
        }
    }
}

/* ---- two processes ----------------------------------------------------- */

class test_uct_xproc : public ::testing::Test {
protected:
    /* Refused calls fired nothing; the targets hold `want` (the contiguous
     * one written as the test says, the layout one untouched by gets). */
    void expect_refused_then(const test_comp &comp,
                             const std::vector<bytes_t> &want) {
        for (int i = 0; i < 5; ++i) {
            m_s.progress();
        }
        EXPECT_EQ(0, comp.fired);
        std::vector<bytes_t> got = dump();
        EXPECT_EQ(want[0], got[0]) << first_diff(got[0], want[0]);
        EXPECT_EQ(want[1], got[1]) << "get must not write the target";
    }

    /* A layout put or get of one element: posted until accepted (progress
     * on NO_RESOURCE), then waited for. */
    ucs_status_t layout_op(int op, uct_mem_h memh, void *base,
                           const umr_layout_t *l, size_t off, size_t len,
                           uint64_t raddr, uct_rkey_t rkey) {
        test_comp comp;
        ucs_status_t st;
        do {
            st = (op == OP_PUT) ?
                 uct_umr_ep_put_layout(m_ep, memh, base, l, 1, off, len,
                                       raddr, rkey, &comp.uct) :
                 uct_umr_ep_get_layout(m_ep, memh, base, l, 1, off, len,
                                       raddr, rkey, &comp.uct);
            if (st == UCS_ERR_NO_RESOURCE) {
                m_s.progress();
            }
        } while (st == UCS_ERR_NO_RESOURCE);
        if (st != UCS_INPROGRESS) {
            return st;
        }
        return m_s.wait(comp) ? comp.status : UCS_ERR_TIMED_OUT;
    }

    /* The usual pair of targets: region 0 contiguous (contig_len bytes),
     * region 1 a random layout of at least layout_min bytes, both filled
     * from rng; then start(). */
    void start_contig_and_layout(std::mt19937_64 &rng, size_t contig_len,
                                 size_t layout_min,
                                 const config_t &md_cfg = config_t(),
                                 const config_t &iface_cfg = config_t()) {
        m_regions.emplace_back();
        make_contig_region(m_regions.back(), contig_len);
        m_regions.emplace_back();
        make_layout_region(rng, m_regions.back(), layout_min);
        ASSERT_FALSE(HasFatalFailure());
        for (auto &r : m_regions) {
            fill_random(rng, r.init);
        }
        start(md_cfg, iface_cfg);
    }

    void start(const config_t &md_cfg = config_t(),
               const config_t &iface_cfg = config_t()) {
        ASSERT_UCS_OK(m_s.open(uct_test_dev(), md_cfg, iface_cfg));
        /* in place: in the child, the proc stays reachable (no false leak) */
        m_child.emplace([&](proc &p) {
            return target_main(p, m_regions, md_cfg, iface_cfg);
        });

        bytes_t dev, epa;
        ASSERT_TRUE(recv_bytes(*m_child, dev));
        ASSERT_TRUE(recv_bytes(*m_child, epa));
        m_rkeys.resize(m_regions.size());
        m_va.resize(m_regions.size());
        for (size_t i = 0; i < m_regions.size(); ++i) {
            bytes_t packed;
            ASSERT_TRUE(recv_bytes(*m_child, packed));
            ASSERT_TRUE(m_child->recv(m_va[i]));
            ASSERT_UCS_OK(m_s.unpack(packed, &m_rkeys[i]));
            m_packed.push_back(packed);
        }

        m_ep = m_s.create_ep();
        ASSERT_NE(nullptr, m_ep);
        ASSERT_UCS_OK(m_s.connect(m_ep, dev, epa));
        ASSERT_TRUE(send_bytes(*m_child, m_s.dev_addr()));
        ASSERT_TRUE(send_bytes(*m_child, m_s.ep_addr(m_ep)));
    }

    void TearDown() override {
        for (auto &rk : m_rkeys) {
            m_s.release(&rk);
        }
        m_rkeys.clear();
        if (m_child) {
            m_child->send(uint32_t(CMD_EXIT));
            EXPECT_TRUE(m_child->join());
        }
        m_s.close();
    }

    std::vector<bytes_t> dump() {
        std::vector<bytes_t> out(m_regions.size());
        EXPECT_TRUE(m_child->send(uint32_t(CMD_DUMP)));
        for (auto &b : out) {
            EXPECT_TRUE(recv_bytes(*m_child, b));
        }
        return out;
    }

    void remote_dereg(uint32_t idx) {
        uint32_t ack;
        ASSERT_TRUE(m_child->send(uint32_t(CMD_DEREG)));
        ASSERT_TRUE(m_child->send(idx));
        ASSERT_TRUE(m_child->recv(ack));
    }

    /* remote address of key byte `off` of region i */
    uint64_t raddr(size_t i, size_t off) const {
        return m_regions[i].is_layout ? off : m_va[i] + off;
    }

    /* Post until accepted, progressing on NO_RESOURCE; wait for it. */
    ucs_status_t run(int op, const std::vector<uct_iov_t> &iov,
                     uint64_t remote_addr, uct_rkey_t rkey) {
        test_comp comp;
        ucs_status_t status;
        do {
            status = (op == OP_PUT) ?
                     uct_ep_put_zcopy(m_ep, iov.data(), iov.size(),
                                      remote_addr, rkey, &comp.uct) :
                     uct_ep_get_zcopy(m_ep, iov.data(), iov.size(),
                                      remote_addr, rkey, &comp.uct);
            if (status == UCS_ERR_NO_RESOURCE) {
                m_s.progress();
            }
        } while (status == UCS_ERR_NO_RESOURCE);

        if (status != UCS_INPROGRESS) {
            return status;
        }
        if (!m_s.wait(comp)) {
            return UCS_ERR_TIMED_OUT;
        }
        EXPECT_EQ(1, comp.fired);
        return comp.status;
    }

    uct_umr_ep_stats_t ep_stats() {
        uct_umr_ep_stats_t st;
        EXPECT_UCS_OK_(uct_umr_ep_get_stats(m_ep, &st));
        return st;
    }

    static void EXPECT_UCS_OK_(ucs_status_t s) {
        EXPECT_EQ(UCS_OK, s) << ucs_status_string(s);
    }

    uct_stack                      m_s;
    std::vector<region>            m_regions;
    std::optional<proc>            m_child;
    std::vector<uct_rkey_bundle_t> m_rkeys;
    std::vector<bytes_t>           m_packed;
    std::vector<uint64_t>          m_va;
    uct_ep_h                       m_ep = nullptr;
};


/* Local side of one case: a buffer, its handle and the iov over it. */
struct local_side {
    region                 r;
    uct_mem_h              memh = nullptr;
    std::vector<uct_iov_t> iov;
    std::vector<ptrdiff_t> data;   /* buffer index of each moved byte */
    bytes_t                buf;
};

struct xcase {
    int    op, lkind, rkind;
    size_t ridx;        /* target region */
    size_t off, len;    /* range of the remote key */
    std::unique_ptr<local_side> local;
    std::string desc;
};

/* Builds the local side for `len` bytes; registers it on md. */
static void make_local(std::mt19937_64 &rng, uct_stack &s, int kind,
                       size_t len, local_side &l)
{
    if (kind == LOCAL_LAYOUT) {
        make_layout_region(rng, l.r, len);
        if (::testing::Test::HasFatalFailure()) {
            return;
        }
        fill_random(rng, l.r.init);
        l.buf = l.r.init;
        ASSERT_UCS_OK(uct_umr_mem_reg(s.md, l.buf.data() + l.r.base_off,
                                      l.r.layout.get(), l.r.count, 0,
                                      &l.memh));
        size_t loff = rng() % (l.r.stream.size() - len + 1);
        l.data.assign(l.r.stream.begin() + loff,
                      l.r.stream.begin() + loff + len);
        uct_iov_t iov = {(void*)(uintptr_t)loff, len, l.memh, 0, 1};
        l.iov.push_back(iov);
        return;
    }

    /* contig: one entry; iov: random fragments with random gaps */
    std::vector<size_t> frags;
    if (kind == LOCAL_CONTIG) {
        frags.push_back(len);
    } else {
        size_t nfrag = 1 + rng() % std::min<size_t>(len, 120);
        std::vector<size_t> cuts{0, len};
        while (cuts.size() < nfrag + 1) {
            cuts.push_back(1 + rng() % (len - 1 + (len == 1)));
        }
        std::sort(cuts.begin(), cuts.end());
        cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
        for (size_t i = 0; i + 1 < cuts.size(); ++i) {
            frags.push_back(cuts[i + 1] - cuts[i]);
        }
    }

    size_t size = GUARD;
    std::vector<size_t> pos;
    for (size_t f : frags) {
        pos.push_back(size);
        size += f + ((kind == LOCAL_IOV) ? rng() % 48 : 0);
    }
    l.buf.resize(size + GUARD);
    fill_random(rng, l.buf);
    l.r.init = l.buf;
    ASSERT_UCS_OK(s.reg(l.buf.data(), l.buf.size(), &l.memh));
    for (size_t i = 0; i < frags.size(); ++i) {
        uct_iov_t iov = {l.buf.data() + pos[i], frags[i], l.memh, 0, 1};
        l.iov.push_back(iov);
        for (size_t j = 0; j < frags[i]; ++j) {
            l.data.push_back(pos[i] + j);
        }
    }
    l.r.desc = std::to_string(frags.size()) + " fragments";
}

TEST_F(test_uct_xproc, put_get_all_combinations)
{
    /* 12 combinations x this many random cases (UMR_TEST_UCT_CASES); each
     * case registers its own target region, bounded by the md key pool */
    const char *env = getenv("UMR_TEST_UCT_CASES");
    const int cases_per_combo = env ? atoi(env) : 40;
    uint64_t seed;
    std::mt19937_64 rng = seeded_rng(&seed);
    std::vector<xcase> cases;

    /* target regions: one per case, contiguous or layout */
    for (int op = OP_PUT; op <= OP_GET; ++op) {
        for (int lk = LOCAL_CONTIG; lk <= LOCAL_LAYOUT; ++lk) {
            for (int rk = REMOTE_CONTIG; rk <= REMOTE_LAYOUT; ++rk) {
                for (int i = 0; i < cases_per_combo; ++i) {
                    xcase c;
                    c.op = op; c.lkind = lk; c.rkind = rk;
                    c.ridx = m_regions.size();
                    m_regions.emplace_back();
                    region &r = m_regions.back();
                    if (rk == REMOTE_LAYOUT) {
                        make_layout_region(rng, r, 1);
                        ASSERT_FALSE(HasFatalFailure());
                    } else {
                        make_contig_region(r, 1 + rng() % 6000);
                    }
                    fill_random(rng, r.init);
                    size_t total = r.stream.size();
                    /* a local layout must hold len bytes: keep it modest */
                    c.len = 1 + rng() % ((lk == LOCAL_LAYOUT) ?
                                         std::min<size_t>(total, 3000) :
                                         total);
                    c.off = rng() % (total - c.len + 1);
                    cases.push_back(std::move(c));
                }
            }
        }
    }

    start();
    ASSERT_FALSE(HasFatalFailure());

    std::vector<bytes_t> want(m_regions.size());
    for (size_t i = 0; i < m_regions.size(); ++i) {
        want[i] = m_regions[i].init;
    }

    for (auto &c : cases) {
        region &r = m_regions[c.ridx];
        c.local.reset(new local_side);
        local_side &l = *c.local;
        make_local(rng, m_s, c.lkind, c.len, l);
        ASSERT_FALSE(HasFatalFailure());

        std::ostringstream os;
        os << "seed " << seed << ": " << op_names[c.op] << " local "
           << local_names[c.lkind] << " [" << l.r.desc << "] remote "
           << remote_names[c.rkind] << " [" << r.desc << "] off " << c.off
           << " len " << c.len;
        c.desc = os.str();
        SCOPED_TRACE(c.desc);

        ucs_status_t st = run(c.op, l.iov, raddr(c.ridx, c.off),
                              m_rkeys[c.ridx].rkey);
        ASSERT_EQ(UCS_OK, st) << ucs_status_string(st);

        bytes_t lwant = l.r.init;
        for (size_t k = 0; k < c.len; ++k) {
            if (c.op == OP_PUT) {
                want[c.ridx][r.stream[c.off + k]] = l.r.init[l.data[k]];
            } else {
                lwant[l.data[k]] = r.init[r.stream[c.off + k]];
            }
        }
        ASSERT_EQ(lwant, l.buf) << "local buffer:" << first_diff(l.buf, lwant);
    }

    std::vector<bytes_t> got = dump();
    for (auto &c : cases) {
        SCOPED_TRACE(c.desc);
        ASSERT_EQ(want[c.ridx], got[c.ridx])
                << "remote buffer:" << first_diff(got[c.ridx], want[c.ridx]);
        ASSERT_UCS_OK(m_s.dereg(c.local->memh));
    }

    uct_umr_ep_stats_t st = ep_stats();
    EXPECT_EQ((uint64_t)cases.size(), st.zcopy_ops);
    printf("[ STATS    ] zcopy %llu wrs %llu hits %llu misses %llu pack %llu\n",
           (unsigned long long)st.zcopy_ops, (unsigned long long)st.rdma_wrs,
           (unsigned long long)st.cache_hits,
           (unsigned long long)st.cache_misses,
           (unsigned long long)st.pack_fallbacks);
}

/* Every key the ep cache took is back in the pool after the ep is gone. */
TEST_F(test_uct_xproc, cache_hits_evictions_invalidation)
{
    region r;
    make_contig_region(r, 64 * 1024);
    m_regions.push_back(std::move(r));
    start({}, {{"CACHE_SIZE", "2"}, {"PACK_THRESH", "0"}});
    ASSERT_FALSE(HasFatalFailure());

    bytes_t buf(64 * 1024);
    std::mt19937_64 rng(7);
    fill_random(rng, buf);
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(buf.data(), buf.size(), &memh));

    /* three different 40-entry iovs (more than the 30 SGEs of a WR) and one
     * of 80 entries (two levels of list keys) */
    auto make_iov = [&](size_t first, size_t n) {
        std::vector<uct_iov_t> iov;
        for (size_t i = 0; i < n; ++i) {
            uct_iov_t e = {buf.data() + first + i * 96, 64, memh, 0, 1};
            iov.push_back(e);
        }
        return iov;
    };
    std::vector<std::vector<uct_iov_t>> iovs = {
        make_iov(0, 40), make_iov(8192, 40), make_iov(16384, 40),
        make_iov(24576, 80)};

    for (int i = 0; i < 10; ++i) {
        ASSERT_EQ(UCS_OK, run(OP_PUT, iovs[0], m_va[0], m_rkeys[0].rkey));
    }
    uct_umr_ep_stats_t st = ep_stats();
    EXPECT_EQ(1u, st.cache_misses);
    EXPECT_EQ(9u, st.cache_hits);
    EXPECT_EQ(0u, st.cache_evictions);
    EXPECT_EQ(0u, st.pack_fallbacks);

    /* round robin over 3 with room for 2: every access misses and evicts */
    for (int i = 0; i < 6; ++i) {
        ASSERT_EQ(UCS_OK, run(OP_PUT, iovs[1 + (i % 3)],
                              m_va[0] + 1000 * i, m_rkeys[0].rkey));
    }
    st = ep_stats();
    EXPECT_EQ(7u, st.cache_misses);
    EXPECT_EQ(9u, st.cache_hits);
    EXPECT_EQ(5u, st.cache_evictions); /* {0,1} full -> 4 evictions + 1 */
    EXPECT_EQ(2u, st.cache_entries);

    /* the last put must have landed: data check of the 80-entry gather */
    std::vector<bytes_t> got = dump();
    size_t k = 0;
    for (const auto &e : iovs[3]) {
        ASSERT_EQ(0, memcmp(got[0].data() + GUARD + 5000 + k, e.buffer,
                            e.length)) << "entry at " << k;
        k += e.length;
    }

    uct_umr_md_stats_t mst;
    ASSERT_UCS_OK(uct_umr_md_get_stats(m_s.md, &mst));
    EXPECT_GT(mst.mkeys_in_use, 0u);

    /* deregistration drops every entry using the memory */
    ASSERT_UCS_OK(m_s.dereg(memh));
    st = ep_stats();
    EXPECT_EQ(2u, st.cache_invalidations);
    EXPECT_EQ(0u, st.cache_entries);
    ASSERT_UCS_OK(uct_umr_md_get_stats(m_s.md, &mst));
    EXPECT_EQ(0u, mst.mkeys_in_use);
    EXPECT_EQ(mst.mkeys_created, mst.mkeys_free);
}

/* A tiny queue: NO_RESOURCE, pending, and a flush completing last. */
TEST_F(test_uct_xproc, tiny_queue_pending_flush_order)
{
    const int n = 40;
    region r;
    make_contig_region(r, n * 256);
    m_regions.push_back(std::move(r));
    start({}, {{"TX_QUEUE_LEN", "4"}});
    ASSERT_FALSE(HasFatalFailure());

    bytes_t buf(n * 256);
    std::mt19937_64 rng(11);
    fill_random(rng, buf);
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(buf.data(), buf.size(), &memh));

    std::vector<int> order;
    std::vector<test_comp> comps(n + 1);
    struct pending_put {
        uct_pending_req_t req;
        uct_ep_h          ep;
        uct_iov_t         iov;
        uint64_t          raddr;
        uct_rkey_t        rkey;
        test_comp         *comp;
        int               posted = 0;
    };
    std::vector<pending_put> pend_reqs(n);
    int no_resource = 0, queued = 0;

    auto post = [](pending_put *p) {
        return uct_ep_put_zcopy(p->ep, &p->iov, 1, p->raddr, p->rkey,
                                &p->comp->uct);
    };

    for (int i = 0; i < n; ++i) {
        comps[i].order = &order;
        comps[i].id    = i;
        pending_put &p = pend_reqs[i];
        p.ep    = m_ep;
        p.iov   = {buf.data() + i * 256, 256, memh, 0, 1};
        p.raddr = m_va[0] + i * 256;
        p.rkey  = m_rkeys[0].rkey;
        p.comp  = &comps[i];
        p.req.func = [](uct_pending_req_t *self) -> ucs_status_t {
            pending_put *pp = ucs_container_of(self, pending_put, req);
            ucs_status_t s  = uct_ep_put_zcopy(pp->ep, &pp->iov, 1, pp->raddr,
                                               pp->rkey, &pp->comp->uct);
            if (s == UCS_ERR_NO_RESOURCE) {
                return s;
            }
            pp->posted = 1;
            return UCS_OK;
        };

        ucs_status_t s = queued ? UCS_ERR_NO_RESOURCE : post(&p);
        if (s == UCS_ERR_NO_RESOURCE) {
            no_resource += !queued;
            s = uct_ep_pending_add(m_ep, &p.req, 0);
            if (s == UCS_ERR_BUSY) { /* resources came back: retry */
                s = post(&p);
                ASSERT_EQ(UCS_INPROGRESS, s);
                p.posted = 1;
                continue;
            }
            ASSERT_EQ(UCS_OK, s);
            ++queued;
        } else {
            ASSERT_EQ(UCS_INPROGRESS, s);
            p.posted = 1;
        }
    }
    EXPECT_GT(no_resource, 0);
    EXPECT_GT(queued, 0);

    /* no completion is delivered outside progress */
    EXPECT_TRUE(order.empty());

    comps[n].order = &order;
    comps[n].id    = n;
    ucs_status_t fs;
    do {
        fs = uct_ep_flush(m_ep, 0, &comps[n].uct);
        if (fs == UCS_ERR_NO_RESOURCE) {
            m_s.progress();
        }
    } while (fs == UCS_ERR_NO_RESOURCE);
    ASSERT_EQ(UCS_INPROGRESS, fs);
    ASSERT_TRUE(m_s.wait(comps[n]));

    ASSERT_EQ((size_t)n + 1, order.size());
    for (int i = 0; i <= n; ++i) {
        EXPECT_EQ(i, order[i]) << "completions out of order";
        EXPECT_EQ(1, comps[i].fired);
        EXPECT_EQ(UCS_OK, comps[i].status);
    }
    for (auto &p : pend_reqs) {
        EXPECT_TRUE(p.posted);
    }

    EXPECT_GT(ep_stats().no_resource, 0u);
    std::vector<bytes_t> got = dump();
    EXPECT_EQ(0, memcmp(got[0].data() + GUARD, buf.data(), buf.size()));
    EXPECT_EQ(UCS_OK, m_s.flush(m_ep)); /* nothing left: done at once */
    ASSERT_UCS_OK(m_s.dereg(memh));
}

/* A key used after its memory was deregistered fails and writes nothing;
 * after the failure the ep is in error and refuses further work. */
class test_uct_stale : public test_uct_xproc,
                       public ::testing::WithParamInterface<int> {
};

TEST_P(test_uct_stale, remote_key_fails_after_dereg)
{
    std::mt19937_64 rng = seeded_rng();
    m_regions.emplace_back();
    if (GetParam() == REMOTE_LAYOUT) {
        make_layout_region(rng, m_regions.back(), 64);
    } else {
        make_contig_region(m_regions.back(), 512);
    }
    ASSERT_FALSE(HasFatalFailure());
    fill_random(rng, m_regions.back().init);
    start();
    ASSERT_FALSE(HasFatalFailure());

    bytes_t src(64, 0x5c);
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(src.data(), src.size(), &memh));
    std::vector<uct_iov_t> iov = {{src.data(), src.size(), memh, 0, 1}};

    /* while registered the key works */
    ASSERT_EQ(UCS_OK, run(OP_PUT, iov, raddr(0, 0), m_rkeys[0].rkey));
    remote_dereg(0);
    std::vector<bytes_t> before = dump();
    for (size_t k = 0; k < 64; ++k) {
        ASSERT_EQ(0x5c, before[0][m_regions[0].stream[k]]);
    }

    src.assign(64, 0xa7);
    ucs_status_t st = run(OP_PUT, iov, raddr(0, 0), m_rkeys[0].rkey);
    EXPECT_EQ(UCS_ERR_INVALID_ADDR, st) << ucs_status_string(st);
    st = run(OP_GET, iov, raddr(0, 0), m_rkeys[0].rkey);
    EXPECT_NE(UCS_OK, st) << "the ep must stay failed";
    EXPECT_NE(UCS_OK, m_s.flush(m_ep)) << "flush must report the failure";

    EXPECT_EQ(before, dump()) << "a stale key wrote memory";
    ASSERT_UCS_OK(m_s.dereg(memh));
}

INSTANTIATE_TEST_SUITE_P(kind, test_uct_stale,
                         ::testing::Values((int)REMOTE_CONTIG,
                                           (int)REMOTE_LAYOUT),
                         [](const ::testing::TestParamInfo<int> &i) {
                             return std::string(remote_names[i.param]);
                         });

/* Out-of-range offsets and foreign keys are refused before posting. */
TEST_F(test_uct_xproc, bad_offsets_and_keys)
{
    std::mt19937_64 rng = seeded_rng();
    m_regions.emplace_back();
    make_layout_region(rng, m_regions.back(), 16);
    ASSERT_FALSE(HasFatalFailure());
    m_regions.emplace_back();
    make_contig_region(m_regions.back(), 256);
    for (auto &r : m_regions) {
        fill_random(rng, r.init);
    }
    start();
    ASSERT_FALSE(HasFatalFailure());

    bytes_t src(4096, 0x11);
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(src.data(), src.size(), &memh));
    size_t total = m_regions[0].stream.size();
    std::vector<bytes_t> before = dump();

    std::vector<uct_iov_t> iov1 = {{src.data(), 1, memh, 0, 1}};
    std::vector<uct_iov_t> ioverflow = {{src.data(), total + 1, memh, 0, 1}};
    test_comp comp;
    /* layout: offset == length, and length + 1 from 0 */
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_ep_put_zcopy(m_ep, iov1.data(), 1, total, m_rkeys[0].rkey,
                               &comp.uct));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_ep_get_zcopy(m_ep, ioverflow.data(), 1, 0, m_rkeys[0].rkey,
                               &comp.uct));
    /* contiguous: below the base and past the end */
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_ep_put_zcopy(m_ep, iov1.data(), 1, m_va[1] - 1,
                               m_rkeys[1].rkey, &comp.uct));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_ep_put_short(m_ep, src.data(), 8, m_va[1] + 252,
                               m_rkeys[1].rkey));
    /* local side outside its memory handle */
    std::vector<uct_iov_t> badlocal = {{src.data() + 4090, 16, memh, 0, 1}};
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_ep_put_zcopy(m_ep, badlocal.data(), 1, m_va[1],
                               m_rkeys[1].rkey, &comp.uct));
    /* without a memory handle only a single entry is accepted */
    std::vector<uct_iov_t> nomemh = {{src.data(), 16, NULL, 0, 1},
                                     {src.data() + 32, 16, NULL, 0, 1}};
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_ep_put_zcopy(m_ep, nomemh.data(), 2, m_va[1],
                               m_rkeys[1].rkey, &comp.uct));
    for (int i = 0; i < 10; ++i) {
        m_s.progress();
    }
    EXPECT_EQ(0, comp.fired);

    /* a well-formed key with a wrong key number: remote access error */
    bytes_t forged = m_packed[1];
    forged[4] ^= 0x5a; /* rkey field, tag byte */
    uct_rkey_bundle_t frk;
    ASSERT_UCS_OK(m_s.unpack(forged, &frk));
    std::vector<uct_iov_t> iov8 = {{src.data(), 8, memh, 0, 1}};
    ucs_status_t st = run(OP_PUT, iov8, m_va[1], frk.rkey);
    EXPECT_EQ(UCS_ERR_INVALID_ADDR, st) << ucs_status_string(st);
    m_s.release(&frk);

    EXPECT_EQ(before, dump()) << "a refused operation wrote memory";
    ASSERT_UCS_OK(m_s.dereg(memh));
}

/* put_short, put_bcopy, get_bcopy through bounce buffers. */
TEST_F(test_uct_xproc, short_and_bcopy)
{
    m_regions.emplace_back();
    make_contig_region(m_regions.back(), 8192);
    std::mt19937_64 rng(3);
    fill_random(rng, m_regions.back().init);
    start();
    ASSERT_FALSE(HasFatalFailure());

    bytes_t want = m_regions[0].init;
    bytes_t src(8192);
    fill_random(rng, src);

    ASSERT_UCS_OK(uct_ep_put_short(m_ep, src.data(), 100, m_va[0] + 10,
                                   m_rkeys[0].rkey));
    memcpy(want.data() + GUARD + 10, src.data(), 100);

    struct pack_arg { const uint8_t *p; size_t n; } pa = {src.data() + 100, 3000};
    ssize_t len = uct_ep_put_bcopy(m_ep, [](void *dest, void *arg) -> size_t {
        pack_arg *a = (pack_arg*)arg;
        memcpy(dest, a->p, a->n);
        return a->n;
    }, &pa, m_va[0] + 4000, m_rkeys[0].rkey);
    ASSERT_EQ(3000, len);
    memcpy(want.data() + GUARD + 4000, src.data() + 100, 3000);
    ASSERT_UCS_OK(m_s.flush(m_ep));

    bytes_t got(5000);
    test_comp comp;
    ucs_status_t st = uct_ep_get_bcopy(m_ep, [](void *arg, const void *data,
                                                size_t length) {
        memcpy(arg, data, length);
    }, got.data(), got.size(), m_va[0] + 100, m_rkeys[0].rkey, &comp.uct);
    ASSERT_EQ(UCS_INPROGRESS, st);
    ASSERT_TRUE(m_s.wait(comp));
    EXPECT_EQ(UCS_OK, comp.status);
    EXPECT_EQ(0, memcmp(got.data(), want.data() + GUARD + 100, got.size()));

    /* zcopy from/to an unregistered single buffer (as UCP may pass) */
    bytes_t plain(777);
    fill_random(rng, plain);
    std::vector<uct_iov_t> iov = {{plain.data(), plain.size(), NULL, 0, 1}};
    ASSERT_EQ(UCS_OK, run(OP_PUT, iov, m_va[0] + 6000, m_rkeys[0].rkey));
    memcpy(want.data() + GUARD + 6000, plain.data(), plain.size());
    iov[0].length = 500;
    ASSERT_EQ(UCS_OK, run(OP_GET, iov, m_va[0] + 4000, m_rkeys[0].rkey));
    EXPECT_EQ(0, memcmp(plain.data(), want.data() + GUARD + 4000, 500));

    EXPECT_EQ(want, dump()[0]);
}

/* Tiny blocks are packed, not described: still byte-exact, both ways. */
TEST_F(test_uct_xproc, pack_fallback_tiny_blocks)
{
    m_regions.emplace_back();
    make_contig_region(m_regions.back(), 4096);
    std::mt19937_64 rng(5);
    fill_random(rng, m_regions.back().init);
    start();
    ASSERT_FALSE(HasFatalFailure());

    /* a 3D-halo x face: 8-byte blocks, stride 64 */
    bytes_t buf(256 * 64);
    fill_random(rng, buf);
    bytes_t orig = buf;
    umr_layout_t *vec;
    uct_mem_h lay;
    ASSERT_UCS_OK(umr_layout_vector(256, 8, 64, NULL, &vec));
    ASSERT_UCS_OK(uct_umr_mem_reg(m_s.md, buf.data(), vec, 1, 0, &lay));

    std::vector<uct_iov_t> iov = {{(void*)(uintptr_t)16, 2000, lay, 0, 1}};
    ASSERT_EQ(UCS_OK, run(OP_PUT, iov, m_va[0] + 7, m_rkeys[0].rkey));
    EXPECT_EQ(1u, ep_stats().pack_fallbacks);

    bytes_t packed(2048);
    ASSERT_UCS_OK(umr_layout_pack(vec, 1, orig.data(), packed.data()));
    bytes_t got = dump()[0];
    EXPECT_EQ(0, memcmp(got.data() + GUARD + 7, packed.data() + 16, 2000));

    /* get back into the layout from another place */
    bytes_t want = orig;
    ASSERT_UCS_OK(umr_layout_unpack_range(vec, 1, want.data(), 100, 1000,
                                              got.data() + GUARD + 500));
    iov[0].buffer = (void*)(uintptr_t)100;
    iov[0].length = 1000;
    ASSERT_EQ(UCS_OK, run(OP_GET, iov, m_va[0] + 500, m_rkeys[0].rkey));
    EXPECT_EQ(2u, ep_stats().pack_fallbacks);
    EXPECT_EQ(want, buf);

    ASSERT_UCS_OK(m_s.dereg(lay));
    umr_layout_free(vec);
}

/* Local layouts over contiguous memory: the ep caches one UMR key per
 * (memh, layout, base, count); a halo loop configures it once. */
TEST_F(test_uct_xproc, local_layout_cache_halo_loop)
{
    uint64_t seed;
    std::mt19937_64 rng = seeded_rng(&seed);
    start_contig_and_layout(rng, 64 * 1024, 2048);
    ASSERT_FALSE(HasFatalFailure());

    bytes_t buf(64 * 1024);
    fill_random(rng, buf);
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(buf.data(), buf.size(), &memh));
    std::vector<bytes_t> want = {m_regions[0].init, m_regions[1].init};

    auto run_layout = [&](int op, void *base, const umr_layout_t *l,
                          size_t count, size_t off, size_t len,
                          uint64_t raddr, uct_rkey_t rkey) {
        test_comp comp;
        ucs_status_t st;
        umr_layout_t *copy;
        EXPECT_UCS_OK_(umr_layout_dup(l, &copy));
        do {
            st = (op == OP_PUT) ?
                 uct_umr_ep_put_layout(m_ep, memh, base, copy, count, off,
                                       len, raddr, rkey, &comp.uct) :
                 uct_umr_ep_get_layout(m_ep, memh, base, copy, count, off,
                                       len, raddr, rkey, &comp.uct);
            if (st == UCS_ERR_NO_RESOURCE) {
                m_s.progress();
            }
        } while (st == UCS_ERR_NO_RESOURCE);
        umr_layout_free(copy); /* before completion: allowed */
        if (st != UCS_INPROGRESS) {
            return st;
        }
        return m_s.wait(comp) ? comp.status : UCS_ERR_TIMED_OUT;
    };

    /* a 2D halo row set: 64 rows of 256 B, stride 512 */
    umr_layout_t *rows;
    ASSERT_UCS_OK(umr_layout_vector(64, 256, 512, NULL, &rows));
    void *base = buf.data() + 100;
    bytes_t packed(64 * 256);
    ASSERT_UCS_OK(umr_layout_pack(rows, 1, base, packed.data()));

    uct_umr_md_stats_t mst0, mst1;
    ASSERT_UCS_OK(uct_umr_md_get_stats(m_s.md, &mst0));
    for (int it = 0; it < 10; ++it) {
        ASSERT_EQ(UCS_OK, run_layout(OP_PUT, base, rows, 1, 0, packed.size(),
                                     m_va[0] + 16, m_rkeys[0].rkey))
                << "iteration " << it;
    }
    memcpy(want[0].data() + GUARD + 16, packed.data(), packed.size());
    uct_umr_ep_stats_t st = ep_stats();
    EXPECT_EQ(1u, st.cache_misses);
    EXPECT_EQ(9u, st.cache_hits);
    EXPECT_EQ(0u, st.pack_fallbacks);
    ASSERT_UCS_OK(uct_umr_md_get_stats(m_s.md, &mst1));
    EXPECT_EQ(mst0.umr_posted, mst1.umr_posted) << "the ep QP configures it";

    /* the same layout at another base is another key */
    ASSERT_EQ(UCS_OK, run_layout(OP_PUT, buf.data() + 200, rows, 1, 1000,
                                 3000, m_va[0] + 20000, m_rkeys[0].rkey));
    ASSERT_UCS_OK(umr_layout_pack_range(rows, 1, buf.data() + 200, 1000,
                                            3000, packed.data()));
    memcpy(want[0].data() + GUARD + 20000, packed.data(), 3000);
    EXPECT_EQ(2u, ep_stats().cache_misses);

    /* get into the layout from the remote layout key, random ranges */
    for (int i = 0; i < 8; ++i) {
        size_t rtotal = m_regions[1].stream.size();
        size_t len    = 1 + rng() % std::min<size_t>(rtotal, 64 * 256);
        size_t roff   = rng() % (rtotal - len + 1);
        size_t loff   = rng() % (64 * 256 - len + 1);
        bytes_t before = buf;
        SCOPED_TRACE("seed " + std::to_string(seed) + " get roff " +
                     std::to_string(roff) + " loff " + std::to_string(loff) +
                     " len " + std::to_string(len));
        ASSERT_EQ(UCS_OK, run_layout(OP_GET, base, rows, 1, loff, len, roff,
                                     m_rkeys[1].rkey));
        bytes_t src(len);
        for (size_t k = 0; k < len; ++k) {
            src[k] = m_regions[1].init[m_regions[1].stream[roff + k]];
        }
        ASSERT_UCS_OK(umr_layout_unpack_range(rows, 1,
                                                  before.data() + 100, loff,
                                                  len, src.data()));
        ASSERT_EQ(before, buf) << first_diff(buf, before);
    }

    /* tiny blocks (a 3D halo x face) are packed, both ways */
    umr_layout_t *xface;
    ASSERT_UCS_OK(umr_layout_vector(300, 8, 64, NULL, &xface));
    void *xbase = buf.data() + 40000;
    bytes_t xpacked(2400);
    ASSERT_UCS_OK(umr_layout_pack(xface, 1, xbase, xpacked.data()));
    ASSERT_EQ(UCS_OK, run_layout(OP_PUT, xbase, xface, 1, 0, 2400,
                                 m_va[0] + 30000, m_rkeys[0].rkey));
    memcpy(want[0].data() + GUARD + 30000, xpacked.data(), 2400);
    bytes_t before = buf;
    ASSERT_EQ(UCS_OK, run_layout(OP_GET, xbase, xface, 1, 800, 800,
                                 m_va[0] + 16, m_rkeys[0].rkey));
    ASSERT_UCS_OK(umr_layout_unpack_range(xface, 1,
                                              before.data() + 40000, 800, 800,
                                              want[0].data() + GUARD + 16));
    EXPECT_EQ(before, buf);
    EXPECT_EQ(2u, ep_stats().pack_fallbacks);

    /* bad input: never posted, never written */
    test_comp comp;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,   /* span past the memory handle */
              uct_umr_ep_put_layout(m_ep, memh, buf.data() + 40000, rows, 1,
                                    0, 8, m_va[0], m_rkeys[0].rkey,
                                    &comp.uct));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,   /* range past the layout */
              uct_umr_ep_put_layout(m_ep, memh, base, rows, 1, 16000, 385,
                                    m_va[0], m_rkeys[0].rkey, &comp.uct));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,   /* not an mlx5_umr ep */
              uct_umr_ep_put_layout(NULL, memh, base, rows, 1, 0, 8, m_va[0],
                                    m_rkeys[0].rkey, &comp.uct));
    expect_refused_then(comp, want);

    /* dereg drops both cached keys; the ep gone, every key is pooled */
    ASSERT_UCS_OK(m_s.dereg(memh));
    EXPECT_EQ(2u, ep_stats().cache_invalidations);
    m_s.destroy_ep(m_ep);
    m_ep = nullptr;
    ASSERT_UCS_OK(uct_umr_md_get_stats(m_s.md, &mst1));
    EXPECT_EQ(0u, mst1.mkeys_in_use);
    EXPECT_EQ(mst1.mkeys_created, mst1.mkeys_free);

    umr_layout_free(rows);
    umr_layout_free(xface);
}

/* A local layout whose blocks lie in two allocations with unmapped memory
 * between them (an MPI_BOTTOM struct of separate arrays): no contiguous
 * handle covers it, so the caller registers each allocation, joins them in
 * one layout handle (uct_umr_mem_reg_over) and passes that handle as the
 * local side: its key serves, both ways, byte for byte; a layout handle of
 * other elements is refused before anything moves. */
TEST_F(test_uct_xproc, local_layout_over_two_allocations)
{
    uint64_t seed;
    std::mt19937_64 rng = seeded_rng(&seed);
    SCOPED_TRACE("seed " + std::to_string(seed));
    start_contig_and_layout(rng, 64 * 1024, 2048);
    ASSERT_FALSE(HasFatalFailure());

    const size_t page = sysconf(_SC_PAGESIZE), len = 4 * page;
    uint8_t *map = (uint8_t*)mmap(NULL, 3 * len, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, (void*)map);
    ASSERT_EQ(0, munmap(map + len, len));   /* the hole between them */
    uint8_t *a = map, *b = map + 2 * len;
    for (size_t i = 0; i < len; ++i) {
        a[i] = (uint8_t)rng();
        b[i] = (uint8_t)rng();
    }

    /* 24 blocks of 128 B in each allocation, stride 160 */
    umr_layout_t *rows, *both;
    ASSERT_UCS_OK(umr_layout_vector(24, 128, 160, NULL, &rows));
    const size_t bls[2]    = {1, 1};
    const ptrdiff_t dps[2] = {16, (ptrdiff_t)(b - a) + 32};
    const umr_layout_t *ts[2] = {rows, rows};
    ASSERT_UCS_OK(umr_layout_struct(2, bls, dps, ts, &both));
    const size_t total = umr_layout_size(both);

    uct_mem_h ma, mb, lay, wide;
    ASSERT_UCS_OK(m_s.reg(a, len, &ma));
    ASSERT_UCS_OK(m_s.reg(b, len, &mb));
    EXPECT_NE(UCS_OK, uct_umr_mem_reg(m_s.md, a, both, 1,
                                      UCT_MD_MEM_FLAG_HIDE_ERRORS, &wide))
            << "the span over the hole registered";
    const uct_mem_h two[2] = {ma, mb};
    ASSERT_UCS_OK(uct_umr_mem_reg_over(m_s.md, a, both, 1, two, 2, 0, &lay));

    auto run_layout = [&](int op, void *base, size_t off, size_t n,
                          uint64_t raddr, uct_rkey_t rkey) {
        return layout_op(op, lay, base, both, off, n, raddr, rkey);
    };

    std::vector<bytes_t> want = {m_regions[0].init, m_regions[1].init};
    bytes_t packed(total);
    ASSERT_UCS_OK(umr_layout_pack(both, 1, a, packed.data()));
    ASSERT_EQ(UCS_OK, run_layout(OP_PUT, a, 0, total, m_va[0] + 16,
                                 m_rkeys[0].rkey));
    memcpy(want[0].data() + GUARD + 16, packed.data(), total);
    EXPECT_EQ(0u, ep_stats().cache_misses) << "the handle's key serves";

    /* get part of the remote layout key's stream into both allocations */
    bytes_t ba(a, a + len), bb(b, b + len);
    size_t n    = std::min<size_t>(total - 100, m_regions[1].stream.size());
    bytes_t src(n);
    for (size_t k = 0; k < n; ++k) {
        src[k] = m_regions[1].init[m_regions[1].stream[k]];
    }
    ASSERT_EQ(UCS_OK, run_layout(OP_GET, a, 100, n, 0, m_rkeys[1].rkey));
    {
        /* the reference: the same range unpacked into copies */
        bytes_t want_ab(3 * len, 0);
        memcpy(want_ab.data(), ba.data(), len);
        memcpy(want_ab.data() + 2 * len, bb.data(), len);
        umr_layout_t *both_here;
        const ptrdiff_t dps_here[2] = {16, (ptrdiff_t)(2 * len) + 32};
        ASSERT_UCS_OK(umr_layout_struct(2, bls, dps_here, ts, &both_here));
        ASSERT_UCS_OK(umr_layout_unpack_range(both_here, 1, want_ab.data(),
                                              100, n, src.data()));
        umr_layout_free(both_here);
        EXPECT_EQ(0, memcmp(want_ab.data(), a, len)) << "first allocation";
        EXPECT_EQ(0, memcmp(want_ab.data() + 2 * len, b, len))
                << "second allocation";
    }

    /* a layout handle of other elements: refused, nothing moves */
    test_comp comp;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_umr_ep_put_layout(m_ep, lay, a + 8, both, 1, 0, 8,
                                    m_va[0], m_rkeys[0].rkey, &comp.uct));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_umr_ep_put_layout(m_ep, lay, a, rows, 1, 0, 8, m_va[0],
                                    m_rkeys[0].rkey, &comp.uct));
    expect_refused_then(comp, want);

    ASSERT_UCS_OK(m_s.dereg(lay));
    ASSERT_UCS_OK(m_s.dereg(ma));
    ASSERT_UCS_OK(m_s.dereg(mb));
    munmap(a, len);
    munmap(b, len);
    umr_layout_free(both);
    umr_layout_free(rows);
}

/* Transfers longer than MAX_MSG are split into fragments, any local kind. */
TEST_F(test_uct_xproc, fragments_at_max_msg)
{
    uint64_t seed;
    std::mt19937_64 rng = seeded_rng(&seed);
    start_contig_and_layout(rng, 80 * 1024, 4000, {},
                            {{"MAX_MSG", "1000"}, {"TX_QUEUE_LEN", "64"},
                             {"PACK_THRESH", "0"}});
    ASSERT_FALSE(HasFatalFailure());
    std::vector<bytes_t> want = {m_regions[0].init, m_regions[1].init};

    bytes_t buf(80 * 1024);
    fill_random(rng, buf);
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(buf.data(), buf.size(), &memh));

    /* contiguous 10000 B: 10 WRs */
    std::vector<uct_iov_t> one = {{buf.data(), 10000, memh, 0, 1}};
    uint64_t wrs0 = ep_stats().rdma_wrs;
    ASSERT_EQ(UCS_OK, run(OP_PUT, one, m_va[0] + 3, m_rkeys[0].rkey));
    EXPECT_EQ(10u, ep_stats().rdma_wrs - wrs0);
    memcpy(want[0].data() + GUARD + 3, buf.data(), 10000);

    /* 40 entries of 100 B (a list key) into the remote layout, 4 WRs */
    std::vector<uct_iov_t> many;
    for (int i = 0; i < 40; ++i) {
        many.push_back({buf.data() + 12000 + i * 150, 100, memh, 0, 1});
    }
    size_t rtotal = m_regions[1].stream.size();
    size_t roff   = rng() % (rtotal - 4000 + 1);
    wrs0 = ep_stats().rdma_wrs;
    ASSERT_EQ(UCS_OK, run(OP_PUT, many, roff, m_rkeys[1].rkey))
            << "seed " << seed << " roff " << roff;
    EXPECT_EQ(4u, ep_stats().rdma_wrs - wrs0);
    for (size_t k = 0; k < 4000; ++k) {
        want[1][m_regions[1].stream[roff + k]] =
                buf[12000 + (k / 100) * 150 + (k % 100)];
    }

    /* get 2500 B of the layout key back: 3 WRs */
    bytes_t back(2500);
    uct_mem_h bmemh;
    ASSERT_UCS_OK(m_s.reg(back.data(), back.size(), &bmemh));
    std::vector<uct_iov_t> biov = {{back.data(), back.size(), bmemh, 0, 1}};
    ASSERT_EQ(UCS_OK, run(OP_GET, biov, roff + 700, m_rkeys[1].rkey));
    for (size_t k = 0; k < back.size(); ++k) {
        ASSERT_EQ(want[1][m_regions[1].stream[roff + 700 + k]], back[k])
                << "byte " << k << " seed " << seed;
    }

    /* more fragments than the queue holds: refused, not posted */
    test_comp comp;
    std::vector<uct_iov_t> huge = {{buf.data(), 70000, memh, 0, 1}};
    EXPECT_LE(m_s.iface_attr.cap.put.max_zcopy, 64u * 1000);
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
              uct_ep_put_zcopy(m_ep, huge.data(), 1, m_va[0], m_rkeys[0].rkey,
                               &comp.uct));

    std::vector<bytes_t> got = dump();
    EXPECT_EQ(want[0], got[0]) << first_diff(got[0], want[0]);
    EXPECT_EQ(want[1], got[1]) << first_diff(got[1], want[1]);
    ASSERT_UCS_OK(m_s.dereg(bmemh));
    ASSERT_UCS_OK(m_s.dereg(memh));
}

/* Destroying an ep with operations in flight leaks nothing and returns
 * every key to the pool; the iface keeps working. */
TEST_F(test_uct_xproc, destroy_ep_with_inflight_ops)
{
    m_regions.emplace_back();
    make_contig_region(m_regions.back(), 64 * 1024);
    start();
    ASSERT_FALSE(HasFatalFailure());

    bytes_t buf(64 * 1024, 0x3c);
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(buf.data(), buf.size(), &memh));
    std::vector<uct_iov_t> many;
    for (int i = 0; i < 60; ++i) {
        many.push_back({buf.data() + i * 512, 256, memh, 0, 1});
    }

    std::vector<test_comp> comps(20);
    int posted = 0;
    for (auto &c : comps) {
        ucs_status_t st = uct_ep_put_zcopy(m_ep, many.data(), many.size(),
                                           m_va[0], m_rkeys[0].rkey, &c.uct);
        if (st == UCS_INPROGRESS) {
            ++posted;
        } else {
            ASSERT_EQ(UCS_ERR_NO_RESOURCE, st);
        }
    }
    EXPECT_GT(posted, 0);

    m_s.destroy_ep(m_ep);
    m_ep = nullptr;
    for (int i = 0; i < 100; ++i) {
        m_s.progress();
    }
    for (auto &c : comps) {
        EXPECT_EQ(0, c.fired) << "no callback after the ep is destroyed";
    }

    EXPECT_EQ(UCS_OK, uct_iface_flush(m_s.iface, 0, NULL));
    uct_umr_md_stats_t mst;
    ASSERT_UCS_OK(uct_umr_md_get_stats(m_s.md, &mst));
    EXPECT_EQ(0u, mst.mkeys_in_use);
    ASSERT_UCS_OK(m_s.dereg(memh));
}

/* Issue 12 finding 4: a peer dies mid-transfer. Its endpoint's outstanding
 * and later operations fail, the iface error handler hears of it once, and
 * an endpoint to a live peer keeps working. */
struct ep_err_record {
    std::vector<uct_ep_h>     eps;
    std::vector<ucs_status_t> statuses;
};

static ucs_status_t record_ep_err(void *arg, uct_ep_h ep, ucs_status_t status)
{
    ep_err_record *rec = (ep_err_record*)arg;
    rec->eps.push_back(ep);
    rec->statuses.push_back(status);
    return UCS_OK;
}

TEST_F(test_uct_xproc, peer_failure_reaches_error_handler)
{
    const size_t len = 64 * 1024, chunk = 4096;
    ep_err_record rec;

    m_s.err_handler     = record_ep_err;
    m_s.err_handler_arg = &rec;
    m_regions.emplace_back();
    make_contig_region(m_regions.back(), len);
    start(); /* m_ep: to the peer that stays alive */
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_TRUE(m_s.iface_attr.cap.flags &
                UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE);

    /* a second peer, the one that dies */
    std::vector<region> dying(1);
    make_contig_region(dying[0], len);
    proc peer([&](proc &p) { return target_main(p, dying, {}, {}); });
    bytes_t dev, epa, packed;
    uint64_t va;
    uct_rkey_bundle_t rk;
    ASSERT_TRUE(recv_bytes(peer, dev));
    ASSERT_TRUE(recv_bytes(peer, epa));
    ASSERT_TRUE(recv_bytes(peer, packed));
    ASSERT_TRUE(peer.recv(va));
    ASSERT_UCS_OK(m_s.unpack(packed, &rk));
    uct_ep_h ep = m_s.create_ep();
    ASSERT_NE(nullptr, ep);
    ASSERT_UCS_OK(m_s.connect(ep, dev, epa));
    ASSERT_TRUE(send_bytes(peer, m_s.dev_addr()));
    ASSERT_TRUE(send_bytes(peer, m_s.ep_addr(ep)));

    bytes_t buf(len, 0x5a);
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(buf.data(), buf.size(), &memh));

    /* alive: a put completes */
    uct_iov_t iov = {buf.data(), chunk, memh, 0, 1};
    test_comp first;
    ASSERT_EQ(UCS_INPROGRESS, uct_ep_put_zcopy(ep, &iov, 1, va, rk.rkey,
                                               &first.uct));
    ASSERT_TRUE(m_s.wait(first));
    EXPECT_EQ(UCS_OK, first.status);

    /* outstanding when the peer dies (the sw engine moves data in progress) */
    std::vector<test_comp> comps(8);
    for (size_t i = 0; i < comps.size(); ++i) {
        iov.buffer = buf.data() + i * chunk;
        ASSERT_EQ(UCS_INPROGRESS,
                  uct_ep_put_zcopy(ep, &iov, 1, va + i * chunk, rk.rkey,
                                   &comps[i].uct));
    }
    peer.kill();

    for (auto &c : comps) {
        ASSERT_TRUE(m_s.wait(c));
        EXPECT_EQ(1, c.fired);
        EXPECT_TRUE(UCS_STATUS_IS_ERR(c.status)) << ucs_status_string(c.status);
    }
    ASSERT_EQ(1u, rec.eps.size()) << "the handler hears of the failure";
    EXPECT_EQ(ep, rec.eps[0]);
    EXPECT_TRUE((rec.statuses[0] == UCS_ERR_ENDPOINT_TIMEOUT) ||
                (rec.statuses[0] == UCS_ERR_CONNECTION_RESET))
            << ucs_status_string(rec.statuses[0]);

    /* later operations fail at once; the handler is not called again */
    test_comp later;
    iov.buffer = buf.data();
    EXPECT_TRUE(UCS_STATUS_IS_ERR(uct_ep_put_zcopy(ep, &iov, 1, va, rk.rkey,
                                                   &later.uct)));
    EXPECT_TRUE(UCS_STATUS_IS_ERR(uct_ep_put_short(ep, buf.data(), 8, va,
                                                   rk.rkey)));
    EXPECT_TRUE(UCS_STATUS_IS_ERR(uct_ep_flush(ep, 0, NULL)));
    for (int i = 0; i < 100; ++i) {
        m_s.progress();
    }
    EXPECT_EQ(0, later.fired);
    EXPECT_EQ(1u, rec.eps.size());

    /* the endpoint to the live peer still moves data, byte for byte */
    bytes_t src(len);
    for (size_t i = 0; i < len; ++i) {
        src[i] = (uint8_t)(i * 7 + 1);
    }
    uct_mem_h src_memh;
    ASSERT_UCS_OK(m_s.reg(src.data(), src.size(), &src_memh));
    uct_iov_t live = {src.data(), len, src_memh, 0, 1};
    EXPECT_EQ(UCS_OK, run(OP_PUT, {live}, m_va[0], m_rkeys[0].rkey));
    std::vector<bytes_t> out = dump();
    bytes_t want = m_regions[0].init;
    std::copy(src.begin(), src.end(), want.begin() + GUARD);
    EXPECT_EQ(want, out[0]) << first_diff(out[0], want);
    EXPECT_TRUE(rec.eps.size() == 1u);

    m_s.release(&rk);
    m_s.destroy_ep(ep);
    ASSERT_UCS_OK(m_s.dereg(src_memh));
    ASSERT_UCS_OK(m_s.dereg(memh));
}

/* Issue 12 finding 5: resources that can never clear must fail with an error
 * naming the variable to raise; resources that can clear must be served. */
static std::vector<std::string> *g_log_lines;

static ucs_log_func_rc_t
capture_log(const char *file, unsigned line, const char *function,
            ucs_log_level_t level, const ucs_log_component_config_t *comp,
            const char *message, va_list ap)
{
    char buf[1024];
    va_list aq;

    if ((g_log_lines != nullptr) && (level <= UCS_LOG_LEVEL_ERROR)) {
        va_copy(aq, ap);
        vsnprintf(buf, sizeof(buf), message, aq);
        va_end(aq);
        g_log_lines->push_back(buf);
    }
    return UCS_LOG_FUNC_RC_CONTINUE;
}

/* Error lines logged while it lives. */
class log_capture {
public:
    log_capture() { g_log_lines = &lines; ucs_log_push_handler(capture_log); }
    ~log_capture() { ucs_log_pop_handler(); g_log_lines = nullptr; }
    bool has(const std::string &s) const {
        for (const auto &l : lines) {
            if (l.find(s) != std::string::npos) {
                return true;
            }
        }
        return false;
    }
    std::vector<std::string> lines;
};

class test_uct_limits : public test_uct_xproc {
protected:
    /* Put (layout, 1) of buf to region 0 and check the remote bytes. */
    void put_layout_checked(uct_mem_h memh, bytes_t &buf,
                            const umr_layout_t *layout) {
        size_t len = umr_layout_size(layout);
        test_comp comp;
        ucs_status_t st;
        do {
            st = uct_umr_ep_put_layout(m_ep, memh, buf.data(), layout, 1, 0,
                                       len, m_va[0], m_rkeys[0].rkey,
                                       &comp.uct);
            if (st == UCS_ERR_NO_RESOURCE) {
                m_s.progress();
            }
        } while (st == UCS_ERR_NO_RESOURCE);
        ASSERT_EQ(UCS_INPROGRESS, st) << ucs_status_string(st);
        ASSERT_TRUE(m_s.wait(comp));
        ASSERT_EQ(UCS_OK, comp.status);
        check_remote(buf, layout, len);
    }

    void check_remote(bytes_t &buf, const umr_layout_t *layout,
                      size_t len) {
        bytes_t want(len);
        ASSERT_UCS_OK(umr_layout_pack(layout, 1, buf.data(), want.data()));
        std::vector<bytes_t> got = dump();
        bytes_t head(got[0].begin() + GUARD, got[0].begin() + GUARD + len);
        EXPECT_EQ(want, head) << first_diff(head, want);
    }

    void start_limits(const config_t &md_cfg, const config_t &iface_cfg) {
        m_regions.emplace_back();
        make_contig_region(m_regions.back(), 64 * 1024);
        start(md_cfg, iface_cfg);
    }
};

/* Registrations in use hold the whole key pool: a layout put gets no key
 * (UCS_ERR_EXCEEDS_LIMIT, found before anything moved: the caller moves the
 * data another way; before, UCS_ERR_NO_RESOURCE forever), without an error
 * line; a registration gets UCS_ERR_NO_RESOURCE (not now) with a line
 * naming the variable, and only a layout that needs more keys than the
 * whole pool gets UCS_ERR_EXCEEDS_LIMIT (never). */
TEST_F(test_uct_limits, mkey_pool_held_by_registrations)
{
    start_limits({{"MKEY_POOL_SIZE", "8"}}, {{"PACK_THRESH", "0"}});
    ASSERT_FALSE(HasFatalFailure());

    bytes_t buf(64 * 1024);
    std::mt19937_64 rng(5);
    fill_random(rng, buf);
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(buf.data(), buf.size(), &memh));
    umr_layout_t *vec, *face;
    ASSERT_UCS_OK(umr_layout_vector(16, 64, 256, NULL, &vec));
    ASSERT_UCS_OK(umr_layout_vector(32, 48, 1024, NULL, &face));

    std::vector<uct_mem_h> regs(8);
    for (size_t i = 0; i < regs.size(); ++i) {
        ASSERT_UCS_OK(uct_umr_mem_reg(m_s.md, buf.data() + i * 4096, vec, 1,
                                      0, &regs[i]));
    }

    {
        log_capture log;
        test_comp comp;
        EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
                  uct_umr_ep_put_layout(m_ep, memh, buf.data(), face, 1, 0,
                                        umr_layout_size(face), m_va[0],
                                        m_rkeys[0].rkey, &comp.uct));
        EXPECT_TRUE(log.lines.empty()) << log.lines[0];
        uct_mem_h more;
        EXPECT_EQ(UCS_ERR_NO_RESOURCE,
                  uct_umr_mem_reg(m_s.md, buf.data(), vec, 1, 0, &more));
        EXPECT_TRUE(log.has("UCX_MLX5_UMR_MKEY_POOL_SIZE"));
        EXPECT_EQ(0, comp.fired);
    }

    {
        /* a caller that falls back (pml/umr) asks for no error line: the
         * same held pool (not now), and a layout beyond the pool's 8 keys
         * (never), are only the status */
        log_capture log;
        uct_mem_h more;
        std::vector<size_t> lens(9 * 52 + 1, 8);
        std::vector<ptrdiff_t> displs(lens.size());
        for (size_t i = 0; i < displs.size(); ++i) {
            displs[i] = 24 * i + 8 * (i % 2);   /* no regular stride */
        }
        umr_layout_t *many;
        ASSERT_UCS_OK(umr_layout_indexed(lens.size(), lens.data(),
                                         displs.data(), NULL, &many));
        EXPECT_EQ(UCS_ERR_NO_RESOURCE,
                  uct_umr_mem_reg(m_s.md, buf.data(), vec, 1,
                                  UCT_MD_MEM_FLAG_HIDE_ERRORS, &more));
        ASSERT_UCS_OK(m_s.dereg(regs.back()));
        regs.pop_back();
        EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
                  uct_umr_mem_reg(m_s.md, buf.data(), many, 1,
                                  UCT_MD_MEM_FLAG_HIDE_ERRORS, &more));
        EXPECT_TRUE(log.lines.empty())
                << log.lines.size() << " lines, the first: "
                << (log.lines.empty() ? "" : log.lines[0]);
        umr_layout_free(many);
    }

    /* one more registration gone: the put gets its key */
    ASSERT_UCS_OK(m_s.dereg(regs.back()));
    regs.pop_back();
    put_layout_checked(memh, buf, face);

    for (auto r : regs) {
        ASSERT_UCS_OK(m_s.dereg(r));
    }
    ASSERT_UCS_OK(m_s.dereg(memh));
    umr_layout_free(vec);
    umr_layout_free(face);
}

/* Registrations their owner keeps idle hold the whole key pool: the md asks
 * the owner (uct_umr_md_reclaim_set) to give back the least recently used
 * ones until the need is met, for a registration and for a layout put; an
 * owner with none idle left answers 0 and the need is refused as without
 * one. */
struct idle_regs {
    uct_md_h               md;
    std::deque<uct_mem_h>  lru;      /* least recently used first */
    unsigned               calls = 0;
};

static int idle_regs_reclaim(void *arg)
{
    idle_regs *r = static_cast<idle_regs*>(arg);

    ++r->calls;
    if (r->lru.empty()) {
        return 0;
    }
    EXPECT_EQ(UCS_OK, uct_md_mem_dereg(r->md, r->lru.front()));
    r->lru.pop_front();
    return 1;
}

TEST_F(test_uct_limits, mkey_pool_reclaims_idle_registrations)
{
    start_limits({{"MKEY_POOL_SIZE", "8"}}, {{"PACK_THRESH", "0"}});
    ASSERT_FALSE(HasFatalFailure());

    bytes_t buf(64 * 1024);
    std::mt19937_64 rng(9);
    fill_random(rng, buf);
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(buf.data(), buf.size(), &memh));
    umr_layout_t *vec, *face;
    ASSERT_UCS_OK(umr_layout_vector(16, 64, 256, NULL, &vec));
    ASSERT_UCS_OK(umr_layout_vector(32, 48, 1024, NULL, &face));

    idle_regs idle;
    idle.md = m_s.md;
    {
        log_capture log;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_umr_md_reclaim_set(NULL, idle_regs_reclaim, &idle));
        EXPECT_TRUE(log.has("uct_umr_md_reclaim_set: md (nil) is not an "
                            "mlx5_umr memory domain"));
    }
    ASSERT_UCS_OK(uct_umr_md_reclaim_set(m_s.md, idle_regs_reclaim, &idle));
    for (size_t i = 0; i < 8; ++i) {
        uct_mem_h r;
        ASSERT_UCS_OK(uct_umr_mem_reg(m_s.md, buf.data() + i * 4096, vec, 1,
                                      0, &r));
        idle.lru.push_back(r);
    }

    {
        log_capture log;
        uct_mem_h more;
        /* a registration: the oldest idle one goes */
        ASSERT_UCS_OK(uct_umr_mem_reg(m_s.md, buf.data(), vec, 1, 0, &more));
        EXPECT_EQ(7u, idle.lru.size());
        /* a put's local key: another one goes */
        put_layout_checked(memh, buf, face);
        EXPECT_EQ(6u, idle.lru.size());
        EXPECT_TRUE(log.lines.empty()) << log.lines[0];
        ASSERT_UCS_OK(m_s.dereg(more));
    }

    /* none idle any more: refused as without an owner */
    while (!idle.lru.empty()) {
        ASSERT_UCS_OK(m_s.dereg(idle.lru.back()));
        idle.lru.pop_back();
    }
    std::vector<uct_mem_h> held(8);
    for (auto &r : held) {
        ASSERT_UCS_OK(uct_umr_mem_reg(m_s.md, buf.data(), vec, 1, 0, &r));
    }
    unsigned calls = idle.calls;
    uct_mem_h more;
    EXPECT_EQ(UCS_ERR_NO_RESOURCE,
              uct_umr_mem_reg(m_s.md, buf.data(), vec, 1,
                              UCT_MD_MEM_FLAG_HIDE_ERRORS, &more));
    EXPECT_GT(idle.calls, calls);

    ASSERT_UCS_OK(uct_umr_md_reclaim_set(m_s.md, NULL, NULL));
    for (auto r : held) {
        ASSERT_UCS_OK(m_s.dereg(r));
    }
    ASSERT_UCS_OK(m_s.dereg(memh));
    umr_layout_free(vec);
    umr_layout_free(face);
}

/* The pool is dry but the ep cache holds idle keys: a registration takes
 * one of them (before: UCS_ERR_NO_RESOURCE, with nothing to progress). */
TEST_F(test_uct_limits, mkey_pool_idle_cache_keys_are_evicted)
{
    start_limits({{"MKEY_POOL_SIZE", "8"}}, {{"PACK_THRESH", "0"}});
    ASSERT_FALSE(HasFatalFailure());

    bytes_t buf(64 * 1024);
    std::mt19937_64 rng(6);
    fill_random(rng, buf);
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(buf.data(), buf.size(), &memh));

    std::vector<umr_layout_t*> faces(4);
    for (size_t i = 0; i < faces.size(); ++i) {
        ASSERT_UCS_OK(umr_layout_vector(16, 64, 256 + 64 * i, NULL,
                                            &faces[i]));
        put_layout_checked(memh, buf, faces[i]);
    }
    EXPECT_EQ(4u, ep_stats().cache_entries);

    umr_layout_t *vec;
    ASSERT_UCS_OK(umr_layout_vector(8, 32, 128, NULL, &vec));
    std::vector<uct_mem_h> regs(5);
    for (size_t i = 0; i < regs.size(); ++i) {
        ucs_status_t st = uct_umr_mem_reg(m_s.md, buf.data() + i * 4096, vec,
                                          1, 0, &regs[i]);
        ASSERT_EQ(UCS_OK, st) << "registration " << i << ": "
                              << ucs_status_string(st);
    }
    uct_umr_ep_stats_t st = ep_stats();
    EXPECT_EQ(1u, st.cache_evictions);
    EXPECT_EQ(3u, st.cache_entries);
    uct_umr_md_stats_t mst;
    ASSERT_UCS_OK(uct_umr_md_get_stats(m_s.md, &mst));
    EXPECT_EQ(8u, mst.mkeys_created);
    EXPECT_EQ(8u, mst.mkeys_in_use);

    /* the least recently used face was evicted: it misses and evicts again */
    put_layout_checked(memh, buf, faces[0]);
    EXPECT_EQ(2u, ep_stats().cache_evictions);

    for (auto r : regs) {
        ASSERT_UCS_OK(m_s.dereg(r));
    }
    ASSERT_UCS_OK(m_s.dereg(memh));
    for (auto f : faces) {
        umr_layout_free(f);
    }
    umr_layout_free(vec);
}

/* Keys that need more UMRs than the ep's queue holds next to the RDMA are
 * configured on the md's queue instead (before: UCS_ERR_EXCEEDS_LIMIT). */
TEST_F(test_uct_limits, tx_queue_shorter_than_the_key)
{
    start_limits({}, {{"TX_QUEUE_LEN", "8"}, {"PACK_THRESH", "0"}});
    ASSERT_FALSE(HasFatalFailure());

    bytes_t buf(64 * 1024);
    std::mt19937_64 rng(8);
    fill_random(rng, buf);
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(buf.data(), buf.size(), &memh));

    /* 600 irregular blocks: list keys of 52 entries, a dozen of them */
    std::vector<size_t> lens;
    std::vector<ptrdiff_t> displs;
    ptrdiff_t pos = 0;
    while (lens.size() < 600) {
        lens.push_back(32 + rng() % 33);
        displs.push_back(pos);
        pos += lens.back() + 8 + rng() % 40;
    }
    ASSERT_LT((size_t)pos, buf.size());
    umr_layout_t *irr;
    ASSERT_UCS_OK(umr_layout_indexed(lens.size(), lens.data(),
                                         displs.data(), NULL, &irr));
    put_layout_checked(memh, buf, irr);
    put_layout_checked(memh, buf, irr);
    uct_umr_ep_stats_t st = ep_stats();
    EXPECT_EQ(1u, st.cache_misses);
    EXPECT_EQ(1u, st.cache_hits);

    /* an iov of 400 blocks: a list key of 9 keys, beyond the queue too */
    uct_iov_t iov = {buf.data(), 64, memh, 96, 400};
    EXPECT_EQ(UCS_OK, run(OP_PUT, {iov}, m_va[0], m_rkeys[0].rkey));
    bytes_t want;
    for (size_t i = 0; i < 400; ++i) {
        want.insert(want.end(), buf.begin() + i * 96, buf.begin() + i * 96 + 64);
    }
    std::vector<bytes_t> got = dump();
    bytes_t head(got[0].begin() + GUARD, got[0].begin() + GUARD + want.size());
    EXPECT_EQ(want, head) << first_diff(head, want);

    ASSERT_UCS_OK(m_s.dereg(memh));
    umr_layout_free(irr);
}

/* An operation of more fragments than the queue holds can never be posted:
 * a clear error that names the variable (the error said nothing before). */
TEST_F(test_uct_limits, tx_queue_never_fits)
{
    start_limits({}, {{"TX_QUEUE_LEN", "8"}, {"MAX_MSG", "4096"}});
    ASSERT_FALSE(HasFatalFailure());

    bytes_t buf(64 * 1024, 0x77);
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(buf.data(), buf.size(), &memh));

    {
        log_capture log;
        uct_iov_t big = {buf.data(), buf.size(), memh, 0, 1};
        EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
                  run(OP_PUT, {big}, m_va[0], m_rkeys[0].rkey));
        EXPECT_TRUE(log.has("UCX_MLX5_UMR_TX_QUEUE_LEN"));
    }

    /* 8 fragments fit */
    uct_iov_t fits = {buf.data(), 8 * 4096, memh, 0, 1};
    EXPECT_EQ(UCS_OK, run(OP_PUT, {fits}, m_va[0], m_rkeys[0].rkey));
    std::vector<bytes_t> got = dump();
    EXPECT_TRUE(std::all_of(got[0].begin() + GUARD,
                            got[0].begin() + GUARD + 8 * 4096,
                            [](uint8_t b) { return b == 0x77; }));
    ASSERT_UCS_OK(m_s.dereg(memh));
}

/* Issue 19 finding 8: endpoint QPs sized for what they post
 * (UCX_MLX5_UMR_EP_UMR=n). The endpoint's QP is created for RDMA only (the
 * engines refuse a UMR on it), so every local key - of a layout operation
 * and of an iov longer than the QP's 4 SGEs - is configured on the md's QP
 * and waited for; the bytes land as the layout engine's CPU pack and unpack
 * say, on either engine (gtest_uct: sw; gtest_uct_mlx5_model: mlx5 over
 * the rdma-core model). */
class test_uct_ep_rdma_only : public test_uct_xproc {
protected:
    uint64_t md_umrs() {
        uct_umr_md_stats_t st;
        EXPECT_UCS_OK_(uct_umr_md_get_stats(m_s.md, &st));
        return st.umr_posted;
    }
};

TEST_F(test_uct_ep_rdma_only, layouts_land_byte_for_byte)
{
    uint64_t seed;
    std::mt19937_64 rng = seeded_rng(&seed);
    start_contig_and_layout(rng, 64 * 1024, 4096, {},
                            {{"EP_UMR", "n"}, {"PACK_THRESH", "0"}});
    ASSERT_FALSE(HasFatalFailure());

    /* what the endpoint QP is: RDMA only, 4 SGEs, a smaller send queue
     * than with UMR (the engine's own figure; gtest_uct_mlx5_model checks
     * it against the model's rdma-core rules) */
    uct_umr_iface_attr_t attr, attr_umr;
    ASSERT_UCS_OK(uct_umr_iface_query(m_s.iface, &attr));
    EXPECT_EQ(0, attr.ep_umr);
    EXPECT_EQ(4u, attr.ep_max_sge);
    {
        uct_stack s;
        ASSERT_UCS_OK(s.open(uct_test_dev(), {}, {{"EP_UMR", "y"}}));
        ASSERT_UCS_OK(uct_umr_iface_query(s.iface, &attr_umr));
    }
    EXPECT_EQ(1, attr_umr.ep_umr);
    EXPECT_EQ(attr.ep_sq_len, attr_umr.ep_sq_len);
    EXPECT_GT(attr.ep_sq_bytes, 0u);
    EXPECT_LT(attr.ep_sq_bytes, attr_umr.ep_sq_bytes);

    bytes_t buf(64 * 1024);
    fill_random(rng, buf);
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(buf.data(), buf.size(), &memh));
    std::vector<bytes_t> want = {m_regions[0].init, m_regions[1].init};

    /* halo rows (a vector) and an irregular indexed set of blocks */
    umr_layout_t *rows, *irr;
    ASSERT_UCS_OK(umr_layout_vector(64, 256, 512, NULL, &rows));
    std::vector<size_t> lens;
    std::vector<ptrdiff_t> displs;
    ptrdiff_t pos = 0;
    while (lens.size() < 150) {
        lens.push_back(32 + rng() % 65);
        displs.push_back(pos);
        pos += lens.back() + 8 + rng() % 40;
    }
    ASSERT_UCS_OK(umr_layout_indexed(lens.size(), lens.data(), displs.data(),
                                     NULL, &irr));
    void *rbase = buf.data() + 100, *ibase = buf.data() + 40000;
    ASSERT_LT((size_t)pos + 40000, buf.size());
    size_t rsize = umr_layout_size(rows), isize = umr_layout_size(irr);

    /* puts: the remote bytes are the CPU pack of the local layout */
    uint64_t umrs0 = md_umrs();
    bytes_t packed(rsize);
    ASSERT_UCS_OK(umr_layout_pack(rows, 1, rbase, packed.data()));
    for (int it = 0; it < 3; ++it) {
        ASSERT_EQ(UCS_OK, layout_op(OP_PUT, memh, rbase, rows, 0, rsize,
                                    m_va[0] + 16, m_rkeys[0].rkey))
                << "iteration " << it;
    }
    memcpy(want[0].data() + GUARD + 16, packed.data(), rsize);
    packed.resize(isize);
    ASSERT_UCS_OK(umr_layout_pack(irr, 1, ibase, packed.data()));
    ASSERT_EQ(UCS_OK, layout_op(OP_PUT, memh, ibase, irr, 0, isize,
                                m_va[0] + 20000, m_rkeys[0].rkey));
    memcpy(want[0].data() + GUARD + 20000, packed.data(), isize);
    uct_umr_ep_stats_t st = ep_stats();
    EXPECT_EQ(2u, st.cache_misses);
    EXPECT_EQ(2u, st.cache_hits);
    EXPECT_EQ(0u, st.pack_fallbacks);
    /* the keys were configured on the md's QP (with EP_UMR=y: on the
     * endpoint's, the md posts none: local_layout_cache_halo_loop) */
    EXPECT_GE(md_umrs() - umrs0, 2u);

    /* gets: the local layout is the CPU unpack of what the remote key
     * addresses (a remote layout key, random ranges) */
    for (int i = 0; i < 8; ++i) {
        size_t rtotal = m_regions[1].stream.size();
        size_t len    = 1 + rng() % std::min(rtotal, rsize);
        size_t roff   = rng() % (rtotal - len + 1);
        size_t loff   = rng() % (rsize - len + 1);
        bytes_t before = buf;
        SCOPED_TRACE("seed " + std::to_string(seed) + " get roff " +
                     std::to_string(roff) + " loff " + std::to_string(loff) +
                     " len " + std::to_string(len));
        ASSERT_EQ(UCS_OK, layout_op(OP_GET, memh, rbase, rows, loff, len,
                                    roff, m_rkeys[1].rkey));
        bytes_t src(len);
        for (size_t k = 0; k < len; ++k) {
            src[k] = m_regions[1].init[m_regions[1].stream[roff + k]];
        }
        ASSERT_UCS_OK(umr_layout_unpack_range(rows, 1, before.data() + 100,
                                              loff, len, src.data()));
        ASSERT_EQ(before, buf) << first_diff(buf, before);
    }
    {
        /* the whole irregular layout from contiguous remote bytes */
        bytes_t before = buf;
        ASSERT_EQ(UCS_OK, layout_op(OP_GET, memh, ibase, irr, 0, isize,
                                    m_va[0] + 40000, m_rkeys[0].rkey));
        ASSERT_UCS_OK(umr_layout_unpack(irr, 1, before.data() + 40000,
                                        want[0].data() + GUARD + 40000));
        ASSERT_EQ(before, buf) << first_diff(buf, before);
    }

    /* an iov of 12 entries, more than the QP's 4 SGEs: a list key over it,
     * configured on the md's QP too; both ways */
    std::vector<uct_iov_t> iov;
    bytes_t iov_bytes;
    for (size_t i = 0; i < 12; ++i) {
        size_t off = 50000 + i * 700, len = 100 + rng() % 500;
        iov.push_back({buf.data() + off, len, memh, 0, 1});
        iov_bytes.insert(iov_bytes.end(), buf.begin() + off,
                         buf.begin() + off + len);
    }
    uint64_t umrs1 = md_umrs();
    ASSERT_EQ(UCS_OK, run(OP_PUT, iov, m_va[0] + 56000, m_rkeys[0].rkey));
    memcpy(want[0].data() + GUARD + 56000, iov_bytes.data(),
           iov_bytes.size());
    EXPECT_GT(md_umrs(), umrs1) << "the iov's list key on the md's QP";
    {
        bytes_t before = buf;
        ASSERT_EQ(UCS_OK, run(OP_GET, iov, m_va[0] + 100, m_rkeys[0].rkey));
        size_t k = 0;
        for (const uct_iov_t &v : iov) {
            uint8_t *dst = before.data() + ((uint8_t*)v.buffer - buf.data());
            memcpy(dst, want[0].data() + GUARD + 100 + k, v.length);
            k += v.length;
        }
        ASSERT_EQ(before, buf) << first_diff(buf, before);
    }

    std::vector<bytes_t> got = dump();
    EXPECT_EQ(want[0], got[0]) << first_diff(got[0], want[0]);
    EXPECT_EQ(want[1], got[1]) << "get must not write the target";

    ASSERT_UCS_OK(m_s.dereg(memh));
    m_s.destroy_ep(m_ep);
    m_ep = nullptr;
    uct_umr_md_stats_t mst;
    ASSERT_UCS_OK(uct_umr_md_get_stats(m_s.md, &mst));
    EXPECT_EQ(0u, mst.mkeys_in_use);
    umr_layout_free(rows);
    umr_layout_free(irr);
}

/* Bad values of EP_UMR and EP_MAX_SGE: the iface does not open, and the
 * error names the variable (UCX's own parser names the field without its
 * prefix and reads "4x" as 4). */
TEST(test_uct_ep_config, bad_values_name_the_variable)
{
    uct_umr_iface_attr_t attr;
    unsigned dev_max;
    {
        /* auto: the device's limit with UMR, 4 without; a count as given */
        uct_stack s, n, two;
        ASSERT_UCS_OK(s.open(uct_test_dev(), {}, {{"EP_UMR", "y"}}));
        ASSERT_UCS_OK(uct_umr_iface_query(s.iface, &attr));
        dev_max = attr.ep_max_sge;
        EXPECT_GT(dev_max, 4u);
        ASSERT_UCS_OK(n.open(uct_test_dev(), {}, {{"EP_UMR", "no"}}));
        ASSERT_UCS_OK(uct_umr_iface_query(n.iface, &attr));
        EXPECT_EQ(4u, attr.ep_max_sge);
        EXPECT_EQ(0, attr.ep_umr);
        ASSERT_UCS_OK(two.open(uct_test_dev(), {}, {{"EP_UMR", "y"},
                                                     {"EP_MAX_SGE", "2"}}));
        ASSERT_UCS_OK(uct_umr_iface_query(two.iface, &attr));
        EXPECT_EQ(2u, attr.ep_max_sge);
        EXPECT_EQ(1, attr.ep_umr);
    }

    for (const char *v : {"maybe", "", "2", "yn"}) {
        SCOPED_TRACE(std::string("EP_UMR=") + v);
        log_capture log;
        uct_stack s;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  s.open(uct_test_dev(), {}, {{"EP_UMR", v}}));
        EXPECT_TRUE(log.has(std::string("UCX_MLX5_UMR_EP_UMR=") + v));
    }
    std::string above = std::to_string(dev_max + 1);
    for (const std::string &v : {std::string("0"), std::string("4x"),
                                 std::string("-1"), std::string(""),
                                 std::string(" 4"), std::string("inf"),
                                 above, std::string("99999999999999999999")}) {
        SCOPED_TRACE("EP_MAX_SGE=" + v);
        log_capture log;
        uct_stack s;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  s.open(uct_test_dev(), {}, {{"EP_MAX_SGE", v}}));
        EXPECT_TRUE(log.has("UCX_MLX5_UMR_EP_MAX_SGE=" + v));
    }
}

/* Issue 11: lookups of both key caches are O(1). With thousands of entries
 * a lookup still compares about one entry (the list scan it replaces
 * compared up to all of them). Operation counts, not time: the timing is
 * test/bench/bench_umr_cache. */
TEST(test_uct_cache, lookups_compare_a_constant_number_of_entries)
{
    uct_stack s;
    ASSERT_UCS_OK(s.open("sw", {{"MKEY_POOL_SIZE", "8192"}}));

    const unsigned sizes[] = {16, 512, 4096};
    double per[3];
    for (int k = 0; k < 3; ++k) {
        umr_test_cache_result_t res;
        ASSERT_UCS_OK(umr_test_cache_run(s.md, sizes[k], 4, 1, &res));
        EXPECT_EQ(4u * sizes[k], res.lookups);
        EXPECT_EQ(res.lookups, res.hits) << sizes[k] << " entries";
        EXPECT_GE(res.compares_per_lookup, 1.0);
        EXPECT_LE(res.compares_per_lookup, 2.0) << sizes[k] << " entries";
        per[k] = res.compares_per_lookup;
    }
    EXPECT_LT(per[2], per[0] + 1.0) << "grows with the number of entries";

    uct_umr_md_stats_t mst;
    ASSERT_UCS_OK(uct_umr_md_get_stats(s.md, &mst));
    EXPECT_EQ(0u, mst.mkeys_in_use) << "every cached key went back";

    umr_test_cache_result_t r;
    ASSERT_UCS_OK(umr_test_rkey_cache_run(4096, 2, 1, &r));
    EXPECT_EQ(2u * 4096, r.lookups);
    EXPECT_EQ(r.lookups, r.hits);
}

/* Issue 11: progress is registered with the worker only while there is
 * work, and the pending dispatch visits only endpoints that have pending
 * requests, not every endpoint of the iface. */
TEST_F(test_uct_xproc, progress_armed_only_while_busy)
{
    m_regions.emplace_back();
    make_contig_region(m_regions.back(), 4096);
    start({}, {{"TX_QUEUE_LEN", "2"}});
    ASSERT_FALSE(HasFatalFailure());

    std::vector<uct_ep_h> idle_eps;
    for (int i = 0; i < 16; ++i) {
        idle_eps.push_back(m_s.create_ep());
        ASSERT_NE(nullptr, idle_eps.back());
    }
    EXPECT_FALSE(umr_test_iface_progress_armed(m_s.iface));

    bytes_t buf(4096, 0x31);
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(buf.data(), buf.size(), &memh));
    uct_iov_t iov = {buf.data(), 1024, memh, 0, 1};

    /* fill the queue, then one request waits in the pending queue */
    std::vector<test_comp> comps(2);
    for (auto &c : comps) {
        ASSERT_EQ(UCS_INPROGRESS, uct_ep_put_zcopy(m_ep, &iov, 1, m_va[0],
                                                   m_rkeys[0].rkey, &c.uct));
    }
    EXPECT_TRUE(umr_test_iface_progress_armed(m_s.iface));
    test_comp last;
    ASSERT_EQ(UCS_ERR_NO_RESOURCE, uct_ep_put_zcopy(m_ep, &iov, 1, m_va[0],
                                                    m_rkeys[0].rkey,
                                                    &last.uct));
    struct req_t {
        uct_pending_req_t req;
        int               calls = 0;
    } req;
    req.req.func = [](uct_pending_req_t *self) -> ucs_status_t {
        ++ucs_container_of(self, req_t, req)->calls;
        return UCS_OK;
    };
    ASSERT_UCS_OK(uct_ep_pending_add(m_ep, &req.req, 0));
    EXPECT_EQ(1u, umr_test_iface_pending_eps(m_s.iface))
            << "only the ep with a pending request is visited";

    for (auto &c : comps) {
        ASSERT_TRUE(m_s.wait(c));
        EXPECT_EQ(UCS_OK, c.status);
    }
    EXPECT_EQ(1, req.calls);
    EXPECT_EQ(0u, umr_test_iface_pending_eps(m_s.iface));
    EXPECT_FALSE(umr_test_iface_progress_armed(m_s.iface))
            << "nothing outstanding: progress is removed from the worker";

    /* and armed again by the next operation */
    test_comp again;
    ASSERT_EQ(UCS_INPROGRESS, uct_ep_put_zcopy(m_ep, &iov, 1, m_va[0],
                                               m_rkeys[0].rkey, &again.uct));
    EXPECT_TRUE(umr_test_iface_progress_armed(m_s.iface));
    ASSERT_TRUE(m_s.wait(again));
    EXPECT_FALSE(umr_test_iface_progress_armed(m_s.iface));

    for (auto ep : idle_eps) {
        m_s.destroy_ep(ep);
    }
    ASSERT_UCS_OK(m_s.dereg(memh));
}

/* Unpacking the same packed key through the ep returns the cached key. */
TEST_F(test_uct_xproc, remote_key_cache)
{
    std::mt19937_64 rng = seeded_rng();
    for (int i = 0; i < 3; ++i) {
        m_regions.emplace_back();
        make_contig_region(m_regions.back(), 1024);
        fill_random(rng, m_regions.back().init);
    }
    start({}, {{"RCACHE_SIZE", "2"}});
    ASSERT_FALSE(HasFatalFailure());

    bytes_t src(64, 0x77);
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(src.data(), src.size(), &memh));
    std::vector<uct_iov_t> iov = {{src.data(), src.size(), memh, 0, 1}};

    uct_rkey_t first = 0, rk;
    for (int it = 0; it < 10; ++it) {
        ASSERT_UCS_OK(uct_umr_ep_rkey_unpack(m_ep, m_packed[0].data(), &rk));
        if (it == 0) {
            first = rk;
        }
        EXPECT_EQ(first, rk);
        ASSERT_EQ(UCS_OK, run(OP_PUT, iov, m_va[0] + it * 64, rk));
        ASSERT_UCS_OK(uct_umr_ep_rkey_release(m_ep, rk));
    }
    uct_umr_ep_stats_t st = ep_stats();
    EXPECT_EQ(1u, st.rkey_misses);
    EXPECT_EQ(9u, st.rkey_hits);

    /* three keys, room for two idle ones: the least recent goes */
    uct_rkey_t r[3];
    for (int i = 0; i < 3; ++i) {
        ASSERT_UCS_OK(uct_umr_ep_rkey_unpack(m_ep, m_packed[i].data(), &r[i]));
    }
    for (int i = 0; i < 3; ++i) {
        ASSERT_UCS_OK(uct_umr_ep_rkey_release(m_ep, r[i]));
    }
    ASSERT_UCS_OK(uct_umr_ep_rkey_unpack(m_ep, m_packed[2].data(), &rk));
    EXPECT_EQ(r[2], rk) << "a recent idle key stays cached";
    ASSERT_UCS_OK(uct_umr_ep_rkey_release(m_ep, rk));
    EXPECT_EQ(3u, ep_stats().rkey_misses); /* key 0 was still cached */
    uct_rkey_t again;
    ASSERT_UCS_OK(uct_umr_ep_rkey_unpack(m_ep, m_packed[0].data(), &again));
    EXPECT_EQ(4u, ep_stats().rkey_misses) << "key 0 was the one evicted";
    ASSERT_UCS_OK(uct_umr_ep_rkey_release(m_ep, again));

    /* foreign, released or garbage keys are refused */
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_umr_ep_rkey_release(m_ep, rk));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_umr_ep_rkey_release(m_ep, m_rkeys[0].rkey));
    bytes_t junk(m_s.md_attr.rkey_packed_size, 0x42);
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_umr_ep_rkey_unpack(m_ep, junk.data(), &rk));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_umr_ep_rkey_unpack(NULL, m_packed[0].data(), &rk));

    bytes_t want = m_regions[0].init;
    for (int it = 0; it < 10; ++it) {
        memcpy(want.data() + GUARD + it * 64, src.data(), 64);
    }
    EXPECT_EQ(want, dump()[0]);
    ASSERT_UCS_OK(m_s.dereg(memh));
}

/* A fence orders a put after a get of the same bytes: the get sees the old
 * data, the target ends with the new. */
TEST_F(test_uct_xproc, fence_orders_put_after_get)
{
    m_regions.emplace_back();
    make_contig_region(m_regions.back(), 4096);
    std::mt19937_64 rng(9);
    fill_random(rng, m_regions.back().init);
    start();
    ASSERT_FALSE(HasFatalFailure());

    bytes_t buf(8192);
    fill_random(rng, buf);
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(buf.data(), buf.size(), &memh));
    bytes_t newdata(buf.begin() + 4096, buf.end());

    bytes_t old(m_regions[0].init.begin() + GUARD,
                m_regions[0].init.begin() + GUARD + 4096);
    for (int round = 0; round < 2; ++round) {
        std::vector<uct_iov_t> giov = {{buf.data(), 4096, memh, 0, 1}};
        std::vector<uct_iov_t> piov = {{buf.data() + 4096, 4096, memh, 0, 1}};
        test_comp gc, pc;
        ASSERT_EQ(UCS_INPROGRESS,
                  uct_ep_get_zcopy(m_ep, giov.data(), 1, m_va[0],
                                   m_rkeys[0].rkey, &gc.uct));
        ASSERT_UCS_OK((round == 0) ? uct_ep_fence(m_ep, 0) :
                                     uct_iface_fence(m_s.iface, 0));
        if (round == 1) {
            fill_random(rng, newdata);
            std::copy(newdata.begin(), newdata.end(), buf.begin() + 4096);
        }
        ASSERT_EQ(UCS_INPROGRESS,
                  uct_ep_put_zcopy(m_ep, piov.data(), 1, m_va[0],
                                   m_rkeys[0].rkey, &pc.uct));
        ASSERT_EQ(UCS_OK, m_s.flush(m_ep));
        EXPECT_EQ(1, gc.fired);
        EXPECT_EQ(1, pc.fired);
        EXPECT_EQ(0, memcmp(buf.data(), old.data(), 4096))
                << "round " << round << ": the get saw the later put";
        bytes_t got = dump()[0];
        EXPECT_EQ(0, memcmp(got.data() + GUARD, newdata.data(), 4096));
        old = newdata;
    }
    ASSERT_UCS_OK(m_s.dereg(memh));
}

/* pending_add refuses while resources remain; purge hands requests back. */
TEST_F(test_uct_xproc, pending_purge)
{
    m_regions.emplace_back();
    make_contig_region(m_regions.back(), 4096);
    start({}, {{"TX_QUEUE_LEN", "2"}});
    ASSERT_FALSE(HasFatalFailure());

    bytes_t buf(4096, 0x21);
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(buf.data(), buf.size(), &memh));
    std::vector<uct_iov_t> iov = {{buf.data(), 512, memh, 0, 1}};

    uct_pending_req_t reqs[3];
    for (auto &r : reqs) {
        r.func = [](uct_pending_req_t*) -> ucs_status_t {
            ADD_FAILURE() << "a purged request was dispatched";
            return UCS_OK;
        };
    }
    EXPECT_EQ(UCS_ERR_BUSY, uct_ep_pending_add(m_ep, &reqs[0], 0));

    std::vector<test_comp> comps(2);
    for (auto &c : comps) {
        ASSERT_EQ(UCS_INPROGRESS, uct_ep_put_zcopy(m_ep, iov.data(), 1,
                                                   m_va[0], m_rkeys[0].rkey,
                                                   &c.uct));
    }
    test_comp extra;
    EXPECT_EQ(UCS_ERR_NO_RESOURCE,
              uct_ep_put_zcopy(m_ep, iov.data(), 1, m_va[0], m_rkeys[0].rkey,
                               &extra.uct));
    for (auto &r : reqs) {
        ASSERT_UCS_OK(uct_ep_pending_add(m_ep, &r, 0));
    }
    /* a flush cannot cover requests that are not posted yet */
    EXPECT_EQ(UCS_ERR_NO_RESOURCE, uct_ep_flush(m_ep, 0, &extra.uct));

    std::vector<uct_pending_req_t*> purged;
    uct_ep_pending_purge(m_ep, [](uct_pending_req_t *r, void *arg) {
        static_cast<std::vector<uct_pending_req_t*>*>(arg)->push_back(r);
    }, &purged);
    ASSERT_EQ(3u, purged.size());
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(&reqs[i], purged[i]) << "purge keeps the queue order";
    }

    ASSERT_EQ(UCS_OK, m_s.flush(m_ep));
    for (auto &c : comps) {
        EXPECT_EQ(1, c.fired);
    }
    EXPECT_EQ(0, extra.fired);
    ASSERT_UCS_OK(m_s.dereg(memh));
}


/* Memory the sender cannot read (issue 12): three pages, the middle one
 * PROT_NONE. A NIC refuses to register it; so does the transport. Memory
 * that becomes inaccessible after registration fails the operation with
 * an error status, never with a fault in progress. */
class test_uct_inaccessible : public test_uct_xproc {
protected:
    void SetUp() override {
        m_page = sysconf(_SC_PAGESIZE);
        m_mem  = (char*)mmap(NULL, 3 * m_page, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ASSERT_NE(MAP_FAILED, (void*)m_mem);
        for (size_t i = 0; i < 3 * m_page; ++i) {
            m_mem[i] = (char)(i * 11 + 5);
        }
        ASSERT_UCS_OK(umr_layout_vector(4, 100, 3000, NULL, &m_vec));

        m_regions.emplace_back();
        make_contig_region(m_regions.back(), 4096);
        std::mt19937_64 rng(12);
        fill_random(rng, m_regions.back().init);
        start();
    }

    void TearDown() override {
        test_uct_xproc::TearDown();
        umr_layout_free(m_vec);
        munmap(m_mem, 3 * m_page);
    }

    void hide_middle_page() {
        ASSERT_EQ(0, mprotect(m_mem + m_page, m_page, PROT_NONE));
    }

    /* A NIC keeps reaching pages pinned at registration whatever their
     * protection becomes (umr_test_verbs_model.h, R21): the cases that
     * change it after registration hold for the sw engine only. */
    void skip_unless_sw() {
        if (!uct_test_dev_is_sw()) {
            GTEST_SKIP() << "protection changed after registration: a NIC "
                            "still reaches the pinned pages (sw engine only)";
        }
    }

    /* the target region is as it started */
    void expect_target_untouched() {
        bytes_t got = dump()[0];
        EXPECT_EQ(m_regions[0].init, got) << first_diff(got,
                                                        m_regions[0].init);
    }

    ucs_status_t run_layout(int op, uct_mem_h memh, void *base,
                            size_t len) {
        return layout_op(op, memh, base, m_vec, 0, len, m_va[0],
                         m_rkeys[0].rkey);
    }

    size_t            m_page = 0;
    char              *m_mem = nullptr;
    umr_layout_t  *m_vec = nullptr;
};

TEST_F(test_uct_inaccessible, refused_at_registration)
{
    umr_layout_t *around;
    uct_mem_h memh;

    hide_middle_page();
    /* the third block, [6100, 6200), lies in the hidden page */
    EXPECT_EQ(UCS_ERR_INVALID_ADDR,
              uct_umr_mem_reg(m_s.md, m_mem + 100, m_vec, 1, 0, &memh));
    EXPECT_EQ(UCS_ERR_INVALID_ADDR, m_s.reg(m_mem, 3 * m_page, &memh));
    EXPECT_EQ(UCS_ERR_INVALID_ADDR, m_s.reg(m_mem + m_page - 8, 16, &memh));
    /* blocks only in readable pages, but the registered span (as on a NIC)
     * covers the hidden one */
    ASSERT_UCS_OK(umr_layout_vector(2, 100, 2 * m_page, NULL, &around));
    EXPECT_EQ(UCS_ERR_INVALID_ADDR,
              uct_umr_mem_reg(m_s.md, m_mem + 100, around, 1, 0, &memh));
    umr_layout_free(around);

    uct_umr_md_stats_t st;
    ASSERT_UCS_OK(uct_umr_md_get_stats(m_s.md, &st));
    EXPECT_EQ(0u, st.mkeys_in_use) << "a refused registration keeps no key";

    /* the sender still works: the readable first page arrives */
    ASSERT_UCS_OK(m_s.reg(m_mem, m_page, &memh));
    std::vector<uct_iov_t> iov = {{m_mem, 1000, memh, 0, 1}};
    ASSERT_EQ(UCS_OK, run(OP_PUT, iov, m_va[0] + 10, m_rkeys[0].rkey));
    bytes_t want = m_regions[0].init;
    memcpy(want.data() + GUARD + 10, m_mem, 1000);
    bytes_t got = dump()[0];
    EXPECT_EQ(want, got) << first_diff(got, want);
    ASSERT_UCS_OK(m_s.dereg(memh));
}

/* uct_ep_put_zcopy from a layout memh whose third block became unreadable */
TEST_F(test_uct_inaccessible, put_zcopy_from_layout_lost_after_reg)
{
    skip_unless_sw();
    uct_mem_h memh;
    ASSERT_UCS_OK(uct_umr_mem_reg(m_s.md, m_mem + 100, m_vec, 1, 0, &memh));
    hide_middle_page();

    std::vector<uct_iov_t> iov = {{(void*)(uintptr_t)0, 400, memh, 0, 1}};
    EXPECT_EQ(UCS_ERR_INVALID_ADDR,
              run(OP_PUT, iov, m_va[0], m_rkeys[0].rkey));
    expect_target_untouched();
    ASSERT_UCS_OK(m_s.dereg(memh));
}

/* uct_umr_ep_put_layout over a plain registration of the three pages */
TEST_F(test_uct_inaccessible, put_layout_over_plain_reg_lost_after_reg)
{
    skip_unless_sw();
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(m_mem, 3 * m_page, &memh));
    hide_middle_page();

    EXPECT_EQ(UCS_ERR_INVALID_ADDR, run_layout(OP_PUT, memh, m_mem + 100,
                                               400));
    expect_target_untouched();
    ASSERT_UCS_OK(m_s.dereg(memh));
}

/* uct_umr_ep_get_layout into a page that became read-only: the local write
 * fails, the readable and writable pages around it are left as they were
 * or hold the bytes of the target */
TEST_F(test_uct_inaccessible, get_layout_into_read_only_page)
{
    skip_unless_sw();
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(m_mem, 3 * m_page, &memh));
    ASSERT_EQ(0, mprotect(m_mem + m_page, m_page, PROT_READ));
    bytes_t before(m_mem, m_mem + 3 * m_page);

    EXPECT_EQ(UCS_ERR_INVALID_ADDR, run_layout(OP_GET, memh, m_mem + 100,
                                               400));
    EXPECT_EQ(0, memcmp(before.data() + m_page, m_mem + m_page, m_page));
    /* only the blocks may have changed, with the target's bytes */
    const bytes_t &init = m_regions[0].init;
    for (size_t i = 0; i < 3 * m_page; ++i) {
        size_t rel = i - 100, blk = rel / 3000, in = rel % 3000;
        bool in_block = (i >= 100) && (blk < 4) && (in < 100);
        if ((uint8_t)m_mem[i] != before[i]) {
            ASSERT_TRUE(in_block) << "byte " << i << " outside the layout";
            ASSERT_EQ(init[GUARD + blk * 100 + in], (uint8_t)m_mem[i])
                    << "byte " << i;
        }
    }
    ASSERT_EQ(0, mprotect(m_mem + m_page, m_page, PROT_READ | PROT_WRITE));
    ASSERT_UCS_OK(m_s.dereg(memh));
}


/* Issue 30 finding 1: memory the process may only read - a file mapped
 * PROT_READ, a buffer mprotect'ed to PROT_READ - as MPI sends from it. The
 * kernel pins a registration with write access for writing and refuses
 * such memory (EFAULT); registered for remote reads alone
 * (UCT_MD_MEM_ACCESS_REMOTE_GET | _LOCAL_READ) it is taken, and peers read
 * every byte through a contiguous key and through a layout key over it
 * (uct_umr_mem_reg_over), and write none. The target (target_main,
 * reg_read_only) checks that write access is refused (exit code 20
 * otherwise). Before: the md asked for local write whatever the flags, so
 * the read-only registration was refused as well and there was no key. */
class test_uct_read_only : public test_uct_xproc {
protected:
    void SetUp() override {
        std::mt19937_64 rng(30);
        m_regions.emplace_back();
        make_contig_region(m_regions.back(), 8192);
        m_regions.back().read_only = RO_FILE;
        m_regions.emplace_back();
        make_layout_region(rng, m_regions.back(), 4096);
        ASSERT_FALSE(HasFatalFailure());
        m_regions.back().read_only = RO_MPROTECT;
        m_regions.emplace_back();
        make_contig_region(m_regions.back(), 8192);   /* writable */
        for (auto &r : m_regions) {
            fill_random(rng, r.init);
        }
        start();
    }

    /* key bytes [0, len) of region i, as the target holds them */
    bytes_t stream(size_t i, size_t len) {
        bytes_t b(len);
        for (size_t k = 0; k < len; ++k) {
            b[k] = m_regions[i].init[m_regions[i].stream[k]];
        }
        return b;
    }
};

TEST_F(test_uct_read_only, peers_read_every_byte)
{
    for (size_t i : {0, 1}) {
        SCOPED_TRACE(m_regions[i].desc + (i ? " mprotect'ed" : " file"));
        size_t len = m_regions[i].stream.size();
        bytes_t got(len, 0);
        uct_mem_h memh;
        ASSERT_UCS_OK(m_s.reg(got.data(), len, &memh));
        std::vector<uct_iov_t> iov = {{got.data(), len, memh, 0, 1}};
        EXPECT_EQ(UCS_OK, run(OP_GET, iov, raddr(i, 0), m_rkeys[i].rkey));
        EXPECT_EQ(stream(i, len), got) << first_diff(got, stream(i, len));
        ASSERT_UCS_OK(m_s.dereg(memh));
    }

    /* a write through a read-only key: a remote access error, nothing
     * written (last: the endpoint fails with it) */
    bytes_t src(64, 0x5a);
    uct_mem_h memh;
    ASSERT_UCS_OK(m_s.reg(src.data(), src.size(), &memh));
    std::vector<uct_iov_t> iov = {{src.data(), src.size(), memh, 0, 1}};
    EXPECT_EQ(UCS_ERR_INVALID_ADDR, run(OP_PUT, iov, raddr(1, 0),
                                        m_rkeys[1].rkey));
    std::vector<bytes_t> now = dump();
    EXPECT_EQ(m_regions[1].init, now[1]) << "a read-only region was written";
    ASSERT_UCS_OK(m_s.dereg(memh));
}

/* The initiator's side: puts from read-only memory - its handle, a local
 * layout over it (a key without local write), and a single buffer without
 * a handle (registered for the put alone, for reading) - move every byte;
 * a get into it is refused before anything moves. */
TEST_F(test_uct_read_only, puts_from_read_only_memory)
{
    const unsigned ro = UCT_MD_MEM_ACCESS_REMOTE_GET |
                        UCT_MD_MEM_ACCESS_LOCAL_READ;
    region src;
    src.init.resize(8192);
    for (size_t k = 0; k < src.init.size(); ++k) {
        src.init[k] = (uint8_t)(k * 29 + 3);
    }
    for (int kind : {RO_FILE, RO_MPROTECT}) {
        SCOPED_TRACE((kind == RO_FILE) ? "file" : "mprotect'ed");
        src.read_only = kind;
        uint8_t *mem  = map_read_only(src);
        ASSERT_NE(nullptr, mem);
        uct_mem_h memh;
        EXPECT_EQ(UCS_ERR_INVALID_ADDR,
                  uct_md_mem_reg(m_s.md, mem, 8192, UCT_MD_MEM_ACCESS_ALL |
                                 UCT_MD_MEM_FLAG_HIDE_ERRORS, &memh));
        ASSERT_UCS_OK(uct_md_mem_reg(m_s.md, mem, 8192, ro, &memh));

        /* the handle: 1000 bytes to the target's writable region */
        std::vector<uct_iov_t> iov = {{mem + 100, 1000, memh, 0, 1}};
        EXPECT_EQ(UCS_OK, run(OP_PUT, iov, m_va[2], m_rkeys[2].rkey));
        /* no handle: registered for this put */
        std::vector<uct_iov_t> one = {{mem + 2000, 500, NULL, 0, 1}};
        EXPECT_EQ(UCS_OK, run(OP_PUT, one, m_va[2] + 1000, m_rkeys[2].rkey));
        /* a local layout: blocks of 100 at a stride of 1000 */
        umr_layout_t *vec;
        ASSERT_UCS_OK(umr_layout_vector(4, 100, 1000, NULL, &vec));
        test_comp comp;
        ucs_status_t st;
        while ((st = uct_umr_ep_put_layout(m_ep, memh, mem + 3000, vec, 1, 0,
                                           400, m_va[2] + 1500,
                                           m_rkeys[2].rkey, &comp.uct)) ==
               UCS_ERR_NO_RESOURCE) {
            m_s.progress();
        }
        ASSERT_EQ(UCS_INPROGRESS, st) << ucs_status_string(st);
        ASSERT_TRUE(m_s.wait(comp));
        EXPECT_EQ(UCS_OK, comp.status);
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_umr_ep_get_layout(m_ep, memh, mem + 3000, vec, 1, 0,
                                        400, m_va[2], m_rkeys[2].rkey,
                                        &comp.uct));
        umr_layout_free(vec);

        bytes_t want = m_regions[2].init;
        memcpy(want.data() + GUARD, mem + 100, 1000);
        memcpy(want.data() + GUARD + 1000, mem + 2000, 500);
        for (size_t b = 0; b < 4; ++b) {
            memcpy(want.data() + GUARD + 1500 + b * 100, mem + 3000 + b * 1000,
                   100);
        }
        bytes_t got = dump()[2];
        EXPECT_EQ(want, got) << first_diff(got, want);
        ASSERT_UCS_OK(m_s.dereg(memh));
        munmap(mem, 8192);
    }
}

/* Blocks in separately registered memory joined in one key: a layout over
 * two mappings with unmapped pages between them (as a struct of separately
 * allocated arrays at MPI_BOTTOM) cannot be registered as one span (the
 * hole: UCS_ERR_INVALID_ADDR), but over the two handles
 * (uct_umr_mem_reg_over) it is one key, each entry over its own handle; a
 * put from it moves every byte. */
class test_uct_join : public test_uct_xproc {
protected:
    void SetUp() override {
        std::mt19937_64 rng(31);
        m_regions.emplace_back();
        make_contig_region(m_regions.back(), 8192);
        fill_random(rng, m_regions.back().init);
        start();
    }
};

TEST_F(test_uct_join, two_mappings_one_key)
{
    size_t page = sysconf(_SC_PAGESIZE);
    char *mem   = (char*)mmap(NULL, 4 * page, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, (void*)mem);
    ASSERT_EQ(0, munmap(mem + page, 2 * page));   /* the hole */
    char *a = mem, *b = mem + 3 * page;
    for (size_t i = 0; i < page; ++i) {
        a[i] = (char)(i * 3 + 1);
        b[i] = (char)(i * 5 + 2);
    }

    /* 4 blocks of 100 at a stride of 1000 in a, then 3000 bytes of b */
    umr_layout_t *vec, *blk, *lay;
    const size_t lens[2]     = {1, 1};
    const ptrdiff_t displs[2] = {0, b - a};
    ASSERT_UCS_OK(umr_layout_vector(4, 100, 1000, NULL, &vec));
    ASSERT_UCS_OK(umr_layout_contig(3000, &blk));
    const umr_layout_t *inners[2] = {vec, blk};
    ASSERT_UCS_OK(umr_layout_struct(2, lens, displs, inners, &lay));

    uct_mem_h memhs[2], key;
    uct_umr_md_stats_t st;
    EXPECT_EQ(UCS_ERR_INVALID_ADDR,
              uct_umr_mem_reg(m_s.md, a, lay, 1, UCT_MD_MEM_FLAG_HIDE_ERRORS,
                              &key)) << "a span over the hole registered";
    ASSERT_UCS_OK(m_s.reg(a, page, &memhs[0]));
    ASSERT_UCS_OK(m_s.reg(b, page, &memhs[1]));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_umr_mem_reg_over(m_s.md, a, lay, 1, memhs, 1, 0, &key))
            << "b's block lies in no handle given";
    ASSERT_UCS_OK(uct_umr_mem_reg_over(m_s.md, a, lay, 1, memhs, 2, 0, &key));
    ASSERT_UCS_OK(uct_umr_md_get_stats(m_s.md, &st));
    EXPECT_EQ(2u, st.mem_regs);

    std::vector<uct_iov_t> iov = {{(void*)(uintptr_t)0, 3400, key, 0, 1}};
    EXPECT_EQ(UCS_OK, run(OP_PUT, iov, m_va[0], m_rkeys[0].rkey));
    bytes_t want = m_regions[0].init;
    for (size_t i = 0; i < 4; ++i) {
        memcpy(want.data() + GUARD + i * 100, a + i * 1000, 100);
    }
    memcpy(want.data() + GUARD + 400, b, 3000);
    bytes_t got = dump()[0];
    EXPECT_EQ(want, got) << first_diff(got, want);

    for (uct_mem_h m : {key, memhs[0], memhs[1]}) {
        ASSERT_UCS_OK(m_s.dereg(m));
    }
    umr_layout_free(lay);
    umr_layout_free(blk);
    umr_layout_free(vec);
    munmap(a, page);
    munmap(b, page);
}
