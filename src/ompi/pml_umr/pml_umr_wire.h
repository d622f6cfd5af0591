/**
 * pml/umr on the wire: the size and the magic of a control message. Plain
 * C, no Open MPI headers, so that MPI programs (the tests, the calibration)
 * can use the same figures.
 *
 * Z is just above 4 KiB: a receive of at most 4 KiB can never match a
 * control message, so it goes to the wrapped PML with one compare and no
 * request of ours (the 0 B - 4 KiB latency of a job is the wrapped PML's).
 * Z is not a power of two, so that ordinary messages of exactly Z bytes,
 * whose first bytes are checked for the magic, are rare.
 */
#ifndef MCA_PML_UMR_WIRE_H_
#define MCA_PML_UMR_WIRE_H_

/* Size of a control message; the smallest message moved zero-copy. */
#define MCA_PML_UMR_CTL_SIZE     4160
#define MCA_PML_UMR_MAGIC0       0x6d6c7835756d7221ull  /* "mlx5umr!" */
#define MCA_PML_UMR_MAGIC1       0xc3a1d20f5e7b9461ull

#endif
