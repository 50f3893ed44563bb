// einsum's derivatives, as einsums (so they run on any engine and differentiate again).
//
// JVP: d(out) = sum over operands i of the same einsum with operand i replaced by its tangent.
// VJP: operand i's cotangent is the einsum of the output cotangent with the other operands,
// conjugated (PyTorch's convention), onto operand i's distinct labels. Three things make it
// more than that: a label that no other factor carries at its full size (only operand i has
// it, or the others broadcast it at size 1) comes back through a ones vector; a repeated label
// (a diagonal) is put back on the diagonal through identity matrices under fresh labels; an
// axis that broadcast (size 1 against a larger label) is summed, then restored as size 1 by a
// reshape.
//
// That costs n einsums over n operands for a network of n. From 4 operands, when two or more
// need a derivative, the rules walk the forward's contraction tree instead (tree.hpp): each
// step's VJP is the one above for a 2-operand einsum, on the step values a sibling's cotangent
// needs, so the backward costs about two forwards (two products per step) whatever n is. The
// values are those the recorded forward kept (ABI 1.8 residuals: einsum_plugin.cpp), else they
// are recomputed pair by pair. Forward mode walks the same tree: d(a b) = da b + a db at every
// step.
#include "einsum.hpp"
#include "tree.hpp"

#include <ferro/rules.hpp>

#include <algorithm>

