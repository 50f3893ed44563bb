#include "capture/program.hpp"

#include "autodiff/grad_mode.hpp"
#include "autodiff/node.hpp"
#include "capture/fusion.hpp"
#include "capture/program_grad.hpp"
#include "runtime/runtime.hpp"
#include "tensor/dtype.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace ferro::host {

// The preparations of a program with symbolic axes for the sizes its runs gave, the most
// recently run first, at most kKept of them (each holds plans and a run's intermediates).
class SizeCache {
public:
    static constexpr size_t kKept = 64;

    std::shared_ptr<const PreparedProgram> find_or_prepare(const PreparedProgram& base,
                                                           std::span<ferro_tensor_impl* const> inputs) {
        std::vector<int64_t> key;
        for (const ferro_tensor_impl* t : inputs) key.insert(key.end(), t->shape.begin(), t->shape.end());
        {
            const std::lock_guard lock(mutex_);
            for (auto it = kept_.begin(); it != kept_.end(); ++it) {
                if (it->first != key) continue;
                kept_.splice(kept_.begin(), kept_, it);
                return it->second;
            }
        }
        std::vector<ferro_signature> sigs(inputs.size());
        for (size_t i = 0; i < inputs.size(); ++i) {
            fill_signature(*inputs[i], sigs[i]);
            sigs[i].dtype = base.inputs[i].dtype;
        }
        auto prepared = std::make_shared<const PreparedProgram>(prepare_program(base.program, sigs));
        const std::lock_guard lock(mutex_);
        kept_.emplace_front(std::move(key), prepared);
        if (kept_.size() > kKept) kept_.pop_back();
        return prepared;
    }

private:
    std::mutex mutex_;
    std::list<std::pair<std::vector<int64_t>, std::shared_ptr<const PreparedProgram>>> kept_;
};

namespace {

// One thread's capture in progress.
struct Recorder {
    Runtime* runtime = nullptr;
    std::vector<InputSignature> inputs;
    std::unordered_map<const ferro_tensor_impl*, ValueRef> values;
    // The same values by storage: another handle of one of them with its layout (a detached
    // alias, as a grad node saves) is that value.
    std::unordered_multimap<const Storage*, const ferro_tensor_impl*> by_storage;
    // Every tensor the capture saw, held until it ends so that no address is reused for
    // another tensor meanwhile (the map keys on addresses).
    std::vector<TensorPtr> held;
    std::vector<TensorPtr> constants;
    std::vector<ProgramStep> steps;
    uint32_t depth = 0;            // > 0 inside a recorded call: its own calls are its business
    bool backward = false;         // recording a backward pass (capture_backward_begins)
    std::optional<Error> refusal;  // the first refused call, thrown again by capture_end
};

// This thread's capture; a thread that exits while capturing stops counting as capturing.
struct ThreadCapture {
    std::unique_ptr<Recorder> recorder;
    ~ThreadCapture() {
        if (recorder) g_capturing_threads.fetch_sub(1, std::memory_order_relaxed);
    }
};
thread_local ThreadCapture t_capture;

Recorder* recorder() noexcept { return any_capture() ? t_capture.recorder.get() : nullptr; }

std::string describe(ferro_dtype dtype, std::span<const int64_t> shape) {
    return fmt::format("{} [{}]", dtype_name(dtype), fmt::join(shape, ", "));
}

[[noreturn]] void refuse(Recorder& r, const std::string& what, const std::string& why) {
    Error e(FERRO_FAILED_PRECONDITION, fmt::format("{}: {} while capturing; a program could not replay it", what, why));
    if (!r.refusal) r.refusal = e;
    throw e;
}

bool same_layout(const ferro_tensor_impl& a, const ferro_tensor_impl& b) {
    return a.dtype == b.dtype && a.byte_offset == b.byte_offset && a.shape == b.shape && a.strides == b.strides;
}

void add_value(Recorder& r, ferro_tensor_impl* t, const ValueRef& ref) {
    r.values[t] = ref;
    r.by_storage.emplace(t->storage.get(), t);
}

// The value `t` is: an input or an earlier call's output, or another handle of one of those
// with its layout (what a grad node saves is such an alias).
std::optional<ValueRef> find_value(Recorder& r, ferro_tensor_impl* t) {
    if (const auto it = r.values.find(t); it != r.values.end()) return it->second;
    const auto [first, last] = r.by_storage.equal_range(t->storage.get());
    for (auto it = first; it != last; ++it) {
        if (!same_layout(*it->second, *t)) continue;
        const ValueRef ref = r.values.at(it->second);
        r.values.emplace(t, ref);
        r.held.push_back(TensorPtr::share(t));
        return ref;
    }
    return std::nullopt;
}

// The value a call's input is: find_value's, else a constant of the program (a tensor from
// outside that was not declared an input), kept by the program.
ValueRef value_of(Recorder& r, const std::string& op, ferro_tensor_impl* t) {
    if (const std::optional<ValueRef> known = find_value(r, t)) return *known;
    if (r.by_storage.count(t->storage.get()) != 0) {
        // Another layout over an input's or a step's memory that no recorded call made (a view
        // made before the capture, or by a host service): as a constant, a replay would read
        // the capture's data instead of the run's.
        refuse(r, op, "an input over the memory of a value of the capture that no recorded call made");
    }
    const ValueRef ref{ValueRef::Kind::constant, static_cast<uint32_t>(r.constants.size()), 0};
    r.constants.push_back(TensorPtr::share(t));
    r.values.emplace(t, ref);
    return ref;
}

}  // namespace

