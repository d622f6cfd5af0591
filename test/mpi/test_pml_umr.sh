#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# pml/umr with real MPI jobs. The component is installed into a scratch
# component directory (OMPI_MCA_mca_base_component_path=<scratch>:<Open
# MPI's>), the mlx5_umr module is the one just built, the engine is sw.
#
#  - pml_umr_test (an unmodified MPI program) prints the same results with
#    and without pml/umr, under mpirun -np 2 and -np 4, over ob1 and over
#    ucx, with zero-copy forced; and every case of it moved messages
#    zero-copy (MPI_T counters), with no registration left and no error, and
#    one memory registration per region of the registration cache (none
#    per layout key);
#  - vectors sent from a PROT_READ file mapping (private, shared) and an
#    mprotect'ed buffer: the same results, every message zero-copy, its
#    decision taken once on each side (decided_send, decided_recv);
#  - buffers unmapped and mapped again at the same address between
#    messages are registered again (reg_misses), every byte right;
#    control messages arrived in ob1's and ucx's own receive requests
#    (hooked in place), and with pml_umr_recv_inplace=0 in pml/umr's
#    wrapper requests;
#  - the same with the automatic choice: without a costs file nothing goes
#    zero-copy (built-in constants), with a file in which the sw engine
#    costs nothing every case does (the file is read and followed);
#  - ompi_info lists the component and its parameters;
#  - pml_umr_enable=0, a version mismatch and UCX_TLS without mlx5_umr give
#    exactly the job without pml/umr (and nothing moves zero-copy);
#  - pml_umr_devices: "sw" works as the default does (the sw rail, and only
#    it, opens); an absent device or a malformed name gives the plain job, a
#    warning from each rank naming the parameter and the devices there are
#    (opal_show_help: Open MPI may print one and count the others), and no
#    zero-copy; "^sw" opens no sw rail, so same-host peers pass through;
#  - "--mca pml umr" alone says that pml/umr wraps another PML and what to
#    write;
#  - the PML table of a job with pml/umr (pml_umr_slots) holds the wrapped
#    PML's own function in every slot pml/umr does not intercept (5.0:
#    pml_revoke_comm, pml_get_transports), its limits and flags, and the
#    wrapped component's name; where Open MPI has the comm_method hook,
#    what it displays (5.0: pml ucx's transports, through
#    pml_get_transports) is the same with and without pml/umr;
#  - with coll/adapt selected (it sets callbacks on the PML requests it
#    posts), broadcasts of derived datatypes give the same results and move
#    zero-copy;
#  - where Open MPI has them: an MPI-4 sessions program (no MPI_Init, no
#    MPI_COMM_WORLD) and a job with MPI fault tolerance on
#    (mpi_ft_enable) give the plain job, pml/umr passing everything
#    through with one line a rank.
# Results in GoogleTest's format (contrib/test-summary.sh counts them).
#
set -u
. "$(dirname "$0")/mpi_test_env.sh"
prog=$PWD/pml_umr_test
out=$PWD/test_pml_umr.out.d
rm -rf "$out"   # nothing of an earlier run (its reference outputs) is reused
mkdir -p "$out"
ucx_args=(--mca pml ucx,umr --mca pml_ucx_tls any --mca pml_ucx_devices any)
suite=pml_umr
. "$(dirname "$0")/../gtest/gtest_format.sh"


# Every case moved messages zero-copy (summed over ranks), each rank ended
# with no live registration and no error, and registrations and layout keys
# were reused (a loop registers once).
zcopy_in_every_case() {
    local file=$1 c n bad=0
    zcopy_each_case "$file" || bad=1
    for c in reg_hits lkey_hits; do
        n=$(grep -o "$c [0-9]*" "$file" | awk '{s += $2} END {print s + 0}')
        [ "$n" -gt 0 ] || { echo "no $c"; bad=1; }
    done
    [ "$(grep -c 'pml_umr: rank' "$file")" -gt 0 ] || { echo "no counters printed"; bad=1; }
    return $bad
}

