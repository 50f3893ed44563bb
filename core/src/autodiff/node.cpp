#include "autodiff/node.hpp"

#include "autodiff/grad_mode.hpp"
#include "support/status.hpp"
#include "tensor/dtype.hpp"

#include <fmt/format.h>

namespace ferro {

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

void* Node::operator new(std::size_t size) {
    return size == sizeof(Node) ? ThreadCache<sizeof(Node)>::allocate() : ::operator new(size);
}
void Node::operator delete(void* p) noexcept { ThreadCache<sizeof(Node)>::deallocate(p); }

// The control block of a NodePtr, from a per-thread cache too (shared_ptr with a deleter
// allocates it separately).
template <class T>
struct CachedAllocator {
    using value_type = T;
    CachedAllocator() = default;
    template <class U>
    CachedAllocator(const CachedAllocator<U>&) noexcept {}
    T* allocate(std::size_t n) {
        return n == 1 ? static_cast<T*>(ThreadCache<sizeof(T)>::allocate()) : std::allocator<T>().allocate(n);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        if (n == 1) ThreadCache<sizeof(T)>::deallocate(p);
        else std::allocator<T>().deallocate(p, n);
    }
    template <class U>
    bool operator==(const CachedAllocator<U>&) const noexcept { return true; }
};

Node::Node(std::string op, const ferro_op_schema& schema, LibraryPtr library, const AttrValues& attrs,
           std::span<ferro_tensor_impl* const> inputs, uint32_t n_outputs)
    : op_(std::move(op)), schema_(&schema), library_(std::move(library)), attrs_(attrs),
      saved_inputs_(inputs.size()), saved_leaves_(inputs.size()), saved_outputs_(n_outputs),
      edges_(inputs.size()), n_outputs_(n_outputs) {
    for (const ferro_tensor_impl* t : inputs) inputs_.push_back({t->dtype, t->shape});
    if (library_) library_->add_user_object();
}

Node::~Node() {
    if (library_) library_->remove_user_object();
}

void Node::release_saved() noexcept {
    for (auto* saved : {&saved_inputs_, &saved_outputs_}) {
        for (auto& t : *saved) {
            if (t) released_ = true;  // a node that saved nothing can run again
            t = TensorPtr();
        }
    }
}

AutogradMeta& autograd_of(ferro_tensor_impl& t) {
    if (!t.autograd) t.autograd.reset(new AutogradMeta);
    return *t.autograd;
}

TensorPtr detach(const ferro_tensor_impl& t) {
    return wrap_storage(t.storage, t.dtype, span_of(t.shape), span_of(t.strides), t.byte_offset);
}

void set_requires_grad(ferro_tensor_impl& t, bool on) {
    if (t.autograd && t.autograd->grad_fn) {
        throw Error(FERRO_INVALID_ARGUMENT,
                    fmt::format("requires_grad: the tensor is the output of '{}'; only leaves can change it "
                                "(detach() gives a leaf)", t.autograd->grad_fn->op()));
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

void record(const std::string& op, const ferro_op_schema& schema, const LibraryPtr& library,
            const AttrValues& attrs, std::span<ferro_tensor_impl* const> inputs, std::span<TensorPtr> outputs) {
    if (!grad_enabled() || schema.vjp == nullptr) return;
    NodePtr node(new Node(op, schema, library, attrs, inputs, static_cast<uint32_t>(outputs.size())), NodeDeleter{},
                 CachedAllocator<Node>{});
    bool any_edge = false;
    for (size_t i = 0; i < inputs.size(); ++i) {
        ferro_tensor_impl& in = *inputs[i];
        if ((schema.save_inputs & FERRO_MASK_BIT(i)) != 0) {
            if (requires_grad(in) && !in.autograd->grad_fn) {
                node->saved_inputs()[i] = detach(in);
                node->saved_leaves()[i] = in.autograd->leaf;
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
    for (size_t k = 0; k < outputs.size(); ++k) {
        // An output that is one of the inputs (an op that returns its input unchanged) becomes
        // its own handle first: the input's autograd state is not this node's to change.
        for (ferro_tensor_impl* in : inputs) {
            if (outputs[k].get() == in) outputs[k] = detach(*in);
        }
        ferro_tensor_impl& out = *outputs[k];
        if ((schema.save_outputs & FERRO_MASK_BIT(k)) != 0) node->saved_outputs()[k] = detach(out);
        AutogradMeta& meta = autograd_of(out);
        if ((schema.diff_outputs & FERRO_MASK_BIT(k)) == 0 || !is_inexact(out.dtype)) {
            meta.non_differentiable = fmt::format("{} output {}", op, k);
            continue;
        }
        meta.requires_grad = true;
        meta.grad_fn = node;
        meta.slot = static_cast<uint32_t>(k);
    }
}

}  // namespace ferro
