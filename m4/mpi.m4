# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# UMR_CHECK_MPI: an MPI C compiler wrapper (mpicc) and launcher (mpirun), used
# by the MPI benchmarks and tests, and the flags mpicc adds (MPI_CPPFLAGS,
# MPI_LIBS) for code built with the ordinary compilers (the datatype decoder,
# C++ tests). Optional. An Open MPI named with --with-ompi=PREFIX is the
# default MPI (pml/umr's tests run under its mpirun). Probes the MPI
# standard's API differences the decoder meets (src/compat/umr_mpi_compat.h).
#
AC_DEFUN([UMR_CHECK_MPI], [
AC_ARG_WITH([mpi],
    [AS_HELP_STRING([--with-mpi@<:@=PREFIX@:>@], [MPI for benchmarks and MPI tests (default: mpicc on PATH)])],
    [], [with_mpi=check])
AS_IF([test "x$with_mpi" = xcheck && test -n "$with_ompi" && test "x$with_ompi" != xno &&
       test "x$with_ompi" != xyes && test "x$with_ompi" != xcheck],
      [with_mpi=$with_ompi])
umr_have_mpi=no
AS_IF([test "x$with_mpi" != xno], [
    umr_mpi_path=$PATH
    AS_IF([test "x$with_mpi" != xyes && test "x$with_mpi" != xcheck],
          [umr_mpi_path="$with_mpi/bin$PATH_SEPARATOR$PATH"])
    AC_PATH_PROG([MPICC], [mpicc], [], [$umr_mpi_path])
    AC_PATH_PROG([MPIRUN], [mpirun], [], [$umr_mpi_path])
    AS_IF([test -n "$MPICC" && test -n "$MPIRUN"], [
        # Open MPI: --showme:*; MPICH family: -compile-info / -link-info
        # (first word is the compiler itself).
        AS_IF([MPI_CPPFLAGS=`$MPICC --showme:compile 2>/dev/null` &&
               MPI_LIBS=`$MPICC --showme:link 2>/dev/null`], [],
              [MPI_CPPFLAGS=`$MPICC -compile-info 2>/dev/null | cut -d' ' -f2-`
               MPI_LIBS=`$MPICC -link-info 2>/dev/null | cut -d' ' -f2-`])
        umr_save_CPPFLAGS=$CPPFLAGS; umr_save_LIBS=$LIBS
        CPPFLAGS="$CPPFLAGS $MPI_CPPFLAGS"; LIBS="$MPI_LIBS $LIBS"
        AC_MSG_CHECKING([whether mpi.h and the MPI library work with $CC])
        AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]],
                                        [[int n; return PMPI_Type_get_envelope(MPI_INT, &n, &n, &n, &n);]])],
                       [umr_have_mpi=yes], [])
        AC_MSG_RESULT([$umr_have_mpi])
        # MPI-4.0 large-count queries (MPI_Type_size_c, ...); MPI-4.1
        # deprecates the MPI_Count (_x) ones they replace.
        AS_IF([test "x$umr_have_mpi" = xyes],
              [AC_CHECK_DECLS([PMPI_Type_size_c, PMPI_Type_get_extent_c,
                               PMPI_Type_get_true_extent_c, MPI_Session_init],
                              [], [], [[#include <mpi.h>]])])
        CPPFLAGS=$umr_save_CPPFLAGS; LIBS=$umr_save_LIBS
        AS_IF([test "x$umr_have_mpi" != xyes && test "x$with_mpi" != xcheck],
              [AC_MSG_ERROR([--with-mpi given but mpi.h/libmpi are not usable with $CC (MPI_CPPFLAGS=$MPI_CPPFLAGS MPI_LIBS=$MPI_LIBS)])])],
          [AS_IF([test "x$with_mpi" != xcheck], [AC_MSG_ERROR([--with-mpi given but mpicc/mpirun not found])])
           AC_MSG_WARN([mpicc/mpirun not found: MPI benchmarks and tests are not built])])
])
AM_CONDITIONAL([HAVE_MPI], [test "x$umr_have_mpi" = xyes])
# MPI-4 sessions (Open MPI 5.0): test/mpi's sessions program
AM_CONDITIONAL([HAVE_MPI_SESSIONS],
               [test "x$umr_have_mpi" = xyes && test "x$ac_cv_have_decl_MPI_Session_init" = xyes])
AC_SUBST([MPICC])
AC_SUBST([MPIRUN])
AC_SUBST([MPI_CPPFLAGS])
AC_SUBST([MPI_LIBS])
])
