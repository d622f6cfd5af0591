#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# The budget of connected peers (pml_umr_max_conns, issue 19 finding 8) on
# the sw engine, with zero-copy forced: pml_umr_conns (every rank sends a
# derived-type message to every other, in shifts, 3 rounds; every byte
# checked against MPI_Pack/MPI_Unpack) at np 4 under ob1:
#  - budget 1: the same result as without pml/umr; on every rank at most 1
#    peer connected at once (conns_max), every send counted once, no key
#    left; peers disconnected (least recently used) and connected again;
#  - the default budget (auto: 256 on the sw rail): nothing disconnected;
#  - bad values (-2, "many", "4x") are refused with a message naming
#    pml_umr_max_conns, and the job runs as without pml/umr.
#
set -u
. "$(dirname "$0")/mpi_test_env.sh"
prog=$PWD/pml_umr_conns
out=$PWD/test_pml_umr_conns.out.d
rm -rf "$out"   # nothing of an earlier run (its reference outputs) is reused
mkdir -p "$out"
suite=pml_umr_conns
. "$(dirname "$0")/../gtest/gtest_format.sh"
. "$(dirname "$0")/pml_umr_conns_check.sh"
forced=(OMPI_MCA_pml_umr_zcopy=on OMPI_MCA_pml_umr_min_size=0)
rounds=3

ref() {
    [ -f "$out/ref" ] && return 0
    run "$out/ref" -- -np 4 --mca pml ob1 -- "$rounds" ||
        { tail "$out/ref"; rm -f "$out/ref"; return 1; }
    grep -q "^check conns $rounds x 3: ok$" "$out/ref" || { tail "$out/ref"; return 1; }
}

budget_lru() {   # budget
    local got=$out/budget-$1
    ref || return 1
    run "$got" "${umr_env[@]}" "${forced[@]}" OMPI_MCA_pml_umr_max_conns="$1" \
        -- -np 4 --mca pml ob1,umr -- "$rounds" || { tail -20 "$got"; return 1; }
    diff <(checks_by_rank "$out/ref") <(checks_by_rank "$got") || return 1
    conns_ok "$got" 4 "$1" $((rounds * 3))
}

default_budget() {
    local got=$out/budget-default
    ref || return 1
    run "$got" "${umr_env[@]}" "${forced[@]}" -- -np 4 --mca pml ob1,umr -- "$rounds" ||
        { tail -20 "$got"; return 1; }
    diff <(checks_by_rank "$out/ref") <(checks_by_rank "$got") || return 1
    [ "$(grep -c 'pml_umr: budget of connected peers: 256 (pml_umr_max_conns=-1' "$got")" -eq 4 ] ||
        { grep "budget" "$got" | head -3; return 1; }
    grep 'pml_umr: rank [0-9]*: zcopy_sends' "$got" | grep -v " conns_max 3 disconnects 0 " &&
        { echo "a rank disconnected under the default budget, or not 3 peers connected"; return 1; }
    return 0
}

bad_value() {   # value
    local got=$out/bad-$1
    ref || return 1
    run "$got" "${umr_env[@]}" "${forced[@]}" OMPI_MCA_pml_umr_max_conns="$1" \
        -- -np 4 --mca pml ob1,umr -- "$rounds" || { tail -20 "$got"; return 1; }
    diff <(checks_by_rank "$out/ref") <(checks_by_rank "$got") || return 1
    grep -q "pml_umr: pml_umr_max_conns=\"$1\" rejected" "$got" ||
        { tail "$got"; echo "no message naming pml_umr_max_conns"; return 1; }
    ! grep -q 'pml_umr: rank [0-9]*: zcopy_sends [1-9]' "$got" ||
        { echo "zero-copy with a refused budget"; return 1; }
}

check budget_1_lru_identical budget_lru 1
check budget_2_lru_identical budget_lru 2
check default_budget_no_disconnect default_budget
check negative_budget_refused bad_value -2
check non_number_budget_refused bad_value many
check trailing_garbage_budget_refused bad_value 4x
finish
