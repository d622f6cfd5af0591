/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * sw engine across real processes (fork + pipes): random layout pairs moved
 * by RDMA write/read through UMR keys must produce exactly the bytes the
 * layout engine's reference pack/unpack predicts, and nothing else.
 *
 * UMR_TEST_SEED=<n> replays a run; UMR_TEST_XPROC_CASES=<n> changes the
 * number of random cases (default 2000).
 */
#include "test_engine_sw.h"

#include "layout.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdlib>
#include <memory>
#include <random>
#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

namespace {

const unsigned RW = UMR_ENG_ACCESS_LOCAL_WRITE | UMR_ENG_ACCESS_REMOTE_WRITE |
                    UMR_ENG_ACCESS_REMOTE_READ;
const size_t GUARD = 64;   /* bytes outside the registered span, each side */

struct layout_deleter {
    void operator()(umr_layout_t *l) const { umr_layout_free(l); }
};
typedef std::unique_ptr<umr_layout_t, layout_deleter> layout_ptr;

/*
 * Random non-overlapping layouts shaped like MPI datatypes: contiguous,
 * (h)vector with positive or negative strides, indexed, struct, resized,
 * nested up to three levels. No byte is addressed twice, so the result of
 * an unpack does not depend on the order bytes are written in.
 */
class layout_gen {
public:
    explicit layout_gen(uint64_t seed) : m_rng(seed) {}

    size_t rnd(size_t lo, size_t hi) {  /* inclusive */
        return std::uniform_int_distribution<size_t>(lo, hi)(m_rng);
    }

    bool chance(double p) {
        return std::uniform_real_distribution<double>(0, 1)(m_rng) < p;
    }

    umr_layout_t *make(int depth, bool big) {
        int kind = (depth >= 3) ? 0 : (int)rnd(0, 4);

        if (big && (depth == 0)) {
            kind = 1;
        }

        switch (kind) {
        case 1:
            return vector(depth, big);
        case 2:
            return indexed(depth);
        case 3:
            return structure(depth);
        case 4:
            return resized(depth);
        default:
            return contig();
        }
    }

private:
    umr_layout_t *contig() {
        size_t len;
        umr_layout_t *l = nullptr;

        switch (rnd(0, 3)) {
        case 0:  len = rnd(1, 8); break;
        case 1:  len = 8 * rnd(1, 4); break;
        case 2:  len = rnd(1, 300); break;
        default: len = rnd(256, 5000); break;
        }
        EXPECT_EQ(UCS_OK, umr_layout_contig(len, &l));
        return l;
    }

    static ptrdiff_t span(const umr_layout_t *l) {
        return umr_layout_true_ub(l) - umr_layout_true_lb(l);
    }

    umr_layout_t *vector(int depth, bool big) {
        layout_ptr inner(big ? contig_small() : make(depth + 1, false));
        size_t count    = big ? rnd(1100, 4000) : rnd(1, 12);
        size_t blocklen = big ? 1 : rnd(1, 3);
        ptrdiff_t ext   = umr_layout_extent(inner.get());
        ptrdiff_t step  = (blocklen - 1) * ext + span(inner.get()) +
                          (ptrdiff_t)(chance(0.2) ? 0 : rnd(0, 64));
        umr_layout_t *l = nullptr;

        if (chance(0.15)) {
            step = -step;
        }
        EXPECT_EQ(UCS_OK, umr_layout_vector(count, blocklen, step,
                                                inner.get(), &l));
        return l;
    }

    umr_layout_t *contig_small() {
        umr_layout_t *l = nullptr;
        EXPECT_EQ(UCS_OK, umr_layout_contig(rnd(1, 16), &l));
        return l;
    }

