#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Regressions of issue 18 with zero-copy forced (pml_umr_zcopy=on,
# pml_umr_min_size=0), each case of pml_umr_regress under ob1 and ucx at
# np 2 and 4 where it applies. Every run prints the same results as the
# run without pml/umr, the receives hold exactly the bytes MPI's own
# pack/unpack give (the program checks), and no rank printed an error:
#  - bigsend/bigrecv: layouts beyond the key budget (max_keys) on both sides
#    or on the receiver's only pass through (sender) or are declined (the
#    data comes through the wrapped PML), silently (no UCX ERROR, no
#    pml_umr warning);
#  - status: status.MPI_ERROR is left alone by MPI_Recv, MPI_Mrecv,
#    MPI_Wait, MPI_Test and the probes;
#  - colls: MPI_Allgatherv, MPI_Gatherv, MPI_Alltoallw with the types Open
#    MPI builds itself (no MPI_ERR_INTERN from the decoder);
#  - persist: persistent sends/receives (Start, Startall) of derived and
#    contiguous types, and MPI_Alltoallv (persistent requests inside);
#  - trunc: a zero-copy column received as half a column, blocking and
#    nonblocking, as a vector and as contiguous doubles: MPI_ERR_TRUNCATE,
#    and the sender is released (no hang);
#  - trunccomm: two zero-copy sends with one tag to one peer on two
#    communicators wait at once, one is truncated unseen (one double): the
#    receiver's answer releases that one and not the other (no hang);
#  - bogusack: forged acks (a sequence number 0, an address-like garbage
#    value, by a tag that names no send, too short, too long; at np 4 also
#    the numbers of sends waiting for another peer's ack) reach ranks whose
#    zero-copy sends wait for their acks: every column arrives whole, no
#    crash or hang, every forged ack counted in acks_dropped (5 a rank, 8
#    at np 4), no key left, no error;
#  - counters: every eligible send is counted once (zcopy_sends,
#    passthrough_sends, fallbacks), also with a key pool of one
#    (UCX_MLX5_UMR_MKEY_POOL_SIZE=1): two layouts in turn, each takes the
#    other's idle key (keys_reclaimed), all 20 zero-copy, no line;
#  - a misspelt UCX_MLX5_UMR_* variable: one warning a process naming the
#    closest known variable;
#  - the verdict of pass-through is per type and count (automatic choice,
#    a costs file by which a dense vector of 64 KiB passes through and one
#    of 8 MiB goes zero-copy): sent 1, 1, 1, 128, 1, 1, 128 elements at a
#    time, 5 pass through (after the first, by the type's remembered
#    verdict, pml_umr_send.c) and 2 go zero-copy, every byte checked;
#  - a kept verdict goes with its type (reuse; the costs of verdict): a
#    dense type (a double every 16 B) sent 40 times passes through, never
#    decoded, held with its verdict after 8 prefiltered sends (prefiltered
#    8); freed, and a sparse one (a double every 64 B) made at its address
#    and sent with the same count goes zero-copy all 40 times (a stale
#    verdict would pass it through), every byte checked;
#  - window: 100 zero-copy sends of one rank wait for their acks at once
#    (more than the 64 places of the ring that finds a send by its ack's
#    number; the rest by the list of waiting sends), received in reverse
#    order: every column whole, 100 zero-copy, no ack dropped, no key left;
#  - escapes: Z bytes that start with the magic through every send flavour
#    (standard, synchronous, ready, buffered; blocking, nonblocking,
#    persistent; a type without a layout): each arrives whole, no hang;
#  - ctlfail: a control message that cannot be sent (test fault ctlsend):
#    the send fails, and its spare ack receive is cancelled at finalize;
#  - escfail: escapes whose ack receive cannot be posted (test fault
#    ackpost, out of memory) by Send, Isend, Send_init, Bsend fail with an
#    error and never go raw: what follows on the same tag arrives exact;
#  - norail: one rank's rails reach nothing (test fault norail on it), the
#    other's reach it: escapes, Z bytes without the magic and a column,
#    both ways, arrive exact (both sides take each other for pml/umr peers
#    by the modex alone);
#  - hooks, hookszc: with pml/umr, libc's munmap, brk, madvise and mmap
#    lead to Open MPI's memory patcher (libopen-pal), never to UCM's hooks
#    alone, before and after a message went zero-copy: Open MPI's users of
#    the hooks (ob1's BTLs) and pml/umr's registration caches hear of every
#    unmap (common_umr_memhooks.h); the data as without pml/umr;
#  - bsendbuf: a buffered escape takes its copy from the attached buffer:
#    with room it goes, without (none attached, too small) the same error
#    classes as without pml/umr.
#
set -u
. "$(dirname "$0")/mpi_test_env.sh"
prog=$PWD/pml_umr_regress
out=$PWD/test_pml_umr_regress.out.d
rm -rf "$out"   # nothing of an earlier run (its reference outputs) is reused
mkdir -p "$out"
suite=pml_umr_regress
. "$(dirname "$0")/../gtest/gtest_format.sh"
forced=(OMPI_MCA_pml_umr_zcopy=on OMPI_MCA_pml_umr_min_size=0)

