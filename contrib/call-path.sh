#!/bin/bash
#
# The files one MPI call of pml/umr runs through, in order: which src/ files
# a zero-copy MPI_Isend (by default) enters and how often control comes
# back to a file it has already been in.
#
# How: src/ is built with -finstrument-functions in BUILD_DIR (default
# ./build-trace), bench_mpi_calls runs its "isend" phase (the 64 KiB vector
# goes zero-copy with pml_umr_zcopy=on) under mpirun -np 2 on the sw engine
# with contrib/call-path/umr_calltrace.c preloaded, which records every
# function entry (function, call site) inside each top-level call of FN
# (default mca_pml_umr_isend). Each entry is mapped to the file the callee
# is defined in and the file of its call site (addr2line: an inline helper
# counts as its header). The path is the sequence "call site's file,
# callee's file" over the entries, equal neighbours merged: a file appears
# again when control comes back to it and it calls on; the final unwinding
# (returns with no call after them) does not appear. "returns" counts the
# steps into a file already on the path. The first zero-copy call (peer
# connected, datatype decoded, memory registered) and the last one (steady
# state: every cache hits) are printed.
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

umr_so=$(find "$build/src/ompi" -name mca_pml_umr.so -path '*/.libs/*' | head -1)
uct_so=$build/src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so
mkdir -p "$out/components"
ln -sf "$umr_so" "$out/components/"
rm -f "$out"/trace.*
export OMPI_MCA_mca_base_component_path=$out/components:$(ompi_info --path pkglibdir --parsable | sed 's/.*://')
export OMPI_MCA_pml_umr_uct_module=$uct_so OMPI_MCA_pml_umr_zcopy=on
export UCX_MLX5_UMR_ENGINE=sw UCX_WARN_UNUSED_ENV_VARS=n
export CALLTRACE_FN=$fn CALLTRACE_OUT=$out/trace
mpirun --allow-run-as-root --oversubscribe -np 2 --mca btl ^tcp \
    -x OMPI_MCA_mca_base_component_path -x OMPI_MCA_pml_umr_uct_module \
    -x OMPI_MCA_pml_umr_zcopy -x UCX_MLX5_UMR_ENGINE -x UCX_WARN_UNUSED_ENV_VARS \
    -x CALLTRACE_FN -x CALLTRACE_OUT -x LD_PRELOAD="$out/umr_calltrace.so" \
    "$build/test/bench/bench_mpi_calls" -n 20 -w 2 -k isend >/dev/null

python3 - "$top" "$out" <<'PY'
import glob, os, subprocess, sys
top, out = sys.argv[1], sys.argv[2]
src = os.path.join(top, "src") + "/"
calls, cur = {}, None
for t in glob.glob(os.path.join(out, "trace.*")):
    for line in open(t):
        w = line.split()
        if w[0] == "call":
            cur = calls.setdefault((t, int(w[1])), [])
        else:
            cur.append((w[0], int(w[1], 16), w[2], int(w[3], 16)))
need = {}
for recs in calls.values():
    for m, fo, sm, so in recs:
        need.setdefault(m, set()).add(fo)
        if sm != "?":
            need.setdefault(sm, set()).add(so - 1)  # inside the call insn
where = {}
for m, offs in need.items():
    offs = sorted(offs)
    r = subprocess.run(["addr2line", "-e", m, "-f"] + ["%#x" % o for o in offs],
                       capture_output=True, text=True).stdout.split("\n")
    for i, o in enumerate(offs):
        fname, loc = r[2 * i], r[2 * i + 1].split(":")[0]
        p = os.path.realpath(loc) if loc.startswith("/") or loc.startswith(".") else loc
        where[(m, o)] = (fname, p)
def rel(p):
    return p[len(src):] if p.startswith(src) else None
# the zero-copy calls: those that enter more than the entry point's file
zc = [k for k in sorted(calls) if len({rel(where[(r[0], r[1])][1]) for r in calls[k]}) > 1]
if not zc:
    print("no zero-copy call traced"); sys.exit(1)
for label, key in (("first", zc[0]), ("steady", zc[-1])):
    seq = []
    for m, fo, sm, so in calls[key]:
        site = rel(where[(sm, so - 1)][1]) if sm != "?" else None
        fn, f = where[(m, fo)]
        f = rel(f)
        for x in (site, f):
            if x is not None and (not seq or seq[-1] != x):
                seq.append(x)
    seen, back = set(), 0
    for x in seq:
        back += x in seen
        seen.add(x)
    print("%s zero-copy call: %d files, %d returns to a file already visited" % (label, len(seen), back))
    print("  " + " -> ".join(seq))
PY