namespace ferro::einsum {
namespace {

using plugin::TensorRef;

bool contains(const std::vector<int>& v, int l) { return std::find(v.begin(), v.end(), l) != v.end(); }

// The forward's memory limit and distribution, which the derivative's einsums keep: each is
// then one einsum, sliced under the limit and spread over the ranks as the forward was (the
// tree walk would hold the forward's intermediates, and run on one rank).
struct Limit {
    int64_t bytes = 0;
    bool distribute = false;
    bool any() const { return bytes > 0 || distribute; }
};
Limit limit_of(const ferro_attr_value* attrs) { return {attrs[kMemoryLimit].v.i64, attrs[kDistribute].v.boolean != 0}; }

TensorRef call_einsum(const plugin::Rules& r, const std::vector<ferro_tensor>& operands,
                      const std::vector<std::vector<int>>& labels, const std::vector<int>& output, Limit limit = {}) {
    const std::vector<int64_t> sublists = to_sublists(labels, output);
    std::vector<ferro_named_attr> attrs{plugin::attr_i64s("sublists", sublists)};
    if (limit.bytes > 0) attrs.push_back(plugin::attr_i64("memory_limit", limit.bytes));
    if (limit.distribute) attrs.push_back(plugin::attr_bool("distribute", true));
    return r.call(rule_op(Op::einsum), operands, attrs);
}

// A constant of `like`'s dtype and engine from a creation op ("core.ones" of [n], "core.eye").
TensorRef ones(const plugin::Rules& r, ferro_tensor like, int64_t n) {
    const int64_t shape[1] = {n};
    return r.call(FERRO_CORE_OP_ONES, {},
                  {plugin::attr_i64s("shape", shape), plugin::attr_str("dtype", plugin::dtype_attr_name(r.signature(like).dtype)),
                   plugin::attr_str("engine", r.host()->tensor_engine(like))});
}
TensorRef eye(const plugin::Rules& r, ferro_tensor like, int64_t n) {
    return r.call(FERRO_CORE_OP_EYE, {},
                  {plugin::attr_i64("n", n), plugin::attr_str("dtype", plugin::dtype_attr_name(r.signature(like).dtype)),
                   plugin::attr_str("engine", r.host()->tensor_engine(like))});
}

// Operand i's cotangent, given the output's (g) and the other operands (operands[i] unused).
TensorRef operand_cotangent(const plugin::Rules& r, const Expression& e, const std::vector<int64_t>& sizes, ferro_tensor g,
                            std::span<const ferro_tensor> operands, std::span<const std::span<const int64_t>> shapes, size_t i,
                            Limit limit = {}) {
    const std::span<const int64_t> shape = shapes[i];
    const std::vector<int>& axes = e.inputs[i];
    // The axes that carry a gradient (not broadcast), and their distinct labels.
    std::vector<bool> broadcast(axes.size());
    std::vector<int> target;
    for (size_t ax = 0; ax < axes.size(); ++ax) {
        broadcast[ax] = shape[ax] == 1 && sizes[static_cast<size_t>(axes[ax])] != 1;
        if (!broadcast[ax] && !contains(target, axes[ax])) target.push_back(axes[ax]);
    }
    std::vector<TensorRef> held;  // conjugates and constants, alive until the call
    std::vector<ferro_tensor> factors{g};
    std::vector<std::vector<int>> labels{e.output};
    for (size_t j = 0; j < e.inputs.size(); ++j) {
        if (j == i) continue;
        factors.push_back(held.emplace_back(r.conj(operands[j])).get());
        labels.push_back(e.inputs[j]);
    }
    // A label no other factor carries at its full size (only operand i has it, or the others
    // broadcast it at size 1) comes back through a ones vector of that size.
    for (int l : target) {
        const int64_t size = sizes[static_cast<size_t>(l)];
        bool elsewhere = contains(e.output, l);  // the output has every label at its full size
        for (size_t j = 0; j < e.inputs.size() && !elsewhere; ++j) {
            for (size_t ax = 0; ax < e.inputs[j].size() && j != i && !elsewhere; ++ax) {
                elsewhere = e.inputs[j][ax] == l && shapes[j][ax] == size;
            }
        }
        if (elsewhere) continue;
        factors.push_back(held.emplace_back(ones(r, g, size)).get());
        labels.push_back({l});
    }
    TensorRef grad = call_einsum(r, factors, labels, target, limit);

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
    if (placed != target) grad = call_einsum(r, embed_operands, embed_labels, placed, limit);
    if (std::find(broadcast.begin(), broadcast.end(), true) != broadcast.end()) grad = r.reshape(grad, shape);
    return grad;
}

// A path written as opt_einsum's linear pairs, flat (einsum.path's output 0, a recorded
// einsum's residual 1).
Path path_of(const plugin::Rules& r, ferro_tensor flat_pairs, size_t n_operands) {
    std::vector<int64_t> flat(2 * (n_operands - 1));
    plugin::check(r.host(), r.host()->tensor_to_host(flat_pairs, flat.data(), flat.size() * sizeof(int64_t)));
    Path path;
    for (size_t s = 0; s < flat.size(); s += 2) path.emplace_back(static_cast<int>(flat[s]), static_cast<int>(flat[s + 1]));
    return path;
}

// The path the forward took (einsum.path with the call's attributes: the host's plan cache
// keeps it).
Path forward_path(const plugin::Rules& r, const ferro_attr_value* attrs, std::span<const ferro_tensor> inputs) {
    const std::vector<ferro_named_attr> named = named_attrs(attrs);
    const std::vector<TensorRef> answer = r.call_all(rule_op(Op::path), inputs, named, kPathOutputs);
    return path_of(r, answer.at(0).get(), inputs.size());
}

// What a recorded forward kept (ABI 1.8): its steps' values and its path (einsum_plugin.cpp,
// RecordedProgram); null where it kept none.
struct Kept {
    ferro_tensor values = nullptr, path = nullptr;
};
Kept kept_by(const ferro_vjp_args& a) {
    if (!FERRO_HAS_FIELD(&a, ferro_vjp_args, residuals) || a.n_residuals != 2) return {};
    return {a.residuals[0], a.residuals[1]};
}

// A pairwise step of the tree: its children's values (where computed) to its labels.
TensorRef step_value(const plugin::Rules& r, const Expression& step, ferro_tensor left, ferro_tensor right) {
    return call_einsum(r, {left, right}, step.inputs, step.output);
}

size_t at(int64_t k) { return static_cast<size_t>(k); }

// Whether a step's value in the program has the node's labels: those of size 1 aside, the
// program sums or drops a label early where the tree keeps it for an operand that broadcasts it
// (size 1 or stride 0 there), and that value is not the node's.
bool lies_as(const StepValue& v, const TreeNode& node) {
    size_t longer = 0;
    for (size_t ax = 0; ax < node.labels.size(); ++ax) {
        if (node.shape[ax] == 1) continue;
        if (std::find(v.labels.begin(), v.labels.end(), node.labels[ax]) == v.labels.end()) return false;
        ++longer;
    }
    return longer == v.labels.size();
}

// Node k's value as a view of the values a recorded einsum kept (its residual 0), where `v`
// says it lies (lies_as): the slot's run of elements, shaped in its memory order, then its axes
// put in the node's order.
TensorRef value_view(const plugin::Rules& r, const TensorRef& buffer, int64_t offset, const TreeNode& node, const StepValue& v) {
    const size_t rank = node.labels.size();
    std::vector<int64_t> strides(rank, 0);  // size-1 axes: 0, so they sort last
    int64_t numel = 1;
    for (size_t ax = 0; ax < rank; ++ax) {
        numel *= node.shape[ax];
        const auto it = std::find(v.labels.begin(), v.labels.end(), node.labels[ax]);
        if (node.shape[ax] != 1) strides[ax] = v.strides[static_cast<size_t>(it - v.labels.begin())];
    }
    std::vector<int64_t> order(rank);  // axes outermost first
    for (size_t ax = 0; ax < rank; ++ax) order[ax] = static_cast<int64_t>(ax);
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return strides[at(x)] > strides[at(y)]; });
    std::vector<int64_t> in_memory(rank), axes(rank);
    for (size_t i = 0; i < rank; ++i) {
        in_memory[i] = node.shape[at(order[i])];
        axes[at(order[i])] = static_cast<int64_t>(i);
    }
    TensorRef t = r.reshape(r.slice(buffer, 0, offset, offset + numel), in_memory);
    if (!std::is_sorted(order.begin(), order.end())) t = r.permute(t, axes);
    return t;
}

