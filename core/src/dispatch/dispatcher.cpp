#include "dispatch/dispatcher.hpp"

#include "autodiff/grad_mode.hpp"
#include "autodiff/node.hpp"
#include "ops/core_family.hpp"
#include "runtime/runtime.hpp"
#include "support/status.hpp"

#include <fmt/format.h>

#include <cstring>
#include <utility>

namespace ferro::host {

void check_op_runtime(const ferro_op_impl& op, const Runtime& runtime, const std::string& context) {
    if (op.runtime == &runtime) return;
    throw Error(FERRO_INVALID_ARGUMENT,
                fmt::format("{}: the op handle belongs to runtime {}, not to runtime {} that the call is made on "
                            "(find the op on this runtime)",
                            context, op.runtime->id(), runtime.id()));
}

namespace {

// Resolves `op` against the runtime's current snapshot unless the handle already is; returns
// the epoch of its resolution. NOT_FOUND when the snapshot has no such op.
uint64_t resolve(Runtime& runtime, ferro_op_impl& op) {
    SnapshotPtr snap = runtime.snapshot();
    const OpEntry* entry = snap->find_op(op.name);
    if (entry == nullptr) throw Error(FERRO_NOT_FOUND, snap->missing_op_message(op.name));
    const FamilySlot* family = &snap->families.at(entry->family_id);
    decltype(op.residual_engines) residual_engines;
    for (const auto& [engine, slots] : family->modules) {
        for (const ModuleSlot& slot : slots) {
            if (!slot.module) continue;
            const ferro_module_iface& iface = slot.module->iface();
            if (FERRO_HAS_FIELD(&iface, ferro_module_iface, flags) && (iface.flags & FERRO_MODULE_KEEPS_RESIDUALS) != 0) {
                residual_engines.push_back(snap->find_engine(engine));
                break;
            }
        }
    }
    // Released after the lock: the last reference to a snapshot or entry runs plugin code.
    EntryPtr last;
    const uint64_t epoch = snap->epoch;
    std::lock_guard lock(op.mutex);
    if (op.epoch == epoch) return epoch;
    op.epoch = epoch;
    op.entry = entry;
    op.family = family;
    op.residual_engines = std::move(residual_engines);
    std::swap(op.snapshot, snap);
    std::swap(op.last, last);
    return epoch;
}

void check_arity(const ferro_op_schema& s, const std::string& op, size_t n) {
    if (s.n_inputs >= 0 && n != static_cast<size_t>(s.n_inputs)) {
        throw Error(FERRO_INVALID_ARGUMENT, fmt::format("{}: expects {} input(s), got {}", op, s.n_inputs, n));
    }
    if (s.n_inputs < 0 && n < static_cast<size_t>(s.min_inputs)) {
        throw Error(FERRO_INVALID_ARGUMENT, fmt::format("{}: expects at least {} input(s), got {}", op, s.min_inputs, n));
    }
}

// The engine the call runs on: the inputs' (which must agree and belong to `runtime`), or for
// an op without inputs its "engine" attribute, else cpu. The reference stays valid for the
// call: the inputs, or the pinned snapshot, hold the engine.
const EnginePtr& pick_engine(const Runtime& runtime, const Snapshot& snap, const ferro_op_schema& s, const std::string& op,
                             const AttrValues& attrs, std::span<ferro_tensor_impl* const> inputs) {
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i] == nullptr) throw Error(FERRO_INVALID_ARGUMENT, fmt::format("{}: input {} is NULL", op, i));
    }
    if (!inputs.empty()) {
        const EnginePtr& first = inputs[0]->storage->engine_ptr();
        for (size_t i = 1; i < inputs.size(); ++i) {
            const Engine& other = inputs[i]->storage->engine();
            if (&other == first.get()) continue;
            if (other.runtime_id() != first->runtime_id()) {
                throw Error(FERRO_INVALID_ARGUMENT,
                            fmt::format("{}: input {} belongs to runtime {} but input 0 to runtime {}; a runtime's "
                                        "calls take its own tensors only (copy through host memory or DLPack)",
                                        op, i, other.runtime_id(), first->runtime_id()));
            }
            throw Error(FERRO_INVALID_ARGUMENT, fmt::format("{}: input {} is on engine '{}' but input 0 is on '{}'; "
                                                            "move one with to() first",
                                                            op, i, other.name(), first->name()));
        }
        check_runtime(runtime.id(), *first, op, "input 0");
        return first;
    }
    std::string name = "cpu";
    for (uint32_t k = 0; k < s.n_attrs; ++k) {
        if (std::strcmp(s.attrs[k].name, "engine") == 0 && attrs[k].type == FERRO_ATTR_STR) name = attrs[k].v.str;
    }
    return snap.engine_named(name, op);
}

