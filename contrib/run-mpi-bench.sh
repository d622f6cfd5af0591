#!/bin/bash
#
# MPI benchmark: set everything up (packages, UCX source headers, build), then
# run examples/halo3d_mpi under mpirun twice, with Open MPI's default pml (ob1
# with shared memory on one node) and with pml ucx. Each run times the faces
# of N^3 grids of doubles sent from rank 0 to rank 1 through Open MPI's own
# derived-datatype path, MPI_Pack + MPI_Send + MPI_Unpack, and the mlx5_umr
# transport (one zero-copy put between two layout keys), every face verified
# byte for byte.
#
# Engine: UCX_MLX5_UMR_ENGINE (default sw: cross-memory attach, not NIC
# figures). Arguments go to halo3d_mpi (default -n 32,64,128,256 -i 50).
#
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
export BUILD_DIR=${BUILD_DIR:-$top/build}

"$top/contrib/install-deps.sh"
"$top/contrib/build.sh"

prog=$BUILD_DIR/examples/halo3d_mpi
if [ ! -x "$prog" ]; then
    echo "run-mpi-bench: $prog was not built (configure found no mpicc/mpirun?)" >&2
    exit 1
fi
args=("$@")
[ $# -gt 0 ] || args=(-n 32,64,128,256 -i 50)

export UCX_MLX5_UMR_ENGINE=${UCX_MLX5_UMR_ENGINE:-sw}
mpirun=(mpirun --allow-run-as-root --oversubscribe -np 2 -x UCX_MLX5_UMR_ENGINE)

echo
echo "=== run 1/2: default pml: ${mpirun[*]} $prog ${args[*]}"
"${mpirun[@]}" "$prog" "${args[@]}"

# Open MPI 4.1's pml ucx declines unless UCX offers a device matching
# pml_ucx_devices (default mlx*) or a transport in pml_ucx_tls (default
# rc/ud/dc verbs and mlx5, cuda_ipc, rocm_ipc). Without such a device it
# runs only when told to accept any: then over UCX shared memory and cma.
ucx=(--mca pml ucx)
probe=$(mktemp)
if ! "${mpirun[@]}" "${ucx[@]}" "$prog" -n 8 -i 1 >"$probe" 2>&1; then
    echo
    echo "run-mpi-bench: plain '--mca pml ucx' cannot run here:" \
         "$(grep -m1 -o 'PML ucx cannot be selected' "$probe" || tail -1 "$probe")"
    echo "  Open MPI's pml ucx accepts UCX only with a device matching pml_ucx_devices (mlx*)"
    echo "  or a transport in pml_ucx_tls (rc/ud/dc verbs, mlx5, cuda_ipc, rocm_ipc); this host"
    echo "  has no RDMA device (UCX: tcp, posix/sysv shared memory, cma). Forcing it with"
    echo "  --mca pml_ucx_tls any --mca pml_ucx_devices any: pml ucx over UCX shared memory + cma."
    ucx+=(--mca pml_ucx_tls any --mca pml_ucx_devices any)
fi
rm -f "$probe"

echo
echo "=== run 2/2: pml ucx: ${mpirun[*]} ${ucx[*]} $prog ${args[*]}"
"${mpirun[@]}" "${ucx[@]}" "$prog" "${args[@]}"
