#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Nothing a user did not cause: a clean MPI program prints the same lines
# with the components loaded as without them, every rank its own, stdout
# and stderr alike (UCX logs to stdout), with UCX's own warnings on
# (UCX_WARN_UNUSED_ENV_VARS left alone).
#
#  - the programs of test/mpi (pml_umr_test; osc_umr_test; osc_umr_armci;
#    pml_umr_regress's clean cases: status, colls, persist, trunc,
#    trunccomm, count, window, escapes; umr_keys: bottom, p2p, win;
#    pml_umr_conns), over ob1 and ucx, np 2 (and 4 for pml_umr_test,
#    umr_keys and pml_umr_conns): without the components,
#    and with them at pml_umr_verbose 0 with zero-copy forced
#    (pml_umr_zcopy=on, pml_umr_min_size=0, osc_umr_zcopy=on) on the sw
#    engine; each rank's stdout and its stderr, and mpirun's own lines, the
#    same but the program's lines about the components themselves
#    (pml_umr_test's "zcopy" counters: -1 without pml/umr);
#  - what a user types, `mpirun -np 2 --mca pml ucx,umr --mca pml_ucx_tls
#    any --mca pml_ucx_devices any -x UCX_MLX5_UMR_ENGINE=sw pml_umr_test`
#    (the defaults otherwise), against `--mca pml ucx`: the same lines, so
#    no "UCX WARN unused env variable: UCX_MLX5_UMR_ENGINE" (pml/umr
#    claims its variables before pml ucx's worker looks for unused ones,
#    umr_mpi_env.h).
# A case whose plain job fails by itself is skipped with its error
# (plain_ok). Results in GoogleTest's format.
#
set -u
. "$(dirname "$0")/mpi_test_env.sh"
. "$(dirname "$0")/mpi_ranks_env.sh"
ln -sf "$top_builddir/src/ompi/osc_umr/.libs/mca_osc_umr.so" "$scratch/"
out=$PWD/test_quiet.out.d
rm -rf "$out"
mkdir -p "$out"
run_timeout=${run_timeout:-300}
suite=quiet
. "$(dirname "$0")/../gtest/gtest_format.sh"

# the jobs with the components: the defaults but zero-copy forced, and the
# sw engine (umr_env)
quiet_env=("${umr_env[@]}" OMPI_MCA_pml_umr_verbose=0
           OMPI_MCA_pml_umr_zcopy=on OMPI_MCA_pml_umr_min_size=0
           OMPI_MCA_osc_umr_zcopy=on)

# lines a program prints about the components themselves
own_lines='^zcopy '

pml_args() {   # ob1|ucx [umr]
    if [ "$1" = ucx ]; then
        echo "--mca pml ucx${2:+,umr} --mca pml_ucx_tls any --mca pml_ucx_devices any"
    else
        echo "--mca pml ob1${2:+,umr}"
    fi
}

# same_output REF GOT: the same ranks, each with the same stdout and the
# same stderr (but own_lines), and mpirun's own lines the same.
same_output() {
    local ref=$1 got=$2 r s bad=0
    [ -n "$(ranks_of "$ref")" ] || { echo "no rank output in $ref"; cat "$ref.launcher"; return 1; }
    [ "$(ranks_of "$ref")" = "$(ranks_of "$got")" ] ||
        { echo "ranks differ: $(ranks_of "$ref" | xargs) / $(ranks_of "$got" | xargs)"; return 1; }
    for r in $(ranks_of "$ref"); do
        for s in stdout stderr; do
            diff <(grep -av "$own_lines" "$ref.ranks/rank.$r/$s") \
                 <(grep -av "$own_lines" "$got.ranks/rank.$r/$s") >"$got.diff" ||
                { echo "rank $r, $s: lines of the job with the components (>) or without (<):"
                  head -20 "$got.diff"; bad=1; }
        done
    done
    diff "$ref.launcher" "$got.launcher" ||
        { echo "mpirun's own lines differ"; bad=1; }
    return $bad
}

# PROGRAM [ARGS] at NP over PML (more mpirun arguments for the job without
# the components in $plain_args, for the one with them in $umr_args): the
# same output.
quiet() {   # name prog np pml [args..]
    local name=$1 p=$2 np=$3 pml=$4; shift 4
    local ref=$out/ref-$name-$np-$pml got=$out/umr-$name-$np-$pml rc=0
    prog=$PWD/$p
    run_ranks "$ref" -- -np "$np" $(pml_args "$pml") ${plain_args:-} -- "$@" ||
        rc=$?
    plain_ok "$ref" $rc || return
    run_ranks "$got" "${quiet_env[@]}" -- -np "$np" $(pml_args "$pml" umr) \
        ${umr_args:-} -- "$@" ||
        { echo "the job with the components failed"; tail -20 "$got"; return 1; }
    same_output "$ref" "$got"
}

# What a user types: the sw engine named on the command line, pml ucx with
# pml/umr, the defaults otherwise (no UCX_WARN_UNUSED_ENV_VARS).
as_typed() {
    local ref=$out/ref-typed got=$out/umr-typed
    prog=$PWD/pml_umr_test
    run_ranks "$ref" -- -np 2 $(pml_args ucx) || { cat "$ref.launcher"; return 1; }
    run_ranks "$got" OMPI_MCA_mca_base_component_path="$scratch:$pkglibdir" \
        OMPI_MCA_pml_umr_uct_module="$top_builddir/src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so" \
        -- -np 2 $(pml_args ucx umr) -x UCX_MLX5_UMR_ENGINE=sw ||
        { cat "$got.launcher"; return 1; }
    ! grep "UCX" "$got" || { echo "UCX spoke"; return 1; }
    same_output "$ref" "$got"
}

# (bsendbuf provokes pml ucx's own error lines for a buffered send without
# room, which pml/umr's buffered escape does not print: not a clean program)
regress_cases=(status colls persist trunc trunccomm count window escapes)
check typed_ucx_np2 as_typed
for pml in ob1 ucx; do
    for np in 2 4; do
        check pml_umr_test_${pml}_np$np quiet pml_umr_test pml_umr_test $np $pml
        check umr_keys_${pml}_np$np quiet umr_keys umr_keys $np $pml bottom p2p win
    done
    # (the osc component Open MPI picks: under pml ucx on Open MPI 5.0.7 it
    # cannot make a window, plain_ok)
    check osc_umr_test_${pml}_np2 quiet osc_umr_test osc_umr_test 2 $pml
    check pml_umr_regress_${pml}_np2 quiet pml_umr_regress pml_umr_regress 2 $pml \
        "${regress_cases[@]}"
    check pml_umr_conns_${pml}_np4 quiet pml_umr_conns pml_umr_conns 4 $pml
done
check osc_umr_armci_ob1_np2 quiet osc_umr_armci osc_umr_armci 2 ob1
# under pml ucx, osc/ucx: what UCX users run
plain_args="--mca osc ucx" umr_args="--mca osc ucx,umr" \
    check osc_umr_armci_ucx_np2 quiet osc_umr_armci osc_umr_armci 2 ucx
finish
