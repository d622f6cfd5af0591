#!/usr/bin/python3
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
"""
osc rdma, osc/umr and MPICH side by side (contrib/run-osc-bench.sh).

usage: osc-bench-mpich.py --ompi FILE... --mpich FILE...
       osc-bench-mpich.py --mpich FILE... --mpich-umr FILE...

The --ompi files are bench_osc_umr runs under Open MPI (columns umr[us]:
the window with osc/umr in front, plain[us]: the window without it, osc
rdma on one host); the --mpich files runs of the same program built for
MPICH (both windows MPICH's: the better of its two medians). Each cell's
time is the best over the runs. Prints a Markdown table: the three times
in us, osc/umr's speed against MPICH's (MPICH time / osc/umr time: >= 1
means osc/umr is at least as fast) and against osc rdma's, and lists the
cells below 0.95x of MPICH and, at 8-512 B blocks, below 2.5x of osc rdma.

With --mpich-umr (runs of the MPICH build with libumr_mpich.so preloaded:
both windows of a job the library's, the better of its two medians): MPICH
alone against MPICH + libumr_mpich.so per cell, and the cells below target
(2x MPICH at 4 KiB and 32 KiB blocks, 0.95x elsewhere).
"""
import importlib.util
import os
import sys

# the rows as osc-bench-report.py reads them
_spec = importlib.util.spec_from_file_location(
    "osc_bench_report",
    os.path.join(os.path.dirname(os.path.abspath(__file__)),
                 "osc-bench-report.py"))
_report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_report)


def read(path):
    return {(r["win"], r["ttype"], r["op"], r["origin"], r["sync"], r["block"]):
            (r["umr"], r["plain"]) for r in _report.read(path)}


def best(files, pick):
    out = {}
    for path in files:
        for key, (a, b) in read(path).items():
            t = pick(a, b)
            out[key] = min(out.get(key, t), t)
    return out


def cells(times):
    """The cells of `times` in the tables' order: window, target, put
    first, origin, sync, block."""
    return sorted(times, key=lambda k: (k[0], k[1], k[2] != "put", k[3],
                                        k[4], k[5]))


def fmt_block(b):
    return "%d KiB" % (b // 1024) if b >= 1024 else "%d B" % b


def files_after(argv, opt):
    i = argv.index(opt)
    out = []
    for a in argv[i + 1:]:
        if a.startswith("--"):
            break
        out.append(a)
    return out


def main_umr(argv):
    mp = best(files_after(argv, "--mpich"), min)
    lib = best(files_after(argv, "--mpich-umr"), min)
    print("\n# best of %d MPICH and %d MPICH + libumr_mpich.so run(s); x = "
          "MPICH's time / the library's (>= 1: as fast or faster)\n" %
          (len(files_after(argv, "--mpich")),
           len(files_after(argv, "--mpich-umr"))))
    print("| window | target | op | origin | sync | block | MPICH [us] | "
          "MPICH + libumr_mpich.so [us] | x |")
    print("|---|---|---|---|---|---|---|---|---|")
    low = []
    for key in cells(lib):
        if key not in mp:
            continue
        m, u = mp[key], lib[key]
        x = m / u
        print("| %s | %s | %s | %s | %s | %s | %.1f | %.1f | %.2fx |" %
              (key[:5] + (fmt_block(key[5]), m, u, x)))
        want = 2.0 if key[5] in (4096, 32768) else 0.95
        if x < want:
            low.append("%s: %.2fx of MPICH (target %.2fx)" %
                       (" ".join(map(str, key)), x, want))
    print()
    print("# cells below target (2x MPICH at 4 KiB and 32 KiB, 0.95x "
          "elsewhere): %d" % len(low))
    for line in low:
        print("#   " + line)


def main(argv):
    if "--mpich-umr" in argv and "--mpich" in argv:
        return main_umr(argv)
    if "--ompi" not in argv or "--mpich" not in argv:
        sys.exit(__doc__)
    i, j = argv.index("--ompi"), argv.index("--mpich")
    ompi = argv[i + 1:j] if i < j else argv[i + 1:]
    mpich = argv[j + 1:i] if j < i else argv[j + 1:]
    umr = best(ompi, lambda a, b: a)
    rdma = best(ompi, lambda a, b: b)
    mp = best(mpich, min)
    print("\n# best of %d Open MPI and %d MPICH run(s); x = the other's time / "
          "osc/umr's (>= 1: osc/umr as fast or faster)\n" %
          (len(ompi), len(mpich)))
    print("| window | target | op | origin | sync | block | osc rdma [us] | "
          "osc/umr [us] | MPICH [us] | osc/umr vs MPICH | osc/umr vs osc rdma |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    low = []
    for key in cells(umr):
        if key not in mp:
            continue
        u, r, m = umr[key], rdma[key], mp[key]
        vm, vr = m / u, r / u
        print("| %s | %s | %s | %s | %s | %s | %.1f | %.1f | %.1f | %.2fx | "
              "%.2fx |" % (key[:5] + (fmt_block(key[5]), r, u, m, vm, vr)))
        if vm < 0.95:
            low.append("%s: %.2fx of MPICH" % (" ".join(map(str, key)), vm))
        if 8 <= key[5] <= 512 and vr < 2.5:
            low.append("%s: %.2fx of osc rdma" % (" ".join(map(str, key)), vr))
    print()
    print("# cells below target (0.95x of MPICH; 2.5x of osc rdma at 8-512 B): "
          "%d" % len(low))
    for line in low:
        print("#   " + line)


if __name__ == "__main__":
    main(sys.argv[1:])
