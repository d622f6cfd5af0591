/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "umr_config.h"

#include "umr_mpich_config.h"
#include "umr_mpi_rma.h"

#include "umr_ucs_compat.h"

#include <ucs/config/parser.h>
#include <ucs/debug/log_def.h>
#include <ucs/sys/compiler_def.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

/* UMR_MPICH_ZCOPY: the core's modes, in their order (umr_mpi_choice.h) */
static const char *umr_mpich_zcopy_names[] = {"auto", "on", "off", NULL};

/* A whole number >= 0, all of it ("4x", "-1" refused: UCX's unsigned
 * parser takes both). */
static int umr_mpich_config_sscanf_level(const char *buf, void *dest,
                                         const void *arg)
{
    unsigned long v;
    char *end;

    if ((buf[0] < '0') || (buf[0] > '9')) {
        return 0;
    }
    v = strtoul(buf, &end, 10);
    if ((*end != '\0') || (v > INT_MAX)) {
        return 0;
    }
    *(unsigned*)dest = v;
    return 1;
}

#define UMR_MPICH_CONFIG_TYPE_LEVEL \
    {umr_mpich_config_sscanf_level, ucs_config_sprintf_uint, \
     ucs_config_clone_uint, ucs_config_release_nop, ucs_config_help_generic, \
     "a whole number >= 0"}

static ucs_config_field_t umr_mpich_config_table[] = {
    {"ENABLE", "y",
     "0 (n): the job runs exactly as without libumr_mpich.so",
     ucs_offsetof(umr_mpich_config_t, enable), UCS_CONFIG_TYPE_BOOL},

    {"ZCOPY", "auto",
     "auto: per message, from the measured costs of both ways; on: every "
     "eligible message (tests); off: everything passes through",
     ucs_offsetof(umr_mpich_config_t, zcopy),
     UCS_CONFIG_TYPE_ENUM(umr_mpich_zcopy_names)},

    /* the control message's size: a smaller message cannot be one */
    {"MIN_SIZE", "4160",
     "smallest message (packed bytes) moved zero-copy; values below the "
     "control message size (4160) are raised to it; inf: none",
     ucs_offsetof(umr_mpich_config_t, min_size), UCS_CONFIG_TYPE_MEMUNITS},

    {"RMA_MIN_BLOCK", "1024",
     "one-sided put and get (ZCOPY=auto, no measured osc.mpich costs): "
     "operations whose mean contiguous block is at most this many bytes go "
     "to MPICH on the sw engine",
     ucs_offsetof(umr_mpich_config_t, rma_min_block),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"COST_FILE", "",
     "measured costs for ZCOPY=auto (contrib/umr-calibrate.sh writes them); "
     "empty: the host's default file",
     ucs_offsetof(umr_mpich_config_t, cost_file), UCS_CONFIG_TYPE_STRING},

    {"VERBOSE", "0",
     "1: each rank's counters at MPI_Finalize (\"umr_mpich: rank N: "
     "zcopy_sends ...\"); 5: rails and choices; 10: peers",
     ucs_offsetof(umr_mpich_config_t, verbose), UMR_MPICH_CONFIG_TYPE_LEVEL},

    {"DEVICES", "",
     "the mlx5_umr devices that become rails, as the core takes them: empty "
     "(sw and the first mlx5 device), a list (sw,mlx5_1), dev:port, ^ to "
     "exclude (^sw)",
     ucs_offsetof(umr_mpich_config_t, devices), UCS_CONFIG_TYPE_STRING},

    {"MAX_CONNS", "auto",
     "peers connected at once (auto: from the devices' queue pairs and the "
     "ranks of the host; unlimited; a count)",
     ucs_offsetof(umr_mpich_config_t, max_conns), UCS_CONFIG_TYPE_STRING},

    {"UCT_MODULE", "",
     "the mlx5_umr UCT module (libuct_mlx5_umr.so) to load; empty: the one "
     "installed beside the library",
     ucs_offsetof(umr_mpich_config_t, uct_module), UCS_CONFIG_TYPE_STRING},

#if UMR_TEST_HOOKS
    /* the test variant only (hooks/, built by make check) */
    {"TEST_FAULT", "",
     "test builds: zero-copy path points that fail (the core's test faults): "
     "a comma list of connect, key, mdwait, post, completion, ctlsend, "
     "ackpost, norail; kreq, tkey, oreg, rmafail (one-sided)",
     ucs_offsetof(umr_mpich_config_t, test_fault), UCS_CONFIG_TYPE_STRING},
#endif

    {NULL}
};

#if UMR_TEST_HOOKS
/* the core's points (umr_mpi.h), then the one-sided key protocol's
 * (umr_mpi_rma.h), each by its names there, in its order */
