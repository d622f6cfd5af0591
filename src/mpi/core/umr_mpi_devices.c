/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: which devices become rails, from the binding's
 * parameter (see umr_mpi_devices.h).
 */
#include "umr_mpi_devices.h"
#include "uct_umr.h"
#include "umr_ucs_compat.h"

#include <ctype.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UMR_MPI_PORT_MAX      255   /* ports are 8-bit in verbs */

ucs_status_t umr_mpi_devices_query(uct_component_h component,
                                   umr_mpi_device_name_t *names,
                                   unsigned max, unsigned *num_p,
                                   char *engine, size_t engine_len)
{
    uct_component_attr_t attr = {
        .field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT
    };
    uct_md_resource_desc_t *mds = NULL;
    uct_md_config_t *md_config;
    char eng[32]                = "auto";
    ucs_status_t status;
    unsigned i, num             = 0;

    status = uct_md_config_read(component, NULL, NULL, &md_config);
    if (status != UCS_OK) {
        return status;
    }
    uct_config_get(md_config, "ENGINE", eng, sizeof(eng));
    uct_config_release(md_config);
    if (engine != NULL) {
        snprintf(engine, engine_len, "%s", eng);
    }

    /* the sw engine's one device is opened by name: the component lists it
     * only when no mlx5 device is there */
    if (strcmp(eng, "mlx5") && (num < max)) {
        snprintf(names[num++], UMR_MPI_DEVICE_NAME_MAX, "sw");
    }
    if (!strcmp(eng, "sw")) {
        goto out;
    }

    status = uct_component_query(component, &attr);
    if ((status != UCS_OK) || (attr.md_resource_count == 0)) {
        goto out;
    }
    mds = calloc(attr.md_resource_count, sizeof(*mds));
    if (mds == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto out;
    }
    attr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    attr.md_resources = mds;
    status            = uct_component_query(component, &attr);
    for (i = 0; (status == UCS_OK) && (i < attr.md_resource_count) &&
         (num < max); ++i) {
        if (strcmp(mds[i].md_name, "sw")) {
            snprintf(names[num++], UMR_MPI_DEVICE_NAME_MAX, "%s",
                     mds[i].md_name);
        }
    }
    free(mds);
out:
    *num_p = num;
    return status;
}

static int umr_mpi_devices_find(
        const umr_mpi_device_name_t *names, unsigned num,
        const char *name)
{
    unsigned i;

    for (i = 0; i < num; ++i) {
        if (!strcmp(names[i], name)) {
            return (int)i;
        }
    }
    return -1;
}

/* "devices here: a, b" or "no device here" */
static void umr_mpi_devices_list(
        const umr_mpi_device_name_t *names, unsigned num,
        char *buf, size_t len)
{
    size_t off;
    unsigned i;

    off = snprintf(buf, len, "%s", (num == 0) ? "no device here" :
                                                "devices here: ");
    for (i = 0; (i < num) && (off < len); ++i) {
        off += snprintf(buf + off, len - off, "%s%s", (i > 0) ? ", " : "",
                        names[i]);
    }
}

/* "name" or "name:port" of an mlx5 device: 0, or -1 with `why` */
static int umr_mpi_devices_token(char *tok, umr_mpi_device_t *dev,
                                 const char **why)
{
    char *colon = strchr(tok, ':'), *end;
    unsigned long port;

    dev->port = 0;
    if (colon != NULL) {
        *colon = '\0';
        port   = strtoul(colon + 1, &end, 10);
        if (!isdigit((unsigned char)colon[1]) || (*end != '\0') ||
            (port == 0) || (port > UMR_MPI_PORT_MAX)) {
            *why = "a port is a number from 1 to 255, as in mlx5_0:1";
            return -1;
        }
        if (!strcmp(tok, "sw")) {
            *why = "the sw device has no ports";
            return -1;
        }
        dev->port = port;
    }
    if ((*tok == '\0') || (strlen(tok) >= sizeof(dev->name))) {
        *why = "not a device name";
        return -1;
    }
    strcpy(dev->name, tok);
    return 0;
}

static int umr_mpi_devices_excluded(const umr_mpi_device_t *given,
                                    unsigned ngiven, const char *name)
{
    unsigned i;

    for (i = 0; i < ngiven; ++i) {
        if (!strcmp(given[i].name, name)) {
            return 1;
        }
    }
    return 0;
}

