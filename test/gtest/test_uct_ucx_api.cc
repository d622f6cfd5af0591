/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: the UCT entry points that differ between UCX releases
 * (src/compat/umr_uct_compat.h), called the way UCP calls them.
 *
 * UCX calls every slot of its own release's ops tables, and a designated
 * initialiser leaves a slot it does not name NULL without a word, so the
 * first test reads the tables the transport installed and the others call
 * each slot through UCT's own wrappers (uct_iface_is_reachable_v2,
 * uct_ep_is_connected, ...) and check what it returns. A test whose slot this
 * UCX has no such wrapper for is not compiled: the host's UCX 1.13 has none
 * of them, the support matrix's roots (contrib/run-matrix.sh) have them all.
 */
#include "umr_test_uct.h"
#include "umr_uct_compat.h"
#include "uct_umr.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace umr_test;

namespace {

/* The function pointers of an ops table, in order. */
template <typename T>
std::vector<const void*> slots(const T &table)
{
    std::vector<const void*> out(sizeof(T) / sizeof(void*));
    std::memcpy(out.data(), &table, out.size() * sizeof(void*));
    return out;
}

class test_uct_ucx_api : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_UCS_OK(m_s.open(uct_test_dev()));
    }

    /* Two endpoints of this iface connected to each other (loopback). */
    void connect_pair(uct_ep_h *a, uct_ep_h *b) {
        *a = m_s.create_ep();
        *b = m_s.create_ep();
        ASSERT_NE(nullptr, *a);
        ASSERT_NE(nullptr, *b);
        ASSERT_UCS_OK(m_s.connect(*a, m_s.dev_addr(), m_s.ep_addr(*b)));
        ASSERT_UCS_OK(m_s.connect(*b, m_s.dev_addr(), m_s.ep_addr(*a)));
    }

    uct_stack m_s;
};

} // namespace


TEST_F(test_uct_ucx_api, every_ops_slot_is_filled)
{
    const uct_base_iface_t *iface = ucs_derived_of(m_s.iface,
                                                   uct_base_iface_t);
    std::vector<const void*> internal = slots(*iface->internal_ops);
    std::vector<const void*> iface_ops = slots(m_s.iface->ops);
    std::vector<const void*> md_ops    = slots(*m_s.md->ops);

    ASSERT_EQ(size_t(UMR_UCT_IFACE_INTERNAL_OPS_KNOWN), internal.size());
    ASSERT_EQ(size_t(UMR_UCT_MD_OPS_KNOWN), md_ops.size());
    for (size_t i = 0; i < internal.size(); ++i) {
        EXPECT_NE(nullptr, internal[i]) << "uct_iface_internal_ops_t slot " << i;
    }
    for (size_t i = 0; i < iface_ops.size(); ++i) {
        EXPECT_NE(nullptr, iface_ops[i]) << "uct_iface_ops_t slot " << i;
    }
    for (size_t i = 0; i < md_ops.size(); ++i) {
        EXPECT_NE(nullptr, md_ops[i]) << "uct_md_ops_t slot " << i;
    }

    const void *const *component_ops =
            reinterpret_cast<const void *const*>(&m_s.component->query_md_resources);
    for (int i = 0; i < UMR_UCT_COMPONENT_OPS_KNOWN; ++i) {
        EXPECT_NE(nullptr, component_ops[i]) << "uct_component_t slot " << i;
    }
}

/* Names given to uct_config_modify bare ("MKEY_POOL_SIZE") reach the field
 * on every UCX; the probe says which form this UCX's parser takes. */
TEST_F(test_uct_ucx_api, config_names_with_and_without_prefix)
{
    uct_md_config_t *config;
    char value[32];

    ASSERT_UCS_OK(uct_md_config_read(m_s.component, NULL, NULL, &config));
    EXPECT_EQ(UCS_OK, umr_ucs_config_modify(config, UCT_UMR_CONFIG_PREFIX,
                                            "MKEY_POOL_SIZE", "7"));
    /* (uct_config_get takes the bare name in every release) */
    ASSERT_UCS_OK(uct_config_get(config, "MKEY_POOL_SIZE", value,
                                 sizeof(value)));
    EXPECT_STREQ("7", value);

    /* the form the probe says this UCX does not take is refused */
    EXPECT_EQ(UCS_ERR_NO_ELEM,
              uct_config_modify(config, UMR_UCS_CONFIG_PREFIXED_NAMES ?
                                "MKEY_POOL_SIZE" : "MLX5_UMR_MKEY_POOL_SIZE",
                                "9"));
    EXPECT_EQ(UCS_ERR_NO_ELEM,
              umr_ucs_config_modify(config, UCT_UMR_CONFIG_PREFIX,
                                    "NO_SUCH_VARIABLE", "1"));
    uct_config_release(config);
}

