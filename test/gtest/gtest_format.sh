# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Shell tests report in GoogleTest's format, so contrib/test-summary.sh counts
# them like the C++ suites. Source this, set `suite`, call `check NAME CMD...`
# for each test (`skip NAME WHY` for one that cannot run here; a CMD that
# finds out only when it runs prints why and returns 77, automake's skip
# status) and `finish` at the end (exits 1 if any test failed).
# `test_seconds N`: a hang guard's N seconds, scaled like the C++ suites';
# `wait_for_line FILE REGEX PID`: a process's line, waited for while it runs.
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

# test_seconds N: N seconds times UMR_TEST_TIME_MULTIPLIER (default 1; as
# umr_test_time.h), rounded: every wall-clock limit of a shell test. Limits
# only catch hangs: they are generous, and a loaded or instrumented machine
# stretches them further with the multiplier.
test_seconds() {
    awk -v s="$1" -v m="${UMR_TEST_TIME_MULTIPLIER:-1}" \
        'BEGIN { m += 0; if (m <= 0) m = 1; printf "%d\n", s * m + 0.5 }'
}

# wait_for_line FILE REGEX PID [SECONDS]: wait until FILE has a line
# matching REGEX (0), or PID has ended without writing it (1): bounded by
# the process, not by the clock; SECONDS (default 300, test_seconds) only
# guards against a process that hangs before it (1).
wait_for_line() {
    local file=$1 re=$2 pid=$3 n
    n=$(( $(test_seconds "${4:-300}") * 20 ))
    while [ $n -gt 0 ]; do
        grep -qs -- "$re" "$file" && return 0
        kill -0 "$pid" 2>/dev/null || { grep -qs -- "$re" "$file"; return; }
        sleep 0.05
        n=$((n - 1))
    done
    return 1
}
