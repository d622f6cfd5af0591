/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * The model of rdma-core: what ibv_reg_mr pins (R21 of
 * umr_test_verbs_model.h; see umr_test_verbs_pin.h).
 */
#include "umr_test_verbs_pin.h"

#include <infiniband/verbs.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

/* A pin takes whole pages, not the program's bytes: memcheck, which checks
 * vmsplice's iovec as data, is told not to report it. */
#if defined(__has_include)
#  if __has_include(<valgrind/valgrind.h>)
#    undef NVALGRIND
#    include <valgrind/valgrind.h>
#  endif
#endif
#ifndef VALGRIND_DISABLE_ERROR_REPORTING
#  define VALGRIND_DISABLE_ERROR_REPORTING
#  define VALGRIND_ENABLE_ERROR_REPORTING
#endif

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23   /* Linux 5.14 */
#endif

namespace umr_test {

namespace {

/* One mapping of /proc/self/maps. */
struct vma {
    uintptr_t start, end;
    bool      read, write, shared, anon;
};

/* The mappings over [lo, hi), in order; false if a byte of it is in none
 * (or the file cannot be read). */
bool vmas_over(uintptr_t lo, uintptr_t hi, std::vector<vma> &out)
{
    FILE *f = fopen("/proc/self/maps", "re");
    char *line = NULL, perms[8], path[256];
    size_t cap = 0;
    uintptr_t at = lo;
    unsigned long start, end, inode;

    if (f == NULL) {
        return false;
    }
    while ((at < hi) && (getline(&line, &cap, f) > 0)) {
        path[0] = '\0';
        if (sscanf(line, "%lx-%lx %7s %*x %*x:%*x %lu %255s", &start, &end,
                   perms, &inode, path) < 4) {
            continue;
        }
        if (end <= at) {
            continue;
        }
        if (start > at) {
            break;      /* a hole */
        }
        vma v;
        v.start  = start;
        v.end    = end;
        v.read   = (perms[0] == 'r');
        v.write  = (perms[1] == 'w');
        v.shared = (perms[3] == 's');
        v.anon   = (inode == 0) &&
                   ((path[0] == '\0') || !strcmp(path, "[heap]") ||
                    !strcmp(path, "[stack]") || !strncmp(path, "[anon:", 6));
        out.push_back(v);
        at = end;
    }
    free(line);
    fclose(f);
    return at >= hi;
}

uintptr_t page_size()
{
    static uintptr_t page = sysconf(_SC_PAGESIZE);
    return page;
}

/* What the kernel moved by itself (no pin holds the model's pages):
 * migrations (compaction, NUMA), THP collapses, swap-outs, lazily freed
 * pages reclaimed (MADV_FREE). */
uint64_t kernel_moves()
{
    static const char *names[] = {"pgmigrate_success", "thp_collapse_alloc",
                                  "pswpout", "pglazyfreed"};
    FILE *f = fopen("/proc/vmstat", "re");
    char name[64];
    unsigned long long v;
    uint64_t sum = 0;

    if (f == NULL) {
        return 0;
    }
    while (fscanf(f, "%63s %llu", name, &v) == 2) {
        for (const char *n : names) {
            sum += strcmp(name, n) ? 0 : v;
        }
    }
    fclose(f);
    return sum;
}

/* The frames of npages pages from `first` in process pid (0: not present,
 * or frames hidden without CAP_SYS_ADMIN); false if pagemap is unreadable. */
bool read_frames(int32_t pid, uintptr_t first, uint64_t npages,
                 uint64_t *frames)
{
    std::string path = "/proc/" + ((pid == getpid()) ? std::string("self") :
                                   std::to_string(pid)) + "/pagemap";
    size_t len = npages * sizeof(uint64_t);
    int fd     = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ssize_t ret;

    if (fd < 0) {
        return false;
    }
    ret = pread(fd, frames, len, (off_t)(first / page_size() * 8));
    close(fd);
    if (ret != (ssize_t)len) {
        return false;
    }
    for (uint64_t i = 0; i < npages; ++i) {
        /* bit 63: present; bits 0-54: the frame */
        frames[i] = (frames[i] >> 63) ? (frames[i] & ((1ull << 55) - 1)) : 0;
    }
    return true;
}

/* The record of pid's MR: read or written through cross-memory attach
 * when the MR is another process's. */
bool record_io(int32_t pid, const pin_frames *pf, uint64_t idx, uint64_t n,
               uint64_t *buf, bool write)
{
    void *at = (uint64_t*)(uintptr_t)pf->frames + idx;
    struct iovec local  = {buf, n * sizeof(uint64_t)};
    struct iovec remote = {at, n * sizeof(uint64_t)};

    if (pid == getpid()) {
        memcpy(write ? at : buf, write ? buf : at, local.iov_len);
        return true;
    }
    return (write ? process_vm_writev(pid, &local, 1, &remote, 1, 0) :
                    process_vm_readv(pid, &local, 1, &remote, 1, 0)) ==
           (ssize_t)local.iov_len;
}

/* Records bound by this process (the owner re-records them after fork). */
std::set<pin_frames*> &own_records()
{
    static std::set<pin_frames*> records;
    return records;
}

/* Pipes holding pages, this process's. */
unsigned &held_pipes()
{
    static unsigned n;
    return n;
}

void release(pin_frames *pf)
{
    while (pf->nhold > 0) {
        close(pf->hold[--pf->nhold]);
        --held_pipes();
    }
}

/* Hold the pages: each pipe takes references on up to 1 MiB of them
 * (vmsplice without SPLICE_F_GIFT), as a pin would. */
bool hold(pin_frames *pf)
{
    const size_t chunk = 1 << 20;
    uintptr_t at = pf->first, end = pf->first + pf->npages * page_size();
    int p[2];

    while (at < end) {
        struct iovec iov = {(void*)at, std::min<size_t>(chunk, end - at)};
        if ((pf->nhold == PIN_HOLD_FDS) || (held_pipes() >= PIN_MAX_HELD) ||
            (pipe2(p, O_CLOEXEC) != 0)) {
            return false;
        }
        pf->hold[pf->nhold++] = p[0];
        ++held_pipes();
        fcntl(p[1], F_SETPIPE_SZ, (int)chunk);
        while (iov.iov_len > 0) {
            VALGRIND_DISABLE_ERROR_REPORTING;
            ssize_t n = vmsplice(p[1], &iov, 1, 0);
            VALGRIND_ENABLE_ERROR_REPORTING;
            if (n <= 0) {
                close(p[1]);
                return false;
            }
            iov.iov_base = (char*)iov.iov_base + n;
            iov.iov_len -= n;
        }
        close(p[1]);
        at = (uintptr_t)iov.iov_base;
    }
    return true;
}

/* Fault in for writing, as a write pin does (FOLL_WRITE: private pages of
 * this process), hold the pages and record their frames. */
bool record(pin_frames *pf)
{
    uint64_t moved = kernel_moves();  /* before: a move after it shows */

    release(pf);
    if ((madvise((void*)(uintptr_t)pf->first, pf->npages * page_size(),
                 MADV_POPULATE_WRITE) != 0) || !hold(pf) ||
        !read_frames(getpid(), pf->first, pf->npages,
                     (uint64_t*)(uintptr_t)pf->frames)) {
        return false;
    }
    for (uint64_t i = 0; i < pf->npages; ++i) {
        if (((uint64_t*)(uintptr_t)pf->frames)[i] == 0) {
            return false;
        }
    }
    pf->moved = moved;
    return true;
}

/* After fork the parent's pages are shared copy-on-write with the child.
 * A pinned page stays the parent's (the kernel copies it for the child at
 * fork); here the parent's first write would move it: the parent takes its
 * copies now and records them. The child's records are the parent's. */
void after_fork_parent()
{
    for (pin_frames *pf : own_records()) {
        if (!record(pf)) {
            release(pf);
            pf->npages = 0;
        }
    }
}

void after_fork_child()
{
    for (pin_frames *pf : own_records()) {
        for (uint32_t i = 0; i < pf->nhold; ++i) {
            close(pf->hold[i]);
        }
    }
    held_pipes() = 0;
    own_records().clear();
}

/* The pages pin_frames_ok checked in this operation (one MR at a time). */
struct checked_t {
    uint64_t         op;
    const pin_frames *pf;
    uintptr_t        lo, hi;
};
thread_local uint64_t  op_seq;
thread_local checked_t checked;

} // namespace

int pin_check(const void *addr, size_t length, int access,
              bool kernel_before_6_2)
{
    uintptr_t lo = (uintptr_t)addr & ~(page_size() - 1);
    uintptr_t hi = (uintptr_t)addr + length;
    bool writable;
    std::vector<vma> vmas;

    /* kernel include/rdma/ib_verbs.h ib_check_mr_access */
    if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
        !(access & IBV_ACCESS_LOCAL_WRITE)) {
        return EINVAL;
    }
    if (length == 0) {
        return 0;
    }
    /* ib_access_writable: the pages are pinned for writing (FOLL_WRITE) */
    writable = access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                         IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND);
    if (!vmas_over(lo, hi, vmas)) {
        return EFAULT;
    }
    for (const vma &v : vmas) {
        /* mm/gup.c check_vma_flags: no write without VM_WRITE unless
         * FOLL_FORCE, and FOLL_FORCE only in a copy-on-write mapping */
        if (!v.read || (writable && !v.write) ||
            (!writable && kernel_before_6_2 && !v.write && v.shared)) {
            return EFAULT;
        }
    }
    return 0;
}

