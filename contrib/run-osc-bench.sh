#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# osc/umr benchmark: build, then run test/bench/bench_osc_umr under
# mpirun -np 2 (MPI_Put/MPI_Get with vector, subarray or indexed targets,
# blocks 8 B .. 64 KiB, on average twice the block apart, contiguous and
# noncontiguous origin, fence and lock/unlock, MPI_Win_create,
# MPI_Win_allocate and dynamic windows: see the program's options). In the
# same job, the operations
# alternate (A B B A) between a window with osc/umr in front and one created
# with the info key osc_umr_enable=false (the window Open MPI makes without
# osc/umr: osc/rdma over btl/vader on one host); the table gives both
# medians and the median of the paired ratios (plain time / osc/umr time:
# > 1 means osc/umr is faster). Every byte is checked on the first and last
# repetition of each point. osc/umr and pml/umr (whose rails it uses) are
# loaded from a scratch component directory with the module just built, and
# print their counters at the end (zero-copy really ran).
#
# MPICH beside it: when mpicc.mpich and mpiexec.mpich are installed (unless
# --no-mpich), the same source is built for MPICH and run under
# mpiexec.mpich -n 2 with the same arguments (there both windows are
# MPICH's: its time is the better of the two medians), and
# contrib/osc-bench-mpich.py prints per cell the times of osc rdma (the
# window without osc/umr), osc/umr and MPICH and the speed ratios osc/umr
# against MPICH and against osc rdma. --runs N: N jobs of each, interleaved
# (Open MPI, MPICH, Open MPI, ...), the best time of each cell taken.
#
# MPICH with libumr_mpich.so (--mpich-umr): the MPICH build run a third
# time in each round, the library preloaded (UMR_MPICH_* from the
# environment: ZCOPY=auto unless set), and a second table: MPICH alone
# against MPICH + libumr_mpich.so per cell (both windows of a job are the
# same there: the better of the two medians), with the cells below target
# (2x MPICH at 4 KiB and 32 KiB blocks, 0.95x elsewhere). The one-sided
# counters of each rank are in OUT/bench_osc_umr.mpich-umr-N.txt.
#
# --mpich-only: MPICH alone and MPICH + libumr_mpich.so, no Open MPI run.
#
# usage: contrib/run-osc-bench.sh [--no-build] [--no-mpich] [--mpich-umr]
#                                 [--mpich-only] [--runs N]
#                                 [-- bench_osc_umr arguments]
#   e.g. contrib/run-osc-bench.sh --mpich-only --runs 3 -- -t vector \
#            -w create -b 8,64,512,4096,32768
#        (bench_osc_umr: -s bytes per operation, default 1 MiB; -r
#        repetitions per window, default 6; -q a few block sizes;
#        -t vector,subarray,indexed (default vector); -w
#        create,allocate,dynamic (default create); -o contig,vector and
#        -y fence,lock (default both))
# Then contrib/osc-bench-report.py: a Markdown table of the ratios and
# OUT/osc-bench-ratios.png (OUT: default BUILD_DIR/osc-bench).
#
# Engine: UCX_MLX5_UMR_ENGINE (default sw: cross-memory attach between the
# two processes of one host, NOT NIC figures).
#
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
export BUILD_DIR=${BUILD_DIR:-$top/build}
out=${OUT:-$BUILD_DIR/osc-bench}
build=1 mpich=1 mpich_umr=0 ompi=1 runs=1
args=()
usage="usage: $0 [--no-build] [--no-mpich] [--mpich-umr] [--mpich-only] [--runs N] [-- bench_osc_umr arguments]"
while [ $# -gt 0 ]; do
    case $1 in
        --no-build) build=0 ;;
        --no-mpich) mpich=0 ;;
        --mpich-umr) mpich_umr=1 ;;
        --mpich-only) mpich_umr=1 ompi=0 ;;
        --runs) shift; runs=${1:-}
                [[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "--runs: a number >= 1" >&2; exit 2; } ;;
        --) shift; args=("$@"); break ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
    shift
done
if [ $mpich -eq 1 ] && ! { command -v mpicc.mpich && command -v mpiexec.mpich; } >/dev/null; then
    echo "# no MPICH (mpicc.mpich, mpiexec.mpich): Open MPI only"
    mpich=0
