#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Whole MPI programs with and without pml/umr (test/bench/bench_mpi_apps:
# a fresh indexed type per message received with MPI_Probe, a transpose
# whose two sides differ), over ob1 and ucx, and with and without
# libumr_mpich.so under MPICH ("mpich": the same program built with
# mpicc.mpich, test/mpich, run by mpiexec.mpich), at each -np, the runs of a
# configuration interleaved with the runs without pml/umr (A B B A ...),
# the best of each: "never slower" on programs written by others, as a
# whole-program time. The sw engine: no NIC figures.
#
# usage: contrib/run-mpi-apps.sh [--runs N] [--np "2 4"]
#                                [--pml "ob1 ucx mpich"]
#                                [--no-build] [-- bench_mpi_apps args]
#   PML_UMR_COST_FILE=FILE   pml/umr's and libumr_mpich.so's costs file
#                            (default: the one each finds)
#   UMR_APPS_ENV="VAR=V .."  more environment for the pml/umr runs
#   APPS_ENV="VAR=V .."      more environment for both sides, e.g.
#                            "MALLOC_TRIM_THRESHOLD_=268435456
#                             MALLOC_MMAP_THRESHOLD_=268435456": glibc then
#                            neither trims the heap nor maps large blocks,
#                            which takes most of particles' page faults and
#                            run-to-run spread at np 4 (docs/benchmarks.md)
#   UMR_SO_DIR=DIR           pml/umr's mca_pml_umr.so from DIR (e.g. an
#                            older build's, its RUNPATH naming its own
#                            libmca_common_umr.so.0)
# Output: per configuration a line
#   RESULT <app> np <n> <pml> plain <best s> umr <best s> ratio <plain/umr>
#          median_ratio <plain median/umr median> (<every time>)
# (ratio >= 1: pml/umr no slower) and pml/umr's counters of its last run.
#
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
export BUILD_DIR=${BUILD_DIR:-$top/build}
out=${OUT:-$BUILD_DIR/mpi-apps}
runs=5; nps="2 4"; pmls="ob1 ucx"; build=1
command -v mpiexec.mpich >/dev/null && pmls="$pmls mpich"
while [ $# -gt 0 ]; do
    case "$1" in
    --runs) runs=$2; shift ;;
    --np)   nps=$2; shift ;;
    --pml)  pmls=$2; shift ;;
    --no-build) build=0 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "run-mpi-apps: unknown argument '$1' (--help)" >&2; exit 1 ;;
    esac
    shift
done
if [ $build = 1 ]; then
    "$top/contrib/build.sh" >/dev/null
    make -C "$BUILD_DIR" bench >/dev/null
fi
if [[ " $pmls " == *" mpich "* ]]; then
    make -C "$BUILD_DIR/test/mpich" bench_mpi_apps >/dev/null
fi
mpich_prog=$BUILD_DIR/test/mpich/bench_mpi_apps
mpich_env=(-genv LD_PRELOAD "$BUILD_DIR/src/mpich/.libs/libumr_mpich.so"
           -genv UMR_MPICH_UCT_MODULE "$BUILD_DIR/src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so"
           -genv UMR_MPICH_VERBOSE 1)
[ -z "${PML_UMR_COST_FILE:-}" ] || mpich_env+=(-genv UMR_MPICH_COST_FILE "$PML_UMR_COST_FILE")
prog=$BUILD_DIR/test/bench/bench_mpi_apps
umr_so=$BUILD_DIR/src/ompi/pml_umr/.libs/mca_pml_umr.so
[ -x "$prog" ] && [ -f "$umr_so" ] ||
    { echo "run-mpi-apps: $prog or $umr_so not built" >&2; exit 1; }
rm -rf "$out/components"
mkdir -p "$out/components"
[ -z "${UMR_SO_DIR:-}" ] || umr_so=$UMR_SO_DIR/mca_pml_umr.so
ln -sf "$umr_so" "$out/components/"
pkglibdir=$(ompi_info --path pkglibdir | sed -n 's/^ *Pkglibdir: *//p')
export UCX_MLX5_UMR_ENGINE=${UCX_MLX5_UMR_ENGINE:-sw}
mpirun=(mpirun --allow-run-as-root --oversubscribe --mca btl ^tcp
        -x UCX_MLX5_UMR_ENGINE)
