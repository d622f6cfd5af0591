#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Run 'make check' under AddressSanitizer + UndefinedBehaviorSanitizer
# (build-asan/), then every GoogleTest program under valgrind memcheck
# (build/, the normal build). Any report fails the run.
#
#   contrib/run-sanitizers.sh [asan|valgrind|all]   (default: all)
#
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-all}
status=0

"$top/contrib/install-deps.sh"

if [ "$what" = asan ] || [ "$what" = all ]; then
    san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1"
    BUILD_DIR=$top/build-asan "$top/contrib/build.sh" CFLAGS="$san" CXXFLAGS="$san" LDFLAGS="-fsanitize=address,undefined"
    cd "$top/build-asan"
    # Preloaded modules (test_module.sh) need the sanitizer runtimes first.
    export UMR_PRELOAD_EXTRA="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    if make -j"$(nproc)" check >check.out 2>&1; then
        echo "asan+ubsan: make check clean"
    else
        status=1
        grep -l "ERROR: \(Address\|Leak\)Sanitizer\|runtime error:" test/gtest/*.log 2>/dev/null | sed 's/^/asan+ubsan: report in /'
        sed -n '/^\(FAIL\|ERROR\):/p' check.out
    fi
    "$top/contrib/test-summary.sh" test/gtest || status=1
    unset UMR_PRELOAD_EXTRA ASAN_OPTIONS UBSAN_OPTIONS
fi

if [ "$what" = valgrind ] || [ "$what" = all ]; then
    BUILD_DIR=$top/build "$top/contrib/build.sh"
    cd "$top/build/test/gtest"
    make -j"$(nproc)" check TESTS= >/dev/null   # build the programs only
    # valgrind runs programs about 20x slower: stretch the tests' hang guards
    export UMR_TEST_TIME_MULTIPLIER=${UMR_TEST_TIME_MULTIPLIER:-20}
    for t in gtest_*; do
        [ -f "$t" ] && [ -x "$t" ] || continue
        log=valgrind-$t.log
        # libtool runs the real binary (not its wrapper script) under valgrind.
        # Deep stacks: leaks Open MPI keeps from MPI_Init (contrib/valgrind.supp)
        # are told apart only by the frames below its components.
        rc=0
        ../../libtool --mode=execute valgrind --num-callers=50 --error-exitcode=99 --leak-check=full \
            --errors-for-leak-kinds=definite --suppressions="$top/contrib/valgrind.supp" \
            -q "./$t" >"$log" 2>&1 || rc=$?
        case $rc in
        0)  echo "valgrind: $t clean" ;;
        77) echo "valgrind: $t skipped (all its tests skip here: $(grep -m1 -o 'no mlx5 device' "$log"))" ;;
        *)  echo "valgrind: $t FAILED (see $PWD/$log)"; status=1 ;;
        esac
    done
fi
exit $status
