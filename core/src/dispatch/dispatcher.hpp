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
#include <memory>
#include <span>
#include <string>
#include <vector>

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
struct ferro_op_impl;

namespace ferro {
// INVALID_ARGUMENT naming `context` unless `op` is a handle of `runtime`: another runtime's
// handle would run against that runtime's snapshot and plans.
void check_op_runtime(const ferro_op_impl& op, const Runtime& runtime, const std::string& context);
}  // namespace ferro

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
// Runs a host op and records it when an input requires grad; with `into`, copies its outputs
// there instead (dispatch/into.hpp) and returns none.
Outputs run_host_op(HostOpFn host_op, const HostOpCall& call, const Recordable& what,
                    std::span<ferro_tensor_impl* const> into = {});

}  // namespace ferro

// A bound call (the ABI's ferro_bound_call): an op handle with its attributes fixed (copied
// and checked once, at bind), and the call its last run made. A run on inputs of that run's
// signature, on the same engine and in the same epoch, executes its plan at once: no
// attribute encoding and no search of the handle's recent calls. Safe to run from several
// threads at once.
struct ferro_bound_call_impl {
    ferro_bound_call_impl(ferro_op_impl& op, const ferro_named_attr* attrs, uint32_t n_attrs);
    ferro_bound_call_impl(const ferro_bound_call_impl&) = delete;
    ferro_bound_call_impl& operator=(const ferro_bound_call_impl&) = delete;

    ferro_op_impl& op;
    std::vector<std::string> names;
    ferro::OwnedAttrs values;  // as given: the full path normalises them
    std::vector<ferro_named_attr> attrs;  // names[i] with values[i]
    ferro::SpinLock mutex;  // guards the two below
    ferro::PlanKey key;     // (engine, epoch, input signatures) of the call in `last`
    std::shared_ptr<const ferro::LastCall> last;
};

namespace ferro {

class Dispatcher {
public:
    explicit Dispatcher(Runtime& runtime);

    // Calls `op` eagerly. Inputs are borrowed; outputs are new references. With `into` (one
    // tensor per output), writes the outputs there and returns none (dispatch/into.hpp).
    // `used`, when given, receives the call it ran when a repeat could run it again.
    Outputs call(ferro_op_impl& op, const ferro_named_attr* attrs, uint32_t n_attrs,
                 std::span<ferro_tensor_impl* const> inputs, std::span<ferro_tensor_impl* const> into = {},
                 std::shared_ptr<const LastCall>* used = nullptr);
    // Checks the attributes against the op's schema (INVALID_ARGUMENT as a call would say).
    void check_attrs(ferro_op_impl& op, const ferro_named_attr* attrs, uint32_t n_attrs);
    // Runs a bound call, as call() would with its attributes.
    Outputs run(ferro_bound_call_impl& bound, std::span<ferro_tensor_impl* const> inputs,
                std::span<ferro_tensor_impl* const> into = {});

    PlanCache& plan_cache() noexcept { return cache_; }

private:
    // Infers output signatures and asks the family's modules for the engine, in order.
    // `recorded_inputs` (ABI 1.8): the inputs the tape records the call for, when a module of
    // the family may keep residuals; 0 otherwise.
    PlanPtr prepare(const OpEntry& entry, const FamilySlot& family,
                    const EnginePtr& engine, const AttrValues& attrs,
                    std::span<ferro_tensor_impl* const> inputs, uint64_t recorded_inputs);
    // Runs a plan, recording the call when an input requires grad.
    Outputs execute(const CachedPlan& plan, const Recordable& what, const EnginePtr& engine,
                    const AttrValues& attrs, std::span<ferro_tensor_impl* const> inputs,
                    std::span<ferro_tensor_impl* const> into);
    // Runs a call that repeats `last`.
    Outputs repeat(const LastCall& last, const ferro_op_impl& op, std::span<ferro_tensor_impl* const> inputs,
                   std::span<ferro_tensor_impl* const> into);

    Runtime& runtime_;
    PlanCache cache_;
};

}  // namespace ferro