fi
if [ $build -eq 1 ]; then
    "$top/contrib/build.sh"
fi
make -C "$BUILD_DIR/test/bench" bench_osc_umr >/dev/null

prog=$BUILD_DIR/test/bench/bench_osc_umr
mkdir -p "$out/components"
for so in src/ompi/pml_umr/.libs/mca_pml_umr.so src/ompi/osc_umr/.libs/mca_osc_umr.so; do
    ln -sf "$BUILD_DIR/$so" "$out/components/"
done
pkglibdir=$(ompi_info --path pkglibdir | sed -n 's/^ *Pkglibdir: *//p')
export UCX_MLX5_UMR_ENGINE=${UCX_MLX5_UMR_ENGINE:-sw}
export OMPI_MCA_mca_base_component_path="$out/components:$pkglibdir"
export OMPI_MCA_pml_umr_uct_module=$BUILD_DIR/src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so
export OMPI_MCA_pml_umr_verbose=1 OMPI_MCA_osc_umr_verbose=1
cmd=(mpirun --allow-run-as-root --oversubscribe -np 2 "$prog" "${args[@]}")

if [ $mpich -eq 1 ]; then
    mpich_prog=$out/bench_osc_umr.mpich
    mpicc.mpich -O2 -o "$mpich_prog" "$top/test/bench/bench_osc_umr.c"
    # Open MPI's variables mean nothing to MPICH; its own defaults
    mpich_cmd=(env -u OMPI_MCA_mca_base_component_path mpiexec.mpich -n 2 "$mpich_prog" "${args[@]}")
    mpich_umr_cmd=(env -u OMPI_MCA_mca_base_component_path mpiexec.mpich -n 2
                   -genv LD_PRELOAD "$BUILD_DIR/src/mpich/.libs/libumr_mpich.so"
                   -genv UMR_MPICH_UCT_MODULE "$BUILD_DIR/src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so"
                   -genv UMR_MPICH_VERBOSE 1 "$mpich_prog" "${args[@]}")
fi

echo "# $(date -u '+%F %T UTC'), $(git -C "$top" rev-parse --short HEAD), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# engine $UCX_MLX5_UMR_ENGINE: cross-memory attach between two processes of this host, NOT NIC figures"
echo "# ratio = time through the window without osc/umr / time through osc/umr (same job, A B B A pairs)"
echo "# ${cmd[*]}"
ompi_files=() mpich_files=() mpich_umr_files=()
for run in $(seq 1 "$runs"); do
    if [ $ompi -eq 1 ]; then
        f=$out/bench_osc_umr.txt
        [ "$runs" -eq 1 ] || f=$out/bench_osc_umr-$run.txt
        "${cmd[@]}" 2>&1 | tee "$f"
        ompi_files+=("$f")
    fi
    if [ $mpich -eq 1 ]; then
        f=$out/bench_osc_umr.mpich-$run.txt
        echo "# MPICH, run $run: ${mpich_cmd[*]:3}"
        "${mpich_cmd[@]}" 2>&1 | tee "$f"
        mpich_files+=("$f")
        if [ $mpich_umr -eq 1 ]; then
            f=$out/bench_osc_umr.mpich-umr-$run.txt
            echo "# MPICH + libumr_mpich.so, run $run: ${mpich_umr_cmd[*]:3}"
            "${mpich_umr_cmd[@]}" 2>&1 | tee "$f"
            mpich_umr_files+=("$f")
        fi
    fi
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ $ompi -eq 1 ]; then
    /usr/bin/python3 "$top/contrib/osc-bench-report.py" "${ompi_files[0]}" "$out" ||
        echo "# no plot (python3-matplotlib: contrib/install-deps.sh)"
fi
if [ $mpich -eq 1 ]; then
    [ $ompi -eq 0 ] ||
        /usr/bin/python3 "$top/contrib/osc-bench-mpich.py" --ompi "${ompi_files[@]}" \
            --mpich "${mpich_files[@]}"
    if [ $mpich_umr -eq 1 ]; then
        /usr/bin/python3 "$top/contrib/osc-bench-mpich.py" --mpich "${mpich_files[@]}" \
            --mpich-umr "${mpich_umr_files[@]}"
    fi
fi
