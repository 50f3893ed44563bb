#include "blas_backend.hpp"

#include <cblas.h>
#include <dlfcn.h>

#include <array>
#include <filesystem>
#include <string_view>

namespace ferro::cpu {
namespace {

// An entry point of the library that defines cblas_dgemm, or of the libraries it depends on
// (Debian's OpenBLAS libblas.so.3 is a thin library over libopenblas.so.0).
class Library {
public:
    explicit Library(const char* path) : handle_(path != nullptr ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : nullptr) {}
    ~Library() {
        if (handle_ != nullptr) dlclose(handle_);  // it stays loaded: libferro needs it
    }
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;
    template <class F> F get(const char* name) const {
        return handle_ != nullptr ? reinterpret_cast<F>(dlsym(handle_, name)) : nullptr;
    }

private:
    void* handle_;
};

BlasBackend identify() {
    BlasBackend b;
    Dl_info info{};
    std::string loaded;  // as the loader found it: the alternatives' link, or a directory of LD_LIBRARY_PATH
    if (dladdr(reinterpret_cast<void*>(&cblas_dgemm), &info) != 0 && info.dli_fname != nullptr) loaded = info.dli_fname;
    const Library lib(loaded.empty() ? nullptr : loaded.c_str());
    if (!loaded.empty()) {  // the file the link leads to names the implementation
        std::error_code error;
        const std::filesystem::path file = std::filesystem::canonical(loaded, error);
        b.library = error ? loaded : file.string();
    }
    if (const auto config = lib.get<char* (*)()>("openblas_get_config")) {
        b.name = "OpenBLAS";
        const std::string_view words = config();  // "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64"
        const size_t start = words.find(' ') + 1;
        b.version = std::string(words.substr(start, words.find(' ', start) - start));
        if (const auto corename = lib.get<char* (*)()>("openblas_get_corename")) b.core = corename();
        b.get_threads = lib.get<int (*)()>("openblas_get_num_threads");
        b.set_threads = lib.get<void (*)(int)>("openblas_set_num_threads");
    } else if (const auto version = lib.get<void (*)(char*, int)>("MKL_Get_Version_String")) {
        b.name = "MKL";
        std::array<char, 256> text{};
        version(text.data(), static_cast<int>(text.size()));  // "Intel(R) oneAPI Math Kernel Library Version 2026.2-Product ..."
        const std::string_view said = text.data();
        const size_t at = said.find("Version ");
        b.version =
            at == std::string_view::npos ? std::string(said) : std::string(said.substr(at + 8, said.find('-', at) - at - 8));
        b.get_threads = lib.get<int (*)()>("MKL_Get_Max_Threads");
        b.set_threads = lib.get<void (*)(int)>("MKL_Set_Num_Threads");
    } else if (b.library.find("blis") != std::string::npos) {
        b.name = "BLIS";
    } else if (b.library.find("/blas/") != std::string::npos) {
        b.name = "reference BLAS";
    } else {
        b.name = "unknown BLAS";
    }
    if (b.get_threads == nullptr || b.set_threads == nullptr) {  // both or neither
        b.get_threads = nullptr;
        b.set_threads = nullptr;
    }
    return b;
}

}  // namespace

std::string BlasBackend::describe() const {
    std::string s = name;
    if (!version.empty()) s += " " + version;
    std::string detail;
    if (!core.empty()) detail = "core " + core;
    if (get_threads != nullptr) {
        const int n = get_threads();
        detail += (detail.empty() ? "" : ", ") + std::to_string(n) + (n == 1 ? " thread" : " threads");
    }
    if (!detail.empty()) s += " (" + detail + ")";
    return s + " from " + (library.empty() ? "an unknown library" : library);
}

const BlasBackend& blas_backend() {
    static const BlasBackend backend = identify();
    return backend;
}

}  // namespace ferro::cpu
