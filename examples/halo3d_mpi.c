/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * halo3d_mpi: the faces of an N^3 grid of doubles sent from MPI rank 0 to
 * rank 1 three ways, timed side by side and verified byte for byte:
 *
 *   mpi_ddt    MPI_Send/MPI_Recv of the MPI derived datatype: the MPI
 *              library's own datatype path (pml ob1 or pml ucx)
 *   mpi_pack   MPI_Pack, contiguous MPI_Send, MPI_Unpack
 *   umr_zcopy  the mlx5_umr transport: both ranks register the face as a
 *              layout key (uct_umr_mem_reg); rank 0 does one put_zcopy from
 *              its layout key to rank 1's (+ flush)
 *
 * Every iteration of every mode ends with the same notification: a zero-byte
 * MPI message to rank 1 and a zero-byte reply, so rank 0's clock covers the
 * data being in place on rank 1. Addresses and packed keys travel over MPI.
 *
 * The engine comes from UCX_MLX5_UMR_ENGINE (default here: sw). With the sw
 * engine the umr column is cross-memory attach, not a NIC figure.
 *
 * Usage: mpirun -np 2 halo3d_mpi [-n N[,N...]] [-i iterations] [-d device]
 */
#include "umr_example.h"
#include "umr_example_pml.h"

#include <mpi.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define H3_MAX_SIZES  8
#define H3_NUM_FACES  4
#define H3_MAX_RKEY   UMR_EXAMPLE_MAX_RKEY
#define H3_GUARD      0xee
#define H3_WARMUP     10
#define H3_BATCHES    5

enum { H3_TAG_SETUP = 1, H3_TAG_DATA, H3_TAG_NOTIFY, H3_TAG_ACK, H3_TAG_RESULT };
enum { H3_MODE_DDT, H3_MODE_PACK, H3_MODE_UMR, H3_NUM_MODES };

static const char *h3_mode_names[H3_NUM_MODES] = { "mpi_ddt", "mpi_pack",
                                                   "umr_zcopy" };
static int h3_rank;

/* One face: the same bytes described twice, relative to grid + offset. */
typedef struct h3_face {
    const char       *name;
    size_t           offset;        /* byte offset of the face base */
    umr_layout_t *layout;
    MPI_Datatype     dtype;
    size_t           size;          /* packed bytes */
    uct_mem_h        memh;          /* layout key over this rank's grid */
} h3_face_t;

