// ferro plugin helpers for CUDA plugins (header-only C++; needs the CUDA toolkit's headers): every
// CUDA, cuBLAS, cuSOLVER and cuFFT error becomes a ferro status here, as the cuda engine and its
// modules translate them: the status code says what the caller can do about it (out of memory is
// RESOURCE_EXHAUSTED, a missing or lost device UNAVAILABLE, a bad argument of ours INTERNAL), and
// the message names the plugin, the call and the library's own name and text for the error.
// cuBLAS, cuSOLVER and cuFFT names are spelled out rather than asked of the libraries, so a
// plugin that links only one of them can still describe all of them.
//
// Since: 1.9 (header-only; it was the cuda engine's own source before).
#pragma once

#include "ferro/host.h"

#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <cusolver_common.h>

#include <string>

namespace ferro::cuda {

// "cudaErrorMemoryAllocation: out of memory", "CUBLAS_STATUS_NOT_SUPPORTED", ..., and the
// ferro_status_code for each.
inline std::string error_text(cudaError_t e) {
    std::string text = cudaGetErrorName(e);
    text += ": ";
    text += cudaGetErrorString(e);
    return text;
}

inline uint32_t status_code(cudaError_t e) {
    switch (e) {
        case cudaSuccess: return FERRO_OK;
        case cudaErrorMemoryAllocation: return FERRO_RESOURCE_EXHAUSTED;
        case cudaErrorInsufficientDriver:
        case cudaErrorNoDevice:
        case cudaErrorStubLibrary:
        case cudaErrorDevicesUnavailable:
        case cudaErrorInvalidDevice:
        case cudaErrorInitializationError:
        case cudaErrorSystemDriverMismatch:
        case cudaErrorCompatNotSupportedOnDevice:
        case cudaErrorNoKernelImageForDevice:
        case cudaErrorUnsupportedPtxVersion:
        case cudaErrorDeviceUninitialized:
        case cudaErrorLaunchTimeout:
        case cudaErrorHardwareStackError:
        case cudaErrorECCUncorrectable:
        case cudaErrorIllegalAddress:
        case cudaErrorLaunchFailure:
        case cudaErrorMisalignedAddress:
        case cudaErrorIllegalInstruction:
        case cudaErrorInvalidPc:
        case cudaErrorUnknown: return FERRO_UNAVAILABLE;  // no device, or the context is lost (sticky errors)
        case cudaErrorLaunchOutOfResources: return FERRO_RESOURCE_EXHAUSTED;
        case cudaErrorInvalidValue:
        case cudaErrorInvalidDevicePointer:
        case cudaErrorInvalidMemcpyDirection:
        case cudaErrorInvalidConfiguration: return FERRO_INTERNAL;  // we passed something wrong
        default: return FERRO_INTERNAL;
    }
}

inline std::string error_text(cublasStatus_t e) {
    switch (e) {
        case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
        case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED: the library was not initialized";
        case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED: resource allocation failed";
        case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE: an unsupported value or parameter was passed";
        case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH: the device lacks a required feature";
        case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR: access to GPU memory failed";
        case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED: the kernel failed to launch or run";
        case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR: an internal operation failed";
        case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED: the functionality is not supported";
        case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    }
    return "cuBLAS status " + std::to_string(static_cast<int>(e));
}

inline uint32_t status_code(cublasStatus_t e) {
    switch (e) {
        case CUBLAS_STATUS_SUCCESS: return FERRO_OK;
        case CUBLAS_STATUS_ALLOC_FAILED: return FERRO_RESOURCE_EXHAUSTED;
        case CUBLAS_STATUS_NOT_SUPPORTED:
        case CUBLAS_STATUS_ARCH_MISMATCH: return FERRO_UNIMPLEMENTED;
        case CUBLAS_STATUS_NOT_INITIALIZED:
        case CUBLAS_STATUS_EXECUTION_FAILED: return FERRO_UNAVAILABLE;
        default: return FERRO_INTERNAL;
    }
}

inline std::string error_text(cusolverStatus_t e) {
    switch (e) {
        case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
        case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED: the library was not initialized";
        case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED: resource allocation failed";
        case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE: an unsupported value or parameter was passed";
        case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH: the device lacks a required feature";
        case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED: the kernel failed to launch or run";
        case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR: an internal operation failed";
        case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
        case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED: the functionality is not supported";
        case CUSOLVER_STATUS_INVALID_WORKSPACE: return "CUSOLVER_STATUS_INVALID_WORKSPACE: the workspace is too small";
        default: break;
    }
    return "cuSOLVER status " + std::to_string(static_cast<int>(e));
}

inline uint32_t status_code(cusolverStatus_t e) {
    switch (e) {
        case CUSOLVER_STATUS_SUCCESS: return FERRO_OK;
        case CUSOLVER_STATUS_ALLOC_FAILED: return FERRO_RESOURCE_EXHAUSTED;
        case CUSOLVER_STATUS_NOT_SUPPORTED:
        case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED:
        case CUSOLVER_STATUS_ARCH_MISMATCH: return FERRO_UNIMPLEMENTED;
        case CUSOLVER_STATUS_NOT_INITIALIZED:
        case CUSOLVER_STATUS_EXECUTION_FAILED: return FERRO_UNAVAILABLE;
        default: return FERRO_INTERNAL;
    }
}

inline std::string error_text(cufftResult e) {
    switch (e) {
        case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
        case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN: the plan handle is invalid";
        case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED: cuFFT failed to allocate GPU or CPU memory";
        case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
        case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE: a bad pointer or parameter";
        case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR: a driver or internal cuFFT error";
        case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED: the transform failed to run on the GPU";
        case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED: the cuFFT library failed to initialize";
        case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE: an unsupported transform size";
        case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
        case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE: execution on a different GPU than the plan's";
        case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE: no workspace was given before execution";
        case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
        case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED: the operation is not supported for these parameters";
        default: break;
    }
    return "cuFFT result " + std::to_string(static_cast<int>(e));
}

inline uint32_t status_code(cufftResult e) {
    switch (e) {
        case CUFFT_SUCCESS: return FERRO_OK;
        case CUFFT_ALLOC_FAILED: return FERRO_RESOURCE_EXHAUSTED;
        case CUFFT_INVALID_SIZE:
        case CUFFT_NOT_IMPLEMENTED:
        case CUFFT_NOT_SUPPORTED: return FERRO_UNIMPLEMENTED;
        case CUFFT_EXEC_FAILED:
        case CUFFT_SETUP_FAILED:
        case CUFFT_INVALID_DEVICE: return FERRO_UNAVAILABLE;
        default: return FERRO_INTERNAL;
    }
}

// A status "<who>: <call> failed: <error text>" with the error's code.
template <class Error> ferro_status make_error(const ferro_host_api* host, const char* who, const std::string& call, Error e) {
    std::string text = who;
    text += ": ";
    text += call;
    text += " failed: ";
    text += error_text(e);
    return host->status_make(status_code(e), text.c_str());
}

}  // namespace ferro::cuda
