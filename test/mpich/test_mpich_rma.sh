#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# libumr_mpich.so's one-sided path under mpiexec.mpich, sw engine: MPI_Put,
# MPI_Get, MPI_Rput, MPI_Rget into derived target types through the core's
# target keys. Programs: armci_test (ARMCI-style strided get/put of 2D and
# 3D patches inside lock_all/flush/unlock_all, plus fence), rma_test
# (vector, subarray, indexed, resized struct targets, contiguous and
# derived origins, fence, lock/unlock, lock_all/flush, post/start/complete/
# wait, Rput/Rget + MPI_Wait, created, allocated and dynamic windows,
# attach/detach/re-attach; every byte of the window, gaps included, against
# MPI_Pack/MPI_Unpack). Per rank:
#  - forced (UMR_MPICH_ZCOPY=on), np 2 and 4: the same check lines as
#    without the library, and zero-copy puts or gets with keys given and
#    taken on every rank, no registration left;
#  - UMR_MPICH_ZCOPY=off: the same lines, no zero-copy operation, no key
#    asked for;
#  - a fault (the test variant, UMR_MPICH_TEST_FAULT): kreq (the origin's
#    key request not sent) and tkey (the target's registration fails): the
#    same lines, keys refused, nothing zero-copy; oreg (the origin's memory
#    does not register): the same lines, keys ready, every operation
#    handed to MPICH; rmafail (each zero-copy operation completes in error):
#    the same lines, every one of them done again through MPICH;
#  - rma_test forced, np 2: every check line ok (it checks itself; without
#    its out-of-window cases, which MPICH alone fails: it accepts a put past
#    the window's end), zero-copy on every rank, and keys dropped at every
#    origin when its target detached memory of the dynamic window.
#  - mpich_rma_layouts (seeded random vector, subarray and indexed targets
#    of 8 B-2 KiB blocks, contiguous or vector origins of another shape,
#    put/get/Rput/Rget in fence and lock_all epochs, each access three
#    times), np 2 and 4 forced and np 2 at the defaults: every rank's window
#    and get buffers, gaps and guards included, as MPI_Pack/MPI_Unpack say;
#    forced, zero-copy on every rank.
#  - mpich_rma_req (four Rput and four Rget requests outstanding at once,
#    4 KiB target blocks, contiguous and vector origins; puts completed by
#    MPI_Waitall, their buffers overwritten at once;
#    gets by MPI_Testany, each buffer compared as its request completes,
#    before any flush), np 2 and 4 forced, np 2 at the defaults, faults
#    rmafail and oreg: every rank's bytes as MPI_Pack/MPI_Unpack say;
#    forced, every request taken zero-copy completed from progress after
#    its call returned (rma_requests_later = rma_requests > 0), every
#    zero-copy Rget's buffer still untouched when its MPI_Rget returned
#    (pending >= zcopy_gets) and holding its data when its request
#    completed (early 0: MPICH's own Rget over UCX does not,
#    pmodels/mpich#7896); rmafail: requests of the binding's, each
#    operation done again through MPICH; oreg: MPICH's requests, none of
#    the binding's.
# Results in GoogleTest's format.
#
set -u
. "$(dirname "$0")/mpich_test_env.sh"
out=$PWD/test_mpich_rma.out.d
rm -rf "$out"
mkdir -p "$out"
suite=mpich_rma
. "$(dirname "$0")/../gtest/gtest_format.sh"
run_timeout=120

# rma_counter FILE R NAME: NAME of rank R's one-sided counter line
rma_counter() {
    rank_lines "$1" "$2" | grep -a "^umr_mpich: rank $2: .*zcopy_puts" |
        tr ' ' '\n' | grep -A1 -x "$3" | tail -1
}

job() {   # prog file np [mpiexec args]
    prog=$PWD/$1
    local f=$2 np=$3
    shift 3
    run "$f" "$np" "$@" && return 0
    echo "job failed ($f)"; tail -20 "$f"; return 1
}

plain() {   # prog np
    local f=$out/plain-$1-$2
    [ -f "$f" ] && return 0
    job "$1" "$f" "$2" || { rm -f "$f"; return 1; }
}

# every rank: `want` (zcopy | none | refused) of the one-sided counters
rma_each_rank() {   # file want
    local r z k
    for r in $(seq 0 $(($(nranks "$1") - 1))); do
        z=$(( $(rma_counter "$1" $r zcopy_puts) + $(rma_counter "$1" $r zcopy_gets) ))
        [ "$(counter "$1" $r keys_live)" = 0 ] ||
            { echo "rank $r: registrations left"; return 1; }
        case $2 in
            zcopy)   [ "$z" -gt 0 ] && [ "$(rma_counter "$1" $r key_ready)" -gt 0 ] &&
                     [ "$(rma_counter "$1" $r key_answers)" -gt 0 ] ;;
            none)    [ "$z" = 0 ] && [ "$(rma_counter "$1" $r key_requests)" = 0 ] ;;
            refused) [ "$z" = 0 ] && [ "$(rma_counter "$1" $r key_refused)" -gt 0 ] ;;
            passed)  [ "$z" = 0 ] && [ "$(rma_counter "$1" $r key_ready)" -gt 0 ] &&
                     [ "$(rma_counter "$1" $r rma_passthrough)" -gt 0 ] ;;
            redone)  [ "$z" -gt 0 ] && [ "$(rma_counter "$1" $r rma_redone)" = "$z" ] ;;
        esac || { echo "rank $r: not $2:"; rank_lines "$1" $r | grep "umr_mpich: rank"; return 1; }
    done
}

