#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# pml/umr in real mpirun jobs on the mlx5 engine, over the rdma-core model
# on simulated hosts (contrib/mpirun-model.sh: libumr_verbs_model.so
# preloaded, every peer on the mlx5 engine, pml_umr_devices=mlx5_0):
#  - pml_umr_test (an unmodified MPI program) prints the same results as
#    without pml/umr, at -np 2 and -np 4 on 2 simulated hosts, over ob1 and
#    over ucx, on an InfiniBand setup and on a RoCE v2 setup, with zero-copy
#    forced; every case moved messages zero-copy (MPI_T counters), each rank
#    opened the mlx5_0 rail only, on the host its rank gives, with no
#    registration left and no error, and one memory registration per
#    region of the registration cache (none per layout key);
#  - vectors sent from a PROT_READ file mapping (private, shared) and an
#    mprotect'ed buffer: every message zero-copy over IB and RoCE v2; on
#    hosts of Linux 6.1 (UMR_MODEL_KERNEL) those from the shared mapping
#    pass through, the same results;
#  - buffers unmapped and mapped again at the same address are registered
#    again (the model binds an MR to its pages), every byte right;
#  - a RoCE v1 / IPv6-only host and a RoCE v2 / IPv4 host are unreachable to
#    each other: pml/umr passes everything through (the same results,
#    nothing zero-copy);
#  - two IB hosts of two partitions: the same (unreachable, pass-through);
#  - IPv6-only RoCE hosts on two IP subnets (link-local GIDs reach no other
#    subnet): each takes its global IPv6 GID and the job moves every case
#    zero-copy with the plain job's results;
#  - a peer that dies holding a zero-copy message ends the job (an MPI
#    error, the runtime's abort), never a hang;
#  - contrib/mpirun-model.sh itself: it prints every rank's counters and
#    their sum, and returns mpirun's exit status;
#  - UCX_MLX5_UMR_EP_UMR=n (endpoint QPs for RDMA only, issue 19 finding
#    8): the same results, zero-copy in every case, 32 KiB of send queue a
#    peer in each rank's budget line; bad values of EP_UMR / EP_MAX_SGE
#    pass through with one error a rank naming the variable.
# The fault cases whose result depends on pml/umr falling back after a
# fault on the zero-copy path (a link that goes down mid-job) are in
# test_pml_umr_model_faults.sh, not run by make check until pml/umr has
# that fallback (issue 18).
# Results in GoogleTest's format (contrib/test-summary.sh counts them).
#
set -u
. "$(dirname "$0")/mpi_test_env.sh"
prog=$PWD/pml_umr_test
out=$PWD/test_pml_umr_model.out.d
rm -rf "$out"   # nothing of an earlier run (its reference outputs) is reused
mkdir -p "$out"
suite=pml_umr_model
. "$(dirname "$0")/../gtest/gtest_format.sh"
. "$(dirname "$0")/pml_umr_model_env.sh"

peer_death() {
    local got=$out/die rc=0
    model "$got" -- --hosts 2 -- -np 2 "$prog" die || rc=$?
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || { echo "exit status $rc (124: hang)"; tail "$got"; return 1; }
}

# The link of host 1 goes down mid-job: today pml/umr fails the receive
# (MPI_ERR_OTHER, the job aborts); with the fallback of issue 18 the results
# are the plain job's (test_pml_umr_model_faults.sh). Never a hang.
link_down_never_hangs() {
    local got=$out/linkdown rc=0
    model "$got" -- --hosts 2 --host 1=down_after=30 -- -np 2 \
        --mca pml ob1,umr "$prog" || rc=$?
    [ "$rc" -ne 124 ] || { echo "hang (killed after $(test_seconds "$run_timeout") s)"; tail "$got"; return 1; }
    grep -q "rdma-core model: pid [0-9]* on host 1" "$got" || { tail "$got"; return 1; }
}

# Finding 9 of issue 19: hosts with two HCAs (mlx5_0, mlx5_1, both near
# every CPU): the automatic choice (pml_umr_devices="", UCX_MLX5_UMR_ENGINE=mlx5) spreads the ranks
# of a host over them by local rank; the results stay the same.
two_hcas_spread() {
    local got=$out/two-hcas
    ref 4 ob1 || return 1
    model "$got" UMR_MODEL_DEVICES=2 OMPI_MCA_pml_umr_devices= \
        OMPI_MCA_pml_umr_verbose=5 -- --hosts 2 -- -np 4 --mca pml ob1,umr \
        "$prog" || { tail -20 "$got"; return 1; }
    same_checks "$out/ref-4-ob1" "$got" && zcopy_in_every_case "$got" || return 1
    [ "$(grep -c 'pml_umr: rail mlx5_0 open$' "$got")" -eq 2 ] &&
        [ "$(grep -c 'pml_umr: rail mlx5_1 open$' "$got")" -eq 2 ] ||
        { grep "pml_umr: rail" "$got"; echo "not two ranks on each HCA"; return 1; }
}

