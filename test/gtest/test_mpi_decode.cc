/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * MPI datatype decoder: every combiner, predefined types, the cache.
 * Each decoded layout is compared with the MPI (bounds, MPI_Pack and
 * MPI_Unpack byte for byte, counts 1..3).
 */
#include "test_mpi_decode.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

using namespace umr_mpi_test;

namespace {

MPI_Datatype committed(MPI_Datatype t)
{
    MPI_Type_commit(&t);
    return t;
}

#define EXPECT_DECODES(_type) EXPECT_EQ("", decode_and_compare(_type))

} /* namespace */

TEST(mpi_decode, predefined)
{
    const MPI_Datatype types[] = {
        MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_SHORT,
        MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG,
        MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE,
        MPI_LONG_DOUBLE, MPI_WCHAR, MPI_C_BOOL, MPI_INT8_T, MPI_INT16_T,
        MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT64_T, MPI_C_COMPLEX,
        MPI_C_DOUBLE_COMPLEX, MPI_AINT, MPI_OFFSET, MPI_COUNT, MPI_2INT,
        MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION, MPI_2INTEGER,
        MPI_2DOUBLE_PRECISION
    };
    for (MPI_Datatype t : types) {
        char name[MPI_MAX_OBJECT_NAME];
        int len;
        MPI_Type_get_name(t, name, &len);
        EXPECT_EQ("", decode_and_compare(t)) << name;
    }
}

/* MINLOC/MAXLOC pair types have holes (C padding) */
TEST(mpi_decode, pair_types)
{
    const MPI_Datatype types[] = {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT,
                                  MPI_SHORT_INT, MPI_LONG_DOUBLE_INT};
    for (MPI_Datatype t : types) {
        char name[MPI_MAX_OBJECT_NAME];
        int len;
        MPI_Type_get_name(t, name, &len);
        EXPECT_EQ("", decode_and_compare(t)) << name;
    }
}

TEST(mpi_decode, contiguous_and_dup)
{
    MPI_Datatype t;
    MPI_Type_contiguous(7, MPI_DOUBLE, &t);
    type_guard c(committed(t));
    EXPECT_DECODES(c.t);

    MPI_Type_dup(c.t, &t);
    type_guard d(committed(t));
    EXPECT_DECODES(d.t);

    MPI_Type_contiguous(0, MPI_INT, &t);
    type_guard e(committed(t));
    umr_layout_t *l = nullptr;
    ASSERT_EQ(UCS_OK, umr_mpi_dtype_decode(e.t, &l));
    EXPECT_EQ(0u, umr_layout_size(l));
    EXPECT_EQ("", compare_with_mpi(e.t, l));
    umr_layout_free(l);
}

TEST(mpi_decode, vector_hvector)
{
    MPI_Datatype t;
    MPI_Type_vector(5, 3, 7, MPI_FLOAT, &t);             /* y face */
    type_guard v(committed(t));
    EXPECT_DECODES(v.t);

    MPI_Type_vector(4, 1, 9, MPI_DOUBLE, &t);            /* x face */
    type_guard x(committed(t));
    EXPECT_DECODES(x.t);

    MPI_Type_vector(3, 2, -4, MPI_INT, &t);              /* backwards */
    type_guard n(committed(t));
    EXPECT_DECODES(n.t);

    MPI_Type_create_hvector(3, 2, 100, v.t, &t);         /* nested */
    type_guard h(committed(t));
    EXPECT_DECODES(h.t);

    MPI_Type_create_hvector(4, 1, 24, MPI_INT, &t);
    type_guard h2(committed(t));
    EXPECT_DECODES(h2.t);
}

