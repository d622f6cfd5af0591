/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "umr_mpich_comm.h"

#include <stdlib.h>

static int umr_mpich_comm_keyval = MPI_KEYVAL_INVALID;
uint64_t umr_mpich_comm_world_ctx;

static int umr_mpich_comm_delete(MPI_Comm comm, int keyval, void *val,
                                 void *extra)
{
    umr_mpich_comm_t *c = val;

    if (c->coll_comm != MPI_COMM_NULL) {
        PMPI_Comm_free(&c->coll_comm);
    }
    free(c);
    return MPI_SUCCESS;
}

void umr_mpich_comm_init(void)
{
    const umr_mpich_comm_t *w;

    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, umr_mpich_comm_delete,
                            &umr_mpich_comm_keyval, NULL);
    w = umr_mpich_comm_get(MPI_COMM_WORLD);
    umr_mpich_comm_world_ctx = (w != NULL) ? w->ctx : 0;
}

void umr_mpich_comm_fini(void)
{
    if (umr_mpich_comm_keyval != MPI_KEYVAL_INVALID) {
        PMPI_Comm_free_keyval(&umr_mpich_comm_keyval);
    }
}

/* FNV-1a over world ranks */
static uint64_t umr_mpich_comm_hash(const int *world, int size)
{
    uint64_t h = 0xcbf29ce484222325ull;
    int i;

    for (i = 0; i < size; ++i) {
        h = (h ^ (uint64_t)(unsigned)world[i]) * 0x100000001b3ull;
    }
    return h;
}

/* the world ranks of `group`, into `world` */
static int umr_mpich_comm_translate(MPI_Group group, int size, int *world)
{
    MPI_Group wgroup;
    int *ranks = malloc(sizeof(int) * (size + 1)), i, rc;

    if (ranks == NULL) {
        return MPI_ERR_NO_MEM;
    }
    for (i = 0; i < size; ++i) {
        ranks[i] = i;
    }
    PMPI_Comm_group(MPI_COMM_WORLD, &wgroup);
    rc = PMPI_Group_translate_ranks(group, size, ranks, wgroup, world);
    PMPI_Group_free(&wgroup);
    free(ranks);
    return rc;
}

static umr_mpich_comm_t *umr_mpich_comm_make(MPI_Comm comm)
{
    MPI_Group local, remote;
    int inter, lsize, size, *lworld = NULL;
    umr_mpich_comm_t *c;

    PMPI_Comm_test_inter(comm, &inter);
    PMPI_Comm_group(comm, &local);
    PMPI_Group_size(local, &lsize);
    remote = local;
    if (inter) {
        PMPI_Comm_remote_group(comm, &remote);
    }
    PMPI_Group_size(remote, &size);
    c = malloc(sizeof(*c) + sizeof(int) * size);
    if ((c == NULL) ||
        (umr_mpich_comm_translate(remote, size, c->world) != MPI_SUCCESS)) {
        goto err;
    }
    c->size      = size;
    c->ctx       = umr_mpich_comm_hash(c->world, size);
    c->coll      = inter ? -1 : 0;
    c->coll_comm = MPI_COMM_NULL;
    if (inter) {
        /* both sides alike: one group's hash xor the other's */
        lworld = malloc(sizeof(int) * lsize);
        if ((lworld == NULL) ||
            (umr_mpich_comm_translate(local, lsize, lworld) != MPI_SUCCESS)) {
            goto err;
        }
        c->ctx ^= umr_mpich_comm_hash(lworld, lsize) ^ 1;
        free(lworld);
        PMPI_Group_free(&remote);
    }
    PMPI_Group_free(&local);
    return c;

err:
    free(lworld);
    free(c);
    if (inter) {
        PMPI_Group_free(&remote);
    }
    PMPI_Group_free(&local);
    return NULL;
}

umr_mpich_comm_t *umr_mpich_comm_get(MPI_Comm comm)
{
    umr_mpich_comm_t *c;
    int flag = 0;

    if ((PMPI_Comm_get_attr(comm, umr_mpich_comm_keyval, &c, &flag) ==
         MPI_SUCCESS) && flag) {
        return c;
    }
    c = umr_mpich_comm_make(comm);
    if ((c != NULL) &&
        (PMPI_Comm_set_attr(comm, umr_mpich_comm_keyval, c) != MPI_SUCCESS)) {
        free(c);
        c = NULL;
    }
    return c;
}
