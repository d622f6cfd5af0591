/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/*
 * bench_osc_umr: MPI_Put and MPI_Get with vector, subarray or indexed
 * target datatypes (blocks 8 B .. 64 KiB, on average twice the block
 * apart), contiguous or noncontiguous origin, fence or lock/unlock, over
 * MPI_Win_create, MPI_Win_allocate and dynamic (MPI_Win_create_dynamic +
 * MPI_Win_attach) windows; rank 0 is the origin, rank 1 the target (mpirun
 * -np 2). Plain MPI: the same program with and without osc/umr.
 *
 * Target types, n = bytes / block blocks of `block` bytes:
 *   vector   MPI_Type_vector(n, block, 2 block)
 *   subarray a 2D n x (2 block) byte array, the n x block columns at
 *            block / 2 (MPI_Type_create_subarray)
 *   indexed  MPI_Type_indexed, gaps alternating block / 2 and 3 block / 2
 * The noncontiguous origin is the target type itself.
 *
 * Side by side in one run: two windows of the same flavour, one with
 * osc/umr in front (the default) and one created with the info key
 * "osc_umr_enable" = "false" (exactly the window Open MPI makes without
 * osc/umr); each has its own memory of the same size. The operations alternate between the two windows, A B B A, and
 * each pair of neighbours gives a ratio (time through the plain window over
 * time through osc/umr's); the table shows the median time of each and the
 * median of the ratios. Every byte is checked on the first and last
 * repetition of each point (the target's whole window after a put, the
 * origin's whole buffer after a get, gaps included).
 *
 *     mpirun -np 2 ./bench_osc_umr [-s bytes_per_op] [-r reps] [-q]
 *                 [-b block[,block..]] [-A]
 *                 [-t vector,subarray,indexed] [-w create,allocate,dynamic]
 *                 [-o contig,vector] [-y fence,lock]
 * -q: blocks 8, 64, 512, 4096, 65536 only; -b: these block sizes only.
 * -r: pairs per point (any number: one pair's ratio scatters 0.6-1.6x on a
 * loaded VM, so telling 0.95x from 1x takes hundreds, see
 * docs/osc_umr.md). -A: the A/A control, both windows made with
 * osc_umr_enable=false: its ratios are the run's noise floor.
 * Defaults: -t vector -w create, both origins, both synchronisations (the
 * first milestone's table).
 * Rows: op origin sync block umr[us] plain[us] ratio GB/s(umr) win ttype.
 */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, errors;

static uint8_t pat(int salt, size_t i)
{
    uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull + (uint64_t)salt * 0x632be59bd9b4e019ull;

    x ^= x >> 31;
    return (uint8_t)((x * 0xbf58476d1ce4e5b9ull) >> 56);
}

static void fill(uint8_t *p, size_t n, int salt)
{
    size_t i;

    for (i = 0; i < n; ++i) {
        p[i] = pat(salt, i);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof(*v), cmp_double);
    return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

enum { SYNC_FENCE, SYNC_LOCK };

/* One operation through `win`, timed at the origin (open, op, close). */
static double one_op(MPI_Win win, int is_put, int sync, void *obuf, int ocount,
                     MPI_Datatype otype, MPI_Datatype ttype, MPI_Aint disp)
{
    double t0;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (sync == SYNC_FENCE) {
        MPI_Win_fence(0, win);
    } else if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    }
    if (rank == 0) {
        if (is_put) {
            MPI_Put(obuf, ocount, otype, 1, disp, 1, ttype, win);
        } else {
            MPI_Get(obuf, ocount, otype, 1, disp, 1, ttype, win);
        }
    }
    if (sync == SYNC_FENCE) {
        MPI_Win_fence(0, win);
    } else if (rank == 0) {
        MPI_Win_unlock(1, win);
    }
    t0 = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
    return t0;
}

/* Check the bytes after one operation: the target's whole window (put) or
 * the origin's whole buffer (get), against MPI_Pack/MPI_Unpack on the CPU. */
