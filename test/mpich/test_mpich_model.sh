#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# libumr_mpich.so on the mlx5 engine over the rdma-core model
# (contrib/mpirun-model.sh --mpich: the model preloaded before the library,
# each rank on its simulated host, UMR_MPICH_DEVICES=mlx5_0, zero-copy
# forced): the user-shaped programs of test_mpich.sh (p2p_test's cases,
# bench_mpi_apps particles and transpose) print the same check lines on
# every rank as without the library, over IB and RoCE v2, at np 2 (two
# hosts) and np 4 (two ranks a host); every rank moved messages zero-copy
# and ended with no registration, no held message and no error; seeded
# random layouts (mpich_layouts) arrive as MPICH's MPI_Pack/MPI_Unpack
# say, every message above 4160 B zero-copy; one-sided (armci_test:
# strided get/put in lock_all/flush) prints the same check lines on every
# rank as without the library, every rank moved puts or gets zero-copy
# through target keys; Rput/Rget requests (mpich_rma_req, IB, np 2): every
# byte right on every rank, each Rget's data there when its request
# completed, and every request taken zero-copy completed from progress
# after its call returned.
# Results in GoogleTest's format (contrib/test-summary.sh counts them).
#
set -u
. "$(dirname "$0")/mpich_test_env.sh"
out=$PWD/test_mpich_model.out.d
rm -rf "$out"
mkdir -p "$out"
suite=mpich_model
. "$(dirname "$0")/../gtest/gtest_format.sh"
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
export BUILD_DIR=$top_builddir
# the mlx5 engine for every peer (mpich_test_env.sh set sw)
export UCX_MLX5_UMR_ENGINE=mlx5

p2p_cases="halo neighbor_open alltoallw probe persistent wildcards truncation
indexed modes intercomm fresh retype blocking reqops bcast"

one() {   # name link np prog args...
    local name=$1 link=$2 np=$3 ref got r n
    shift 3
    prog=$PWD/$1
    shift
    ref=$out/plain-$name-$np got=$out/model-$name-$link-$np
    if [ ! -f "$ref" ]; then
        launcher=("$mpiexec")
        run "$ref" "$np" -- "$@" || { echo "the plain job failed"; tail "$ref"; rm -f "$ref"; return 1; }
    fi
    launcher=("$top_srcdir/contrib/mpirun-model.sh" --mpich --no-build --link "$link" --)
    run "$got" "$np" -- "$@" || { echo "job failed ($got)"; tail -20 "$got"; return 1; }
    same_checks "$ref" "$got" && counters_each_rank "$got" || return 1
    for r in $(seq 0 $((np - 1))); do
        n=$(( $(counter "$got" $r zcopy_sends) + $(counter "$got" $r zcopy_recvs) ))
        [ "$n" -gt 0 ] && [ "$(counter "$got" $r keys_live)" = 0 ] &&
            [ "$(counter "$got" $r errors)" = 0 ] && [ "$(counter "$got" $r held)" = 0 ] ||
            { echo "rank $r:"; rank_lines "$got" $r | grep "umr_mpich: rank"; return 1; }
    done
}

apps() {   # link np
    done_line="APP particles .* ok" one particles "$1" "$2" bench_mpi_apps -a particles -r 10 &&
    done_line="APP transpose .* ok" one transpose "$1" "$2" bench_mpi_apps -a transpose -r 5
}

# seeded random layouts (mpich_layouts, as test_mpich_layouts.sh): every
# byte as MPICH's MPI_Pack/MPI_Unpack say on every rank, and every message
# above the control message's size zero-copy over the model
layouts() {   # link np
    local got=$out/layouts-$1-$2 r
    prog=$PWD/mpich_layouts
    launcher=("$top_srcdir/contrib/mpirun-model.sh" --mpich --no-build --link "$1" --)
    run "$got" "$2" -- -s 7 -n 60 || { echo "job failed ($got)"; tail -20 "$got"; return 1; }
    all_right "$got" && counters_each_rank "$got" || return 1
    for r in $(seq 0 $(($2 - 1))); do
        [ "$(counter "$got" $r zcopy_sends)" = "$(field "$got" $r big)" ] &&
            [ "$(field "$got" $r big)" -gt 0 ] && [ "$(counter "$got" $r errors)" = 0 ] &&
            [ "$(counter "$got" $r keys_live)" = 0 ] ||
            { echo "rank $r: big $(field "$got" $r big)"; rank_lines "$got" $r | grep "umr_mpich: rank"; return 1; }
    done
}

# one-sided: put and get through the target keys over the model
rma() {   # link np
    local got=$out/armci-$1-$2 ref=$out/plain-armci-$2 r n
    prog=$PWD/armci_test
    if [ ! -f "$ref" ]; then
        launcher=("$mpiexec")
        run "$ref" "$2" || { echo "the plain job failed"; tail "$ref"; rm -f "$ref"; return 1; }
    fi
    launcher=("$top_srcdir/contrib/mpirun-model.sh" --mpich --no-build --link "$1" --)
    run "$got" "$2" || { echo "job failed ($got)"; tail -20 "$got"; return 1; }
    done_line="osc_umr_armci: 0 failure(s)" same_checks "$ref" "$got" || return 1
    for r in $(seq 0 $(($2 - 1))); do
        n=$(rank_lines "$got" $r | grep -a "^umr_mpich: rank $r: .*zcopy_puts" |
            awk '{ for (i = 1; i < NF; ++i) if ($i == "zcopy_puts" || $i == "zcopy_gets") s += $(i + 1) } END { print s + 0 }')
        [ "$n" -gt 0 ] && [ "$(counter "$got" $r keys_live)" = 0 ] ||
            { echo "rank $r:"; rank_lines "$got" $r | grep "umr_mpich: rank"; return 1; }
    done
}

for link in ib roce; do
    for np in 2 4; do
        # shellcheck disable=SC2086
        check "p2p_${link}_np$np" one p2p "$link" "$np" p2p_test $p2p_cases
        check "apps_${link}_np$np" apps "$link" "$np"
        check "layouts_${link}_np$np" layouts "$link" "$np"
    done
done
check rma_ib_np2 rma ib 2

requests() {   # link np
    local got=$out/req-$1-$2 r n
    prog=$PWD/mpich_rma_req
    launcher=("$top_srcdir/contrib/mpirun-model.sh" --mpich --no-build --link "$1" --)
    run "$got" "$2" || { echo "job failed ($got)"; tail -20 "$got"; return 1; }
    for r in $(seq 0 $(($2 - 1))); do
        n=$(rank_lines "$got" $r | grep -a "^umr_mpich: rank $r: .*zcopy_puts" |
            awk '{ for (i = 1; i < NF; ++i) if ($i == "rma_requests") print $(i + 1) }')
        rank_lines "$got" $r | grep -aq "^mpich_rma_req: rank $r: .* early 0 failures 0$" &&
            [ "${n:-0}" -gt 0 ] &&
            rank_lines "$got" $r | grep -aq "rma_requests $n rma_requests_later $n\$" ||
            { echo "rank $r:"; rank_lines "$got" $r | grep -a "FAIL\|mpich_rma_req\|umr_mpich: rank"; return 1; }
    done
}
check req_ib_np2 requests ib 2
finish
