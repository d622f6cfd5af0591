#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Provide the Open MPI internal headers that an Open MPI installation lacks.
#
# pml/umr is built against Open MPI's internal headers. Debian's
# libopenmpi-dev 5.0 and later leaves a few out (opal/mca/threads/pthreads/,
# the mutex behind every opal_mutex_t), so configure takes those from the
# source tree of exactly the installed release (m4/ompi.m4). This script puts
# that tree into DEST/openmpi-VERSION (VERSION as 'ompi_info --version' says,
# e.g. 5.0.7 or 6.0.0rc2).
#
# Usage: contrib/get-ompi-src.sh [--from TARBALL|DIR] [DEST]
#   DEST defaults to ./ompi-src. Prints the source directory on success.
#   --from  use a source tarball or an unpacked tree (or a checkout of the
#           release's tag) instead of apt.
#
set -eu

from=""
if [ "${1:-}" = "--from" ]; then
    from=$2
    shift 2
fi
dest=$(realpath -m "${1:-ompi-src}")

die() { echo "get-ompi-src: $*" >&2; exit 1; }
. "$(dirname "$0")/get-src-lib.sh"

command -v ompi_info >/dev/null || die "ompi_info not found: install openmpi-bin (Debian) or put Open MPI's bin on PATH"
# "Open MPI v5.0.7", "Open MPI v6.0.0rc2"
version=$(ompi_info --version 2>/dev/null | sed -n 's/^Open MPI v\([0-9][0-9a-z.]*\).*/\1/p' | head -1)
[ -n "$version" ] || die "cannot read the Open MPI version from 'ompi_info --version'"

srcdir="$dest/openmpi-$version"
mkdir -p "$dest"

if [ ! -f "$srcdir/VERSION" ] || [ ! -d "$srcdir/opal" ]; then
    # the source package's version (a binary rebuild has none of its own)
    pkgver=""
    if [ -z "$from" ]; then
        pkgver=$(dpkg-query -W -f='${source:Version}' libopenmpi-dev 2>/dev/null | head -1 || true)
        [ -n "$pkgver" ] || die "libopenmpi-dev is not installed: pass --from TARBALL|DIR"
    fi
    get_src "$from" "$srcdir" openmpi "$pkgver"
fi

# The source must be the installed release (the VERSION file's greek is
# not reliable in a checkout of a tag: compare major.minor.release).
[ -f "$srcdir/VERSION" ] || die "$srcdir has no VERSION file: not an Open MPI source tree"
srcver=$(sed -n 's/^major=//p;s/^minor=//p;s/^release=//p' "$srcdir/VERSION" | paste -sd.)
case "$version" in
    "$srcver"|"$srcver"[a-z]*) ;;
    *) die "source tree is Open MPI $srcver but the installed Open MPI is $version" ;;
esac
echo "$srcdir"
