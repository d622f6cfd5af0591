#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# bench_mpi_ddt (the program contrib/run-mpi-bench.sh runs) on a few small
# patterns, without timing anything: under ob1 it prints the ddt and pack
# rows and both ping-pongs, and no "direct" rows; with pml/umr interposed it
# also prints the "direct" rows and ping-pongs (pml/umr taken out of the call
# path in the same job through mca_pml_umr_bench_interpose (allowed by the
# level-9 MCA parameter pml_umr_bench), messages and
# samples alternating) and their paired ratios (PAIR, LATP, LATIP), with
# every message verified, also with zero-copy forced (which then moves data
# zero-copy in the ddt messages only). A damaged byte fails the run. Every
# run prints the VM state probe at its start and end (VMSTATE lines).
# Results in GoogleTest's format (contrib/test-summary.sh counts them).
#
set -u
. "$(dirname "$0")/mpi_test_env.sh"
prog=$PWD/bench_mpi_ddt
out=$PWD/test_bench_mpi_ddt.out.d
rm -rf "$out"   # nothing of an earlier run (its reference outputs) is reused
mkdir -p "$out"
suite=bench_mpi_ddt
. "$(dirname "$0")/../gtest/gtest_format.sh"
# three patterns (the NAS MG faces), a few messages each, short ping-pongs
small=(-p nas-mg -T 0.01 -m 2 -M 3 -i 20 -r 1)
sizes=18     # ping-pong sizes 0, 1, 2, 4 .. 65536

rows() {   # file, DATA mode: how many DATA rows of that mode
    awk -F'\t' -v m="$2" '$1 == "DATA" && $7 == m' "$1" | wc -l
}

lines() {  # file, line kind (LAT, LATI, LATD, LATID, LATP, LATIP, PAIR)
    awk -F'\t' -v k="$2" '$1 == k' "$1" | wc -l
}

expect() {  # what, got, wanted
    [ "$2" -eq "$3" ] || { echo "$1: $2, expected $3"; return 1; }
}

plain_ob1() {
    local f=$out/ob1
    run "$f" -- -np 2 --mca pml ob1 -- "${small[@]}" || { tail "$f"; return 1; }
    expect "ddt rows" "$(rows "$f" ddt)" 3 && expect "pack rows" "$(rows "$f" pack)" 3 &&
        expect "direct rows" "$(rows "$f" direct)" 0 &&
        expect "LAT lines" "$(lines "$f" LAT)" $sizes &&
        expect "LATI lines" "$(lines "$f" LATI)" $sizes &&
        expect "LATD lines" "$(lines "$f" LATD)" 0 &&
        expect "PAIR lines" "$(lines "$f" PAIR)" 0 &&
        vmstate_sane "$f"
}

umr_direct() {   # name, extra env
    local f=$out/$1; shift
    run "$f" "${umr_env[@]}" OMPI_MCA_pml_umr_bench=1 "$@" -- -np 2 --mca pml ob1,umr -- "${small[@]}" ||
        { tail "$f"; return 1; }
    expect "ddt rows" "$(rows "$f" ddt)" 3 && expect "direct rows" "$(rows "$f" direct)" 3 &&
        expect "LATD lines" "$(lines "$f" LATD)" $sizes &&
        expect "LATID lines" "$(lines "$f" LATID)" $sizes &&
        expect "PAIR lines" "$(lines "$f" PAIR)" 3 &&
        expect "LATP lines" "$(lines "$f" LATP)" $sizes &&
        expect "LATIP lines" "$(lines "$f" LATIP)" $sizes &&
        pairs_sane "$f" && vmstate_sane "$f" &&
        expect "pml/umr counters" "$(grep -c 'pml_umr: rank .*keys_live 0 errors 0' "$f")" 2
}

# every paired ratio is a positive number, its quartiles in order, and the
# pair count is the direct rows' message count
pairs_sane() {
    awk -F'\t' '
        $1 == "PAIR" && !($5 > 0 && $5 <= $4 && $4 <= $6 && $7 >= 2) {
            print "bad PAIR line: " $0; bad = 1 }
        ($1 == "LATP" || $1 == "LATIP") && !($4 <= $3 && $3 <= $5 && $6 > 0) {
            print "bad " $1 " line: " $0; bad = 1 }
        END { exit bad }' "$1"
}

# the VM state probe (bench_vmstate.c) ran at the job's start and end: one
# line each, 5 x 2000 round trips (5 x 1000 for -V's settle probes),
# min <= median <= max, all positive
vmstate_sane() {
    awk '
        $1 == "VMSTATE" { n[$2]++
            if (!(NF == 6 && $4 > 0 && $4 <= $3 && $3 <= $5 &&
                  $6 == ($2 == "settle" ? 5000 : 10000))) {
                print "bad VMSTATE line: " $0; bad = 1 } }
        END { if (n["start"] != 1 || n["end"] != 1) {
                  print "VMSTATE start/end lines: " n["start"] + 0 "/" n["end"] + 0
                  bad = 1 }
              exit bad }' "$1"
}