pml_args() {   # ob1|ucx [umr]
    if [ "$1" = ucx ]; then
        echo "--mca pml ucx${2:+,umr} --mca pml_ucx_tls any --mca pml_ucx_devices any"
    else
        echo "--mca pml ob1${2:+,umr}"
    fi
}

# The run passed: results, no failure, no error line of UCX or pml/umr.
clean_run() {   # file
    local f=$1
    grep -q "^FAIL\|AddressSanitizer\|runtime error:" "$f" &&
        { grep -h -A5 "^FAIL\|AddressSanitizer\|runtime error:" "$f" | head -20; return 1; }
    grep -q "UCX  ERROR\|UCX ERROR\|\[ERROR\]\|MPI_ERR_\|pml_umr: get of\|pml_umr: .*failed" "$f" &&
        { grep "ERROR\|MPI_ERR\|failed" "$f" | head -10; return 1; }
    [ "$(grep -c '^check ' "$f")" -gt 0 ] || { echo "no results in $f"; tail -20 "$f"; return 1; }
}

# CASE under PML at NP: the same check lines as without pml/umr, clean.
same() {   # case, np, pml, env...
    local c=$1 np=$2 pml=$3; shift 3
    local ref=$out/ref-$c-$np-$pml got=$out/umr-$c-$np-$pml
    run "$ref" -- -np "$np" $(pml_args "$pml") -- "$c" ||
        { echo "reference run failed"; tail -20 "$ref"; return 1; }
    run "$got" "${umr_env[@]}" "${forced[@]}" "$@" -- -np "$np" $(pml_args "$pml" umr) -- "$c" ||
        { echo "run with pml/umr failed (status $?)"; tail -30 "$got"; return 1; }
    clean_run "$ref" && clean_run "$got" || return 1
    diff <(checks_by_rank "$ref") <(checks_by_rank "$got") ||
        { echo "results differ, per rank"; return 1; }
    grep -q "pml_umr: rank" "$got" || { echo "pml/umr did not interpose"; return 1; }
}

# the counter NAME summed over the ranks' "pml_umr: rank" lines of FILE
sum_of() {   # file, name
    grep "pml_umr: rank" "$1" | grep -o " $2 [0-9]*" | awk '{s += $2} END {print s + 0}'
}

# Every eligible send counted once: 20 sends of rank 0.
counters_add_up() {   # pml, env...
    local pml=$1; shift
    local got=$out/count-$pml-$# z p f
    same count 2 "$pml" "$@" || return 1
    got=$out/umr-count-2-$pml
    z=$(sum_of "$got" zcopy_sends); p=$(sum_of "$got" passthrough_sends)
    f=$(sum_of "$got" fallbacks)
    echo "zcopy_sends $z passthrough_sends $p fallbacks $f"
    [ $((z + p + f)) -eq 20 ] || { echo "$((z + p + f)) of 20 sends counted"; return 1; }
    [ "$(sum_of "$got" errors)" -eq 0 ] && [ "$(sum_of "$got" keys_live)" -eq 0 ]
}

