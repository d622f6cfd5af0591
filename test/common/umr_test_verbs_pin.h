/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * The model of rdma-core (umr_test_verbs_model.h): what ibv_reg_mr pins,
 * rule R21 of its table - the access a registration may ask for (R21a),
 * the pages it may pin (R21b), and the pages its MR then addresses
 * (R21c). Test-only code.
 */
#ifndef UMR_TEST_VERBS_PIN_H_
#define UMR_TEST_VERBS_PIN_H_

#include <stddef.h>
#include <stdint.h>

namespace umr_test {

/* R21a, R21b: 0, or the errno ibv_reg_mr fails with for (addr, length,
 * access). kernel_before_6_2: read-only registrations pin as before Linux
 * 6.2 (FOLL_WRITE | FOLL_FORCE: a shared mapping without write permission
 * is refused). */
int pin_check(const void *addr, size_t length, int access,
              bool kernel_before_6_2);

/* Pipes (of at most 1 MiB each, pipe-max-size) one MR may hold its pages
 * with: MRs up to 64 MiB are bound. */
#define PIN_HOLD_FDS 64

/* R21c: the page frames an MR pinned, kept by the process that registered
 * it (plain data: it lives in the model's shared key table). The pages are
 * held as a pin holds them - spliced into pipes (vmsplice takes a
 * reference on each) - so their frames are not given to other memory while
 * the MR lives: memory mapped at the same address later has other frames. */
struct pin_frames {
    uint64_t frames;    /* address of the frame array, in the owner */
    uint64_t first;     /* address of the first page */
    uint64_t npages;    /* 0: not bound (see pin_bind) */
    uint64_t moved;     /* the kernel's page movements when recorded */
    int32_t  hold[PIN_HOLD_FDS]; /* pipes holding the pages, in the owner */
    uint32_t nhold;
};

/* Fault the pages of [addr, addr + length) in as a pin does, hold them and
 * record their frames in *pf. Bound only for private anonymous writable
 * memory (heap, stacks, anonymous mappings) on a machine whose pagemap
 * shows frames (CAP_SYS_ADMIN), up to PIN_HOLD_FDS MiB, while the process
 * holds fewer than PIN_MAX_HELD pipes; else pf->npages stays 0 and nothing
 * is checked. */
#define PIN_MAX_HELD 256
void pin_bind(const void *addr, size_t length, pin_frames *pf);
/* The owner drops the record (ibv_dereg_mr). */
void pin_unbind(pin_frames *pf);

/* A new RDMA operation: pin_frames_ok checks each page once per operation. */
void pin_op_begin();
/* Whether the pages of [lo, hi) of the MR of process `pid` whose record is
 * *pf are still the ones it pinned; false after they were unmapped and
 * others mapped there (a NIC would reach the old ones). Pages the kernel
 * moved by itself since the record (migration, compaction, THP collapse,
 * swap: no pin holds them here) are recorded again, never reported. */
bool pin_frames_ok(int32_t pid, pin_frames *pf, uint64_t lo, uint64_t hi);

/* Whether this process sees page frames (else pin_bind binds nothing). */
bool pin_frames_visible();

} // namespace umr_test

#endif
