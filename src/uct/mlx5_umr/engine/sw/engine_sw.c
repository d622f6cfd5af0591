/**
 * mlx5_umr sw engine: devices, registrations, queues and posting.
 *
 * Posting only validates and queues; the work is done by cq_poll
 * (engine_sw_exec.c), like a NIC that runs while the host polls.
 */
#include "umr_config.h"

#include "engine_sw.h"

#include <ucs/debug/log.h>
#include <ucs/sys/string.h>
#include <ucs/sys/sys.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#define UMR_ENG_SW_ACCESS_ALL (UMR_ENG_ACCESS_LOCAL_WRITE | \
                               UMR_ENG_ACCESS_REMOTE_WRITE | \
                               UMR_ENG_ACCESS_REMOTE_READ | \
                               UMR_ENG_ACCESS_REMOTE_ATOMIC)
#define UMR_ENG_SW_WR_FLAGS   (UMR_ENG_WR_SIGNALED | UMR_ENG_WR_FENCE)
#define UMR_ENG_SW_MAX_CQE    (1u << 22)

/* Same policy as UCX's cma md: Yama may forbid attaching to a peer. */
static int umr_eng_sw_ptrace_allowed(void)
{
    static const char *file = "/proc/sys/kernel/yama/ptrace_scope";
    char buffer[32];
    ssize_t nread;
    char *value;

    nread = ucs_read_file(buffer, sizeof(buffer) - 1, 1, "%s", file);
    if (nread < 0) {
        ucs_debug("sw engine: could not read '%s', assuming no Yama", file);
        return 1;
    }

    buffer[nread] = '\0';
    value         = ucs_strtrim(buffer);
    if (!strcmp(value, "0")) {
        return 1;
    }

    if (!strcmp(value, "1")) {
        /* Scope 1: peers may attach only if we allow it explicitly. */
        if (prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) == 0) {
            return 1;
        }

        ucs_debug("sw engine: ptrace_scope 1 and PR_SET_PTRACER failed: %m");
        return 0;
    }

    ucs_debug("sw engine: ptrace_scope is %s, cross-memory attach disabled",
              value);
    return 0;
}

static int umr_eng_sw_writev_works(void)
{
    uint64_t src = 0x5a5a5a5a5a5a5a5aull, dst = 0;
    struct iovec liov = {.iov_base = &src, .iov_len = sizeof(src)};
    struct iovec riov = {.iov_base = &dst, .iov_len = sizeof(dst)};
    ssize_t ret;

    ret = process_vm_writev(getpid(), &liov, 1, &riov, 1, 0);
    if ((ret != sizeof(dst)) || (dst != src)) {
        ucs_debug("sw engine: process_vm_writev returned %zd: %m", ret);
        return 0;
    }

    return 1;
}

/* Not cached: cheap, and a sandbox (seccomp, Yama) may change under us. */
int umr_eng_sw_probe(void)
{
    int result = umr_eng_sw_ptrace_allowed() && umr_eng_sw_writev_works();

    if (!result) {
        ucs_debug("sw engine: cross-memory attach unavailable, no device");
    }

    return result;
}

static ucs_status_t
umr_eng_sw_query_devices(char (*names)[UMR_ENG_NAME_MAX], unsigned max,
                         unsigned *num_p)
{
    if (num_p == NULL) {
        return UCS_ERR_INVALID_PARAM;
    }

    *num_p = 0;
    if (!umr_eng_sw_probe() || (max == 0)) {
        return UCS_OK;
    }

    if (names == NULL) {
        return UCS_ERR_INVALID_PARAM;
    }

    ucs_strncpy_zero(names[0], UMR_ENG_SW_DEV_NAME, UMR_ENG_NAME_MAX);
    *num_p = 1;
    return UCS_OK;
}

static void umr_eng_sw_caps_init(umr_eng_sw_dev_t *dev)
{
    umr_eng_caps_t *caps = &dev->caps;

    memset(caps, 0, sizeof(*caps));
    ucs_strncpy_zero(caps->name, UMR_ENG_SW_DEV_NAME, sizeof(caps->name));
    caps->max_interleaved = UMR_ENG_SW_MAX_INTERLEAVED;
    caps->max_list        = UMR_ENG_SW_MAX_LIST;
    caps->max_bytes_count = UMR_ENG_SW_MAX_BYTES_COUNT;
    caps->max_stride      = UMR_ENG_SW_MAX_STRIDE;
    caps->max_sge         = UMR_ENG_SW_MAX_SGE;
    caps->max_qp_wr       = UMR_ENG_SW_MAX_QP_WR;
    caps->max_mkeys       = dev->max_keys - 1;
    caps->max_msg         = UMR_ENG_SW_MAX_MSG;
    caps->max_mr_size     = UINT64_MAX;
    caps->num_ports       = 1;
    caps->dev_addr_len    = sizeof(umr_eng_sw_dev_addr_t);
    caps->qp_addr_len     = sizeof(umr_eng_sw_qp_addr_t);
    /* Cross-memory attach on this class of host, not NIC figures. */
    caps->latency         = 2e-6;
    caps->bandwidth       = 4e9;
}

