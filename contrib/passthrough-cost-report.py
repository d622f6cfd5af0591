#!/usr/bin/python3
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
"""Instructions per MPI call from bench_mpi_calls' callgrind dumps, per
configuration, with pml/umr's cost over the PML it wraps.

usage: passthrough-cost-report.py [--tolerance PCT] NAME=DIR[,DIR...] ...

Each DIR holds the dumps of one run of one configuration: cg.<rank>.<part>,
one file per phase and rank (CALLGRIND_DUMP_STATS_AT("phase <kind> <type>
<bytes> <iters>") in bench_mpi_calls), and optionally counters.txt (pml/umr's
counters, printed as they are). Several DIRs of one NAME are repeated runs.

A call's count is the inclusive instruction count of its marker function
(bm_op_isend, bm_op_irecv, bm_op_recv, bm_op_send, bm_op_wait: the MPI call
and everything under it) over the phase, divided by the iterations. A call
is "stable" in a configuration when its count is the same in every run to
within --tolerance percent (default 0.5); the difference umr - plain is
printed where both configurations of a pair are stable. Calls that wait for
the peer (MPI_Wait, a rendezvous MPI_Send, an MPI_Recv whose message is
still in flight) spin in progress as long as the peer takes: their counts
are listed separately with the spread between runs, never compared.

Then pml/umr's own instructions per iteration, executed in its objects
(mca_pml_umr.so, libmca_common_umr.so, libuct_mlx5_umr.so, libumr_layout.so)
during the phase, both ranks summed,
and where they go: its functions (self) and the calls they make out of
pml/umr, except into the wrapped PML and opal_progress (inclusive).
"""
import os
import re
import sys
from statistics import median

UMR_OBJECTS = re.compile(r"/(mca_pml_umr\.so|libmca_common_umr\.so[.0-9]*|"
                         r"libuct_mlx5_umr\.so[.0-9]*|libumr_layout\.so[.0-9]*)$")
NAME_LINE = re.compile(r"^(c?(?:ob|fl|fi|fe|fn))=(?:\((\d+)\))?\s*(.*)$")
OP_NAMES = {"isend": "MPI_Isend", "irecv": "MPI_Irecv", "recv": "MPI_Recv",
            "send": "MPI_Send", "wait": "MPI_Wait"}
PAIRS = (("umr+ob1", "ob1"), ("umr+ucx", "ucx"))
WRAPPED = re.compile(r"/mca_pml_(ob1|ucx|cm)\.so$")   # the PML pml/umr wraps
WHERE_MIN = 20          # list where pml/umr's instructions go above this


def parse_dump(path):
    """(trigger, {op: inclusive instructions}, umr_self) of one dump."""
    names = {}                 # callgrind name compression: (kind, id) -> name
    trigger = None
    ob = fn = cob = cfn = None
    self_cost, call_cost = {}, {}
    where = {}                 # pml/umr fn (and its external callee) -> cost
    umr_self = 0
    in_call = False            # the next cost line is the cost of a call
    with open(path) as f:
        for line in f:
            c = line[:1]
            if c.isdigit() or c in "+-*":
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                umr = ob is not None and UMR_OBJECTS.search(ob)
                if in_call:
                    call_cost[fn] = call_cost.get(fn, 0) + cost
                    in_call = False
                    callee_ob = cob or ob
                    if umr and not UMR_OBJECTS.search(callee_ob) and \
                            not WRAPPED.search(callee_ob) and \
                            cfn != "opal_progress":
                        k = "%s -> %s [%s]" % (fn, cfn,
                                               os.path.basename(callee_ob))
                        where[k] = where.get(k, 0) + cost
                    cob = None
                else:
                    self_cost[fn] = self_cost.get(fn, 0) + cost
                    if umr:
                        umr_self += cost
                        where[fn] = where.get(fn, 0) + cost
                continue
            m = NAME_LINE.match(line.rstrip("\n"))
            if m:
                key, ident, name = m.groups()
                kind = key.lstrip("c")
                kind = "fl" if kind in ("fi", "fe") else kind
                if ident is not None:
                    if name:
                        names[(kind, ident)] = name
                    else:
                        name = names.get((kind, ident), "?")
                if key == "ob":
                    ob = name
                elif key == "fn":
                    fn, cob = name, None
                elif key == "cob":
                    cob = name
                elif key == "cfn":
                    cfn = name
            elif line.startswith("calls="):
                in_call = True
            elif line.startswith("desc: Trigger:"):
                trigger = line.split(":", 2)[2].strip()
    ops = {}
    for name in set(self_cost) | set(call_cost):
        m = re.match(r"^bm_op_([a-z]+)", name or "")
        if m:
            ops[m.group(1)] = (ops.get(m.group(1), 0) + self_cost.get(name, 0)
                               + call_cost.get(name, 0))
    return trigger, ops, umr_self, where


