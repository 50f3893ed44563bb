// The host's plan cache (DESIGN §3): one per runtime. An entry is a call made once (its key,
// the plan a module prepared or the host op that runs it, the engine and the normalised
// attributes), so a repeat runs at once. Each op handle indexes its own entries (op_handle.hpp:
// a hit takes only that handle's lock); the cache bounds them all together by plans and bytes
// and evicts by CLOCK (second chance: an entry used since the hand last passed it stays).
// Plans are shared: an execution in flight keeps its entry alive after eviction.
#pragma once

#include "dispatch/attrs.hpp"
#include "dispatch/host_op.hpp"
#include "dispatch/plan_key.hpp"
#include "registry/module.hpp"
#include "tensor/tensor.hpp"

#include <ferro/family.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

struct ferro_op_impl;

namespace ferro::host {

// An output as the plan allocates it: row-major, checked once when the plan was made.
struct OutputSig {  // NOLINT(bugprone-exception-escape): Dims (a small_vector) moves without allocating
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

// A call as the cache keeps it. Immutable once made, except for the CLOCK bit.
struct PlanEntry {
    explicit PlanEntry(const AttrValues& normalised) : attrs(normalised) {}

    PlanKey key;
    PlanPtr plan;                // null for a host op
    HostOpFn host_op = nullptr;  // null for a plan
    EnginePtr engine;
    OwnedAttrs attrs;                         // normalised, deep-copied (the caller's arrays and strings are not ours)
    const ferro_op_schema* schema = nullptr;  // for recording grad nodes
    LibraryPtr family_library;                // keeps the schema's and rules' code loaded
    std::span<const ferro_op> rule_ops;       // for the rules (the runtime's: outlives the entry)
    ferro_op_impl* op = nullptr;              // the handle whose index holds the entry
    mutable std::atomic<bool> used{false};    // set by hits, cleared by the CLOCK hand

    // What the entry counts against the byte bound: what the plan retains plus the host's
    // own bookkeeping.
    uint64_t cost() const noexcept;
};

using EntryPtr = std::shared_ptr<const PlanEntry>;

struct PlanCacheStats {
    uint64_t hits = 0, misses = 0, evictions = 0, entries = 0, bytes = 0;
    uint64_t max_entries = 0, max_bytes = 0;
};

class PlanCache {
public:
    // `epoch`: the runtime's current epoch; an entry of an older one is not kept.
    PlanCache(uint64_t max_entries, uint64_t max_bytes, const std::atomic<uint64_t>& epoch);
    ~PlanCache();
    PlanCache(const PlanCache&) = delete;
    PlanCache& operator=(const PlanCache&) = delete;

    // Keeps `entry` (new, from a miss) and adds it to its handle's index, then evicts over the
    // bounds; does nothing when the runtime has moved to a newer epoch meanwhile.
    void insert(const EntryPtr& entry);
    // Drops the entries for which `drop` is true (older epochs, an unloading plugin's plans).
    void remove_if(const std::function<bool(const PlanEntry&)>& drop);
    void clear();
    // Entries, bytes, evictions and the bounds; hits and misses are the handles' (Runtime).
    PlanCacheStats stats() const;

private:
    // Removes `it` from the ring and from its handle's index, into `dropped`; mutex_ held.
    void unlink(std::list<EntryPtr>::iterator it, std::vector<EntryPtr>& dropped);

    const std::atomic<uint64_t>& epoch_;
    mutable std::mutex mutex_;  // guards everything below; taken after no handle's lock
    std::list<EntryPtr> ring_;  // the CLOCK: the hand at the front, new entries at the back
    uint64_t plans_ = 0, bytes_ = 0, evictions_ = 0;
    const uint64_t max_plans_, max_bytes_;
};

}  // namespace ferro::host
