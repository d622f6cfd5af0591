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
#    at -np 2 and -np 4, over ob1 and ucx, over IB and RoCE v2, no hang, and
#    messages moved zero-copy before the fault;
#  - a peer killed while it holds a zero-copy message: the job ends with an
#    MPI error or the runtime's abort, never a hang.
# Results in GoogleTest's format.
#
set -u
. "$(dirname "$0")/mpi_test_env.sh"
prog=$PWD/pml_umr_test
out=$PWD/test_pml_umr_model_faults.out.d
mkdir -p "$out"
suite=pml_umr_model_faults
. "$(dirname "$0")/../gtest/gtest_format.sh"
. "$(dirname "$0")/pml_umr_model_env.sh"

link_down() {   # link, np, pml
    local link=$1 np=$2 pml=$3 got=$out/down-$1-$2-$3 args=(-np "$2") rc=0
    ref "$np" "$pml" || return 1
    if [ "$pml" = ucx ]; then args+=(--mca pml ucx,umr "${ucx_args[@]}")
    else args+=(--mca pml ob1,umr); fi
    model "$got" -- --link "$link" --hosts 2 --host 1=down_after=30 -- \
        "${args[@]}" "$prog" || rc=$?
    [ "$rc" -ne 124 ] || { echo "hang"; return 1; }
    [ "$rc" -eq 0 ] || { echo "exit status $rc"; grep -a "pml_umr\|MPI_ERR" "$got" | head; return 1; }
    same_results "$out/ref-$np-$pml" "$got" || return 1
    grep -q "^mpirun-model: $np ranks: zcopy_sends [1-9]" "$got" ||
        { echo "nothing zero-copy before the fault"; return 1; }
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
check peer_killed_mpi_error_no_hang peer_killed
finish
