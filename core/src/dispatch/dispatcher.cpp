#include "dispatch/dispatcher.hpp"

#include "autodiff/grad_mode.hpp"
#include "autodiff/node.hpp"
#include "dispatch/into.hpp"
#include "dispatch/session.hpp"
#include "host_api/host_api.hpp"
#include "ops/core_family.hpp"
#include "runtime/runtime.hpp"
#include "support/status.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace ferro {
namespace {

// Moves a plugin's status into a ferro::Error whose message names the op.
// Rethrows a plugin's failure with the qualified op name in front, once. A plugin may name the
// op itself ("linalg.solve: ..."), or by its family or its own name ("einsum: ...", as users
// spell the call): that prefix gives way to the qualified name. Which stage failed (infer,
// prepare, execute) is the host's business, not the user's: it goes to the debug log.
[[noreturn]] void rethrow(ferro_status st, const std::string& op, const char* stage, const ferro_host_api* host) {
    const uint32_t code = st->code;
    std::string message = st->message;
    free_status(st);
    runtime_of(host).logger().logf(FERRO_LOG_DEBUG, "dispatch", "{}: {} failed: {}", op, stage, message);
    const auto dot = op.find('.');
    for (const std::string& prefix : {op, op.substr(0, dot), op.substr(dot + 1)}) {
        if (message.rfind(prefix + ": ", 0) == 0) {
            message.erase(0, prefix.size() + 2);
            break;
        }
    }
    throw Error(code, op + ": " + message);
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
    // Dropped calls (and the snapshot they replace) are destroyed after the lock is released:
    // destroying a plan runs plugin code.
    decltype(op.recent) dropped;
    SnapshotPtr previous;
    std::lock_guard lock(op.mutex);
    if (op.epoch != epoch || !op.snapshot) {
        SnapshotPtr snap = runtime.snapshot();
        const OpEntry* e = snap->find_op(op.name);
        if (e == nullptr) throw Error(FERRO_NOT_FOUND, snap->missing_op_message(op.name));
        op.entry = e;
        op.family = &snap->families.at(e->family_id);
        op.epoch = snap->epoch;
        previous = std::exchange(op.snapshot, std::move(snap));
        dropped.swap(op.recent);
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

}  // namespace

void check_op_runtime(const ferro_op_impl& op, const Runtime& runtime, const std::string& context) {
    if (op.runtime == &runtime) return;
    throw Error(FERRO_INVALID_ARGUMENT,
                fmt::format("{}: the op handle belongs to runtime {}, not to runtime {} that the call is made on "
                            "(find the op on this runtime)",
                            context, op.runtime->id(), runtime.id()));
}

namespace {

// The engine the call runs on: the inputs' (which must agree and belong to `runtime`), or for
// an op without inputs its "engine" attribute, else cpu. The reference stays valid for the
// call: the inputs, or the pinned snapshot, hold the engine.
const EnginePtr& pick_engine(const Runtime& runtime, const Snapshot& snap, const ferro_op_schema& s,
                             const std::string& op, const AttrValues& attrs,
                             std::span<ferro_tensor_impl* const> inputs) {
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
            throw Error(FERRO_INVALID_ARGUMENT,
                        fmt::format("{}: input {} is on engine '{}' but input 0 is on '{}'; "
                                    "move one with to() first", op, i, other.name(), first->name()));
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

// Keys are walks over 64-bit words that a sink consumes (KeyWriter stores them; the repeated-
// call path encodes a call once and compares the words). A sink is told to reject a call that
// has something no valid call has (a NULL name, string or array), which then never matches
// and is never stored; the full path reports it.
//
// KeyWriter writes through its own pointers and sizes the key once at the end: push_back
// would keep the key's size in memory, where every word stored may alias it (both are 64-bit
// integers), so each word waited for the last one's size update; that wait was a third of the
// dispatcher's own time in a repeated fft call.
class KeyWriter {
public:
    [[gnu::always_inline]] explicit KeyWriter(PlanKey& key) : key_(key) {
        key_.resize(key_.capacity(), boost::container::default_init);
        next_ = key_.data();
        end_ = next_ + key_.size();
    }
    KeyWriter(const KeyWriter&) = delete;
    KeyWriter& operator=(const KeyWriter&) = delete;
    ~KeyWriter() { finish(); }

    void operator()(uint64_t w) {
        if (next_ == end_) grow();
        *next_++ = w;
    }
    void reject() { rejected_ = true; }
    bool rejected() const { return rejected_; }
    // Trims the key to the words written; call before reading it.
    [[gnu::always_inline]] void finish() {
        if (next_ == nullptr) return;
        key_.resize(static_cast<size_t>(next_ - key_.data()));
        next_ = end_ = nullptr;
    }

private:
    void grow() {
        const size_t used = key_.size();
        key_.resize(2 * used, boost::container::default_init);
        next_ = key_.data() + used;
        end_ = key_.data() + key_.size();
    }
    PlanKey& key_;
    uint64_t* next_ = nullptr;
    uint64_t* end_ = nullptr;
    bool rejected_ = false;
};

// A sink that compares the words with a stored key instead of storing them.
class KeyMatcher {
public:
    explicit KeyMatcher(const PlanKey& key) : next_(key.data()), end_(key.data() + key.size()) {}
    void operator()(uint64_t w) {
        if (next_ != end_) differ_ |= *next_++ ^ w;
        else differ_ = 1;
    }
    void reject() { differ_ = 1; }
    bool matched() const { return differ_ == 0 && next_ == end_; }

private:
    const uint64_t* next_;
    const uint64_t* end_;
    uint64_t differ_ = 0;  // nonzero once a word differs (or the call has more words)
};

// The `n` (1 to 8) bytes at `p` as a word, zero above them (little-endian: byte i at bits 8i).
// Built from whole loads that may overlap: copying the bytes into a zeroed word and reading it
// back stalled on the narrow stores (it was half of encode_str's time).
uint64_t word_of(const char* p, size_t n) {
    if (n == 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        return w;
    }
    if (n >= 4) {
        uint32_t lo, hi;
        std::memcpy(&lo, p, 4);
        std::memcpy(&hi, p + n - 4, 4);
        return lo | uint64_t{hi} << (8 * (n - 4));
    }
    const auto byte = [p](size_t i) { return uint64_t{static_cast<unsigned char>(p[i])} << (8 * i); };
    return byte(0) | byte(n / 2) | byte(n - 1);
}

template <class Sink>
void encode_str(Sink& sink, const char* s) {
    if (s == nullptr) return sink.reject();
    const size_t n = std::strlen(s);
    sink(n);
    for (size_t i = 0; i < n; i += 8) sink(word_of(s + i, std::min<size_t>(8, n - i)));
}

template <class Sink>
void encode_attr(Sink& sink, const ferro_attr_value& v) {
    sink(v.type | (uint64_t{v.count} << 32));
    const bool is_array = v.type == FERRO_ATTR_I64_ARRAY || v.type == FERRO_ATTR_F64_ARRAY;
    if (is_array && v.count > 0 && v.v.i64_array == nullptr) return sink.reject();
    switch (v.type) {
        case FERRO_ATTR_I64: sink(static_cast<uint64_t>(v.v.i64)); break;
        case FERRO_ATTR_F64: { uint64_t bits; std::memcpy(&bits, &v.v.f64, 8); sink(bits); break; }
        case FERRO_ATTR_BOOL: sink(v.v.boolean); break;
        case FERRO_ATTR_STR: encode_str(sink, v.v.str); break;
        case FERRO_ATTR_I64_ARRAY:
            for (uint32_t i = 0; i < v.count; ++i) sink(static_cast<uint64_t>(v.v.i64_array[i]));
            break;
        case FERRO_ATTR_F64_ARRAY:
            for (uint32_t i = 0; i < v.count; ++i) { uint64_t b; std::memcpy(&b, &v.v.f64_array[i], 8); sink(b); }
            break;
        default: break;
    }
}

template <class Sink>
void encode_inputs(Sink& sink, std::span<ferro_tensor_impl* const> inputs) {
    sink(inputs.size());
    for (const ferro_tensor_impl* t : inputs) {
        sink(t->dtype | (uint64_t{t->shape.size()} << 32));
        for (int64_t d : t->shape) sink(static_cast<uint64_t>(d));
        for (int64_t d : t->strides) sink(static_cast<uint64_t>(d));
    }
}

// The key of a call as given, for LastCall: (engine, epoch, recorded inputs, named attributes,
// inputs). Two calls with equal keys normalise to the same attributes and prepare the same plan.
template <class Sink>
void encode_call(Sink& sink, const Engine& engine, uint64_t epoch, uint64_t recorded, const ferro_named_attr* named,
                 uint32_t n_attrs, std::span<ferro_tensor_impl* const> inputs) {
    sink(reinterpret_cast<uintptr_t>(&engine));
    sink(epoch);
    sink(recorded);
    sink(n_attrs);
    if (n_attrs > 0 && named == nullptr) return sink.reject();
    for (uint32_t i = 0; i < n_attrs; ++i) {
        encode_str(sink, named[i].name);
        encode_attr(sink, named[i].value);
    }
    encode_inputs(sink, inputs);
}

// The key of a bound call's run: (engine, epoch, recorded inputs, inputs).
template <class Sink>
void encode_run(Sink& sink, const Engine& engine, uint64_t epoch, uint64_t recorded,
                std::span<ferro_tensor_impl* const> inputs) {
    sink(reinterpret_cast<uintptr_t>(&engine));
    sink(epoch);
    sink(recorded);
    encode_inputs(sink, inputs);
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

// (schema, engine, epoch, recorded inputs, attributes, input signatures). Word 2 is the epoch
// (the runtime purges older epochs by it).
template <class Sink>
void encode_key(Sink& sink, const ferro_op_schema& s, const Engine& engine, uint64_t epoch, uint64_t recorded_inputs,
                const AttrValues& attrs, std::span<ferro_tensor_impl* const> inputs) {
    sink(reinterpret_cast<uintptr_t>(&s));
    sink(reinterpret_cast<uintptr_t>(&engine));
    sink(epoch);
    sink(recorded_inputs);
    for (const auto& a : attrs) encode_attr(sink, a);
    encode_inputs(sink, inputs);
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

// Whether a module of `family` on `engine` may keep residuals: only then does a recorded call
// get a plan of its own (the others would plan the same call twice).
bool keeps_residuals(const FamilySlot& family, const Engine& engine) {
    const auto slots = family.modules.find(engine.name());
    if (slots == family.modules.end()) return false;
    for (const ModuleSlot& slot : slots->second) {
        if (!slot.module) continue;
        const ferro_module_iface& iface = slot.module->iface();
        if (FERRO_HAS_FIELD(&iface, ferro_module_iface, flags) && (iface.flags & FERRO_MODULE_KEEPS_RESIDUALS) != 0) {
            return true;
        }
    }
    return false;
}

// A signature a plugin produced (an output from infer, a residual from prepare), checked.
OutputSig checked_signature(const ferro_signature& o, const std::string& op, const char* phase, const char* what,
                            size_t i) {
    if (!is_valid_dtype(o.dtype) || o.ndim < 0 || o.ndim > FERRO_MAX_NDIM) {
        throw Error(FERRO_INTERNAL, fmt::format("{}: {} produced an invalid signature for {} {}", op, phase, what, i));
    }
    Dims shape(o.shape, o.shape + o.ndim);
    const uint64_t bytes = checked_bytes(o.dtype, span_of(shape), op.c_str());
    return {o.dtype, shape, contiguous_strides(shape), bytes};
}

std::vector<OutputSig> infer(const ferro_host_api* host, const ferro_op_schema& s,
                             const std::string& op, const AttrValues& attrs,
                             const std::vector<ferro_signature>& in) {
    const uint32_t capacity = s.n_outputs >= 0 ? static_cast<uint32_t>(s.n_outputs) : 64;
    std::vector<ferro_signature> out(capacity);
    for (auto& sig : out) sig.struct_size = sizeof sig;
    ferro_infer_args args{sizeof args, static_cast<uint32_t>(in.size()), attrs.data(), in.data(),
                          out.data(), capacity, 0, &s};
    if (ferro_status st = call_plugin(op, "infer", [&] { return s.infer(host, &args); })) rethrow(st, op, "infer", host);
    if (args.n_outputs > capacity || (s.n_outputs >= 0 && args.n_outputs != capacity)) {
        throw Error(FERRO_INTERNAL, fmt::format("{}: infer reported {} outputs, the schema declares {}",
                                                op, args.n_outputs, s.n_outputs));
    }
    std::vector<OutputSig> result;
    for (uint32_t i = 0; i < args.n_outputs; ++i) result.push_back(checked_signature(out[i], op, "infer", "output", i));
    return result;
}

// Whether `strides` lay out `shape` densely: the axes longer than 1, from the largest stride
// down, nest exactly with the innermost at stride 1 (size-1 axes may have any stride).
bool dense_layout(const Dims& shape, std::span<const int64_t> strides) {
    std::vector<size_t> axes;
    for (size_t a = 0; a < shape.size(); ++a) {
        if (shape[a] > 1) axes.push_back(a);
    }
    std::sort(axes.begin(), axes.end(), [&](size_t x, size_t y) { return strides[x] > strides[y]; });
    int64_t expected = 1;
    for (size_t i = axes.size(); i-- > 0;) {
        if (strides[axes[i]] != expected) return false;
        expected *= shape[axes[i]];
    }
    return true;
}

// The strides prepare chose for each output (ABI 1.1), checked; row-major when unchanged or empty.
void take_output_strides(std::vector<OutputSig>& outputs, const std::vector<int64_t>& chosen,
                         const std::string& op, const std::string& plugin) {
    for (size_t i = 0; i < outputs.size(); ++i) {
        OutputSig& o = outputs[i];
        const std::span<const int64_t> s(chosen.data() + i * FERRO_MAX_NDIM, o.shape.size());
        if (std::equal(s.begin(), s.end(), o.strides.begin(), o.strides.end())) continue;
        int64_t numel = 1;
        for (int64_t d : o.shape) numel *= d;
        if (numel == 0) continue;
        if (!dense_layout(o.shape, s)) {
            throw Error(FERRO_INTERNAL, fmt::format("{}: module of plugin '{}' chose strides [{}] for output {} of shape "
                                                    "[{}], which are not a dense layout",
                                                    op, plugin, fmt::join(s, ", "), i, fmt::join(o.shape, ", ")));
        }
        o.strides.assign(s.begin(), s.end());
    }
}

// The residuals a plan keeps (ABI 1.8), checked: only a recorded call's plan may keep some.
std::vector<OutputSig> take_residuals(const ferro_plan_instance& plan, uint64_t recorded_inputs, const std::string& op,
                                      const std::string& plugin) {
    std::vector<OutputSig> residuals;
    if (plan.n_residuals == 0) return residuals;
    if (recorded_inputs == 0 || plan.residuals == nullptr) {
        throw Error(FERRO_INTERNAL, fmt::format("{}: module of plugin '{}' returned a plan with {} residuals {}", op, plugin,
                                                plan.n_residuals,
                                                plan.residuals == nullptr ? "and no signatures" : "for a call the tape does not record"));
    }
    for (uint32_t i = 0; i < plan.n_residuals; ++i) residuals.push_back(checked_signature(plan.residuals[i], op, "prepare", "residual", i));
    return residuals;
}

// Executes the plan on these outputs in one session. Inlined into its one caller: a call of
// its own cost a small fft's repeated call ~50 instructions.
[[gnu::always_inline]] inline void run_plan(const CachedPlan& plan, const std::string& op, const EnginePtr& engine,
                                            const ferro_host_api* host, const AttrValues& attrs,
                                            std::span<ferro_tensor_impl* const> inputs,
                                            std::span<ferro_tensor_impl* const> outputs) {
    Session session(engine);
    const size_t n_in = inputs.size(), n_out = outputs.size();
    boost::container::small_vector<ferro_tensor_view, 4> views(n_in + n_out, boost::container::default_init);
    for (size_t i = 0; i < n_in; ++i) views[i] = view_of(*inputs[i]);
    for (size_t i = 0; i < n_out; ++i) views[n_in + i] = view_of(*outputs[i]);
    if (!plan.built_in()) {
        for (ferro_tensor_impl* t : inputs) session.allow(*t->storage);
        for (ferro_tensor_impl* t : outputs) session.allow(*t->storage);
    }
    StoragePtr workspace;
    ferro_buffer_view ws{sizeof ws, 0, nullptr, 0, 0, nullptr};
    if (plan.workspace_bytes() > 0) {
        workspace = Storage::allocate(engine, plan.workspace_bytes());
        session.allow(*workspace);
        ws = {sizeof ws, 0, workspace->buffer(), 0, plan.workspace_bytes(), workspace->address()};
    }
    ferro_exec_args args{sizeof args, static_cast<uint32_t>(n_in), static_cast<uint32_t>(n_out), 0,
                         attrs.data(), views.data(), views.data() + n_in, ws, session.get()};
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
    if (st != nullptr) rethrow(st, op, "execute", host);
    session.end();
}

}  // namespace

Dispatcher::Dispatcher(Runtime& runtime)
    : runtime_(runtime),
      cache_(runtime.options().plan_cache_max_entries, runtime.options().plan_cache_max_bytes) {}

namespace {

// The handle's recent call whose key is `key`, else null.
std::shared_ptr<const LastCall> recent_call(ferro_op_impl& op, const PlanKey& key) {
    std::lock_guard lock(op.mutex);
    for (const auto& last : op.recent) {
        if (last && last->key.size() == key.size() &&
            std::memcmp(last->key.data(), key.data(), key.size() * sizeof key[0]) == 0) {
            if (last->plan) ++op.repeat_hits;  // host ops have no plan to count
            return last;
        }
    }
    return nullptr;
}

}  // namespace

Outputs Dispatcher::repeat(const LastCall& last, const ferro_op_impl& op, std::span<ferro_tensor_impl* const> inputs,
                           std::span<ferro_tensor_impl* const> into) {
    const Recordable what{op.name, *last.schema, last.family_library};
    if (last.host_op) {
        const HostOpCall call{runtime_, op.name, last.engine, last.attrs.values(), inputs};
        return run_host_op(last.host_op, call, what, into);
    }
    return execute(*last.plan, what, last.engine, last.attrs.values(), inputs, into);
}

Outputs Dispatcher::call(ferro_op_impl& op, const ferro_named_attr* named, uint32_t n_attrs,
                         std::span<ferro_tensor_impl* const> inputs, std::span<ferro_tensor_impl* const> into,
                         std::shared_ptr<const LastCall>* used) {
    // The call's key, encoded once: it finds a recent repeat, and is remembered otherwise.
    const uint64_t epoch = runtime_.current_epoch();
    const Engine* input_engine = common_engine(inputs);
    const uint64_t recorded = input_engine != nullptr ? recorded_mask(inputs, into) : 0;
    PlanKey call_key;
    KeyWriter write_call{call_key};
    if (input_engine != nullptr) encode_call(write_call, *input_engine, epoch, recorded, named, n_attrs, inputs);
    write_call.finish();
    if (input_engine != nullptr && !write_call.rejected()) {
        if (const auto last = recent_call(op, call_key)) {
            if (used != nullptr) *used = last;
            return repeat(*last, op, inputs, into);
        }
    }
    const OpEntry* entry = nullptr;
    const FamilySlot* family = nullptr;
    const SnapshotPtr snap = resolve(runtime_, op, epoch, entry, family);
    const ferro_op_schema& schema = *entry->schema;
    check_arity(schema, op.name, inputs.size());
    const AttrValues attrs = normalise_attrs(schema, op.name, named, n_attrs);
    const EnginePtr& engine = pick_engine(runtime_, *snap, schema, op.name, attrs, inputs);
    const HostOpFn host_op = core_host_op(&schema);
    PlanPtr plan;
    if (!host_op) {
        uint64_t recorded_inputs = 0;
        if (recorded != 0 && schema.vjp != nullptr && keeps_residuals(*family, *engine)) {
            recorded_inputs = recorded & schema.diff_inputs;
        }
        PlanKey key;
        KeyWriter write{key};
        encode_key(write, schema, *engine, snap->epoch, recorded_inputs, attrs, inputs);
        write.finish();
        plan = cache_.find(key);
        if (!plan) {
            plan = prepare(*entry, *family, engine, attrs, inputs, recorded_inputs);
            cache_.insert(std::move(key), plan);
        }
    }
    // Remembered only when a repeat would find it: keyed by the engine it runs on, in this epoch.
    if (input_engine == engine.get() && snap->epoch == epoch && !write_call.rejected()) {
        auto last = std::make_shared<LastCall>(
            LastCall{std::move(call_key), plan, host_op, engine, OwnedAttrs(attrs), &schema, family->library});
        if (used != nullptr) *used = last;
        std::shared_ptr<const LastCall> evicted;  // destroyed after the lock is released
        std::lock_guard lock(op.mutex);
        if (op.epoch == snap->epoch) {
            evicted = std::exchange(op.recent[op.next_recent], std::move(last));
            op.next_recent = (op.next_recent + 1) % ferro_op_impl::kRecent;
        }
    }
    const Recordable what{op.name, schema, family->library};
    if (host_op) return run_host_op(host_op, HostOpCall{runtime_, op.name, engine, attrs, inputs}, what, into);
    return execute(*plan, what, engine, attrs, inputs, into);
}

void Dispatcher::check_attrs(ferro_op_impl& op, const ferro_named_attr* named, uint32_t n_attrs) {
    const OpEntry* entry = nullptr;
    const FamilySlot* family = nullptr;
    const SnapshotPtr snap = resolve(runtime_, op, runtime_.current_epoch(), entry, family);  // pins the schema
    (void)normalise_attrs(*entry->schema, op.name, named, n_attrs);
}

Outputs Dispatcher::run(ferro_bound_call_impl& bound, std::span<ferro_tensor_impl* const> inputs,
                        std::span<ferro_tensor_impl* const> into) {
    const Engine* engine = common_engine(inputs);
    const uint64_t epoch = runtime_.current_epoch();
    const uint64_t recorded = engine != nullptr ? recorded_mask(inputs, into) : 0;
    if (engine != nullptr) {
        std::shared_ptr<const LastCall> last;
        {
            std::lock_guard lock(bound.mutex);
            KeyMatcher match{bound.key};
            encode_run(match, *engine, epoch, recorded, inputs);
            if (match.matched()) last = bound.last;
        }
        if (last) return repeat(*last, bound.op, inputs, into);
    }
    PlanKey key;
    KeyWriter write{key};
    if (engine != nullptr) encode_run(write, *engine, epoch, recorded, inputs);
    write.finish();
    // Remembers the call made below once it has returned (a destructor, so that the outputs
    // are returned in place).
    struct Remember {
        ferro_bound_call_impl& bound;
        PlanKey key;
        bool keyed;
        std::shared_ptr<const LastCall> made;
        ~Remember() {
            if (!made || !keyed) return;
            std::lock_guard lock(bound.mutex);
            bound.key = std::move(key);
            std::swap(bound.last, made);  // the replaced call is destroyed after the lock is released
        }
    } remember{bound, std::move(key), engine != nullptr, nullptr};
    return call(bound.op, bound.attrs.data(), static_cast<uint32_t>(bound.attrs.size()), inputs, into, &remember.made);
}

PlanPtr Dispatcher::prepare(const OpEntry& entry, const FamilySlot& family,
                            const EnginePtr& engine, const AttrValues& attrs,
                            std::span<ferro_tensor_impl* const> inputs, uint64_t recorded_inputs) {
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
        std::copy(outputs[i].strides.begin(), outputs[i].strides.end(), out[i].strides);
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
            std::vector<int64_t> strides(outputs.size() * FERRO_MAX_NDIM, 0);
            for (size_t i = 0; i < outputs.size(); ++i) {
                std::copy(outputs[i].strides.begin(), outputs[i].strides.end(), strides.begin() + i * FERRO_MAX_NDIM);
            }
            ferro_prepare_args args{sizeof args, entry.index, attrs.data(),
                                    static_cast<uint32_t>(in.size()), static_cast<uint32_t>(out.size()),
                                    in.data(), out.data(), reason, sizeof reason, 0, strides.data(), recorded_inputs};
            ferro_plan_instance inst{};
            inst.struct_size = sizeof inst;
            const Module& m = *slot.module;
            if (ferro_status st = call_plugin(op, "prepare", [&] { return m.iface().prepare(m.self(), host, &args, &inst); })) {
                rethrow(st, op, "prepare", host);
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
            std::vector<OutputSig> residuals;
            try {
                take_output_strides(outputs, strides, op, slot.plugin);
                residuals = take_residuals(inst, recorded_inputs, op, slot.plugin);
            } catch (...) {
                CachedPlan discard(inst, slot.module, {});  // destroys the refused plan
                throw;
            }
            return std::make_shared<CachedPlan>(inst, slot.module, std::move(outputs), std::move(residuals));
        }
    }
    throw Error(FERRO_UNIMPLEMENTED,
                fmt::format("{}: no module can run it on engine '{}'{}", op, engine->name(),
                            reasons.empty() ? std::string(" (no module of family '") + family.id +
                                                  "' for this engine)"
                                            : " —" + reasons.substr(1)));
}

Outputs run_host_op(HostOpFn host_op, const HostOpCall& call, const Recordable& what,
                    std::span<ferro_tensor_impl* const> into) {
    Outputs outputs;  // one object returned on every path, so that it is returned in place
    if (!into.empty()) {
        if (!into::plain(call.inputs, into)) into::check_autograd(what.op, call.inputs, into);
        const Outputs fresh = host_op(call);
        into::check_host_outputs(what.op, *call.engine, fresh, into);
        into::copy_outputs(call.engine, fresh, into);
        return outputs;
    }
    outputs = host_op(call);
    if (any_autograd(call.inputs)) {
        after_call(call.runtime, what.op, what.schema, what.library, call.attrs, call.inputs,
                   {outputs.data(), outputs.size()});
    }
    return outputs;
}

Outputs Dispatcher::execute(const CachedPlan& plan, const Recordable& what, const EnginePtr& engine,
                            const AttrValues& attrs, std::span<ferro_tensor_impl* const> inputs,
                            std::span<ferro_tensor_impl* const> into) {
    const std::string& op = what.op;
    Outputs outputs;  // one object returned on every path, so that it is returned in place
    boost::container::small_vector<ferro_tensor_impl*, 2> written;
    if (into.empty()) {
        for (const OutputSig& sig : plan.outputs()) {
            outputs.push_back(make_checked_tensor(engine, sig.dtype, span_of(sig.shape), span_of(sig.strides), sig.bytes));
            written.push_back(outputs.back().get());
        }
    } else {
        if (!into::plain(inputs, into)) into::check_autograd(op, inputs, into);
        if (!into::check_plan_outputs(op, *engine, plan.outputs(), inputs, into)) {
            const Outputs fresh = execute(plan, what, engine, attrs, inputs, {});
            into::copy_outputs(engine, fresh, into);
            return outputs;
        }
        written.assign(into.begin(), into.end());
    }
    // A recorded call's residuals (ABI 1.8) follow the outputs; the grad node keeps them.
    Outputs residuals;
    for (const OutputSig& sig : plan.residuals()) {
        residuals.push_back(make_checked_tensor(engine, sig.dtype, span_of(sig.shape), span_of(sig.strides), sig.bytes));
        written.push_back(residuals.back().get());
    }
    run_plan(plan, op, engine, runtime_.host_api(), attrs, inputs, {written.data(), written.size()});
    if (into.empty() && any_autograd(inputs)) {
        after_call(runtime_, op, what.schema, what.library, attrs, inputs, {outputs.data(), outputs.size()},
                   {residuals.data(), residuals.size()});
    }
    return outputs;
}

}  // namespace ferro

namespace {

ferro::AttrValues given_values(const ferro_named_attr* attrs, uint32_t n_attrs) {
    ferro::AttrValues values;
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
}
