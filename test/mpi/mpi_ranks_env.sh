# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
# Sourced after mpi_test_env.sh by the scripts that compare what each rank
# printed, whole, and what the launcher printed apart (test_quiet.sh,
# test_umr_keys.sh).

# run_ranks FILE [ENV=VALUE..] -- [mpirun args..] [-- program args..]: as
# run (each rank's stdout and stderr in FILE.ranks/rank.N/, see ranks_of and
# rank_lines), but FILE holds the ranks' output alone (stdout, stderr, in
# rank order) and FILE.launcher the launcher's own lines. The launcher:
# mpirun, or the command in the array `launcher` (contrib/mpirun-model.sh
# ... --), which takes mpirun's arguments.
run_ranks() {
    local file=$1 rc=0
    run "$@" || rc=$?
    mv "$file.ranks/launcher" "$file.launcher"
    "$per_rank" --cat "$file.ranks" | tr -d '\000' >"$file"
    return $rc
}
