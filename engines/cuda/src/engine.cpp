// The cuda engine's descriptor and engine table: probe, device creation, memory, transfers,
// sessions and the native context. Kernels live in kernels/*.cu and gemm.cpp.
//
// Everything runs on one stream per engine. Allocations come from the engine's own CUDA
// memory pool, stream-ordered (cudaMallocFromPoolAsync / cudaFreeAsync), which keeps freed
// memory for reuse instead of returning it to the driver: a buffer freed while queued work
// still reads it is reused only by work queued after that. Nothing synchronises except what
// the host must observe: copies to host memory and session_end with `wait`.
#include "engine.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>

namespace ferro::cuda {
namespace {

Engine& self_of(void* self) { return *static_cast<Engine*>(self); }

// Every entry makes the engine's device current on the calling thread first (a no-op when it
// already is): CUDA's current device is per thread.
ferro_status use_device(const Engine& e) {
    const cudaError_t r = cudaSetDevice(e.device);
    return r == cudaSuccess ? nullptr : call_failed(e, "cudaSetDevice(" + std::to_string(e.device) + ")", r);
}

ferro_status properties(void* self, ferro_device_props* out) {
    const Engine& e = self_of(self);
    const cudaDeviceProp& p = e.props;
    std::snprintf(out->name, sizeof out->name, "%.127s", p.name);
    out->flags = 0;  // device memory: the host reaches it through transfers only
    out->memory_bytes = p.totalGlobalMem;
    static_assert(sizeof out->uuid == sizeof p.uuid.bytes);
    std::memcpy(out->uuid, p.uuid.bytes, sizeof out->uuid);
    out->dlpack_device_type = FERRO_DLPACK_DEVICE_CUDA;
    out->score = 40;  // above every vulkan device: it is the same GPU with vendor libraries
    const ferro_dtype dtypes[] = {FERRO_DTYPE_F32,  FERRO_DTYPE_F64, FERRO_DTYPE_C64,
                                  FERRO_DTYPE_C128, FERRO_DTYPE_I64, FERRO_DTYPE_BOOL};
    out->n_dtypes = sizeof dtypes / sizeof dtypes[0];
    std::memcpy(out->dtypes, dtypes, sizeof dtypes);
    std::snprintf(out->details, sizeof out->details,
                  "compute capability %d.%d, %d SMs, %.1f GiB; CUDA runtime %d.%d, driver %d.%d; gemm: cuBLAS; "
                  "PCI %04x:%02x:%02x",
                  p.major, p.minor, p.multiProcessorCount, static_cast<double>(p.totalGlobalMem) / (1u << 30),
                  e.runtime_version / 1000, e.runtime_version % 1000 / 10, e.driver_version / 1000, e.driver_version % 1000 / 10,
                  p.pciDomainID, p.pciBusID, p.pciDeviceID);
    return nullptr;
}

ferro_status alloc(void* self, uint64_t bytes, uint64_t alignment, ferro_buffer* out_buffer, void** out_address) {
    Engine& e = self_of(self);
    // The pool hands out blocks aligned to at least 256 bytes.
    if (alignment > 256) {
        return make_status(e, FERRO_INVALID_ARGUMENT,
                           "alloc: alignment " + std::to_string(alignment) + " exceeds the 256 bytes the engine guarantees");
    }
    if (ferro_status st = use_device(e)) return st;
    void* p = nullptr;
    if (ferro_status st = alloc_async(e, bytes, &p)) return st;
    *out_buffer = static_cast<ferro_buffer>(p);
    *out_address = p;
    return nullptr;
}

// free() cannot report: a device that cannot be made current is gone, and its memory with it.
bool device_current(const Engine& e) {
    if (ferro_status st = use_device(e)) {
        e.host->status_free(st);
        return false;
    }
    return true;
}

void free_buffer(void* self, ferro_buffer buffer) {
    Engine& e = self_of(self);
    if (buffer != nullptr && device_current(e)) free_async(e, buffer);
}

// The two halves of the staging memory, allocated on first use.
ferro_status staging_ready(Engine& e) {
    Staging& s = e.staging;
    if (s.memory != nullptr) return nullptr;
    void* p = nullptr;
    cudaError_t r = cudaHostAlloc(&p, 2 * Staging::kChunk, cudaHostAllocPortable);
    if (r != cudaSuccess) return call_failed(e, "cudaHostAlloc(" + std::to_string(2 * Staging::kChunk) + " bytes)", r);
    for (cudaEvent_t& ev : s.done) {
        r = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
        if (r != cudaSuccess) {
            cudaFreeHost(p);
            return call_failed(e, "cudaEventCreateWithFlags", r);
        }
    }
    s.memory = static_cast<char*>(p);
    return nullptr;
}

// Host -> device through pinned staging, in chunks alternating between the two halves, so
// the copy of one chunk into a half overlaps the DMA of the other. Queued on the stream
// behind the session work before it; returns once the data is out of `src`.
ferro_status copy_h2d(void* self, const void* src, ferro_buffer dst, uint64_t offset, uint64_t bytes) {
    Engine& e = self_of(self);
    if (bytes == 0) return nullptr;
    if (ferro_status st = use_device(e)) return st;
    Staging& s = e.staging;
    const std::lock_guard<std::mutex> lock(s.mutex);
    if (ferro_status st = staging_ready(e)) return st;
    const char* from = static_cast<const char*>(src);
    char* to = reinterpret_cast<char*>(dst) + offset;
    for (uint64_t done = 0, i = 0; done < bytes; done += Staging::kChunk, ++i) {
        const uint64_t n = std::min(Staging::kChunk, bytes - done);
        const int half = static_cast<int>(i % 2);
        char* stage = s.memory + half * Staging::kChunk;
        cudaError_t r = cudaEventSynchronize(s.done[half]);  // the half's previous copy has left it
        if (r != cudaSuccess) return call_failed(e, "copy_h2d: cudaEventSynchronize", r);
        std::memcpy(stage, from + done, n);
        r = cudaMemcpyAsync(to + done, stage, n, cudaMemcpyHostToDevice, e.stream);
        if (r == cudaSuccess) r = cudaEventRecord(s.done[half], e.stream);
        if (r != cudaSuccess) return call_failed(e, "copy_h2d: cudaMemcpyAsync", r);
    }
    return nullptr;
}

// Device -> host: waits for the session work before it (same stream), then the same chunked
// pipeline the other way: chunk i+1 is in flight while chunk i is copied out.
ferro_status copy_d2h(void* self, ferro_buffer src, uint64_t offset, void* dst, uint64_t bytes) {
    Engine& e = self_of(self);
    if (bytes == 0) return nullptr;
    if (ferro_status st = use_device(e)) return st;
    Staging& s = e.staging;
    const std::lock_guard<std::mutex> lock(s.mutex);
    if (ferro_status st = staging_ready(e)) return st;
    const char* from = reinterpret_cast<const char*>(src) + offset;
    char* to = static_cast<char*>(dst);
    const uint64_t chunks = (bytes + Staging::kChunk - 1) / Staging::kChunk;
    auto enqueue = [&](uint64_t i) {
        const uint64_t n = std::min(Staging::kChunk, bytes - i * Staging::kChunk);
        const int half = static_cast<int>(i % 2);
        cudaError_t r =
            cudaMemcpyAsync(s.memory + half * Staging::kChunk, from + i * Staging::kChunk, n, cudaMemcpyDeviceToHost, e.stream);
        if (r == cudaSuccess) r = cudaEventRecord(s.done[half], e.stream);
        return r;
    };
    cudaError_t r = enqueue(0);
    for (uint64_t i = 0; i < chunks && r == cudaSuccess; ++i) {
        if (i + 1 < chunks) r = enqueue(i + 1);
        const int half = static_cast<int>(i % 2);
        if (r == cudaSuccess) r = cudaEventSynchronize(s.done[half]);
        if (r == cudaSuccess) {
            const uint64_t n = std::min(Staging::kChunk, bytes - i * Staging::kChunk);
            std::memcpy(to + i * Staging::kChunk, s.memory + half * Staging::kChunk, n);
        }
    }
    // A failure here is most often an earlier kernel's, reported at this first sync.
    return r == cudaSuccess ? nullptr : call_failed(e, "copy_d2h (waiting for the queued work)", r);
}

// ---- sessions and the native context -----------------------------------------------------

ferro_status ctx_alloc_async(const ferro_cuda_context* ctx, uint64_t bytes, void** out) {
    Engine& e = *static_cast<Engine*>(ctx->engine);
    if (ferro_status st = use_device(e)) return st;
    return alloc_async(e, bytes, out);
}

void ctx_free_async(const ferro_cuda_context* ctx, void* ptr) {
    Engine& e = *static_cast<Engine*>(ctx->engine);
    if (ptr != nullptr && device_current(e)) free_async(e, ptr);
}

ferro_status synchronize(Engine& e, const char* what) {
    const cudaError_t r = cudaStreamSynchronize(e.stream);
    return r == cudaSuccess ? nullptr : call_failed(e, what, r);
}

ferro_status ctx_synchronize(const ferro_cuda_context* ctx) {
    Engine& e = *static_cast<Engine*>(ctx->engine);
    if (ferro_status st = use_device(e)) return st;
    return synchronize(e, "waiting for the stream");
}

// An idle session state, or a new one with its cuBLAS handle on the engine's stream.
ferro_status take_session(Engine& e, Session*& out) {
    {
        const std::lock_guard<std::mutex> lock(e.sessions_mutex);
        if (!e.idle.empty()) {
            out = e.idle.back();
            e.idle.pop_back();
            return nullptr;
        }
    }
    auto s = std::make_unique<Session>();
    s->engine = &e;
    cublasStatus_t r = e.lib->cublasCreate_v2(&s->blas);
    if (r == CUBLAS_STATUS_SUCCESS) r = e.lib->cublasSetStream_v2(s->blas, e.stream);
    if (r != CUBLAS_STATUS_SUCCESS) {
        if (s->blas != nullptr) e.lib->cublasDestroy_v2(s->blas);
        return call_failed(e, "cublasCreate", r);
    }
    s->context.struct_size = sizeof s->context;
    s->context.device = e.device;
    s->context.stream = e.stream;
    s->context.cublas = s->blas;
    s->context.alloc_async = ctx_alloc_async;
    s->context.free_async = ctx_free_async;
    s->context.synchronize = ctx_synchronize;
    s->context.engine = &e;
    out = s.get();
    const std::lock_guard<std::mutex> lock(e.sessions_mutex);
    e.sessions.push_back(std::move(s));
    return nullptr;
}

ferro_status session_begin(void* self, ferro_engine_session* out) {
    Engine& e = self_of(self);
    if (ferro_status st = use_device(e)) return st;
    Session* s = nullptr;
    try {
        if (ferro_status st = take_session(e, s)) return st;
    } catch (const std::bad_alloc&) {
        return make_status(e, FERRO_RESOURCE_EXHAUSTED, "out of host memory");
    }
    *out = reinterpret_cast<ferro_engine_session>(s);
    return nullptr;
}

// The session's kernels are already queued; `wait` waits for them (and reports their errors).
ferro_status session_end(void* self, ferro_engine_session session, ferro_bool wait) {
    Engine& e = self_of(self);
    auto* s = reinterpret_cast<Session*>(session);
    ferro_status st = use_device(e);
    if (st == nullptr && wait != 0) st = synchronize(e, "a session's work");
    const std::lock_guard<std::mutex> lock(e.sessions_mutex);
    e.idle.push_back(s);
    return st;
}

template <class Args, ferro_status (*Kernel)(Session&, const Args&)>
ferro_status kernel(void* self, ferro_engine_session session, const Args* args) {
    Engine& e = self_of(self);
    if (ferro_status st = use_device(e)) return st;
    try {
        return Kernel(*reinterpret_cast<Session*>(session), *args);
    } catch (const std::bad_alloc&) {
        return make_status(e, FERRO_RESOURCE_EXHAUSTED, "out of host memory");
    }
}

ferro_status native_context(void* self, ferro_engine_session session, const void** out) {
    Engine& e = self_of(self);
    auto* s = reinterpret_cast<Session*>(session);
    if (ferro_status st = use_device(e)) return st;
    if (s->solver == nullptr) {  // cuSOLVER is for the linalg module only: made when first asked for
        cusolverStatus_t r = e.lib->cusolverDnCreate(&s->solver);
        if (r == CUSOLVER_STATUS_SUCCESS) r = e.lib->cusolverDnSetStream(s->solver, e.stream);
        if (r != CUSOLVER_STATUS_SUCCESS) {
            if (s->solver != nullptr) e.lib->cusolverDnDestroy(s->solver);
            s->solver = nullptr;
            return call_failed(e, "cusolverDnCreate", r);
        }
        s->context.cusolver = s->solver;
    }
    *out = &s->context;
    return nullptr;
}

// Application device memory (DLPack import, borrowed pointers): any pointer the driver knows as
// device or managed memory of this device.
ferro_status import_memory(void* self, void* address, uint64_t bytes, ferro_buffer* out) {
    Engine& e = self_of(self);
    if (ferro_status st = use_device(e)) return st;
    cudaPointerAttributes attr{};
    const cudaError_t r = cudaPointerGetAttributes(&attr, address);
    if (r != cudaSuccess) return call_failed(e, "import_memory: cudaPointerGetAttributes", r);
    if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged) {
        return make_status(e, FERRO_INVALID_ARGUMENT,
                           "import_memory: the address is not device memory (CUDA memory type " +
                               std::to_string(static_cast<int>(attr.type)) + ")");
    }
    if (attr.device != e.device) {
        return make_status(e, FERRO_INVALID_ARGUMENT,
                           "import_memory: the memory is on device " + std::to_string(attr.device) + ", this engine is device " +
                               std::to_string(e.device));
    }
    (void)bytes;  // the driver does not say how large the allocation is; the caller vouches for it
    *out = static_cast<ferro_buffer>(address);
    return nullptr;
}

void release_import(void*, ferro_buffer) {}  // the memory stays its owner's

void destroy(void* self) { delete &self_of(self); }

constexpr ferro_engine_iface kIface = {sizeof(ferro_engine_iface),
                                       0,
                                       properties,
                                       alloc,
                                       free_buffer,
                                       copy_h2d,
                                       copy_d2h,
                                       session_begin,
                                       session_end,
                                       kernel<ferro_fill_args, fill>,
                                       kernel<ferro_cast_args, cast>,
                                       kernel<ferro_unary_args, unary>,
                                       kernel<ferro_binary_args, binary>,
                                       kernel<ferro_where_args, where>,
                                       kernel<ferro_reduce_args, reduce>,
                                       kernel<ferro_copy_args, copy_strided>,
                                       kernel<ferro_gemm_args, gemm_batched>,
                                       native_context,
                                       destroy,
                                       import_memory,
                                       release_import};

// ---- probe and create --------------------------------------------------------------------

// Counts devices without creating anything on them: no driver (cudaErrorInsufficientDriver),
// a stub driver (cudaErrorStubLibrary), no device (cudaErrorNoDevice) all give 0 and the
// runtime's own name and text for it.
ferro_status probe(const ferro_host_api*, ferro_probe_result* out) {
    int count = 0;
    const cudaError_t r = cudaGetDeviceCount(&count);
    out->device_count = 0;
    if (r != cudaSuccess) {
        std::snprintf(out->reason, sizeof out->reason, "cudaGetDeviceCount failed: %s", error_text(r).c_str());
    } else if (count <= 0) {
        std::snprintf(out->reason, sizeof out->reason, "the CUDA driver reports no devices");
    } else {
        out->device_count = static_cast<uint32_t>(count);
        out->reason[0] = '\0';
    }
    return nullptr;
}

ferro_status create_device(Engine& e, uint32_t ordinal) {
    int count = 0;
    cudaError_t r = cudaGetDeviceCount(&count);
    if (r != cudaSuccess) return call_failed(e, "cudaGetDeviceCount", r);
    if (ordinal >= static_cast<uint32_t>(count)) {
        return make_status(e, FERRO_NOT_FOUND,
                           "no device " + std::to_string(ordinal) + " (" + std::to_string(count) + " present)");
    }
    e.device = static_cast<int>(ordinal);
    std::string why;
    e.lib = cuda_libraries(why);
    if (e.lib == nullptr) return make_status(e, FERRO_UNAVAILABLE, why);
    if (ferro_status st = use_device(e)) return st;
    r = cudaGetDeviceProperties(&e.props, e.device);
    if (r == cudaSuccess) r = cudaRuntimeGetVersion(&e.runtime_version);
    if (r == cudaSuccess) r = cudaDriverGetVersion(&e.driver_version);
    if (r != cudaSuccess) return call_failed(e, "reading the properties of device " + std::to_string(ordinal), r);
    r = cudaStreamCreateWithFlags(&e.stream, cudaStreamNonBlocking);
    if (r != cudaSuccess) return call_failed(e, "cudaStreamCreateWithFlags", r);
    cudaMemPoolProps pool{};
    pool.allocType = cudaMemAllocationTypePinned;
    pool.location.type = cudaMemLocationTypeDevice;
    pool.location.id = e.device;
    r = cudaMemPoolCreate(&e.pool, &pool);
    if (r != cudaSuccess) return call_failed(e, "cudaMemPoolCreate", r);
    uint64_t keep = UINT64_MAX;  // keep freed memory for reuse rather than give it back at each sync
    r = cudaMemPoolSetAttribute(e.pool, cudaMemPoolAttrReleaseThreshold, &keep);
    if (r != cudaSuccess) return call_failed(e, "cudaMemPoolSetAttribute(ReleaseThreshold)", r);
    return nullptr;
}

ferro_status create(const ferro_host_api* host, uint32_t ordinal, ferro_engine_instance* out) {
    auto e = std::make_unique<Engine>();
    e->host = host;
    try {
        if (ferro_status st = create_device(*e, ordinal)) return st;
    } catch (const std::bad_alloc&) {
        return make_status(*e, FERRO_RESOURCE_EXHAUSTED, "out of host memory");
    }
    out->self = e.release();
    out->iface = &kIface;
    return nullptr;
}

constexpr ferro_engine_desc kEngines[] = {
    {sizeof(ferro_engine_desc), 0, "cuda", FERRO_CUDA_CONTEXT_ABI,
     "CUDA: the primitive set as CUDA kernels, gemm through cuBLAS, on one stream per device", probe, create}};

constexpr ferro_plugin_desc kPlugin = {sizeof(ferro_plugin_desc),
                                       FERRO_ABI_MAJOR,
                                       FERRO_ABI_MINOR,
                                       0,
                                       "engine_cuda",
                                       "0.1.0",
                                       "CUDA engine (cuda:N)",
                                       1,
                                       0,
                                       kEngines,
                                       nullptr,
                                       0,
                                       0,
                                       nullptr};

ferro_status query(const ferro_host_api*, const ferro_plugin_desc** out) {
    *out = &kPlugin;
    return nullptr;
}

}  // namespace

