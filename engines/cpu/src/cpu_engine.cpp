// The cpu engine's descriptor and engine table: memory, transfers, sessions, native context.
// Kernels live in kernels_*.cpp.
#include "cpu_engine.hpp"

#include "blas_backend.hpp"
#include "blas_threads.hpp"
#include "small_blocks.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>

#include <sys/mman.h>
#include <unistd.h>

namespace ferro::cpu {

ferro_status unsupported(const Engine& e, const char* kernel, const std::string& what) {
    const std::string message = std::string("cpu engine: ") + kernel + " does not support " + what;
    return e.host->status_make(FERRO_UNIMPLEMENTED, message.c_str());
}

namespace {

constexpr uint64_t kAlignment = 64;
constexpr uint64_t kHugePageBytes = uint64_t{4} << 20;  // see advise_huge_pages

Engine& self_of(void* self) { return *static_cast<Engine*>(self); }

unsigned thread_count() {
    if (const char* env = std::getenv("FERRO_CPU_THREADS")) {
        const long n = std::strtol(env, nullptr, 10);
        if (n >= 1 && n <= 1024) return static_cast<unsigned>(n);
    }
    return std::max(1u, std::thread::hardware_concurrency());
}

ferro_status properties(void* self, ferro_device_props* out) {
    std::snprintf(out->name, sizeof out->name, "host cpu (%u threads)", self_of(self).pool->size());
    out->flags = FERRO_ENGINE_HOST_ADDRESSABLE | FERRO_ENGINE_BUFFER_IS_ADDRESS;
    if (FERRO_HAS_FIELD(out, ferro_device_props, threads)) out->threads = self_of(self).pool->size();
    out->dlpack_device_type = FERRO_DLPACK_DEVICE_CPU;
    out->score = 0;  // accelerators, when present, are preferred
    const ferro_dtype dtypes[] = {FERRO_DTYPE_F32,  FERRO_DTYPE_F64, FERRO_DTYPE_C64,
                                  FERRO_DTYPE_C128, FERRO_DTYPE_I64, FERRO_DTYPE_BOOL};
    out->n_dtypes = sizeof dtypes / sizeof dtypes[0];
    std::memcpy(out->dtypes, dtypes, sizeof dtypes);
    // The BLAS last: a long library path is what the field's size may cut.
    std::snprintf(out->details, sizeof out->details,
                  "%u-byte aligned memory; freed blocks reused up to %llu MiB (FERRO_CPU_CACHE_MB); huge pages from "
                  "%llu MiB: %s (FERRO_CPU_HUGE_PAGES); BLAS: %s",
                  static_cast<unsigned>(kAlignment), static_cast<unsigned long long>(self_of(self).blocks->limit() >> 20),
                  static_cast<unsigned long long>(kHugePageBytes >> 20), self_of(self).huge_pages ? "on" : "off",
                  blas_backend().describe().c_str());
    return nullptr;
}

// Aligned allocation by over-allocating with malloc and storing, just before the aligned
// block, malloc's pointer and the block's size class (0: malloc's own; below 64 KiB: the
// thread's small blocks; else the block cache). glibc's memalign costs ~5x a malloc, which
// showed in tiny-op dispatch.
struct BlockHeader {
    void* raw;
    uint64_t size_class;
};

BlockHeader& header_of(ferro_buffer buffer) { return reinterpret_cast<BlockHeader*>(buffer)[-1]; }

// Fresh blocks of kHugePageBytes and more are backed by 2 MiB pages where the kernel's
// transparent huge pages allow it (`madvise` mode, the common default, needs the advice):
// their first touch then faults once per 2 MiB instead of once per 4 KiB. gm_queen's 2.6 GiB
// einsum workspace took ~680k faults and ~1 s of kernel time to touch in 4 KiB pages.
// FERRO_CPU_HUGE_PAGES=0 leaves the kernel's default (with THP's `defrag` set to madvise, a
// fault may compact memory to find a huge page).
void advise_huge_pages(void* raw, uint64_t bytes) {
#if defined(MADV_HUGEPAGE)
    constexpr uintptr_t huge = uintptr_t{2} << 20;
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(raw) + huge - 1) & ~(huge - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(raw) + bytes) & ~(huge - 1);
    if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // advice only
#else
    (void)raw;
    (void)bytes;
#endif
}

ferro_status alloc(void* self, uint64_t bytes, uint64_t alignment, ferro_buffer* out_buffer, void** out_address) {
    Engine& e = self_of(self);
    const uint64_t align = std::max(alignment, kAlignment);
    constexpr uint64_t overhead = sizeof(BlockHeader);
    void* raw = nullptr;
    uint64_t size_class = 0;
    if (bytes <= UINT64_MAX / 2) {
        const uint64_t total = bytes + align + overhead;
        const bool small = total < BlockCache::kMinBytes;
        if (align == kAlignment && e.blocks->limit() != 0) {
            size_class = small ? small_blocks::size_class(total) : e.blocks->size_class(total);
        }
        if (size_class != 0) raw = small ? small_blocks::take(size_class) : e.blocks->take(size_class);
        if (raw == nullptr) {
            const uint64_t size = size_class != 0 ? size_class : total;
            raw = std::malloc(size);
            if (raw != nullptr && e.huge_pages && size >= kHugePageBytes) advise_huge_pages(raw, size);
        }
    }
    if (raw == nullptr) {
        const std::string message = "cpu engine: cannot allocate " + std::to_string(bytes) + " bytes";
        return e.host->status_make(FERRO_RESOURCE_EXHAUSTED, message.c_str());
    }
    const auto start = reinterpret_cast<uintptr_t>(raw) + overhead;
    void* aligned = reinterpret_cast<void*>((start + align - 1) & ~(align - 1));
    *out_buffer = static_cast<ferro_buffer>(aligned);
    header_of(*out_buffer) = {raw, size_class};
    *out_address = aligned;
    return nullptr;
}

void free_buffer(void* self, ferro_buffer buffer) {
    if (buffer == nullptr) return;
    const BlockHeader h = header_of(buffer);
    if (h.size_class == 0) std::free(h.raw);
    else if (h.size_class < BlockCache::kMinBytes) small_blocks::give(h.size_class, h.raw);
    else self_of(self).blocks->give(h.size_class, h.raw);
}

// FERRO_CPU_CACHE_MB: the most memory freed blocks may hold for reuse (0 turns it off); by
// default an eighth of physical memory, so a tensor network's gigabyte of intermediates is
// reused from call to call instead of faulted in again.
uint64_t block_cache_limit() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t mib = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 8 >> 20 : 256;
    if (const char* env = std::getenv("FERRO_CPU_CACHE_MB")) {
        char* end = nullptr;
        const unsigned long long n = std::strtoull(env, &end, 10);
        if (end != env && *end == '\0' && n <= (uint64_t{1} << 40)) mib = n;
    }
    return mib << 20;
}

