#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Pass-through cost of pml/umr in instructions: what one MPI call costs with
# and without pml/umr in front of the PML, counted by callgrind (valgrind
# --tool=callgrind), which repeats run to run where timings on a shared
# 2-core VM do not (latency varies 2x between runs there).
#
# Runs test/bench/bench_mpi_calls (an unmodified MPI program: MPI_Isend,
# MPI_Irecv, MPI_Recv of a message that has already arrived, MPI_Send/
# MPI_Recv ping-pong; MPI_BYTE of 0 B .. 64 KiB and a vector of doubles of
# 512 B (below pml/umr's minimum size) and 64 KiB; every message verified)
# under mpirun -np 2 with both ranks in callgrind, for the configurations
#   ob1, umr+ob1   Open MPI's default PML, and pml/umr in front of it
#   ucx, umr+ucx   pml ucx (pml_ucx_tls/devices any: no RDMA device here)
# pml/umr is loaded from the build tree as in contrib/run-mpi-bench.sh, with
# automatic choice, the costs file it finds by default (or
# PML_UMR_COST_FILE) and the sw engine; its counters are printed so the
# table shows whether a message passed through or went zero-copy.
#
# What is counted, and why: every measured call goes through a non-inlined
# marker function (bm_op_isend, ..._irecv, ..._recv, ..._send, ..._wait) and
# callgrind collects only inside them (--collect-atstart=no
# --toggle-collect=bm_op_*): the MPI call and all it runs, none of the
# program's filling, checking and handshakes. Each phase zeroes the counters
# after its warm-up and dumps them under its own name at its end, so one
# dump file holds one phase of one rank. A call that has to wait for the
# other rank (MPI_Wait, a rendezvous MPI_Send, an MPI_Recv whose message is
# still in flight) spins in opal_progress for as long as the other rank
# takes, and under valgrind that varies a lot from run to run: those counts
# are shown with their spread but never compared. What does repeat are the
# calls that need nothing from the peer: posting MPI_Isend and MPI_Irecv,
# MPI_Recv of a message that is already there (rank 0 sends the data and
# then a 0-byte message on another tag; rank 1 receives that one first,
# which the PML can only match after the data message), and an eager
# MPI_Send. Each iteration starts with a 0-byte "go" message from the
# receiver so the sender never runs ahead: the queues look the same at
# every measured call. A call is reported as stable when every run of every
# configuration gives the same count within --tolerance percent; the
# difference umr - plain is given for those. Besides, pml/umr's own
# instructions (executed in mca_pml_umr.so, libmca_common_umr.so,
# libuct_mlx5_umr.so and libumr_layout.so) are
# counted per phase, spinning or not: for a pure pass-through they are the
# few instructions of its entry points, and any progress work it adds
# shows up there.
#
# Under valgrind (3.19, Open MPI 4.1.4, UCX 1.13.1 here) no special setting
# is needed: vader's single-copy (cma) works, so 64 KiB messages take the same
# rendezvous path as natively, and pml ucx runs about as fast as ob1 with no
# UCX_* variable. One difference from a native run: valgrind's malloc
# replacement keeps Open MPI's memory hooks out, so pml ucx warns "UCX is
# unable to handle VM_UNMAP event" and pml/umr says "no registration cache
# for rail sw"; neither touches a pass-through call (no registration), and
# both sides of each comparison run the same way.
#
# usage: contrib/passthrough-cost.sh [--runs N] [--only NAME[,NAME..]]
#                                    [-n iters] [-w warmup] [-k kinds]
#                                    [--tolerance PCT]
#   --runs N   runs of each configuration, interleaved (default 2)
#   --only     only these configurations (e.g. ob1,umr+ob1)
#   -n, -w     iterations and warm-up iterations a phase (default 200, 20)
#   -k         kinds of calls (default isend,irecv,recv,pp; fresh: isend of
#              a vector type made for each message and freed after it)
# Output: the tables on stdout and in OUT/passthrough-cost.txt (OUT default
# BUILD_DIR/passthrough-cost); the dumps in OUT/<config>.run<r>/cg.<rank>.<n>
# (callgrind_annotate --inclusive=yes one of them to see where a phase's
# instructions go). About a minute a run (8 runs) at load 3 on 2 cores.
#
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
export BUILD_DIR=${BUILD_DIR:-$top/build}
out=${OUT:-$BUILD_DIR/passthrough-cost}

runs=2
only=""
iters=200
warmup=20
kinds=isend,irecv,recv,pp
tolerance=0.5
while [ $# -gt 0 ]; do
    case "$1" in
    --runs)      runs=$2; shift ;;
    --only)      only=$2; shift ;;
    --tolerance) tolerance=$2; shift ;;
    -n)          iters=$2; shift ;;
    -w)          warmup=$2; shift ;;
    -k)          kinds=$2; shift ;;
    -h|--help)   sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "passthrough-cost: unknown argument '$1' (--help)" >&2; exit 1 ;;
    esac
    shift
done