static const char *const umr_mpich_fault_names[] = {
    UMR_MPI_FAULT_NAMES, UMR_MPI_RMA_FAULT_NAMES
};
#endif

static int umr_mpich_config_known(const char *var, size_t len)
{
    const ucs_config_field_t *f;

    for (f = umr_mpich_config_table; f->name != NULL; ++f) {
        if ((strlen(f->name) == len) && !strncmp(var, f->name, len)) {
            return 1;
        }
    }
    return 0;
}

/* an UMR_MPICH_* variable of the environment that is not in the table */
static void umr_mpich_config_unknown(char *warn, size_t len)
{
    const size_t plen = strlen(UMR_MPICH_ENV_PREFIX);
    const ucs_config_field_t *f;
    char **e;
    size_t n;

    warn[0] = '\0';
    for (e = environ; (e != NULL) && (*e != NULL); ++e) {
        if (strncmp(*e, UMR_MPICH_ENV_PREFIX, plen) ||
            umr_mpich_config_known(*e + plen, strcspn(*e + plen, "="))) {
            continue;
        }
        n = snprintf(warn, len, "unknown variable %.*s (known:",
                     (int)strcspn(*e, "="), *e);
        for (f = umr_mpich_config_table; (f->name != NULL) && (n < len); ++f) {
            n += snprintf(warn + n, len - n, " %s%s", UMR_MPICH_ENV_PREFIX,
                          f->name);
        }
        if (n < len) {
            snprintf(warn + n, len - n, ")");
        }
        return;
    }
}

/* UCS's parser reports a bad value by the table's name alone ("ZCOPY"):
 * the binding's one line names the variable instead */
static ucs_log_func_rc_t
umr_mpich_config_quiet(const char *file, unsigned line, const char *function,
                       ucs_log_level_t level,
                       const ucs_log_component_config_t *comp_conf,
                       const char *message, va_list ap)
{
    return (level <= UCS_LOG_LEVEL_ERROR) ? UCS_LOG_FUNC_RC_STOP :
                                            UCS_LOG_FUNC_RC_CONTINUE;
}

/* The variable UCS's parser refused: the first whose value does not
 * parse, in `err`. */
static void umr_mpich_config_refused(char *err, size_t err_len)
{
    const ucs_config_field_t *f;
    uint64_t scratch[8];   /* the largest field (a string: a pointer) */
    char var[64], syntax[128];
    const char *value;

    snprintf(err, err_len, UMR_MPICH_ENV_PREFIX "* not valid");
    for (f = umr_mpich_config_table; f->name != NULL; ++f) {
        snprintf(var, sizeof(var), UMR_MPICH_ENV_PREFIX "%s", f->name);
        value = getenv(var);
        if (value == NULL) {
            continue;
        }
        if (f->parser.read(value, scratch, f->parser.arg) == 1) {
            f->parser.release(scratch, f->parser.arg);
            continue;
        }
        f->parser.help(syntax, sizeof(syntax), f->parser.arg);
        snprintf(err, err_len, "%s='%s' is not valid (expected %s)", var,
                 value, syntax);
        return;
    }
}

int umr_mpich_config_read(umr_mpich_config_t *cfg, char *err, size_t err_len,
                          char *warn, size_t warn_len)
{
#if UMR_TEST_HOOKS
    char why[256];
#endif
    ucs_status_t status;
    int ret = 0;

    memset(cfg, 0, sizeof(*cfg));
    ucs_log_push_handler(umr_mpich_config_quiet);
    status = umr_ucs_config_fill_opts(cfg, umr_mpich_config_table,
                                      UMR_MPICH_ENV_TOP, UMR_MPICH_ENV_TABLE,
                                      0);
    ucs_log_pop_handler();
    if (status != UCS_OK) {
        umr_mpich_config_refused(err, err_len);
        /* the defaults again (the parser released them): nothing
         * half-parsed stays */
        ucs_config_parser_set_default_values(cfg, umr_mpich_config_table);
        ret = -1;
    }
#if UMR_TEST_HOOKS
    if ((ret == 0) &&
        (umr_mpi_faults_parse(cfg->test_fault, umr_mpich_fault_names,
                              ucs_static_array_size(umr_mpich_fault_names),
                              &cfg->fault_mask, why, sizeof(why)) != 0)) {
        snprintf(err, err_len, UMR_MPICH_ENV_PREFIX "TEST_FAULT='%s' is not "
                 "valid (expected a comma list: %s)", cfg->test_fault, why);
        ret = -1;
    }
#endif
    umr_mpich_config_unknown(warn, warn_len);
    return ret;
}

void umr_mpich_config_release(umr_mpich_config_t *cfg)
{
    ucs_config_parser_release_opts(cfg, umr_mpich_config_table);
}
