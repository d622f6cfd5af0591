#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# The support matrix: build mlx5_umr with -Werror and run its whole test
# suite ('make check') inside a Debian root per suite, with that suite's own
# UCX, Open MPI and rdma-core (contrib/root.sh makes and caches the roots).
#
#   contrib/run-matrix.sh [SUITE...]      default: trixie sid
#
# The work tree (tracked and untracked files, not build/ or ucx-src/) is
# copied into ROOT/build/NAME (NAME: the tree's directory name), so the run
# never writes into the clone and two trees can run side by side.
# UCX's source comes from 'apt-get source' inside the root; UCX_SRC_TREES=DIR
# takes DIR/ucx-VERSION instead when it exists (a tree of exactly that
# release, for machines whose mirror lacks the source package). A root whose
# UCX source cannot be had is reported BLOCKED, and does not fail the run:
# that is the mirror's doing, not the tree's. Likewise OMPI_SRC_TREES=DIR for
# DIR/openmpi-VERSION (VERSION as ompi_info prints it, e.g. 6.0.0rc2): pml/umr
# takes the internal headers Debian's libopenmpi-dev lacks from the source of
# that release (contrib/get-ompi-src.sh, apt-get source openmpi); a root whose
# configure stops for want of it is BLOCKED too.
# Ends with one line per root:
#   debian-13 (UCX 1.18.1, Open MPI 5.0.7, rdma-core 56.1): tests: N passed, N failed, N skipped
# and exits non-zero if any root failed. Logs: ROOT/build/NAME/build/.
#
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- trixie sid

label() {
    case "$1" in
        bookworm) echo debian-12 ;;
        trixie)   echo debian-13 ;;
        forky)    echo debian-14 ;;
        sid)      echo debian-unstable ;;
    esac
}

# Upstream version of a package installed in a root: 1.18.1+ds-2+b1 ->
# 1.18.1, 6.0.0~rc2-2 -> 6.0.0~rc2.
root_pkg_version() {
    chroot "$1" dpkg-query -W -f='${Version}' "$2" 2>/dev/null |
        sed 's/^[0-9]*://; s/[+-].*//'
}

# The files of the work tree that git knows or would add.
copy_tree() {
    local dest=$1
    rm -rf "$dest"
    mkdir -p "$dest"
    (cd "$top" && git ls-files -z --cached --others --exclude-standard |
        xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
        tar --null -T - -cf -) | tar -xf - -C "$dest"
}

# The suite's ucx source package as "VERSION DSC-URL", from the mirror's
# source index (the root is made only once its source can be had).
ucx_source_of() {
    local mirror index
    mirror=$("$top/contrib/root.sh" mirror "$1") || return 1
    index=$(curl -sf "$mirror/dists/$1/main/source/Sources.xz" | xz -dc) || return 1
    awk -v m="$mirror" '
        /^Package: /   { pkg = $2 }
        /^Version: /   { ver = $2 }
        /^Directory: / { dir = $2 }
        /^$/ { if (pkg == "ucx") { print ver, m "/" dir "/ucx_" ver ".dsc"; exit } }
    ' <<<"$index"$'\n'
}

