/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * A model of rdma-core (libibverbs + libmlx5) on a ConnectX, for tests: of
 * the release the tests are built against, one of 44.0 (Debian 12), 56.1
 * (Debian 13) and 65.0 (Debian unstable), whose rules it follows.
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
 * Rules and their source, read in each release: "file:function:line" is
 * rdma-core's file (providers/mlx5/ unless a directory is given) at tags
 * v44.0 and v56.1 of github.com/linux-rdma/rdma-core and, for 65.0, in
 * Debian's rdma-core_65.0.orig.tar.gz (GitHub commit 58e4080; the mirror has
 * no v65.0 tag). Debian's 44.0-2 and 56.1-1 patch nothing of providers/mlx5;
 * 65.0-1.1 adds one patch, a 32-bit build fix (its changelog; the Debian
 * diff itself is not on the mirror these machines reach).
 * "same" means the same code at the lines given. "kernel" is the kernel's
 * mlx5_ib, "hw" hardware behaviour that no rdma-core code states, chosen as
 * described; "model" marks what the model leaves out. Test per rule:
 * test_engine_mlx5_model.cc, test name in brackets. Rules marked DIFFERS
 * change between releases: the model follows model_get_rules() (reset():
 * the release configure found, model_rules_installed()), and their tests
 * run every release's rules against that release's facts.
 *
 *  R1  create_qp: send WQE size = max(overhead + max_send_sge * 16,
 *      overhead + align(4 + max_inline_data, 16)), rounded up to 64 B. The
 *      overhead of an RC QP is 192 B (ctrl 16 + UMR ctrl 48 + mkey context
 *      64 + 64) when the send ops include LOCAL_INV or BIND_MW, or the mlx5
 *      send ops MR_INTERLEAVED or MR_LIST - in every release -, or (DIFFERS)
 *      MKEY_CONFIGURE from 44.1 / 45.0 on (commit 24850871b; 44.0 sizes a
 *      QP with MKEY_CONFIGURE alone for 32 B WQEs); else 48 B with atomics,
 *      32 B (ctrl + raddr) with RDMA, 16 B. Without
 *      IBV_QP_INIT_ATTR_SEND_OPS_FLAGS the send ops are all RC ones.
 *        44.0 verbs.c:_sq_overhead:1486-1488, sq_overhead:1578,
 *             mlx5_calc_send_wqe:1598
 *        56.1 verbs.c:_sq_overhead:1509-1512 (+ MKEY_CONFIGURE),
 *             sq_overhead:1602, mlx5_calc_send_wqe:1622
 *        65.0 verbs.c:_sq_overhead:1624-1627 (as 56.1), sq_overhead:1717,
 *             mlx5_calc_send_wqe:1737
 *      [inline_read_back, sq_overhead_mkey_configure]
 *  R2  create_qp: more SGEs than fit in max_sq_desc_sz (1 KiB, from the
 *      kernel) -> EINVAL; a WQE above it -> EINVAL.
 *        44.0 verbs.c:mlx5_calc_send_wqe:1609,1615
 *        56.1 verbs.c:mlx5_calc_send_wqe:1633,1639   65.0 :1748,1754 (same)
 *      [wqe_over_1k_einval]
 *  R3  create_qp: max_inline_data is written back as wqe_size - overhead -
 *      4; max_send_wr as max_post = SQ bytes / wqe_size.
 *        44.0 verbs.c:mlx5_calc_sq_size:1667, create_qp:2623
 *        56.1 verbs.c:mlx5_calc_sq_size:1691, create_qp:2733
 *        65.0 verbs.c:mlx5_calc_sq_size:1806, create_qp:2881 (same)
 *      [inline_read_back]
 *  R4  create_qp: the SQ is roundup_pow_of_two(max_send_wr * wqe_size)
 *      bytes in 64 B basic blocks; more blocks than max_send_wqebb (from the
 *      kernel: 1 << log_max_qp_sz, = max_qp_wr) -> EINVAL.
 *        44.0 verbs.c:mlx5_calc_sq_size:1680,1682,1689,
 *             mlx5.c:mlx5_set_context:2395
 *        56.1 verbs.c:mlx5_calc_sq_size:1704,1706,1713, mlx5.c:2428
 *        65.0 verbs.c:mlx5_calc_sq_size:1819,1821,1828, mlx5.c:2442 (same)
 *      [sq_in_basic_blocks]
 *  R5  create_qp: send_ops_flags outside the RC set -> EOPNOTSUPP; mlx5
 *      send ops other than MR_INTERLEAVED, MR_LIST, MKEY_CONFIGURE,
 *      RAW_WQE, MEMCPY -> EOPNOTSUPP. The model creates RC QPs only
 *      (model: EOPNOTSUPP for any other type) and no MEMCPY QP (model: a
 *      ConnectX without DMA MMO); it provides the builders the engine uses.
 *        44.0 qp.c:mlx5_qp_fill_wr_pfns:3575,3589, verbs.c:create_qp:2472
 *        56.1 qp.c:mlx5_qp_fill_wr_pfns:3582,3596, verbs.c:create_qp:2583
 *        65.0 qp.c:mlx5_qp_fill_wr_pfns:3582,3596, verbs.c:create_qp:2706
 *        (same)
 *      [send_ops_flags]
 *  R6  wr_mr_interleaved / wr_mr_list (both build through
 *      mlx5_send_wr_mkey_configure) without IBV_SEND_INLINE in wr_flags ->
 *      EOPNOTSUPP at wr_complete, replacing an earlier error of the batch.
 *        44.0 qp.c:mlx5_send_wr_mkey_configure:2837,
 *             mlx5_send_wr_mr_interleaved:3065, mlx5_send_wr_mr_list:3086
 *        56.1 qp.c:mlx5_send_wr_mkey_configure:2844, :3072, :3093
 *        65.0 qp.c:mlx5_send_wr_mkey_configure:2844, :3072, :3093 (same)
 *      [umr_needs_inline]
 *  R7  more entries than min((max_inline_data + 4) / 16 [- 1 for
 *      interleaved], the key's num_desc) -> ENOMEM. Checked after R8.
 *        44.0 qp.c:mlx5_send_wr_set_mkey_layout:2999,3009
 *        56.1 qp.c:mlx5_send_wr_set_mkey_layout:3006,3016
 *        65.0 qp.c:mlx5_send_wr_set_mkey_layout:3006,3016 (same)
 *      [umr_entries_enomem]
 *  R8  access flags beyond LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|
 *      REMOTE_ATOMIC -> EINVAL.
 *        44.0 qp.c:mlx5_send_wr_set_mkey_access_flags:2944
 *        56.1 qp.c:mlx5_send_wr_set_mkey_access_flags:2951   65.0 :2951 (same)
 *      [umr_access_einval]
 *  R9  interleaved: rdma-core writes n + 1 entries (the repeat block) but
 *      checks only n against num_desc (R7); a UMR whose n + 1 entries exceed
 *      the key's descriptors fails on the NIC: completion
 *      IBV_WC_LOC_QP_OP_ERR (hw; man mlx5dv_wr_post: "the mkey should be
 *      created with one more entry").
 *        44.0 qp.c:umr_strided_seg_create:2175
 *        56.1 qp.c:umr_strided_seg_create:2182   65.0 :2182 (same)
 *      [interleaved_header_entry]
 *  R10 bytes_count and bytes_count + bytes_skip are written to 16-bit
 *      fields (htobe16): larger values are silently truncated (the key then
 *      scatters elsewhere).
 *        44.0 qp.c:umr_strided_seg_create:2163-2164
 *        56.1 qp.c:umr_strided_seg_create:2170-2171   65.0 :2170-2171 (same)
 *      [sixteen_bit_truncation]
 *  R11 key length: interleaved sum(bytes_count) * repeat in 64 bits in
 *      every release; list sum(length) (DIFFERS) in an int, sign-extended
 *      into the 64-bit length, in 44.0 and 56.1, in a uint64_t in 65.0
 *      (commit e23cb0a72, in 61.0; backported to the stable 44.12, 45.11,
 *      46.10, 47.9, 48.8, 49.8, 50.7, 51.7, 52.6, 53.6, 54.5, 55.4, 56.4,
 *      57.3, 58.2, 59.2, 60.2).
 *        44.0 qp.c:umr_strided_seg_create:2169, umr_sg_list_create:2102
 *             (int), mlx5_send_wr_set_mkey_layout:3036
 *        56.1 qp.c:umr_strided_seg_create:2176, umr_sg_list_create:2109
 *             (int), mlx5_send_wr_set_mkey_layout:3043
 *        65.0 qp.c:umr_strided_seg_create:2176, umr_sg_list_create:2109
 *             (uint64_t), mlx5_send_wr_set_mkey_layout:3043
 *      [interleaved_over_4g, list_length_sum]
 *  R12 tags: every UMR writes (mkey->lkey & 0xff) as the key's tag with the
 *      MKEY mask bit set; a non-zero tag needs the context's update-tag
 *      support (the kernel's MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_MKEY_UPDATE_TAG),
 *      else EOPNOTSUPP at wr_complete, replacing an earlier error. The key
 *      takes the tag whatever its create flags: rdma-core creates the same
 *      mkey context with MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG and
 *      without it (the flag only asks the context's support; mkey_7_0 0,
 *      umr_en 1 either way).
 *        44.0 qp.c:mlx5_send_wr_mkey_configure:2870,2876,
 *             mlx5.c:mlx5_set_context:2412,
 *             verbs.c:_mlx5dv_create_mkey:6751-6761,6805-6812
 *        56.1 qp.c:mlx5_send_wr_mkey_configure:2877,2883, mlx5.c:2445
 *        65.0 qp.c:mlx5_send_wr_mkey_configure:2877,2883, mlx5.c:2459 (same)
 *      [tag_rules]
 *  R13 mlx5dv_create_mkey: create_flags 0, unknown, or UPDATE_TAG without
 *      the context's update-tag support -> EOPNOTSUPP (INDIRECT itself is
 *      not checked: every key is a KLM key); max_entries is rounded up to a
 *      multiple of 4 into the 16-bit num_desc (mlx5.h struct mlx5_mkey) and
 *      written back: 65533-65535 become 0 descriptors. The key is a DEVX
 *      object: a context opened without MLX5DV_CONTEXT_FLAGS_DEVX -> EINVAL
 *      (kernel devx.c devx_get_uid). BLOCK_SIGNATURE / CRYPTO keys: model,
 *      EOPNOTSUPP.
 *        44.0 verbs.c:_mlx5dv_create_mkey:6753-6761,6802,6824,6831
 *        56.1 verbs.c:_mlx5dv_create_mkey:6995-7003,7044,7066,7073
 *        65.0 verbs.c:_mlx5dv_create_mkey:7383-7391,7432,7454,7461 (same)
 *      [create_mkey_rules]
 *  R14 QP states: RESET -> INIT -> RTR -> RTS, any -> RESET/ERR; other
 *      transitions -> EINVAL. WRs executed while the QP is not in RTS, and
 *      every WR after an error, complete with IBV_WC_WR_FLUSH_ERR; the first
 *      failed WR moves the QP to ERR (kernel / verbs semantics). [qp_states]
 *  R15 a full SQ: (head - tail) + WRs in this batch >= max_post -> ENOMEM
 *      from the builder, returned by wr_complete; tail advances when a
 *      completion is polled (it frees every earlier WR).
 *        44.0 qp.c:_common_wqe_init_op:1244, mlx5_wq_overflow:198,
 *             cq.c:mlx5_parse_cqe:807
 *        56.1 qp.c:_common_wqe_init_op:1251, mlx5_wq_overflow:199,
 *             cq.c:mlx5_parse_cqe:807
 *        65.0 qp.c:_common_wqe_init_op:1251, mlx5_wq_overflow:199,
 *             cq.c:mlx5_parse_cqe:802 (same)
 *      [full_sq_enomem]
 *  R16 a failed builder rolls the whole batch back: nothing of it executes.
 *        44.0 qp.c:mlx5_send_wr_complete:1207
 *        56.1 qp.c:mlx5_send_wr_complete:1214   65.0 :1214 (same)
 *      [batch_rollback]
 *  R17 more SGEs than max_send_sge -> ENOMEM.
 *        44.0 qp.c:_mlx5_send_wr_set_sge_list:1707
 *        56.1 qp.c:_mlx5_send_wr_set_sge_list:1714   65.0 :1714 (same)
 *      [sge_enomem]
 *  R18 execution: an rkey must name a live key of the responder QP's
 *      protection domain with the current tag, a valid (configured, not
 *      invalidated) layout for an indirect key, REMOTE_WRITE/READ access and
 *      the range inside it, else IBV_WC_REM_ACCESS_ERR; an lkey likewise of
 *      the requester QP's PD (LOCAL_WRITE for a read's destination), else
 *      IBV_WC_LOC_PROT_ERR (IBTA vol. 1 10.6.3.x, memory region validation:
 *      the PD of the region and of the QP match, the access rights allow the
 *      operation, the range is inside); a peer QP that is gone or not
 *      connected -> IBV_WC_RETRY_EXC_ERR. The keys an indirect key points
 *      to are followed in its process; their PD and access are not checked
 *      (model: nothing documents whether the device checks them). The
 *      depth is the device's (R34). [remote_access_errors, pd_of_the_qp]
 *  R19 LOCAL_INV is a UMR WQE that sets the key free and writes tag 0 (the
 *      MKEY mask with qpn_mkey 0xffffff00 | (0 & 0xff): rdma-core builds it
 *      as a bind of rkey 0 without length); of an indirect key of the own
 *      process with the current tag it invalidates it, otherwise
 *      IBV_WC_LOC_PROT_ERR (hw, chosen).
 *        44.0 qp.c:mlx5_send_wr_local_inv:1627, _build_umr_wqe:1585,
 *             set_umr_control_seg:561, set_umr_mkey_seg:522-531
 *        56.1 qp.c:mlx5_send_wr_local_inv:1634, set_umr_mkey_seg:523-531
 *        65.0 :1634 (same)
 *      [local_inv]
 *  R20 completions: signaled WRs and every failed WR; opcode RDMA_WRITE,
 *      RDMA_READ, LOCAL_INV, or IBV_WC_DRIVER1 = MLX5DV_WC_UMR for a UMR
 *      (the builder stores the opcode, the CQ returns it for
 *      MLX5_OPCODE_UMR).
 *        44.0 qp.c:_common_wqe_init_op:1261,1263,
 *             cq.c:mlx5_cq_read_wc_opcode:1453, mlx5dv.h:437,
 *             libibverbs/verbs.h:533 (enum ibv_wc_opcode)
 *        56.1 qp.c:1268,1270, cq.c:1455, mlx5dv.h:453, verbs.h:536
 *        65.0 qp.c:1268,1270, cq.c:1449, mlx5dv.h:454, verbs.h:540
 *        (same value: 56.1 added IBV_WC_FLUSH = 8, below IBV_WC_RECV)
 *      [completions]
 *  R21 ibv_reg_mr: rdma-core passes the access to the kernel unchecked
 *      (44.0 libibverbs/verbs.c ibv_reg_mr_iova2:310-335, verbs.c
 *      mlx5_reg_mr:618 -> ibv_cmd_reg_mr; 56.1 :310, :630; master 691953d8d
 *      :311, :710: the same), which
 *      pins the range (kernel drivers/infiniband/core uverbs_cmd.c
 *      ib_uverbs_reg_mr -> mlx5_ib_reg_user_mr -> umem.c ib_umem_get). The
 *      model's part: umr_test_verbs_pin.h.
 *      a) REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE -> EINVAL
 *         (kernel include/rdma/ib_verbs.h ib_check_mr_access).
 *         [reg_mr_access_needs_local_write]
 *      b) every page must be mapped and readable, else EFAULT; with write
 *         access (ib_access_writable: LOCAL_WRITE, REMOTE_WRITE,
 *         REMOTE_ATOMIC, MW_BIND) the pages are pinned for writing
 *         (FOLL_WRITE), which the kernel refuses on memory the process may
 *         not write - a PROT_READ mapping, an mprotect'ed range - with
 *         EFAULT (mm/gup.c check_vma_flags: no VM_WRITE, no FOLL_FORCE).
 *         Read access pins any readable page (FOLL_LONGTERM alone, from
 *         Linux 6.2: "RDMA/umem: remove FOLL_FORCE usage"); before 6.2 it
 *         pinned with FOLL_WRITE | FOLL_FORCE, which a private mapping takes
 *         (copy on write) and a shared one without write permission refuses
 *         (check_vma_flags: !is_cow_mapping -> EFAULT):
 *         verbs_fake::kernel_before_6_2 (preload: UMR_MODEL_KERNEL=6.1).
 *         Not modelled: from 6.5 a write pin of a shared file mapping that
 *         needs dirty tracking (a disk file) is refused too
 *         (writable_file_mapping_allowed). [reg_mr_efault,
 *         reg_mr_write_access_on_read_only_mapping,
 *         reg_mr_read_only_before_linux_6_2]
 *      c) the MR addresses the pages pinned at registration, whatever the
 *         process maps at those addresses later: after munmap and a new
 *         mapping at the same address (or MADV_DONTNEED) a NIC reads and
 *         writes the old pages. The model records each page's frame
 *         (/proc/self/pagemap; CAP_SYS_ADMIN shows them) and holds the
 *         pages as a pin does (spliced into pipes), so that no other memory
 *         gets those frames; an access through an MR whose pages are not
 *         mapped there any more fails, IBV_WC_REM_ACCESS_ERR (remote key) or
 *         IBV_WC_LOC_PROT_ERR (local key), with a line on stderr (model: a
 *         NIC would move the old pages' bytes; failing makes a registration
 *         cache that missed an unmap fail its test instead of passing). Bound:
 *         private anonymous writable memory up to 64 MiB an MR (a file or
 *         shared mapping is not checked); frames the kernel moves by itself
 *         (migration, THP collapse, swap: no pin holds the model's pages)
 *         are recorded again, and after fork() the parent re-records its
 *         pages (the kernel copies pinned pages for the child instead).
 *         Pinned pages stay reachable to a NIC whatever the process does to
 *         their protection later; the model, copying with cross-memory
 *         attach, reports a protection error instead, so tests of protection
 *         changes after registration are sw-engine cases. [mr_bound_to_pages]
 *  R22 what the fake stands on: mlx5dv_wr_mr_interleaved / _list and the
 *      ibv_wr_* builders are static inline calls through the function
 *      pointers of mlx5dv_qp_ex / ibv_qp_ex; ibv_qp_to_qp_ex and
 *      mlx5dv_qp_ex_from_ibv_qp_ex are exported (so -Wl,--wrap= on them
 *      hands the engine the fake's QP).
 *        44.0 mlx5dv.h:mlx5dv_wr_mr_interleaved:518, mlx5dv_wr_mr_list:528,
 *             libibverbs/verbs.h:ibv_wr_start:1430,
 *             libibverbs/verbs.c:ibv_qp_to_qp_ex:668,
 *             verbs.c:mlx5dv_qp_ex_from_ibv_qp_ex:3354, libmlx5.map:107
 *        56.1 mlx5dv.h:534,544, verbs.h:1468, libibverbs/verbs.c:668,
 *             verbs.c:3476, libmlx5.map:107
 *        65.0 mlx5dv.h:535,545, verbs.h:1505, libibverbs/verbs.c:897,
 *             verbs.c:3691, libmlx5.map:107 (same)
 *      [wrap_assumptions_hold: checks the loaded libraries' symbols]
 *  R23 a UMR sets the key's free bit to 0 without CHECK_FREE, so a key in
 *      use may be configured again without LOCAL_INV (the engine's key
 *      rotation and the transport's LOCAL_INV are for remote keys, not
 *      rdma-core's need); the WQE after a UMR or LOCAL_INV carries the
 *      small initiator fence (the model executes in order anyway).
 *        44.0 qp.c:mlx5_send_wr_mkey_configure:2860,2886,2911,
 *             _common_wqe_init_op:1272
 *        56.1 qp.c:2867,2893,2918,1279   65.0 qp.c:2867,2893,2918,1279
 *        (same) [reconfigure_without_inv]
 *      What man mlx5dv_wr_post asks instead ("Unregister the mkey to enable
 *      another pattern registration should be done via ... IBV_WR_LOCAL_INV",
 *      mlx5dv_wr_post.3.md:106,120 in 44.0, 56.1 and 65.0) the model checks
 *      when verbs_fake::check_free is set, as a UMR with
 *      MLX5_WQE_UMR_CTRL_FLAG_CHECK_FREE would be: a UMR on a key that is
 *      not free (configured and not invalidated since) fails,
 *      IBV_WC_LOC_QP_OP_ERR (hw, chosen). [check_free_needs_local_inv]
 *
 * Addressing and the fabric (the path between hosts). Every process is on
 * a simulated host (verbs_fake::host) of a fabric (verbs_fake::fabric); the
 * host's link, LID and port events are shared by its processes.
 *  R24 modify_qp: the attributes each RC transition requires (RESET->INIT:
 *      PKEY_INDEX, PORT, ACCESS_FLAGS; INIT->RTR: AV, PATH_MTU, DEST_QPN,
 *      RQ_PSN, MAX_DEST_RD_ATOMIC, MIN_RNR_TIMER; RTR->RTS: TIMEOUT,
 *      RETRY_CNT, RNR_RETRY, SQ_PSN, MAX_QP_RD_ATOMIC) -> else EINVAL
 *      (kernel drivers/infiniband/core/verbs.c qp_state_table,
 *      ib_modify_qp_is_ok); pkey_index beyond the port's table -> EINVAL.
 *      [modify_qp_required_attrs]
 *  R25 RTR on a RoCE port without a GRH (ah_attr.is_global 0) -> EINVAL; a
 *      GRH whose sgid_index is beyond the GID table or an empty entry ->
 *      EINVAL (kernel drivers/infiniband/hw/mlx5/qp.c mlx5_set_path).
 *      [roce_needs_grh]
 *  R26 a packet reaches the peer QP only over a working path, in both
 *      directions (requests and ACKs/read responses): the same fabric, both
 *      links up, the same link layer; IB: dlid the peer port's LID now, a
 *      GRH's dgid the peer port's GID, pkeys of one partition with a full
 *      member (IBTA: a pkey mismatch drops the packet); RoCE: dgid the GID
 *      the peer QP sends from, of the same GID type (RoCE v1/v2); path_mtu
 *      at most the receiving port's active MTU. Otherwise the requester
 *      retries for 4.096 us * 2^timeout * (retry_cnt + 1) (timeout 0: for
 *      ever), as RC does, then fails: IBV_WC_RETRY_EXC_ERR, QP to ERR (hw,
 *      chosen: a real fabric may also drop some packets only). The same wait
 *      covers a peer QP not in RTR yet. A peer whose process is gone, whose
 *      QP is destroyed or in ERR fails at once (model: a NIC would wait
 *      the same budget and fail the same way). [path_checks, retry_budget]
 *  R27 RDMA reads a requester sends back to back (the reads of one pass
 *      of the model's NIC), up to its own max_rd_atomic, beyond the peer's
 *      max_dest_rd_atomic -> IBV_WC_REM_INV_REQ_ERR (IBTA: a responder
 *      without read resources NAKs Invalid Request). [read_depth]
 *  R28 a remote access error (R18) also moves the responder QP to ERR and
 *      raises IBV_EVENT_QP_ACCESS_ERR on it (IBTA responder class C).
 *      [responder_access_error]
 *  R29 async events: ibv_get_async_event returns the events of the
 *      context's port (PORT_ERR when its host's link goes down, PORT_ACTIVE
 *      when it comes up, LID_CHANGE) and the affiliated events of its QPs
 *      (QP_ACCESS_ERR, R28; QP_FATAL, model_qp_raise); with nothing pending
 *      -1 / EAGAIN on an O_NONBLOCK async_fd, and on a blocking one the
 *      call would block for ever: the model aborts the test. ibv_query_port
 *      reports the link's state and LID now. [async_events]
 *  R30 the largest send WQE is the device's max_sq_desc_sz (from the
 *      kernel; 1 KiB on a ConnectX, verbs_fake::max_sq_desc_sz here): R2
 *      with that value. [small_max_sq_desc_sz]
 *  R31 a QP created without mlx5 send operations (no
 *      MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS, or none set) gets no mlx5dv
 *      builder: mlx5_qp_fill_wr_pfns sets wr_mr_interleaved / wr_mr_list
 *      only "if (mlx5_ops)", the QP is calloc'd, so they stay NULL, and
 *      mlx5dv_wr_mr_interleaved / _list call through them unchecked: the
 *      process crashes (model: a message, then abort()). The RC builders,
 *      wr_local_inv included, are set whatever the send operations ("Set
 *      all supported micro-functions regardless user request"); only R1
 *      sizes the WQE for what was asked.
 *        44.0 qp.c:mlx5_qp_fill_wr_pfns:3574,3586,3595,
 *             verbs.c:create_qp:2306, mlx5dv.h:518,528
 *        56.1 qp.c:3581,3593,3602, verbs.c:2410, mlx5dv.h:534,544
 *        65.0 qp.c:3581,3593,3602, verbs.c:2533, mlx5dv.h:535,545 (same)
 *      [no_umr_builders_without_mlx5_send_ops]
 *  R32 port events and what comes with them: PORT_ERR / PORT_ACTIVE the
 *      link down / up, LID_CHANGE a new LID (ibv_query_port), GID_CHANGE a
 *      changed or added GID table entry (ibv_query_gid / _ex, gid_tbl_len);
 *      CLIENT_REREGISTER (a subnet manager that took over asks its clients
 *      to register again: the port's addresses stay), PKEY_CHANGE (of an
 *      entry the model's tables do not use) and SM_CHANGE change nothing.
 *      The kernel raises each on the port's contexts (kernel
 *      drivers/infiniband/hw/mlx5/main.c handle_port_change: PORT_ERR,
 *      PORT_ACTIVE, LID_CHANGE, PKEY_CHANGE, GID_CHANGE, CLIENT_REREGISTER
 *      from the port-change EQE's subtype; core/cache.c
 *      ib_cache_update / dispatch_gid_change_event: GID_CHANGE when the
 *      RoCE GID table changes with the netdev's addresses); a consumer
 *      re-reads what it uses (UCX only logs them: ib_device.c
 *      uct_ib_handle_async_event, 1.13.1:513-529, 1.21.0:486-503). Scheduled
 *      by the host spec's event=NAME@N (umr_test_verbs_preload.cc).
 *      [port_events_and_their_effect]
 *  R33 ibv_create_ah on a RoCE port: no GRH, an sgid_index beyond the GID
 *      table or an empty entry -> EINVAL (kernel core/verbs.c
 *      rdma_create_ah -> rdma_fill_sgid_attr -> rdma_get_gid_attr:
 *      -EINVAL/-ENOENT for an empty entry); a GID whose netdev has no
 *      route for it (the kernel resolves the destination MAC through the
 *      netdev: core/verbs.c ib_resolve_eth_dmac, addr.c
 *      rdma_addr_find_l2_eth_by_grh) -> EADDRNOTAVAIL (model: the port's
 *      dead_gids; host spec dead_gid=I). UCX tests each candidate GID so
 *      (ib_device.c uct_ib_device_test_roce_gid_index, 1.13.1:1109,
 *      1.21.0:974). The IP subnets of RoCE hosts (host spec subnet=N): a
 *      host of subnet N has link-local fe80::<host+1> and global
 *      2001:db8:N::<host+1> GIDs; a link-local dgid reaches only a peer of
 *      the same subnet (R26: link-local addresses are not routed).
 *      [create_ah_rules, link_local_stays_on_its_subnet]
 *  R34 the device's UMR capabilities (verbs_fake::hca, host spec
 *      umr_fence=, max_indirection=, klm=, atomic_umr=, devx=):
 *      mlx5dv_devx_general_cmd(QUERY_HCA_CAP, general, current) answers
 *      them at mlx5_ifc.h's offsets (cmd_hca_cap_bits; UCX reads the same
 *      command, ib_mlx5dv_md.c uct_ib_mlx5dv_md_open, 1.13.1:893), other
 *      commands EOPNOTSUPP (model), a context without DEVX EINVAL;
 *      QUERY_HCA_VPORT_CONTEXT answers ooo_sl_mask (hca_vport_context
 *      0x290/16) when the capability bit ooo_sl_mask (0x138) is set (host
 *      spec ooo_sl_mask=MASK; UCX: ib_mlx5_dv.c
 *      uct_ib_mlx5_devx_query_ooo_sl_mask). What the
 *      device does with them:
 *      - an indirect key at depth >= max_indirection (the top key at depth
 *        0) fails the access (kernel drivers/infiniband/hw/mlx5/odp.c
 *        pagefault_single_data_segment: "indirection level exceeded");
 *        the limit is that of the key's own device;
 *      - umr_modify_atomic_disabled: every UMR fails, IBV_WC_LOC_QP_OP_ERR
 *        (rdma-core sets MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_ATOMIC in every
 *        UMR: qp.c mlx5_send_wr_set_mkey_access_flags, 44.0:2933, 56.1
 *        and master the same; the kernel refuses such a UMR itself: umr.c
 *        umr_check_mkey_mask, -EPERM; hw, chosen: the completion error);
 *      - umr_fence: a UMR or LOCAL_INV WQE rung behind WQEs of its QP not
 *        executed yet waits for them only with the fence the device asks,
 *        otherwise it executes first (at the doorbell; its completion keeps
 *        its place). The kernel fences its own UMR WQE with umr_fence
 *        (main.c mlx5_get_umr_fence: STRONG -> strong ordering, SMALL ->
 *        initiator small, NONE -> none; wr.c mlx5_ib_post_send). rdma-core
 *        gives a WQE IBV_SEND_FENCE -> MLX5_WQE_CTRL_FENCE (4 << 5, small
 *        and fence), else the small fence a UMR or LOCAL_INV leaves in
 *        fm_cache for the next WQE (qp.c _common_wqe_init_op 44.0:1272,
 *        mlx5_send_wr_mkey_configure:2911, mlx5_send_wr_local_inv:1610;
 *        56.1 and master :1279, :2918, :1617). Small: either fence serves;
 *        strong: none of rdma-core's does (hw, chosen: a race made
 *        certain). Defaults (model_hca_defaults, chosen: no public table
 *        per adapter): umr_fence small, max_indirection 4,
 *        log_max_klm_list_size 16, atomics allowed.
 *      [device_capabilities]
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
    MODEL_MAX_HOSTS      = 256    /* simulated hosts of one fabric table */
};

/* The rules that differ between rdma-core releases (DIFFERS above). */
struct model_rules {
    unsigned major;                      /* the release, e.g. 44.0 */
    unsigned minor;
    bool     sq_overhead_mkey_configure; /* R1: _sq_overhead counts
                                            MLX5DV_QP_EX_WITH_MKEY_CONFIGURE */
    bool     list_length_64;             /* R11: umr_sg_list_create sums in a
                                            uint64_t, not an int */
};

/* The rules of rdma-core MAJOR.MINOR (those of 44.0 for older ones, which
 * the model was not checked against). */
model_rules model_rules_for(unsigned major, unsigned minor);
/* Those of the release configure found (pkg-config libmlx5,
 * UMR_RDMA_CORE_MAJOR/_MINOR); major 0 when it found none. */
model_rules model_rules_installed();
/* The rules the model follows: verbs_fake::reset() sets the installed
 * release's; a test may set another's to show a difference. */
const model_rules &model_get_rules();
void               model_set_rules(const model_rules &rules);

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
    uint64_t                                  reglen;  /* UMR: the length
                                                          the builder wrote
                                                          (R11) */
    int                                       fence;   /* MODEL_WQE_FENCE_*
                                                          (R34) */
    bool                                      early;   /* R34: executed at
                                                          the doorbell */
    int                                       early_status;
};