InputSignature signature_of(const ferro_tensor_impl& t) {
    return {t.dtype, t.shape, t.strides, t.storage->engine_ptr(), t.autograd != nullptr};
}

// Program outputs are never released: the caller gets them.
void plan_steps(Program& p) {
    std::vector<bool> needed(p.steps.size(), false);
    for (const ValueRef& out : p.outputs) {
        if (out.kind == ValueRef::Kind::step) needed[out.index] = true;
    }
    for (size_t s = p.steps.size(); s-- > 0;) {
        if (!needed[s]) continue;
        for (const ValueRef& in : p.steps[s].inputs) {
            if (in.kind == ValueRef::Kind::step) needed[in.index] = true;
        }
    }
    std::vector<uint32_t> renumbered(p.steps.size(), 0);
    std::vector<ProgramStep> kept;
    for (size_t s = 0; s < p.steps.size(); ++s) {
        if (!needed[s]) continue;
        renumbered[s] = static_cast<uint32_t>(kept.size());
        kept.push_back(std::move(p.steps[s]));
    }
    p.steps = std::move(kept);
    const auto renumber = [&](ValueRef& v) {
        if (v.kind == ValueRef::Kind::step) v.index = renumbered[v.index];
    };
    for (ProgramStep& step : p.steps) std::for_each(step.inputs.begin(), step.inputs.end(), renumber);
    std::for_each(p.outputs.begin(), p.outputs.end(), renumber);

    // Last use of each step output: the last step reading it, or its own step when none does.
    std::vector<std::vector<int64_t>> last(p.steps.size());
    for (size_t s = 0; s < p.steps.size(); ++s) last[s].assign(n_values(p.steps[s]), static_cast<int64_t>(s));
    for (size_t s = 0; s < p.steps.size(); ++s) {
        for (const ValueRef& in : p.steps[s].inputs) {
            if (in.kind == ValueRef::Kind::step) last[in.index][in.output] = static_cast<int64_t>(s);
        }
    }
    for (const ValueRef& out : p.outputs) {
        if (out.kind == ValueRef::Kind::step) last[out.index][out.output] = -1;
    }
    for (size_t s = 0; s < p.steps.size(); ++s) {
        for (uint32_t k = 0; k < n_values(p.steps[s]); ++k) {
            if (last[s][k] >= 0) p.steps[last[s][k]].last_uses.push_back({ValueRef::Kind::step, static_cast<uint32_t>(s), k});
        }
    }
}

