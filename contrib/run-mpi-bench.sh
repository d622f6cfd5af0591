#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# MPI benchmark: set everything up (packages, UCX source headers, build), then
# run one unmodified MPI program, test/bench/bench_mpi_ddt (MPI_Send/MPI_Recv
# of derived datatypes from rank 0 to rank 1, every message verified, then a
# contiguous ping-pong), under each PML configuration in turn:
#
#   ob1             Open MPI's default PML (ob1 with shared memory, one host)
#   ucx             pml ucx (--mca pml_ucx_tls any --mca pml_ucx_devices any:
#                   this host has no RDMA device, so UCX shared memory + cma)
#   umr+ob1 ...     pml/umr in front of ob1 / ucx, automatic choice
#   umr+ob1:zcopy   pml/umr with zero-copy forced (shows where it loses)
#
# With pml/umr interposed, bench_mpi_ddt alternates every pattern's messages
# and the ping-pong's samples with ones taken with pml/umr out of the call
# path (the "direct" rows; A B B A ...), and the report's "Same job" tables
# give the median of the paired ratios: pml/umr's own cost side by side,
# free of the job-to-job and phase-to-phase noise of this VM.
# (the umr+ columns appear once the pml/umr component is built; it is loaded
# from a scratch component directory, with pml_umr_verbose=1 so that its
# counters show that zero-copy really ran), and in the same program MPI_Pack
# + contiguous send + MPI_Unpack. Prints the tables side by side and writes
# PNG plots (python3-matplotlib) into OUT (default BUILD_DIR/mpi-bench).
# pml/umr reads its costs file (contrib/umr-calibrate.sh) from its default
# place or PML_UMR_COST_FILE.
#
# usage: contrib/run-mpi-bench.sh [--quick|--long] [--runs N] [--stat median|best]
#                                 [--only NAME[,NAME..]]
#                                 [--halo3d] [-- bench_mpi_ddt arguments]
#   --quick   smaller messages and fewer repeats (about 3 minutes)
#   --long    more messages a pattern and 3 runs of every configuration
#   --runs N  run the configurations N times, interleaved (ob1, ucx, ..., ob1,
#             ucx, ...); every figure is then the median over the runs
#   --stat best  instead the best (lowest time) of the runs: on this VM a whole
#             job runs either fast or slow (the report lists each run's 0 B
#             latency), so the best of several runs compares like with like
#   --only    run only these configurations (e.g. ob1,umr+ob1)
#   --halo3d  instead: examples/halo3d_mpi (the transport used directly,
#             against Open MPI's datatype path) under ob1 and ucx
#   --jobs N  instead: N short latency-only jobs of each of ob1, umr+ob1, ucx,
#             umr+ucx (or --only), a job with and one without pml/umr in
#             turn (A B B A ...): the distribution of whole jobs' latencies
#             and the paired differences, i.e. whether loading pml/umr moves
#             a job, not just its calls (mpi-bench-jobs.txt)
#
# Engine for pml/umr: UCX_MLX5_UMR_ENGINE (default sw: cross-memory attach
# on one host, NOT NIC figures). pml/umr is the build's test variant
# (hooks/, `make hooks`: the "direct" rows need its benchmark switch,
# pml_umr_bench; it differs from the installed one by a load and a branch
# at each fault point of the zero-copy path) over the module as built.
# UMR_SO_DIR=DIR loads pml/umr's mca_pml_umr.so from DIR instead of the
# build (before/after figures).
#
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
export BUILD_DIR=${BUILD_DIR:-$top/build}
out=${OUT:-$BUILD_DIR/mpi-bench}

size_args=(-T 0.5 -m 10 -M 400 -i 2000 -r 21)
runs=1
stat=median
only=""
halo3d=0
jobs=0
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) size_args=(-s 4194304 -n 128 -T 0.2 -m 5 -M 100 -i 500 -r 7) ;;
    --long)  size_args=(-T 1 -m 20 -M 1000 -i 5000 -r 31); runs=3 ;;
    --runs)  runs=$2; shift ;;
    --stat)  stat=$2; shift
             [ "$stat" = median ] || [ "$stat" = best ] ||
                 { echo "run-mpi-bench: --stat median|best, not '$stat'" >&2; exit 1; } ;;
    --only)  only=$2; shift ;;
    --halo3d) halo3d=1 ;;
    --jobs)  jobs=$2; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "run-mpi-bench: unknown argument '$1' (--help)" >&2; exit 1 ;;
    esac
    shift
