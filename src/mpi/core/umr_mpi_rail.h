/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: rails. Loads the mlx5_umr UCT module, opens one rail
 * (md + iface) per engine the device selection gives (umr_mpi_devices.h),
 * and publishes this process's address through the binding: the binding's
 * version, whether this process runs the point-to-point protocol, and each
 * rail's name and UCT addresses. Peers read it (umr_mpi_peer.h).
 */
#ifndef UMR_MPI_RAIL_H_
#define UMR_MPI_RAIL_H_

#include "umr_mpi.h"
#include "umr_mpi_devices.h"

#include <uct/api/uct.h>
#include <ucs/memory/rcache.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UMR_MPI_MAX_RAILS    2
#define UMR_MPI_MAX_ADDR     192
#define UMR_MPI_MAX_RKEY     256

/* One opened mlx5_umr md + iface (one engine). */
typedef struct umr_mpi_rail {
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
    ucs_rcache_t  *rcache;          /* registrations (umr_mpi_keys.h) */
    int           rcache_tried;     /* made at the first registration */
    ucs_list_link_t idle_lkeys;     /* layout keys no operation holds, the
                                       least recently used last */
    ucs_list_link_t deferred_puts;  /* regions whose put waits until no
                                       registration cache lock is held */
    ucs_list_link_t alloc_cuts;     /* layouts over several allocations:
                                       where they were cut (most recent
                                       first, umr_mpi_allocs.h) */
    unsigned      nalloc_cuts;
} umr_mpi_rail_t;

/* What a process publishes (binding publish/lookup). */
#define UMR_MPI_ADDR_P2P     0x1    /* runs the point-to-point protocol
                                       (umr_mpi_proto.h): a peer may send
                                       it control messages */
typedef struct umr_mpi_addr {
    char     version[48];           /* binding version + core protocol */
    uint32_t flags;                 /* UMR_MPI_ADDR_* */
    uint32_t nrails;
    struct {
        char     name[32];
        uint16_t dev_addr_len, iface_addr_len;
        uint8_t  addr[2 * 64];      /* device address, then iface address */
    } rails[UMR_MPI_MAX_RAILS];
} umr_mpi_addr_t;

typedef struct umr_mpi_rails {
    void                  *module_handle;
    uct_component_h       component;
    ucs_async_context_t   *async;
    uct_worker_h          worker;
    umr_mpi_rail_t        rails[UMR_MPI_MAX_RAILS];
    int                   nrails;
    int                   refs;      /* openers (pml/umr, osc/umr) */
    uint32_t              flags;     /* published: UMR_MPI_ADDR_* */
} umr_mpi_rails_t;

extern umr_mpi_rails_t umr_mpi_rails;

/* How to open the rails. */
typedef struct umr_mpi_rails_params {
    const char *uct_module;   /* path of libuct_mlx5_umr.so; NULL or "": the
                                 one installed beside `beside` (../ucx/),
                                 then beside this library (ucx/), then where
                                 configure put it */
    const void *beside;       /* an address in the caller's shared object */
    const char *devices;      /* the device selection (umr_mpi_devices.h) */
    const char *devices_param;/* its name, for messages ("pml_umr_devices") */
    uint32_t   flags;         /* UMR_MPI_ADDR_* this process publishes */
} umr_mpi_rails_params_t;

/*
 * Load the module, open the rails and publish the address (once: a second
 * opener shares them, refs counted). UCS_OK, or an error after one log line
 * (the binding then passes everything through). With no rail to open (the
 * selection names none that opens, UCX_TLS leaves mlx5_umr out), nothing
 * is published: peers see a process without the core.
 */
ucs_status_t umr_mpi_rails_open(const umr_mpi_rails_params_t *params);
/* Whether the rails are open. */
static inline int umr_mpi_rails_up(void)
{
    return umr_mpi_rails.nrails > 0;
}
/* The last opener: release the registrations (keys_live to 0; the peers'
 * endpoints closed before, umr_mpi_peers_close), then close the rails. */
void umr_mpi_rails_release(void);
void umr_mpi_rails_close(void);
/* UCX_TLS (unset: every transport) lets mlx5_umr be used. */
int  umr_mpi_ucx_tls_allows(void);
/* Memory registrations of the open rails' mds (each a pin on a NIC; the
 * transport's count): one per registered region, none per layout key. */
uint64_t umr_mpi_rails_mem_regs(void);

/* A rail-level fault on `rail` (`why`: an md UMR timeout, the port
 * down): it is retired, every peer on it passes through from now on (one
 * verbose line, the counter rails_retired). */
void umr_mpi_rail_retire(umr_mpi_rail_t *rail, const char *why);
/* Whether the rail's md still works (the transport retires an md whose
 * port went down: it then reaches nothing, not even itself). Fault paths
 * only: it asks the transport. */
int  umr_mpi_rail_alive(umr_mpi_rail_t *rail);
/* A rail retired because its md reached nothing takes new connections
 * again once the md does (its port is up again with the same address):
 * 1 when it was reopened now (one verbose line, the counter
 * rails_reopened). Peers retired meanwhile stay so. */
int  umr_mpi_rail_reopen(umr_mpi_rail_t *rail);

/* The rail is retired (and not reopened now). */
static inline int umr_mpi_rail_out(umr_mpi_rail_t *rail)
{
    return rail->retired && !(rail->down && umr_mpi_rail_reopen(rail));
}

/* The version peers must publish: the binding's (its MPI release and
 * wire), then the core's protocol (umr5: the core's control message and
 * internal message kinds). */
#define UMR_MPI_PROTO_VERSION "/umr5"

#ifdef __cplusplus
}
#endif

#endif
