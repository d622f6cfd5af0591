# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# UMR_CHECK_OMPI: Open MPI's internal headers (ompi/mca/pml/pml.h and the
# opal/ headers they include) and libraries, for the PML component pml/umr.
# Debian's libopenmpi-dev ships the headers under `mpicc --showme:incdirs`;
# an Open MPI installed under a prefix (HPC-X, --with-devel-headers) has
# them under PREFIX/include/openmpi. Optional: without them the component is
# not built.
#
# Sets OMPI_CPPFLAGS, OMPI_LIBS, OMPI_VERSION, ompi_componentdir (where
# `make install` puts mca_pml_umr.so: `ompi_info --path pkglibdir`) and the
# conditional HAVE_OMPI, and defines what UMR_CHECK_OMPI_INTERNALS probes
# (src/compat/umr_ompi_compat.h uses it). Needs UMR_CHECK_MPI first (MPICC).
#
AC_DEFUN([UMR_CHECK_OMPI], [
AC_REQUIRE([UMR_CHECK_MPI])
AC_REQUIRE([PKG_PROG_PKG_CONFIG])
AC_ARG_WITH([ompi],
    [AS_HELP_STRING([--with-ompi@<:@=PREFIX@:>@],
        [build the Open MPI component pml/umr against the Open MPI in PREFIX
         (PREFIX/bin/mpicc; default: the Open MPI of mpicc, when its internal
         headers are found)])],
    [], [with_ompi=check])
AC_ARG_WITH([ompi-componentdir],
    [AS_HELP_STRING([--with-ompi-componentdir=DIR],
        [where make install puts the components (mca_pml_umr.so; default:
         LIBDIR/openmpi, which is Open MPI's own component directory (ompi_info
         --path pkglibdir) only when PREFIX is Open MPI's prefix; name Open
         MPI's to have every job load them)])],
    [ompi_componentdir=$withval], [ompi_componentdir=])
AC_ARG_WITH([ompi-src],
    [AS_HELP_STRING([--with-ompi-src=DIR],
        [source tree of the installed Open MPI release, for the internal
         headers its installation lacks (Debian 13 and later:
         opal/mca/threads/pthreads/); default ./ompi-src/openmpi-VERSION,
         fetched by contrib/get-ompi-src.sh when a header is missing])],
    [], [with_ompi_src=auto])
AC_ARG_WITH([pmix],
    [AS_HELP_STRING([--with-pmix=PREFIX],
        [PMIx headers (PREFIX/include) for Open MPI 5 and later, whose
         internal headers include <pmix.h> (default: pkg-config pmix)])],
    [], [with_pmix=check])
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
    umr_ompi_incdir=
    AS_IF([test -n "$umr_ompi_mpicc"],
          [umr_ompi_incdirs=`$umr_ompi_mpicc --showme:incdirs 2>/dev/null`])
    for umr_dir in $umr_ompi_incdirs; do
        AS_IF([test -f "$umr_dir/ompi/mca/pml/pml.h" && test -f "$umr_dir/ompi/version.h"],
              [umr_have_ompi=yes; umr_ompi_incdir=$umr_dir])
        OMPI_CPPFLAGS="$OMPI_CPPFLAGS -I$umr_dir"
    done
    AC_MSG_RESULT([$umr_have_ompi])
    AS_IF([test "x$umr_have_ompi" = xyes], [
        OMPI_VERSION=`sed -n 's/^#define OMPI_VERSION "\(.*\)"/\1/p' "$umr_ompi_incdir/ompi/version.h"`
        UMR_OMPI_COMPLETE_HEADERS
        UMR_OMPI_FIND_LIBS
        UMR_CHECK_OMPI_INTERNALS
        OMPI_SYS_COMPONENTDIR=`$umr_ompi_info --path pkglibdir 2>/dev/null | sed -n 's/^ *Pkglibdir: *//p'`
        PMIX_COMPONENTDIR=`$PKG_CONFIG --variable=libdir pmix 2>/dev/null`/pmix
        AS_IF([test -d "$PMIX_COMPONENTDIR"], [], [PMIX_COMPONENTDIR=])
        umr_ompi_prefix=`$umr_ompi_info --path prefix 2>/dev/null | sed -n 's/^ *Prefix: *//p'`
        umr_prefix=$prefix
        AS_IF([test "x$umr_prefix" = xNONE], [umr_prefix=$ac_default_prefix])
        # Install under the prefix: Open MPI's component directory only
        # when the prefix is Open MPI's own, or when named.
        AS_IF([test -n "$ompi_componentdir"], [],
              [test "x$umr_prefix" = "x$umr_ompi_prefix" && test -n "$OMPI_SYS_COMPONENTDIR"],
              [ompi_componentdir=$OMPI_SYS_COMPONENTDIR],
              [ompi_componentdir='${libdir}/openmpi'])
    ], [
        OMPI_CPPFLAGS=
        AS_IF([test "x$with_ompi" != xcheck],
              [AC_MSG_ERROR([--with-ompi given but Open MPI's internal headers (ompi/mca/pml/pml.h under $umr_ompi_mpicc --showme:incdirs) were not found; on Debian install libopenmpi-dev])])
        AC_MSG_WARN([Open MPI internal headers not found: pml/umr is not built])
    ])
])
AM_CONDITIONAL([HAVE_OMPI], [test "x$umr_have_ompi" = xyes])
AC_SUBST([OMPI_CPPFLAGS])
AC_SUBST([OMPI_LIBS])
AC_SUBST([OMPI_VERSION])
AC_SUBST([ompi_componentdir])
AC_SUBST([OMPI_SYS_COMPONENTDIR])
AC_SUBST([PMIX_COMPONENTDIR])
])


# The internal headers pml/umr includes (and, through them, every header
# Open MPI's own components see).
m4_define([UMR_OMPI_PROBE_HEADERS], [[
#include <ompi_config.h>
#include <ompi/communicator/communicator.h>
#include <ompi/datatype/ompi_datatype.h>
#include <ompi/mca/pml/pml.h>
#include <ompi/mca/pml/base/base.h>
#include <ompi/mca/pml/base/pml_base_request.h>
#include <ompi/message/message.h>
#include <ompi/proc/proc.h>
#include <ompi/request/request.h>
#include <ompi/runtime/mpiruntime.h>
#include <ompi/runtime/params.h>
#include <opal/class/opal_free_list.h>
#include <opal/class/opal_hash_table.h>
#include <opal/mca/base/mca_base_component_repository.h>
#include <opal/mca/base/mca_base_pvar.h>
#include <opal/mca/base/mca_base_var.h>
#include <opal/mca/base/mca_base_var_enum.h>
#include <opal/runtime/opal_progress.h>
]])

#
# UMR_OMPI_COMPLETE_HEADERS: make Open MPI's internal headers compile. An
# installation may lack some of them: Debian's libopenmpi-dev 5.0.7 and
# 6.0.0~rc2 ship no opal/mca/threads/pthreads/*.h, which opal_config.h names
# as the mutex and thread implementation (the layout of opal_mutex_t, in
# every free list and communicator); Open MPI 5's headers include PMIx's
# <pmix.h>, which is not under mpicc's include path. Each header the
# preprocessor cannot find is looked up: PMIx's with pkg-config (or
# --with-pmix), Open MPI's own in the source tree of the same release
# (--with-ompi-src, fetched by contrib/get-ompi-src.sh), copied into
# ompi-include/ of the build tree, which comes last in OMPI_CPPFLAGS (the
# installed headers win). UMR_OMPI_ABI_CHECK then checks the result against
# the installed libraries.
#
AC_DEFUN([UMR_OMPI_COMPLETE_HEADERS], [
umr_ompi_extra=`pwd`/ompi-include
rm -rf "$umr_ompi_extra"
umr_ompi_from_src=
umr_ompi_notes=
umr_ompi_pmix_done=no
umr_ompi_src=
# the PMIx header of this release (5.0: pmix-internal.h, 4.1: pmix.h)
umr_ompi_probe='UMR_OMPI_PROBE_HEADERS'
AS_IF([test -f "$umr_ompi_incdir/opal/mca/pmix/pmix-internal.h"],
      [umr_ompi_probe="$umr_ompi_probe
#include <opal/mca/pmix/pmix-internal.h>"],
      [umr_ompi_probe="$umr_ompi_probe
#include <opal/mca/pmix/pmix.h>"])
AC_MSG_CHECKING([whether Open MPI's internal headers are complete])
umr_ompi_missing=
for umr_i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    echo "$umr_ompi_probe" > conftest_ompi.c
    umr_ompi_missing=`$CC -E $CPPFLAGS $OMPI_CPPFLAGS conftest_ompi.c 2>&1 >/dev/null |
        sed -n "s/.*fatal error: \(.*\): No such file or directory.*/\1/p;s/.*fatal error: '\(.*\)' file not found.*/\1/p" | head -1`
    rm -f conftest_ompi.c
    AS_IF([test -z "$umr_ompi_missing"], [break])
    AS_CASE([$umr_ompi_missing],
    [pmix*.h], [
        AS_IF([test "x$umr_ompi_pmix_done" = xyes],
              [AC_MSG_RESULT([no])
               AC_MSG_ERROR([Open MPI's internal headers include <$umr_ompi_missing> (PMIx), not found: install PMIx's headers (Debian: libpmix-dev) or give --with-pmix=PREFIX])])
        umr_ompi_pmix_done=yes
        AS_IF([test "x$with_pmix" != xcheck && test "x$with_pmix" != xyes],
              [OMPI_CPPFLAGS="$OMPI_CPPFLAGS -I$with_pmix/include"
               umr_ompi_notes="$umr_ompi_notes PMIx's headers from $with_pmix/include;"],
              [AS_IF([test -n "$PKG_CONFIG" && $PKG_CONFIG --exists pmix],
                     [OMPI_CPPFLAGS="$OMPI_CPPFLAGS `$PKG_CONFIG --cflags pmix`"
                      umr_ompi_notes="$umr_ompi_notes PMIx's headers from pkg-config pmix;"])])
    ], [
        AS_IF([test -z "$umr_ompi_src"], [UMR_OMPI_FIND_SRC])
        AS_IF([test -f "$umr_ompi_src/$umr_ompi_missing"], [], [
            AC_MSG_RESULT([no])
            AC_MSG_ERROR([Open MPI's internal headers include $umr_ompi_missing, which neither the installation nor the Open MPI source in $umr_ompi_src has])])
        AS_MKDIR_P(["$umr_ompi_extra/`dirname $umr_ompi_missing`"])
        cp "$umr_ompi_src/$umr_ompi_missing" "$umr_ompi_extra/$umr_ompi_missing"
        AS_IF([test -z "$umr_ompi_from_src"], [OMPI_CPPFLAGS="$OMPI_CPPFLAGS -I$umr_ompi_extra"])
        umr_ompi_from_src="$umr_ompi_from_src $umr_ompi_missing"
    ])
done
AS_IF([test -n "$umr_ompi_missing"], [
    AC_MSG_RESULT([no])
    AC_MSG_ERROR([Open MPI's internal headers: still missing $umr_ompi_missing after 20 headers were added])])
AS_IF([test -n "$umr_ompi_from_src"],
      [umr_ompi_notes="$umr_ompi_notes$umr_ompi_from_src from $umr_ompi_src;"])
AS_IF([test -n "$umr_ompi_notes"],
      [AC_MSG_RESULT([yes, with${umr_ompi_notes%;}])],
      [AC_MSG_RESULT([yes])])
# They must also compile (a header of another release would not).
umr_save_CPPFLAGS=$CPPFLAGS
CPPFLAGS="$CPPFLAGS $OMPI_CPPFLAGS"
AC_MSG_CHECKING([whether Open MPI's internal headers compile])
AC_COMPILE_IFELSE([AC_LANG_PROGRAM([$umr_ompi_probe], [])], [AC_MSG_RESULT([yes])], [
    AC_MSG_RESULT([no])
    AC_MSG_ERROR([Open MPI $OMPI_VERSION's internal headers do not compile (see config.log)])])
CPPFLAGS=$umr_save_CPPFLAGS
])

#
# UMR_OMPI_FIND_SRC: umr_ompi_src, the source tree of exactly the installed
# Open MPI release (major.minor.release in its VERSION file).
#
AC_DEFUN([UMR_OMPI_FIND_SRC], [
AS_IF([test "x$with_ompi_src" = xauto || test "x$with_ompi_src" = xyes], [
    umr_ompi_src="$srcdir/ompi-src/openmpi-$OMPI_VERSION"
    AS_IF([test ! -f "$umr_ompi_src/VERSION"], [
        AC_MSG_NOTICE([Open MPI's installation lacks $umr_ompi_missing: fetching its source ($srcdir/contrib/get-ompi-src.sh $srcdir/ompi-src)])
        "$srcdir/contrib/get-ompi-src.sh" "$srcdir/ompi-src" >&AS_MESSAGE_LOG_FD 2>&1 ||
            AC_MSG_WARN([contrib/get-ompi-src.sh failed, see config.log])
    ])
], [
    umr_ompi_src=$with_ompi_src
])
umr_dir=`cd "$umr_ompi_src" 2>/dev/null && pwd`
AS_IF([test -n "$umr_dir" && test -f "$umr_dir/VERSION"], [umr_ompi_src=$umr_dir], [
    AC_MSG_RESULT([no])
    AC_MSG_ERROR([Open MPI's installation lacks $umr_ompi_missing and there is no Open MPI $OMPI_VERSION source in '$umr_ompi_src': run contrib/get-ompi-src.sh (it fetches it with 'apt-get source openmpi'), give --with-ompi-src=DIR (an unpacked openmpi-$OMPI_VERSION tarball or a checkout of its tag), or --with-ompi=no to build without pml/umr])
])
umr_ompi_src_version=`sed -n 's/^major=//p;s/^minor=//p;s/^release=//p' "$umr_ompi_src/VERSION" | paste -sd.`
AS_CASE([$OMPI_VERSION], ["$umr_ompi_src_version"|"$umr_ompi_src_version"@<:@a-z@:>@*], [], [
    AC_MSG_RESULT([no])
    AC_MSG_ERROR([Open MPI version mismatch: the source in $umr_ompi_src is Open MPI $umr_ompi_src_version but the installed Open MPI is $OMPI_VERSION])])
])

#
# UMR_OMPI_FIND_LIBS: OMPI_LIBS. Open MPI's internals live in libmpi and
# libopen-pal up to 5.0, in libopen_mpi (which libmpi links) from 6.0 on.
# The first set that links and whose classes have the sizes the headers
# give (UMR_OMPI_ABI_CHECK) wins.
#
AC_DEFUN([UMR_OMPI_FIND_LIBS], [
umr_ompi_libdirs=`$umr_ompi_mpicc --showme:libdirs 2>/dev/null`
umr_ompi_L=
umr_ompi_rpath=
for umr_dir in $umr_ompi_libdirs; do
    umr_ompi_L="$umr_ompi_L -L$umr_dir"
    umr_ompi_rpath="$umr_ompi_rpath -Wl,-rpath,$umr_dir"
done
umr_ompi_libs_found=no
for umr_libs in "-lmpi -lopen-pal" "-lmpi -lopen_mpi -lopen-pal"; do
    AC_MSG_CHECKING([for Open MPI's internals in $umr_libs])
    umr_save_CPPFLAGS=$CPPFLAGS; umr_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS $OMPI_CPPFLAGS"
    LIBS="$umr_ompi_L $umr_libs $LIBS"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([UMR_OMPI_PROBE_HEADERS],
                                    [[return (int)ompi_request_t_class.cls_sizeof +
                                             (int)opal_mutex_t_class.cls_sizeof;]])],
                   [umr_ompi_libs_found=yes], [])
    CPPFLAGS=$umr_save_CPPFLAGS; LIBS=$umr_save_LIBS
    AC_MSG_RESULT([$umr_ompi_libs_found])
    AS_IF([test "x$umr_ompi_libs_found" = xyes], [
        OMPI_LIBS="$umr_ompi_L $umr_libs"
        break
    ])
done
AS_IF([test "x$umr_ompi_libs_found" = xyes], [],
      [AC_MSG_ERROR([Open MPI $OMPI_VERSION: its internal symbols (ompi_request_t_class) are in none of libmpi, libopen_mpi, libopen-pal (see config.log)])])
UMR_OMPI_ABI_CHECK
])

#
# UMR_OMPI_ABI_CHECK: every Open MPI class pml/umr uses or embeds
# (src/compat/umr_ompi_abi.h) has, compiled from these headers, the size the
# installed libraries were built with (its class descriptor's cls_sizeof).
# A header of another release or build configuration (a missing one taken
# from a source tree, say) fails here instead of crashing jobs. pml/umr
# checks again when a job loads it.
#
AC_DEFUN([UMR_OMPI_ABI_CHECK], [
AC_MSG_CHECKING([that Open MPI's class sizes match its installed libraries])
umr_save_CPPFLAGS=$CPPFLAGS; umr_save_LIBS=$LIBS
CPPFLAGS="$CPPFLAGS $OMPI_CPPFLAGS -I$srcdir/src/compat"
LIBS="$OMPI_LIBS $umr_ompi_rpath $LIBS"
AC_RUN_IFELSE([AC_LANG_PROGRAM([UMR_OMPI_PROBE_HEADERS[
#include "umr_ompi_abi.h"
#include <stdio.h>
]], [[
    int bad = 0;
#define UMR_OMPI_ABI_PROBE(_t) \
    if (sizeof(_t) != _t##_class.cls_sizeof) { \
        fprintf(stderr, "%s: compiled %zu bytes, Open MPI has %zu\n", #_t, \
                sizeof(_t), _t##_class.cls_sizeof); \
        bad = 1; \
    }
    UMR_OMPI_ABI_CLASSES(UMR_OMPI_ABI_PROBE)
    return bad;
]])], [AC_MSG_RESULT([yes])], [
    AC_MSG_RESULT([no])
    AC_MSG_ERROR([Open MPI $OMPI_VERSION: its internal headers do not match its installed libraries (sizes in config.log); a header taken from a source tree must be of exactly this release])
], [AC_MSG_RESULT([cross-compiling: checked when a job loads pml/umr])])
CPPFLAGS=$umr_save_CPPFLAGS; LIBS=$umr_save_LIBS
])

#
# UMR_CHECK_OMPI_INTERNALS: what of Open MPI's internal API this release
# has. Every difference between Open MPI 4.1 and the newest release pml/umr
# knows is probed here, never guessed from the version number;
# src/compat/umr_ompi_compat.h turns the results into one API. A PML
# framework version it does not know stops configure, and a PML module
# table with a slot it does not know stops the build.
#
AC_DEFUN([UMR_CHECK_OMPI_INTERNALS], [
umr_save_CPPFLAGS=$CPPFLAGS
CPPFLAGS="$CPPFLAGS $OMPI_CPPFLAGS"
# The PML framework's component version: 2.0.0 up to 4.1, 2.1.0 from 5.0.
AC_CHECK_DECLS([MCA_PML_BASE_VERSION_2_1_0, MCA_PML_BASE_VERSION_2_0_0], [], [],
               [UMR_OMPI_PROBE_HEADERS])
AS_IF([test "x$ac_cv_have_decl_MCA_PML_BASE_VERSION_2_1_0$ac_cv_have_decl_MCA_PML_BASE_VERSION_2_0_0" = xnono],
      [AC_MSG_ERROR([Open MPI $OMPI_VERSION: unknown PML framework version (neither MCA_PML_BASE_VERSION_2_1_0 nor _2_0_0 in ompi/mca/pml/pml.h); pml/umr does not know this Open MPI yet])])
# Module slots: 5.0 removed pml_ft_event and added pml_revoke_comm (after
# pml_del_comm) and pml_get_transports (at the end).
AC_CHECK_MEMBERS([mca_pml_base_module_t.pml_ft_event,
                  mca_pml_base_module_t.pml_revoke_comm,
                  mca_pml_base_module_t.pml_get_transports],
                 [], [], [UMR_OMPI_PROBE_HEADERS])
# PMIx: opal/mca/pmix/pmix.h and OPAL_PMIX_GLOBAL up to 4.1,
# pmix-internal.h and PMIx's own PMIX_GLOBAL from 5.0.
AC_CHECK_HEADERS([opal/mca/pmix/pmix-internal.h opal/mca/pmix/pmix.h], [break], [],
                 [[#include <ompi_config.h>]])
AS_IF([test "x$ac_cv_header_opal_mca_pmix_pmix_internal_h$ac_cv_header_opal_mca_pmix_pmix_h" = xnono],
      [AC_MSG_ERROR([Open MPI $OMPI_VERSION: neither opal/mca/pmix/pmix-internal.h nor opal/mca/pmix/pmix.h; pml/umr does not know this Open MPI yet])])
AC_CHECK_DECLS([PMIX_GLOBAL, OPAL_PMIX_GLOBAL], [], [], [UMR_OMPI_PROBE_HEADERS[
#ifdef HAVE_OPAL_MCA_PMIX_PMIX_INTERNAL_H
#  include <opal/mca/pmix/pmix-internal.h>
#else
#  include <opal/mca/pmix/pmix.h>
#endif
]])
AS_IF([test "x$ac_cv_have_decl_PMIX_GLOBAL$ac_cv_have_decl_OPAL_PMIX_GLOBAL" = xnono],
      [AC_MSG_ERROR([Open MPI $OMPI_VERSION: no modex scope (PMIX_GLOBAL, OPAL_PMIX_GLOBAL); pml/umr does not know this Open MPI yet])])
# MPI fault tolerance (ULFM, 5.0): on at run time, Open MPI reads every PML
# request as ob1's (ompi_request_is_failed_fn), which pml/umr's are not.
AC_CHECK_DECLS([ompi_ftmpi_enabled], [], [], [UMR_OMPI_PROBE_HEADERS])
# A communicator's id that all its processes agree on (the answer to a
# truncated control message names it): 4.1's c_contextid, 5.0's extended id.
AC_CHECK_DECLS([ompi_comm_get_extended_cid], [], [], [UMR_OMPI_PROBE_HEADERS[
#include <ompi/communicator/communicator.h>
]])
# User messages (opal_show_help): up to 5.0 the help files are read at run
# time from the directories opal_show_help_add_dir() names; from 6.0 they are
# compiled into libopen-pal (opal_show_help_get_content) and a component's
# own file is not found there.
AC_CHECK_DECLS([opal_show_help_get_content], [], [], [UMR_OMPI_PROBE_HEADERS[
#include <opal/util/show_help.h>
]])
# The attached buffer of buffered sends (MPI_Buffer_attach), which a
# buffered escape of pml/umr takes its copy from: exported by every release
# (OMPI_DECLSPEC), from 6.0 for a communicator (its own buffer, its
# session's or the process's: ompi_bsend_buffer_type_t).
AC_CHECK_DECLS([mca_pml_base_bsend_request_alloc_buf,
                mca_pml_base_bsend_request_free], [],
               [AC_MSG_ERROR([Open MPI $OMPI_VERSION: no mca_pml_base_bsend_request_alloc_buf or _free in ompi/mca/pml/base/pml_base_bsend.h; pml/umr does not know this Open MPI yet])],
               [UMR_OMPI_PROBE_HEADERS[
#include <ompi/mca/pml/base/pml_base_bsend.h>
]])
AC_CHECK_TYPES([ompi_bsend_buffer_type_t], [], [], [UMR_OMPI_PROBE_HEADERS[
#include <ompi/mca/pml/base/pml_base_bsend.h>
]])
CPPFLAGS=$umr_save_CPPFLAGS
# for the tests (test/mpi/test_pml_umr.sh): what this release can do
UMR_OMPI_HAS_FT=$ac_cv_have_decl_ompi_ftmpi_enabled
UMR_OMPI_HAS_GET_TRANSPORTS=$ac_cv_member_mca_pml_base_module_t_pml_get_transports
AC_SUBST([UMR_OMPI_HAS_FT])
AC_SUBST([UMR_OMPI_HAS_GET_TRANSPORTS])
])
