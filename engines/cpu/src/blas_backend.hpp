// The BLAS the process runs, found at run time.
//
// ferro links the reference interface's sonames (libblas.so.3, liblapack.so.3), not one
// implementation, so the implementation is chosen when the process starts: Debian's
// alternatives (update-alternatives --config libblas.so.3-x86_64-linux-gnu) choose it for the
// system, and LD_LIBRARY_PATH for one process (its directory first, e.g.
// /usr/lib/x86_64-linux-gnu/blis-pthread). OpenBLAS is the default (its alternative has the
// highest priority). What was chosen is identified here by the library that defines
// cblas_dgemm and the entry points only that implementation has, which also give its thread
// control: OpenBLAS's and MKL's process-wide thread counts; BLIS and the reference BLAS through
// Debian's libblas.so.3 have none (BLIS reads BLIS_NUM_THREADS when it starts).
#pragma once

#include <string>

namespace ferro::cpu {

struct BlasBackend {
    std::string name;                // "OpenBLAS", "MKL", "BLIS", "reference BLAS", or "unknown BLAS"
    std::string version;             // as the library says (empty when it cannot)
    std::string core;                // the kernels it picked for this CPU (OpenBLAS: "Zen", "Haswell"; MKL: its branch)
    std::string library;             // the file that defines cblas_dgemm
    int (*get_threads)() = nullptr;  // null: no thread control at run time
    void (*set_threads)(int) = nullptr;

    // "OpenBLAS 0.3.21 (core Zen, 2 threads) from /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"
    std::string describe() const;
};

// Found once, on first use.
const BlasBackend& blas_backend();

}  // namespace ferro::cpu