void pin_bind(const void *addr, size_t length, pin_frames *pf)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    uintptr_t first = (uintptr_t)addr & ~(page_size() - 1);
    uintptr_t end   = ((uintptr_t)addr + length + page_size() - 1) &
                      ~(page_size() - 1);
    std::vector<vma> vmas;

    memset(pf, 0, sizeof(*pf));
    if ((length == 0) || !vmas_over(first, end, vmas)) {
        return;
    }
    for (const vma &v : vmas) {
        if (!v.anon || v.shared || !v.write) {
            return;     /* not modelled: a file page, a shared page */
        }
    }

    pthread_once(&once, [] {
        pthread_atfork(NULL, after_fork_parent, after_fork_child);
    });
    pf->first  = first;
    pf->npages = (end - first) / page_size();
    pf->frames = (uintptr_t)calloc(pf->npages, sizeof(uint64_t));
    if ((pf->frames == 0) || !record(pf)) {
        release(pf);
        free((void*)(uintptr_t)pf->frames);
        memset(pf, 0, sizeof(*pf));
        return;
    }
    own_records().insert(pf);
}

void pin_unbind(pin_frames *pf)
{
    if (own_records().erase(pf)) {
        release(pf);
        free((void*)(uintptr_t)pf->frames);
    }
    memset(pf, 0, sizeof(*pf));
}

