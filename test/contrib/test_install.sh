#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# The install honours its prefix (issue 20): `make install DESTDIR=D` writes
# only below D/PREFIX, into the directories configure printed; a prefix
# install (configure --prefix=P, a fresh P) writes nothing into UCX's or
# Open MPI's directories or anywhere else outside P; sourcing
# P/share/mlx5_umr/mlx5_umr-env.sh makes an MPI job load pml/umr from P,
# which finds the UCT module installed beside it (no pml_umr_uct_module);
# the build tree's build-env.sh does the same from the build tree, without
# Open MPI trying to open the objects beside the component; where the MPICH
# binding is built, libumr_mpich.so is installed in the prefix's libdir,
# and nothing else of it (no libtool archive).
#
set -u
top_srcdir=${top_srcdir:-../..}
top_builddir=${top_builddir:-../..}
out=$PWD/test_install.out.d
rm -rf "$out"
mkdir -p "$out"
suite=install
. "$(dirname "$0")/../gtest/gtest_format.sh"

make -s -C "$top_builddir" install-dirs >"$out/dirs"
dir() { sed -n "s/^$1 //p" "$out/dirs"; }
prefix=$(dir prefix)
have_ompi=$([ -n "$(dir componentdir)" ] && echo yes || echo no)
have_mpich=$([ -n "$(dir mpich_mpicc)" ] && echo yes || echo no)

