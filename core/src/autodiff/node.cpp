#include "autodiff/node.hpp"

#include "autodiff/grad_mode.hpp"
#include "autodiff/host_ops.hpp"
#include "runtime/runtime.hpp"
#include "support/status.hpp"
#include "tensor/dtype.hpp"

#include <ferro/rules.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ferro::host {

void AutogradMetaDeleter::operator()(AutogradMeta* meta) const noexcept { delete meta; }

// Destroying a node drops its edges and saved inputs, which may drop the last reference to the
// next node up the chain, and so on: recursion as deep as the graph. Nested deletions are
// queued instead and the outermost one drains the queue.
void NodeDeleter::operator()(Node* node) const noexcept {
    thread_local bool draining = false;
    thread_local std::vector<Node*> pending;
    pending.push_back(node);
    if (draining) return;
    draining = true;
    while (!pending.empty()) {
        Node* next = pending.back();
        pending.pop_back();
        delete next;
    }
    draining = false;
}

void* Node::operator new(std::size_t) { return ThreadCache<sizeof(Node)>::allocate(); }  // Node is final
void Node::operator delete(void* p) noexcept { ThreadCache<sizeof(Node)>::deallocate(p); }

// The control block of a NodePtr, from a per-thread cache too (shared_ptr with a deleter
// allocates it separately).
template <class T> struct CachedAllocator {
    using value_type = T;
    CachedAllocator() = default;
    template <class U> CachedAllocator(const CachedAllocator<U>&) noexcept {}
    T* allocate(std::size_t n) {
        return n == 1 ? static_cast<T*>(ThreadCache<sizeof(T)>::allocate()) : std::allocator<T>().allocate(n);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        if (n == 1) ThreadCache<sizeof(T)>::deallocate(p);
        else std::allocator<T>().deallocate(p, n);
    }
    template <class U> bool operator==(const CachedAllocator<U>&) const noexcept { return true; }
};

Node::Node(const Recordable& what, const AttrValues& attrs, std::span<ferro_tensor_impl* const> inputs, uint32_t n_outputs)
    : op_(what.op),
      schema_(&what.schema),
      library_(what.library),
      schema_owner_(what.schema_owner != nullptr ? *what.schema_owner : nullptr),
      rule_ops_(what.rule_ops),
      attrs_(attrs),
      saved_inputs_(inputs.size()),
      saved_leaves_(inputs.size()),
      saved_outputs_(n_outputs),
      edges_(inputs.size()),
      n_outputs_(n_outputs) {
    for (const ferro_tensor_impl* t : inputs) inputs_.push_back({t->dtype, t->shape});
    if (library_) library_->add_user_object();
}

Node::~Node() {
    release_saved();
    if (library_) library_->remove_user_object();
}

void Node::mark_saved() noexcept {
    marked_ = true;
    for (auto* saved : {&saved_inputs_, &saved_outputs_}) {
        for (auto& t : *saved) {
            if (t) t->storage->add_saving_node();
        }
    }
}

void Node::release_saved() noexcept {
    for (auto* saved : {&saved_inputs_, &saved_outputs_}) {
        for (auto& t : *saved) {
            if (!t) continue;
            released_ = true;  // a node that saved nothing can run again
            if (marked_) t->storage->remove_saving_node();
            t = TensorPtr();
        }
    }
    if (!residuals_.empty()) released_ = true;
    residuals_.clear();
}

AutogradMeta& autograd_of(ferro_tensor_impl& t) {
    if (!t.autograd) t.autograd.reset(new AutogradMeta);
    return *t.autograd;
}

TensorPtr detach(const ferro_tensor_impl& t) {
    return wrap_storage(t.storage, t.dtype, span_of(t.shape), span_of(t.strides), t.byte_offset);
}

// While a JVP rule runs (tangents off), nothing it saves may carry a tangent: the tangent being
// computed would reach the saving node through its own graph, a cycle that is never freed.
// Tangents are one level deep, so no rule needs them there.
TensorPtr saved_alias(const ferro_tensor_impl& t) {
    TensorPtr alias = detach(t);
    if (t.autograd && t.autograd->tangent && tangents_enabled()) autograd_of(*alias).tangent = t.autograd->tangent;
    return alias;
}

void set_requires_grad(ferro_tensor_impl& t, bool on) {
    if (t.autograd && t.autograd->grad_fn) {
        throw Error(FERRO_INVALID_ARGUMENT,
                    fmt::format("requires_grad: the tensor is the output of '{}'; only leaves can change it "
                                "(detach() gives a leaf)",
                                t.autograd->grad_fn->op()));
    }
    if (!on) {
        if (t.autograd) {
            t.autograd->requires_grad = false;
            t.autograd->leaf.reset();
        }
        return;
    }
    if (!is_inexact(t.dtype)) {
        throw Error(FERRO_INVALID_ARGUMENT,
                    fmt::format("requires_grad: only floating and complex tensors can require grad, this one is {}",
                                dtype_name(t.dtype)));
    }
    AutogradMeta& meta = autograd_of(t);
    meta.requires_grad = true;
    if (!meta.leaf) meta.leaf = std::make_shared<LeafGrad>();
}

