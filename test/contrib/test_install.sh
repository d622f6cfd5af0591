#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# The install honours its prefix: `make install DESTDIR=D` writes only
# below D/PREFIX, into the directories configure printed; a prefix install
# (configure --prefix=P, a fresh P) writes nothing into UCX's or Open MPI's
# directories or anywhere else outside P; sourcing
# P/share/mlx5_umr/mlx5_umr-env.sh makes an MPI job load pml/umr from P,
# which finds the UCT module installed beside it (no pml_umr_uct_module);
# the build tree's build-env.sh does the same from the build tree, without
# Open MPI trying to open the objects beside the component; where the MPICH
# binding is built, libumr_mpich.so is installed in the prefix's libdir,
# and nothing else of it (no libtool archive).
# What is installed carries no test hook (configure.ac: UMR_TEST_HOOKS):
# its libraries export no symbol the build's test variants (hooks/) add,
# ompi_info lists none of their parameters, and a job given the test
# faults runs zero-copy without a fault.
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
    for d in src/layout src/uct/mlx5_umr src/mpi/core src/mpi/decode \
             src/ompi/common src/ompi/pml_umr src/ompi/osc_umr src/mpich; do
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
# the module under ROOT (its verbose line names the one it loaded); VAR=VALUE
# after them: the job's environment too (LOG: its log); each rank's output in
# its own files (contrib/per-rank.sh), then in the log
mpi_job_uses() {   # envfile root [VAR=VALUE..]
    local log=${LOG:-$out/job-$(basename "$1").log} prog=$top_builddir/test/mpi/pml_umr_test rc=0
    local envfile=$1 root=$2 v xs=(); shift 2
    [ -x "$prog" ] || { echo "no $prog"; return 1; }
    for v in "$@"; do xs+=(-x "${v%%=*}"); done
    ( . "$envfile"
      unset OMPI_MCA_pml_umr_uct_module
      [ $# -eq 0 ] || export "$@"
      UCX_MLX5_UMR_ENGINE=sw \
      OMPI_MCA_pml_umr_zcopy=on OMPI_MCA_pml_umr_verbose=5 \
          timeout "$(test_seconds 300)" mpirun --allow-run-as-root --oversubscribe -np 2 \
          -x UCX_MLX5_UMR_ENGINE -x OMPI_MCA_pml_umr_zcopy \
          -x OMPI_MCA_pml_umr_verbose "${xs[@]}" \
          "$top_srcdir/contrib/per-rank.sh" "$log.ranks" "$prog" ) >"$log" 2>&1 || rc=$?
    "$top_srcdir/contrib/per-rank.sh" --cat "$log.ranks" >>"$log"
    [ $rc -eq 0 ] || { tail -20 "$log"; return 1; }
    grep -q "UCT module: $root/.*libuct_mlx5_umr.so" "$log" ||
        { echo "pml/umr did not load the module under $root"; grep "UCT module" "$log"; return 1; }
    grep "pml_umr: rank" "$log" | grep -q "zcopy_sends [1-9]" ||
        { echo "no zero-copy send"; grep "pml_umr: rank" "$log"; return 1; }
    grep -q "unable to open" "$log" && { grep "unable to open" "$log" | head -3; return 1; }
    return 0
}

installed_job_finds_its_module() { mpi_job_uses "$p/share/mlx5_umr/mlx5_umr-env.sh" "$p"; }
build_tree_job_finds_its_module() {
    mpi_job_uses "$(cd "$top_builddir" && pwd)/build-env.sh" "$(cd "$top_builddir" && pwd)/lib"
}

# ---- no test hook in what is installed ---------------------------------------
# Every symbol a test variant adds, and every parameter, is named so:
hook_symbols='(^|_)(fault|faults|test|bench|compares|norail)(_|$)'
hook_params='(^|_)(test|bench)(_|$)'

exported() { nm -D --defined-only "$1" | awk '{print $3}' | sort -u; }

# LIB (installed) exports nothing named as a hook; its test variant VARIANT
# (the build's, when given) adds some, all named so
no_hook_symbol() {   # lib [variant]
    local added
    [ -f "$1" ] || { echo "no $1"; return 1; }
    exported "$1" | grep -E "$hook_symbols" && { echo "^ exported by $1"; return 1; }
    [ $# -eq 1 ] && return 0
    [ -f "$2" ] || { echo "no $2 (the test variant: make check or make hooks)"; return 1; }
    added=$(comm -13 <(exported "$1") <(exported "$2"))
    [ -n "$added" ] || { echo "$2 adds no symbol to $1: is it the test variant?"; return 1; }
    grep -Ev "$hook_symbols" <<<"$added" &&
        { echo "^ added by the test variant $2, not named as a hook ($hook_symbols)"; return 1; }
    return 0
}

installed_exports_no_test_hook() {
    local b=$top_builddir/src bad=0
    no_hook_symbol "$p/lib/libumr_layout.so" || bad=1
    no_hook_symbol "$p/lib/ucx/libuct_mlx5_umr.so" \
        "$b/uct/mlx5_umr/hooks/.libs/libuct_mlx5_umr.so" || bad=1
    [ "$have_ompi" = yes ] || return $bad
    no_hook_symbol "$p/lib/libmca_common_umr.so" \
        "$b/ompi/common/hooks/.libs/libmca_common_umr.so" || bad=1
    no_hook_symbol "$p/lib/openmpi/mca_pml_umr.so" \
        "$b/ompi/pml_umr/hooks/.libs/mca_pml_umr.so" || bad=1
    no_hook_symbol "$p/lib/openmpi/mca_osc_umr.so" \
        "$b/ompi/osc_umr/hooks/.libs/mca_osc_umr.so" || bad=1
    return $bad
}

# the parameters ompi_info lists at level 9 for FRAMEWORK umr, found
# through the component path PATH
params() {   # framework path
    OMPI_MCA_mca_base_component_path=$2 ompi_info --param "$1" umr --level 9 \
        --parsable | awk -F: '$4 == "param" {print $5}' | sort -u
}

installed_lists_no_test_parameter() {
    local fw inst variant scratch=$out/hooks-components added bad=0
    local sys=$(dir ompi_sys_componentdir)
    mkdir -p "$scratch"
    ln -sf "$top_builddir"/src/ompi/*_umr/hooks/.libs/mca_*_umr.so "$scratch/"
    for fw in pml osc; do
        inst=$(params $fw "$p/lib/openmpi:$sys")
        grep -qx "${fw}_umr_enable" <<<"$inst" ||
            { echo "ompi_info lists no ${fw}_umr_enable from $p"; bad=1; continue; }
        grep -E "$hook_params" <<<"$inst" && { echo "^ listed for the installed $fw/umr"; bad=1; }
        variant=$(params $fw "$scratch:$sys")
        added=$(comm -13 <(echo "$inst") <(echo "$variant"))
        [ -n "$added" ] || { echo "the test variant of $fw/umr adds no parameter"; bad=1; }
        grep -Ev "$hook_params" <<<"$added" &&
            { echo "^ added by the test variant of $fw/umr, not named as a test one"; bad=1; }
    done
    return $bad
}

# the test faults set (the engine's and pml/umr's, at points every
# zero-copy message passes): the installed job does not read them
installed_job_ignores_test_faults() {
    local log=$out/job-faults.log
    LOG=$log mpi_job_uses "$p/share/mlx5_umr/mlx5_umr-env.sh" "$p" \
        UCX_MLX5_UMR_TEST_FAULT=post OMPI_MCA_pml_umr_test_fault=ctlsend,post || return 1
    grep "pml_umr: rank" "$log" | grep -v "fallbacks 0 .*fault_declines 0 fallback_sends 0" &&
        { echo "^ a fault was injected"; return 1; }
    return 0
}

check destdir_stays_below_the_prefix destdir_stays_below_the_prefix
check prefix_install_touches_nothing_outside prefix_install_touches_nothing_outside
check installed_exports_no_test_hook installed_exports_no_test_hook
if [ "$have_ompi" = yes ]; then
    check installed_job_finds_its_module installed_job_finds_its_module
    check build_tree_job_finds_its_module build_tree_job_finds_its_module
    check installed_lists_no_test_parameter installed_lists_no_test_parameter
    check installed_job_ignores_test_faults installed_job_ignores_test_faults
else
    for t in installed_job_finds_its_module build_tree_job_finds_its_module \
             installed_lists_no_test_parameter installed_job_ignores_test_faults; do
        skip $t "pml/umr not built (no Open MPI headers)"
    done
fi
finish
