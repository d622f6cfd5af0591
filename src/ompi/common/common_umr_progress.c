/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: progress and deferred frees (see common_umr_progress.h).
 */
#include "common_umr_progress.h"

#include <opal/runtime/opal_progress.h>

#include <stdlib.h>

typedef struct mca_common_umr_reap_entry {
    ompi_request_t *req;
    void           *buf;   /* freed with the request */
} mca_common_umr_reap_entry_t;

static struct {
    uct_worker_h                worker;
    opal_list_t                 events;       /* run first, all of them */
    opal_list_t                 work;         /* then what was queued */
    int                         outstanding;  /* gets/handshakes in flight */
    int                         on;           /* registered */
    mca_common_umr_reap_entry_t *reap;
    size_t                      reap_num, reap_max;
} mca_common_umr_prog;

void mca_common_umr_progress_init(uct_worker_h worker)
{
    mca_common_umr_prog.worker = worker;
    OBJ_CONSTRUCT(&mca_common_umr_prog.events, opal_list_t);
    OBJ_CONSTRUCT(&mca_common_umr_prog.work, opal_list_t);
}

void mca_common_umr_progress_fini(void)
{
    if (mca_common_umr_prog.on) {
        opal_progress_unregister(mca_common_umr_progress);
        mca_common_umr_prog.on = 0;
    }
    OBJ_DESTRUCT(&mca_common_umr_prog.events);
    OBJ_DESTRUCT(&mca_common_umr_prog.work);
    free(mca_common_umr_prog.reap);
    mca_common_umr_prog.reap     = NULL;
    mca_common_umr_prog.reap_num = mca_common_umr_prog.reap_max = 0;
}

void mca_common_umr_work_post(mca_common_umr_work_t *work)
{
    opal_list_append(&mca_common_umr_prog.work, &work->super);
}

void mca_common_umr_event_post(mca_common_umr_work_t *event)
{
    opal_list_append(&mca_common_umr_prog.events, &event->super);
}

void mca_common_umr_reap_add(ompi_request_t *req)
{
    mca_common_umr_reap_add_buf(req, NULL);
}

void mca_common_umr_reap_add_buf(ompi_request_t *req, void *buf)
{
    mca_common_umr_reap_entry_t *reqs;
    size_t max;

    if (mca_common_umr_prog.reap_num == mca_common_umr_prog.reap_max) {
        max  = mca_common_umr_prog.reap_max * 2 + 16;
        reqs = realloc(mca_common_umr_prog.reap, sizeof(*reqs) * max);
        if (reqs == NULL) {
            return; /* leaks one request rather than crash */
        }
        mca_common_umr_prog.reap     = reqs;
        mca_common_umr_prog.reap_max = max;
    }
    mca_common_umr_prog.reap[mca_common_umr_prog.reap_num].req   = req;
    mca_common_umr_prog.reap[mca_common_umr_prog.reap_num++].buf = buf;
    mca_common_umr_progress_ref(0);
}

void mca_common_umr_reap(void)
{
    size_t i, keep = 0;
    ompi_request_t *req;

    for (i = 0; i < mca_common_umr_prog.reap_num; ++i) {
        req = mca_common_umr_prog.reap[i].req;
        if (REQUEST_COMPLETE(req)) {
            ompi_request_free(&req);
            free(mca_common_umr_prog.reap[i].buf);
        } else {
            mca_common_umr_prog.reap[keep++] = mca_common_umr_prog.reap[i];
        }
    }
    mca_common_umr_prog.reap_num = keep;
}

static void mca_common_umr_run(opal_list_t *list, size_t num)
{
    mca_common_umr_work_t *work;
    opal_list_item_t *item;

    while ((num-- > 0) && (NULL != (item = opal_list_remove_first(list)))) {
        work = (mca_common_umr_work_t*)item;
        work->run(work);
    }
}

int mca_common_umr_progress(void)
{
    int count;

    count = uct_worker_progress(mca_common_umr_prog.worker);
    mca_common_umr_run(&mca_common_umr_prog.events, SIZE_MAX);
    mca_common_umr_run(&mca_common_umr_prog.work,
                       opal_list_get_size(&mca_common_umr_prog.work));
    mca_common_umr_reap();
    if ((mca_common_umr_prog.outstanding == 0) &&
        (mca_common_umr_prog.reap_num == 0) && mca_common_umr_prog.on) {
        opal_progress_unregister(mca_common_umr_progress);
        mca_common_umr_prog.on = 0;
    }
    return count;
}

/* Our progress runs only while gets or internal requests are in flight. */
void mca_common_umr_progress_ref(int delta)
{
    mca_common_umr_prog.outstanding += delta;
    if (!mca_common_umr_prog.on &&
        ((mca_common_umr_prog.outstanding > 0) ||
         (mca_common_umr_prog.reap_num > 0))) {
        opal_progress_register(mca_common_umr_progress);
        mca_common_umr_prog.on = 1;
    }
}

void mca_common_umr_progress_drain(void)
{
    while (mca_common_umr_prog.outstanding > 0) {
        opal_progress();
    }
}
