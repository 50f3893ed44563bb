// One cuda engine: a device, its stream, its memory pool, pinned staging for transfers, and
// the session states (each with its cuBLAS/cuSOLVER handles) that threads take and return.
#pragma once

#include <ferro/cuda/errors.hpp>
#include <ferro/cuda/libraries.hpp>

#include <ferro/cuda_context.h>
#include <ferro/plugin.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ferro::cuda {

struct Engine;

// What a thread records kernels with. A session state is used by one thread at a time and
// reused after session_end; its handles are bound to the engine's stream.
struct Session {
    Engine* engine = nullptr;
    cublasHandle_t blas = nullptr;
    cusolverDnHandle_t solver = nullptr;  // made at the first native_context
    ferro_cuda_context context{};
};

// Host memory the device can copy from and to at full speed, in two halves, so that filling
// one overlaps the copy of the other.
struct Staging {
    static constexpr uint64_t kChunk = uint64_t{8} << 20;
    std::mutex mutex;
    char* memory = nullptr;                    // 2 * kChunk bytes, cudaHostAlloc'd on first use
    cudaEvent_t done[2] = {nullptr, nullptr};  // the last copy through each half has finished
};

struct Engine {
    const ferro_host_api* host = nullptr;
    const CudaLibraries* lib = nullptr;  // cuBLAS and cuSOLVER, opened at create
    int device = 0;
    cudaDeviceProp props{};
    int runtime_version = 0, driver_version = 0;
    cudaStream_t stream = nullptr;
    cudaMemPool_t pool = nullptr;
    Staging staging;
    std::mutex sessions_mutex;
    std::vector<std::unique_ptr<Session>> sessions;  // every state made, for destruction
    std::vector<Session*> idle;

    ~Engine();
};

// A status with `code` and "cuda engine: <message>".
ferro_status make_status(const Engine& e, uint32_t code, const std::string& message);
// A status for a failed CUDA call: "cuda engine: <call> failed: cudaError...: ...".
template <class Error> ferro_status call_failed(const Engine& e, const std::string& call, Error err) {
    return make_error(e.host, "cuda engine", call, err);
}
// The error of the last kernel launch on this thread as a status naming `kernel`, or NULL.
ferro_status launch_status(const Engine& e, const char* kernel);

// Stream-ordered device memory from the engine's pool (freed with free_async).
ferro_status alloc_async(Engine& e, uint64_t bytes, void** out);
void free_async(Engine& e, void* ptr);

// Kernel entry points: one .cu file each (gemm in gemm.cpp), enqueued on the engine's stream.
ferro_status fill(Session& s, const ferro_fill_args& a);
ferro_status cast(Session& s, const ferro_cast_args& a);
ferro_status unary(Session& s, const ferro_unary_args& a);
ferro_status binary(Session& s, const ferro_binary_args& a);
ferro_status where(Session& s, const ferro_where_args& a);
ferro_status reduce(Session& s, const ferro_reduce_args& a);
ferro_status copy_strided(Session& s, const ferro_copy_args& a);
ferro_status gemm_batched(Session& s, const ferro_gemm_args& a);

}  // namespace ferro::cuda
