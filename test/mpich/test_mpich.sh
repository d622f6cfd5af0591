#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# libumr_mpich.so in real MPICH jobs (mpiexec.mpich, sw engine), each rank's
# output compared with the same rank's output of the job without it:
#  - unmodified programs shaped like users' (p2p_test: halo faces, an open
#    Cartesian Neighbor_alltoallw with subarray faces, an Alltoallw
#    transpose, probes, persistent requests, wildcards, truncation, send
#    modes, intercommunicators, ...; bench_mpi_apps: particles in a fresh
#    indexed type per message received with MPI_Probe + MPI_Get_count, and a
#    transpose whose two sides differ; armci_test: ARMCI-style strided
#    get/put in lock_all/flush; rma_test: put/get of derived types on every
#    kind of window and epoch) print the same check lines on every rank with
#    and without the library, at np 2 and 4, zero-copy forced and at the
#    defaults, and every rank printed its counters once;
#  - the same program linked with the library before MPICH's (no preload)
#    runs it: the counters of every rank;
#  - another PMPI tool preloaded after the library (pmpi_count) sees every
#    send the program makes, as many as when it is alone;
#  - bad values of UMR_MPICH_ZCOPY, _MIN_SIZE, _VERBOSE and _ENABLE: the job
#    as without the library, one line a rank naming the variable, nothing
#    else of the library; UMR_MPICH_ENABLE=0: nothing of it at all; an
#    unknown UMR_MPICH_* variable: one line a rank naming it and the known
#    ones; MPI_THREAD_MULTIPLE: one line a rank, the job as without it;
#  - UCX's warning of unused UCX_* variables on: no rank warns of the
#    transport's UCX_MLX5_UMR_ENGINE (MPICH alone does).
# Results in GoogleTest's format (contrib/test-summary.sh counts them).
#
set -u
. "$(dirname "$0")/mpich_test_env.sh"
out=$PWD/test_mpich.out.d
rm -rf "$out"   # nothing of an earlier run (its reference outputs) is reused
mkdir -p "$out"
suite=mpich
. "$(dirname "$0")/../gtest/gtest_format.sh"

# the programs and their arguments
p2p_cases="halo neighbor_open alltoallw probe persistent wildcards truncation
indexed modes intercomm fresh retype blocking reqops bcast"
declare -A prog_of=([p2p]=p2p_test [particles]=bench_mpi_apps
                    [transpose]=bench_mpi_apps [armci]=armci_test
                    [rma]=rma_test)
declare -A args_of=([p2p]="$p2p_cases" [particles]="-a particles -r 20"
                    [transpose]="-a transpose -r 10" [armci]="" [rma]="")
declare -A done_of=([particles]="APP particles .* ok"
                    [transpose]="APP transpose .* ok"
                    [armci]="osc_umr_armci: 0 failure(s)")
# MPICH, like osc/ucx, has no range check for created windows: the case
# that puts past the window is left out of both jobs
declare -A env_of=([rma]="OSC_UMR_TEST_NO_OUT_OF_WINDOW 1")

# job NAME P FILE NP [mpiexec args]: program P's job
job() {
    local p=$2 file=$3 np=$4 e=()
    shift 4
    prog=$PWD/${prog_of[$p]}
    [ -z "${env_of[$p]:-}" ] || e=(-genv ${env_of[$p]})
    # shellcheck disable=SC2086
    run "$file" "$np" "${e[@]}" "$@" -- ${args_of[$p]}
}

# the job without the library, once per program and np
plain() {   # p np
    local f=$out/plain-$1-$2
    [ -f "$f" ] && return 0
    job plain "$1" "$f" "$2" || { echo "the plain job failed ($f)"; tail "$f"; rm -f "$f"; return 1; }
}

# forced: every rank moved messages zero-copy (the programs with
# point-to-point messages of derived types), and every rank ended with no
# registration, no held message and no error
declare -A zcopy_of=([p2p]=1 [particles]=1 [transpose]=1)
zcopy_each_rank() {   # file
    local r n
    for r in $(seq 0 $(($(nranks "$1") - 1))); do
        n=$(( $(counter "$1" $r zcopy_sends) + $(counter "$1" $r zcopy_recvs) ))
        [ "$n" -gt 0 ] || { echo "rank $r: nothing zero-copy"; return 1; }
    done
}
clean_end() {   # file
    local r
    for r in $(seq 0 $(($(nranks "$1") - 1))); do
        [ "$(counter "$1" $r keys_live)" = 0 ] && [ "$(counter "$1" $r held)" = 0 ] &&
            [ "$(counter "$1" $r errors)" = 0 ] ||
            { echo "rank $r:"; rank_lines "$1" $r | grep "umr_mpich: rank"; return 1; }
    done
}