void pin_op_begin()
{
    ++op_seq;
}

bool pin_frames_ok(int32_t pid, pin_frames *pf, uint64_t lo, uint64_t hi)
{
    uintptr_t mr_end = pf->first + pf->npages * page_size();
    uintptr_t plo, phi;
    uint64_t idx, n, moved;

    if ((pf->npages == 0) || (lo >= hi)) {
        return true;
    }
    plo = std::max<uintptr_t>(lo & ~(page_size() - 1), pf->first);
    phi = std::min<uintptr_t>((hi + page_size() - 1) & ~(page_size() - 1),
                              mr_end);
    if ((checked.op == op_seq) && (checked.pf == pf) &&
        (plo >= checked.lo) && (phi <= checked.hi)) {
        return true;
    }

    idx = (plo - pf->first) / page_size();
    n   = (phi - plo) / page_size();
    std::vector<uint64_t> now(n), then(n);
    if (!read_frames(pid, plo, n, now.data()) ||
        !record_io(pid, pf, idx, n, then.data(), false)) {
        return true;    /* nothing to compare with */
    }
    if (now != then) {
        moved = kernel_moves();
        if (moved == pf->moved) {
            return false;
        }
        /* the kernel moved pages: record them again */
        std::vector<uint64_t> all(pf->npages);
        if (read_frames(pid, pf->first, pf->npages, all.data()) &&
            record_io(pid, pf, 0, pf->npages, all.data(), true)) {
            pf->moved = moved;
        }
    }
    checked = {op_seq, pf, plo, phi};
    return true;
}

bool pin_frames_visible()
{
    static int visible = -1;
    uint64_t frame;
    volatile char probe = 1;

    if (visible < 0) {
        visible = read_frames(getpid(), (uintptr_t)&probe, 1, &frame) &&
                  (frame != 0);
    }
    return visible;
}

} // namespace umr_test