/* R34: what the device answers to DEVX QUERY_HCA_CAP (general, current)
 * and does with it: the device spec of verbs_fake::hca (the host spec's
 * umr_fence=, max_indirection=, klm=, atomic_umr=, devx= knobs). */
enum {
    MODEL_FENCE_STRONG = 0,     /* MLX5_CAP_UMR_FENCE_* (mlx5_ifc.h) */
    MODEL_FENCE_SMALL  = 1,
    MODEL_FENCE_NONE   = 2
};

struct model_hca_caps {
    int      devx_errno;                 /* 0: DEVX commands answered */
    uint8_t  umr_fence;                  /* MODEL_FENCE_* */
    uint8_t  max_indirection;            /* levels of indirect keys */
    uint8_t  log_max_klm_list_size;
    uint8_t  umr_modify_atomic_disabled;
    uint8_t  atomic;
    bool     ooo_sl_cap;                 /* QUERY_HCA_VPORT_CONTEXT reports */
    uint16_t ooo_sl_mask;                /* the SLs routed adaptively */
};

/* The capabilities of a ConnectX as the model's device has them by default
 * (chosen: no public table gives them per adapter; hw-check prints a
 * device's own). */
model_hca_caps model_hca_defaults();

/* R34: mlx5dv_devx_general_cmd: 0 or an errno. */
int model_devx_general_cmd(struct ibv_context *ctx, const void *in,
                           size_t inlen, void *out, size_t outlen);

