#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# A peer MPI implementation's own one-sided test suite, unmodified, against
# Open MPI: MPICH's test/mpi/rma, each test run twice under mpirun with its
# process count from MPICH's testlist, once with osc/umr disabled
# (osc_umr_enable=0: the window Open MPI makes without it) and once with
# osc/umr and zero-copy forced (osc_umr_zcopy=on), both from the build tree
# (pml/umr and osc/umr in a scratch component directory, sw engine).
# A test passes when it exits 0 and prints "No Errors" (MPICH's convention).
# Prints one line per test (both results and osc/umr's zero-copy counts)
# and the tests that pass without osc/umr and fail with it; exits 1 if
# there is any.
#
# usage: contrib/run-peer-rma-tests.sh MPICH_SOURCE_DIR [TEST..]
#   MPICH_SOURCE_DIR: a checkout of pmodels/mpich (only test/mpi/{include,
#   util,rma} are used; the tests that need MPICH's dtpools or threads are
#   left out). The test programs are built in BUILD_DIR/peer-rma with
#   mpicc, with a minimal mpitestconf.h in place of MPICH's configure.
#
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$top/build}
[ $# -ge 1 ] || { echo "usage: $0 MPICH_SOURCE_DIR [TEST..]" >&2; exit 2; }
src=$(cd "$1" && pwd)/test/mpi; shift
out=$BUILD_DIR/peer-rma
mkdir -p "$out/bin" "$out/include" "$out/log"

cat >"$out/include/mpitestconf.h" <<'CONF'
#define HAVE_UNISTD_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_STDARG_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_LONG_LONG 1
#define HAVE_LONG_DOUBLE 1
#define USE_STRICT_MPI 1
/* MPICH 4.0's mtest.c includes mpithreadtest.h, which wants a package */
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
CONF
: >"$out/include/mtest_mpix.h"
cat >"$out/stub.c" <<'STUB'
/* mtest.c's thread package hooks (single-threaded tests only) */
int MTest_init_thread_pkg(void) { return 0; }
int MTest_finalize_thread_pkg(void) { return 0; }
STUB
inc=(-I"$out/include" -I"$src/include" -I"$src/rma")
mpicc -w "${inc[@]}" -c "$src/util/mtest.c" -o "$out/mtest.o" &&
mpicc -w "${inc[@]}" -c "$src/util/mtest_common.c" -o "$out/mtest_common.o" &&
mpicc -c "$out/stub.c" -o "$out/stub.o" || exit 1

# the tests and their process counts (first line of each in the testlist)
declare -A np
while read -r name n rest; do
    [ -n "$name" ] && [ "${name:0:1}" != "#" ] && [ -z "${np[$name]:-}" ] && np[$name]=$n
done <"$src/rma/testlist.in"
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=($(printf '%s\n' "${!np[@]}" | sort))

pkglibdir=$(ompi_info --path pkglibdir | sed -n 's/^ *Pkglibdir: *//p')
mkdir -p "$out/components"
ln -sf "$BUILD_DIR/src/ompi/pml_umr/.libs/mca_pml_umr.so" "$out/components/"
ln -sf "$BUILD_DIR/src/ompi/osc_umr/.libs/mca_osc_umr.so" "$out/components/"
export UCX_MLX5_UMR_ENGINE=sw
export OMPI_MCA_mca_base_component_path="$out/components:$pkglibdir"
export OMPI_MCA_pml_umr_uct_module=$BUILD_DIR/src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so
export OMPI_MCA_osc_umr_verbose=1

run() {   # log enable
    OMPI_MCA_osc_umr_enable=$2 OMPI_MCA_osc_umr_zcopy=on timeout 120 \
        mpirun --allow-run-as-root --oversubscribe -np "$n" "$out/bin/$t" \
        >"$1" 2>&1
    local rc=$?
    [ $rc -eq 0 ] && grep -q "No Errors" "$1" && echo pass || echo "FAIL($rc)"
}

regress=()
for t in "${tests[@]}"; do
    n=${np[$t]:-}
    [ -f "$src/rma/$t.c" ] && [ -n "$n" ] || continue
    grep -q "mtest_dtp\|dtpools\|mtest_thread\|pthread" "$src/rma/$t.c" && continue
    mpicc -O1 -w "${inc[@]}" "$src/rma/$t.c" "$out/mtest.o" "$out/mtest_common.o" \
        "$out/stub.o" -o "$out/bin/$t" 2>"$out/log/$t.build" || continue
    a=$(run "$out/log/$t.plain" 0)
    b=$(run "$out/log/$t.umr" 1)
    z=$(grep -o "zcopy_puts [0-9]* zcopy_gets [0-9]*" "$out/log/$t.umr" |
        awk '{p += $2; g += $4} END {printf "zcopy_puts %d zcopy_gets %d", p, g}')
    printf '%-32s np %-2s without %-8s with %-8s %s\n' "$t" "$n" "$a" "$b" "$z"
    [ "$a" = pass ] && [ "$b" != pass ] && regress+=("$t")
done
echo "tests passing without osc/umr and failing with it: ${#regress[@]} ${regress[*]:-}"
[ ${#regress[@]} -eq 0 ]
