#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# libumr_mpich.so against MPICH alone, the same program side by side:
# test/bench/bench_mpi_ddt (MPI_Send/MPI_Recv of derived datatypes from rank
# 0 to rank 1, every message verified; built with mpicc.mpich in
# test/mpich) under mpiexec.mpich -n 2, in three configurations:
#
#   mpich         MPICH alone
#   umr           the library preloaded, its settings as given (default:
#                 UMR_MPICH_ZCOPY=auto with the host's costs file, or the
#                 built-in costs, by which the sw engine never wins)
#   umr:zcopy     the library with zero-copy forced (UMR_MPICH_ZCOPY=on:
#                 shows where zero-copy loses)
#
# The configurations' runs are interleaved (A B C C B A ...); each cell is
# the best (lowest) median time over the runs. Prints one line a pattern
# (its bytes, blocks, mean block; each configuration's time in us; the
# ratio of the first configuration's time to each other's: with mpich
# first, >= 1 means no slower than MPICH; the pattern's parameters), then
# each library run's counters of rank 0 (so that zero-copy is seen to run).
# The table is also in OUT/best (configuration, pattern, parameters, bytes,
# blocks, mean block, best median us; tab-separated).
# The sw engine moves data with cross-memory attach on one host: not NIC
# figures. On a busy machine the times say nothing: run it on a quiet one.
#
# usage: contrib/run-mpich-bench.sh [--runs N] [--only CONF[,CONF..]]
#                                   [--no-build] [-- bench_mpi_ddt args]
#   --runs N   runs of each configuration (default 3)
#   --only     e.g. mpich,umr
#   bench_mpi_ddt args: default -L (no ping-pong); e.g. -p vector -T 1
# Environment: BUILD_DIR (default ./build), OUT (default
# BUILD_DIR/mpich-bench), UMR_MPICH_COST_FILE (the umr runs' costs file),
# UCX_MLX5_UMR_ENGINE (default sw).
#
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
export BUILD_DIR=${BUILD_DIR:-$top/build}
out=${OUT:-$BUILD_DIR/mpich-bench}
runs=3 confs="mpich umr umr:zcopy" build=1
while [ $# -gt 0 ]; do
    case $1 in
    --runs)     runs=$2; shift 2 ;;
    --only)     confs=${2//,/ }; shift 2 ;;
    --no-build) build=0; shift ;;
    --)         shift; break ;;
    -h|--help)  sed -n '2,36p' "$0"; exit 0 ;;
    *)          break ;;
    esac
done
[ $# -gt 0 ] || set -- -L
command -v mpiexec.mpich >/dev/null || { echo "run-mpich-bench: no mpiexec.mpich" >&2; exit 1; }
if [ $build = 1 ]; then
    "$top/contrib/build.sh" >/dev/null
    make -C "$BUILD_DIR/test/mpich" bench_mpi_ddt >/dev/null
fi
prog=$BUILD_DIR/test/mpich/bench_mpi_ddt
lib=$BUILD_DIR/src/mpich/.libs/libumr_mpich.so
[ -x "$prog" ] && [ -f "$lib" ] || { echo "run-mpich-bench: $prog or $lib not built" >&2; exit 1; }
export UCX_MLX5_UMR_ENGINE=${UCX_MLX5_UMR_ENGINE:-sw} UCX_WARN_UNUSED_ENV_VARS=n
umr=(-genv LD_PRELOAD "$lib" -genv UMR_MPICH_VERBOSE 1
     -genv UMR_MPICH_UCT_MODULE "$BUILD_DIR/src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so")
[ -z "${UMR_MPICH_COST_FILE:-}" ] || umr+=(-genv UMR_MPICH_COST_FILE "$UMR_MPICH_COST_FILE")
rm -rf "$out"
mkdir -p "$out"

one() {   # conf run
    local f=$out/$1.$2 e=()
    case $1 in
    umr)       e=("${umr[@]}") ;;
    umr:zcopy) e=("${umr[@]}" -genv UMR_MPICH_ZCOPY on) ;;
    esac
    mpiexec.mpich -n 2 "${e[@]}" "$prog" "$@" </dev/null >"$f" 2>&1 ||
        { tail -20 "$f"; echo "run-mpich-bench: $1 failed: $f" >&2; exit 1; }
}

echo "run-mpich-bench: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); engine $UCX_MLX5_UMR_ENGINE; bench_mpi_ddt $*"
read -r -a order <<<"$confs"
for ((r = 1; r <= runs; ++r)); do
    for c in "${order[@]}"; do one "$c" "$r" "$@"; done
    # the next run in the other order
    for ((i = 0, j = ${#order[@]} - 1; i < j; ++i, --j)); do
        t=${order[i]}; order[i]=${order[j]}; order[j]=$t
    done
done

# DATA <pattern> <param> <bytes> <blocks> <mean_block> <mode> <median_us> ..
# (mode ddt: the derived datatype sent as it is)
for c in $confs; do
    cat "$out/$c".* | awk -F'\t' -v c="$c" '$1 == "DATA" && $7 == "ddt" {
        k = $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6
        if (!(k in b) || $8 < b[k]) b[k] = $8
    } END { for (k in b) print c "\t" k "\t" b[k] }'
done >"$out/best"
awk -F'\t' -v confs="$confs" '
    BEGIN { n = split(confs, cs, " ") }
    { k = $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6; t[$1, k] = $7
      if (!(k in seen)) { seen[k] = 1; keys[++m] = k } }
    END {
        printf "%-14s %9s %7s %9s", "pattern", "bytes", "blocks", "mean_B"
        for (i = 1; i <= n; ++i) printf " %12s", cs[i] " us"
        for (i = 2; i <= n; ++i) printf " %11s", cs[1] "/" cs[i]
        printf "  param\n"
        for (j = 1; j <= m; ++j) {
            split(keys[j], f, "\t")
            printf "%-14s %9s %7s %9s", f[1], f[3], f[4], f[5]
            for (i = 1; i <= n; ++i) printf " %12s", t[cs[i], keys[j]]
            for (i = 2; i <= n; ++i) {
                a = t[cs[1], keys[j]]; b = t[cs[i], keys[j]]
                if (a != "" && b > 0) printf " %11.2f", a / b; else printf " %11s", "-"
            }
            printf "  %s\n", f[2]
        }
    }' "$out/best"
echo
for f in "$out"/umr*.*; do
    [ -f "$f" ] || continue
    echo "$(basename "$f"): $(grep -a -o 'umr_mpich: rank 0: zcopy_sends [0-9]* zcopy_recvs [0-9]* zcopy_bytes [0-9]* passthrough_sends [0-9]*' "$f" || echo 'no counters')"
done
echo "run-mpich-bench: load $(cut -d' ' -f1-3 /proc/loadavg) after; outputs in $out"