# Nothing moved zero-copy and pml/umr did not interpose.
no_zcopy() {
    local file=$1
    awk '$1 == "zcopy" && $5 > 0 {print; bad = 1} END {exit bad}' "$file" || return 1
    ! grep "pml_umr: rank" "$file"
}

identical_forced() {   # np, pml
    local np=$1 pml=$2 args=(-np "$1")
    [ "$pml" = ucx ] && args+=("${ucx_args[@]}")
    [ "$pml" = ob1 ] && args+=(--mca pml ob1,umr)
    local ref=$out/ref-$np-$pml got=$out/umr-$np-$pml
    if [ "$pml" = ucx ]; then
        run "$ref" -- -np "$np" --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any
    else
        run "$ref" -- -np "$np" --mca pml ob1
    fi
    run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=on -- "${args[@]}"
    same_checks "$ref" "$got" && zcopy_in_every_case "$got" &&
        inplace_used "$got" "$pml" && one_reg_per_region "$got"
}

# pml_umr_test's case CASE alone, zero-copy forced, against its plain job:
# the same results; the job's output in $out/umr-CASE-2-PML
one_case() {   # case, pml
    local got=$out/umr-$1-2-$2 args=(--mca pml ob1,umr)
    [ "$2" = ucx ] && args=("${ucx_args[@]}")
    ref_case "$1" 2 "$2" || return 1
    run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=on -- -np 2 \
        "${args[@]}" -- "$1" || { tail -20 "$got"; return 1; }
    same_checks "$out/ref-$1-2-$2" "$got"
}

# Issue 30 finding 1: vectors sent from memory the process may only read (a
# PROT_READ file mapping, private and shared, and an mprotect'ed buffer): the
# plain job's results, and each of the 6 sends and 6 receives a rank makes
# zero-copy (the send buffers registered for remote reads alone).
rdonly_zcopy() {   # pml
    one_case rdonly "$1" && each_message_zcopy "$out/umr-rdonly-2-$1" rdonly 2 12 &&
        one_reg_per_region "$out/umr-rdonly-2-$1" &&
        decided_once "$out/umr-rdonly-2-$1" 6
}

# The zero-copy decision was taken once per message on each side: on every
# rank, decided_send and decided_recv (the choice's counters) are N, the
# rank's zero-copy sends and receives (its cache, or a type's memo, answers
# after the first, but counts alike).
decided_once() {   # file, n
    [ "$(counter "$1" decided_send | sort -u)" = "$2" ] &&
        [ "$(counter "$1" decided_recv | sort -u)" = "$2" ] ||
        { echo "decided_send $(echo $(counter "$1" decided_send))" \
               "decided_recv $(echo $(counter "$1" decided_recv)), not $2 a rank"
          return 1; }
}

# Issue 30 finding 6: buffers unmapped and other memory mapped at the same
# addresses between messages are registered again (4 sends and 4 receives a
# rank: 8 regions, none reused), every byte right.
fresh_registered_again() {   # pml
    one_case fresh "$1" && registered_again "$out/umr-fresh-2-$1" 8
}

# Control messages arrived in ob1's or ucx's own requests, hooked in place
# (pml_umr_hook.c); with pml_umr_recv_inplace=0 pml/umr's wrapper took them.
inplace_used() {   # file, ob1|ucx|wrapper
    local n
    n=$(grep -o "inplace [0-9]*" "$1" | awk '{s += $2} END {print s + 0}')
    if [ "$2" != wrapper ]; then
        [ "$n" -gt 0 ] || { echo "no control message received in place"; return 1; }
    else
        [ "$n" -eq 0 ] || { echo "$n control messages received in place ($2)"; return 1; }
    fi
}

# With the receive wrapper instead of the in-place hook.
identical_wrapper() {   # pml
    local got=$out/umr-2-$1-wrapper args=(--mca pml ob1,umr)
    [ "$1" = ucx ] && args=("${ucx_args[@]}")
    run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=on \
        OMPI_MCA_pml_umr_recv_inplace=0 -- -np 2 "${args[@]}"
    same_checks "$out/ref-2-$1" "$got" && zcopy_in_every_case "$got" &&
        inplace_used "$got" wrapper
}

