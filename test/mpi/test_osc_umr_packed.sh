#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# osc/umr's packed path (osc_umr_packed.h) with real MPI jobs (sw engine):
#
#  - osc_umr_packed=on: osc_umr_test's small vector (256 bytes: sent with
#    the header), vector, subarray, indexed and struct-with-resized-bounds
#    targets, contiguous and vector origins, fence, lock/unlock,
#    lock_all/flush, PSCW and Rput/Rget + Wait, over MPI_Win_create,
#    MPI_Win_allocate and dynamic windows, np 2 and 4: the plain job's check
#    lines (every byte of window and origin buffer, gaps and guards), puts
#    and gets packed on every rank, each unpacked or answered by its target,
#    nothing zero-copy, nothing refused, no error, no registration left;
#    over pml ucx as well;
#  - the choice without a costs file (the built-in rule): 8-byte blocks go
#    packed; with osc_umr_packed_max_block=16, 32-byte blocks zero-copy and
#    8-byte ones packed in the same job;
#  - the choice from a costs file with packed figures: packed cheapest ->
#    packed (the trace gives the three estimates), packed dearest ->
#    zero-copy; the plain job's check lines;
#  - passive target (OSC_UMR_TEST_PASSIVE): the even ranks lock, put/get and
#    unlock while the odd ones wait in MPI_Barrier, and in the last round
#    go straight into MPI_Win_free: every job ends, the plain job's checks,
#    packed operations moved and served, np 2 and 4;
#  - faults (osc_umr_test_fault): pkt (the target takes no packed bytes:
#    every packed op refused and redone through the wrapped module), psend
#    (no header can be sent: every op through the wrapped module at once),
#    pdata (a put's bytes apart not posted at first: posted again from
#    progress): the plain job's check lines, the counters saying which;
#  - osc_umr_packed=off: nothing packed; ompi_info lists the parameters and
#    the fault points.
# Results in GoogleTest's format (contrib/test-summary.sh counts them).
#
set -u
. "$(dirname "$0")/mpi_test_env.sh"
ln -sf "$osc_so" "$scratch/"
prog=$PWD/osc_umr_test
out=$PWD/test_osc_umr_packed.out.d
rm -rf "$out"
mkdir -p "$out/cache"
suite=osc_umr_packed
. "$(dirname "$0")/../gtest/gtest_format.sh"
. "$(dirname "$0")/osc_umr_lib.sh"

# no costs file of this host's (the built-in rule) unless a case names one
osc_env=("${umr_env[@]}" OMPI_MCA_osc_umr_verbose=1 XDG_CACHE_HOME="$out/cache")
done_line="osc_umr_test: 0 failure(s)"
all_cases=OSC_UMR_TEST_CASES=vsmall,vector,subarray,indexed,struct_resized
ucx_args=(--mca pml ucx,umr --mca pml_ucx_tls any --mca pml_ucx_devices any)

# The plain job of these settings once (osc_umr_enable=0): $out/ref-NAME.
ref() {   # name env... -- mpirun args...
    local name=$1 f=$out/ref-$1 rc=0; shift
    [ -s "$f" ] && return 0
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    run "$f" "${osc_env[@]}" OMPI_MCA_osc_umr_enable=0 "${envs[@]}" -- "$@" || rc=$?
    plain_ok "$f" $rc
}

# Every rank packed puts and gets, its targets took them, nothing else.
packed_ran() {   # file np
    local f=$1 np=$2 c
    for c in windows_wrapped packed_puts packed_gets packed_bytes packed_unpacked \
             packed_served key_ready; do
        counter_each_rank "$f" $c "$np" || return 1
    done
    for c in zcopy_puts zcopy_gets packed_refused packed_tgt_refused zcopy_errors \
             key_refused; do
        counter_each_rank "$f" $c "$np" 0 || return 1
    done
    ! grep "pml_umr: rank [0-9]*: zcopy_sends" "$f" | grep -v "keys_live 0 errors 0"
}

forced() {   # np [ucx]
    local np=$1 pml=${2:-ob1} f=$out/on-$1-${2:-ob1} args=()
    [ "$pml" = ucx ] && args=("${ucx_args[@]}")
    ref "cases-$np-$pml" $all_cases -- -np "$np" "${args[@]}" || return
    run "$f" "${osc_env[@]}" OMPI_MCA_osc_umr_packed=on $all_cases -- -np "$np" "${args[@]}" ||
        { tail -30 "$f"; return 1; }
    same_checks "$out/ref-cases-$np-$pml" "$f" && packed_ran "$f" "$np" &&
        grep -q "^check put vsmall win=dynamic origin=vector sync=pscw round=3 rank 0: ok" "$f"
}

builtin_rule() {
    local f=$out/builtin
    ref small OSC_UMR_TEST_CASES=vsmall,vector -- -np 2 || return
    run "$f" "${osc_env[@]}" OSC_UMR_TEST_CASES=vsmall,vector -- -np 2 ||
        { tail -30 "$f"; return 1; }
    same_checks "$out/ref-small" "$f" && packed_ran "$f" 2
}

builtin_threshold() {   # 32-byte blocks over the threshold, 8-byte ones under
    local f=$out/threshold c
    ref small OSC_UMR_TEST_CASES=vsmall,vector -- -np 2 || return
    run "$f" "${osc_env[@]}" OMPI_MCA_osc_umr_packed_max_block=16 OMPI_MCA_osc_umr_verbose=10 \
        OSC_UMR_TEST_CASES=vsmall,vector -- -np 2 || { tail -30 "$f"; return 1; }
    same_checks "$out/ref-small" "$f" || return 1
    for c in packed_puts packed_gets zcopy_puts zcopy_gets; do
        counter_each_rank "$f" $c 2 || return 1
    done
    # the vector with a contiguous origin (32-byte blocks), with a vector
    # origin (pairs: 16 bytes)
    grep -q "osc_umr: put to [01]: 16384 bytes, mean block 32 B: zero-copy (built-in rule" "$f" &&
        grep -q "osc_umr: put to [01]: 16384 bytes, mean block 16 B: packed (built-in rule" "$f" ||
        { echo "no built-in rule in the trace"; grep "built-in rule" "$f" | head; return 1; }
}

