#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# What several ranks print is compared per rank (mpi_test_env.sh: run,
# checks_by_rank, same_checks; contrib/per-rank.sh):
#  - one_stream_breaks_lines: rank_lines (every rank prints 200 lines of
#    1 KB at once through stdio's default buffering, as the test programs
#    print) under mpirun into one stream, as the tests ran before, comes
#    out with lines cut and two ranks' pieces joined: the comparison of its
#    sorted check lines with what the ranks printed fails (reported skipped,
#    saying so, where this launcher kept every line whole);
#  - per_rank_np2, per_rank_np4: the same program under run: every line of
#    every rank whole, in that rank's own files and in the run's file, each
#    rank's check lines exactly its own; two runs compare equal;
#  - same_checks_per_rank: same_checks on made-up per-rank outputs passes
#    for the same lines and fails for a line changed in one rank, for a line
#    printed by another rank (the sorted lines of the whole job alike), for
#    a rank missing and for a reference without check lines;
#  - mpirun_model_per_rank: contrib/mpirun-model.sh --output DIR keeps each
#    rank's output in DIR/rank.N, every line whole (where the rdma-core
#    model is built);
#  - hydra_per_rank: contrib/per-rank.sh under MPICH's mpiexec.mpich
#    (Hydra: PMI_RANK) writes each rank's stdout and stderr into its files
#    and returns the program's status (where MPICH is installed).
# Results in GoogleTest's format (contrib/test-summary.sh counts them).
#
set -u
. "$(dirname "$0")/mpi_test_env.sh"
prog=$PWD/rank_lines
out=$PWD/test_rank_output.out.d
rm -rf "$out"
mkdir -p "$out"
suite=rank_output
. "$(dirname "$0")/../gtest/gtest_format.sh"
lines=200 length=1000

# whole_lines FILE: rank_lines' check lines in FILE that are whole (the
# right letter, LENGTH times, after their number and rank)
whole_lines() {
    awk -v n="$length" '
        /^check line / {
            k = $3; r = $5; sub(/:$/, "", r); p = $6
            c = sprintf("%c", 97 + (k + r) % 26)
            if (NF == 6 && length(p) == n && p ~ ("^" c "+$")) w++ }
        END { print w + 0 }' "$1"
}

# expected NP: what the ranks print, by rank (as checks_by_rank gives it)
expected() {
    local r
    for ((r = 0; r < $1; ++r)); do
        awk -v r="$r" -v lines="$lines" -v n="$length" 'BEGIN {
            for (k = 0; k < lines; ++k) {
                s = sprintf("%c", 97 + (k + r) % 26); p = s
                while (length(p) < n) p = p p
                print "check line " k " rank " r ": " substr(p, 1, n) } }' | sort |
            sed "s/^/$r: /"
    done
}

# As the tests compared before: mpirun's one stream, its check lines sorted.
one_stream_breaks_lines() {
    local f=$out/one-stream w
    timeout "$(test_seconds 300)" "$mpirun" --allow-run-as-root --oversubscribe -np 2 \
        "$prog" $lines $length >"$f" 2>&1 || { tail -c 2000 "$f"; return 1; }
    # (mpirun's status says the job ran; a rank's "done" line may itself be
    # cut, joined or lost in the one stream on a busy machine)
    w=$(whole_lines "$f")
    if [ "$w" -eq $((2 * lines)) ] &&
       diff -q <(grep '^check ' "$f" | sort) <(expected 2 | sed 's/^[0-9]*: //' | sort) >/dev/null; then
        echo "mpirun kept all $w lines whole in its one stream: nothing to show here"
        return 77
    fi
    echo "one stream: $w of $((2 * lines)) lines whole; its sorted check lines differ" \
         "from the ranks' $(diff <(grep '^check ' "$f" | sort) \
                                <(expected 2 | sed 's/^[0-9]*: //' | sort) | grep -c '^[<>]')" \
         "times (what failed the comparison before)"
}

per_rank() {   # np
    local np=$1 f=$out/per-rank-$1 r
    run "$f" -- -np "$np" -- $lines $length || { tail -c 2000 "$f"; return 1; }
    run "$f.again" -- -np "$np" -- $lines $length || { tail -c 2000 "$f.again"; return 1; }
    [ "$(whole_lines "$f")" -eq $((np * lines)) ] ||
        { echo "$(whole_lines "$f") of $((np * lines)) lines whole in $f"; return 1; }
    for ((r = 0; r < np; ++r)); do
        [ "$(whole_lines "$f.ranks/rank.$r/stdout")" -eq $lines ] &&
            [ "$(grep -c '^check ' "$f.ranks/rank.$r/stdout")" -eq $lines ] ||
            { echo "rank $r: not $lines whole lines in $f.ranks/rank.$r/stdout"; return 1; }
    done
    diff <(checks_by_rank "$f") <(expected "$np") >/dev/null ||
        { echo "the ranks' check lines are not what each printed"; return 1; }
    same_checks "$f" "$f.again"
}