TensorPtr grad_of(const ferro_tensor_impl& t) {
    if (!t.autograd || !t.autograd->leaf) return TensorPtr();
    std::lock_guard lock(t.autograd->leaf->mutex);
    return t.autograd->leaf->grad;
}

namespace {

bool any_tangent(std::span<ferro_tensor_impl* const> inputs) {
    for (const ferro_tensor_impl* t : inputs) {
        if (t->autograd && t->autograd->tangent) return true;
    }
    return false;
}

// A tangent made to fit its output: broadcast to the output's shape (a rule may return the
// tangent of a broadcast operand as is) and cast to its dtype (real part for a real output).
TensorPtr fit_tangent(Runtime& rt, TensorPtr t, const ferro_tensor_impl& out, const std::string& op, size_t k) {
    if (!std::equal(t->shape.begin(), t->shape.end(), out.shape.begin(), out.shape.end())) {
        const std::vector<int64_t> shape(out.shape.begin(), out.shape.end());
        try {
            t = call_one(rt, "core.expand", {t.get()}, {plugin::attr_i64s("shape", shape)});
        } catch (const Error&) {
            throw Error(FERRO_INTERNAL, fmt::format("{}: the JVP rule returned a tangent of shape [{}] for output {} "
                                                    "of shape [{}]",
                                                    op, fmt::join(t->shape, ","), k, fmt::join(out.shape, ",")));
        }
    }
    return to_dtype(rt, std::move(t), out.dtype);
}

// Forward mode through one call: the JVP rule turns input tangents into output tangents.
void propagate_tangents(Runtime& rt, const Recordable& what, const AttrValues& attrs, std::span<ferro_tensor_impl* const> inputs,
                        std::span<TensorPtr> outputs) {
    const std::string& op = what.op;
    const ferro_op_schema& schema = what.schema;
    if (schema.jvp == nullptr) {
        if (schema.vjp == nullptr) return;  // not differentiable: the outputs carry no tangent
        throw Error(FERRO_UNIMPLEMENTED, fmt::format("{}: the op has no JVP rule, so tangents (forward mode) "
                                                     "cannot pass through it",
                                                     op));
    }
    boost::container::small_vector<ferro_tensor, 4> in(inputs.begin(), inputs.end()), out, in_t, out_t;
    // The rule sees aliases of the outputs: a node it records may save one, and saving the output
    // itself would make a cycle once the output holds the tangent that node helps compute. (The
    // outputs have no grad_fn yet, so the aliases stand in for them exactly.)
    boost::container::small_vector<TensorPtr, 4> output_aliases;
    for (const TensorPtr& t : outputs) {
        output_aliases.push_back(detach(*t));
        out.push_back(output_aliases.back().get());
    }
    for (ferro_tensor_impl* t : inputs) in_t.push_back(t->autograd ? t->autograd->tangent.get() : nullptr);
    out_t.assign(outputs.size(), nullptr);
    const std::span<const ferro_op> core_ops = rt.core_rule_ops();
    ferro_jvp_args a{sizeof a,
                     static_cast<uint32_t>(in.size()),
                     static_cast<uint32_t>(out.size()),
                     0,
                     attrs.data(),
                     in.data(),
                     out.data(),
                     in_t.data(),
                     out_t.data(),
                     &schema,
                     static_cast<uint32_t>(core_ops.size()),
                     static_cast<uint32_t>(what.rule_ops.size()),
                     core_ops.data(),
                     what.rule_ops.empty() ? nullptr : what.rule_ops.data()};
    ferro_status st = nullptr;
    {
        const NoTangents one_level;
        try {
            st = schema.jvp(rt.host_api(), &a);
        } catch (...) {
            st = make_status(FERRO_INTERNAL, escaped_exception_message("JVP rule"));
        }
    }
    boost::container::small_vector<TensorPtr, 2> owned;
    for (ferro_tensor t : out_t) owned.push_back(TensorPtr::adopt(t));
    if (st != nullptr) throw_rule_status(st, op + ": the JVP rule failed");
    for (size_t k = 0; k < outputs.size(); ++k) {
        ferro_tensor_impl& o = *outputs[k];
        if (!owned[k] || !is_inexact(o.dtype) || (schema.diff_outputs & FERRO_MASK_BIT(k)) == 0) continue;
        autograd_of(o).tangent = fit_tangent(rt, std::move(owned[k]), o, op, k);
    }
}

void record(const Recordable& what, const AttrValues& attrs, std::span<ferro_tensor_impl* const> inputs,
            std::span<TensorPtr> outputs, std::span<TensorPtr> residuals);

}  // namespace