std::vector<ferro_signature> signatures(const plugin::Rules& r, std::span<const ferro_tensor> inputs) {
    std::vector<ferro_signature> sigs;
    for (ferro_tensor t : inputs) sigs.push_back(r.signature(t));
    return sigs;
}

// The steps' values a recorded forward kept: its program, compiled again on its path and its
// operands' layouts, says where each lies. False where they are not the tree's (lies_as).
bool values_from_residuals(const plugin::Rules& r, const Expression& e, const Kept& kept, const std::vector<TreeNode>& nodes,
                           const Path& path, std::span<const ferro_tensor> inputs, const std::vector<bool>& needed,
                           std::vector<TensorRef>& value) {
    const size_t n = inputs.size();
    PathOptions options;
    options.explicit_path = path;
    options.has_explicit_path = true;
    std::vector<int64_t> output_strides(FERRO_MAX_NDIM);
    const Program p = compile_recorded(e, signatures(r, inputs), options, output_strides.data());
    const uint64_t element = FERRO_DTYPE_BITS(p.dtype) / 8;
    const ferro_signature kept_sig = r.signature(kept.values);
    if (kept_sig.dtype != p.dtype || kept_sig.ndim != 1 ||
        static_cast<uint64_t>(kept_sig.shape[0]) != p.residual_bytes / element) {
        throw plugin::Error(FERRO_INTERNAL, "einsum: the values a recorded forward kept do not match its program");
    }
    for (size_t k = n; k < nodes.size(); ++k) {
        if (needed[k] && !lies_as(p.values[k - n], nodes[k])) return false;
    }
    const TensorRef buffer = r.borrow(kept.values);
    for (size_t k = n; k < nodes.size(); ++k) {
        if (!needed[k]) continue;
        const StepValue& v = p.values[k - n];
        value[k] = value_view(r, buffer, static_cast<int64_t>(p.slot_offsets[at(v.slot)] / element), nodes[k], v);
    }
    if (r.host()->log_enabled(r.host(), FERRO_LOG_DEBUG)) {
        const auto steps = std::count(needed.begin() + static_cast<std::ptrdiff_t>(n), needed.end(), true);
        plugin::log(r.host(), FERRO_LOG_DEBUG, "einsum",
                    "VJP: " + std::to_string(steps) + " step values read from what the recorded forward kept");
    }
    return true;
}

