#!/usr/bin/env python3
# The false-failure rate of tests/noise.rs's stack test (|share| thresholds at
# 0.25), by a seeded simulation of the model: factors aslr, pin, env, heap,
# fresh; a cell where ASLR or env varies draws the cost uniformly from LEVELS
# levels (64: one per cache line; 2: which half of the page), else constant;
# point Shapley shares as stats::factorial computes them.
# Usage: benches/noise_flake.py ROUNDS REPLICATES LEVELS   (e.g. 40 100000 2)
import numpy as np, itertools, math, sys
r = int(sys.argv[1]); reps = int(sys.argv[2]); levels = int(sys.argv[3])  # cost levels: 64 lines or 2 halves
k = 5; cells = 1 << k
rng = np.random.default_rng(1)
noisy = np.array([(c & 1) or (c & 4) for c in range(cells)], bool)
# Shapley weights
w = {}
for f in range(k):
    terms = []
    for S in range(cells):
        if S & (1 << f): continue
        s = bin(S).count("1")
        terms.append((S | (1 << f), S, math.factorial(s) * math.factorial(k - s - 1) / math.factorial(k)))
    w[f] = terms
fail = 0; worst = 0
done = 0
while done < reps:
    n = min(5000, reps - done)
    v = np.zeros((n, cells))
    x = np.log(1000 + rng.integers(0, levels, size=(n, noisy.sum(), r)) * (64 // levels))
    v[:, noisy] = x.var(axis=2, ddof=1)
    tot = v[:, cells - 1]
    sh = np.stack([sum(wt * (v[:, a] - v[:, b]) for a, b, wt in w[f]) / tot for f in range(k)], 1)
    bad = (sh[:, 0] < 0.25) | (sh[:, 2] < 0.25) | (np.abs(sh[:, [1, 3, 4]]) >= 0.25).any(1)
    fail += bad.sum(); worst = max(worst, np.abs(sh[:, [1, 3, 4]]).max()); done += n
print(f"rounds {r} levels {levels}: {fail}/{reps} failures; largest null |share| {worst:.3f}")