# A key pool of one, two layouts in turn: the idle key of one is given back
# for the other (keys_reclaimed), so every send goes zero-copy, quietly;
# the sums hold.
pool_of_one() {   # pml
    counters_add_up "$1" UCX_MLX5_UMR_MKEY_POOL_SIZE=1 || return 1
    local got=$out/umr-count-2-$1
    [ "$(sum_of "$got" zcopy_sends)" -eq 20 ] && [ "$(sum_of "$got" keys_reclaimed)" -gt 0 ] ||
        { grep "pml_umr: rank" "$got"; echo "not every send zero-copy, or no key given back"; return 1; }
    ! grep "UCX\|no layout key\|gets no key" "$got" || return 1
}

# A misspelt variable: one warning a process that names the right one
# (pml/umr claims the UCX_MLX5_UMR_* variables from UCP's warning of unused
# ones, umr_mpi_env.h: the transport's is the only line), and the job
# runs as before.
typo_warned() {   # pml
    local got
    same count 2 "$1" UCX_MLX5_UMR_CACHESIZE=10 || return 1
    got=$out/umr-count-2-$1
    [ "$(grep -c 'UCX_MLX5_UMR_CACHESIZE is not a variable of the mlx5_umr transport: did you mean UCX_MLX5_UMR_CACHE_SIZE?' "$got")" -eq 2 ] ||
        { grep "CACHESIZE" "$got"; echo "not one warning a process"; return 1; }
    [ "$(grep -c "CACHESIZE" "$got")" -eq 2 ] ||
        { grep "CACHESIZE" "$got"; echo "other lines name it"; return 1; }
}

# The transport warns by itself (ucx_info, ucx_perftest: no pml/umr): once,
# for each unknown variable, naming a close one only when there is one; a
# known name, or UCX_WARN_UNUSED_ENV_VARS=n, gives no warning.
typo_warned_by_transport() {
    # (sanitizer builds: their runtimes first, contrib/run-sanitizers.sh)
    local o env=(LD_PRELOAD="${UMR_PRELOAD_EXTRA:+$UMR_PRELOAD_EXTRA:}$uct_so"
                 UCX_MLX5_UMR_ENGINE=sw UCX_MLX5_UMR_CACHE_SIZE=10)
    o=$(env "${env[@]}" UCX_WARN_UNUSED_ENV_VARS=y UCX_MLX5_UMR_PACKTHRESH=3 \
        UCX_MLX5_UMR_XYZZY=1 ucx_info -d 2>&1)
    grep -q "Transport: mlx5_umr" <<<"$o" || { echo "no mlx5_umr in ucx_info -d"; return 1; }
    [ "$(grep -c 'UCX_MLX5_UMR_PACKTHRESH is not a variable of the mlx5_umr transport: did you mean UCX_MLX5_UMR_PACK_THRESH?$' <<<"$o")" -eq 1 ] &&
        [ "$(grep -c 'UCX_MLX5_UMR_XYZZY is not a variable of the mlx5_umr transport$' <<<"$o")" -eq 1 ] &&
        [ "$(grep -c 'is not a variable of the mlx5_umr' <<<"$o")" -eq 2 ] ||
        { grep WARN <<<"$o"; return 1; }
    o=$(env "${env[@]}" UCX_WARN_UNUSED_ENV_VARS=n UCX_MLX5_UMR_PACKTHRESH=3 ucx_info -d 2>&1)
    ! grep "is not a variable" <<<"$o"
}

