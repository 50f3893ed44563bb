// A created engine (one device of one backend) as the host holds it: the plugin's instance,
// its validated function table, its device properties, and a reference on its library.
#pragma once

#include "loader/library.hpp"
#include "support/thread_counters.hpp"

#include <ferro/plugin.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>

namespace ferro::host {

// Whether the table offers recorded sessions (ABI 1.14: all four entries).
bool records_sessions(const ferro_engine_iface& iface) noexcept;

class Engine {
public:
    // Takes ownership of `instance`. Throws LoadError(create) when the table is unusable.
    Engine(std::string name, const ferro_engine_desc& desc, uint32_t ordinal, ferro_engine_instance instance, LibraryPtr library,
           uint64_t runtime_id);
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    const std::string& name() const noexcept { return name_; }  // "cpu", "vulkan:0"
    // The runtime that created this engine (Runtime::id): tensors on it belong to that runtime.
    uint64_t runtime_id() const noexcept { return runtime_id_; }
    const std::string& kind() const noexcept { return kind_; }
    const std::string& context_abi() const noexcept { return context_abi_; }
    uint32_t ordinal() const noexcept { return ordinal_; }
    const ferro_device_props& props() const noexcept { return props_; }
    bool host_addressable() const noexcept { return (props_.flags & FERRO_ENGINE_HOST_ADDRESSABLE) != 0; }
    const ferro_engine_iface& iface() const noexcept { return *iface_; }
    void* self() const noexcept { return self_; }
    const LibraryPtr& library() const noexcept { return library_; }  // null for built-ins
    // An engine whose buffer handles are addresses (FERRO_ENGINE_BUFFER_IS_ADDRESS, with
    // HOST_ADDRESSABLE): the host may place small buffers itself (inside a tensor's allocation).
    bool buffers_are_addresses() const noexcept { return buffers_are_addresses_; }
    // Whether its sessions can be recorded and submitted again (ABI 1.14).
    bool records_sessions() const noexcept { return ferro::host::records_sessions(*iface_); }

    // The target description handed to module factories; valid while the engine lives.
    const ferro_engine_target& target() const noexcept { return target_; }

    // Buffers the engine allocated for the host (its alloc, not imports or memory the host
    // places itself), counted by the host as they come and go.
    struct MemoryStats {
        uint64_t live_buffers = 0, live_bytes = 0, allocations = 0, peak_bytes = 0;
    };
    MemoryStats memory_stats() const noexcept {
        // Read while other threads allocate and free, a free can be seen before the allocation
        // it undoes (they sit in different threads' slots): such a moment reads 0, not -1.
        const auto counted = [](int64_t v) { return static_cast<uint64_t>(std::max<int64_t>(v, 0)); };
        const auto [buffers, bytes, allocations] = memory_.read();
        return {counted(buffers), counted(bytes), counted(allocations), counted(peak_.load(std::memory_order_relaxed))};
    }
    void count_alloc(uint64_t bytes) const noexcept {
        memory_.add({1, static_cast<int64_t>(bytes), 1});
        if (tracking_peak_.load(std::memory_order_relaxed)) [[unlikely]] {
            const int64_t now =
                tracked_.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed) + static_cast<int64_t>(bytes);
            int64_t peak = peak_.load(std::memory_order_relaxed);
            while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {}
        }
    }
    void count_free(uint64_t bytes) const noexcept {
        memory_.add({-1, -static_cast<int64_t>(bytes), 0});
        if (tracking_peak_.load(std::memory_order_relaxed)) [[unlikely]] {
            tracked_.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
        }
    }
    // The peak counts from the live bytes now. Off until the first reset: the per-thread counters
    // above cost allocation nothing shared, which one counter every thread updates would.
    void reset_peak() const noexcept {
        const int64_t live = static_cast<int64_t>(memory_stats().live_bytes);
        tracked_.store(live, std::memory_order_relaxed);
        peak_.store(live, std::memory_order_relaxed);
        tracking_peak_.store(true, std::memory_order_relaxed);
    }

private:
    std::string name_, kind_, context_abi_;
    uint32_t ordinal_;
    uint64_t runtime_id_;
    void* self_;
    const ferro_engine_iface* iface_;
    LibraryPtr library_;
    bool buffers_are_addresses_ = false;
    ferro_device_props props_{};
    ferro_engine_target target_{};
    mutable ThreadCounters<3> memory_;  // live buffers, live bytes, allocations
    mutable std::atomic<bool> tracking_peak_{false};
    mutable std::atomic<int64_t> tracked_{0}, peak_{0};  // live bytes and their most, since reset_peak
};

using EnginePtr = std::shared_ptr<Engine>;

// Throws INVALID_ARGUMENT "<context>: <what> belongs to runtime N, not to runtime M (...)" unless
// `engine` belongs to runtime `runtime_id`: objects of one runtime are refused by another's calls.
void check_runtime(uint64_t runtime_id, const Engine& engine, const std::string& context, const std::string& what);

}  // namespace ferro::host
