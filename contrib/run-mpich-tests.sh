#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# MPICH's own test suite, unmodified, with libumr_mpich.so: MPICH's
# test/mpi configured against MPICH (its own configure, MPICC=mpicc.mpich),
# the directories asked for built (default: pt2pt datatype coll rma, with
# util and dtpools), and every entry of their testlists (testlist and
# testlist.dtp: the derived-datatype tests dtpools generates) run twice
# under mpiexec.mpich with its process count, arguments and environment:
# MPICH alone, and with the library preloaded and zero-copy forced
# (UMR_MPICH_ZCOPY=on, UMR_MPICH_VERBOSE=1, sw engine). A test passes when
# it exits 0 and prints "No Errors" (or "No errors", as MPICH's runtests
# takes it). The runs with the library get UMR_TIME_FACTOR (default 5)
# times the entry's time limit: zero-copy forced moves derived types of
# 4-byte blocks (dtpools) through cross-memory attach one system call per
# block, far slower than MPICH's own path (that is what the choice keeps
# out at the defaults). Prints one line per entry (both results and the
# library's zero-copy sends, receives, puts and gets summed over the
# ranks), then the entries that pass alone and fail with the library, and
# per testlist how many entries' runs with the library printed its
# counters (it was loaded) and moved data zero-copy; exits 1 if any entry
# regressed. An entry that fails alone (MPICH's expected
# failures, xfail=, and timeouts on a busy machine) is not run with the
# library ("with -": nothing to compare).
#
# usage: contrib/run-mpich-tests.sh [-s MPICH_SOURCE] [-d "DIR.."]
#                                    [-l "LIST.."] [-j N] [NAME..]
#   -s  MPICH's source tree (default: ./mpich-src/mpich-VERSION, fetched by
#       contrib/get-mpich-src.sh when missing)
#   -d  test directories of test/mpi (default "pt2pt datatype coll rma")
#   -l  the testlists of each directory, in this order (default "testlist
#       testlist.dtp"; "testlist.dtp" for the derived-datatype ones alone)
#   -j  make's jobs for the build (default 2)
#   NAME..  only the entries of these programs
# The suite is built in BUILD_DIR/mpich-tests (BUILD_DIR default ./build,
# whose libumr_mpich.so is the one preloaded); logs in
# BUILD_DIR/mpich-tests/log. Timing on the development VM (2 busy cores):
# configure ~3 min, building the four directories ~25 min, running them
# ~2 x 1,500 jobs, several hours; one directory or a few NAMEs for less.
#
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$top/build}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
src= dirs="pt2pt datatype coll rma" lists="testlist testlist.dtp" jobs=2
while getopts "s:d:l:j:" o; do
    case $o in
        s) src=$OPTARG ;;
        d) dirs=$OPTARG ;;
        l) lists=$OPTARG ;;
        j) jobs=$OPTARG ;;
        *) sed -n '/^# usage/,/^#   NAME/p' "$0" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
names=("$@")
[ -n "$src" ] || src=$("$top/contrib/get-mpich-src.sh" "$top/mpich-src") || exit 1
src=$(cd "$src" && pwd)/test/mpi
lib=$BUILD_DIR/src/mpich/.libs/libumr_mpich.so
module=$BUILD_DIR/src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so
[ -f "$lib" ] || { echo "no $lib: build first (contrib/build.sh)" >&2; exit 1; }
mpiexec=${MPIEXEC:-mpiexec.mpich}
out=$BUILD_DIR/mpich-tests
mkdir -p "$out/log"
cd "$out" || exit 1

if [ ! -f config.status ]; then
    echo "configuring MPICH's test suite in $out"
    "$src/configure" MPICC=mpicc.mpich MPICXX=mpicxx.mpich --disable-fortran \
        --disable-cxx --disable-romio --disable-spawn --disable-perftest \
        --disable-ft-tests >log/configure 2>&1 || { tail log/configure; exit 1; }
fi
for d in util dtpools $dirs; do
    make -s -j"$jobs" -C "$d" >"log/build-$d" 2>&1 || { tail "log/build-$d"; exit 1; }
