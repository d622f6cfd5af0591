/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * main() of the MPI test programs: GoogleTest inside MPI_Init/MPI_Finalize
 * (one process is enough: run directly, as an MPI singleton, or under
 * mpirun -np 1).
 */
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>

/*
 * Under LeakSanitizer: what the MPI library and its components keep until
 * exit is theirs, not ours (a stack through our code is still reported).
 * Full stacks: the fast unwinder stops in Open MPI's components, whose
 * leaks then could not be told from ours.
 */
extern "C" const char *__asan_default_options()
{
    return "fast_unwind_on_malloc=0";
}

extern "C" const char *__lsan_default_suppressions()
{
    return "leak:libmpi.so\n"
           "leak:libopen-pal.so\n"
           "leak:libopen-rte.so\n"
           "leak:libpmix.so\n"
           "leak:libhwloc.so\n"
           "leak:libevent\n"
           "leak:mca_\n";
}

int main(int argc, char **argv)
{
    int rc, provided;

    /* Open MPI refuses to start as root unless told (CI runs as root);
     * an explicit setting in the environment wins */
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);

    /* the decoder's cache must be correct with threads (pml/umr under
     * MPI_THREAD_MULTIPLE); tests needing it skip if it is not given */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    ::testing::InitGoogleTest(&argc, argv);
    rc = RUN_ALL_TESTS();
    MPI_Finalize();
    return rc;
}