    umr_layout_t *indexed(int depth) {
        layout_ptr inner(make(depth + 1, false));
        size_t count  = rnd(1, 6);
        ptrdiff_t ext = umr_layout_extent(inner.get());
        std::vector<size_t> bl(count);
        std::vector<ptrdiff_t> displs(count);
        ptrdiff_t cursor = (ptrdiff_t)rnd(0, 32);
        umr_layout_t *l = nullptr;

        for (size_t i = 0; i < count; ++i) {
            bl[i]     = rnd(1, 3);
            displs[i] = cursor - umr_layout_true_lb(inner.get());
            cursor    = displs[i] + (bl[i] - 1) * ext +
                        umr_layout_true_ub(inner.get()) + rnd(0, 40);
        }
        if (chance(0.3)) {  /* blocks out of address order */
            std::shuffle(displs.begin(), displs.end(), m_rng);
        }
        EXPECT_EQ(UCS_OK, umr_layout_indexed(count, bl.data(),
                                                 displs.data(), inner.get(),
                                                 &l));
        return l;
    }

    umr_layout_t *structure(int depth) {
        size_t count = rnd(2, 3);
        std::vector<layout_ptr> inners;
        std::vector<const umr_layout_t*> raw;
        std::vector<size_t> bl(count);
        std::vector<ptrdiff_t> displs(count);
        ptrdiff_t cursor = 0;
        umr_layout_t *l = nullptr;

        for (size_t i = 0; i < count; ++i) {
            inners.emplace_back(make(depth + 1, false));
            const umr_layout_t *in = inners.back().get();
            raw.push_back(in);
            bl[i]     = rnd(1, 2);
            displs[i] = cursor - umr_layout_true_lb(in);
            cursor    = displs[i] + (bl[i] - 1) * umr_layout_extent(in) +
                        umr_layout_true_ub(in) + rnd(0, 24);
        }
        EXPECT_EQ(UCS_OK, umr_layout_struct(count, bl.data(),
                                                displs.data(), raw.data(),
                                                &l));
        return l;
    }

    umr_layout_t *resized(int depth) {
        layout_ptr inner(make(depth + 1, false));
        umr_layout_t *l = nullptr;

        EXPECT_EQ(UCS_OK,
                  umr_layout_resized(inner.get(),
                                     umr_layout_true_lb(inner.get()),
                                     span(inner.get()) + rnd(0, 48), &l));
        return l;
    }

    std::mt19937_64 m_rng;
};

/* One side of a case: a layout registered over its exact span. */
struct side {
    layout_ptr                   layout;
    size_t                       count;
    size_t                       size;      /* packed bytes */
    std::vector<unsigned char>   buf;       /* GUARD + span + GUARD */
    ptrdiff_t                    lb;        /* span lower bound vs base */
    umr_eng_mr_t                 *mr   = nullptr;
    std::vector<umr_eng_mkey_t*> mkeys;

