#include "dispatch/dispatcher.hpp"

#include "dispatch/session.hpp"
#include "ops/core_family.hpp"
#include "runtime/runtime.hpp"
#include "support/status.hpp"

#include <fmt/format.h>

#include <cstring>
#include <vector>

namespace ferro {
namespace {

// Moves a plugin's status into a ferro::Error whose message names the op.
[[noreturn]] void rethrow(ferro_status st, const std::string& op, const char* what) {
    const uint32_t code = st->code;
    std::string message = st->message;
    free_status(st);
    if (message.rfind(op, 0) != 0) message = fmt::format("{}: {}: {}", op, what, message);
    throw Error(code, message);
}

// Calls plugin code that must not throw; an escaping exception is an ABI violation.
template <class Fn>
ferro_status call_plugin(const std::string& op, const char* what, Fn&& fn) {
    try {
        return fn();
    } catch (...) {
        throw Error(FERRO_INTERNAL, op + ": " + escaped_exception_message(what));
    }
}

// The op's entry in the snapshot of epoch `epoch` (or newer), re-resolved when the runtime
// has been reconfigured since the handle last resolved. Returns the snapshot to pin.
SnapshotPtr resolve(Runtime& runtime, ferro_op_impl& op, uint64_t epoch, const OpEntry*& entry,
                    const FamilySlot*& family) {
    std::lock_guard lock(op.mutex);
    if (op.epoch != epoch || !op.snapshot) {
        SnapshotPtr snap = runtime.snapshot();
        const OpEntry* e = snap->find_op(op.name);
        if (e == nullptr) {
            const auto dot = op.name.find('.');
            throw Error(FERRO_NOT_FOUND,
                        fmt::format("no op named '{}' (is a plugin providing family '{}' loaded?)",
                                    op.name, op.name.substr(0, dot)));
        }
        op.entry = e;
        op.family = &snap->families.at(e->family_id);
        op.epoch = snap->epoch;
        op.snapshot = std::move(snap);
        op.last_plan.reset();
        op.last_key.clear();
    }
    entry = op.entry;
    family = op.family;
    return op.snapshot;
}

void check_arity(const ferro_op_schema& s, const std::string& op, size_t n) {
    if (s.n_inputs >= 0 && n != static_cast<size_t>(s.n_inputs)) {
        throw Error(FERRO_INVALID_ARGUMENT, fmt::format("{}: expects {} input(s), got {}", op, s.n_inputs, n));
    }
    if (s.n_inputs < 0 && n < static_cast<size_t>(s.min_inputs)) {
        throw Error(FERRO_INVALID_ARGUMENT, fmt::format("{}: expects at least {} input(s), got {}", op, s.min_inputs, n));
    }
}

// The engine the call runs on: the inputs' (which must agree), or for an op without inputs
// its "engine" attribute, else cpu. The reference stays valid for the call: the inputs, or
// the pinned snapshot, hold the engine.
const EnginePtr& pick_engine(const Snapshot& snap, const ferro_op_schema& s, const std::string& op,
                             const AttrValues& attrs, std::span<ferro_tensor_impl* const> inputs) {
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i] == nullptr) throw Error(FERRO_INVALID_ARGUMENT, fmt::format("{}: input {} is NULL", op, i));
    }
    if (!inputs.empty()) {
        const EnginePtr& first = inputs[0]->storage->engine_ptr();
        for (size_t i = 1; i < inputs.size(); ++i) {
            const Engine& other = inputs[i]->storage->engine();
            if (&other != first.get()) {
                throw Error(FERRO_INVALID_ARGUMENT,
                            fmt::format("{}: input {} is on engine '{}' but input 0 is on '{}'; "
                                        "move one with to() first", op, i, other.name(), first->name()));
            }
        }
        return first;
    }
    std::string name = "cpu";
    for (uint32_t k = 0; k < s.n_attrs; ++k) {
        if (std::strcmp(s.attrs[k].name, "engine") == 0 && attrs[k].type == FERRO_ATTR_STR) name = attrs[k].v.str;
    }
    return snap.engine_named(name, op);
}

