#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Layout keys in real jobs (umr_keys), zero-copy forced, every rank's
# output in its own files and compared per rank with the job without the
# components, over ob1 and ucx:
#  - types with absolute addresses (bottom: a struct of a heap array and an
#    mmap'ed one, unmapped memory between them, from MPI_BOTTOM, both ways;
#    then a vector received into such a struct): every byte as without the
#    components; at the default verbosity nothing but the program's own
#    lines; at pml_umr_verbose 1 every message zero-copy (each allocation
#    registered on its own, one key joining them, the receiver's too), no
#    fallback, no decline, keys_live 0;
#  - a struct of 9 one-page allocations (scattered: more than one key
#    joins): every byte as without the components; one line a rank saying
#    why, the first message chosen zero-copy and passed through (fallbacks
#    1), the other 9 passed through by the kept verdict without another
#    try (passthrough_sends), nothing received zero-copy, no error;
#  - ever new layouts (p2p: 40 indexed types of 150 irregular blocks, 4
#    keys each, 3 messages each both ways) and ever new windows (win: 40
#    windows over one buffer, each with a new indexed target type, 3 puts
#    each) with UCX_MLX5_UMR_MKEY_POOL_SIZE=16, ten times the pool in keys:
#    every message zero-copy, every put after the first of its window
#    zero-copy (the first asks for the key), no key refused, idle keys
#    given back to the pool (keys_reclaimed > 0), no line of UCX, keys_live
#    0 at the end. Before, keys of freed windows and idle keys of sends
#    held the pool: UCX ERROR lines, refused keys, puts through the wrapped
#    module;
#  - the same, and the struct over separate allocations, on the mlx5
#    engine over the rdma-core model (two simulated hosts,
#    contrib/mpirun-model.sh), where the mlx5 engine is built.
# Results in GoogleTest's format.
#
set -u
. "$(dirname "$0")/mpi_test_env.sh"
. "$(dirname "$0")/mpi_ranks_env.sh"
ln -sf "$osc_so" "$scratch/"
prog=$PWD/umr_keys
out=$PWD/test_umr_keys.out.d
rm -rf "$out"
mkdir -p "$out"
run_timeout=${run_timeout:-300}
suite=umr_keys
. "$(dirname "$0")/../gtest/gtest_format.sh"

forced=(OMPI_MCA_pml_umr_zcopy=on OMPI_MCA_pml_umr_min_size=0
        OMPI_MCA_osc_umr_zcopy=on)
done_line="umr_keys: 0 failure(s)"
layouts=40 uses=3 pool=16

pml_args() {   # ob1|ucx [umr]
    if [ "$1" = ucx ]; then
        echo "--mca pml ucx${2:+,umr} --mca pml_ucx_tls any --mca pml_ucx_devices any"
    else
        echo "--mca pml ob1${2:+,umr}"
    fi
}

# counter NAME of rank R's LINE (pml_umr: or osc_umr:) in FILE
counter() {   # file rank which name
    rank_lines "$1" "$2" | grep -a "$3: rank $2: " |
        awk -v c="$4" '{ for (i = 1; i < NF; ++i) if ($i == c) print $(i + 1) }'
}

