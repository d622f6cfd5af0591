#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Calibrate pml/umr's, osc/umr's and libumr_mpich.so's zero-copy choices on
# this host: run test/bench/umr_calibrate (mpirun -np 2) under each PML
# pml/umr may wrap (and the osc component Open MPI picks with it:
# osc.<component>.* figures; then osc/umr's packed path, with osc/umr and
# pml/umr from the build loaded and osc_umr_packed=on under the first PML:
# packed.* figures), and the same program built with mpicc.mpich
# (test/mpich/umr_calibrate_mpich) under mpiexec.mpich -n 2, MPICH alone:
# MPICH's own costs of the messages libumr_mpich.so passes through
# (pml.mpich.* figures, what UMR_MPICH_ZCOPY=auto weighs zero-copy against).
# Writes the costs file all of them read (format:
# src/mpi/core/umr_mpi_cost.h). Then prints, per engine, the block sizes
# from which a message goes zero-copy.
#
# usage: contrib/umr-calibrate.sh [--out FILE] [--pml ob1,ucx,mpich] [--quick]
#                                 [--device DEV] [--hosts HOST1,HOST2]
#                                 [--no-build]
#   --out    the costs file (default: the components' and the MPICH
#            binding's default,
#            ${XDG_CACHE_HOME:-~/.cache}/mlx5_umr/costs-<short hostname>.conf)
#   --pml    the MPIs to measure: Open MPI's PMLs, and mpich for MPICH
#            (default ob1,ucx, and mpich when mpiexec.mpich is installed
#            and, with --no-build, its program built);
#            the engine figures come with the first
#   --device the mlx5_umr device (md) the engine figures are measured on,
#            e.g. mlx5_0 (default: the first one of the engine; sw has "sw")
#   --quick  5 samples a point instead of 9
#   --hosts  two hosts: the PML figures are then the "remote" scope
#   --no-build  use the existing build (BUILD_DIR, default ./build)
#
# Engine: UCX_MLX5_UMR_ENGINE (default here: auto, i.e. mlx5 when a ConnectX
# is present, else sw). Figures already in FILE for other engines, PMLs or
# scopes are kept; the ones measured now replace theirs. The sw engine's
# figures are cross-memory attach on this host, not NIC figures. The machine
# should be quiet: the load average is printed before and after.
#
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
export BUILD_DIR=${BUILD_DIR:-$top/build}

out="${XDG_CACHE_HOME:-$HOME/.cache}/mlx5_umr/costs-$(hostname -s).conf"
pmls=
quick=()
device=()
hosts=()
build=1
while [ $# -gt 0 ]; do
    case "$1" in
    --out)   out=$2; shift ;;
    --pml)   pmls=$2; shift ;;
    --quick) quick=(-q) ;;
    --device) device=(-d "$2"); shift ;;
    --hosts) hosts=(--host "$2"); shift ;;
    --no-build) build=0 ;;
    -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "umr-calibrate: unknown argument '$1' (--help)" >&2; exit 1 ;;
    esac
    shift
done

prog=$BUILD_DIR/test/bench/umr_calibrate
mpich_prog=$BUILD_DIR/test/mpich/umr_calibrate_mpich
if [ -z "$pmls" ]; then
    # MPICH when it is installed and its program is built or will be
    pmls=ob1,ucx
    command -v mpiexec.mpich >/dev/null &&
        { [ $build -eq 1 ] || [ -x "$mpich_prog" ]; } && pmls=$pmls,mpich
fi
if [ $build -eq 1 ]; then
    "$top/contrib/install-deps.sh" >/dev/null
    "$top/contrib/build.sh" >/dev/null
    [[ ,$pmls, != *,mpich,* ]] || make -C "$BUILD_DIR/test/mpich" umr_calibrate_mpich >/dev/null
    [[ ,$pmls, != ,mpich, ]] || make -C "$BUILD_DIR" bench >/dev/null
