/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Shared test utilities for layouts (owner: layout engine; free for the
 * engine, transport and MPI suites to use):
 *
 *  - layout_spec: a plain description of a layout built from the public
 *    constructors, independent of the library's IR;
 *  - reference(): a naive walker giving the byte offsets of a spec in
 *    type-map order and its MPI bounds (the oracle for pack/unpack);
 *  - random_layout(): a seeded generator of nested layouts (vectors of
 *    indexed of structs, negative strides, resized extents, ...);
 *  - interpret_plan(): a model of the NIC that runs a lowered plan with the
 *    interleaved/list formulas, checks every hardware limit and returns the
 *    memory blocks the top key addresses, in order.
 *
 * Typical use:
 *     std::mt19937_64 rng(seed);
 *     umr_test::spec_ptr s = umr_test::random_layout(rng);
 *     umr_test::layout_ptr l = umr_test::build(s);      // ASSERT_TRUE(l)
 *     umr_test::block_list want = umr_test::reference_blocks(s, count);
 */
#ifndef UMR_TEST_LAYOUT_H_
#define UMR_TEST_LAYOUT_H_

#include "layout.h"

#include <cstddef>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace umr_test {

struct layout_spec;
/* NULL means "one byte", as for the C API's inner == NULL. */
typedef std::shared_ptr<const layout_spec> spec_ptr;

struct layout_spec {
    enum kind_t { CONTIG, VECTOR, INDEXED, STRUCT, RESIZED };

    kind_t                 kind;
    size_t                 len       = 0;  /* CONTIG */
    size_t                 count     = 0;  /* VECTOR */
    size_t                 blocklen  = 0;  /* VECTOR */
    ptrdiff_t              stride    = 0;  /* VECTOR */
    std::vector<size_t>    blocklens;      /* INDEXED, STRUCT */
    std::vector<ptrdiff_t> displs;         /* INDEXED, STRUCT */
    std::vector<spec_ptr>  inners;         /* STRUCT: one per block, else [0] */
    ptrdiff_t              lb        = 0;  /* RESIZED */
    ptrdiff_t              extent    = 0;  /* RESIZED */
};

spec_ptr contig(size_t len);
spec_ptr vector(size_t count, size_t blocklen, ptrdiff_t stride,
                spec_ptr inner);
spec_ptr indexed(const std::vector<size_t> &blocklens,
                 const std::vector<ptrdiff_t> &displs, spec_ptr inner);
spec_ptr structure(const std::vector<size_t> &blocklens,
                   const std::vector<ptrdiff_t> &displs,
                   const std::vector<spec_ptr> &inners);
spec_ptr resized(spec_ptr inner, ptrdiff_t lb, ptrdiff_t extent);

std::string to_string(const spec_ptr &spec);

/* Status name without linking libucs (the layout engine needs only libc). */
std::string status_str(ucs_status_t status);

/* Owning handle for a C layout. */
struct layout_deleter {
    void operator()(umr_layout_t *l) const { umr_layout_free(l); }
};
typedef std::unique_ptr<umr_layout_t, layout_deleter> layout_ptr;

/* Builds the spec with the public constructors; empty on error (status_p). */
layout_ptr build(const spec_ptr &spec, ucs_status_t *status_p = nullptr);

/* ---- naive reference ---------------------------------------------------- */

struct ref_layout {
    std::vector<ptrdiff_t> bytes;   /* offset of every data byte, in order */
    ptrdiff_t              lb = 0;  /* MPI bounds */
    ptrdiff_t              ub = 0;
    bool                   lb_marked = false; /* explicit (resized) bounds */
    bool                   ub_marked = false;
    ptrdiff_t extent() const { return ub - lb; }
    ptrdiff_t true_lb() const;
    ptrdiff_t true_ub() const;
};

ref_layout reference(const spec_ptr &spec);

/* Offsets of the packed stream of (spec, count), from base. */
std::vector<ptrdiff_t> reference_stream(const ref_layout &ref, size_t count);

typedef std::vector<std::pair<ptrdiff_t, size_t>> block_list;

/* Merges consecutive offsets that are adjacent in memory. */
block_list merge_blocks(const std::vector<ptrdiff_t> &bytes);
block_list reference_blocks(const spec_ptr &spec, size_t count);
std::string to_string(const block_list &blocks, size_t max_blocks = 16);

/* ---- random layouts ----------------------------------------------------- */

struct random_params {
    unsigned  max_depth  = 4;     /* constructor nesting */
    size_t    max_size   = 2048;  /* data bytes of one element */
    ptrdiff_t max_span   = 16384; /* true_ub - true_lb and |bounds| */
    size_t    max_count  = 6;     /* vector/indexed counts */
    bool      negative   = true;  /* negative strides and displacements */
};

spec_ptr random_layout(std::mt19937_64 &rng,
                       const random_params &params = random_params());

/* Random limits, small enough to force splitting and nesting. */
umr_layout_limits_t random_limits(std::mt19937_64 &rng);

/* ---- hardware model ------------------------------------------------------ */

struct hw_result {
    bool        ok = false;
    std::string error;        /* first violated rule, when !ok */
    block_list  blocks;       /* memory addressed by the top key, merged */
    uint32_t    max_depth = 0;
    uint64_t    mem_blocks = 0; /* memory blocks addressed before merging */
};

/*
 * Runs plan through the interleaved/list formulas and checks it against
 * lim (entries per key, 16-bit fields, list bytes, key bytes, depth, keys,
 * children before parents, child bounds, key lengths, cost fields).
 */
hw_result interpret_plan(const umr_layout_plan_t *plan,
                         const umr_layout_limits_t &lim);

std::string to_string(const umr_layout_plan_t *plan, size_t max_entries = 8);

} /* namespace umr_test */

#endif
