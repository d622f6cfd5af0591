/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: the tags of the core's internal messages on
 * MPI_COMM_WORLD under Open MPI (common_umr_binding.h): negative, so never
 * matched by MPI_ANY_TAG, even in pml ucx's 24-bit tag field, and far below
 * the collectives'. Plain C, so that MPI programs (the tests) use the same
 * figures.
 */
#ifndef MCA_COMMON_UMR_TAGS_H_
#define MCA_COMMON_UMR_TAGS_H_

#define MCA_COMMON_UMR_TAG_ACK     (-0x700001)   /* UMR_MPI_MSG_ACK */
#define MCA_COMMON_UMR_TAG_CONN    (-0x700002)   /* UMR_MPI_MSG_CONN */
#define MCA_COMMON_UMR_TAG_READY   (-0x700003)   /* UMR_MPI_MSG_READY */
#define MCA_COMMON_UMR_TAG_DISC    (-0x700004)   /* UMR_MPI_MSG_DISC */
#define MCA_COMMON_UMR_TAG_DATA    (-0x700011)   /* UMR_MPI_MSG_DATA */

#endif
