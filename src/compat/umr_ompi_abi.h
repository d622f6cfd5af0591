/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr: the Open MPI classes whose layout pml/umr depends on, because
 * it allocates them, embeds them or reads their fields (requests, free
 * lists, communicators, datatypes, convertors, the mutexes inside them).
 * Each has a class descriptor NAME_class in Open MPI's libraries whose
 * cls_sizeof is the size the installed Open MPI was built with: configure
 * (m4/ompi.m4, UMR_OMPI_ABI_CHECK) and pml/umr at load time compare it with
 * the size compiled from the headers. No includes: the user includes Open
 * MPI's headers first.
 */
#ifndef UMR_OMPI_ABI_H_
#define UMR_OMPI_ABI_H_

#define UMR_OMPI_ABI_CLASSES(_X) \
    _X(opal_mutex_t) \
    _X(opal_list_t) \
    _X(opal_free_list_t) \
    _X(opal_hash_table_t) \
    _X(opal_convertor_t) \
    _X(ompi_request_t) \
    _X(ompi_communicator_t) \
    _X(ompi_datatype_t) \
    _X(ompi_message_t) \
    _X(ompi_proc_t) \
    _X(mca_pml_base_request_t)

#endif
