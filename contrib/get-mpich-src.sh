#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Provide the source tree of the installed MPICH: its own test suite
# (test/mpi), which contrib/run-mpich-tests.sh builds against MPICH and runs
# with libumr_mpich.so preloaded. Nothing of it is compiled into mlx5_umr.
# This script puts that tree into DEST/mpich-VERSION (VERSION as
# 'mpichversion' says, e.g. 4.0.2).
#
# Usage: contrib/get-mpich-src.sh [--from TARBALL|DIR] [DEST]
#   DEST defaults to ./mpich-src. Prints the source directory on success.
#   --from  use a source tarball or an unpacked tree (or a checkout of the
#           release's tag) instead of apt.
#
set -eu

from=""
if [ "${1:-}" = "--from" ]; then
    from=$2
    shift 2
fi
dest=$(realpath -m "${1:-mpich-src}")

die() { echo "get-mpich-src: $*" >&2; exit 1; }
. "$(dirname "$0")/get-src-lib.sh"

command -v mpichversion >/dev/null || die "mpichversion not found: install mpich (Debian) or put MPICH's bin on PATH"
# "MPICH Version:    	4.0.2"
version=$(mpichversion 2>/dev/null | sed -n 's/^MPICH Version:[[:space:]]*\([0-9][0-9a-z.]*\).*/\1/p' | head -1)
[ -n "$version" ] || die "cannot read the MPICH version from 'mpichversion'"

srcdir="$dest/mpich-$version"
mkdir -p "$dest"

if [ ! -f "$srcdir/maint/version.m4" ] || [ ! -d "$srcdir/test/mpi" ]; then
    # the source package's version (a binary rebuild, 4.0.2-3+b1, has none
    # of its own)
    pkgver=""
    if [ -z "$from" ]; then
        pkgver=$(dpkg-query -W -f='${source:Version}' libmpich-dev 2>/dev/null | head -1 || true)
        [ -n "$pkgver" ] || die "libmpich-dev is not installed: pass --from TARBALL|DIR"
    fi
    get_src "$from" "$srcdir" mpich "$pkgver"
fi

# The source must be the installed release.
[ -f "$srcdir/maint/version.m4" ] || die "$srcdir has no maint/version.m4: not an MPICH source tree"
srcver=$(sed -n 's/^m4_define(\[MPICH_VERSION_m4\],\[\([^]]*\)\]).*/\1/p' "$srcdir/maint/version.m4" | head -1)
[ "$srcver" = "$version" ] || die "source tree is MPICH $srcver but the installed MPICH is $version"
echo "$srcdir"
