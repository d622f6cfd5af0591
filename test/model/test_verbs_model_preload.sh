#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# The rdma-core model as a preloadable library (libumr_verbs_model.so):
#  - it defines every verbs / mlx5dv symbol the built libuct_mlx5_umr.so
#    imports, with the version the module asks for, and exports nothing
#    else (so the installed module binds to it under LD_PRELOAD);
#  - an ordinary verbs program (not a model client) sees rdma-core's own
#    device list, the same with and without the model; named in
#    UMR_MODEL_CLIENTS it sees the model's device, on the simulated host its
#    environment gives (LID, port state), and one per UMR_MODEL_DEVICES;
#  - ibv_reg_mr of memory the process may only read (a PROT_READ file
#    mapping, private and shared, an mprotect'ed buffer), for a client:
#    write access refused (EFAULT), read access granted; with
#    UMR_MODEL_KERNEL=6.1 read access to the shared one refused too;
#  - UCX loads the module over the model: ucx_info lists mlx5_umr on
#    mlx5_0 (UCX_MLX5_UMR_ENGINE=mlx5);
#  - the device suite (gtest_engine_mlx5_device), named a client, passes
#    on the model over IB and RoCE, nothing skipped;
#  - two unrelated processes on two simulated hosts (ucx_perftest server
#    and client, UMR_MODEL_JOB, UMR_MODEL_HOST 0 and 1) move data through
#    the mlx5 engine: put_bw and get with zero copy, over InfiniBand and
#    over RoCE v2, and a RoCE v1 host and a RoCE v2 host do not connect
#    (unreachable);
# Results in GoogleTest's format (contrib/test-summary.sh counts them).
#
set -u
top_builddir=${top_builddir:-../..}
lib=$top_builddir/test/model/.libs/libumr_verbs_model.so
# sanitizer builds (contrib/run-sanitizers.sh): their runtimes come first
san=${UMR_PRELOAD_EXTRA:+${UMR_PRELOAD_EXTRA//:/ } }
module=$top_builddir/src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so
check=$PWD/model_client_check
out=$PWD/test_verbs_model_preload.out.d
mkdir -p "$out"
suite=verbs_model_preload
. "$(dirname "$0")/../gtest/gtest_format.sh"

# NAME@VERSION of the verbs symbols an object imports / defines
imports() {
    objdump -T "$1" | awk '$0 ~ /\*UND\*/ && $NF ~ /^(_?ibv_|mlx5dv_)/ {
        v = $(NF - 1); gsub(/[()]/, "", v); print $NF "@" v }' | sort -u
}
defines() {
    objdump -T "$1" | awk '$0 !~ /\*UND\*/ && $2 == "g" {
        v = $(NF - 1); gsub(/[()]/, "", v); print $NF "@" v }' |
        grep -v "@UMR_MODEL_1.0$\|@IBVERBS_1.[0-9]*$ *$" | sort -u
}

symbols_match() {
    local imp def missing
    [ -f "$lib" ] || { echo "no $lib"; return 1; }
    imp=$(imports "$module")
    def=$(objdump -T "$lib" | awk '$0 !~ /\*UND\*/ && $2 == "g" {
        v = $(NF - 1); gsub(/[()]/, "", v); print $NF "@" v }' | sort -u)
    [ -n "$imp" ] || { echo "the module imports no verbs?"; return 1; }
    # every versioned verbs symbol the module needs, with its version;
    # strings the module calls for logs only are rdma-core's own
    missing=$(comm -23 <(grep -v "^ibv_wc_status_str@\|^ibv_event_type_str@" <<<"$imp") \
                       <(grep -v "@UMR_MODEL_1.0$" <<<"$def"))
    [ -z "$missing" ] || { echo "not defined by the model: $missing"; return 1; }
    # and nothing but verbs and the version nodes
    ! grep -v "^\(_\?ibv_\|mlx5dv_\|IBVERBS_\|MLX5_\|UMR_MODEL_\)" <<<"$def" ||
        { echo "the model exports more"; return 1; }
}

