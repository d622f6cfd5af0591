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
# function entry and exit inside each top-level call of FN (default
# mca_pml_umr_isend). Each function is mapped to the file it is defined in
# (addr2line: an inline helper counts as its header). The path is the file
# of the innermost src/ function on the stack after each entry and exit,
# equal neighbours merged, up to the last entry: a file appears again when
# control comes back to it and it calls on; the final unwinding (returns
# with no call after them) is not counted. "returns" counts the steps into
# a file already on the path. The zero-copy call that enters the most files
# (the first of a peer: datatype decoded, memory registered, peer connected)
# and the last one (steady state: every cache hits) are printed.
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
for t in sorted(glob.glob(os.path.join(out, "trace.*"))):
    for line in open(t):
        w = line.split()
        if w[0] == "call":
            cur = calls.setdefault((t, int(w[1])), [])
        else:
            cur.append((w[0], w[1], int(w[2], 16)))
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
        where[(m, o)] = os.path.realpath(loc) if loc.startswith(("/", ".")) else loc
def rel(p):
    return p[len(src):] if p.startswith(src) else None
def path(recs):
    # the file control is in: the innermost src/ function on the stack
    stack, seq, last_enter = [], [], 0
    for kind, m, fo in recs:
        if kind == "enter":
            stack.append(rel(where[(m, fo)]))
        elif stack:
            stack.pop()
        here = next((f for f in reversed(stack) if f is not None), None)
        if here is not None and (not seq or seq[-1] != here):
            seq.append(here)
        if kind == "enter":
            last_enter = len(seq)
    return seq[:last_enter]     # the final unwinding calls nothing more
paths = [(k, path(calls[k])) for k in sorted(calls)]
zc = [(k, p) for k, p in paths if len(set(p)) > 1]
if not zc:
    print("no zero-copy call traced"); sys.exit(1)
first = max(zc, key=lambda kp: (len(set(kp[1])), -kp[0][1]))
for label, (key, seq) in (("first", first), ("steady", zc[-1])):
    seen, back = set(), 0
    for x in seq:
        back += x in seen
        seen.add(x)
    print("%s zero-copy call (call %d of rank file %s): %d files, %d returns "
          "to a file already visited" % (label, key[1], os.path.basename(key[0]),
                                         len(seen), back))
    print("  " + " -> ".join(seq))
PY
