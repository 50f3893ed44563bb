// cuBLAS and cuSOLVER, opened at run time. Linking them would make every process that loads the
// cuda plugins — every default Runtime, every ferro-inspect probe, on machines with the CUDA
// toolkit but no GPU too — map and relocate them: about 110 ms per process (measured with
// ferro-inspect list). Opened only once a device has been found (engine create, module
// create), they cost nothing elsewhere. cuFFT (3 ms) and the runtime are linked.
#pragma once

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <string>

namespace ferro::cuda {

// Every cuBLAS/cuSOLVER function the cuda plugins call, by its exported name.
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

struct CudaLibraries {
#define FERRO_CUDA_DECLARE(library, name) decltype(&::name) name = nullptr;
    FERRO_CUDA_LIBRARY_FUNCTIONS(FERRO_CUDA_DECLARE)
#undef FERRO_CUDA_DECLARE
};

// The functions, opened on the first call (thread-safe; the libraries stay loaded); NULL with
// `why` naming the library or function that could not be had.
const CudaLibraries* cuda_libraries(std::string& why);

}  // namespace ferro::cuda
