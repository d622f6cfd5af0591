#!/bin/bash
#
# ucx_perftest drives the preloaded mlx5_umr module over loopback (server in
# the background, client in the foreground), and UCP jobs still run with the
# module loaded. Prints results in GoogleTest's format.
#
set -u
builddir=${builddir:-.}
module=$(cd "$builddir/../../src/uct/mlx5_umr/.libs" 2>/dev/null && pwd)/libuct_mlx5_umr.so
perftest=${UCX_PERFTEST:-ucx_perftest}
# Sanitizer builds preload their runtimes first (contrib/run-sanitizers.sh).
preload=${UMR_PRELOAD_EXTRA:+$UMR_PRELOAD_EXTRA:}
suite=perftest
. "$(dirname "$0")/gtest_format.sh"

# a port per run: parallel test runs must not collide
port=$(( 20000 + ($$ % 20000) ))

# server and client with the same arguments; the client's last line counts
perf() {   # env..., -- perftest args...
    local envs=() out rc
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
    port=$((port + 1))
    env "${envs[@]}" timeout 60 $perftest "$@" -p $port >/dev/null 2>&1 &
    local srv=$!
    sleep 0.5
    out=$(env "${envs[@]}" timeout 60 $perftest localhost "$@" -p $port 2>&1)
    rc=$?
    wait $srv; local src=$?
    if [ $rc -ne 0 ] || [ $src -ne 0 ] || ! grep -q "^Final:" <<<"$out"; then
        echo "ucx_perftest $* failed (client $rc, server $src):"
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