# Forged acks are dropped (pml_umr_wire.h): the same results as without
# pml/umr, and each rank counted every ack forged for it (5 by rank + 1;
# from 3 ranks on, 3 more by rank + 2, which waits for one of them).
acks_dropped() {   # np, pml
    local np=$1 pml=$2 got peers=1
    [ "$np" -ge 3 ] && peers=2
    # (the reference run too: the acks' tag is negative)
    OMPI_MCA_mpi_param_check=0 same bogusack "$np" "$pml" || return 1
    got=$out/umr-bogusack-$np-$pml
    grep "pml_umr: rank [0-9]*: zcopy_sends" "$got" | grep -o " acks_dropped [0-9]*" |
        awk -v np="$np" -v want=$((peers == 2 ? 8 : 5)) '$2 == want {n++} END {exit n != np}' ||
        { grep "pml_umr: rank" "$got"; echo "not every rank dropped every forged ack"; return 1; }
    [ "$(grep -c "dropped an ack from rank" "$got")" -eq "$np" ] ||
        { echo "not one verbose line a rank"; return 1; }
    [ "$(sum_of "$got" errors)" -eq 0 ] && [ "$(sum_of "$got" keys_live)" -eq 0 ] &&
        [ "$(sum_of "$got" zcopy_sends)" -eq $((3 * peers * np)) ] &&
        [ "$(sum_of "$got" zcopy_recvs)" -eq $((3 * peers * np)) ] ||
        { grep "pml_umr: rank" "$got"; return 1; }
}

# The costs of `verdict`: zero-copy of a sparse layout costs nothing, of a
# dense one 1 ms; the wrapped PML a nanosecond a byte. A dense message
# goes zero-copy from about 1.1 MB on; a sparse one always would (so the
# size bound before the choice lets the dense 64 KiB messages reach it).
costs_verdict() {
    local f=$out/costs-verdict.conf op b pml
    {
        echo "version = 1"
        for op in get put; do
            echo "engine.sw.$op.sparse.op_ns = 0"
            echo "engine.sw.$op.dense.op_ns = 1000000"
            for b in rentry_ns lentry_ns byte_ns; do
                echo "engine.sw.$op.sparse.$b = 0"
                echo "engine.sw.$op.dense.$b = 0"
            done
        done
        costs_wrapped_pml
    } >"$f"
    echo "$f"
}

# CASE at np 2 without pml/umr (REF) and with it, automatic choice from
# costs_verdict's file (GOT): both clean, the same check lines.
same_with_verdict_costs() {   # case, pml, ref, got
    local c=$1 pml=$2 ref=$3 got=$4 costs
    costs=$(costs_verdict)
    run "$ref" -- -np 2 $(pml_args "$pml") -- "$c" ||
        { echo "reference run failed"; tail -20 "$ref"; return 1; }
    run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=auto \
        OMPI_MCA_pml_umr_cost_file="$costs" -- -np 2 $(pml_args "$pml" umr) -- "$c" ||
        { echo "run with pml/umr failed"; tail -30 "$got"; return 1; }
    clean_run "$ref" && clean_run "$got" || return 1
    diff <(checks_by_rank "$ref") <(checks_by_rank "$got") ||
        { echo "results differ, per rank"; return 1; }
}

# 7 sends of one type: 5 of 1 element pass through, 2 of 128 zero-copy.
verdict_per_count() {   # pml
    local pml=$1 ref=$out/ref-verdict-$1 got=$out/umr-verdict-$1
    same_with_verdict_costs verdict "$pml" "$ref" "$got" || return 1
    echo "zcopy_sends $(sum_of "$got" zcopy_sends) passthrough_sends" \
         "$(sum_of "$got" passthrough_sends) fallbacks $(sum_of "$got" fallbacks)" \
         "declined $(sum_of "$got" declined) zcopy_recvs $(sum_of "$got" zcopy_recvs)"
    [ "$(sum_of "$got" zcopy_sends)" -eq 2 ] && [ "$(sum_of "$got" zcopy_recvs)" -eq 2 ] &&
        [ "$(sum_of "$got" passthrough_sends)" -eq 5 ] &&
        [ "$(sum_of "$got" fallbacks)" -eq 0 ] && [ "$(sum_of "$got" declined)" -eq 0 ] &&
        [ "$(sum_of "$got" errors)" -eq 0 ] && [ "$(sum_of "$got" keys_live)" -eq 0 ] ||
        { grep "pml_umr: rank" "$got"; return 1; }
}

