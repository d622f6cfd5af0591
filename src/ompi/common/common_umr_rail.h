/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: rails. Loads the mlx5_umr UCT module, opens one rail
 * (md + iface) per engine it is given (common_umr_devices.h chooses them),
 * and publishes the rails in the modex for the peers (common_umr_peer.h).
 */
#ifndef MCA_COMMON_UMR_RAIL_H_
#define MCA_COMMON_UMR_RAIL_H_

#include "common_umr_devices.h"

#include <ompi_config.h>
#include <ompi/constants.h>
#include <opal/mca/base/mca_base_framework.h>

#include <uct/api/uct.h>
#include <ucs/memory/rcache.h>

BEGIN_C_DECLS

#define MCA_COMMON_UMR_MAX_RAILS    2
#define MCA_COMMON_UMR_MAX_ADDR     192
#define MCA_COMMON_UMR_MAX_RKEY     256

/* One opened mlx5_umr md + iface (one engine). */
typedef struct mca_common_umr_rail {
    char          name[32];         /* md name: "sw" or the mlx5 device */
    uct_md_h      md;
    uct_iface_h   iface;
    size_t        rkey_size;
    size_t        ep_addr_len;
    size_t        dev_addr_len;
    size_t        iface_addr_len;
    int           is_sw;
    int           retired;          /* a rail-level fault: every peer on
                                       it passes through from now on */
    int           down;             /* retired for its md reaching nothing
                                       (port down): looked at again, at
                                       most once a millisecond */
    ucs_time_t    down_checked;
    ucs_rcache_t  *rcache;          /* registrations (common_umr_keys.h) */
    int           rcache_tried;     /* made at the first registration */
    ucs_list_link_t idle_lkeys;     /* layout keys no operation holds, the
                                       least recently used last */
} mca_common_umr_rail_t;

/* What a process publishes in the modex. */
typedef struct mca_common_umr_modex {
    char     version[32];           /* ompi release + protocol */
    uint32_t nrails;
    struct {
        char     name[32];
        uint16_t dev_addr_len, iface_addr_len;
        uint8_t  addr[2 * 64];      /* device address, then iface address */
    } rails[MCA_COMMON_UMR_MAX_RAILS];
} mca_common_umr_modex_t;

typedef struct mca_common_umr_rails {
    const mca_base_component_t *owner;  /* the modex is keyed by it */
    void                  *module_handle;
    uct_component_h       component;
    ucs_async_context_t   *async;
    uct_worker_h          worker;
    mca_common_umr_rail_t rails[MCA_COMMON_UMR_MAX_RAILS];
    int                   nrails;
} mca_common_umr_rails_t;

OMPI_DECLSPEC extern mca_common_umr_rails_t mca_common_umr_rails;

/*
 * Load `uct_module` (NULL or "": the one installed beside the component,
 * else where configure put it), open the rails `devices` (the MCA parameter's value)
 * selects and publish them for `owner`'s peers. OMPI_SUCCESS, or an error
 * after one log line (the component then passes everything through).
 */
OMPI_DECLSPEC int mca_common_umr_rails_open(const mca_base_component_t *owner,
                                            const char *uct_module,
                                            const char *devices);
/* UCX_TLS (unset: every transport) lets mlx5_umr be used. */
OMPI_DECLSPEC int mca_common_umr_ucx_tls_allows(void);

/* Release the registrations (keys_live to 0), then close the rails. */
OMPI_DECLSPEC void mca_common_umr_rails_release(void);
OMPI_DECLSPEC void mca_common_umr_rails_close(void);
/* Memory registrations of the open rails' mds (each a pin on a NIC; the
 * transport's count): one per registered region, none per layout key. */
OMPI_DECLSPEC uint64_t mca_common_umr_rails_mem_regs(void);

/* A rail-level fault on `rail` (`why`: an md UMR timeout, the port
 * down): it is retired, every peer on it passes through from now on (one
 * verbose line, the counter rails_retired). */
OMPI_DECLSPEC void mca_common_umr_rail_retire(mca_common_umr_rail_t *rail,
                                              const char *why);
/* Whether the rail's md still works (the transport retires an md whose
 * port went down: it then reaches nothing, not even itself). Fault paths
 * only: it asks the transport. */
OMPI_DECLSPEC int mca_common_umr_rail_alive(mca_common_umr_rail_t *rail);
/* A rail retired because its md reached nothing takes new connections
 * again once the md does (its port is up again with the same address):
 * 1 when it was reopened now (one verbose line, the counter
 * rails_reopened). Peers retired meanwhile stay so. */
OMPI_DECLSPEC int mca_common_umr_rail_reopen(mca_common_umr_rail_t *rail);

/* The rail is retired (and not reopened now). */
static inline int mca_common_umr_rail_out(mca_common_umr_rail_t *rail)
{
    return rail->retired && !(rail->down && mca_common_umr_rail_reopen(rail));
}

/* The modex version peers must publish: same Open MPI, same protocol
 * (umr4: a control message names its send by a sequence number). */
#define MCA_COMMON_UMR_MODEX_VERSION OMPI_VERSION "/umr4"

END_C_DECLS

#endif
