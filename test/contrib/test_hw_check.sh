#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# contrib/hw-check.sh without a ConnectX (make check). Nothing here fakes a
# device: the script's own rehearsal mode (HW_CHECK_ENGINE=sw) runs its
# calibration step for real on the sw engine, and the checks read what it
# wrote:
#  - rehearsal_calibration: hw-check -q -s calibrate runs
#    contrib/umr-calibrate.sh (mpirun -np 2, ~15 s); the costs file next to
#    the report has every engine.sw.{get,put}.{dense,sparse}.{op,rentry,
#    lentry,byte}_ns key with a number, the PMLs' ctrl figures, osc/umr's
#    packed path's figures, no mlx5 key (nothing measured it), and
#    pml/umr's loader accepts it; the report says
#    REHEARSAL, records the step as PASS, holds the crossover table and the
#    install and run-mpi-bench lines naming the file, and the MPI lines pass
#    the device to pml/umr (pml_umr_devices=sw);
#  - calibration_skipped_without_mpi: a build whose configure found no MPI
#    (test/bench/Makefile with HAVE_MPI false): the step is SKIPPED, not
#    PASS, not FAIL, and the exit status is 0;
#  - no_calibration_flag: -C records the step as SKIPPED (-C), runs nothing;
#  - bad_arguments: an unknown step or engine is an error (exit 1);
#  - no_device_exit_77: not rehearsing, on a host without an mlx5 device,
#    exit 77 and "no mlx5 device" (not checked when a device is present).
#
set -u
top_builddir=${top_builddir:-../..}
top_builddir=$(cd "$top_builddir" && pwd)
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
hw_check=$top_srcdir/contrib/hw-check.sh
out=$PWD/test_hw_check.out.d
rm -rf "$out"
mkdir -p "$out"

# Sanitizer builds (contrib/run-sanitizers.sh): Open MPI's own leaks are not
# ours (as in test/mpi/test_pml_umr.sh).
if [ -n "${UMR_PRELOAD_EXTRA:-}" ]; then
    export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=0
fi

suite=hw_check
. "$top_srcdir/test/gtest/gtest_format.sh"

fail() { echo "$*"; return 1; }

# hw NAME COMMAND...: run COMMAND (hw-check under env) with the report in
# $out/NAME.txt and the output in $out/NAME.log; sets rc
hw() {
    local name=$1; shift
    rc=0
    # a hang guard, not a speed check (the calibration takes ~15 s idle)
    OUT="$out/$name.txt" timeout "$(test_seconds 600)" "$@" \
        >"$out/$name.log" 2>&1 || rc=$?
}

