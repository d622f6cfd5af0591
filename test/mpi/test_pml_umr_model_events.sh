#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# pml/umr on the mlx5 engine over the rdma-core model: port events mid-job
# (the host spec's event=NAME@N, model rule R32). make check runs it.
#
#  - CLIENT_REREGISTER on both hosts (a subnet manager that took over) on IB,
#    and a GID table change of a GID not in use on RoCE v2: the rail stays
#    up (rails_retired 0, no peer retired, no fallback) and the job moves
#    as many messages zero-copy as the same job without the events, with
#    the plain job's results;
#  - PORT_ERR then PORT_ACTIVE on host 1: the plain job's results, the rail
#    of host 1's ranks retired and then reopened for new connections (one
#    line each, rails_reopened), no hang. (Peers retired during the outage
#    pass through for the rest of the job: every pair of this job had
#    connected before it.)
#  - PORT_ERR on both hosts at once: the plain job's results, no hang.
# Results in GoogleTest's format.
#
set -u
. "$(dirname "$0")/mpi_test_env.sh"
prog=$PWD/pml_umr_test
out=$PWD/test_pml_umr_model_events.out.d
rm -rf "$out"
mkdir -p "$out"
suite=pml_umr_model_events
. "$(dirname "$0")/../gtest/gtest_format.sh"
. "$(dirname "$0")/pml_umr_model_env.sh"

# the counter NAME summed over the ranks' lines of FILE
counter() {
    grep -a "^pml_umr: rank [0-9]*: zcopy_sends" "$1" | grep -o " $2 [0-9]*" | awk '{s += $2} END {print s + 0}'
}

# the job on 2 hosts of LINK, np 4, ob1, with host specs SPEC..
job() {   # file, link, spec..
    local got=$1 link=$2 hosts=() rc=0; shift 2
    for h in "$@"; do hosts+=(--host "$h"); done
    model "$got" UCX_LOG_LEVEL=diag -- --link "$link" --hosts 2 "${hosts[@]}" -- \
        -np 4 --mca pml ob1,umr "$prog" || rc=$?
    [ "$rc" -ne 124 ] || { echo "hang"; return 1; }
    [ "$rc" -eq 0 ] || { echo "exit status $rc"; grep -a "pml_umr\|MPI_ERR" "$got" | head; return 1; }
    same_checks "$out/ref-4-ob1" "$got"
}

rail_stays() {   # name, link, event-line pattern, spec..
    local name=$1 link=$2 pat=$3 got=$out/$1 base=$out/base-$2 c; shift 3
    ref 4 ob1 || return 1
    [ -f "$base" ] || job "$base" "$link" || return 1
    job "$got" "$link" "$@" || return 1
    grep -aqi "$pat" "$got" || { echo "no '$pat' event read"; return 1; }
    for c in rails_retired retired fallbacks fallback_sends fault_declines; do
        [ "$(counter "$got" "$c")" -eq 0 ] ||
            { echo "$c $(counter "$got" "$c")"; grep -a "retired" "$got" | head; return 1; }
    done
    for c in zcopy_sends passthrough_sends; do
        [ "$(counter "$got" "$c")" -eq "$(counter "$base" "$c")" ] ||
            { echo "$c $(counter "$got" "$c"), without the event $(counter "$base" "$c")"; return 1; }
    done
    echo "$name: zcopy_sends $(counter "$got" zcopy_sends) as without the event, rails_retired 0"
}

reopened() {
    local got=$out/port_err_active r o
    ref 4 ob1 || return 1
    job "$got" ib "1=event=port_err@30,event=port_active@60" || return 1
    r=$(counter "$got" rails_retired)
    o=$(counter "$got" rails_reopened)
    echo "rails_retired $r rails_reopened $o"
    [ "$r" -ge 1 ] && [ "$o" -ge 1 ] &&
        [ "$(grep -ac 'rail mlx5_0 reopened' "$got")" -eq "$o" ] ||
        { grep -a "retired\|reopened\|port up" "$got" | head; echo "the rail of host 1 not retired and reopened"; return 1; }
}

check client_reregister_keeps_the_rail_ib rail_stays client_reregister_ib ib \
    "client reregistration" "0=event=client_reregister@20" \
    "1=event=client_reregister@20"
check gid_change_of_another_gid_keeps_the_rail_roce rail_stays gid_change_roce \
    roce "GID table change" "0=event=gid_change@20" "1=event=gid_change@20"
# PORT_ERR on every host at once, no PORT_ACTIVE: every rank's rail retired
# mid-job; the job still ends with the plain job's results (a fault never
# fails or hangs a job), each rank retiring its rail once.
every_host_down() {
    local got=$out/port_err_every_host r
    ref 4 ob1 || return 1
    job "$got" ib "0=event=port_err@30" "1=event=port_err@30" || return 1
    r=$(counter "$got" rails_retired)
    echo "rails_retired $r"
    [ "$r" -ge 2 ] || { grep -a "retired\|port" "$got" | head; echo "the rails not retired"; return 1; }
}

check port_err_then_port_active_reopens_the_rail reopened
check port_err_on_every_host_no_hang every_host_down
finish