void after_call(Runtime& rt, const Recordable& what, const AttrValues& attrs, std::span<ferro_tensor_impl* const> inputs,
                std::span<TensorPtr> outputs, std::span<TensorPtr> residuals) {
    // An output that is one of the inputs (an op that returned its input unchanged) becomes
    // its own handle first: the input's autograd state is not this call's to change.
    for (TensorPtr& out : outputs) {
        for (ferro_tensor_impl* in : inputs) {
            if (out.get() == in) out = detach(*in);
        }
    }
    if (tangents_enabled() && any_tangent(inputs)) propagate_tangents(rt, what, attrs, inputs, outputs);
    for (const ferro_tensor_impl* in : inputs) {
        if (requires_grad(*in)) return record(what, attrs, inputs, outputs, residuals);
    }
}

TensorPtr make_dual(Runtime& rt, ferro_tensor_impl& primal, ferro_tensor_impl& tangent) {
    check_runtime(rt.id(), primal.storage->engine(), "make_dual", "the primal");
    check_runtime(rt.id(), tangent.storage->engine(), "make_dual", "the tangent");
    if (!std::equal(primal.shape.begin(), primal.shape.end(), tangent.shape.begin(), tangent.shape.end())) {
        throw Error(FERRO_INVALID_ARGUMENT, fmt::format("make_dual: the tangent has shape [{}], the primal [{}]",
                                                        fmt::join(tangent.shape, ","), fmt::join(primal.shape, ",")));
    }
    if (!is_inexact(primal.dtype) || !is_inexact(tangent.dtype) || (is_complex(tangent.dtype) && !is_complex(primal.dtype))) {
        throw Error(FERRO_INVALID_ARGUMENT, fmt::format("make_dual: a {} primal cannot carry a {} tangent (floating "
                                                        "or complex, complex only for complex primals)",
                                                        dtype_name(primal.dtype), dtype_name(tangent.dtype)));
    }
    TensorPtr t = to_dtype(rt, TensorPtr::share(&tangent), primal.dtype);
    // A recorded identity (a reshape to the same shape) when the primal requires grad, so the
    // dual stays differentiable with respect to it; a plain alias otherwise.
    TensorPtr dual;
    if (requires_grad(primal)) {
        const NoTangents plain;  // the primal's own tangent, if any, is replaced below
        const std::vector<int64_t> shape(primal.shape.begin(), primal.shape.end());
        dual = call_one(rt, "core.reshape", {&primal}, {plugin::attr_i64s("shape", shape)});
    } else {
        dual = detach(primal);
    }
    autograd_of(*dual).tangent = std::move(t);
    return dual;
}

namespace {

void record(const Recordable& what, const AttrValues& attrs, std::span<ferro_tensor_impl* const> inputs,
            std::span<TensorPtr> outputs, std::span<TensorPtr> residuals) {
    const ferro_op_schema& schema = what.schema;
    if (!grad_enabled() || schema.vjp == nullptr) return;
    NodePtr node(new Node(what, attrs, inputs, static_cast<uint32_t>(outputs.size())), NodeDeleter{}, CachedAllocator<Node>{});
    bool any_edge = false;
    for (size_t i = 0; i < inputs.size(); ++i) {
        ferro_tensor_impl& in = *inputs[i];
        if ((schema.save_inputs & FERRO_MASK_BIT(i)) != 0) {
            if (requires_grad(in) && !in.autograd->grad_fn) {
                node->saved_inputs()[i] = saved_alias(in);
                node->saved_leaves()[i] = in.autograd->leaf;
            } else if (in.autograd && in.autograd->tangent && !tangents_enabled()) {
                node->saved_inputs()[i] = saved_alias(in);  // same graph position, no tangent
                AutogradMeta& meta = autograd_of(*node->saved_inputs()[i]);
                meta.requires_grad = in.autograd->requires_grad;
                meta.grad_fn = in.autograd->grad_fn;
                meta.slot = in.autograd->slot;
                meta.non_differentiable = in.autograd->non_differentiable;
            } else {
                node->saved_inputs()[i] = TensorPtr::share(&in);
            }
        }
        if (!requires_grad(in) || (schema.diff_inputs & FERRO_MASK_BIT(i)) == 0) continue;
        Edge& e = node->edges()[i];
        if (in.autograd->grad_fn) {
            e.node = in.autograd->grad_fn;
            e.slot = in.autograd->slot;
        } else {
            e.leaf = in.autograd->leaf;
        }
        any_edge = true;
    }
    if (!any_edge) return;  // no input the op differentiates requires grad
    node->residuals().assign(std::make_move_iterator(residuals.begin()), std::make_move_iterator(residuals.end()));
    for (size_t k = 0; k < outputs.size(); ++k) {
        ferro_tensor_impl& out = *outputs[k];
        if ((schema.save_outputs & FERRO_MASK_BIT(k)) != 0) node->saved_outputs()[k] = saved_alias(out);
        AutogradMeta& meta = autograd_of(out);
        if ((schema.diff_outputs & FERRO_MASK_BIT(k)) == 0 || !is_inexact(out.dtype)) {
            meta.non_differentiable = fmt::format("{} output {}", what.op, k);
            continue;
        }
        meta.requires_grad = true;
        meta.grad_fn = node;
        meta.slot = static_cast<uint32_t>(k);
    }
    node->mark_saved();
}

}  // namespace

}  // namespace ferro::host
