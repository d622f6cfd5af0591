#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Debian roots of the support matrix: make one, run a command inside one.
#
#   contrib/root.sh make SUITE         make (or refresh) the root of SUITE
#   contrib/root.sh run SUITE CMD...   run CMD inside it (as root, with
#                                      /proc, /sys, /dev and /dev/shm mounted
#                                      for mpirun in a private mount namespace)
#   contrib/root.sh path SUITE         print where the root lives
#   contrib/root.sh mirror SUITE       print the Debian mirror roots come from
#
# A root is `debootstrap --variant=minbase SUITE` from the host's own Debian
# mirror, with deb-src enabled and the packages that building and testing
# mlx5_umr needs (the list in contrib/install-deps.sh, which runs inside the
# root). Roots are cached under ROOTS_DIR (default /var/cache/mlx5_umr/roots)
# and made again when missing, broken, older than ROOT_MAX_AGE_DAYS (default
# 7: sid moves) or made from another package list.
#
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
roots_dir=${ROOTS_DIR:-/var/cache/mlx5_umr/roots}
max_age_days=${ROOT_MAX_AGE_DAYS:-7}

die() { echo "root.sh: $*" >&2; exit 1; }
usage() { sed -n '3,18p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

[ $# -ge 2 ] || usage
cmd=$1 suite=$2
shift 2
case "$suite" in
    bookworm|trixie|sid|forky) ;;
    *) die "unknown suite '$suite' (bookworm, trixie, forky or sid)" ;;
esac
root=$roots_dir/$suite
stamp=$root/.mlx5_umr-root

# The URI of the host's Debian archive (deb822 or one-line format).
host_mirror() {
    local uri
    uri=$(sed -n 's/^URIs: *\([^ ]*debian\/*\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
    [ -n "$uri" ] || uri=$(sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*debian\/*\) .*/\2/p' /etc/apt/sources.list 2>/dev/null | head -1)
    [ -n "$uri" ] || die "no Debian mirror found in /etc/apt/sources.list{,.d}"
    echo "$uri"
}

# What a root is made from: a change in either makes it again.
recipe() {
    { cat "$top/contrib/install-deps.sh"; echo "$suite"; } | sha256sum | cut -c1-16
}

is_fresh() {
    [ -f "$stamp" ] || return 1
    [ "$(sed -n 's/^recipe //p' "$stamp")" = "$(recipe)" ] || return 1
    [ -z "$(find "$stamp" -mtime +"$max_age_days")" ] || return 1
    [ -x "$root/usr/bin/ucx_info" ] && [ -x "$root/usr/bin/mpicc" ]
}

# Runs "$@" inside the root, in a private mount namespace of its own: /proc,
# /sys, /dev, /dev/shm and /dev/pts are mounted for mpirun there and vanish
# with the command, also on failure or interruption, and two runs in the same
# root never unmount each other's.
in_root() {
    unshare --mount --propagation private -- /bin/sh -ec '
        root=$1; shift
        for d in proc sys dev dev/shm dev/pts; do
            mkdir -p "$root/$d"
            mount --bind "/$d" "$root/$d"
        done
        exec chroot "$root" "$@"' sh "$root" \
        /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        CI="${CI:-}" FUZZ_SECONDS="${FUZZ_SECONDS:-}" UMR_TEST_SEED="${UMR_TEST_SEED:-}" \
        UMR_TEST_TIME_MULTIPLIER="${UMR_TEST_TIME_MULTIPLIER:-}" \
        UMR_TEST_BUSY="${UMR_TEST_BUSY:-}" "$@"
}

make_root() {
    [ "$(id -u)" -eq 0 ] || die "making a root needs root (debootstrap, chroot)"
    if is_fresh; then
        echo "root.sh: $suite root is up to date ($root)"
        return 0
    fi
    command -v debootstrap >/dev/null || {
        echo "root.sh: installing debootstrap"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    } || die "cannot install debootstrap"

    local mirror tmp
    mirror=$(host_mirror)
    tmp=$root.new
    rm -rf "$tmp"
    mkdir -p "$roots_dir"
    echo "root.sh: debootstrap $suite from $mirror (about a minute)"
    debootstrap --variant=minbase "$suite" "$tmp" "$mirror" >"$roots_dir/$suite.debootstrap.log" 2>&1 ||
        { tail -20 "$roots_dir/$suite.debootstrap.log"; die "debootstrap $suite failed"; }
    # deb822 source with deb-src, so apt-get source ucx/rdma-core works.
    rm -f "$tmp/etc/apt/sources.list"
    cat >"$tmp/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb deb-src
URIs: $mirror
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    # The mirror may be a dated snapshot whose Release files have expired
    # (sid's do within days): their signatures still count.
    echo 'Acquire::Check-Valid-Until "false";' >"$tmp/etc/apt/apt.conf.d/99mlx5-umr-snapshot"
    cp /etc/resolv.conf "$tmp/etc/resolv.conf" 2>/dev/null || true
    # No daemons inside the root.
    printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
    chmod 755 "$tmp/usr/sbin/policy-rc.d"

    rm -rf "$root"
    mv "$tmp" "$root"
    mkdir -p "$root/build/deps"
    cp "$top/contrib/install-deps.sh" "$top/contrib/get-ucx-src.sh" \
        "$top/contrib/get-src-lib.sh" "$root/build/deps/"
    echo "root.sh: installing packages into the $suite root"
    in_root /build/deps/install-deps.sh --packages-only >"$roots_dir/$suite.packages.log" 2>&1 ||
        { tail -20 "$roots_dir/$suite.packages.log"; die "installing packages into the $suite root failed"; }
    echo "recipe $(recipe)" >"$stamp"
    echo "root.sh: $suite root ready ($root)"
}

run_in_root() {
    [ "$(id -u)" -eq 0 ] || die "running in a root needs root (chroot)"
    [ -d "$root/usr" ] || die "no $suite root in $root: run 'contrib/root.sh make $suite' first"
    in_root "$@"
}

case "$cmd" in
    make) make_root ;;
    run)  [ $# -ge 1 ] || usage; run_in_root "$@" ;;
    path) echo "$root" ;;
    mirror) host_mirror ;;
    *)    usage ;;
esac
