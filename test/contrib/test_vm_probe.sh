#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# contrib/vm-probe/vm_probe (make check), nothing timed: each mode prints one
# line per probe with positive figures (min <= median <= max for time), the
# page frames when run as root, and a SUMMARY with the probe count; bad
# arguments are refused. Exit 77 on a machine with one CPU.
#
set -u
probe=$PWD/vm_probe
out=$PWD/test_vm_probe.out.d
rm -rf "$out"
mkdir -p "$out"
suite=vm_probe
. "$(dirname "$0")/../gtest/gtest_format.sh"

if [ "$(nproc)" -lt 2 ]; then
    echo "vm_probe needs 2 CPUs, this machine has $(nproc): skipped"
    exit 77
fi

pages() {
    local f=$out/pages
    "$probe" pages -m 4 -p 8 -n 1000 >"$f" 2>&1 || { cat "$f"; return 1; }
    awk -v root="$(id -u)" '
        $1 == "PAGE" { n++
            if (!(NF == 5 && $4 > 0 && $5 > 0 && (root != 0 || $3 > 0))) {
                print "bad PAGE line: " $0; bad = 1 } }
        $1 == "SUMMARY" { s = ($3 == "probes" && $4 == 8) }
        END { if (n != 8 || !s) { print "PAGE lines " n + 0 ", summary " s + 0; bad = 1 }
              exit bad }' "$f" || { cat "$f"; return 1; }
}

time_mode() {   # wait mode
    local f=$out/time-$1
    "$probe" time -t 0.5 -i 100 -n 1000 -w "$1" >"$f" 2>&1 || { cat "$f"; return 1; }
    awk '
        $1 == "TIME" { n++
            if (!(NF == 6 && $4 > 0 && $4 <= $3 && $3 <= $5 && $6 >= -1)) {
                print "bad TIME line: " $0; bad = 1 } }
        $1 == "SUMMARY" { s = ($3 == "probes" && $4 == 5) }
        END { if (n != 5 || !s) { print "TIME lines " n + 0 ", summary " s + 0; bad = 1 }
              exit bad }' "$f" || { cat "$f"; return 1; }
}

time_modes() {
    time_mode sleep && time_mode spin && time_mode both
}

bad_arguments() {
    local a
    for a in "" "walk" "pages -p 0" "pages -m 1 -p 256" "time -n 4" "time -w nap" "time -t 0"; do
        # shellcheck disable=SC2086 # word lists
        if "$probe" $a >"$out/bad" 2>&1; then
            echo "vm_probe $a was accepted"; return 1
        fi
        grep -q "usage\|vm_probe: " "$out/bad" || { echo "vm_probe $a:"; cat "$out/bad"; return 1; }
    done
}

check pages_with_reference_and_frames pages
check time_series_three_wait_modes time_modes
check bad_arguments_refused bad_arguments
finish
