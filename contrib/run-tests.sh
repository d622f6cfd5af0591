#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Set up and run every test of mlx5_umr: on this Debian 12 host, install
# packages and UCX source headers, build with -Werror, 'make check' (all
# GoogleTest suites, module-loading and mpirun tests), a bounded libFuzzer
# run of the layout engine (FUZZ_SECONDS, default 60; 0 skips it); then the
# same build and 'make check' in the support matrix's other Debian roots
# (contrib/run-matrix.sh: Debian 13 and unstable, their own UCX, Open MPI
# and rdma-core).
#
#   --no-matrix   this host only (what run-matrix.sh runs inside each root)
#   --busy N      N CPU-bound processes run beside each 'make check' (here
#                 and in each root), as on a shared machine: a test that
#                 fails only then is a defect of the test. Also
#                 UMR_TEST_BUSY=N. They end with it, whatever happens.
#
# Ends with one line per root and a total:
#   tests: N passed, N failed, N skipped
#
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
export BUILD_DIR=$build
matrix=yes
busy=${UMR_TEST_BUSY:-0}
while [ $# -gt 0 ]; do
    case $1 in
    --no-matrix) matrix=no; shift ;;
    --busy)      busy=${2:-}; shift 2 ;;
    *)           echo "run-tests: unknown argument '$1' (--no-matrix, --busy N)" >&2; exit 2 ;;
    esac
done
[[ $busy =~ ^[0-9]+$ ]] || { echo "run-tests: --busy N, N >= 0 CPU-bound processes" >&2; exit 2; }
export UMR_TEST_BUSY=$busy      # the roots' runs (run-matrix.sh, root.sh) too

# N processes that only spin; each ends by itself when this script is gone
# (even killed), and stop_busy ends them at once
busy_pids=()
start_busy() {
    local i
    for ((i = 0; i < busy; ++i)); do
        ( while kill -0 $$ 2>/dev/null; do for ((j = 0; j < 100000; ++j)); do :; done; done ) &
        busy_pids+=($!)
    done
    [ "$busy" -eq 0 ] ||
        echo "busy: $busy CPU-bound processes beside make check (load $(cut -d' ' -f1-3 /proc/loadavg))"
}
stop_busy() {
    [ ${#busy_pids[@]} -gt 0 ] || return 0
    kill "${busy_pids[@]}" 2>/dev/null || true
    wait "${busy_pids[@]}" 2>/dev/null || true
    busy_pids=()
}
trap stop_busy EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$top/contrib/install-deps.sh"
"$top/contrib/build.sh"

cd "$build"
status=0
check_failed=0
# -k: a failing suite does not keep the later ones from running (and counting)
start_busy
make -k -j"$(nproc)" check >check.out 2>&1 || { status=1; check_failed=1; }
stop_busy
sed -n '/^\(PASS\|FAIL\|SKIP\|ERROR\|XFAIL\|XPASS\):/p' check.out
if [ $status -ne 0 ]; then
    # Show the failing programs' logs, briefly.
    for trs in test/gtest/*.trs test/model/*.trs test/mpi/*.trs test/mpich/*.trs test/contrib/*.trs; do
        [ -e "$trs" ] || continue   # a suite that did not run
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

MAKE_CHECK_FAILED=$check_failed "$top/contrib/test-summary.sh" \
    "$build/test/gtest" "$build/test/model" "$build/test/mpi" "$build/test/mpich" \
    "$build/test/contrib" \
    >"$build/summary.out" 2>&1 || status=1
cat "$build/summary.out"
host_line=$(grep '^tests: ' "$build/summary.out" | tail -1)
[ $matrix = yes ] || exit $status

# The other roots of the support matrix.
. /etc/os-release
host_name="debian-${VERSION_ID:-?} (UCX $(dpkg-query -W -f='${Version}' ucx-utils | sed 's/[+-].*//'), Open MPI $(dpkg-query -W -f='${Version}' openmpi-bin | sed 's/[+-].*//'), rdma-core $(dpkg-query -W -f='${Version}' ibverbs-providers | sed 's/[+-].*//'))"
"$top/contrib/run-matrix.sh" | tee "$build/run-matrix.out" || status=1

echo
echo "support matrix:"
echo "$host_name: ${host_line#tests: }" | sed 's/^/  /'
sed -n '/^debian-[^ ]* (.*): /p; /^debian-[^ ]*: /p' "$build/run-matrix.out" | sed 's/^/  /'
# The total over every root that ran.
sed -n 's/.*tests: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped.*/\1 \2 \3/p' \
    <(echo "$host_line"; sed -n '/^debian-[^ ]* (.*): tests: /p' "$build/run-matrix.out") |
    awk '{ p += $1; f += $2; s += $3 } END { printf "tests: %d passed, %d failed, %d skipped\n", p, f, s }'
exit $status
