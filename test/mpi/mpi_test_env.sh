# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the test/mpi scripts: where the build and Open MPI are, and the
# environment that loads pml/umr from the build tree (a scratch component
# directory in front of Open MPI's) with the sw engine. Sets top_builddir,
# mpirun, pkglibdir, pml_so, osc_so, uct_so (the test variants, below) and
# umr_env (env assignments for pml/umr's runs), and defines run(); the
# caller sets its program ($prog), output folder and suite, and may set
# run_timeout (seconds, default 600, a hang guard scaled by
# UMR_TEST_TIME_MULTIPLIER) before sourcing.
top_builddir=${top_builddir:-../..}
top_builddir=$(cd "$top_builddir" && pwd)
mpirun=${MPIRUN:-mpirun}
# each rank's output in its own files (run, same_checks)
per_rank=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../contrib" && pwd)/per-rank.sh
# Open MPI's own component directory (where mpirun finds its launcher's parts)
pkglibdir=${OMPI_COMPONENTDIR:-$(ompi_info --path pkglibdir | sed -n 's/^ *Pkglibdir: *//p')}
# The test variants of the components and the module (hooks/ beside each,
# built by make check; configure.ac: UMR_TEST_HOOKS): the installed ones
# without the test parameters and faults the suites set. With none set they
# run the same code.
pml_so=$top_builddir/src/ompi/pml_umr/hooks/.libs/mca_pml_umr.so
osc_so=$top_builddir/src/ompi/osc_umr/hooks/.libs/mca_osc_umr.so
uct_so=$top_builddir/src/uct/mlx5_umr/hooks/.libs/libuct_mlx5_umr.so
for so in "$pml_so" "$uct_so"; do
    [ -f "$so" ] || { echo "no $so: make check (or make hooks) from the top"; exit 99; }
done
scratch=$PWD/components
mkdir -p "$scratch"
ln -sf "$pml_so" "$scratch/"

# (the sw engine: only for jobs with the components, which read it; UCX's
# warning of unused variables is left on: a job prints nothing it did not
# cause, test_quiet.sh)
umr_env=(OMPI_MCA_mca_base_component_path="$scratch:$pkglibdir"
         UCX_MLX5_UMR_ENGINE=sw
         OMPI_MCA_pml_umr_uct_module="$uct_so"
         OMPI_MCA_pml_umr_verbose=1)
# Open MPI 5's launcher (prterun) hands the mca_base_component_path above to
# PMIx as well (PMIX_MCA_mca_base_component_path) unless that one is set:
# PMIx keeps its own directory (else it scans the scratch one and says
# "has bad prefix" for mca_pml_umr.so).
pmix_components=$(pkg-config --variable=libdir pmix 2>/dev/null)/pmix
[ -d "$pmix_components" ] && umr_env+=(PMIX_MCA_mca_base_component_path="$pmix_components")
# Sanitizer builds (contrib/run-sanitizers.sh): the instrumented component
# needs the sanitizer runtimes first; Open MPI's own leaks are not ours.
if [ -n "${UMR_PRELOAD_EXTRA:-}" ]; then
    export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=0
    umr_env+=(LD_PRELOAD="$UMR_PRELOAD_EXTRA")
fi

