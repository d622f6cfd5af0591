#!/usr/bin/env python3
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
"""
Dependency cycles between the files of a source tree.

  contrib/include-cycles.py [SRC_DIR]          # default: src/ of this tree
      Include graph: every #include "name" in SRC_DIR's .c/.h/.inl files
      that names a file of SRC_DIR (by its path from the including file's
      folder, else by its name: the build puts every layer's folder on the
      include path, and names are unique). Prints the cycles, or
      "no include cycle in <dir> (N files, M includes)"; exit 1 on a cycle.

  contrib/include-cycles.py --calls BUILD_DIR [SRC_DIR]
      Call graph between the .c files of SRC_DIR, from the objects a build
      left in BUILD_DIR (nm: a file that uses a function or variable another
      object defines depends on it). Prints each group of files that call
      each other round in a circle, or "no call cycle ..."; exit 1 on one.
"""
import os, re, subprocess, sys

def sccs(graph):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1
        stack.append(v); on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                out.append(sorted(comp))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out

def files(src, exts):
    for d, _, fs in os.walk(src):
        for f in fs:
            if f.endswith(exts):
                yield os.path.relpath(os.path.join(d, f), src)

def includes(src):
    all_files = sorted(files(src, (".c", ".h", ".inl")))
    by_name = {}
    for f in all_files:
        by_name.setdefault(os.path.basename(f), []).append(f)
    graph, edges = {f: set() for f in all_files}, 0
    pat = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    for f in all_files:
        for line in open(os.path.join(src, f), errors="replace"):
            m = pat.match(line)
            if not m:
                continue
            rel = os.path.normpath(os.path.join(os.path.dirname(f), m.group(1)))
            if rel in graph:
                target = rel
            elif len(by_name.get(os.path.basename(m.group(1)), [])) == 1:
                target = by_name[os.path.basename(m.group(1))][0]
            else:
                continue    # generated (umr_config.h) or outside the tree
            graph[f].add(target); edges += 1
    return graph, edges

def calls(build, src):
    src = os.path.realpath(src)
    defs, uses = {}, {}
    for d, _, fs in os.walk(build):
        for f in fs:
            if not f.endswith(".o"):
                continue
            obj = os.path.join(d, f)
            try:
                dwarf = subprocess.run(["objdump", "--dwarf=info", obj],
                                       capture_output=True, text=True).stdout
            except OSError:
                continue
            m = re.search(r"DW_AT_name\s*:\s*(?:\(indirect[^)]*\):\s*)?(\S+\.c)\b", dwarf)
            if not m:
                continue
            name = m.group(1)
            comp_dir = re.search(r"DW_AT_comp_dir\s*:\s*(?:\(indirect[^)]*\):\s*)?(\S+)", dwarf)
            path = os.path.realpath(os.path.join(comp_dir.group(1) if comp_dir else d, name))
            if not path.startswith(src + "/"):
                continue
            rel = os.path.relpath(path, src)
            nm = subprocess.run(["nm", obj], capture_output=True, text=True).stdout
            for line in nm.splitlines():
                w = line.split()
                if len(w) == 3 and w[1] in "TDBR":
                    defs.setdefault(w[2], set()).add(rel)
                elif len(w) == 2 and w[0] == "U":
                    uses.setdefault(rel, set()).add(w[1])
    graph = {f: set() for f in uses}
    for f, syms in uses.items():
        for s in syms:
            for g in defs.get(s, ()):
                if g != f:
                    graph[f].add(g)
    for g in {x for s in defs.values() for x in s}:
        graph.setdefault(g, set())
    return graph

def main(argv):
    if argv and argv[0] == "--calls":
        build = argv[1]
        src = argv[2] if len(argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
        graph = calls(build, src)
        what, extra = "call", "%d files" % len(graph)
    else:
        src = argv[0] if argv else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
        graph, edges = includes(src)
        what, extra = "include", "%d files, %d includes" % (len(graph), edges)
    cycles = sccs(graph)
    name = os.path.relpath(os.path.realpath(src), os.path.realpath(os.path.join(src, ".."))) + "/"
    for c in cycles:
        print("%s cycle: %s" % (what, " <-> ".join(c)))
    if not cycles:
        print("no %s cycle in %s (%s)" % (what, name, extra))
    return 1 if cycles else 0

sys.exit(main(sys.argv[1:]))
