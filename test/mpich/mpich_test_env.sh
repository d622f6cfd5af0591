# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the test/mpich scripts: where the build and MPICH's mpiexec
# are, the environment that preloads libumr_mpich.so from the build tree
# with the sw engine, and how a job runs: run(), each rank's output in its
# own files, and the comparisons the scripts make per rank. The caller sets
# its program ($prog) and may set run_timeout (seconds, default 300, a hang
# guard scaled by UMR_TEST_TIME_MULTIPLIER) before calling run.
top_builddir=${top_builddir:-../..}
top_builddir=$(cd "$top_builddir" && pwd)
mpiexec=${MPIEXEC:-mpiexec.mpich}
# the launcher run() starts: mpiexec, or contrib/mpirun-model.sh --mpich ...
# -- (test_mpich_model.sh)
launcher=("$mpiexec")
umr_lib=$top_builddir/src/mpich/.libs/libumr_mpich.so
umr_module=$top_builddir/src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so

export UCX_MLX5_UMR_ENGINE=sw UCX_WARN_UNUSED_ENV_VARS=n
# the library's environment (mpiexec -genv pairs); sanitizer builds
# (contrib/run-sanitizers.sh): the sanitizer runtimes first
umr_preload=$umr_lib
if [ -n "${UMR_PRELOAD_EXTRA:-}" ]; then
    export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=0
    umr_preload=$UMR_PRELOAD_EXTRA:$umr_lib
fi
umr_env=(-genv LD_PRELOAD "$umr_preload" -genv UMR_MPICH_VERBOSE 1
         -genv UMR_MPICH_UCT_MODULE "$umr_module")
# the test variant (hooks/, built by make check: the core's test faults,
# UMR_MPICH_TEST_FAULT), in the same environment
umr_hooks_lib=$top_builddir/src/mpich/hooks/.libs/libumr_mpich.so
umr_hooks_env=(-genv LD_PRELOAD "${umr_preload%$umr_lib}$umr_hooks_lib"
               -genv UMR_MPICH_VERBOSE 1 -genv UMR_MPICH_UCT_MODULE "$umr_module")
hooks_built() {
    [ -f "$umr_hooks_lib" ] || { echo "no $umr_hooks_lib (make check builds it: make -C src/mpich hooks)"; return 1; }
}

# run FILE NP [mpiexec args..] [-- program args..]: $prog under mpiexec
# -n NP, killed after $run_timeout s (scaled by UMR_TEST_TIME_MULTIPLIER);
# returns mpiexec's status. Each rank writes its stdout and stderr into
# FILE.ranks/rank.N/{stdout,stderr} (Hydra's -outfile-pattern and
# -errfile-pattern), never into one stream where two ranks' lines could
# interleave; FILE holds them rank by rank, then mpiexec's own output.
run() {
    local file=$1 np=$2 args=() rc=0 r limit
    shift 2
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
    [ $# -eq 0 ] || shift
    limit=$(( ${run_timeout:-300} * ${UMR_TEST_TIME_MULTIPLIER:-1} ))
    rm -rf "$file.ranks"
    for r in $(seq 0 $((np - 1))); do mkdir -p "$file.ranks/rank.$r"; done
    timeout "$limit" "${launcher[@]}" -n "$np" "${args[@]}" \
        -outfile-pattern "$file.ranks/rank.%r/stdout" \
        -errfile-pattern "$file.ranks/rank.%r/stderr" \
        "$prog" "$@" </dev/null >"$file.ranks/launcher" 2>&1 || rc=$?
    [ $rc -ne 124 ] || echo "run: the job did not end in $limit s: killed" >>"$file.ranks/launcher"
    for r in $(seq 0 $((np - 1))); do
        cat "$file.ranks/rank.$r/stdout" "$file.ranks/rank.$r/stderr" 2>/dev/null
    done >"$file"
    cat "$file.ranks/launcher" >>"$file"
    return $rc
}

# rank_lines FILE R: what rank R of FILE's job printed, stdout then stderr.
rank_lines() {
    cat "$1.ranks/rank.$2/stdout" "$1.ranks/rank.$2/stderr" 2>/dev/null
}

# nranks FILE: the ranks of FILE's job
nranks() {
    ls -d "$1.ranks"/rank.* 2>/dev/null | wc -l
}

# A run's failure markers: a FAIL line of the program, a sanitizer report,
# MPICH's abort.
failed_lines='^FAIL\|AddressSanitizer\|runtime error:\|^Abort(\|BAD TERMINATION'

# same_checks REF GOT: neither run failed (no failure marker; when the
# caller set done_line, that line in both), REF's ranks printed check lines
# (or, with done_line, that line), and each rank of GOT printed the same
# check lines as that rank of REF.
same_checks() {
    local ref=$1 got=$2 f r
    grep -q "$failed_lines" "$ref" "$got" &&
        { grep -h -A5 "$failed_lines" "$ref" "$got" | head -20; return 1; }
    if [ -n "${done_line:-}" ]; then
        for f in "$ref" "$got"; do
            grep -q "$done_line" "$f" || { echo "$f did not end"; tail "$f"; return 1; }
        done
    else
        [ "$(grep -c '^check ' "$ref")" -gt 0 ] || { echo "no results in $ref"; tail "$ref"; return 1; }
    fi
    [ "$(nranks "$ref")" -eq "$(nranks "$got")" ] || { echo "not as many ranks"; return 1; }
    for r in $(seq 0 $(($(nranks "$ref") - 1))); do
        diff <(rank_lines "$ref" "$r" | grep '^check ' | sort) \
             <(rank_lines "$got" "$r" | grep '^check ' | sort) ||
            { echo "rank $r: results differ ($ref vs $got)"; return 1; }
    done
}

# counter FILE R NAME: rank R's value of the library's counter NAME (its
# line at MPI_Finalize), empty without one
counter() {
    rank_lines "$1" "$2" | grep -a "^umr_mpich: rank $2: .*zcopy_sends" |
        tr ' ' '\n' | grep -A1 -x "$3" | tail -1
}

# counters_each_rank FILE: every rank printed its counter line once
counters_each_rank() {
    local r n
    for r in $(seq 0 $(($(nranks "$1") - 1))); do
        n=$(rank_lines "$1" "$r" | grep -c "^umr_mpich: rank $r: .*zcopy_sends")
        [ "$n" -eq 1 ] || { echo "rank $r: $n counter lines"; return 1; }
    done
}

# field FILE R NAME: rank R's value NAME on its "layouts rank R:" line
# (mpich_layouts)
field() {
    rank_lines "$1" "$2" | grep -a "^layouts rank $2: " | tr ' ' '\n' |
        grep -A1 -x "$3" | tail -1
}

# all_right FILE: every rank of an mpich_layouts job ended its messages
# without a failed check, having received as many as it sent
all_right() {   # file
    local r
    grep -q "$failed_lines" "$1" && { grep -h "$failed_lines" "$1" | head -10; return 1; }
    for r in $(seq 0 $(($(nranks "$1") - 1))); do
        [ "$(field "$1" $r errors)" = 0 ] && [ "$(field "$1" $r sent)" -gt 0 ] &&
            [ "$(field "$1" $r received)" = "$(field "$1" $r sent)" ] ||
            { echo "rank $r:"; rank_lines "$1" $r | grep "^layouts"; return 1; }
    done
}
