#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# contrib/mpirun-model.sh: run any MPI program with pml/umr on the mlx5
# engine, over the model of rdma-core (test/model: libumr_verbs_model.so,
# preloaded) on simulated hosts: no ConnectX needed. For trying programs as
# they are on the ConnectX path (addressing, connection, UMR keys, RDMA),
# not for timing: the model moves bytes with cross-memory attach.
#
# usage: contrib/mpirun-model.sh [--link ib|roce] [--hosts N]
#            [--host H=SPEC]... [--auto] [--output DIR] [--mpich]
#            [--no-build] [--] MPIRUN-ARGS... PROGRAM [ARGS...]
#   --link     link layer of every host (default ib; roce: RoCE v2 with
#              IPv4 and RoCE v1 GIDs, as a RoCE port has)
#   --hosts N  simulated hosts (default 2); ranks are spread in blocks:
#              rank r of n is on host r * N / n
#   --host H=SPEC  host H differs, SPEC as UMR_MODEL_HOST<H> (see
#              test/common/umr_test_verbs_preload.cc): e.g. 1=roce=v1,ipv4=0
#              (a RoCE v1 / IPv6 host), 1=pkeys=0x8002, 0=down_after=500
#              (its link goes down after 500 RDMA work requests),
#              1=ipv4=0,subnet=2 (IPv6 only, on IP subnet 2: global GIDs,
#              link-local ones reach that subnet only),
#              1=event=port_err@30,event=port_active@60 (port events)
#   --auto     pml/umr chooses zero-copy per message (pml_umr_zcopy=auto);
#              default: forced (=on), so every eligible message takes the
#              ConnectX path
#   --output DIR  keep each rank's output in DIR/rank.N/{stdout,stderr}
#              (default: a temporary directory, removed at the end)
#   --mpich    an MPICH job instead (a program built with mpicc.mpich):
#              mpiexec.mpich with MPIRUN-ARGS as its own, the test variant
#              of libumr_mpich.so preloaded after the model,
#              UMR_MPICH_DEVICES=mlx5_0, UMR_MPICH_ZCOPY=on (--auto: auto),
#              UMR_MPICH_VERBOSE=1; the ranks' output as Hydra's options
#              (-outfile-pattern) say, no per-rank files or counters here
#   --no-build use BUILD_DIR as it is
# Every peer, one on the same simulated host too, uses the mlx5 engine
# (pml_umr_devices=mlx5_0; OMPI_MCA_pml_umr_devices= empty: the automatic
# choice, the nearest of the UMR_MODEL_DEVICES=N HCAs a host may have, the
# ranks of a host spread over them). Each rank writes its stdout and stderr
# into files of its own (contrib/per-rank.sh, put in front of PROGRAM: the
# first of the arguments that is an executable file, or a command after an
# argument that is no option), so that no two ranks' lines interleave: they
# are printed when the job ends (or is interrupted), rank by rank, after
# mpirun's own output. Then each rank's pml/umr counters (zcopy_sends,
# zcopy_recvs, ...) and their sum. The exit status is mpirun's.
# pml/umr, osc/umr and the module are the build's test variants
# (hooks/, `make hooks`): the test faults (UCX_MLX5_UMR_TEST_FAULT,
# pml_umr_test_fault, osc_umr_test_fault) apply.
# Environment: BUILD_DIR (default ./build); MCA parameters and UCX_MLX5_UMR_*
# variables already set are kept; UMR_MODEL_* are passed to the model;
# MPIRUN_MODEL_JOB names the job (its fabric table: /dev/shm/umr-model-NAME,
# removed at the end; default mpirun-model-PID-TIME).
#
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$top/build}

link=ib hosts=2 zcopy=on build=1 output= mpich=0
host_specs=()
usage() { sed -n '2,53p' "$0"; exit "${1:-1}"; }
while [ $# -gt 0 ]; do
    case $1 in
    --link)     link=${2:-}; shift 2 ;;
    --hosts)    hosts=${2:-}; shift 2 ;;
    --host)     host_specs+=("${2:-}"); shift 2 ;;
    --auto)     zcopy=auto; shift ;;
    --output)   output=${2:-}; shift 2 ;;
    --mpich)    mpich=1; shift ;;
    --no-build) build=0; shift ;;
    -h|--help)  usage 0 ;;
    --)         shift; break ;;
    *)          break ;;
    esac
