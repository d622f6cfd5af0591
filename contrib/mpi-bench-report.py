#!/usr/bin/python3
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
"""
Side-by-side tables and PNG plots of bench_mpi_ddt runs (contrib/run-mpi-bench.sh).

usage: mpi-bench-report.py [--stat median|best] OUTDIR NAME=FILE[,FILE..] ...
       mpi-bench-report.py --jobs [--vm-cut NS] OUTDIR NAME=FILE[,FILE..] ...

--jobs: each FILE is one short latency-only job (run-mpi-bench.sh --jobs N);
the files of NAME and umr+NAME are paired in run order. Prints, per message
size, each configuration's job medians over the jobs (median and quartiles)
and the median of the paired differences umr+NAME - NAME: whether loading
pml/umr moves whole jobs, which the same-job pairs cannot show; then the
same for 0 B over the "steady" jobs, whose VM state probe (VMSTATE lines)
stayed below NS (default 300 ns: on our VMs the probe is ~50 or ~120 ns in
the fast states and ~500 ns in the slow one, contrib/vm-probe/README.md).

Each FILE is the stdout of one `mpirun -np 2 bench_mpi_ddt` run under one PML
configuration NAME (e.g. ob1, ucx, umr+ob1, umr+ob1:zcopy); with several
files (repeated runs) each figure is the median over the runs, or with
--stat best the best (lowest time) of the runs: on a VM whose jobs run
either fast or slow as a whole (see the per-run table), the best of several
runs compares configurations in the same state. Columns:
  NAME           MPI_Send/MPI_Recv of the derived datatype under NAME
  pack(NAME)     MPI_Pack + contiguous send + MPI_Unpack under NAME (shown for
                 the runs without pml/umr)
Ratios umr/<pml> are the wrapped PML's time over pml/umr's (>= 1: pml/umr is
faster). Two latency tables: LAT lines (MPI_Send + MPI_Recv) and LATI lines
(MPI_Send + MPI_Irecv/MPI_Wait). Writes OUTDIR/mpi-bench-{vector,patterns,latency}.png and
OUTDIR/mpi-bench-tables.txt.
"""
import os
import sys


