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
        [where 'make install' puts libuct_mlx5_umr.so (default: UCX's LIBDIR/ucx)])],
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

AS_IF([test "x$with_ucx_moduledir" = xauto], [ucx_moduledir=$ucx_libdir/ucx], [ucx_moduledir=$with_ucx_moduledir])

AC_DEFINE_UNQUOTED([UMR_UCX_BUILD_VERSION], ["$UCX_VERSION"], [UCX version the module is built for])
AC_SUBST([UCX_CPPFLAGS])
AC_SUBST([UCX_LDFLAGS])
AC_SUBST([UCX_LIBS])
AC_SUBST([UCX_VERSION])
AC_SUBST([UCX_INFO])
AC_SUBST([ucx_moduledir])
AC_SUBST([ucx_libdir])
AC_SUBST([ucx_src])
])
