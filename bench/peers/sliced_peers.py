"""bench/run sliced, peer side: cotengra slices the file's reference path (ContractionTree.from_path,
then .slice) and contracts the slices with numpy and with torch, under the memory limit ferro
had (bench/sliced.cpp): cotengra's target_size is its largest intermediate in elements, given the
limit's bytes / 8. Reports the slices, the flop overhead, cotengra's predicted peak (peak_size,
bytes) and, for numpy, the peak tracemalloc measures (numpy's buffers are traced), less the
output. One JSON line.

--case NAME --limit BYTES [--quick]; or --case NAME --slices N: the flop overhead of N slices."""
import json, sys, tracemalloc

import numpy as np

from peer_timing import median_call_seconds


def arg(name, default=None):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


data = arg("--data", "../shared/data/einsum_instances.json")
case = arg("--case")
limit = int(arg("--limit", "0"))
slices = int(arg("--slices", "0"))
samples = 3 if "--quick" in sys.argv else 5

inst = next(i for i in json.load(open(data))["instances"] if i["name"] == case)
sub = inst["subscripts"]
lhs, output = sub.split("->")
inputs = [list(term) for term in lhs.split(",")]
size = {}
for term, shape in zip(inputs, inst["shapes"]):
    for label, n in zip(term, shape):
        size[label] = n
path = [tuple(p) for p in inst["paths"]["opt_flops"]["path"]]
rng = np.random.default_rng(0)
arrays = [rng.uniform(-1, 1, size=shape) for shape in inst["shapes"]]

import cotengra as ctg  # noqa: E402 (after numpy, so a missing cotengra fails with the data read)

tree = ctg.ContractionTree.from_path(inputs, list(output), size, path=path)
row = {"case": case, "how": f"cotengra {ctg.__version__} ContractionTree.from_path(reference).slice"}
if slices > 0:
    sliced = tree.slice(target_slices=slices, seed=0)
    row.update(requested=slices, slices=int(sliced.nslices), flop_overhead=float(sliced.total_flops() / tree.total_flops()))
    print(json.dumps(row))
    sys.exit(0)

sliced = tree.slice(target_size=limit // 8, seed=0)
row.update(limit_bytes=limit, slices=int(sliced.nslices), flop_overhead=float(sliced.total_flops() / tree.total_flops()),
           predicted_bytes=float(sliced.peak_size()) * 8)


def attempt(f):
    try:
        return f()
    except Exception as e:  # a backend that cannot run this instance says why
        return {"skipped": f"{type(e).__name__}: {str(e)[:200]}"}


def numpy_side():
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    out = sliced.contract(arrays, backend="numpy")
    peak = tracemalloc.get_traced_memory()[1] - before - np.asarray(out).nbytes
    tracemalloc.stop()
    seconds = median_call_seconds(lambda: sliced.contract(arrays, backend="numpy"), samples)
    return {"seconds": seconds, "measured_bytes": peak, "how": f"numpy {np.__version__}"}


def torch_side():
    import torch
    t = [torch.from_numpy(a) for a in arrays]
    return {"seconds": median_call_seconds(lambda: sliced.contract(t, backend="torch"), samples),
            "how": f"torch {torch.__version__}"}


row["numpy"] = attempt(numpy_side)
row["torch"] = attempt(torch_side)
print(json.dumps(row))
