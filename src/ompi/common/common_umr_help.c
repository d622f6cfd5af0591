/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: messages to users (see common_umr_help.h).
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE   /* dladdr, vasprintf */
#endif
#include "common_umr_help.h"
#include "common_umr.h"

#include "umr_ompi_compat.h"

#include <opal/util/output.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MCA_COMMON_UMR_HELP_DIRS 8

static char *mca_common_umr_help_dirs[MCA_COMMON_UMR_HELP_DIRS];
static int mca_common_umr_help_ndirs;

static void mca_common_umr_help_dir(const char *dir)
{
    int i;

    for (i = 0; i < mca_common_umr_help_ndirs; ++i) {
        if (!strcmp(mca_common_umr_help_dirs[i], dir)) {
            return;
        }
    }
    if (mca_common_umr_help_ndirs == MCA_COMMON_UMR_HELP_DIRS) {
        return;
    }
    mca_common_umr_help_dirs[mca_common_umr_help_ndirs] = strdup(dir);
    if (mca_common_umr_help_dirs[mca_common_umr_help_ndirs] != NULL) {
        ++mca_common_umr_help_ndirs;
        (void)opal_show_help_add_dir(dir);
    }
}

void mca_common_umr_help_add(const void *symbol, const char *installed)
{
    char path[PATH_MAX], *slash;
    Dl_info info;
    size_t n;

    if ((installed != NULL) && (installed[0] != '\0')) {
        mca_common_umr_help_dir(installed);
    }
    if (symbol != (const void*)mca_common_umr_help_add) {
        /* and this library's own help file */
        mca_common_umr_help_add((const void*)mca_common_umr_help_add, NULL);
    }
    /* the build tree: libtool keeps the library in .libs beside the file */
    if (!dladdr(symbol, &info) || (info.dli_fname == NULL) ||
        (realpath(info.dli_fname, path) == NULL) ||
        (NULL == (slash = strrchr(path, '/')))) {
        return;
    }
    *slash = '\0';
    n      = strlen(path);
    if ((n >= 6) && !strcmp(path + n - 6, "/.libs")) {
        path[n - 6] = '\0';
    }
    mca_common_umr_help_dir(path);
}

#if !UMR_OMPI_HELP_FILES_AT_RUN_TIME
/* The text of [topic] in `file` from the help directories, or NULL. */
static char *mca_common_umr_help_text(const char *file, const char *topic)
{
    char path[PATH_MAX], line[1024], *text = NULL, *grown;
    size_t len = 0, n;
    int i, in = 0;
    FILE *f;

    for (i = 0; (i < mca_common_umr_help_ndirs) && (text == NULL); ++i) {
        snprintf(path, sizeof(path), "%s/%s", mca_common_umr_help_dirs[i],
                 file);
        f = fopen(path, "r");
        if (f == NULL) {
            continue;
        }
        in = 0;
        while (fgets(line, sizeof(line), f) != NULL) {
            if (line[0] == '[') {
                if (in) {
                    break;
                }
                line[strcspn(line, "]")] = '\0';
                in = !strcmp(line + 1, topic);
                continue;
            }
            if (!in || (line[0] == '#')) {
                continue;
            }
            n     = strlen(line);
            grown = realloc(text, len + n + 1);
            if (grown == NULL) {
                break;
            }
            text = grown;
            memcpy(text + len, line, n + 1);
            len += n;
        }
        fclose(f);
    }
    while ((len > 0) && (text[len - 1] == '\n')) {
        text[--len] = '\0';   /* opal_output ends the line */
    }
    return text;
}
#endif

void mca_common_umr_show_help(const char *file, const char *topic, ...)
{
    va_list ap;
#if !UMR_OMPI_HELP_FILES_AT_RUN_TIME
    char *text, *msg;
#endif

    va_start(ap, topic);
#if UMR_OMPI_HELP_FILES_AT_RUN_TIME
    (void)opal_show_vhelp(file, topic, false, ap);
#else
    text = mca_common_umr_help_text(file, topic);
    if ((text != NULL) && (vasprintf(&msg, text, ap) >= 0)) {
        opal_output(0, "%s", msg);
        free(msg);
    } else {
        opal_output(0, "help message %s / %s not found", file, topic);
    }
    free(text);
#endif
    va_end(ap);
    /* Open MPI 5's launcher prints one copy of a message many ranks sent,
     * without a count: this line says that this process sent it. */
    MCA_COMMON_UMR_VERBOSE(2, "sent help message %s / %s", file, topic);
}
