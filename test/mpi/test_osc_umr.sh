#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# osc/umr with real MPI jobs (the component from the build tree in a scratch
# component directory, as test_pml_umr.sh loads pml/umr; sw engine).
#
#  - osc_umr_test (put/get, vector/subarray/indexed/struct-resized target
#    types, contiguous and noncontiguous origin, fence, lock/unlock,
#    lock_all/flush/unlock_all, post/start/complete/wait, Rput/Rget +
#    MPI_Wait; MPI_Win_create
#    and MPI_Win_allocate windows; every byte of the window or origin
#    buffer checked against a CPU reference) passes with and without
#    osc/umr, with the same check lines, at np 2 and np 4; a put past the
#    end of the window returns MPI_ERR_RMA_RANGE with and without osc/umr
#    (osc/umr refuses it at the origin, before any key request: no
#    key_errors, no key_refused) and leaves the window untouched, a put
#    ending at the window's last byte is accepted; with osc/umr also a put
#    one displacement unit past the end and one before the start are
#    refused with MPI_ERR_RMA_RANGE (range_refused 5 a rank);
#  - the same bad input under osc/ucx with osc/umr in front (pml ucx,
#    --mca osc ucx,umr): refused with MPI_ERR_RMA_RANGE, window untouched
#    (osc/ucx alone checks no range on created windows and writes past the
#    window: that plain job is not run);
#  - with osc/umr (no osc argument: it wins the selection by itself) every
#    rank's MPI_Win_create window was wrapped and its MPI_Win_allocate
#    window left to the wrapped module, keys were asked for and arrived,
#    and puts and gets moved zero-copy on every rank, with no error and no
#    live registration at the end; dynamic windows: attached memory was
#    registered, every detach told the origins holding keys to drop them
#    (invals_sent, invals_received, keys_dropped > 0 on every rank) and at
#    least one rank got new pages at the detached region's address;
#  - indexed target types of 1,000 and 5,000 blocks (descriptions of 8 and
#    40 KB, beyond the 4 KiB key request: sent apart) give the plain job's
#    check lines and move zero-copy: every rank asked for 4 keys (2 types,
#    created and dynamic window), all sent apart and all answered, puts and
#    gets zero-copy, no key refused;
#  - target-side failures (osc_umr_test_fault, osc_umr_fault.h: the
#    answer's buffer, a request that must wait, the buffer of a description
#    sent apart, the layout key, the answer's send), np 2 over ob1 and
#    ucx: every job ends (fence, unlock, MPI_Win_free: none waits for an
#    answer that does not come) with the plain job's check lines; the
#    origins' keys are refused (key_refused > 0, nothing zero-copy, no key
#    ready), the target counts its refusals (key_errors > 0), an answer
#    that could not be sent is refused at the window's free
#    (key_unanswered, answers_lost > 0), no registration or key is left;
#    the transport's key pool dry (UCX_MLX5_UMR_TEST_FAULT=key) likewise;
#    without an answer buffer the window's spare answer delivers the keys;
#    a target that cannot post its key-request receive again (repost, np 2
#    and 4) answers its first request and refuses the rest at the window's
#    free (kreq_retired); one that cannot receive them even then
#    (repost,drain) leaves them to be refused at their origins
#    (key_unanswered = kreq_unreceived) and keeps the window's communicator
#    (no later window takes them: key_errors 0);
#  - the automatic choice from a costs file (pml_umr_cost_file, with the
#    wrapped osc module's figures, osc.<component>.local.*): one that says
#    the wrapped module is faster leaves every put/get to it (nothing
#    zero-copy, no key asked for, the verbose trace gives the two estimates
#    and "through the wrapped module"); one that says zero-copy is faster
#    moves them zero-copy; the plain job's check lines
#    either way; over ob1 and ucx (osc/rdma, or osc/ucx on Open MPI 6);
#  - osc_umr_enable=0 and osc_umr_zcopy=off give the plain job (nothing
#    zero-copy); with pml/umr disabled (pml_umr_enable=0) or not loaded
#    (--mca pml ob1), osc/umr opens the core's rails itself and moves puts
#    and gets zero-copy on every rank, with the plain job's check lines;
#  - ompi_info lists the component and its parameters, the test faults' help
#    every point; osc_umr_test_fault=answer,bogus gives one line a rank
#    naming the parameter and the points and injects nothing;
#  - a fault or costs case whose plain job fails by itself is skipped with
#    that job's error (plain_ok, mpi_test_env.sh).
# Results in GoogleTest's format (contrib/test-summary.sh counts them).
#
set -u
. "$(dirname "$0")/mpi_test_env.sh"
ln -sf "$osc_so" "$scratch/"
prog=$PWD/osc_umr_test
out=$PWD/test_osc_umr.out.d
rm -rf "$out"   # nothing of an earlier run (its reference outputs) is reused
mkdir -p "$out"
suite=osc_umr
. "$(dirname "$0")/../gtest/gtest_format.sh"
. "$(dirname "$0")/osc_umr_range_check.sh"
. "$(dirname "$0")/osc_umr_lib.sh"