/* The fence a WQE carries (R34), as rdma-core builds it. */
enum {
    MODEL_WQE_FENCE_NONE,
    MODEL_WQE_FENCE_SMALL,      /* MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE */
    MODEL_WQE_FENCE_SMALL_AND   /* MLX5_WQE_CTRL_FENCE (4 << 5) */
};

/* Model state of one QP (the fake QP embeds it). */
struct model_qp {
    uint32_t              max_inline_data;
    uint32_t              max_gs;
    uint32_t              max_post;
    uint64_t              sq_bytes;      /* the send queue (R4) */
    uint64_t              head;          /* WRs executed */
    uint64_t              tail;          /* WRs whose completion freed them */
    int                   err;           /* sticky builder error */
    std::vector<model_wr> batch;
    bool                  in_batch;
    std::vector<model_wr> posted;        /* rung, not yet executed */
    double                blocked_since; /* peer not ready: retrying */
    bool                  fm_small;      /* R34: the next WQE carries the
                                            small fence (rdma-core's
                                            fm_cache after a UMR) */
    bool                  fm_small_rb;   /* at wr_start (rolled back) */
};

/* Rules R1-R5 at mlx5dv_create_qp: 0 or an errno; fills the write-back. */
int model_create_qp(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr,
                    const struct mlx5dv_qp_init_attr *dv_attr, model_qp *mqp);

