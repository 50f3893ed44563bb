"""bench/run linalg, numpy and scipy side: the cases of bench/linalg.cpp (same matrices: X X^T +
n I with X uniform in [0, 1), f64), median seconds of numpy.linalg and scipy.linalg, one JSON
line per case. The values need not equal ferro's matrices bit for bit: these routines' cost
does not depend on the values of a well-conditioned SPD matrix."""
import json, sys

import numpy as np
import scipy
import scipy.linalg as sl

from peer_timing import median_seconds

quick = "--quick" in sys.argv
sizes = [64, 256] if quick else [64, 256, 1024]


for op in ["svd", "eigh", "eig", "qr", "solve", "cholesky", "det"]:
    for n in sizes:
        rng = np.random.default_rng(11)
        x = rng.random((n, n))
        a = x @ x.T + n * np.eye(n)
        b = np.ones(n)
        numpy_f = {
            "svd": lambda: np.linalg.svd(a, full_matrices=False),
            "eigh": lambda: np.linalg.eigh(a),
            "eig": lambda: np.linalg.eig(a),
            "qr": lambda: np.linalg.qr(a),
            "solve": lambda: np.linalg.solve(a, b),
            "cholesky": lambda: np.linalg.cholesky(a),
            "det": lambda: np.linalg.det(a),
        }[op]
        scipy_f = {
            "svd": lambda: sl.svd(a, full_matrices=False, check_finite=False),
            "eigh": lambda: sl.eigh(a, check_finite=False, driver="evd"),
            "eig": lambda: sl.eig(a, check_finite=False),
            "qr": lambda: sl.qr(a, mode="economic", check_finite=False),
            "solve": lambda: sl.solve(a, b, check_finite=False),
            "cholesky": lambda: sl.cholesky(a, lower=True, check_finite=False),
            "det": lambda: sl.det(a, check_finite=False),
        }[op]
        inner = 50 if n <= 64 else 4 if n <= 256 else 1
        samples = 5 if quick or n >= 1024 else 9
        print(json.dumps({"case": f"{op} n={n} f64", "numpy_s": median_seconds(numpy_f, samples, inner),
                          "scipy_s": median_seconds(scipy_f, samples, inner), "numpy": np.__version__,
                          "scipy": scipy.__version__}), flush=True)
