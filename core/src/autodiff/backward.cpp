#include "autodiff/backward.hpp"

#include "autodiff/grad_mode.hpp"
#include "autodiff/host_ops.hpp"
#include "autodiff/node.hpp"
#include "runtime/runtime.hpp"
#include "support/status.hpp"
#include "tensor/dtype.hpp"

#include <ferro/rules.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <boost/container/small_vector.hpp>

#include <memory>
#include <unordered_map>

namespace ferro::host {
namespace {

// ---- host-side tensor arithmetic (through the dispatcher, so create_graph records it) ----

using plugin::attr_bool;
using plugin::attr_i64s;
using plugin::attr_str;

TensorPtr add(Runtime& rt, const TensorPtr& a, const TensorPtr& b) {
    if (!a) return b;
    return call_one(rt, "core.add", {a.get(), b.get()});
}

// A cotangent made to fit its input: a rule may return it in the broadcast shape of the op's
// output (summed here back to the input's shape), and in the computation's dtype (cast here
// to the input's, keeping the real part for a real input).
TensorPtr fit_to_input(Runtime& rt, TensorPtr c, const InputShape& input, const std::string& op, size_t i) {
    const std::span<const int64_t> want = span_of(input.shape);
    const std::span<const int64_t> got = span_of(c->shape);
    if (!std::equal(want.begin(), want.end(), got.begin(), got.end())) {
        const auto bad = [&] {
            return Error(FERRO_INTERNAL,
                         fmt::format("{}: the VJP rule returned a cotangent of shape [{}] for input {} of shape [{}]", op,
                                     fmt::join(got, ","), i, fmt::join(want, ",")));
        };
        if (want.size() > got.size()) throw bad();
        const size_t lead = got.size() - want.size();
        std::vector<int64_t> axes;
        for (size_t d = 0; d < got.size(); ++d) {
            if (d < lead) {
                axes.push_back(static_cast<int64_t>(d));
            } else if (want[d - lead] != got[d]) {
                if (want[d - lead] != 1) throw bad();
                axes.push_back(static_cast<int64_t>(d));
            }
        }
        c = call_one(rt, "core.sum", {c.get()}, {attr_i64s("axes", axes), attr_bool("keepdim", true)});
        c = call_one(rt, "core.reshape", {c.get()}, {attr_i64s("shape", want)});
    }
    return to_dtype(rt, std::move(c), input.dtype);
}

// An input's signature as its rule receives it (strides: row-major).
void describe(const InputShape& input, ferro_signature& sig) {
    sig.struct_size = sizeof sig;
    sig.dtype = input.dtype;
    sig.ndim = static_cast<int32_t>(input.shape.size());
    sig.reserved = 0;
    std::copy(input.shape.begin(), input.shape.end(), sig.shape);
    const Dims strides = contiguous_strides(input.shape);
    std::copy(strides.begin(), strides.end(), sig.strides);
}

template <class T> using Small = boost::container::small_vector<T, 4>;

// ---- the pass ----

struct NodeState {
    NodePtr node;                  // keeps the node alive for the pass
    int pending = 0;               // consumers in the graph
    int unplaced = 0;              // consumers not yet in the topological order (while it is computed)
    bool leads = false;            // a gradient that is asked for flows through it
    std::vector<TensorPtr> grads;  // per output: the summed cotangent so far

    TensorPtr& grads_at(uint32_t slot, uint32_t n_outputs) {
        if (grads.size() < n_outputs) grads.resize(n_outputs);
        return grads[slot];
    }
};

struct SlotKey {
    const Node* node;
    uint32_t slot;
    bool operator==(const SlotKey&) const = default;
};
struct SlotKeyHash {
    size_t operator()(const SlotKey& k) const noexcept {
        return std::hash<const void*>()(k.node) ^ (std::hash<uint32_t>()(k.slot) * 0x9e3779b97f4a7c15ull);
    }
};

class Pass {
public:
    Pass(Runtime& rt, const BackwardArgs& args) : rt_(rt), args_(args), functional_(!args.inputs.empty()) {}

    std::vector<TensorPtr> run() {
        const GradMode mode(args_.create_graph);
        check_runtimes();
        find_targets();
        std::vector<std::pair<TensorPtr, size_t>> seeds = make_seeds();
        discover();
        for (const auto& [seed, root] : seeds) deliver_root(*args_.roots[root], seed);
        process();
        return std::move(results_);
    }

private:
    [[noreturn]] void fail(uint32_t code, const std::string& message) const {
        throw Error(code, fmt::format("{}: {}", args_.what, message));
    }