// The values of the tree's nodes that `needed` marks: operands borrowed, steps from what the
// recorded forward kept (values_from_residuals), or else pairwise einsums. Those are what a
// backward that records (create_graph) takes, its values having to be differentiable, and what
// a forward that kept none takes (a label of size 0, an operand broadcasting a label, fewer
// than two operands wanting a gradient when it ran).
std::vector<TensorRef> node_values(const plugin::Rules& r, const Expression& e, const Kept& kept,
                                   const std::vector<TreeNode>& nodes, const Path& path, std::span<const ferro_tensor> inputs,
                                   const std::vector<bool>& needed) {
    const size_t n = inputs.size();
    std::vector<TensorRef> value(nodes.size());
    for (size_t k = 0; k < n; ++k) {
        if (needed[k]) value[k] = r.borrow(inputs[k]);
    }
    if (kept.values != nullptr && !r.host()->grad_enabled(r.host()) &&
        values_from_residuals(r, e, kept, nodes, path, inputs, needed, value)) {
        return value;
    }
    for (size_t k = n; k < nodes.size(); ++k) {
        if (!needed[k]) continue;
        value[k] = step_value(r, step_expression(e, nodes, static_cast<int>(k)), value[at(nodes[k].left)].get(),
                              value[at(nodes[k].right)].get());
    }
    return value;
}

// Which nodes a walk needs. held[k]: operand k is marked (asked for a cotangent, or given a
// tangent), or a step's subtree holds a marked operand. needed[k]: k's value meets a sibling
// whose subtree holds one (d(a b) takes a where b moves), or goes into a needed value.
struct Demand {
    std::vector<bool> held, needed;
};
template <class Marked> Demand demand(const std::vector<TreeNode>& nodes, size_t n, Marked&& marked) {
    const size_t count = nodes.size();
    Demand d{std::vector<bool>(count), std::vector<bool>(count)};
    for (size_t k = 0; k < count; ++k) d.held[k] = k < n ? marked(k) : d.held[at(nodes[k].left)] || d.held[at(nodes[k].right)];
    for (size_t k = count; k-- > n;) {
        const TreeNode& node = nodes[k];
        if (d.held[at(node.left)]) d.needed[at(node.right)] = true;
        if (d.held[at(node.right)]) d.needed[at(node.left)] = true;
        if (d.needed[k]) d.needed[at(node.left)] = d.needed[at(node.right)] = true;
    }
    return d;
}

void tree_vjp(const plugin::Rules& r, const Expression& e, std::span<const std::span<const int64_t>> operand_shapes,
              const ferro_vjp_args& a) {
    const size_t n = a.n_inputs;
    const Kept kept = kept_by(a);
    const Path path = kept.path != nullptr ? path_of(r, kept.path, n) : forward_path(r, a.attrs, {a.inputs, n});
    const std::vector<TreeNode> nodes = contraction_tree(e, operand_shapes, path);
    const size_t count = nodes.size();
    const Demand d = demand(nodes, n, [&](size_t k) { return a.needs_input_grad[k] != 0; });
    const std::vector<bool>& wants = d.held;
    std::vector<TensorRef> value = node_values(r, e, kept, nodes, path, {a.inputs, n}, d.needed);
    std::vector<TensorRef> cotangent(count);
    cotangent[count - 1] = r.borrow(a.cotangents[0]);
    for (size_t k = count; k-- > n;) {
        if (!wants[k]) continue;
        const TreeNode& node = nodes[k];
        const Expression step = step_expression(e, nodes, static_cast<int>(k));
        const int children[2] = {node.left, node.right};
        const std::span<const int64_t> shapes[2] = {nodes[at(node.left)].shape, nodes[at(node.right)].shape};
        const ferro_tensor operands[2] = {value[at(node.left)].get(), value[at(node.right)].get()};
        const std::vector<int64_t> sizes = label_sizes(step, shapes);
        for (size_t side = 0; side < 2; ++side) {
            const size_t child = at(children[side]);
            if (!wants[child]) continue;
            TensorRef g = operand_cotangent(r, step, sizes, cotangent[k].get(), operands, shapes, side);
            if (child < n) {
                a.input_cotangents[child] = g.release();
            } else {
                cotangent[child] = std::move(g);
            }
        }
        // Each value is a sibling of exactly one step, each cotangent feeds one: done with them.
        cotangent[k].reset();
        value[at(node.left)].reset();
        value[at(node.right)].reset();
    }
}