namespace {

// The memory plan of a prepared program's runs, and its caches.
PreparedProgram with_plans(PreparedProgram prepared) {
    ReplayProgram fused = fuse_elementwise(prepared.program, prepared.entries);
    prepared.replayed = std::move(fused.program);
    prepared.replay_entries = std::move(fused.entries);
    prepared.memory = plan_memory(*prepared.replayed, prepared.replay_entries);
    prepared.states = make_run_states();
    prepared.grads = make_grad_cache();
    return prepared;
}

// Whether the tape would record anything of a run's calls: an input or a constant carrying a
// forward-mode tangent, or requiring grad while grad mode is on.
bool tape_records(const Program& p, std::span<ferro_tensor_impl* const> inputs) noexcept {
    const bool grad = grad_enabled();
    const auto records = [grad](const ferro_tensor_impl& t) {
        return t.autograd && (t.autograd->tangent || (grad && t.autograd->requires_grad));
    };
    return std::any_of(inputs.begin(), inputs.end(), [&](const ferro_tensor_impl* t) { return records(*t); }) ||
           std::any_of(p.constants.begin(), p.constants.end(), [&](const TensorPtr& t) { return records(*t); });
}

bool any_constant_autograd(const Program& p) noexcept {
    return std::any_of(p.constants.begin(), p.constants.end(), [](const TensorPtr& t) { return t->autograd != nullptr; });
}

bool same_shape(std::span<const int64_t> a, const Dims& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

// Whether input `i` of another shape than prepared fits the symbolic axes: the same rank, the
// fixed axes as prepared, the symbolic ones within their bounds (INVALID_ARGUMENT naming the
// axis and its bound when one is beyond it).
bool within_bounds(const PreparedProgram& prepared, size_t i, const ferro_tensor_impl& t) {
    if (prepared.bounds.empty()) return false;
    const Dims& want = prepared.inputs[i].shape;
    const Dims& bound = prepared.bounds[i];
    if (t.shape.size() != want.size()) return false;
    for (size_t d = 0; d < want.size(); ++d) {
        if (bound[d] == 0) {
            if (t.shape[d] != want[d]) return false;
        } else if (t.shape[d] > bound[d]) {
            throw Error(FERRO_INVALID_ARGUMENT, fmt::format("program run: input {} has size {} on axis {}, beyond its bound {}",
                                                            i, t.shape[d], d, bound[d]));
        }
    }
    return true;
}

// Step by step on placeholder tensors of the signatures: each step's entry, found or prepared
// as its call would be; plan outputs allocated as the plan says, host ops run.
std::vector<EntryPtr> plan_for(const Program& p, const std::vector<InputSignature>& inputs) {
    Dispatcher& dispatcher = p.runtime->dispatcher();
    std::vector<TensorPtr> placeholders;
    std::vector<ferro_tensor_impl*> held;
    placeholders.reserve(inputs.size());
    for (const InputSignature& s : inputs) {
        placeholders.push_back(make_tensor(s.engine, s.dtype, s.shape, "program_prepare"));
        held.push_back(placeholders.back().get());
    }
    std::vector<Outputs> values(p.steps.size());
    std::vector<EntryPtr> entries;
    StepArgs args;
    for (size_t s = 0; s < p.steps.size(); ++s) {
        const ProgramStep& step = p.steps[s];
        const std::span<ferro_tensor_impl* const> in = gather(p, step, held, values, args);
        if (std::find(in.begin(), in.end(), nullptr) != in.end()) {
            // Prepared for other shapes than captured, a call keeps no residuals (its plan is not
            // made for the tape): a program whose recorded backward reads them runs only as captured.
            throw Error(FERRO_UNIMPLEMENTED, fmt::format("program_prepare: step {} ({}) reads residuals that a call keeps "
                                                         "only as captured; prepare this program for its captured shapes",
                                                         s, step.call->op.name));
        }
        try {
            entries.push_back(dispatcher.prepare_entry(*step.call, in));
            const PlanEntry& e = *entries.back();
            if (e.host_op) {
                values[s] = dispatcher.run_entry(e, in);
            } else {
                for (size_t k = 0; k < n_written(*e.plan); ++k) {
                    const OutputSig& o = written_sig(*e.plan, k);
                    values[s].push_back(make_checked_tensor(e.engine, o.dtype, span_of(o.shape), span_of(o.strides), o.bytes));
                }
                values[s].resize(std::max<size_t>(values[s].size(), n_values(step)));  // residuals it no longer keeps: none
            }
        } catch (Error& e) {
            throw Error(e.code(), fmt::format("program_prepare: step {} ({}): {}", s, step.call->op.name, e.what()));
        }
        for (const ValueRef& v : step.last_uses) values[v.index][v.output] = TensorPtr();
    }
    return entries;
}

}  // namespace

void capture_begin(Runtime& runtime, std::span<ferro_tensor_impl* const> inputs) {
    if (t_capture.recorder) {
        throw Error(FERRO_FAILED_PRECONDITION, "capture_begin: this thread is capturing already (captures do not nest)");
    }
    auto r = std::make_unique<Recorder>();
    r->runtime = &runtime;
    for (size_t i = 0; i < inputs.size(); ++i) {
        ferro_tensor_impl* t = inputs[i];
        if (t == nullptr) throw Error(FERRO_INVALID_ARGUMENT, fmt::format("capture_begin: input {} is NULL", i));
        if (const auto it = r->values.find(t); it != r->values.end()) {
            throw Error(FERRO_INVALID_ARGUMENT, fmt::format("capture_begin: input {} is input {} again", i, it->second.index));
        }
        r->inputs.push_back(signature_of(*t));
        add_value(*r, t, ValueRef{ValueRef::Kind::input, static_cast<uint32_t>(i), 0});
        r->held.push_back(TensorPtr::share(t));
    }
    t_capture.recorder = std::move(r);
    g_capturing_threads.fetch_add(1, std::memory_order_relaxed);
}

void capture_backward_begins() noexcept {
    if (t_capture.recorder) t_capture.recorder->backward = true;
}

void capture_abort() noexcept {
    if (!t_capture.recorder) return;
    t_capture.recorder.reset();
    g_capturing_threads.fetch_sub(1, std::memory_order_relaxed);
}

bool capturing() noexcept { return recorder() != nullptr; }

void refuse_while_capturing(const std::string& what, const std::string& why) {
    if (Recorder* r = recorder()) refuse(*r, what, why);
}

ProgramPtr capture_end(Runtime& runtime, std::span<ferro_tensor_impl* const> outputs) {
    if (!t_capture.recorder) throw Error(FERRO_FAILED_PRECONDITION, "capture_end: this thread is not capturing");
    const std::unique_ptr<Recorder> r = std::move(t_capture.recorder);
    g_capturing_threads.fetch_sub(1, std::memory_order_relaxed);
    if (r->runtime != &runtime) {
        throw Error(FERRO_INVALID_ARGUMENT, "capture_end: the capture was begun on another runtime (it is ended, nothing kept)");
    }
    if (r->refusal) throw *r->refusal;
    auto p = std::make_shared<Program>();
    p->runtime = r->runtime;
    for (size_t k = 0; k < outputs.size(); ++k) {
        const std::optional<ValueRef> value = outputs[k] != nullptr ? find_value(*r, outputs[k]) : std::nullopt;
        if (!value || value->kind == ValueRef::Kind::constant) {
            throw Error(FERRO_INVALID_ARGUMENT, fmt::format("capture_end: output {} is not a value of the capture (an input, "
                                                            "or the result of a call made while capturing)",
                                                            k));
        }
        p->outputs.push_back(*value);
    }
    p->inputs = std::move(r->inputs);
    p->constants = std::move(r->constants);
    p->steps = std::move(r->steps);
    plan_steps(*p);
    return p;
}

namespace {

// The residuals a call kept on its outputs' grad node (ABI 1.8); null when the tape recorded no
// node for the call.
const std::vector<TensorPtr>* kept_residuals(const Outputs& outs) {
    for (const TensorPtr& o : outs) {
        if (o->autograd && o->autograd->grad_fn) return &o->autograd->grad_fn->residuals();
    }
    return nullptr;
}

// The residuals the call of `step` kept, when its plan has some and the call was recorded for
// the tape; none otherwise.
std::span<const TensorPtr> residuals_of(const ProgramStep& step, const Outputs& outs) {
    if (!step.entry || !step.entry->plan || step.entry->plan->residuals().empty()) return {};
    const std::vector<TensorPtr>* kept = kept_residuals(outs);
    return kept != nullptr ? std::span<const TensorPtr>(*kept) : std::span<const TensorPtr>();
}

// Runs an outermost call of the capturing thread and adds it to the capture as a step.
Outputs record(Recorder* r, Dispatcher& dispatcher, ferro_op_impl& op, const ferro_named_attr* attrs, uint32_t n_attrs,
               std::span<ferro_tensor_impl* const> inputs, std::span<ferro_tensor_impl* const> into) {
    if (op.runtime != r->runtime) refuse(*r, op.name, "a call on another runtime than the one captured");
    if (!into.empty()) refuse(*r, op.name, "a write into existing tensors (into, out=)");
    struct Inside {
        uint32_t& depth;
        explicit Inside(uint32_t& d) : depth(++d) {}
        ~Inside() { --depth; }
    } const inside(r->depth);
    EntryPtr ran;
    Outputs outs = dispatcher.call_unrecorded(op, attrs, n_attrs, inputs, {}, &ran);
    ProgramStep step;
    step.call = std::make_shared<ferro_bound_call_impl>(op, attrs, n_attrs);
    step.backward = r->backward;
    step.entry = std::move(ran);
    for (ferro_tensor_impl* t : inputs) {
        step.inputs.push_back(value_of(*r, op.name, t));
        r->held.push_back(TensorPtr::share(t));
    }
    step.n_outputs = static_cast<uint32_t>(outs.size());
    const auto index = static_cast<uint32_t>(r->steps.size());
    const std::span<const TensorPtr> residuals = residuals_of(step, outs);
    step.n_residuals = static_cast<uint32_t>(residuals.size());
    for (uint32_t k = 0; k < n_values(step); ++k) {
        const TensorPtr& value = k < outs.size() ? outs[k] : residuals[k - outs.size()];
        add_value(*r, value.get(), ValueRef{ValueRef::Kind::step, index, k});
        r->held.push_back(value);
        step.output_sigs.push_back(signature_of(*value));
    }
    r->steps.push_back(std::move(step));
    return outs;
}

}  // namespace

Outputs call_recorded(Dispatcher& dispatcher, ferro_op_impl& op, const ferro_named_attr* attrs, uint32_t n_attrs,
                      std::span<ferro_tensor_impl* const> inputs, std::span<ferro_tensor_impl* const> into) {
    Recorder* r = recorder();
    if (r == nullptr || r->depth > 0) return dispatcher.call_unrecorded(op, attrs, n_attrs, inputs, into);
    return record(r, dispatcher, op, attrs, n_attrs, inputs, into);
}

PreparedProgram prepare_program(const ProgramPtr& program, std::span<const ferro_signature> inputs) {
    const Program& p = *program;
    if (inputs.size() != p.inputs.size()) {
        throw Error(FERRO_INVALID_ARGUMENT, fmt::format("program_prepare: {} input signatures, the program has {} inputs",
                                                        inputs.size(), p.inputs.size()));
    }
    PreparedProgram prepared{program, p.inputs, {}};
    bool as_captured = true;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const ferro_signature& s = inputs[i];
        const InputSignature& captured = p.inputs[i];
        const std::span<const int64_t> shape(s.shape, static_cast<size_t>(std::clamp(s.ndim, 0, int32_t{FERRO_MAX_NDIM})));
        if (s.dtype != captured.dtype || s.ndim != static_cast<int32_t>(captured.shape.size())) {
            throw Error(FERRO_INVALID_ARGUMENT,
                        fmt::format("program_prepare: input {} is {}, the program was captured with {} (a program keeps each "
                                    "input's dtype and rank; its shape may change)",
                                    i, describe(s.dtype, shape), describe(captured.dtype, span_of(captured.shape))));
        }
        if (same_shape(shape, captured.shape)) continue;
        as_captured = false;
        for (size_t d = 0; d < shape.size(); ++d) {
            if (shape[d] < 0)
                throw Error(FERRO_INVALID_ARGUMENT,
                            fmt::format("program_prepare: input {} has size {} on axis {}", i, shape[d], d));
        }
        InputSignature& sig = prepared.inputs[i];
        sig.shape.assign(shape.begin(), shape.end());
        sig.strides = contiguous_strides(sig.shape);
        sig.autograd = false;
    }
    if (as_captured) return prepare_captured(program);
    prepared.entries = plan_for(p, prepared.inputs);
    return with_plans(std::move(prepared));
}

