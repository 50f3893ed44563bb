// The tape (DESIGN §8): grad nodes that the dispatch path records when grad mode is on and an
// input requires grad. A node holds what its op's VJP rule needs (schema, attributes, input
// signatures, the tensors the schema asks to save) and one edge per input to where that
// input's cotangent goes: the node that produced it, or a leaf's .grad. Outputs point back at
// their node through their AutogradMeta; saved outputs are kept as detached aliases, so no
// reference cycle forms.
#pragma once

#include "dispatch/attrs.hpp"
#include "loader/library.hpp"
#include "support/thread_cache.hpp"
#include "tensor/tensor.hpp"

#include <ferro/family.h>

#include <boost/container/small_vector.hpp>

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace ferro::host {

class Runtime;
class Node;
struct NodeDeleter {
    void operator()(Node* node) const noexcept;  // iterative: a 10^6-node chain cannot overflow
};
using NodePtr = std::shared_ptr<Node>;

// The accumulated gradient of a leaf that requires grad, owned by the leaf's AutogradMeta.
struct LeafGrad {
    std::mutex mutex;  // graphs on several threads may share a leaf
    TensorPtr grad;
};

// Where one input's cotangent goes: its producer's output `slot`, a leaf, or nowhere (the
// input does not require grad, or the op does not differentiate it).
struct Edge {
    NodePtr node;
    uint32_t slot = 0;
    // Held weakly: with create_graph a leaf's .grad is itself recorded, so grad -> node ->
    // edge -> leaf would be a reference cycle. A leaf that is gone has no reader anyway.
    std::weak_ptr<LeafGrad> leaf;
    bool active() const noexcept { return node || !leaf.expired(); }
};

// Autograd state of a tensor; absent for the plain tensors most calls see.
struct AutogradMeta {
    // Every recorded output gets one: reuse their blocks per thread.
    static void* operator new(std::size_t) { return ThreadCache<kBlock>::allocate(); }
    static void operator delete(void* p) noexcept { ThreadCache<kBlock>::deallocate(p); }
    static constexpr std::size_t kBlock = 128;

    bool requires_grad = false;
    NodePtr grad_fn;  // the node that produced this tensor; null for a leaf
    uint32_t slot = 0;
    std::shared_ptr<LeafGrad> leaf;  // leaves that require grad
    // Set on outputs a differentiable op marks non-differentiable (schema diff_outputs):
    // "linalg.lu output 0". Asking for a gradient through one is NOT_DIFFERENTIABLE.
    std::string non_differentiable;
    TensorPtr tangent;  // forward mode: the directional derivative carried with this tensor
};
static_assert(sizeof(AutogradMeta) <= AutogradMeta::kBlock);

// An input as its rule sees it: dtype and shape (the rule's input_sigs).
struct InputShape {  // NOLINT(bugprone-exception-escape): Dims (a small_vector) moves without allocating
    ferro_dtype dtype;
    Dims shape;
};

// What the tape needs to record a call: its op, schema, the library of its rules and the
// handles of the ops its family's rules declared (FERRO_EXT_RULE_CALLS); for a schema the host
// made (a program's gradient), what owns it.
struct Recordable {
    const std::string& op;
    const ferro_op_schema& schema;
    const LibraryPtr& library;
    std::span<const ferro_op> rule_ops;
    const std::shared_ptr<const void>* schema_owner = nullptr;
};

class Node final {
public:
    // Every recorded call makes one: reuse their blocks per thread.
    static void* operator new(std::size_t size);
    static void operator delete(void* p) noexcept;

    Node(const Recordable& what, const AttrValues& attrs, std::span<ferro_tensor_impl* const> inputs, uint32_t n_outputs);
    ~Node();
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;

    const std::string& op() const noexcept { return op_; }
    const ferro_op_schema& schema() const noexcept { return *schema_; }
    std::span<const ferro_op> rule_ops() const noexcept { return rule_ops_; }
    const AttrValues& attrs() const noexcept { return attrs_.values(); }
    template <class T> using PerInput = boost::container::small_vector<T, 2>;  // most ops have one or two inputs
    const PerInput<InputShape>& inputs() const noexcept { return inputs_; }
    PerInput<Edge>& edges() noexcept { return edges_; }
    const PerInput<Edge>& edges() const noexcept { return edges_; }
    uint32_t n_outputs() const noexcept { return n_outputs_; }

    PerInput<TensorPtr>& saved_inputs() noexcept { return saved_inputs_; }
    // For a saved input that is a leaf requiring grad: its .grad, held weakly. The leaf is
    // saved as a detached alias (a leaf's .grad can hold this node through create_graph, so a
    // strong reference to the leaf would be a cycle) and reattached when a pass records.
    PerInput<std::weak_ptr<LeafGrad>>& saved_leaves() noexcept { return saved_leaves_; }
    PerInput<TensorPtr>& saved_outputs() noexcept { return saved_outputs_; }
    // What the forward's plan kept for the rule (ABI 1.8), in the plan's order.
    std::vector<TensorPtr>& residuals() noexcept { return residuals_; }
    // Drops the saved tensors (after a backward without retain_graph); a node that had some
    // can no longer run its rule.
    void release_saved() noexcept;
    // Marks the storages of the saved tensors as saved (once they are all set), so that a
    // write into one is refused until this node releases them (Storage::saved_by_a_node).
    void mark_saved() noexcept;
    bool released() const noexcept { return released_; }

private:
    std::string op_;
    const ferro_op_schema* schema_;
    LibraryPtr library_;                        // keeps the rules' plugin loaded; null for built-ins
    std::shared_ptr<const void> schema_owner_;  // keeps a schema the host made alive
    std::span<const ferro_op> rule_ops_;        // the runtime's, which outlives its nodes
    OwnedAttrs attrs_;
    PerInput<InputShape> inputs_;
    PerInput<TensorPtr> saved_inputs_;  // per input, null where the schema saves nothing
    PerInput<std::weak_ptr<LeafGrad>> saved_leaves_;
    PerInput<TensorPtr> saved_outputs_;  // per output, detached aliases
    std::vector<TensorPtr> residuals_;
    PerInput<Edge> edges_;
    uint32_t n_outputs_;
    bool released_ = false;
    bool marked_ = false;  // mark_saved ran: release_saved unmarks
};

// Whether an input has autograd state (requires grad, carries a tangent): the one branch
// per input every op call pays.
inline bool any_autograd(std::span<ferro_tensor_impl* const> inputs) noexcept {
    for (const ferro_tensor_impl* t : inputs) {
        if (t->autograd) [[unlikely]]
            return true;
    }
    return false;
}

// After an op call with an input that has autograd state: propagates tangents (forward mode,
// through the schema's JVP rule), then records a grad node when grad mode is on and an input
// requires grad (reverse mode; an op without a VJP rule records nothing and its outputs do not
// require grad). An output that is one of the inputs is replaced by a new handle first. The
// node keeps `residuals`, what the call's plan wrote for the VJP rule (ABI 1.8).
void after_call(Runtime& runtime, const Recordable& what, const AttrValues& attrs, std::span<ferro_tensor_impl* const> inputs,
                std::span<TensorPtr> outputs, std::span<TensorPtr> residuals = {});

// Forward mode: a tensor equal to `primal` that carries `tangent` (same shape, cast to the
// primal's dtype); differentiable with respect to `primal` when that requires grad.
TensorPtr make_dual(Runtime& runtime, ferro_tensor_impl& primal, ferro_tensor_impl& tangent);
inline TensorPtr tangent_of(const ferro_tensor_impl& t) { return t.autograd ? t.autograd->tangent : TensorPtr(); }

// A tensor's AutogradMeta, created when absent.
AutogradMeta& autograd_of(ferro_tensor_impl& t);

// requires_grad on a leaf: only floating and complex tensors, only leaves (a recorded output
// already requires grad through its node). INVALID_ARGUMENT otherwise.
void set_requires_grad(ferro_tensor_impl& t, bool requires_grad);
inline bool requires_grad(const ferro_tensor_impl& t) noexcept { return t.autograd && t.autograd->requires_grad; }
// A leaf's accumulated gradient (a new reference), or null.
TensorPtr grad_of(const ferro_tensor_impl& t);
// A new handle sharing `t`'s storage and layout, without autograd state.
TensorPtr detach(const ferro_tensor_impl& t);
// detach, keeping `t`'s tangent: what a node saves (the values and, for forward mode through
// the backward pass, their tangent when the op ran) and what a pass unpacks again.
TensorPtr saved_alias(const ferro_tensor_impl& t);

}  // namespace ferro::host