rehearsal_calibration() {
    local report=$out/cal.txt costs=$out/cal.costs.conf key op dens f missing=0
    hw cal env HW_CHECK_ENGINE=sw BUILD_DIR="$top_builddir" "$hw_check" -q \
        -s calibrate
    [ $rc -eq 0 ] || { tail -30 "$out/cal.log"; fail "hw-check exit $rc"; } || return 1
    grep -q "AddressSanitizer\|runtime error:" "$out/cal.log" &&
        { grep -A20 "AddressSanitizer\|runtime error:" "$out/cal.log" | head -40; return 1; }
    [ -s "$costs" ] || fail "no costs file $costs" || return 1
    for op in get put; do
        for dens in dense sparse; do
            for f in op rentry lentry byte; do
                key="engine.sw.$op.$dens.${f}_ns"
                grep -Eq "^$key = [0-9]+(\.[0-9]+)?( |\$)" "$costs" ||
                    { echo "costs file: no number for $key"; missing=1; }
            done
        done
    done
    for key in pml.ob1.local.ctrl_ns pml.ucx.local.ctrl_ns \
               pml.ob1.local.ddt.8.byte_ns pml.ucx.local.ddt.65536.op_ns; do
        grep -Eq "^$key = [0-9]" "$costs" ||
            { echo "costs file: no $key"; missing=1; }
    done
    # osc/umr's packed path, measured through an osc/umr window
    for key in packed.local.put.8.byte_ns packed.local.get.65536.op_ns; do
        grep -Eq "^$key = [0-9]" "$costs" ||
            { echo "costs file: no $key"; missing=1; }
    done
    grep -q "^engine\.mlx5\." "$costs" &&
        { echo "costs file: mlx5 figures from a sw rehearsal"; missing=1; }
    [ $missing -eq 0 ] || return 1
    # pml/umr's loader (mca_common_umr_cost_load) accepts the file
    "$top_builddir/test/bench/umr_calibrate" --crossover "$costs" ob1 \
        >"$out/crossover.txt" 2>&1 || { cat "$out/crossover.txt"; return 1; }

    grep -q "^# REHEARSAL" "$report" || fail "report: no REHEARSAL title" || return 1
    grep -q "NOT NIC figures" "$report" || fail "report: no 'NOT NIC figures'" || return 1
    grep -q "^| calibration on sw | PASS |$" "$report" ||
        fail "report: the calibration step is not PASS" || return 1
    for pml in ob1 ucx; do
        grep -q "^# pml/umr over $pml with $costs: smallest block size" "$report" ||
            fail "report: no crossover table over $pml" || return 1
    done
    [ "$(grep -Ec '^sw +local +[0-9.]+ ' "$report")" -eq 6 ] ||
        fail "report: not 3 sw rows a table" || return 1
    # the table in the report is the loader's view of the file
    grep -A7 "^# pml/umr over ob1 with" "$report" | diff - "$out/crossover.txt" ||
        fail "report: the ob1 table differs from --crossover of the file" || return 1
    grep -q "install -D -m 644 $costs ~/.cache/mlx5_umr/costs-$(hostname -s).conf" \
        "$report" || fail "report: no install line" || return 1
    grep -q "UCX_MLX5_UMR_ENGINE=sw PML_UMR_COST_FILE=$costs contrib/run-mpi-bench.sh" \
        "$report" || fail "report: no run-mpi-bench line" || return 1
    grep -q -- "--mca pml_umr_cost_file $costs --mca pml_umr_devices sw " "$report" ||
        fail "report: no mpirun line on the device (pml_umr_devices)" || return 1
    grep -q "OMPI_MCA_pml_umr_devices=sw UCX_MLX5_UMR_ENGINE=sw PML_UMR_COST_FILE=$costs" \
        "$report" || fail "report: run-mpi-bench not on the device" || return 1
    ! grep -q "may pick\|opens the first mlx5 device that works" "$report" ||
        fail "report: warns about the device instead of naming it" || return 1
}

calibration_skipped_without_mpi() {
    local fake_build=$out/build-nompi
    mkdir -p "$fake_build/test/bench"
    # what automake writes for AM_CONDITIONAL([HAVE_MPI], false)
    printf 'HAVE_MPI_TRUE = #\nHAVE_MPI_FALSE = \n' >"$fake_build/test/bench/Makefile"
    hw nompi env HW_CHECK_ENGINE=sw BUILD_DIR="$fake_build" "$hw_check" -s calibrate
    [ $rc -eq 0 ] || { cat "$out/nompi.log"; fail "exit $rc, not 0"; } || return 1
    grep -q "^| calibration | SKIPPED (configure found no MPI) |$" "$out/nompi.txt" ||
        { cat "$out/nompi.txt"; fail "report: not SKIPPED"; } || return 1
    grep -q "configure found no MPI" "$out/nompi.log" || fail "no message" || return 1
    ! grep -q "PASS\|FAIL" "$out/nompi.txt" || fail "report: PASS or FAIL" || return 1
    [ ! -e "$out/nompi.costs.conf" ] || fail "a costs file was written"
}

no_calibration_flag() {
    hw noc env HW_CHECK_ENGINE=sw BUILD_DIR="$top_builddir" "$hw_check" -C -s calibrate
    [ $rc -eq 0 ] || { cat "$out/noc.log"; fail "exit $rc, not 0"; } || return 1
    grep -q "^| calibration | SKIPPED (-C) |$" "$out/noc.txt" ||
        { cat "$out/noc.txt"; fail "report: not SKIPPED (-C)"; } || return 1
    ! grep -q "umr-calibrate" "$out/noc.log" || fail "umr-calibrate ran" || return 1
    [ ! -e "$out/noc.costs.conf" ] || fail "a costs file was written"
}

