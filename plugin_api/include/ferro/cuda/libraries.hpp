// ferro plugin helpers for CUDA plugins (header-only C++; needs the CUDA toolkit's headers):
// cuBLAS and cuSOLVER, opened at run time, as the cuda engine and its modules use them. Linking
// them would make every process that loads the cuda plugins — every default Runtime, every ferro-inspect probe, on machines with the CUDA
// toolkit but no GPU too — map and relocate them: about 110 ms per process (measured with
// ferro-inspect list). Opened only once a device has been found (engine create, module
// create), they cost nothing elsewhere. cuFFT (3 ms) and the runtime are linked.
#pragma once

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace ferro::cuda {

// Every cuBLAS/cuSOLVER function the cuda plugins call, by its exported name.
// clang-format off
#define FERRO_CUDA_LIBRARY_FUNCTIONS(X)                                                              \
    X(cublas, cublasCreate_v2) X(cublas, cublasDestroy_v2) X(cublas, cublasSetStream_v2)             \
    X(cublas, cublasGemmStridedBatchedEx_64) X(cublas, cublasStrsm_v2_64) X(cublas, cublasDtrsm_v2_64) \
    X(cublas, cublasCtrsm_v2_64) X(cublas, cublasZtrsm_v2_64)                                        \
    X(cusolver, cusolverDnCreate) X(cusolver, cusolverDnDestroy) X(cusolver, cusolverDnSetStream)    \
    X(cusolver, cusolverDnCreateParams) X(cusolver, cusolverDnDestroyParams)                         \
    X(cusolver, cusolverDnXgetrf_bufferSize) X(cusolver, cusolverDnXgetrf) X(cusolver, cusolverDnXgetrs) \
    X(cusolver, cusolverDnXpotrf_bufferSize) X(cusolver, cusolverDnXpotrf)                           \
    X(cusolver, cusolverDnXgeqrf_bufferSize) X(cusolver, cusolverDnXgeqrf)                           \
    X(cusolver, cusolverDnXsyevd_bufferSize) X(cusolver, cusolverDnXsyevd)                           \
    X(cusolver, cusolverDnXgesvd_bufferSize) X(cusolver, cusolverDnXgesvd)                           \
    X(cusolver, cusolverDnSorgqr_bufferSize) X(cusolver, cusolverDnSorgqr)                           \
    X(cusolver, cusolverDnDorgqr_bufferSize) X(cusolver, cusolverDnDorgqr)                           \
    X(cusolver, cusolverDnCungqr_bufferSize) X(cusolver, cusolverDnCungqr)                           \
    X(cusolver, cusolverDnZungqr_bufferSize) X(cusolver, cusolverDnZungqr)
// clang-format on

struct CudaLibraries {
// NOLINTNEXTLINE(bugprone-macro-parentheses): `name` is a declarator, which parentheses would not be
#define FERRO_CUDA_DECLARE(library, name) decltype(&::name) name = nullptr;
    FERRO_CUDA_LIBRARY_FUNCTIONS(FERRO_CUDA_DECLARE)
#undef FERRO_CUDA_DECLARE
};

namespace detail {

#define FERRO_STRINGIFY2(x) #x
#define FERRO_STRINGIFY(x) FERRO_STRINGIFY2(x)
// The sonames of the toolkit we were built with (its headers say which).
inline constexpr const char* kCublas = "libcublas.so." FERRO_STRINGIFY(CUBLAS_VER_MAJOR);
inline constexpr const char* kCusolver = "libcusolver.so." FERRO_STRINGIFY(CUSOLVER_VER_MAJOR);
#undef FERRO_STRINGIFY
#undef FERRO_STRINGIFY2

struct Loaded {
    CudaLibraries functions;
    std::string why;  // empty when every function was found
};

inline Loaded load() {
    Loaded l;
    void* cublas = dlopen(kCublas, RTLD_NOW | RTLD_LOCAL);
    if (cublas == nullptr) {
        l.why = std::string("cannot open ") + kCublas + ": " + dlerror();
        return l;
    }
    void* cusolver = dlopen(kCusolver, RTLD_NOW | RTLD_LOCAL);
    if (cusolver == nullptr) {
        l.why = std::string("cannot open ") + kCusolver + ": " + dlerror();
        return l;
    }
    const char* const cublas_soname = kCublas;
    const char* const cusolver_soname = kCusolver;
#define FERRO_CUDA_LOAD(library, name)                                             \
    l.functions.name = reinterpret_cast<decltype(&::name)>(dlsym(library, #name)); \
    if (l.functions.name == nullptr && l.why.empty()) l.why = std::string(#name " is missing from ") + library##_soname;
    FERRO_CUDA_LIBRARY_FUNCTIONS(FERRO_CUDA_LOAD)
#undef FERRO_CUDA_LOAD
    return l;
}

}  // namespace detail

// The functions, opened on the first call (thread-safe; the libraries stay loaded); NULL with
// `why` naming the library or function that could not be had. Each plugin opens its own view
// of the same libraries.
inline const CudaLibraries* cuda_libraries(std::string& why) {
    static std::once_flag once;
    static detail::Loaded loaded;
    std::call_once(once, [] { loaded = detail::load(); });
    why = loaded.why;
    return loaded.why.empty() ? &loaded.functions : nullptr;
}

}  // namespace ferro::cuda