ferro_status make_status(const Engine& e, uint32_t code, const std::string& message) {
    const std::string text = "cuda engine: " + message;
    return e.host->status_make(code, text.c_str());
}

ferro_status launch_status(const Engine& e, const char* kernel) {
    const cudaError_t r = cudaGetLastError();
    return r == cudaSuccess ? nullptr : call_failed(e, std::string("launching the ") + kernel + " kernel", r);
}

ferro_status alloc_async(Engine& e, uint64_t bytes, void** out) {
    const uint64_t size = std::max<uint64_t>(bytes, 1);
    cudaError_t r = cudaMallocFromPoolAsync(out, size, e.pool, e.stream);
    if (r == cudaErrorMemoryAllocation) {
        // The pool keeps what was freed; in pieces too small for this request they are of no
        // use to it. Give them back to the driver once the queued work is done, and try again.
        cudaGetLastError();
        if (cudaStreamSynchronize(e.stream) == cudaSuccess && cudaMemPoolTrimTo(e.pool, 0) == cudaSuccess) {
            r = cudaMallocFromPoolAsync(out, size, e.pool, e.stream);
        }
    }
    if (r == cudaSuccess) return nullptr;
    cudaGetLastError();  // out of memory is not sticky: clear it so the next launch check is clean
    return call_failed(e, "allocating " + std::to_string(bytes) + " bytes of device memory", r);
}

void free_async(Engine& e, void* ptr) { cudaFreeAsync(ptr, e.stream); }

Engine::~Engine() {
    if (cudaSetDevice(device) != cudaSuccess) return;  // the device is gone: nothing can be released
    if (stream != nullptr) cudaStreamSynchronize(stream);
    for (auto& s : sessions) {
        if (s->blas != nullptr) lib->cublasDestroy_v2(s->blas);
        if (s->solver != nullptr) lib->cusolverDnDestroy(s->solver);
    }
    if (staging.memory != nullptr) cudaFreeHost(staging.memory);
    for (cudaEvent_t ev : staging.done) {
        if (ev != nullptr) cudaEventDestroy(ev);
    }
    if (pool != nullptr) cudaMemPoolDestroy(pool);
    if (stream != nullptr) cudaStreamDestroy(stream);
}

}  // namespace ferro::cuda

FERRO_PLUGIN_EXPORT(ferro::cuda::query)
