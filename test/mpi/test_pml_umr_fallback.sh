#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# pml/umr never costs a job anything (issue 18), with real MPI jobs on the
# sw engine:
#  - every fault point of the receiver's zero-copy path (pml_umr_test_fault:
#    connect, key, mdwait, post, completion) falls back: pml_umr_test gives
#    the same results as without pml/umr, the fallback counters are not 0,
#    no key is left and no error counted, over ob1 and ucx, -np 2 and 4;
#  - the receiver declines by cost when it knows both layouts: a transpose
#    (sender: subarray rows; receiver: single doubles) with a costs file in
#    which the sender's side alone would win, every element checked
#    (bench_mpi_apps -a transpose): declined and sent through the wrapped
#    PML, nothing received zero-copy;
#  - every fault point inside the engine (UCX_MLX5_UMR_TEST_FAULT of the
#    test variant, engine_fault.h: connect, post, completion, key, mdwait) on
#    the sw engine: pml_umr_test gives the same results as without pml/umr,
#    fallbacks + fault_declines + fallback_sends is not 0, no key is left
#    and no error counted, over ob1 and ucx, -np 2 and 4 (the mlx5 engine
#    on the rdma-core model: test_pml_umr_model_faults.sh);
#  - an md UMR timeout (mdwait, either knob) retires the rail: one line a
#    process, the counter rails_retired; no other fault point does;
#  - a type made for one message and freed is not decoded to be passed
#    through: the particle exchange (bench_mpi_apps -a particles: a fresh
#    indexed type of 48-byte particles per message, MPI_Probe) with a costs
#    file in which zero-copy wins for large blocks: decoded 0, every
#    candidate counted as prefiltered;
#  - nor is a dense type made for one message (bench_mpi_calls -k fresh: a
#    vector of 64 B blocks at a 128 B stride, 64 KiB) when the costs let
#    only sparse layouts win (contrib/passthrough-cost-choose.conf): Open
#    MPI's size and extent tell its density class before any decoding;
#    decoded 0, prefiltered > 0, nothing zero-copy, every message checked.
# Results in GoogleTest's format.
#
set -u
. "$(dirname "$0")/mpi_test_env.sh"
out=$PWD/test_pml_umr_fallback.out.d
rm -rf "$out"   # nothing of an earlier run (its reference outputs) is reused
mkdir -p "$out"
suite=pml_umr_fallback
. "$(dirname "$0")/../gtest/gtest_format.sh"
test_prog=$PWD/pml_umr_test
apps_prog=$PWD/bench_mpi_apps
calls_prog=$PWD/bench_mpi_calls
ucx_plain=(--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any)
ucx_umr=(--mca pml ucx,umr --mca pml_ucx_tls any --mca pml_ucx_devices any)

pml_args() {   # pml, umr(0|1)
    if [ "$1" = ucx ]; then
        [ "$2" = 1 ] && echo "${ucx_umr[@]}" || echo "${ucx_plain[@]}"
    else
        [ "$2" = 1 ] && echo "--mca pml ob1,umr" || echo "--mca pml ob1"
    fi
}

# sum of counter NAME over the ranks' counter lines of FILE
counter() {
    grep "pml_umr: rank [0-9]*: zcopy_sends" "$1" | grep -o " $2 [0-9]*" | awk '{s += $2} END {print s + 0}'
}

clean_end() {   # file: counters printed, no key left, no error
    [ "$(grep -c 'pml_umr: rank [0-9]*: zcopy_sends' "$1")" -gt 0 ] || { echo "no counters in $1"; tail "$1"; return 1; }
    ! grep "pml_umr: rank [0-9]*: zcopy_sends" "$1" | grep -v "keys_live 0 errors 0"
}


