#!/bin/sh
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Each rank's output in its own files, whatever the launcher.
#
#   contrib/per-rank.sh DIR PROGRAM [ARGS...]
#       run PROGRAM (one process of a job: put this in front of the program
#       on the launcher's command line) with its stdout in DIR/rank.N/stdout
#       and its stderr in DIR/rank.N/stderr, N its rank as the launcher
#       says: OMPI_COMM_WORLD_RANK (Open MPI's mpirun and prterun),
#       PMIX_RANK (any PMIx launcher), PMI_RANK (MPICH's mpiexec, Hydra),
#       SLURM_PROCID (srun). The exit status and pid are the program's.
#   contrib/per-rank.sh --cat DIR
#       every rank's stdout, then its stderr, in rank order.
#
#   mpirun -np 4 contrib/per-rank.sh out ./prog ARGS
#   mpiexec.mpich -n 4 contrib/per-rank.sh out ./prog ARGS
#
# A launcher merges its ranks' output into one stream in the pieces it reads
# them in: a rank whose stdout is not a terminal writes it in buffer-sized
# blocks, and on a busy machine the launcher's reads cut lines, so two ranks'
# lines interleave mid-line. Here each rank writes straight into its own
# files: every line whole, compared per rank. (Hydra alone can do the same:
# mpiexec.mpich -outfile-pattern DIR/rank.%r.stdout -errfile-pattern
# DIR/rank.%r.stderr; Open MPI 4.1's mpirun --output-filename DIR writes
# DIR/1/rank.N/stdout, Open MPI 5's prterun spells it --output dir=DIR.)
#
set -eu
usage() { sed -n '5,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage

if [ "$1" = --cat ]; then
    [ -d "$2" ] || exit 0     # no rank started
    ls "$2" | sed -n 's/^rank\.\([0-9][0-9]*\)$/\1/p' | sort -n | while read -r r; do
        cat "$2/rank.$r/stdout" "$2/rank.$r/stderr" 2>/dev/null || true
    done
    exit 0
fi

dir=$1; shift
rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${PMI_RANK:-${SLURM_PROCID:-}}}}
case $rank in
    ''|*[!0-9]*)
        echo "per-rank.sh: no rank in the environment (OMPI_COMM_WORLD_RANK," \
             "PMIX_RANK, PMI_RANK or SLURM_PROCID): start it under mpirun" >&2
        exit 2 ;;
esac
mkdir -p "$dir/rank.$rank"
exec "$@" >"$dir/rank.$rank/stdout" 2>"$dir/rank.$rank/stderr"
