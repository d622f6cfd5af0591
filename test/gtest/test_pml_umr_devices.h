/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Helpers of the pml/umr device selection tests (test_pml_umr_devices.cc on
 * the sw engine, test_pml_umr_devices_model.cc on the rdma-core model).
 */
#ifndef TEST_PML_UMR_DEVICES_H_
#define TEST_PML_UMR_DEVICES_H_

#include "umr_mpi_devices.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

#ifndef ASSERT_UCS_OK
#define ASSERT_UCS_OK(_expr) \
    do { \
        ucs_status_t _s = (_expr); \
        ASSERT_EQ(UCS_OK, _s) << #_expr << ": " << ucs_status_string(_s); \
    } while (0)
#endif

namespace umr_test {

/* umr_mpi_devices_select over a given device list. */
struct devsel {
    std::vector<std::string> names;
    umr_mpi_devices_t    plan;
    char                     msg[1024];

    explicit devsel(const std::vector<std::string> &n) : names(n)
    {
        plan.num = 0;
        msg[0]   = '\0';
    }

    int select(const char *value)
    {
        std::vector<char> buf(names.size() * UMR_MPI_DEVICE_NAME_MAX + 1);
        auto arr = reinterpret_cast<char (*)[UMR_MPI_DEVICE_NAME_MAX]>(
                buf.data());

        for (size_t i = 0; i < names.size(); ++i) {
            snprintf(arr[i], UMR_MPI_DEVICE_NAME_MAX, "%s",
                     names[i].c_str());
        }
        plan.num = 99;   /* must be reset */
        return umr_mpi_devices_select(value, "pml_umr_devices", arr,
                                      names.size(), &plan, msg, sizeof(msg));
    }

    /* "sw mlx5_1:2 ..." */
    std::string plan_str() const
    {
        std::string s;
        for (unsigned i = 0; i < plan.num; ++i) {
            s += (i ? " " : "") + std::string(plan.dev[i].name);
            if (plan.dev[i].port) {
                s += ":" + std::to_string(plan.dev[i].port);
            }
        }
        return s;
    }
};

/* Sets (or with NULL unsets) an environment variable for a scope. */
class env_guard {
public:
    env_guard(const char *name, const char *value) : m_name(name)
    {
        const char *old = getenv(name);
        m_had = (old != nullptr);
        if (m_had) {
            m_old = old;
        }
        if (value != nullptr) {
            setenv(name, value, 1);
        } else {
            unsetenv(name);
        }
    }
    ~env_guard()
    {
        if (m_had) {
            setenv(m_name.c_str(), m_old.c_str(), 1);
        } else {
            unsetenv(m_name.c_str());
        }
    }

private:
    std::string m_name, m_old;
    bool        m_had;
};

/* The mlx5_umr UCT component (linked into the test program). */
inline uct_component_h devsel_component()
{
    uct_component_attr_t attr = {};
    uct_component_h *comps, found = nullptr;
    unsigned num;

    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
    if (uct_query_components(&comps, &num) != UCS_OK) {
        return nullptr;
    }
    for (unsigned i = 0; i < num; ++i) {
        if ((uct_component_query(comps[i], &attr) == UCS_OK) &&
            !strcmp(attr.name, "mlx5_umr")) {
            found = comps[i];
        }
    }
    uct_release_component_list(comps);
    return found;
}

inline ucs_status_t devsel_query(uct_component_h comp,
                                 std::vector<std::string> *names,
                                 std::string *engine)
{
    char arr[UMR_MPI_DEVICES_MAX][UMR_MPI_DEVICE_NAME_MAX];
    char eng[32] = "";
    unsigned num = 0;
    ucs_status_t status;

    status = umr_mpi_devices_query(comp, arr, UMR_MPI_DEVICES_MAX,
                                       &num, eng, sizeof(eng));
    names->assign(arr, arr + num);
    *engine = eng;
    return status;
}

/* The transport device of an open md: the device it opened. */
inline std::string devsel_md_dev(uct_md_h md)
{
    uct_tl_resource_desc_t *res;
    unsigned num;
    std::string dev;

    if ((uct_md_query_tl_resources(md, &res, &num) == UCS_OK) && (num > 0)) {
        dev = res[0].dev_name;
        uct_release_tl_resource_list(res);
    }
    return dev;
}

} // namespace umr_test

#endif
