/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Shared test helper for the mlx5_umr UCT transport (see umr_test_uct.h).
 */
#include "umr_test_uct.h"
#include "umr_test_time.h"
#include "umr_ucs_compat.h"
#include "uct_umr.h"

#include <ucs/async/async_fwd.h>
#include <ucs/time/time.h>

#include <algorithm>
#include <cstring>

namespace umr_test {

static std::string &uct_test_default_dev()
{
    static std::string dev = "sw";
    return dev;
}

void uct_test_set_default_dev(const std::string &dev)
{
    uct_test_default_dev() = dev;
}

const std::string &uct_test_dev()
{
    static std::string dev;
    const char *env = getenv("UMR_TEST_DEV");

    dev = (env != NULL) ? env : uct_test_default_dev();
    return dev;
}

bool uct_test_dev_is_sw()
{
    return uct_test_dev() == "sw";
}

static void test_comp_cb(uct_completion_t *self)
{
    test_comp *c = reinterpret_cast<test_comp*>(self);

    ++c->fired;
    c->status = self->status;
    if (c->order != nullptr) {
        c->order->push_back(c->id);
    }
}

test_comp::test_comp()
{
    reset();
}

void test_comp::reset(int count)
{
    uct.func   = test_comp_cb;
    uct.count  = count;
    uct.status = UCS_OK;
    fired      = 0;
    status     = UCS_OK;
}

uct_stack::~uct_stack()
{
    close();
}

static ucs_status_t apply_config(void *config, const config_t &cfg)
{
    for (const auto &kv : cfg) {
        ucs_status_t status = umr_ucs_config_modify(config,
                                                    UCT_UMR_CONFIG_PREFIX,
                                                    kv.first.c_str(),
                                                    kv.second.c_str());
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
}

ucs_status_t uct_stack::open(const std::string &dev, const config_t &md_cfg,
                             const config_t &iface_cfg)
{
    uct_component_h *components;
    uct_component_attr_t cattr;
    uct_iface_config_t *iface_config;
    uct_md_config_t *md_config;
    uct_iface_params_t params;
    unsigned i, num;
    ucs_status_t status;

    status = uct_query_components(&components, &num);
    if (status != UCS_OK) {
        return status;
    }

    for (i = 0; i < num; ++i) {
        cattr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        if ((uct_component_query(components[i], &cattr) == UCS_OK) &&
            !strcmp(cattr.name, "mlx5_umr")) {
            component = components[i];
        }
    }
    uct_release_component_list(components);
    if (component == nullptr) {
        return UCS_ERR_NO_DEVICE;
    }

    status = uct_md_config_read(component, NULL, NULL, &md_config);
    if (status != UCS_OK) {
        return status;
    }
    status = apply_config(md_config, md_cfg);
    if (status == UCS_OK) {
        status = uct_md_open(component, dev.c_str(), md_config, &md);
    }
    uct_config_release(md_config);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_md_query(md, &md_attr);
    if (status != UCS_OK) {
        return status;
    }

    status = ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &async);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &worker);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_md_iface_config_read(md, "mlx5_umr", NULL, NULL,
                                      &iface_config);
    if (status != UCS_OK) {
        return status;
    }

    status = apply_config(iface_config, iface_cfg);
    if (status == UCS_OK) {
        memset(&params, 0, sizeof(params));
        params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                      UCT_IFACE_PARAM_FIELD_DEVICE;
        params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
        params.mode.device.tl_name  = "mlx5_umr";
        params.mode.device.dev_name = dev.c_str();
        if (request_features) {
            params.field_mask |= UCT_IFACE_PARAM_FIELD_FEATURES;
            params.features    = UCT_IFACE_FEATURE_PUT |
                                 UCT_IFACE_FEATURE_GET;
        }
        if (err_handler != nullptr) {
            params.field_mask       |= UCT_IFACE_PARAM_FIELD_ERR_HANDLER |
                                       UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG |
                                       UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS;
            params.err_handler       = err_handler;
            params.err_handler_arg   = err_handler_arg;
            params.err_handler_flags = 0;
        }
        status = uct_iface_open(md, worker, &params, iface_config, &iface);
    }
    uct_config_release(iface_config);
    if (status != UCS_OK) {
        return status;
    }

