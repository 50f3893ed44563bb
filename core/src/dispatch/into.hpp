// Calls that write their outputs into tensors the caller gives (numpy's and torch's out=;
// ferro_op_call_args.into). Such a call records no gradient, so it refuses inputs it would
// record or propagate derivatives for, and destinations that require grad, were computed by a
// recorded op or carry a tangent. A destination is written directly when it is laid out as the
// plan would have allocated its output (the plan's strides, at the start of its storage,
// 64-byte aligned) and shares no memory with the inputs or the other destinations; otherwise
// the call computes fresh outputs and copies them in (any strides, and in-place calls, work).
#pragma once

#include "dispatch/dispatcher.hpp"
#include "dispatch/plan_cache.hpp"

#include <span>
#include <string>

namespace ferro::host::into {

using Tensors = std::span<ferro_tensor_impl* const>;

// Whether no input or destination has autograd state (nor is NULL, nor saved by a grad node):
// check_autograd's common case, inline.
inline bool plain(Tensors inputs, Tensors into) {
    bool plain = true;
    for (const ferro_tensor_impl* t : into) plain = plain && t != nullptr && !t->autograd && !t->storage->saved_by_a_node();
    for (const ferro_tensor_impl* t : inputs) plain = plain && !t->autograd;
    return plain;
}

// INVALID_ARGUMENT naming the op: a NULL destination, a destination that requires grad, has a
// grad_fn, carries a tangent or shares its storage with a tensor a grad node saved, an input that requires grad while grad mode is on, or one
// carrying a tangent.
void check_autograd(const std::string& op, Tensors inputs, Tensors into);

// INVALID_ARGUMENT naming the op and the destination unless there is one per output, each on
// `engine` with that output's dtype and shape, and none holds an element twice. Returns
// whether the plan may write straight into them (see the top of this file).
bool check_plan_outputs(const std::string& op, const Engine& engine, std::span<const OutputSig> outputs, Tensors inputs,
                        Tensors into);
// The same checks against a host op's outputs (which are then copied).
void check_host_outputs(const std::string& op, const Engine& engine, const Outputs& outputs, Tensors into);

// Copies each fresh output into its destination, on `engine`.
void copy_outputs(const EnginePtr& engine, const Outputs& fresh, Tensors into);

}  // namespace ferro::host::into
