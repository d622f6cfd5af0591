# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Helpers of the osc/umr job tests (test_osc_umr.sh, test_osc_umr_packed.sh):
# the counters of the ranks' osc_umr lines (osc_umr_verbose=1) and a costs
# file for the choice. Sourced after mpi_test_env.sh.

# The counter of every rank's osc_umr line: > 0, or == VALUE when given.
counter_each_rank() {   # file name np [value]
    local file=$1 name=$2 np=$3 value=${4:-}
    local lines
    lines=$(grep -c "osc_umr: rank [0-9]*: " "$file")
    [ "$lines" -eq "$np" ] || { echo "$lines counter lines, expected $np"; return 1; }
    grep "osc_umr: rank [0-9]*: " "$file" | awk -v c="$name" -v z="$value" '{
        v = ""
        for (i = 1; i < NF; ++i) if ($i == c) v = $(i + 1)
        if ((v == "") || (z == "" && v + 0 <= 0) || (z != "" && v + 0 != z + 0)) {
            print "bad " c ": " $0; bad = 1 } }
        END { exit bad }'
}

# The counter summed over the ranks' osc_umr lines is > 0.
counter_sum() {   # file name
    grep "osc_umr: rank [0-9]*: " "$1" | awk -v c="$2" '{
        for (i = 1; i < NF; ++i) if ($i == c) s += $(i + 1) }
        END { if (s + 0 <= 0) { print c " is 0 on every rank"; exit 1 } }'
}

# A costs file (common_umr_cost.h) where zero-copy loses or wins against the
# wrapped osc module: engine figures and both components' put/get figures.
costs_file() {   # loses|wins file [packed op_ns]
    local how=$1 file=$2 kop=${3:-} eop=1000 oop=1000000 e o d c b
    [ "$how" = loses ] && { eop=1000000; oop=0; }
    {
        echo "version = 1"
        costs_wrapped_pml
        for e in get put; do
            for d in dense sparse; do
                echo "engine.sw.$e.$d.op_ns = $eop"
                for c in rentry_ns lentry_ns byte_ns; do echo "engine.sw.$e.$d.$c = 0"; done
            done
        done
        for o in rdma ucx; do
            for e in get put; do
                for b in 8 16 32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536; do
                    echo "osc.$o.local.$e.$b.op_ns = $oop"
                    echo "osc.$o.local.$e.$b.byte_ns = 0"
                done
            done
        done
        # osc/umr's packed path (without: its built-in rule)
        for e in get put; do
            for b in 8 16 32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536; do
                [ -z "$kop" ] || echo "packed.local.$e.$b.op_ns = $kop"
                [ -z "$kop" ] || echo "packed.local.$e.$b.byte_ns = 0"
            done
        done
    } >"$file"
}