/* QP number from the shared table; released by model_qp_release. */
uint32_t model_qp_alloc(const struct ibv_pd *pd = NULL);
void     model_qp_release(uint32_t qpn);
int      model_modify_qp(struct ibv_qp *qp, const struct ibv_qp_attr *attr,
                         int mask);

/* Keys: 0 or an errno. */
int  model_reg_mr(void *addr, size_t length, int access, uint32_t *key_p,
                  const struct ibv_pd *pd = NULL);
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
 * SQ when polled. A WR to a peer QP that is not connected (yet), or over a
 * path that does not work (R26), is retried for the QP's retry budget,
 * then fails with IBV_WC_RETRY_EXC_ERR, as an RC requester retries. */
int  model_wr_complete(struct ibv_qp_ex *qpx, model_qp *mqp);
void model_wr_abort(model_qp *mqp);
void model_progress(struct ibv_qp *qp, model_qp *mqp);

/* ---- hosts, the fabric and async events (R24-R29) ---- */

/* Share the fabric table with unrelated processes: the POSIX shared memory
 * object `name` (created by the first, attached by the others). Call before
 * any verbs object exists; the default table is shared with forked
 * children only. 0 or an errno. */
int  model_attach_shared(const char *name);
/* Every host's link up, its LID as its ports say, no pending link-down
 * (verbs_fake::reset() calls it). */