fi
for p in ${pmls//,/ }; do
    [ "$p" = mpich ] && want=$mpich_prog || want=$prog
    if [ ! -x "$want" ]; then
        echo "umr-calibrate: $want was not built (configure found no MPI" \
             "for $p?)" >&2
        exit 1
    fi
done

export UCX_MLX5_UMR_ENGINE=${UCX_MLX5_UMR_ENGINE:-auto}
# pml/umr itself stays out of the measurement (if it is installed)
export OMPI_MCA_pml_umr_enable=0
mpirun=(mpirun --allow-run-as-root --oversubscribe -np 2 "${hosts[@]}"
        -x UCX_MLX5_UMR_ENGINE -x OMPI_MCA_pml_umr_enable)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "umr-calibrate: load $(cut -d' ' -f1-3 /proc/loadavg) before;" \
     "engine $UCX_MLX5_UMR_ENGINE${device[1]:+, device ${device[1]}}; PMLs $pmls"
engine=("${device[@]}")
for pml in ${pmls//,/ }; do
    if [ "$pml" = mpich ]; then
        # MPICH alone (no libumr_mpich.so): what passing through costs;
        # its osc figures are not read by the binding
        mpiexec=(mpiexec.mpich -n 2 ${hosts[1]:+-hosts "${hosts[1]}"}
                 -genv UCX_MLX5_UMR_ENGINE "$UCX_MLX5_UMR_ENGINE")
        echo "=== ${mpiexec[*]} $mpich_prog -O ${quick[*]} ${engine[*]}"
        env -u LD_PRELOAD "${mpiexec[@]}" "$mpich_prog" -O "${quick[@]}" \
            "${engine[@]}" -o "$tmp/$pml.conf"
        engine=(-E)
        continue
    fi
    case "$pml" in
    ucx) opts=(--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any) ;;
    *)   opts=(--mca pml "$pml") ;;
    esac
    echo "=== ${mpirun[*]} ${opts[*]} $prog ${quick[*]} ${engine[*]}"
    "${mpirun[@]}" "${opts[@]}" "$prog" "${quick[@]}" "${engine[@]}" \
        -o "$tmp/$pml.conf"
    engine=(-E)  # the engine once, with the first PML
done

# osc/umr's packed path (needs its rails: pml/umr in front of the first PML)
osc_so=$BUILD_DIR/src/ompi/osc_umr/.libs/mca_osc_umr.so
pml_so=$BUILD_DIR/src/ompi/pml_umr/.libs/mca_pml_umr.so
pml=${pmls%%,*}
if [ -f "$osc_so" ] && [ -f "$pml_so" ] && [ "$pml" != mpich ]; then
    mkdir -p "$tmp/components"
    ln -sf "$osc_so" "$pml_so" "$tmp/components/"
    pkglibdir=$(ompi_info --path pkglibdir | sed -n 's/^ *Pkglibdir: *//p')
    packed_env=(OMPI_MCA_pml_umr_enable=1 OMPI_MCA_osc_umr_packed=on
                OMPI_MCA_mca_base_component_path="$tmp/components:$pkglibdir"
                OMPI_MCA_pml_umr_uct_module="$BUILD_DIR/src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so")
    pmix_components=$(pkg-config --variable=libdir pmix 2>/dev/null)/pmix
    [ -d "$pmix_components" ] && packed_env+=(PMIX_MCA_mca_base_component_path="$pmix_components")
    case "$pml" in
    ucx) opts=(--mca pml ucx,umr --mca pml_ucx_tls any --mca pml_ucx_devices any) ;;
    *)   opts=(--mca pml "$pml,umr") ;;
    esac
    echo "=== osc/umr's packed path: ${mpirun[*]} ${opts[*]} $prog -P ${quick[*]}"
    env "${packed_env[@]}" "${mpirun[@]}" -x OMPI_MCA_osc_umr_packed \
        -x OMPI_MCA_mca_base_component_path -x OMPI_MCA_pml_umr_uct_module \
        "${opts[@]}" "$prog" -P "${quick[@]}" -o "$tmp/packed.conf" ||
        echo "umr-calibrate: no packed figures (osc/umr's run failed): its built-in rule stays"
fi

# Merge: the old file's keys not measured now, then the new ones.
mkdir -p "$(dirname "$out")"
{
    echo "# mlx5_umr costs (contrib/umr-calibrate.sh, $(date '+%F %T'))"
    echo "version = 1"
    cat "$tmp"/*.conf | grep -v -e '^version' -e '^#' -e '^host' -e '^date' \
        >"$tmp/new"
    if [ -f "$out" ]; then
        sed -n 's/^\([a-z][^ =]*\) *=.*/\1/p' "$tmp/new" | sort -u >"$tmp/keys"
        grep -E '^(engine|pml|osc|packed)\.' "$out" | while IFS= read -r line; do
            key=${line%%=*}; key=${key%% *}
            grep -qxF "$key" "$tmp/keys" || echo "$line"
        done
    fi
    grep -h '^#' "$tmp"/*.conf
    cat "$tmp/new"
} >"$tmp/merged"
mv "$tmp/merged" "$out"
echo "umr-calibrate: wrote $out (load $(cut -d' ' -f1-3 /proc/loadavg) after)"
echo
for pml in ${pmls//,/ }; do
    [ -x "$prog" ] && p=$prog || p=$mpich_prog
    "$p" --crossover "$out" "$pml"
done