# made-up outputs of run: FILE and FILE.ranks/rank.N/stdout from "R:line"
fake_run() {   # file, lines...
    local f=$1 l; shift
    rm -rf "$f" "$f.ranks"
    for l in "$@"; do
        mkdir -p "$f.ranks/rank.${l%%:*}"
        echo "${l#*:}" >>"$f.ranks/rank.${l%%:*}/stdout"
        touch "$f.ranks/rank.${l%%:*}/stderr"
        echo "${l#*:}" >>"$f"
    done
}

same_checks_per_rank() {
    local d=$out/fake
    fake_run "$d-ref" "0:check a rank 0: ok" "0:check b rank 0: ok" "1:check a rank 1: ok"
    fake_run "$d-same" "0:check b rank 0: ok" "1:check a rank 1: ok" "0:check a rank 0: ok"
    fake_run "$d-changed" "0:check a rank 0: ok" "0:check b rank 0: ok" "1:check a rank 1: bad"
    fake_run "$d-moved" "0:check a rank 0: ok" "1:check b rank 0: ok" "1:check a rank 1: ok"
    fake_run "$d-missing" "0:check a rank 0: ok" "0:check b rank 0: ok"
    fake_run "$d-none" "0:hello" "1:hello"
    same_checks "$d-ref" "$d-same" >/dev/null || { echo "the same lines differ"; return 1; }
    ! same_checks "$d-ref" "$d-changed" >/dev/null || { echo "a changed line passed"; return 1; }
    ! same_checks "$d-ref" "$d-moved" >/dev/null || { echo "a line of another rank passed"; return 1; }
    # (the sorted lines of the whole job are the same: only per rank finds it)
    diff <(grep '^check ' "$d-ref" | sort) <(grep '^check ' "$d-moved" | sort) >/dev/null ||
        { echo "the made-up moved line differs in the whole job"; return 1; }
    ! same_checks "$d-ref" "$d-missing" >/dev/null || { echo "a missing rank passed"; return 1; }
    ! same_checks "$d-none" "$d-none" >/dev/null || { echo "no check lines passed"; return 1; }
}

mpirun_model_per_rank() {
    local f=$out/model d=$out/model.ranks rc=0 r
    [ -f "$top_builddir/src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so" ] &&
        make -C "$top_builddir/test/model" libumr_verbs_model.la >/dev/null 2>&1 ||
        { echo "no rdma-core model here (configure found no rdma-core)"; return 77; }
    env BUILD_DIR="$top_builddir" timeout "$(test_seconds 300)" \
        "$(dirname "$per_rank")/mpirun-model.sh" --no-build --output "$d" -- \
        -np 2 "$prog" $lines $length >"$f" 2>&1 || rc=$?
    [ $rc -eq 0 ] || { tail -c 2000 "$f"; return 1; }
    for r in 0 1; do
        [ "$(whole_lines "$d/rank.$r/stdout")" -eq $lines ] ||
            { echo "rank $r: not $lines whole lines in $d/rank.$r/stdout"; return 1; }
    done
    [ "$(whole_lines "$f")" -eq $((2 * lines)) ] ||
        { echo "$(whole_lines "$f") of $((2 * lines)) lines whole in the script's output"; return 1; }
}

hydra_per_rank() {
    local d=$out/hydra rc=0 r
    command -v mpiexec.mpich >/dev/null || { echo "no mpiexec.mpich (MPICH) here"; return 77; }
    timeout "$(test_seconds 120)" mpiexec.mpich -n 2 "$per_rank" "$d" \
        sh -c 'echo "out of $PMI_RANK"; echo "err of $PMI_RANK" >&2; exit 3' || rc=$?
    [ $rc -eq 3 ] || { echo "status $rc, not the program's 3"; return 1; }
    for r in 0 1; do
        [ "$(cat "$d/rank.$r/stdout")" = "out of $r" ] &&
            [ "$(cat "$d/rank.$r/stderr")" = "err of $r" ] ||
            { echo "rank $r:"; cat "$d/rank.$r/stdout" "$d/rank.$r/stderr"; return 1; }
    done
}

check one_stream_breaks_lines one_stream_breaks_lines
check per_rank_np2 per_rank 2
check per_rank_np4 per_rank 4
check same_checks_per_rank same_checks_per_rank
check mpirun_model_per_rank mpirun_model_per_rank
check hydra_per_rank hydra_per_rank
finish
