/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: Open MPI's datatypes for the core (see
 * common_umr_dtype.h).
 */
#include "common_umr_dtype.h"
#include "common_umr.h"
#include "common_umr_help.h"

#include "umr_mpi_peer.h"

#include <opal/datatype/opal_datatype_internal.h>

static int mca_common_umr_dtype_state; /* 0 not yet, 1 on, -1 failed / over */
static int mca_common_umr_self_keyval = MPI_KEYVAL_INVALID;
static int mca_common_umr_hold_keyval = MPI_KEYVAL_INVALID;

/* The decoder frees the entry of `type` (with the type). */
static void mca_common_umr_dtype_freed(MPI_Datatype type)
{
    umr_mpi_types_forget(mca_common_umr_type_key(type), 0);
}

/* A held type is freed. */
static int mca_common_umr_dtype_hold_delete(MPI_Datatype type, int keyval,
                                            void *val, void *extra)
{
    umr_mpi_types_forget(mca_common_umr_type_key(type), 1);
    return MPI_SUCCESS;
}

static int mca_common_umr_dtype_fini(MPI_Comm comm, int keyval, void *val,
                                     void *extra)
{
    umr_mpi_peers_quiesce();
    if (mca_common_umr_dtype_state == 1) {
        umr_mpi_dtype_cache_fini();
        umr_mpi_dtype_cache_on_free(NULL);
    }
    umr_mpi_types_close();
    mca_common_umr_dtype_state = -1;
    if (mca_common_umr_hold_keyval != MPI_KEYVAL_INVALID) {
        /* types still held keep their attribute until they are freed */
        PMPI_Type_free_keyval(&mca_common_umr_hold_keyval);
    }
    PMPI_Comm_free_keyval(&mca_common_umr_self_keyval);
    return MPI_SUCCESS;
}

int mca_common_umr_types_open(void)
{
    if (OPAL_LIKELY(mca_common_umr_dtype_state != 0)) {
        return mca_common_umr_dtype_state > 0;
    }
    mca_common_umr_dtype_state = -1;
    if ((umr_mpi_dtype_cache_init() != MPI_SUCCESS) ||
        (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN,
                                 mca_common_umr_dtype_fini,
                                 &mca_common_umr_self_keyval, NULL) !=
         MPI_SUCCESS) ||
        (PMPI_Comm_set_attr(MPI_COMM_SELF, mca_common_umr_self_keyval, NULL) !=
         MPI_SUCCESS) ||
        (PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN,
                                 mca_common_umr_dtype_hold_delete,
                                 &mca_common_umr_hold_keyval, NULL) !=
         MPI_SUCCESS)) {
        mca_common_umr_show_help("help-mpi-common-umr.txt", "dtype-cache",
                                 mca_common_umr.who);
        return 0;
    }
    umr_mpi_dtype_cache_on_free(mca_common_umr_dtype_freed);
    mca_common_umr_dtype_state = 1;
    return 1;
}

/* A type Open MPI built itself (the collectives' indexed types of a
 * receive buffer) has no construction arguments: MPI_Type_get_envelope
 * would raise MPI_ERR_INTERN through MPI_COMM_WORLD's error handler and
 * abort the job. Such a type passes through (its receive goes through a
 * bounce buffer): it is taken undecoded, without a layout, so that the
 * choice's verdict is kept as for any type that cannot go zero-copy (its
 * entry goes with the type, as any: Open MPI's destructor deletes a
 * type's attributes). Predefined types have no arguments either and are
 * never decoded. */
static const umr_mpi_dtype_t *mca_common_umr_type_info(uintptr_t key)
{
    ompi_datatype_t *dt = (ompi_datatype_t*)key;

    if (!mca_common_umr_types_open()) {
        return NULL;
    }
    return (OPAL_UNLIKELY(dt->args == NULL) &&
            !ompi_datatype_is_predefined(dt)) ? umr_mpi_dtype_get_opaque(dt) :
                                                umr_mpi_dtype_get(dt);
}

/* A predefined type (a pair type with a gap) is never freed: no
 * attribute. A type held before and pushed out of its slot by another one
 * since keeps its attribute: set again, the attribute's delete would run
 * as if the type were freed. */
static int mca_common_umr_type_hold(uintptr_t key)
{
    ompi_datatype_t *dt = (ompi_datatype_t*)key;
    void *val;
    int flag = 0;

    if (!mca_common_umr_types_open()) {
        return -1;
    }
    if (!ompi_datatype_is_predefined(dt) &&
        ((PMPI_Type_get_attr(dt, mca_common_umr_hold_keyval, &val, &flag) !=
          MPI_SUCCESS) || !flag) &&
        (PMPI_Type_set_attr(dt, mca_common_umr_hold_keyval, NULL) !=
         MPI_SUCCESS)) {
        return -1;
    }
    return 0;
}

static const umr_mpi_types_ops_t mca_common_umr_types_ops = {
    .info = mca_common_umr_type_info,
    .hold = mca_common_umr_type_hold
};

void mca_common_umr_types_init(void)
{
    umr_mpi_types_open(&mca_common_umr_types_ops);
}

size_t mca_common_umr_dtype_blocks(const ompi_datatype_t *dt, size_t *bytes)
{
    const opal_datatype_t *o = &dt->super;
    const dt_type_desc_t *d  = (o->opt_desc.used > 0) ? &o->opt_desc :
                                                        &o->desc;
    size_t n = (d->used < MCA_COMMON_UMR_DTYPE_WALK) ? d->used :
                                                       MCA_COMMON_UMR_DTYPE_WALK;
    size_t mult[MCA_COMMON_UMR_DTYPE_WALK + 1], blocks = 0, sum = 0, blen, i;
    const union dt_elem_desc *e = d->desc;
    int depth = 0;

    if ((n == 1) && (e->elem.common.type > OPAL_DATATYPE_END_LOOP) &&
        (e->elem.common.type < OPAL_DATATYPE_MAX_PREDEFINED)) {
        /* one element (a vector of a basic type): the common case */
        blen   = e->elem.blocklen *
                 opal_datatype_basicDatatypes[e->elem.common.type]->size;
        *bytes = blen * e->elem.count;
        return ((e->elem.count <= 1) || (e->elem.extent == (ptrdiff_t)blen)) ?
               1 : e->elem.count;
    }
    mult[0] = 1;
    for (i = 0; i < n; ++i) {
        e = &d->desc[i];
        if (e->elem.common.type == OPAL_DATATYPE_LOOP) {
            mult[depth + 1] = mult[depth] * e->loop.loops;
            ++depth;
        } else if (e->elem.common.type == OPAL_DATATYPE_END_LOOP) {
            depth -= (depth > 0);
        } else if (e->elem.common.type < OPAL_DATATYPE_MAX_PREDEFINED) {
            blen    = e->elem.blocklen *
                      opal_datatype_basicDatatypes[e->elem.common.type]->size;
            sum    += mult[depth] * blen * e->elem.count;
            /* a block per count, unless they touch (one block) */
            blocks += mult[depth] *
                      (((e->elem.count <= 1) ||
                        (e->elem.extent == (ptrdiff_t)blen)) ?
                       1 : e->elem.count);
        }
    }
    if (blocks == 0) {
        *bytes = o->size;
        return 1;
    }
    *bytes = sum;
    return blocks;
}