static char *umr_mpi_devices_trim(char *s)
{
    char *e;

    while (isspace((unsigned char)*s)) {
        ++s;
    }
    e = s + strlen(s);
    while ((e > s) && isspace((unsigned char)e[-1])) {
        *--e = '\0';
    }
    return s;
}

static void umr_mpi_devices_add(umr_mpi_devices_t *plan,
                                const char *name, unsigned port,
                                int named)
{
    umr_mpi_device_t *dev;

    if (plan->num == UMR_MPI_DEVICES_MAX) {
        return;
    }
    dev = &plan->dev[plan->num++];
    snprintf(dev->name, sizeof(dev->name), "%.*s",
             (int)sizeof(dev->name) - 1, name);
    dev->port  = port;
    dev->named = named;
}

int umr_mpi_devices_select(const char *value, const char *param,
                           const umr_mpi_device_name_t *names,
                           unsigned num, umr_mpi_devices_t *plan,
                           char *msg, size_t len)
{
    umr_mpi_device_t given[UMR_MPI_DEVICES_MAX];
    char *copy, *tok, *save = NULL, here[512], orig[64];
    const char *spec, *why  = NULL;
    unsigned ngiven         = 0, i, j;
    int exclude, sw_given   = 0, ret = -1;

    plan->num = 0;
    msg[0]    = '\0';
    umr_mpi_devices_list(names, num, here, sizeof(here));
    spec = (value != NULL) ? value : "";
    while (isspace((unsigned char)*spec)) {
        ++spec;
    }
    /* automatic ("") is an exclusion of nothing */
    exclude = (spec[0] == '^') || (spec[0] == '\0');
    value   = spec;

    copy = strdup(spec + (spec[0] == '^'));
    if (copy == NULL) {
        snprintf(msg, len, "%s: out of memory", param);
        return -1;
    }
    for (tok = strtok_r(copy, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        tok = umr_mpi_devices_trim(tok);
        if (*tok == '\0') {
            continue;
        }
        if (ngiven == UMR_MPI_DEVICES_MAX) {
            snprintf(msg, len, "%s=\"%s\": more than %d names",
                     param, value,
                     UMR_MPI_DEVICES_MAX);
            goto out;
        }
        snprintf(orig, sizeof(orig), "%s", tok);
        if (umr_mpi_devices_token(tok, &given[ngiven], &why) < 0) {
            snprintf(msg, len, "%s=\"%s\": \"%s\": %s (%s)",
                     param, value, orig, why, here);
            goto out;
        }
        if (umr_mpi_devices_find(names, num, given[ngiven].name) < 0) {
            snprintf(msg, len, "%s=\"%s\": no device \"%s\" (%s)",
                     param, value, given[ngiven].name,
                     here);
            goto out;
        }
        if (exclude && (given[ngiven].port != 0)) {
            snprintf(msg, len, "%s=\"%s\": \"%s:%u\": a port cannot be "
                     "excluded, only a device", param,
                     value, given[ngiven].name, given[ngiven].port);
            goto out;
        }
        for (i = 0; i < ngiven; ++i) {
            if (!strcmp(given[i].name, given[ngiven].name)) {
                snprintf(msg, len, "%s=\"%s\": \"%s\" is named twice",
                         param, value, given[i].name);
                goto out;
            }
        }
        sw_given |= !strcmp(given[ngiven].name, "sw");
        ++ngiven;
    }
    if ((ngiven == 0) && (spec[0] != '\0')) {
        snprintf(msg, len, "%s=\"%s\": names no device (%s)",
                 param, value, here);
        goto out;
    }

    if (!exclude) {
        /* only the named ones: sw first, the mlx5 devices in the given order */
        if (sw_given) {
            umr_mpi_devices_add(plan, "sw", 0, 1);
        }
        for (i = 0; i < ngiven; ++i) {
            if (strcmp(given[i].name, "sw")) {
                umr_mpi_devices_add(plan, given[i].name,
                                    given[i].port, 1);
            }
        }
    } else {
        /* every device here but the excluded ones, sw first */
        for (j = 0; j < 2; ++j) {
            for (i = 0; i < num; ++i) {
                if ((!strcmp(names[i], "sw") == (j == 0)) &&
                    !umr_mpi_devices_excluded(given, ngiven, names[i])) {
                    umr_mpi_devices_add(plan, names[i], 0, 0);
                }
            }
        }
    }
    ret = 0;
out:
    free(copy);
    return ret;
}

ucs_status_t umr_mpi_devices_md_open(uct_component_h component,
                                     const umr_mpi_device_t *dev,
                                     uct_md_h *md_p)
{
    uct_md_config_t *md_config;
    ucs_status_t status;
    char port[16];

    status = uct_md_config_read(component, NULL, NULL, &md_config);
    if (status != UCS_OK) {
        return status;
    }
    if (dev->port != 0) {
        snprintf(port, sizeof(port), "%u", dev->port);
        status = umr_ucs_config_modify(md_config, UCT_UMR_CONFIG_PREFIX,
                                       "PORT", port);
    }
    if (status == UCS_OK) {
        status = uct_md_open(component, dev->name, md_config, md_p);
    }
    uct_config_release(md_config);
    return status;
}

/* an automatic mlx5 device: what the nearest-first order may move */
static int umr_mpi_devices_movable(const umr_mpi_device_t *dev)
{
    return !dev->named && strcmp(dev->name, "sw");
}

void umr_mpi_devices_order(umr_mpi_devices_t *plan,
                           const unsigned *near, unsigned local_rank)
{
    umr_mpi_device_t devs[UMR_MPI_DEVICES_MAX], tmp;
    unsigned pos[UMR_MPI_DEVICES_MAX], nears[UMR_MPI_DEVICES_MAX];
    unsigned n = 0, nbest = 0, i, j, shift, t;

    for (i = 0; i < plan->num; ++i) {
        if (umr_mpi_devices_movable(&plan->dev[i])) {
            pos[n]     = i;
            devs[n]    = plan->dev[i];
            nears[n++] = near[i];
        }
    }
    if (n < 2) {
        return;
    }

    /* nearest first (stable: insertion sort) */
    for (i = 1; i < n; ++i) {
        for (j = i; (j > 0) && (nears[j] > nears[j - 1]); --j) {
            tmp = devs[j]; devs[j] = devs[j - 1]; devs[j - 1] = tmp;
            t = nears[j]; nears[j] = nears[j - 1]; nears[j - 1] = t;
        }
    }
    /* the local rank picks among the nearest */
    while ((nbest < n) && (nears[nbest] == nears[0])) {
        ++nbest;
    }
    for (shift = local_rank % nbest; shift > 0; --shift) {
        tmp = devs[0];
        memmove(&devs[0], &devs[1], (nbest - 1) * sizeof(devs[0]));
        devs[nbest - 1] = tmp;
    }
    for (i = 0; i < n; ++i) {
        plan->dev[pos[i]] = devs[i];
    }
}

void umr_mpi_devices_nearest(uct_component_h component,
                             umr_mpi_devices_t *plan,
                             unsigned local_rank)
{
    unsigned near[UMR_MPI_DEVICES_MAX] = {0};
    unsigned i, n = 0;
    uct_md_attr_t attr;
    cpu_set_t mine;
    uct_md_h md;
    int cpu;

    for (i = 0; i < plan->num; ++i) {
        n += umr_mpi_devices_movable(&plan->dev[i]);
    }
    if ((n < 2) || (sched_getaffinity(0, sizeof(mine), &mine) != 0)) {
        return;
    }
    for (i = 0; i < plan->num; ++i) {
        if (!umr_mpi_devices_movable(&plan->dev[i]) ||
            (umr_mpi_devices_md_open(component, &plan->dev[i], &md) !=
             UCS_OK)) {
            continue;        /* a device that does not open goes last */
        }
        if (uct_md_query(md, &attr) == UCS_OK) {
            for (cpu = 0; (cpu < CPU_SETSIZE) && (cpu < UCS_CPU_SETSIZE);
                 ++cpu) {
                near[i] += CPU_ISSET(cpu, &mine) &&
                           ucs_cpu_is_set(cpu, &attr.local_cpus);
            }
        }
        uct_md_close(md);
    }
    umr_mpi_devices_order(plan, near, local_rank);
}