# DIR is below PREFIX (or is it)
below() { case $1/ in "$2"/*) return 0 ;; esac; return 1; }

destdir_stays_below_the_prefix() {
    local d=$out/destdir f bad=0
    make -s -C "$top_builddir" install DESTDIR="$d" >"$out/destdir.log" 2>&1 ||
        { tail -20 "$out/destdir.log"; return 1; }
    (cd "$d" && find . ! -type d | sed 's/^\.//') >"$out/destdir.files"
    [ -s "$out/destdir.files" ] || { echo "nothing installed"; return 1; }
    while read -r f; do
        below "$f" "$prefix" || { echo "outside $prefix: $f"; bad=1; }
        below "$f" "$(dir moduledir)" || below "$f" "$(dir libdir)" ||
            below "$f" "$(dir includedir)" || below "$f" "$(dir pkgdatadir)" ||
            { [ "$have_ompi" = yes ] && below "$f" "$(dir componentdir)"; } ||
            { echo "not where configure said: $f"; bad=1; }
    done <"$out/destdir.files"
    [ -f "$d$(dir moduledir)/libuct_mlx5_umr.so" ] || { echo "no UCT module"; bad=1; }
    [ -f "$d$(dir pkgdatadir)/mlx5_umr-env.sh" ] || { echo "no env file"; bad=1; }
    if [ "$have_ompi" = yes ]; then
        [ -f "$d$(dir componentdir)/mca_pml_umr.so" ] || { echo "no pml/umr"; bad=1; }
        [ -f "$d$(dir componentdir)/mca_osc_umr.so" ] || { echo "no osc/umr"; bad=1; }
        ls "$d$(dir componentdir)"/*.la >/dev/null 2>&1 && { echo "a .la beside the components"; bad=1; }
    fi
    if [ "$have_mpich" = yes ]; then
        [ -f "$d$(dir libdir)/libumr_mpich.so" ] || { echo "no libumr_mpich.so"; bad=1; }
        [ -f "$d$(dir libdir)/libumr_mpich.la" ] && { echo "libumr_mpich.la installed"; bad=1; }
    fi
    return $bad
}

# The directories a prefix install must leave alone: UCX's and Open MPI's,
# and the usual system trees (a marker file's time against every file).
system_dirs() {
    for d in "$(dir ucx_sys_moduledir)" "$(dir ompi_sys_componentdir)" \
             /usr /etc /opt; do
        [ -d "$d" ] && echo "$d"
    done | sort -u
}

# A prefix install as a user makes it: configure --prefix=P (this build's
# other options), build and install what `make install` installs (the
# libraries, module, components and data; the build tree's own test and
# example programs install nothing), in a scratch build directory: `make
# install prefix=P` in this one would relink its libraries for P.
p=$out/prefix
prefix_install_touches_nothing_outside() {
    local b=$out/prefix-build new d opts=()
    eval "set -- $(cd "$top_builddir" && ./config.status --config)"
    for a in "$@"; do case $a in --prefix=*) ;; *) opts+=("$a") ;; esac; done
    mkdir -p "$b"
    : >"$out/marker"
    sleep 1
    (cd "$b" && "$top_srcdir/configure" --prefix="$p" "${opts[@]}") \
        >"$out/prefix.log" 2>&1 || { tail -20 "$out/prefix.log"; return 1; }
    grep -A12 'make install puts' "$out/prefix.log" | sed 's/^configure: //'
    for d in src/layout src/uct/mlx5_umr src/mpi/decode src/ompi/common \
             src/ompi/pml_umr src/mpich; do
        make -s -C "$b/$d" -j2 install >>"$out/prefix.log" 2>&1 ||
            { tail -20 "$out/prefix.log"; return 1; }
    done
    make -s -C "$b" install-data >>"$out/prefix.log" 2>&1 ||
        { tail -20 "$out/prefix.log"; return 1; }
    new=$(find $(system_dirs) -xdev -newer "$out/marker" ! -type d 2>/dev/null |
          grep -v "^$out" | head)
    [ -z "$new" ] || { echo "written outside $p:"; echo "$new"; return 1; }
    [ -f "$p/share/mlx5_umr/mlx5_umr-env.sh" ] || { echo "no env file in $p"; return 1; }
    [ -f "$p/lib/ucx/libuct_mlx5_umr.so" ] || { echo "no module in $p/lib/ucx"; return 1; }
    [ "$have_ompi" = no ] || [ -f "$p/lib/openmpi/mca_pml_umr.so" ] ||
        { echo "no pml/umr in $p/lib/openmpi"; return 1; }
    [ "$have_mpich" = no ] || [ -f "$p/lib/libumr_mpich.so" ] ||
        { echo "no libumr_mpich.so in $p/lib"; return 1; }
}

# an MPI job in which pml/umr, found through ENVFILE, sends zero-copy with
# the module under ROOT (its verbose line names the one it loaded)
mpi_job_uses() {   # envfile root
    local log=$out/job-$(basename "$1").log prog=$top_builddir/test/mpi/pml_umr_test
    [ -x "$prog" ] || { echo "no $prog"; return 1; }
    ( . "$1"
      unset OMPI_MCA_pml_umr_uct_module
      UCX_MLX5_UMR_ENGINE=sw UCX_WARN_UNUSED_ENV_VARS=n \
      OMPI_MCA_pml_umr_zcopy=on OMPI_MCA_pml_umr_verbose=5 \
          timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 \
          -x UCX_MLX5_UMR_ENGINE -x OMPI_MCA_pml_umr_zcopy \
          -x OMPI_MCA_pml_umr_verbose -x UCX_WARN_UNUSED_ENV_VARS "$prog" ) \
        >"$log" 2>&1 || { tail -20 "$log"; return 1; }
    grep -q "UCT module: $2/.*libuct_mlx5_umr.so" "$log" ||
        { echo "pml/umr did not load the module under $2"; grep "UCT module" "$log"; return 1; }
    grep "pml_umr: rank" "$log" | grep -q "zcopy_sends [1-9]" ||
        { echo "no zero-copy send"; grep "pml_umr: rank" "$log"; return 1; }
    grep -q "unable to open" "$log" && { grep "unable to open" "$log" | head -3; return 1; }
    return 0
}

installed_job_finds_its_module() { mpi_job_uses "$p/share/mlx5_umr/mlx5_umr-env.sh" "$p"; }
build_tree_job_finds_its_module() {
    mpi_job_uses "$(cd "$top_builddir" && pwd)/build-env.sh" "$(cd "$top_builddir" && pwd)/lib"
}

check destdir_stays_below_the_prefix destdir_stays_below_the_prefix
check prefix_install_touches_nothing_outside prefix_install_touches_nothing_outside
if [ "$have_ompi" = yes ]; then
    check installed_job_finds_its_module installed_job_finds_its_module
    check build_tree_job_finds_its_module build_tree_job_finds_its_module
else
    skip installed_job_finds_its_module "pml/umr not built (no Open MPI headers)"
    skip build_tree_job_finds_its_module "pml/umr not built (no Open MPI headers)"
fi
finish
