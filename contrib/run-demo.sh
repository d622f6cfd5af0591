#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# The main job: set everything up (packages, UCX source headers, build), then
# run examples/halo3d: the faces of 3D grids sent between two processes
# through the mlx5_umr transport, zero-copy (UMR layout keys) against
# pack + contiguous put + unpack, every face verified byte for byte.
#
# Then an unmodified MPI halo program with and without pml/umr, and an
# unmodified one-sided program (examples/mpi_rma: MPI_Put/MPI_Get through a
# strided target type, fence and lock, every byte checked) without osc/umr,
# with it, and built for MPICH when that is installed, side by side.
#
# Engine: UCX_MLX5_UMR_ENGINE (default sw: cross-memory attach, not NIC
# figures). Arguments go to halo3d, e.g. contrib/run-demo.sh -n 64,256 -i 500
#
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
export BUILD_DIR=${BUILD_DIR:-$top/build}

"$top/contrib/install-deps.sh"
"$top/contrib/build.sh"

export UCX_MLX5_UMR_ENGINE=${UCX_MLX5_UMR_ENGINE:-sw}
"$BUILD_DIR/examples/halo3d" "$@"

# An unmodified MPI halo program (examples/mpi_halo.c), without and with the
# Open MPI component pml/umr (loaded from a scratch component directory, as
# `make install` would put it in Open MPI's). pml_umr_verbose=1 prints each
# rank's counters: zcopy_* shows what moved zero-copy, *_hits the reuse of
# registrations. With pml_umr_zcopy=auto, pml/umr chooses per message (on the
# sw engine it mostly passes through); =on forces zero-copy.
umr_so=$BUILD_DIR/src/ompi/pml_umr/.libs/mca_pml_umr.so
halo=$BUILD_DIR/examples/mpi_halo
if [ -f "$umr_so" ] && [ -x "$halo" ]; then
    scratch=$BUILD_DIR/demo-components
    mkdir -p "$scratch"
    ln -sf "$umr_so" "$scratch/"
    pkglibdir=$(ompi_info --path pkglibdir | sed -n 's/^ *Pkglibdir: *//p')
    mpirun=(mpirun --allow-run-as-root --oversubscribe -np 2)
    # The component path goes in mpirun's environment, not as -x NAME=VALUE:
    # Open MPI 5's launcher (prterun) replaces an mca_base_component_path
    # given that way by PMIx's, and hands one from the environment to PMIx
    # too (PMIX_MCA_mca_base_component_path) unless that one is set: PMIx
    # keeps its own directory.
    umr_env=(OMPI_MCA_mca_base_component_path="$scratch:$pkglibdir")
    umr=(-x OMPI_MCA_mca_base_component_path
         -x OMPI_MCA_pml_umr_uct_module="$BUILD_DIR/src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so"
         -x OMPI_MCA_pml_umr_verbose=1 -x UCX_MLX5_UMR_ENGINE)
    pmix_components=$(pkg-config --variable=libdir pmix 2>/dev/null)/pmix
    if [ -d "$pmix_components" ]; then
        umr_env+=(PMIX_MCA_mca_base_component_path="$pmix_components")
        umr+=(-x PMIX_MCA_mca_base_component_path)
    fi
    for run in plain auto on; do
        echo
        case $run in
        plain) echo "=== mpi_halo without pml/umr: ${mpirun[*]} mpi_halo"
               "${mpirun[@]}" "$halo" -n 64 -i 100 ;;
        *)     echo "=== mpi_halo with pml/umr (pml_umr_zcopy=$run)"
               env "${umr_env[@]}" "${mpirun[@]}" "${umr[@]}" -x OMPI_MCA_pml_umr_zcopy=$run \
                   "$halo" -n 64 -i 100 ;;
        esac
    done

    # One-sided: examples/mpi_rma without osc/umr (Open MPI's osc/rdma:
    # one cross-memory-attach call a block on one host), with osc/umr
    # (osc_umr_verbose=1: its counters say what went packed or zero-copy)
    # and under MPICH. Each run checks every byte and fails on a wrong one.
    osc_so=$BUILD_DIR/src/ompi/osc_umr/.libs/mca_osc_umr.so
    rma=$BUILD_DIR/examples/mpi_rma
    if [ -f "$osc_so" ] && [ -x "$rma" ]; then
        ln -sf "$osc_so" "$scratch/"
        rma_out=$BUILD_DIR/demo-rma
        mkdir -p "$rma_out"
        rma_args=(-s 1048576 -i 10)
        echo
        echo "=== mpi_rma without osc/umr: ${mpirun[*]} mpi_rma ${rma_args[*]}"
        "${mpirun[@]}" "$rma" "${rma_args[@]}" | tee "$rma_out/plain.txt"
        echo
        echo "=== mpi_rma with osc/umr (and pml/umr, whose rails it uses)"
        env "${umr_env[@]}" "${mpirun[@]}" "${umr[@]}" -x OMPI_MCA_osc_umr_verbose=1 \
            "$rma" "${rma_args[@]}" 2>&1 | tee "$rma_out/umr.txt"
        cols=("$rma_out/plain.txt" "$rma_out/umr.txt")
        names="Open MPI|Open MPI + osc/umr"
        if command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null; then
            mpicc.mpich -O2 -o "$rma_out/mpi_rma.mpich" "$top/examples/mpi_rma.c"
            echo
            echo "=== mpi_rma under MPICH: mpiexec.mpich -n 2 mpi_rma ${rma_args[*]}"
            mpiexec.mpich -n 2 "$rma_out/mpi_rma.mpich" "${rma_args[@]}" |
                tee "$rma_out/mpich.txt"
            cols+=("$rma_out/mpich.txt")
            names+="|MPICH"
        fi
        echo
        echo "=== mpi_rma side by side: median us an operation (${rma_args[1]} bytes through a strided target, every byte checked)"
        awk -v names="$names" '
            FNR == 1 { ++f }
            /^(put|get) / && / wrong bytes$/ {
                k = sprintf("%s %-5s %6s B", $1, $2, $3)
                if (!(k in seen)) { seen[k] = 1; order[++n] = k }
                t[k, f] = $6; bad[k, f] = $8
            }
            END {
                nn = split(names, h, "|")
                printf "%-20s", "operation, block"
                for (i = 1; i <= nn; ++i) printf " %20s", h[i]
                printf "\n"
                for (j = 1; j <= n; ++j) {
                    printf "%-20s", order[j]
                    for (i = 1; i <= nn; ++i)
                        printf " %13s us%s", t[order[j], i],
                               bad[order[j], i] == "0" ? "    " : " BAD"
                    printf "\n"
                }
            }' "${cols[@]}"
    fi
fi
