# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
# Sourced after mpi_test_env.sh by the scripts that compare what each rank
# printed, whole (test_quiet.sh, test_umr_keys.sh): run_ranks, as run() but
# each rank's stdout and stderr in files of its own, never interleaved with
# another rank's lines.

# run_ranks FILE [ENV=VALUE..] -- [mpirun args..] [-- program args..]:
# $prog under mpirun (mpirun's --output-filename), each rank's output in
# FILE.ranks/rank.N/stdout and .../stderr, mpirun's own in FILE.launcher,
# every rank's (stdout, stderr, in rank order) in FILE; killed after $run_timeout
# seconds (default 300, scaled by UMR_TEST_TIME_MULTIPLIER); returns
# mpirun's status. The launcher: mpirun, or the command in the array
# `launcher` (contrib/mpirun-model.sh ... --), which takes mpirun's
# arguments.
run_ranks() {
    local file=$1; shift
    local envs=() args=() rc=0 d r of=$file.of
    # Open MPI 4.1: not also copied to mpirun's output (which then holds
    # only mpirun's own lines)
    $mpirun --version 2>/dev/null | grep -q "Open MPI) 4\\." && of=$file.of:nocopy
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
    [ $# -eq 0 ] || shift
    rm -rf "$file.ranks" "$file.of"
    mkdir -p "$file.ranks"
    env "${envs[@]}" timeout $(( ${run_timeout:-300} * ${UMR_TEST_TIME_MULTIPLIER:-1} )) \
        "${launcher[@]:-$mpirun}" --allow-run-as-root --oversubscribe \
        --output-filename "$of" "${args[@]}" "$prog" "$@" \
        >"$file.launcher" 2>&1 || rc=$?
    # DIR/JOB/rank.N/std{out,err} (Open MPI 4.1; N zero-filled by some
    # releases): FILE.ranks/rank.N
    for d in $(find "$file.of" -type d -name 'rank.*' 2>/dev/null); do
        r=$(basename "$d" | sed 's/^rank\.0*\([0-9]\)/\1/')
        mkdir -p "$file.ranks/rank.$r"
        for s in stdout stderr; do
            tr -d '\000' <"$d/$s" >"$file.ranks/rank.$r/$s" 2>/dev/null ||
                : >"$file.ranks/rank.$r/$s"
        done
    done
    rm -rf "$file.of"
    {
        for r in $(ranks_in "$file"); do
            cat "$file.ranks/rank.$r/stdout" "$file.ranks/rank.$r/stderr"
        done
    } >"$file"
    return $rc
}

# ranks_in FILE: the ranks of FILE's job that wrote output files, in order.
ranks_in() {
    ls "$1.ranks" 2>/dev/null | sed -n 's/^rank\.\([0-9][0-9]*\)$/\1/p' | sort -n
}

# rank_out FILE R: what rank R printed, stdout then stderr.
rank_out() {
    cat "$1.ranks/rank.$2/stdout" "$1.ranks/rank.$2/stderr" 2>/dev/null
}
