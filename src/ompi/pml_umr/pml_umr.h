/**
 * pml/umr: an Open MPI PML that sits in front of the PML Open MPI selects
 * (ob1, ucx, cm) the way pml/monitoring does, and moves eligible derived-
 * datatype messages with one zero-copy get through the mlx5_umr transport.
 *
 * Protocol (matching stays in the real PML):
 *  - A message is eligible when its packed size is at least
 *    MCA_PML_UMR_CTL_SIZE (Z), its datatype decodes to a layout, the peer is
 *    reachable over a rail and pml_umr_choose says zero-copy. The sender
 *    registers the data as one layout key and sends, through the real PML on
 *    the user's (comm, dest, tag), a control message of exactly Z bytes that
 *    starts with a 16-byte magic and carries the key.
 *  - Receives whose capacity is below Z go straight to the real PML: an
 *    eligible message never matches them. Larger receives are posted to the
 *    real PML unchanged; when one completes with exactly Z bytes from a peer
 *    that runs pml/umr, the first bytes are checked for the magic. A control
 *    message is then turned into one get from the sender's layout key into
 *    the receive layout, which overwrites every byte the control message
 *    landed on; an acknowledgement on MPI_COMM_WORLD (tag
 *    MCA_PML_UMR_TAG_ACK) completes the sender's request.
 *  - A non-eligible message of exactly Z bytes starting with the magic is
 *    sent zero-copy anyway (the escape), so a receiver never mistakes it.
 *  - Endpoints are connected lazily: the first control messages carry the
 *    sender's endpoint address; the receiver connects, answers with its own
 *    address (MCA_PML_UMR_TAG_CONN) and starts gets once the sender has
 *    connected back (MCA_PML_UMR_TAG_READY). All of it is nonblocking.
 */
#ifndef MCA_PML_UMR_H_
#define MCA_PML_UMR_H_

#include <ompi_config.h>
#include <ompi/communicator/communicator.h>
#include <ompi/datatype/ompi_datatype.h>
#include <ompi/mca/pml/pml.h>
#include <ompi/mca/pml/base/base.h>
#include <ompi/message/message.h>
#include <ompi/request/request.h>
#include <ompi/proc/proc.h>
#include <opal/class/opal_free_list.h>
#include <opal/class/opal_hash_table.h>
#include <opal/util/output.h>

#include "umr_ompi_compat.h"

#include <uct/api/uct.h>
#include "uct_umr.h"
#include "pml_umr_wire.h"
#include <ucs/datastruct/list.h>
#include <ucs/memory/rcache.h>
#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

/* Internal tags on MPI_COMM_WORLD: negative (never matched by MPI_ANY_TAG)
 * even in pml ucx's 24-bit tag field, and far below the collectives'. */
#define MCA_PML_UMR_TAG_ACK      (-0x700001)
#define MCA_PML_UMR_TAG_CONN     (-0x700002)
#define MCA_PML_UMR_TAG_READY    (-0x700003)

#define MCA_PML_UMR_MAX_RAILS    2
#define MCA_PML_UMR_MAX_ADDR     192
#define MCA_PML_UMR_MAX_RKEY     256

/* Control message flags */
#define MCA_PML_UMR_CTL_ADDR     0x1   /* carries the sender's ep address */

typedef struct mca_pml_umr_ctl {
    uint64_t magic[2];
    uint64_t sreq;         /* sender's request, echoed in the ack */
    uint64_t length;       /* packed bytes of the message */
    uint32_t flags;
    uint16_t rkey_len;
    uint16_t addr_len;     /* sender's ep address follows the key */
    uint8_t  rail;
    uint8_t  pad[7];
    uint8_t  data[MCA_PML_UMR_CTL_SIZE - 48];
} mca_pml_umr_ctl_t;

typedef struct mca_pml_umr_ack {
    uint64_t sreq;
    int32_t  error;        /* MPI error class of the receiver's get */
    int32_t  pad;
} mca_pml_umr_ack_t;

