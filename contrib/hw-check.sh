#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# contrib/hw-check.sh: one command for whoever first has a ConnectX.
#
# 1. installs what the build needs (contrib/install-deps.sh) and looks for an
#    mlx5 device (ibv_devinfo); without one it stops with "no mlx5 device"
#    and exit status 77 (nothing else here can say anything about a NIC);
# 2. builds with -Werror (contrib/build.sh) and the tests and benchmarks;
#    then prints the facts the transport derives and chooses when it opens
#    the device (test/bench/umr_dev_facts): the UMR entries from the largest
#    WQE the device takes, the UMR capabilities of the device (DEVX
#    QUERY_HCA_CAP: umr_fence, max_indirection, log_max_klm_list_size,
#    umr_modify_atomic_disabled) and what they decide (whether each UMR is
#    fenced or waited for, the nesting depth), the send queue
#    depth, the GID and its RoCE version, the pkey, traffic class, SL, hop
#    limit, the retry budget, the read depths, the CPUs near it, and the
#    send queue of one endpoint's QP (the memory a connected peer costs) in
#    the configuration in use and with UCX_MLX5_UMR_EP_UMR=y / n - the first
#    facts a hardware run establishes, at the top of the report;
# 3. runs the device suite (gtest_engine_mlx5_device: real loopback UMR
#    write/read; it must not skip when a device is present);
# 4. runs the transport suites of gtest_uct on the mlx5 engine of that device
#    (UMR_TEST_DEV=<device>; the same tests CI runs on sw and on the model);
# 5. sweeps put/get through strided layout keys, block size x stride
#    (test/bench/bench_uct_layout, UCX_MLX5_UMR_ENGINE=mlx5), layout to
#    layout and contiguous to layout, and layout to layout with a local key
#    cache miss every operation (-M) with UCX_MLX5_UMR_EP_UMR=y and =n;
# 6. calibrates pml/umr's zero-copy choice on that device
#    (contrib/umr-calibrate.sh --device <device>, mpirun -np 2 on this host):
#    writes the costs file next to the report (<report>.costs.conf), puts
#    the crossover table in the report and prints how to install the file
#    and run the MPI benchmark with it on that device (MCA parameter
#    pml_umr_devices=<device>); SKIPPED when configure found no MPI;
# 7. prints a summary table and the ibv_devinfo facts it ran on, ready to
#    publish (also written to $OUT, default hw-check-<host>-<date>.txt).
#
# usage: contrib/hw-check.sh [-q] [-C] [-d mlx5_N] [-s STEP[,STEP..]]
#                            [--peer HOST]
#   -q        quick: bench_uct_layout -q, umr-calibrate.sh --quick
#   -C        no calibration (step 6)
#   -d DEV    the device (default: the first mlx5 device ibv_devinfo lists)
#   -s STEPS  only these steps, of: build (with install-deps), facts,
#             device, uct, sweep, peer, calibrate; without build the
#             existing BUILD_DIR is used
#   --peer HOST (or -p HOST)  a second host with the same build at the same
#             path and the same device name: step peer runs
#             test/bench/umr_peer_check on both (mpirun -np 2 --host
#             this,HOST): each side reaches the other (GID, pkey), the path
#             MTU, a put and a get through layout keys both ways, a put to a
#             closed peer fails within the retry budget (RNR: SKIPPED, the
#             transport posts no receive); and the calibration runs across
#             the two hosts (umr-calibrate.sh --hosts), so that the mlx5
#             rows of the costs file are measured between hosts
# Environment: BUILD_DIR (default ./build), OUT.
#   HW_CHECK_ENGINE=sw  rehearsal, for testing this script only: runs every
#             step on the sw engine of this host, needs no device (the
#             device suite is SKIPPED); the report says REHEARSAL, and its
#             figures are cross-memory attach figures, NOT NIC figures.
#   HW_CHECK_ENGINE=model  rehearsal of the facts step on the mlx5 engine
#             over the rdma-core model (test/model, preloaded; UMR_MODEL_*
#             set the simulated device); the other steps are SKIPPED.
# Exit status: 0 no step failed (skipped steps say SKIPPED in the summary),
# 1 a step failed, 77 no mlx5 device.
#
set -u
cd "$(dirname "$0")/.."
top=$PWD

