#!/usr/bin/env bash
# tools/gpu-stage.sh [BUNDLE] — packs the release build's GPU checks into one archive (default
# .gpu-stage.tar.xz, git-ignored) for tools/gpu-check.sh --prebuilt on a GPU machine that lacks
# this project's Debian packages (the device tool's machines have CUDA and a newer glibc, but no
# spdlog, fmt, OpenBLAS or FFTW): test_cuda, bench_cuda, test_vulkan, bench_vulkan, libferro,
# the plugins they load, every shared library they need that is not part of CUDA or the C
# runtime, the Vulkan loader and validation layer (dlopened, so ldd does not see them), and the
# torch peer of bench_cuda.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bundle=${1:-.gpu-stage.tar.xz}
source scripts/env.sh
cmake --preset release >/dev/null
cmake --build --preset release --target test_cuda test_cuda_host bench_cuda ferro_engine_cuda ferro_fft_cuda ferro_linalg_cuda \
    ferro_einsum ferro_linalg ferro_fft >/dev/null
build=build/release
vulkan=""
if grep -q "^FERRO_BUILD_VULKAN:BOOL=ON" "$build/CMakeCache.txt"; then
    vulkan="engine_vulkan fft_vulkan"
    cmake --build --preset release --target test_vulkan bench_vulkan ferro_engine_vulkan ferro_fft_vulkan >/dev/null
fi
work=$(mktemp -d)
stage=$work/gpu-stage
mkdir -p "$stage/bin" "$stage/lib/ferro/plugins" "$stage/lib/deps"
cp "$build/bin/test_cuda" "$build/bin/test_cuda_host" "$build/bin/bench_cuda" "$stage/bin/"
[ -n "$vulkan" ] && cp "$build/bin/test_vulkan" "$build/bin/bench_vulkan" "$stage/bin/"
cp -P "$build"/lib/libferro.so* "$stage/lib/"
for p in engine_cuda fft_cuda linalg_cuda einsum linalg fft $vulkan; do
    cp "$build/lib/ferro/plugins/libferro_$p.so" "$stage/lib/ferro/plugins/"
done
mkdir -p "$stage/peers"
cp bench/peers/torch_cuda.py bench/peers/peer_timing.py "$stage/peers/"
if [ -n "$vulkan" ]; then
    cp -L "$(ldconfig -p | awk '/libvulkan.so.1 .*x86-64/ {print $NF; exit}')" "$stage/lib/deps/"
    layer=/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json
    if [ -f "$layer" ]; then
        mkdir -p "$stage/share/vulkan/explicit_layer.d"
        cp "$layer" "$stage/share/vulkan/explicit_layer.d/"
        cp -L "$(ldconfig -p | awk '/libVkLayer_khronos_validation.so .*x86-64/ {print $NF; exit}')" "$stage/lib/deps/"
    fi
fi
# Their non-CUDA, non-libc dependencies, resolved here.
for f in "$stage"/bin/* "$stage"/lib/*.so* "$stage"/lib/ferro/plugins/*.so; do
    ldd "$f" | awk '$3 ~ /^\// {print $3}'
done | sort -u | while read -r lib; do
    case $(basename "$lib") in
        libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libmvec.so*|libstdc++.so*|libgcc_s.so*) ;;
        libcu*|libnv*|libferro*) ;;
        *) cp -L "$lib" "$stage/lib/deps/" ;;
    esac
done
# The einsum instance the benchmark runs (the shared data does not travel with the repository).
mkdir -p "$stage/data"
cp ../shared/data/einsum_instances.json "$stage/data/" 2>/dev/null || echo "gpu-stage: no ../shared/data/einsum_instances.json; the einsum case will be skipped" >&2
strip --strip-unneeded "$stage"/bin/* "$stage"/lib/*.so* "$stage"/lib/ferro/plugins/*.so "$stage"/lib/deps/* 2>/dev/null || true
tar -C "$work" -cJf "$bundle" gpu-stage
rm -rf "$work"
echo "$bundle: $(du -h "$bundle" | cut -f1) (run tools/gpu-check.sh --prebuilt $bundle on the GPU machine)"
