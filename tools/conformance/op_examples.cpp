// A family's sample calls (ferro_module_iface.examples) of one op on one engine: values against
// the cpu engine, derivatives against finite differences.
#include "conformance.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ferro::conformance {
namespace {

bool bit(uint64_t mask, size_t i) { return ((mask >> std::min<size_t>(i, 63)) & 1u) != 0; }

// gradcheck of example `ex` of `op` with respect to its differentiable inexact inputs, of its
// differentiable inexact outputs; the other inputs are held fixed. A rule that refuses a loss
// it cannot differentiate (complex gauge) is not a defect: noted in `out`.
void gradcheck_example(const Runtime& rt, const OpInfo& op, const Runtime::Example& ex, OpCheck& out) {
    std::vector<size_t> wrt;
    for (size_t i = 0; i < ex.inputs.size(); ++i) {
        const bool diff = op.n_inputs < 0 ? op.diff_inputs != 0 : bit(op.diff_inputs, i);
        if (diff && detail::is_inexact(ex.inputs[i].dtype())) wrt.push_back(i);
    }
    if (wrt.empty()) return;
    const auto f = [&](const std::vector<Tensor>& x) {
        std::vector<Tensor> in = ex.inputs;
        for (size_t k = 0; k < wrt.size(); ++k) {
            // A triangle-reading input: perturbed over Hermitian matrices.
            const bool hermitian = (ex.input_flags[wrt[k]] & FERRO_EXAMPLE_HERMITIAN) != 0;
            in[wrt[k]] = hermitian ? (x[k] + x[k].mT().conj()) * 0.5 : x[k];
        }
        std::vector<Tensor> outs = call_all(rt.ref(), op.name.c_str(), in, ex.attrs), kept;
        for (size_t k = 0; k < outs.size(); ++k) {
            if (bit(op.diff_outputs, k) && detail::is_inexact(outs[k].dtype())) kept.push_back(outs[k]);
        }
        return kept;
    };
    std::vector<Tensor> x;
    x.reserve(wrt.size());
    for (size_t i : wrt) x.push_back(ex.inputs[i]);
    GradcheckOptions go;
    go.check_jvp = op.has_jvp;
    try {
        const GradcheckResult g = gradcheck(f, x, go);
        out.gradchecked = true;
        if (!g.ok) {
            out.status = "fail";
            out.messages.push_back(fmt::format("example '{}': gradcheck: {}", ex.what, g.report));
        }
    } catch (const Error& refused) {
        if (refused.code() != FERRO_NOT_DIFFERENTIABLE) throw;
        out.messages.push_back(fmt::format("example '{}': gradcheck not run: {}", ex.what, refused.what()));
    }
}

}  // namespace

OpCheck check_op_examples(const Runtime& rt, const OpInfo& op, DType dtype, const std::string& engine, bool quick) {
    OpCheck out;
    try {
        auto examples = rt.op_examples(op.name, dtype, engine);
        if (examples.empty()) {
            out.status = "not checked";
            out.messages.push_back("the family's modules provide no examples for this op and dtype");
            return out;
        }
        if (quick) examples.resize(1);
        const bool on_cpu = engine == "cpu";
        const auto cpu_examples = on_cpu ? examples : rt.op_examples(op.name, dtype, "cpu");
        out.examples = examples.size();
        const auto call = [&](const Runtime::Example& ex) { return call_all(rt.ref(), op.name.c_str(), ex.inputs, ex.attrs); };
        for (size_t e = 0; e < examples.size(); ++e) {
            const auto& ex = examples[e];
            const std::vector<Tensor> got = call(ex);
            // On the cpu: the same call again gives the same result; elsewhere: the cpu's result.
            const std::vector<Tensor> want = call(cpu_examples[e]);
            const Difference d = difference(got, want, on_cpu ? Tolerance{} : computed_tolerance(dtype));
            out.max_error = std::max(out.max_error, d.error);
            if (!d.ok) {
                out.status = "fail";
                out.messages.push_back(fmt::format("example '{}': {} {:.3g}: {}", ex.what,
                                                   on_cpu ? "a second run differs by" : "differs from the cpu engine by", d.error,
                                                   d.why));
            }
            const bool grad_dtype = dtype == DType::f64 || (dtype == DType::c128 && !quick);
            if (grad_dtype && op.has_vjp && on_cpu) gradcheck_example(rt, op, ex, out);
        }
    } catch (const Error& e) {
        out.status = "fail";
        out.messages.push_back(fmt::format("{}: {}", e.code_name(), e.what()));
    }
    return out;
}

}  // namespace ferro::conformance