    unsigned char *base() { return buf.data() + GUARD - lb; }
};

struct xcase {
    side     local, remote;
    bool     is_read;
    size_t   off_l, off_r, len;
};

uint64_t test_seed()
{
    static uint64_t seed = 0;

    if (seed == 0) {
        const char *env = getenv("UMR_TEST_SEED");
        seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
        printf("[ SEED     ] UMR_TEST_SEED=%" PRIu64 "\n", seed);
    }
    return seed;
}

size_t num_cases()
{
    const char *env = getenv("UMR_TEST_XPROC_CASES");
    return env ? strtoul(env, NULL, 0) : 2000;
}

unsigned char pattern(size_t i, size_t j, unsigned char who)
{
    uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ (j * 0xff51afd7ed558ccdull) ^
                 who;
    x ^= x >> 29;
    return (unsigned char)(x ^ (x >> 8));
}

/* Both processes derive the same case from (seed, index). */
void make_case(uint64_t seed, size_t i, xcase &c)
{
    layout_gen g(seed * 1000003 + i);
    bool big = (i % 97) == 5;   /* a few cases over IOV_MAX segments */

    c.local.layout.reset(g.make(0, big && (i & 1)));
    c.remote.layout.reset(g.make(0, big && !(i & 1)));
    for (side *s : {&c.local, &c.remote}) {
        size_t sz  = umr_layout_size(s->layout.get());
        ptrdiff_t ext = umr_layout_extent(s->layout.get());
        s->count = (sz > 20000) ? 1 : g.rnd(1, 4);
        s->size  = sz * s->count;
        ptrdiff_t tlb = umr_layout_true_lb(s->layout.get());
        ptrdiff_t tub = umr_layout_true_ub(s->layout.get());
        ptrdiff_t lo  = tlb + std::min<ptrdiff_t>(0, (ptrdiff_t)(s->count - 1) * ext);
        ptrdiff_t hi  = tub + std::max<ptrdiff_t>(0, (ptrdiff_t)(s->count - 1) * ext);
        s->lb = lo;
        s->buf.assign(GUARD + (hi - lo) + GUARD, 0);
    }
    c.is_read = g.chance(0.5);
    size_t max = std::min(c.local.size, c.remote.size);
    c.len   = g.chance(0.5) ? max : g.rnd(1, max);
    c.off_l = g.rnd(0, c.local.size - c.len);
    c.off_r = g.rnd(0, c.remote.size - c.len);
}

std::string describe(const xcase &c, uint64_t seed, size_t i)
{
    char a[512], b[512], out[1400];
    snprintf(out, sizeof(out),
             "seed %" PRIu64 " case %zu: %s len %zu\n  local  (count %zu, "
             "off %zu): %s\n  remote (count %zu, off %zu): %s", seed, i,
             c.is_read ? "READ" : "WRITE", c.len, c.local.count, c.off_l,
             umr_layout_str(c.local.layout.get(), a, sizeof(a)),
             c.remote.count, c.off_r,
             umr_layout_str(c.remote.layout.get(), b, sizeof(b)));
    return out;
}

/* Engine endpoint of one process: device, CQ and a QP to the other one. */
/* What the plans of this process looked like (coverage, printed). */
struct plan_stats {
    size_t interleaved = 0, list = 0, nested = 0, max_depth = 0;
};

struct endpoint {
    const umr_eng_ops_t *ops;
    plan_stats          stats;
    umr_eng_dev_t       *dev = nullptr;
    umr_eng_cq_t        *cq  = nullptr;
    umr_eng_qp_t        *qp  = nullptr;

    struct addr_t {
        char dev[UMR_ENG_ADDR_MAX];
        char qp[UMR_ENG_ADDR_MAX];
    };

    bool open() {
        umr_eng_qp_params_t p = {256, 4, 52};
        ops = umr_eng_find("sw");
        return ops && (ops->dev_open("sw", nullptr, &dev) == UCS_OK) &&
               (ops->cq_create(dev, 512, &cq) == UCS_OK) &&
               (ops->qp_create(dev, cq, &p, &qp) == UCS_OK);
    }

    /* exchange addresses over the pipe and connect */
    bool connect(umr_test::proc &p) {
        addr_t mine, theirs;
        memset(&mine, 0, sizeof(mine)); /* addresses may be shorter */
        ops->dev_get_addr(dev, mine.dev);
        ops->qp_get_addr(qp, mine.qp);
        return p.send(mine) && p.recv(theirs) &&
               (ops->qp_connect(qp, theirs.dev, theirs.qp) == UCS_OK);
    }

    bool reconnect(umr_test::proc &p) {
        umr_eng_qp_params_t prm = {256, 4, 52};
        ops->qp_destroy(qp);
        qp = nullptr;
        return (ops->qp_create(dev, cq, &prm, &qp) == UCS_OK) && connect(p);
    }

    void close() {
        if (qp) ops->qp_destroy(qp);
        if (cq) ops->cq_destroy(cq);
        if (dev) ops->dev_close(dev);
        qp = nullptr; cq = nullptr; dev = nullptr;
    }