# zero-copy only here (the packed path: test_osc_umr_packed.sh)
osc_env=("${umr_env[@]}" OMPI_MCA_osc_umr_verbose=1 OMPI_MCA_osc_umr_packed=off)

# same_checks (mpi_test_env.sh) also wants this line in both runs
done_line="osc_umr_test: 0 failure(s)"

zcopy_ran() {   # file np
    local f=$1 np=$2 c
    # the MPI_Win_create window wrapped, the MPI_Win_allocate one not
    for c in windows_wrapped windows_plain zcopy_puts zcopy_gets key_requests key_ready key_answers \
             attached invals_sent invals_received keys_dropped; do
        counter_each_rank "$f" $c "$np" || return 1
    done
    counter_each_rank "$f" zcopy_errors "$np" 0 || return 1
    # the out-of-window puts: refused at the origin, no key ever asked
    for c in key_errors key_refused; do
        counter_each_rank "$f" $c "$np" 0 || return 1
    done
    range_refused_ok "$f" "$np" || return 1
    grep -q "reattach rank .*same_address=1" "$f" ||
        { echo "no rank re-attached at the same address"; return 1; }
    # pml/umr's line: no registration left, no error
    ! grep "pml_umr: rank" "$f" | grep -v "keys_live 0 errors 0"
}

identical() {   # np
    local np=$1
    run "$out/ref-$np" "${osc_env[@]}" OMPI_MCA_osc_umr_enable=0 -- -np "$np" ||
        { tail "$out/ref-$np"; return 1; }
    run "$out/umr-$np" "${osc_env[@]}" OSC_UMR_TEST_RANGE=1 -- -np "$np" ||
        { tail -30 "$out/umr-$np"; return 1; }
    same_checks "$out/ref-$np" "$out/umr-$np" && zcopy_ran "$out/umr-$np" "$np" &&
        ! grep -q "osc_umr: rank" "$out/ref-$np" &&
        grep -q "^check out-of-window put .*error_class=MPI_ERR_RMA_RANGE rank 0: refused" \
            "$out/ref-$np"
}

# osc/ucx (no range check of its own on created windows) with osc/umr in
# front refuses the bad input with MPI_ERR_RMA_RANGE and writes nothing.
out_of_window_osc_ucx() {
    local f=$out/oow-ucx
    run "$f" "${osc_env[@]}" OMPI_MCA_osc_umr_verbose=10 OSC_UMR_TEST_RANGE=1 \
        OSC_UMR_TEST_ONLY_OUT_OF_WINDOW=1 -- -np 2 --mca pml ucx,umr \
        --mca pml_ucx_tls any --mca pml_ucx_devices any --mca osc ucx,umr ||
        { tail -30 "$f"; return 1; }
    grep -q "osc_umr_test: 0 failure(s)" "$f" || { tail -30 "$f"; return 1; }
    [ "$(grep -c 'osc_umr: window created by osc/ucx' "$f")" -eq 2 ] ||
        { echo "the window is not osc/ucx's on both ranks"; grep "window created" "$f"; return 1; }
    range_refused_ok "$f" 2
}

zcopy_off() {
    run "$out/off" "${osc_env[@]}" OMPI_MCA_osc_umr_zcopy=off -- -np 2 || return 1
    same_checks "$out/ref-2" "$out/off" &&
        counter_each_rank "$out/off" windows_plain 2 &&
        counter_each_rank "$out/off" windows_wrapped 2 0 &&
        counter_each_rank "$out/off" zcopy_puts 2 0
}

