/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Shared test helper for the mlx5_umr UCT transport (owner: transport; free
 * for the MPI-layer and benchmark suites to use).
 *
 * umr_test::uct_stack opens, in the calling process, everything a transport
 * test needs on one mlx5_umr device: component, md, async context, worker,
 * iface (progress enabled) and endpoints, with configuration overrides.
 *
 *     umr_test::uct_stack s;
 *     ASSERT_UCS_OK(s.open("sw", {{"TX_QUEUE_LEN", "4"}}));
 *     uct_ep_h ep = s.create_ep();
 *     s.connect(ep, peer_dev_addr, peer_ep_addr);
 *     ... uct_ep_put_zcopy(ep, ...) ...
 *     s.wait(comp);              // progress until the completion fired
 *
 * Addresses and packed keys are plain byte vectors so they go through a
 * pipe (umr_test::proc) unchanged.
 */
#ifndef UMR_TEST_UCT_H_
#define UMR_TEST_UCT_H_

#include <uct/api/uct.h>

#include <map>
#include <string>
#include <vector>

namespace umr_test {

typedef std::vector<uint8_t> bytes_t;
typedef std::map<std::string, std::string> config_t;

#define ASSERT_UCS_OK(_expr) \
    do { \
        ucs_status_t _s = (_expr); \
        ASSERT_EQ(UCS_OK, _s) << #_expr << ": " << ucs_status_string(_s); \
    } while (0)

/* The device the transport suites run on: $UMR_TEST_DEV if set, else the
 * program's default ("sw"; the suites linked with the rdma-core model set
 * "mlx5_0" before main). The same tests then run on either engine. */
const std::string &uct_test_dev();
void               uct_test_set_default_dev(const std::string &dev);
bool               uct_test_dev_is_sw();

/* A completion that counts how often it fired and keeps the last status. */
struct test_comp {
    uct_completion_t uct;
    int              fired  = 0;
    ucs_status_t     status = UCS_OK;
    std::vector<int> *order = nullptr;   /* appends `id` when it fires */
    int              id     = 0;

    test_comp();
    void reset(int count = 1);
};

class uct_stack {
public:
    uct_stack() = default;
    ~uct_stack();

    uct_stack(const uct_stack&) = delete;
    uct_stack &operator=(const uct_stack&) = delete;

    /* md and iface config overrides are "VAR" (without UCX_MLX5_UMR_). */
    ucs_status_t open(const std::string &dev = "sw",
                      const config_t &md_cfg = config_t(),
                      const config_t &iface_cfg = config_t());
    void close();

    uct_ep_h     create_ep();
    void         destroy_ep(uct_ep_h ep);
    bytes_t      dev_addr() const;
    bytes_t      iface_addr() const;
    bytes_t      ep_addr(uct_ep_h ep) const;
    ucs_status_t connect(uct_ep_h ep, const bytes_t &dev_addr,
                         const bytes_t &ep_addr);

    ucs_status_t reg(void *addr, size_t len, uct_mem_h *memh_p);
    ucs_status_t dereg(uct_mem_h memh);
    bytes_t      pack(uct_mem_h memh) const;
    ucs_status_t unpack(const bytes_t &packed, uct_rkey_bundle_t *rkey);
    void         release(uct_rkey_bundle_t *rkey);

    unsigned     progress();
    /* Progress until comp fired or `timeout` seconds (scaled by
     * UMR_TEST_TIME_MULTIPLIER) passed. */
    bool         wait(const test_comp &comp, double timeout = 10.0);
    /* uct_ep_flush with a completion, progressed to the end. */
    ucs_status_t flush(uct_ep_h ep, double timeout = 10.0);

    /* open the iface with a feature request, as UCP does (set before open) */
    bool              request_features = false;
    /* iface error handler (uct_iface_params_t::err_handler; before open) */
    uct_error_handler_t err_handler     = nullptr;
    void                *err_handler_arg = nullptr;

    uct_component_h   component = nullptr;
    uct_md_h          md        = nullptr;
    uct_md_attr_t     md_attr;
    uct_iface_attr_t  iface_attr;
    ucs_async_context_t *async  = nullptr;
    uct_worker_h      worker    = nullptr;
    uct_iface_h       iface     = nullptr;

private:
    std::vector<uct_ep_h> m_eps;
};

} // namespace umr_test

#endif