TEST_F(test_uct_ucx_api, md_query)
{
    /* uct_md_query (v1) is what every UCX has; since 1.14 UCX builds it from
     * the md's v2 answer */
    EXPECT_EQ(UCT_MD_FLAG_REG | UCT_MD_FLAG_NEED_RKEY,
              m_s.md_attr.cap.flags & (UCT_MD_FLAG_REG | UCT_MD_FLAG_NEED_RKEY |
                                       UCT_MD_FLAG_ALLOC));
    EXPECT_EQ(UCS_BIT(UCS_MEMORY_TYPE_HOST), m_s.md_attr.cap.reg_mem_types);
    EXPECT_EQ(UCS_BIT(UCS_MEMORY_TYPE_HOST), m_s.md_attr.cap.access_mem_types);
    EXPECT_GT(m_s.md_attr.cap.max_reg, 0u);
    EXPECT_EQ(24u, m_s.md_attr.rkey_packed_size);
#if UMR_UCT_MD_QUERY_V2
    uct_md_attr_v2_t attr;
    attr.field_mask = UCT_MD_ATTR_FIELD_FLAGS |
                      UCT_MD_ATTR_FIELD_REG_MEM_TYPES |
                      UCT_MD_ATTR_FIELD_RKEY_PACKED_SIZE |
                      UCT_MD_ATTR_FIELD_COMPONENT_NAME;
    ASSERT_UCS_OK(uct_md_query_v2(m_s.md, &attr));
    EXPECT_EQ(m_s.md_attr.cap.flags, attr.flags);
    EXPECT_EQ(UCS_BIT(UCS_MEMORY_TYPE_HOST), attr.reg_mem_types);
    EXPECT_EQ(m_s.md_attr.rkey_packed_size, attr.rkey_packed_size);
    EXPECT_STREQ(UCT_UMR_NAME, attr.component_name);
#  ifdef HAVE_UCT_MD_ATTR_V2_T_REG_ALIGNMENT
    attr.field_mask = UCT_MD_ATTR_FIELD_REG_ALIGNMENT;
    ASSERT_UCS_OK(uct_md_query_v2(m_s.md, &attr));
    EXPECT_EQ(1u, attr.reg_alignment); /* registers any byte range */
#  endif
#endif
}

#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_CONNECT_TO_EP_V2
/* UCP 1.14 and later connect with the v2 call: data moves through the
 * endpoints it connected, and a length too short for our address is
 * refused. */
TEST_F(test_uct_ucx_api, ep_connect_to_ep_v2)
{
    uct_ep_h a = m_s.create_ep(), b = m_s.create_ep();
    bytes_t dev = m_s.dev_addr(), addr_a = m_s.ep_addr(a),
            addr_b = m_s.ep_addr(b);
    uct_ep_connect_to_ep_params_t params;

    params.field_mask     = UCT_EP_CONNECT_TO_EP_PARAM_FIELD_EP_ADDR_LENGTH;
    params.ep_addr_length = addr_b.size() - 1;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_ep_connect_to_ep_v2(a, (uct_device_addr_t*)dev.data(),
                                      (uct_ep_addr_t*)addr_b.data(), &params));

    params.ep_addr_length = addr_b.size();
    ASSERT_UCS_OK(uct_ep_connect_to_ep_v2(a, (uct_device_addr_t*)dev.data(),
                                          (uct_ep_addr_t*)addr_b.data(),
                                          &params));
    params.field_mask = 0;
    ASSERT_UCS_OK(uct_ep_connect_to_ep_v2(b, (uct_device_addr_t*)dev.data(),
                                          (uct_ep_addr_t*)addr_a.data(),
                                          &params));

    std::vector<uint8_t> dst(256, 0xee);
    const char msg[] = "through connect_to_ep_v2";
    uct_mem_h memh;
    uct_rkey_bundle_t rkey;
    ASSERT_UCS_OK(m_s.reg(dst.data(), dst.size(), &memh));
    ASSERT_UCS_OK(m_s.unpack(m_s.pack(memh), &rkey));
    ucs_status_t status;
    do {
        status = uct_ep_put_short(a, msg, sizeof(msg),
                                  (uintptr_t)dst.data() + 16, rkey.rkey);
        m_s.progress();
    } while (status == UCS_ERR_NO_RESOURCE);
    ASSERT_UCS_OK(status);
    ASSERT_UCS_OK(m_s.flush(a));
    EXPECT_EQ(0, std::memcmp(dst.data() + 16, msg, sizeof(msg)));
    EXPECT_EQ(0xee, dst[15]);
    EXPECT_EQ(0xee, dst[16 + sizeof(msg)]);
    m_s.release(&rkey);
    ASSERT_UCS_OK(m_s.dereg(memh));
}
#endif

