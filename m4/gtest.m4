# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# UMR_CHECK_GTEST: GoogleTest (Debian: googletest, libgtest-dev). Without it
# 'make check' fails with a message instead of silently running nothing.
#
AC_DEFUN([UMR_CHECK_GTEST], [
AC_ARG_WITH([gtest],
    [AS_HELP_STRING([--with-gtest@<:@=PREFIX@:>@], [GoogleTest for 'make check' (default: system)])],
    [], [with_gtest=check])
umr_have_gtest=no
GTEST_CPPFLAGS=
GTEST_LDFLAGS=
AS_IF([test "x$with_gtest" != xno], [
    AS_IF([test "x$with_gtest" != xyes && test "x$with_gtest" != xcheck], [
        GTEST_CPPFLAGS="-I$with_gtest/include"
        GTEST_LDFLAGS="-L$with_gtest/lib"
    ])
    AC_LANG_PUSH([C++])
    umr_save_CPPFLAGS=$CPPFLAGS; umr_save_LDFLAGS=$LDFLAGS; umr_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS $GTEST_CPPFLAGS"
    LDFLAGS="$LDFLAGS $GTEST_LDFLAGS"
    LIBS="-lgtest -pthread $LIBS"
    AC_CHECK_HEADER([gtest/gtest.h], [
        AC_MSG_CHECKING([for libgtest])
        AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <gtest/gtest.h>]],
                                        [[testing::InitGoogleTest(); return RUN_ALL_TESTS();]])],
                       [umr_have_gtest=yes], [])
        AC_MSG_RESULT([$umr_have_gtest])
    ])
    CPPFLAGS=$umr_save_CPPFLAGS; LDFLAGS=$umr_save_LDFLAGS; LIBS=$umr_save_LIBS
    AC_LANG_POP([C++])
    AS_IF([test "x$umr_have_gtest" != xyes && test "x$with_gtest" != xcheck],
          [AC_MSG_ERROR([--with-gtest given but GoogleTest is not usable])])
    AS_IF([test "x$umr_have_gtest" != xyes],
          [AC_MSG_WARN([GoogleTest not found (apt-get install googletest libgtest-dev): 'make check' will fail])])
])
GTEST_LIBS="$GTEST_LDFLAGS -lgtest_main -lgtest -pthread"
AM_CONDITIONAL([HAVE_GTEST], [test "x$umr_have_gtest" = xyes])
AC_SUBST([GTEST_CPPFLAGS])
AC_SUBST([GTEST_LIBS])
])

#
# UMR_CHECK_FUZZ: clang with libFuzzer, for 'make fuzz'. Optional.
#
AC_DEFUN([UMR_CHECK_FUZZ], [
AC_ARG_VAR([FUZZ_CC], [clang with libFuzzer support, for 'make fuzz'])
AC_PATH_PROGS([FUZZ_CC], [clang clang-14 clang-15 clang-16])
umr_have_fuzz=no
AS_IF([test -n "$FUZZ_CC"], [
    AC_MSG_CHECKING([whether $FUZZ_CC links libFuzzer])
    cat > conftest_fuzz.c <<_UMR_EOF
#include <stdint.h>
#include <stddef.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }
_UMR_EOF
    AS_IF([$FUZZ_CC -fsanitize=fuzzer,address,undefined conftest_fuzz.c -o conftest_fuzz >&AS_MESSAGE_LOG_FD 2>&1],
          [umr_have_fuzz=yes])
    rm -f conftest_fuzz.c conftest_fuzz
    AC_MSG_RESULT([$umr_have_fuzz])
])
AM_CONDITIONAL([HAVE_FUZZ], [test "x$umr_have_fuzz" = xyes])
])