umr_env=(OMPI_MCA_mca_base_component_path="$out/components:$pkglibdir"
         OMPI_MCA_pml_umr_uct_module="$BUILD_DIR/src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so"
         OMPI_MCA_pml_umr_verbose=1)
[ -z "${PML_UMR_COST_FILE:-}" ] || umr_env+=(OMPI_MCA_pml_umr_cost_file="$PML_UMR_COST_FILE")
# shellcheck disable=SC2206 # a word list
umr_env+=(${UMR_APPS_ENV:-})
# shellcheck disable=SC2206 # a word list
apps_env=(${APPS_ENV:-})
for v in "${apps_env[@]}"; do mpirun+=(-x "$v"); done
ucx=(--mca pml_ucx_tls any --mca pml_ucx_devices any)

# MPICH alone, or with libumr_mpich.so preloaded (UMR_APPS_ENV and APPS_ENV
# as -genv pairs)
one_mpich() {   # file, np, umr(0|1), args...
    local f=$1 np=$2 umr=$3 e=() v; shift 3
    for v in "${apps_env[@]}"; do e+=(-genv "${v%%=*}" "${v#*=}"); done
    if [ "$umr" = 1 ]; then
        e+=("${mpich_env[@]}")
        for v in ${UMR_APPS_ENV:-}; do e+=(-genv "${v%%=*}" "${v#*=}"); done
    fi
    mpiexec.mpich -n "$np" "${e[@]}" "$mpich_prog" "$@" </dev/null >"$f" 2>&1 ||
        { tail -20 "$f"; echo "run-mpi-apps: failed: $f" >&2; exit 1; }
    grep -q '^APP .* ok$' "$f" || { tail "$f"; exit 1; }
    awk '/^APP/ {print $8}' "$f"
}

one() {   # file, np, pml, umr(0|1), args...
    local f=$1 np=$2 pml=$3 umr=$4 e=() o=(); shift 4
    if [ "$pml" = mpich ]; then
        one_mpich "$f" "$np" "$umr" "$@"
        return
    fi
    if [ "$umr" = 1 ]; then
        for v in "${umr_env[@]}"; do e+=(-x "$v"); done
        o=(--mca pml "$pml,umr")
    else
        o=(--mca pml "$pml")
    fi
    [ "$pml" = ucx ] && o+=("${ucx[@]}")
    "${mpirun[@]}" -np "$np" "${o[@]}" "${e[@]}" "$prog" "$@" >"$f" 2>&1 ||
        { tail -20 "$f"; echo "run-mpi-apps: failed: $f" >&2; exit 1; }
    grep -q '^APP .* ok$' "$f" || { tail "$f"; exit 1; }
    awk '/^APP/ {print $8}' "$f"
}

best() { sort -g | head -1; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "run-mpi-apps: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); args: $*${APPS_ENV:+; both sides: $APPS_ENV}"
for np in $nps; do
    for pml in $pmls; do
        d=$out/np$np-$pml
        mkdir -p "$d"
        plain=(); umr=()
        for ((r = 1; r <= runs; ++r)); do
            if (( r % 2 )); then
                plain+=("$(one "$d/plain.$r" "$np" "$pml" 0 "$@")")
                umr+=("$(one "$d/umr.$r" "$np" "$pml" 1 "$@")")
            else
                umr+=("$(one "$d/umr.$r" "$np" "$pml" 1 "$@")")
                plain+=("$(one "$d/plain.$r" "$np" "$pml" 0 "$@")")
            fi
        done
        bp=$(printf '%s\n' "${plain[@]}" | best)
        bu=$(printf '%s\n' "${umr[@]}" | best)
        mp=$(printf '%s\n' "${plain[@]}" | median)
        mu=$(printf '%s\n' "${umr[@]}" | median)
        app=$(awk '/^APP/ {print $2}' "$d/plain.1")
        echo "RESULT $app np $np $pml plain $bp umr $bu ratio $(awk -v p="$bp" -v u="$bu" 'BEGIN {printf "%.3f", p / u}')" \
             "median_ratio $(awk -v p="$mp" -v u="$mu" 'BEGIN {printf "%.3f", p / u}')" \
             "(plain ${plain[*]}; umr ${umr[*]})"
        grep -h 'pml_umr: rank\|umr_mpich: rank' "$d/umr.$runs" | sed 's/^/    /' | head -4
    done
done
echo "run-mpi-apps: load $(cut -d' ' -f1-3 /proc/loadavg) after"
