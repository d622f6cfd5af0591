#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# ucx_perftest drives the preloaded mlx5_umr module over loopback (server in
# the background, client in the foreground), and UCP jobs still run with the
# module loaded. Prints results in GoogleTest's format.
#
# Each run must: exit 0 on both sides, report every iteration it was asked
# for, rates above zero, and bandwidth x time per iteration equal to the
# message size (the bytes were really accounted for). Wall-clock limits are
# scaled by UMR_TEST_TIME_MULTIPLIER, like the C++ suites.
#
set -u
builddir=${builddir:-.}
module=$(cd "$builddir/../../src/uct/mlx5_umr/.libs" 2>/dev/null && pwd)/libuct_mlx5_umr.so
perftest=${UCX_PERFTEST:-ucx_perftest}
# A ucx_perftest built with MPI (Debian 13 and later) starts in MPI mode when
# its stdin is not a terminal and then wants two MPI ranks: -P 0 keeps the
# client/server mode. One built without MPI has no -P (and would print its
# usage on it).
if $perftest -h 2>&1 | grep -q -- '-P <0|1>'; then
    perftest="$perftest -P 0"
fi
# Sanitizer builds preload their runtimes first (contrib/run-sanitizers.sh).
preload=${UMR_PRELOAD_EXTRA:+$UMR_PRELOAD_EXTRA:}
suite=perftest
. "$(dirname "$0")/gtest_format.sh"
limit=$(test_seconds 300)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# a port per run: parallel test runs must not collide
port=$(( 20000 + ($$ % 20000) ))

# Start the server; succeed once it listens (it prints this after listen(),
# line-buffered through stdbuf). A port already taken makes it exit: try the
# next one.
start_server() {   # env array name, perftest args...
    local -n _envs=$1; shift
    local try
    for try in 1 2 3 4 5; do
        port=$((port + 1))
        # a log per port: never a line of the previous server
        srvlog=$tmp/server.$port
        env "${_envs[@]}" timeout "$limit" stdbuf -oL $perftest "$@" -p $port \
            >"$srvlog" 2>&1 &
        srv=$!
        wait_for_line "$srvlog" "^Waiting for connection" $srv && return 0
        kill $srv 2>/dev/null; wait $srv 2>/dev/null
    done
    echo "ucx_perftest server never listened:"; tail -5 "$srvlog"
    return 1
}

# Check the client's Final: line against the arguments of the run.
check_final() {    # output, iterations, bytes per iteration
    awk -v iters="$2" -v bytes="$3" '
        /^Final:/ { final = 1
            # Final: iters lat50 lat_avg lat_overall bw_avg bw_overall rate_avg rate_overall
            # (latency in us, 3 decimals; bandwidth in MB/s = 2^20 B/s, 2 decimals)
            if (NF != 9)   { print "bad Final: line: " $0; bad = 1; next }
            if ($2 != iters) { print "iterations " $2 ", asked " iters; bad = 1 }
            if (!($5 > 0) || !($9 > 0)) { print "latency or message rate not > 0: " $0; bad = 1; next }
            # bytes per iteration / time per iteration = bandwidth, within
            # the rounding of the printed figures
            want = bytes / ($5 * 1e-6) / 1048576
            tol  = 0.0051 + want * (0.02 + 0.0005 / $5)
            if ((want >= 0.01) && !($7 > 0)) { print "bandwidth not > 0: " $0; bad = 1 }
            if (($7 < want - tol) || ($7 > want + tol)) {
                printf "bandwidth %.2f MB/s, %d B per %.3f us is %.2f MB/s\n", $7, bytes, $5, want
                bad = 1
            }
        }
        END { if (!final) print "no Final: line"; exit (bad || !final) }' <<<"$1"
}

# server and client with the same arguments; the client's last line counts
perf() {   # env..., -- perftest args...
    local envs=() args out rc src iters=0 bytes=0 s
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
    args=("$@")
    while [ $# -gt 0 ]; do
        case $1 in
            -n) iters=$2; shift ;;
            -s) for s in ${2//,/ }; do bytes=$((bytes + s)); done; shift ;;
        esac
        shift
    done

    start_server envs "${args[@]}" || return 1
    out=$(env "${envs[@]}" timeout "$limit" $perftest localhost "${args[@]}" -p $port 2>&1)
    rc=$?
    wait $srv; src=$?
    if [ $rc -ne 0 ] || [ $src -ne 0 ] || ! check_final "$out" "$iters" "$bytes"; then
        echo "ucx_perftest ${args[*]} failed (client exit $rc, server exit $src):"
        echo "$out" | grep -v "^|" | tail -5
        return 1
    fi
    grep "^Final:" <<<"$out"
}

uct() { perf LD_PRELOAD=$preload$module UCX_MLX5_UMR_ENGINE=sw -- -x mlx5_umr -d sw "$@"; }
iov40=$(printf '256,%.0s' $(seq 39))256

check put_bw_zcopy      uct -t put_bw -D zcopy -s 65536 -n 2000
check put_bw_zcopy_iov  uct -t put_bw -D zcopy -s 1024,1024,4096 -n 2000
check put_bw_umr_list   uct -t put_bw -D zcopy -s $iov40 -n 1000
check get_zcopy         uct -t get -D zcopy -s 8192 -n 2000
check get_zcopy_iov     uct -t get -D zcopy -s $iov40 -n 1000
check put_bw_bcopy      uct -t put_bw -D bcopy -s 4096 -n 2000
check get_bcopy         uct -t get -D bcopy -s 4096 -n 2000
check put_lat_short     uct -t put_lat -D short -s 8 -n 2000

# UCP with the module loaded and listed: same job, still runs
for tls in all sm,self,mlx5_umr tcp,mlx5_umr; do
    check "ucp_put_bw_$tls" perf LD_PRELOAD=$preload$module UCX_TLS=$tls -- \
          -t ucp_put_bw -s 65536 -n 1000
    check "ucp_tag_bw_$tls" perf LD_PRELOAD=$preload$module UCX_TLS=$tls -- \
          -t tag_bw -s 65536 -n 500
done

finish