void model_hosts_reset();
/* The link of `host` goes down (PORT_ERR) or up (PORT_ACTIVE). */
void model_host_set_link(uint32_t host, bool up);
/* The link of `host` goes down once its NICs moved `wrs` more RDMA work
 * requests (from or to it); set once (the first call wins). */
void model_host_link_down_after(uint32_t host, uint64_t wrs);
/* The LID of `host` changes (LID_CHANGE; IB). */
void model_host_set_lid(uint32_t host, uint16_t lid);
/* R32: raise port event `event` on `host` with its effect (see the rule;
 * GID_CHANGE: entry `arg` of the GID table gets a new global IPv6 GID). */
void model_host_raise(uint32_t host, enum ibv_event_type event,
                      uint32_t arg = 0);
/* R32: entry `index` of the GID table of `host` (one past the table: a new
 * entry) holds `gid` of `type` from now on (GID_CHANGE). */
void model_host_set_gid(uint32_t host, uint32_t index, const uint8_t gid[16],
                        enum ibv_gid_type type);
/* R32: raise events on `host` once its NICs moved that many more RDMA
 * work requests (the host spec's event=NAME@N); set once (the first call
 * wins). 0 or EINVAL (more than 8). */
struct model_host_sched {
    enum ibv_event_type event;
    uint64_t            wrs;
    uint32_t            arg;
};
int  model_host_events_after(uint32_t host,
                             const std::vector<model_host_sched> &events);