    // A graph is differentiated by the runtime whose ops recorded it.
    void check_runtimes() const {
        auto check = [&](std::span<ferro_tensor_impl* const> tensors, const char* what) {
            for (size_t i = 0; i < tensors.size(); ++i) {
                if (tensors[i] != nullptr) {
                    check_runtime(rt_.id(), tensors[i]->storage->engine(), args_.what, fmt::format("{} {}", what, i));
                }
            }
        };
        check(args_.roots, "output");
        check(args_.seeds, "cotangent");
        check(args_.inputs, "input");
    }

    // The gradient of tensor `t`, named `what`, must be something backward can reach.
    void check_differentiable(const ferro_tensor_impl& t, const std::string& what) const {
        if (t.autograd && !t.autograd->non_differentiable.empty()) {
            fail(FERRO_NOT_DIFFERENTIABLE,
                 fmt::format("{} is {}, which is not differentiable", what, t.autograd->non_differentiable));
        }
        if (!requires_grad(t)) {
            fail(FERRO_INVALID_ARGUMENT, fmt::format("{} does not require grad (mark leaves with requires_grad; "
                                                     "an op's result needs an input that requires grad, with grad "
                                                     "mode on)",
                                                     what));
        }
    }

    void find_targets() {
        results_.resize(args_.inputs.size());
        for (size_t i = 0; i < args_.inputs.size(); ++i) {
            const ferro_tensor_impl& t = *args_.inputs[i];
            check_differentiable(t, fmt::format("input {}", i));
            if (t.autograd->grad_fn) {
                slot_targets_[{t.autograd->grad_fn.get(), t.autograd->slot}].push_back(i);
            } else {
                leaf_targets_[t.autograd->leaf.get()].push_back(i);
            }
        }
    }

    std::vector<std::pair<TensorPtr, size_t>> make_seeds() {
        std::vector<std::pair<TensorPtr, size_t>> seeds;
        for (size_t r = 0; r < args_.roots.size(); ++r) {
            const ferro_tensor_impl& root = *args_.roots[r];
            const std::string name = args_.roots.size() == 1 ? "the root" : fmt::format("root {}", r);
            check_differentiable(root, name);
            ferro_tensor_impl* given = r < args_.seeds.size() ? args_.seeds[r] : nullptr;
            TensorPtr seed;
            if (given == nullptr) {
                if (numel(root.shape) != 1) {
                    fail(FERRO_INVALID_ARGUMENT,
                         fmt::format("{} has shape [{}]; a seed (its cotangent) is required unless it has one element", name,
                                     fmt::join(root.shape, ",")));
                }
                const std::string dt = dtype_name(root.dtype);
                const std::string engine = root.storage->engine().name();
                const std::vector<int64_t> shape(root.shape.begin(), root.shape.end());
                seed = call_one(rt_, "core.ones", {},
                                {attr_i64s("shape", shape), attr_str("dtype", dt.c_str()), attr_str("engine", engine.c_str())});
            } else {
                if (!std::equal(given->shape.begin(), given->shape.end(), root.shape.begin(), root.shape.end())) {
                    fail(FERRO_INVALID_ARGUMENT, fmt::format("the seed of {} has shape [{}], expected [{}]", name,
                                                             fmt::join(given->shape, ","), fmt::join(root.shape, ",")));
                }
                if (!is_inexact(given->dtype) || (is_complex(given->dtype) && !is_complex(root.dtype))) {
                    fail(FERRO_INVALID_ARGUMENT, fmt::format("the seed of {} is {}; expected a {} seed", name,
                                                             dtype_name(given->dtype), dtype_name(root.dtype)));
                }
                seed = to_dtype(rt_, TensorPtr::share(given), root.dtype);
            }
            seeds.emplace_back(std::move(seed), r);
        }
        return seeds;
    }

