#
# UMR_CHECK_OMPI: Open MPI's internal headers (ompi/mca/pml/pml.h and the
# opal/ headers they include), for the PML component pml/umr. Debian's
# libopenmpi-dev ships them under `mpicc --showme:incdirs`. Optional: without
# them the component is not built.
#
# Sets OMPI_CPPFLAGS, OMPI_LIBS, OMPI_VERSION, ompi_componentdir (where
# `make install` puts mca_pml_umr.so: `ompi_info --path pkglibdir`) and the
# conditional HAVE_OMPI. Needs UMR_CHECK_MPI first (MPICC).
#
AC_DEFUN([UMR_CHECK_OMPI], [
AC_REQUIRE([UMR_CHECK_MPI])
AC_ARG_WITH([ompi],
    [AS_HELP_STRING([--with-ompi@<:@=PREFIX@:>@],
        [build the Open MPI component pml/umr against the Open MPI in PREFIX
         (default: the Open MPI of mpicc, when its internal headers are found)])],
    [], [with_ompi=check])
AC_ARG_WITH([ompi-componentdir],
    [AS_HELP_STRING([--with-ompi-componentdir=DIR],
        [where make install puts mca_pml_umr.so (default: ompi_info --path pkglibdir)])],
    [ompi_componentdir=$withval], [ompi_componentdir=])
umr_have_ompi=no
OMPI_CPPFLAGS=
OMPI_LIBS=
OMPI_VERSION=
AS_IF([test "x$with_ompi" != xno && test "x$umr_have_mpi" = xyes], [
    umr_ompi_mpicc=$MPICC
    umr_ompi_info=ompi_info
    AS_IF([test "x$with_ompi" != xyes && test "x$with_ompi" != xcheck],
          [umr_ompi_mpicc=$with_ompi/bin/mpicc
           umr_ompi_info=$with_ompi/bin/ompi_info])
    AC_MSG_CHECKING([for Open MPI internal headers (ompi/mca/pml/pml.h)])
    umr_ompi_incdirs=
    AS_IF([test -n "$umr_ompi_mpicc"],
          [umr_ompi_incdirs=`$umr_ompi_mpicc --showme:incdirs 2>/dev/null`])
    for umr_dir in $umr_ompi_incdirs; do
        AS_IF([test -f "$umr_dir/ompi/mca/pml/pml.h" && test -f "$umr_dir/ompi/version.h"],
              [umr_have_ompi=yes])
        OMPI_CPPFLAGS="$OMPI_CPPFLAGS -I$umr_dir"
    done
    AC_MSG_RESULT([$umr_have_ompi])
    AS_IF([test "x$umr_have_ompi" = xyes], [
        umr_ompi_libdirs=`$umr_ompi_mpicc --showme:libdirs 2>/dev/null`
        for umr_dir in $umr_ompi_libdirs; do
            OMPI_LIBS="$OMPI_LIBS -L$umr_dir"
        done
        OMPI_LIBS="$OMPI_LIBS -lmpi -lopen-pal"
        OMPI_VERSION=`$umr_ompi_info --version 2>/dev/null | sed -n 's/^Open MPI v//p' | head -1`
        AS_IF([test -z "$ompi_componentdir"],
              [ompi_componentdir=`$umr_ompi_info --path pkglibdir 2>/dev/null | sed -n 's/^ *Pkglibdir: *//p'`])
        AS_IF([test -z "$ompi_componentdir"],
              [AC_MSG_ERROR([cannot find Open MPI's component directory (ompi_info --path pkglibdir); give --with-ompi-componentdir])])
    ], [
        OMPI_CPPFLAGS=
        AS_IF([test "x$with_ompi" != xcheck],
              [AC_MSG_ERROR([--with-ompi given but Open MPI's internal headers (ompi/mca/pml/pml.h under mpicc --showme:incdirs) were not found; on Debian install libopenmpi-dev])])
        AC_MSG_WARN([Open MPI internal headers not found: pml/umr is not built])
    ])
])
AM_CONDITIONAL([HAVE_OMPI], [test "x$umr_have_ompi" = xyes])
AC_SUBST([OMPI_CPPFLAGS])
AC_SUBST([OMPI_LIBS])
AC_SUBST([OMPI_VERSION])
AC_SUBST([ompi_componentdir])
])
