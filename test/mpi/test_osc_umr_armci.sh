#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# osc/umr under an ARMCI-MPI-style program (osc_umr_armci: strided
# MPI_Get/MPI_Put of subarrays of a 2D and a 3D global array distributed
# over the ranks, inside MPI_Win_lock_all / MPI_Win_flush /
# MPI_Win_unlock_all, and MPI_Accumulate through the wrapped module), sw
# engine: at np 2 and 4, over ob1 (osc/rdma wrapped) and over ucx (osc/ucx
# wrapped), every element checked
# against the serial result on every rank, and the check lines (with the
# checksum of the whole array) the same with osc/umr on and with
# osc_umr_enable=0; with osc/umr, gets and puts moved zero-copy or packed
# (as the choice took them) on every rank, keys were asked for and
# answered, no error, nothing refused.
# Results in GoogleTest's format (contrib/test-summary.sh counts them).
#
set -u
. "$(dirname "$0")/mpi_test_env.sh"
ln -sf "$osc_so" "$scratch/"
prog=$PWD/osc_umr_armci
out=$PWD/test_osc_umr_armci.out.d
rm -rf "$out"   # nothing of an earlier run (its reference outputs) is reused
mkdir -p "$out"
suite=osc_umr_armci
. "$(dirname "$0")/../gtest/gtest_format.sh"

osc_env=("${umr_env[@]}" OMPI_MCA_osc_umr_verbose=1)
# Under pml ucx the osc is osc/ucx (what UCX users run; Open MPI 5.0's
# default osc there cannot even make a window on a host without
# InfiniBand), wrapped by osc/umr.
ucx_args=(--mca pml ucx,umr --mca pml_ucx_tls any --mca pml_ucx_devices any
          --mca osc ucx,umr)

# Both runs passed (same_checks, mpi_test_env.sh) and printed the checksum
# of both arrays.
done_line="osc_umr_armci: 0 failure(s)"
same_checksums() {   # ref got
    same_checks "$1" "$2" || return 1
    [ "$(grep -c '^check .*checksum' "$1")" -eq 2 ] || { echo "no checksums in $1"; return 1; }
}

counters() {   # file np: puts and gets zero-copy or packed (the choice's)
    local f=$1 np=$2   # on every rank, no error
    [ "$(grep -c 'osc_umr: rank' "$f")" -eq "$np" ] || { echo "not $np counter lines"; return 1; }
    grep "osc_umr: rank" "$f" | awk '{
        for (i = 1; i < NF; ++i) v[$i] = $(i + 1)
        if (v["zcopy_puts"] + v["packed_puts"] <= 0 ||
            v["zcopy_gets"] + v["packed_gets"] <= 0 ||
            v["key_ready"] + 0 <= 0 || v["key_answers"] + 0 <= 0 ||
            v["zcopy_errors"] + 0 != 0 || v["key_errors"] + 0 != 0 ||
            v["packed_refused"] + 0 != 0) {
            print "bad counters: " $0; bad = 1 } }
        END { exit bad }'
}

identical() {   # np pml
    local np=$1 pml=$2 args=(-np "$1")
    if [ "$pml" = ucx ]; then args+=("${ucx_args[@]}"); else args+=(--mca pml ob1,umr); fi
    run "$out/ref-$np-$pml" "${osc_env[@]}" OMPI_MCA_osc_umr_enable=0 -- "${args[@]}" ||
        { tail "$out/ref-$np-$pml"; return 1; }
    run "$out/umr-$np-$pml" "${osc_env[@]}" -- "${args[@]}" ||
        { tail -30 "$out/umr-$np-$pml"; return 1; }
    same_checksums "$out/ref-$np-$pml" "$out/umr-$np-$pml" &&
        counters "$out/umr-$np-$pml" "$np" &&
        ! grep -q "osc_umr: rank" "$out/ref-$np-$pml"
}

for np in 2 4; do
    for pml in ob1 ucx; do
        check "identical_np${np}_${pml}" identical "$np" "$pml"
    done
done
finish
