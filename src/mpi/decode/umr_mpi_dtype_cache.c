/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI layer: per-datatype cache of decoded layouts.
 *
 * Each entry is an attribute of its datatype (one keyval): the MPI frees it
 * through the delete callback when the type is freed, so a freed and reused
 * datatype handle never finds an old layout. The copy callback is
 * MPI_TYPE_NULL_COPY_FN: a duplicated type decodes anew. Predefined types
 * live as long as MPI; their entries are listed so that fini can drop them.
 */
#ifdef HAVE_CONFIG_H
#  include "umr_config.h"
#endif

#include "umr_mpi_dtype_priv.h"

#include <ucs/debug/log.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct umr_mpi_dtype_entry {
    umr_mpi_dtype_t super;
    MPI_Datatype    type;
    int             predefined;
} umr_mpi_dtype_entry_t;

static struct {
    pthread_mutex_t       lock;
    int                   keyval;
    int                   users;
    umr_mpi_dtype_entry_t **named;     /* entries of predefined types */
    size_t                num_named;
    size_t                max_named;
    umr_mpi_dtype_stats_t stats;
    void                  (*on_free)(MPI_Datatype type);
} umr_mpi_dtype_cache = {
    .lock   = PTHREAD_MUTEX_INITIALIZER,
    .keyval = MPI_KEYVAL_INVALID
};

#define UMR_MPI_DTYPE_STAT(_name) \
    __atomic_fetch_add(&umr_mpi_dtype_cache.stats._name, 1, __ATOMIC_RELAXED)

static void umr_mpi_dtype_entry_free(umr_mpi_dtype_entry_t *entry)
{
    umr_layout_free(entry->super.layout);
    free(entry);
}

/* Forget a predefined type's entry (called with the lock held). */
static void umr_mpi_dtype_named_remove(umr_mpi_dtype_entry_t *entry)
{
    size_t i;

    for (i = 0; i < umr_mpi_dtype_cache.num_named; ++i) {
        if (umr_mpi_dtype_cache.named[i] == entry) {
            umr_mpi_dtype_cache.named[i] =
                umr_mpi_dtype_cache.named[--umr_mpi_dtype_cache.num_named];
            return;
        }
    }
}

static int umr_mpi_dtype_attr_delete(MPI_Datatype type, int keyval,
                                     void *attr_val, void *extra_state)
{
    umr_mpi_dtype_entry_t *entry = attr_val;

    if (umr_mpi_dtype_cache.on_free != NULL) {
        umr_mpi_dtype_cache.on_free(type);
    }
    if (entry->predefined) {
        pthread_mutex_lock(&umr_mpi_dtype_cache.lock);
        umr_mpi_dtype_named_remove(entry);
        pthread_mutex_unlock(&umr_mpi_dtype_cache.lock);
    }
    umr_mpi_dtype_entry_free(entry);
    UMR_MPI_DTYPE_STAT(freed);
    return MPI_SUCCESS;
}

int umr_mpi_dtype_cache_init(void)
{
    int ret = MPI_SUCCESS;

    pthread_mutex_lock(&umr_mpi_dtype_cache.lock);
    if (umr_mpi_dtype_cache.users == 0) {
        ret = PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN,
                                      umr_mpi_dtype_attr_delete,
                                      &umr_mpi_dtype_cache.keyval, NULL);
        if (ret != MPI_SUCCESS) {
            ucs_error("umr_mpi_dtype: MPI_Type_create_keyval failed: %d",
                      ret);
            umr_mpi_dtype_cache.keyval = MPI_KEYVAL_INVALID;
        }
    }
    if (ret == MPI_SUCCESS) {
        ++umr_mpi_dtype_cache.users;
    }
    pthread_mutex_unlock(&umr_mpi_dtype_cache.lock);
    return ret;
}

void umr_mpi_dtype_cache_fini(void)
{
    umr_mpi_dtype_entry_t **named;
    int finalized = 1, keyval;
    size_t i, num;

    pthread_mutex_lock(&umr_mpi_dtype_cache.lock);
    if ((umr_mpi_dtype_cache.users == 0) ||
        (--umr_mpi_dtype_cache.users > 0)) {
        pthread_mutex_unlock(&umr_mpi_dtype_cache.lock);
        return;
    }
    named  = umr_mpi_dtype_cache.named;
    num    = umr_mpi_dtype_cache.num_named;
    keyval = umr_mpi_dtype_cache.keyval;
    umr_mpi_dtype_cache.named     = NULL;
    umr_mpi_dtype_cache.num_named = 0;
    umr_mpi_dtype_cache.max_named = 0;
    umr_mpi_dtype_cache.keyval    = MPI_KEYVAL_INVALID;
    pthread_mutex_unlock(&umr_mpi_dtype_cache.lock);

    PMPI_Finalized(&finalized);
    for (i = 0; i < num; ++i) {
        if (finalized) {
            umr_mpi_dtype_entry_free(named[i]);
        } else {
            /* the delete callback frees the entry */
            PMPI_Type_delete_attr(named[i]->type, keyval);
        }
    }
    free(named);
    if (!finalized) {
        /* entries of derived types stay until their types are freed */
        PMPI_Type_free_keyval(&keyval);
    }
}

void umr_mpi_dtype_cache_stats(umr_mpi_dtype_stats_t *stats)
{
    stats->decoded     = __atomic_load_n(&umr_mpi_dtype_cache.stats.decoded,
                                         __ATOMIC_RELAXED);
    stats->unsupported = __atomic_load_n(&umr_mpi_dtype_cache.stats.unsupported,
                                         __ATOMIC_RELAXED);
    stats->hits        = __atomic_load_n(&umr_mpi_dtype_cache.stats.hits,
                                         __ATOMIC_RELAXED);
    stats->freed       = __atomic_load_n(&umr_mpi_dtype_cache.stats.freed,
                                         __ATOMIC_RELAXED);
    stats->opaque      = __atomic_load_n(&umr_mpi_dtype_cache.stats.opaque,
                                         __ATOMIC_RELAXED);
}

