// The host's plan cache (DESIGN §3): bounded by entries and bytes, least recently used first
// out, keyed by (op schema, engine, epoch, attributes, input signatures) with an exact compare
// on hit. Plans are shared: an execution in flight keeps its plan alive after eviction.
#pragma once

#include "registry/module.hpp"
#include "tensor/tensor.hpp"

#include <ferro/family.h>

#include <boost/container/small_vector.hpp>

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace ferro {

using PlanKey = boost::container::small_vector<uint64_t, 48>;

struct PlanKeyHash {
    size_t operator()(const PlanKey& key) const noexcept;
};

// An output as the plan allocates it: row-major, checked once when the plan was made.
struct OutputSig {
    ferro_dtype dtype;
    Dims shape, strides;
    uint64_t bytes;
};

// A prepared plan owned by the host. Counts as a user object of its module's plugin.
class CachedPlan {
public:
    CachedPlan(ferro_plan_instance instance, ModulePtr module, std::vector<OutputSig> outputs,
               std::vector<OutputSig> residuals = {});
    ~CachedPlan();
    CachedPlan(const CachedPlan&) = delete;
    CachedPlan& operator=(const CachedPlan&) = delete;

    void* self() const noexcept { return instance_.self; }
    const ferro_plan_iface& iface() const noexcept { return *instance_.iface; }
    uint64_t workspace_bytes() const noexcept { return instance_.workspace_bytes; }
    uint64_t retained_bytes() const noexcept { return instance_.retained_bytes; }
    const std::vector<OutputSig>& outputs() const noexcept { return outputs_; }
    // Tensors the executors write after the outputs, for the op's VJP rule (ABI 1.8).
    const std::vector<OutputSig>& residuals() const noexcept { return residuals_; }
    const ModulePtr& module() const noexcept { return module_; }
    // A plan of a built-in module (host code): its executor enqueues primitives unchecked
    // (session.hpp, trusted::run), so its session need not list the call's buffers.
    bool built_in() const noexcept { return module_->library() == nullptr; }

private:
    ferro_plan_instance instance_;
    ModulePtr module_;
    std::vector<OutputSig> outputs_;
    std::vector<OutputSig> residuals_;
};

using PlanPtr = std::shared_ptr<const CachedPlan>;

struct PlanCacheStats {
    uint64_t hits = 0, misses = 0, evictions = 0, entries = 0, bytes = 0;
    uint64_t max_entries = 0, max_bytes = 0;
};

class PlanCache {
public:
    PlanCache(uint64_t max_entries, uint64_t max_bytes);

    PlanPtr find(const PlanKey& key);  // counts a hit or a miss
    void insert(PlanKey key, PlanPtr plan);
    void clear();
    // Drops every entry for which `drop` is true (e.g. plans of an unloading plugin).
    void remove_if(const std::function<bool(const PlanKey&, const CachedPlan&)>& drop);
    PlanCacheStats stats() const;

private:
    static uint64_t cost(const CachedPlan& plan);
    void evict_over_limits();  // with mutex_ held

    using Entry = std::pair<PlanKey, PlanPtr>;
    mutable std::mutex mutex_;
    std::list<Entry> lru_;  // most recently used first
    std::unordered_map<PlanKey, std::list<Entry>::iterator, PlanKeyHash> index_;
    PlanCacheStats stats_;
};

}  // namespace ferro