# every rank's counters are NAME OP VALUE (==, >=, >), for each triple
counters_are() {   # file which name op value [name op value..]
    local f=$1 which=$2 r name op want v bad=0 args; shift 2
    for r in $(ranks_of "$f"); do
        args=("$@")
        while [ ${#args[@]} -gt 0 ]; do
            name=${args[0]} op=${args[1]} want=${args[2]}
            args=("${args[@]:3}")
            v=$(counter "$f" "$r" "$which" "$name")
            [ -n "$v" ] && awk -v v="$v" -v w="$want" -v op="$op" 'BEGIN {
                exit !((op == "==" && v == w) || (op == ">=" && v >= w) ||
                       (op == ">" && v > w)) }' ||
                { echo "rank $r: $which $name ${v:-missing}, expected $op $want"; bad=1; }
        done
    done
    return $bad
}

# the plain job (no components) of CASES at NP over PML, in $out/ref-...
plain() {   # pml np cases..
    local pml=$1 np=$2 ref=$out/ref-$1-$2-${3}; shift 2
    [ -f "$ref" ] && return 0
    run_ranks "$ref" -- -np "$np" $(pml_args "$pml") -- "$@"
}

# each rank of GOT printed the check lines of that rank of REF, and the
# done line came
same_per_rank() {   # ref got
    local r
    grep -q "$done_line" "$1" && grep -q "$done_line" "$2" ||
        { echo "a job did not end"; tail "$2"; return 1; }
    ! grep -a "$failed_lines" "$1" "$2" || return 1
    for r in $(ranks_of "$1"); do
        diff <(rank_lines "$1" "$r" | grep -a '^check ') \
             <(rank_lines "$2" "$r" | grep -a '^check ') ||
            { echo "rank $r: results differ"; return 1; }
    done
}

# nothing but these lines in any rank's output, and nothing from mpirun
only_lines() {   # file pattern
    local r
    for r in $(ranks_of "$1"); do
        rank_lines "$1" "$r" | grep -av "$2" &&
            { echo "rank $r printed the lines above"; return 1; }
    done
    [ ! -s "$1.launcher" ] || { echo "mpirun:"; cat "$1.launcher"; return 1; }
}

bottom() {   # pml
    local pml=$1 ref=$out/ref-$1-2-bottom got=$out/bottom-$1 v1=$out/bottom-v1-$1
    plain "$pml" 2 bottom || { tail "$ref"; return 1; }
    run_ranks "$got" "${umr_env[@]}" "${forced[@]}" OMPI_MCA_pml_umr_verbose=0 \
        -- -np 2 $(pml_args "$pml" umr) -- bottom || { tail "$got"; return 1; }
    same_per_rank "$ref" "$got" && only_lines "$got" "^check \|$done_line" ||
        return 1
    run_ranks "$v1" "${umr_env[@]}" "${forced[@]}" -- -np 2 \
        $(pml_args "$pml" umr) -- bottom || { tail "$v1"; return 1; }
    same_per_rank "$ref" "$v1" || return 1
    only_lines "$v1" "^check \|$done_line\|pml_umr: rank [01]: \|pml_umr: budget of connected peers" &&
        counters_are "$v1" pml_umr zcopy_sends == 20 zcopy_recvs == 20 \
            fallbacks == 0 declined == 0 passthrough_sends == 0 retired == 0 \
            keys_live == 0 errors == 0
}

scattered() {   # pml
    local pml=$1 ref=$out/ref-$1-2-scattered v1=$out/scattered-v1-$1 n
    plain "$pml" 2 scattered || { tail "$ref"; return 1; }
    run_ranks "$v1" "${umr_env[@]}" "${forced[@]}" -- -np 2 \
        $(pml_args "$pml" umr) -- scattered || { tail "$v1"; return 1; }
    same_per_rank "$ref" "$v1" || return 1
    for r in 0 1; do
        n=$(rank_lines "$v1" $r | grep -ac "pml_umr: rank $r: a layout that gets no key on this rail: the memory it spans does not register, in one region nor in 8 allocations")
        [ "$n" -eq 1 ] || { echo "rank $r: $n lines saying why"; rank_lines "$v1" $r; return 1; }
    done
    only_lines "$v1" "^check \|$done_line\|pml_umr: rank [01]: \|pml_umr: budget of connected peers" &&
        counters_are "$v1" pml_umr fallbacks == 1 passthrough_sends == 9 \
            declined == 0 zcopy_recvs == 0 retired == 0 keys_live == 0 errors == 0
}

# every message zero-copy, every put after its window's first zero-copy (the
# first asks for the key), no key refused, idle keys given back
churned() {   # file
    counters_are "$1" pml_umr zcopy_sends == $((layouts * uses)) \
        zcopy_recvs == $((layouts * uses)) fallbacks == 0 declined == 0 \
        keys_reclaimed ">" 0 keys_live == 0 errors == 0 &&
        counters_are "$1" osc_umr windows_wrapped == $layouts \
            zcopy_puts == $((layouts * (uses - 1))) key_ready == $layouts \
            key_refused == 0 key_errors == 0 zcopy_errors == 0 keys_short == 0
}

# ever new layouts and windows with a small key pool
churn() {   # pml
    local pml=$1 ref=$out/ref-$1-2-p2p got=$out/churn-$1
    plain "$pml" 2 p2p win || { tail "$ref"; return 1; }
    run_ranks "$got" "${umr_env[@]}" "${forced[@]}" OMPI_MCA_osc_umr_verbose=1 \
        UCX_MLX5_UMR_MKEY_POOL_SIZE=$pool -- -np 2 $(pml_args "$pml" umr) \
        -- p2p win || { tail "$got"; return 1; }
    same_per_rank "$ref" "$got" || return 1
    ! grep -a "UCX" "$got" || { echo "UCX spoke"; return 1; }
    only_lines "$got" "^check \|$done_line\|pml_umr: rank [01]: \|osc_umr: rank [01]: \|pml_umr: budget of connected peers" &&
        churned "$got"
}

# The same on the mlx5 engine over the rdma-core model: two simulated
# hosts, every peer remote (contrib/mpirun-model.sh sets the engine, the
# device and the components itself).
churn_model() {   # pml
    local pml=$1 ref=$out/ref-$1-2-p2p got=$out/churn-model-$1
    local launcher=("$top_srcdir/contrib/mpirun-model.sh" --no-build --hosts 2 --)
    make -C "$top_builddir/test/model" libumr_verbs_model.la >/dev/null 2>&1 ||
        { echo "no rdma-core model in this build (no rdma-core)"; return 77; }
    plain "$pml" 2 p2p win || { tail "$ref"; return 1; }
    run_ranks "$got" BUILD_DIR="$top_builddir" "${forced[@]}" \
        OMPI_MCA_osc_umr_verbose=1 UCX_MLX5_UMR_MKEY_POOL_SIZE=$pool \
        -- -np 2 $(pml_args "$pml" umr) -- p2p win || { tail "$got.launcher"; return 1; }
    same_per_rank "$ref" "$got" || return 1
    ! grep -a "UCX" "$got" || { echo "UCX spoke"; return 1; }
    # each rank on its own simulated host, its one rail the mlx5 device
    [ "$(grep -c '^rdma-core model: pid [0-9]* on host [01] of 2' "$got")" -eq 2 ] &&
        [ "$(grep -c 'per connected peer: mlx5_0 ' "$got")" -eq 2 ] ||
        { echo "not on the model's mlx5 engine"; cat "$got.launcher"; return 1; }
    churned "$got"
}

# The struct over separate allocations on the model: each block of the
# joined keys' UMR lists checked against its own allocation's memory key.
bottom_model() {   # pml
    local pml=$1 ref=$out/ref-$1-2-bottom got=$out/bottom-model-$1
    local launcher=("$top_srcdir/contrib/mpirun-model.sh" --no-build --hosts 2 --)
    make -C "$top_builddir/test/model" libumr_verbs_model.la >/dev/null 2>&1 ||
        { echo "no rdma-core model in this build (no rdma-core)"; return 77; }
    plain "$pml" 2 bottom || { tail "$ref"; return 1; }
    run_ranks "$got" BUILD_DIR="$top_builddir" "${forced[@]}" \
        -- -np 2 $(pml_args "$pml" umr) -- bottom || { tail "$got.launcher"; return 1; }
    same_per_rank "$ref" "$got" || return 1
    ! grep -a "UCX" "$got" || { echo "UCX spoke"; return 1; }
    [ "$(grep -c 'per connected peer: mlx5_0 ' "$got")" -eq 2 ] ||
        { echo "not on the model's mlx5 engine"; cat "$got.launcher"; return 1; }
    counters_are "$got" pml_umr zcopy_sends == 20 zcopy_recvs == 20 \
        fallbacks == 0 declined == 0 errors == 0 keys_live == 0
}

top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
for pml in ob1 ucx; do
    check bottom_$pml bottom $pml
    check scattered_$pml scattered $pml
    check bottom_model_$pml bottom_model $pml
    check churn_$pml churn $pml
    check churn_model_$pml churn_model $pml
done
finish