/* One opened mlx5_umr md + iface (one engine). */
typedef struct mca_pml_umr_rail {
    char          name[32];         /* md name: "sw" or the mlx5 device */
    uct_md_h      md;
    uct_iface_h   iface;
    size_t        rkey_size;
    size_t        ep_addr_len;
    size_t        dev_addr_len;
    size_t        iface_addr_len;
    int           is_sw;
    ucs_rcache_t  *rcache;          /* registrations (pml_umr_rcache.c) */
} mca_pml_umr_rail_t;

/* A layout key over a registered region (sender side). */
typedef struct mca_pml_umr_lkey {
    ucs_list_link_t  list;          /* in region->lkeys, most recent first */
    umr_layout_t *layout;       /* own copy: the key is its contents */
    void             *base;
    size_t           count;
    uct_mem_h        memh;
    int              refs;          /* sends in flight */
    uint8_t          rkey[MCA_PML_UMR_MAX_RKEY];
} mca_pml_umr_lkey_t;

/* A registered region of the rail's cache. */
typedef struct mca_pml_umr_region {
    ucs_rcache_region_t super;
    mca_pml_umr_rail_t  *rail;
    uct_mem_h           memh;       /* the whole region, contiguous */
    ucs_list_link_t     lkeys;
    int                 nlkeys;
    int                 uncached;   /* no cache: registered for one use */
} mca_pml_umr_region_t;

/* What a process publishes in the modex. */
typedef struct mca_pml_umr_modex {
    char     version[32];           /* ompi release + protocol */
    uint32_t nrails;
    struct {
        char     name[32];
        uint16_t dev_addr_len, iface_addr_len;
        uint8_t  addr[2 * 64];      /* device address, then iface address */
    } rails[MCA_PML_UMR_MAX_RAILS];
} mca_pml_umr_modex_t;

enum {
    MCA_PML_UMR_PEER_UNKNOWN = 0,   /* modex not read yet */
    MCA_PML_UMR_PEER_NONE,          /* not eligible: pass through */
    MCA_PML_UMR_PEER_OK
};

typedef struct mca_pml_umr_peer {
    int               state;
    int               world_rank;
    mca_pml_umr_rail_t *rail;
    uct_ep_h          ep;
    int               connected;    /* we connected our ep to the peer's */
    int               ready;        /* and the peer connected to ours */
    int               conn_posted;  /* CONN receive posted */
    int               conn_sent;    /* CONN sent, READY receive posted */
    uint8_t           conn_buf[MCA_PML_UMR_MAX_ADDR];
    uint64_t          ready_buf;
    ompi_request_t    *conn_req;
    ompi_request_t    *ready_req;
    opal_list_t       waiting;      /* receives waiting for `ready` */
    opal_list_item_t  ev_item;      /* in mca_pml_umr.peer_events */
    int               ev_queued, ev_conn, ev_ready;
} mca_pml_umr_peer_t;

enum {
    MCA_PML_UMR_STEP_CLASSIFY = 1,   /* inner receive done: control message? */
    MCA_PML_UMR_STEP_CTL,            /* req->ctl holds a control message */
    MCA_PML_UMR_STEP_GET             /* connected: post the get */
};

enum {
    MCA_PML_UMR_REQ_SEND = 1,
    MCA_PML_UMR_REQ_RECV
};

typedef struct mca_pml_umr_request {
    ompi_request_t        super;
    opal_list_item_t      wait_item;  /* in peer->waiting / retry list */
    int                   kind;
    int                   free_called;
    int                   mpi_done;   /* being MPI-completed: the caller's
                                         callback may free it */
    int                   events;     /* left before MPI completion */
    int                   passthrough;/* this start went to the wrapped PML */
    int                   in_place;   /* completes `inner`, the user's
                                         request (pml_umr_hook.c) */
    int                   step;       /* receive: next step in progress */
    /* arguments */
    void                  *buf;
    size_t                count;
    ompi_datatype_t       *dt;
    int                   peer_rank;  /* dst or src */
    int                   tag;
    int                   mode;
    ompi_communicator_t   *comm;
    /* data path */
    ompi_request_t        *inner;     /* real PML request (ctl send / recv) */
    mca_pml_umr_peer_t    *peer;
    uct_mem_h             memh;
    mca_pml_umr_region_t  *region;   /* held while the data moves */
    mca_pml_umr_lkey_t    *lkey;     /* sender's layout key */
    uct_rkey_t            rkey;
    int                   has_rkey;
    void                  *tmp;       /* bounce for undecodable receive types */
    size_t                length;     /* bytes moved */
    uct_completion_t      comp;
    ompi_status_public_t  inner_status;
    int                   error;
    mca_pml_umr_ctl_t     ctl;
} mca_pml_umr_request_t;