TEST(mpi_decode, indexed_family)
{
    int blens[]       = {2, 0, 3, 1};
    int displs[]      = {5, 1, -3, 12};
    MPI_Aint hdispls[] = {40, 8, -16, 200};
    int bdispls[]     = {4, 0, 9};
    MPI_Aint hbdispls[] = {64, 0, 300};
    MPI_Datatype t;

    MPI_Type_indexed(4, blens, displs, MPI_DOUBLE, &t);
    type_guard a(committed(t));
    EXPECT_DECODES(a.t);

    MPI_Type_create_hindexed(4, blens, hdispls, MPI_INT, &t);
    type_guard b(committed(t));
    EXPECT_DECODES(b.t);

    MPI_Type_create_indexed_block(3, 2, bdispls, MPI_FLOAT, &t);
    type_guard c(committed(t));
    EXPECT_DECODES(c.t);

    MPI_Type_create_hindexed_block(3, 3, hbdispls, MPI_SHORT, &t);
    type_guard d(committed(t));
    EXPECT_DECODES(d.t);

    MPI_Type_indexed(4, blens, displs, c.t, &t);          /* nested */
    type_guard e(committed(t));
    EXPECT_DECODES(e.t);
}

TEST(mpi_decode, struct_type)
{
    int blens[]             = {1, 2, 3};
    MPI_Aint displs[]       = {0, 8, 32};
    MPI_Datatype v, t;
    MPI_Type_vector(2, 1, 3, MPI_INT, &v);
    type_guard vg(v);
    MPI_Datatype types[]    = {MPI_DOUBLE, MPI_INT, v};
    MPI_Type_create_struct(3, blens, displs, types, &t);
    type_guard s(committed(t));
    EXPECT_DECODES(s.t);

    /* LAMMPS-like: struct of indexed_block members */
    int idx1[] = {3, 0, 7}, idx2[] = {1, 5};
    MPI_Datatype ib1, ib2;
    MPI_Type_create_indexed_block(3, 3, idx1, MPI_DOUBLE, &ib1);
    MPI_Type_create_indexed_block(2, 1, idx2, MPI_DOUBLE, &ib2);
    type_guard g1(ib1), g2(ib2);
    int sblens[]       = {1, 1};
    MPI_Aint sdispls[] = {0, 4096};
    MPI_Datatype stypes[] = {ib1, ib2};
    MPI_Type_create_struct(2, sblens, sdispls, stypes, &t);
    type_guard l(committed(t));
    EXPECT_DECODES(l.t);
}

TEST(mpi_decode, resized)
{
    MPI_Datatype t, r;
    MPI_Type_vector(3, 1, 4, MPI_DOUBLE, &t);
    type_guard v(t);
    MPI_Type_create_resized(v.t, 0, 8, &r);               /* x-face trick */
    type_guard rg(committed(r));
    EXPECT_DECODES(rg.t);

    MPI_Type_contiguous(5, rg.t, &t);                     /* interleaved */
    type_guard c(committed(t));
    EXPECT_DECODES(c.t);

    MPI_Type_create_resized(MPI_INT, -8, 24, &r);         /* lb below data */
    type_guard n(committed(r));
    EXPECT_DECODES(n.t);
}

TEST(mpi_decode, subarray)
{
    int sizes[]    = {6, 7, 8};
    int subsizes[] = {2, 3, 4};
    int starts[]   = {1, 2, 3};
    MPI_Datatype t;

    MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C,
                             MPI_DOUBLE, &t);
    type_guard c(committed(t));
    EXPECT_DECODES(c.t);

    MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_FORTRAN,
                             MPI_FLOAT, &t);
    type_guard f(committed(t));
    EXPECT_DECODES(f.t);

    MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, c.t,
                             &t);                           /* nested */
    type_guard n(committed(t));
    EXPECT_DECODES(n.t);
}

