"""bench/run einsum, peer side: every instance executed along the file's reference path by
numpy, torch and jax, and the path quality of opt_einsum (greedy, dp) and cotengra on the
same network. One JSON line per instance.

Execution: numpy.einsum with the path (labels renamed to letters; networks with more labels
than numpy accepts go through opt_einsum.contract on numpy, which executes the same path with
tensordot), torch through opt_einsum.contract(backend="torch") (pairwise torch ops along the
path; torch.einsum itself cannot take a path), jax.numpy.einsum(optimize=path) under jax.jit.
Operands are f64 uniform in [-1, 1) (their values do not change the cost). A peer that is
missing or fails is reported with the reason.

--case NAME runs one instance, --timing-only and --paths-only half of the work (bench/run
alternates ferro and the peers instance by instance). --grad times forward + backward of
sum(einsum) with respect to every operand instead (bench/run einsum_ad): torch autograd through
opt_einsum.contract(backend="torch") and jax.grad under jax.jit, along the same path."""
import json, os, signal, subprocess, sys, time

import numpy as np

from peer_timing import median_call_seconds

quick = "--quick" in sys.argv
data = sys.argv[sys.argv.index("--data") + 1] if "--data" in sys.argv else "../shared/data/einsum_instances.json"
only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
exact = sys.argv[sys.argv.index("--case") + 1] if "--case" in sys.argv else ""
timing = "--paths-only" not in sys.argv
paths = "--timing-only" not in sys.argv
grad = "--grad" in sys.argv
jax_only = "--jax-only" in sys.argv  # bench/run capture: jax.jit alone, against a replay
samples = 3 if quick else 5


def attempt(f):
    try:
        return f()
    except Exception as e:  # a peer that cannot run this instance says why
        return {"skipped": f"{type(e).__name__}: {str(e)[:200]}"}


def numpy_run(sub, ops, path):
    import opt_einsum as oe
    labels = sorted({c for c in sub if c not in ",->"})
    if len(labels) <= 52:
        rename = {c: oe.get_symbol(i) for i, c in enumerate(labels)}
        ascii_sub = "".join(rename.get(c, c) for c in sub)
        run = lambda: np.einsum(ascii_sub, *ops, optimize=["einsum_path", *path])
        how = f"numpy.einsum {np.__version__} (optimize=path)"
    else:
        run = lambda: oe.contract(sub, *ops, optimize=path, backend="numpy")
        how = f"numpy {np.__version__} via opt_einsum.contract (more than 52 labels)"
    return {"seconds": median_call_seconds(run, samples), "how": how}


def torch_run(sub, ops, path):
    import opt_einsum as oe
    import torch
    t = [torch.from_numpy(o) for o in ops]
    run = lambda: oe.contract(sub, *t, optimize=path, backend="torch")
    return {"seconds": median_call_seconds(run, samples), "how": f"torch {torch.__version__} via opt_einsum.contract(backend=torch)"}


def jax_run(sub, ops, path):
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    f = jax.jit(lambda *xs: jnp.einsum(sub, *xs, optimize=path))
    x = [jnp.asarray(o) for o in ops]
    run = lambda: f(*x).block_until_ready()
    return {"seconds": median_call_seconds(run, samples), "how": f"jax.numpy.einsum {jax.__version__} (optimize=path, jit)"}


def torch_grad_run(sub, ops, path):
    import opt_einsum as oe
    import torch
    t = [torch.from_numpy(o).requires_grad_() for o in ops]

    def run():
        oe.contract(sub, *t, optimize=path, backend="torch").sum().backward()
        for x in t:
            x.grad = None
    return {"seconds": median_call_seconds(run, samples), "how": f"torch {torch.__version__} autograd via opt_einsum.contract(backend=torch)"}


def jax_grad_run(sub, ops, path):
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    f = jax.jit(jax.grad(lambda *xs: jnp.einsum(sub, *xs, optimize=path).sum(), argnums=tuple(range(len(ops)))))
    x = [jnp.asarray(o) for o in ops]
    run = lambda: jax.block_until_ready(f(*x))
    return {"seconds": median_call_seconds(run, samples), "how": f"jax.grad of jax.numpy.einsum {jax.__version__} (optimize=path, jit)"}


SEARCH = r"""
import json, sys, time
import opt_einsum as oe
kind, sub, shapes = json.loads(sys.stdin.read())
shapes = [tuple(s) for s in shapes]
t0 = time.perf_counter()
if kind == "cotengra":
    import cotengra as ctg
    inputs, output = sub.split("->")
    size = {c: d for term, s in zip(inputs.split(","), shapes) for c, d in zip(term, s)}
    path = ctg.HyperOptimizer(max_repeats=32, parallel=False, progbar=False).search(inputs.split(","), output, size).get_path()
else:
    path, _ = oe.contract_path(sub, *shapes, optimize=kind.split()[-1], shapes=True)
seconds = time.perf_counter() - t0
_, info = oe.contract_path(sub, *shapes, optimize=[tuple(p) for p in path], shapes=True)
print(json.dumps({"flops": float(info.opt_cost), "largest": float(info.largest_intermediate), "plan_s": seconds}))
"""


def path_quality(kind, sub, shapes, limit):
    """The search in its own interpreter and process group, all of it killed when it runs past
    `limit` seconds (killing the interpreter alone left the processes it had forked behind,
    asleep, holding their memory after the benchmark ended)."""
    search = subprocess.Popen([sys.executable, "-c", SEARCH], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = search.communicate(json.dumps([kind, sub, shapes]), timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(search.pid, signal.SIGKILL)
        search.communicate()
        return {"skipped": f"no path within {limit} s"}
    if search.returncode != 0:
        return {"skipped": f"search failed: {err.strip().splitlines()[-1][:200] if err.strip() else search.returncode}"}
    return json.loads(out)


def main():
    doc = json.load(open(data))
    for inst in doc["instances"]:
        name = inst["name"]
        if (only and only not in name) or (exact and name != exact):
            continue
        sub, shapes = inst["subscripts"], [tuple(s) for s in inst["shapes"]]
        rng = np.random.default_rng(1)
        ops = [rng.uniform(-1, 1, s) for s in shapes]
        path = [tuple(p) for p in inst["paths"]["opt_flops"]["path"]]
        row = {"case": name}
        if grad:
            row.update(torch=attempt(lambda: torch_grad_run(sub, ops, path)),
                       jax=attempt(lambda: jax_grad_run(sub, ops, path)))
            print(json.dumps(row), flush=True)
            continue
        if jax_only:
            row.update(jax=attempt(lambda: jax_run(sub, ops, path)))
            print(json.dumps(row), flush=True)
            continue
        if timing:
            row.update(numpy=attempt(lambda: numpy_run(sub, ops, path)),
                       torch=attempt(lambda: torch_run(sub, ops, path)),
                       jax=attempt(lambda: jax_run(sub, ops, path)))
        if paths:
            row["paths"] = {kind: path_quality(kind, sub, shapes, 20 if quick else 60)
                            for kind in ("opt_einsum greedy", "opt_einsum dp", "cotengra")}
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
