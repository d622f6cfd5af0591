/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: a misspelt UCX_MLX5_UMR_* variable is reported once
 * a process, with the closest variable the transport knows. UCX warns about
 * unused UCX_* variables only through UCP, which neither pml/umr nor a UCT
 * program (ucx_perftest) starts, so a typo would otherwise be silent.
 *
 * The known names are read from the component's own configuration tables
 * (the md's and every transport's, with the tables they inherit), so a new
 * variable is known without a list to keep. UCX_WARN_UNUSED_ENV_VARS=n
 * silences it, as it does UCP's warning.
 */
#include "umr_config.h"

#include "umr_md.h"
#include "engine_fault.h"

#include <uct/base/uct_component.h>
#include <uct/base/uct_iface.h>
#include <ucs/config/global_opts.h>
#include <ucs/config/parser.h>
#include <ucs/sys/string.h>
#include <ucs/debug/log.h>

#include <string.h>

#define UMR_CONFIG_ENV_PREFIX   "UCX_" UCT_UMR_CONFIG_PREFIX
#define UMR_CONFIG_NAME_MAX     128

extern char **environ;

typedef struct {
    const char *name;          /* the unknown suffix */
    char       best[UMR_CONFIG_NAME_MAX];
    size_t     best_dist;
    int        known;
} uct_mlx5_umr_config_match_t;

/* Edit distance (insert, delete, substitute) of two short names. */
static size_t uct_mlx5_umr_config_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), i, j, prev, tmp;
    size_t row[UMR_CONFIG_NAME_MAX + 1];

    if ((la > UMR_CONFIG_NAME_MAX) || (lb > UMR_CONFIG_NAME_MAX)) {
        return SIZE_MAX;
    }
    for (j = 0; j <= lb; ++j) {
        row[j] = j;
    }
    for (i = 1; i <= la; ++i) {
        prev   = row[0];
        row[0] = i;
        for (j = 1; j <= lb; ++j) {
            tmp    = row[j];
            row[j] = ucs_min(ucs_min(row[j] + 1, row[j - 1] + 1),
                             prev + (a[i - 1] != b[j - 1]));
            prev   = tmp;
        }
    }
    return row[lb];
}

/* Compare m->name with every field of `table` (names under `prefix`),
 * tables inherited or nested included. */
static void uct_mlx5_umr_config_match(uct_mlx5_umr_config_match_t *m,
                                      const ucs_config_field_t *table,
                                      const char *prefix)
{
    const ucs_config_field_t *f;
    char name[UMR_CONFIG_NAME_MAX];
    size_t dist;

    for (f = table; (f->name != NULL) && !m->known; ++f) {
        ucs_snprintf_zero(name, sizeof(name), "%s%s", prefix, f->name);
        if (f->parser.read == ucs_config_sscanf_table) {
            uct_mlx5_umr_config_match(m, f->parser.arg, name);
            continue;
        }
        dist = uct_mlx5_umr_config_distance(m->name, name);
        if (dist == 0) {
            m->known = 1;
        } else if (dist < m->best_dist) {
            m->best_dist = dist;
            ucs_strncpy_zero(m->best, name, sizeof(m->best));
        }
    }
}

void uct_mlx5_umr_config_check_env(uct_component_t *component)
{
    static int checked;
    const size_t plen = strlen(UMR_CONFIG_ENV_PREFIX);
    uct_mlx5_umr_config_match_t m;
    char var[UMR_CONFIG_NAME_MAX];
    uct_tl_t *tl;
    char **env;
    size_t len;

    /* UCX_WARN_UNUSED_ENV_VARS=n silences UCP's warning of the kind too */
    if (checked || !ucs_global_opts.warn_unused_env_vars) {
        return;
    }
    checked = 1;
    for (env = environ; (env != NULL) && (*env != NULL); ++env) {
        if (strncmp(*env, UMR_CONFIG_ENV_PREFIX, plen) != 0) {
            continue;
        }
        len = strcspn(*env, "=");
        if (len >= sizeof(var)) {
            continue;
        }
        memcpy(var, *env, len);
        var[len]    = '\0';
        m.name      = var + plen;
        m.best[0]   = '\0';
        m.best_dist = SIZE_MAX;
        m.known     = 0;
        uct_mlx5_umr_config_match(&m, component->md_config.table, "");
        /* the test variant's fault knob (engine/engine_fault.h) */
        m.known = m.known ||
                  (UMR_TEST_HOOKS && !strcmp(var, UMR_ENG_FAULT_ENV));
        ucs_list_for_each(tl, &component->tl_list, list) {
            uct_mlx5_umr_config_match(&m, tl->config.table, "");
        }
        if (m.known) {
            continue;
        }
        /* a suggestion only when it is close: a few letters off */
        if ((m.best[0] != '\0') &&
            (m.best_dist <= ucs_max(2, strlen(m.name) / 4))) {
            ucs_warn("%s is not a variable of the %s transport: did you mean "
                     "%s%s?", var, UCT_UMR_NAME, UMR_CONFIG_ENV_PREFIX, m.best);
        } else {
            ucs_warn("%s is not a variable of the %s transport", var,
                     UCT_UMR_NAME);
        }
    }
}