void tree_jvp(const plugin::Rules& r, const Expression& e, const std::vector<TreeNode>& nodes, const ferro_jvp_args& a) {
    const size_t n = a.n_inputs, count = nodes.size();
    const Demand d = demand(nodes, n, [&](size_t k) { return a.input_tangents[k] != nullptr; });
    const std::vector<bool>& moves = d.held;
    const std::vector<bool>& needed = d.needed;
    std::vector<TensorRef> value(count), tangent(count);
    for (size_t k = 0; k < count; ++k) {
        if (k < n) {
            if (needed[k]) value[k] = r.borrow(a.inputs[k]);
            if (moves[k]) tangent[k] = r.borrow(a.input_tangents[k]);
            continue;
        }
        const TreeNode& node = nodes[k];
        const Expression step = step_expression(e, nodes, static_cast<int>(k));
        const ferro_tensor left = value[at(node.left)].get(), right = value[at(node.right)].get();
        if (needed[k]) value[k] = step_value(r, step, left, right);
        if (moves[k]) {  // d(a b) = da b + a db
            TensorRef term;
            if (moves[at(node.left)]) term = step_value(r, step, tangent[at(node.left)].get(), right);
            if (moves[at(node.right)]) {
                TensorRef other = step_value(r, step, left, tangent[at(node.right)].get());
                term = term ? r.add(term, other) : std::move(other);
            }
            tangent[k] = std::move(term);
        }
        for (int child : {node.left, node.right}) {
            value[at(child)].reset();
            tangent[at(child)].reset();
        }
    }
    a.output_tangents[0] = tangent[count - 1].release();
}

}  // namespace

ferro_status einsum_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return plugin::guard(host, [&] {
        const plugin::Rules r(host, *args, kRuleCalls);
        const ferro_vjp_args& a = *args;
        if (a.cotangents[0] == nullptr) return;
        const std::span<const ferro_signature> sigs(a.input_sigs, a.n_inputs);
        const Expression e = expression_of(a.attrs, sigs);
        const std::vector<std::span<const int64_t>> shapes = shapes_of(sigs);
        const std::span<const ferro_tensor> inputs(a.inputs, a.n_inputs);
        const auto wanted = static_cast<size_t>(
            std::count_if(a.needs_input_grad, a.needs_input_grad + a.n_inputs, [](ferro_bool b) { return b != 0; }));
        // Under a memory limit, or distributed, each cotangent is one einsum (see Limit).
        const Limit limit = limit_of(a.attrs);
        if (a.n_inputs >= kTreeMinOperands && wanted >= 2 && !limit.any()) {
            return tree_vjp(r, e, shapes, a);
        }
        const std::vector<int64_t> sizes = label_sizes(e, shapes);
        for (size_t i = 0; i < a.n_inputs; ++i) {
            if (a.needs_input_grad[i])
                a.input_cotangents[i] = operand_cotangent(r, e, sizes, a.cotangents[0], inputs, shapes, i, limit).release();
        }
    });
}

ferro_status einsum_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return plugin::guard(host, [&] {
        const plugin::Rules r(host, *args, kRuleCalls);
        const ferro_jvp_args& a = *args;
        const std::span<const ferro_tensor> inputs(a.inputs, a.n_inputs);
        const std::vector<ferro_signature> sigs = signatures(r, inputs);
        const Expression e = expression_of(a.attrs, sigs);
        const auto moving = static_cast<size_t>(
            std::count_if(a.input_tangents, a.input_tangents + a.n_inputs, [](ferro_tensor t) { return t != nullptr; }));
        const Limit limit = limit_of(a.attrs);
        if (a.n_inputs >= kTreeMinOperands && moving >= 2 && !limit.any()) {
            return tree_jvp(r, e, contraction_tree(e, shapes_of(sigs), forward_path(r, a.attrs, inputs)), a);
        }
        TensorRef total;
        for (size_t i = 0; i < a.n_inputs; ++i) {
            if (a.input_tangents[i] == nullptr) continue;
            std::vector<ferro_tensor> operands(a.inputs, a.inputs + a.n_inputs);
            operands[i] = a.input_tangents[i];
            TensorRef term = call_einsum(r, operands, e.inputs, e.output, limit);
            total = total ? r.add(total, term) : std::move(term);
        }
        if (total) a.output_tangents[0] = total.release();
    });
}

}  // namespace ferro::einsum