#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_IFACE_IS_REACHABLE_V2
TEST_F(test_uct_ucx_api, iface_is_reachable_v2)
{
    bytes_t dev = m_s.dev_addr(), ifa = m_s.iface_addr();
    char info[128];
    uct_iface_is_reachable_params_t params;

    params.field_mask  = UCT_IFACE_IS_REACHABLE_FIELD_DEVICE_ADDR |
                         UCT_IFACE_IS_REACHABLE_FIELD_IFACE_ADDR |
                         UCT_IFACE_IS_REACHABLE_FIELD_INFO_STRING |
                         UCT_IFACE_IS_REACHABLE_FIELD_INFO_STRING_LENGTH;
    params.device_addr        = (uct_device_addr_t*)dev.data();
    params.iface_addr         = (uct_iface_addr_t*)ifa.data();
    params.info_string        = info;
    params.info_string_length = sizeof(info);
    EXPECT_TRUE(uct_iface_is_reachable_v2(m_s.iface, &params));

    ifa[0] ^= 0xff; /* another engine */
    strcpy(info, "untouched");
    EXPECT_FALSE(uct_iface_is_reachable_v2(m_s.iface, &params));
    EXPECT_NE(nullptr, strstr(info, "another engine")) << info;
    ifa[0] ^= 0xff;

    params.field_mask &= ~UCT_IFACE_IS_REACHABLE_FIELD_IFACE_ADDR;
    EXPECT_FALSE(uct_iface_is_reachable_v2(m_s.iface, &params));
    EXPECT_NE(nullptr, strstr(info, "no interface address")) << info;

#ifdef HAVE_UCT_IFACE_IS_REACHABLE_PARAMS_T_SCOPE
    /* device scope: these addresses are this very device */
    params.field_mask |= UCT_IFACE_IS_REACHABLE_FIELD_IFACE_ADDR |
                         UCT_IFACE_IS_REACHABLE_FIELD_SCOPE;
    params.scope       = UCT_IFACE_REACHABILITY_SCOPE_DEVICE;
    EXPECT_TRUE(uct_iface_is_reachable_v2(m_s.iface, &params));
    dev[0] ^= 0xff;
    EXPECT_FALSE(uct_iface_is_reachable_v2(m_s.iface, &params));
    EXPECT_NE(nullptr, strstr(info, "device address is different")) << info;
    params.scope = UCT_IFACE_REACHABILITY_SCOPE_NETWORK;
    EXPECT_TRUE(uct_iface_is_reachable_v2(m_s.iface, &params));
#endif
}
#endif

#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_IS_CONNECTED
/* What UCP's wireup asks of a connect-to-ep lane: connected to exactly the
 * ep address it was connected to, and on that device. */
TEST_F(test_uct_ucx_api, ep_is_connected)
{
    uct_ep_h a, b;
    connect_pair(&a, &b);
    uct_ep_h other = m_s.create_ep();
    bytes_t dev = m_s.dev_addr(), ifa = m_s.iface_addr();
    bytes_t addr_b = m_s.ep_addr(b), addr_other = m_s.ep_addr(other);
    uct_ep_is_connected_params_t params;

    params.field_mask  = UCT_EP_IS_CONNECTED_FIELD_DEVICE_ADDR |
                         UCT_EP_IS_CONNECTED_FIELD_IFACE_ADDR |
                         UCT_EP_IS_CONNECTED_FIELD_EP_ADDR;
    params.device_addr = (uct_device_addr_t*)dev.data();
    params.iface_addr  = (uct_iface_addr_t*)ifa.data();
    params.ep_addr     = (uct_ep_addr_t*)addr_b.data();
    EXPECT_TRUE(uct_ep_is_connected(a, &params));

    params.ep_addr = (uct_ep_addr_t*)addr_other.data();
    EXPECT_FALSE(uct_ep_is_connected(a, &params));  /* another endpoint */
    EXPECT_FALSE(uct_ep_is_connected(other, &params)); /* not connected */

    params.ep_addr = (uct_ep_addr_t*)addr_b.data();
    dev[0] ^= 0xff;
    EXPECT_FALSE(uct_ep_is_connected(a, &params));  /* another device */
    dev[0] ^= 0xff;
    ifa[0] ^= 0xff;
    EXPECT_FALSE(uct_ep_is_connected(a, &params));  /* another engine */
    ifa[0] ^= 0xff;

    params.field_mask = UCT_EP_IS_CONNECTED_FIELD_DEVICE_ADDR;
    EXPECT_TRUE(uct_ep_is_connected(a, &params));
}
#endif