#define H3_FAIL(_fmt, ...) \
    do { \
        fprintf(stderr, "halo3d_mpi[rank %d]: " _fmt "\n", h3_rank, \
                ## __VA_ARGS__); \
        MPI_Abort(MPI_COMM_WORLD, 1); \
        exit(1); \
    } while (0)

#define H3_UCS(_call, _what) \
    do { \
        ucs_status_t __s = (_call); \
        if (__s != UCS_OK) { \
            H3_FAIL("%s failed: %s%s%s", (_what), ucs_status_string(__s), \
                    *umr_layout_last_error() ? ": " : "", \
                    umr_layout_last_error()); \
        } \
    } while (0)

#define H3_MPI(_call) \
    do { \
        int __rc = (_call), __len; \
        char __msg[MPI_MAX_ERROR_STRING]; \
        if (__rc != MPI_SUCCESS) { \
            MPI_Error_string(__rc, __msg, &__len); \
            H3_FAIL("%s failed: %s", #_call, __msg); \
        } \
    } while (0)

/* ---- UCT setup: umr_example.c, addresses over MPI ----------------------- */

/* umr_example_exchange_fn_t; both ranks run the same transport, so the
 * lengths are equal. */
static ucs_status_t h3_exchange(void *arg, const void *mine, size_t len,
                                void *peer, size_t max)
{
    int peer_rank = 1 - h3_rank;

    H3_MPI(MPI_Sendrecv(mine, len, MPI_BYTE, peer_rank, H3_TAG_SETUP, peer,
                        max, MPI_BYTE, peer_rank, H3_TAG_SETUP, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    return UCS_OK;
}

/* ---- faces -------------------------------------------------------------- */

/* C order grid[z][y][x] of n^3 doubles: x face at x = 1, y face at y = 1,
 * z face at z = 1, and the interior (n-2)^2 subarray of the plane z = 2. */
static void h3_make_faces(size_t n, h3_face_t *faces)
{
    const size_t d = sizeof(double);
    int sizes[2] = { n, n }, subsizes[2] = { n - 2, n - 2 }, starts[2] = { 1, 1 };
    size_t blocklen = 1;
    ptrdiff_t displ = (n + 1) * d;  /* where the subarray starts */
    umr_layout_t *rows;
    int f;

    faces[0].name   = "x (8 B blocks)";
    faces[0].offset = 1 * d;
    H3_UCS(umr_layout_vector(n * n, d, n * d, NULL, &faces[0].layout),
           "x face layout");
    H3_MPI(MPI_Type_vector(n * n, 1, n, MPI_DOUBLE, &faces[0].dtype));

    faces[1].name   = "y (row blocks)";
    faces[1].offset = n * d;
    H3_UCS(umr_layout_vector(n, n * d, n * n * d, NULL, &faces[1].layout),
           "y face layout");
    H3_MPI(MPI_Type_vector(n, n, n * n, MPI_DOUBLE, &faces[1].dtype));

    faces[2].name   = "z (contiguous)";
    faces[2].offset = n * n * d;
    H3_UCS(umr_layout_contig(n * n * d, &faces[2].layout), "z face layout");
    H3_MPI(MPI_Type_contiguous(n * n, MPI_DOUBLE, &faces[2].dtype));

    /* The layout mirrors the subarray type: rows, displaced into the plane. */
    faces[3].name   = "2D subarray";
    faces[3].offset = 2 * n * n * d;
    H3_UCS(umr_layout_vector(n - 2, (n - 2) * d, n * d, NULL, &rows),
           "subarray rows layout");
    H3_UCS(umr_layout_indexed(1, &blocklen, &displ, rows, &faces[3].layout),
           "subarray layout");
    umr_layout_free(rows);
    H3_MPI(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C,
                                    MPI_DOUBLE, &faces[3].dtype));

    for (f = 0; f < H3_NUM_FACES; ++f) {
        H3_MPI(MPI_Type_commit(&faces[f].dtype));
        faces[f].size = umr_layout_size(faces[f].layout);
    }
}

static void h3_free_faces(h3_face_t *faces)
{
    int f;

    for (f = 0; f < H3_NUM_FACES; ++f) {
        umr_layout_free(faces[f].layout);
        MPI_Type_free(&faces[f].dtype);
    }
}

/* Rank 0's grid: byte i is (i * 7) mod 256, so a misplaced byte shows. */
static void h3_fill_source(char *grid, size_t bytes)
{
    size_t i;

    for (i = 0; i < bytes; ++i) {
        grid[i] = (char)(i * 7);
    }
}

/* Both descriptions of a face must select the same bytes in the same order:
 * MPI_Pack of the datatype against the layout engine's pack. */
static void h3_check_describe(const h3_face_t *face, const char *grid,
                              char *buf_mpi, char *buf_umr, int pack_max)
{
    int type_size, pos = 0;

    H3_MPI(MPI_Type_size(face->dtype, &type_size));
    if ((size_t)type_size != face->size) {
        H3_FAIL("face %s: MPI type size %d != layout size %zu", face->name,
                type_size, face->size);
    }
    H3_MPI(MPI_Pack(grid + face->offset, 1, face->dtype, buf_mpi, pack_max,
                    &pos, MPI_COMM_WORLD));
    H3_UCS(umr_layout_pack(face->layout, 1, grid + face->offset, buf_umr),
           "umr_layout_pack");
    if (((size_t)pos != face->size) || memcmp(buf_mpi, buf_umr, face->size)) {
        H3_FAIL("face %s: MPI datatype and layout select different bytes",
                face->name);
    }
}

/*
 * Rank 1: the face must hold rank 0's bytes (the layout engine's pack of
 * rank 0's grid, `ref`) and every other byte the guard. Unpacking guard
 * bytes over the face then leaves an all-guard grid, ready for the next mode.
 * Returns the number of wrong bytes (and prints the first).
 */
static size_t h3_verify(const h3_face_t *face, char *grid, size_t grid_bytes,
                        const char *ref, char *got, const char *label)
{
    size_t i, bad = 0, outside = 0, first = 0;

    H3_UCS(umr_layout_pack(face->layout, 1, grid + face->offset, got),
           "umr_layout_pack (verify)");
    for (i = 0; i < face->size; ++i) {
        if ((got[i] != ref[i]) && (bad++ == 0)) {
            first = i;
        }
    }
    if (bad) {
        fprintf(stderr, "halo3d_mpi: %s: %zu face bytes wrong, first at packed "
                "byte %zu: 0x%02x, expected 0x%02x\n", label, bad, first,
                (unsigned char)got[first], (unsigned char)ref[first]);
    }

    memset(got, H3_GUARD, face->size);
    H3_UCS(umr_layout_unpack(face->layout, 1, grid + face->offset, got),
           "umr_layout_unpack (verify)");
    for (i = 0; i < grid_bytes; ++i) {
        if (((unsigned char)grid[i] != H3_GUARD) && (outside++ == 0)) {
            first = i;
        }
    }
    if (outside) {
        fprintf(stderr, "halo3d_mpi: %s: %zu bytes outside the face written, "
                "first at grid byte %zu: 0x%02x\n", label, outside, first,
                (unsigned char)grid[first]);
        memset(grid, H3_GUARD, grid_bytes);
    }
    return bad + outside;
}

/* ---- one mode: warm-up + timed loop ------------------------------------ */

typedef struct h3_run {
    umr_example_t *uct;
    char          *grid;
    char          *pack_buf;
    int           pack_max;
    uct_rkey_t    rkey;         /* rank 0: rank 1's key for this face */
} h3_run_t;

static void h3_iter_sender(h3_run_t *r, const h3_face_t *face, int mode)
{
    uct_iov_t iov;
    int pos = 0;

    switch (mode) {
    case H3_MODE_DDT:
        H3_MPI(MPI_Send(r->grid + face->offset, 1, face->dtype, 1,
                        H3_TAG_DATA, MPI_COMM_WORLD));
        break;
    case H3_MODE_PACK:
        H3_MPI(MPI_Pack(r->grid + face->offset, 1, face->dtype, r->pack_buf,
                        r->pack_max, &pos, MPI_COMM_WORLD));
        H3_MPI(MPI_Send(r->pack_buf, pos, MPI_PACKED, 1, H3_TAG_DATA,
                        MPI_COMM_WORLD));
        break;
    case H3_MODE_UMR:
        /* One put of the whole face, layout key to layout key (+ flush):
         * the data is in rank 1's grid when this returns. */
        iov = (uct_iov_t){ .buffer = NULL, /* offset 0 of the packed stream */
                           .length = face->size, .memh = face->memh,
                           .count = 1 };
        H3_UCS(umr_example_put_wait(r->uct, &iov, NULL, 0, r->rkey),
               r->uct->error);
        break;
    }
    /* The same notification round trip in every mode. */
    H3_MPI(MPI_Send(NULL, 0, MPI_BYTE, 1, H3_TAG_NOTIFY, MPI_COMM_WORLD));
    H3_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, H3_TAG_ACK, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
}

static void h3_iter_receiver(h3_run_t *r, const h3_face_t *face, int mode)
{
    int pos = 0;

    switch (mode) {
    case H3_MODE_DDT:
        H3_MPI(MPI_Recv(r->grid + face->offset, 1, face->dtype, 0,
                        H3_TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        break;
    case H3_MODE_PACK:
        H3_MPI(MPI_Recv(r->pack_buf, r->pack_max, MPI_PACKED, 0, H3_TAG_DATA,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        H3_MPI(MPI_Unpack(r->pack_buf, r->pack_max, &pos,
                          r->grid + face->offset, 1, face->dtype,
                          MPI_COMM_WORLD));
        break;
    case H3_MODE_UMR:
        break;  /* the data is already in place: zero copy, no CPU here */
    }
    H3_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, H3_TAG_NOTIFY, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    H3_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, H3_TAG_ACK, MPI_COMM_WORLD));
}

/*
 * Warm-up, then H3_BATCHES batches of `iters` / H3_BATCHES iterations.
 * Returns, on rank 0, us per iteration of the fastest batch (the machine is
 * shared: the best batch is the least disturbed one); 0 on rank 1.
 */
static double h3_run_mode(h3_run_t *r, const h3_face_t *face, int mode,
                          int iters)
{
    int batch_iters = (iters + H3_BATCHES - 1) / H3_BATCHES, b, it;
    double t0, best = 0;

    H3_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (b = -1; b < H3_BATCHES; ++b) {  /* batch -1: the warm-up */
        t0 = MPI_Wtime();
        for (it = 0; it < ((b < 0) ? H3_WARMUP : batch_iters); ++it) {
            if (h3_rank == 0) {
                h3_iter_sender(r, face, mode);
            } else {
                h3_iter_receiver(r, face, mode);
            }
        }
        t0 = (MPI_Wtime() - t0) * 1e6 / batch_iters;
        if ((b == 0) || ((b > 0) && (t0 < best))) {
            best = t0;
        }
    }
    return (h3_rank == 0) ? best : 0;
}

/* ---- one grid size ------------------------------------------------------ */

static int h3_run_size(umr_example_t *u, size_t n, int iters)
{
    size_t grid_bytes = n * n * n * sizeof(double), f;
    size_t face_max = n * n * sizeof(double);
    char *grid = malloc(grid_bytes), *ref_grid = NULL;
    char *ref = malloc(face_max), *got = malloc(face_max);
    char rkeys[H3_NUM_FACES][H3_MAX_RKEY];
    uct_rkey_bundle_t rkey_b[H3_NUM_FACES];
    h3_face_t faces[H3_NUM_FACES];
    h3_run_t run = { .uct = u, .grid = grid };
    uct_umr_ep_stats_t st0 = {0}, st1 = {0};
    double t[H3_NUM_MODES];
    int mode, failures = 0, ok[H3_NUM_MODES], c;
    char label[128];

    if (!grid || !ref || !got || (face_max > INT_MAX)) {
        H3_FAIL("out of memory for a %zu^3 grid", n);
    }
    h3_make_faces(n, faces);
    for (f = 0, run.pack_max = 0; f < H3_NUM_FACES; ++f) {
        H3_MPI(MPI_Pack_size(1, faces[f].dtype, MPI_COMM_WORLD, &c));
        run.pack_max = (c > run.pack_max) ? c : run.pack_max;
    }
    run.pack_buf = malloc(run.pack_max);
    if (h3_rank == 0) {
        h3_fill_source(grid, grid_bytes);
    } else {
        memset(grid, H3_GUARD, grid_bytes);
        ref_grid = malloc(grid_bytes);  /* rank 0's grid, for the reference */
        if (ref_grid == NULL) {
            H3_FAIL("out of memory for the reference grid");
        }
        h3_fill_source(ref_grid, grid_bytes);
    }

    /* Layout keys over the faces on both ranks; rank 1's keys go to rank 0. */
    for (f = 0; f < H3_NUM_FACES; ++f) {
        H3_UCS(uct_umr_mem_reg(u->md, grid + faces[f].offset, faces[f].layout,
                               1, 0, &faces[f].memh), "uct_umr_mem_reg");
        if (h3_rank == 1) {
            H3_UCS(uct_md_mkey_pack(u->md, faces[f].memh, rkeys[f]),
                   "uct_md_mkey_pack");
        }
    }
    if (h3_rank == 1) {
        H3_MPI(MPI_Send(rkeys, sizeof(rkeys), MPI_BYTE, 0, H3_TAG_SETUP,
                        MPI_COMM_WORLD));
    } else {
        H3_MPI(MPI_Recv(rkeys, sizeof(rkeys), MPI_BYTE, 1, H3_TAG_SETUP,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (f = 0; f < H3_NUM_FACES; ++f) {
            H3_UCS(uct_rkey_unpack(u->component, rkeys[f], &rkey_b[f]),
                   "uct_rkey_unpack");
            h3_check_describe(&faces[f], grid, run.pack_buf, got, run.pack_max);
        }
    }

    for (f = 0; f < H3_NUM_FACES; ++f) {
        run.rkey = (h3_rank == 0) ? rkey_b[f].rkey : UCT_INVALID_RKEY;
        if (h3_rank == 1) {
            H3_UCS(umr_layout_pack(faces[f].layout, 1,
                                       ref_grid + faces[f].offset, ref),
                   "umr_layout_pack (reference)");
        }
        for (mode = 0; mode < H3_NUM_MODES; ++mode) {
            if ((mode == H3_MODE_UMR) && (h3_rank == 0)) {
                uct_umr_ep_get_stats(u->ep, &st0);
            }
            t[mode] = h3_run_mode(&run, &faces[f], mode, iters);
            if ((mode == H3_MODE_UMR) && (h3_rank == 0)) {
                uct_umr_ep_get_stats(u->ep, &st1);
            }
            if (h3_rank == 1) {
                snprintf(label, sizeof(label), "N=%zu face %s mode %s", n,
                         faces[f].name, h3_mode_names[mode]);
                ok[mode] = !h3_verify(&faces[f], grid, grid_bytes, ref, got,
                                      label);
            }
        }
        if (h3_rank == 1) {
            H3_MPI(MPI_Send(ok, H3_NUM_MODES, MPI_INT, 0, H3_TAG_RESULT,
                            MPI_COMM_WORLD));
            continue;
        }
        H3_MPI(MPI_Recv(ok, H3_NUM_MODES, MPI_INT, 1, H3_TAG_RESULT,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        printf("| %4zu^3 | %-14s | %7zu | %6zu | %9.1f | %9.1f | %9.1f | %6.2f | %6.2f | %-4s | %-5s |\n",
               n, faces[f].name, faces[f].size,
               umr_layout_num_blocks(faces[f].layout),
               t[H3_MODE_DDT], t[H3_MODE_PACK], t[H3_MODE_UMR],
               t[H3_MODE_PACK] / t[H3_MODE_DDT], t[H3_MODE_UMR] / t[H3_MODE_DDT],
               (st1.pack_fallbacks > st0.pack_fallbacks) ? "pack" : "UMR",
               (ok[0] && ok[1] && ok[2]) ? "ok" : "WRONG");
        for (mode = 0; mode < H3_NUM_MODES; ++mode) {
            if (!ok[mode]) {
                printf("halo3d_mpi: N=%zu face %s: %s delivered wrong bytes "
                       "(details on stderr)\n", n, faces[f].name,
                       h3_mode_names[mode]);
                ++failures;
            }
        }
        fflush(stdout);
    }

    H3_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* rank 0 is done with rank 1's keys */
    for (f = 0; f < H3_NUM_FACES; ++f) {
        if (h3_rank == 0) {
            H3_UCS(uct_rkey_release(u->component, &rkey_b[f]), "uct_rkey_release");
        }
        H3_UCS(uct_md_mem_dereg(u->md, faces[f].memh), "uct_md_mem_dereg");
    }
    h3_free_faces(faces);
    free(grid); free(ref_grid); free(ref); free(got); free(run.pack_buf);
    return failures;
}

static int h3_parse_sizes(const char *arg, size_t *sizes)
{
    char *list = strdup(arg), *tok, *end;
    int num = 0;

    for (tok = strtok(list, ","); tok != NULL; tok = strtok(NULL, ",")) {
        if (num == H3_MAX_SIZES) {
            num = -1;
            break;
        }
        sizes[num] = strtoul(tok, &end, 0);
        if ((*end != '\0') || (sizes[num] < 4) || (sizes[num] > 512)) {
            num = -1;
            break;
        }
        ++num;
    }
    free(list);
    return num;
}

int main(int argc, char **argv)
{
    size_t sizes[H3_MAX_SIZES] = { 32, 64, 128 }, s;
    int num_sizes = 3, iters = 100, c, nprocs, failures = 0;
    const char *dev = NULL, *engine;
    umr_example_t uct;

    /* Before any UCX configuration is read (also by Open MPI's pml ucx). */
    setenv("UCX_MLX5_UMR_ENGINE", getenv("UCX_MLX5_UMR_ENGINE") ?: "sw", 1);
    engine = getenv("UCX_MLX5_UMR_ENGINE");

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &h3_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    /* Errors come back to H3_MPI, which names the call that failed. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    while ((c = getopt(argc, argv, "n:i:d:h")) != -1) {
        switch (c) {
        case 'n': num_sizes = h3_parse_sizes(optarg, sizes); break;
        case 'i': iters = atoi(optarg); break;
        case 'd': dev = optarg; break;
        default:
            num_sizes = 0;
            break;
        }
    }
    if ((num_sizes <= 0) || (iters < 1) || (nprocs != 2)) {
        if (h3_rank == 0) {
            fprintf(stderr, "usage: mpirun -np 2 %s [-n N[,N...]] (up to %d "
                    "edges, 4..512) [-i iterations >= 1] [-d device]%s\n",
                    argv[0], H3_MAX_SIZES,
                    (nprocs != 2) ? " (needs exactly 2 ranks)" : "");
        }
        MPI_Finalize();
        return 2;
    }

    H3_UCS(umr_example_open(&uct, dev), uct.error);
    H3_UCS(umr_example_connect(&uct, h3_exchange, NULL), uct.error);

    if (h3_rank == 0) {
        printf("halo3d_mpi: faces of an N^3 grid of doubles, rank 0 -> rank 1, "
               "%d warm-up + %d x %d iterations per face and mode\n", H3_WARMUP,
               H3_BATCHES, (iters + H3_BATCHES - 1) / H3_BATCHES);
        printf("MPI: %s, pml %s; mlx5_umr engine %s\n",
               "Open MPI", umr_example_pml_name(), engine);
        printf("Times: us per face per iteration on rank 0 (fastest of %d batches), "
               "each iteration ending with the same zero-byte notify + reply;\n"
               "ratios are time ratios (< 1: faster than mpi_ddt). umr path: "
               "UMR keys, or packed by the transport (tiny blocks).\n", H3_BATCHES);
        if (!strcmp(engine, "sw")) {
            printf("sw engine: the umr_zcopy column is cross-memory attach "
                   "(process_vm_writev), NOT a NIC figure.\n");
        }
        printf("\n| grid   | face           | bytes   | blocks | mpi_ddt   | mpi_pack  | umr_zcopy | pack/  | umr/   | umr  | check |\n"
               "|        |                |         |        | [us]      | [us]      | [us]      | ddt    | ddt    | path |       |\n"
               "|--------|----------------|---------|--------|-----------|-----------|-----------|--------|--------|------|-------|\n");
        fflush(stdout);
    }

    for (s = 0; s < (size_t)num_sizes; ++s) {
        failures += h3_run_size(&uct, sizes[s], iters);
    }

    umr_example_close(&uct);
    if (h3_rank == 0) {
        printf("\n%s\n", failures ? "halo3d_mpi: FAILED: some faces arrived wrong" :
                                    "halo3d_mpi: all faces verified");
    }
    H3_MPI(MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD));
    MPI_Finalize();
    return failures ? 1 : 0;
}