# Automatic choice without a costs file: the built-in constants never
# choose the sw engine, so nothing moves zero-copy but the escapes (a
# message that looks like a control message always does).
identical_auto() {
    local got=$out/auto-2
    run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=auto \
        OMPI_MCA_pml_umr_cost_file="$out/no-such-costs.conf" -- -np 2
    same_checks "$out/ref-2-ob1" "$got" &&
        grep -q "pml_umr: rank" "$got" && ! grep "pml_umr: rank" "$got" | grep -v "keys_live 0 errors 0" &&
        grep "pml_umr: rank" "$got" | awk '{
            for (i = 1; i < NF; ++i) { if ($i == "zcopy_sends") z = $(i + 1);
                                       if ($i == "escapes") e = $(i + 1) }
            if (z != e) { print "chosen zero-copy:", $0; bad = 1 } }
            END { exit bad }'
}

# Automatic choice with a costs file in which the sw engine costs nothing
# and ob1 a microsecond a byte: every eligible message goes zero-copy, so
# the file was read, for the wrapped PML, and the choice follows it.
identical_auto_costs() {
    local got=$out/auto-costs-2 costs=$out/costs-sw-free.conf d op k b
    {
        echo "version = 1"
        for op in get put; do for d in dense sparse; do
            for k in op rentry lentry byte; do
                echo "engine.sw.$op.$d.${k}_ns = 0"
            done
        done; done
        echo "pml.ob1.local.ctrl_ns = 0"
        for b in 8 16 32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536; do
            echo "pml.ob1.local.ddt.$b.op_ns = 0"
            echo "pml.ob1.local.ddt.$b.byte_ns = 1000"
        done
    } >"$costs"
    run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=auto \
        OMPI_MCA_pml_umr_cost_file="$costs" -- -np 2 --mca pml ob1,umr
    same_checks "$out/ref-2-ob1" "$got" && zcopy_in_every_case "$got"
}

# How many processes said a message of help-mpi-*-umr.txt (FILE, its fixed
# text, the help file and topic): 0 if the text was never printed, else the
# processes whose verbose stream (pml_umr_verbose 2) says "sent help message
# HELP / TOPIC". Open MPI prints one copy of a message many ranks sent: 4.1
# counts the others ("N more processes have sent help message"), 5.0's
# launcher prints no count, so the text alone cannot tell how many sent it.
ranks_said() {
    local file=$1 text=$2 help=$3 topic=$4
    grep -qaF -- "$text" "$file" || { echo 0; return; }
    grep -a "pml_umr: sent help message $help / $topic\$" "$file" |
        sed 's/\].*//' | sort -u | wc -l
}

disabled() {   # name, env...
    local got=$out/off-$1; shift
    run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=on "$@" -- -np 2
    same_checks "$out/ref-2-ob1" "$got" && no_zcopy "$got"
}

version_mismatch() {
    disabled version OMPI_MCA_pml_umr_test_version=9.9.9 OMPI_MCA_pml_umr_verbose=2 &&
        grep -q 'pml_umr: not interposing: built for Open MPI .* but running 9.9.9$' "$out/off-version" &&
        [ "$(ranks_said "$out/off-version" ' but running 9.9.9' help-mpi-pml-umr.txt version-mismatch)" -eq 2 ]
}

# "--mca pml umr" alone: no PML can be selected (pml/umr only wraps one);
# the job fails as it would, and pml/umr says what to write instead
named_alone() {
    local got=$out/alone
    run "$got" "${umr_env[@]}" -- -np 2 --mca pml umr &&
        { echo "a job ran with pml umr alone"; return 1; }
    grep -q 'pml_umr: pml/umr is not a PML of its own' "$got" &&
        grep -q -- '--mca pml ob1,umr' "$got" || { tail -20 "$got"; return 1; }
}

