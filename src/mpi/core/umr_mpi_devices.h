/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: which mlx5_umr devices (md names) become rails, from
 * a binding's parameter (Open MPI: pml_umr_devices). Plain C over UCT's
 * public API, so that the selection is unit tested without mpirun
 * (gtest_pml_devices, and on the rdma-core model in gtest_uct_mlx5_model).
 *
 * The parameter, like UCX_NET_DEVICES and btl_*_if_include/exclude:
 *   ""             automatic: "sw" (same-host peers) and the first mlx5
 *                  device that opens (other hosts), as UCX_MLX5_UMR_ENGINE
 *                  allows;
 *   "a,b,..."      only these: "sw" names the same-host rail, any other name
 *                  an mlx5 device, tried in the order given until one opens
 *                  (pml/umr uses one mlx5 rail); a device not named is
 *                  never used, so without "sw" same-host peers pass through;
 *   "^a,b,..."     automatic without these.
 * An mlx5 device may carry a port as UCX_NET_DEVICES writes it, "mlx5_0:1"
 * (it sets UCX_MLX5_UMR_PORT for that device; without one, that variable
 * decides, default the first active port). A name that is not a device here
 * (or is named twice, or a malformed port) is an error: the caller passes
 * everything through rather than use another device.
 */
#ifndef UMR_MPI_DEVICES_H_
#define UMR_MPI_DEVICES_H_

#include <stddef.h>

#include <uct/api/uct.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UMR_MPI_DEVICES_MAX     16
#define UMR_MPI_DEVICE_NAME_MAX 32   /* UCT_MD_NAME_MAX */

typedef char umr_mpi_device_name_t[UMR_MPI_DEVICE_NAME_MAX];

typedef struct umr_mpi_device {
    char     name[UMR_MPI_DEVICE_NAME_MAX];
    unsigned port;       /* 0: UCX_MLX5_UMR_PORT decides */
    int      named;      /* named in the parameter (not automatic) */
} umr_mpi_device_t;

/* The rails to try: "sw" first if at all, then mlx5 devices in order. */
typedef struct umr_mpi_devices {
    unsigned             num;
    umr_mpi_device_t dev[UMR_MPI_DEVICES_MAX];
} umr_mpi_devices_t;

/*
 * The devices of the mlx5_umr component here, as the parameter names them:
 * "sw" unless UCX_MLX5_UMR_ENGINE=mlx5, then the component's mlx5 mds
 * (none with UCX_MLX5_UMR_ENGINE=sw). `engine` (may be NULL) receives
 * UCX_MLX5_UMR_ENGINE's value.
 */
ucs_status_t umr_mpi_devices_query(uct_component_h component,
                                          umr_mpi_device_name_t *names,
                                          unsigned max, unsigned *num_p,
                                          char *engine, size_t engine_len);

/*
 * Parse `value` (the parameter `param`) against the `num` devices that
 * exist and fill `plan`. 0, or -1 with `msg` naming the parameter, the bad
 * name and the devices that exist.
 */
int umr_mpi_devices_select(const char *value, const char *param,
                                  const umr_mpi_device_name_t *names,
                                  unsigned num, umr_mpi_devices_t *plan,
                                  char *msg, size_t len);

/* Open the md of `dev` (its port, if any, as UCX_MLX5_UMR_PORT). */
ucs_status_t umr_mpi_devices_md_open(uct_component_h component,
                                            const umr_mpi_device_t *dev,
                                            uct_md_h *md_p);

/*
 * The device nearest the process first: reorder the
 * automatic mlx5 devices of `plan` (not "sw", not those the parameter
 * named, whose order is the user's) by `near[i]`, the CPUs of this process
 * local to plan->dev[i], most first; among the equally near ones,
 * `local_rank` (the rank on this node) picks which comes first, so that
 * the ranks of a node with several HCAs spread over them.
 */
void umr_mpi_devices_order(umr_mpi_devices_t *plan,
                               const unsigned *near, unsigned local_rank);

/*
 * umr_mpi_devices_order with near[i] measured: each automatic mlx5
 * device's md is opened once and its md_attr.local_cpus (the CPUs of the
 * device's PCI function, as UCX's ib md reports them; mlx5_umr reads them
 * from the device's sysfs directory) is compared with this process's CPU
 * affinity. Nothing changes with fewer than two such devices.
 */
void umr_mpi_devices_nearest(uct_component_h component,
                                 umr_mpi_devices_t *plan,
                                 unsigned local_rank);

#ifdef __cplusplus
}
#endif

#endif
