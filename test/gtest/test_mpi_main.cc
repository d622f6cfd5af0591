/**
 * main() of the MPI test programs: GoogleTest inside MPI_Init/MPI_Finalize
 * (one process is enough; run directly or under mpirun -np 1).
 */
#include <gtest/gtest.h>
#include <mpi.h>

int main(int argc, char **argv)
{
    int rc;

    MPI_Init(&argc, &argv);
    ::testing::InitGoogleTest(&argc, argv);
    rc = RUN_ALL_TESTS();
    MPI_Finalize();
    return rc;
}