static void verify(int is_put, uint8_t *wbuf, size_t wlen, uint8_t *obuf,
                   size_t olen, int ocount, MPI_Datatype otype,
                   MPI_Datatype ttype, size_t bytes, int salt, const char *what)
{
    uint8_t *exp, *src, *packed = malloc(bytes);
    int pos = 0, me = is_put ? 1 : 0;
    size_t i, n = is_put ? wlen : olen;
    const uint8_t *got = is_put ? wbuf : obuf;

    if (rank != me) {
        free(packed);
        return;
    }
    exp = malloc(n);
    if (is_put) {
        src = malloc(olen);
        fill(src, olen, salt + 1);
        fill(exp, wlen, salt);
        MPI_Pack(src, ocount, otype, packed, (int)bytes, &pos, MPI_COMM_SELF);
        pos = 0;
        MPI_Unpack(packed, (int)bytes, &pos, exp, 1, ttype, MPI_COMM_SELF);
    } else {
        src = malloc(wlen);
        fill(src, wlen, salt);
        fill(exp, olen, salt + 1);
        MPI_Pack(src, 1, ttype, packed, (int)bytes, &pos, MPI_COMM_SELF);
        pos = 0;
        MPI_Unpack(packed, (int)bytes, &pos, exp, ocount, otype, MPI_COMM_SELF);
    }
    for (i = 0; i < n; ++i) {
        if (got[i] != exp[i]) {
            printf("FAIL %s: byte %zu is 0x%02x, expected 0x%02x\n", what, i,
                   got[i], exp[i]);
            ++errors;
            break;
        }
    }
    free(src);
    free(exp);
    free(packed);
}

enum { TT_VECTOR, TT_SUBARRAY, TT_INDEXED, TT_MAX };
static const char *tt_names[] = {"vector", "subarray", "indexed"};
enum { WF_CREATE, WF_ALLOCATE, WF_DYNAMIC, WF_MAX };
static const char *wf_names[] = {"create", "allocate", "dynamic"};

/* The target type of n blocks of `blk` bytes (span at most 2 n blk). */
static void make_ttype(int tt, size_t n, size_t blk, MPI_Datatype *type)
{
    if (tt == TT_VECTOR) {
        MPI_Type_vector((int)n, (int)blk, (int)(2 * blk), MPI_BYTE, type);
    } else if (tt == TT_SUBARRAY) {
        int sizes[2] = {(int)n, (int)(2 * blk)}, sub[2] = {(int)n, (int)blk};
        int starts[2] = {0, (int)(blk / 2)};

        MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_BYTE,
                                 type);
    } else {
        int *bl = malloc(n * sizeof(int)), *dp = malloc(n * sizeof(int));
        size_t i, d = 0;

        for (i = 0; i < n; ++i) {
            bl[i] = (int)blk;
            dp[i] = (int)d;
            d += blk + ((i % 2) ? 3 * blk / 2 : blk / 2);
        }
        MPI_Type_indexed((int)n, bl, dp, MPI_BYTE, type);
        free(bl);
        free(dp);
    }
    MPI_Type_commit(type);
}

/* a comma-separated list of names: the bit mask of those in `names` */
static unsigned parse_list(const char *arg, const char **names, int n)
{
    unsigned mask = 0;
    int i;

    for (i = 0; i < n; ++i) {
        const char *p = strstr(arg, names[i]);

        if (p != NULL) {
            mask |= 1u << i;
        }
    }
    return mask;
}