// The inputs the tape would record this call for, whatever the op (FERRO_MASK_BIT i: input i
// requires grad, grad mode is on and the outputs are new): part of a call's key, since a
// module may prepare a recorded call differently (ABI 1.8, residuals).
uint64_t recorded_mask(std::span<ferro_tensor_impl* const> inputs, std::span<ferro_tensor_impl* const> into) {
    if (!into.empty() || !any_autograd(inputs) || !grad_enabled()) return 0;
    uint64_t mask = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (requires_grad(*inputs[i])) mask |= FERRO_MASK_BIT(i);
    }
    return mask;
}

// The engine all inputs share, or null when there are none, one is NULL or they disagree
// (the full path reports those).
const Engine* common_engine(std::span<ferro_tensor_impl* const> inputs) {
    if (inputs.empty() || inputs[0] == nullptr) return nullptr;
    const Engine* engine = &inputs[0]->storage->engine();
    for (size_t i = 1; i < inputs.size(); ++i) {
        if (inputs[i] == nullptr || &inputs[i]->storage->engine() != engine) return nullptr;
    }
    return engine;
}
// The inputs whose recording makes this call a call of its own: the recorded ones the op can
// differentiate, when a module of its family on `engine` keeps residuals (ABI 1.8). The
// handle's lock is held and its resolution current.
uint64_t recorded_key(const ferro_op_impl& op, const Engine* engine, uint64_t recorded) {
    const ferro_op_schema& s = *op.entry->schema;
    if (s.vjp == nullptr) return 0;
    for (const Engine* e : op.residual_engines) {
        if (e == engine) return recorded & s.diff_inputs;
    }
    return 0;
}

}  // namespace

Dispatcher::Dispatcher(Runtime& runtime)
    : runtime_(runtime),
      cache_(runtime.options().plan_cache_max_entries, runtime.options().plan_cache_max_bytes, runtime.epoch_counter()) {}

inline Outputs Dispatcher::run_entry(const PlanEntry& entry, const std::string& op, std::span<ferro_tensor_impl* const> inputs,
                                     std::span<ferro_tensor_impl* const> into) {
    const Recordable what{op, *entry.schema, entry.family_library, entry.rule_ops};
    if (entry.host_op) {
        return run_host_op(entry.host_op, HostOpCall{runtime_, op, entry.engine, entry.attrs.values(), inputs}, what, into);
    }
    return execute(*entry.plan, what, entry.engine, entry.attrs.values(), inputs, into);
}

EntryPtr Dispatcher::prepare_entry(ferro_bound_call_impl& bound, std::span<ferro_tensor_impl* const> inputs) {
    return find_entry(bound.op, &bound.attr_words, bound.attrs.data(), static_cast<uint32_t>(bound.attrs.size()), inputs, {});
}

Outputs Dispatcher::run_entry(const PlanEntry& entry, std::span<ferro_tensor_impl* const> inputs) {
    return run_entry(entry, entry.op->name, inputs, {});
}

