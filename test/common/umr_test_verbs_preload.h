/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * The rdma-core model as a preloadable library (test-only, never installed):
 * how umr_test_verbs_fake.cc exports its verbs.
 *
 * Linked into a test program with -Wl,--wrap=<sym>, the fake defines
 * __wrap_<sym> and every call of the program is the fake's. Built with
 * UMR_MODEL_PRELOAD (test/model: libumr_verbs_model.so, LD_PRELOAD), it
 * defines the verbs and mlx5dv entry points themselves, with rdma-core's
 * symbol versions (umr_verbs_model.map), so that an unmodified, installed
 * libuct_mlx5_umr.so binds to them; then:
 *  - ibv_get_device_list lists the model's devices only to the objects
 *    UMR_MODEL_CLIENTS names (default: libuct_mlx5_umr.so); every other
 *    caller (UCX's ib transports, librdmacm, Open MPI's verbs components)
 *    gets rdma-core's own list;
 *  - every other entry point serves the objects the model made (a registry
 *    of devices, contexts, PDs, MRs, keys, CQs, QPs) and hands anything
 *    else to rdma-core's function (dlvsym(RTLD_NEXT, name, version));
 *  - the configuration (hosts, link layer, ports, GID and pkey tables) and
 *    the shared fabric table come from the environment at the first call
 *    (umr_test_verbs_preload.cc).
 */
#ifndef UMR_TEST_VERBS_PRELOAD_H_
#define UMR_TEST_VERBS_PRELOAD_H_

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

namespace umr_test {

/* The registry of the model's objects (both builds keep it). */
void preload_own(const void *obj);
void preload_disown(const void *obj);
bool preload_owns(const void *obj);

#ifdef UMR_MODEL_PRELOAD
/* Whether the code at `caller` (a return address) is a model client. */
bool preload_is_client(const void *caller);
/* The configuration from the environment; once, before the first device
 * list is made. */
void preload_init();

/* rdma-core's own `name` of version `version`: the next definition in the
 * global scope, else in the library itself (loaded already by a module that
 * UCX or Open MPI opened with RTLD_LOCAL, or loaded now). */
template <typename F> F preload_real(const char *name, const char *version)
{
    const char *lib = (version[0] == 'M') ? "libmlx5.so.1" : "libibverbs.so.1";
    void *sym       = dlvsym(RTLD_NEXT, name, version);
    void *handle;

    if (sym == NULL) {
        handle = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
        if (handle == NULL) {
            handle = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
        }
        if (handle != NULL) {
            sym = dlvsym(handle, name, version);
        }
    }
    if (sym == NULL) {
        fprintf(stderr, "rdma-core model: no %s@%s to forward to\n", name,
                version);
        abort();
    }
    return (F)sym;
}
#endif

} // namespace umr_test

#ifdef UMR_MODEL_PRELOAD
/* the entry point itself, parenthesized: some are function-like macros in
 * verbs.h (ibv_reg_mr, ibv_query_port) */
#  define FAKE_API(_name) (_name)
/* an object the model did not make goes to rdma-core */
#  define FAKE_FORWARD(_ours, _name, _version, ...) \
    do { \
        if (!(_ours)) { \
            static auto _real = umr_test::preload_real<decltype(&::_name)>( \
                    #_name, _version); \
            return _real(__VA_ARGS__); \
        } \
    } while (0)
#else
#  define FAKE_API(_name) __wrap_##_name
#  define FAKE_FORWARD(_ours, _name, _version, ...) do { } while (0)
#endif

#endif