identical() {   # p np mode
    local p=$1 np=$2 mode=$3 got=$out/umr-$1-$2-$3 z=()
    plain "$p" "$np" || return 1
    [ "$mode" = forced ] && z=(-genv UMR_MPICH_ZCOPY on)
    job umr "$p" "$got" "$np" "${umr_env[@]}" "${z[@]}" ||
        { echo "job failed ($got)"; tail -20 "$got"; return 1; }
    done_line=${done_of[$p]:-} same_checks "$out/plain-$p-$np" "$got" &&
        counters_each_rank "$got" && clean_end "$got" || return 1
    if [ "$mode" = forced ] && [ -n "${zcopy_of[$p]:-}" ]; then
        zcopy_each_rank "$got"
    fi
}

# (rma_test, one-sided calls MPICH carries itself, at np 2 only: 5 min at
# np 4 on 2 loaded cores)
for p in p2p particles transpose armci rma; do
    for np in 2 4; do
        [ "$p" = rma ] && [ "$np" = 4 ] && continue
        for mode in default forced; do
            check "identical_${p}_np${np}_$mode" identical "$p" "$np" "$mode"
        done
    done
done

# MPI_Neighbor_alltoallw on a periodic Cartesian communicator of 2 x 2
# ranks (every neighbour there twice): MPICH alone mixes the two messages
# of a neighbour up; through the binding each lands in its slot
neighbor_periodic() {
    local got=$out/neighbor-periodic
    prog=$PWD/p2p_test
    run "$got" 4 "${umr_env[@]}" -genv UMR_MPICH_ZCOPY on -- neighbor ||
        { echo "job failed ($got)"; tail -20 "$got"; return 1; }
    grep -q "$failed_lines" "$got" && { grep "$failed_lines" "$got" | head; return 1; }
    [ "$(grep -c '^check neighbor rank' "$got")" -eq 4 ] || { echo "not 4 results"; return 1; }
    zcopy_each_rank "$got" && clean_end "$got"
}
check neighbor_periodic neighbor_periodic

# A fault on the zero-copy path (the core's test faults, test builds):
# the data comes through MPICH instead (the receiver declines, the sender
# sends it on the private communicator), the peer is retired, and every
# rank prints what it printed without the library.
fault() {   # point
    local got=$out/fault-$1 r sum=0 ret=0
    hooks_built || return 1
    plain p2p 2 || return 1
    prog=$PWD/p2p_test
    run "$got" 2 "${umr_hooks_env[@]}" -genv UMR_MPICH_ZCOPY on \
        -genv UMR_MPICH_TEST_FAULT "$1" -- $p2p_cases ||
        { echo "job failed ($got)"; tail -20 "$got"; return 1; }
    same_checks "$out/plain-p2p-2" "$got" && counters_each_rank "$got" &&
        clean_end "$got" || return 1
    for r in 0 1; do
        sum=$((sum + $(counter "$got" $r fault_declines) + $(counter "$got" $r fallback_sends)))
        ret=$((ret + $(counter "$got" $r retired)))
    done
    [ "$sum" -gt 0 ] && [ "$ret" -gt 0 ] ||
        { echo "no fallback ($sum) or no retirement ($ret)"; grep "umr_mpich: rank" "$got"; return 1; }
}
for point in connect key mdwait post completion; do
    check "fault_$point" fault "$point"
done

# linked before MPICH's library instead of preloaded
linked() {
    local got=$out/linked
    plain p2p 2 || return 1
    prog=$PWD/p2p_test_linked
    run "$got" 2 -genv UMR_MPICH_VERBOSE 1 -genv UMR_MPICH_ZCOPY on \
        -genv UMR_MPICH_UCT_MODULE "$umr_module" -- $p2p_cases ||
        { echo "job failed ($got)"; tail -20 "$got"; return 1; }
    same_checks "$out/plain-p2p-2" "$got" && counters_each_rank "$got" &&
        zcopy_each_rank "$got"
}
check linked linked

# another PMPI tool after the library: it counts every send, as alone
stacked() {
    local tool=$PWD/.libs/libpmpi_count.so r a b
    prog=$PWD/p2p_test
    # (sanitizer builds: their runtimes first, as for the library)
    run "$out/tool" 2 -genv LD_PRELOAD "${UMR_PRELOAD_EXTRA:+$UMR_PRELOAD_EXTRA:}$tool" -- halo modes probe ||
        { tail "$out/tool"; return 1; }
    run "$out/stacked" 2 "${umr_env[@]}" -genv LD_PRELOAD "$umr_preload:$tool" \
        -- halo modes probe || { tail "$out/stacked"; return 1; }
    same_checks "$out/tool" "$out/stacked" && counters_each_rank "$out/stacked" || return 1
    for r in 0 1; do
        a=$(rank_lines "$out/tool" $r | grep "^pmpi_count: rank $r: sends [1-9]")
        b=$(rank_lines "$out/stacked" $r | grep "^pmpi_count: rank $r: sends")
        [ -n "$a" ] && [ "$a" = "$b" ] || { echo "rank $r: alone '$a', after the library '$b'"; return 1; }
    done
}
check stacked stacked