OBJ_CLASS_DECLARATION(mca_pml_umr_request_t);

/* Counters, printed at finalize with pml_umr_verbose >= 1. */
typedef struct mca_pml_umr_counters {
    uint64_t zcopy_sends;       /* control messages sent */
    uint64_t zcopy_recvs;       /* gets completed */
    uint64_t zcopy_bytes;
    uint64_t escapes;           /* magic-leading Z-byte messages sent zcopy */
    uint64_t recv_checked;      /* receives >= Z bytes hooked */
    uint64_t passthrough_sends; /* candidate sends passed through */
    uint64_t connects;          /* endpoints connected */
    uint64_t keys_live;         /* registrations alive now (0 at the end) */
    uint64_t errors;
    uint64_t stash;             /* probed messages held by pml/umr */
    uint64_t reg_hits;          /* registration cache: region reused */
    uint64_t reg_misses;        /* region registered */
    uint64_t lkey_hits;         /* layout key reused */
    uint64_t lkey_misses;       /* layout key made */
    uint64_t recv_inplace;      /* control messages that arrived in a
                                   hooked request of the wrapped PML */
} mca_pml_umr_counters_t;

typedef struct mca_pml_umr_globals {
    /* MCA parameters */
    int                    enable;
    int                    verbose;
    int                    zcopy_mode;      /* see pml_umr_choose.h */
    unsigned long          min_size;        /* zero-copy at or above */
    char                   *uct_module;     /* path of libuct_mlx5_umr.so */
    char                   *cost_file;      /* costs of the zero-copy choice */
    char                   *devices;        /* pml_umr_devices.h */
    int                    priority;
    int                    recv_inplace;    /* MCA_PML_UMR_INPLACE_*: hook the
                                               wrapped PML's receives */
    /* state */
    int                    output;
    int                    active;          /* interposed */
    mca_pml_base_component_t real_component;
    mca_pml_base_module_t  real;            /* the wrapped PML */
    void                   *module_handle;
    uct_component_h        component;
    ucs_async_context_t    *async;
    uct_worker_h           worker;
    mca_pml_umr_rail_t     rails[MCA_PML_UMR_MAX_RAILS];
    int                    nrails;
    opal_hash_table_t      peers;           /* ompi_proc_t* -> peer */
    opal_free_list_t       requests;
    ompi_request_free_fn_t hook_free_orig;  /* the wrapped PML's req_free */
    opal_list_t            reap;            /* finished internal requests */
    opal_list_t            retry;           /* receives with a step to run */
    opal_list_t            peer_events;     /* handshake messages arrived */
    int                    outstanding;     /* gets/handshakes in flight */
    int                    progress_on;
    int                    stash_count;
    mca_pml_umr_counters_t cnt;
} mca_pml_umr_globals_t;

extern mca_pml_umr_globals_t mca_pml_umr;
OMPI_DECLSPEC extern mca_pml_base_component_t mca_pml_umr_component;
/* the table installed in front of the wrapped PML (pml_umr_module.c) */
extern mca_pml_base_module_t mca_pml_umr_module;
void mca_pml_umr_module_build(const mca_pml_base_module_t *real,
                              mca_pml_base_module_t *module);

#define MCA_PML_UMR_VERBOSE(_lvl, ...) \
    opal_output_verbose(_lvl, mca_pml_umr.output, "pml_umr: " __VA_ARGS__)

/* MPI_T performance variables pml_umr_* (pml_umr_component.c) */
void mca_pml_umr_pvars_register(void);

/* registration cache (pml_umr_rcache.c) */
int  mca_pml_umr_rcache_create(mca_pml_umr_rail_t *rail);
void mca_pml_umr_rcache_destroy(mca_pml_umr_rail_t *rail);
int  mca_pml_umr_region_get(mca_pml_umr_rail_t *rail, void *lo, size_t len,
                            mca_pml_umr_region_t **region_p);
