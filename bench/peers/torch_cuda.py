"""bench/run cuda's torch peer: the cases of bench/cuda.cpp on torch's CUDA device, each call
ending with the device idle (torch.cuda.synchronize), medians as in bench/timing.hpp.

  python3 torch_cuda.py [--quick] [--ferro FILE] [--data einsum_instances.json]

With --ferro (bench_cuda's JSON lines) each row also gives ratio = ferro_s / torch_s."""
import argparse
import json
import sys

from peer_timing import median_call_seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--ferro")
    parser.add_argument("--data")
    args = parser.parse_args()
    try:
        import torch
    except ImportError as e:
        print(json.dumps({"bench": "cuda_torch", "skipped": f"no torch: {e}"}))
        return 0
    if not torch.cuda.is_available():
        print(json.dumps({"bench": "cuda_torch", "skipped": "torch sees no CUDA device"}))
        return 0
    samples = 3 if args.quick else 7
    dev = torch.device("cuda:0")
    gen = torch.Generator(device=dev).manual_seed(1)

    def timed(f):
        def call():
            f()
            torch.cuda.synchronize()
        return median_call_seconds(call, samples)

    cases = {}
    for dt, name in ((torch.float32, "f32"), (torch.float64, "f64")):
        a = torch.rand(4096, 4096, dtype=dt, device=dev, generator=gen)
        b = torch.rand(4096, 4096, dtype=dt, device=dev, generator=gen)
        cases[f"gemm {name} n=4096"] = timed(lambda: a @ b)
    x = torch.rand(1024, 1024, dtype=torch.float64, device=dev, generator=gen)
    spd = x @ x.T + 1024 * torch.eye(1024, dtype=torch.float64, device=dev)
    rhs = torch.rand(1024, 1, dtype=torch.float64, device=dev, generator=gen)
    cases["svd f64 n=1024"] = timed(lambda: torch.linalg.svd(x, full_matrices=False))
    cases["eigh f64 n=1024"] = timed(lambda: torch.linalg.eigh(spd))
    cases["solve f64 n=1024"] = timed(lambda: torch.linalg.solve(x, rhs))
    z = torch.rand(1 << 24, dtype=torch.float64, device=dev, generator=gen).to(torch.complex128)
    cases["fft c128 n=2^24"] = timed(lambda: torch.fft.fft(z))
    if args.data:
        name = "lm_batch_likelihood_sentence_4_4d"
        for inst in json.load(open(args.data))["instances"]:
            if inst["name"] == name:
                ops = [torch.rand(s, dtype=torch.float32, device=dev, generator=gen) for s in inst["shapes"]]
                cases["einsum f32 " + name] = timed(lambda: torch.einsum(inst["subscripts"], *ops))
    ferro = {}
    if args.ferro:
        for line in open(args.ferro):
            row = json.loads(line) if line.startswith("{") else {}
            if "case" in row:
                ferro[row["case"]] = row["ferro_s"]
    device = torch.cuda.get_device_name(dev)
    print(json.dumps({"bench": "cuda_torch", "device": device, "torch": torch.__version__}))
    for case, seconds in cases.items():
        row = {"bench": "cuda_torch", "case": case, "torch_s": seconds}
        if case in ferro:
            row.update(ferro_s=ferro[case], ratio=ferro[case] / seconds)
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