done
case $link in ib|roce) ;; *) echo "mpirun-model: --link ib or roce"; exit 1 ;; esac
[[ $hosts =~ ^[1-9][0-9]*$ ]] || { echo "mpirun-model: --hosts N (N >= 1)"; exit 1; }
[ $# -gt 0 ] || usage
# where PROGRAM starts: per-rank.sh goes in front of it
prog_at=0 prev=
for a in "$@"; do
    if { [[ $a == */* ]] && [ -f "$a" ] && [ -x "$a" ]; } ||
       { [[ $a != */* && $a != -* && $prev != -* ]] && type -P -- "$a" >/dev/null; }; then
        break
    fi
    prev=$a; prog_at=$((prog_at + 1))
done
[ $prog_at -lt $# ] ||
    { echo "mpirun-model: no program among the mpirun arguments (give its path)"; exit 1; }

mkdir -p "$BUILD_DIR" && BUILD_DIR=$(cd "$BUILD_DIR" && pwd)   # absolute:
                                             # Open MPI's component path
lib=$BUILD_DIR/test/model/.libs/libumr_verbs_model.so
# the test variants (hooks/, configure.ac: UMR_TEST_HOOKS): the tests inject
# faults into these jobs
module=$BUILD_DIR/src/uct/mlx5_umr/hooks/.libs/libuct_mlx5_umr.so
pml=$BUILD_DIR/src/ompi/pml_umr/hooks/.libs/mca_pml_umr.so

# ---- what it needs --------------------------------------------------------------
if [ $build -eq 1 ]; then
    if [ ! -f "$BUILD_DIR/Makefile" ]; then
        "$top/contrib/install-deps.sh" >/dev/null || exit 1
    fi
    BUILD_DIR=$BUILD_DIR "$top/contrib/build.sh" >/dev/null || exit 1
    make -C "$BUILD_DIR" hooks >/dev/null || exit 1
    make -C "$BUILD_DIR/test/model" libumr_verbs_model.la >/dev/null 2>&1 ||
        { echo "mpirun-model: building the model failed (was rdma-core found?)"; exit 1; }
fi
binding=$pml
[ $mpich -eq 0 ] || binding=$BUILD_DIR/src/mpich/hooks/.libs/libumr_mpich.so
for f in "$lib" "$module" "$binding"; do
    [ -f "$f" ] || { echo "mpirun-model: no $f (configure found no rdma-core, Open MPI or MPICH?)"; exit 1; }
done

# ---- the environment ---------------------------------------------------------
job=${MPIRUN_MODEL_JOB:-mpirun-model-$$-$(date +%s)}
shm=/dev/shm/umr-model-$job
if [ -n "$output" ]; then
    rm -rf "$output" && mkdir -p "$output" && output=$(cd "$output" && pwd) || exit 1
    trap 'rm -f "$shm"' EXIT
else
    output=$(mktemp -d)
    trap 'rm -f "$shm"; rm -rf "$output"' EXIT
fi

# the job's own component directory (jobs may run at once)
scratch=$output/.components
mkdir -p "$scratch"
ln -sf "$pml" "$scratch/"
# osc/umr, when built (test_osc_umr_model.sh): it uses pml/umr's rails
osc=$BUILD_DIR/src/ompi/osc_umr/hooks/.libs/mca_osc_umr.so
[ -f "$osc" ] && ln -sf "$osc" "$scratch/"
pkglibdir=$(ompi_info --path pkglibdir | sed -n 's/^ *Pkglibdir: *//p')
export OMPI_MCA_mca_base_component_path="$scratch:$pkglibdir"
# Open MPI 5's launcher would hand that path to PMIx too: PMIx keeps its own
pmix_components=$(pkg-config --variable=libdir pmix 2>/dev/null)/pmix
[ -d "$pmix_components" ] &&
    export PMIX_MCA_mca_base_component_path=${PMIX_MCA_mca_base_component_path:-$pmix_components}

export OMPI_MCA_pml_umr_uct_module=${OMPI_MCA_pml_umr_uct_module:-$module}
export OMPI_MCA_pml_umr_devices=${OMPI_MCA_pml_umr_devices-mlx5_0}   # "": automatic
export OMPI_MCA_pml_umr_verbose=${OMPI_MCA_pml_umr_verbose:-1}
export OMPI_MCA_pml_umr_zcopy=${OMPI_MCA_pml_umr_zcopy:-$zcopy}
export UCX_MLX5_UMR_ENGINE=${UCX_MLX5_UMR_ENGINE:-mlx5}
export UMR_MODEL_JOB=$job UMR_MODEL_HOSTS=$hosts UMR_MODEL_LINK=$link
export UMR_MODEL_VERBOSE=${UMR_MODEL_VERBOSE:-1}
for spec in "${host_specs[@]}"; do
    h=${spec%%=*}
    [[ $h =~ ^[0-9]+$ ]] && [ "$h" -lt "$hosts" ] ||
        { echo "mpirun-model: --host $spec: H=SPEC with H < $hosts"; exit 1; }
    export "UMR_MODEL_HOST$h=${spec#*=}"
done
# the ranks only: the model is for the mlx5_umr module they load
preload="$lib${LD_PRELOAD:+ $LD_PRELOAD}"
# sanitizer builds (contrib/run-sanitizers.sh): their runtimes come first
[ -z "${UMR_PRELOAD_EXTRA:-}" ] || preload="${UMR_PRELOAD_EXTRA//:/ } $preload"

if [ $mpich -eq 1 ]; then
    # the ranks only (-genv): the model, then the binding
    echo "mpirun-model: $hosts simulated host(s), link $link, libumr_mpich.so on the" \
         "mlx5 engine for every peer (UMR_MPICH_DEVICES=${UMR_MPICH_DEVICES-mlx5_0}," \
         "UMR_MPICH_ZCOPY=${UMR_MPICH_ZCOPY:-$zcopy}), rdma-core model $(basename "$lib")"
    mpiexec.mpich -genv LD_PRELOAD "${preload// /:}:$binding" \
        -genv UMR_MPICH_DEVICES "${UMR_MPICH_DEVICES-mlx5_0}" \
        -genv UMR_MPICH_ZCOPY "${UMR_MPICH_ZCOPY:-$zcopy}" \
        -genv UMR_MPICH_VERBOSE "${UMR_MPICH_VERBOSE:-1}" \
        -genv UMR_MPICH_UCT_MODULE "${UMR_MPICH_UCT_MODULE:-$module}" \
        "$@" </dev/null
    exit $?
fi

mpirun=(mpirun --oversubscribe)
[ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)

echo "mpirun-model: $hosts simulated host(s), link $link, pml/umr on the mlx5 engine" \
     "for every peer (pml_umr_devices=$OMPI_MCA_pml_umr_devices," \
     "pml_umr_zcopy=$OMPI_MCA_pml_umr_zcopy), rdma-core model $(basename "$lib")"
# interrupted (or a timeout's signal to the process group, which mpirun
# gets too): the ranks' output and counters are still printed
trap 'interrupted=1' INT TERM
interrupted=0
"${mpirun[@]}" -x LD_PRELOAD="$preload" "${@:1:prog_at}" \
    "$top/contrib/per-rank.sh" "$output" "${@:prog_at+1}" 2>&1
rc=$?
[ $interrupted -eq 0 ] || echo "mpirun-model: interrupted"

# ---- each rank's output, then the counters --------------------------------------
"$top/contrib/per-rank.sh" --cat "$output" | tr -d '\000'
cnt=$(mktemp)
"$top/contrib/per-rank.sh" --cat "$output" | tr -d '\000' |
    grep -a "pml_umr: rank [0-9]*: zcopy_sends " | sed 's/^.*\(pml_umr: rank\)/\1/' |
    sort -t' ' -k3,3n >"$cnt"
echo
if [ -s "$cnt" ]; then
    echo "mpirun-model: pml/umr counters of each rank:"
    cat "$cnt"
    awk '{ for (i = 1; i < NF; ++i) { if ($i == "zcopy_sends") s += $(i + 1);
                                       if ($i == "zcopy_recvs") r += $(i + 1);
                                       if ($i == "errors") e += $(i + 1) } }
         END { printf "mpirun-model: %d ranks: zcopy_sends %d zcopy_recvs %d errors %d\n",
                      NR, s, r, e }' "$cnt"
else
    echo "mpirun-model: no pml/umr counters (pml/umr did not run, or pml_umr_verbose=0)"
fi
rm -f "$cnt"
exit "$rc"
