// Shared by the cuda suites: a runtime with libferro_engine_cuda.so (and the family plugins),
// and the skip rule: with no CUDA device a test exits with 77, which ctest reports as skipped,
// never as passed.
#pragma once

#include "ferro_test.hpp"

#include <cstdio>
#include <string>

#include <unistd.h>

namespace ferro::test {

inline std::string cuda_plugin() { return build_dir() + "/lib/ferro/plugins/libferro_engine_cuda.so"; }

// A runtime with the cuda engine and the einsum, linalg and fft plugins.
inline Runtime cuda_runtime() {
    Runtime rt = make_runtime();
    rt.load_plugin(cuda_plugin());
    for (const char* family : {"einsum", "linalg", "fft"}) {
        rt.load_plugin(build_dir() + "/lib/ferro/plugins/libferro_" + family + ".so");
    }
    return rt;
}

// The probe's answer for kind "cuda": device count and reason.
inline EngineKindInfo cuda_kind(const Runtime& rt) {
    for (const EngineKindInfo& k : rt.inventory().engine_kinds) {
        if (k.kind == "cuda") return k;
    }
    return {};
}

// Ends the test as skipped (ctest SKIP_RETURN_CODE 77) when there is no cuda:0.
inline void require_cuda_device(const Runtime& rt) {
    const EngineKindInfo k = cuda_kind(rt);
    if (k.device_count > 0) return;
    std::fprintf(stderr, "skipped: no CUDA device (%s)\n", k.reason.c_str());
    std::fflush(stderr);
    _exit(77);
}

}  // namespace ferro::test