TEST(mpi_decode, darray)
{
    int gsizes[] = {10, 9, 7};
    int psizes[] = {2, 3, 1};
    int dist_block[]  = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK,
                         MPI_DISTRIBUTE_NONE};
    int dist_cyclic[] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC,
                         MPI_DISTRIBUTE_NONE};
    int dargs_dflt[]  = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG,
                         MPI_DISTRIBUTE_DFLT_DARG};
    int dargs[]       = {2, 2, MPI_DISTRIBUTE_DFLT_DARG};
    MPI_Datatype t;

    for (int rank = 0; rank < 6; ++rank) {
        for (int order : {MPI_ORDER_C, MPI_ORDER_FORTRAN}) {
            MPI_Type_create_darray(6, rank, 3, gsizes, dist_block, dargs_dflt,
                                   psizes, order, MPI_DOUBLE, &t);
            type_guard b(committed(t));
            EXPECT_DECODES(b.t) << "block, rank " << rank;

            MPI_Type_create_darray(6, rank, 3, gsizes, dist_cyclic, dargs,
                                   psizes, order, MPI_INT, &t);
            type_guard c(committed(t));
            EXPECT_DECODES(c.t) << "cyclic(2), rank " << rank;

            MPI_Type_create_darray(6, rank, 3, gsizes, dist_cyclic,
                                   dargs_dflt, psizes, order, MPI_FLOAT, &t);
            type_guard d(committed(t));
            EXPECT_DECODES(d.t) << "cyclic, rank " << rank;

            int dargs_block[] = {6, 3, MPI_DISTRIBUTE_DFLT_DARG};
            MPI_Type_create_darray(6, rank, 3, gsizes, dist_block,
                                   dargs_block, psizes, order, MPI_SHORT, &t);
            type_guard e(committed(t));
            EXPECT_DECODES(e.t) << "block(6,3), rank " << rank;
        }
    }
}

TEST(mpi_decode, bad_input)
{
    umr_layout_t *l = nullptr;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, umr_mpi_dtype_decode(MPI_DATATYPE_NULL, &l));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, umr_mpi_dtype_decode(MPI_INT, nullptr));

    /* negative extent: MPI allows it, the layout does not -> pass through */
    MPI_Datatype r;
    MPI_Type_create_resized(MPI_INT, 0, -4, &r);
    type_guard n(committed(r));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, umr_mpi_dtype_decode(n.t, &l));
}