    // Every node reachable from the roots, with how many consumers each has, then which of
    // them lead to a gradient that is asked for. Both iterative.
    void discover() {
        std::vector<Node*> stack;
        for (ferro_tensor_impl* root : args_.roots) {
            const NodePtr& fn = root->autograd->grad_fn;
            if (fn && states_.emplace(fn.get(), NodeState{fn, 0, 0, false, {}}).second) stack.push_back(fn.get());
        }
        std::vector<Node*> order;  // discovery order: consumers before producers
        while (!stack.empty()) {
            Node* n = stack.back();
            stack.pop_back();
            order.push_back(n);
            for (const Edge& e : n->edges()) {
                if (!e.node) continue;
                auto [it, fresh] = states_.emplace(e.node.get(), NodeState{e.node, 0, 0, false, {}});
                ++it->second.pending;
                if (fresh) stack.push_back(e.node.get());
            }
        }
        // A node leads when an edge of it reaches a wanted leaf, a wanted (node, slot), or a
        // node that leads. Producers are settled before consumers by walking a topological
        // order backwards: compute one (Kahn) over the discovered subgraph first.
        std::vector<Node*> topo, ready;
        for (Node* n : order) {
            NodeState& s = states_.at(n);
            s.unplaced = s.pending;
            if (s.pending == 0) ready.push_back(n);
        }
        while (!ready.empty()) {
            Node* n = ready.back();
            ready.pop_back();
            topo.push_back(n);
            for (const Edge& e : n->edges()) {
                if (e.node && --states_.at(e.node.get()).unplaced == 0) ready.push_back(e.node.get());
            }
        }
        for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
            NodeState& s = states_.at(*it);
            for (const Edge& e : (*it)->edges()) s.leads = s.leads || edge_wanted(e);
        }
        topo_ = std::move(topo);
    }

    bool edge_wanted(const Edge& e) const {
        if (e.node) return states_.at(e.node.get()).leads || slot_targets_.count({e.node.get(), e.slot}) > 0;
        const std::shared_ptr<LeafGrad> leaf = e.leaf.lock();
        if (!leaf) return false;
        return functional_ ? leaf_targets_.count(leaf.get()) > 0 : true;
    }

    void deliver_root(const ferro_tensor_impl& root, const TensorPtr& seed) {
        const AutogradMeta& meta = *root.autograd;
        if (meta.grad_fn) {
            TensorPtr& g = states_.at(meta.grad_fn.get()).grads_at(meta.slot, meta.grad_fn->n_outputs());
            g = add(rt_, g, seed);
        } else {
            deliver_leaf(meta.leaf, seed);
        }
    }

    void deliver_leaf(const std::shared_ptr<LeafGrad>& leaf, const TensorPtr& g) {
        if (functional_) {
            auto it = leaf_targets_.find(leaf.get());
            if (it == leaf_targets_.end()) return;
            for (size_t i : it->second) results_[i] = add(rt_, results_[i], g);
            return;
        }
        std::lock_guard lock(leaf->mutex);
        leaf->grad = add(rt_, leaf->grad, g);
    }

    void process() {
        for (size_t i = 0; i < topo_.size(); ++i) {
            NodeState& s = states_.at(topo_[i]);
            if (functional_) capture_slots(*topo_[i], s);
            const bool any = std::any_of(s.grads.begin(), s.grads.end(), [](const TensorPtr& g) { return bool(g); });
            if (s.leads && any) run_rule(s, i);
            s.grads.clear();
        }
    }

    void capture_slots(const Node& n, NodeState& s) {
        for (uint32_t k = 0; k < s.grads.size(); ++k) {
            auto it = slot_targets_.find({&n, k});
            if (it == slot_targets_.end()) continue;
            for (size_t i : it->second) results_[i] = s.grads[k];
        }
    }