Outputs Dispatcher::run(ferro_bound_call_impl& bound, std::span<ferro_tensor_impl* const> inputs,
                        std::span<ferro_tensor_impl* const> into) {
    if (any_capture()) [[unlikely]] {
        return call_recorded(*this, bound.op, bound.attrs.data(), static_cast<uint32_t>(bound.attrs.size()), inputs, into);
    }
    // Kept once the call has returned (a destructor, so that the outputs are returned in place).
    struct Keep {
        ferro_bound_call_impl& bound;
        EntryPtr ran;
        ~Keep() {
            if (!ran) return;
            std::lock_guard lock(bound.mutex);
            std::swap(bound.ran, ran);  // the entry it replaces is released after the lock
        }
    } keep{bound, nullptr};
    return call_keyed(bound.op, &bound.attr_words, bound.attrs.data(), static_cast<uint32_t>(bound.attrs.size()), inputs, into,
                      &keep.ran);
}

// Inlined into call_keyed: a call of its own cost every eager call ~30 instructions.
[[gnu::always_inline]] inline EntryPtr Dispatcher::find_entry(ferro_op_impl& op, const KeyWords* attr_words,
                                                              const ferro_named_attr* named, uint32_t n_attrs,
                                                              std::span<ferro_tensor_impl* const> inputs,
                                                              std::span<ferro_tensor_impl* const> into) {
    const Engine* engine = common_engine(inputs);
    PlanKey key;
    if (engine != nullptr || inputs.empty()) encode_call(key, attr_words, named, n_attrs, inputs);
    if (!key.valid || (engine == nullptr && !inputs.empty())) {
        // Not a call that can succeed (a NULL argument, inputs on two engines): the full path
        // says why.
        return miss(op, key, named, n_attrs, inputs);
    }
    key.engine = engine;
    key.epoch = runtime_.current_epoch();
    const uint64_t recorded = engine != nullptr ? recorded_mask(inputs, into) : 0;

    // One pass under the handle's lock, once its resolution is of the key's epoch: the entry
    // (the latest call's first: call sites repeat), else a prepare in flight to wait for, else
    // this thread's own prepare, registered.
    EntryPtr found;
    std::shared_ptr<Preparing> pending, mine;
    for (bool current = false; !current;) {
        {
            std::lock_guard lock(op.mutex);
            current = op.epoch == key.epoch;
            if (current) {
                if (recorded != 0) key.recorded = recorded_key(op, engine, recorded);
                if (op.last && op.last->key.same_call(key)) {
                    found = op.last;
                } else {
                    hash_key(key);
                    if (const auto it = op.entries.find(key); it != op.entries.end()) {
                        found = op.last = *it;
                    } else if (const auto p = op.preparing.find(key); p != op.preparing.end()) {
                        // Unless this thread prepares it, and its prepare calls the op again
                        // with the same key: that call is made uncached.
                        if (p->second->owner != std::this_thread::get_id()) pending = p->second;
                    } else {
                        mine = std::make_shared<Preparing>();
                        mine->owner = std::this_thread::get_id();
                        op.preparing.emplace(key, mine);
                    }
                }
                if (found) {
                    if (found->plan) ++op.hits;
                    if (!found->used.load(std::memory_order_relaxed)) found->used.store(true, std::memory_order_relaxed);
                }
            }
        }
        if (!current) key.epoch = resolve(runtime_, op);
    }
    if (found) return found;
    if (pending) {
        found = pending->entry.get();  // rethrows the preparing thread's failure
        if (found->plan) {
            std::lock_guard lock(op.mutex);
            ++op.hits;
        }
        return found;
    }
    // A miss, prepared by this thread; the others that miss on the key meanwhile wait above.
    const auto done = [&](const EntryPtr& entry) {
        if (!mine) return;
        std::shared_ptr<Preparing> finished;
        {
            std::lock_guard lock(op.mutex);
            if (entry && entry->plan) ++op.misses;
            if (const auto p = op.preparing.find(key); p != op.preparing.end() && p->second == mine) {
                finished = std::move(p->second);
                op.preparing.erase(p);
            }
        }
        if (entry) mine->promise.set_value(entry);
        else mine->promise.set_exception(std::current_exception());
    };
    try {
        found = miss(op, key, named, n_attrs, inputs);
    } catch (...) {
        done(nullptr);
        throw;
    }
    cache_.insert(found);
    done(found);
    return found;
}

