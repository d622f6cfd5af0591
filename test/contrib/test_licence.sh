#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Every source file carries its licence line (contrib/spdx.py), and the
# script finds a file without one (a scratch tree).
#
set -u
top_srcdir=${top_srcdir:-../..}
script=$top_srcdir/contrib/spdx.py
out=$PWD/test_licence.out.d
rm -rf "$out"
mkdir -p "$out"
suite=licence
. "$(dirname "$0")/../gtest/gtest_format.sh"

every_source_file_has_it() {
    python3 "$script" "$top_srcdir" >"$out/tree" 2>&1 || { cat "$out/tree"; return 1; }
}

finds_a_file_without() {
    local t=$out/scratch
    mkdir -p "$t/src"
    printf '/*\n * SPDX-License-Identifier: BSD-3-Clause\n */\nint a;\n' >"$t/src/a.c"
    printf '#!/bin/sh\necho b\n' >"$t/src/b.sh"
    python3 "$script" "$t" >"$out/scratch.out" 2>&1 && { cat "$out/scratch.out"; return 1; }
    grep -qx 'no licence line: src/b.sh' "$out/scratch.out" &&
        ! grep -q 'a.c' "$out/scratch.out" || { cat "$out/scratch.out"; return 1; }
    python3 "$script" --fix "$t" >/dev/null && python3 "$script" "$t" >/dev/null ||
        { echo "--fix left a file without"; return 1; }
    head -1 "$t/src/b.sh" | grep -qx '#!/bin/sh' || { echo "--fix moved the #! line"; return 1; }
}

check every_source_file_has_it every_source_file_has_it
check finds_a_file_without finds_a_file_without
finish
