// A created engine (one device of one backend) as the host holds it: the plugin's instance,
// its validated function table, its device properties, and a reference on its library.
#pragma once

#include "loader/library.hpp"

#include <ferro/plugin.h>

#include <atomic>
#include <memory>
#include <string>

namespace ferro {

class Engine {
public:
    // Takes ownership of `instance`. Throws LoadError(create) when the table is unusable.
    Engine(std::string name, const ferro_engine_desc& desc, uint32_t ordinal,
           ferro_engine_instance instance, LibraryPtr library);
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    const std::string& name() const noexcept { return name_; }  // "cpu", "vulkan:0"
    const std::string& kind() const noexcept { return kind_; }
    const std::string& context_abi() const noexcept { return context_abi_; }
    uint32_t ordinal() const noexcept { return ordinal_; }
    const ferro_device_props& props() const noexcept { return props_; }
    bool host_addressable() const noexcept {
        return (props_.flags & FERRO_ENGINE_HOST_ADDRESSABLE) != 0;
    }
    const ferro_engine_iface& iface() const noexcept { return *iface_; }
    void* self() const noexcept { return self_; }
    const LibraryPtr& library() const noexcept { return library_; }  // null for built-ins
    // The built-in cpu engine, whose buffers are plain host memory and whose import_memory is
    // the identity: the host may place small buffers itself (inside a tensor's allocation).
    bool builtin_cpu() const noexcept { return builtin_cpu_; }

    // The target description handed to module factories; valid while the engine lives.
    const ferro_engine_target& target() const noexcept { return target_; }

    // Buffers the engine allocated for the host (its alloc, not imports or memory the host
    // places itself), counted by the host as they come and go.
    struct MemoryStats {
        uint64_t live_buffers = 0, live_bytes = 0, allocations = 0;
    };
    MemoryStats memory_stats() const noexcept {
        return {live_buffers_.load(std::memory_order_relaxed), live_bytes_.load(std::memory_order_relaxed),
                allocations_.load(std::memory_order_relaxed)};
    }
    void count_alloc(uint64_t bytes) const noexcept {
        live_buffers_.fetch_add(1, std::memory_order_relaxed);
        live_bytes_.fetch_add(bytes, std::memory_order_relaxed);
        allocations_.fetch_add(1, std::memory_order_relaxed);
    }
    void count_free(uint64_t bytes) const noexcept {
        live_buffers_.fetch_sub(1, std::memory_order_relaxed);
        live_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    }

private:
    std::string name_, kind_, context_abi_;
    uint32_t ordinal_;
    void* self_;
    const ferro_engine_iface* iface_;
    LibraryPtr library_;
    bool builtin_cpu_ = false;
    ferro_device_props props_{};
    ferro_engine_target target_{};
    mutable std::atomic<uint64_t> live_buffers_{0}, live_bytes_{0}, allocations_{0};
};

using EnginePtr = std::shared_ptr<Engine>;

}  // namespace ferro
