/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Deprecated: the layout engine's former names. The layout engine is its own
 * library now (umr_layout.h, libumr_layout, prefix umr_layout_); this header
 * maps the uct_umr_layout_* names of mlx5_umr 0.1 onto it, so that programs
 * written for them keep compiling. uct_umr.h includes it unless
 * UMR_LAYOUT_NO_DEPRECATED is defined. New code: umr_layout.h.
 */
#ifndef UCT_UMR_LAYOUT_H_
#define UCT_UMR_LAYOUT_H_

#include "umr_layout.h"

typedef umr_layout_t uct_umr_layout_t;

#define uct_umr_layout_contig       umr_layout_contig
#define uct_umr_layout_vector       umr_layout_vector
#define uct_umr_layout_indexed      umr_layout_indexed
#define uct_umr_layout_struct       umr_layout_struct
#define uct_umr_layout_resized      umr_layout_resized
#define uct_umr_layout_align        umr_layout_align
#define uct_umr_layout_dup          umr_layout_dup
#define uct_umr_layout_free         umr_layout_free
#define uct_umr_layout_size         umr_layout_size
#define uct_umr_layout_extent       umr_layout_extent
#define uct_umr_layout_lb           umr_layout_lb
#define uct_umr_layout_true_lb      umr_layout_true_lb
#define uct_umr_layout_true_ub      umr_layout_true_ub
#define uct_umr_layout_alignment    umr_layout_alignment
#define uct_umr_layout_num_blocks   umr_layout_num_blocks
#define uct_umr_layout_is_contig    umr_layout_is_contig
#define uct_umr_layout_hash         umr_layout_hash
#define uct_umr_layout_equal        umr_layout_equal
#define uct_umr_layout_str          umr_layout_str
#define uct_umr_layout_last_error   umr_layout_last_error
#define uct_umr_layout_pack         umr_layout_pack
#define uct_umr_layout_unpack       umr_layout_unpack
#define uct_umr_layout_pack_range   umr_layout_pack_range
#define uct_umr_layout_unpack_range umr_layout_unpack_range

#endif