    umr_eng_wc_status_t wait(uint64_t wr_id) {
        umr_eng_wc_t wc;
        for (long spin = 0; spin < 100000000L; ++spin) {
            int n = ops->cq_poll(cq, &wc, 1);
            if (n < 0) return UMR_ENG_WC_GENERAL_ERR;
            if (n == 1) {
                return (wc.wr_id == wr_id) ? wc.status :
                                             UMR_ENG_WC_GENERAL_ERR;
            }
        }
        return UMR_ENG_WC_GENERAL_ERR;
    }

    /* Register s over its span and build the plan's keys, children first.
     * Returns the top key, or UCS status via *status_p. */
    ucs_status_t build(side &s, uint32_t *key_p) {
        umr_layout_plan_t *plan;
        ucs_status_t status;

        status = umr_layout_lower(s.layout.get(), s.count, nullptr, &plan);
        if (status != UCS_OK) {
            return status;
        }
        stats.nested   += (plan->cost.depth > 1);
        stats.max_depth = std::max<size_t>(stats.max_depth, plan->cost.depth);
        for (uint32_t k = 0; k < plan->num_keys; ++k) {
            ++((plan->keys[k].kind == UMR_LAYOUT_KEY_INTERLEAVED) ?
               stats.interleaved : stats.list);
        }
        status = ops->mr_reg(dev, s.buf.data() + GUARD, s.buf.size() - 2 * GUARD,
                             RW, &s.mr);
        if (status != UCS_OK) {
            umr_layout_plan_free(plan);
            return status;
        }
        for (uint32_t k = 0; (k < plan->num_keys) && (status == UCS_OK); ++k) {
            const umr_layout_key_t *key = &plan->keys[k];
            umr_eng_mkey_t *m;
            /* an interleaved UMR also takes the strided header */
            status = ops->mkey_create(dev, key->num_entries +
                                      (key->kind == UMR_LAYOUT_KEY_INTERLEAVED),
                                      &m);
            if (status != UCS_OK) break;
            s.mkeys.push_back(m);
            std::vector<umr_eng_interleaved_t> il(key->num_entries);
            std::vector<umr_eng_sge_t> sg(key->num_entries);
            for (uint32_t e = 0; e < key->num_entries; ++e) {
                const umr_layout_entry_t *en = &key->entries[e];
                uint64_t addr = (en->child < 0) ?
                        (uintptr_t)(s.base() + en->offset) : (uint64_t)en->offset;
                uint32_t lkey = (en->child < 0) ? s.mr->lkey :
                                s.mkeys[en->child]->lkey;
                il[e] = {addr, en->bytes_count, en->bytes_skip, lkey};
                sg[e] = {addr, en->bytes_count, lkey};
            }
            if (key->kind == UMR_LAYOUT_KEY_INTERLEAVED) {
                status = ops->post_umr_interleaved(qp, m, RW, key->repeat,
                                                   key->num_entries, il.data(),
                                                   k, UMR_ENG_WR_SIGNALED);
            } else {
                status = ops->post_umr_list(qp, m, RW, key->num_entries,
                                            sg.data(), k, UMR_ENG_WR_SIGNALED);
            }
            if ((status == UCS_OK) && (wait(k) != UMR_ENG_WC_SUCCESS)) {
                status = UCS_ERR_IO_ERROR;
            }
        }
        umr_layout_plan_free(plan);
        if (status == UCS_OK) {
            *key_p = s.mkeys.back()->rkey;
        }
        return status;
    }

