/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * LD_PRELOAD helper of contrib/call-path.sh: records the function entries
 * and exits of code built with -finstrument-functions while a top-level
 * call of CALLTRACE_FN runs, one record per top-level call, and writes them
 * at exit to CALLTRACE_OUT.<pid> as "call N" headers followed by
 * "enter|exit module fn_offset" lines. Itself not instrumented.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CT_MAX 200000

#define CT_MODS 64

/* resolved when recorded: a component may be unloaded before exit */
static struct { unsigned long off; int mod, call, exit; } ct_rec[CT_MAX];
static struct { const void *base; char path[512]; } ct_mod[CT_MODS];
static int ct_nmods;
static int ct_num, ct_depth, ct_calls, ct_state; /* 0 unknown, 1 on, -1 off */
static void *ct_target;
static const char *ct_name;

__attribute__((no_instrument_function))
static void ct_record(void *fn, int exit)
{
    Dl_info info;
    int m;

    if ((ct_num >= CT_MAX) || !dladdr(fn, &info)) {
        return;
    }
    for (m = 0; (m < ct_nmods) && (ct_mod[m].base != info.dli_fbase); ++m) {
    }
    if (m == ct_nmods) {
        if (ct_nmods == CT_MODS) {
            return;
        }
        ct_mod[m].base = info.dli_fbase;
        snprintf(ct_mod[m].path, sizeof(ct_mod[m].path), "%s", info.dli_fname);
        ++ct_nmods;
    }
    ct_rec[ct_num].off    = (unsigned long)((char*)fn - (char*)info.dli_fbase);
    ct_rec[ct_num].mod    = m;
    ct_rec[ct_num].exit   = exit;
    ct_rec[ct_num++].call = ct_calls;
}

__attribute__((no_instrument_function))
void __cyg_profile_func_enter(void *fn, void *site)
{
    Dl_info info;

    if (ct_state < 0) {
        return;
    }
    if (ct_state == 0) {
        ct_name  = getenv("CALLTRACE_FN");
        ct_state = (ct_name != NULL) ? 1 : -1;
        if (ct_state < 0) {
            return;
        }
    }
    if (ct_depth == 0) {
        if (ct_target == NULL) {
            if (!dladdr(fn, &info) || (info.dli_sname == NULL) ||
                strcmp(info.dli_sname, ct_name)) {
                return;
            }
            ct_target = fn;
        } else if (fn != ct_target) {
            return;
        }
        ++ct_calls;
    }
    ++ct_depth;
    ct_record(fn, 0);
}

__attribute__((no_instrument_function))
void __cyg_profile_func_exit(void *fn, void *site)
{
    if (ct_depth > 0) {
        --ct_depth;
        ct_record(fn, 1);
    }
}

__attribute__((no_instrument_function, destructor))
static void ct_write(void)
{
    const char *out = getenv("CALLTRACE_OUT");
    char path[4096];
    FILE *f;
    int i, call = 0;

    if ((out == NULL) || (ct_num == 0)) {
        return;
    }
    snprintf(path, sizeof(path), "%s.%d", out, (int)getpid());
    f = fopen(path, "w");
    if (f == NULL) {
        return;
    }
    for (i = 0; i < ct_num; ++i) {
        if (ct_rec[i].call != call) {
            call = ct_rec[i].call;
            fprintf(f, "call %d\n", call);
        }
        fprintf(f, "%s %s %#lx\n", ct_rec[i].exit ? "exit" : "enter",
                ct_mod[ct_rec[i].mod].path, ct_rec[i].off);
    }
    fclose(f);
}