// The plan cache key, written once as a walk over 64-bit words that a sink consumes. Every
// call encodes into StackKey (plain stores into a fixed array); the op handle compares that
// with its stored key by memcmp, and only a miss copies it into a PlanKey. Keys longer than
// the array (many inputs or long attributes) are built with KeyWriter instead.
struct StackKey {
    static constexpr size_t kWords = 64;
    uint64_t words[kWords];
    size_t n = 0;
    void operator()(uint64_t w) {
        if (n < kWords) words[n] = w;
        ++n;
    }
    bool fits() const { return n <= kWords; }
    bool equals(const PlanKey& key) const {
        return fits() && key.size() == n && std::memcmp(key.data(), words, n * sizeof(uint64_t)) == 0;
    }
};
struct KeyWriter {
    PlanKey& key;
    void operator()(uint64_t w) { key.push_back(w); }
};

template <class Sink>
void encode_attr(Sink& sink, const ferro_attr_value& v) {
    sink(v.type | (uint64_t{v.count} << 32));
    switch (v.type) {
        case FERRO_ATTR_I64: sink(static_cast<uint64_t>(v.v.i64)); break;
        case FERRO_ATTR_F64: { uint64_t bits; std::memcpy(&bits, &v.v.f64, 8); sink(bits); break; }
        case FERRO_ATTR_BOOL: sink(v.v.boolean); break;
        case FERRO_ATTR_STR: {
            const size_t n = std::strlen(v.v.str);
            sink(n);
            for (size_t i = 0; i < n; i += 8) {
                uint64_t w = 0;
                std::memcpy(&w, v.v.str + i, std::min<size_t>(8, n - i));
                sink(w);
            }
            break;
        }
        case FERRO_ATTR_I64_ARRAY:
            for (uint32_t i = 0; i < v.count; ++i) sink(static_cast<uint64_t>(v.v.i64_array[i]));
            break;
        case FERRO_ATTR_F64_ARRAY:
            for (uint32_t i = 0; i < v.count; ++i) { uint64_t b; std::memcpy(&b, &v.v.f64_array[i], 8); sink(b); }
            break;
        default: break;
    }
}

// (schema, engine, epoch, attributes, input signatures). Word 2 is the epoch (the runtime
// purges older epochs by it).
template <class Sink>
void encode_key(Sink& sink, const ferro_op_schema& s, const Engine& engine, uint64_t epoch,
                const AttrValues& attrs, std::span<ferro_tensor_impl* const> inputs) {
    sink(reinterpret_cast<uintptr_t>(&s));
    sink(reinterpret_cast<uintptr_t>(&engine));
    sink(epoch);
    for (const auto& a : attrs) encode_attr(sink, a);
    sink(inputs.size());
    for (const ferro_tensor_impl* t : inputs) {
        sink(t->dtype | (uint64_t{t->shape.size()} << 32));
        for (int64_t d : t->shape) sink(static_cast<uint64_t>(d));
        for (int64_t d : t->strides) sink(static_cast<uint64_t>(d));
    }
}

std::vector<OutputSig> infer(const ferro_host_api* host, const ferro_op_schema& s,
                             const std::string& op, const AttrValues& attrs,
                             const std::vector<ferro_signature>& in) {
    const uint32_t capacity = s.n_outputs >= 0 ? static_cast<uint32_t>(s.n_outputs) : 64;
    std::vector<ferro_signature> out(capacity);
    for (auto& sig : out) sig.struct_size = sizeof sig;
    ferro_infer_args args{sizeof args, static_cast<uint32_t>(in.size()), attrs.data(), in.data(),
                          out.data(), capacity, 0};
    if (ferro_status st = call_plugin(op, "infer", [&] { return s.infer(host, &args); })) rethrow(st, op, "infer");
    if (args.n_outputs > capacity || (s.n_outputs >= 0 && args.n_outputs != capacity)) {
        throw Error(FERRO_INTERNAL, fmt::format("{}: infer reported {} outputs, the schema declares {}",
                                                op, args.n_outputs, s.n_outputs));
    }
    std::vector<OutputSig> result;
    for (uint32_t i = 0; i < args.n_outputs; ++i) {
        const auto& o = out[i];
        if (!is_valid_dtype(o.dtype) || o.ndim < 0 || o.ndim > FERRO_MAX_NDIM) {
            throw Error(FERRO_INTERNAL, fmt::format("{}: infer produced an invalid signature for output {}", op, i));
        }
        result.push_back({o.dtype, Dims(o.shape, o.shape + o.ndim)});
    }
    return result;
}

}  // namespace