# A dense type held with its verdict, freed; a sparse one at its address
# is judged afresh and goes zero-copy.
verdict_reuse() {   # pml
    local pml=$1 ref=$out/ref-reuse-$1 got=$out/umr-reuse-$1
    same_with_verdict_costs reuse "$pml" "$ref" "$got" || return 1
    # (the allocator decides; AddressSanitizer's quarantine never reuses
    # the address at once: skipped, saying so, never passed)
    grep -q "^reuse same address 1" "$got" ||
        { echo "no type was made at the freed one's address (the allocator's choice): nothing to test"; return 77; }
    echo "zcopy_sends $(sum_of "$got" zcopy_sends) passthrough_sends" \
         "$(sum_of "$got" passthrough_sends) prefiltered $(sum_of "$got" prefiltered)" \
         "decoded $(sum_of "$got" decoded)"
    [ "$(sum_of "$got" zcopy_sends)" -eq 40 ] && [ "$(sum_of "$got" zcopy_recvs)" -eq 40 ] &&
        [ "$(sum_of "$got" passthrough_sends)" -eq 40 ] &&
        [ "$(sum_of "$got" prefiltered)" -eq 8 ] &&
        [ "$(sum_of "$got" fallbacks)" -eq 0 ] && [ "$(sum_of "$got" errors)" -eq 0 ] ||
        { grep "pml_umr: rank" "$got"; return 1; }
}

# 100 zero-copy sends waiting at once, forced: all acks taken.
window_acks() {   # pml
    local got=$out/umr-window-2-$1
    same window 2 "$1" || return 1
    echo "zcopy_sends $(sum_of "$got" zcopy_sends) acks_dropped $(sum_of "$got" acks_dropped)"
    [ "$(sum_of "$got" zcopy_sends)" -eq 100 ] && [ "$(sum_of "$got" zcopy_recvs)" -eq 100 ] &&
        [ "$(sum_of "$got" acks_dropped)" -eq 0 ] && [ "$(sum_of "$got" fallbacks)" -eq 0 ] &&
        [ "$(sum_of "$got" errors)" -eq 0 ] && [ "$(sum_of "$got" keys_live)" -eq 0 ] ||
        { grep "pml_umr: rank" "$got"; return 1; }
}

# Z bytes that start with the magic, through every send flavour (the
# escapes case): the same bytes as without pml/umr and no hang (a raw one
# is taken for a control message and its receive waits for data that never
# comes: run_timeout), all 17 sends of rank 0 escaped, no ack dropped,
# nothing declined by a fault, nothing retired.
escapes_whole() {   # pml
    local got=$out/umr-escapes-2-$1
    same escapes 2 "$1" || return 1
    echo "escapes $(sum_of "$got" escapes) acks_dropped $(sum_of "$got" acks_dropped)" \
         "fault_declines $(sum_of "$got" fault_declines) retired $(sum_of "$got" retired)"
    [ "$(sum_of "$got" escapes)" -eq 17 ] && [ "$(sum_of "$got" acks_dropped)" -eq 0 ] &&
        [ "$(sum_of "$got" fault_declines)" -eq 0 ] && [ "$(sum_of "$got" retired)" -eq 0 ] &&
        [ "$(sum_of "$got" errors)" -eq 0 ] || { grep "pml_umr: rank" "$got"; return 1; }
}

