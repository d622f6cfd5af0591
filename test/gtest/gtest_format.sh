# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Shell tests report in GoogleTest's format, so contrib/test-summary.sh counts
# them like the C++ suites. Source this, set `suite`, call `check NAME CMD...`
# for each test (`skip NAME WHY` for one that cannot run here; a CMD that
# finds out only when it runs prints why and returns 77, automake's skip
# status) and `finish` at the end (exits 1 if any test failed).
#
passed=0 failed=0 skipped=0 skipped_names=()

check() {   # name, command...
    # (not `rc`: the tests' own helpers set a global of that name)
    local name=$1 check_status=0; shift
    echo "[ RUN      ] $suite.$name"
    "$@" || check_status=$?
    case $check_status in
        0)  echo "[       OK ] $suite.$name"; passed=$((passed + 1)) ;;
        77) echo "[  SKIPPED ] $suite.$name"; skipped=$((skipped + 1))
            skipped_names+=("$suite.$name") ;;
        *)  echo "[  FAILED  ] $suite.$name"; failed=$((failed + 1)) ;;
    esac
}

skip() {    # name, why: never counted as passed
    echo "[ RUN      ] $suite.$1"
    echo "$2"
    echo "[  SKIPPED ] $suite.$1"; skipped=$((skipped + 1))
    skipped_names+=("$suite.$1")
}

finish() {
    local n
    echo "[==========] $((passed + failed + skipped)) tests ran."
    echo "[  PASSED  ] $passed tests."
    [ $skipped -eq 0 ] || echo "[  SKIPPED ] $skipped tests, listed below:"
    for n in "${skipped_names[@]}"; do echo "[  SKIPPED ] $n"; done
    [ $failed -eq 0 ] || { echo "[  FAILED  ] $failed tests."; exit 1; }
}