void mca_pml_umr_region_put(mca_pml_umr_region_t *region);
int  mca_pml_umr_lkey_get(mca_pml_umr_region_t *region, void *base,
                          const umr_layout_t *layout, size_t count,
                          mca_pml_umr_lkey_t **lkey_p);
void mca_pml_umr_lkey_put(mca_pml_umr_lkey_t *lkey);
void mca_pml_umr_span(const umr_layout_t *layout, size_t count,
                      ptrdiff_t *lo, ptrdiff_t *hi);
void mca_pml_umr_rails_release(void);

/* transport (pml_umr_transport.c) */
int  mca_pml_umr_transport_open(void);
void mca_pml_umr_transport_close(void);
int  mca_pml_umr_modex_send(void);
mca_pml_umr_peer_t *mca_pml_umr_peer_get(ompi_communicator_t *comm, int rank);
int  mca_pml_umr_peer_ep(mca_pml_umr_peer_t *peer);
void mca_pml_umr_peer_ctl_addr(mca_pml_umr_peer_t *peer, mca_pml_umr_ctl_t *ctl,
                               size_t off);
int  mca_pml_umr_peer_handshake(mca_pml_umr_peer_t *peer,
                                const mca_pml_umr_ctl_t *ctl);
void mca_pml_umr_progress_ref(int delta);
int  mca_pml_umr_progress(void);
void mca_pml_umr_reap_add(ompi_request_t *req);
void mca_pml_umr_reap_add_buf(ompi_request_t *req, void *buf);
void mca_pml_umr_peek(const void *buf, size_t count, ompi_datatype_t *dt,
                      void *out, size_t len);
void mca_pml_umr_quiesce(void);
void mca_pml_umr_peers_fini(void);

/* datatypes (pml_umr_request.c): the decoder's cache, created at first use
 * (MPI is not initialised yet when pml/umr interposes) and freed when
 * MPI_Finalize starts (an MPI_COMM_SELF attribute). */
/* datatypes (pml_umr_dtype.c) */
struct umr_mpi_dtype;
const struct umr_mpi_dtype *mca_pml_umr_dtype_get(ompi_datatype_t *dt);
/* pml_umr_choose_zcopy() for this peer's engine, remembered per datatype
 * and count; the message is eligible (size, layout) */
int mca_pml_umr_dtype_choose(ompi_datatype_t *dt, size_t count,
                             const mca_pml_umr_peer_t *peer);

/* requests (pml_umr_request.c) */
mca_pml_umr_request_t *mca_pml_umr_request_alloc(int kind, bool persistent,
                                                 ompi_communicator_t *comm);
void mca_pml_umr_request_mpi_complete(mca_pml_umr_request_t *req);
void mca_pml_umr_request_inner_free(mca_pml_umr_request_t *req);
int  mca_pml_umr_request_is_ours(const ompi_request_t *req);
int  mca_pml_umr_inner_hook(mca_pml_umr_request_t *req,
                            ompi_request_complete_fn_t fn);

/* send (pml_umr_send.c) */
int mca_pml_umr_isend(const void *buf, size_t count, ompi_datatype_t *dt,
                      int dst, int tag, mca_pml_base_send_mode_t mode,
                      ompi_communicator_t *comm, ompi_request_t **request);
int mca_pml_umr_send(const void *buf, size_t count, ompi_datatype_t *dt,
                     int dst, int tag, mca_pml_base_send_mode_t mode,
                     ompi_communicator_t *comm);
int mca_pml_umr_isend_init(const void *buf, size_t count, ompi_datatype_t *dt,
                           int dst, int tag, mca_pml_base_send_mode_t mode,
                           ompi_communicator_t *comm, ompi_request_t **request);
int mca_pml_umr_send_start(mca_pml_umr_request_t *req);
int mca_pml_umr_ack_post(mca_pml_umr_peer_t *peer);
void mca_pml_umr_send_event(mca_pml_umr_request_t *req);

/* recv (pml_umr_recv.c) */
int mca_pml_umr_irecv(void *buf, size_t count, ompi_datatype_t *dt, int src,
                      int tag, ompi_communicator_t *comm,
                      ompi_request_t **request);
