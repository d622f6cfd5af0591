# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# UMR_CHECK_VERBS: rdma-core with mlx5 UMR support, for the mlx5 engine.
#   --with-verbs[=PREFIX]  require it;  --with-verbs=no  build without it;
#   default: use it when found, otherwise say so and build the sw engine only.
#
# What differs between rdma-core releases reaches the code in two ways:
#  - what the headers show is probed here (HAVE_...) and used only by
#    src/uct/mlx5_umr/engine/mlx5/engine_mlx5_compat.h;
#  - what only the library's behaviour shows (test/common/umr_test_verbs_
#    model.h, the rules that differ) is chosen by the release, from
#    pkg-config libmlx5 (UMR_RDMA_CORE_MAJOR/_MINOR; 0 when unknown), and used
#    only by the tests' model of rdma-core: the engine is built to be right on
#    every release, since libmlx5.so.1 may be another release at run time.
#
AC_DEFUN([UMR_CHECK_VERBS], [
PKG_PROG_PKG_CONFIG
AC_ARG_WITH([verbs],
    [AS_HELP_STRING([--with-verbs@<:@=PREFIX@:>@],
        [rdma-core (libibverbs, libmlx5) for the mlx5 engine (default: if found)])],
    [], [with_verbs=check])

umr_have_verbs=no
VERBS_CPPFLAGS=
VERBS_LDFLAGS=
VERBS_LIBS=
AS_IF([test "x$with_verbs" != xno], [
    AS_IF([test "x$with_verbs" != xyes && test "x$with_verbs" != xcheck], [
        VERBS_CPPFLAGS="-I$with_verbs/include"
        VERBS_LDFLAGS="-L$with_verbs/lib -L$with_verbs/lib64"
    ])
    umr_save_CPPFLAGS=$CPPFLAGS; umr_save_LDFLAGS=$LDFLAGS; umr_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS $VERBS_CPPFLAGS"
    LDFLAGS="$LDFLAGS $VERBS_LDFLAGS"
    umr_verbs_ok=yes
    AC_CHECK_HEADER([infiniband/mlx5dv.h], [], [umr_verbs_ok="no (infiniband/mlx5dv.h missing)"])
    AS_IF([test "x$umr_verbs_ok" = xyes], [
        AC_CHECK_LIB([ibverbs], [ibv_get_device_list], [], [umr_verbs_ok="no (libibverbs missing)"])])
    AS_IF([test "x$umr_verbs_ok" = xyes], [
        AC_CHECK_LIB([mlx5], [mlx5dv_create_mkey], [], [umr_verbs_ok="no (libmlx5 without mlx5dv_create_mkey)"], [-libverbs])])
    AS_IF([test "x$umr_verbs_ok" = xyes], [
        AC_CHECK_DECLS([mlx5dv_wr_mr_interleaved, mlx5dv_wr_mr_list, mlx5dv_qp_ex_from_ibv_qp_ex,
                        MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG,
                        MLX5DV_WC_UMR, IBV_QP_EX_WITH_LOCAL_INV],
                       [], [umr_verbs_ok="no (rdma-core too old for UMR: see config.log)"],
                       [[#include <infiniband/mlx5dv.h>]])])
    AS_IF([test "x$umr_verbs_ok" = xyes], [
        # rdma-core 48+: speeds beyond NDR (XDR) are only in active_speed_ex
        AC_CHECK_MEMBERS([struct ibv_port_attr.active_speed_ex], [], [],
                         [[#include <infiniband/verbs.h>]])])
    CPPFLAGS=$umr_save_CPPFLAGS; LDFLAGS=$umr_save_LDFLAGS; LIBS=$umr_save_LIBS
    AS_IF([test "x$umr_verbs_ok" = xyes], [
        umr_have_verbs=yes
        VERBS_LIBS="-lmlx5 -libverbs"
    ], [
        AS_IF([test "x$with_verbs" != xcheck],
              [AC_MSG_ERROR([--with-verbs given but rdma-core is not usable: $umr_verbs_ok])])
        AC_MSG_WARN([rdma-core not usable: $umr_verbs_ok; building without the mlx5 engine (sw engine only)])
        umr_have_verbs="$umr_verbs_ok"
    ])
])
# The rdma-core release: libmlx5's pkg-config version is ABI.RELEASE
# (1.24.44.0 is rdma-core 44.0).
umr_rdma_core_major=0
umr_rdma_core_minor=0
AS_IF([test "x$umr_have_verbs" = xyes], [
    AC_MSG_CHECKING([for the rdma-core release (pkg-config libmlx5)])
    umr_save_PKG_CONFIG_PATH=${PKG_CONFIG_PATH-}
    AS_IF([test -n "$VERBS_LDFLAGS"],
          [PKG_CONFIG_PATH="$with_verbs/lib/pkgconfig:$with_verbs/lib64/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
           export PKG_CONFIG_PATH])
    umr_mlx5_modversion=`$PKG_CONFIG --modversion libmlx5 2>/dev/null`
    PKG_CONFIG_PATH=$umr_save_PKG_CONFIG_PATH
    AS_CASE([$umr_mlx5_modversion],
        [[[0-9]*.[0-9]*.[0-9]*.[0-9]*]], [
            umr_rdma_core_major=`echo "$umr_mlx5_modversion" | cut -d. -f3`
            umr_rdma_core_minor=`echo "$umr_mlx5_modversion" | cut -d. -f4`
            AC_MSG_RESULT([$umr_rdma_core_major.$umr_rdma_core_minor])],
        [AC_MSG_RESULT([unknown ('$umr_mlx5_modversion')])
         AC_MSG_WARN([rdma-core release unknown: the tests' rdma-core model cannot choose its rules])])
])
AC_DEFINE_UNQUOTED([UMR_RDMA_CORE_MAJOR], [$umr_rdma_core_major],
                   [rdma-core release built against, for the tests' model (pkg-config libmlx5; 0: unknown)])
AC_DEFINE_UNQUOTED([UMR_RDMA_CORE_MINOR], [$umr_rdma_core_minor],
                   [rdma-core release built against: minor (see UMR_RDMA_CORE_MAJOR)])
AS_IF([test "x$umr_have_verbs" = xyes],
      [AC_DEFINE([HAVE_UMR_MLX5_ENGINE], [1], [Build the rdma-core mlx5 engine])])
AM_CONDITIONAL([HAVE_MLX5_ENGINE], [test "x$umr_have_verbs" = xyes])
AS_IF([test "x$umr_have_verbs" = xyes && test "$umr_rdma_core_major" != 0],
      [umr_have_verbs="yes (rdma-core $umr_rdma_core_major.$umr_rdma_core_minor)"])
AC_SUBST([VERBS_CPPFLAGS])
AC_SUBST([VERBS_LDFLAGS])
AC_SUBST([VERBS_LIBS])
])
