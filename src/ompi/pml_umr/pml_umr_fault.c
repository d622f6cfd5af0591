/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * pml/umr fault injection (see pml_umr_fault.h).
 */
#include <stddef.h>

#include "pml_umr_fault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned mca_pml_umr_fault_mask;

static const char *mca_pml_umr_fault_names[MCA_PML_UMR_FAULT_NUM] = {
    "connect", "key", "mdwait", "post", "completion", "ctlsend"
};

int mca_pml_umr_fault_init(const char *spec, char *why, size_t len)
{
    char *copy, *tok, *save = NULL;
    unsigned mask = 0;
    int i, rc = 0;

    mca_pml_umr_fault_mask = 0;
    if ((spec == NULL) || (spec[0] == '\0')) {
        return 0;
    }
    if ((copy = strdup(spec)) == NULL) {
        snprintf(why, len, "out of memory");
        return -1;
    }
    for (tok = strtok_r(copy, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        for (i = 0; i < MCA_PML_UMR_FAULT_NUM; ++i) {
            if (!strcmp(tok, mca_pml_umr_fault_names[i])) {
                mask |= 1u << i;
                break;
            }
        }
        if (i == MCA_PML_UMR_FAULT_NUM) {
            snprintf(why, len, "'%s' is not one of connect, key, mdwait, "
                     "post, completion, ctlsend", tok);
            rc = -1;
            break;
        }
    }
    free(copy);
    if (rc == 0) {
        mca_pml_umr_fault_mask = mask;
    }
    return rc;
}