# A control message that cannot be sent (pml_umr_test_fault=ctlsend): the
# send fails with an error (counted once in errors), and the ack receive
# posted for it, a spare, is cancelled when MPI_Finalize starts: no rank
# has one still posted (acks_posted 0).
spare_ack_cancelled() {   # pml
    local got=$out/umr-ctlfail-2-$1
    run "$got" "${umr_env[@]}" "${forced[@]}" OMPI_MCA_pml_umr_test_fault=ctlsend \
        -- -np 2 $(pml_args "$1" umr) -- ctlfail ||
        { echo "run with pml/umr failed"; tail -30 "$got"; return 1; }
    ! grep "^FAIL\|AddressSanitizer\|runtime error:" "$got" &&
        [ "$(grep -c '^check ctlfail' "$got")" -eq 2 ] &&
        [ "$(grep -c 'pml_umr: rank [0-9]*: zcopy_sends' "$got")" -eq 2 ] &&
        [ "$(sum_of "$got" errors)" -eq 1 ] && [ "$(sum_of "$got" keys_live)" -eq 0 ] &&
        ! grep "pml_umr: rank [0-9]*: zcopy_sends" "$got" | grep -v " acks_posted 0 " ||
        { grep "FAIL\|pml_umr: rank" "$got"; return 1; }
}

# Escapes that cannot be sent (pml_umr_test_fault=ackpost: no ack receive
# can be posted): rank 0's 4 fail with an error (the program checks the
# class), each counted once in errors, one line; the column passes through
# (one fallback) and rank 1 receives exactly the column and the Z bytes
# sent after them on the same tag (a raw escape would arrive first, be
# taken for a control message and its receive wait: run_timeout).
escape_fails() {   # pml
    local got=$out/umr-escfail-2-$1
    run "$got" "${umr_env[@]}" "${forced[@]}" OMPI_MCA_pml_umr_test_fault=ackpost \
        -- -np 2 $(pml_args "$1" umr) -- escfail ||
        { echo "run with pml/umr failed"; tail -30 "$got"; return 1; }
    echo "errors $(sum_of "$got" errors) escapes $(sum_of "$got" escapes)" \
         "fallbacks $(sum_of "$got" fallbacks)"
    ! grep "$failed_lines" "$got" &&
        [ "$(grep -c '^check escfail' "$got")" -eq 2 ] &&
        [ "$(sum_of "$got" errors)" -eq 4 ] && [ "$(sum_of "$got" escapes)" -eq 4 ] &&
        [ "$(sum_of "$got" fallbacks)" -eq 1 ] && [ "$(sum_of "$got" keys_live)" -eq 0 ] &&
        [ "$(grep -c 'pml_umr: rank 0: an escape to rank 1 .* cannot be sent' "$got")" -eq 1 ] ||
        { grep "FAIL\|pml_umr: rank" "$got"; return 1; }
}

# Rank NORAIL has no rail (pml_umr_test_fault=norail on it alone,
# $PML_UMR_REGRESS_NORAIL): the same bytes as without pml/umr, both ways;
# the other rank's first control message with a key is declined, which
# retires rank NORAIL there (once); no error, no key left.
norail_both_ways() {   # pml, norail rank
    local got=$out/umr-norail-2-$1
    same norail 2 "$1" PML_UMR_REGRESS_NORAIL="$2" || return 1
    echo "escapes $(sum_of "$got" escapes) declined $(sum_of "$got" declined)" \
         "retired $(sum_of "$got" retired) zcopy_recvs $(sum_of "$got" zcopy_recvs)"
    [ "$(sum_of "$got" escapes)" -eq 10 ] && [ "$(sum_of "$got" zcopy_recvs)" -eq 0 ] &&
        [ "$(sum_of "$got" retired)" -eq 1 ] && [ "$(sum_of "$got" errors)" -eq 0 ] &&
        [ "$(sum_of "$got" keys_live)" -eq 0 ] || { grep "pml_umr: rank" "$got"; return 1; }
}

