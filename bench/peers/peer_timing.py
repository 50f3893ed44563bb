"""Timing shared by the Python peers, the protocol of bench/timing.hpp: the median of repeated
samples, each the mean over `inner` calls, after warm-up."""
import time


def median_seconds(f, samples, inner, warmup=2):
    for _ in range(warmup):
        f()
    times = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(inner):
            f()
        times.append((time.perf_counter() - t0) / inner)
    times.sort()
    return times[len(times) // 2]


def median_call_seconds(f, samples, sample_seconds=0.02):
    """A warm-up call (jit, caches), then a second that sizes `inner` so that a sample lasts
    ~sample_seconds (sized by the first, a jit compile left one call per sample)."""
    f()
    t0 = time.perf_counter()
    f()
    once = time.perf_counter() - t0
    return median_seconds(f, samples, max(1, int(sample_seconds / max(once, 1e-7))), warmup=0)
