#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# The release tarball ('make dist') holds what a user builds and reads:
# every file git tracks (but the CI script and .gitignore), the generated
# configure and each Makefile.in; and nothing of a build (no object, no
# generated Makefile).
#
set -u
top_srcdir=${top_srcdir:-../..}
top_builddir=${top_builddir:-../..}
out=$PWD/test_dist.out.d
rm -rf "$out"
mkdir -p "$out"
suite=dist
. "$(dirname "$0")/../gtest/gtest_format.sh"

# automake's distdir (PACKAGE-VERSION, in the build) moved here: an absolute
# distdir= does not reach the subdirectories
name=$(sed -n 's/^PACKAGE_TARNAME = //p; s/^VERSION = //p' "$top_builddir/Makefile" | paste -sd-)
d=$out/tree
make -s -C "$top_builddir" distdir >"$out/make" 2>&1 && mv "$top_builddir/$name" "$d"
made=$?
(cd "$d" 2>/dev/null && find . -type f | sed 's|^\./||' | sort) >"$out/dist.files"

made_it() {
    [ $made -eq 0 ] || { tail -20 "$out/make"; return 1; }
}

every_tracked_file() {
    (cd "$top_srcdir" && git ls-files) | grep -v '^\.ci/\|^\.gitignore$' | sort >"$out/git.files"
    comm -13 "$out/dist.files" "$out/git.files" >"$out/missing"
    [ ! -s "$out/missing" ] || { echo "not in the tarball:"; head -20 "$out/missing"; return 1; }
}

generated_build_files() {
    local f bad=0
    for f in configure aclocal.m4 umr_config.h.in $(cd "$top_srcdir" && git ls-files '*Makefile.am' |
                                                       sed 's|\.am$|.in|'); do
        grep -qx "$f" "$out/dist.files" || { echo "not in the tarball: $f"; bad=1; }
    done
    return $bad
}

nothing_of_a_build() {
    ! grep '\.o$\|\.lo$\|\.la$\|\.so$\|/\.libs/\|/Makefile$\|^Makefile$\|config\.status$\|config\.log$' \
        "$out/dist.files"
}

check made_it made_it
if git -C "$top_srcdir" rev-parse --git-dir >/dev/null 2>&1; then
    check every_tracked_file every_tracked_file
else
    skip every_tracked_file "the sources are not a git checkout (no list of tracked files)"
fi
check generated_build_files generated_build_files
check nothing_of_a_build nothing_of_a_build
finish