# -V max_ns: probes until one is at most max_ns, at most 20; a bound every
# probe meets takes one, one none can meet takes 20 and the job still runs;
# a negative bound is refused
vmstate_settle() {
    local f=$out/settle-any f0=$out/settle-none
    run "$f" -- -np 2 --mca pml ob1 -- -l -i 20 -r 1 -V 1e9 || { tail "$f"; return 1; }
    expect "settle probes with -V 1e9" "$(grep -c '^VMSTATE settle' "$f")" 1 &&
        vmstate_sane "$f" || return 1
    run "$f0" -- -np 2 --mca pml ob1 -- -l -i 20 -r 1 -V 0.001 || { tail "$f0"; return 1; }
    expect "settle probes with -V 0.001" "$(grep -c '^VMSTATE settle' "$f0")" 20 &&
        expect "LAT lines" "$(lines "$f0" LAT)" $sizes && vmstate_sane "$f0" || return 1
    run "$out/settle-bad" -- -np 2 --mca pml ob1 -- -l -V -1 &&
        { echo "-V -1 was accepted"; return 1; }
    grep -q -- "-V >= 0" "$out/settle-bad" || { tail "$out/settle-bad"; return 1; }
}

umr_auto() {
    umr_direct umr-auto
}

# forced: the ddt messages move zero-copy (3 patterns x (1 warm-up + 2..3
# timed) >= 9 messages); the direct ones, alternating, move none
umr_zcopy() {
    local z
    umr_direct umr-zcopy OMPI_MCA_pml_umr_zcopy=on || return 1
    z=$(grep -o 'zcopy_sends [0-9]*' "$out/umr-zcopy" | awk '{s += $2} END {print s + 0}')
    [ "$z" -ge 9 ] || { echo "zcopy_sends $z, expected at least 9"; return 1; }
}

# the shipped default: the benchmark hook is off (pml_umr_bench, level 9),
# so pml/umr stays in the call path and there are no direct rows
umr_no_bench() {
    local f=$out/umr-no-bench
    run "$f" "${umr_env[@]}" -- -np 2 --mca pml ob1,umr -- "${small[@]}" -L ||
        { tail "$f"; return 1; }
    expect "ddt rows" "$(rows "$f" ddt)" 3 && expect "direct rows" "$(rows "$f" direct)" 0 &&
        expect "PAIR lines" "$(lines "$f" PAIR)" 0
}

damaged() {
    local f=$out/damaged
    run "$f" "${umr_env[@]}" -- -np 2 --mca pml ob1,umr -- "${small[@]}" -L -X 1 &&
        { echo "a damaged byte passed"; return 1; }
    grep -q "wrong data received" "$f" || { tail "$f"; return 1; }
}

# contrib/mpi-bench-report.py --jobs on two of these jobs: per size, each
# configuration's figure and the paired difference umr+ob1 - ob1 (here one
# job each, so the median is that job's LAT figure)
jobs_report() {
    local report=$(dirname "$0")/../../contrib/mpi-bench-report.py
    local r=$out/jobs.txt want got
    /usr/bin/python3 "$report" --jobs "$out" ob1="$out/ob1" \
        umr+ob1="$out/umr-auto" >"$r" || { cat "$r"; return 1; }
    expect "rows" "$(awk '$1 ~ /^[0-9]+$/' "$r" | wc -l)" $((2 * sizes)) || return 1
    want=$(awk -F'\t' 'FNR == 1 {f++} $1 == "LAT" && $2 == 4096 {v[f] = $3}
                      END {printf "%+.3f", v[2] - v[1]}' "$out/ob1" "$out/umr-auto")
    got=$(awk '$1 == 4096 {print $(NF - 2); exit}' "$r")
    [ "$got" = "$want" ] || { echo "4096 B paired difference $got, expected $want"; cat "$r"; return 1; }
}

# the --jobs report's VM state section: with a cut every probe is below, each
# job is steady and the one pair's 0 B difference is the jobs' LAT figures'
# difference; with a cut none is below, no job and no pair is
jobs_vmstate() {
    local report=$(dirname "$0")/../../contrib/mpi-bench-report.py
    local r=$out/jobs-vm.txt want got
    /usr/bin/python3 "$report" --jobs --vm-cut 1e9 "$out" ob1="$out/ob1" \
        umr+ob1="$out/umr-auto" >"$r" || { cat "$r"; return 1; }
    expect "steady ob1 jobs" "$(awk '$1 == "ob1" && NF == 5 {print $3}' "$r")" 1 &&
        expect "steady umr+ob1 jobs" "$(awk '$1 == "umr+ob1" && NF == 5 {print $3}' "$r")" 1 ||
        { cat "$r"; return 1; }
    want=$(awk -F'\t' 'FNR == 1 {f++} $1 == "LAT" && $2 == 0 {v[f] = $3}
                      END {printf "%+.3f", v[2] - v[1]}' "$out/ob1" "$out/umr-auto")
    got=$(sed -n 's/.*pairs of steady jobs: 1, 0 B paired difference \([-+0-9.]*\) .*/\1/p' "$r")
    [ "$got" = "$want" ] || { echo "steady pair difference '$got', expected $want"; cat "$r"; return 1; }
    /usr/bin/python3 "$report" --jobs --vm-cut 0.001 "$out" ob1="$out/ob1" \
        umr+ob1="$out/umr-auto" >"$r" || { cat "$r"; return 1; }
    expect "steady jobs with a 0.001 ns cut" \
        "$(awk '($1 == "ob1" || $1 == "umr+ob1") && NF == 4 {s += $3} END {print s + 0}' "$r")" 0 &&
        grep -q "pairs of steady jobs: 0, 0 B paired difference -" "$r" || { cat "$r"; return 1; }
}

check ob1_ddt_pack_and_pingpongs plain_ob1
check umr_ob1_direct_rows_in_the_same_job umr_auto
check umr_ob1_zcopy_and_direct_rows_verified umr_zcopy
check umr_ob1_no_direct_rows_without_pml_umr_bench umr_no_bench
check damaged_byte_fails damaged
check vm_state_settle_probes vmstate_settle
check report_jobs_pairs_whole_jobs jobs_report
check report_jobs_vm_state jobs_vmstate
finish