    // `position`: the node's place in the pass (0: the root's node), for messages.
    void run_rule(NodeState& s, size_t position) {
        Node& n = *s.node;
        if (n.released()) {
            fail(FERRO_FAILED_PRECONDITION,
                 fmt::format("{} (node {} of {} from the root): its saved tensors were freed by an earlier "
                             "backward; pass retain_graph to back-propagate through a graph more than once",
                             n.op(), position + 1, topo_.size()));
        }
        const size_t n_in = n.edges().size();
        const uint32_t n_out = n.n_outputs();
        s.grads.resize(n_out);
        // With create_graph, saved outputs are seen as outputs of this node again, and saved
        // leaves as leaves again (they are kept detached, see Node), so what the rule computes
        // from them is differentiable too.
        Small<TensorPtr> outputs(n_out), inputs(n_in);
        for (uint32_t k = 0; k < n_out; ++k) {
            const TensorPtr& saved = n.saved_outputs()[k];
            if (saved) outputs[k] = args_.create_graph ? reattach(*saved, s.node, k) : saved;
        }
        for (size_t i = 0; i < n_in; ++i) {
            inputs[i] = n.saved_inputs()[i];
            if (!args_.create_graph || !inputs[i]) continue;
            if (const std::shared_ptr<LeafGrad> leaf = n.saved_leaves()[i].lock()) inputs[i] = reattach_leaf(*inputs[i], leaf);
        }
        // The rule's view: every input's signature (shape and dtype), handles, flags.
        boost::container::small_vector<ferro_signature, 2> sigs(n_in, boost::container::default_init);  // 1 KB each: not zeroed
        Small<ferro_tensor> in(n_in), out(n_out), cot(n_out), result(n_in, nullptr);
        Small<ferro_bool> needs(n_in);
        for (size_t i = 0; i < n_in; ++i) {
            describe(n.inputs()[i], sigs[i]);
            in[i] = inputs[i].get();
            needs[i] = edge_wanted(n.edges()[i]) ? 1 : 0;
        }
        for (uint32_t k = 0; k < n_out; ++k) {
            out[k] = outputs[k].get();
            cot[k] = s.grads[k].get();
        }
        Small<ferro_tensor> residuals;
        for (const TensorPtr& t : n.residuals()) residuals.push_back(t.get());
        const std::span<const ferro_op> core_ops = rt_.core_rule_ops();
        ferro_vjp_args a{sizeof a,
                         static_cast<uint32_t>(n_in),
                         n_out,
                         0,
                         n.attrs().data(),
                         sigs.data(),
                         in.data(),
                         out.data(),
                         cot.data(),
                         needs.data(),
                         result.data(),
                         static_cast<uint32_t>(residuals.size()),
                         0,
                         residuals.empty() ? nullptr : residuals.data(),
                         &n.schema(),
                         static_cast<uint32_t>(core_ops.size()),
                         static_cast<uint32_t>(n.rule_ops().size()),
                         core_ops.data(),
                         n.rule_ops().empty() ? nullptr : n.rule_ops().data()};
        const ferro_host_api* host = rt_.host_api();
        ferro_status st = nullptr;
        try {
            st = n.schema().vjp(host, &a);
        } catch (...) {
            st = make_status(FERRO_INTERNAL, escaped_exception_message("VJP rule"));
        }
        Small<TensorPtr> owned(n_in);
        for (size_t i = 0; i < n_in; ++i) owned[i] = TensorPtr::adopt(result[i]);
        if (st != nullptr) {
            throw_rule_status(st, fmt::format("{}: the VJP rule of {} (node {} of {} from the root) failed", args_.what, n.op(),
                                              position + 1, topo_.size()));
        }
        for (size_t i = 0; i < n_in; ++i) {
            const Edge& e = n.edges()[i];
            if (!owned[i] || !needs[i]) continue;
            TensorPtr c = fit_to_input(rt_, std::move(owned[i]), n.inputs()[i], n.op(), i);
            if (e.node) {
                TensorPtr& g = states_.at(e.node.get()).grads_at(e.slot, e.node->n_outputs());
                g = add(rt_, g, c);
            } else if (const std::shared_ptr<LeafGrad> leaf = e.leaf.lock()) {
                deliver_leaf(leaf, c);
            }
        }
        if (!args_.retain_graph) n.release_saved();
    }

    static TensorPtr reattach_leaf(const ferro_tensor_impl& saved, const std::shared_ptr<LeafGrad>& leaf) {
        TensorPtr t = saved_alias(saved);
        AutogradMeta& meta = autograd_of(*t);
        meta.requires_grad = true;
        meta.leaf = leaf;
        return t;
    }

    static TensorPtr reattach(const ferro_tensor_impl& saved, const NodePtr& node, uint32_t slot) {
        TensorPtr t = saved_alias(saved);
        AutogradMeta& meta = autograd_of(*t);
        meta.requires_grad = true;
        meta.grad_fn = node;
        meta.slot = slot;
        return t;
    }

    Runtime& rt_;
    const BackwardArgs& args_;
    const bool functional_;
    std::unordered_map<const Node*, NodeState> states_;
    std::vector<Node*> topo_;
    std::unordered_map<SlotKey, std::vector<size_t>, SlotKeyHash> slot_targets_;
    std::unordered_map<const LeafGrad*, std::vector<size_t>> leaf_targets_;
    std::vector<TensorPtr> results_;
};

}  // namespace

std::vector<TensorPtr> run_backward(Runtime& runtime, const BackwardArgs& args) {
    try {
        return Pass(runtime, args).run();
    } catch (Error& e) {
        e.set_phase(FERRO_PHASE_BACKWARD);  // an op executed by a rule failed in backward too
        throw;
    }
}

}  // namespace ferro::host
