#!/bin/bash
#
# contrib/hw-check.sh: one command for whoever first has a ConnectX.
#
# 1. installs what the build needs (contrib/install-deps.sh) and looks for an
#    mlx5 device (ibv_devinfo); without one it stops with "no mlx5 device"
#    and exit status 77 (nothing else here can say anything about a NIC);
# 2. builds with -Werror (contrib/build.sh) and the tests and benchmarks;
# 3. runs the device suite (gtest_engine_mlx5_device: real loopback UMR
#    write/read; it must not skip when a device is present);
# 4. runs the transport suites of gtest_uct on the mlx5 engine of that device
#    (UMR_TEST_DEV=<device>; the same tests CI runs on sw and on the model);
# 5. sweeps put/get through strided layout keys, block size x stride
#    (test/bench/bench_uct_layout, UCX_MLX5_UMR_ENGINE=mlx5), layout to
#    layout and contiguous to layout;
# 6. prints a summary table and the ibv_devinfo facts it ran on, ready to
#    publish (also written to $OUT, default hw-check-<host>-<date>.txt).
#
# usage: contrib/hw-check.sh [-q] [-d mlx5_N]
#   -q        quick sweep (bench_uct_layout -q)
#   -d DEV    the device (default: the first mlx5 device ibv_devinfo lists)
# Environment: BUILD_DIR (default ./build), OUT.
# Exit status: 0 all steps passed, 1 a step failed, 77 no mlx5 device.
#
set -u
cd "$(dirname "$0")/.."
top=$PWD

quick=""
dev=""
while getopts "qd:h" opt; do
    case $opt in
    q) quick="-q" ;;
    d) dev=$OPTARG ;;
    *) sed -n '2,27p' "$0"; [ "$opt" = h ] && exit 0; exit 1 ;;
    esac
done

BUILD_DIR=${BUILD_DIR:-$top/build}
OUT=${OUT:-$top/hw-check-$(hostname -s)-$(date +%Y%m%d-%H%M%S).txt}

log() { echo "hw-check: $*"; }

# ---- 1. dependencies and the device ----------------------------------------
contrib/install-deps.sh >/dev/null || { log "install-deps failed"; exit 1; }

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
log "device $dev"

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

mkdir -p "$BUILD_DIR"
logs=$BUILD_DIR/hw-check
mkdir -p "$logs"

# ---- 2. build -----------------------------------------------------------------
step "build" "$logs/build.log" env BUILD_DIR="$BUILD_DIR" contrib/build.sh || exit 1
step "build tests" "$logs/build-tests.log" make -C "$BUILD_DIR" -j2 check TESTS= || exit 1
step "build benchmarks" "$logs/build-bench.log" make -C "$BUILD_DIR" -j2 bench || exit 1

gt=$BUILD_DIR/test/gtest
# ---- 3. device suite (a skip is a failure here: the device is present) ---------
step "device suite" "$logs/device.log" "$gt/gtest_engine_mlx5_device"
grep -q "SKIPPED \]" "$logs/device.log" && results[-1]="FAIL (skipped)"

# ---- 4. transport suites on mlx5 ------------------------------------------------
step "transport suites on $dev" "$logs/uct.log" \
    env UMR_TEST_DEV="$dev" "$gt/gtest_uct"

# ---- 5. the sweep ----------------------------------------------------------------
bench=$BUILD_DIR/test/bench/bench_uct_layout
step "sweep layout->layout" "$logs/sweep.txt" \
    env UCX_MLX5_UMR_ENGINE=mlx5 "$bench" $quick -d "$dev"
step "sweep contig->layout" "$logs/sweep-L.txt" \
    env UCX_MLX5_UMR_ENGINE=mlx5 "$bench" $quick -L -d "$dev"

# ---- 6. report ----------------------------------------------------------------------
{
    echo "# mlx5_umr hardware check, $(date -u +%Y-%m-%dT%H:%MZ), $(hostname -s)"
    echo
    echo "| step | result |"
    echo "|---|---|"
    for i in "${!steps[@]}"; do
        echo "| ${steps[$i]} | ${results[$i]} |"
    done
    echo
    echo "## put/get through strided layout keys ($dev, NIC figures)"
    echo '```'
    cat "$logs/sweep.txt"
    echo
    cat "$logs/sweep-L.txt"
    echo '```'
    echo
    echo "## what it ran on"
    echo '```'
    ibv_devinfo -v -d "$dev" 2>&1 | grep -E "hca_id|transport|fw_ver|vendor_part_id|board_id|max_qp_wr|max_sge|max_mr_size|phys_port_cnt|state:|active_mtu|link_layer|active_width|active_speed" | sed 's/^[[:space:]]*//'
    echo "rdma-core: $(dpkg-query -W -f='${Version}' libibverbs1 2>/dev/null)"
    echo "ucx: $(dpkg-query -W -f='${Version}' libucx0 2>/dev/null)"
    echo "kernel: $(uname -r)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null)"
    echo '```'
} | tee "$OUT"

for r in "${results[@]}"; do
    [ "$r" = PASS ] || { log "some steps failed (see $OUT)"; exit 1; }
done
log "all steps passed (report: $OUT)"
exit 0
