#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Sum up GoogleTest results over the logs of 'make check' and print one line:
#   tests: N passed, N failed, N skipped
# A test program that crashed before printing its summary counts as failed,
# and so does a make check that failed (MAKE_CHECK_FAILED=1) with none.
#
set -u
# Arguments: the directories of test logs (default build/test/gtest and
# build/test/mpi).
[ $# -gt 0 ] || set -- build/test/gtest build/test/mpi
passed=0 failed=0 skipped=0

for trs in $(for dir in "$@"; do ls "$dir"/*.trs 2>/dev/null; done); do
    [ -e "$trs" ] || continue
    log=${trs%.trs}.log
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\..*/\1/p' "$log" | tail -1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\?,.*/\1/p;s/^\[  FAILED  \] \([0-9]*\) tests\?\.$/\1/p' "$log" | tail -1)
    s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\?,.*/\1/p' "$log" | tail -1)
    passed=$((passed + ${p:-0}))
    skipped=$((skipped + ${s:-0}))
    if [ -n "$f" ]; then
        failed=$((failed + f))
    elif ! grep -q '^:test-result: \(PASS\|SKIP\)' "$trs"; then
        echo "$(basename "${trs%.trs}"): exited without a test summary" >&2
        failed=$((failed + 1))
    fi
    # Name the skipped tests: a skip is never a pass.
    sed -n '/ ms)$/d;s/^\[  SKIPPED \] \([a-zA-Z].*\)/  skipped: \1/p' "$log" | sort -u
done

# make check itself failed (a test program that did not build, say) with no
# failed test to show for it: that is a failure too.
if [ "${MAKE_CHECK_FAILED:-0}" = 1 ] && [ "$failed" -eq 0 ]; then
    echo "make check failed outside any test (see check.out)" >&2
    failed=1
fi

echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