def median(vals):
    vals = sorted(vals)
    n = len(vals)
    return vals[n // 2] if n % 2 else 0.5 * (vals[n // 2 - 1] + vals[n // 2])


STAT = median


def parse(paths):
    """One configuration: STAT over its runs (files) of each figure."""
    data, lat, head = {}, {"LAT": {}, "LATI": {}, "LATD": {}, "LATID": {}}, []
    # paired same-job figures: PAIR (pattern) and LATP/LATIP (ping-pong)
    paired = {"PAIR": {}, "LATP": {}, "LATIP": {}}
    # per run: the VM state probe at the job's start and end (VMSTATE lines:
    # one cache line's round trip between the ranks, ns), None if absent
    vmstate = []
    for path in paths:
        vmstate.append({})
        with open(path) as f:
            for line in f:
                words = line.split()
                if len(words) == 6 and words[0] == "VMSTATE":
                    vmstate[-1][words[1]] = float(words[2])
                    continue
                parts = line.rstrip("\n").split("\t")
                if parts[0] == "DATA" and len(parts) == 10:
                    key = (parts[1], parts[2])
                    rec = data.setdefault(key, {"bytes": int(parts[3]),
                                                "blocks": int(parts[4]),
                                                "mean": float(parts[5])})
                    rec.setdefault(parts[6], []).append(float(parts[7]))
                elif parts[0] == "PAIR" and len(parts) == 7:
                    paired["PAIR"].setdefault((parts[1], parts[2]), []).append(
                        [float(x) for x in parts[3:6]])
                elif parts[0] in ("LATP", "LATIP") and len(parts) == 7:
                    paired[parts[0]].setdefault(int(parts[1]), []).append(
                        [float(x) for x in parts[2:6]])
                elif parts[0] in lat and len(parts) == 5:
                    lat[parts[0]].setdefault(int(parts[1]), []).append(
                        float(parts[2]))
                elif line.startswith("#"):
                    head.append(line.rstrip())
    for rec in data.values():
        for mode in ("ddt", "pack", "direct"):
            if mode in rec:
                rec[mode] = STAT(rec[mode])
    per_run = lat["LAT"].get(0, [])
    lat = {kind: {k: STAT(v) for k, v in d.items()}
           for kind, d in lat.items()}
    # paired figures are already one job's own comparison: over several
    # runs, the run with the median of the medians (never the best)
    paired = {kind: {k: sorted(v)[len(v) // 2] for k, v in d.items()}
              for kind, d in paired.items()}
    return data, lat, head, per_run, paired, vmstate


def vm_text(state):
    """' [start/end]' of one run's VMSTATE probe, '' without one"""
    if not state:
        return ""
    return " [%s/%s]" % tuple("%.0f" % state[w] if w in state else "-"
                              for w in ("start", "end"))


def is_umr(name):
    return name.startswith("umr+")


def wrapped(name):
    # umr+ob1 / umr+ob1:zcopy -> ob1
    return name[4:].split(":")[0] if is_umr(name) else None


LAT_KINDS = (("LAT", "MPI_Send + MPI_Recv"),
             ("LATI", "MPI_Send + MPI_Irecv/MPI_Wait"))


def latency_table(emit, runs, bylat, title, stat_text):
    """One ping-pong table: every run, then umr - wrapped per size."""
    lat_runs = [n for n, _ in runs if bylat[n]]
    if not lat_runs:
        return
    emit("")
    emit("Contiguous ping-pong, %s, half round trip [us], %s" %
         (title, stat_text))
    sizes = sorted(set(s for n in lat_runs for s in bylat[n]))
    pairs = [(n, wrapped(n)) for n in lat_runs
             if is_umr(n) and ":" not in n and wrapped(n) in bylat]
    hdr = "%8s" % "bytes" + "".join(" %13s" % n for n in lat_runs)
    hdr += "".join(" %16s" % ("%s-%s" % (u.replace("umr+", "umr"), w))
                   for u, w in pairs)
    emit(hdr)
    for s in sizes:
        line = "%8d" % s
        for n in lat_runs:
            v = bylat[n].get(s)
            line += " %13s" % ("%.3f" % v if v is not None else "-")
        for u, w in pairs:
            a, b = bylat[u].get(s), bylat[w].get(s)
            if a is None or b is None:
                line += " %16s" % "-"
                continue
            d = a - b
            ok = abs(d) <= max(0.03 * b, 0.050) if s <= 4096 else True
            line += " %+8.3f %+5.1f%%%s" % (d, 100 * d / b,
                                            "" if ok else "!")
        emit(line)
    if pairs:
        emit("(! = outside 3% or 50 ns, whichever is larger, "
             "for 0 B .. 4 KiB)")


def same_job_tables(emit, runs, keys, bydata, bylat, bypair):
    """pml/umr against the wrapped PML called directly in the same job
    (bench_mpi_ddt's direct messages and samples, alternating with pml/umr's
    A B B A ...): each pair is one comparison a few milliseconds apart, so
    the ratio is free of the job-to-job and phase-to-phase noise of a VM."""
    umr = [n for n, _ in runs if is_umr(n) and bypair[n]["PAIR"]]
    if not umr:
        return
    emit("")
    emit("Same job, messages alternating: time with the wrapped PML called "
         "directly (pml/umr taken out of the call path) / time through "
         "pml/umr, median of the pairs [quartiles] (>= 1: pml/umr no "
         "slower); over several runs, the run with the median median")
    emit("%-15s %-26s %9s %7s" % ("pattern", "param", "bytes", "block") +
         "".join(" %22s" % n for n in umr))
    low = {}
    for key in keys:
        if not any(key in bypair[n]["PAIR"] for n in umr):
            continue
        rec = next(bydata[n][key] for n in umr if key in bydata[n])
        line = "%-15s %-26s %9d %7.0f" % (key[0], key[1][:26], rec["bytes"],
                                         rec["mean"])
        for n in umr:
            p = bypair[n]["PAIR"].get(key)
            if p is None:
                line += " %22s" % "-"
                continue
            line += " %7.3fx [%.2f-%.2f]" % (p[0], p[1], p[2])
            if p[0] < low.get(n, (9e9,))[0]:
                low[n] = (p[0], key)
        emit(line)
    for n, (x, key) in low.items():
        emit("lowest %s vs direct %s in the same job: %.3fx at %s %s%s" %
             (n, wrapped(n), x, key[0], key[1],
              "" if x >= 0.95 else "   (below 0.95x)"))
    for kind, title in (("LATP", "MPI_Send + MPI_Recv"),
                        ("LATIP", "MPI_Send + MPI_Irecv/MPI_Wait")):
        names = [n for n in umr if bypair[n][kind]]
        if not names:
            continue
        direct = "LATD" if kind == "LATP" else "LATID"
        emit("")
        emit("Same job, contiguous ping-pong, %s, samples alternating: "
             "pml/umr - direct [us], median of the paired differences "
             "[quartiles]" % title)
        emit("%8s" % "bytes" + "".join(" %33s" % n for n in names))
        bad = 0
        for size in sorted(bypair[names[0]][kind]):
            line = "%8d" % size
            for n in names:
                p = bypair[n][kind].get(size)
                if p is None:
                    line += " %33s" % "-"
                    continue
                base = bylat[n][direct].get(size)   # the direct time
                ok = (size > 4096 or base is None or
                      abs(p[0]) <= max(0.03 * base, 0.050))
                bad += not ok
                line += " %+8.3f [%+.3f %+.3f] %5.1f%%%s" % (
                    p[0], p[1], p[2],
                    100 * p[0] / base if base else 0.0, "" if ok else "!")
            emit(line)
        emit("(! = the median difference is outside 3%% or 50 ns, whichever "
             "is larger, for 0 B .. 4 KiB: %d)" % bad)


def quartiles(v):
    v = sorted(v)
    return v[len(v) // 4], median(v), v[(3 * len(v)) // 4]


def jobs_vmstate(emit, runs, byname, states, cut):
    """--jobs: the jobs' VM states (VMSTATE probes) and the 0 B latency of
    the jobs that ran in the fast state (probe below cut ns) from start to
    end"""
    if not any(st for n, _ in runs for st in states[n]):
        return

    def steady(st):
        return all(w in st and st[w] < cut for w in ("start", "end"))

    emit("VM state probe (one cache line's round trip between the ranks) at "
         "each job's start and end: a job is steady when both are below "
         "%g ns (--vm-cut); contrib/vm-probe/README.md" % cut)
    emit("%-15s %6s %7s %26s" % ("config", "jobs", "steady",
                                 "0 B LAT, steady jobs [us]"))
    for n, jobs in runs:
        v = [j["LAT"][0] for j, st in zip(jobs, states[n])
             if steady(st) and 0 in j["LAT"]]
        q = quartiles(v) if v else None
        emit("%-15s %6d %7d %26s" % (
            n, len(jobs), sum(steady(st) for st in states[n]),
            "%.3f [%.3f-%.3f]" % (q[1], q[0], q[2]) if q else "-"))
    for u, w in [(n, wrapped(n)) for n, _ in runs
                 if is_umr(n) and wrapped(n) in byname]:
        d = [a["LAT"][0] - b["LAT"][0]
             for a, b, sa, sb in zip(byname[u], byname[w], states[u],
                                     states[w])
             if steady(sa) and steady(sb) and 0 in a["LAT"] and
             0 in b["LAT"]]
        q = quartiles(d) if d else None
        emit("%s-%s, pairs of steady jobs: %d, 0 B paired difference %s" %
             (u, w, len(d), "%+.3f [%+.3f %+.3f] us" % (q[1], q[0], q[2])
              if q else "-"))
    emit("")


def jobs_report(args):
    """Whole jobs with and without pml/umr, alternating (--jobs)."""
    cut = 300.0
    if len(args) >= 2 and args[0] == "--vm-cut":
        cut, args = float(args[1]), args[2:]
    if len(args) < 2:
        sys.exit(__doc__)
    outdir, runs, states = args[0], [], {}
    for arg in args[1:]:
        name, paths = arg.split("=", 1)
        parsed = [parse([p]) for p in paths.split(",") if os.path.exists(p)]
        if parsed:
            runs.append((name, [r[1] for r in parsed]))
            states[name] = [r[5][0] for r in parsed]
    byname = dict(runs)
    out = []

    def emit(line=""):
        out.append(line)
        print(line)

    for kind, title in LAT_KINDS:
        emit("Whole jobs, contiguous ping-pong, %s: each job's median half "
             "round trip [us]; over the jobs: median [quartiles]" % title)
        pairs = [(n, wrapped(n)) for n, _ in runs
                 if is_umr(n) and wrapped(n) in byname]
        emit("%8s" % "bytes" + "".join(" %24s" % ("%s (%d jobs)" %
                                                 (n, len(j)))
                                       for n, j in runs) +
             "".join(" %26s" % ("%s-%s paired" % (u, w)) for u, w in pairs))
        sizes = sorted(set(s for _, jobs in runs for j in jobs
                           for s in j[kind]))
        for size in sizes:
            line = "%8d" % size
            for n, jobs in runs:
                v = [j[kind][size] for j in jobs if size in j[kind]]
                q = quartiles(v) if v else None
                line += (" %8.3f [%.3f-%.3f]" % (q[1], q[0], q[2]) if q
                         else " %24s" % "-")
            for u, w in pairs:
                d = [a[kind][size] - b[kind][size]
                     for a, b in zip(byname[u], byname[w])
                     if size in a[kind] and size in b[kind]]
                q = quartiles(d) if d else None
                line += (" %+9.3f [%+.3f %+.3f]" % (q[1], q[0], q[2]) if q
                         else " %26s" % "-")
            emit(line)
        emit("")
    jobs_vmstate(emit, runs, byname, states, cut)
    with open(os.path.join(outdir, "mpi-bench-jobs.txt"), "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    global STAT
    args = sys.argv[1:]
    if len(args) >= 3 and args[0] == "--jobs":
        return jobs_report(args[1:])
    stat_name = "median"
    if len(args) >= 2 and args[0] == "--stat":
        stat_name = args[1]
        if stat_name not in ("median", "best"):
            sys.exit("mpi-bench-report: --stat median|best, not '%s'" %
                     stat_name)
        STAT = median if stat_name == "median" else min
        args = args[2:]
    if len(args) < 2:
        sys.exit(__doc__)
    outdir = args[0]
    runs = []
    for arg in args[1:]:
        name, paths = arg.split("=", 1)
        paths = [p for p in paths.split(",") if os.path.exists(p)]
        if paths:
            runs.append((name, parse(paths)))
    if not runs:
        sys.exit("mpi-bench-report: no results")

    # columns: every run's ddt time, then pack for runs without pml/umr
    cols = [(name, "ddt", name) for name, _ in runs]
    cols += [("pack(%s)" % name, "pack", name) for name, _ in runs
             if not is_umr(name)]
    bydata = {name: r[0] for name, r in runs}
    bylat = {name: r[1] for name, r in runs}
    keys = []
    for name, (data, _, _, _, _, _) in runs:
        for k in data:
            if k not in keys:
                keys.append(k)

    out = []

    def emit(s=""):
        out.append(s)
        print(s)

    ratios = [(n, wrapped(n)) for n, _ in runs
              if is_umr(n) and wrapped(n) in bydata]

    def t(col, key):
        _, mode, run = col
        return bydata.get(run, {}).get(key, {}).get(mode)

    stat_text = ("median over the runs" if stat_name == "median" else
                 "best of the runs")
    per_run = {name: (r[3], r[5]) for name, r in runs
               if len(r[3]) > 1 or any(r[5])}
    if per_run:
        emit("Each run's 0 B ping-pong (MPI_Send/MPI_Recv) [us], in run "
             "order, with [the VM state probe at the job's start/end: one "
             "cache line's round trip between the ranks, ns]: on a VM a "
             "job runs fast or slow as the host places its vCPUs "
             "(contrib/vm-probe/README.md)")
        for name, (vals, states) in per_run.items():
            n = max(len(vals), len(states))
            vals = ["%.3f" % v for v in vals] + ["-"] * n
            states = states + [{}] * n
            emit("%-15s %s" % (name, " ".join(
                vals[i] + vm_text(states[i]) for i in range(n))))
        emit("")
    emit("Derived datatypes, rank 0 -> rank 1, GB/s (1e9 B/s) of data per "
         "message, %s of the message medians; ratio = wrapped PML time / "
         "pml/umr time" % stat_text)
    hdr = "%-15s %-26s %9s %7s" % ("pattern", "param", "bytes", "block")
    hdr += "".join(" %13s" % c[0] for c in cols)
    hdr += "".join(" %13s" % ("%s/%s" % (u.split(":")[0].replace("umr+", "umr")
                                         + (":zc" if ":" in u else ""), w))
                   for u, w in ratios)
    emit(hdr)
    worst = {}
    for key in keys:
        rec = None
        for name, _ in runs:
            rec = rec or bydata[name].get(key)
        line = "%-15s %-26s %9d %7.0f" % (key[0], key[1][:26], rec["bytes"],
                                         rec["mean"])
        for c in cols:
            v = t(c, key)
            line += " %13s" % ("%.3f" % (rec["bytes"] / v / 1e3) if v else "-")
        for u, w in ratios:
            tu, tw = t((u, "ddt", u), key), t((w, "ddt", w), key)
            if tu and tw:
                r = tw / tu
                line += " %12.2fx" % r
                if ":" not in u and r < worst.get(u, (9e9,))[0]:
                    worst[u] = (r, key)
            else:
                line += " %13s" % "-"
        emit(line)
    for u, (r, key) in worst.items():
        emit("lowest %s vs %s: %.2fx at %s %s%s" %
             (u, wrapped(u), r, key[0], key[1],
              "" if r >= 0.95 else "   (below 0.95x)"))

    for kind, title in LAT_KINDS:
        latency_table(emit, runs, {n: bylat[n][kind] for n in bylat}, title,
                      stat_text)
    same_job_tables(emit, runs, keys, bydata, bylat,
                    {name: r[4] for name, r in runs})

    with open(os.path.join(outdir, "mpi-bench-tables.txt"), "w") as f:
        f.write("\n".join(out) + "\n")
    plot(outdir, runs, cols, keys, bydata, bylat, t)


def plot(outdir, runs, cols, keys, bydata, bylat, t):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    styles = {}
    for i, c in enumerate(cols):
        styles[c[0]] = dict(marker="os^vD<>ph*"[i % 10],
                            linestyle="--" if c[1] == "pack" else
                            (":" if ":" in c[0] else "-"))

    # 1. vector sweep
    vec = [k for k in keys if k[0] == "vector"]
    if vec:
        vec.sort(key=lambda k: int(k[1]))
        fig, ax = plt.subplots(figsize=(9, 5.5))
        for c in cols:
            xs, ys = [], []
            for k in vec:
                v = t(c, k)
                if v:
                    rec = next(bydata[n][k] for n, _ in runs if k in bydata[n])
                    xs.append(int(k[1]))
                    ys.append(rec["bytes"] / v / 1e3)  # B/us -> GB/s
            if xs:
                ax.plot(xs, ys, label=c[0], **styles[c[0]])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("block size [B] (vector, stride 2x block, 16 MiB of data)")
        ax.set_ylabel("GB/s (data bytes / message time)")
        ax.set_title("MPI_Send/Recv of a vector datatype, 2 ranks, one host")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "mpi-bench-vector.png"), dpi=110)
        plt.close(fig)

    # 2. application patterns
    pats = [k for k in keys if k[0] != "vector"]
    if pats:
        import numpy as np
        fig, ax = plt.subplots(figsize=(10, 0.45 * len(pats) * 1.6 + 1.5))
        h = 0.8 / len(cols)
        ys = np.arange(len(pats))
        for i, c in enumerate(cols):
            vals = []
            for k in pats:
                v = t(c, k)
                rec = next(bydata[n][k] for n, _ in runs if k in bydata[n])
                vals.append(rec["bytes"] / v / 1e3 if v else 0)
            ax.barh(ys + i * h, vals, height=h, label=c[0])
        ax.set_yticks(ys + 0.4 - h / 2)
        ax.set_yticklabels(["%s %s" % k for k in pats], fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel("GB/s (data bytes / message time)")
        ax.set_title("Halo faces, subarrays, DDTBench shapes: 2 ranks, one host")
        ax.grid(True, axis="x", which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "mpi-bench-patterns.png"), dpi=110)
        plt.close(fig)

    # 3. latency: blocking and nonblocking receives side by side
    if any(bylat[n][k] for n, _ in runs for k, _ in LAT_KINDS):
        fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), sharey=True)
        for ax, (kind, title) in zip(axes, LAT_KINDS):
            for n, _ in runs:
                d = bylat[n][kind]
                if not d:
                    continue
                s = sorted(d)
                ax.plot([max(x, 0.5) for x in s], [d[x] for x in s],
                        label=n, **styles.get(n, {}))
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("message size [B] (contiguous; 0 B plotted at 0.5)")
            ax.set_title("Ping-pong, %s" % title)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        axes[0].set_ylabel("half round trip [us]")
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "mpi-bench-latency.png"), dpi=110)
        plt.close(fig)


if __name__ == "__main__":
    main()