quick=""
dev=""
calibrate=1
only=""
peer=""
args=()
while [ $# -gt 0 ]; do       # --peer HOST: as -p HOST
    case $1 in
    --peer)   args+=(-p "${2:-}"); shift 2 ;;
    --peer=*) args+=(-p "${1#--peer=}"); shift ;;
    *)        args+=("$1"); shift ;;
    esac
done
set -- "${args[@]+"${args[@]}"}"
while getopts "qCd:s:p:h" opt; do
    case $opt in
    q) quick="-q" ;;
    C) calibrate=0 ;;
    d) dev=$OPTARG ;;
    s) only=$OPTARG ;;
    p) peer=$OPTARG ;;
    *) sed -n '2,58p' "$0"; [ "$opt" = h ] && exit 0; exit 1 ;;
    esac
done

BUILD_DIR=${BUILD_DIR:-$top/build}
OUT=${OUT:-$top/hw-check-$(hostname -s)-$(date +%Y%m%d-%H%M%S).txt}
costs=${OUT%.txt}.costs.conf

log() { echo "hw-check: $*"; }

# selected STEP: the step is in -s (or there is no -s)
selected() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }

for s in ${only//,/ }; do
    case $s in
    build|facts|device|uct|sweep|peer|calibrate) ;;
    *) log "unknown step '$s' in -s (build, facts, device, uct, sweep, peer, calibrate)"
       exit 1 ;;
    esac
done

rehearsal=0
engine=mlx5
on_model=0
case ${HW_CHECK_ENGINE:-} in
"") ;;
sw) rehearsal=1; engine=sw ;;
model) rehearsal=1; on_model=1 ;;
*)  log "HW_CHECK_ENGINE='$HW_CHECK_ENGINE': only 'sw' and 'model' (rehearsals) are known"
    exit 1 ;;
esac

# ---- 1. dependencies and the device ----------------------------------------
if selected build; then
    contrib/install-deps.sh >/dev/null || { log "install-deps failed"; exit 1; }
fi

if [ $on_model -eq 1 ]; then
    dev=${dev:-mlx5_0}
    log "REHEARSAL on the rdma-core model (HW_CHECK_ENGINE=model): the facts" \
        "step only, of a simulated device; NOT a NIC"
elif [ $rehearsal -eq 1 ]; then
    [ -z "$dev" ] || log "rehearsal: -d $dev ignored, the sw engine has one device, sw"
    dev=sw
    log "REHEARSAL on the sw engine (HW_CHECK_ENGINE=sw): this tests the" \
        "script, not a NIC; its figures are cross-memory attach, NOT NIC figures"
