#!/usr/bin/python3
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
"""
Table and PNG plot of a bench_osc_umr run (contrib/run-osc-bench.sh).

usage: osc-bench-report.py FILE OUTDIR

FILE is the bench's output (rows: op origin sync block umr[us] plain[us]
ratio GB/s(umr) [win ttype]; rows without the last two columns are
MPI_Win_create windows with vector targets). Prints a Markdown table of the
paired ratios (time through the window without osc/umr / time through
osc/umr's: > 1 means osc/umr is faster), one row per (window flavour, target
type, sync, op, origin), one column per block size, and the smallest and
largest ratio of each window flavour; writes OUTDIR/osc-bench-ratios.png:
one panel per window flavour, ratio against block size (log-log), one line
per (target type, op, origin, sync).
"""
import collections
import os
import sys


def read(path):
    rows = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if not p or p[0] not in ("put", "get") or len(p) < 8:
                continue
            win, tt = (p[8], p[9]) if len(p) >= 10 else ("create", "vector")
            rows.append(dict(op=p[0], origin=p[1], sync=p[2], block=int(p[3]),
                             umr=float(p[4]), plain=float(p[5]),
                             ratio=float(p[6].rstrip("x")), win=win, ttype=tt))
    return rows


def fmt_block(b):
    return "%d KiB" % (b // 1024) if b >= 1024 else "%d B" % b


def table(rows):
    blocks = sorted({r["block"] for r in rows})
    series = collections.OrderedDict()
    for r in rows:
        key = (r["win"], r["ttype"], r["sync"], r["op"], r["origin"])
        series.setdefault(key, {})[r["block"]] = r["ratio"]
    print("| window | target | sync | op | origin | " +
          " | ".join(fmt_block(b) for b in blocks) + " |")
    print("|---|---|---|---|---|" + "---|" * len(blocks))
    for key, v in series.items():
        print("| %s | %s | %s | %s | %s | " % key +
              " | ".join(("%.2fx" % v[b]) if b in v else "" for b in blocks) +
              " |")
    print()
    for win in sorted({r["win"] for r in rows}):
        rs = [r for r in rows if r["win"] == win]
        lo = min(rs, key=lambda r: r["ratio"])
        hi = max(rs, key=lambda r: r["ratio"])
        below = [r for r in rs if r["ratio"] < 0.95]
        print("%s: ratios %.2fx (%s %s %s %s %s) .. %.2fx; %d of %d points "
              "below 0.95x" % (win, lo["ratio"], lo["ttype"], lo["sync"],
                               lo["op"], lo["origin"], fmt_block(lo["block"]),
                               hi["ratio"], len(below), len(rs)))
    return series, blocks


def plot(series, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    wins = sorted({k[0] for k in series},
                  key=lambda w: ["create", "allocate", "dynamic"].index(w)
                  if w in ("create", "allocate", "dynamic") else 9)
    fig, axes = plt.subplots(1, len(wins), figsize=(5.5 * len(wins), 4.8),
                             sharey=True, squeeze=False)
    colors = {"vector": "tab:blue", "subarray": "tab:orange",
              "indexed": "tab:green"}
    styles = {("put", "lock"): "-", ("get", "lock"): "--",
              ("put", "fence"): ":", ("get", "fence"): "-."}
    for ax, win in zip(axes[0], wins):
        for key, v in series.items():
            if key[0] != win:
                continue
            _, tt, sync, op, origin = key
            bs = sorted(v)
            ax.plot(bs, [v[b] for b in bs], styles.get((op, sync), "-"),
                    color=colors.get(tt, "gray"),
                    marker="o" if origin == "contig" else "x", ms=4, lw=1,
                    label="%s %s %s %s" % (tt, op, sync, origin))
        ax.axhline(1.0, color="black", lw=0.8)
        ax.axhline(0.95, color="red", lw=0.6, ls=":")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("contiguous block (bytes)")
        ax.set_title("MPI_Win_%s" % win if win != "dynamic"
                     else "dynamic (create_dynamic + attach)")
        ax.grid(True, which="both", lw=0.3)
    axes[0][0].set_ylabel("plain time / osc/umr time (>1: osc/umr faster)")
    axes[0][-1].legend(fontsize=5.5, ncol=2, loc="upper right")
    fig.suptitle("bench_osc_umr, sw engine (cross-memory attach on one "
                 "loaded 2-core VM: not NIC figures)", fontsize=10)
    fig.tight_layout()
    path = os.path.join(outdir, "osc-bench-ratios.png")
    fig.savefig(path, dpi=110)
    print("wrote %s" % path)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = read(sys.argv[1])
    if not rows:
        sys.exit("no bench_osc_umr rows in %s" % sys.argv[1])
    os.makedirs(sys.argv[2], exist_ok=True)
    series, _ = table(rows)
    plot(series, sys.argv[2])


if __name__ == "__main__":
    main()
