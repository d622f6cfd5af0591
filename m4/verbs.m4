#
# UMR_CHECK_VERBS: rdma-core with mlx5 UMR support, for the mlx5 engine.
#   --with-verbs[=PREFIX]  require it;  --with-verbs=no  build without it;
#   default: use it when found, otherwise say so and build the sw engine only.
#
AC_DEFUN([UMR_CHECK_VERBS], [
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
                        MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, IBV_QP_EX_WITH_LOCAL_INV],
                       [], [umr_verbs_ok="no (rdma-core too old for UMR: see config.log)"],
                       [[#include <infiniband/mlx5dv.h>]])])
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
AS_IF([test "x$umr_have_verbs" = xyes],
      [AC_DEFINE([HAVE_UMR_MLX5_ENGINE], [1], [Build the rdma-core mlx5 engine])])
AM_CONDITIONAL([HAVE_MLX5_ENGINE], [test "x$umr_have_verbs" = xyes])
AC_SUBST([VERBS_CPPFLAGS])
AC_SUBST([VERBS_LDFLAGS])
AC_SUBST([VERBS_LIBS])
])
