/**
 * A model of rdma-core 44 (libibverbs + libmlx5) on a ConnectX, for tests.
 *
 * It lives behind the link-time fake (umr_test_verbs_fake.*, -Wl,--wrap):
 * with verbs_fake::model set (the default after reset()), the wrapped verbs
 * no longer just record their arguments; they enforce the rules below and
 * *execute* the work: RDMA write/read move bytes, UMR interleaved/list
 * configure indirect keys (nested keys too), LOCAL_INV invalidates them, and
 * completions appear on the CQ, with remote access errors on bad or stale
 * keys. Test-only code: never linked into the product.
 *
 * Across processes: keys and QPs live in one MAP_SHARED table created before
 * main() (so forked children share it); bytes move with cross-memory attach
 * (process_vm_readv/writev) into the process that owns the key.
 *
 * Rules, with their source. "qp.c" etc. are rdma-core v44.0
 * providers/mlx5/ files; "bin" means read from the disassembly of Debian's
 * libmlx5.so.1.24.44.0 (the v44 source tarball is not on the Debian mirror
 * these machines reach); "hw" is hardware behaviour that no rdma-core code
 * states, chosen as described. Test per rule: test_engine_mlx5_model.cc,
 * test name in brackets.
 *
 *  R1  create_qp: send WQE size = max(overhead + max_send_sge * 16,
 *      overhead + align(4 + max_inline_data, 16)), rounded up to 64 B;
 *      overhead is 192 B for an RC QP with UMR (ctrl 16 + UMR ctrl 48 +
 *      mkey context 64 + 64) - counted only when IBV_QP_EX_WITH_LOCAL_INV or
 *      _BIND_MW is asked for on v44 (DESIGN.md: the v44 sizing bug), else
 *      32 B (ctrl + raddr). verbs.c mlx5_calc_send_wqe / sq_overhead.
 *      [inline_read_back]
 *  R2  create_qp: a WQE above max_sq_desc_sz (1 KiB) -> EINVAL; more SGEs
 *      than fit -> EINVAL. verbs.c mlx5_calc_send_wqe. [wqe_over_1k_einval]
 *  R3  create_qp: max_inline_data is written back as
 *      wqe_size - overhead - 4; max_send_wr as max_post.
 *      verbs.c mlx5_calc_sq_size, mlx5_create_qp. [inline_read_back]
 *  R4  create_qp: the SQ is roundup_pow_of_two(max_send_wr * wqe_size) bytes
 *      in 64 B basic blocks; more blocks than max_send_wqebb (= max_qp_wr)
 *      -> EINVAL. verbs.c mlx5_calc_sq_size. [sq_in_basic_blocks]
 *  R5  create_qp: send_ops_flags outside the RC set, or MR_INTERLEAVED /
 *      MR_LIST on a non-RC QP -> EOPNOTSUPP. qp.c fill_wr_builders /
 *      verbs.c create_qp checks. [send_ops_flags]
 *  R6  wr_mr_interleaved / wr_mr_list without IBV_SEND_INLINE in wr_flags
 *      -> EOPNOTSUPP at wr_complete. qp.c mlx5_send_wr_mkey_configure.
 *      [umr_needs_inline]
 *  R7  more entries than min((max_inline_data + 4) / 16 [- 1 for
 *      interleaved], key num_desc) -> ENOMEM. qp.c
 *      mlx5_send_wr_set_mkey_layout. [umr_entries_enomem]
 *  R8  access flags beyond LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|
 *      REMOTE_ATOMIC -> EINVAL. qp.c mlx5_send_wr_set_mkey_access_flags.
 *      [umr_access_einval]
 *  R9  interleaved: rdma-core writes n + 1 entries (the strided header) but
 *      checks only n against num_desc; a UMR whose n + 1 entries exceed the
 *      key's descriptors fails on the NIC: completion IBV_WC_LOC_QP_OP_ERR
 *      (hw; man mlx5dv_wr_post: "the mkey should be created with one more
 *      entry"). qp.c umr_strided_seg_create. [interleaved_header_entry]
 *  R10 bytes_count and bytes_count + bytes_skip are written to 16-bit
 *      fields: larger values are silently truncated (the key then scatters
 *      elsewhere). qp.c umr_strided_seg_create. [sixteen_bit_truncation]
 *  R11 key length: interleaved sum(bytes_count) * repeat in 64 bits;
 *      list sum(length) in an int (sign-extended into the 64-bit length).
 *      qp.c umr_strided_seg_create / umr_sg_list_create.
 *      [interleaved_over_4g, list_length_int]
 *  R12 tags: every UMR writes (mkey->lkey & 0xff) as the key's tag with the
 *      MKEY mask bit set; a non-zero tag needs the context's update-tag
 *      support, else EOPNOTSUPP (bin: mkey_configure, mr_interleaved and
 *      mr_list all test the context flag). The NIC changes the tag only of
 *      a key created with MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG; otherwise
 *      the UMR fails, IBV_WC_LOC_QP_OP_ERR (hw; man mlx5dv_create_mkey).
 *      [tag_rules]
 *  R13 mlx5dv_create_mkey: needs a DEVX context (mlx5dv_open_device with
 *      MLX5DV_CONTEXT_FLAGS_DEVX) else EOPNOTSUPP; INDIRECT required, else
 *      EINVAL; UPDATE_TAG without kernel support -> EOPNOTSUPP (man
 *      mlx5dv_create_mkey); max_entries rounded up to a multiple of 4 and
 *      written back. verbs.c mlx5dv_create_mkey. [create_mkey_rules]
 *  R14 QP states: RESET -> INIT -> RTR -> RTS, any -> RESET/ERR; other
 *      transitions -> EINVAL. WRs executed while the QP is not in RTS, and
 *      every WR after an error, complete with IBV_WC_WR_FLUSH_ERR; the first
 *      failed WR moves the QP to ERR (verbs semantics). [qp_states]
 *  R15 a full SQ: (head - tail) + WRs in this batch >= max_post -> ENOMEM
 *      from the builder, returned by wr_complete; tail advances when a
 *      completion is polled (it frees every earlier WR). qp.c
 *      _common_wqe_init / mlx5_wq_overflow, cq.c. [full_sq_enomem]
 *  R16 a failed builder rolls the whole batch back: nothing of it executes.
 *      qp.c mlx5_send_wr_complete. [batch_rollback]
 *  R17 more SGEs than max_send_sge -> ENOMEM. qp.c
 *      mlx5_send_wr_set_sge_list. [sge_enomem]
 *  R18 execution: an rkey must name a live key of the peer's process with
 *      the current tag, a valid (configured, not invalidated) layout for
 *      an indirect key, REMOTE_WRITE/READ access and the range inside it,
 *      else IBV_WC_REM_ACCESS_ERR; an lkey likewise in the own process
 *      (LOCAL_WRITE for a read's destination), else IBV_WC_LOC_PROT_ERR;
 *      a peer QP that is gone or not connected -> IBV_WC_RETRY_EXC_ERR.
 *      Indirect keys nest up to 4 levels (hw, chosen). [remote_access_errors]
 *  R19 LOCAL_INV of an indirect key of the own process with the current tag
 *      invalidates it; otherwise IBV_WC_LOC_PROT_ERR (hw, chosen).
 *      [local_inv]
 *  R20 completions: signaled WRs and every failed WR; opcode RDMA_WRITE,
 *      RDMA_READ, LOCAL_INV or MLX5DV_WC_UMR. [completions]
 *  R21 ibv_reg_mr pins the range: a page the process cannot read -> EFAULT
 *      (kernel ib_umem_get). Pinned pages stay reachable to a NIC whatever
 *      the process does to their protection later; the model, copying with
 *      cross-memory attach, cannot follow that (it reports a protection
 *      error instead), so tests of protection changes after registration
 *      are sw-engine cases. [reg_mr_efault]
 */