Dispatcher::Dispatcher(Runtime& runtime)
    : runtime_(runtime),
      cache_(runtime.options().plan_cache_max_entries, runtime.options().plan_cache_max_bytes) {}

Outputs Dispatcher::call(ferro_op_impl& op, const ferro_named_attr* named, uint32_t n_attrs,
                         std::span<ferro_tensor_impl* const> inputs) {
    const OpEntry* entry = nullptr;
    const FamilySlot* family = nullptr;
    const SnapshotPtr snap = resolve(runtime_, op, runtime_.current_epoch(), entry, family);
    const ferro_op_schema& schema = *entry->schema;
    check_arity(schema, op.name, inputs.size());
    const AttrValues attrs = normalise_attrs(schema, op.name, named, n_attrs);
    const EnginePtr& engine = pick_engine(*snap, schema, op.name, attrs, inputs);
    if (HostOpFn host_op = core_host_op(&schema)) {
        return host_op(HostOpCall{runtime_, op.name, engine, attrs, inputs});
    }
    StackKey quick;
    encode_key(quick, schema, *engine, snap->epoch, attrs, inputs);
    PlanPtr plan;
    {
        std::lock_guard lock(op.mutex);
        if (op.last_plan && quick.equals(op.last_key)) plan = op.last_plan;
    }
    if (plan) {
        cache_.count_hit();
    } else {
        PlanKey key;
        if (quick.fits()) {
            key.assign(quick.words, quick.words + quick.n);
        } else {
            KeyWriter write{key};
            encode_key(write, schema, *engine, snap->epoch, attrs, inputs);
        }
        plan = cache_.find(key);
        if (!plan) {
            plan = prepare(*entry, *family, engine, attrs, inputs);
            cache_.insert(key, plan);
        }
        std::lock_guard lock(op.mutex);
        if (op.epoch == snap->epoch) {
            op.last_key = std::move(key);
            op.last_plan = plan;
        }
    }
    return execute(*plan, op.name, engine, attrs, inputs);
}

