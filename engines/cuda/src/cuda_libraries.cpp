// See cuda_libraries.hpp.
#include "cuda_libraries.hpp"

#include <dlfcn.h>

#include <mutex>

namespace ferro::cuda {
namespace {

#define FERRO_STRINGIFY2(x) #x
#define FERRO_STRINGIFY(x) FERRO_STRINGIFY2(x)
// The sonames of the toolkit we were built with (its headers say which).
constexpr const char* kCublas = "libcublas.so." FERRO_STRINGIFY(CUBLAS_VER_MAJOR);
constexpr const char* kCusolver = "libcusolver.so." FERRO_STRINGIFY(CUSOLVER_VER_MAJOR);

struct Loaded {
    CudaLibraries functions;
    std::string why;  // empty when every function was found
};

Loaded load() {
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
#define FERRO_CUDA_LOAD(library, name)                                                  \
    l.functions.name = reinterpret_cast<decltype(&::name)>(dlsym(library, #name));      \
    if (l.functions.name == nullptr && l.why.empty()) l.why = std::string(#name " is missing from ") + (library == cublas ? kCublas : kCusolver);
    FERRO_CUDA_LIBRARY_FUNCTIONS(FERRO_CUDA_LOAD)
#undef FERRO_CUDA_LOAD
    return l;
}

}  // namespace

const CudaLibraries* cuda_libraries(std::string& why) {
    static std::once_flag once;
    static Loaded loaded;
    std::call_once(once, [] { loaded = load(); });
    why = loaded.why;
    return loaded.why.empty() ? &loaded.functions : nullptr;
}

}  // namespace ferro::cuda
