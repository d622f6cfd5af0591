# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
# Sourced by test_osc_umr.sh and test_osc_umr_model.sh: osc_umr_test's
# bad-input lines (run_out_of_window) in a job with osc/umr in front and
# OSC_UMR_TEST_RANGE=1.

# range_refused_ok FILE NP: every rank saw the three puts far past the end
# of the target's window and the two osc/umr-only ones (one displacement
# unit past the end, before the start) refused with MPI_ERR_RMA_RANGE, its
# window (and the page after it) untouched, the put ending at the window's
# last byte accepted with every byte right, and counted 5 range_refused.
range_refused_ok() {
    local f=$1 np=$2 n
    n=$(grep -ac "^check out-of-window put .* error_class=MPI_ERR_RMA_RANGE rank [0-9]*: refused$" "$f")
    [ "$n" -eq $((3 * np)) ] ||
        { echo "$n far out-of-window puts refused with MPI_ERR_RMA_RANGE, expected $((3 * np))"
          grep -a "out-of-window put" "$f" | head; return 1; }
    n=$(grep -ac "^range .* rank [0-9]*: refused error_class=MPI_ERR_RMA_RANGE$" "$f")
    [ "$n" -eq $((2 * np)) ] ||
        { echo "$n range puts refused with MPI_ERR_RMA_RANGE, expected $((2 * np))"
          grep -a "^range " "$f" | head; return 1; }
    n=$(grep -ac "^check out-of-window window untouched rank [0-9]*: ok$" "$f")
    [ "$n" -eq "$np" ] || { echo "$n untouched windows, expected $np"; return 1; }
    n=$(grep -ac "^check window-end put .* error_class=none rank [0-9]*: ok$" "$f")
    [ "$n" -eq "$np" ] || { echo "$n window-end puts right, expected $np"; return 1; }
    grep -a "osc_umr: rank [0-9]*: " "$f" | awk -v np="$np" '{
        v = ""
        for (i = 1; i < NF; ++i) if ($i == "range_refused") v = $(i + 1)
        if (v != "5") { print "range_refused is not 5: " $0; bad = 1 }
        ++n }
        END { if (n != np) { print n " counter lines, expected " np; bad = 1 }
              exit bad }'
}

# The check lines of each rank of a job without the bad-input ones (a plain
# job that cannot run them leaves them out: OSC_UMR_TEST_NO_OUT_OF_WINDOW).
checks_but_range() {   # file
    checks_by_rank "$1" | grep -av "out-of-window\|window-end"
}