PreparedProgram prepare_program(const ProgramPtr& program, std::span<const ferro_signature> inputs,
                                std::span<const int64_t> max_shapes) {
    PreparedProgram prepared = prepare_program(program, inputs);
    bool any = false;
    for (size_t i = 0; i < prepared.inputs.size(); ++i) {
        const Dims& shape = prepared.inputs[i].shape;
        Dims bound(shape.size(), 0);
        for (size_t d = 0; d < shape.size(); ++d) {
            const int64_t b = max_shapes[i * FERRO_MAX_NDIM + d];
            if (b <= 0) continue;
            if (shape[d] > b) {
                throw Error(FERRO_INVALID_ARGUMENT,
                            fmt::format("program_prepare: input {} has size {} on axis {}, beyond the bound {} declared for it",
                                        i, shape[d], d, b));
            }
            bound[d] = b;
            any = true;
        }
        prepared.bounds.push_back(std::move(bound));
    }
    if (!any) prepared.bounds.clear();
    prepared.sizes = std::make_shared<SizeCache>();
    return prepared;
}

PreparedProgram prepare_captured(const ProgramPtr& program) {
    PreparedProgram prepared{program, program->inputs, {}};
    for (const ProgramStep& step : program->steps) prepared.entries.push_back(step.entry);
    return with_plans(std::move(prepared));
}