    void release(side &s) {
        for (auto it = s.mkeys.rbegin(); it != s.mkeys.rend(); ++it) {
            EXPECT_EQ(UCS_OK, ops->mkey_destroy(dev, *it));
        }
        s.mkeys.clear();
        if (s.mr) {
            EXPECT_EQ(UCS_OK, ops->mr_dereg(dev, s.mr));
        }
        s.mr = nullptr;
    }
};

enum { CMD_BUILD, CMD_RELEASE, CMD_QUIT, CMD_REBUILD };

struct request { uint32_t cmd; uint32_t index; };
struct reply   { int32_t status; uint32_t rkey; uint64_t buf; uint64_t len; };

bool peer_read(pid_t pid, uint64_t addr, void *dst, size_t len)
{
    struct iovec l = {dst, len}, r = {(void*)(uintptr_t)addr, len};
    return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len;
}

/* The target process: builds the remote side of each case on request. */
int target_main(umr_test::proc &p, uint64_t seed)
{
    endpoint ep;
    request req;
    std::unique_ptr<xcase> c;

    if (!ep.open() || !ep.connect(p)) {
        return 2;
    }
    while (p.recv(req)) {
        if (req.cmd == CMD_QUIT) {
            break;
        } else if (req.cmd == CMD_RELEASE) {
            if (c) ep.release(c->remote);
            c.reset();
            continue;
        }
        c.reset(new xcase());
        make_case(seed, req.index, *c);
        for (size_t j = 0; j < c->remote.buf.size(); ++j) {
            c->remote.buf[j] = pattern(req.index, j, 'B');
        }
        reply rep = {};
        rep.status = ep.build(c->remote, &rep.rkey);
        rep.buf    = (uintptr_t)c->remote.buf.data();
        rep.len    = c->remote.buf.size();
        if (!p.send(rep)) return 3;
    }
    if (c) ep.release(c->remote);
    ep.close();
    return 0;
}

} // namespace

class test_engine_sw_xproc : public ::testing::Test {
};

