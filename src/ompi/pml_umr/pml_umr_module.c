/**
 * pml/umr module: the function table installed in front of the wrapped PML.
 * Entries pml/umr does not care about call the wrapped PML directly.
 */
#include "pml_umr.h"

static int mca_pml_umr_add_procs(struct ompi_proc_t **procs, size_t nprocs)
{
    static int pvars_done;

    if (!pvars_done) {
        mca_pml_umr_pvars_register();
        pvars_done = 1;
    }
    return mca_pml_umr.real.pml_add_procs(procs, nprocs);
}

static int mca_pml_umr_del_procs(struct ompi_proc_t **procs, size_t nprocs)
{
    return mca_pml_umr.real.pml_del_procs(procs, nprocs);
}

static int mca_pml_umr_enable(bool enable)
{
    return mca_pml_umr.real.pml_enable(enable);
}

static int mca_pml_umr_add_comm(struct ompi_communicator_t *comm)
{
    return mca_pml_umr.real.pml_add_comm(comm);
}

static int mca_pml_umr_del_comm(struct ompi_communicator_t *comm)
{
    return mca_pml_umr.real.pml_del_comm(comm);
}

static int mca_pml_umr_dump(struct ompi_communicator_t *comm, int verbose)
{
    return mca_pml_umr.real.pml_dump(comm, verbose);
}

static int mca_pml_umr_ft_event(int state)
{
    return (mca_pml_umr.real.pml_ft_event != NULL) ?
           mca_pml_umr.real.pml_ft_event(state) : OMPI_SUCCESS;
}

/* progress, max_contextid, max_tag and flags are copied from the wrapped
 * PML when pml/umr interposes. */
mca_pml_base_module_t mca_pml_umr_module = {
    .pml_add_procs     = mca_pml_umr_add_procs,
    .pml_del_procs     = mca_pml_umr_del_procs,
    .pml_enable        = mca_pml_umr_enable,
    .pml_progress      = NULL,
    .pml_add_comm      = mca_pml_umr_add_comm,
    .pml_del_comm      = mca_pml_umr_del_comm,
    .pml_irecv_init    = mca_pml_umr_irecv_init,
    .pml_irecv         = mca_pml_umr_irecv,
    .pml_recv          = mca_pml_umr_recv,
    .pml_isend_init    = mca_pml_umr_isend_init,
    .pml_isend         = mca_pml_umr_isend,
    .pml_send          = mca_pml_umr_send,
    .pml_iprobe        = mca_pml_umr_iprobe,
    .pml_probe         = mca_pml_umr_probe,
    .pml_start         = mca_pml_umr_start,
    .pml_improbe       = mca_pml_umr_improbe,
    .pml_mprobe        = mca_pml_umr_mprobe,
    .pml_imrecv        = mca_pml_umr_imrecv,
    .pml_mrecv         = mca_pml_umr_mrecv,
    .pml_dump          = mca_pml_umr_dump,
    .pml_ft_event      = mca_pml_umr_ft_event,
    .pml_max_contextid = 0,
    .pml_max_tag       = 0,
    .pml_flags         = 0
};
