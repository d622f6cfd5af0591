/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr engine: code common to every backend (lookup by name, status and
 * opcode strings, completion status mapping).
 */
#include "umr_config.h"

#include "engine.h"

#include <ucs/sys/compiler_def.h>

#include <stdlib.h>
#include <string.h>

static const umr_eng_ops_t *const umr_eng_backends[] = {
#if HAVE_UMR_MLX5_ENGINE
    &umr_eng_mlx5_ops,
#endif
    &umr_eng_sw_ops
};

const umr_eng_ops_t *umr_eng_find(const char *name)
{
    size_t i;

    if (name == NULL) {
        return NULL;
    }

    for (i = 0; i < sizeof(umr_eng_backends) / sizeof(umr_eng_backends[0]);
         ++i) {
        if (!strcmp(umr_eng_backends[i]->name, name)) {
            return umr_eng_backends[i];
        }
    }

    return NULL;
}

void umr_eng_dev_params_init(umr_eng_dev_params_t *params)
{
    memset(params, 0, sizeof(*params));
    params->port            = 0;
    params->gid_index       = -1;
    params->sw_max_keys     = 65536;
    params->sw_span_density = 0.5;
    /* UCX rc_iface.c: TIMEOUT 1.0s, RETRY_COUNT 7, RNR_RETRY_COUNT 7;
     * ib_iface.c: TRAFFIC_CLASS auto, SL auto, HOP_LIMIT 255, PKEY auto */
    params->timeout         = 1.0;
    params->retry_count     = 7;
    params->rnr_retry       = 7;
    params->traffic_class   = -1;
    params->sl              = -1;
    params->hop_limit       = 255;
    params->flow_label      = 0;
    params->pkey            = -1;
}

int umr_eng_cpumask_parse(const char *str, uint64_t *mask)
{
    const char *end = str + strlen(str), *p;
    unsigned long word;
    unsigned base = 0, k;
    char *stop;

    memset(mask, 0, sizeof(uint64_t) * UMR_ENG_CPU_WORDS);
    while ((end > str) && ((end[-1] == '\n') || (end[-1] == ' '))) {
        --end;
    }
    if (end == str) {
        return -1;
    }
    /* from the last (lowest) word to the first */
    while (end > str) {
        for (p = end; (p > str) && (p[-1] != ','); --p) {
        }
        if ((end - p == 0) || (end - p > 8)) {
            return -1;
        }
        word = strtoul(p, &stop, 16);
        if (stop != end) {
            return -1;
        }
        for (k = 0; (k < 32) && (base + k < 64 * UMR_ENG_CPU_WORDS); ++k) {
            if (word & (1ul << k)) {
                mask[(base + k) / 64] |= 1ull << ((base + k) % 64);
            }
        }
        base += 32;
        end   = (p > str) ? p - 1 : p;
    }
    return 0;
}

/* What each completion status says, and what UCX's ib transports make of
 * the matching ibv_wc_status. */
static const struct {
    const char   *str;
    ucs_status_t ucs;
} umr_eng_wc_statuses[] = {
    [UMR_ENG_WC_SUCCESS]        = {"success", UCS_OK},
    [UMR_ENG_WC_LOC_LEN_ERR]    = {"local length error",
                                   UCS_ERR_MESSAGE_TRUNCATED},
    [UMR_ENG_WC_LOC_PROT_ERR]   = {"local protection error",
                                   UCS_ERR_INVALID_ADDR},
    [UMR_ENG_WC_REM_ACCESS_ERR] = {"remote access error",
                                   UCS_ERR_INVALID_ADDR},
    [UMR_ENG_WC_REM_OP_ERR]     = {"remote operation error", UCS_ERR_IO_ERROR},
    [UMR_ENG_WC_RETRY_EXC_ERR]  = {"transport retry counter exceeded",
                                   UCS_ERR_ENDPOINT_TIMEOUT},
    [UMR_ENG_WC_WR_FLUSH_ERR]   = {"work request flushed", UCS_ERR_CANCELED},
    [UMR_ENG_WC_MW_BIND_ERR]    = {"memory key configuration error",
                                   UCS_ERR_INVALID_PARAM},
    [UMR_ENG_WC_GENERAL_ERR]    = {"general error", UCS_ERR_IO_ERROR}
};
_Static_assert(ucs_static_array_size(umr_eng_wc_statuses) ==
               UMR_ENG_WC_GENERAL_ERR + 1, "a row for every completion status");

static const char *const umr_eng_opcodes[] = {
    [UMR_ENG_OP_RDMA_WRITE] = "RDMA_WRITE",
    [UMR_ENG_OP_RDMA_READ]  = "RDMA_READ",
    [UMR_ENG_OP_UMR]        = "UMR",
    [UMR_ENG_OP_LOCAL_INV]  = "LOCAL_INV"
};
_Static_assert(ucs_static_array_size(umr_eng_opcodes) ==
               UMR_ENG_OP_LOCAL_INV + 1, "a name for every opcode");

const char *umr_eng_wc_status_str(umr_eng_wc_status_t status)
{
    return ((unsigned)status < ucs_static_array_size(umr_eng_wc_statuses)) ?
           umr_eng_wc_statuses[status].str : "unknown completion status";
}

ucs_status_t umr_eng_wc_status_to_ucs(umr_eng_wc_status_t status)
{
    return ((unsigned)status < ucs_static_array_size(umr_eng_wc_statuses)) ?
           umr_eng_wc_statuses[status].ucs : UCS_ERR_IO_ERROR;
}

const char *umr_eng_opcode_str(umr_eng_opcode_t opcode)
{
    return ((unsigned)opcode < ucs_static_array_size(umr_eng_opcodes)) ?
           umr_eng_opcodes[opcode] : "UNKNOWN";
}