TEST_F(test_engine_sw_xproc, random_layout_pairs) {
    uint64_t seed = test_seed();
    size_t cases  = num_cases();
    size_t done = 0, skipped = 0, reads = 0, bytes = 0, failures = 0;
    umr_test::proc target([seed](umr_test::proc &p) {
        return target_main(p, seed);
    });
    endpoint ep;

    ASSERT_TRUE(ep.open());
    ASSERT_TRUE(ep.connect(target));

    for (size_t i = 0; (i < cases) && (failures < 5); ++i) {
        xcase c;
        make_case(seed, i, c);
        for (size_t j = 0; j < c.local.buf.size(); ++j) {
            c.local.buf[j] = pattern(i, j, 'A');
        }
        request req = {CMD_BUILD, (uint32_t)i};
        reply rep;
        ASSERT_TRUE(target.send(req));
        ASSERT_TRUE(target.recv(rep)) << describe(c, seed, i);
        uint32_t lkey   = 0;
        ucs_status_t ls = ep.build(c.local, &lkey);
        if ((rep.status == UCS_ERR_EXCEEDS_LIMIT) ||
            (ls == UCS_ERR_EXCEEDS_LIMIT)) {
            ++skipped; /* no plan within the limits: not an engine case */
        } else {
            ASSERT_EQ(UCS_OK, (ucs_status_t)rep.status) << describe(c, seed, i);
            ASSERT_EQ(UCS_OK, ls) << describe(c, seed, i);
            ASSERT_EQ(c.remote.buf.size(), rep.len);

            /* the expected bytes, from the reference pack/unpack */
            std::vector<unsigned char> rbefore(rep.len), rafter(rep.len);
            ASSERT_TRUE(peer_read(target.pid(), rep.buf, rbefore.data(),
                                  rep.len));
            std::vector<unsigned char> lexp(c.local.buf), rexp(rbefore);
            std::vector<unsigned char> tmp(c.len);
            unsigned char *rbase = rexp.data() + GUARD - c.remote.lb;
            unsigned char *lbase = lexp.data() + GUARD - c.local.lb;
            if (c.is_read) {
                ASSERT_EQ(UCS_OK, umr_layout_pack_range(
                        c.remote.layout.get(), c.remote.count, rbase,
                        c.off_r, c.len, tmp.data()));
                ASSERT_EQ(UCS_OK, umr_layout_unpack_range(
                        c.local.layout.get(), c.local.count, lbase,
                        c.off_l, c.len, tmp.data()));
            } else {
                ASSERT_EQ(UCS_OK, umr_layout_pack_range(
                        c.local.layout.get(), c.local.count, lbase,
                        c.off_l, c.len, tmp.data()));
                ASSERT_EQ(UCS_OK, umr_layout_unpack_range(
                        c.remote.layout.get(), c.remote.count, rbase,
                        c.off_r, c.len, tmp.data()));
            }

            umr_eng_sge_t sge = {c.off_l, (uint32_t)c.len, lkey};
            ASSERT_EQ(UCS_OK, ep.ops->post_rdma(ep.qp, c.is_read ?
                                                UMR_ENG_OP_RDMA_READ :
                                                UMR_ENG_OP_RDMA_WRITE,
                                                &sge, 1, c.off_r, rep.rkey,
                                                1000 + i, UMR_ENG_WR_SIGNALED));
            umr_eng_wc_status_t st = ep.wait(1000 + i);
            ASSERT_EQ(UMR_ENG_WC_SUCCESS, st)
                    << umr_eng_wc_status_str(st) << "\n" << describe(c, seed, i);
            ASSERT_TRUE(peer_read(target.pid(), rep.buf, rafter.data(),
                                  rep.len));
            auto check = [&](const std::vector<unsigned char> &got,
                             const std::vector<unsigned char> &exp,
                             const char *who) {
                for (size_t j = 0; j < exp.size(); ++j) {
                    if (got[j] != exp[j]) {
                        ADD_FAILURE() << who << " byte " << j << " (offset "
                                      << (ptrdiff_t)(j - GUARD) << " in span) is "
                                      << (int)got[j] << ", expected "
                                      << (int)exp[j] << "\n"
                                      << describe(c, seed, i);
                        ++failures;
                        return;
                    }
                }
            };
            check(rafter, rexp, "remote");
            check(c.local.buf, lexp, "local");
            ++done;
            reads += c.is_read;
            bytes += c.len;
        }
        ep.release(c.local);
        req.cmd = CMD_RELEASE;
        ASSERT_TRUE(target.send(req));
    }

    request quit = {CMD_QUIT, 0};
    EXPECT_TRUE(target.send(quit));
    EXPECT_TRUE(target.join());
    ep.close();
    printf("[ INFO     ] %zu cases moved (%zu reads, %zu bytes), %zu skipped "
           "(no plan within limits)\n", done, reads, bytes, skipped);
    printf("[ INFO     ] local plans: %zu interleaved + %zu list keys, %zu "
           "nested plans, max depth %zu\n", ep.stats.interleaved,
           ep.stats.list, ep.stats.nested, ep.stats.max_depth);
    /* skips must stay rare, or the test would test nothing */
    EXPECT_GE(done, cases * 9 / 10);
}

