/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: Open MPI's memory hooks feed UCM (see
 * common_umr_memhooks.h).
 */
#include "common_umr_memhooks.h"
#include "common_umr.h"

#include <opal/mca/base/mca_base_framework.h>
#include <opal/mca/memory/base/base.h>
#include <opal/memoryhooks/memory.h>

#include <ucm/api/ucm.h>

static int mca_common_umr_memhooks_on;

static void mca_common_umr_memhooks_release(void *buf, size_t length,
                                            void *cbdata, bool from_alloc)
{
    ucm_vm_munmap(buf, length);
}

void mca_common_umr_memhooks_init(void)
{
    const int need = OPAL_MEMORY_FREE_SUPPORT | OPAL_MEMORY_MUNMAP_SUPPORT;

    if (mca_common_umr_memhooks_on ||
        (mca_base_framework_open(&opal_memory_base_framework, 0) !=
         OPAL_SUCCESS) ||
        ((opal_mem_hooks_support_level() & need) != need)) {
        MCA_COMMON_UMR_VERBOSE(5, "Open MPI's memory hooks %s",
                               mca_common_umr_memhooks_on ? "already in use" :
                               "not available: UCM's own hooks");
        return;
    }
    /* before the first UCM handler of the caches (ucm.h: external events
     * take effect only for handlers added afterwards) */
    ucm_set_external_event(UCM_EVENT_VM_UNMAPPED);
    if (opal_mem_hooks_register_release(mca_common_umr_memhooks_release,
                                        NULL) != OPAL_SUCCESS) {
        ucm_unset_external_event(UCM_EVENT_VM_UNMAPPED);
        MCA_COMMON_UMR_VERBOSE(5, "cannot register with Open MPI's memory "
                               "hooks: UCM's own hooks");
        return;
    }
    mca_common_umr_memhooks_on = 1;
    MCA_COMMON_UMR_VERBOSE(5, "Open MPI's memory hooks pass unmaps on to UCM");
}

void mca_common_umr_memhooks_fini(void)
{
    if (mca_common_umr_memhooks_on) {
        opal_mem_hooks_unregister_release(mca_common_umr_memhooks_release);
        mca_common_umr_memhooks_on = 0;
    }
}