/* R32: what the GID table entry `index` holds if an event changed it. */
bool model_gid_overlay(struct ibv_context *ctx, uint32_t index,
                       struct ibv_gid_entry *entry);
/* R33: ibv_create_ah: 0 or an errno. */
int  model_create_ah(struct ibv_context *ctx, const struct ibv_ah_attr *attr);
/* The link of `host` is up. */
bool model_host_link_up(uint32_t host);
/* Raise an affiliated event on QP `qpn` (QP_FATAL etc.) and move it to
 * ERR. */
void model_qp_raise(uint32_t qpn, enum ibv_event_type event);
/* The QP's state in the shared table (IBV_QPS_*), -1 if none. */
int  model_qp_state(uint32_t qpn);

/* What the fake's verbs call (R29). */
void model_port_overlay(struct ibv_context *ctx, uint8_t port_num,
                        struct ibv_port_attr *attr);
int  model_get_async_event(struct ibv_context *ctx,
                           const std::vector<struct ibv_qp*> &qps,
                           struct ibv_async_event *event);

/* For tests: the key's current state in the shared table. */
struct model_key_info {
    bool     exists;
    bool     valid;        /* indirect: configured and not invalidated */
    uint32_t tag;
    uint64_t length;
    uint32_t num_desc;
    bool     update_tag;
    bool     bound;        /* MR: bound to the pages it pinned (R21c) */
};
model_key_info model_key_query(uint32_t key);

} // namespace umr_test

#endif
