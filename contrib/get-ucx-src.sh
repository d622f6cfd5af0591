#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Provide UCX's internal headers for the installed UCX.
#
# mlx5_umr derives from UCX's internal classes (uct_base_iface_t, ...), whose
# headers Debian does not ship. This script puts the source tree of exactly
# the installed UCX version into DEST and writes the installed build's
# config.h (from `ucx_info -b`) into DEST/include-config/config.h.
#
# Usage: contrib/get-ucx-src.sh [--from TARBALL|DIR] [DEST]
#   DEST defaults to ./ucx-src. Prints the source directory on success.
#   --from  use a source tarball or an unpacked tree instead of apt.
#
set -eu

from=""
if [ "${1:-}" = "--from" ]; then
    from=$2
    shift 2
fi
dest=$(realpath -m "${1:-ucx-src}")

die() { echo "get-ucx-src: $*" >&2; exit 1; }
. "$(dirname "$0")/get-src-lib.sh"

command -v ucx_info >/dev/null || die "ucx_info not found: install ucx-utils (Debian) or put UCX's bin on PATH"
# "# Version 1.13.1" (UCX 1.13) or "# Library version: 1.18.1" (1.14 and later)
version=$(ucx_info -v 2>/dev/null | sed -n 's/^# \(Library \)\{0,1\}[Vv]ersion:\{0,1\} \([0-9.]*\).*/\2/p' | head -1)
[ -n "$version" ] || die "cannot read the UCX version from 'ucx_info -v'"

srcdir="$dest/ucx-$version"
mkdir -p "$dest"

if [ ! -f "$srcdir/src/uct/base/uct_iface.h" ]; then
    # The source package's version: a binary rebuild (1.18.1+ds-2+b1) has
    # no source of its own.
    pkgver=""
    [ -n "$from" ] || pkgver=$(dpkg-query -W -f='${source:Version}' libucx0 libucx0t64 2>/dev/null | head -1 || true)
    get_src "$from" "$srcdir" ucx "${pkgver:-$version-1}"
fi

# The source must match the installed library version.
srcver=$(sed -n 's/^define(\[ucx_ver_major\], \([0-9]*\)).*/\1/p;s/^define(\[ucx_ver_minor\], \([0-9]*\)).*/\1/p;s/^define(\[ucx_ver_patch\], \([0-9]*\)).*/\1/p' \
         "$srcdir/configure.ac" | paste -sd.)
[ "$srcver" = "$version" ] || die "source tree is UCX $srcver but the installed UCX is $version"

mkdir -p "$srcdir/include-config"
ucx_info -b > "$srcdir/include-config/config.h"
echo "$srcdir"