non_client_sees_rdma_core() {
    local plain model
    plain=$("$check" 2>&1) || return 1
    model=$(env LD_PRELOAD="$san$lib" "$check" 2>&1) || { echo "$model"; return 1; }
    [ "$plain" = "$model" ] || { echo "without: $plain"; echo "with: $model"; return 1; }
    ! grep -q mlx5_0 <<<"$model" || { echo "$model"; return 1; }
}

client_sees_model() {
    local o
    o=$(env LD_PRELOAD="$san$lib" UMR_MODEL_CLIENTS=model_client_check \
        UMR_MODEL_HOSTS=4 UMR_MODEL_HOST=2 UMR_MODEL_DEVICES=2 "$check" 2>&1) ||
        { echo "$o"; return 1; }
    grep -q "^devices 2 mlx5_0 mlx5_1$" <<<"$o" &&
        grep -q "^open mlx5_0 lid 3 state 4$" <<<"$o" &&
        grep -q "^open mlx5_1 lid 3 state 4$" <<<"$o" || { echo "$o"; return 1; }
    o=$(env LD_PRELOAD="$san$lib" UMR_MODEL_CLIENTS=model_client_check \
        UMR_MODEL_HOSTS=2 UMR_MODEL_HOST=1 UMR_MODEL_HOST1=lid=77 "$check" 2>&1)
    grep -q "^open mlx5_0 lid 77 state 4$" <<<"$o" || { echo "$o"; return 1; }
}

# Issue 30 finding 1 (rule R21b): the kernel pins a registration with write
# access for writing; memory the process may only read takes read access.
client_reg_read_only() {
    local o what want
    o=$(env LD_PRELOAD="$san$lib" UMR_MODEL_CLIENTS=model_client_check \
        "$check" reg 2>&1) || { echo "$o"; return 1; }
    for what in file-private file-shared mprotect; do
        grep -q "^reg mlx5_0 $what write 14$" <<<"$o" &&
            grep -q "^reg mlx5_0 $what read 0$" <<<"$o" ||
            { echo "$o"; echo "$what: not write EFAULT (14) and read 0"; return 1; }
    done
    o=$(env LD_PRELOAD="$san$lib" UMR_MODEL_CLIENTS=model_client_check \
        UMR_MODEL_KERNEL=6.1 "$check" reg 2>&1) || { echo "$o"; return 1; }
    for want in "file-private read 0" "file-shared read 14" "mprotect read 0"; do
        grep -q "^reg mlx5_0 $want$" <<<"$o" || { echo "$o"; echo "Linux 6.1: not $want"; return 1; }
    done
}

ucx_lists_mlx5_umr() {
    local o
    o=$(env LD_PRELOAD="$san$lib $module" UCX_MLX5_UMR_ENGINE=mlx5 ucx_info -d 2>&1)
    grep -A3 "Transport: mlx5_umr" <<<"$o" | grep -q "Device: mlx5_0" ||
        { echo "$o" | tail -20; return 1; }
}

# perftest JOB HOSTSPEC0 HOSTSPEC1 ARGS...: server on host 0, client on
# host 1 (unrelated processes, one fabric table); the client's status
# A ucx_perftest built with MPI (Debian 13 and later) starts in MPI mode when
# its stdin is not a terminal and then wants two MPI ranks: -P 0 keeps the
# client/server mode (as test/gtest/test_uct_perftest.sh).
perftest_mode=()
if ucx_perftest -h 2>&1 | grep -q -- '-P <0|1>'; then
    perftest_mode=(-P 0)
