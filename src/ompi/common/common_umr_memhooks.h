/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: one set of memory hooks in the process. The rails'
 * registration caches learn of unmapped memory through UCM. Loading UCX
 * patches libc's mmap, munmap, brk, madvise... with UCM's hooks, and Open
 * MPI's memory patcher, once something opens the memory framework (a BTL
 * that registers memory, pml ucx), patches the same functions over them:
 * whichever came last is the only one called. So, as Open MPI's common
 * UCX code does, pml/umr opens that framework itself and passes its release
 * events on to UCM as external events: both Open MPI's users of the hooks
 * and the registration caches hear of every unmap, in either order.
 */
#ifndef MCA_COMMON_UMR_MEMHOOKS_H_
#define MCA_COMMON_UMR_MEMHOOKS_H_

#include <ompi_config.h>

BEGIN_C_DECLS

/* At rail opening, before any registration cache exists; once a process.
 * Without Open MPI's hooks (none on this platform, or the framework does
 * not open) UCM's own stay in charge, as before. */
OMPI_DECLSPEC void mca_common_umr_memhooks_init(void);

/* At rail closing: no more events to pass on (the library may go). */
OMPI_DECLSPEC void mca_common_umr_memhooks_fini(void);

END_C_DECLS

#endif
