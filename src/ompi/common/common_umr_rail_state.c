/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: the state of an open rail after a fault (see
 * common_umr_rail.h): retired, or still reaching anything. A bottom unit:
 * the keys and the components call it on their fault paths, and it calls
 * only UCT, so that opening a rail (which makes its keys) and retiring it
 * (which its keys do) are not a cycle.
 */
#include "common_umr_rail.h"
#include "common_umr.h"

#include <ucs/time/time.h>

void mca_common_umr_rail_retire(mca_common_umr_rail_t *rail, const char *why)
{
    if (rail->retired) {
        return;
    }
    rail->retired      = 1;
    rail->down         = !mca_common_umr_rail_alive(rail);
    rail->down_checked = ucs_get_time();
    ++mca_common_umr.cnt.rails_retired;
    MCA_COMMON_UMR_VERBOSE(1, "rail %s retired to pass-through (every peer "
                           "on it): %s", rail->name, why);
}

int mca_common_umr_rail_reopen(mca_common_umr_rail_t *rail)
{
    ucs_time_t now = ucs_get_time();

    if (!rail->retired || !rail->down ||
        (now - rail->down_checked < ucs_time_from_msec(1))) {
        return 0;
    }
    rail->down_checked = now;
    if (!mca_common_umr_rail_alive(rail)) {
        return 0;
    }
    rail->retired = 0;
    rail->down    = 0;
    ++mca_common_umr.cnt.rails_reopened;
    MCA_COMMON_UMR_VERBOSE(1, "rail %s reopened: its port is up again, new "
                           "connections on it are zero-copy", rail->name);
    return 1;
}

int mca_common_umr_rail_alive(mca_common_umr_rail_t *rail)
{
    uint8_t addr[2 * MCA_COMMON_UMR_MAX_ADDR];

    if ((rail->dev_addr_len + rail->iface_addr_len > sizeof(addr)) ||
        (uct_iface_get_device_address(rail->iface,
                                      (uct_device_addr_t*)addr) != UCS_OK) ||
        (uct_iface_get_address(rail->iface, (uct_iface_addr_t*)
                               (addr + rail->dev_addr_len)) != UCS_OK)) {
        return 1;   /* cannot tell: the peer alone is retired */
    }
    return uct_iface_is_reachable(rail->iface, (uct_device_addr_t*)addr,
                                  (uct_iface_addr_t*)(addr +
                                                      rail->dev_addr_len));
}
