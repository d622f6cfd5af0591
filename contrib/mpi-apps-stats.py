#!/usr/bin/env python3
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# The RESULT lines of contrib/run-mpi-apps.sh (one or several runs of it,
# in one file; a line "### NAME ..." names the runs after it) as a table:
# best-of ratio, median ratio, a bootstrap 95% interval of the median ratio
# (4,000 resamples, seeded) and a two-sided Mann-Whitney p (normal
# approximation) of the two sets of times. Ratios >= 1: pml/umr no slower.
#
#   contrib/mpi-apps-stats.py LOG
#
import math
import random
import re
import statistics as S
import sys

random.seed(1)
def mw(a, b):   # Mann-Whitney U, two-sided normal approx
    allv = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    r = {}; i = 0
    while i < len(allv):
        j = i
        while j < len(allv) and allv[j][0] == allv[i][0]: j += 1
        for k in range(i, j): r[k] = (i + j + 1) / 2
        i = j
    ra = sum(r[k] for k, (v, g) in enumerate(allv) if g == 0)
    n1, n2 = len(a), len(b); u = ra - n1 * (n1 + 1) / 2
    mu = n1 * n2 / 2; sd = (n1 * n2 * (n1 + n2 + 1) / 12) ** .5
    z = (u - mu) / sd

    return 2 * (1 - 0.5 * (1 + math.erf(abs(z) / 2 ** .5)))
def ci(a, b, n=4000):
    v = sorted(S.median(random.choices(a, k=len(a))) / S.median(random.choices(b, k=len(b))) for _ in range(n))
    return v[int(.025 * n)], v[int(.975 * n)]
sec = ''
for line in open(sys.argv[1]):
    if line.startswith('###'): sec = ' '.join(line.split()[1:-1]); continue
    m = re.match(r'RESULT (\S+) np (\d) (\S+) .*\(plain ([\d. ]+); umr ([\d. ]+)\)', line)
    if not m: continue
    p = [float(x) for x in m.group(4).split()]; u = [float(x) for x in m.group(5).split()]
    lo, hi = ci(p, u)
    print(f"| {sec:28s} | {m.group(1)} | {m.group(2)} | {m.group(3)} | {min(p)/min(u):.3f} | {S.median(p)/S.median(u):.3f} | {lo:.2f}-{hi:.2f} | {mw(p,u):.2f} |")