fault() {   # point, pml, np
    local ref=$out/ref-$2-$3 got=$out/fault-$1-$2-$3 n
    prog=$test_prog
    # shellcheck disable=SC2046 # word lists
    [ -f "$ref" ] || run "$ref" -- -np "$3" $(pml_args "$2" 0) || { tail "$ref"; return 1; }
    # shellcheck disable=SC2046
    run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=on \
        OMPI_MCA_pml_umr_test_fault="$1" -- -np "$3" $(pml_args "$2" 1) ||
        { tail -20 "$got"; return 1; }
    same_checks "$ref" "$got" && clean_end "$got" || return 1
    for n in fault_declines fallback_sends retired; do
        [ "$(counter "$got" $n)" -gt 0 ] || { echo "$n 0 with fault $1"; return 1; }
    done
    # the peers were retired: one verbose line each, naming the rank
    grep -q "rank [0-9]* retired to pass-through" "$got" || { echo "no retirement line"; return 1; }
    rail_retired "$1" "$got"
}

# An md UMR timeout is the rail's: retired once (one line, rails_retired)
# where it happened, every peer on it passes through; a fault of one peer
# (connect, key, post, completion) leaves the rail.
rail_retired() {   # point, file
    local r
    r=$(counter "$2" rails_retired)
    echo "rails_retired $r"
    if [ "${1%%:*}" = mdwait ]; then
        [ "$r" -gt 0 ] && [ "$(grep -c 'rail sw retired to pass-through (every peer on it)' "$2")" -eq "$r" ] ||
            { grep "retired" "$2" | head; echo "md timeout: the rail not retired once"; return 1; }
    else
        [ "$r" -eq 0 ] || { grep "rail .* retired" "$2" | head -3; echo "a peer's fault retired the rail"; return 1; }
    fi
}

# A fault inside the sw engine (every rank, every call of the point after
# the first AFTER): the plain job's results, some fallback counted.
engine_fault() {   # point[:after], pml, np
    local ref=$out/ref-$2-$3 got=$out/engine-${1/:/_}-$2-$3 n
    prog=$test_prog
    # shellcheck disable=SC2046 # word lists
    [ -f "$ref" ] || run "$ref" -- -np "$3" $(pml_args "$2" 0) || { tail "$ref"; return 1; }
    # shellcheck disable=SC2046
    run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=on UCX_MLX5_UMR_ENGINE=sw \
        UCX_MLX5_UMR_TEST_FAULT="$1" -- -np "$3" $(pml_args "$2" 1) ||
        { echo "job failed"; tail -20 "$got"; return 1; }
    same_checks "$ref" "$got" && clean_end "$got" || return 1
    n=$(( $(counter "$got" fallbacks) + $(counter "$got" fault_declines) +
          $(counter "$got" fallback_sends) ))
    echo "$1 $2 np $3: fallbacks $(counter "$got" fallbacks) fault_declines" \
         "$(counter "$got" fault_declines) fallback_sends $(counter "$got" fallback_sends)" \
         "zcopy_recvs $(counter "$got" zcopy_recvs)"
    [ "$n" -gt 0 ] || { echo "no fallback counted with engine fault $1"; grep "pml_umr: rank" "$got"; return 1; }
    rail_retired "$1" "$got"
}

# sw costs 250 ns a block on either side, nothing else; the wrapped
# PML a nanosecond a byte: zero-copy wins from about 600 B blocks on.
costs_blocks() {
    local f=$out/costs-blocks.conf op d b pml
    {
        echo "version = 1"
        for op in get put; do for d in dense sparse; do
            echo "engine.sw.$op.$d.op_ns = 0"
            echo "engine.sw.$op.$d.rentry_ns = 250"
            echo "engine.sw.$op.$d.lentry_ns = 250"
            echo "engine.sw.$op.$d.byte_ns = 0"
        done; done
        costs_wrapped_pml
    } >"$f"
    echo "$f"
}