TEST(mpi_decode, cache)
{
    umr_mpi_dtype_stats_t s0, s1;
    MPI_Datatype t;

    EXPECT_EQ(nullptr, umr_mpi_dtype_get(MPI_INT)); /* not initialised */
    ASSERT_EQ(MPI_SUCCESS, umr_mpi_dtype_cache_init());
    umr_mpi_dtype_cache_stats(&s0);

    MPI_Type_vector(8, 2, 5, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    const umr_mpi_dtype_t *e = umr_mpi_dtype_get(t);
    ASSERT_NE(nullptr, e);
    ASSERT_NE(nullptr, e->layout);
    EXPECT_EQ(8u * 2 * 8, e->size);
    EXPECT_EQ(0, e->lb);
    EXPECT_EQ((7 * 5 + 2) * 8, e->extent);
    EXPECT_EQ(8u, e->num_blocks);
    EXPECT_FALSE(e->is_contig);
    EXPECT_EQ("", compare_with_mpi(t, e->layout));
    EXPECT_EQ(e, umr_mpi_dtype_get(t)); /* decoded once */

    const umr_mpi_dtype_t *i = umr_mpi_dtype_get(MPI_INT);
    ASSERT_NE(nullptr, i);
    EXPECT_TRUE(i->is_contig);
    EXPECT_EQ(1u, i->num_blocks);
    EXPECT_EQ(i, umr_mpi_dtype_get(MPI_INT));

    MPI_Datatype r;
    MPI_Type_create_resized(MPI_INT, 0, -4, &r);
    MPI_Type_commit(&r);
    const umr_mpi_dtype_t *u = umr_mpi_dtype_get(r);
    ASSERT_NE(nullptr, u);
    EXPECT_EQ(nullptr, u->layout);   /* pass through */
    EXPECT_EQ(4u, u->size);
    EXPECT_EQ(-4, u->extent);

    umr_mpi_dtype_cache_stats(&s1);
    EXPECT_EQ(s0.decoded + 2, s1.decoded);
    EXPECT_EQ(s0.unsupported + 1, s1.unsupported);
    EXPECT_EQ(s0.hits + 2, s1.hits);

    /* freeing the types frees their entries */
    MPI_Type_free(&t);
    MPI_Type_free(&r);
    umr_mpi_dtype_cache_stats(&s1);
    EXPECT_EQ(s0.freed + 2, s1.freed);

    /* a new type (maybe at the same handle) is decoded anew */
    MPI_Type_contiguous(3, MPI_INT, &t);
    MPI_Type_commit(&t);
    e = umr_mpi_dtype_get(t);
    ASSERT_NE(nullptr, e);
    EXPECT_EQ(12u, e->size);
    EXPECT_TRUE(e->is_contig);
    MPI_Type_free(&t);

    umr_mpi_dtype_cache_fini();            /* drops MPI_INT's entry */
    umr_mpi_dtype_cache_stats(&s1);
    EXPECT_EQ(s0.freed + 4, s1.freed);
    EXPECT_EQ(nullptr, umr_mpi_dtype_get(MPI_INT));
}

/* A type the caller says cannot be read back (one Open MPI built itself,
 * without construction arguments) is cached undecoded: size and extent,
 * no layout, nothing decoded; later lookups find it; it goes with its
 * type. */
TEST(mpi_decode, cache_opaque)
{
    umr_mpi_dtype_stats_t s0, s1;
    MPI_Datatype t;

    ASSERT_EQ(MPI_SUCCESS, umr_mpi_dtype_cache_init());
    umr_mpi_dtype_cache_stats(&s0);
    MPI_Type_vector(8, 2, 5, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    const umr_mpi_dtype_t *e = umr_mpi_dtype_get_opaque(t);
    ASSERT_NE(nullptr, e);
    EXPECT_EQ(nullptr, e->layout);
    EXPECT_EQ(8u * 2 * 8, e->size);
    EXPECT_EQ((7 * 5 + 2) * 8, e->extent);
    EXPECT_EQ(e, umr_mpi_dtype_get(t));         /* not decoded after all */
    EXPECT_EQ(e, umr_mpi_dtype_get_opaque(t));
    umr_mpi_dtype_cache_stats(&s1);
    EXPECT_EQ(s0.decoded, s1.decoded);
    EXPECT_EQ(s0.unsupported, s1.unsupported);
    EXPECT_EQ(s0.opaque + 1, s1.opaque);
    EXPECT_EQ(s0.hits + 2, s1.hits);
    MPI_Type_free(&t);
    umr_mpi_dtype_cache_stats(&s1);
    EXPECT_EQ(s0.freed + 1, s1.freed);
    umr_mpi_dtype_cache_fini();
}

/* issue 12 finding 1, through the MPI: explicit bounds inside a struct */
TEST(mpi_decode, struct_bound_markers)
{
    MPI_Datatype c8, r, c2, c6, sub, t;
    MPI_Type_contiguous(8, MPI_BYTE, &c8);
    type_guard g8(c8);
    MPI_Type_create_resized(c8, -4, 16, &r);
    type_guard gr(r);
    MPI_Type_contiguous(2, MPI_BYTE, &c2);
    type_guard g2(c2);

    int blens[]           = {1, 1};
    MPI_Aint displs[]     = {100, 8};
    MPI_Datatype types[]  = {r, c2};
    MPI_Type_create_struct(2, blens, displs, types, &t);
    type_guard s1(committed(t));
    umr_layout_t *l = nullptr;
    ASSERT_EQ(UCS_OK, umr_mpi_dtype_decode(s1.t, &l));
    EXPECT_EQ(96, umr_layout_lb(l));
    EXPECT_EQ(16, umr_layout_extent(l));
    EXPECT_EQ("", compare_with_mpi(s1.t, l));
    umr_layout_free(l);

    int sizes[] = {10}, subsizes[] = {3}, starts[] = {2};
    MPI_Type_create_subarray(1, sizes, subsizes, starts, MPI_ORDER_C,
                             MPI_FLOAT, &sub);
    type_guard gs(sub);
    MPI_Type_contiguous(6, MPI_BYTE, &c6);
    type_guard g6(c6);
    MPI_Aint displs2[]    = {0, 64};
    MPI_Datatype types2[] = {sub, c6};
    MPI_Type_create_struct(2, blens, displs2, types2, &t);
    type_guard s2(committed(t));
    ASSERT_EQ(UCS_OK, umr_mpi_dtype_decode(s2.t, &l));
    EXPECT_EQ(0, umr_layout_lb(l));
    EXPECT_EQ(40, umr_layout_extent(l));
    EXPECT_EQ("", compare_with_mpi(s2.t, l));
    umr_layout_free(l);

    /* an empty resized member keeps its bounds */
    MPI_Datatype z, rz;
    MPI_Type_contiguous(0, MPI_INT, &z);
    type_guard gz(z);
    MPI_Type_create_resized(z, 8, 16, &rz);
    type_guard grz(rz);
    MPI_Aint displs3[]    = {100, 0};
    MPI_Datatype types3[] = {rz, MPI_INT};
    MPI_Type_create_struct(2, blens, displs3, types3, &t);
    type_guard s3(committed(t));
    EXPECT_DECODES(s3.t);
}

/* MPI's alignment padding (epsilon) of unmarked extents */
TEST(mpi_decode, alignment_padding)
{
    int blens[]          = {1, 1};
    MPI_Aint displs[]    = {0, 8};
    MPI_Datatype types[] = {MPI_DOUBLE, MPI_CHAR};
    MPI_Datatype t;

    MPI_Type_create_struct(2, blens, displs, types, &t);   /* extent 16 */
    type_guard s(committed(t));
    EXPECT_DECODES(s.t);

    MPI_Type_create_hvector(2, 1, 6, MPI_INT, &t);         /* extent 12 */
    type_guard h(committed(t));
    EXPECT_DECODES(h.t);

    MPI_Type_contiguous(3, s.t, &t);                       /* 48 B apart */
    type_guard c(committed(t));
    EXPECT_DECODES(c.t);

    /* particles: struct { double x[3]; int id; char tag; } */
    int pblens[]          = {3, 1, 1};
    MPI_Aint pdispls[]    = {0, 24, 28};
    MPI_Datatype ptypes[] = {MPI_DOUBLE, MPI_INT, MPI_CHAR};
    MPI_Type_create_struct(3, pblens, pdispls, ptypes, &t);
    type_guard p(committed(t));
    EXPECT_DECODES(p.t);

    /* pair types as struct members */
    MPI_Datatype qtypes[] = {MPI_DOUBLE_INT, MPI_SHORT_INT, MPI_CHAR};
    MPI_Aint qdispls[]    = {0, 16, 24};
    MPI_Type_create_struct(3, pblens, qdispls, qtypes, &t);
    type_guard q(committed(t));
    EXPECT_DECODES(q.t);
}

/* where the MPI's answer differs from the standard's, the decoder reports
 * the type as not expressible instead of decoding it wrong */
TEST(mpi_decode, differing_bounds_are_unsupported)
{
    /* Open MPI 4.1 reads a vector stride of -1 byte as "the inner extent"
     * and packs vector(4, 1, -1, MPI_BYTE) forwards */
    MPI_Datatype v;
    MPI_Type_vector(4, 1, -1, MPI_BYTE, &v);
    type_guard gv(committed(v));
    MPI_Aint vlb, vextent;
    MPI_Type_get_extent(gv.t, &vlb, &vextent);
    umr_layout_t *vl = nullptr;
    ucs_status_t vstatus = umr_mpi_dtype_decode(gv.t, &vl);
    if (vlb == -3) {
        ASSERT_EQ(UCS_OK, vstatus);
        EXPECT_EQ("", compare_with_mpi(gv.t, vl));
        umr_layout_free(vl);
    } else {
        EXPECT_EQ(UCS_ERR_UNSUPPORTED, vstatus) << "MPI lb " << vlb;
    }

    /* a block of length 0 has no effect, whatever its type */
    int zblens[]          = {0, 1};
    MPI_Aint zdispls[]    = {64, 0};
    MPI_Datatype ztypes[] = {gv.t, MPI_INT};
    MPI_Datatype zs;
    MPI_Type_create_struct(2, zblens, zdispls, ztypes, &zs);
    type_guard gzs(committed(zs));
    EXPECT_DECODES(gzs.t);

    /* Open MPI gives an empty member's displacement to a struct's bounds */
    MPI_Datatype z, t;
    MPI_Type_contiguous(0, MPI_INT, &z);
    type_guard gz(z);
    int blens[]          = {1, 1};
    MPI_Aint displs[]    = {100, 0};
    MPI_Datatype types[] = {z, MPI_INT};
    MPI_Type_create_struct(2, blens, displs, types, &t);
    type_guard s(committed(t));

    MPI_Aint lb, extent;
    MPI_Type_get_extent(s.t, &lb, &extent);
    umr_layout_t *l = nullptr;
    ucs_status_t status = umr_mpi_dtype_decode(s.t, &l);
    if (extent == 4) {
        /* an MPI that follows the standard here */
        ASSERT_EQ(UCS_OK, status);
        EXPECT_EQ("", compare_with_mpi(s.t, l));
        umr_layout_free(l);
    } else {
        EXPECT_EQ(UCS_ERR_UNSUPPORTED, status) << "MPI extent " << extent;
    }
}

/* threads asking for the same new types get one entry per type, decoded once */
TEST(mpi_decode, cache_threads)
{
    int provided;
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        GTEST_SKIP() << "the MPI gives no MPI_THREAD_MULTIPLE";
    }
    ASSERT_EQ(MPI_SUCCESS, umr_mpi_dtype_cache_init());

    const int num_types = 64, num_threads = 4;
    std::vector<MPI_Datatype> types(num_types);
    for (int i = 0; i < num_types; ++i) {
        MPI_Type_vector(2 + i, 1 + i % 3, 5 + i % 7, MPI_DOUBLE, &types[i]);
        MPI_Type_commit(&types[i]);
    }
    umr_mpi_dtype_stats_t s0, s1;
    umr_mpi_dtype_cache_stats(&s0);

    std::vector<std::vector<const umr_mpi_dtype_t*>> seen(num_threads);
    std::atomic<int> go(0);
    std::vector<std::thread> threads;
    for (int t = 0; t < num_threads; ++t) {
        threads.emplace_back([&, t]() {
            while (go.load() == 0) {
            }
            for (int i = 0; i < num_types; ++i) {
                seen[t].push_back(umr_mpi_dtype_get(types[i]));
            }
        });
    }
    go = 1;
    for (std::thread &th : threads) {
        th.join();
    }

    umr_mpi_dtype_cache_stats(&s1);
    EXPECT_EQ(s0.decoded + num_types, s1.decoded);
    EXPECT_EQ(s0.hits + (unsigned long)num_types * (num_threads - 1), s1.hits);
    for (int i = 0; i < num_types; ++i) {
        ASSERT_NE(nullptr, seen[0][i]);
        ASSERT_NE(nullptr, seen[0][i]->layout);
        EXPECT_EQ("", compare_with_mpi(types[i], seen[0][i]->layout, 1));
        for (int t = 1; t < num_threads; ++t) {
            EXPECT_EQ(seen[0][i], seen[t][i]) << "type " << i;
        }
        MPI_Type_free(&types[i]);
    }
    umr_mpi_dtype_cache_stats(&s1);
    EXPECT_EQ(s0.freed + num_types, s1.freed);
    umr_mpi_dtype_cache_fini();
}