else
    mlx5_devs=()
    while read -r d; do
        [ -n "$d" ] && mlx5_devs+=("$d")
    done < <(ibv_devinfo -l 2>/dev/null | sed -n 's/^[[:space:]]*\(mlx5_[0-9]*\)[[:space:]]*$/\1/p')

    if [ ${#mlx5_devs[@]} -eq 0 ]; then
        log "no mlx5 device (ibv_devinfo -l lists none): nothing to check here"
        exit 77
    fi
    dev=${dev:-${mlx5_devs[0]}}
    if ! printf '%s\n' "${mlx5_devs[@]}" | grep -qx "$dev"; then
        log "no mlx5 device '$dev' (found: ${mlx5_devs[*]})"
        exit 77
    fi
fi
log "device $dev, engine $engine"

declare -a steps results
# step NAME LOG COMMAND...: run in this shell, output to the terminal and
# LOG, record PASS / FAIL (a suite's 77, a skip, is a FAIL here)
step() {
    local name=$1 log=$2 rc
    shift 2
    log "== $name: $*"
    "$@" > >(tee "$log") 2>&1
    rc=$?
    wait
    steps+=("$name")
    if [ $rc -eq 0 ]; then results+=("PASS"); else results+=("FAIL (exit $rc)"); fi
    return $rc
}

# skip NAME WHY: record a step that did not run
skip() {
    log "== $1: SKIPPED ($2)"
    steps+=("$1")
    results+=("SKIPPED ($2)")
}

mkdir -p "$BUILD_DIR"
logs=$BUILD_DIR/hw-check
mkdir -p "$logs"
# sections of the report: only the steps that ran
rm -f "$logs/sweep.txt" "$logs/sweep-L.txt" "$logs/sweep-My.txt" "$logs/sweep-Mn.txt" \
    "$logs/calibrate.log" "$logs/device.log"
calibrated=0

# ---- 2. build -----------------------------------------------------------------
if selected build; then
    step "build" "$logs/build.log" env BUILD_DIR="$BUILD_DIR" contrib/build.sh || exit 1
    step "build tests" "$logs/build-tests.log" make -C "$BUILD_DIR" -j2 check TESTS= || exit 1
    step "build benchmarks" "$logs/build-bench.log" make -C "$BUILD_DIR" -j2 bench || exit 1
fi

# ---- the facts the transport derives and chooses ------------------------------
rm -f "$logs/facts.txt"
if selected facts; then
    facts_env=(UCX_MLX5_UMR_ENGINE=$engine)
    if [ $on_model -eq 1 ]; then
        make -C "$BUILD_DIR/test/model" libumr_verbs_model.la >/dev/null 2>&1
        facts_env+=(LD_PRELOAD="$BUILD_DIR/test/model/.libs/libumr_verbs_model.so")
    fi
    step "device facts" "$logs/facts.txt" env "${facts_env[@]}" \
        "$BUILD_DIR/test/bench/umr_dev_facts" -d "$dev"
fi

# ---- between two hosts (--peer) -------------------------------------------------
rm -f "$logs/peer.txt"
peer_prog=$BUILD_DIR/test/bench/umr_peer_check
if [ -z "$peer" ] || ! selected peer; then
    :
elif [ ! -x "$peer_prog" ]; then
    skip "between two hosts" "configure found no MPI: no test/bench/umr_peer_check"
elif [ $on_model -eq 1 ]; then
    # two simulated hosts of the model (UMR_MODEL_* set them)
    step "between two hosts" "$logs/peer.txt" env BUILD_DIR="$BUILD_DIR" \
        contrib/mpirun-model.sh --no-build --hosts 2 -- -np 2 "$peer_prog" -d "$dev"
    skip "calibration across hosts" "rehearsal on the model: it measures a NIC"
elif [ $rehearsal -eq 1 ]; then
    skip "between two hosts" "rehearsal on the sw engine: it needs two hosts with a ConnectX (HW_CHECK_ENGINE=model rehearses it)"
else
    step "between two hosts" "$logs/peer.txt" env UCX_MLX5_UMR_ENGINE=mlx5 \
        mpirun --allow-run-as-root -np 2 --host "$(hostname -s),$peer" \
        -x UCX_MLX5_UMR_ENGINE "$peer_prog" -d "$dev"
fi
if [ $on_model -eq 1 ]; then
    only=facts    # the other steps need a NIC or the sw engine
fi

gt=$BUILD_DIR/test/gtest
# ---- 3. device suite (a skip is a failure here: the device is present) ---------
if ! selected device; then
    :
elif [ $rehearsal -eq 1 ]; then
    skip "device suite" "rehearsal: it needs a ConnectX"
else
    step "device suite" "$logs/device.log" "$gt/gtest_engine_mlx5_device"
    grep -q "SKIPPED \]" "$logs/device.log" && results[-1]="FAIL (skipped)"
fi

# ---- 4. transport suites on the device -----------------------------------------
if selected uct; then
    step "transport suites on $dev" "$logs/uct.log" \
        env UMR_TEST_DEV="$dev" "$gt/gtest_uct"
fi

# ---- 5. the sweep ----------------------------------------------------------------
bench=$BUILD_DIR/test/bench/bench_uct_layout
if selected sweep; then
    step "sweep layout->layout" "$logs/sweep.txt" \
        env UCX_MLX5_UMR_ENGINE=$engine "$bench" $quick -d "$dev"
    step "sweep contig->layout" "$logs/sweep-L.txt" \
        env UCX_MLX5_UMR_ENGINE=$engine "$bench" $quick -L -d "$dev"
    # a local key cache miss every operation, keys on the endpoint's QP
    # (EP_UMR=y, the default) and on the md's QP (n, 8x smaller endpoint
    # send queues): whether n can become the default (docs/hosts.md)
    step "sweep key misses, EP_UMR=y" "$logs/sweep-My.txt" \
        env UCX_MLX5_UMR_ENGINE=$engine UCX_MLX5_UMR_EP_UMR=y "$bench" $quick -M -d "$dev"
    step "sweep key misses, EP_UMR=n" "$logs/sweep-Mn.txt" \
        env UCX_MLX5_UMR_ENGINE=$engine UCX_MLX5_UMR_EP_UMR=n "$bench" $quick -M -d "$dev"
fi

# ---- 6. calibration of pml/umr's choice -------------------------------------------
if ! selected calibrate; then
    :
elif [ $calibrate -eq 0 ]; then
    skip "calibration" "-C"
elif grep -q '^HAVE_MPI_TRUE = #' "$BUILD_DIR/test/bench/Makefile" 2>/dev/null; then
    log "calibration: configure found no MPI (mpicc/mpirun), so there is no" \
        "test/bench/umr_calibrate to run"
    skip "calibration" "configure found no MPI"
else
    rm -f "$costs"
    step "calibration on $dev" "$logs/calibrate.log" \
        env UCX_MLX5_UMR_ENGINE=$engine BUILD_DIR="$BUILD_DIR" \
        contrib/umr-calibrate.sh --no-build ${quick:+--quick} --device "$dev" \
        ${peer:+--hosts "$(hostname -s),$peer"} --out "$costs" && calibrated=1
fi

# ---- 7. report ----------------------------------------------------------------------
{
    if [ $on_model -eq 1 ]; then
        echo "# REHEARSAL of the mlx5_umr hardware check on the rdma-core model" \
             "(HW_CHECK_ENGINE=model), $(date -u +%Y-%m-%dT%H:%MZ), $(hostname -s)"
        echo
        echo "Not a hardware check: the facts of a simulated device."
    elif [ $rehearsal -eq 1 ]; then
        echo "# REHEARSAL of the mlx5_umr hardware check on the sw engine" \
             "(HW_CHECK_ENGINE=sw), $(date -u +%Y-%m-%dT%H:%MZ), $(hostname -s)"
        echo
        echo "Not a hardware check: every step ran on the sw engine (cross-memory"
        echo "attach on this host). Its figures are NOT NIC figures."
    else
        echo "# mlx5_umr hardware check, $(date -u +%Y-%m-%dT%H:%MZ), $(hostname -s)"
    fi
    echo
    echo "| step | result |"
    echo "|---|---|"
    for i in "${!steps[@]}"; do
        echo "| ${steps[$i]} | ${results[$i]} |"
    done
    if [ -f "$logs/facts.txt" ]; then
        echo
        echo "## what the transport derived and chose on $dev"
        echo
        echo "(test/bench/umr_dev_facts; UCX_MLX5_UMR_* set them: TIMEOUT,"
        echo "RETRY_COUNT, TRAFFIC_CLASS, SL, HOP_LIMIT, FLOW_LABEL, PKEY, GID_INDEX,"
        echo "and TX_QUEUE_LEN, EP_UMR, EP_MAX_SGE the endpoint's send queue)"
        echo '```'
        cat "$logs/facts.txt"
        # the nesting depth, as the device suite established it
        grep -h "^nesting:" "$logs/device.log" 2>/dev/null
        echo '```'
    fi
    if [ -f "$logs/sweep.txt" ] || [ -f "$logs/sweep-L.txt" ]; then
        echo
        if [ $rehearsal -eq 1 ]; then
            echo "## put/get through strided layout keys (REHEARSAL: sw engine, NOT NIC figures)"
        else
            echo "## put/get through strided layout keys ($dev, NIC figures)"
        fi
        echo '```'
        cat "$logs/sweep.txt" 2>/dev/null
        echo
        cat "$logs/sweep-L.txt" 2>/dev/null
        echo '```'
        if [ -f "$logs/sweep-My.txt" ] || [ -f "$logs/sweep-Mn.txt" ]; then
            echo
            echo "### a local key cache miss every operation: keys on the endpoint's QP"
            echo "### (UCX_MLX5_UMR_EP_UMR=y) against the md's QP (n, RDMA-only endpoint QPs)"
            echo '```'
            cat "$logs/sweep-My.txt" 2>/dev/null
            echo
            cat "$logs/sweep-Mn.txt" 2>/dev/null
            echo '```'
        fi
    fi
    if [ -f "$logs/peer.txt" ]; then
        echo "## between two hosts ($(hostname -s) and ${peer}$( [ $on_model -eq 1 ] && echo ': two simulated hosts of the model'))"
        echo '```'
        grep -a "^CHECK " "$logs/peer.txt"
        echo '```'
    fi
    if [ -f "$logs/calibrate.log" ]; then
        echo
        if [ $rehearsal -eq 1 ]; then
            echo "## pml/umr calibration (REHEARSAL: sw engine, NOT NIC figures)"
        else
            echo "## pml/umr calibration ($dev, mlx5 engine)"
        fi
        echo
        echo "Costs file: $costs"
        echo "(contrib/umr-calibrate.sh --no-build ${quick:+--quick }--device $dev;"
        echo "engine.$engine.* and the local figures of the PMLs it wraps)."
        echo
        echo '```'
        # the crossover table: what umr-calibrate printed after the file
        sed -n '/^# pml\/umr over /,$p' "$logs/calibrate.log"
        echo '```'
        if [ $calibrated -eq 1 ]; then
            echo
            echo "Install it where pml/umr reads it by default:"
            echo
            echo "    install -D -m 644 $costs ~/.cache/mlx5_umr/costs-$(hostname -s).conf"
            echo
            echo "or name it per job (--mca pml_umr_cost_file FILE). The MPI benchmark"
            echo "with it (pml/umr from this build, UCX_MLX5_UMR_ENGINE=$engine):"
            echo
            echo "    OMPI_MCA_pml_umr_devices=$dev UCX_MLX5_UMR_ENGINE=$engine PML_UMR_COST_FILE=$costs contrib/run-mpi-bench.sh --quick"
            echo
            echo "an installed pml/umr with it, in any job:"
            echo
            echo "    mpirun -np 2 --mca pml ob1,umr --mca pml_umr_cost_file $costs --mca pml_umr_devices $dev -x UCX_MLX5_UMR_ENGINE=$engine PROGRAM"
            echo
            echo "(pml_umr_devices=$dev: pml/umr uses the device these figures are of,"
            echo "also between ranks of one host; without it, sw there and the first"
            echo "mlx5 device that opens elsewhere.)"
            if [ "$engine" = mlx5 ]; then
                echo
                echo "The file has no sw engine figures (the built-in defaults then keep"
                echo "same-host messages on the PML); add them with"
                echo "UCX_MLX5_UMR_ENGINE=sw contrib/umr-calibrate.sh --no-build --out FILE"
                echo "(it keeps the figures already in FILE)."
            fi
        fi
    fi
    echo
    echo "## what it ran on"
    echo '```'
    if [ $on_model -eq 1 ]; then
        echo "no ConnectX: REHEARSAL on the rdma-core model"
    elif [ $rehearsal -eq 1 ]; then
        echo "no ConnectX: REHEARSAL on the sw engine"
    else
        ibv_devinfo -v -d "$dev" 2>&1 | grep -E "hca_id|transport|fw_ver|vendor_part_id|board_id|max_qp_wr|max_sge|max_mr_size|max_mr:|phys_port_cnt|state:|active_mtu|link_layer|active_width|active_speed" | sed 's/^[[:space:]]*//'
    fi
    echo "rdma-core: $(dpkg-query -W -f='${Version}' libibverbs1 2>/dev/null)"
    echo "ucx: $(dpkg-query -W -f='${Version}' libucx0 2>/dev/null)"
    echo "open mpi: $(dpkg-query -W -f='${Version}' libopenmpi3 2>/dev/null)"
    echo "kernel: $(uname -r)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null)"
    echo '```'
} | tee "$OUT"

for r in "${results[@]}"; do
    [[ $r == FAIL* ]] && { log "some steps failed (see $OUT)"; exit 1; }
done
if [[ " ${results[*]} " == *" SKIPPED"* ]]; then
    log "no step failed, some were SKIPPED (report: $OUT)"
else
    log "all steps passed (report: $OUT)"
fi
exit 0