ompi_info_lists() {
    local o
    o=$(env "${umr_env[@]}" ompi_info 2>&1) || return 1
    grep -q "MCA pml: umr" <<<"$o" || { echo "ompi_info does not list pml umr"; return 1; }
    o=$(env "${umr_env[@]}" ompi_info --param pml umr --level 9 2>&1)
    for p in enable verbose zcopy min_size uct_module devices recv_inplace; do
        grep -q "pml_umr_$p" <<<"$o" || { echo "pml_umr_$p not listed"; echo "$o"; return 1; }
    done
    grep -q 'parameter "pml_umr_devices" (current value: "", ' <<<"$o" ||
        { echo "pml_umr_devices: default not empty"; return 1; }
}

# A peer that dies holding a zero-copy message ends the job (Open MPI's
# runtime aborts it) instead of leaving the sender waiting for its ack.
peer_death() {
    local got=$out/die rc
    rc=0
    run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=on -- -np 2 -- die || rc=$?
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || { echo "exit status $rc (124: hang)"; return 1; }
}

check ompi_info_lists_component ompi_info_lists
for np in 2 4; do
    for pml in ob1 ucx; do
        check "identical_np${np}_${pml}_zcopy" identical_forced "$np" "$pml"
    done
done
check rdonly_send_buffers_np2_ob1_zcopy rdonly_zcopy ob1
check rdonly_send_buffers_np2_ucx_zcopy rdonly_zcopy ucx
check fresh_buffers_registered_again_np2_ob1 fresh_registered_again ob1
check identical_np2_ob1_zcopy_wrapper identical_wrapper ob1
check identical_np2_ucx_zcopy_wrapper identical_wrapper ucx
check identical_np2_ob1_auto identical_auto
check identical_np2_ob1_auto_measured_costs identical_auto_costs
check disabled_by_mca_param disabled enable OMPI_MCA_pml_umr_enable=0
check disabled_by_ucx_tls disabled tls UCX_TLS=self,sm,tcp
check disabled_by_version_mismatch version_mismatch
check named_alone_says_what_to_write named_alone
check disabled_by_thread_multiple disabled thread PML_UMR_TEST_THREAD_MULTIPLE=1
# no rail: UCX_MLX5_UMR_ENGINE=mlx5 without a ConnectX
check disabled_without_rail disabled norail UCX_MLX5_UMR_ENGINE=mlx5
# UCX_TLS naming mlx5_umr keeps it on
ucx_tls_names_it() {
    local got=$out/tls-on
    run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=on UCX_TLS=self,sm,mlx5_umr -- -np 2 --mca pml ob1,umr
    same_checks "$out/ref-2-ob1" "$got" && zcopy_in_every_case "$got"
}
check ucx_tls_naming_mlx5_umr ucx_tls_names_it
check peer_death_ends_job peer_death

# pml_umr_devices (umr_mpi_devices.h). The rails each rank opened are its
# "rail NAME open" lines (pml_umr_verbose 5).
devices_sw_only() {
    local got=$out/dev-sw
    run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=on OMPI_MCA_pml_umr_verbose=5 \
        OMPI_MCA_pml_umr_devices=sw -- -np 2
    same_checks "$out/ref-2-ob1" "$got" && zcopy_in_every_case "$got" &&
        [ "$(grep -c 'pml_umr: rail sw open$' "$got")" -eq 2 ] &&
        [ "$(grep -c 'pml_umr: rail .* open$' "$got")" -eq 2 ] ||
        { grep "pml_umr: rail" "$got"; echo "not one sw rail a rank"; return 1; }
}

