/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * A fake rdma-core (libibverbs + libmlx5) for tests that need no device.
 *
 * Link the code under test with -Wl,--wrap=<sym> for every symbol in
 * UMR_TEST_VERBS_FAKE_WRAP (see test/gtest/engine_mlx5.am): each wrapped
 * call lands in a __wrap_<sym> here, which returns fake objects and records
 * its arguments. The inline verbs (ibv_query_port, ibv_query_device_ex,
 * ibv_create_cq_ex) reach the fake through the ops of a fake verbs_context,
 * and every ibv_wr_* / mlx5dv_wr_* / ibv_*_poll call through the function
 * pointers of fake ibv_qp_ex / mlx5dv_qp_ex / ibv_cq_ex objects.
 *
 * With `model` set (reset()'s default) it is a model of rdma-core on a
 * ConnectX that enforces rdma-core's rules - those of the release the tests
 * are built against (reset() sets them) - and executes the work, across
 * forked processes too: see umr_test_verbs_model.h.
 *
 * Whoever tests code that calls verbs may use it (the mlx5 engine's wrap
 * tests do; a transport test could run the transport on the mlx5 engine the
 * same way). One global fake per process; call reset() in SetUp().
 */
#ifndef UMR_TEST_VERBS_FAKE_H_
#define UMR_TEST_VERBS_FAKE_H_

#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>
#include "umr_test_verbs_model.h"

#include <deque>
#include <string>
#include <vector>

namespace umr_test {

/* One call of a WR builder, with wr_id/wr_flags as they were at that time. */
struct fake_wr_call {
    enum kind_t {
        START, RDMA_WRITE, RDMA_READ, LOCAL_INV, SET_SGE_LIST,
        MR_INTERLEAVED, MR_LIST, COMPLETE, ABORT
    };

    kind_t                                 kind;
    struct ibv_qp_ex                       *qpx;
    uint64_t                               wr_id;
    unsigned                               wr_flags;
    uint32_t                               key;         /* rkey, inv. key,
                                                           mkey->lkey */
    uint64_t                               remote_addr;
    const struct mlx5dv_mkey               *mkey;
    uint32_t                               access;
    uint32_t                               repeat;
    std::vector<struct mlx5dv_mr_interleaved> ilv;
    std::vector<struct ibv_sge>            sge;
    int                                    ret;         /* COMPLETE */
};

struct fake_cqe {
    uint64_t           wr_id;
    enum ibv_wc_status status;
    enum ibv_wc_opcode opcode;      /* meaningful on success only */
    uint32_t           vendor_err;
    struct ibv_qp      *qp  = nullptr;  /* model: frees its SQ when polled */
    uint64_t           seq  = 0;
};

struct fake_device {
    std::string name;
    bool        mlx5;
    std::string local_cpus;   /* sysfs device/local_cpus ("ff,00000000");
                                 empty: the file is absent */
};

struct fake_port {
    struct ibv_port_attr              attr;
    std::vector<struct ibv_gid_entry> gids;
    std::vector<uint16_t>             pkeys;  /* network order, as
                                                 ibv_query_pkey gives them */
    std::vector<uint32_t>             dead_gids; /* entries ibv_create_ah
                                                    refuses (R33) */
};

struct verbs_fake {
    /* ---- configuration (reset() sets one IB mlx5 device "mlx5_0") ---- */
    bool                      model;              /* enforce rdma-core's
                                                     rules and execute the
                                                     work (umr_test_verbs_
                                                     model.h); false: only
                                                     record arguments */
    bool                      update_tag_kernel;  /* kernel supports
                                                     MKEY_UPDATE_TAG */
    std::vector<fake_device>  devices;
    bool                      device_list_fails;  /* returns NULL, ENOSYS */
    int                       open_errno;         /* mlx5dv_open_device */
    struct ibv_device_attr_ex dev_attr;
    std::vector<fake_port>    ports;              /* port i+1 */
    bool                      alloc_pd_fails;
    int                       mkey_fail_at;       /* n-th create fails (1-based) */
    int                       create_qp_errno;
    uint32_t                  qp_inline_grant;    /* 0: grant the request */
    enum ibv_qp_state         modify_fail_state;  /* IBV_QPS_UNKNOWN: none */
    int                       wr_complete_ret;
    int                       wr_complete_fail_times; /* > 0: only the next
                                                         n wr_complete calls
                                                         return the error */
    int                       start_poll_ret;     /* 0: real queue */
    uint32_t                  max_sq_desc_sz;     /* largest send WQE (R30) */
    uint32_t                  host;               /* simulated host of this
                                                     process (R24-R29) */
    uint32_t                  fabric;             /* fabric of its links */
    uint32_t                  subnet;             /* IP subnet of its RoCE
                                                     port (R26, R33) */
    bool                      check_free;         /* UMR only on a free key
                                                     (man mlx5dv_wr_post; R23) */
    bool                      kernel_before_6_2;  /* read-only registrations
                                                     pin as before Linux 6.2
                                                     (R21b) */
    model_hca_caps            hca;                /* DEVX QUERY_HCA_CAP and
                                                     what the device does
                                                     with it (R34) */

    /* ---- records ---- */
    uint32_t                                 open_flags;    /* last DEVX open */
    std::vector<fake_wr_call>                calls;
    std::vector<struct ibv_qp_init_attr_ex>  qp_attrs;
    std::vector<struct mlx5dv_qp_init_attr>  dv_qp_attrs;
    std::vector<uint64_t>                    qp_sq_bytes;   /* model: the
                                                              send queue each
                                                              created QP got
                                                              (R1-R4), in
                                                              step with
                                                              qp_attrs; 0:
                                                              failed or
                                                              record mode */
    std::vector<std::pair<struct ibv_qp_attr, int> > modify_calls;
    std::vector<struct mlx5dv_mkey_init_attr> mkey_attrs;
    std::vector<struct ibv_cq_init_attr_ex>  cq_attrs;
    int                                      poll_misuse;  /* end without
                                                              start etc. */
    int                                      num_start_poll;
    int                                      num_end_poll;

    /* live objects, for leak checks */
    int num_ctx, num_pd, num_mr, num_mkey, num_cq, num_qp, num_dev_lists,
        num_ah;

    void reset();
    void defaults();    /* configuration and records, not the objects */
    int  live_objects() const;

    /* WR calls committed by a successful wr_complete (what the NIC got),
     * without START/COMPLETE markers. */
    std::vector<fake_wr_call> posted() const;

    /* Queue a completion on a CQ created through the fake. */
    void push_cqe(struct ibv_cq_ex *cq, const fake_cqe &cqe);
    size_t cq_depth(struct ibv_cq_ex *cq) const;
};

verbs_fake &fake();

/* An IB port / a RoCE port with a GID table, for ports[]. */
fake_port fake_ib_port(uint16_t lid, enum ibv_mtu mtu);
fake_port fake_roce_port(enum ibv_mtu mtu);

/* A RoCE port of simulated host `host` whose GID table holds, for each of
 * its addresses (an IPv6 link-local fe80::<host+1> and, with ipv4, the
 * IPv4 10.0.<host/256>.<host%256+1>), a RoCE v1 and/or v2 entry as
 * `v1` / `v2` say (v1 only: an old kernel or a switch without v2). */
fake_port fake_roce_host_port(uint32_t host, enum ibv_mtu mtu, bool v1,
                              bool v2, bool ipv4, int subnet = -1);

const char *fake_wr_kind_str(fake_wr_call::kind_t kind);

} // namespace umr_test

#endif