names=(ob1 umr+ob1 ucx umr+ucx)
for n in ${only//,/ }; do
    [[ " ${names[*]} " == *" $n "* ]] ||
        { echo "passthrough-cost: --only '$n': configurations are ${names[*]}" >&2; exit 1; }
done
if ! [[ "$runs" =~ ^[1-9][0-9]*$ ]]; then
    echo "passthrough-cost: --runs '$runs': a number of runs, at least 1" >&2
    exit 1
fi

"$top/contrib/install-deps.sh"
"$top/contrib/build.sh"
make -C "$BUILD_DIR" bench >/dev/null

prog=$BUILD_DIR/test/bench/bench_mpi_calls
if [ ! -x "$prog" ]; then
    echo "passthrough-cost: $prog was not built (configure found no mpicc/mpirun?)" >&2
    exit 1
fi
umr_so=$BUILD_DIR/src/ompi/pml_umr/.libs/mca_pml_umr.so
# UMR_SO_DIR=DIR: pml/umr's mca_pml_umr.so from DIR (an older build's, for
# before/after figures; its RUNPATH names its own libmca_common_umr.so.0)
[ -z "${UMR_SO_DIR:-}" ] || umr_so=$UMR_SO_DIR/mca_pml_umr.so
if [ ! -f "$umr_so" ]; then
    echo "passthrough-cost: pml/umr is not built ($umr_so)" >&2
    exit 1
fi

export UCX_MLX5_UMR_ENGINE=${UCX_MLX5_UMR_ENGINE:-sw}
rm -rf "$out/components"
mkdir -p "$out/components"
ln -sf "$umr_so" "$out/components/"
pkglibdir=$(ompi_info --path pkglibdir | sed -n 's/^ *Pkglibdir: *//p')
export OMPI_MCA_mca_base_component_path="$out/components:$pkglibdir"
export OMPI_MCA_pml_umr_uct_module=$BUILD_DIR/src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so
export OMPI_MCA_pml_umr_verbose=1
mpirun=(mpirun --allow-run-as-root --oversubscribe -np 2
        -x UCX_MLX5_UMR_ENGINE
        -x OMPI_MCA_mca_base_component_path -x OMPI_MCA_pml_umr_uct_module
        -x OMPI_MCA_pml_umr_verbose)
# Open MPI 5's launcher (prterun) hands the component path above to PMIx
# too (PMIX_MCA_mca_base_component_path) unless that one is set: PMIx
# keeps its own directory.
pmix_components=$(pkg-config --variable=libdir pmix 2>/dev/null)/pmix
if [ -d "$pmix_components" ]; then
    export PMIX_MCA_mca_base_component_path=$pmix_components
    mpirun+=(-x PMIX_MCA_mca_base_component_path)
fi
if [ -n "${PML_UMR_COST_FILE:-}" ]; then
    export OMPI_MCA_pml_umr_cost_file=$PML_UMR_COST_FILE
    mpirun+=(-x OMPI_MCA_pml_umr_cost_file)
fi

ucx=(--mca pml_ucx_tls any --mca pml_ucx_devices any)
declare -A opts
opts[ob1]="--mca pml ob1"
opts[umr+ob1]="--mca pml ob1,umr"
opts[ucx]="--mca pml ucx ${ucx[*]}"
opts[umr+ucx]="--mca pml ucx,umr ${ucx[*]}"

valgrind=(valgrind --tool=callgrind --collect-atstart=no
          "--toggle-collect=bm_op_*")

echo "passthrough-cost: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg);" \
     "$runs run(s) of each configuration, $iters iterations a phase; results in $out"
declare -A dirs
for ((r = 1; r <= runs; ++r)); do
    for n in "${names[@]}"; do
        if [ -n "$only" ] && ! [[ ",$only," == *",$n,"* ]]; then
            continue
        fi
        d=$out/$(echo "$n" | tr '+' '_').run$r
        rm -rf "$d"
        mkdir -p "$d"
        # shellcheck disable=SC2206 # opts[] are word lists
        cmd=("${mpirun[@]}" ${opts[$n]} "${valgrind[@]}"
             "--callgrind-out-file=$d/cg.%q{OMPI_COMM_WORLD_RANK}"
             "$prog" -n "$iters" -w "$warmup" -k "$kinds")
        echo "=== $n (run $r/$runs): ${cmd[*]}"
        start=$(date +%s)
        if ! timeout 1800 "${cmd[@]}" >"$d/stdout" 2>"$d/stderr"; then
            cat "$d/stdout"; grep -v '^==' "$d/stderr" | tail -20
            echo "passthrough-cost: $n failed" >&2
            exit 1
        fi
        if ! grep -q "callgrind markers yes" "$d/stdout"; then
            echo "passthrough-cost: $prog was built without valgrind/callgrind.h" >&2
            exit 1
        fi
        # pml/umr's counters (pml_umr_verbose=1): pass-through or zero-copy
        grep -h 'pml_umr: rank' "$d/stderr" | tee "$d/counters.txt" || true
        echo "=== $n: $(grep -c '^PHASE .* ok$' "$d/stdout") phases verified," \
             "$(( $(date +%s) - start )) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
        dirs[$n]+="${dirs[$n]:+,}$d"
    done
done

report=()
for n in "${names[@]}"; do
    [ -z "${dirs[$n]:-}" ] || report+=("$n=${dirs[$n]}")
done
echo
/usr/bin/python3 "$top/contrib/passthrough-cost-report.py" --tolerance "$tolerance" \
    "${report[@]}" | tee "$out/passthrough-cost.txt"
echo
echo "passthrough-cost: table in $out/passthrough-cost.txt" \
     "(load $(cut -d' ' -f1-3 /proc/loadavg) after)"
