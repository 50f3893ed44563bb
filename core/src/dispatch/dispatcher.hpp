// The op-call path (DESIGN §7, docs/architecture.md): key the call (engine, epoch, recorded
// inputs, attributes as given, input signatures) -> find it in the op handle's part of the plan
// cache -> run it. A miss resolves the op, normalises the attributes, checks arity, dtypes and
// engines, and has the family's modules for the engine prepare a plan (or takes the host op
// that implements it), once for all threads that miss on the same key.
#pragma once

#include "autodiff/node.hpp"
#include "capture/active.hpp"
#include "dispatch/attrs.hpp"
#include "dispatch/host_op.hpp"
#include "dispatch/op_handle.hpp"
#include "dispatch/plan_cache.hpp"

#include <ferro/host.h>

#include <span>
#include <string>
#include <vector>

// A bound call (the ABI's ferro_bound_call): an op handle with its attributes fixed (copied,
// checked and encoded once, at bind). Safe to run from several threads at once.
struct ferro_bound_call_impl {
    ferro_bound_call_impl(ferro_op_impl& op, const ferro_named_attr* attrs, uint32_t n_attrs);
    ferro_bound_call_impl(const ferro_bound_call_impl&) = delete;
    ferro_bound_call_impl& operator=(const ferro_bound_call_impl&) = delete;

    ferro_op_impl& op;
    std::vector<std::string> names;
    ferro::host::OwnedAttrs values;       // as given: a miss normalises them
    std::vector<ferro_named_attr> attrs;  // names[i] with values[i]
    ferro::host::KeyWords attr_words;     // the attributes' part of every run's key
    // The entry of the latest run: what a bound call ran stays prepared, and its plugin
    // loaded, while the bound call lives.
    ferro::host::SpinLock mutex;
    ferro::host::EntryPtr ran;
};

namespace ferro::host {

// Runs a host op and records it when an input requires grad; with `into`, copies its outputs
// there instead (dispatch/into.hpp) and returns none.
Outputs run_host_op(HostOpFn host_op, const HostOpCall& call, const Recordable& what,
                    std::span<ferro_tensor_impl* const> into = {});

class Dispatcher {
public:
    explicit Dispatcher(Runtime& runtime);

    // Calls `op` eagerly. Inputs are borrowed; outputs are new references. With `into` (one
    // tensor per output), writes the outputs there and returns none (dispatch/into.hpp).
    Outputs call(ferro_op_impl& op, const ferro_named_attr* attrs, uint32_t n_attrs, std::span<ferro_tensor_impl* const> inputs,
                 std::span<ferro_tensor_impl* const> into = {}) {
        if (any_capture()) [[unlikely]]
            return call_recorded(*this, op, attrs, n_attrs, inputs, into);
        return call_keyed(op, nullptr, attrs, n_attrs, inputs, into);
    }
    // call() as capture makes it: never recorded, handing back the entry it ran when asked.
    Outputs call_unrecorded(ferro_op_impl& op, const ferro_named_attr* attrs, uint32_t n_attrs,
                            std::span<ferro_tensor_impl* const> inputs, std::span<ferro_tensor_impl* const> into,
                            EntryPtr* ran = nullptr) {
        return call_keyed(op, nullptr, attrs, n_attrs, inputs, into, ran);
    }
    // The entry a bound call's run on these inputs would run, prepared (and cached) but not run.
    EntryPtr prepare_entry(ferro_bound_call_impl& bound, std::span<ferro_tensor_impl* const> inputs);
    // Runs an entry made by an earlier call on inputs of that call's signatures (replay).
    Outputs run_entry(const PlanEntry& entry, std::span<ferro_tensor_impl* const> inputs);
    // Runs a bound call, as call() would with its attributes.
    Outputs run(ferro_bound_call_impl& bound, std::span<ferro_tensor_impl* const> inputs,
                std::span<ferro_tensor_impl* const> into = {});
    // Checks the attributes against the op's schema (INVALID_ARGUMENT as a call would say).
    void check_attrs(ferro_op_impl& op, const ferro_named_attr* attrs, uint32_t n_attrs);

    PlanCache& plan_cache() noexcept { return cache_; }

private:
    // The call: its key made (with `attr_words`, a bound call's attributes encoded before),
    // found in the handle's entries, else made by miss() and cached; then run. `ran`, when
    // given, receives the entry.
    Outputs call_keyed(ferro_op_impl& op, const KeyWords* attr_words, const ferro_named_attr* named, uint32_t n_attrs,
                       std::span<ferro_tensor_impl* const> inputs, std::span<ferro_tensor_impl* const> into,
                       EntryPtr* ran = nullptr);
    // The entry of the call (its key found in the handle's entries, else made by miss() and
    // cached), without running it.
    EntryPtr find_entry(ferro_op_impl& op, const KeyWords* attr_words, const ferro_named_attr* named, uint32_t n_attrs,
                        std::span<ferro_tensor_impl* const> inputs, std::span<ferro_tensor_impl* const> into);
    // Resolves the op for the call and makes its entry: normalised attributes, engine, and the
    // plan a module prepares (or the host op).
    EntryPtr miss(ferro_op_impl& op, const PlanKey& key, const ferro_named_attr* named, uint32_t n_attrs,
                  std::span<ferro_tensor_impl* const> inputs);
    // Infers output signatures and asks the family's modules for the engine, in order.
    // `recorded_inputs` (ABI 1.8): the inputs the tape records the call for, when a module of
    // the family may keep residuals; 0 otherwise.
    PlanPtr prepare(const OpEntry& entry, const FamilySlot& family, const EnginePtr& engine, const AttrValues& attrs,
                    std::span<ferro_tensor_impl* const> inputs, uint64_t recorded_inputs);
    // Runs an entry's host op or plan on these inputs.
    Outputs run_entry(const PlanEntry& entry, const std::string& op, std::span<ferro_tensor_impl* const> inputs,
                      std::span<ferro_tensor_impl* const> into);
    // Runs a plan, recording the call when an input requires grad.
    Outputs execute(const CachedPlan& plan, const Recordable& what, const EnginePtr& engine, const AttrValues& attrs,
                    std::span<ferro_tensor_impl* const> inputs, std::span<ferro_tensor_impl* const> into);

    Runtime& runtime_;
    PlanCache cache_;
};

}  // namespace ferro::host
