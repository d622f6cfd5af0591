#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# osc/umr on the mlx5 engine over the rdma-core model on simulated hosts
# (contrib/mpirun-model.sh: libumr_verbs_model.so preloaded, every peer on
# the mlx5 engine, pml_umr_devices=mlx5_0; osc/umr picked by itself):
#  - osc_umr_test (put/get of vector, subarray, indexed, struct-resized
#    target types from a contiguous and a vector origin, under fence,
#    lock/unlock, lock_all/flush, post/start/complete/wait and Rput/Rget,
#    over MPI_Win_create, MPI_Win_allocate and dynamic windows, and
#    attach/detach/re-attach of a dynamic window; every byte checked)
#    prints the same check lines as the plain job (no mlx5_umr component),
#    on an InfiniBand and on a RoCE v2 setup, at np 2 on 2 hosts (and np 4
#    over ob1 on IB);
#  - every rank moved puts and gets zero-copy through target keys, asked
#    for and answered keys, dropped keys at the targets' detaches, with no
#    zero-copy error, and ended with no registration left (pml/umr's line);
#  - the same with the packed path forced (osc_umr_packed=on, IB, np 2):
#    every rank's puts and gets packed, unpacked and served by their
#    targets, nothing zero-copy or refused.
# Results in GoogleTest's format (contrib/test-summary.sh counts them).
#
set -u
. "$(dirname "$0")/mpi_test_env.sh"
prog=$PWD/osc_umr_test
out=$PWD/test_osc_umr_model.out.d
rm -rf "$out"   # nothing of an earlier run (its reference outputs) is reused
mkdir -p "$out"
suite=osc_umr_model

. "$(dirname "$0")/../gtest/gtest_format.sh"
. "$(dirname "$0")/pml_umr_model_env.sh"
. "$(dirname "$0")/osc_umr_range_check.sh"

[ -f "$osc_so" ] || { echo "no $osc_so"; exit 1; }

# every rank: zero-copy (or packed) puts and gets, keys, dynamic windows'
# drops, no error
osc_counters() {   # file np [packed]
    local f=$1 np=$2 how=${3:-zcopy}
    [ "$(grep -c 'osc_umr: rank' "$f")" -eq "$np" ] ||
        { grep "osc_umr: rank" "$f"; echo "not $np osc_umr counter lines"; return 1; }
    grep "osc_umr: rank" "$f" | awk -v how="$how" '{
        for (i = 1; i < NF; ++i) v[$i] = $(i + 1)
        other = (how == "zcopy") ? "packed" : "zcopy"
        if (v[how "_puts"] + 0 <= 0 || v[how "_gets"] + 0 <= 0 ||
            v[other "_puts"] + 0 != 0 || v[other "_gets"] + 0 != 0 ||
            v["packed_refused"] + 0 != 0 ||
            v["key_ready"] + 0 <= 0 || v["key_answers"] + 0 <= 0 ||
            v["attached"] + 0 <= 0 || v["keys_dropped"] + 0 <= 0 ||
            v["zcopy_errors"] + 0 != 0) { print "bad counters: " $0; bad = 1 } }
        END { exit bad }' || return 1
    ! grep -a "pml_umr: rank" "$f" | grep -v "keys_live 0 errors 0"
}

# The plain job is what each case compares with: where it fails by itself
# (Open MPI 5.0's default osc under pml ucx on a host without InfiniBand:
# MPI_Win_create fails with MPI_ERR_WIN with no mlx5_umr component loaded),
# the case is skipped with its error (plain_ok, mpi_test_env.sh): osc/umr is
# not the cause.
done_line="osc_umr_test: 0 failure(s)"

identical() {   # link np pml [zcopy|packed]
    local link=$1 np=$2 pml=$3 how=${4:-zcopy} got=$out/model-$1-$2-$3-${4:-zcopy} args=(-np "$2")
    local packed=off
    [ "$how" = packed ] && packed=on
    # under pml ucx the wrapped osc may be osc/ucx (Open MPI 6.0's default
    # there), which writes an out-of-window put past the window
    # (osc_umr_test.c): the plain job leaves that bad-input case out; the
    # job with osc/umr runs it (osc/umr refuses it: MPI_ERR_RMA_RANGE)
    if [ "$pml" = ucx ]; then
        OSC_UMR_TEST_NO_OUT_OF_WINDOW=1 ref "$np" "$pml"
    else
        ref "$np" "$pml"
    fi
    plain_ok "$out/ref-$np-$pml" $? || return
    if [ "$pml" = ucx ]; then args+=(--mca pml ucx,umr "${ucx_args[@]}")
    else args+=(--mca pml ob1,umr); fi
    args+=(-x OSC_UMR_TEST_RANGE=1)
    # zero-copy, or the packed path forced, on the mlx5 engine
    model "$got" OMPI_MCA_osc_umr_verbose=1 OMPI_MCA_osc_umr_packed=$packed -- --link "$link" --hosts 2 -- \
        "${args[@]}" "$prog" || { tail -20 "$got"; return 1; }
    grep -q "osc_umr_test: 0 failure(s)" "$got" || { tail -20 "$got"; return 1; }
    if [ "$pml" = ucx ]; then
        diff <(checks_but_range "$out/ref-$np-$pml") <(checks_but_range "$got") ||
            { echo "results differ, per rank ($out/ref-$np-$pml.ranks vs $got.ranks)"; return 1; }
    else
        same_checks "$out/ref-$np-$pml" "$got" || return 1
    fi
    range_refused_ok "$got" "$np" && osc_counters "$got" "$np" "$how"
}

for link in ib roce; do
    check "identical_${link}_np2_ob1_zcopy" identical "$link" 2 ob1
done
check identical_roce_np2_ucx_zcopy identical roce 2 ucx
check identical_ib_np4_ob1_zcopy identical ib 4 ob1
check identical_ib_np2_ob1_packed identical ib 2 ob1 packed
finish
