#include "capture/program_grad.hpp"

#include "autodiff/backward.hpp"
#include "autodiff/grad_mode.hpp"
#include "autodiff/host_ops.hpp"
#include "autodiff/node.hpp"
#include "runtime/runtime.hpp"
#include "tensor/dtype.hpp"

#include <ferro/rules.hpp>

#include <fmt/format.h>

#include <map>
#include <mutex>

namespace ferro::host {

class GradCache {
public:
    std::mutex mutex;
    std::map<InputSet, std::shared_ptr<const ProgramGrad>> grads;  // null: no gradient program for that set
};

std::shared_ptr<GradCache> make_grad_cache() { return std::make_shared<GradCache>(); }

namespace {

using TensorList = std::vector<ferro_tensor_impl*>;

TensorList raw(std::span<const TensorPtr> tensors) {
    TensorList out;
    for (const TensorPtr& t : tensors) out.push_back(t.get());
    return out;
}

// A new tensor of `sig`'s dtype, shape and engine, made by the core creation op `op`.
TensorPtr created(Runtime& rt, const char* op, const InputSignature& sig) {
    const std::vector<int64_t> shape(sig.shape.begin(), sig.shape.end());
    const std::string dtype = dtype_name(sig.dtype);
    return call_one(rt, op, {},
                    {plugin::attr_i64s("shape", shape), plugin::attr_str("dtype", dtype.c_str()),
                     plugin::attr_str("engine", sig.engine->name().c_str())});
}

uint64_t first_bits(size_t n) { return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; }

struct Joint {
    ProgramPtr program;
    uint64_t diff_outputs = 0;  // the outputs that depend on a wrt input
};

// The eager forward pass on the run's inputs (the wrt ones as leaves requiring grad) and the
// backward pass from cotangent placeholders, captured as one program: (inputs, cotangents) ->
// (outputs, gradients of the wrt inputs).
Joint capture_joint(const PreparedProgram& prepared, const InputSet& wrt, std::span<ferro_tensor_impl* const> inputs,
                    std::vector<InputSignature>& output_sigs) {
    const Program& p = *prepared.program;
    Runtime& rt = *p.runtime;
    std::vector<TensorPtr> leaves, cotangents;
    for (ferro_tensor_impl* t : inputs) leaves.push_back(detach(*t));
    {
        const Outputs outs = run_program(prepared, raw(leaves));  // for the outputs' signatures
        for (const TensorPtr& o : outs) {
            output_sigs.push_back(signature_of(*o));
            cotangents.push_back(created(rt, "core.ones", output_sigs.back()));
        }
    }
    TensorList wrt_leaves;
    for (size_t i = 0; i < leaves.size(); ++i) {
        if (!wrt[i]) continue;
        set_requires_grad(*leaves[i], true);
        wrt_leaves.push_back(leaves[i].get());
    }
    TensorList declared = raw(leaves);
    for (const TensorPtr& c : cotangents) declared.push_back(c.get());
    capture_begin(rt, declared);
    try {
        const GradMode recording(true);
        const Outputs outs = run_calls(p, raw(leaves));
        capture_backward_begins();
        Joint joint;
        TensorList roots, seeds;
        for (size_t k = 0; k < outs.size(); ++k) {
            if (!requires_grad(*outs[k])) continue;
            roots.push_back(outs[k].get());
            seeds.push_back(cotangents[k].get());
            joint.diff_outputs |= FERRO_MASK_BIT(k);
        }
        std::vector<TensorPtr> grads(wrt_leaves.size());
        if (!roots.empty()) grads = run_backward(rt, BackwardArgs{roots, seeds, wrt_leaves, false, false, "program backward"});
        TensorList results = raw({outs.data(), outs.size()});
        for (size_t j = 0; j < grads.size(); ++j) {
            if (!grads[j]) grads[j] = created(rt, "core.zeros", signature_of(*wrt_leaves[j]));
            results.push_back(grads[j].get());
        }
        joint.program = capture_end(rt, results);
        return joint;
    } catch (...) {
        capture_abort();
        throw;
    }
}

using ValueKey = std::pair<uint32_t, uint32_t>;

// Splits the joint program at the backward pass: the forward part computes the outputs and
// the values the backward part reads (the residuals); the backward part takes (inputs,
// residuals, cotangents).
void split(ProgramGrad& g, const Program& j) {
    const uint32_t n_in = g.n_inputs, n_out = g.n_outputs;
    size_t nf = 0;
    while (nf < j.steps.size() && !j.steps[nf].backward) ++nf;
    std::map<ValueKey, uint32_t> residual_index;
    std::vector<ValueRef> residuals;
    const auto note = [&](const ValueRef& v) {
        if (v.kind != ValueRef::Kind::step || v.index >= nf) return;
        g.reads_plan_residuals = g.reads_plan_residuals || v.output >= j.steps[v.index].n_outputs;
        if (residual_index.emplace(ValueKey{v.index, v.output}, static_cast<uint32_t>(residuals.size())).second) {
            residuals.push_back(v);
        }
    };
    for (size_t s = nf; s < j.steps.size(); ++s) std::for_each(j.steps[s].inputs.begin(), j.steps[s].inputs.end(), note);
    std::for_each(j.outputs.begin() + n_out, j.outputs.end(), note);
    g.n_residuals = static_cast<uint32_t>(residuals.size());

    auto forward = std::make_shared<Program>();
    forward->runtime = j.runtime;
    forward->inputs.assign(j.inputs.begin(), j.inputs.begin() + n_in);
    forward->constants = j.constants;
    forward->steps.assign(j.steps.begin(), j.steps.begin() + static_cast<std::ptrdiff_t>(nf));
    forward->outputs.assign(j.outputs.begin(), j.outputs.begin() + n_out);
    forward->outputs.insert(forward->outputs.end(), residuals.begin(), residuals.end());

    auto backward = std::make_shared<Program>();
    backward->runtime = j.runtime;
    backward->constants = j.constants;
    backward->inputs.assign(j.inputs.begin(), j.inputs.begin() + n_in);
    for (const ValueRef& r : residuals) backward->inputs.push_back(j.steps[r.index].output_sigs[r.output]);
    backward->inputs.insert(backward->inputs.end(), j.inputs.begin() + n_in, j.inputs.end());
    for (InputSignature& sig : backward->inputs) sig.autograd = false;
    const auto remap = [&](const ValueRef& v) {
        switch (v.kind) {
            case ValueRef::Kind::input: return v.index < n_in ? v : ValueRef{ValueRef::Kind::input, v.index + g.n_residuals, 0};
            case ValueRef::Kind::constant: return v;
            case ValueRef::Kind::step:
                if (v.index < nf) return ValueRef{ValueRef::Kind::input, n_in + residual_index.at({v.index, v.output}), 0};
                return ValueRef{ValueRef::Kind::step, static_cast<uint32_t>(v.index - nf), v.output};
        }
        return v;
    };
    backward->steps.assign(j.steps.begin() + static_cast<std::ptrdiff_t>(nf), j.steps.end());
    for (ProgramStep& step : backward->steps) std::transform(step.inputs.begin(), step.inputs.end(), step.inputs.begin(), remap);
    std::transform(j.outputs.begin() + n_out, j.outputs.end(), std::back_inserter(backward->outputs), remap);

    for (Program* part : {forward.get(), backward.get()}) {
        for (ProgramStep& step : part->steps) step.last_uses.clear();
        plan_steps(*part);
    }
    g.forward = prepare_captured(forward);
    g.backward = prepare_captured(backward);
}

ferro_status program_vjp(const ferro_host_api*, const ferro_vjp_args* a);

// A recorded VJP (create_graph) of a program whose backward part reads plan residuals: its
// calls run again on the saved inputs and their backward pass runs on the tape, as eager calls'
// would.
ferro_status recorded_vjp(const ProgramGrad& g, const ferro_vjp_args& a) {
    Runtime& rt = *g.runtime;
    std::vector<ferro_tensor_impl*> inputs(a.inputs, a.inputs + g.n_inputs);
    const Outputs outs = run_calls(*g.calls, inputs);
    TensorList roots, seeds, wrt;
    for (uint32_t k = 0; k < g.n_outputs; ++k) {
        if (a.cotangents[k] == nullptr || !requires_grad(*outs[k])) continue;
        roots.push_back(outs[k].get());
        seeds.push_back(a.cotangents[k]);
    }
    for (uint32_t i = 0; i < g.n_inputs; ++i) {
        if (g.wrt[i] && a.needs_input_grad[i] != 0) wrt.push_back(a.inputs[i]);
    }
    if (roots.empty() || wrt.empty()) return nullptr;
    std::vector<TensorPtr> grads = run_backward(rt, BackwardArgs{roots, seeds, wrt, true, true, "program backward"});
    size_t j = 0;
    for (uint32_t i = 0; i < g.n_inputs; ++i) {
        if (!g.wrt[i] || a.needs_input_grad[i] == 0) continue;
        if (grads[j]) a.input_cotangents[i] = grads[j].release_ownership();
        ++j;
    }
    return nullptr;
}

std::shared_ptr<const ProgramGrad> build(const PreparedProgram& prepared, const InputSet& wrt,
                                         std::span<ferro_tensor_impl* const> inputs) {
    const Program& p = *prepared.program;
    auto g = std::make_shared<ProgramGrad>();
    g->runtime = p.runtime;
    g->n_inputs = static_cast<uint32_t>(p.inputs.size());
    g->n_outputs = static_cast<uint32_t>(p.outputs.size());
    g->wrt = wrt;
    g->calls = prepared.program;
    const Joint joint = capture_joint(prepared, wrt, inputs, g->outputs);
    split(*g, *joint.program);
    g->joint = prepare_captured(joint.program);
    ferro_op_schema& s = g->schema.schema;
    s.struct_size = sizeof s;
    s.name = "program";
    s.doc = "a prepared program's grad node";
    s.n_inputs = s.min_inputs = static_cast<int32_t>(g->n_inputs);
    s.n_outputs = static_cast<int32_t>(g->n_outputs);
    for (size_t i = 0; i < wrt.size(); ++i) s.diff_inputs |= wrt[i] ? FERRO_MASK_BIT(i) : 0;
    s.diff_outputs = joint.diff_outputs;
    s.save_inputs = first_bits(g->n_inputs);
    s.vjp = program_vjp;
    g->schema.grad = g.get();
    return g;
}

// The grad node's VJP: the backward part on the saved inputs, the residuals and the
// cotangents; or, when the pass is recorded (create_graph), the joint program on the inputs and
// cotangents, so that what it computes is differentiable in turn.
ferro_status program_vjp(const ferro_host_api*, const ferro_vjp_args* a) {
    const ProgramGrad& g = *reinterpret_cast<const GradSchema*>(a->schema)->grad;
    try {
        Runtime& rt = *g.runtime;
        bool recorded = false;
        for (uint32_t i = 0; i < g.n_inputs; ++i) recorded = recorded || requires_grad(*a->inputs[i]);
        for (uint32_t k = 0; k < g.n_outputs; ++k) {
            recorded = recorded || (a->cotangents[k] != nullptr && requires_grad(*a->cotangents[k]));
        }
        recorded = recorded && grad_enabled();
        if (recorded && g.reads_plan_residuals) return recorded_vjp(g, *a);
        std::vector<TensorPtr> held;
        for (uint32_t i = 0; i < g.n_inputs; ++i) {
            held.push_back(recorded ? TensorPtr::share(a->inputs[i]) : detach(*a->inputs[i]));
        }
        if (!recorded) {
            for (uint32_t r = 0; r < a->n_residuals; ++r) held.push_back(detach(*a->residuals[r]));
        }
        for (uint32_t k = 0; k < g.n_outputs; ++k) {
            ferro_tensor_impl* c = a->cotangents[k];
            if (c == nullptr) held.push_back(created(rt, "core.zeros", g.outputs[k]));
            else held.push_back(recorded ? TensorPtr::share(c) : detach(*c));
        }
        const Outputs results = run_program(recorded ? g.joint : g.backward, raw(held));
        size_t j = recorded ? g.n_outputs : 0;
        for (uint32_t i = 0; i < g.n_inputs; ++i) {
            if (!g.wrt[i]) continue;
            if (a->needs_input_grad[i] != 0) a->input_cotangents[i] = TensorPtr(results[j]).release_ownership();
            ++j;
        }
        return nullptr;
    } catch (const Error& e) {
        return make_status(e.code(), e.what());
    } catch (...) {
        return make_status(FERRO_INTERNAL, escaped_exception_message("program VJP"));
    }
}

}  // namespace

std::shared_ptr<const ProgramGrad> program_grad(const PreparedProgram& prepared, const InputSet& wrt,
                                                std::span<ferro_tensor_impl* const> inputs) {
    GradCache& cache = *prepared.grads;
    const std::lock_guard lock(cache.mutex);
    if (const auto it = cache.grads.find(wrt); it != cache.grads.end()) return it->second;
    std::shared_ptr<const ProgramGrad> grad;
    try {
        grad = build(prepared, wrt, inputs);
    } catch (const Error& e) {
        prepared.program->runtime->logger().logf(
            FERRO_LOG_DEBUG, "capture", "program: no grad node of its own ({}); its calls are recorded one by one", e.what());
    }
    cache.grads.emplace(wrt, grad);
    return grad;
}

std::vector<GradientSummary> gradient_summaries(const PreparedProgram& prepared) {
    std::vector<GradientSummary> out;
    const std::lock_guard lock(prepared.grads->mutex);
    for (const auto& [wrt, g] : prepared.grads->grads) {
        if (!g) continue;
        GradientSummary s;
        for (uint32_t i = 0; i < wrt.size(); ++i) {
            if (wrt[i]) s.wrt.push_back(i);
        }
        s.forward_steps = g->forward.program->steps.size();
        s.backward_steps = g->backward.program->steps.size();
        s.residuals = g->n_residuals;
        out.push_back(std::move(s));
    }
    return out;
}

Outputs run_with_grad_node(const std::shared_ptr<const ProgramGrad>& grad, std::span<ferro_tensor_impl* const> inputs) {
    const ProgramGrad& g = *grad;
    Outputs all;
    {
        const NoGrad plain;
        all = replay(g.forward, inputs);
    }
    Outputs outs(std::make_move_iterator(all.begin()), std::make_move_iterator(all.begin() + g.n_outputs));
    std::vector<TensorPtr> residuals(std::make_move_iterator(all.begin() + g.n_outputs), std::make_move_iterator(all.end()));
    // A residual that is also an output is kept as another handle, as a node saves its outputs:
    // the output will point at the node, which must not hold it.
    for (TensorPtr& r : residuals) {
        if (std::any_of(outs.begin(), outs.end(), [&](const TensorPtr& o) { return o.get() == r.get(); })) r = detach(*r);
    }
    static const LibraryPtr kNoLibrary;
    const std::shared_ptr<const void> owner = grad;
    const Recordable what{g.op, g.schema.schema, kNoLibrary, {}, &owner};
    after_call(*g.runtime, what, AttrValues{}, inputs, {outs.data(), outs.size()}, residuals);
    return outs;
}

}  // namespace ferro::host
