#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Configure and build mlx5_umr in BUILD_DIR (default: ./build) with -Werror.
# Extra arguments go to configure.
#
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}

cd "$top"
[ -x configure ] && [ configure -nt configure.ac ] || ./autogen.sh >/dev/null
mkdir -p "$build"
cd "$build"
if [ ! -f Makefile ] || [ "$top/configure" -nt config.status ]; then
    # configure finds the UCX source in ucx-src/ucx-VERSION (install-deps.sh).
    "$top/configure" --enable-werror "$@" >configure.out ||
        { tail -20 configure.out; exit 1; }
    sed -n '/mlx5_umr .* configured:/,$p' configure.out
fi
make -j"$(nproc)" >make.out 2>&1 || { tail -40 make.out; exit 1; }
echo "build: ok ($build)"
