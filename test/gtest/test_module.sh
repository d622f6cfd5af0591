#!/bin/bash
#
# The built module loads into a stock UCX through LD_PRELOAD:
#  - ucx_info -d lists the mlx5_umr transport,
#  - ucx_info -c -f documents the UCX_MLX5_UMR_* variables,
#  - a module whose ABI guard fails registers nothing and says why.
# Prints results in GoogleTest's format so the summary can count them.
#
set -u
builddir=${builddir:-.}
module=$builddir/../../src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so
skew=$builddir/.libs/libuct_mlx5_umr_skew.so
ucx_info=${UCX_INFO:-ucx_info}
passed=0 failed=0

check() {   # name, command...
    local name=$1; shift
    echo "[ RUN      ] module.$name"
    if "$@"; then
        echo "[       OK ] module.$name"; passed=$((passed + 1))
    else
        echo "[  FAILED  ] module.$name"; failed=$((failed + 1))
    fi
}

lists_transport() {
    local out
    out=$(UCX_MLX5_UMR_ENGINE=sw LD_PRELOAD=$module $ucx_info -d 2>&1)
    grep -q "Transport: mlx5_umr" <<<"$out" || { echo "$out" | head -40; return 1; }
    grep -q "Component: mlx5_umr" <<<"$out" || { echo "no 'Component: mlx5_umr'"; return 1; }
}

stock_ucx_does_not_list_it() {
    ! $ucx_info -d 2>&1 | grep -q "Transport: mlx5_umr"
}

documents_variables() {
    local out var
    out=$(LD_PRELOAD=$module $ucx_info -c -f 2>&1)
    for var in UCX_MLX5_UMR_ENGINE; do
        grep -q "^$var=" <<<"$out" || { echo "$var not listed"; return 1; }
    done
    # Every UCX_MLX5_UMR_ variable must carry a documentation comment.
    awk '/^#/ {doc = doc $0} /^UCX_MLX5_UMR_/ { if (doc !~ /[a-zA-Z]/) { print "undocumented: " $0; bad = 1 } }
         /^$/ {doc = ""} END {exit bad}' <<<"$out"
}

skewed_module_refuses() {
    local out
    [ -f "$skew" ] || { echo "missing $skew"; return 1; }
    out=$(LD_PRELOAD=$skew $ucx_info -d 2>&1)
    if grep -q "Transport: mlx5_umr" <<<"$out"; then
        echo "skewed module registered the transport"; return 1
    fi
    grep -q "mlx5_umr: not registering" <<<"$out" || { echo "no refusal line:"; echo "$out" | head; return 1; }
}

check lists_transport lists_transport
check stock_ucx_does_not_list_it stock_ucx_does_not_list_it
check documents_variables documents_variables
check skewed_module_refuses skewed_module_refuses

total=$((passed + failed))
echo "[==========] $total tests ran."
echo "[  PASSED  ] $passed tests."
[ $failed -eq 0 ] || { echo "[  FAILED  ] $failed tests."; exit 1; }