# a name that is not a device here (NAME, the expected reason): the plain
# job, one warning a rank, nothing zero-copy, and no rail opened
devices_refused() {
    local got=$out/dev-$1 value=$2 why=$3
    run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=on OMPI_MCA_pml_umr_verbose=5 \
        OMPI_MCA_pml_umr_devices="$value" -- -np 2
    same_checks "$out/ref-2-ob1" "$got" && no_zcopy "$got" || return 1
    [ "$(ranks_said "$got" "pml_umr: pml_umr_devices=\"$value\": $why (devices here: sw), UCX_MLX5_UMR_ENGINE=sw: passing everything through" help-mpi-common-umr.txt devices-rejected)" -eq 2 ] ||
        { grep "pml_umr\|help message" "$got"; echo "not one warning a rank"; return 1; }
    ! grep "pml_umr: rail" "$got"
}

# "^sw": no rail here (no ConnectX), so no zero-copy between the ranks of
# this host; the job is the plain one
devices_exclude_sw() {
    local got=$out/dev-nosw
    run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=on OMPI_MCA_pml_umr_verbose=5 \
        OMPI_MCA_pml_umr_devices=^sw -- -np 2
    same_checks "$out/ref-2-ob1" "$got" && no_zcopy "$got" || return 1
    ! grep "pml_umr: rail" "$got" || return 1
    [ "$(grep -c 'no mlx5_umr rail could be opened (pml_umr_devices="^sw")' "$got")" -eq 2 ]
}

check devices_sw_only devices_sw_only
check devices_absent_device devices_refused absent mlx5_9 'no device "mlx5_9"'
check devices_sw_port devices_refused swport sw:1 '"sw:1": the sw device has no ports'
check devices_exclude_sw devices_exclude_sw

# The PML table pml/umr installs (pml_umr_slots, rank 0): the slots it
# intercepts are its own, every other one is the wrapped PML's very
# function (or NULL where the wrapped PML's is), and the limits, flags and
# selected component's name are the wrapped PML's.
intercepted=" pml_add_procs pml_irecv_init pml_irecv pml_recv pml_isend_init pml_isend pml_send pml_iprobe pml_probe pml_start pml_improbe pml_mprobe pml_imrecv pml_mrecv "
slots_forwarded() {   # ob1|ucx
    local ref=$out/slots-ref-$1 got=$out/slots-umr-$1 args=() bad=0 name want have
    [ "$1" = ucx ] && args=(--mca pml_ucx_tls any --mca pml_ucx_devices any)
    prog=$PWD/pml_umr_slots run "$ref" -- -np 2 --mca pml "$1" "${args[@]}"
    prog=$PWD/pml_umr_slots run "$got" "${umr_env[@]}" -- -np 2 --mca pml "$1,umr" "${args[@]}"
    [ "$(grep -c '^slot ' "$ref")" -gt 20 ] || { echo "no slots in $ref"; tail "$ref"; return 1; }
    [ "$(grep -c 'pml_umr: rank' "$got")" -eq 2 ] || { echo "pml/umr did not interpose"; tail "$got"; return 1; }
    while read -r _ name want; do
        have=$(awk -v n="$name" '$1 == "slot" && $2 == n {print $3}' "$got")
        if [[ "$intercepted" == *" $name "* ]]; then
            [[ "$have" == mca_pml_umr.so+* ]] ||
                { echo "$name: $have, not pml/umr's"; bad=1; }
        elif [ "$have" != "$want" ]; then
            echo "$name: $have with pml/umr, $want without"; bad=1
        fi
    done < <(grep '^slot ' "$ref")
    diff <(grep '^limit \|^flags \|^component ' "$ref") \
         <(grep '^limit \|^flags \|^component ' "$got") || bad=1
    grep -q "^component $1$" "$got" || bad=1
    return $bad
}
check slots_forwarded_ob1 slots_forwarded ob1
check slots_forwarded_ucx slots_forwarded ucx