# CASE (hooks, hookszc) under PML at np 2: the same data as without pml/umr,
# and each rank's libc memory functions lead to Open MPI's patcher.
memory_hooks_shared() {   # case, pml
    local c=$1 pml=$2 ref=$out/ref-$1-$2 got=$out/umr-$1-$2 lib="libopen-pal[^ ]*"
    [ "$(uname -m)" = x86_64 ] ||
        { echo "reads x86-64 jumps: skipped on $(uname -m)"; return 77; }
    run "$ref" -- -np 2 $(pml_args "$pml") -- "$c" ||
        { echo "reference run failed"; tail -20 "$ref"; return 1; }
    run "$got" "${umr_env[@]}" "${forced[@]}" OMPI_MCA_pml_umr_verbose=5 -- -np 2 \
        $(pml_args "$pml" umr) -- "$c" ||
        { echo "run with pml/umr failed (status $?)"; tail -30 "$got"; return 1; }
    clean_run "$ref" && clean_run "$got" || return 1
    diff <(checks_by_rank "$ref" | grep "^[0-9]*: check $c rank [0-9]* [0-9a-f]*$") \
         <(checks_by_rank "$got" | grep "^[0-9]*: check $c rank [0-9]* [0-9a-f]*$") ||
        { echo "results differ, per rank"; return 1; }
    grep -h "^check $c rank [0-9]* munmap" "$ref" | sed 's/^/without pml\/umr: /' | head -1
    [ "$(grep -c "^check $c rank [0-9]* munmap $lib brk $lib madvise $lib mmap $lib$" "$got")" -eq 2 ] &&
        [ "$(grep -c "memory hooks pass unmaps on to UCM" "$got")" -eq 2 ] ||
        { grep "^check $c rank [0-9]* munmap\|memory hooks" "$got";
          echo "libc's memory functions do not lead to Open MPI's patcher"; return 1; }
    [ "$c" = hooks ] || [ "$(sum_of "$got" zcopy_sends)" -ge 1 ] ||
        { grep "pml_umr: rank" "$got"; echo "nothing went zero-copy"; return 1; }
}

for pml in ob1 ucx; do
    check "memory_hooks_np2_${pml}" memory_hooks_shared hooks "$pml"
    check "memory_hooks_zcopy_np2_${pml}" memory_hooks_shared hookszc "$pml"
    check "spare_ack_cancelled_np2_${pml}" spare_ack_cancelled "$pml"
    check "escfail_np2_${pml}" escape_fails "$pml"
    for r in 0 1; do
        check "norail${r}_np2_${pml}" norail_both_ways "$pml" "$r"
    done
    check "bsendbuf_np2_${pml}" same bsendbuf 2 "$pml"
    check "escapes_np2_${pml}" escapes_whole "$pml"
    check "verdict_np2_${pml}" verdict_per_count "$pml"
    check "verdict_reuse_np2_${pml}" verdict_reuse "$pml"
    check "window_np2_${pml}" window_acks "$pml"
done
for pml in ob1 ucx; do
    for np in 2 4; do
        for c in bigsend bigrecv status colls persist; do
            check "${c}_np${np}_${pml}" same "$c" "$np" "$pml"
        done
    done
    check "trunc_np2_${pml}" same trunc 2 "$pml"
    check "trunccomm_np2_${pml}" same trunccomm 2 "$pml"
    for np in 2 4; do
        check "bogusack_np${np}_${pml}" acks_dropped "$np" "$pml"
    done
    check "counters_np2_${pml}" counters_add_up "$pml"
    check "counters_pool_of_one_np2_${pml}" pool_of_one "$pml"
    check "typo_warned_np2_${pml}" typo_warned "$pml"
done
check typo_warned_by_transport typo_warned_by_transport
# the size at which MPI_Alltoallv over ucx crashed (a persistent receive
# started through pml/umr)
check persist_np10_ucx same persist 10 ucx
# and the size at which MPI_Allgatherv aborted (np 4 above)
check colls_np10_ob1 same colls 10 ob1
check colls_np10_ucx same colls 10 ucx
finish
