# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
# Sourced by test_pml_umr_conns.sh and test_pml_umr_model_conns.sh: the
# checks of a pml_umr_conns run under a budget of connected peers.

# conns_ok FILE NP BUDGET SENDS: the program's result line, and on every
# rank: at most BUDGET peers connected at once, every one of its SENDS
# derived-type sends counted in exactly one of zcopy_sends,
# passthrough_sends, fallbacks; no registration left, no error; over the
# job: disconnects > 0 and messages moved zero-copy; each rank stated its
# budget once.
conns_ok() {
    local f=$1 np=$2 budget=$3 sends=$4
    grep -q "^FAIL\|AddressSanitizer\|runtime error:" "$f" &&
        { grep -h -A3 "^FAIL\|AddressSanitizer\|runtime error:" "$f" | head -20; return 1; }
    grep -q "^check conns .*: ok$" "$f" || { echo "no result line"; tail -20 "$f"; return 1; }
    [ "$(grep -c "pml_umr: budget of connected peers: $budget " "$f")" -eq "$np" ] ||
        { grep "budget of connected" "$f" | head -3; echo "not one budget line ($budget) a rank"; return 1; }
    # (contrib/mpirun-model.sh prints them again at the end)
    grep -a 'pml_umr: rank [0-9]*: zcopy_sends' "$f" |
        sed 's/^.*\(pml_umr: rank\)/\1/' | sort -u >"$f.cnt"
    [ "$(wc -l <"$f.cnt")" -eq "$np" ] ||
        { echo "not one counters line a rank"; return 1; }
    awk -v b="$budget" -v n="$sends" '
        { for (i = 1; i < NF; ++i) c[$i] = $(i + 1)
          r = c["rank"]
          if (c["conns_max"] + 0 > b) { print "rank " r " conns_max " c["conns_max"] " > " b; bad = 1 }
          k = c["zcopy_sends"] + c["passthrough_sends"] + c["fallbacks"]
          if (k != n) { print "rank " r ": zcopy_sends + passthrough_sends + fallbacks = " k ", not " n; bad = 1 }
          if (c["keys_live"] != 0 || c["errors"] != 0) { print "rank " r ": keys_live " c["keys_live"] " errors " c["errors"]; bad = 1 }
          d += c["disconnects"]; z += c["zcopy_recvs"]; bp += c["budget_passthrough"] }
        END { printf "job: disconnects %d zcopy_recvs %d budget_passthrough %d\n", d, z, bp
              if (d == 0) { print "no disconnect"; bad = 1 }
              if (z == 0) { print "nothing moved zero-copy"; bad = 1 }
              exit bad }' "$f.cnt"
}