# Without pml/umr (disabled, or not loaded at all: --mca pml ob1) osc/umr
# opens the core itself: its own rails ("osc_umr: rail sw open" on each
# rank), the ranks' addresses from each window's creation; puts and gets of
# vector and other types move zero-copy on every rank, with the plain job's
# check lines and no registration left.
without_pml_umr() {   # name args...
    local f=$out/nopml-$1
    shift
    run "$f" "${osc_env[@]}" OMPI_MCA_osc_umr_verbose=5 "$@" || { tail -30 "$f"; return 1; }
    same_checks "$out/ref-2" "$f" || return 1
    ! grep -q "pml_umr: rank" "$f" || { echo "pml/umr interposed"; return 1; }
    [ "$(grep -c 'osc_umr: rail sw open$' "$f")" -eq 2 ] ||
        { echo "osc/umr did not open the rails on each rank"; grep "rail" "$f"; return 1; }
    for c in windows_wrapped zcopy_puts zcopy_gets key_ready; do
        counter_each_rank "$f" $c 2 || return 1
    done
    counter_each_rank "$f" zcopy_errors 2 0
}

# Long indexed target types: their descriptions go apart (osc_umr_wire.h)
# and their puts and gets zero-copy.
long_indexed() {
    local cases=OSC_UMR_TEST_CASES=indexed1000,indexed5000 f=$out/long-umr n
    run "$out/long-ref" "${osc_env[@]}" OMPI_MCA_osc_umr_enable=0 $cases -- -np 2 ||
        { tail "$out/long-ref"; return 1; }
    run "$f" "${osc_env[@]}" OMPI_MCA_osc_umr_verbose=10 $cases -- -np 2 ||
        { tail -30 "$f"; return 1; }
    same_checks "$out/long-ref" "$f" || return 1
    grep -q "^check put indexed5000 win=create" "$f" || { echo "no indexed5000 case"; return 1; }
    n=$(grep -c "osc_umr: asked target .*description of [0-9]* bytes, sent apart" "$f")
    [ "$n" -eq 8 ] || { echo "$n requests sent apart, expected 8 (4 a rank)"; return 1; }
    counter_each_rank "$f" key_requests 2 4 && counter_each_rank "$f" key_ready 2 4 &&
        counter_each_rank "$f" key_answers 2 4 && counter_each_rank "$f" key_refused 2 0 &&
        counter_each_rank "$f" key_errors 2 0 && counter_each_rank "$f" zcopy_puts 2 &&
        counter_each_rank "$f" zcopy_gets 2 && counter_each_rank "$f" zcopy_errors 2 0
}

