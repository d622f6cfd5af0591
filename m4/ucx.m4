# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# UMR_CHECK_UCX: the installed UCX (public headers + libs) and the source tree
# of the same version (internal headers: uct/base, ucs/...).
#
# Sets UCX_CPPFLAGS, UCX_LDFLAGS, UCX_LIBS, UCX_VERSION, ucx_moduledir.
#
AC_DEFUN([UMR_CHECK_UCX], [
AC_ARG_WITH([ucx],
    [AS_HELP_STRING([--with-ucx=PREFIX], [installed UCX (default: pkg-config ucx)])],
    [], [with_ucx=yes])
AC_ARG_WITH([ucx-src],
    [AS_HELP_STRING([--with-ucx-src=DIR],
        [UCX source tree of the installed version, for internal headers
         (default: ./ucx-src/ucx-VERSION, as made by contrib/get-ucx-src.sh)])],
    [], [with_ucx_src=auto])
AC_ARG_WITH([ucx-moduledir],
    [AS_HELP_STRING([--with-ucx-moduledir=DIR],
        [where 'make install' puts libuct_mlx5_umr.so (default: LIBDIR/ucx,
         which is UCX's own module directory only when PREFIX is UCX's
         prefix; name UCX's to have every UCX user load the transport)])],
    [], [with_ucx_moduledir=auto])

AS_IF([test "x$with_ucx" = xno], [AC_MSG_ERROR([mlx5_umr is a UCX transport: it cannot be built --without-ucx])])

AS_IF([test "x$with_ucx" = xyes], [
    PKG_PROG_PKG_CONFIG
    AS_IF([test -n "$PKG_CONFIG" && $PKG_CONFIG --exists ucx], [
        ucx_prefix=`$PKG_CONFIG --variable=prefix ucx`
        ucx_libdir=`$PKG_CONFIG --variable=libdir ucx`
        ucx_incdir=`$PKG_CONFIG --variable=includedir ucx`
    ], [
        AC_MSG_ERROR([UCX not found with pkg-config 'ucx'. Install libucx-dev (Debian) or pass --with-ucx=PREFIX])
    ])
], [
    ucx_prefix=$with_ucx
    ucx_incdir=$with_ucx/include
    AS_IF([test -d "$with_ucx/lib64"], [ucx_libdir=$with_ucx/lib64], [ucx_libdir=$with_ucx/lib])
])

AS_IF([test -f "$ucx_incdir/uct/api/version.h"], [],
      [AC_MSG_ERROR([UCX headers not found: $ucx_incdir/uct/api/version.h is missing])])

AC_MSG_CHECKING([installed UCX version])
ucx_hdr_version=`sed -n 's/^#define UCT_VERNO_STRING *"\(.*\)"/\1/p' "$ucx_incdir/uct/api/version.h"`
UCX_VERSION=$ucx_hdr_version
AC_MSG_RESULT([$UCX_VERSION])

# The internal headers must come from exactly the installed version.
AS_IF([test "x$with_ucx_src" = xauto], [
    with_ucx_src="$srcdir/ucx-src/ucx-$UCX_VERSION"
    # Not there yet: fetch it for the installed UCX (apt-get source on Debian).
    AS_IF([test ! -f "$with_ucx_src/src/uct/base/uct_iface.h"], [
        AC_MSG_NOTICE([fetching UCX $UCX_VERSION source headers: $srcdir/contrib/get-ucx-src.sh $srcdir/ucx-src])
        "$srcdir/contrib/get-ucx-src.sh" "$srcdir/ucx-src" >&AS_MESSAGE_LOG_FD 2>&1 ||
            AC_MSG_WARN([contrib/get-ucx-src.sh failed, see config.log])
    ])
])
ucx_src=`cd "$with_ucx_src" 2>/dev/null && pwd`
AS_IF([test -n "$ucx_src" && test -f "$ucx_src/src/uct/base/uct_iface.h"], [], [
    AC_MSG_ERROR([UCX $UCX_VERSION source headers not found in '$with_ucx_src'.
    Run contrib/get-ucx-src.sh (it fetches them with 'apt-get source ucx') or pass --with-ucx-src=DIR])
])
AC_MSG_CHECKING([UCX source tree version])
ucx_src_version=`sed -n 's/^def[]ine(.ucx_ver_\(major\|minor\|patch\)., *\(@<:@0-9@:>@*\)).*/\2/p' "$ucx_src/configure.ac" | paste -sd.`
AC_MSG_RESULT([$ucx_src_version])
AS_IF([test "x$ucx_src_version" != "x$UCX_VERSION"], [
    AC_MSG_ERROR([UCX version mismatch: the source headers in $ucx_src are UCX $ucx_src_version but the installed UCX is $UCX_VERSION])
])

# UCX's config.h of the installed build: 'ucx_info -b' prints it.
AC_PATH_PROG([UCX_INFO], [ucx_info], [], [$ucx_prefix/bin$PATH_SEPARATOR$PATH])
ucx_config_dir=`pwd`/ucx-config
mkdir -p "$ucx_config_dir"
AS_IF([test -n "$UCX_INFO" && "$UCX_INFO" -b > "$ucx_config_dir/config.h.tmp" 2>/dev/null &&
       grep -q UCS_MAX_LOG_LEVEL "$ucx_config_dir/config.h.tmp"], [
    mv "$ucx_config_dir/config.h.tmp" "$ucx_config_dir/config.h"
], [AS_IF([test -f "$ucx_src/include-config/config.h"], [
    cp "$ucx_src/include-config/config.h" "$ucx_config_dir/config.h"
], [
    AC_MSG_ERROR([cannot get UCX's config.h: 'ucx_info -b' failed (install ucx-utils) and $ucx_src/include-config/config.h is missing])
])])

UCX_CPPFLAGS="-D_GNU_SOURCE -I$ucx_config_dir -I$ucx_src/src"
AS_IF([test "x$ucx_incdir" != x/usr/include], [UCX_CPPFLAGS="-I$ucx_incdir $UCX_CPPFLAGS"])
UCX_LDFLAGS="-L$ucx_libdir -Wl,-rpath,$ucx_libdir"
UCX_LIBS="-luct -lucs"

# ABI guard, build side: the classes we derive from must have the size the
# installed libraries were built with (the module checks again when loaded).
AC_MSG_CHECKING([that UCX internal class sizes match the installed libuct])
umr_save_CPPFLAGS=$CPPFLAGS; umr_save_LDFLAGS=$LDFLAGS; umr_save_LIBS=$LIBS
CPPFLAGS="$CPPFLAGS $UCX_CPPFLAGS -DHAVE_CONFIG_H"
LDFLAGS="$LDFLAGS $UCX_LDFLAGS"
LIBS="$UCX_LIBS $LIBS"
AC_RUN_IFELSE([AC_LANG_PROGRAM([[
#include <uct/base/uct_iface.h>
#include <stdio.h>
extern ucs_class_t uct_iface_t_class; /* not declared by 1.13 headers */
]], [[
    int bad = 0;
#define UMR_ABI_CHECK(_t) \
    if (sizeof(_t) != _t##_class.size) { \
        fprintf(stderr, "%s: compiled %zu bytes, libuct has %zu\n", #_t, sizeof(_t), _t##_class.size); \
        bad = 1; \
    }
    UMR_ABI_CHECK(uct_base_iface_t)
    UMR_ABI_CHECK(uct_base_ep_t)
    UMR_ABI_CHECK(uct_iface_t)
    UMR_ABI_CHECK(uct_ep_t)
    return bad;
]])], [AC_MSG_RESULT([yes])], [
    AC_MSG_RESULT([no])
    AC_MSG_ERROR([UCX internal headers in $ucx_src do not match the installed libuct (see config.log for the sizes); use the source of exactly UCX $UCX_VERSION])
], [AC_MSG_RESULT([cross-compiling: checked at load time only])])
CPPFLAGS=$umr_save_CPPFLAGS; LDFLAGS=$umr_save_LDFLAGS; LIBS=$umr_save_LIBS

UMR_CHECK_UCX_INTERNALS

# Install under the prefix: UCX's module directory only when the prefix is
# UCX's own (a system-wide or HPC-X-wide install), or when named.
umr_prefix=$prefix
AS_IF([test "x$umr_prefix" = xNONE], [umr_prefix=$ac_default_prefix])
AS_IF([test "x$with_ucx_moduledir" != xauto], [ucx_moduledir=$with_ucx_moduledir],
      [test "x$umr_prefix" = "x$ucx_prefix"], [ucx_moduledir=$ucx_libdir/ucx],
      [ucx_moduledir='${libdir}/ucx'])
UCX_SYS_MODULEDIR=$ucx_libdir/ucx

AC_DEFINE_UNQUOTED([UMR_UCX_BUILD_VERSION], ["$UCX_VERSION"], [UCX version the module is built for])
AC_SUBST([UCX_CPPFLAGS])
AC_SUBST([UCX_LDFLAGS])
AC_SUBST([UCX_LIBS])
AC_SUBST([UCX_VERSION])
AC_SUBST([UCX_INFO])
AC_SUBST([ucx_moduledir])
AC_SUBST([UCX_SYS_MODULEDIR])
AC_SUBST([ucx_libdir])
AC_SUBST([ucx_src])
])


#
# UMR_UCX_PROBE_TYPE(MACRO, TYPE-A, TYPE-B, DESCRIPTION): defines MACRO to 1
# when TYPE-A and TYPE-B are the same type in UCX's internal headers (the
# signature of an ops slot, say), to 0 otherwise.
#
AC_DEFUN([UMR_UCX_PROBE_TYPE], [
AC_MSG_CHECKING([$4])
AC_COMPILE_IFELSE([AC_LANG_PROGRAM([UMR_UCX_PROBE_HEADERS], [[
    _Static_assert(__builtin_types_compatible_p($2, $3), "no");
]])], [umr_probe=1; AC_MSG_RESULT([yes])], [umr_probe=0; AC_MSG_RESULT([no])])
AC_DEFINE_UNQUOTED([$1], [$umr_probe], [$4])
])

m4_define([UMR_UCX_PROBE_HEADERS], [[
#include <uct/base/uct_md.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_component.h>
#include <ucs/datastruct/mpool.h>
#include <ucs/memory/rcache.h>
#include <ucs/config/parser.h>
]])

#
# UMR_CHECK_UCX_INTERNALS: what of UCX's internal API this UCX has. Every
# difference between UCX 1.13 and the newest release the module knows is
# probed here, never guessed from the version number; src/compat/
# umr_ucs_compat.h and umr_uct_compat.h turn the results into one API. A
# signature that matches none of the known forms stops configure, and an ops
# table with a slot the module does not know stops the build: a module built
# against an internal it does not know would compile and then crash.
#
AC_DEFUN([UMR_CHECK_UCX_INTERNALS], [
umr_save_CPPFLAGS=$CPPFLAGS
CPPFLAGS="$CPPFLAGS $UCX_CPPFLAGS -DHAVE_CONFIG_H"

AC_CHECK_HEADERS([ucs/sys/ptr_arith.h], [], [], [[#include <ucs/sys/math.h>]])

# Signatures of the md and component ops (1.14: query v2 and mem_reg
# params; 1.16: mkey_pack address/length; 1.19: rkey_unpack params).
UMR_UCX_PROBE_TYPE([UMR_UCT_MD_QUERY_V2], [uct_md_query_func_t],
    [ucs_status_t (*)(uct_md_h, uct_md_attr_v2_t*)],
    [whether the md query op takes uct_md_attr_v2_t])
umr_md_query_v2=$umr_probe
UMR_UCX_PROBE_TYPE([UMR_UCT_MD_QUERY_V1], [uct_md_query_func_t],
    [ucs_status_t (*)(uct_md_h, uct_md_attr_t*)],
    [whether the md query op takes uct_md_attr_t])
AS_IF([test "$umr_md_query_v2$umr_probe" = 00],
      [AC_MSG_ERROR([UCX $UCX_VERSION: unknown signature of the md query op (uct_md_query_func_t); mlx5_umr does not know this UCX yet])])

UMR_UCX_PROBE_TYPE([UMR_UCT_MD_MEM_REG_PARAMS], [uct_md_mem_reg_func_t],
    [ucs_status_t (*)(uct_md_h, void*, size_t, const uct_md_mem_reg_params_t*, uct_mem_h*)],
    [whether the md mem_reg op takes uct_md_mem_reg_params_t])
umr_mem_reg_params=$umr_probe
UMR_UCX_PROBE_TYPE([UMR_UCT_MD_MEM_REG_FLAGS], [uct_md_mem_reg_func_t],
    [ucs_status_t (*)(uct_md_h, void*, size_t, unsigned, uct_mem_h*)],
    [whether the md mem_reg op takes flags])
AS_IF([test "$umr_mem_reg_params$umr_probe" = 00],
      [AC_MSG_ERROR([UCX $UCX_VERSION: unknown signature of the md mem_reg op (uct_md_mem_reg_func_t); mlx5_umr does not know this UCX yet])])

UMR_UCX_PROBE_TYPE([UMR_UCT_MD_MKEY_PACK_ADDRESS], [uct_md_mkey_pack_func_t],
    [ucs_status_t (*)(uct_md_h, uct_mem_h, void*, size_t, const uct_md_mkey_pack_params_t*, void*)],
    [whether the md mkey_pack op takes an address and a length])
umr_mkey_pack_address=$umr_probe
UMR_UCX_PROBE_TYPE([UMR_UCT_MD_MKEY_PACK_PARAMS], [uct_md_mkey_pack_func_t],
    [ucs_status_t (*)(uct_md_h, uct_mem_h, const uct_md_mkey_pack_params_t*, void*)],
    [whether the md mkey_pack op takes params only])
AS_IF([test "$umr_mkey_pack_address$umr_probe" = 00],
      [AC_MSG_ERROR([UCX $UCX_VERSION: unknown signature of the md mkey_pack op (uct_md_mkey_pack_func_t); mlx5_umr does not know this UCX yet])])

UMR_UCX_PROBE_TYPE([UMR_UCT_RKEY_UNPACK_PARAMS], [uct_component_rkey_unpack_func_t],
    [ucs_status_t (*)(uct_component_t*, const void*, const uct_rkey_unpack_params_t*, uct_rkey_t*, void**)],
    [whether the component rkey_unpack op takes uct_rkey_unpack_params_t])
umr_rkey_unpack_params=$umr_probe
UMR_UCX_PROBE_TYPE([UMR_UCT_RKEY_UNPACK_PLAIN], [uct_component_rkey_unpack_func_t],
    [ucs_status_t (*)(uct_component_t*, const void*, uct_rkey_t*, void**)],
    [whether the component rkey_unpack op takes no params])
AS_IF([test "$umr_rkey_unpack_params$umr_probe" = 00],
      [AC_MSG_ERROR([UCX $UCX_VERSION: unknown signature of the component rkey_unpack op; mlx5_umr does not know this UCX yet])])

# UCS services (1.14: mpool params; 1.15: a config table entry to fill
# options from; 1.17: rcache alignment per get, and config names matched
# with the table's prefix).
UMR_UCX_PROBE_TYPE([UMR_UCS_MPOOL_PARAMS], [__typeof__(&ucs_mpool_init)],
    [ucs_status_t (*)(const ucs_mpool_params_t*, ucs_mpool_t*)],
    [whether ucs_mpool_init takes ucs_mpool_params_t])
UMR_UCX_PROBE_TYPE([UMR_UCS_RCACHE_GET_ALIGNMENT], [__typeof__(&ucs_rcache_get)],
    [ucs_status_t (*)(ucs_rcache_t*, void*, size_t, size_t, int, void*, ucs_rcache_region_t**)],
    [whether ucs_rcache_get takes an alignment])
UMR_UCX_PROBE_TYPE([UMR_UCS_CONFIG_PREFIXED_NAMES], [__typeof__(&ucs_config_parser_set_value)],
    [ucs_status_t (*)(void*, ucs_config_field_t*, const char*, const char*, const char*)],
    [whether uct_config_modify matches names with the table prefix])
UMR_UCX_PROBE_TYPE([UMR_UCS_CONFIG_FILL_OPTS_ENTRY], [__typeof__(&ucs_config_parser_fill_opts)],
    [ucs_status_t (*)(void*, ucs_config_global_list_entry_t*, const char*, int)],
    [whether ucs_config_parser_fill_opts takes a config table entry])

# Ops slots that appeared (or went) between releases. UCX calls every slot
# of its own release unconditionally, so each one present gets filled.
AC_CHECK_MEMBERS([uct_md_ops_t.is_sockaddr_accessible,
                  uct_md_ops_t.mem_attach,
                  uct_md_ops_t.mem_elem_pack,
                  uct_md_ops_t.mem_elem_release,
                  uct_component_t.rkey_compare,
                  uct_iface_internal_ops_t.ep_connect_to_ep_v2,
                  uct_iface_internal_ops_t.iface_is_reachable_v2,
                  uct_iface_internal_ops_t.ep_is_connected,
                  uct_iface_internal_ops_t.ep_get_device_ep,
                  uct_iface_internal_ops_t.iface_query_v2,
                  uct_iface_internal_ops_t.iface_mem_element_pack,
                  uct_iface_internal_ops_t.ep_put_sgl_zcopy,
                  uct_iface_internal_ops_t.ep_get_sgl_zcopy,
                  uct_iface_internal_ops_t.ep_outstanding_purge,
                  uct_iface_is_reachable_params_t.scope,
                  uct_md_attr_v2_t.reg_alignment,
                  uct_iface_attr_v2_t.max_put_sgl_zcopy_count,
                  ucs_rcache_ops_t.merge,
                  ucs_rcache_params_t.alignment],
                 [], [], [UMR_UCX_PROBE_HEADERS])
AC_CHECK_DECLS([uct_md_base_md_query, uct_iface_base_query_v2], [], [],
               [UMR_UCX_PROBE_HEADERS])

CPPFLAGS=$umr_save_CPPFLAGS
])
