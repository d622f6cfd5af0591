#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# The tree's dependency rule (contrib/include-cycles.py): no include cycle
# anywhere in src/, and no call cycle between the .c files of the layout
# engine, the MPI datatype decoder and the Open MPI components (every object
# used from above only; the build's objects tell who calls whom). Also that
# the script finds a cycle when there is one (a scratch tree).
#
set -u
top_srcdir=${top_srcdir:-../..}
top_builddir=${top_builddir:-../..}
script=$top_srcdir/contrib/include-cycles.py
out=$PWD/test_include_cycles.out.d
rm -rf "$out"
mkdir -p "$out"
suite=include_cycles
. "$(dirname "$0")/../gtest/gtest_format.sh"

no_include_cycle() {
    python3 "$script" "$top_srcdir/src" >"$out/include" 2>&1 ||
        { cat "$out/include"; return 1; }
    grep -q '^no include cycle in src/' "$out/include" || { cat "$out/include"; return 1; }
}

no_call_cycle() {   # layer, relative to src/
    local f=$out/calls-${1//\//_}
    python3 "$script" --calls "$top_builddir/src/$1" "$top_srcdir/src/$1" >"$f" 2>&1 ||
        { cat "$f"; return 1; }
}

finds_a_cycle() {
    local t=$out/tree
    mkdir -p "$t/a" "$t/b"
    printf '#include "b.h"\n' >"$t/a/a.h"
    printf '#include "../a/a.h"\n' >"$t/b/b.h"
    printf '#include "a.h"\n' >"$t/a/a.c"
    python3 "$script" "$t" >"$out/cycle" 2>&1 && { cat "$out/cycle"; return 1; }
    grep -q '^include cycle: a/a.h <-> b/b.h$' "$out/cycle" || { cat "$out/cycle"; return 1; }
}

check no_include_cycle_in_src no_include_cycle
check no_call_cycle_in_the_layout_engine no_call_cycle layout
check no_call_cycle_in_the_decoder no_call_cycle mpi
check no_call_cycle_in_the_ompi_components no_call_cycle ompi
check the_script_finds_a_cycle finds_a_cycle
finish