costs_choice() {   # packed op_ns, expected: packed|zero-copy
    local kop=$1 want=$2 f=$out/costs-$2 cfile=$out/costs-$2.conf c
    costs_file wins "$cfile" "$kop"
    ref small OSC_UMR_TEST_CASES=vsmall,vector -- -np 2 || return
    run "$f" "${osc_env[@]}" OMPI_MCA_osc_umr_verbose=10 OMPI_MCA_pml_umr_cost_file="$cfile" \
        OSC_UMR_TEST_CASES=vsmall,vector -- -np 2 || { tail -30 "$f"; return 1; }
    same_checks "$out/ref-small" "$f" || return 1
    grep -q "osc_umr: [a-z]* to [01]: .* zero-copy [0-9]* ns (sw engine), packed $kop ns, against [0-9]* ns through osc/[a-z]* (local, .*): $want$" "$f" ||
        { echo "no three estimates choosing $want in the trace"; grep "ns through" "$f" | head -3; return 1; }
    if [ "$want" = packed ]; then
        packed_ran "$f" 2
    else
        for c in zcopy_puts zcopy_gets; do counter_each_rank "$f" $c 2 || return 1; done
        for c in packed_puts packed_gets; do counter_each_rank "$f" $c 2 0 || return 1; done
    fi
}

passive() {   # np
    local np=$1 f=$out/passive-$1
    ref "passive-$np" OSC_UMR_TEST_PASSIVE=1 OSC_UMR_TEST_CASES=vsmall,vector -- -np "$np" ||
        return
    run "$f" "${osc_env[@]}" OSC_UMR_TEST_PASSIVE=1 OSC_UMR_TEST_CASES=vsmall,vector \
        -- -np "$np" || { echo "the job failed or hung"; tail -30 "$f"; return 1; }
    same_checks "$out/ref-passive-$np" "$f" || return 1
    grep -q "^check passive put vector round=4 target_in=win_free rank 1: ok" "$f" ||
        { echo "no check after MPI_Win_free"; return 1; }
    counter_sum "$f" packed_puts && counter_sum "$f" packed_gets &&
        counter_sum "$f" packed_unpacked && counter_sum "$f" packed_served &&
        counter_each_rank "$f" packed_tgt_refused "$np" 0
}

fault() {   # point
    local p=$1 f=$out/fault-$1 c
    ref small OSC_UMR_TEST_CASES=vsmall,vector -- -np 2 || return
    run "$f" "${osc_env[@]}" OMPI_MCA_osc_umr_packed=on OMPI_MCA_osc_umr_test_fault=$p \
        OSC_UMR_TEST_CASES=vsmall,vector -- -np 2 || { echo "the job failed or hung"; tail -30 "$f"; return 1; }
    same_checks "$out/ref-small" "$f" || return 1
    counter_each_rank "$f" zcopy_errors 2 0 || return 1
    case $p in
        pkt)   # sent, refused by the target, redone through the wrapped module
            for c in packed_puts packed_gets packed_refused packed_tgt_refused; do
                counter_each_rank "$f" $c 2 || return 1
            done
            for c in packed_unpacked packed_served; do counter_each_rank "$f" $c 2 0 || return 1; done ;;
        psend) # never sent
            for c in packed_puts packed_gets packed_unpacked; do counter_each_rank "$f" $c 2 0 || return 1; done
            counter_each_rank "$f" passthrough 2 ;;
        pdata) # the bytes' send posted again: every put taken
            packed_ran "$f" 2 ;;
    esac
}

packed_off() {
    local f=$out/off
    ref small OSC_UMR_TEST_CASES=vsmall,vector -- -np 2 || return
    run "$f" "${osc_env[@]}" OMPI_MCA_osc_umr_packed=off OSC_UMR_TEST_CASES=vsmall,vector \
        -- -np 2 || return 1
    same_checks "$out/ref-small" "$f" && counter_each_rank "$f" packed_puts 2 0 &&
        counter_each_rank "$f" packed_gets 2 0 && counter_each_rank "$f" zcopy_puts 2
}

ompi_info_lists() {
    env "${umr_env[@]}" ompi_info --param osc umr --level 9 >"$out/ompi_info" 2>&1 || return 1
    grep -q '"osc_umr_packed"' "$out/ompi_info" && grep -q '"osc_umr_packed_max_block"' "$out/ompi_info" ||
        { echo "no osc_umr_packed / osc_umr_packed_max_block"; return 1; }
    grep -A4 "osc_umr_test_fault" "$out/ompi_info" | tr -d '\n' | tr -s ' ' |
        grep -q "drain, pkt, psend, pdata" || { echo "the packed fault points are not named"; return 1; }
}

check forced_np2 forced 2
check forced_np4 forced 4
check forced_np2_ucx forced 2 ucx
check builtin_rule builtin_rule
check builtin_threshold builtin_threshold
check costs_packed_wins costs_choice 0 packed
check costs_packed_loses costs_choice 100000000 zero-copy
check passive_np2 passive 2
check passive_np4 passive 4
for point in pkt psend pdata; do
    check fault_$point fault $point
done
check packed_off packed_off
check ompi_info_lists ompi_info_lists
finish
