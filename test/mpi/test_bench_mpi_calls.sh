#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# bench_mpi_calls (the program contrib/passthrough-cost.sh runs under
# callgrind) without valgrind: under ob1, pml/umr in front of ob1 (automatic
# choice) and pml/umr with zero-copy forced, every phase runs and every
# message it received was checked byte for byte (data and guards); pml/umr
# interposed (its counters), and with zero-copy forced moved messages
# zero-copy. A damaged byte fails the run (the check is real); bad arguments
# are refused with a message.
# Results in GoogleTest's format (contrib/test-summary.sh counts them).
#
set -u
. "$(dirname "$0")/mpi_test_env.sh"
prog=$PWD/bench_mpi_calls
out=$PWD/test_bench_mpi_calls.out.d
rm -rf "$out"   # nothing of an earlier run (its reference outputs) is reused
mkdir -p "$out"
suite=bench_mpi_calls
. "$(dirname "$0")/../gtest/gtest_format.sh"
phases=32    # 4 kinds x (6 MPI_BYTE sizes + 2 vector sizes)

# exit 0, every phase verified, no check failed
all_phases_ok() {
    local file=$1 n
    n=$(grep -c '^PHASE .* ok$' "$file")
    [ "$n" -eq $phases ] || { echo "$n of $phases phases ok"; tail -20 "$file"; return 1; }
    ! grep 'bench_mpi_calls\[rank' "$file"
}

# pml/umr interposed on both ranks and ended without errors or live keys;
# zero-copy sends summed over ranks in the range [min, max]
umr_counters() {   # file, min zcopy_sends, max
    local file=$1 min=$2 max=$3 z
    [ "$(grep -c 'pml_umr: rank' "$file")" -eq 2 ] || { echo "no counters of 2 ranks"; return 1; }
    grep "pml_umr: rank" "$file" | grep -v "keys_live 0 errors 0" && return 1
    z=$(grep -o 'zcopy_sends [0-9]*' "$file" | awk '{s += $2} END {print s + 0}')
    [ "$z" -ge "$min" ] && [ "$z" -le "$max" ] || { echo "zcopy_sends $z not in [$min, $max]"; return 1; }
}

plain_ob1() {
    run "$out/ob1" -- -np 2 --mca pml ob1 -- -n 20 -w 2 &&
        all_phases_ok "$out/ob1" && ! grep -q "pml_umr: rank" "$out/ob1"
}

umr_ob1_auto() {
    run "$out/umr-auto" "${umr_env[@]}" -- -np 2 --mca pml ob1,umr -- -n 20 -w 2 &&
        all_phases_ok "$out/umr-auto" && umr_counters "$out/umr-auto" 0 1000000
}

# zero-copy forced: the 64 KiB vector (the only non-contiguous message of at
# least pml/umr's minimum size) moves zero-copy in all 4 kinds, 22 messages
# each (20 + 2 warm-up; the ping-pong sends it both ways)
umr_ob1_zcopy() {
    run "$out/umr-zcopy" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=on -- \
        -np 2 --mca pml ob1,umr -- -n 20 -w 2 &&
        all_phases_ok "$out/umr-zcopy" && umr_counters "$out/umr-zcopy" 110 110
}

damaged() {   # -X value, what the failure names
    local file=$out/damaged-$1
    run "$file" -- -np 2 --mca pml ob1 -- -n 2 -w 0 -k irecv -X "$1" &&
        { echo "a damaged byte passed"; return 1; }
    grep -q "byte .* expected .*($2)" "$file" || { tail "$file"; return 1; }
}

bad_args() {
    local file=$out/bad
    run "$file" -- -np 2 -- -k isend,bogus && { echo "-k bogus accepted"; return 1; }
    grep -q "bench_mpi_calls: -k 'isend,bogus'" "$file" || { cat "$file"; return 1; }
    run "$file" -- -np 1 -- && { echo "1 rank accepted"; return 1; }
    grep -q "needs exactly 2 ranks (got 1)" "$file" || { cat "$file"; return 1; }
}

check ob1_all_verified plain_ob1
check umr_ob1_auto_all_verified umr_ob1_auto
check umr_ob1_zcopy_all_verified umr_ob1_zcopy
check damaged_data_byte_fails damaged 1 data
check damaged_guard_byte_fails damaged 2 guard
check bad_arguments_refused bad_args
finish
