#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# libumr_mpich.so moving seeded random layouts (mpich_layouts: vector,
# subarray, indexed, resized struct and contiguous, a fresh type per message
# on each side, the two sides' layouts different; every send mode,
# persistent requests, Probe, Iprobe, Improbe + Mrecv, wildcards) under
# mpiexec.mpich, sw engine, np 2 and 4. In every job each rank checked every
# received byte against MPICH's own MPI_Pack/MPI_Unpack, the gaps untouched,
# and its status (source, tag, count); per rank:
#  - forced (UMR_MPICH_ZCOPY=on): every message of more than the control
#    message's size went zero-copy (zcopy_sends = the program's "big"
#    count), every other one passed through (zcopy_sends +
#    passthrough_sends = sent), each decided once (decided_send = big);
#  - the choice from a costs file by which the sw engine wins on large
#    blocks only: both zero-copy messages and pass-throughs on every rank;
#  - the costs file at its default path (no UMR_MPICH_COST_FILE: what
#    contrib/umr-calibrate.sh writes), with figures of MPICH and of ob1:
#    MPICH's decide (MPICH slow: both ways on every rank; MPICH free, ob1
#    slow: nothing zero-copy, no connection);
#  - defaults (the built-in costs, by which the sw engine never wins):
#    nothing zero-copy, no connection (the protocol is off: persistent
#    starts go to MPICH uncounted);
#  - a fault on the receiver's zero-copy path (the test variant,
#    UMR_MPICH_TEST_FAULT: connect, key, post, completion): the data still
#    right, and fallbacks counted (a control message MPICH cannot send,
#    ctlsend, is the send's error, as under pml/umr: not a fallback);
#  - without the library: the program's own checks hold (the reference);
#  - UMR_MPICH_COST_FILE naming no file, or a file with a bad line: one
#    line a rank naming the variable, the built-in costs, the data right.
# Results in GoogleTest's format.
#
set -u
. "$(dirname "$0")/mpich_test_env.sh"
out=$PWD/test_mpich_layouts.out.d
rm -rf "$out"
mkdir -p "$out"
suite=mpich_layouts
. "$(dirname "$0")/../gtest/gtest_format.sh"
prog=$PWD/mpich_layouts
seeds="1 2 3"
msgs=120

# counters of every rank: each send zero-copy or passed through, no error,
# nothing left registered or held
accounted() {   # file
    local r z p
    counters_each_rank "$1" || return 1
    for r in $(seq 0 $(($(nranks "$1") - 1))); do
        z=$(counter "$1" $r zcopy_sends); p=$(counter "$1" $r passthrough_sends)
        [ $((z + p)) = "$(field "$1" $r sent)" ] &&
            [ "$(counter "$1" $r errors)" = 0 ] &&
            [ "$(counter "$1" $r keys_live)" = 0 ] && [ "$(counter "$1" $r held)" = 0 ] ||
            { echo "rank $r: sent $(field "$1" $r sent)"; rank_lines "$1" $r | grep "umr_mpich: rank"; return 1; }
    done
}

job() {   # file np seed [mpiexec args]
    local f=$1 np=$2 seed=$3
    shift 3
    run "$f" "$np" "$@" -- -s "$seed" -n "$msgs" ||
        { echo "job failed ($f)"; tail -20 "$f"; return 1; }
}

plain() {   # np
    local s
    for s in $seeds; do
        job "$out/plain-$1-$s" "$1" "$s" && all_right "$out/plain-$1-$s" || return 1
    done
}

forced() {   # np
    local f s r
    for s in $seeds; do
        f=$out/forced-$1-$s
        job "$f" "$1" "$s" "${umr_env[@]}" -genv UMR_MPICH_ZCOPY on &&
            all_right "$f" && accounted "$f" || return 1
        for r in $(seq 0 $(($1 - 1))); do
            [ "$(counter "$f" $r zcopy_sends)" = "$(field "$f" $r big)" ] &&
                [ "$(counter "$f" $r decided_send)" = "$(field "$f" $r big)" ] &&
                [ "$(field "$f" $r big)" -gt 0 ] ||
                { echo "rank $r (seed $s): big $(field "$f" $r big)"; rank_lines "$f" $r | grep "umr_mpich: rank"; return 1; }
        done
    done
}

# zero-copy costs 1 us a block on each side, MPICH 1 ns a byte: the sw
# engine wins on blocks of more than about 2 KiB only
costs_file() {
    local op d b
    echo "version = 1"
    for op in get put; do for d in dense sparse; do
        echo "engine.sw.$op.$d.op_ns = 0"
        echo "engine.sw.$op.$d.rentry_ns = 1000"
        echo "engine.sw.$op.$d.lentry_ns = 1000"
        echo "engine.sw.$op.$d.byte_ns = 0"
    done; done
    echo "pml.mpich.local.ctrl_ns = 0"
    for b in 8 16 32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536; do
        echo "pml.mpich.local.ddt.$b.op_ns = 0"
        echo "pml.mpich.local.ddt.$b.byte_ns = 1"
    done
}