same_as_plain() {   # prog np want [mpiexec args]
    local p=$1 np=$2 want=$3 got
    shift 3
    got=$out/umr-$p-$np-$want-$#-${*: -1}
    plain "$p" "$np" || return 1
    job "$p" "$got" "$np" "$@" || return 1
    same_checks "$out/plain-$p-$np" "$got" && rma_each_rank "$got" "$want"
}

# rma_test checks itself: every check line ok
rma_self() {   # np want [mpiexec args]
    local np=$1 want=$2 got=$out/umr-rma_test-$1-$2 r
    shift 2
    job rma_test "$got" "$np" -genv OSC_UMR_TEST_NO_OUT_OF_WINDOW 1 "$@" ||
        return 1
    for r in $(seq 0 $((np - 1))); do
        [ "$(rank_lines "$got" $r | grep -c ': ok')" -gt 100 ] &&
            ! rank_lines "$got" $r | grep -aq "$failed_lines" ||
            { echo "rank $r:"; rank_lines "$got" $r | grep -a "$failed_lines"; return 1; }
    done
    rma_each_rank "$got" "$want" || return 1
    # its dynamic window's detach dropped keys at every origin
    for r in $(seq 0 $((np - 1))); do
        [ "$(rma_counter "$got" $r keys_dropped)" -gt 0 ] ||
            { echo "rank $r: no key dropped at a detach"; return 1; }
    done
}

done_line="osc_umr_armci: 0 failure(s)"
for np in 2 4; do
    check "armci_np${np}_forced" same_as_plain armci_test $np zcopy \
        "${umr_env[@]}" -genv UMR_MPICH_ZCOPY on
done
check armci_np2_off same_as_plain armci_test 2 none \
    "${umr_env[@]}" -genv UMR_MPICH_ZCOPY off
declare -A fault_want=([kreq]=refused [tkey]=refused [oreg]=passed [rmafail]=redone)
for fault in kreq tkey oreg rmafail; do
    if hooks_built; then
        check "armci_np2_fault_$fault" same_as_plain armci_test 2 "${fault_want[$fault]}" \
            "${umr_hooks_env[@]}" -genv UMR_MPICH_ZCOPY on \
            -genv UMR_MPICH_TEST_FAULT $fault
    else
        skip "armci_np2_fault_$fault" "the test variant is not built"
    fi
done
unset done_line
# mpich_rma_layouts checks itself: no failure, every rank
layouts() {   # np want [mpiexec args]
    local np=$1 want=$2 got=$out/umr-layouts-$1-$2 r
    shift 2
    job mpich_rma_layouts "$got" "$np" "$@" -- -s 5 -n 24 || return 1
    for r in $(seq 0 $((np - 1))); do
        rank_lines "$got" $r | grep -aq "^mpich_rma_layouts: rank $r: .* failures 0$" ||
            { echo "rank $r:"; rank_lines "$got" $r | grep -a "FAIL\|mpich_rma_layouts"; return 1; }
    done
    [ "$want" = any ] || rma_each_rank "$got" "$want"
}
for np in 2 4; do
    check "layouts_np${np}_forced" layouts $np zcopy "${umr_env[@]}" -genv UMR_MPICH_ZCOPY on
done
check layouts_np2_default layouts 2 any "${umr_env[@]}"
check rma_np2_forced rma_self 2 zcopy "${umr_env[@]}" -genv UMR_MPICH_ZCOPY on

# mpich_rma_req checks itself; its requests as `want` says
req_field() {   # file rank name: on the program's line
    rank_lines "$1" "$2" | grep -a "^mpich_rma_req: rank $2: " |
        tr ' ' '\n' | grep -A1 -x "$3" | tail -1
}
requests() {   # np want [mpiexec args]
    local np=$1 want=$2 got=$out/umr-req-$1-$2 r n later pending gets
    shift 2
    job mpich_rma_req "$got" "$np" "$@" || return 1
    for r in $(seq 0 $((np - 1))); do
        rank_lines "$got" $r | grep -aq "^mpich_rma_req: rank $r: .* failures 0$" ||
            { echo "rank $r:"; rank_lines "$got" $r | grep -a "FAIL\|mpich_rma_req"; return 1; }
        n=$(rma_counter "$got" $r rma_requests)
        later=$(rma_counter "$got" $r rma_requests_later)
        gets=$(rma_counter "$got" $r zcopy_gets)
        pending=$(req_field "$got" $r pending)
        case $want in
            zcopy)  [ "$n" -gt 0 ] && [ "$later" = "$n" ] && [ "$gets" -gt 0 ] &&
                    [ "$pending" -ge "$gets" ] && [ "$(req_field "$got" $r early)" = 0 ] ;;
            redone) [ "$n" -gt 0 ] && [ "$(rma_counter "$got" $r rma_redone)" -gt 0 ] ;;
            passed) [ "$n" = 0 ] && [ "$(rma_counter "$got" $r rma_passthrough)" -gt 0 ] ;;
            any)    true ;;
        esac || { echo "rank $r: requests not $want (pending $pending):"
                  rank_lines "$got" $r | grep "umr_mpich: rank"; return 1; }
    done
    [ "$want" = any ] || [ "$want" = passed ] || rma_each_rank "$got" "$want"
}
for np in 2 4; do
    check "req_np${np}_forced" requests $np zcopy "${umr_env[@]}" -genv UMR_MPICH_ZCOPY on
done
check req_np2_default requests 2 any "${umr_env[@]}"
declare -A req_fault_want=([rmafail]=redone [oreg]=passed)
for fault in rmafail oreg; do
    if hooks_built; then
        check "req_np2_fault_$fault" requests 2 "${req_fault_want[$fault]}" \
            "${umr_hooks_env[@]}" -genv UMR_MPICH_ZCOPY on \
            -genv UMR_MPICH_TEST_FAULT $fault
    else
        skip "req_np2_fault_$fault" "the test variant is not built"
    fi
done

finish
