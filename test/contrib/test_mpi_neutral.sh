#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# src/mpi (the MPI core and the datatype decoder) is MPI-neutral: no file
# there includes an Open MPI header, and every .c there compiles with -Werror
# against the C library, UCX, the layout engine and another MPI's mpi.h
# (MPICH's, from `mpicc.mpich -show`) with no Open MPI directory on the
# include path (`-H`: no header read from one). The core's library needs no
# MPI library. A planted Open MPI include is found.
#
set -u
top_srcdir=${top_srcdir:-../..}
top_builddir=${top_builddir:-../..}
out=$PWD/test_mpi_neutral.out.d
rm -rf "$out"
mkdir -p "$out"
suite=mpi_neutral
. "$(dirname "$0")/../gtest/gtest_format.sh"

# An Open MPI header: its own directories and the headers only it has.
ompi_include='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](ompi|opal|orte|oshmem|pmix)(/|_config\.h)'

includes_of() {   # dir: the files under it that include an Open MPI header
    grep -rlE "$ompi_include" "$1" --include='*.[ch]' 2>/dev/null
}

no_ompi_include() {
    local found
    found=$(includes_of "$top_srcdir/src/mpi")
    [ -z "$found" ] || { echo "includes an Open MPI header: $found"; return 1; }
}

finds_a_planted_include() {
    mkdir -p "$out/plant"
    printf '#include <opal/class/opal_list.h>\n' >"$out/plant/a.c"
    printf '#include "ompi_config.h"\n' >"$out/plant/b.h"
    [ "$(includes_of "$out/plant" | wc -l)" -eq 2 ] ||
        { includes_of "$out/plant"; return 1; }
}

mpich_cppflags() {
    local w
    for w in $(mpicc.mpich -show); do
        case $w in -I*) printf '%s ' "$w" ;; esac
    done
}

compiles_against_mpich() {
    local f flags rc=0
    command -v mpicc.mpich >/dev/null ||
        { echo "no mpicc.mpich (MPICH's libmpich-dev)"; return 77; }
    flags="-std=gnu11 $BASE_CFLAGS -I$top_builddir $UCX_CPPFLAGS"
    flags+=" -I$top_srcdir/src/layout -I$top_srcdir/src/uct/mlx5_umr"
    flags+=" -I$top_srcdir/src/uct/mlx5_umr/engine -I$top_srcdir/src/compat"
    flags+=" -I$top_srcdir/src/mpi/core -I$top_srcdir/src/mpi/decode"
    flags+=" $(mpich_cppflags)"
    case $flags in *openmpi*) echo "an Open MPI directory in: $flags"; return 1 ;; esac
    for f in "$top_srcdir"/src/mpi/core/*.c "$top_srcdir"/src/mpi/decode/*.c; do
        # shellcheck disable=SC2086
        gcc $flags -H -fsyntax-only "$f" >"$out/$(basename "$f").log" 2>&1 ||
            { echo "$f:"; grep -v '^\.' "$out/$(basename "$f").log"; rc=1; continue; }
        if grep -E '^\.+ .*/(openmpi|ompi|opal)/' "$out/$(basename "$f").log"; then
            echo "$f reads an Open MPI header"; rc=1
        fi
        grep -q '^\.* .*mpich.*/mpi\.h$' "$out/$(basename "$f").log" &&
            echo "$(basename "$f"): MPICH's mpi.h"
    done
    return $rc
}

core_library_needs_no_mpi() {
    local lib=$top_builddir/src/mpi/core/.libs/libumr_mpi.so
    [ -f "$lib" ] || { echo "no $lib"; return 1; }
    if readelf -d "$lib" | grep -E 'NEEDED.*(mpi|open-pal|open-rte|mca_)'; then
        return 1
    fi
}

check no_file_includes_an_ompi_header no_ompi_include
check the_check_finds_a_planted_include finds_a_planted_include
check compiles_against_mpich_mpi_h compiles_against_mpich
check core_library_needs_no_mpi core_library_needs_no_mpi
finish
