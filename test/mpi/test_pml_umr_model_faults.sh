#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# pml/umr on the mlx5 engine over the rdma-core model: faults on the
# zero-copy path mid-job, whose results depend on pml/umr falling back to
# the wrapped PML after a fault (issue 18: the receiver declines, the
# sender sends through the wrapped PML, the peer is retired). make check
# runs it (before the fallback a failed get failed the receive with
# MPI_ERR_OTHER and the job aborted).
#
#  - the link of host 1 goes down mid-job (after its NICs moved 30 RDMA
#    work requests; an async PORT_ERR there retires its rail, its peers'
#    work requests fail with RETRY_EXC): the results are the plain job's,
#    at -np 2 and -np 4, over ob1 and ucx, over IB and RoCE v2, no hang,
#    messages moved zero-copy before the fault, and the port error retired
#    the rail of host 1's ranks (one line each, rails_retired);
#  - each fault point inside the engine (UCX_MLX5_UMR_TEST_FAULT of the
#    test variant, engine_fault.h: connect, post, completion, key, mdwait) on
#    the mlx5 engine over the model (IB, 2 hosts): the plain job's results,
#    fallbacks + fault_declines + fallback_sends not 0, no key left, no
#    error counted, over ob1 and ucx at -np 2 and 4;
#  - a peer killed while it holds a zero-copy message: the job ends with an
#    MPI error or the runtime's abort, never a hang.
# Results in GoogleTest's format.
#
set -u
. "$(dirname "$0")/mpi_test_env.sh"
prog=$PWD/pml_umr_test
out=$PWD/test_pml_umr_model_faults.out.d
rm -rf "$out"   # nothing of an earlier run (its reference outputs) is reused
mkdir -p "$out"
suite=pml_umr_model_faults
. "$(dirname "$0")/../gtest/gtest_format.sh"
. "$(dirname "$0")/pml_umr_model_env.sh"

link_down() {   # link, np, pml
    local link=$1 np=$2 pml=$3 got=$out/down-$1-$2-$3 args=(-np "$2") rc=0 r
    ref "$np" "$pml" || return 1
    if [ "$pml" = ucx ]; then args+=(--mca pml ucx,umr "${ucx_args[@]}")
    else args+=(--mca pml ob1,umr); fi
    model "$got" -- --link "$link" --hosts 2 --host 1=down_after=30 -- \
        "${args[@]}" "$prog" || rc=$?
    [ "$rc" -ne 124 ] || { echo "hang"; return 1; }
    [ "$rc" -eq 0 ] || { echo "exit status $rc"; grep -a "pml_umr\|MPI_ERR" "$got" | head; return 1; }
    same_checks "$out/ref-$np-$pml" "$got" || return 1
    grep -q "^mpirun-model: $np ranks: zcopy_sends [1-9]" "$got" ||
        { echo "nothing zero-copy before the fault"; return 1; }
    # the port error is the rail's: retired (one line, rails_retired) on
    # host 1's ranks only, whose peers all pass through from then on
    r=$(counter "$got" rails_retired)
    echo "rails_retired $r"
    [ "$r" -ge 1 ] && [ "$r" -le $((np / 2)) ] &&
        [ "$(grep -ac 'rail mlx5_0 retired to pass-through (every peer on it)' "$got")" -eq "$r" ] ||
        { grep -a "retired" "$got" | head; echo "the rail of host 1 not retired once a rank"; return 1; }
}

# the counter NAME summed over the ranks' lines of FILE (mpirun-model.sh
# repeats them without the [host:pid] prefix: those are counted)
counter() {
    grep -a "^pml_umr: rank [0-9]*: zcopy_sends" "$1" | grep -o " $2 [0-9]*" | awk '{s += $2} END {print s + 0}'
}

engine_fault() {   # point, np, pml
    local got=$out/engine-$1-$2-$3 args=(-np "$2") rc=0 n
    ref "$2" "$3" || return 1
    if [ "$3" = ucx ]; then args+=(--mca pml ucx,umr "${ucx_args[@]}")
    else args+=(--mca pml ob1,umr); fi
    model "$got" UCX_MLX5_UMR_TEST_FAULT="$1" -- --hosts 2 -- \
        "${args[@]}" "$prog" || rc=$?
    [ "$rc" -ne 124 ] || { echo "hang"; return 1; }
    [ "$rc" -eq 0 ] || { echo "exit status $rc"; grep -a "pml_umr\|MPI_ERR" "$got" | head; return 1; }
    same_checks "$out/ref-$2-$3" "$got" || return 1
    [ "$(grep -ac 'pml_umr: rank [0-9]*: zcopy_sends' "$got")" -gt 0 ] || { echo "no counters"; return 1; }
    grep -a "pml_umr: rank [0-9]*: zcopy_sends" "$got" | grep -v "keys_live 0 errors 0" && return 1
    n=$(( $(counter "$got" fallbacks) + $(counter "$got" fault_declines) +
          $(counter "$got" fallback_sends) ))
    echo "$1 np $2 $3: fallbacks $(counter "$got" fallbacks) fault_declines" \
         "$(counter "$got" fault_declines) fallback_sends $(counter "$got" fallback_sends)"
    [ "$n" -gt 0 ] || { echo "no fallback counted"; grep -a "pml_umr: rank" "$got"; return 1; }
}

peer_killed() {
    local got=$out/killed rc=0
    model "$got" -- --hosts 2 -- -np 2 "$prog" die || rc=$?
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || { echo "exit status $rc (124: hang)"; return 1; }
}

for link in ib roce; do
    for np in 2 4; do
        for pml in ob1 ucx; do
            check "link_down_${link}_np${np}_${pml}" link_down "$link" "$np" "$pml"
        done
    done
done
for point in ${UMR_ENGINE_FAULT_POINTS:-connect post completion key mdwait}; do
    for np in 2 4; do
        for pml in ob1 ucx; do
            check "engine_fault_${point}_np${np}_${pml}" engine_fault "$point" "$np" "$pml"
        done
    done
done
check peer_killed_mpi_error_no_hang peer_killed
finish