    uct_iface_progress_enable(iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    return uct_iface_query(iface, &iface_attr);
}

void uct_stack::close()
{
    for (uct_ep_h ep : m_eps) {
        uct_ep_destroy(ep);
    }
    m_eps.clear();

    if (iface != nullptr) {
        uct_iface_close(iface);
        iface = nullptr;
    }
    if (worker != nullptr) {
        uct_worker_destroy(worker);
        worker = nullptr;
    }
    if (async != nullptr) {
        ucs_async_context_destroy(async);
        async = nullptr;
    }
    if (md != nullptr) {
        uct_md_close(md);
        md = nullptr;
    }
}

uct_ep_h uct_stack::create_ep()
{
    uct_ep_params_t params;
    uct_ep_h ep;

    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface      = iface;
    if (uct_ep_create(&params, &ep) != UCS_OK) {
        return nullptr;
    }
    m_eps.push_back(ep);
    return ep;
}

void uct_stack::destroy_ep(uct_ep_h ep)
{
    m_eps.erase(std::remove(m_eps.begin(), m_eps.end(), ep), m_eps.end());
    uct_ep_destroy(ep);
}

bytes_t uct_stack::dev_addr() const
{
    bytes_t addr(iface_attr.device_addr_len);
    uct_iface_get_device_address(iface, (uct_device_addr_t*)addr.data());
    return addr;
}

bytes_t uct_stack::iface_addr() const
{
    bytes_t addr(iface_attr.iface_addr_len);
    uct_iface_get_address(iface, (uct_iface_addr_t*)addr.data());
    return addr;
}

bytes_t uct_stack::ep_addr(uct_ep_h ep) const
{
    bytes_t addr(iface_attr.ep_addr_len);
    uct_ep_get_address(ep, (uct_ep_addr_t*)addr.data());
    return addr;
}

ucs_status_t uct_stack::connect(uct_ep_h ep, const bytes_t &dev_addr,
                                const bytes_t &ep_addr)
{
    return uct_ep_connect_to_ep(ep, (const uct_device_addr_t*)dev_addr.data(),
                                (const uct_ep_addr_t*)ep_addr.data());
}

ucs_status_t uct_stack::reg(void *addr, size_t len, uct_mem_h *memh_p)
{
    return uct_md_mem_reg(md, addr, len, UCT_MD_MEM_ACCESS_ALL, memh_p);
}

ucs_status_t uct_stack::dereg(uct_mem_h memh)
{
    return uct_md_mem_dereg(md, memh);
}

bytes_t uct_stack::pack(uct_mem_h memh) const
{
    bytes_t packed(md_attr.rkey_packed_size);
    if (uct_md_mkey_pack(md, memh, packed.data()) != UCS_OK) {
        packed.clear();
    }
    return packed;
}

ucs_status_t uct_stack::unpack(const bytes_t &packed, uct_rkey_bundle_t *rkey)
{
    return uct_rkey_unpack(component, packed.data(), rkey);
}

void uct_stack::release(uct_rkey_bundle_t *rkey)
{
    uct_rkey_release(component, rkey);
}

unsigned uct_stack::progress()
{
    return uct_worker_progress(worker);
}

bool uct_stack::wait(const test_comp &comp, double timeout)
{
    ucs_time_t deadline = ucs_get_time() +
                          ucs_time_from_sec(umr_test::scaled(timeout));

    while (comp.fired == 0) {
        if (ucs_get_time() > deadline) {
            return false;
        }
        progress();
    }
    return true;
}

ucs_status_t uct_stack::flush(uct_ep_h ep, double timeout)
{
    test_comp comp;
    ucs_status_t status;

    do {
        status = uct_ep_flush(ep, 0, &comp.uct);
        if (status == UCS_ERR_NO_RESOURCE) {
            progress();
        }
    } while (status == UCS_ERR_NO_RESOURCE);

    if (status != UCS_INPROGRESS) {
        return status;
    }
    if (!wait(comp, timeout)) {
        return UCS_ERR_TIMED_OUT;
    }
    return comp.status;
}

} // namespace umr_test
