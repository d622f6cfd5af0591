# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# UMR_CHECK_MPICH: an MPI of the MPICH ABI (MPICH >= 3.1, MVAPICH2 >= 2.0,
# Intel MPI >= 5.0, Cray MPT >= 7.0: libmpi.so.12), for the PMPI binding
# libumr_mpich.so (src/mpich) and its tests. Optional: without one the
# binding is not built.
#
#   --with-mpich=PREFIX  PREFIX/bin/mpicc and mpiexec, mpi.h where that
#                        mpicc says (-show), else PREFIX/include
#   default              Debian's MPICH: mpicc.mpich and mpiexec.mpich on
#                        PATH (mpi.h in /usr/include/<triplet>/mpich)
#   --without-mpich      not built
#
# The binding is compiled with the ordinary compiler and MPICH_CPPFLAGS
# only (never linked with the MPI library: the job's own MPI, MPICH's or
# Intel MPI's libmpi.so.12, provides every MPI symbol at run time). The
# probes check the ABI the binding relies on: integer handles
# (MPI_Datatype is an int), a 20-byte MPI_Status, and MPICH's extended
# generalized requests (MPIX_Grequest_start, whose poll function MPI's
# Wait and Test of every kind call). MPICH_LARGE_COUNT: the MPI-4.0
# large-count queries (PMPI_Type_size_c, ...), for src/compat/umr_mpi_compat.h.
#
# Sets MPICH_CPPFLAGS, MPICH_MPICC, MPICH_MPIEXEC, MPICH_VERSION,
# MPICH_LARGE_COUNT and the conditional HAVE_MPICH.
#
AC_DEFUN([UMR_CHECK_MPICH], [
AC_ARG_WITH([mpich],
    [AS_HELP_STRING([--with-mpich@<:@=PREFIX@:>@],
        [build libumr_mpich.so, the PMPI binding for MPICH-family MPIs (MPICH,
         MVAPICH, Intel MPI), against the MPI in PREFIX (PREFIX/bin/mpicc,
         mpiexec; default: Debian's MPICH, mpicc.mpich, when found)])],
    [], [with_mpich=check])
umr_have_mpich=no
MPICH_CPPFLAGS=
MPICH_MPICC=
MPICH_MPIEXEC=
MPICH_VERSION=
MPICH_LARGE_COUNT=0
AS_IF([test "x$with_mpich" != xno], [
    AS_IF([test "x$with_mpich" = xyes || test "x$with_mpich" = xcheck],
          [AC_PATH_PROG([MPICH_MPICC], [mpicc.mpich])
           AC_PATH_PROG([MPICH_MPIEXEC], [mpiexec.mpich])],
          [AS_IF([test -x "$with_mpich/bin/mpicc"], [MPICH_MPICC=$with_mpich/bin/mpicc])
           AS_IF([test -x "$with_mpich/bin/mpiexec"], [MPICH_MPIEXEC=$with_mpich/bin/mpiexec])])
    # the include directories MPICH's wrapper adds (-show: MPICH, MVAPICH;
    # Intel MPI's mpicc has it too)
    umr_mpich_incdirs=
    AS_IF([test -n "$MPICH_MPICC"],
          [for umr_w in `$MPICH_MPICC -show 2>/dev/null`; do
               AS_CASE([$umr_w], [-I*], [umr_mpich_incdirs="$umr_mpich_incdirs $umr_w"])
           done])
    AS_IF([test -z "$umr_mpich_incdirs" && test "x$with_mpich" != xyes &&
           test "x$with_mpich" != xcheck],
          [umr_mpich_incdirs="-I$with_mpich/include"])
    MPICH_CPPFLAGS=`echo $umr_mpich_incdirs`
    AS_IF([test -n "$MPICH_CPPFLAGS"], [
        umr_save_CPPFLAGS=$CPPFLAGS
        CPPFLAGS="$MPICH_CPPFLAGS $CPPFLAGS"
        AC_MSG_CHECKING([whether $MPICH_CPPFLAGS has an mpi.h of the MPICH ABI])
        AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>
            MPIX_Grequest_poll_function *umr_poll;
            _Static_assert(sizeof(MPI_Datatype) == sizeof(int), "int handles");
            _Static_assert(sizeof(MPI_Status) == 5 * sizeof(int), "MPICH's status");]],
            [[MPI_Request r; return MPIX_Grequest_start(0, 0, 0, umr_poll, 0, 0, &r);]])],
            [umr_have_mpich=yes], [])
        AC_MSG_RESULT([$umr_have_mpich])
        AS_IF([test "x$umr_have_mpich" = xyes], [
            AC_MSG_CHECKING([for MPI-4.0 large-count type queries in MPICH's mpi.h])
            AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]],
                [[MPI_Count n; return PMPI_Type_size_c(MPI_INT, &n);]])],
                [MPICH_LARGE_COUNT=1; AC_MSG_RESULT([yes])], [AC_MSG_RESULT([no])])
            AC_MSG_CHECKING([for MPICH's version])
            AC_COMPUTE_INT([umr_mpich_numversion], [MPICH_NUMVERSION], [[#include <mpi.h>]],
                           [umr_mpich_numversion=])
            AS_IF([test -n "$umr_mpich_numversion"],
                  [MPICH_VERSION=`expr $umr_mpich_numversion / 10000000`.`expr $umr_mpich_numversion / 100000 % 100`.`expr $umr_mpich_numversion / 1000 % 100`],
                  [MPICH_VERSION=unknown])
            AC_MSG_RESULT([$MPICH_VERSION])
        ])
        CPPFLAGS=$umr_save_CPPFLAGS
    ])
    AS_IF([test "x$umr_have_mpich" = xno], [
        MPICH_CPPFLAGS=
        MPICH_MPICC=
        MPICH_MPIEXEC=
        AS_IF([test "x$with_mpich" != xcheck],
              [AC_MSG_ERROR([--with-mpich given but no mpi.h of the MPICH ABI was found (mpicc: ${MPICH_MPICC:-none}, flags: ${umr_mpich_incdirs:-none}); on Debian install mpich and libmpich-dev])])
        AC_MSG_WARN([no MPICH-family MPI found (mpicc.mpich): libumr_mpich.so is not built])
    ])
])
AM_CONDITIONAL([HAVE_MPICH], [test "x$umr_have_mpich" = xyes])
# its tests run MPICH's mpiexec (Hydra) and build with its mpicc
AM_CONDITIONAL([HAVE_MPICH_RUN],
               [test "x$umr_have_mpich" = xyes && test -n "$MPICH_MPICC" && test -n "$MPICH_MPIEXEC"])
AC_SUBST([MPICH_CPPFLAGS])
AC_SUBST([MPICH_MPICC])
AC_SUBST([MPICH_MPIEXEC])
AC_SUBST([MPICH_VERSION])
AC_SUBST([MPICH_LARGE_COUNT])
])
