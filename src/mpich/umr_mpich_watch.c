/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "umr_mpich_watch.h"

#include <string.h>

static UCS_LIST_HEAD(umr_mpich_watched);
int umr_mpich_watch_count;

void umr_mpich_watch_add(umr_mpich_watch_t *w, umr_mpich_watch_cb_t cb,
                         MPI_Request req)
{
    w->cb  = cb;
    w->req = req;
    ucs_list_add_tail(&umr_mpich_watched, &w->list);
    ++umr_mpich_watch_count;
}

void umr_mpich_watch_poll(void)
{
    umr_mpich_watch_t *w, *tmp;
    MPI_Status st;
    int flag, rc;

    /* a completion function may add requests (at the tail: tested next
     * time round or now), never remove another */
    ucs_list_for_each_safe(w, tmp, &umr_mpich_watched, list) {
        /* a send's status has no count: it reads as 0 bytes */
        memset(&st, 0, sizeof(st));
        flag = 0;
        rc   = PMPI_Test(&w->req, &flag, &st);
        if (!flag && (rc == MPI_SUCCESS)) {
            continue;
        }
        st.MPI_ERROR = rc;
        w->req       = MPI_REQUEST_NULL;
        ucs_list_del(&w->list);
        --umr_mpich_watch_count;
        w->cb(w, &st);
    }
}
