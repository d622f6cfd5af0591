/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: progress. The components' zero-copy work that waits
 * (a receive whose get waits for its peer, a handshake message that
 * arrived) is a work item with its own function; progress runs them outside
 * the wrapped PML's callbacks and frees internal requests once complete. It
 * calls no component code but through the work items, and runs (it is
 * registered with opal_progress) only while something is in flight.
 */
#ifndef MCA_COMMON_UMR_PROGRESS_H_
#define MCA_COMMON_UMR_PROGRESS_H_

#include <ompi_config.h>
#include <ompi/constants.h>
#include <ompi/request/request.h>
#include <opal/class/opal_list.h>

#include <uct/api/uct.h>

BEGIN_C_DECLS

typedef struct mca_common_umr_work mca_common_umr_work_t;
typedef void (*mca_common_umr_work_fn_t)(mca_common_umr_work_t *work);

struct mca_common_umr_work {
    opal_list_item_t         super;
    mca_common_umr_work_fn_t run;
};

OMPI_DECLSPEC void mca_common_umr_progress_init(uct_worker_h worker);
/* Unregister from opal_progress; what is still queued is dropped. */
OMPI_DECLSPEC void mca_common_umr_progress_fini(void);

/* The progress function (registered while work is in flight). */
OMPI_DECLSPEC int mca_common_umr_progress(void);

/* Work in flight (gets, handshakes): progress runs while it is not 0. */
OMPI_DECLSPEC void mca_common_umr_progress_ref(int delta);

/* Run `work` at the next progress, after the events (below). */
OMPI_DECLSPEC void mca_common_umr_work_post(mca_common_umr_work_t *work);
/* Run `event` at the next progress, before the work items. */
OMPI_DECLSPEC void mca_common_umr_event_post(mca_common_umr_work_t *event);

/* Internal requests are freed outside their completion callbacks, in
 * progress, once complete (with `buf`, if not NULL). */
OMPI_DECLSPEC void mca_common_umr_reap_add(ompi_request_t *req);

/* The argument of a completion callback set on a wrapped PML's request
 * (ompi_request_set_callback), taken: the field is cleared, because
 * ompi_request_complete() clears only the callback, and pml ucx reads the
 * field of its recycled UCP requests as its persistent request's (a stale
 * pointer there crashed mca_pml_ucx_precv_completion). */
static inline void *mca_common_umr_cb_data_take(ompi_request_t *req)
{
    void *data = req->req_complete_cb_data;

    req->req_complete_cb_data = NULL;
    return data;
}
OMPI_DECLSPEC void mca_common_umr_reap_add_buf(ompi_request_t *req, void *buf);
/* Free the completed ones now. */
OMPI_DECLSPEC void mca_common_umr_reap(void);

/* Progress until no work is in flight. */
OMPI_DECLSPEC void mca_common_umr_progress_drain(void);

END_C_DECLS

#endif