def read_run(d):
    """{(kind, type, bytes): {"iters": n, "ops": {(op, rank): count},
    "umr": umr_self}} of one run directory."""
    phases = {}
    for fname in sorted(os.listdir(d)):
        m = re.match(r"^cg\.(\d+)\.\d+$", fname)
        if not m:
            continue
        trigger, ops, umr_self, where = parse_dump(os.path.join(d, fname))
        t = re.search(r"phase (\S+) (\S+) (\d+) (\d+)", trigger or "")
        if not t:
            continue
        key = (t.group(1), t.group(2), int(t.group(3)))
        ph = phases.setdefault(key, {"iters": int(t.group(4)), "ops": {},
                                     "umr": 0, "where": {}})
        for op, n in ops.items():
            ph["ops"][(op, int(m.group(1)))] = n
        ph["umr"] += umr_self
        for k, n in where.items():
            ph["where"][k] = ph["where"].get(k, 0) + n
    if not phases:
        sys.exit("passthrough-cost-report: no phase dumps in %s" % d)
    counters = {}
    try:
        with open(os.path.join(d, "counters.txt")) as f:
            for line in f:
                for k, v in re.findall(r"(\w+) (\d+)", line.split(":", 2)[-1]):
                    counters[k] = counters.get(k, 0) + int(v)
    except OSError:
        pass
    phases[None] = counters
    return phases


def spread(vals):
    return 0.0 if max(vals) == 0 else 100.0 * (max(vals) - min(vals)) / max(vals)


def fmt(v, steady=True):
    return "-" if v is None else ("%.0f" if steady else "~%.0f") % v