fi
port=$((13337 + $$ % 1000))
perftest() {
    local job=umr-preload-test-$$-$1 h0=$2 h1=$3 rc srv; shift 3
    local envs=(LD_PRELOAD="$san$lib $module" UCX_MLX5_UMR_ENGINE=mlx5
                UMR_MODEL_JOB="$job" UMR_MODEL_HOSTS=2 UMR_MODEL_LINK="$link"
                UMR_MODEL_HOST0="$h0" UMR_MODEL_HOST1="$h1")
    port=$((port + 1))
    # (its lines unbuffered: the client starts once it listens)
    env "${envs[@]}" UMR_MODEL_HOST=0 timeout "$(test_seconds 300)" stdbuf -oL ucx_perftest \
        "${perftest_mode[@]}" -x mlx5_umr -d mlx5_0 -p "$port" "$@" >"$out/server-$job" 2>&1 &
    srv=$!
    last=$out/server-$job
    wait_for_line "$last" "^Waiting for connection" $srv ||
        { echo "the server never listened"; kill $srv 2>/dev/null; wait $srv; return 1; }
    rc=0
    env "${envs[@]}" UMR_MODEL_HOST=1 timeout "$(test_seconds 300)" ucx_perftest \
        "${perftest_mode[@]}" localhost -x mlx5_umr -d mlx5_0 -p "$port" "$@" \
        >"$out/client-$job" 2>&1 || rc=$?
    wait "$srv" || [ $rc -ne 0 ] || rc=$?
    rm -f "/dev/shm/umr-model-$job"
    last=$out/client-$job
    return $rc
}

two_hosts_move_data() {   # ib|roce
    link=$1
    perftest "$1-put" "" "" -t put_bw -D zcopy -s 65536 -n 200 ||
        { tail -5 "$last"; return 1; }
    grep -q "Final:" "$last" || { tail -5 "$last"; return 1; }
    perftest "$1-get" "" "" -t get -D zcopy -s 65536 -n 200 ||
        { tail -5 "$last"; return 1; }
    grep -q "Final:" "$last" || { tail -5 "$last"; return 1; }
}

mixed_roce_versions_unreachable() {
    link=roce
    ! perftest mixed "roce=v2" "roce=v1,ipv4=0" -t put_bw -D zcopy -s 4096 -n 10 ||
        { echo "connected"; tail -5 "$last"; return 1; }
    grep -qi "unreachable\|Destination is unreachable" "$last" "$out"/server-*mixed* ||
        { tail -5 "$last"; return 1; }
}

# The device suite (gtest_engine_mlx5_device: loopback UMR write/read, a
# stale key, nesting depth), which no machine here runs otherwise, on the
# model preloaded: over IB and over RoCE it passes, none skipped.
device_suite_on_the_model() {   # ib|roce
    local o suite=$top_builddir/test/gtest/gtest_engine_mlx5_device
    [ -x "$suite" ] || make -C "$top_builddir/test/gtest" gtest_engine_mlx5_device >/dev/null 2>&1
    o=$(env LD_PRELOAD="$san$lib" UMR_MODEL_CLIENTS=gtest_engine_mlx5_device \
        UMR_MODEL_LINK="$1" "$suite" 2>&1) || { echo "$o" | tail -20; return 1; }
    grep -q "PASSED  \] [1-9]" <<<"$o" && ! grep -q "SKIPPED" <<<"$o" &&
        grep -q "^nesting: 4 levels work" <<<"$o" || { echo "$o" | tail -20; return 1; }
}

check preload_symbols_match_the_module symbols_match
check non_client_sees_rdma_core non_client_sees_rdma_core
check client_sees_the_model client_sees_model
check client_reg_mr_read_only_mapping client_reg_read_only
check ucx_info_lists_mlx5_umr_on_the_model ucx_lists_mlx5_umr
check device_suite_on_the_model_ib device_suite_on_the_model ib
check device_suite_on_the_model_roce device_suite_on_the_model roce
check two_hosts_infiniband two_hosts_move_data ib
check two_hosts_roce_v2 two_hosts_move_data roce
check mixed_roce_versions_unreachable mixed_roce_versions_unreachable
finish
