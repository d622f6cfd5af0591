/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * The transport's variables claimed before the MPI's UCP worker exists
 * (umr_mpi_env.h).
 */
#include "umr_mpi_env.h"

#include "uct_umr.h"          /* UCT_UMR_CONFIG_PREFIX */
#include "umr_ucs_compat.h"

#include <ucs/config/parser.h>

#include <stdlib.h>
#include <string.h>

#define UMR_MPI_ENV_PREFIX "UCX_"

extern char **environ;

/* The UCX_MLX5_UMR_* variables set: how many, and (fields != NULL) a
 * string field of `fields` for each, named as its table sees it (after
 * the prefixes), the value stored in the n-th pointer of the options. */
static size_t umr_mpi_env_fields(ucs_config_field_t *fields)
{
    static const ucs_config_field_t field = {
        "", "", "", 0, UCS_CONFIG_TYPE_STRING
    };
    const char *prefix = UMR_MPI_ENV_PREFIX UCT_UMR_CONFIG_PREFIX;
    size_t plen = strlen(prefix), n = 0, len;
    char **env;

    for (env = environ; (env != NULL) && (*env != NULL); ++env) {
        if (strncmp(*env, prefix, plen) != 0) {
            continue;
        }
        if (fields != NULL) {
            len              = strcspn(*env + plen, "=");
            fields[n]        = field;
            fields[n].name   = strndup(*env + plen, len);
            fields[n].offset = n * sizeof(char*);
            if (fields[n].name == NULL) {
                break;
            }
        }
        ++n;
    }
    return n;
}

void umr_mpi_env_claim(void)
{
    ucs_config_field_t *fields;
    size_t n = umr_mpi_env_fields(NULL), i;
    char **values;

    if (n == 0) {
        return;
    }
    fields = calloc(n + 1, sizeof(*fields));   /* ends with a NULL name */
    values = calloc(n, sizeof(*values));
    if ((fields != NULL) && (values != NULL) &&
        (umr_mpi_env_fields(fields) == n) &&
        (umr_ucs_config_fill_opts(values, fields, UMR_MPI_ENV_PREFIX,
                                  UCT_UMR_CONFIG_PREFIX, 1) == UCS_OK)) {
        ucs_config_parser_release_opts(values, fields);
    }
    for (i = 0; (fields != NULL) && (i < n); ++i) {
        free((char*)fields[i].name);
    }
    free(fields);
    free(values);
}