# Open MPI 5's comm_method hook (--mca ompi_display_comm): it names the
# selected PML's transports (pml ucx's through pml_get_transports, ob1's
# BTLs by its name), the same with pml/umr in front.
comm_method_same() {   # ob1|ucx
    local ref=$out/comm-ref-$1 got=$out/comm-umr-$1 args=(--mca ompi_display_comm mpi_init,mpi_finalize)
    [ "$1" = ucx ] && args+=(--mca pml_ucx_tls any --mca pml_ucx_devices any)
    prog=$PWD/pml_umr_slots run "$ref" -- -np 2 --mca pml "$1" "${args[@]}"
    prog=$PWD/pml_umr_slots run "$got" "${umr_env[@]}" -- -np 2 --mca pml "$1,umr" "${args[@]}"
    [ "$(grep -c 'pml_umr: rank' "$got")" -eq 2 ] || { echo "pml/umr did not interpose"; return 1; }
    grep -q 'all connections are' "$ref" || { echo "no display in $ref"; tail "$ref"; return 1; }
    [ "$1" != ucx ] || grep -q 'all connections are ucx=' "$ref" ||
        { echo "pml ucx reports no transports"; grep 'connections are' "$ref"; return 1; }
    diff <(grep 'connections are' "$ref") <(grep 'connections are' "$got")
}
if [ "${UMR_OMPI_HAS_GET_TRANSPORTS:-no}" = yes ] &&
   ompi_info 2>/dev/null | grep -q "MCA hook: comm_method"; then
    check comm_method_display_ob1 comm_method_same ob1
    check comm_method_display_ucx comm_method_same ucx
fi

# coll/adapt sets its completion callback on the PML requests it posts
# (MCA_PML_CALL(irecv) + ompi_request_set_callback, its tags from the
# nonblocking collectives' range): pml/umr's in-place hook must leave those
# receives alone (before, a control message landed in adapt's buffer as
# data). Broadcasts of a strided face with adapt selected, at -np 4 (a tree).
adapt_same() {   # ob1|ucx
    local ref=$out/adapt-ref-$1 got=$out/adapt-umr-$1 args=(--mca coll_adapt_priority 100)
    [ "$1" = ucx ] && args+=(--mca pml_ucx_tls any --mca pml_ucx_devices any)
    run "$ref" -- -np 4 --mca pml "$1" "${args[@]}" -- bcast
    run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=on -- -np 4 --mca pml "$1,umr" "${args[@]}" -- bcast
    same_checks "$ref" "$got" && zcopy_in_every_case "$got"
}
if ompi_info 2>/dev/null | grep -q "MCA coll: adapt"; then
    check coll_adapt_np4_ob1_zcopy adapt_same ob1
    check coll_adapt_np4_ucx_zcopy adapt_same ucx
fi

# MPI-4 sessions: the PML is selected for the session, there is no
# MPI_COMM_WORLD for pml/umr's internal messages: it passes through.
session_passes_through() {
    local ref=$out/session-ref got=$out/session-umr
    prog=$PWD/pml_umr_session_test run "$ref" -- -np 2 --mca pml ob1
    prog=$PWD/pml_umr_session_test run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=on -- \
        -np 2 --mca pml ob1,umr
    same_checks "$ref" "$got" && no_zcopy "$got" &&
        [ "$(grep -c 'pml_umr: PML selected for an MPI session, not for MPI_Init' "$got")" -eq 2 ]
}
[ "${UMR_MPI_HAS_SESSIONS:-no}" = yes ] && check session_passes_through session_passes_through

# MPI fault tolerance on: Open MPI reads every PML request as ob1's; pml/umr
# passes through.
ft_passes_through() {
    local ref=$out/ft-ref got=$out/ft-umr
    run "$ref" -- -np 2 --mca pml ob1 --mca mpi_ft_enable 1
    run "$got" "${umr_env[@]}" OMPI_MCA_pml_umr_zcopy=on -- -np 2 --mca pml ob1,umr \
        --mca mpi_ft_enable 1
    same_checks "$ref" "$got" && no_zcopy "$got" &&
        [ "$(grep -c 'pml_umr: MPI fault tolerance (mpi_ft_enable) is on' "$got")" -eq 2 ]
}
[ "${UMR_OMPI_HAS_FT:-no}" = yes ] && check disabled_by_fault_tolerance ft_passes_through
finish
