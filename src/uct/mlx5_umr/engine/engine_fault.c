/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Test-only fault injection in the engines (engine_fault.h).
 */
#include "engine_fault.h"

#if UMR_TEST_HOOKS

#include <ucs/debug/log.h>

#include <stdlib.h>
#include <string.h>

int umr_eng_fault_point = -1;

static unsigned long umr_eng_fault_after;
static unsigned long umr_eng_fault_calls;
static int umr_eng_fault_read;

static const char *const umr_eng_fault_names[UMR_ENG_FAULT_NUM] = {
    "connect", "post", "completion", "key", "mdwait"
};

/* the engines' own tables, by id: the wrappers call through them */
static const umr_eng_ops_t *umr_eng_fault_orig[UMR_ENG_ID_LAST];
static umr_eng_ops_t umr_eng_fault_ops[UMR_ENG_ID_LAST];

const umr_eng_ops_t *umr_eng_fault_unwrap(const umr_eng_ops_t *ops)
{
    if ((ops != NULL) && ((unsigned)ops->id < UMR_ENG_ID_LAST) &&
        (ops == &umr_eng_fault_ops[ops->id])) {
        return umr_eng_fault_orig[ops->id];
    }
    return ops;
}

int umr_eng_fault_parse(const char *spec, int *point, unsigned long *after)
{
    const char *colon = strchr(spec, ':');
    size_t len        = (colon != NULL) ? (size_t)(colon - spec) :
                                          strlen(spec);
    char *end;
    int i;

    *after = 0;
    for (i = 0; i < UMR_ENG_FAULT_NUM; ++i) {
        if ((strlen(umr_eng_fault_names[i]) == len) &&
            !strncmp(spec, umr_eng_fault_names[i], len)) {
            break;
        }
    }
    if (i == UMR_ENG_FAULT_NUM) {
        return -1;
    }
    if (colon != NULL) {
        if ((colon[1] < '0') || (colon[1] > '9')) {
            return -1;
        }
        *after = strtoul(colon + 1, &end, 10);
        if (*end != '\0') {
            return -1;
        }
    }
    *point = i;
    return 0;
}

int umr_eng_fault_hit(umr_eng_fault_point_t point)
{
    if ((int)point != umr_eng_fault_point) {
        return 0;
    }
    if (umr_eng_fault_calls < umr_eng_fault_after) {
        ++umr_eng_fault_calls;
        return 0;
    }
    ucs_debug("mlx5_umr: %s=%s: injected fault", UMR_ENG_FAULT_ENV,
              umr_eng_fault_names[point]);
    return 1;
}

#define UMR_ENG_FAULT_WRAPPERS(_id, _sfx) \
    static ucs_status_t \
    umr_eng_fault_qp_connect_##_sfx(umr_eng_qp_t *qp, const void *dev_addr, \
                                    const void *qp_addr) \
    { \
        if (UMR_ENG_FAULT(UMR_ENG_FAULT_CONNECT)) { \
            return UCS_ERR_UNREACHABLE; \
        } \
        return umr_eng_fault_orig[_id]->qp_connect(qp, dev_addr, qp_addr); \
    } \
    static ucs_status_t \
    umr_eng_fault_post_rdma_##_sfx(umr_eng_qp_t *qp, umr_eng_opcode_t opcode, \
                                   const umr_eng_sge_t *sge, unsigned num_sge, \
                                   uint64_t remote_addr, uint32_t rkey, \
                                   uint64_t wr_id, unsigned flags) \
    { \
        if (UMR_ENG_FAULT(UMR_ENG_FAULT_POST)) { \
            return UCS_ERR_IO_ERROR; \
        } \
        return umr_eng_fault_orig[_id]->post_rdma(qp, opcode, sge, num_sge, \
                                                  remote_addr, rkey, wr_id, \
                                                  flags); \
    } \
    static int umr_eng_fault_cq_poll_##_sfx(umr_eng_cq_t *cq, \
                                            umr_eng_wc_t *wcs, int max) \
    { \
        int n = umr_eng_fault_orig[_id]->cq_poll(cq, wcs, max), i; \
        \
        for (i = 0; i < n; ++i) { \
            if ((wcs[i].status == UMR_ENG_WC_SUCCESS) && \
                ((wcs[i].opcode == UMR_ENG_OP_RDMA_READ) || \
                 (wcs[i].opcode == UMR_ENG_OP_RDMA_WRITE)) && \
                UMR_ENG_FAULT(UMR_ENG_FAULT_COMPLETION)) { \
                wcs[i].status = UMR_ENG_WC_REM_ACCESS_ERR; \
            } \
        } \
        return n; \
    } \
    static ucs_status_t \
    umr_eng_fault_mkey_create_##_sfx(umr_eng_dev_t *dev, uint32_t max_entries, \
                                     umr_eng_mkey_t **mkey_p) \
    { \
        if (UMR_ENG_FAULT(UMR_ENG_FAULT_KEY)) { \
            return UCS_ERR_NO_RESOURCE; \
        } \
        return umr_eng_fault_orig[_id]->mkey_create(dev, max_entries, mkey_p); \
    } \
    static void umr_eng_fault_install_##_sfx(void) \
    { \
        umr_eng_ops_t *w = &umr_eng_fault_ops[_id]; \
        \
        *w             = *umr_eng_fault_orig[_id]; \
        w->qp_connect  = umr_eng_fault_qp_connect_##_sfx; \
        w->post_rdma   = umr_eng_fault_post_rdma_##_sfx; \
        w->cq_poll     = umr_eng_fault_cq_poll_##_sfx; \
        w->mkey_create = umr_eng_fault_mkey_create_##_sfx; \
    }

UMR_ENG_FAULT_WRAPPERS(UMR_ENG_ID_SW, sw)
UMR_ENG_FAULT_WRAPPERS(UMR_ENG_ID_MLX5, mlx5)

const umr_eng_ops_t *umr_eng_fault_wrap(const umr_eng_ops_t *ops)
{
    const char *spec;
    unsigned long after;
    int point;

    if (!umr_eng_fault_read) {
        umr_eng_fault_read = 1;
        spec               = getenv(UMR_ENG_FAULT_ENV);
        if ((spec != NULL) && (spec[0] != '\0')) {
            if (umr_eng_fault_parse(spec, &point, &after) != 0) {
                ucs_error("%s=%s: not point[:after_n] with a point of "
                          "connect, post, completion, key, mdwait: no fault "
                          "injected", UMR_ENG_FAULT_ENV, spec);
            } else {
                umr_eng_fault_point = point;
                umr_eng_fault_after = after;
                ucs_diag("mlx5_umr: %s=%s: test faults injected",
                         UMR_ENG_FAULT_ENV, spec);
            }
        }
    }
    if ((ops == NULL) || (umr_eng_fault_point < 0) ||
        ((unsigned)ops->id >= UMR_ENG_ID_LAST)) {
        return ops;
    }
    if (umr_eng_fault_orig[ops->id] == NULL) {
        umr_eng_fault_orig[ops->id] = ops;
        if (ops->id == UMR_ENG_ID_SW) {
            umr_eng_fault_install_sw();
        } else {
            umr_eng_fault_install_mlx5();
        }
    }
    return &umr_eng_fault_ops[ops->id];
}

#endif
