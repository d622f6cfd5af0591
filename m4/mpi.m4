#
# UMR_CHECK_MPI: an MPI C compiler wrapper (mpicc) and launcher (mpirun), used
# by the MPI benchmarks and tests. Optional.
#
AC_DEFUN([UMR_CHECK_MPI], [
AC_ARG_WITH([mpi],
    [AS_HELP_STRING([--with-mpi@<:@=PREFIX@:>@], [MPI for benchmarks and MPI tests (default: mpicc on PATH)])],
    [], [with_mpi=check])
umr_have_mpi=no
AS_IF([test "x$with_mpi" != xno], [
    umr_mpi_path=$PATH
    AS_IF([test "x$with_mpi" != xyes && test "x$with_mpi" != xcheck],
          [umr_mpi_path="$with_mpi/bin$PATH_SEPARATOR$PATH"])
    AC_PATH_PROG([MPICC], [mpicc], [], [$umr_mpi_path])
    AC_PATH_PROG([MPIRUN], [mpirun], [], [$umr_mpi_path])
    AS_IF([test -n "$MPICC" && test -n "$MPIRUN"], [umr_have_mpi=yes],
          [AS_IF([test "x$with_mpi" != xcheck], [AC_MSG_ERROR([--with-mpi given but mpicc/mpirun not found])])
           AC_MSG_WARN([mpicc/mpirun not found: MPI benchmarks and tests are not built])])
])
AM_CONDITIONAL([HAVE_MPI], [test "x$umr_have_mpi" = xyes])
AC_SUBST([MPICC])
AC_SUBST([MPIRUN])
])
