"""bench/run fft, peer side: the cases of bench/fft.cpp through numpy.fft, scipy.fft and
torch.fft (current PyPI releases), median seconds per call, one JSON line per case.

Threads: --threads N goes to scipy.fft (workers=N) and torch (set_num_threads(N)) on the
cases of 2^16 points and more, as ferro and FFTW get them; numpy.fft has no threads. A peer
that is missing or fails is reported with the reason. --case NAME: only that case (both
precisions)."""
import json, sys

import numpy as np

from peer_timing import median_seconds

quick = "--quick" in sys.argv
threads = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 1
only = sys.argv[sys.argv.index("--case") + 1] if "--case" in sys.argv else None

cases = [("c2c n=2^10", (1024,), False, 1), ("c2c n=2^16", (65536,), False, 1), ("c2c n=2^20", (1 << 20,), False, 1),
         ("c2c n=15015 (3*5*7*11*13)", (15015,), False, 1), ("r2c n=2^20", (1 << 20,), True, 1),
         ("c2c 2-D 1024x1024", (1024, 1024), False, 2), ("c2c batched 64x4096", (64, 4096), False, 1),
         ("c2c batched 1024x1024", (1024, 1024), False, 1)]


def attempt(f):
    try:
        return f()
    except Exception as e:  # a peer that cannot run says why
        return {"skipped": f"{type(e).__name__}: {str(e)[:200]}"}


def peers():
    out = {"numpy": (lambda: f"numpy {np.__version__}", None)}
    try:
        import scipy, scipy.fft
        out["scipy"] = (lambda: f"scipy {scipy.__version__}", scipy.fft)
    except Exception as e:
        out["scipy"] = (None, f"{type(e).__name__}: {e}")
    try:
        import torch
        out["torch"] = (lambda: f"torch {torch.__version__}", torch)
    except Exception as e:
        out["torch"] = (None, f"{type(e).__name__}: {e}")
    return out


available = peers()
rng = np.random.default_rng(5)
for name, shape, real, naxes in cases:
    if only is not None and name != only:
        continue
    for dtype, cdtype, label in ((np.float64, np.complex128, "f64"), (np.float32, np.complex64, "f32")):
        size = int(np.prod(shape))
        workers = threads if size >= 1 << 16 else 1
        x = rng.random(shape).astype(dtype) if real else (rng.random(shape) + 1j * rng.random(shape)).astype(cdtype)
        axes = (-1,) if naxes == 1 else (-2, -1)
        inner = 200 if size <= 4096 else 10 if size <= 65536 else 1
        samples = 5 if quick else 11
        row = {"case": f"{name} {label}", "threads": workers}
        np_f = (lambda: np.fft.rfftn(x, axes=axes)) if real else (lambda: np.fft.fftn(x, axes=axes))
        row["numpy"] = attempt(lambda: {"seconds": median_seconds(np_f, samples, inner), "how": available["numpy"][0]() + " (1 thread)"})
        how, mod = available["scipy"]
        if how is None:
            row["scipy"] = {"skipped": mod}
        else:
            sp_f = (lambda: mod.rfftn(x, axes=axes, workers=workers)) if real else (lambda: mod.fftn(x, axes=axes, workers=workers))
            row["scipy"] = attempt(lambda: {"seconds": median_seconds(sp_f, samples, inner), "how": f"{how()} (workers={workers})"})
        how, torch = available["torch"]
        if how is None:
            row["torch"] = {"skipped": torch}
        else:
            def run_torch():
                torch.set_num_threads(workers)
                t = torch.from_numpy(x)
                f = (lambda: torch.fft.rfftn(t, dim=axes)) if real else (lambda: torch.fft.fftn(t, dim=axes))
                return {"seconds": median_seconds(f, samples, inner), "how": f"{how()} ({workers} threads)"}
            row["torch"] = attempt(run_torch)
        print(json.dumps(row), flush=True)