int main(int argc, char **argv)
{
    static const size_t all_blocks[] = {8, 16, 32, 64, 128, 256, 512, 1024,
                                        2048, 4096, 8192, 16384, 32768, 65536};
    static const size_t quick_blocks[] = {8, 64, 512, 4096, 65536};
    static const char *origin_names[] = {"contig", "vector"};
    static const char *sync_names[] = {"fence", "lock"};
    const size_t *blocks = all_blocks;
    size_t nblocks = sizeof(all_blocks) / sizeof(all_blocks[0]);
    size_t bytes = 1 << 20, wlen, olen, b;
    static size_t sel_blocks[16];
    int reps = 6, opt, nprocs, is_put, ovec, sync, r, total, salt = 0;
    int control = 0, bad = 0;
    double *t[2], *ratio;
    char *end;
    unsigned tmask = 1u << TT_VECTOR, wmask = 1u << WF_CREATE, omask = 3,
             ymask = 3;
    int tt, wf;
    uint8_t *wbuf[2], *obuf;
    MPI_Win win[2];   /* 0: osc/umr in front, 1: without */
    MPI_Aint disp[2];
    MPI_Info info[2];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    while ((opt = getopt(argc, argv, "s:r:qb:At:w:o:y:")) != -1) {
        if (opt == 's') {
            bytes = strtoul(optarg, NULL, 0);
        } else if (opt == 'r') {
            reps = atoi(optarg);
        } else if (opt == 'q') {
            blocks  = quick_blocks;
            nblocks = sizeof(quick_blocks) / sizeof(quick_blocks[0]);
        } else if (opt == 'b') {
            for (nblocks = 0, end = optarg; *end != '\0'; ++nblocks) {
                if (nblocks == 16) {
                    bad = 1;
                    break;
                }
                sel_blocks[nblocks] = strtoul(end, &end, 0);
                if ((sel_blocks[nblocks] == 0) ||
                    ((*end != ',') && (*end != '\0'))) {
                    bad = 1;
                    break;
                }
                end += (*end == ',');
            }
            blocks = sel_blocks;
            bad   |= (nblocks == 0);
        } else if (opt == 'A') {
            control = 1;
        } else if (opt == 't') {
            tmask = parse_list(optarg, tt_names, TT_MAX);
        } else if (opt == 'w') {
            wmask = parse_list(optarg, wf_names, WF_MAX);
        } else if (opt == 'o') {
            omask = parse_list(optarg, origin_names, 2);
        } else if (opt == 'y') {
            ymask = parse_list(optarg, sync_names, 2);
        }
    }
    if ((nprocs != 2) || (reps < 2) || bad || !tmask || !wmask || !omask ||
        !ymask) {
        if (rank == 0) {
            fprintf(stderr, "bench_osc_umr: mpirun -np 2, -r 2 or more, "
                    "-b up to 16 block sizes > 0, "
                    "-t/-w/-o/-y name known values\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    wlen = 2 * bytes;            /* stride twice the block on average */
    olen = 2 * bytes;            /* the origin's vector is as wide */
    obuf = malloc(olen);
    MPI_Info_create(&info[0]);
    MPI_Info_create(&info[1]);
    MPI_Info_set(info[1], "osc_umr_enable", "false");
    if (control) {
        MPI_Info_set(info[0], "osc_umr_enable", "false");
    }
    t[0]  = malloc(reps * sizeof(double));
    t[1]  = malloc(reps * sizeof(double));
    ratio = malloc(reps * sizeof(double));

    if (rank == 0) {
        printf("# bench_osc_umr: %zu bytes per operation, %d repetitions per "
               "window, A B B A%s\n", bytes, reps, control ?
               "; A/A control: both windows without osc/umr (column umr "
               "too)" : "");
        printf("# %-4s %-7s %-6s %8s %12s %12s %9s %9s %-8s %s\n", "op",
               "origin", "sync", "block", "umr[us]", "plain[us]", "ratio",
               "GB/s(umr)", "win", "ttype");
    }
    for (wf = 0; wf < WF_MAX; ++wf) {
      if (!(wmask & (1u << wf))) {
          continue;
      }
      for (opt = 0; opt < 2; ++opt) {
          disp[opt] = 0;
          if (wf == WF_CREATE) {
              wbuf[opt] = malloc(wlen);
              MPI_Win_create(wbuf[opt], wlen, 1, info[opt], MPI_COMM_WORLD,
                             &win[opt]);
          } else if (wf == WF_ALLOCATE) {
              MPI_Win_allocate(wlen, 1, info[opt], MPI_COMM_WORLD, &wbuf[opt],
                               &win[opt]);
          } else {
              MPI_Aint mine;

              wbuf[opt] = malloc(wlen);
              MPI_Win_create_dynamic(info[opt], MPI_COMM_WORLD, &win[opt]);
              MPI_Win_attach(win[opt], wbuf[opt], wlen);
              MPI_Get_address(wbuf[opt], &mine);
              /* the origin's displacement: the target's address */
              MPI_Bcast(&mine, 1, MPI_AINT, 1, MPI_COMM_WORLD);
              disp[opt] = mine;
          }
      }
      for (tt = 0; tt < TT_MAX; ++tt) {
        if (!(tmask & (1u << tt))) {
            continue;
        }
        for (is_put = 1; is_put >= 0; --is_put) {
          for (ovec = 0; ovec < 2; ++ovec) {
            if (!(omask & (1u << ovec))) {
                continue;
            }
            for (sync = SYNC_FENCE; sync <= SYNC_LOCK; ++sync) {
                if (!(ymask & (1u << sync))) {
                    continue;
                }
                for (b = 0; b < nblocks; ++b) {
                    size_t blk = blocks[b], n = bytes / blk;
                    MPI_Datatype ttype, otype;
                    int ocount;
                    double tt_s;
                    int k[2] = {0, 0}, w, nr = reps, o;
                    char what[160];

                    make_ttype(tt, n, blk, &ttype);
                    if (ovec) {
                        otype  = ttype;
                        ocount = 1;
                    } else {
                        otype  = MPI_BYTE;
                        ocount = (int)bytes;
                    }
                    snprintf(what, sizeof(what), "%s origin=%s sync=%s "
                             "block=%zu win=%s ttype=%s",
                             is_put ? "put" : "get", ovec ? "vector" : "contig",
                             sync == SYNC_FENCE ? "fence" : "lock", blk,
                             wf_names[wf], tt_names[tt]);
                    /* warm-up: the first use of a target type asks for its
                     * key (the operation goes through the wrapped module) */
                    for (w = 0; w < 2; ++w) {
                        one_op(win[w], is_put, sync, obuf, ocount, otype,
                               ttype, disp[w]);
                    }
                    for (r = 0; r < nr; ++r) {
                        for (o = 0; o < 2; ++o) {
                            /* A B B A: r even umr first, odd plain first */
                            w = (r % 2) ? !o : o;
                            ++salt;
                            fill(wbuf[w], wlen, salt);
                            fill(obuf, olen, salt + 1);
                            tt_s = one_op(win[w], is_put, sync, obuf, ocount,
                                          otype, ttype, disp[w]);
                            t[w][k[w]++] = tt_s;
                            if ((r == 0) || (r == nr - 1)) {
                                verify(is_put, wbuf[w], wlen, obuf, olen,
                                       ocount, otype, ttype, bytes, salt,
                                       what);
                            }
                            MPI_Barrier(MPI_COMM_WORLD);
                        }
                        ratio[r] = t[1][r] / t[0][r];
                    }
                    if (rank == 0) {
                        double mu = median(t[0], nr), mp = median(t[1], nr);

                        printf("%-6s %-7s %-6s %8zu %12.1f %12.1f %8.2fx "
                               "%9.2f %-8s %s\n",
                               is_put ? "put" : "get", ovec ? "vector" : "contig",
                               sync == SYNC_FENCE ? "fence" : "lock", blk,
                               mu * 1e6, mp * 1e6, median(ratio, nr),
                               bytes / mu / 1e9, wf_names[wf], tt_names[tt]);
                        fflush(stdout);
                    }
                    MPI_Type_free(&ttype);
                }
            }
          }
        }
      }
      for (opt = 1; opt >= 0; --opt) {
          if (wf == WF_DYNAMIC) {
              MPI_Win_detach(win[opt], wbuf[opt]);
          }
          MPI_Win_free(&win[opt]);
          if (wf != WF_ALLOCATE) {
              free(wbuf[opt]);
          }
      }
    }
    MPI_Info_free(&info[0]);
    MPI_Info_free(&info[1]);
    free(t[0]);
    free(t[1]);
    free(ratio);
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("# verified: %d error(s)\n", total);
    }
    free(obuf);
    MPI_Finalize();
    return total ? 1 : 0;
}
