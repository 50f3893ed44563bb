#!/usr/bin/env bash
# tools/gpu-check.sh — the GPU verification of the cuda engine and its modules, in one go, on a
# machine with an NVIDIA GPU; everything it does and prints goes to one log file.
#
#   tools/gpu-check.sh [--log FILE]                # build here (release + CUDA), then check
#   tools/gpu-check.sh --prebuilt BUNDLE [--log F] # check a bundle made by tools/gpu-stage.sh
#
# Checks, each under a time limit so that the whole run fits in 8 minutes on an H100/H200:
#   1. the machine: nvidia-smi, the driver, nvcc;
#   2. every cuda-labelled test (conformance of cuda:0 against the cpu engine in every dtype,
#      gradchecks through cuda tensors, the cuFFT and cuSOLVER modules against FFTW and LAPACK,
#      out-of-memory as RESOURCE_EXHAUSTED, the no-visible-device probe);
#   3. the cuda benchmark: gemm f32/f64 n=4096 vs cuBLAS, svd/eigh/solve n=1024 vs cuSOLVER,
#      fft 2^24 vs cuFFT, an einsum instance cuda vs cpu (medians, ratios as JSON lines).
# Exit status: 0 when every test passed (none skipped for want of a device), 1 otherwise.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
log=gpu-check.log
bundle=""
while [ $# -gt 0 ]; do
    case $1 in
        --log) log=$2; shift 2 ;;
        --prebuilt) bundle=$2; shift 2 ;;
        *) echo "usage: tools/gpu-check.sh [--prebuilt BUNDLE] [--log FILE]" >&2; exit 2 ;;
    esac
done
log=$(realpath -m "$log")
exec > >(tee "$log") 2>&1
started=$(date +%s)
step() { echo; echo "=== $* ($(($(date +%s) - started)) s) ==="; }

step "machine"
date -u
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1 || echo "nvidia-smi: not available"
{ command -v nvcc || ls /usr/local/cuda/bin/nvcc; } >/dev/null 2>&1 && { nvcc --version 2>/dev/null || /usr/local/cuda/bin/nvcc --version; } | tail -n 2

if [ -n "$bundle" ]; then
    step "unpack $bundle"
    dir=$(mktemp -d)
    tar -xf "$bundle" -C "$dir" || exit 1
    build=$dir/gpu-stage
    data=$build/data/einsum_instances.json
    export LD_LIBRARY_PATH="$build/lib/deps:${LD_LIBRARY_PATH:-}"
    # The CUDA libraries of the machine (the bundle carries none).
    for d in /usr/local/cuda/lib64 /usr/local/cuda/lib; do [ -d "$d" ] && LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d"; done
else
    step "build (release, CUDA on)"
    source scripts/env.sh
    build=build/release
    data=$root/../shared/data/einsum_instances.json
    timeout 420 cmake --preset release >/dev/null || { echo "configure failed"; exit 1; }
    grep -q "^FERRO_BUILD_CUDA:BOOL=ON" "$build/CMakeCache.txt" || { echo "this build has no CUDA (no nvcc found)"; exit 1; }
    timeout 420 cmake --build "$build" -j "$(nproc)" --target test_cuda test_cuda_host bench_cuda ferro_engine_cuda ferro_fft_cuda \
        ferro_linalg_cuda ferro_einsum ferro_linalg ferro_fft || { echo "build failed"; exit 1; }
fi
build=$(realpath "$build")

step "cuda tests"
export FERRO_TEST_BUILD_DIR=$build
# Every device test, then the probe tests (which must pass everywhere), then the probe with
# no visible device. Catch2's exit status counts failed cases; 77 means "no device".
timeout 300 "$build/bin/test_cuda" "[cuda],[cuda-probe]" --durations yes
tests=$?
timeout 30 "$build/bin/test_cuda_host" || tests=1
CUDA_VISIBLE_DEVICES= timeout 60 "$build/bin/test_cuda" "[.no-device]"
no_device=$?
echo "device tests: exit $tests (0 = all passed, 77 = skipped: no device); no-device probe: exit $no_device"

step "cuda benchmark"
timeout 240 "$build/bin/bench_cuda" --data "$data"

step "done"
if [ $tests -eq 0 ] && [ $no_device -eq 0 ]; then
    echo "gpu-check: PASSED in $(($(date +%s) - started)) s; log: $log"
    exit 0
fi
echo "gpu-check: FAILED (tests exit $tests, no-device probe exit $no_device) after $(($(date +%s) - started)) s; log: $log"
exit 1
