// The op-call hot path (DESIGN §7): pin snapshot -> resolve op -> normalise attributes -> check
// arity, dtypes and engines -> plan cache (miss: infer + prepare through the family's modules
// for the engine) -> allocate outputs -> execute in a session. Ops the host implements itself
// (views, random numbers) take a direct path after the same checks.
#pragma once

#include "dispatch/attrs.hpp"
#include "dispatch/plan_cache.hpp"
#include "runtime/snapshot.hpp"
#include "support/spin_lock.hpp"
#include "tensor/tensor.hpp"

#include <ferro/host.h>

#include <boost/container/small_vector.hpp>

#include <array>
#include <span>
#include <string>

namespace ferro {
class Runtime;
using Outputs = boost::container::small_vector<TensorPtr, 2>;

// What a host-implemented op sees.
struct HostOpCall {
    Runtime& runtime;
    const std::string& op;  // qualified name, for messages
    const EnginePtr& engine;
    const AttrValues& attrs;
    std::span<ferro_tensor_impl* const> inputs;
};
using HostOpFn = Outputs (*)(const HostOpCall& call);

// A recent call through an op handle. Call sites repeat their calls, so a call whose key
// matches runs this plan (or host op) with these attributes on this engine directly: no
// resolution, no attribute normalisation, no shared cache. The key is the call as given
// (engine, epoch, attribute names and values before normalisation, input signatures);
// immutable once made.
struct LastCall {
    PlanKey key;
    PlanPtr plan;                // null for a host op
    HostOpFn host_op = nullptr;  // null for a plan
    EnginePtr engine;
    OwnedAttrs attrs;  // normalised, deep-copied (the caller's arrays and strings are not ours)
    const ferro_op_schema* schema;  // for recording grad nodes (the plan keeps its library loaded)
    LibraryPtr family_library;
};
}  // namespace ferro

// A resolved op name (the ABI's ferro_op). Caches its resolution per snapshot epoch (holding
// that snapshot, so the cached pointers stay valid) and its most recent plan calls: a few,
// because code that alternates signatures on one op (VJP rules do) would thrash just one.
struct ferro_op_impl {
    static constexpr size_t kRecent = 8;
    std::string name;
    ferro::Runtime* runtime = nullptr;
    ferro::SpinLock mutex;  // guards everything below
    uint64_t epoch = ~uint64_t{0};
    ferro::SnapshotPtr snapshot;
    const ferro::OpEntry* entry = nullptr;
    const ferro::FamilySlot* family = nullptr;
    std::array<std::shared_ptr<const ferro::LastCall>, kRecent> recent;
    size_t next_recent = 0;    // the entry a new call replaces (round robin)
    uint64_t repeat_hits = 0;  // calls served by `recent`, counted as plan cache hits
};

namespace ferro {

// What the tape needs to record a call: its op, schema and the library of its rules.
struct Recordable {
    const std::string& op;
    const ferro_op_schema& schema;
    const LibraryPtr& library;
};
// Runs a host op and records it when an input requires grad.
Outputs run_host_op(HostOpFn host_op, const HostOpCall& call, const Recordable& what);

class Dispatcher {
public:
    explicit Dispatcher(Runtime& runtime);

    // Calls `op` eagerly. Inputs are borrowed; outputs are new references.
    Outputs call(ferro_op_impl& op, const ferro_named_attr* attrs, uint32_t n_attrs,
                 std::span<ferro_tensor_impl* const> inputs);

    PlanCache& plan_cache() noexcept { return cache_; }

private:
    // Infers output signatures and asks the family's modules for the engine, in order.
    PlanPtr prepare(const OpEntry& entry, const FamilySlot& family,
                    const EnginePtr& engine, const AttrValues& attrs,
                    std::span<ferro_tensor_impl* const> inputs);
    // Runs a plan, recording the call when an input requires grad.
    Outputs execute(const CachedPlan& plan, const Recordable& what, const EnginePtr& engine,
                    const AttrValues& attrs, std::span<ferro_tensor_impl* const> inputs);
    // Runs a call that repeats `last`.
    Outputs repeat(const LastCall& last, const ferro_op_impl& op, std::span<ferro_tensor_impl* const> inputs);

    Runtime& runtime_;
    PlanCache cache_;
};

}  // namespace ferro