/* The summaries' ids (umr_mpi_type.h): never reused. */
static uint64_t umr_mpi_dtype_ids;

/* `decode` 0: an opaque type (umr_mpi_dtype_get_opaque): no envelope, no
 * layout. */
static umr_mpi_dtype_entry_t *umr_mpi_dtype_entry_new(MPI_Datatype type,
                                                      int decode)
{
    umr_mpi_dtype_entry_t *entry;
    int ni, na, nd, combiner = MPI_COMBINER_CONTIGUOUS; /* not predefined */
    umr_mpi_bounds_t b;
    ucs_status_t status;

    if ((decode && (PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) !=
                    MPI_SUCCESS)) || (umr_mpi_dtype_query(type, &b) != UCS_OK)) {
        ucs_error("umr_mpi_dtype: cannot read datatype %p",
                  (void*)(uintptr_t)type);
        return NULL;
    }

    entry = calloc(1, sizeof(*entry));
    if (entry == NULL) {
        ucs_error("umr_mpi_dtype: out of memory");
        return NULL;
    }
    entry->type          = type;
    entry->predefined    = (combiner == MPI_COMBINER_NAMED) ||
                           (combiner == MPI_COMBINER_F90_REAL) ||
                           (combiner == MPI_COMBINER_F90_COMPLEX) ||
                           (combiner == MPI_COMBINER_F90_INTEGER);
    entry->super.size    = b.size;
    entry->super.lb      = b.lb;
    entry->super.extent  = b.extent;

    if (!decode) {
        entry->super.layout = NULL;
        UMR_MPI_DTYPE_STAT(opaque);
        return entry;
    }
    status = umr_mpi_dtype_decode(type, &entry->super.layout);
    if (status == UCS_OK) {
        entry->super.num_blocks = umr_layout_num_blocks(entry->super.layout);
        entry->super.is_contig  = umr_layout_is_contig(entry->super.layout);
        entry->super.true_lb    = umr_layout_true_lb(entry->super.layout);
        entry->super.true_ub    = umr_layout_true_ub(entry->super.layout);
        entry->super.id         = __atomic_add_fetch(&umr_mpi_dtype_ids, 1,
                                                     __ATOMIC_RELAXED);
        UMR_MPI_DTYPE_STAT(decoded);
    } else if (status == UCS_ERR_UNSUPPORTED) {
        entry->super.layout = NULL;
        UMR_MPI_DTYPE_STAT(unsupported);
    } else {
        free(entry);
        return NULL;
    }
    return entry;
}

static const umr_mpi_dtype_t *umr_mpi_dtype_get_entry(MPI_Datatype type,
                                                      int decode)
{
    umr_mpi_dtype_entry_t *entry = NULL, **named;
    int keyval, flag = 0;
    size_t max;

    keyval = umr_mpi_dtype_cache.keyval;
    if ((keyval == MPI_KEYVAL_INVALID) || (type == MPI_DATATYPE_NULL)) {
        ucs_error("umr_mpi_dtype_get: %s",
                  (type == MPI_DATATYPE_NULL) ? "type is MPI_DATATYPE_NULL" :
                  "the cache is not initialised");
        return NULL;
    }
    if ((PMPI_Type_get_attr(type, keyval, &entry, &flag) == MPI_SUCCESS) &&
        flag) {
        UMR_MPI_DTYPE_STAT(hits);
        return &entry->super;
    }

    /* decode once, even with threads asking for the same type */
    pthread_mutex_lock(&umr_mpi_dtype_cache.lock);
    if ((PMPI_Type_get_attr(type, keyval, &entry, &flag) == MPI_SUCCESS) &&
        flag) {
        UMR_MPI_DTYPE_STAT(hits);
        goto out;
    }
    entry = umr_mpi_dtype_entry_new(type, decode);
    if (entry == NULL) {
        goto out;
    }
    if (entry->predefined &&
        (umr_mpi_dtype_cache.num_named == umr_mpi_dtype_cache.max_named)) {
        max   = 2 * umr_mpi_dtype_cache.max_named + 16;
        named = realloc(umr_mpi_dtype_cache.named, max * sizeof(*named));
        if (named == NULL) {
            ucs_error("umr_mpi_dtype: out of memory");
            umr_mpi_dtype_entry_free(entry);
            entry = NULL;
            goto out;
        }
        umr_mpi_dtype_cache.named     = named;
        umr_mpi_dtype_cache.max_named = max;
    }
    if (PMPI_Type_set_attr(type, keyval, entry) != MPI_SUCCESS) {
        ucs_error("umr_mpi_dtype: MPI_Type_set_attr failed");
        umr_mpi_dtype_entry_free(entry);
        entry = NULL;
        goto out;
    }
    if (entry->predefined) {
        umr_mpi_dtype_cache.named[umr_mpi_dtype_cache.num_named++] = entry;
    }

out:
    pthread_mutex_unlock(&umr_mpi_dtype_cache.lock);
    return (entry != NULL) ? &entry->super : NULL;
}

const umr_mpi_dtype_t *umr_mpi_dtype_get(MPI_Datatype type)
{
    return umr_mpi_dtype_get_entry(type, 1);
}

const umr_mpi_dtype_t *umr_mpi_dtype_get_opaque(MPI_Datatype type)
{
    return umr_mpi_dtype_get_entry(type, 0);
}

void umr_mpi_dtype_cache_on_free(void (*cb)(MPI_Datatype type))
{
    umr_mpi_dtype_cache.on_free = cb;
}
