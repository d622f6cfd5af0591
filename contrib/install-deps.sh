#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Install what building and testing mlx5_umr needs on Debian (12, 13 or
# unstable: the suites of the support matrix), then fetch UCX's source headers
# for the installed UCX (contrib/get-ucx-src.sh).
# Idempotent; needs root (or sudo) only when something is missing.
#
#   --packages-only   install the packages, do not fetch UCX's source
#                     (contrib/root.sh uses this when it makes a root)
#
set -eu
cd "$(dirname "$0")/.."
packages_only=no
[ "${1:-}" = "--packages-only" ] && packages_only=yes

packages=(
    build-essential autoconf automake libtool pkg-config dpkg-dev
    libucx-dev ucx-utils                  # UCX (1.13.1 on Debian 12)
    libibverbs-dev ibverbs-providers      # rdma-core: mlx5dv.h, libmlx5
    ibverbs-utils                         # ibv_devinfo (contrib/hw-check.sh)
    libopenmpi-dev openmpi-bin            # MPI benchmarks and tests
    mpich libmpich-dev                    # libumr_mpich.so (MPICH-family
                                          # binding) and its tests
    libpmix-dev                           # <pmix.h>: Open MPI 5+'s internal headers
                                          # include it (unstable's libopenmpi-dev
                                          # does not depend on it)
    googletest libgtest-dev               # make check
    clang                                 # make fuzz (libFuzzer)
    valgrind
    python3-matplotlib                    # run-mpi-bench.sh plots
)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    echo "install-deps: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[ $packages_only = yes ] && { echo "install-deps: packages ok"; exit 0; }
src=$(contrib/get-ucx-src.sh ucx-src)
echo "install-deps: ok (UCX source: $src)"