# The sender's rows are 2 KiB (it would go zero-copy), the receiver's
# blocks single doubles (65,536 of them: it declines).
decline_transpose() {   # pml
    local got=$out/decline-$1 costs
    costs=$(costs_blocks)
    prog=$apps_prog
    # shellcheck disable=SC2046
    run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=auto \
        OMPI_MCA_pml_umr_cost_file="$costs" -- -np 2 $(pml_args "$1" 1) \
        -- -a transpose -r 3 -S 256 -M 1024 || { tail -20 "$got"; return 1; }
    grep -q "^APP transpose .* ok$" "$got" && clean_end "$got" || { tail "$got"; return 1; }
    [ "$(counter "$got" zcopy_sends)" -gt 0 ] || { echo "nothing offered zero-copy"; return 1; }
    [ "$(counter "$got" declined)" -eq "$(counter "$got" zcopy_sends)" ] &&
        [ "$(counter "$got" fallback_sends)" -eq "$(counter "$got" zcopy_sends)" ] &&
        [ "$(counter "$got" zcopy_recvs)" -eq 0 ] &&
        [ "$(counter "$got" retired)" -eq 0 ] ||
        { grep "pml_umr: rank" "$got"; return 1; }
}

# 48-byte particles: far below the 600 B blocks zero-copy needs
fresh_types_not_decoded() {   # pml
    local got=$out/fresh-$1 costs
    costs=$(costs_blocks)
    prog=$apps_prog
    # shellcheck disable=SC2046
    run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=auto \
        OMPI_MCA_pml_umr_cost_file="$costs" -- -np 2 $(pml_args "$1" 1) \
        -- -a particles -r 20 -N 4000 -P 2000 || { tail -20 "$got"; return 1; }
    grep -q "^APP particles .* ok$" "$got" && clean_end "$got" || { tail "$got"; return 1; }
    [ "$(counter "$got" decoded)" -eq 0 ] && [ "$(counter "$got" prefiltered)" -gt 0 ] &&
        [ "$(counter "$got" zcopy_sends)" -eq 0 ] || { grep "pml_umr: rank" "$got"; return 1; }
}

# A dense vector, fresh for each message: sparse layouts would go zero-copy
# at any size, dense ones never.
fresh_dense_not_decoded() {   # pml
    local got=$out/fresh-dense-$1
    prog=$calls_prog
    # shellcheck disable=SC2046
    run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=auto \
        OMPI_MCA_pml_umr_cost_file="$(dirname "$0")/../../contrib/passthrough-cost-choose.conf" \
        -- -np 2 $(pml_args "$1" 1) -- -n 20 -w 2 -k fresh || { tail -20 "$got"; return 1; }
    [ "$(grep -c "^PHASE fresh .* ok$" "$got")" -ge 3 ] && clean_end "$got" || { tail "$got"; return 1; }
    echo "decoded $(counter "$got" decoded) prefiltered $(counter "$got" prefiltered)"
    [ "$(counter "$got" decoded)" -eq 0 ] && [ "$(counter "$got" prefiltered)" -ge 22 ] &&
        [ "$(counter "$got" zcopy_sends)" -eq 0 ] || { grep "pml_umr: rank" "$got"; return 1; }
}

for pml in ob1 ucx; do
    check "fresh_types_not_decoded_$pml" fresh_types_not_decoded $pml
    check "fresh_dense_not_decoded_$pml" fresh_dense_not_decoded $pml
    check "decline_transpose_$pml" decline_transpose $pml
done
for point in ${UMR_FAULT_POINTS:-connect key mdwait post completion}; do
    for pml in ob1 ucx; do
        for np in 2 4; do
            check "fault_${point}_${pml}_np$np" fault "$point" "$pml" "$np"
        done
    done
done
for point in ${UMR_ENGINE_FAULT_POINTS:-connect post completion key mdwait}; do
    for pml in ob1 ucx; do
        for np in 2 4; do
            check "engine_fault_${point}_${pml}_np$np" engine_fault "$point" "$pml" "$np"
        done
    done
done
finish
