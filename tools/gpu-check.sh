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
#   3. with a bundle that carries them and a Vulkan driver on the machine: the vulkan suite on
#      the GPU's own driver, under the validation layer the bundle carries;
#   4. the cuda benchmark: gemm f32/f64 n=4096 vs cuBLAS, svd/eigh/solve n=1024 vs cuSOLVER,
#      fft 2^24 vs cuFFT, an einsum instance cuda vs cpu (medians, ratios as JSON lines), then
#      the same cases in torch on the same GPU where python3 has torch (ratio = ferro / torch),
#      and bench_vulkan --quick where the vulkan suite ran.
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

# run_cases BINARY SPEC SECONDS: each test case matching SPEC in a process of its own (a crash or
# a hang then costs that case only), SECONDS at most each. Exit status: 1 when a case failed, else
# 77 when one was skipped for want of a device, else 0. Lists the failed and skipped cases.
run_cases() {
    local bin=$1 spec=$2 limit=$3 name rc failed=() skipped=() count=0
    while IFS= read -r name; do
        [ -n "$name" ] || continue
        count=$((count + 1))
        timeout "$limit" "$bin" "$(printf '%s' "$name" | sed 's/[]\\,[]/\\&/g')" --durations yes
        rc=$?
        if [ $rc -eq 77 ]; then skipped+=("$name"); elif [ $rc -ne 0 ]; then failed+=("$name (exit $rc)"); fi
    done < <("$bin" "$spec" --list-test-names-only)
    echo "$count cases: ${#failed[@]} failed, ${#skipped[@]} skipped (no device)"
    for name in "${failed[@]}"; do echo "FAILED: $name"; done
    [ ${#failed[@]} -gt 0 ] && return 1
    [ ${#skipped[@]} -gt 0 ] && return 77
    return 0
}

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
run_cases "$build/bin/test_cuda" "[cuda],[cuda-probe]" 120
tests=$?
timeout 30 "$build/bin/test_cuda_host" || tests=1
CUDA_VISIBLE_DEVICES= timeout 60 "$build/bin/test_cuda" "[.no-device]"
no_device=$?
echo "device tests: exit $tests (0 = all passed, 77 = skipped: no device); no-device probe: exit $no_device"

vulkan=0
vulkan_ran=no
if [ -x "$build/bin/test_vulkan" ]; then
    step "vulkan tests"
    # The driver's manifest where the NVIDIA container runtime mounts it, if the loader's own
    # search finds none; the bundle's validation layer (the suite turns it on).
    icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
    if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$icd" ] && ! ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json >/dev/null 2>&1; then
        export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
    fi
    export VK_LAYER_PATH=$build/share/vulkan/explicit_layer.d
    run_cases "$build/bin/test_vulkan" "[vulkan]" 90
    vulkan=$?
    if [ $vulkan -eq 77 ]; then
        echo "vulkan tests: skipped (no Vulkan device on this machine)"
        vulkan=0
    else
        vulkan_ran=yes
        echo "vulkan tests: exit $vulkan (0 = all passed)"
    fi
fi

step "cuda benchmark"
timeout 240 "$build/bin/bench_cuda" --data "$data" | tee "$build/bench_cuda.jsonl"
peers=$root/bench/peers
[ -n "$bundle" ] && peers=$build/peers
if python3 -c "import torch" 2>/dev/null; then
    step "torch on the same GPU"
    PYTHONPATH=$peers timeout 120 python3 "$peers/torch_cuda.py" --ferro "$build/bench_cuda.jsonl" --data "$data"
fi
if [ $vulkan_ran = yes ]; then
    step "vulkan benchmark"
    timeout 120 "$build/bin/bench_vulkan" --data "$data" --quick
fi

step "done"
if [ $tests -eq 0 ] && [ $no_device -eq 0 ] && [ $vulkan -eq 0 ]; then
    echo "gpu-check: PASSED in $(($(date +%s) - started)) s; log: $log"
    exit 0
fi
echo "gpu-check: FAILED (cuda tests exit $tests, no-device probe exit $no_device, vulkan tests exit $vulkan) after $(($(date +%s) - started)) s; log: $log"
exit 1
