#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# The built module loads into a stock UCX through LD_PRELOAD:
#  - ucx_info -d lists the mlx5_umr transport,
#  - ucx_info -c -f documents the UCX_MLX5_UMR_* variables,
#  - a module whose ABI guard fails registers nothing and says why,
#  - a second copy of the module in the same process stays out.
# Prints results in GoogleTest's format so the summary can count them.
#
set -u
builddir=${builddir:-.}
module=$builddir/../../src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so
skew=$builddir/.libs/libuct_mlx5_umr_skew.so
ucx_info=${UCX_INFO:-ucx_info}
# Sanitizer builds preload their runtimes first (contrib/run-sanitizers.sh).
preload=${UMR_PRELOAD_EXTRA:+$UMR_PRELOAD_EXTRA:}
# ucx_info itself leaks its worker address (UCX 1.13.1): not ours to report,
# and LeakSanitizer's exit would swallow its output.
[ -z "$preload" ] || ucx_info="env ASAN_OPTIONS=detect_leaks=0 $ucx_info"
suite=module
. "$(dirname "$0")/gtest_format.sh"

lists_transport() {
    local out
    out=$(UCX_MLX5_UMR_ENGINE=sw LD_PRELOAD=$preload$module $ucx_info -d 2>&1)
    grep -q "Transport: mlx5_umr" <<<"$out" || { echo "$out" | head -40; return 1; }
    grep -q "Component: mlx5_umr" <<<"$out" || { echo "no 'Component: mlx5_umr'"; return 1; }
}

stock_ucx_does_not_list_it() {
    ! $ucx_info -d 2>&1 | grep -q "Transport: mlx5_umr"
}

documents_variables() {
    local out var
    out=$(LD_PRELOAD=$preload$module $ucx_info -c -f 2>&1)
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
    out=$(LD_PRELOAD=$preload$skew $ucx_info -d 2>&1)
    if grep -q "Transport: mlx5_umr" <<<"$out"; then
        echo "skewed module registered the transport"; return 1
    fi
    grep -q "mlx5_umr: not registering" <<<"$out" || { echo "no refusal line:"; echo "$out" | head; return 1; }
}

# Two copies of the module in one process (a program linking one, an
# installed or HPC-X's one loaded beside it): the second copy's symbols bind
# to the first's, so its registration must stay out, not put the first
# copy's entries on UCX's lists twice (a cycle: ucx_info never ended).
two_copies_register_once() {
    local out copy rc=0 asan=${ASAN_OPTIONS:-}
    # two copies are this case's subject: AddressSanitizer's check of one
    # definition per global would stop every process of the line (timeout
    # too: the preload is its) before the registration
    [ -z "$preload" ] || asan=detect_leaks=0:detect_odr_violation=0
    copy=$(mktemp -d)/libuct_mlx5_umr.so
    cp -L "$module" "$copy"
    out=$(ASAN_OPTIONS=$asan UCX_MLX5_UMR_ENGINE=sw LD_PRELOAD=$preload$module:$copy \
          timeout "$(test_seconds 60)" "${UCX_INFO:-ucx_info}" -d 2>&1) || rc=$?
    rm -rf "$(dirname "$copy")"
    [ $rc -eq 0 ] || { echo "ucx_info with two copies: exit $rc (124: it never ended)"; return 1; }
    [ "$(grep -c "Component: mlx5_umr" <<<"$out")" = 1 ] ||
        { echo "'Component: mlx5_umr' not listed once:"; grep "Component:" <<<"$out"; return 1; }
}

# Loading the module never changes what UCP picks: with every transport
# allowed, the endpoint's lanes are the same with and without the module.
ucp_lanes_unchanged() {
    local with without
    # resource and md indices shift with one more component: compare names
    local norm='s/ [0-9]*:/ /; s/md\[[0-9]*\]//g'
    without=$(UCX_TLS=all $ucx_info -u t -e 2>&1 | grep 'lane\[' | sed "$norm")
    with=$(UCX_TLS=all LD_PRELOAD=$preload$module $ucx_info -u t -e 2>&1 | grep 'lane\[' | sed "$norm")
    [ -n "$without" ] || { echo "no lanes printed by ucx_info -e"; return 1; }
    if [ "$with" != "$without" ]; then
        echo "lanes differ with the module loaded:"; echo "$with"; echo "without:"; echo "$without"
        return 1
    fi
}

check lists_transport lists_transport
check stock_ucx_does_not_list_it stock_ucx_does_not_list_it
check documents_variables documents_variables
check skewed_module_refuses skewed_module_refuses
check two_copies_register_once two_copies_register_once
check ucp_lanes_unchanged ucp_lanes_unchanged

finish
