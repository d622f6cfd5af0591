/**
 * pml/umr's view of datatypes: the decoder's per-datatype cache (an MPI
 * attribute, about 180 instructions a lookup) behind a small direct-mapped
 * front keyed by the datatype's address, and in each front slot the last
 * zero-copy choice per engine, so that a message of a datatype and count
 * seen before costs a few compares instead of the cost model.
 *
 * Single-threaded like the rest of pml/umr (it steps aside under
 * MPI_THREAD_MULTIPLE). The decoder tells when an entry is freed with its
 * type (umr_mpi_dtype_cache_on_free), before the address can be reused.
 */
#include "pml_umr.h"
#include "pml_umr_choose.h"
#include "umr_mpi_dtype.h"

#define MCA_PML_UMR_DTYPE_SLOTS  64      /* power of two */

typedef struct mca_pml_umr_dtype_slot {
    ompi_datatype_t       *dt;           /* NULL: empty */
    const umr_mpi_dtype_t *info;
    size_t                 memo_count[2]; /* per engine: sw, mlx5 */
    signed char            memo[2];       /* -1 none, 0 pass, 1 zero-copy */
} mca_pml_umr_dtype_slot_t;

static mca_pml_umr_dtype_slot_t mca_pml_umr_dtype_front[MCA_PML_UMR_DTYPE_SLOTS];
static int mca_pml_umr_dtype_state; /* 0 not yet, 1 on, -1 failed / over */
static int mca_pml_umr_self_keyval = MPI_KEYVAL_INVALID;

static inline mca_pml_umr_dtype_slot_t *
mca_pml_umr_dtype_slot(const ompi_datatype_t *dt)
{
    uint64_t h = (uintptr_t)dt * 0x9e3779b97f4a7c15ull;

    return &mca_pml_umr_dtype_front[h >> 58];   /* top 6 bits */
}

static void mca_pml_umr_dtype_forget(MPI_Datatype type)
{
    mca_pml_umr_dtype_slot_t *slot = mca_pml_umr_dtype_slot(type);

    if (slot->dt == type) {
        slot->dt = NULL;
    }
}

static int mca_pml_umr_dtype_fini(MPI_Comm comm, int keyval, void *val,
                                  void *extra)
{
    mca_pml_umr_quiesce();
    if (mca_pml_umr_dtype_state == 1) {
        umr_mpi_dtype_cache_fini();
        umr_mpi_dtype_cache_on_free(NULL);
    }
    memset(mca_pml_umr_dtype_front, 0, sizeof(mca_pml_umr_dtype_front));
    mca_pml_umr_dtype_state = -1;
    PMPI_Comm_free_keyval(&mca_pml_umr_self_keyval);
    return MPI_SUCCESS;
}

/* The decoder's cache, opened at first use (MPI is up by then) and closed
 * when MPI_COMM_SELF is freed at the start of MPI_Finalize. */
static int mca_pml_umr_dtype_open(void)
{
    mca_pml_umr_dtype_state = -1;
    if ((umr_mpi_dtype_cache_init() != MPI_SUCCESS) ||
        (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, mca_pml_umr_dtype_fini,
                                 &mca_pml_umr_self_keyval, NULL) !=
         MPI_SUCCESS) ||
        (PMPI_Comm_set_attr(MPI_COMM_SELF, mca_pml_umr_self_keyval, NULL) !=
         MPI_SUCCESS)) {
        opal_output(0, "pml_umr: datatype cache unavailable: passing "
                    "everything through");
        return 0;
    }
    umr_mpi_dtype_cache_on_free(mca_pml_umr_dtype_forget);
    mca_pml_umr_dtype_state = 1;
    return 1;
}

static mca_pml_umr_dtype_slot_t *mca_pml_umr_dtype_lookup(ompi_datatype_t *dt)
{
    mca_pml_umr_dtype_slot_t *slot = mca_pml_umr_dtype_slot(dt);
    const umr_mpi_dtype_t *info;

    if (OPAL_LIKELY(slot->dt == dt)) {
        return slot;
    }
    if (OPAL_UNLIKELY(mca_pml_umr_dtype_state != 1) &&
        ((mca_pml_umr_dtype_state < 0) || !mca_pml_umr_dtype_open())) {
        return NULL;
    }
    info = umr_mpi_dtype_get(dt);
    if (info == NULL) {
        return NULL;
    }
    slot->dt      = dt;
    slot->info    = info;
    slot->memo[0] = slot->memo[1] = -1;
    return slot;
}

const umr_mpi_dtype_t *mca_pml_umr_dtype_get(ompi_datatype_t *dt)
{
    mca_pml_umr_dtype_slot_t *slot = mca_pml_umr_dtype_lookup(dt);

    return (slot != NULL) ? slot->info : NULL;
}

int mca_pml_umr_dtype_choose(ompi_datatype_t *dt, size_t count,
                             const mca_pml_umr_peer_t *peer)
{
    mca_pml_umr_dtype_slot_t *slot = mca_pml_umr_dtype_lookup(dt);
    mca_pml_umr_choose_peer_t cp;
    int e = peer->rail->is_sw ? 0 : 1;

    if (slot == NULL) {
        return 0;
    }
    if (OPAL_LIKELY((slot->memo[e] >= 0) && (slot->memo_count[e] == count))) {
        return slot->memo[e];
    }
    cp.engine          = peer->rail->is_sw ? "sw" : "mlx5";
    cp.same_host       = peer->rail->is_sw;
    cp.pml             = mca_pml_umr.real_component.pmlm_version.
                         mca_component_name;
    slot->memo[e]       = (signed char)mca_pml_umr_choose_zcopy(
                                  slot->info, count, &cp,
                                  mca_pml_umr.zcopy_mode);
    slot->memo_count[e] = count;
    return slot->memo[e];
}