static ucs_status_t
umr_eng_sw_dev_open(const char *name, const umr_eng_dev_params_t *params,
                    umr_eng_dev_t **dev_p)
{
    size_t max_keys   = UMR_ENG_SW_MAX_KEYS_DEFAULT;
    double density    = UMR_ENG_SW_SPAN_DEFAULT;
    umr_eng_sw_dev_t *dev;
    ucs_status_t status;

    if ((name == NULL) || (dev_p == NULL)) {
        ucs_error("sw engine: dev_open: NULL %s", name ? "dev_p" : "name");
        return UCS_ERR_INVALID_PARAM;
    }

    if (strcmp(name, UMR_ENG_SW_DEV_NAME)) {
        ucs_debug("sw engine: no device '%s'", name);
        return UCS_ERR_NO_DEVICE;
    }

    if (!umr_eng_sw_probe()) {
        return UCS_ERR_UNSUPPORTED;
    }

    if (params != NULL) {
        if (params->sw_max_keys != 0) {
            max_keys = params->sw_max_keys;
        }

        if (params->sw_span_density > 0) {
            density = params->sw_span_density;
        }
    }

    /* +1: index 0 holds the table header */
    if ((max_keys < 1) || (max_keys >= UMR_ENG_SW_MAX_KEYS_LIMIT)) {
        ucs_error("sw engine: sw_max_keys %zu out of range [1, %u)", max_keys,
                  UMR_ENG_SW_MAX_KEYS_LIMIT - 1);
        return UCS_ERR_INVALID_PARAM;
    }

    dev = calloc(1, sizeof(*dev));
    if (dev == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    dev->span_density = density;
    dev->pid_ns       = ucs_sys_get_ns(UCS_SYS_NS_TYPE_PID);
    status            = ucs_sys_get_boot_id(&dev->boot_id[0],
                                            &dev->boot_id[1]);
    if (status != UCS_OK) {
        ucs_debug("sw engine: no boot id: %s", ucs_status_string(status));
        goto err_free;
    }

    dev->bounce = malloc(UMR_ENG_SW_BATCH_BYTES);
    dev->span   = malloc(UMR_ENG_SW_BATCH_BYTES);
    dev->riov   = calloc(3 * UMR_ENG_SW_IOV_MAX, sizeof(*dev->riov));
    dev->siov   = calloc(UMR_ENG_SW_SPAN_IOV_MAX, sizeof(*dev->siov));
    if ((dev->bounce == NULL) || (dev->span == NULL) || (dev->riov == NULL) ||
        (dev->siov == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto err_free_bufs;
    }

    dev->liov = dev->riov + UMR_ENG_SW_IOV_MAX;
    dev->ciov = dev->liov + UMR_ENG_SW_IOV_MAX;

    status = umr_eng_sw_table_init(dev, max_keys + 1);
    if (status != UCS_OK) {
        goto err_free_bufs;
    }

    umr_eng_sw_space_init_local(&dev->local, dev);
    umr_eng_sw_caps_init(dev);
    ucs_debug("sw engine: opened device %p, key table %p, %zu keys", dev,
              dev->table, max_keys);
    *dev_p = (umr_eng_dev_t*)dev;
    return UCS_OK;

err_free_bufs:
    free(dev->siov);
    free(dev->riov);
    free(dev->span);
    free(dev->bounce);
err_free:
    free(dev);
    return status;
}

static void umr_eng_sw_dev_close(umr_eng_dev_t *edev)
{
    umr_eng_sw_dev_t *dev = (umr_eng_sw_dev_t*)edev;

    if (dev == NULL) {
        return;
    }

    if (dev->num_objs != 0) {
        ucs_warn("sw engine: closing device with %u live objects",
                 dev->num_objs);
    }

    umr_eng_sw_table_cleanup(dev);
    free(dev->siov);
    free(dev->riov);
    free(dev->span);
    free(dev->bounce);
    free(dev);
}

static void umr_eng_sw_dev_query(umr_eng_dev_t *edev, umr_eng_caps_t *caps)
{
    *caps = ((umr_eng_sw_dev_t*)edev)->caps;
}

static void umr_eng_sw_dev_get_addr(umr_eng_dev_t *edev, void *addr)
{
    umr_eng_sw_dev_t *dev = (umr_eng_sw_dev_t*)edev;
    umr_eng_sw_dev_addr_t daddr;

    /* addr may be unaligned (UCX packs addresses): build, then copy */
    memset(&daddr, 0, sizeof(daddr));
    daddr.boot_id[0] = dev->boot_id[0];
    daddr.boot_id[1] = dev->boot_id[1];
    daddr.pid_ns     = dev->pid_ns;
    daddr.table      = (uintptr_t)dev->table;
    daddr.cookie     = dev->hdr->cookie;
    daddr.pid        = getpid();
    daddr.max_keys   = dev->max_keys;
    memcpy(addr, &daddr, sizeof(daddr));
}

static int umr_eng_sw_dev_is_reachable(umr_eng_dev_t *edev,
                                       const void *remote_dev_addr)
{
    umr_eng_sw_dev_t *dev = (umr_eng_sw_dev_t*)edev;
    umr_eng_sw_dev_addr_t daddr;

    if (remote_dev_addr == NULL) {
        return 0;
    }

    memcpy(&daddr, remote_dev_addr, sizeof(daddr));
    /* same kernel (boot id) and same pid numbering (pid namespace) */
    return (daddr.boot_id[0] == dev->boot_id[0]) &&
           (daddr.boot_id[1] == dev->boot_id[1]) &&
           (daddr.pid_ns == dev->pid_ns) && (daddr.pid != 0) &&
           (daddr.table != 0);
}

static ucs_status_t umr_eng_sw_mr_reg(umr_eng_dev_t *edev, void *addr,
                                      size_t length, unsigned access,
                                      umr_eng_mr_t **mr_p)
{
    umr_eng_sw_dev_t *dev = (umr_eng_sw_dev_t*)edev;
    umr_eng_sw_kentry_t *entry;
    umr_eng_sw_mr_t *mr;
    ucs_status_t status;
    uint32_t index;
    uintptr_t end;

    if ((dev == NULL) || (mr_p == NULL)) {
        return UCS_ERR_INVALID_PARAM;
    }

    if ((addr == NULL) || (length == 0) ||
        __builtin_add_overflow((uintptr_t)addr, length, &end)) {
        ucs_error("sw engine: mr_reg: bad range addr %p length %zu", addr,
                  length);
        return UCS_ERR_INVALID_PARAM;
    }

    /* verbs rules: known flags only; remote write/atomic need local write */
    if ((access & ~UMR_ENG_SW_ACCESS_ALL) ||
        ((access & (UMR_ENG_ACCESS_REMOTE_WRITE |
                    UMR_ENG_ACCESS_REMOTE_ATOMIC)) &&
         !(access & UMR_ENG_ACCESS_LOCAL_WRITE))) {
        ucs_error("sw engine: mr_reg: invalid access flags 0x%x", access);
        return UCS_ERR_INVALID_PARAM;
    }

    mr = calloc(1, sizeof(*mr));
    if (mr == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    status = umr_eng_sw_index_alloc(dev, mr, &index);
    if (status != UCS_OK) {
        free(mr);
        return status;
    }

    entry          = umr_eng_sw_entry_begin(dev, index);
    entry->kind    = UMR_ENG_SW_KIND_MR;
    entry->tag++;
    entry->valid   = 1;
    entry->access  = access;
    entry->addr    = (uintptr_t)addr;
    entry->length  = length;
    umr_eng_sw_entry_end(dev, entry);

    mr->dev          = dev;
    mr->super.addr   = addr;
    mr->super.length = length;
    mr->super.lkey   = UMR_ENG_SW_KEY(index, entry->tag);
    mr->super.rkey   = mr->super.lkey;
    dev->num_objs++;
    *mr_p = &mr->super;
    return UCS_OK;
}

/* An object of ours, still registered at the index its key names? */
static int umr_eng_sw_owns(umr_eng_sw_dev_t *dev, uint32_t key, void *obj)
{
    uint32_t index = UMR_ENG_SW_KEY_INDEX(key);

    return (dev != NULL) && (obj != NULL) && (index > 0) &&
           (index < dev->max_keys) && (dev->objs[index] == obj);
}

static ucs_status_t umr_eng_sw_mr_dereg(umr_eng_dev_t *edev,
                                        umr_eng_mr_t *emr)
{
    umr_eng_sw_dev_t *dev = (umr_eng_sw_dev_t*)edev;
    umr_eng_sw_mr_t *mr   = (umr_eng_sw_mr_t*)emr;

    if ((mr == NULL) || !umr_eng_sw_owns(dev, mr->super.lkey, mr)) {
        ucs_error("sw engine: mr_dereg: %p is not a memory region of %p",
                  mr, dev);
        return UCS_ERR_INVALID_PARAM;
    }

    umr_eng_sw_index_free(dev, UMR_ENG_SW_KEY_INDEX(mr->super.lkey));
    dev->num_objs--;
    free(mr);
    return UCS_OK;
}

static ucs_status_t umr_eng_sw_mkey_create(umr_eng_dev_t *edev,
                                           uint32_t max_entries,
                                           umr_eng_mkey_t **mkey_p)
{
    umr_eng_sw_dev_t *dev = (umr_eng_sw_dev_t*)edev;
    umr_eng_sw_kentry_t *entry;
    umr_eng_sw_mkey_t *mkey;
    ucs_status_t status;

    if ((dev == NULL) || (mkey_p == NULL) || (max_entries == 0)) {
        ucs_error("sw engine: mkey_create: invalid max_entries %u",
                  max_entries);
        return UCS_ERR_INVALID_PARAM;
    }

    if (max_entries > UMR_ENG_SW_MAX_MKEY_ENTRIES) {
        ucs_error("sw engine: mkey_create: max_entries %u > %u", max_entries,
                  UMR_ENG_SW_MAX_MKEY_ENTRIES);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    mkey = calloc(1, sizeof(*mkey));
    if (mkey == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    mkey->descs = calloc(max_entries, sizeof(*mkey->descs));
    if (mkey->descs == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }

    status = umr_eng_sw_index_alloc(dev, mkey, &mkey->index);
    if (status != UCS_OK) {
        goto err_free_descs;
    }

    /* Created free, like an mlx5 UMR mkey: unusable until a UMR. */
    entry              = umr_eng_sw_entry_begin(dev, mkey->index);
    entry->kind        = UMR_ENG_SW_KIND_INDIRECT;
    entry->tag++;
    entry->valid       = 0;
    entry->access      = 0;
    entry->num_entries = 0;
    entry->addr        = (uintptr_t)mkey->descs;
    entry->length      = 0;
    umr_eng_sw_entry_end(dev, entry);

    mkey->dev               = dev;
    mkey->super.lkey        = UMR_ENG_SW_KEY(mkey->index, entry->tag);
    mkey->super.rkey        = mkey->super.lkey;
    mkey->super.max_entries = max_entries;
    dev->num_objs++;
    *mkey_p = &mkey->super;
    return UCS_OK;

err_free_descs:
    free(mkey->descs);
err_free:
    free(mkey);
    return status;
}

static ucs_status_t umr_eng_sw_mkey_destroy(umr_eng_dev_t *edev,
                                            umr_eng_mkey_t *emkey)
{
    umr_eng_sw_dev_t *dev   = (umr_eng_sw_dev_t*)edev;
    umr_eng_sw_mkey_t *mkey = (umr_eng_sw_mkey_t*)emkey;

    if ((mkey == NULL) || !umr_eng_sw_owns(dev, mkey->super.lkey, mkey)) {
        ucs_error("sw engine: mkey_destroy: %p is not an mkey of %p", mkey,
                  dev);
        return UCS_ERR_INVALID_PARAM;
    }

    umr_eng_sw_index_free(dev, mkey->index);
    dev->num_objs--;
    free(mkey->descs);
    free(mkey);
    return UCS_OK;
}

static ucs_status_t umr_eng_sw_cq_create(umr_eng_dev_t *edev, unsigned size,
                                         umr_eng_cq_t **cq_p)
{
    umr_eng_sw_dev_t *dev = (umr_eng_sw_dev_t*)edev;
    umr_eng_cq_t *cq;

    if ((dev == NULL) || (cq_p == NULL) || (size == 0) ||
        (size > UMR_ENG_SW_MAX_CQE)) {
        ucs_error("sw engine: cq_create: invalid size %u (max %u)", size,
                  UMR_ENG_SW_MAX_CQE);
        return UCS_ERR_INVALID_PARAM;
    }

    cq = calloc(1, sizeof(*cq));
    if (cq == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    cq->ring = calloc(size, sizeof(*cq->ring));
    if (cq->ring == NULL) {
        free(cq);
        return UCS_ERR_NO_MEMORY;
    }

    cq->dev  = dev;
    cq->size = size;
    ucs_list_head_init(&cq->qps);
    dev->num_objs++;
    *cq_p = cq;
    return UCS_OK;
}

static void umr_eng_sw_cq_destroy(umr_eng_cq_t *cq)
{
    umr_eng_qp_t *qp;

    if (cq == NULL) {
        return;
    }

    if (!ucs_list_is_empty(&cq->qps)) {
        ucs_error("sw engine: destroying cq %p with live qps", cq);
        ucs_list_for_each(qp, &cq->qps, list) {
            qp->cq = NULL;
        }
    }

    cq->dev->num_objs--;
    free(cq->ring);
    free(cq);
}

static ucs_status_t umr_eng_sw_qp_create(umr_eng_dev_t *edev,
                                         umr_eng_cq_t *cq,
                                         const umr_eng_qp_params_t *params,
                                         umr_eng_qp_t **qp_p)
{
    umr_eng_sw_dev_t *dev = (umr_eng_sw_dev_t*)edev;
    umr_eng_sw_kentry_t *entry;
    unsigned max_sge, max_umr;
    ucs_status_t status;
    umr_eng_qp_t *qp;

    if ((dev == NULL) || (qp_p == NULL) || (params == NULL) ||
        (cq == NULL) || (cq->dev != dev)) {
        ucs_error("sw engine: qp_create: NULL argument or cq of another "
                  "device");
        return UCS_ERR_INVALID_PARAM;
    }

    /* 0 means the device maximum */
    max_sge = params->max_sge ? params->max_sge : UMR_ENG_SW_MAX_SGE;
    max_umr = params->max_umr_entries ? params->max_umr_entries :
                                        UMR_ENG_SW_MAX_LIST;
    if ((params->sq_size == 0) || (params->sq_size > UMR_ENG_SW_MAX_QP_WR) ||
        (max_sge > UMR_ENG_SW_MAX_SGE) || (max_umr > UMR_ENG_SW_MAX_LIST)) {
        ucs_error("sw engine: qp_create: sq_size %u (1..%u), max_sge %u "
                  "(<= %u), max_umr_entries %u (<= %u)", params->sq_size,
                  UMR_ENG_SW_MAX_QP_WR, params->max_sge, UMR_ENG_SW_MAX_SGE,
                  params->max_umr_entries, UMR_ENG_SW_MAX_LIST);
        return (params->sq_size == 0) ? UCS_ERR_INVALID_PARAM :
                                        UCS_ERR_EXCEEDS_LIMIT;
    }

    qp = calloc(1, sizeof(*qp));
    if (qp == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    qp->wrs   = calloc(params->sq_size, sizeof(*qp->wrs));
    qp->sges  = calloc((size_t)params->sq_size * max_sge, sizeof(*qp->sges));
    qp->descs = calloc((size_t)params->sq_size * max_umr,
                       sizeof(*qp->descs));
    if ((qp->wrs == NULL) || (qp->sges == NULL) || (qp->descs == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }

    status = umr_eng_sw_index_alloc(dev, qp, &qp->index);
    if (status != UCS_OK) {
        goto err_free;
    }

    entry        = umr_eng_sw_entry_begin(dev, qp->index);
    entry->kind  = UMR_ENG_SW_KIND_QP;
    entry->tag++;
    entry->valid = 0;
    umr_eng_sw_entry_end(dev, entry);

    qp->dev             = dev;
    qp->cq              = cq;
    qp->qpn             = UMR_ENG_SW_KEY(qp->index, entry->tag);
    qp->sq_size         = params->sq_size;
    qp->max_sge         = max_sge;
    qp->max_umr_entries = max_umr;
    ucs_list_add_tail(&cq->qps, &qp->list);
    dev->num_objs++;
    *qp_p = qp;
    return UCS_OK;

err_free:
    free(qp->descs);
    free(qp->sges);
    free(qp->wrs);
    free(qp);
    return status;
}

static void umr_eng_sw_qp_destroy(umr_eng_qp_t *qp)
{
    if (qp == NULL) {
        return;
    }

    if (qp->cq != NULL) {
        umr_eng_sw_cq_purge_qp(qp->cq, qp);
        ucs_list_del(&qp->list);
    }

    /* the peer sees the QP entry freed: its next operation fails */
    umr_eng_sw_index_free(qp->dev, qp->index);
    umr_eng_sw_space_cleanup(&qp->remote);
    qp->dev->num_objs--;
    free(qp->descs);
    free(qp->sges);
    free(qp->wrs);
    free(qp);
}

static void umr_eng_sw_qp_get_addr(umr_eng_qp_t *qp, void *addr)
{
    umr_eng_sw_qp_addr_t qaddr;

    memset(&qaddr, 0, sizeof(qaddr));
    qaddr.cookie = qp->dev->hdr->cookie;
    qaddr.pid    = getpid();
    qaddr.qpn    = qp->qpn;
    memcpy(addr, &qaddr, sizeof(qaddr));   /* addr may be unaligned */
}

static ucs_status_t umr_eng_sw_qp_connect(umr_eng_qp_t *qp,
                                          const void *remote_dev_addr,
                                          const void *remote_qp_addr)
{
    umr_eng_sw_dev_addr_t daddr;
    umr_eng_sw_qp_addr_t qaddr;
    umr_eng_sw_kentry_t *entry;

    if ((qp == NULL) || (remote_dev_addr == NULL) ||
        (remote_qp_addr == NULL)) {
        return UCS_ERR_INVALID_PARAM;
    }

    if (qp->connected) {
        ucs_error("sw engine: qp 0x%x is already connected", qp->qpn);
        return UCS_ERR_INVALID_PARAM;
    }

    if (!umr_eng_sw_dev_is_reachable((umr_eng_dev_t*)qp->dev,
                                     remote_dev_addr)) {
        ucs_debug("sw engine: peer on another host or pid namespace");
        return UCS_ERR_UNREACHABLE;
    }

    memcpy(&daddr, remote_dev_addr, sizeof(daddr));
    memcpy(&qaddr, remote_qp_addr, sizeof(qaddr));
    if ((qaddr.cookie != daddr.cookie) || (qaddr.pid != daddr.pid) ||
        (UMR_ENG_SW_KEY_INDEX(qaddr.qpn) == 0) ||
        (UMR_ENG_SW_KEY_INDEX(qaddr.qpn) >= daddr.max_keys)) {
        ucs_error("sw engine: qp address 0x%x does not belong to the "
                  "device address", qaddr.qpn);
        return UCS_ERR_INVALID_PARAM;
    }

    umr_eng_sw_space_init_remote(&qp->remote, &daddr);
    qp->peer_qpn  = qaddr.qpn;
    qp->connected = 1;

    entry              = umr_eng_sw_entry_begin(qp->dev, qp->index);
    entry->valid       = 1;
    entry->peer_cookie = daddr.cookie;
    entry->peer_qpn    = qaddr.qpn;
    umr_eng_sw_entry_end(qp->dev, entry);
    return UCS_OK;
}

/* Common checks; returns the WR to fill or NULL with *status_p set. */
static umr_eng_sw_wr_t *
umr_eng_sw_post_begin(umr_eng_qp_t *qp, umr_eng_opcode_t opcode,
                      uint64_t wr_id, unsigned flags, ucs_status_t *status_p)
{
    umr_eng_sw_wr_t *wr;

    if (qp == NULL) {
        *status_p = UCS_ERR_INVALID_PARAM;
        return NULL;
    }

    if (flags & ~UMR_ENG_SW_WR_FLAGS) {
        ucs_error("sw engine: qp 0x%x: unknown wr flags 0x%x", qp->qpn, flags);
        *status_p = UCS_ERR_INVALID_PARAM;
        return NULL;
    }

    if (!qp->connected) {
        /* an RC QP accepts work only in RTS */
        ucs_error("sw engine: qp 0x%x: post before connect", qp->qpn);
        *status_p = UCS_ERR_NOT_CONNECTED;
        return NULL;
    }

    if ((qp->sq_pi - qp->sq_ci) >= qp->sq_size) {
        *status_p = UCS_ERR_NO_RESOURCE;
        return NULL;
    }

    wr            = &qp->wrs[qp->sq_pi % qp->sq_size];
    memset(wr, 0, sizeof(*wr));
    wr->wr_id     = wr_id;
    wr->seq       = qp->sq_pi;
    wr->opcode    = opcode;
    wr->flags     = flags;
    *status_p     = UCS_OK;
    return wr;
}

static ucs_status_t
umr_eng_sw_check_mkey(umr_eng_qp_t *qp, umr_eng_mkey_t *emkey,
                      unsigned access, const char *op)
{
    umr_eng_sw_mkey_t *mkey = (umr_eng_sw_mkey_t*)emkey;

    if ((mkey == NULL) || !umr_eng_sw_owns(qp->dev, mkey->super.lkey, mkey)) {
        ucs_error("sw engine: %s: %p is not an mkey of the qp's device", op,
                  mkey);
        return UCS_ERR_INVALID_PARAM;
    }

    if (access & ~UMR_ENG_SW_ACCESS_ALL) {
        ucs_error("sw engine: %s: access 0x%x not allowed on a UMR key", op,
                  access);
        return UCS_ERR_INVALID_PARAM;
    }

    return UCS_OK;
}

/* Rotate the tag: keys packed before this UMR stop working once it runs. */
static uint32_t umr_eng_sw_mkey_rotate(umr_eng_sw_mkey_t *mkey)
{
    uint32_t key = UMR_ENG_SW_KEY(mkey->index,
                                  UMR_ENG_SW_KEY_TAG(mkey->super.lkey) + 1);

    mkey->super.lkey = key;
    mkey->super.rkey = key;
    return key;
}

static ucs_status_t
umr_eng_sw_post_umr_interleaved(umr_eng_qp_t *qp, umr_eng_mkey_t *emkey,
                                unsigned access, uint32_t repeat,
                                unsigned num_entries,
                                const umr_eng_interleaved_t *entries,
                                uint64_t wr_id, unsigned flags)
{
    umr_eng_sw_mkey_t *mkey = (umr_eng_sw_mkey_t*)emkey;
    umr_eng_sw_desc_t *descs;
    umr_eng_sw_wr_t *wr;
    ucs_status_t status;
    unsigned i, max;

    if (qp == NULL) {
        return UCS_ERR_INVALID_PARAM;
    }

    status = umr_eng_sw_check_mkey(qp, emkey, access, "umr_interleaved");
    if (status != UCS_OK) {
        return status;
    }

    if ((repeat == 0) || (num_entries == 0) || (entries == NULL)) {
        ucs_error("sw engine: umr_interleaved: repeat %u, num_entries %u, "
                  "entries %p", repeat, num_entries, entries);
        return UCS_ERR_INVALID_PARAM;
    }

    max = ucs_min(ucs_min(UMR_ENG_SW_MAX_INTERLEAVED, qp->max_umr_entries),
                  mkey->super.max_entries);
    if (num_entries > max) {
        ucs_error("sw engine: umr_interleaved: %u entries > %u", num_entries,
                  max);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    for (i = 0; i < num_entries; ++i) {
        if (entries[i].bytes_count == 0) {
            ucs_error("sw engine: umr_interleaved: entry %u: bytes_count 0",
                      i);
            return UCS_ERR_INVALID_PARAM;
        }

        /* 16-bit fields: a NIC would silently truncate them */
        if ((entries[i].bytes_count > UMR_ENG_SW_MAX_BYTES_COUNT) ||
            (((uint64_t)entries[i].bytes_count + entries[i].bytes_skip) >
             UMR_ENG_SW_MAX_STRIDE)) {
            ucs_error("sw engine: umr_interleaved: entry %u: bytes_count %u "
                      "bytes_skip %u exceed 16-bit fields", i,
                      entries[i].bytes_count, entries[i].bytes_skip);
            return UCS_ERR_EXCEEDS_LIMIT;
        }
    }

    wr = umr_eng_sw_post_begin(qp, UMR_ENG_OP_UMR, wr_id, flags, &status);
    if (wr == NULL) {
        return status;
    }

    descs = umr_eng_sw_wr_descs(qp, wr);
    for (i = 0; i < num_entries; ++i) {
        descs[i].addr        = entries[i].addr;
        descs[i].bytes_count = entries[i].bytes_count;
        descs[i].bytes_skip  = entries[i].bytes_skip;
        descs[i].lkey        = entries[i].lkey;
        descs[i].reserved    = 0;
    }

    wr->num    = num_entries;
    wr->access = access;
    wr->repeat = repeat;
    wr->layout = UMR_ENG_SW_LAYOUT_INTERLEAVED;
    wr->mkey   = mkey;
    wr->key    = umr_eng_sw_mkey_rotate(mkey);
    qp->sq_pi++;
    return UCS_OK;
}

static ucs_status_t
umr_eng_sw_post_umr_list(umr_eng_qp_t *qp, umr_eng_mkey_t *emkey,
                         unsigned access, unsigned num_sge,
                         const umr_eng_sge_t *sge, uint64_t wr_id,
                         unsigned flags)
{
    umr_eng_sw_mkey_t *mkey = (umr_eng_sw_mkey_t*)emkey;
    umr_eng_sw_desc_t *descs;
    umr_eng_sw_wr_t *wr;
    ucs_status_t status;
    uint64_t total = 0;
    unsigned i, max;

    if (qp == NULL) {
        return UCS_ERR_INVALID_PARAM;
    }

    status = umr_eng_sw_check_mkey(qp, emkey, access, "umr_list");
    if (status != UCS_OK) {
        return status;
    }

    if ((num_sge == 0) || (sge == NULL)) {
        ucs_error("sw engine: umr_list: num_sge %u, sge %p", num_sge, sge);
        return UCS_ERR_INVALID_PARAM;
    }

    max = ucs_min(ucs_min(UMR_ENG_SW_MAX_LIST, qp->max_umr_entries),
                  mkey->super.max_entries);
    if (num_sge > max) {
        ucs_error("sw engine: umr_list: %u entries > %u", num_sge, max);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    for (i = 0; i < num_sge; ++i) {
        if (sge[i].length == 0) {
            ucs_error("sw engine: umr_list: entry %u: length 0", i);
            return UCS_ERR_INVALID_PARAM;
        }

        total += sge[i].length;
    }

    if (total > UMR_ENG_SW_MAX_LIST_BYTES) {
        ucs_error("sw engine: umr_list: %" PRIu64 " bytes exceed %llu",
                  total, UMR_ENG_SW_MAX_LIST_BYTES);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    wr = umr_eng_sw_post_begin(qp, UMR_ENG_OP_UMR, wr_id, flags, &status);
    if (wr == NULL) {
        return status;
    }

    descs = umr_eng_sw_wr_descs(qp, wr);
    for (i = 0; i < num_sge; ++i) {
        descs[i].addr        = sge[i].addr;
        descs[i].bytes_count = sge[i].length;
        descs[i].bytes_skip  = 0;
        descs[i].lkey        = sge[i].lkey;
        descs[i].reserved    = 0;
    }

    wr->num    = num_sge;
    wr->access = access;
    wr->repeat = 1;
    wr->layout = UMR_ENG_SW_LAYOUT_LIST;
    wr->mkey   = mkey;
    wr->key    = umr_eng_sw_mkey_rotate(mkey);
    qp->sq_pi++;
    return UCS_OK;
}

static ucs_status_t umr_eng_sw_post_local_inv(umr_eng_qp_t *qp,
                                              umr_eng_mkey_t *emkey,
                                              uint64_t wr_id, unsigned flags)
{
    umr_eng_sw_wr_t *wr;
    ucs_status_t status;

    if (qp == NULL) {
        return UCS_ERR_INVALID_PARAM;
    }

    status = umr_eng_sw_check_mkey(qp, emkey, 0, "local_inv");
    if (status != UCS_OK) {
        return status;
    }

    wr = umr_eng_sw_post_begin(qp, UMR_ENG_OP_LOCAL_INV, wr_id, flags,
                               &status);
    if (wr == NULL) {
        return status;
    }

    wr->mkey = (umr_eng_sw_mkey_t*)emkey;
    wr->key  = emkey->lkey;
    qp->sq_pi++;
    return UCS_OK;
}

static ucs_status_t
umr_eng_sw_post_rdma(umr_eng_qp_t *qp, umr_eng_opcode_t opcode,
                     const umr_eng_sge_t *sge, unsigned num_sge,
                     uint64_t remote_addr, uint32_t rkey, uint64_t wr_id,
                     unsigned flags)
{
    uint64_t total = 0;
    umr_eng_sw_wr_t *wr;
    ucs_status_t status;
    unsigned i;

    if (qp == NULL) {
        return UCS_ERR_INVALID_PARAM;
    }

    if ((opcode != UMR_ENG_OP_RDMA_WRITE) && (opcode != UMR_ENG_OP_RDMA_READ)) {
        ucs_error("sw engine: post_rdma: opcode %d is not an RDMA", opcode);
        return UCS_ERR_INVALID_PARAM;
    }

    if ((num_sge > 0) && (sge == NULL)) {
        ucs_error("sw engine: post_rdma: NULL sge list");
        return UCS_ERR_INVALID_PARAM;
    }

    if (num_sge > qp->max_sge) {
        ucs_error("sw engine: post_rdma: %u sges > max_sge %u", num_sge,
                  qp->max_sge);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    for (i = 0; i < num_sge; ++i) {
        total += sge[i].length;
    }

    if (total > UMR_ENG_SW_MAX_MSG) {
        ucs_error("sw engine: post_rdma: %" PRIu64 " bytes > max_msg %llu",
                  total, UMR_ENG_SW_MAX_MSG);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    wr = umr_eng_sw_post_begin(qp, opcode, wr_id, flags, &status);
    if (wr == NULL) {
        return status;
    }

    if (num_sge > 0) {
        memcpy(umr_eng_sw_wr_sges(qp, wr), sge, num_sge * sizeof(*sge));
    }

    wr->num         = num_sge;
    wr->key         = rkey;
    wr->remote_addr = remote_addr;
    qp->sq_pi++;
    return UCS_OK;
}

static int umr_eng_sw_cq_poll(umr_eng_cq_t *cq, umr_eng_wc_t *wcs, int max)
{
    umr_eng_sw_wc_t *swc;
    int n;

    if ((cq == NULL) || (max < 0) || ((max > 0) && (wcs == NULL))) {
        return UCS_ERR_INVALID_PARAM;
    }

    if (cq->count < (unsigned)max) {
        umr_eng_sw_cq_progress(cq);
    }

    for (n = 0; (n < max) && (cq->count > 0); ++n) {
        swc    = &cq->ring[cq->head];
        wcs[n] = swc->wc;
        /* this WR and the unsignaled ones before it release their slots */
        swc->wc.qp->sq_ci = swc->seq + 1;
        cq->head          = (cq->head + 1) % cq->size;
        cq->count--;
    }

    return n;
}

const umr_eng_ops_t umr_eng_sw_ops = {
    .name                 = "sw",
    .query_devices        = umr_eng_sw_query_devices,
    .dev_open             = umr_eng_sw_dev_open,
    .dev_close            = umr_eng_sw_dev_close,
    .dev_query            = umr_eng_sw_dev_query,
    .dev_get_addr         = umr_eng_sw_dev_get_addr,
    .dev_is_reachable     = umr_eng_sw_dev_is_reachable,
    .mr_reg               = umr_eng_sw_mr_reg,
    .mr_dereg             = umr_eng_sw_mr_dereg,
    .mkey_create          = umr_eng_sw_mkey_create,
    .mkey_destroy         = umr_eng_sw_mkey_destroy,
    .cq_create            = umr_eng_sw_cq_create,
    .cq_destroy           = umr_eng_sw_cq_destroy,
    .cq_poll              = umr_eng_sw_cq_poll,
    .qp_create            = umr_eng_sw_qp_create,
    .qp_destroy           = umr_eng_sw_qp_destroy,
    .qp_get_addr          = umr_eng_sw_qp_get_addr,
    .qp_connect           = umr_eng_sw_qp_connect,
    .post_umr_interleaved = umr_eng_sw_post_umr_interleaved,
    .post_umr_list        = umr_eng_sw_post_umr_list,
    .post_local_inv       = umr_eng_sw_post_local_inv,
    .post_rdma            = umr_eng_sw_post_rdma
};