Outputs Dispatcher::call_keyed(ferro_op_impl& op, const KeyWords* attr_words, const ferro_named_attr* named, uint32_t n_attrs,
                               std::span<ferro_tensor_impl* const> inputs, std::span<ferro_tensor_impl* const> into,
                               EntryPtr* ran) {
    const EntryPtr entry = find_entry(op, attr_words, named, n_attrs, inputs, into);
    if (ran != nullptr) *ran = entry;
    return run_entry(*entry, op.name, inputs, into);
}

EntryPtr Dispatcher::miss(ferro_op_impl& op, const PlanKey& key, const ferro_named_attr* named, uint32_t n_attrs,
                          std::span<ferro_tensor_impl* const> inputs) {
    SnapshotPtr snap;
    const OpEntry* entry = nullptr;
    const FamilySlot* family = nullptr;
    for (bool resolved = false;; resolved = true) {
        {
            std::lock_guard lock(op.mutex);
            if (op.snapshot && (resolved || op.epoch == runtime_.current_epoch())) {
                snap = op.snapshot;
                entry = op.entry;
                family = op.family;
                break;
            }
        }
        resolve(runtime_, op);
    }
    const ferro_op_schema& schema = *entry->schema;
    check_arity(schema, op.name, inputs.size());
    const AttrValues attrs = normalise_attrs(schema, op.name, named, n_attrs);
    auto made = std::make_shared<PlanEntry>(attrs);
    made->engine = pick_engine(runtime_, *snap, schema, op.name, attrs, inputs);
    made->host_op = entry->host_op;
    if (!made->host_op) {
        try {
            made->plan = prepare(*entry, *family, made->engine, attrs, inputs, key.recorded);
        } catch (Error& e) {
            e.annotate(FERRO_PHASE_PREPARE);
            throw;
        }
    }
    made->key = key;
    made->schema = &schema;
    made->family_library = family->library;
    made->rule_ops = entry->rule_ops;
    made->op = &op;
    return made;
}

void Dispatcher::check_attrs(ferro_op_impl& op, const ferro_named_attr* named, uint32_t n_attrs) {
    resolve(runtime_, op);
    SnapshotPtr snap;  // pins the schema
    const ferro_op_schema* schema = nullptr;
    {
        std::lock_guard lock(op.mutex);
        snap = op.snapshot;
        schema = op.entry->schema;
    }
    (void)normalise_attrs(*schema, op.name, named, n_attrs);
}

}  // namespace ferro::host

namespace {

ferro::host::AttrValues given_values(const ferro_named_attr* attrs, uint32_t n_attrs) {
    ferro::host::AttrValues values;
    for (uint32_t i = 0; i < n_attrs; ++i) values.push_back(attrs[i].value);
    return values;
}

}  // namespace

// The caller has checked the attributes (Dispatcher::check_attrs): no NULL name, string or array.
ferro_bound_call_impl::ferro_bound_call_impl(ferro_op_impl& handle, const ferro_named_attr* given, uint32_t n_attrs)
    : op(handle), values(given_values(given, n_attrs)) {
    names.reserve(n_attrs);
    for (uint32_t i = 0; i < n_attrs; ++i) {
        names.emplace_back(given[i].name);
        attrs.push_back({names.back().c_str(), values.values()[i]});
    }
    attr_words = ferro::host::encode_attrs(attrs.data(), n_attrs);
}