bad_arguments() {
    hw bad1 env HW_CHECK_ENGINE=sw BUILD_DIR="$top_builddir" "$hw_check" -s calibrate,bogus
    [ $rc -eq 1 ] && grep -q "unknown step 'bogus'" "$out/bad1.log" ||
        { cat "$out/bad1.log"; fail "-s bogus: exit $rc"; } || return 1
    hw bad2 env HW_CHECK_ENGINE=mlx6 BUILD_DIR="$top_builddir" "$hw_check" -s calibrate
    [ $rc -eq 1 ] && grep -q "HW_CHECK_ENGINE='mlx6'" "$out/bad2.log" ||
        { cat "$out/bad2.log"; fail "HW_CHECK_ENGINE=mlx6: exit $rc"; }
}

no_device_exit_77() {
    hw nodev env -u HW_CHECK_ENGINE BUILD_DIR="$top_builddir" "$hw_check" -s calibrate
    [ $rc -eq 77 ] || { cat "$out/nodev.log"; fail "exit $rc, not 77"; } || return 1
    grep -q "no mlx5 device" "$out/nodev.log" || fail "no 'no mlx5 device'" || return 1
    [ ! -e "$out/nodev.txt" ] || fail "a report was written"
}

# The facts step, rehearsed on the rdma-core model (HW_CHECK_ENGINE=model):
# the report holds what the transport derived and chose, at the top: a RoCE
# v2 port gives 52 list entries, DSCP 26 (traffic class 106), its RoCE v2
# IPv4 GID, the default pkey, UCX's retry budget; an IB device whose WQE is
# at most 512 B gives 20 entries, and a pkey table whose first entry is a
# limited member gives its first full member. An endpoint's send queue: 256
# KiB with 1 KiB UMR WQEs (128 KiB with 512 B ones), 32 KiB RDMA only. The
# device's UMR capabilities as DEVX QUERY_HCA_CAP answers them and the
# choices they make (the model's defaults; then a device that asks a strong
# UMR fence, follows two levels of keys and keeps atomics out of UMR's
# reach); the budget of connected peers (by QPs and by memory) and the cost
# charged for a connection at it.
facts_on_the_model() {
    local r=$out/facts-roce.txt l
    hw facts-roce env HW_CHECK_ENGINE=model UMR_MODEL_LINK=roce \
        BUILD_DIR="$top_builddir" "$hw_check" -s facts
    [ $rc -eq 0 ] || { tail -20 "$out/facts-roce.log"; fail "hw-check exit $rc"; } || return 1
    grep -q "^| device facts | PASS |$" "$r" || fail "no PASS for the facts step" || return 1
    for l in "umr_list_entries 52" "umr_interleaved_entries 51" \
             "umr_nesting_depth 4 (min of max_indirection and 4)" \
             "hca_caps read (DEVX QUERY_HCA_CAP)" "umr_fence small (1)" \
             "umr_ordering fenced (IBV_SEND_FENCE on a UMR behind work in flight)" \
             "max_indirection 4" "log_max_klm_list_size 16" \
             "umr_modify_atomic_disabled 0" "link_layer Ethernet (RoCE)" \
             "rank(s) on the node (max_qp 4096 / 4 / ranks: 1024; 1/16 of" \
             "reconnect_ns 1000000 (built-in guess" \
             "RoCE v2 IPv4" "pkey_index 0 pkey 0xffff (full member)" \
             "traffic_class 106 (DSCP 26)" "sl 0" "hop_limit 255" \
             "retry_count 7, rnr_retry 7: gives up after 8.59 s" \
             "max_qp_wr 2048" \
             "ep_sq_bytes 262144 (an endpoint's send queue in use: 256 WRs, 30 SGEs, UMR room" \
             "ep_sq_bytes_umr 262144 (EP_UMR=y: 256 WRs" \
             "ep_sq_bytes_rdma_only 32768 (EP_UMR=n: 256 WRs, 4 SGEs)"; do
        grep -qF "$l" "$r" || { cat "$r"; fail "no '$l' in the report"; } || return 1
    done
    grep -q "REHEARSAL" "$r" || fail "not a REHEARSAL" || return 1

    r=$out/facts-ib.txt
    hw facts-ib env HW_CHECK_ENGINE=model \
        UMR_MODEL_HOST0=desc=512,pkeys=0x7fff:0x8001,umr_fence=strong,max_indirection=2,atomic_umr=0 \
        BUILD_DIR="$top_builddir" "$hw_check" -s facts
    [ $rc -eq 0 ] || { tail -20 "$out/facts-ib.log"; fail "hw-check exit $rc"; } || return 1
    for l in "umr_wqe_bytes 512" "umr_list_entries 20" "max_sge 20" \
             "link_layer InfiniBand" "pkey_index 1 pkey 0x8001 (full member)" \
             "traffic_class 0 (DSCP 0)" "max_qp_wr 4096" \
             "ep_sq_bytes_umr 131072 (EP_UMR=y: 256 WRs, 20 SGEs, 20-entry UMR WQEs)" \
             "ep_sq_bytes_rdma_only 32768" "umr_fence strong (0)" \
             "umr_ordering wait for each UMR's completion" \
             "umr_nesting_depth 2" "umr_modify_atomic_disabled 1 (rdma-core sets the atomic bit"; do
        grep -qF "$l" "$r" || { cat "$r"; fail "no '$l' in the report"; } || return 1
    done
}