def main():
    args = sys.argv[1:]
    tol = 0.5
    if len(args) >= 2 and args[0] == "--tolerance":
        tol = float(args[1])
        args = args[2:]
    if not args:
        sys.exit(__doc__)
    configs, runs = [], {}
    for a in args:
        name, dirs = a.split("=", 1)
        configs.append(name)
        runs[name] = [read_run(d) for d in dirs.split(",")]

    # per (phase, op, rank): {config: [per-call count of each run]}
    rows = {}
    for c in configs:
        for run in runs[c]:
            for key, ph in run.items():
                if key is None:
                    continue        # counters
                for (op, rank), n in ph["ops"].items():
                    rows.setdefault((key, op, rank), {}).setdefault(
                        c, []).append(n / ph["iters"])
    kinds = ["isend", "irecv", "recv", "pp", "fresh"]
    order = sorted(rows, key=lambda r: (kinds.index(r[0][0])
                                        if r[0][0] in kinds else 9,
                                        r[0][1] != "byte", r[0][2],
                                        r[2], r[1] == "wait", r[1]))
    pairs = [(u, p) for u, p in PAIRS if u in configs and p in configs]

    def steady(r, c):
        v = rows[r].get(c)
        return bool(v) and spread(v) <= tol

    def pair_steady(r, u, p):
        return steady(r, u) and steady(r, p)

    # a row is compared when, for one pair at least, both configurations
    # repeat (without pairs: every configuration repeats)
    stable = [r for r in order
              if any(pair_steady(r, u, p) for u, p in pairs) or
              (not pairs and all(steady(r, c) for c in rows[r]))]
    varying = [r for r in order if r not in stable]

    def label(r):
        (kind, typ, nbytes), op, rank = r
        return "%-5s %-6s %6d  %-9s r%d" % (kind, typ, nbytes, OP_NAMES[op],
                                            rank)

    def val(r, c):
        v = rows[r].get(c)
        return None if not v else median(v)

    nruns = max(len(runs[c]) for c in configs)
    print("Instructions per call (callgrind Ir, inclusive: the MPI call and "
          "everything it runs), %d run(s) per configuration." % nruns)
    if nruns < 2:
        print("ONE RUN ONLY: whether a count repeats cannot be told; every "
              "call is compared (run --runs 2 or more)")
    print("Calls whose count repeats in every run (within %.2g%%), median of "
          "the runs; umr - plain where both repeat ('~': that one varies, "
          "not compared; spread%%: largest over the repeating ones)." % tol)
    paired = [c for u, p in pairs for c in (u, p)]
    alone = [c for c in configs if c not in paired]
    head = "%-34s" % "phase     type    bytes  call       rank"
    for c in alone:
        head += " %9s" % c
    for u, p in pairs:
        head += " %9s %9s %7s %7s" % (p, u, "diff", "diff%")
    head += " %7s" % "spread%"
    print(head)
    for r in stable:
        line = "%-34s" % label(r)
        for c in alone:
            line += " %9s" % fmt(val(r, c))
        for u, p in pairs:
            vu, vp = val(r, u), val(r, p)
            if vu is None or vp is None or not pair_steady(r, u, p):
                line += " %9s %9s %7s %7s" % (fmt(vp, steady(r, p)),
                                              fmt(vu, steady(r, u)),
                                              "-", "-")
                continue
            d = vu - vp
            line += " %9s %9s %+7.0f %+6.1f%%" % (fmt(vp), fmt(vu), d,
                                                  100.0 * d / vp if vp
                                                  else 0.0)
        line += " %7.2f" % max(spread(v) for c, v in rows[r].items()
                               if steady(r, c))
        print(line)

    if varying:
        print()
        print("Calls that wait for the peer (spin in progress; counts vary "
              "run to run, not compared): min..max over runs")
        head = "%-34s" % "phase     type    bytes  call       rank"
        for c in configs:
            head += " %21s" % c
        print(head)
        for r in varying:
            line = "%-34s" % label(r)
            for c in configs:
                v = rows[r].get(c)
                line += " %21s" % ("-" if not v else "%.0f..%.0f" %
                                   (min(v), max(v)))
            print(line)

    umr_cfgs = [u for u, _ in PAIRS if u in configs]
    if umr_cfgs:
        print()
        print("pml/umr's own instructions per iteration (mca_pml_umr.so + "
              "libmca_common_umr.so + libuct_mlx5_umr.so + libumr_layout.so, "
              "both ranks, measured calls only): "
              "min..max over runs")
        print("%-24s" % "phase     type    bytes" +
              "".join(" %15s" % u for u in umr_cfgs))
        keys = sorted({k for u in umr_cfgs for run in runs[u] for k in run
                       if k is not None},
                      key=lambda k: (kinds.index(k[0]) if k[0] in kinds else 9,
                                     k[1] != "byte", k[2]))
        for k in keys:
            line = "%-5s %-6s %6d      " % k
            for u in umr_cfgs:
                v = [run[k]["umr"] / run[k]["iters"] for run in runs[u]
                     if k in run]
                line += " %15s" % ("-" if not v else "%.0f..%.0f" %
                                   (min(v), max(v)) if min(v) != max(v)
                                   else "%.0f" % v[0])
            print(line)
        print_where(runs, umr_cfgs, keys)
        print()
        print("pml/umr's counters (pml_umr_verbose=1, both ranks, whole "
              "program), per run:")
        for u in umr_cfgs:
            print("%-8s %s" % (u, "; ".join(
                " ".join("%s %d" % (k, run[None].get(k, 0)) for k in
                         ("zcopy_sends", "passthrough_sends", "escapes",
                          "errors", "prefiltered", "decoded")) if run[None] else "no counters"
                for run in runs[u])))


def print_where(runs, umr_cfgs, keys):
    """Where pml/umr's instructions go, per phase, first run."""
    print()
    print("Where pml/umr's instructions go (first run, per iteration, both "
          "ranks; phases with more than %d): its functions (self) and the "
          "calls they make out of pml/umr, except into the wrapped PML "
          "and opal_progress (inclusive). A blocking call that pml/umr "
          "completes itself spins in ompi_request_wait_completion, inlined "
          "into its mca_pml_umr_recv/send: that loop's instructions count "
          "as theirs" % WHERE_MIN)
    for u in umr_cfgs:
        run = runs[u][0]
        for k in keys:
            if k not in run or run[k]["umr"] / run[k]["iters"] <= WHERE_MIN:
                continue
            ph = run[k]
            top = sorted(ph["where"].items(), key=lambda kv: -kv[1])[:8]
            print("%-8s %-5s %-6s %6d: %s" % (
                u, k[0], k[1], k[2], "; ".join(
                    "%s %.0f" % (name, n / ph["iters"]) for name, n in top)))


if __name__ == "__main__":
    main()
