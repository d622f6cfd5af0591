#!/bin/bash
#
# Set up and run every test of mlx5_umr on Debian 12:
# install packages and UCX source headers, build with -Werror, 'make check'
# (all GoogleTest suites and module-loading tests), then a bounded libFuzzer
# run of the layout engine (FUZZ_SECONDS, default 60; 0 skips it).
# Ends with one line: "tests: N passed, N failed, N skipped".
#
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
export BUILD_DIR=$build

"$top/contrib/install-deps.sh"
"$top/contrib/build.sh"

cd "$build"
status=0
check_failed=0
make -j"$(nproc)" check >check.out 2>&1 || { status=1; check_failed=1; }
sed -n '/^\(PASS\|FAIL\|SKIP\|ERROR\|XFAIL\|XPASS\):/p' check.out
if [ $status -ne 0 ]; then
    # Show the failing programs' logs, briefly.
    for trs in test/gtest/*.trs test/mpi/*.trs test/contrib/*.trs; do
        grep -q '^:test-result: PASS' "$trs" && continue
        echo "==== ${trs%.trs}.log (tail)"; tail -40 "${trs%.trs}.log"
    done
    grep -B2 -A10 'Error [0-9]' check.out | tail -30
fi

fuzz_seconds=${FUZZ_SECONDS:-60}
if [ "$fuzz_seconds" -gt 0 ]; then
    if make fuzz FUZZ_SECONDS="$fuzz_seconds" >fuzz.out 2>&1; then
        grep -h "^stat::number_of_executed_units\|^fuzzing" fuzz.out | sed 's/^/fuzz: /'
    else
        tail -40 fuzz.out; echo "fuzz: FAILED"; status=1
    fi
fi

MAKE_CHECK_FAILED=$check_failed "$top/contrib/test-summary.sh" "$build/test/gtest" "$build/test/mpi" \
    "$build/test/contrib" || status=1
exit $status