# Issue 19 finding 8, data QPs sized for what they post: with
# UCX_MLX5_UMR_EP_UMR=n every endpoint QP is RDMA only (local keys on the
# md's QP); the job gives the plain job's results with every case
# zero-copy, and each rank's budget line states the endpoint's send queue
# from the engine (32 KiB: 256 WRs of 4 SGEs, 128 B WQEs) instead of
# 256 KiB. np 4 on 2 IB hosts, ob1 and ucx.
ep_rdma_only() {   # pml
    local pml=$1 got=$out/ep-rdma-only-$1 args=(-np 4)
    ref 4 "$pml" || return 1
    if [ "$pml" = ucx ]; then args+=(--mca pml ucx,umr "${ucx_args[@]}")
    else args+=(--mca pml ob1,umr); fi
    model "$got" UCX_MLX5_UMR_EP_UMR=n OMPI_MCA_pml_umr_verbose=5 -- \
        --link ib --hosts 2 -- "${args[@]}" "$prog" || { tail -20 "$got"; return 1; }
    same_checks "$out/ref-4-$pml" "$got" && zcopy_in_every_case "$got" &&
        rails_and_hosts "$got" 4 || return 1
    [ "$(grep -c 'pml_umr: budget of connected peers: .*; per connected peer: mlx5_0 32 KiB of send queue (256 WRs, 4 SGEs, RDMA only, keys on the md.s QP)' "$got")" -eq 4 ] ||
        { grep "budget of connected peers" "$got"; echo "not one RDMA-only 32 KiB budget line a rank"; return 1; }
    # the default: 256 KiB a peer (1 KiB UMR WQEs), as the same line says
    grep -q 'per connected peer: mlx5_0 256 KiB of send queue (256 WRs, 30 SGEs, keys on the endpoint.s QP)' \
        "$out/model-ib-4-ob1" || { grep "budget of connected peers" "$out/model-ib-4-ob1"; return 1; }
}

# A bad value of the new variables: the rail does not open (an error naming
# the variable, a line a rank) and pml/umr passes everything through.
ep_bad_value() {   # VAR=VALUE
    local got=$out/ep-bad-${1%%=*}
    ref 2 ob1 || return 1
    model "$got" "UCX_MLX5_UMR_$1" -- --hosts 2 -- -np 2 --mca pml ob1,umr \
        "$prog" || { tail -20 "$got"; return 1; }
    same_checks "$out/ref-2-ob1" "$got" || return 1
    awk '$1 == "zcopy" && $5 > 0 {print; bad = 1} END {exit bad}' "$got" || return 1
    [ "$(grep -c "mlx5_umr: UCX_MLX5_UMR_$1: expected" "$got")" -eq 2 ] ||
        { grep -i "mlx5_umr\|error" "$got" | head; echo "not one line naming UCX_MLX5_UMR_${1%%=*} a rank"; return 1; }
    [ "$(grep -c 'pml_umr: no mlx5_umr rail could be opened .*: passing everything through' "$got")" -eq 2 ] ||
        { grep "pml_umr" "$got" | head; echo "not one pass-through line a rank"; return 1; }
}