# VAR=VALUE refused: the job as without the library, one line a rank
# naming the variable, no counters
refused() {   # var value
    local got=$out/refused-$1 r n
    plain p2p 2 || return 1
    prog=$PWD/p2p_test
    local env=("${umr_env[@]}")
    [ -z "${lib_env+x}" ] || env=("${lib_env[@]}")   # the caller's library
    run "$got" 2 "${env[@]}" -genv "$1" "$2" -- $p2p_cases ||
        { tail -20 "$got"; return 1; }
    same_checks "$out/plain-p2p-2" "$got" || return 1
    for r in 0 1; do
        n=$(rank_lines "$got" $r | grep -c "^umr_mpich: rank $r: $1='$2' is not valid (expected .*): everything passes through")
        [ "$n" -eq 1 ] || { echo "rank $r: $n lines naming $1"; rank_lines "$got" $r | grep umr_mpich; return 1; }
        [ "$(rank_lines "$got" $r | grep -c '^umr_mpich')" -eq 1 ] ||
            { echo "rank $r: more of the library"; rank_lines "$got" $r | grep umr_mpich; return 1; }
    done
}
check refused_zcopy refused UMR_MPICH_ZCOPY maybe
check refused_min_size refused UMR_MPICH_MIN_SIZE 4x
check refused_verbose refused UMR_MPICH_VERBOSE -1
check refused_enable refused UMR_MPICH_ENABLE 2

# a run whose output holds nothing of the library but LINE (one a rank)
only_line() {   # file line-pattern|''
    local r
    for r in $(seq 0 $(($(nranks "$1") - 1))); do
        if [ -n "$2" ]; then
            [ "$(rank_lines "$1" $r | grep -c "^umr_mpich: rank $r: $2")" -eq 1 ] ||
                { echo "rank $r: no line '$2'"; return 1; }
        fi
        [ "$(rank_lines "$1" $r | grep -c '^umr_mpich')" -eq $([ -n "$2" ] && echo 1 || echo 0) ] ||
            { echo "rank $r: more of the library"; rank_lines "$1" $r | grep umr_mpich; return 1; }
    done
}

disabled() {
    local got=$out/disabled
    plain p2p 2 || return 1
    prog=$PWD/p2p_test
    run "$got" 2 "${umr_env[@]}" -genv UMR_MPICH_ENABLE 0 -- $p2p_cases ||
        { tail -20 "$got"; return 1; }
    same_checks "$out/plain-p2p-2" "$got" && only_line "$got" ""
}
check disabled disabled

refused_fault() {
    hooks_built || return 1
    local lib_env=("${umr_hooks_env[@]}")
    refused UMR_MPICH_TEST_FAULT key,bogus
}
check refused_test_fault refused_fault

unknown_variable() {
    local got=$out/unknown r
    prog=$PWD/p2p_test
    run "$got" 2 "${umr_env[@]}" -genv UMR_MPICH_ZCOP on -- halo ||
        { tail -20 "$got"; return 1; }
    for r in 0 1; do
        rank_lines "$got" $r | grep -q "^umr_mpich: rank $r: unknown variable UMR_MPICH_ZCOP (known: UMR_MPICH_ENABLE UMR_MPICH_ZCOPY .*)" ||
            { echo "rank $r: no line naming UMR_MPICH_ZCOP"; return 1; }
    done
    counters_each_rank "$got"
}
check unknown_variable unknown_variable

thread_multiple() {
    local ref=$out/plain-tm got=$out/umr-tm
    prog=$PWD/p2p_test
    run "$ref" 2 -genv PML_UMR_TEST_THREAD_MULTIPLE 1 -- $p2p_cases || { tail "$ref"; return 1; }
    run "$got" 2 -genv PML_UMR_TEST_THREAD_MULTIPLE 1 "${umr_env[@]}" -- $p2p_cases ||
        { tail -20 "$got"; return 1; }
    same_checks "$ref" "$got" &&
        only_line "$got" "MPI_THREAD_MULTIPLE: everything passes through"
}
check thread_multiple thread_multiple

# UCX's warning of unused variables on (its default): MPICH alone calls the
# transport's UCX_MLX5_UMR_ENGINE unused (nothing of its reads it); with the
# library no rank prints that line, the library having read its variables
# before MPICH's UCP worker looked
quiet_variables() {
    local ref=$out/plain-quiet got=$out/umr-quiet r warn='UCX  WARN  unused env variable'
    prog=$PWD/p2p_test
    run "$ref" 2 -genv UCX_WARN_UNUSED_ENV_VARS y -- halo || { tail "$ref"; return 1; }
    grep -q "$warn.*UCX_MLX5_UMR_ENGINE" "$ref" ||
        { echo "MPICH alone printed no unused-variable warning: nothing to compare"; return 1; }
    run "$got" 2 -genv UCX_WARN_UNUSED_ENV_VARS y "${umr_env[@]}" -- halo ||
        { tail -20 "$got"; return 1; }
    same_checks "$ref" "$got" || return 1
    for r in 0 1; do
        ! rank_lines "$got" $r | grep "$warn" ||
            { echo "rank $r: the warning above"; return 1; }
    done
}
check quiet_variables quiet_variables
finish