# A fault on the target side of the key protocol (osc_umr_fault.h; engine_key:
# the transport's own, UCX_MLX5_UMR_TEST_FAULT=key, the key pool dry): the
# origins get refusals and keep the wrapped module; nothing waits forever.
# answer: the window's spare answer is sent instead, the keys still arrive.
# repost: each window's target takes its first request (that key arrives
# and is used), then retires; the rest it receives and refuses at the
# window's free. repost,drain: not even then (two short descriptions: a
# description sent apart and never received would hold its send); those
# keys are refused at their origins, and the kept communicator lets no
# later window take them (key_errors 0).
target_fault() {   # point pml np
    local p=$1 pml=$2 np=${3:-2} name=${1/,/_}
    local f=$out/fault-$name-$pml-$np ref=$out/fault-ref-$name-$pml-$np cases args=() c
    local fenv=(OMPI_MCA_osc_umr_test_fault=$p)
    case $p in
        kdesc|queue)  cases=indexed1000 ;;   # only descriptions sent apart
        repost,drain) cases=vector,subarray ;;
        *)            cases=vector,indexed1000 ;;
    esac
    [ "$p" = engine_key ] && fenv=(UCX_MLX5_UMR_TEST_FAULT=key)
    [ "$pml" = ucx ] && args=(--mca pml ucx,umr --mca pml_ucx_tls any --mca pml_ucx_devices any)
    run "$ref" "${osc_env[@]}" OMPI_MCA_osc_umr_enable=0 OSC_UMR_TEST_CASES=$cases \
        -- -np "$np" "${args[@]}"
    plain_ok "$ref" $? || return
    run "$f" "${osc_env[@]}" "${fenv[@]}" OSC_UMR_TEST_CASES=$cases \
        -- -np "$np" "${args[@]}" || { echo "the job failed or hung"; tail -30 "$f"; return 1; }
    same_checks "$ref" "$f" || return 1
    grep -q "osc_umr_test_fault:" "$f" && { grep "osc_umr_test_fault:" "$f"; return 1; }
    # no line but the program's and the components' (a description drained
    # into no buffer made btl/vader say "Read -1, expected N, errno = 14");
    # repost,drain leaves requests unreceived on purpose, which UCX names at
    # MPI_Finalize (osc_umr.md, target-side failures)
    local ours="^check \|$done_line\|osc_umr: \|pml_umr: "
    [ "$p" = repost,drain ] &&
        ours="$ours\|UCX  WARN  unexpected tag-receive descriptor .* was not matched"
    grep -v "$ours" "$f" && { echo "lines of neither the program nor osc/umr"; return 1; }
    counter_each_rank "$f" windows_wrapped "$np" && counter_each_rank "$f" key_requests "$np" &&
        counter_each_rank "$f" zcopy_errors "$np" 0 || return 1
    case $p in
        answer|repost*)   # keys arrive: the spare answers', the first ones'
            counter_each_rank "$f" key_answers "$np" || return 1
            for c in key_ready zcopy_puts zcopy_gets; do
                # np 4, repost: each target's first request is some origin's
                if [ "$np" -gt 2 ] && [ "$p" != answer ]; then
                    counter_sum "$f" $c || return 1
                else
                    counter_each_rank "$f" $c "$np" || return 1
                fi
            done ;;
        *)
            for c in zcopy_puts zcopy_gets key_ready key_answers; do
                counter_each_rank "$f" $c "$np" 0 || return 1
            done ;;
    esac
    case $p in
        answer) counter_each_rank "$f" key_refused "$np" 0 ;;
        repost,drain)
            counter_each_rank "$f" key_refused "$np" && counter_each_rank "$f" key_errors "$np" 0 &&
                counter_each_rank "$f" kreq_retired "$np" &&
                counter_each_rank "$f" kreq_unreceived "$np" &&
                counter_each_rank "$f" key_unanswered "$np" || return 1
            # every request never received is one key refused at its origin
            grep "osc_umr: rank [0-9]*: " "$f" | awk '{
                for (i = 1; i < NF; ++i) { if ($i == "kreq_unreceived") u += $(i + 1)
                                           if ($i == "key_unanswered") k += $(i + 1) } }
                END { if (u != k) { print "kreq_unreceived " u " != key_unanswered " k; exit 1 } }' &&
                grep -q "osc_umr: window .* freed: [0-9]* key requests never received .*communicator is kept" "$f" ;;
        repost)
            counter_each_rank "$f" key_refused "$np" && counter_each_rank "$f" key_errors "$np" &&
                counter_each_rank "$f" kreq_retired "$np" &&
                counter_each_rank "$f" kreq_unreceived "$np" 0 &&
                grep -q "osc_umr: window .* freed: [0-9]* key requests that came after .* received now, and refused" "$f" ;;
        *) counter_each_rank "$f" key_refused "$np" && counter_each_rank "$f" key_errors "$np" ;;
    esac || return 1
    case $p in
        send)         counter_each_rank "$f" key_unanswered "$np" &&
                          counter_each_rank "$f" answers_lost "$np" || return 1 ;;
        repost,drain) ;;
        *)            counter_each_rank "$f" key_unanswered "$np" 0 || return 1 ;;
    esac
    case $p in
        repost*) ;;
        *) counter_each_rank "$f" kreq_retired "$np" 0 || return 1 ;;
    esac
    ! grep "pml_umr: rank" "$f" | grep -v "keys_live 0 errors 0"
}

costs_choice() {   # loses|wins pml
    local how=$1 pml=$2 f=$out/costs-$1-$2 ref=$out/costs-ref-$2 cfile=$out/costs-$1.conf
    local cases=OSC_UMR_TEST_CASES=vector,indexed osc args=() c rc=0
    # (the file has osc/rdma's and osc/ucx's figures: Open MPI 4.1 picks
    # osc/rdma under both PMLs, 6.0 osc/ucx under pml ucx)
    [ "$pml" = ucx ] && args=(--mca pml ucx,umr --mca pml_ucx_tls any --mca pml_ucx_devices any)
    costs_file "$how" "$cfile"
    [ -s "$ref" ] || run "$ref" "${osc_env[@]}" OMPI_MCA_osc_umr_enable=0 $cases \
        -- -np 2 "${args[@]}" || rc=$?
    plain_ok "$ref" $rc || return
    run "$f" "${osc_env[@]}" OMPI_MCA_osc_umr_verbose=10 OMPI_MCA_pml_umr_cost_file="$cfile" \
        $cases -- -np 2 "${args[@]}" || { tail -30 "$f"; return 1; }
    same_checks "$ref" "$f" || return 1
    # (lines of the core's choice: the prefix of the component that opened
    # it, pml_umr or osc_umr)
    osc=$(sed -n "s|.*osc_umr: costs for osc/\([a-z0-9]*\) from $cfile.*|\1|p" "$f" | head -1)
    [ -n "$osc" ] && [ "$(grep -c "osc_umr: costs for osc/$osc from $cfile" "$f")" -ge 2 ] ||
        { echo "no 'costs for osc/... from $cfile' line on each rank"; grep "osc_umr: .*cost" "$f"; return 1; }
    counter_each_rank "$f" windows_wrapped 2 && counter_each_rank "$f" zcopy_errors 2 0 ||
        return 1
    if [ "$how" = loses ]; then
        for c in zcopy_puts zcopy_gets key_requests; do
            counter_each_rank "$f" $c 2 0 || return 1
        done
        counter_each_rank "$f" passthrough 2 &&
            grep -q "osc_umr: [a-z]* to [01]: .* ns (sw engine) against [0-9]* ns through osc/$osc (local, .*): through the wrapped module" "$f" ||
            { echo "no estimates in the trace"; return 1; }
    else
        for c in zcopy_puts zcopy_gets key_ready; do
            counter_each_rank "$f" $c 2 || return 1
        done
        grep -q "osc_umr: [a-z]* to [01]: .* ns (sw engine) against [0-9]* ns through osc/$osc (local, .*): zero-copy" "$f" ||
            { echo "no estimates in the trace"; return 1; }
    fi
}