ferro_status copy_h2d(void*, const void* src, ferro_buffer dst, uint64_t offset, uint64_t bytes) {
    std::memcpy(reinterpret_cast<char*>(dst) + offset, src, bytes);
    return nullptr;
}

ferro_status copy_d2h(void*, ferro_buffer src, uint64_t offset, void* dst, uint64_t bytes) {
    std::memcpy(dst, reinterpret_cast<const char*>(src) + offset, bytes);
    return nullptr;
}

// Kernels run synchronously on the calling thread (and the pool), so a session is only a token.
ferro_status session_begin(void* self, ferro_engine_session* out) {
    *out = reinterpret_cast<ferro_engine_session>(self);
    return nullptr;
}
ferro_status session_end(void*, ferro_engine_session, ferro_bool) { return nullptr; }

template <class Args, ferro_status (*Kernel)(Engine&, const Args&)>
ferro_status kernel(void* self, ferro_engine_session, const Args* args) {
    try {
        return Kernel(self_of(self), *args);
    } catch (const std::bad_alloc&) {
        return self_of(self).host->status_make(FERRO_RESOURCE_EXHAUSTED, "cpu engine: out of memory");
    }
}

ferro_status native_context(void* self, ferro_engine_session, const void** out) {
    *out = &self_of(self).context;
    return nullptr;
}

void destroy(void* self) { delete static_cast<Engine*>(self); }

// Host memory is already ours to address: the buffer handle is the pointer itself.
ferro_status import_memory(void*, void* address, uint64_t, ferro_buffer* out) {
    *out = static_cast<ferro_buffer>(address);
    return nullptr;
}
void release_import(void*, ferro_buffer) {}

void context_parallel_for(const ferro_cpu_context* ctx, int64_t n, int64_t grain, ferro_parallel_body body, void* user) {
    static_cast<ThreadPool*>(ctx->pool)->parallel_for(n, grain, [&](int64_t begin, int64_t end) { body(user, begin, end); });
}

void context_blas_one_thread(const ferro_cpu_context*, int32_t hold) {
    if (hold != 0) hold_one_blas_thread();
    else release_one_blas_thread();
}

constexpr ferro_engine_iface iface = {sizeof(ferro_engine_iface),
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
                                      release_import,
                                      kernel<ferro_fused_args, elementwise_fused>};

ferro_status probe(const ferro_host_api*, ferro_probe_result* out) {
    out->device_count = 1;
    return nullptr;
}

ferro_status create(const ferro_host_api* host, uint32_t, ferro_engine_instance* out) {
    try {
        auto engine = std::make_unique<Engine>();
        engine->host = host;
        engine->pool = std::make_unique<ThreadPool>(thread_count());
        engine->blocks = std::make_unique<BlockCache>(block_cache_limit());
        const char* huge = std::getenv("FERRO_CPU_HUGE_PAGES");
        engine->huge_pages = huge == nullptr || std::strcmp(huge, "0") != 0;
        const BlasBackend& blas = blas_backend();  // lives as long as the process
        engine->context = {.struct_size = sizeof(ferro_cpu_context),
                           .num_threads = engine->pool->size(),
                           .parallel_for = context_parallel_for,
                           .pool = engine->pool.get(),
                           .blas_one_thread = context_blas_one_thread,
                           .blas_name = blas.name.c_str(),
                           .blas_version = blas.version.c_str()};
        out->self = engine.release();
        out->iface = &iface;
        return nullptr;
    } catch (const std::exception& e) {
        return host->status_make(FERRO_RESOURCE_EXHAUSTED, e.what());
    }
}

constexpr ferro_engine_desc engines[] = {{sizeof(ferro_engine_desc), 0, "cpu", FERRO_CPU_CONTEXT_ABI,
                                          "host cpu: BLAS gemm (chosen at run time), vectorised strided kernels", probe, create}};

constexpr ferro_plugin_desc desc = {sizeof(ferro_plugin_desc),
                                    FERRO_ABI_MAJOR,
                                    FERRO_ABI_MINOR,
                                    0,
                                    "engine_cpu",
                                    "0.1.0",
                                    "the built-in cpu engine",
                                    1,
                                    0,
                                    engines,
                                    nullptr,
                                    0,
                                    0,
                                    nullptr};

}  // namespace
}  // namespace ferro::cpu

extern "C" ferro_status ferro_cpu_plugin_query(const ferro_host_api*, const ferro_plugin_desc** out) {
    *out = &ferro::cpu::desc;
    return nullptr;
}