# pml_umr_test's case CASE alone on 2 hosts of LINK, np 2 over ob1, against
# its plain job: the same results; the job's output in $out/CASE-LINK[-TAG]
model_case() {   # case, link, [tag, env...]
    local c=$1 link=$2 tag=${3:+-$3} got
    got=$out/$c-$link$tag
    shift 2; [ $# -gt 0 ] && shift
    ref_case "$c" 2 ob1 || return 1
    model "$got" OMPI_MCA_pml_umr_verbose=5 "$@" -- --link "$link" --hosts 2 \
        -- -np 2 --mca pml ob1,umr "$prog" "$c" || { tail -20 "$got"; return 1; }
    same_checks "$out/ref-$c-2-ob1" "$got"
}

# Issue 30 finding 1: vectors sent from a PROT_READ file mapping (private
# and shared) and an mprotect'ed buffer: every message zero-copy (the
# model refuses write access there, as the kernel does, and the send
# buffers are registered for remote reads alone).
rdonly_zcopy() {   # link
    model_case rdonly "$1" && each_message_zcopy "$out/rdonly-$1" rdonly 2 12 &&
        one_reg_per_region "$out/rdonly-$1"
}

# The same on hosts whose kernel is older than 6.2 (Debian 12's 6.1): a
# read-only registration of the shared read-only mapping is refused there
# too, and those messages pass through: the same results, the others
# zero-copy (8 of 12 a rank), no error.
rdonly_linux_6_1() {
    local got=$out/rdonly-ib-6.1
    model_case rdonly ib 6.1 UMR_MODEL_KERNEL=6.1 &&
        each_message_zcopy "$got" rdonly 2 8 || return 1
    [ "$(counter "$got" errors | sort -u)" = 0 ] &&
        [ "$(counter "$got" fallbacks | sort -u)" = 2 ] ||
        { grep -a "pml_umr: rank" "$got"; echo "not 2 fallbacks and no error a rank"; return 1; }
}

# Issue 30 finding 6: buffers unmapped and other memory mapped at the same
# addresses are registered again, every byte right; the model binds an MR
# to the pages it pinned, so a registration cache that reused the old one
# would fail the job's RDMA instead of passing.
fresh_registered_again() {   # link
    model_case fresh "$1" && registered_again "$out/fresh-$1" 8 || return 1
    ! grep -a "is not the memory it pinned" "$out/fresh-$1" ||
        { echo "an access through a stale registration"; return 1; }
}

script_reports() {
    local got=$out/script rc=0
    # a name of its own: other jobs on this machine have tables too
    model "$got" MPIRUN_MODEL_JOB="test-pml-umr-model-$$" -- --hosts 2 -- \
        -np 2 --mca pml ob1,umr "$prog" halo || return 1
    [ "$(grep -c '^pml_umr: rank [01]: zcopy_sends' "$got")" -eq 2 ] &&
        grep -q "^mpirun-model: 2 ranks: zcopy_sends [1-9][0-9]* zcopy_recvs [1-9][0-9]* errors 0$" "$got" ||
        { tail -8 "$got"; return 1; }
    [ ! -e "/dev/shm/umr-model-test-pml-umr-model-$$" ] ||
        { echo "the job's fabric table is left in /dev/shm"; return 1; }
    # mpirun's status: a program that fails
    model "$got.false" -- --hosts 1 -- -np 1 /bin/false || rc=$?
    [ "$rc" -ne 0 ] || { echo "exit status 0 for /bin/false"; return 1; }
}

ipv6_two_subnets() {
    local got=$out/ipv6-two-subnets
    ref 4 ob1 || return 1
    model "$got" OMPI_MCA_pml_umr_verbose=5 UMR_MODEL_VERBOSE=1 -- --link roce \
        --hosts 2 --host 0=ipv4=0,subnet=1 --host 1=ipv4=0,subnet=2 -- \
        -np 4 --mca pml ob1,umr "$prog" || { tail -20 "$got"; return 1; }
    same_checks "$out/ref-4-ob1" "$got" && zcopy_in_every_case "$got" ||
        return 1
    [ "$(grep -a 'pml_umr: rank [0-9]*: zcopy_sends' "$got" | grep -o ' retired [0-9]*\| fallbacks [0-9]*' | awk '{s += $2} END {print s + 0}')" -eq 0 ] ||
        { grep -a "retired\|fallback" "$got" | head; echo "a peer retired or fell back"; return 1; }
}

for link in ib roce; do
    for np in 2 4; do
        for pml in ob1 ucx; do
            check "identical_${link}_np${np}_${pml}_zcopy" identical "$link" "$np" "$pml"
        done
    done
done
for link in ib roce; do
    check "rdonly_send_buffers_${link}_np2_ob1_zcopy" rdonly_zcopy "$link"
    check "fresh_buffers_registered_again_${link}_np2_ob1" fresh_registered_again "$link"
done
check rdonly_send_buffers_linux_6_1_shared_mapping_passes_through rdonly_linux_6_1
check ipv6_only_roce_two_subnets_zcopy ipv6_two_subnets
check ep_rdma_only_ib_np4_ob1_zcopy ep_rdma_only ob1
check ep_rdma_only_ib_np4_ucx_zcopy ep_rdma_only ucx
check ep_umr_bad_value_pass_through ep_bad_value EP_UMR=maybe
check ep_max_sge_bad_value_pass_through ep_bad_value EP_MAX_SGE=4x
check mixed_roce_versions_pass_through unreachable roce roce roce=v1,ipv4=0
check ib_partitions_pass_through unreachable pkeys ib pkeys=0x8002
check peer_death_ends_job peer_death
check link_down_mid_job_never_hangs link_down_never_hangs
check two_hcas_ranks_spread two_hcas_spread
check mpirun_model_reports_counters script_reports
finish
