// einsum's derivatives, as einsums (so they run on any engine and differentiate again).
//
// JVP: d(out) = sum over operands i of the same einsum with operand i replaced by its tangent.
// VJP: operand i's cotangent is the einsum of the output cotangent with the other operands,
// conjugated (PyTorch's convention), onto operand i's distinct labels. Three things make it
// more than that: a label only operand i has (summed by the forward) comes back through a
// ones vector; a repeated label (a diagonal) is put back on the diagonal through identity
// matrices under fresh labels; an axis that broadcast (size 1 against a larger label) is
// summed, then restored as size 1 by a reshape.
#include "einsum.hpp"

#include <ferro/rules.hpp>

#include <algorithm>

namespace ferro::einsum {
namespace {

using plugin::TensorRef;

bool contains(const std::vector<int>& v, int l) { return std::find(v.begin(), v.end(), l) != v.end(); }

TensorRef call_einsum(const plugin::Rules& r, const std::vector<ferro_tensor>& operands,
                      const std::vector<std::vector<int>>& labels, const std::vector<int>& output) {
    const std::vector<int64_t> sublists = to_sublists(labels, output);
    const ferro_named_attr attr = plugin::attr_i64s("sublists", sublists);
    return r.call("einsum.einsum", operands, {&attr, 1});
}

// A constant of `like`'s dtype and engine from a creation op ("core.ones" of [n], "core.eye").
TensorRef ones(const plugin::Rules& r, ferro_tensor like, int64_t n) {
    const int64_t shape[1] = {n};
    return r.call("core.ones", {}, {plugin::attr_i64s("shape", shape),
                                    plugin::attr_str("dtype", plugin::dtype_attr_name(r.signature(like).dtype)),
                                    plugin::attr_str("engine", r.host()->tensor_engine(like))});
}
TensorRef eye(const plugin::Rules& r, ferro_tensor like, int64_t n) {
    return r.call("core.eye", {}, {plugin::attr_i64("n", n),
                                   plugin::attr_str("dtype", plugin::dtype_attr_name(r.signature(like).dtype)),
                                   plugin::attr_str("engine", r.host()->tensor_engine(like))});
}

TensorRef operand_cotangent(const plugin::Rules& r, const Expression& e, const std::vector<int64_t>& sizes,
                            const ferro_vjp_args& a, size_t i) {
    const ferro_tensor g = a.cotangents[0];
    const ferro_signature& sig = a.input_sigs[i];
    const std::vector<int>& axes = e.inputs[i];
    // The axes that carry a gradient (not broadcast), and their distinct labels.
    std::vector<bool> broadcast(axes.size());
    std::vector<int> target;
    for (size_t ax = 0; ax < axes.size(); ++ax) {
        broadcast[ax] = sig.shape[ax] == 1 && sizes[static_cast<size_t>(axes[ax])] != 1;
        if (!broadcast[ax] && !contains(target, axes[ax])) target.push_back(axes[ax]);
    }
    std::vector<TensorRef> held;  // conjugates and constants, alive until the call
    std::vector<ferro_tensor> operands{g};
    std::vector<std::vector<int>> labels{e.output};
    for (size_t j = 0; j < e.inputs.size(); ++j) {
        if (j == i) continue;
        operands.push_back(held.emplace_back(r.conj(a.inputs[j])).get());
        labels.push_back(e.inputs[j]);
    }
    for (int l : target) {
        const bool elsewhere = std::any_of(labels.begin(), labels.end(), [&](const auto& ls) { return contains(ls, l); });
        if (elsewhere) continue;
        operands.push_back(held.emplace_back(ones(r, g, sizes[static_cast<size_t>(l)])).get());
        labels.push_back({l});
    }
    TensorRef grad = call_einsum(r, operands, labels, target);

    // Back onto operand i's axes: repeated labels through identities under fresh labels.
    std::vector<int> placed;
    std::vector<TensorRef> eyes;
    std::vector<ferro_tensor> embed_operands{grad.get()};
    std::vector<std::vector<int>> embed_labels{target};
    int fresh = e.n_labels();
    for (size_t ax = 0; ax < axes.size(); ++ax) {
        if (broadcast[ax]) continue;
        const int l = axes[ax];
        if (!contains(placed, l)) {
            placed.push_back(l);
            continue;
        }
        placed.push_back(fresh);
        embed_operands.push_back(eyes.emplace_back(eye(r, grad.get(), sizes[static_cast<size_t>(l)])).get());
        embed_labels.push_back({l, fresh++});
    }
    if (placed != target) grad = call_einsum(r, embed_operands, embed_labels, placed);
    if (std::find(broadcast.begin(), broadcast.end(), true) != broadcast.end()) grad = r.reshape(grad, plugin::shape_of(sig));
    return grad;
}

}  // namespace

ferro_status einsum_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return plugin::guard(host, [&] {
        const plugin::Rules r(host);
        const ferro_vjp_args& a = *args;
        if (a.cotangents[0] == nullptr) return;
        const std::span<const ferro_signature> sigs(a.input_sigs, a.n_inputs);
        const Expression e = expression_of(a.attrs, sigs);
        std::vector<std::span<const int64_t>> shapes;
        for (const auto& s : sigs) shapes.push_back(plugin::shape_of(s));
        const std::vector<int64_t> sizes = label_sizes(e, shapes);
        for (size_t i = 0; i < a.n_inputs; ++i) {
            if (a.needs_input_grad[i]) a.input_cotangents[i] = operand_cotangent(r, e, sizes, a, i).release();
        }
    });
}

ferro_status einsum_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return plugin::guard(host, [&] {
        const plugin::Rules r(host);
        const ferro_jvp_args& a = *args;
        std::vector<ferro_signature> sigs;
        for (uint32_t i = 0; i < a.n_inputs; ++i) sigs.push_back(r.signature(a.inputs[i]));
        const Expression e = expression_of(a.attrs, sigs);
        TensorRef total;
        for (size_t i = 0; i < a.n_inputs; ++i) {
            if (a.input_tangents[i] == nullptr) continue;
            std::vector<ferro_tensor> operands(a.inputs, a.inputs + a.n_inputs);
            operands[i] = a.input_tangents[i];
            TensorRef term = call_einsum(r, operands, e.inputs, e.output);
            total = total ? r.add(total, term) : std::move(term);
        }
        if (total) a.output_tangents[0] = total.release();
    });
}

}  // namespace ferro::einsum
