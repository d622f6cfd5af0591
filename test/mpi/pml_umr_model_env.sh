# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
# Sourced by test_pml_umr_model.sh and test_pml_umr_model_faults.sh: MPI
# jobs under contrib/mpirun-model.sh (pml/umr on the mlx5 engine over the
# rdma-core model, simulated hosts) and the checks on their output. The
# caller sources mpi_test_env.sh first and sets $prog and $out.
top_srcdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
model=$top_srcdir/contrib/mpirun-model.sh
ucx_args=(--mca pml_ucx_tls any --mca pml_ucx_devices any)
run_timeout=${run_timeout:-900}
# the preloadable model (a check library of test/model)
make -C "$top_builddir/test/model" libumr_verbs_model.la >/dev/null 2>&1 ||
    { echo "cannot build test/model/libumr_verbs_model.la"; exit 1; }

# model FILE [ENV=VALUE..] -- [mpirun-model options] -- [mpirun args..]: the
# program under contrib/mpirun-model.sh (BUILD_DIR: this build), killed
# after $run_timeout seconds (test_seconds: scaled); each rank's output in
# FILE.ranks/rank.N (same_checks compares per rank), FILE the script's
# output (mpirun's, then the ranks' rank by rank, then the counters)
model() {
    local file=$1; shift
    local envs=() opts=() rc=0
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    while [ "$1" != "--" ]; do opts+=("$1"); shift; done
    shift
    env BUILD_DIR="$top_builddir" UCX_MLX5_UMR_ENGINE=mlx5 "${envs[@]}" \
        timeout "$(test_seconds "$run_timeout")" \
        "$model" --no-build --output "$file.ranks" "${opts[@]}" -- "$@" >"$file.raw" 2>&1 || rc=$?
    tr -d '\000' <"$file.raw" >"$file"
    rm -f "$file.raw"
    return $rc
}

# every case moved messages zero-copy, every rank ended clean, and the
# launcher's summary counted zero-copy sends
zcopy_in_every_case() {
    local bad=0
    zcopy_each_case "$1" || bad=1
    grep -q "^mpirun-model: [0-9]* ranks: zcopy_sends [1-9]" "$1" ||
        { echo "no zcopy_sends in the summary"; bad=1; }
    return $bad
}

# np ranks on 2 hosts: each opened mlx5_0 only, on the host of its rank
rails_and_hosts() {   # file, np
    local file=$1 np=$2
    [ "$(grep -c 'pml_umr: rail mlx5_0 open$' "$file")" -eq "$np" ] &&
        [ "$(grep -c 'pml_umr: rail .* open$' "$file")" -eq "$np" ] ||
        { grep "pml_umr: rail" "$file"; echo "not one mlx5_0 rail a rank"; return 1; }
    [ "$(grep -c '^rdma-core model: pid [0-9]* on host 0 of 2' "$file")" -eq $((np / 2)) ] &&
        [ "$(grep -c '^rdma-core model: pid [0-9]* on host 1 of 2' "$file")" -eq $((np / 2)) ] ||
        { grep "^rdma-core model" "$file"; echo "ranks not half on each host"; return 1; }
}

ref() {   # np, pml: the job without pml/umr
    local f=$out/ref-$1-$2
    [ -f "$f" ] && return 0
    if [ "$2" = ucx ]; then
        run "$f" -- -np "$1" --mca pml ucx "${ucx_args[@]}"
    else
        run "$f" -- -np "$1" --mca pml ob1
    fi
}

identical() {   # link, np, pml
    local link=$1 np=$2 pml=$3 got=$out/model-$1-$2-$3 args=(-np "$2")
    ref "$np" "$pml" || return 1
    if [ "$pml" = ucx ]; then args+=(--mca pml ucx,umr "${ucx_args[@]}")
    else args+=(--mca pml ob1,umr); fi
    model "$got" OMPI_MCA_pml_umr_verbose=5 -- --link "$link" --hosts 2 -- \
        "${args[@]}" "$prog" || { tail -20 "$got"; return 1; }
    same_checks "$out/ref-$np-$pml" "$got" && zcopy_in_every_case "$got" &&
        rails_and_hosts "$got" "$np" && one_reg_per_region "$got"
}

# nothing moved zero-copy, and pml/umr was there
# Nothing moved zero-copy in FILE: no zero-copy receive, no error, and
# every control message sent was an escape's keyless one (Z bytes of user
# data that start with the magic: pml/umr runs on both sides, so they never
# go raw, even without a rail between them), each declined.
passed_through() {   # file
    local z e d
    grep -q "^mpirun-model: 2 ranks: zcopy_sends [0-9]* zcopy_recvs 0 errors 0$" "$1" ||
        { grep "^mpirun-model" "$1"; return 1; }
    z=$(grep "pml_umr: rank" "$1" | grep -o " zcopy_sends [0-9]*" | awk '{s += $2} END {print s + 0}')
    e=$(grep "pml_umr: rank" "$1" | grep -o " escapes [0-9]*" | awk '{s += $2} END {print s + 0}')
    d=$(grep "pml_umr: rank" "$1" | grep -o " declined [0-9]*" | awk '{s += $2} END {print s + 0}')
    [ "$z" -eq "$e" ] && [ "$d" -eq "$e" ] ||
        { echo "zcopy_sends $z escapes $e declined $d: not only declined escapes"; return 1; }
}

unreachable() {   # name, link, host 1's spec
    local got=$out/unreachable-$1
    ref 2 ob1 || return 1
    model "$got" OMPI_MCA_pml_umr_verbose=10 -- --link "$2" --hosts 2 \
        --host "1=$3" -- -np 2 --mca pml ob1,umr "$prog" || { tail -20 "$got"; return 1; }
    same_checks "$out/ref-2-ob1" "$got" && passed_through "$got" || return 1
    # each rank judged the other unreachable (no rail reaches it)
    [ "$(grep -c 'pml_umr: peer [01]: no rail reaches it' "$got")" -eq 2 ] ||
        { grep "pml_umr: peer" "$got"; echo "not one 'no rail' line a rank"; return 1; }
}