ompi_info_lists() {
    env "${umr_env[@]}" ompi_info --param osc umr --level 9 >"$out/ompi_info" 2>&1 || return 1
    grep -q "MCA osc: umr" "$out/ompi_info" || grep -q 'component "umr"' "$out/ompi_info" ||
        { cat "$out/ompi_info"; return 1; }
    local p
    for p in enable priority zcopy min_size sw_max_block verbose test_fault; do
        grep -q "osc_umr_$p" "$out/ompi_info" || { echo "no osc_umr_$p"; return 1; }
    done
    # the test faults' help names every point (common_umr.c makes it)
    grep -A3 "osc_umr_test_fault" "$out/ompi_info" | tr -d '\n' | tr -s ' ' |
        grep -q "answer, queue, kdesc, tkey, send, repost, drain" ||
        { grep -A3 "osc_umr_test_fault" "$out/ompi_info"; echo "the points are not all named"; return 1; }
}

# A fault list that names no point of ours: one line a rank naming the
# parameter and the points, nothing injected (keys arrive, zero-copy).
bad_fault_list() {
    local f=$out/fault-bogus n
    run "$f" "${osc_env[@]}" OMPI_MCA_osc_umr_test_fault=answer,bogus \
        OSC_UMR_TEST_CASES=vector -- -np 2 || { tail -30 "$f"; return 1; }
    grep -q "$done_line" "$f" && ! grep -q "$failed_lines" "$f" || { tail "$f"; return 1; }
    n=$(grep -c "osc_umr: osc_umr_test_fault: 'bogus' is not one of answer, queue, kdesc, tkey, send, repost, drain" "$f")
    [ "$n" -eq 2 ] || { echo "$n lines naming osc_umr_test_fault, expected 2"; grep "test_fault" "$f"; return 1; }
    counter_each_rank "$f" key_ready 2 && counter_each_rank "$f" zcopy_puts 2 &&
        counter_each_rank "$f" key_refused 2 0
}

check identical_np2 identical 2
check identical_np4 identical 4
check out_of_window_osc_ucx out_of_window_osc_ucx
check long_indexed long_indexed
# The fault and costs cases compare with their plain job (osc_umr_enable=0):
# where that fails by itself (Open MPI 5.0.7's osc/ucx under pml ucx:
# MPI_ERR_WIN) the case is skipped with its error (plain_ok,
# mpi_test_env.sh): the wrapped osc component's own failure.
for point in ${FAULT_POINTS:-answer queue kdesc tkey send engine_key repost repost,drain}; do
    for pml in ob1 ucx; do
        check target_fault_${point/,/_}_$pml target_fault $point $pml 2
        # np 4: each target answers one origin's first request, the rest
        # (of three origins) refused at the window's free
        [ "$point" = repost ] &&
            check target_fault_repost_${pml}_np4 target_fault $point $pml 4
    done
done
for pml in ob1 ucx; do
    check costs_zcopy_loses_$pml costs_choice loses $pml
    check costs_zcopy_wins_$pml costs_choice wins $pml
done
check zcopy_off zcopy_off
check without_pml_umr_disabled without_pml_umr disabled OMPI_MCA_pml_umr_enable=0 -- -np 2
check without_pml_umr_ob1 without_pml_umr ob1 -- -np 2 --mca pml ob1
check ompi_info_lists ompi_info_lists
check bad_fault_list bad_fault_list
finish
