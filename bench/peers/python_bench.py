"""bench/run python: ferro from Python against torch and numpy in the same process.

Overhead: the time of one call from Python of a 1-element add and a 4x4 matmul, without grad
and with inputs that require grad (the call records its grad node; no backward), for
ferro.Tensor, torch.Tensor and numpy (no grad). The sides alternate round by round (each
round: the median of its samples for every side), and each side reports its median over the
rounds, so a busy spell of the machine lands on both sides of a ratio.

Einsum: every shared instance from Python, along the file's reference path on both sides:
ferro.einsum(optimize=path) on numpy operands shared without copies against
opt_einsum.contract(backend="torch") on torch tensors (pairwise torch ops along the path).
One JSON line per case, then a summary line."""
import json
import math
import sys

import numpy as np

from peer_timing import median_call_seconds, median_seconds

quick = "--quick" in sys.argv
data = sys.argv[sys.argv.index("--data") + 1] if "--data" in sys.argv else "../shared/data/einsum_instances.json"
rounds = 5 if quick else 9

import ferro  # noqa: E402

try:
    import torch
    torch_note = f"torch {torch.__version__}"
except Exception as e:  # the peer is reported as skipped, never dropped
    torch, torch_note = None, f"skipped: {type(e).__name__}: {e}"


def overhead_cases():
    rng = np.random.default_rng(0)
    one = rng.standard_normal(1)
    m4 = rng.standard_normal((4, 4))
    for op, x in (("add 1 element", one), ("matmul 4x4", m4)):
        fn = (lambda a, b: a + b) if op.startswith("add") else (lambda a, b: a @ b)
        for grad in (False, True):
            sides = {}
            fa, fb = ferro.asarray(x.copy()), ferro.asarray(x.copy())
            if grad:
                fa.requires_grad = True
            sides["ferro"] = lambda fa=fa, fb=fb: fn(fa, fb)
            if torch is not None:
                ta, tb = torch.from_numpy(x.copy()), torch.from_numpy(x.copy())
                if grad:
                    ta.requires_grad_()
                sides["torch"] = lambda ta=ta, tb=tb: fn(ta, tb)
            if not grad:
                na, nb = x.copy(), x.copy()
                sides["numpy"] = lambda na=na, nb=nb: fn(na, nb)
            yield f"{op}{' (grad)' if grad else ''}", sides


def alternate(sides):
    per_side = {name: [] for name in sides}
    for _ in range(rounds):
        for name, f in sides.items():
            per_side[name].append(median_seconds(f, 5, 2000))
    return {name: sorted(v)[len(v) // 2] for name, v in per_side.items()}


def main():
    summary = {"overhead_vs_torch": [], "einsum_vs_torch": []}
    for case, sides in overhead_cases():
        t = alternate(sides)
        row = {"bench": "python", "case": case, "ferro_s": t["ferro"], "rounds": rounds}
        for peer in ("torch", "numpy"):
            if peer in t:
                row[peer] = {"peer_s": t[peer], "ratio": t["ferro"] / t[peer]}
        if "torch" not in t and not case.endswith("(grad)") or torch is None:
            row["torch"] = {"skipped": torch_note}
        if "torch" in t:
            summary["overhead_vs_torch"].append(t["ferro"] / t["torch"])
        print(json.dumps(row), flush=True)

    doc = json.load(open(data))
    for inst in doc["instances"]:
        if quick and inst["paths"]["opt_flops"]["log10_flops"] > 10:
            continue
        # ferro refuses digit labels (as numpy does): the subscript digits stand in for them.
        sub = inst["subscripts"].translate({ord("0") + d: 0x2080 + d for d in range(10)})
        shapes = [tuple(s) for s in inst["shapes"]]
        rng = np.random.default_rng(1)
        ops = [rng.uniform(-1, 1, s) for s in shapes]
        path = [tuple(p) for p in inst["paths"]["opt_flops"]["path"]]
        row = {"bench": "python_einsum", "case": inst["name"], "operands": len(ops)}
        fops = [ferro.asarray(o) for o in ops]
        run_ferro = lambda: ferro.einsum(sub, *fops, optimize=["einsum_path", *path])
        if torch is None:
            row["torch"] = {"skipped": torch_note}
            row["ferro_s"] = median_call_seconds(run_ferro, 3 if quick else 5)
        else:
            import opt_einsum as oe
            tops = [torch.from_numpy(o) for o in ops]
            run_torch = lambda: oe.contract(sub, *tops, optimize=path, backend="torch")
            f_s, t_s = [], []
            for _ in range(3 if quick else 5):  # alternated
                f_s.append(median_call_seconds(run_ferro, 3))
                t_s.append(median_call_seconds(run_torch, 3))
            row["ferro_s"], peer_s = sorted(f_s)[len(f_s) // 2], sorted(t_s)[len(t_s) // 2]
            row["torch"] = {"peer_s": peer_s, "ratio": row["ferro_s"] / peer_s,
                            "how": f"opt_einsum {oe.__version__} contract(backend=torch), {torch_note}"}
            summary["einsum_vs_torch"].append(row["ferro_s"] / peer_s)
        print(json.dumps(row), flush=True)

    def geomean(v):
        return math.exp(sum(map(math.log, v)) / len(v)) if v else None
    print(json.dumps({"bench": "python", "summary": True,
                      "overhead_ratio_vs_torch_geomean": geomean(summary["overhead_vs_torch"]),
                      "einsum_ratio_vs_torch_geomean": geomean(summary["einsum_vs_torch"]),
                      "einsum_cases": len(summary["einsum_vs_torch"])}), flush=True)


if __name__ == "__main__":
    main()