int mca_pml_umr_recv(void *buf, size_t count, ompi_datatype_t *dt, int src,
                     int tag, ompi_communicator_t *comm,
                     ompi_status_public_t *status);
int mca_pml_umr_irecv_init(void *buf, size_t count, ompi_datatype_t *dt,
                           int src, int tag, ompi_communicator_t *comm,
                           ompi_request_t **request);
int mca_pml_umr_recv_start(mca_pml_umr_request_t *req);
void mca_pml_umr_recv_step(mca_pml_umr_request_t *req);
int mca_pml_umr_recv_classify(mca_pml_umr_request_t *req);
int mca_pml_umr_start(size_t count, ompi_request_t **requests);
void mca_pml_umr_recv_ctl(mca_pml_umr_request_t *req);
int mca_pml_umr_stash_irecv(mca_pml_umr_request_t *req, void *buf,
                            size_t count, ompi_datatype_t *dt, int src,
                            int tag, ompi_communicator_t *comm,
                            ompi_request_t **request);

/* receives hooked in place (pml_umr_hook.c) */
enum {
    MCA_PML_UMR_INPLACE_OFF = 0,
    MCA_PML_UMR_INPLACE_OB1,
    MCA_PML_UMR_INPLACE_UCX
};
void mca_pml_umr_hook_init(void);
void mca_pml_umr_hook_fini(void);
/* the wrapped PML's irecv, hooked */
int  mca_pml_umr_hook_irecv(void *buf, size_t count, ompi_datatype_t *dt,
                            int src, int tag, ompi_communicator_t *comm,
                            ompi_request_t **request);
void mca_pml_umr_hook_done(mca_pml_umr_request_t *req);
int  mca_pml_umr_hook_start(size_t count, ompi_request_t **requests);

/* probes (pml_umr_probe.c) */
int mca_pml_umr_iprobe(int src, int tag, ompi_communicator_t *comm,
                       int *matched, ompi_status_public_t *status);
int mca_pml_umr_probe(int src, int tag, ompi_communicator_t *comm,
                      ompi_status_public_t *status);
int mca_pml_umr_improbe(int src, int tag, ompi_communicator_t *comm,
                        int *matched, ompi_message_t **message,
                        ompi_status_public_t *status);
int mca_pml_umr_mprobe(int src, int tag, ompi_communicator_t *comm,
                       ompi_message_t **message, ompi_status_public_t *status);
int mca_pml_umr_imrecv(void *buf, size_t count, ompi_datatype_t *dt,
                       ompi_message_t **message, ompi_request_t **request);
int mca_pml_umr_mrecv(void *buf, size_t count, ompi_datatype_t *dt,
                      ompi_message_t **message, ompi_status_public_t *status);

/* Whether a receive of this capacity may match a control message. */
static inline int mca_pml_umr_recv_may_match(const ompi_datatype_t *dt,
                                             size_t count)
{
    return dt->super.size * count >= MCA_PML_UMR_CTL_SIZE;
}

/* Whether a receive that completed with exactly Z bytes starts with the
 * magic: two loads for a contiguous layout, a 16-byte pack otherwise. Safe
 * inside the wrapped PML's completion callback (memory reads only). */
int mca_pml_umr_recv_has_magic(void *buf, size_t count, ompi_datatype_t *dt);

/* Whether a completed receive may hold a control message. `error`: the
 * receive's error (a blocking receive leaves status->MPI_ERROR alone). */
static inline int mca_pml_umr_recv_maybe_ctl(void *buf, size_t count,
                                             ompi_datatype_t *dt,
                                             const ompi_status_public_t *st,
                                             int error)
{
    return OPAL_UNLIKELY(st->_ucount == MCA_PML_UMR_CTL_SIZE) &&
           !st->_cancelled &&
           ((error == MPI_SUCCESS) || (error == MPI_ERR_TRUNCATE)) &&
           mca_pml_umr_recv_has_magic(buf, count, dt);
}

static inline int mca_pml_umr_ctl_is_magic(const mca_pml_umr_ctl_t *ctl)
{
    return (ctl->magic[0] == MCA_PML_UMR_MAGIC0) &&
           (ctl->magic[1] == MCA_PML_UMR_MAGIC1);
}

END_C_DECLS

#endif