/* A peer's reconfiguration reaches our key cache: stale keys fail. */
TEST_F(test_engine_sw_xproc, remote_reconfigure_and_invalidate) {
    struct info { uint32_t rkey; uint64_t addr; };
    umr_test::proc target([](umr_test::proc &p) {
        endpoint ep;
        static unsigned char mem[4096];
        umr_eng_mr_t *mr;
        umr_eng_mkey_t *m;
        uint32_t step = 0;
        char cmd;

        memset(mem, 0xee, sizeof(mem));
        if (!ep.open() || !ep.connect(p) ||
            (ep.ops->mr_reg(ep.dev, mem, sizeof(mem), RW, &mr) != UCS_OK) ||
            (ep.ops->mkey_create(ep.dev, 2, &m) != UCS_OK)) {
            return 2;
        }
        /* 1: 4 x 8 bytes every 16; 2: 2 x 8 bytes every 64; 3: invalidated */
        while (p.recv(cmd) && (cmd != 'q')) {
            ucs_status_t st;
            if (cmd == 'r') {
                if (!ep.reconnect(p)) return 5;
                continue;
            }
            ++step;
            if (step < 3) {
                umr_eng_interleaved_t e = {(uintptr_t)mem, 8,
                                           step == 1 ? 8u : 56u, mr->lkey};
                st = ep.ops->post_umr_interleaved(ep.qp, m, RW,
                                                  step == 1 ? 4 : 2, 1, &e,
                                                  step, UMR_ENG_WR_SIGNALED);
            } else {
                st = ep.ops->post_local_inv(ep.qp, m, step,
                                            UMR_ENG_WR_SIGNALED);
            }
            if ((st != UCS_OK) || (ep.wait(step) != UMR_ENG_WC_SUCCESS)) {
                return 3;
            }
            info inf = {m->rkey, (uintptr_t)mem};
            if (!p.send(inf)) return 4;
        }
        ep.ops->mkey_destroy(ep.dev, m);
        ep.ops->mr_dereg(ep.dev, mr);
        ep.close();
        return 0;
    });
    endpoint ep;
    ASSERT_TRUE(ep.open());
    ASSERT_TRUE(ep.connect(target));
    std::vector<unsigned char> src(64);
    for (size_t i = 0; i < src.size(); ++i) src[i] = (unsigned char)(i + 1);
    umr_eng_mr_t *smr;
    ASSERT_EQ(UCS_OK, ep.ops->mr_reg(ep.dev, src.data(), src.size(), RW, &smr));
    auto put = [&](uint32_t rkey, size_t len, uint64_t id) {
        umr_eng_sge_t sge = {(uintptr_t)src.data(), (uint32_t)len, smr->lkey};
        EXPECT_EQ(UCS_OK, ep.ops->post_rdma(ep.qp, UMR_ENG_OP_RDMA_WRITE, &sge,
                                            1, 0, rkey, id,
                                            UMR_ENG_WR_SIGNALED));
        return ep.wait(id);
    };
    auto next = [&](info &inf) {
        char cmd = 'n';
        return target.send(cmd) && target.recv(inf);
    };
    auto fresh_qps = [&]() {  /* an error leaves the QP flushing */
        char cmd = 'r';
        return target.send(cmd) && ep.reconnect(target);
    };

    info i1, i2, i3;
    unsigned char mem[4096];
    ASSERT_TRUE(next(i1));
    EXPECT_EQ(UMR_ENG_WC_SUCCESS, put(i1.rkey, 32, 1));
    ASSERT_TRUE(peer_read(target.pid(), i1.addr, mem, sizeof(mem)));
    for (size_t j = 0; j < 128; ++j) {
        ASSERT_EQ((j < 64) && (j % 16 < 8) ? src[(j / 16) * 8 + j % 8] : 0xee,
                  mem[j]) << j;
    }
    ASSERT_TRUE(next(i2));
    EXPECT_NE(i1.rkey, i2.rkey);
    EXPECT_EQ(UMR_ENG_WC_REM_ACCESS_ERR, put(i1.rkey, 8, 2)) << "stale tag";
    ASSERT_TRUE(fresh_qps());
    EXPECT_EQ(UMR_ENG_WC_SUCCESS, put(i2.rkey, 16, 3));
    ASSERT_TRUE(peer_read(target.pid(), i1.addr, mem, sizeof(mem)));
    EXPECT_EQ(0, memcmp(mem, src.data(), 8));
    EXPECT_EQ(0, memcmp(mem + 64, src.data() + 8, 8)) << "new layout used";
    EXPECT_EQ(UMR_ENG_WC_REM_ACCESS_ERR, put(i2.rkey, 17, 4)) << "new length";
    ASSERT_TRUE(fresh_qps());
    ASSERT_TRUE(next(i3));
    EXPECT_EQ(i2.rkey, i3.rkey);
    EXPECT_EQ(UMR_ENG_WC_REM_ACCESS_ERR, put(i3.rkey, 8, 5)) << "invalidated";
    char quit = 'q';
    ASSERT_TRUE(target.send(quit));
    EXPECT_TRUE(target.join());
    ep.ops->mr_dereg(ep.dev, smr);
    ep.close();
}