results=()
status=0
blocked=0
for suite in "$@"; do
    name=$(label "$suite")
    [ -n "$name" ] || { echo "run-matrix: unknown suite '$suite'" >&2; exit 2; }
    start=$(date +%s)
    line=""

    # UCX's internal headers come from its source package, of exactly the
    # version the root installs. A mirror without it (some serve only
    # binaries) blocks the root: said, not counted as a failure of the tree.
    read -r ucx_src_version ucx_dsc < <(ucx_source_of "$suite") || true
    ucx_upstream=${ucx_src_version%-*}; ucx_upstream=${ucx_upstream%+*}
    ucx_upstream=${ucx_upstream%%~*}
    if [ -z "${ucx_src_version:-}" ]; then
        line="$name: FAILED (no ucx source package in the mirror's $suite index)"
        status=1
    elif ! { [ -n "${UCX_SRC_TREES:-}" ] && [ -d "$UCX_SRC_TREES/ucx-$ucx_upstream" ]; } &&
         ! curl -sfI -o /dev/null "$ucx_dsc"; then
        line="$name: BLOCKED: UCX's source package ucx $ucx_src_version is not on this machine's Debian mirror ($ucx_dsc: $(curl -s -o /dev/null -w '%{http_code}' "$ucx_dsc")); its internal headers are needed to build. UCX_SRC_TREES=DIR with DIR/ucx-$ucx_upstream (the UCX v$ucx_upstream source) runs this root"
        blocked=$((blocked + 1))
    elif "$top/contrib/root.sh" make "$suite"; then
        root=$("$top/contrib/root.sh" path "$suite")
        dest=/build/$(basename "$top")
        copy_tree "$root$dest"
        ucx_version=$(root_pkg_version "$root" ucx-utils)
        if [ -n "${UCX_SRC_TREES:-}" ] && [ -d "$UCX_SRC_TREES/ucx-$ucx_upstream" ]; then
            mkdir -p "$root$dest/ucx-src"
            cp -a "$UCX_SRC_TREES/ucx-$ucx_upstream" "$root$dest/ucx-src/"
        fi
        ompi_version=$(chroot "$root" ompi_info --version 2>/dev/null | sed -n 's/^Open MPI v//p' | head -1)
        if [ -n "${OMPI_SRC_TREES:-}" ] && [ -n "$ompi_version" ] &&
           [ -d "$OMPI_SRC_TREES/openmpi-$ompi_version" ]; then
            mkdir -p "$root$dest/ompi-src"
            cp -a "$OMPI_SRC_TREES/openmpi-$ompi_version" "$root$dest/ompi-src/"
        fi
        versions="UCX $ucx_version, Open MPI $(root_pkg_version "$root" openmpi-bin), rdma-core $(root_pkg_version "$root" ibverbs-providers)"
        echo "run-matrix: $name ($versions): building and testing"
        log=$root$dest/build/run-tests.out
        mkdir -p "${log%/*}"
        # The fuzzing run exercises only the layout engine (no host library):
        # the host's run covers it.
        if "$top/contrib/root.sh" run "$suite" env FUZZ_SECONDS=0 \
                "$dest/contrib/run-tests.sh" --no-matrix >"$log" 2>&1; then
            rc=0
        else
            rc=$?
        fi
        summary=$(grep '^tests: ' "$log" | tail -1)
        if [ $rc -ne 0 ] && grep -q "and there is no Open MPI .* source in" "$log"; then
            line="$name: BLOCKED: Open MPI's source package openmpi $(root_pkg_version "$root" libopenmpi-dev) is not on this machine's Debian mirror, and its libopenmpi-dev lacks internal headers pml/umr needs ($(grep -o 'lacks [^ ]*' "$log" | head -1)). OMPI_SRC_TREES=DIR with DIR/openmpi-$ompi_version (the Open MPI v$ompi_version source) runs this root"
            blocked=$((blocked + 1))
        elif [ $rc -ne 0 ] || [ -z "$summary" ]; then
            sed -n '/^FAIL:\|^ERROR:/p; /exited without/p' "$log"
            tail -60 "$log"
            status=1
            line="$name ($versions): ${summary:-FAILED (no test summary; rc $rc)}"
        else
            line="$name ($versions): $summary"
        fi
    else
        status=1
        line="$name: FAILED (the root could not be made)"
    fi
    echo "run-matrix: $line [$(( $(date +%s) - start )) s]"
    results+=("$line")
done

echo
for line in "${results[@]}"; do echo "$line"; done
[ $blocked -eq 0 ] || echo "run-matrix: $blocked of $# roots BLOCKED by the mirror (not run, not passed)"
exit $status
