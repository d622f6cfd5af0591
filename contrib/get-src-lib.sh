# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Sourced by get-ucx-src.sh and get-ompi-src.sh (which define die()).
#
# get_src FROM SRCDIR PACKAGE PKGVER: put a source tree into SRCDIR, from
# FROM (a tarball or an unpacked tree) if it is set, else from Debian's
# source package PACKAGE=PKGVER ('apt-get source', deb-src enabled for the
# main archive if it is missing).
get_src() {
    local from=$1 srcdir=$2 package=$3 pkgver=$4 src tmp
    if [ -n "$from" ]; then
        mkdir -p "$srcdir"
        if [ -d "$from" ]; then
            cp -a "$from/." "$srcdir/"
        else
            tar -xf "$from" -C "$srcdir" --strip-components=1
        fi
        return
    fi
    command -v apt-get >/dev/null || die "no $package source: pass --from TARBALL|DIR"
    if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/*.sources &&
       ! grep -qs '^deb-src' /etc/apt/sources.list; then
        src=/etc/apt/sources.list.d/debian.sources
        [ -w "$src" ] || die "no deb-src entry and cannot edit $src (run as root, or use --from)"
        # only the first stanza (the main archive) gets deb-src
        sed -i '0,/^Types: deb$/s//Types: deb deb-src/' "$src"
        apt-get update -qq
    fi
    command -v dpkg-source >/dev/null || die "dpkg-dev is needed for 'apt-get source'"
    tmp=$(mktemp -d)
    chmod 755 "$tmp"   # apt drops to user _apt for the download
    (cd "$tmp" && apt-get source -qq "$package=$pkgver" >/dev/null) ||
        { rm -rf "$tmp"; die "'apt-get source $package=$pkgver' failed (pass --from TARBALL|DIR)"; }
    rm -rf "$srcdir"
    # the unpacked directory: ucx-1.18.1+ds, openmpi-6.0.0~rc2, ...
    mv "$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name "$package-*" | head -1)" "$srcdir"
    rm -rf "$tmp"
}
