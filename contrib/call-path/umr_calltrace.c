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

static struct { void *fn; int call, exit; } ct_rec[CT_MAX];
static int ct_num, ct_depth, ct_calls, ct_state; /* 0 unknown, 1 on, -1 off */
static void *ct_target;
static const char *ct_name;

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
    if (ct_num < CT_MAX) {
        ct_rec[ct_num].fn     = fn;
        ct_rec[ct_num].exit   = 0;
        ct_rec[ct_num++].call = ct_calls;
    }
}

__attribute__((no_instrument_function))
void __cyg_profile_func_exit(void *fn, void *site)
{
    if (ct_depth > 0) {
        --ct_depth;
        if (ct_num < CT_MAX) {
            ct_rec[ct_num].fn     = fn;
            ct_rec[ct_num].exit   = 1;
            ct_rec[ct_num++].call = ct_calls;
        }
    }
}

__attribute__((no_instrument_function, destructor))
static void ct_write(void)
{
    const char *out = getenv("CALLTRACE_OUT");
    char path[4096];
    Dl_info fi;
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
        if (!dladdr(ct_rec[i].fn, &fi)) {
            continue;
        }
        fprintf(f, "%s %s %#lx\n", ct_rec[i].exit ? "exit" : "enter",
                fi.dli_fname,
                (unsigned long)((char*)ct_rec[i].fn - (char*)fi.dli_fbase));
    }
    fclose(f);
}
