/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/* Every rank prints long check lines at once, as the test programs print
 * theirs: through stdio's default buffering, which for a pipe or a file
 * writes whole buffers (4 KiB), not lines. A launcher that merges its
 * ranks' output into one stream cuts them wherever its reads fall, so two
 * ranks' lines interleave mid-line; each rank's own files
 * (contrib/per-rank.sh) keep them whole (test_rank_output.sh).
 *
 * usage: mpirun -np N rank_lines [LINES [LENGTH]]
 * Rank R prints LINES (default 200) lines "check line K rank R: " followed
 * by LENGTH (default 1000) times the letter 'a' + (K + R) % 26, then
 * "rank_lines: rank R done".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int lines  = (argc > 1) ? atoi(argv[1]) : 200;
    int length = (argc > 2) ? atoi(argv[2]) : 1000;
    int rank, k;
    char *fill;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if ((lines < 1) || (length < 1)) {
        fprintf(stderr, "usage: rank_lines [LINES >= 1 [LENGTH >= 1]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fill = malloc(length + 1);
    if (fill == NULL) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    MPI_Barrier(MPI_COMM_WORLD);    /* every rank prints at the same time */
    for (k = 0; k < lines; ++k) {
        memset(fill, 'a' + (k + rank) % 26, length);
        fill[length] = '\0';
        printf("check line %d rank %d: %s\n", k, rank, fill);
    }
    printf("rank_lines: rank %d done\n", rank);

    free(fill);
    MPI_Finalize();
    return 0;
}