by_cost() {   # np
    local f s r
    costs_file >"$out/costs.conf"
    for s in $seeds; do
        f=$out/costs-$1-$s
        job "$f" "$1" "$s" "${umr_env[@]}" -genv UMR_MPICH_COST_FILE "$out/costs.conf" &&
            all_right "$f" && accounted "$f" || return 1
        for r in $(seq 0 $(($1 - 1))); do
            [ "$(counter "$f" $r zcopy_sends)" -gt 0 ] &&
                [ "$(counter "$f" $r passthrough_sends)" -gt "$(( $(field "$f" $r sent) - $(field "$f" $r big) ))" ] &&
                [ "$(counter "$f" $r decided_send)" = "$(field "$f" $r big)" ] ||
                { echo "rank $r (seed $s): big $(field "$f" $r big)"; rank_lines "$f" $r | grep "umr_mpich: rank"; return 1; }
        done
    done
}

# one file with MPICH's figures and ob1's, per byte `$1` and `$2` ns (the
# engine's as in costs_file)
two_mpis_file() {   # mpich-byte-ns ob1-byte-ns
    costs_file | sed "s/^\(pml\.mpich\..*byte_ns\) = 1\$/\1 = $1/"
    costs_file | grep '^pml\.' |
        sed "s/^pml\.mpich\./pml.ob1./; s/byte_ns = 1\$/byte_ns = $2/"
}

# MPICH's figures, read from the default path, decide: MPICH at 1 ns a
# byte, both ways on every rank; MPICH free and ob1 at 1 ns a byte,
# nothing zero-copy, no connection
default_path() {
    local cache=$out/cache f r z
    mkdir -p "$cache/mlx5_umr"
    for slow in mpich ob1; do
        f=$out/default-path-$slow
        if [ $slow = mpich ]; then two_mpis_file 1 0; else two_mpis_file 0 1; fi \
            >"$cache/mlx5_umr/costs-$(hostname -s).conf"
        # (the protocol off: persistent starts go to MPICH uncounted)
        job "$f" 2 1 "${umr_env[@]}" -genv XDG_CACHE_HOME "$cache" &&
            all_right "$f" && counters_each_rank "$f" &&
            { [ $slow = ob1 ] || accounted "$f"; } || return 1
        for r in 0 1; do
            z=$(counter "$f" $r zcopy_sends)
            if [ $slow = mpich ]; then
                [ "$z" -gt 0 ] && [ "$z" -lt "$(field "$f" $r big)" ]
            else
                [ "$z" = 0 ] && [ "$(counter "$f" $r connects)" = 0 ]
            fi || { echo "rank $r ($slow slow): big $(field "$f" $r big)"; rank_lines "$f" $r | grep "umr_mpich: rank"; return 1; }
        done
    done
}

defaults() {   # np
    local f=$out/defaults-$1 r
    job "$f" "$1" 1 "${umr_env[@]}" && all_right "$f" && counters_each_rank "$f" || return 1
    for r in $(seq 0 $(($1 - 1))); do
        [ "$(counter "$f" $r zcopy_sends)" = 0 ] && [ "$(counter "$f" $r zcopy_recvs)" = 0 ] &&
            [ "$(counter "$f" $r passthrough_sends)" -gt 0 ] &&
            [ "$(counter "$f" $r connects)" = 0 ] && [ "$(counter "$f" $r errors)" = 0 ] ||
            { echo "rank $r: zero-copy at the defaults"; rank_lines "$f" $r | grep "umr_mpich: rank"; return 1; }
    done
}

fault() {   # point
    local f=$out/fault-$1 r sum=0
    hooks_built || return 1
    job "$f" 2 1 "${umr_hooks_env[@]}" -genv UMR_MPICH_ZCOPY on \
        -genv UMR_MPICH_TEST_FAULT "$1" && all_right "$f" && counters_each_rank "$f" || return 1
    for r in 0 1; do
        sum=$((sum + $(counter "$f" $r fault_declines) + $(counter "$f" $r fallback_sends)))
    done
    [ "$sum" -gt 0 ] || { echo "no fallback"; grep "umr_mpich: rank" "$f"; return 1; }
}

# a costs file named that is not there, or one with a bad line: one line a
# rank naming UMR_MPICH_COST_FILE (and the line), the built-in costs
# (nothing zero-copy on the sw engine), the data right
cost_file_refused() {   # name file line-pattern
    local f=$out/cost-file-$1 r
    job "$f" 2 1 "${umr_env[@]}" -genv UMR_MPICH_COST_FILE "$2" && all_right "$f" || return 1
    for r in 0 1; do
        [ "$(rank_lines "$f" $r | grep -c "^umr_mpich: rank $r: UMR_MPICH_COST_FILE: $3")" = 1 ] &&
            [ "$(rank_lines "$f" $r | grep -c "^umr_mpich: rank $r: UMR_MPICH_COST_FILE")" = 1 ] &&
            [ "$(counter "$f" $r zcopy_sends)" = 0 ] ||
            { echo "rank $r:"; rank_lines "$f" $r | grep "umr_mpich"; return 1; }
    done
}
printf 'version = 1\nengine.sw.get.dense.op_ns = fast\n' >"$out/bad-costs.conf"

for np in 2 4; do
    check "plain_np$np" plain $np
    check "forced_np$np" forced $np
    check "by_cost_np$np" by_cost $np
    check "defaults_np$np" defaults $np
done
check default_path default_path
check cost_file_missing cost_file_refused missing "$out/no-such-costs.conf" \
    "no costs file $out/no-such-costs.conf: built-in constants"
check cost_file_bad cost_file_refused bad "$out/bad-costs.conf" "$out/bad-costs.conf:2: "
for point in connect key post completion; do
    check "fault_$point" fault $point
done
finish