namespace {

// Appends to a step's outputs the residuals its call kept on their grad node, which a recorded
// backward pass of the program reads; FAILED_PRECONDITION when the call kept none (it was not
// recorded for the tape, as it was at capture).
void add_residuals(size_t s, const ProgramStep& step, Outputs& values) {
    if (const std::vector<TensorPtr>* kept = kept_residuals(values); kept != nullptr && kept->size() == step.n_residuals) {
        values.insert(values.end(), kept->begin(), kept->end());
        return;
    }
    throw Error(FERRO_FAILED_PRECONDITION,
                fmt::format("program run: step {} ({}) kept no residuals for the steps that read them: its call is not "
                            "recorded for the tape as it was at capture (an input no longer requires grad)",
                            s, step.call->op.name));
}

// Each step as its call would run (recorded for the tape): its prepared entry, when given,
// else the bound call.
Outputs run_each(const Program& p, const std::vector<EntryPtr>* entries, std::span<ferro_tensor_impl* const> inputs) {
    Dispatcher& dispatcher = p.runtime->dispatcher();
    std::vector<Outputs> values(p.steps.size());
    StepArgs args;
    for (size_t s = 0; s < p.steps.size(); ++s) {
        const ProgramStep& step = p.steps[s];
        const std::span<ferro_tensor_impl* const> in = gather(p, step, inputs, values, args);
        values[s] = entries != nullptr ? dispatcher.run_entry(*(*entries)[s], in) : dispatcher.run(*step.call, in);
        if (step.n_residuals > 0) add_residuals(s, step, values[s]);
        for (const ValueRef& v : step.last_uses) values[v.index][v.output] = TensorPtr();
    }
    return program_outputs(p, inputs, values);
}

// The inputs a run differentiates through one grad node for the whole program (those that
// require grad), or none when its calls are recorded one by one: grad mode off, no input
// requiring grad, forward-mode tangents, more than 64 outputs (a schema's output mask), or
// constants with autograd state (their gradients go through the calls that read them).
InputSet node_inputs(const Program& p, std::span<ferro_tensor_impl* const> inputs) {
    if (!grad_enabled() || p.outputs.size() > 64 || any_constant_autograd(p)) return {};
    InputSet wrt(inputs.size(), false);
    bool any = false;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const ferro_tensor_impl& t = *inputs[i];
        if (t.autograd && t.autograd->tangent) return {};
        wrt[i] = requires_grad(t);
        any = any || wrt[i];
    }
    return any ? wrt : InputSet{};
}

}  // namespace