/* The peer process dies: operations complete with an error, none hangs. */
TEST_F(test_engine_sw_xproc, peer_process_gone) {
    struct info { uint32_t rkey; uint64_t addr; };
    umr_test::proc target([](umr_test::proc &p) {
        endpoint ep;
        static unsigned char mem[4096];
        umr_eng_mr_t *mr;
        if (!ep.open() || !ep.connect(p) ||
            (ep.ops->mr_reg(ep.dev, mem, sizeof(mem), RW, &mr) != UCS_OK)) {
            return 2;
        }
        info inf = {mr->rkey, (uintptr_t)mem};
        p.send(inf);
        pause(); /* until killed */
        return 0;
    });
    endpoint ep;
    ASSERT_TRUE(ep.open());
    ASSERT_TRUE(ep.connect(target));
    info inf;
    ASSERT_TRUE(target.recv(inf));
    std::vector<unsigned char> src(64, 7);
    umr_eng_mr_t *smr;
    ASSERT_EQ(UCS_OK, ep.ops->mr_reg(ep.dev, src.data(), src.size(), RW, &smr));
    umr_eng_sge_t sge = {(uintptr_t)src.data(), 64, smr->lkey};
    ASSERT_EQ(UCS_OK, ep.ops->post_rdma(ep.qp, UMR_ENG_OP_RDMA_WRITE, &sge, 1,
                                        inf.addr, inf.rkey, 1,
                                        UMR_ENG_WR_SIGNALED));
    EXPECT_EQ(UMR_ENG_WC_SUCCESS, ep.wait(1));

    target.kill(SIGKILL);       /* and reaped: gone, however busy the machine */
    ASSERT_EQ(UCS_OK, ep.ops->post_rdma(ep.qp, UMR_ENG_OP_RDMA_READ, &sge, 1,
                                        inf.addr, inf.rkey, 2,
                                        UMR_ENG_WR_SIGNALED));
    ASSERT_EQ(UCS_OK, ep.ops->post_rdma(ep.qp, UMR_ENG_OP_RDMA_WRITE, &sge, 1,
                                        inf.addr, inf.rkey, 3, 0));
    EXPECT_EQ(UMR_ENG_WC_RETRY_EXC_ERR, ep.wait(2));
    EXPECT_EQ(UMR_ENG_WC_WR_FLUSH_ERR, ep.wait(3));
    ep.ops->mr_dereg(ep.dev, smr);
    ep.close();
}

/* A child that fails its own assertions is reported by join(). */
TEST(test_umr_test_proc, child_status_is_checked) {
    umr_test::proc ok([](umr_test::proc &p) {
        uint64_t v;
        return (p.recv(v) && p.send(v + 1)) ? 0 : 1;
    });
    uint64_t v = 41;
    ASSERT_TRUE(ok.send(v));
    ASSERT_TRUE(ok.recv(v));
    EXPECT_EQ(42u, v);
    EXPECT_TRUE(ok.join());

    umr_test::proc bad([](umr_test::proc &) { return 3; });
    ::testing::AssertionResult r = bad.join();
    EXPECT_FALSE(r);
    EXPECT_NE(std::string::npos, std::string(r.message()).find("code 3"));

    umr_test::proc crash([](umr_test::proc &) -> int { abort(); });
    r = crash.join();
    EXPECT_FALSE(r);
    EXPECT_NE(std::string::npos, std::string(r.message()).find("signal 6"));

    umr_test::proc hang([](umr_test::proc &) { pause(); return 0; });
    r = hang.join(0.2);
    EXPECT_FALSE(r) << "a hung child is killed and reported";
    uint64_t none;
    EXPECT_FALSE(hang.recv(none, 0.1)) << "its pipe is closed";
}