done

mult=${UMR_TEST_TIME_MULTIPLIER:-1}
factor=${UMR_TIME_FACTOR:-5}
# run LOG NP TIMELIMIT PROGRAM ARGS.. (with `genv`): pass or FAIL(status)
run() {
    local log=$1 np=$2 limit=$3 rc; shift 3
    # (mpiexec reads stdin: the testlist being read)
    timeout $((limit * mult)) "$mpiexec" -n "$np" "${genv[@]}" "$@" </dev/null >"$log" 2>&1
    rc=$?
    [ $rc -eq 0 ] && grep -aqE "No [Ee]rrors" "$log" && echo pass ||
        echo "FAIL($rc)"
}

regress=() total=0 passed=0
declare -A moved loaded entries
for d in $dirs; do
    for list in $lists; do
        [ -f "$d/$list" ] || continue
        n=0
        while read -r t np rest; do
            case $t in ''|'#'*) continue ;; esac
            [ ${#names[@]} -eq 0 ] || [[ " ${names[*]} " == *" $t "* ]] || continue
            [ -x "$d/$t" ] || continue
            args=() envs=() limit=180
            for kv in $rest; do
                case $kv in
                    arg=*) args+=("${kv#arg=}") ;;
                    env=*) kv=${kv#env=}; envs+=(-genv "${kv%%=*}" "${kv#*=}") ;;
                    timeLimit=*) limit=${kv#timeLimit=} ;;
                esac
            done
            n=$((n + 1)); total=$((total + 1))
            log=log/$d-$list-$n-$t
            genv=("${envs[@]}")
            a=$(cd "$d" && run "$out/$log.plain" "$np" "$limit" "./$t" "${args[@]}")
            genv=("${envs[@]}" -genv LD_PRELOAD "$lib" -genv UMR_MPICH_ZCOPY on
                  -genv UMR_MPICH_VERBOSE 1 -genv UMR_MPICH_UCT_MODULE "$module"
                  -genv UCX_MLX5_UMR_ENGINE sw -genv UCX_WARN_UNUSED_ENV_VARS n)
            b=-
            : >"$log.umr"
            [ "$a" != pass ] ||
                b=$(cd "$d" && run "$out/$log.umr" "$np" $((limit * factor)) "./$t" "${args[@]}")
            # summed over the ranks: point-to-point and one-sided
            z=$(grep -aoE "zcopy_(sends|recvs|puts|gets) [0-9]+" "$log.umr" |
                awk '{n[$1] += $2} END {print n["zcopy_sends"] + 0,
                     n["zcopy_recvs"] + 0, n["zcopy_puts"] + 0, n["zcopy_gets"] + 0}')
            printf '%-8s %-12s %-24s np %-3s without %-9s with %-9s zcopy sends/recvs/puts/gets %s\n' \
                "$d" "$list" "$t" "$np" "$a" "$b" "$z"
            [ "$a" = pass ] && passed=$((passed + 1))
            [ "$a" = pass ] && [ "$b" != pass ] && regress+=("$d/$t($n)")
            [ "$z" != "0 0 0 0" ] && moved[$d/$list]=$((${moved[$d/$list]:-0} + 1))
            # the library was there: a rank printed its counters
            grep -aq "umr_mpich: rank [0-9]*: zcopy_sends" "$log.umr" &&
                loaded[$d/$list]=$((${loaded[$d/$list]:-0} + 1))
            entries[$d/$list]=$((${entries[$d/$list]:-0} + 1))
        done <"$d/$list"
    done
done
for k in $(printf '%s\n' "${!entries[@]}" | sort); do
    echo "$k: ${entries[$k]} entries, the library's counters printed in ${loaded[$k]:-0}," \
         "data moved zero-copy in ${moved[$k]:-0}"
done
echo "entries: $total, $passed passing without libumr_mpich.so; passing without it and failing with it: ${#regress[@]} ${regress[*]:-}"
[ ${#regress[@]} -eq 0 ]
