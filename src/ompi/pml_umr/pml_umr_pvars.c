/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr: MPI_T performance variables pml_umr_<name> (the tests read
 * them): pml/umr's counters and those of the shared objects (common_umr.h).
 */
#include "pml_umr_module.h"
#include "common_umr.h"

#include <opal/mca/base/mca_base_pvar.h>

static int mca_pml_umr_pvar_get(const struct mca_base_pvar_t *pvar,
                                void *value, void *obj)
{
    *(unsigned long*)value = *(const uint64_t*)pvar->ctx;
    return OPAL_SUCCESS;
}

/* errors: pml/umr's and the shared objects' (failed connections) */
static int mca_pml_umr_pvar_get_errors(const struct mca_base_pvar_t *pvar,
                                       void *value, void *obj)
{
    *(unsigned long*)value = mca_pml_umr.cnt.errors +
                             mca_common_umr.cnt.errors;
    return OPAL_SUCCESS;
}

void mca_pml_umr_pvars_register(void)
{
    const mca_base_component_t *c = mca_pml_umr.self;
#define MCA_PML_UMR_PVAR(_name, _desc) \
        {#_name, _desc, &mca_pml_umr.cnt._name, MCA_BASE_PVAR_CLASS_COUNTER}
    const struct {
        const char *name, *desc;
        uint64_t   *counter;    /* NULL: the errors' sum */
        int        cls;
    } pvars[] = {
        MCA_PML_UMR_PVAR(zcopy_sends,
                         "Messages sent zero-copy (control messages)"),
        MCA_PML_UMR_PVAR(zcopy_recvs,
                         "Messages received zero-copy (gets completed)"),
        MCA_PML_UMR_PVAR(zcopy_bytes, "Bytes sent zero-copy"),
        MCA_PML_UMR_PVAR(escapes, "Z-byte messages starting with the magic, "
                         "sent zero-copy"),
        MCA_PML_UMR_PVAR(recv_checked,
                         "Receives large enough to match a control message"),
        MCA_PML_UMR_PVAR(passthrough_sends,
                         "Derived-datatype sends passed through"),
        MCA_PML_UMR_PVAR(fallbacks, "Sends chosen zero-copy that passed "
                         "through (layout keys, connection)"),
        MCA_PML_UMR_PVAR(declined, "Control messages declined by cost "
                         "(the data came through the wrapped PML)"),
        MCA_PML_UMR_PVAR(acks_dropped, "Acks dropped: they named no "
                         "zero-copy send waiting for that peer's ack"),
        {"keys_live", "Memory registrations alive now",
         &mca_common_umr.cnt.keys_live, MCA_BASE_PVAR_CLASS_LEVEL},
        {"conns_max", "Most peers connected at once (within "
         "pml_umr_max_conns)", &mca_common_umr.cnt.conns_max,
         MCA_BASE_PVAR_CLASS_HIGHWATERMARK},
        {"disconnects", "Connections to peers dropped (least recently used, "
         "to stay within pml_umr_max_conns, or by the peer)",
         &mca_common_umr.cnt.disconnects, MCA_BASE_PVAR_CLASS_COUNTER},
        {"budget_passthrough", "Zero-copy messages passed through for want "
         "of a connection (budget full, every connected peer busy; or a "
         "disconnect under way): of fallbacks and declined",
         &mca_common_umr.cnt.budget_passthrough, MCA_BASE_PVAR_CLASS_COUNTER},
        {"keys_reclaimed", "Idle layout keys given back because the key "
         "pool ran short (least recently used first)",
         &mca_common_umr.cnt.keys_reclaimed, MCA_BASE_PVAR_CLASS_COUNTER},
        {"errors", "Zero-copy transfers that failed", NULL,
         MCA_BASE_PVAR_CLASS_COUNTER},
    };
#undef MCA_PML_UMR_PVAR
    size_t i;

    for (i = 0; i < sizeof(pvars) / sizeof(pvars[0]); ++i) {
        (void)mca_base_component_pvar_register(c, pvars[i].name,
                pvars[i].desc, OPAL_INFO_LVL_4, pvars[i].cls,
                MCA_BASE_VAR_TYPE_UNSIGNED_LONG, NULL,
                MCA_BASE_VAR_BIND_NO_OBJECT,
                MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS,
                (pvars[i].counter != NULL) ? mca_pml_umr_pvar_get :
                                             mca_pml_umr_pvar_get_errors,
                NULL, NULL, pvars[i].counter);
    }
}
