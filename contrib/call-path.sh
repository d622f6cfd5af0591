#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# The files one MPI call of pml/umr runs through, in order: which src/ files
# a zero-copy MPI_Isend (by default) enters and how often control comes
# back to a file it has already been in.
#
# How: src/ is built with -finstrument-functions in BUILD_DIR (default
# ./build-trace), bench_mpi_calls runs its "isend" phase (the 64 KiB vector
# goes zero-copy with pml_umr_zcopy=on) under mpirun -np 2 on the sw engine
# with contrib/call-path/umr_calltrace.c preloaded, which records every
# function entry and exit inside each top-level call of FN (default
# mca_pml_umr_isend). Each function is mapped to the file it is defined in
# (addr2line: an inline helper counts as its header). Counted are the calls
# from a function of one src/ file into a function of another: the files in
# the order they are first entered, and the calls that enter a file the
# call has already been in (control coming back into that file's code from
# elsewhere; a callee returning to its caller is not counted). The
# zero-copy call that enters the most files (the first of a peer: datatype
# decoded, memory registered, peer connected) and the last one (steady
# state: every cache hits) are printed, with the sequence of calls.
#
# usage: contrib/call-path.sh [FN]
#
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
fn=${1:-mca_pml_umr_isend}
build=${BUILD_DIR:-$top/build-trace}
out=$build/call-path
mkdir -p "$out"

flags="-O2 -g -finstrument-functions"
BUILD_DIR=$build "$top/contrib/build.sh" CFLAGS="$flags" >/dev/null 2>&1 ||
    BUILD_DIR=$build "$top/contrib/build.sh" CFLAGS="$flags"
make -C "$build/test/bench" bench_mpi_calls >/dev/null
gcc -O2 -shared -fPIC -o "$out/umr_calltrace.so" "$top/contrib/call-path/umr_calltrace.c" -ldl

umr_so=$build/src/ompi/pml_umr/.libs/mca_pml_umr.so
uct_so=$build/src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so
mkdir -p "$out/components"
ln -sf "$umr_so" "$out/components/"
rm -f "$out"/trace.*
export OMPI_MCA_mca_base_component_path=$out/components:$(ompi_info --path pkglibdir --parsable | sed 's/.*://')
export OMPI_MCA_pml_umr_uct_module=$uct_so OMPI_MCA_pml_umr_zcopy=on
export UCX_MLX5_UMR_ENGINE=sw
export CALLTRACE_FN=$fn CALLTRACE_OUT=$out/trace
mpirun --allow-run-as-root --oversubscribe -np 2 --mca btl ^tcp \
    -x OMPI_MCA_mca_base_component_path -x OMPI_MCA_pml_umr_uct_module \
    -x OMPI_MCA_pml_umr_zcopy -x UCX_MLX5_UMR_ENGINE \
    -x CALLTRACE_FN -x CALLTRACE_OUT -x LD_PRELOAD="$out/umr_calltrace.so" \
    "$build/test/bench/bench_mpi_calls" -n 20 -w 2 -k isend >/dev/null

python3 - "$top" "$out" <<'PY'
import glob, os, subprocess, sys
top, out = sys.argv[1], sys.argv[2]
src = os.path.join(top, "src") + "/"
calls, cur = {}, None
for t in sorted(glob.glob(os.path.join(out, "trace.*"))):
    for line in open(t):
        w = line.split()
        if w[0] == "call":
            cur = calls.setdefault((t, int(w[1])), [])
        else:
            cur.append((w[0], w[1], int(w[2], 16)))
by_name = {}
for d, _, fs in os.walk(src):
    for f in fs:
        by_name[f] = os.path.join(d, f)
need = {}
for recs in calls.values():
    for kind, m, fo in recs:
        need.setdefault(m, set()).add(fo)
where = {}
for m, offs in need.items():
    offs = sorted(offs)
    r = subprocess.run(["addr2line", "-e", m, "-f"] + ["%#x" % o for o in offs],
                       capture_output=True, text=True).stdout.split("\n")
    for i, o in enumerate(offs):
        loc = r[2 * i + 1].split(":")[0]
        if not loc.startswith("/"):
            # relative to the build folder it was compiled in: file names
            # are unique in src/
            loc = by_name.get(os.path.basename(loc), loc)
        where[(m, o)] = os.path.realpath(loc)
def rel(p):
    return p[len(src):] if p.startswith(src) else None
def path(recs):
    # calls that enter another src/ file than the caller's: the files in the
    # order first entered, and how many calls enter a file already entered
    stack, seen, entries, again = [], [], [], 0
    for kind, m, fo in recs:
        f = rel(where[(m, fo)])
        if kind == "enter":
            here = next((x for x in reversed(stack) if x is not None), None)
            if f is not None and f != here:
                entries.append(f)
                if f in seen:
                    again += 1
                else:
                    seen.append(f)
            stack.append(f)
        elif stack:
            stack.pop()
    return seen, entries, again
paths = [(k, path(calls[k])) for k in sorted(calls)]
zc = [(k, p) for k, p in paths if len(p[0]) > 1]
if not zc:
    print("no zero-copy call traced"); sys.exit(1)
first = max(zc, key=lambda kp: (len(kp[1][0]), -kp[0][1]))
for label, (key, (seen, entries, again)) in (("first", first), ("steady", zc[-1])):
    print("%s zero-copy call (call %d of %s): %d files, %d calls into a file "
          "already visited" % (label, key[1], os.path.basename(key[0]),
                               len(seen), again))
    print("  files: " + ", ".join(seen))
    print("  calls: " + " -> ".join(entries))
PY
