// An op handle (the ABI's ferro_op; PyTorch's OperatorHandle): an op name interned by its
// runtime, resolved once per epoch against the snapshot, and the index of its part of the
// plan cache. A call takes this handle's lock once to find its entry; only a miss goes further.
#pragma once

#include "dispatch/plan_cache.hpp"
#include "runtime/snapshot.hpp"
#include "support/spin_lock.hpp"

#include <boost/container/small_vector.hpp>

#include <future>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace ferro::host {

class Runtime;

// Hash and equality over entries that also take a bare key (heterogeneous lookup).
struct EntryHash {
    using is_transparent = void;
    size_t operator()(const EntryPtr& e) const noexcept { return e->key.hash; }
    size_t operator()(const PlanKey& k) const noexcept { return k.hash; }
};
struct EntryEq {
    using is_transparent = void;
    bool operator()(const EntryPtr& a, const EntryPtr& b) const noexcept { return a == b || a->key == b->key; }
    bool operator()(const PlanKey& a, const EntryPtr& b) const noexcept { return a == b->key; }
    bool operator()(const EntryPtr& a, const PlanKey& b) const noexcept { return a->key == b; }
};

// A miss being prepared: calls with the same key wait for it (single flight) instead of
// preparing the same plan again.
struct Preparing {
    std::thread::id owner;  // a prepare that calls its own op with its own key does not wait
    std::promise<EntryPtr> promise;
    std::shared_future<EntryPtr> entry = promise.get_future().share();
};

}  // namespace ferro::host

struct ferro_op_impl {
    std::string name;
    ferro::host::Runtime* runtime = nullptr;
    ferro::host::SpinLock mutex;  // guards everything below

    // The resolution, for `epoch` (holding that snapshot, so the pointers stay valid).
    uint64_t epoch = ~uint64_t{0};
    ferro::host::SnapshotPtr snapshot;
    const ferro::host::OpEntry* entry = nullptr;
    const ferro::host::FamilySlot* family = nullptr;
    // Engines on which a module of the family keeps residuals (ABI 1.8).
    boost::container::small_vector<const ferro::host::Engine*, 2> residual_engines;

    // This op's entries of the plan cache (the cache adds and removes them), and the one the
    // latest call used: call sites repeat their calls, so it is compared first.
    std::unordered_set<ferro::host::EntryPtr, ferro::host::EntryHash, ferro::host::EntryEq> entries;
    ferro::host::EntryPtr last;
    std::unordered_map<ferro::host::PlanKey, std::shared_ptr<ferro::host::Preparing>, ferro::host::EntryHash> preparing;
    uint64_t hits = 0, misses = 0;  // calls that found a plan, calls that prepared one
};

namespace ferro::host {

// INVALID_ARGUMENT naming `context` unless `op` is a handle of `runtime`: another runtime's
// handle would run against that runtime's snapshot and plans.
void check_op_runtime(const ferro_op_impl& op, const Runtime& runtime, const std::string& context);

}  // namespace ferro::host
