"""bench/run reduce: sums from Python (ferro's core.sum, cpu engine, pairwise) against
numpy.sum (pairwise too) in the same process: full sums, sums over the trailing axis and over
the leading one (column sums), f32, f64 and c128. The sides alternate sample by sample; one
JSON line per case with medians and ratio = ferro_s / numpy_s, then a summary line."""
import json
import math
import sys

import numpy as np

import ferro
from peer_timing import median_seconds

quick = "--quick" in sys.argv
rng = np.random.default_rng(0)
CASES = [
    ("f64 10^7, all", rng.standard_normal(10**7), None),
    ("f32 10^7, all", rng.standard_normal(10**7).astype(np.float32), None),
    ("f64 10^5, all", rng.standard_normal(10**5), None),
    ("f64 1000x1000, axis 0", rng.standard_normal((1000, 1000)), 0),
    ("f64 1000x1000, axis 1", rng.standard_normal((1000, 1000)), 1),
    ("f64 100x100000, axis 0", rng.standard_normal((100, 100000)), 0),
    ("c128 10^6, all", rng.standard_normal(10**6) + 1j, None),
]
rounds = 5 if quick else 9
ratios = []
for name, a, axis in CASES:
    t = ferro.asarray(a)
    f = lambda: t.sum(axis=axis)
    g = lambda: a.sum(axis=axis)
    inner = max(1, int(0.02 / max(1e-7, median_seconds(f, 3, 1))))
    fs, ns = [], []
    for _ in range(rounds):
        fs.append(median_seconds(f, 3, inner, warmup=1))
        ns.append(median_seconds(g, 3, inner, warmup=1))
    ferro_s, numpy_s = sorted(fs)[rounds // 2], sorted(ns)[rounds // 2]
    ratios.append(ferro_s / numpy_s)
    print(json.dumps({"bench": "reduce", "case": name, "ferro_s": ferro_s, "numpy": {"peer_s": numpy_s, "ratio": ferro_s / numpy_s,
                      "how": f"numpy {np.__version__} .sum"}, "rounds": rounds}), flush=True)
print(json.dumps({"bench": "reduce", "summary": True, "ratio_vs_numpy_geomean": math.exp(sum(map(math.log, ratios)) / len(ratios))}))