PlanPtr Dispatcher::prepare(const OpEntry& entry, const FamilySlot& family,
                            const EnginePtr& engine, const AttrValues& attrs,
                            std::span<ferro_tensor_impl* const> inputs) {
    const std::string& op = entry.qualified_name;
    const ferro_host_api* host = runtime_.host_api();
    std::vector<ferro_signature> in(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) fill_signature(*inputs[i], in[i]);
    std::vector<OutputSig> outputs = infer(host, *entry.schema, op, attrs, in);
    std::vector<ferro_signature> out(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
        out[i].struct_size = sizeof out[i];
        out[i].dtype = outputs[i].dtype;
        out[i].ndim = static_cast<int32_t>(outputs[i].shape.size());
        std::copy(outputs[i].shape.begin(), outputs[i].shape.end(), out[i].shape);
        const Dims strides = contiguous_strides(outputs[i].shape);
        std::copy(strides.begin(), strides.end(), out[i].strides);
    }
    std::string reasons;
    auto slots = family.modules.find(engine->name());
    if (slots != family.modules.end()) {
        for (const ModuleSlot& slot : slots->second) {
            if (!slot.module) {
                reasons += fmt::format("; {}: {}", slot.plugin, slot.decline_reason);
                continue;
            }
            char reason[512] = {};
            ferro_prepare_args args{sizeof args, entry.index, attrs.data(),
                                    static_cast<uint32_t>(in.size()), static_cast<uint32_t>(out.size()),
                                    in.data(), out.data(), reason, sizeof reason, 0};
            ferro_plan_instance inst{};
            inst.struct_size = sizeof inst;
            const Module& m = *slot.module;
            if (ferro_status st = call_plugin(op, "prepare", [&] { return m.iface().prepare(m.self(), host, &args, &inst); })) {
                rethrow(st, op, "prepare");
            }
            if (inst.iface == nullptr) {
                reasons += fmt::format("; {}: {}", slot.plugin, reason[0] ? reason : "declined");
                continue;
            }
            if (inst.iface->struct_size < FERRO_STRUCT_SIZE_UP_TO(ferro_plan_iface, destroy) ||
                inst.iface->destroy == nullptr ||
                (inst.iface->execute_in_session == nullptr && inst.iface->execute_in_context == nullptr)) {
                throw Error(FERRO_INTERNAL, fmt::format("{}: module of plugin '{}' returned a plan "
                                                        "without an executor or destroy", op, slot.plugin));
            }
            runtime_.logger().logf(FERRO_LOG_DEBUG, "dispatch", "{}: prepared by '{}' on '{}'", op,
                                   slot.plugin, engine->name());
            return std::make_shared<CachedPlan>(inst, slot.module, std::move(outputs));
        }
    }
    throw Error(FERRO_UNIMPLEMENTED,
                fmt::format("{}: no module can run it on engine '{}'{}", op, engine->name(),
                            reasons.empty() ? std::string(" (no module of family '") + family.id +
                                                  "' for this engine)"
                                            : " —" + reasons.substr(1)));
}

Outputs Dispatcher::execute(const CachedPlan& plan, const std::string& op, const EnginePtr& engine,
                            const AttrValues& attrs, std::span<ferro_tensor_impl* const> inputs) {
    Outputs outputs;
    for (const OutputSig& sig : plan.outputs()) outputs.push_back(make_tensor(engine, sig.dtype, sig.shape, op.c_str()));
    Session session(engine);
    boost::container::small_vector<ferro_tensor_view, 4> in_views, out_views;
    for (ferro_tensor_impl* t : inputs) {
        session.allow(*t->storage);
        in_views.push_back(view_of(*t));
    }
    for (const TensorPtr& t : outputs) {
        session.allow(*t->storage);
        out_views.push_back(view_of(*t));
    }
    std::shared_ptr<Storage> workspace;
    ferro_buffer_view ws{sizeof ws, 0, nullptr, 0, 0, nullptr};
    if (plan.workspace_bytes() > 0) {
        workspace = std::make_shared<Storage>(engine, plan.workspace_bytes());
        session.allow(*workspace);
        ws = {sizeof ws, 0, workspace->buffer(), 0, plan.workspace_bytes(), workspace->address()};
    }
    ferro_exec_args args{sizeof args, static_cast<uint32_t>(in_views.size()),
                         static_cast<uint32_t>(out_views.size()), 0, attrs.data(),
                         in_views.data(), out_views.data(), ws, session.get()};
    const ferro_host_api* host = runtime_.host_api();
    ferro_status st;
    if (plan.iface().execute_in_session != nullptr) {
        st = call_plugin(op, "execute", [&] { return plan.iface().execute_in_session(plan.self(), host, &args); });
    } else {
        const void* context = nullptr;
        if (engine->iface().native_context == nullptr) {
            throw Error(FERRO_UNIMPLEMENTED, fmt::format("{}: engine '{}' offers no native context "
                                                         "for a context executor", op, engine->name()));
        }
        throw_if_error(engine->iface().native_context(engine->self(), session.get()->engine_session, &context));
        st = call_plugin(op, "execute", [&] { return plan.iface().execute_in_context(plan.self(), host, &args, context); });
    }
    if (st != nullptr) rethrow(st, op, "execute");
    session.end();
    return outputs;
}

}  // namespace ferro
