// Running a call: an entry's host op, or its plan's executor in a session on outputs allocated
// as the plan said (or the caller's `into` tensors), then recording the call for the tape.
#include "dispatch/dispatcher.hpp"

#include "autodiff/node.hpp"
#include "dispatch/into.hpp"
#include "dispatch/invoke.hpp"
#include "dispatch/plugin_call.hpp"
#include "dispatch/session.hpp"
#include "runtime/runtime.hpp"

#include <fmt/format.h>

namespace ferro::host {
namespace {

// Executes the plan on these outputs (the plan's residuals last, `n_residuals` of them) in one
// session. Inlined into its one caller: a call of its own cost a small fft's repeated call ~50
// instructions.
[[gnu::always_inline]] inline void run_plan(const CachedPlan& plan, const std::string& op, const EnginePtr& engine,
                                            const ferro_host_api* host, const AttrValues& attrs,
                                            std::span<ferro_tensor_impl* const> inputs,
                                            std::span<ferro_tensor_impl* const> outputs, size_t n_residuals) {
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
    if (plan.workspace_bytes() > 0) {
        workspace = Storage::allocate(engine, plan.workspace_bytes());
        session.allow(*workspace);
    }
    const ferro_exec_args args = exec_args(plan, attrs, views.data(), n_in, n_out, n_residuals,
                                           workspace_view(workspace.get(), plan.workspace_bytes()), session.get());
    invoke_executor(plan, op, *engine, host, session.get(), args);
    session.end();
}

}  // namespace

Outputs run_host_op(HostOpFn host_op, const HostOpCall& call, const Recordable& what, std::span<ferro_tensor_impl* const> into) {
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
        after_call(call.runtime, what, call.attrs, call.inputs, {outputs.data(), outputs.size()});
    }
    return outputs;
}

Outputs Dispatcher::execute(const CachedPlan& plan, const Recordable& what, const EnginePtr& engine, const AttrValues& attrs,
                            std::span<ferro_tensor_impl* const> inputs, std::span<ferro_tensor_impl* const> into) {
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
    try {
        run_plan(plan, op, engine, runtime_.host_api(), attrs, inputs, {written.data(), written.size()}, residuals.size());
    } catch (Error& e) {
        e.annotate(FERRO_PHASE_EXECUTE);
        throw;
    }
    if (into.empty() && any_autograd(inputs)) {
        after_call(runtime_, what, attrs, inputs, {outputs.data(), outputs.size()}, {residuals.data(), residuals.size()});
    }
    return outputs;
}

}  // namespace ferro::host