Outputs run_calls(const Program& program, std::span<ferro_tensor_impl* const> inputs) {
    return run_each(program, nullptr, inputs);
}

Outputs run_program(const PreparedProgram& prepared, std::span<ferro_tensor_impl* const> inputs) {
    const Program& p = *prepared.program;
    refuse_while_capturing("program run", "a run of a prepared program");
    if (inputs.size() != p.inputs.size()) {
        throw Error(FERRO_INVALID_ARGUMENT,
                    fmt::format("program run: {} inputs, the program takes {}", inputs.size(), p.inputs.size()));
    }
    // Inputs laid out as prepared (strides, engine) run the prepared plans; others take the
    // usual path.
    bool laid_out = true, same_grad_state = true, other_sizes = false;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const ferro_tensor_impl* t = inputs[i];
        if (t == nullptr) throw Error(FERRO_INVALID_ARGUMENT, fmt::format("program run: input {} is NULL", i));
        check_runtime(p.runtime->id(), t->storage->engine(), "program run", fmt::format("input {}", i));
        const InputSignature& want = prepared.inputs[i];
        if (t->dtype != want.dtype || !same_shape(span_of(t->shape), want.shape)) {
            if (t->dtype != want.dtype || !within_bounds(prepared, i, *t)) {
                throw Error(FERRO_INVALID_ARGUMENT,
                            fmt::format("program run: input {} is {}, the program was prepared for {}", i,
                                        describe(t->dtype, span_of(t->shape)), describe(want.dtype, span_of(want.shape))));
            }
            other_sizes = true;
        }
        laid_out = laid_out && &t->storage->engine() == want.engine.get() &&
                   std::equal(t->strides.begin(), t->strides.end(), want.strides.begin(), want.strides.end());
        same_grad_state = same_grad_state && (t->autograd != nullptr) == want.autograd;
    }
    if (other_sizes) return run_program(*prepared.sizes->find_or_prepare(prepared, inputs), inputs);
    // Nothing for the tape to record: the prepared plans run on the memory plan's slots.
    if (!tape_records(p, inputs)) return laid_out ? replay(prepared, inputs) : run_each(p, nullptr, inputs);
    // One grad node for the program, when it has a gradient for these inputs.
    if (const InputSet wrt = node_inputs(p, inputs); !wrt.empty() && laid_out) {
        if (const std::shared_ptr<const ProgramGrad> grad = program_grad(prepared, wrt, inputs)) {
            return run_with_grad_node(grad, inputs);
        }
    }
    return run_each(p, laid_out && same_grad_state ? &prepared.entries : nullptr, inputs);
}

}  // namespace ferro::host
