/**
 * osc/umr: the component's state (osc_umr.h), apart from the component
 * structure so that every object uses it from above.
 */
#include "osc_umr.h"

mca_osc_umr_t mca_osc_umr;