# run FILE [ENV=VALUE..] -- [mpirun args..] [-- program args..]: $prog under
# mpirun, killed after $run_timeout seconds (test_seconds: scaled); returns
# mpirun's status. Each rank writes its stdout and stderr into its own files,
# FILE.ranks/rank.N/{stdout,stderr} (contrib/per-rank.sh), never into
# mpirun's one stream, where on a busy machine two ranks' lines interleave
# mid-line; FILE holds them rank by rank (every line whole), then mpirun's
# own output (FILE.ranks/launcher). (Open MPI 5's launcher, prterun, may
# forward a NUL byte with its output: it is dropped, so that grep reads FILE
# as text.)
run() {
    local file=$1; shift
    local envs=() args=() rc=0 limit
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
    [ $# -eq 0 ] || shift
    limit=$(test_seconds "${run_timeout:-600}")
    rm -rf "$file.ranks"
    mkdir -p "$file.ranks"
    env "${envs[@]}" timeout "$limit" "$mpirun" --allow-run-as-root --oversubscribe \
        "${args[@]}" "$per_rank" "$file.ranks" "$prog" "$@" >"$file.ranks/launcher" 2>&1 || rc=$?
    [ $rc -ne 124 ] || echo "run: the job did not end in $limit s: killed" >>"$file.ranks/launcher"
    { "$per_rank" --cat "$file.ranks"; cat "$file.ranks/launcher"; } | tr -d '\000' >"$file"
    return $rc
}

# rank_lines FILE R: what rank R of the job of FILE (run, or model of
# pml_umr_model_env.sh) printed, stdout then stderr.
rank_lines() {
    cat "$1.ranks/rank.$2/stdout" "$1.ranks/rank.$2/stderr" 2>/dev/null | tr -d '\000'
}

# ranks_of FILE: the ranks that wrote output files, one a line, in order.
ranks_of() {
    ls "$1.ranks" 2>/dev/null | sed -n 's/^rank\.\([0-9][0-9]*\)$/\1/p' | sort -n
}

# A run's failure markers: a FAIL line of the program, a sanitizer report.
failed_lines='^FAIL\|AddressSanitizer\|runtime error:'

# plain_ok REF [STATUS]: the plain job (without the component under test)
# in REF, ended with STATUS (mpirun's, when known), ran to its end (the
# caller's done_line, when set). Else it failed by itself: prints why (Open
# MPI's first MPI_ERR_ line, or the status and last line) and returns 77,
# which check (gtest_format.sh) reports as skipped: the case has nothing to
# compare (e.g. Open MPI 5.0.7's osc under pml ucx: MPI_ERR_WIN). A plain
# job that ends with wrong results is not this: same_checks fails it. Use:
#   run "$ref" ... -- ...; plain_ok "$ref" $? || return
plain_ok() {
    local ref=$1 rc=${2:-0} err
    if [ "$rc" -eq 0 ] && { [ -z "${done_line:-}" ] || grep -q "$done_line" "$ref"; }; then
        return 0
    fi
    err=$(grep -a -o 'MPI_ERR_[A-Z_]*: [a-z ]*' "$ref" | head -1)
    echo "the plain job fails by itself (${err:-status $rc: $(tail -1 "$ref")};" \
         "$ref): nothing to compare"
    return 77
}

# checks_by_rank FILE: the check lines of each rank of FILE's job (run, or
# model of pml_umr_model_env.sh), sorted within the rank (a rank's lines may
# come in another order), each after its rank: "R: check ...".
checks_by_rank() {
    local r
    for r in $(ranks_of "$1"); do
        rank_lines "$1" "$r" | grep -a '^check ' | sort | sed "s/^/$r: /"
    done
}

# same_checks REF GOT: neither run failed (no FAIL line or sanitizer report,
# and, when the caller set done_line, that line in both), REF printed check
# lines and each rank of GOT printed the same ones as that rank of REF.
same_checks() {
    local ref=$1 got=$2 f
    grep -q "$failed_lines" "$ref" "$got" &&
        { grep -h -A5 "$failed_lines" "$ref" "$got" | head -20; return 1; }
    if [ -n "${done_line:-}" ]; then
        for f in "$ref" "$got"; do
            grep -q "$done_line" "$f" || { echo "$f failed"; tail "$f"; return 1; }
        done
    fi
    [ -n "$(checks_by_rank "$ref")" ] || { echo "no results in $ref(.ranks)"; tail "$ref"; return 1; }
    diff <(checks_by_rank "$ref") <(checks_by_rank "$got") ||
        { echo "results differ, per rank: $ref.ranks vs $got.ranks"; tail -20 "$got"; return 1; }
}

# zcopy_each_case FILE: pml_umr_test's 'zcopy CASE ...' lines (field 5: the
# rank's zero-copy messages) show messages moved zero-copy in every case,
# summed over the ranks, and every rank's pml_umr counter line ended with
# no live key and no error.
zcopy_each_case() {
    local file=$1 c n bad=0
    for c in $(grep '^zcopy ' "$file" | awk '{print $2}' | sort -u); do
        n=$(awk -v c="$c" '$1 == "zcopy" && $2 == c && $5 > 0 {s += $5} END {print s + 0}' "$file")
        [ "$n" -gt 0 ] || { echo "case $c: nothing moved zero-copy"; bad=1; }
    done
    [ "$(grep -c '^zcopy ' "$file")" -gt 0 ] || { echo "no zcopy lines"; bad=1; }
    grep -a "pml_umr: rank" "$file" | grep -v "keys_live 0 errors 0" && bad=1
    return $bad
}

# counter FILE NAME: NAME's value on each rank's pml_umr counter line, one a
# line in rank order (the lines mpirun-model.sh repeats counted once)
counter() {
    grep -a -o "pml_umr: rank [0-9]*: zcopy_sends .*" "$1" | sort -u -k3,3n |
        awk -v n="$2" '{for (i = 1; i < NF; ++i) if ($i == n) print $(i + 1)}'
}

# one_reg_per_region FILE: on every rank the md registered memory (a pin
# and its translation entries on a NIC) once per region of the
# registration cache, never again for a layout key over it
one_reg_per_region() {
    local regs misses
    regs=$(counter "$1" mem_regs)
    misses=$(counter "$1" reg_misses)
    [ -n "$regs" ] && [ "$regs" = "$misses" ] ||
        { echo "mem_regs $(echo $regs) differ from reg_misses $(echo $misses):" \
               "layout keys registered their memory again"; return 1; }
}

# ref_case CASE NP PML: the plain job of pml_umr_test's case CASE alone, in
# $out/ref-CASE-NP-PML (made once)
ref_case() {
    local f=$out/ref-$1-$2-$3
    [ -f "$f" ] && return 0
    if [ "$3" = ucx ]; then
        run "$f" -- -np "$2" --mca pml ucx --mca pml_ucx_tls any \
            --mca pml_ucx_devices any -- "$1"
    else
        run "$f" -- -np "$2" --mca pml ob1 -- "$1"
    fi
}

# each_message_zcopy FILE CASE NP N: pml_umr_test's case CASE moved N
# messages zero-copy (sends + receives) on each of NP ranks: all of them
each_message_zcopy() {
    local n
    n=$(awk -v c="$2" -v n="$4" '$1 == "zcopy" && $2 == c && $5 == n' "$1" | wc -l)
    [ "$n" -eq "$3" ] || { grep "^zcopy $2 " "$1"; echo "not $4 zero-copy messages on each of $3 ranks"; return 1; }
}

# registered_again FILE N: each rank registered N regions and reused none
# (pml_umr_test fresh alone: new memory at the same addresses each time)
registered_again() {
    [ "$(counter "$1" reg_misses | sort -u)" = "$2" ] &&
        [ "$(counter "$1" reg_hits | sort -u)" = 0 ] ||
        { echo "reg_misses $(echo $(counter "$1" reg_misses)) reg_hits" \
               "$(echo $(counter "$1" reg_hits)), not $2 and 0 a rank"; return 1; }
}

# The wrapped PMLs' part of a costs file (common_umr_cost.h) for tests that
# write their own: no control cost, 1 ns a byte packed, for ob1 and ucx.
costs_wrapped_pml() {
    local pml b
    for pml in ob1 ucx; do
        echo "pml.$pml.local.ctrl_ns = 0"
        for b in 8 16 32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536; do
            echo "pml.$pml.local.ddt.$b.op_ns = 0"
            echo "pml.$pml.local.ddt.$b.byte_ns = 1"
        done
    done
}