#ifndef UMR_TEST_VERBS_MODEL_H_
#define UMR_TEST_VERBS_MODEL_H_

#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#include <stdint.h>

#include <vector>

namespace umr_test {

enum {
    MODEL_MAX_SQ_DESC_SZ = 1024,  /* max_sq_desc_sz of a ConnectX */
    MODEL_SEND_WQE_BB    = 64,
    MODEL_MAX_DEPTH      = 4,
    MODEL_RETRY_SEC      = 1   /* ~ retry_cnt 7 x timeout 14 (67 ms) */
};

/* One WR built between wr_start and wr_complete. */
struct model_wr {
    enum kind_t { RDMA_WRITE, RDMA_READ, LOCAL_INV, UMR_ILV, UMR_LIST };

    kind_t                                    kind;
    uint64_t                                  wr_id;
    unsigned                                  wr_flags;
    uint32_t                                  key;     /* rkey / inv key */
    uint64_t                                  remote_addr;
    struct mlx5dv_mkey                        *mkey;
    uint32_t                                  tag;     /* at build time */
    uint32_t                                  access;
    uint32_t                                  repeat;
    std::vector<struct mlx5dv_mr_interleaved> ilv;
    std::vector<struct ibv_sge>               sge;
};

/* Model state of one QP (the fake QP embeds it). */
struct model_qp {
    uint32_t              max_inline_data;
    uint32_t              max_gs;
    uint32_t              max_post;
    uint64_t              head;          /* WRs executed */
    uint64_t              tail;          /* WRs whose completion freed them */
    int                   err;           /* sticky builder error */
    std::vector<model_wr> batch;
    bool                  in_batch;
    std::vector<model_wr> posted;        /* rung, not yet executed */
    double                blocked_since; /* peer not ready: retrying */
};

/* Rules R1-R5 at mlx5dv_create_qp: 0 or an errno; fills the write-back. */
int model_create_qp(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr,
                    const struct mlx5dv_qp_init_attr *dv_attr, model_qp *mqp);

/* QP number from the shared table; released by model_qp_release. */
uint32_t model_qp_alloc();
void     model_qp_release(uint32_t qpn);
int      model_modify_qp(struct ibv_qp *qp, const struct ibv_qp_attr *attr,
                         int mask);

/* Keys: 0 or an errno. */
int  model_reg_mr(void *addr, size_t length, int access, uint32_t *key_p);
void model_dereg_mr(uint32_t key);
int  model_create_mkey(struct ibv_context *ctx,
                       struct mlx5dv_mkey_init_attr *attr, uint32_t *key_p);
void model_destroy_mkey(uint32_t key);

/* DEVX open flags of a context (set by the fake's mlx5dv_open_device). */
void model_ctx_opened(struct ibv_context *ctx, uint32_t flags);
void model_ctx_closed(struct ibv_context *ctx);

/* Builders (R6-R8, R15, R17) and the doorbell (R9-R20). */
void model_wr_start(struct ibv_qp_ex *qpx, model_qp *mqp);
void model_wr_add(struct ibv_qp_ex *qpx, model_qp *mqp, model_wr &wr);
/* Rings the doorbell: the batch is posted. The "NIC" executes posted WRs
 * when their send CQ is polled (model_progress), in order; completions go
 * to the CQ through verbs_fake::push_cqe with their qp/seq, which free the
 * SQ when polled. A WR to a peer QP that is not connected (yet) is retried
 * for MODEL_RETRY_SEC, then fails with IBV_WC_RETRY_EXC_ERR, as an RC
 * requester retries. */
int  model_wr_complete(struct ibv_qp_ex *qpx, model_qp *mqp);
void model_wr_abort(model_qp *mqp);
void model_progress(struct ibv_qp *qp, model_qp *mqp);

/* For tests: the key's current state in the shared table. */
struct model_key_info {
    bool     exists;
    bool     valid;        /* indirect: configured and not invalidated */
    uint32_t tag;
    uint64_t length;
    uint32_t num_desc;
    bool     update_tag;
};
model_key_info model_key_query(uint32_t key);

} // namespace umr_test

#endif