#ifdef HAVE_UCT_COMPONENT_T_RKEY_COMPARE
TEST_F(test_uct_ucx_api, rkey_compare)
{
    std::vector<uint8_t> buf(8192);
    uct_mem_h m1, m2;
    uct_rkey_bundle_t k1, k1_again, k2;
    uct_rkey_compare_params_t params = {};
    int r12, r21, same;

    ASSERT_UCS_OK(m_s.reg(buf.data(), 4096, &m1));
    ASSERT_UCS_OK(m_s.reg(buf.data() + 4096, 4096, &m2));
    ASSERT_UCS_OK(m_s.unpack(m_s.pack(m1), &k1));
    ASSERT_UCS_OK(m_s.unpack(m_s.pack(m1), &k1_again));
    ASSERT_UCS_OK(m_s.unpack(m_s.pack(m2), &k2));
    ASSERT_NE(k1.rkey, k1_again.rkey); /* two unpacks, two handles */

    ASSERT_UCS_OK(uct_rkey_compare(m_s.component, k1.rkey, k1_again.rkey,
                                   &params, &same));
    EXPECT_EQ(0, same);
    ASSERT_UCS_OK(uct_rkey_compare(m_s.component, k1.rkey, k2.rkey, &params,
                                   &r12));
    ASSERT_UCS_OK(uct_rkey_compare(m_s.component, k2.rkey, k1.rkey, &params,
                                   &r21));
    EXPECT_NE(0, r12);
    EXPECT_EQ(-r12, r21);

    params.field_mask = 1;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_rkey_compare(m_s.component, k1.rkey, k2.rkey, &params,
                               &same));

    for (auto *k : {&k1, &k1_again, &k2}) {
        m_s.release(k);
    }
    ASSERT_UCS_OK(m_s.dereg(m1));
    ASSERT_UCS_OK(m_s.dereg(m2));
}
#endif

#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_IFACE_QUERY_V2
/* UCX's default (uct_iface_base_query_v2): no v2 capability at all. */
TEST_F(test_uct_ucx_api, iface_query_v2)
{
    uct_iface_attr_v2_t attr;

    attr.field_mask = 0;
    ASSERT_UCS_OK(uct_iface_query_v2(m_s.iface, &attr));
#  ifdef HAVE_UCT_IFACE_ATTR_V2_T_MAX_PUT_SGL_ZCOPY_COUNT
    attr.field_mask              = UCT_IFACE_ATTR_FIELD_MAX_PUT_SGL_ZCOPY_COUNT |
                                   UCT_IFACE_ATTR_FIELD_CAP_FLAGS;
    attr.max_put_sgl_zcopy_count = 99;
    attr.cap.flags               = ~0ull;
    ASSERT_UCS_OK(uct_iface_query_v2(m_s.iface, &attr));
    EXPECT_EQ(0u, attr.max_put_sgl_zcopy_count);
    EXPECT_EQ(0u, attr.cap.flags);
#  endif
}
#endif

/* Slots for features the transport does not have answer "unsupported", the
 * contract of a transport without them (UCP checks capabilities first). */
TEST_F(test_uct_ucx_api, unsupported_slots_say_so)
{
    uct_ep_h a, b;
    connect_pair(&a, &b);
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_GET_DEVICE_EP
    uct_device_ep_h device_ep;
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_ep_get_device_ep(a, &device_ep));
#endif
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_PUT_SGL_ZCOPY
    EXPECT_EQ(UCS_ERR_UNSUPPORTED,
              uct_ep_put_sgl_zcopy(a, NULL, NULL, NULL, NULL, NULL, NULL,
                                   NULL, 0, NULL));
#endif
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_GET_SGL_ZCOPY
    EXPECT_EQ(UCS_ERR_UNSUPPORTED,
              uct_ep_get_sgl_zcopy(a, NULL, NULL, NULL, NULL, NULL, NULL,
                                   NULL, 0, NULL));
#endif
#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_OUTSTANDING_PURGE
    uct_ep_outstanding_purge_params_t purge = {};
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_ep_outstanding_purge(a, &purge));
#endif
    /* in every UCX: no active messages, no tag offload, no connection
     * manager (these slots were NULL once: a call through UCT's API
     * crashed instead of answering) */
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_ep_am_short(a, 0, 0, NULL, 0));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_ep_tag_eager_short(a, 0, NULL, 0));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_ep_disconnect(a, 0));
    /* the loopback pair still moves data after all this */
    EXPECT_EQ(UCS_OK, m_s.flush(a));
}