# The two-host step (--peer), rehearsed on two simulated hosts of the model:
# each reaches the other, the path MTU, a put and a get through layout keys
# both ways with every byte checked, a put to a closed peer fails at once
# (the model: a destroyed QP), RNR SKIPPED (no receive); the calibration
# across hosts SKIPPED (it measures a NIC); the adaptive-routing SLs of an
# IB port (ooo_sl_mask) in the facts. Hosts in two partitions: the step
# FAILs, saying which side does not reach the other.
peer_on_the_model() {
    local r=$out/peer.txt l
    hw peer env HW_CHECK_ENGINE=model UMR_MODEL_HOST0=ooo_sl_mask=0x5 \
        BUILD_DIR="$top_builddir" "$hw_check" -s facts,peer --peer sim
    [ $rc -eq 0 ] || { tail -20 "$out/peer.log"; fail "hw-check exit $rc"; } || return 1
    for l in "| between two hosts | PASS |" \
             "| calibration across hosts | SKIPPED (rehearsal on the model" \
             "## between two hosts (" \
             "CHECK address PASS rank 0 reaches 1: yes, 1 reaches 0: yes" \
             "CHECK path_mtu PASS 4096 B" \
             "CHECK put_layout_0 PASS" "CHECK get_layout_0 PASS" \
             "CHECK put_layout_1 PASS" "CHECK get_layout_1 PASS" \
             "CHECK rnr SKIPPED" "CHECK dead_peer PASS" \
             "ooo_sl_mask 0x0005 (SLs with adaptive routing; sl 0: adaptive"; do
        grep -qF -- "$l" "$r" || { cat "$r"; fail "no '$l' in the report"; } || return 1
    done

    r=$out/peer-apart.txt
    hw peer-apart env HW_CHECK_ENGINE=model UMR_MODEL_HOST1=pkeys=0x8002 \
        BUILD_DIR="$top_builddir" "$hw_check" -s peer --peer sim
    [ $rc -eq 1 ] || fail "hw-check exit $rc, not 1, for hosts in two partitions" || return 1
    grep -qF "| between two hosts | FAIL" "$r" || { cat "$r"; fail "no FAIL for the step"; } || return 1
    grep -qF "CHECK address FAIL rank 0 reaches 1: no" "$r" ||
        { cat "$r"; fail "no failed address check"; }
}

if grep -q '^HAVE_MLX5_ENGINE_TRUE = #' "$top_builddir/test/model/Makefile"; then
    echo "(facts_on_the_model not run: configure found no rdma-core)"
else
    check facts_on_the_model facts_on_the_model
    if grep -q '^HAVE_MPI_TRUE = #' "$top_builddir/test/bench/Makefile"; then
        echo "(peer_on_the_model not run: configure found no MPI)"
    else
        check peer_on_the_model peer_on_the_model
    fi
fi
if grep -q '^HAVE_MPI_TRUE = #' "$top_builddir/test/bench/Makefile"; then
    echo "(rehearsal_calibration not run: configure found no MPI)"
else
    check rehearsal_calibration rehearsal_calibration
fi
check calibration_skipped_without_mpi calibration_skipped_without_mpi
check no_calibration_flag no_calibration_flag
check bad_arguments bad_arguments
if ibv_devinfo -l 2>/dev/null | grep -q '^[[:space:]]*mlx5_[0-9]*[[:space:]]*$'; then
    echo "(no_device_exit_77 not run: this host has an mlx5 device)"
else
    check no_device_exit_77 no_device_exit_77
fi
finish
