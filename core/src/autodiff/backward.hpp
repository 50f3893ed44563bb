// Reverse mode over the tape (DESIGN §8): from roots and their seeds, in topological order of
// the recorded graph (found iteratively: chains of 10^6 nodes are fine), each node's VJP rule
// turns the cotangents of its outputs into cotangents of its inputs, which are summed per
// (node, output) and per leaf. Either accumulates into leaves' .grad (backward) or returns the
// cotangents of chosen tensors (vjp / grad), leaving .grad alone.
#pragma once

#include "tensor/tensor.hpp"

#include <span>
#include <vector>

namespace ferro::host {

class Runtime;

struct BackwardArgs {
    std::span<ferro_tensor_impl* const> roots;
    std::span<ferro_tensor_impl* const> seeds;   // per root; null = ones, for a one-element root
    std::span<ferro_tensor_impl* const> inputs;  // empty: accumulate .grad of leaves
    bool retain_graph = false;                   // keep saved tensors for another backward
    bool create_graph = false;                   // record this pass, so its results can be differentiated
    const char* what = "backward";               // the API entry, for messages
};

// Functional mode: per input, its cotangent (null when no gradient reaches it). Accumulate
// mode: empty.
std::vector<TensorPtr> run_backward(Runtime& runtime, const BackwardArgs& args);

}  // namespace ferro::host
