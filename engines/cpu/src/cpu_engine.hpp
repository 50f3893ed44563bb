// The built-in cpu engine: host memory (64-byte aligned), an OpenBLAS gemm, and vectorisable
// strided kernels parallelised over one thread pool. Exposed to the host through the same
// engine ABI as every plugin (ferro_cpu_plugin_query).
#pragma once

#include "block_cache.hpp"
#include "thread_pool.hpp"

#include <ferro/cpu_context.h>
#include <ferro/plugin.h>

#include <memory>
#include <string>

namespace ferro::cpu {

struct Engine {
    const ferro_host_api* host;
    std::unique_ptr<ThreadPool> pool;
    std::unique_ptr<BlockCache> blocks;
    bool huge_pages = true;  // advise 2 MiB pages for large blocks (FERRO_CPU_HUGE_PAGES)
    ferro_cpu_context context{};
};

// Elements above which an elementwise or reduction kernel is split across the pool, and the
// smallest chunk a thread gets. Measured on these 2-core machines: below ~32k elements the
// wake-up of a second thread costs more than it saves.
inline constexpr int64_t kParallelThreshold = int64_t{1} << 15;
inline constexpr int64_t kParallelGrain = int64_t{1} << 14;
// The same for copies, which only move memory: a [19, 19, 119] permute (43k elements) took
// 20-35 us on the calling thread and 85 us split over two.
inline constexpr int64_t kCopyParallelThreshold = int64_t{1} << 17;

// Kernel entry points (one file each); they return NULL or a status made through e.host.
ferro_status fill(Engine& e, const ferro_fill_args& a);
ferro_status cast(Engine& e, const ferro_cast_args& a);
ferro_status unary(Engine& e, const ferro_unary_args& a);
ferro_status binary(Engine& e, const ferro_binary_args& a);
ferro_status where(Engine& e, const ferro_where_args& a);
ferro_status reduce(Engine& e, const ferro_reduce_args& a);
ferro_status copy_strided(Engine& e, const ferro_copy_args& a);
ferro_status gemm_batched(Engine& e, const ferro_gemm_args& a);
ferro_status elementwise_fused(Engine& e, const ferro_fused_args& a);

// A status for a dtype/op pair a kernel does not support.
ferro_status unsupported(const Engine& e, const char* kernel, const std::string& what);

// Runs loop.run over its whole space, on the pool when it is large.
template <class Loop, class Inner>
void run_loop(Engine& e, const Loop& loop, Inner&& inner, int64_t threshold = kParallelThreshold) {
    if (loop.numel() < threshold) {
        loop.run(0, loop.numel(), inner);
        return;
    }
    e.pool->parallel_for(loop.numel(), kParallelGrain, [&](int64_t begin, int64_t end) { loop.run(begin, end, inner); });
}

}  // namespace ferro::cpu

// The engine's plugin entry, linked into libferro and registered as a built-in plugin.
extern "C" ferro_status ferro_cpu_plugin_query(const ferro_host_api* host, const ferro_plugin_desc** out);
