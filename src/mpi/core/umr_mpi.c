/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: the process's state, its log and messages (see
 * umr_mpi.h).
 */
#include "umr_config.h"
#include "umr_mpi.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

umr_mpi_state_t umr_mpi;
#if UMR_TEST_HOOKS
unsigned umr_mpi_faults;
#endif

void umr_mpi_init(const umr_mpi_binding_t *b, int verbose)
{
    umr_mpi.b       = b;
    umr_mpi.verbose = verbose;
}

/* `fmt` after `who`, into `line`. */
static void umr_mpi_line(char *line, size_t len, const char *who,
                         const char *fmt, va_list ap)
{
    size_t n = (size_t)snprintf(line, len, "%s: ", who);

    vsnprintf(line + n, len - n, fmt, ap);
}

void umr_mpi_log(const char *fmt, ...)
{
    char line[1024];
    va_list ap;

    va_start(ap, fmt);
    umr_mpi_line(line, sizeof(line), umr_mpi.b->name, fmt, ap);
    va_end(ap);
    umr_mpi.b->log(line);
}

void umr_mpi_log_rma(const char *fmt, ...)
{
    const char *who = (umr_mpi.b->rma_name != NULL) ? umr_mpi.b->rma_name :
                      umr_mpi.b->name;
    char line[1024];
    va_list ap;

    va_start(ap, fmt);
    umr_mpi_line(line, sizeof(line), who, fmt, ap);
    va_end(ap);
    umr_mpi.b->log(line);
}

static void umr_mpi_copy_sent(umr_mpi_comp_t *comp,
                              const umr_mpi_status_t *status)
{
    free(ucs_container_of(comp, umr_mpi_copy_t, comp));
}

umr_mpi_copy_t *umr_mpi_copy_new(const void *data, size_t len)
{
    umr_mpi_copy_t *copy = malloc(sizeof(*copy) + len);

    if (copy != NULL) {
        copy->comp.cb = umr_mpi_copy_sent;
        memcpy(copy->data, data, len);
    }
    return copy;
}

int umr_mpi_send_copy(int peer, umr_mpi_msg_kind_t kind, const void *data,
                      size_t len)
{
    umr_mpi_copy_t *copy = umr_mpi_copy_new(data, len);
    int rc;

    if (copy == NULL) {
        return umr_mpi.b->err_other;
    }
    rc = umr_mpi.b->isend(copy->data, len, peer, kind, &copy->comp);
    if (rc != 0) {
        free(copy);
    }
    return rc;
}

void umr_mpi_warn(const char *topic, const char *fmt, ...)
{
    char text[1024];
    va_list ap;

    va_start(ap, fmt);
    umr_mpi_line(text, sizeof(text), umr_mpi.b->name, fmt, ap);
    va_end(ap);
    umr_mpi.b->warn(topic, text);
}

void umr_mpi_set_faults(unsigned mask)
{
#if UMR_TEST_HOOKS
    umr_mpi_faults = mask;
#else
    (void)mask;
#endif
}

#if UMR_TEST_HOOKS
const char *const umr_mpi_fault_names[UMR_MPI_FAULT_NUM] = {
    UMR_MPI_FAULT_NAMES
};
_Static_assert(sizeof((const char*[]){UMR_MPI_FAULT_NAMES}) ==
               UMR_MPI_FAULT_NUM * sizeof(const char*),
               "a name for each fault point");

int umr_mpi_faults_parse(const char *spec, const char *const *names, int n,
                         unsigned *mask, char *why, size_t len)
{
    char *copy, *tok, *save = NULL;
    size_t used;
    int i, rc = 0;

    *mask = 0;
    if ((spec == NULL) || (spec[0] == '\0')) {
        return 0;
    }
    if ((copy = strdup(spec)) == NULL) {
        snprintf(why, len, "out of memory");
        return -1;
    }
    for (tok = strtok_r(copy, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        for (i = 0; (i < n) && strcmp(tok, names[i]); ++i) {
        }
        if (i < n) {
            *mask |= 1u << i;
            continue;
        }
        used = (size_t)snprintf(why, len, "'%s' is not one of", tok);
        for (i = 0; (i < n) && (used < len); ++i) {
            used += (size_t)snprintf(why + used, len - used, "%s %s",
                                     (i > 0) ? "," : "", names[i]);
        }
        *mask = 0;
        rc    = -1;
        break;
    }
    free(copy);
    return rc;
}
#endif
