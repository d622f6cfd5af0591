#!/bin/bash
#
# The main job: set everything up (packages, UCX source headers, build), then
# run examples/halo3d: the faces of 3D grids sent between two processes
# through the mlx5_umr transport, zero-copy (UMR layout keys) against
# pack + contiguous put + unpack, every face verified byte for byte.
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
exec "$BUILD_DIR/examples/halo3d" "$@"
