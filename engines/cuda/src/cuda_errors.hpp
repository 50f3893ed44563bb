// Every CUDA, cuBLAS, cuSOLVER and cuFFT error becomes a ferro status here, and only here: the
// status code says what the caller can do about it (out of memory is RESOURCE_EXHAUSTED, a
// missing or lost device UNAVAILABLE, a bad argument of ours INTERNAL), and the message names
// the plugin, the call and the library's own name and text for the error.
#pragma once

#include <ferro/host.h>

#include <cublas_api.h>
#include <cufft.h>
#include <cuda_runtime_api.h>
#include <cusolver_common.h>

#include <string>

namespace ferro::cuda {

// "cudaErrorMemoryAllocation: out of memory", "CUBLAS_STATUS_NOT_SUPPORTED", ...
std::string error_text(cudaError_t e);
std::string error_text(cublasStatus_t e);
std::string error_text(cusolverStatus_t e);
std::string error_text(cufftResult e);

// The ferro_status_code for each.
uint32_t status_code(cudaError_t e);
uint32_t status_code(cublasStatus_t e);
uint32_t status_code(cusolverStatus_t e);
uint32_t status_code(cufftResult e);

// A status "<who>: <call> failed: <error text>" with the error's code.
template <class Error>
ferro_status make_error(const ferro_host_api* host, const char* who, const std::string& call, Error e) {
    std::string text = who;
    text += ": ";
    text += call;
    text += " failed: ";
    text += error_text(e);
    return host->status_make(status_code(e), text.c_str());
}

}  // namespace ferro::cuda