done

"$top/contrib/install-deps.sh"
"$top/contrib/build.sh"
make -C "$BUILD_DIR" bench >/dev/null

export UCX_MLX5_UMR_ENGINE=${UCX_MLX5_UMR_ENGINE:-sw}
mpirun=(mpirun --allow-run-as-root --oversubscribe -np 2 -x UCX_MLX5_UMR_ENGINE)
ucx=(--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any)

if [ $halo3d -eq 1 ]; then
    prog=$BUILD_DIR/examples/halo3d_mpi
    [ ${#extra[@]} -gt 0 ] || extra=(-n 32,64,128,256 -i 50)
    for cfg in ob1 ucx; do
        opts=(--mca pml ob1)
        [ $cfg = ob1 ] || opts=("${ucx[@]}")
        echo; echo "=== $cfg: ${mpirun[*]} ${opts[*]} $prog ${extra[*]}"
        "${mpirun[@]}" "${opts[@]}" "$prog" "${extra[@]}"
    done
    exit 0
fi

prog=$BUILD_DIR/test/bench/bench_mpi_ddt
if [ ! -x "$prog" ]; then
    echo "run-mpi-bench: $prog was not built (configure found no mpicc/mpirun?)" >&2
    exit 1
fi

# Configurations: name and mpirun options. pml/umr (when built) is loaded
# from a scratch component directory in front of Open MPI's, with the
# transport module just built, and prints its counters at the end
# (pml_umr_verbose=1: they show that zero-copy really ran).
names=(ob1 ucx)
declare -A opts
opts[ob1]="--mca pml ob1"
opts[ucx]="${ucx[*]}"
umr_so=$BUILD_DIR/src/ompi/pml_umr/hooks/.libs/mca_pml_umr.so
# UMR_SO_DIR=DIR: pml/umr's mca_pml_umr.so from DIR (an older build's, for
# before/after figures; its RUNPATH names its own libmca_common_umr.so.0)
[ -z "${UMR_SO_DIR:-}" ] || umr_so=$UMR_SO_DIR/mca_pml_umr.so
if [ -f "$umr_so" ]; then
    mkdir -p "$out/components"
    ln -sf "$umr_so" "$out/components/"
    pkglibdir=$(ompi_info --path pkglibdir | sed -n 's/^ *Pkglibdir: *//p')
    export OMPI_MCA_mca_base_component_path="$out/components:$pkglibdir"
    export OMPI_MCA_pml_umr_uct_module=$BUILD_DIR/src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so
    export OMPI_MCA_pml_umr_verbose=1
    # the "direct" rows: pml/umr taken out of the call path (level 9)
    export OMPI_MCA_pml_umr_bench=1
    # the costs file pml/umr reads (its default unless PML_UMR_COST_FILE)
    if [ -n "${PML_UMR_COST_FILE:-}" ]; then
        export OMPI_MCA_pml_umr_cost_file=$PML_UMR_COST_FILE
    fi
    for w in ob1 ucx; do
        names+=("umr+$w" "umr+$w:zcopy")
    done
    opts[umr+ob1]="--mca pml ob1,umr"
    opts[umr+ucx]="--mca pml ucx,umr ${ucx[*]:3}"
    opts[umr+ob1:zcopy]="${opts[umr+ob1]} --mca pml_umr_zcopy on"
    opts[umr+ucx:zcopy]="${opts[umr+ucx]} --mca pml_umr_zcopy on"
    mpirun+=(-x OMPI_MCA_mca_base_component_path -x OMPI_MCA_pml_umr_uct_module
             -x OMPI_MCA_pml_umr_verbose -x OMPI_MCA_pml_umr_bench)
    # Open MPI 5's launcher (prterun) hands the component path above to PMIx
    # too (PMIX_MCA_mca_base_component_path) unless that one is set: PMIx
    # keeps its own directory.
    pmix_components=$(pkg-config --variable=libdir pmix 2>/dev/null)/pmix
    if [ -d "$pmix_components" ]; then
        export PMIX_MCA_mca_base_component_path=$pmix_components
        mpirun+=(-x PMIX_MCA_mca_base_component_path)
    fi
    [ -z "${OMPI_MCA_pml_umr_cost_file:-}" ] || mpirun+=(-x OMPI_MCA_pml_umr_cost_file)
else
    echo "run-mpi-bench: pml/umr is not built ($umr_so): only ob1, ucx and MPI_Pack"
fi

mkdir -p "$out"

if [ "$jobs" -gt 0 ]; then
    [ -f "$umr_so" ] || { echo "run-mpi-bench: --jobs needs pml/umr built" >&2; exit 1; }
    mkdir -p "$out/jobs"
    report=()
    for w in ob1 ucx; do
        if [ -n "$only" ] && ! [[ ",$only," == *",$w,"* ]]; then
            continue
        fi
        plain=() umr=()
        for ((i = 1; i <= jobs; ++i)); do
            order=("$w" "umr+$w")
            [ $((i % 2)) -eq 1 ] || order=("umr+$w" "$w")
            for n in "${order[@]}"; do
                f="$out/jobs/$(echo "$n" | tr '+:' '__').$i.out"
                # shellcheck disable=SC2086 # opts[] are word lists
                "${mpirun[@]}" ${opts[$n]} "$prog" -l -i 2000 -r 11 >"$f" 2>"$f.err" ||
                    { cat "$f" "$f.err"; exit 1; }
                if [ "$n" = "$w" ]; then plain+=("$f"); else umr+=("$f"); fi
            done
            echo "run-mpi-bench: $w job pair $i/$jobs, 0 B:" \
                 "$(awk -F'\t' '$1 == "LAT" && $2 == 0 {print $3}' "${plain[-1]}") us," \
                 "umr+$w $(awk -F'\t' '$1 == "LAT" && $2 == 0 {print $3}' "${umr[-1]}") us"
        done
        report+=("$w=$(IFS=,; echo "${plain[*]}")" "umr+$w=$(IFS=,; echo "${umr[*]}")")
    done
    echo
    /usr/bin/python3 "$top/contrib/mpi-bench-report.py" --jobs "$out" "${report[@]}"
    exit 0
fi
declare -A files
echo "run-mpi-bench: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" \
     "before; $runs run(s) of each configuration; results in $out"
for ((r = 1; r <= runs; ++r)); do
    for n in "${names[@]}"; do
        if [ -n "$only" ] && ! [[ ",$only," == *",$n,"* ]]; then
            continue
        fi
        f="$out/$(echo "$n" | tr '+:' '__')$( [ "$runs" -eq 1 ] || echo ".run$r").out"
        # shellcheck disable=SC2086 # opts[] are word lists
        cmd=("${mpirun[@]}" ${opts[$n]} "$prog" "${size_args[@]}" "${extra[@]}")
        echo
        echo "=== $n (run $r/$runs): ${cmd[*]}"
        start=$(date +%s)
        "${cmd[@]}" >"$f" 2>"$f.err" || { cat "$f" "$f.err"; exit 1; }
        grep -v -e '^DATA' -e '^LAT' -e '^PAIR' "$f"
        grep -h 'pml_umr' "$f.err" || true   # counters, any warning
        echo "=== $n: $(( $(date +%s) - start )) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
        files[$n]+="${files[$n]:+,}$f"
    done
done
report=()
for n in "${names[@]}"; do
    [ -z "${files[$n]:-}" ] || report+=("$n=${files[$n]}")
done

echo
echo "=== side by side"
/usr/bin/python3 "$top/contrib/mpi-bench-report.py" --stat "$stat" "$out" \
    "${report[@]}"
echo
echo "run-mpi-bench: tables in $out/mpi-bench-tables.txt, plots" \
     "$out/mpi-bench-{vector,patterns,latency}.png" \
     "(load $(cut -d' ' -f1-3 /proc/loadavg) after)"
