# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Shell tests report in GoogleTest's format, so contrib/test-summary.sh counts
# them like the C++ suites. Source this, set `suite`, call `check NAME CMD...`
# for each test (`skip NAME WHY` for one that cannot run here) and `finish` at the end (exits 1 if any test failed).
#
passed=0 failed=0 skipped=0

check() {   # name, command...
    local name=$1; shift
    echo "[ RUN      ] $suite.$name"
    if "$@"; then
        echo "[       OK ] $suite.$name"; passed=$((passed + 1))
    else
        echo "[  FAILED  ] $suite.$name"; failed=$((failed + 1))
    fi
}

skip() {    # name, why: never counted as passed
    echo "[ RUN      ] $suite.$1"
    echo "$2"
    echo "[  SKIPPED ] $suite.$1"; skipped=$((skipped + 1))
}

finish() {
    echo "[==========] $((passed + failed + skipped)) tests ran."
    echo "[  PASSED  ] $passed tests."
    [ $skipped -eq 0 ] || echo "[  SKIPPED ] $skipped tests, listed below:"
    [ $failed -eq 0 ] || { echo "[  FAILED  ] $failed tests."; exit 1; }
}
