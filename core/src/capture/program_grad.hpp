// A program's gradient (docs/capture.md, "Gradients"): a run whose inputs require grad records
// one grad node for the whole program. Its VJP is itself a prepared program, built once per set
// of inputs differentiated from a capture of the eager forward and backward passes: the forward
// part runs the program and keeps the values the backward part reads (the node's residuals).
#pragma once

#include "capture/program.hpp"

#include <ferro/family.h>

#include <memory>
#include <string>

namespace ferro::host {

struct ProgramGrad;

// Per program input, whether it is differentiated (any number of inputs: a tensor network's).
using InputSet = std::vector<bool>;

// The grad node's schema, with the gradient it belongs to (the VJP finds it from its schema).
struct GradSchema {
    ferro_op_schema schema;
    const ProgramGrad* grad;
};

struct ProgramGrad {
    Runtime* runtime = nullptr;
    std::string op = "program";  // the node's name in messages
    GradSchema schema{};
    uint32_t n_inputs = 0, n_outputs = 0, n_residuals = 0;
    InputSet wrt;  // the inputs differentiated
    std::vector<InputSignature> outputs;
    // forward: the program's outputs, then the residuals. backward: (inputs, residuals,
    // cotangents) -> the gradients of the wrt inputs, in order. joint: (inputs, cotangents) ->
    // (outputs, gradients), the pass as captured: what a recorded backward (create_graph) runs,
    // since residuals carry no derivative.
    PreparedProgram forward, backward, joint;
    // The program's calls, and whether the backward part reads what a plan kept for its own rule
    // (ABI 1.8 residuals, such as the einsum module's step values): those carry no derivative
    // in the joint program, so a recorded backward (create_graph) runs the calls and their
    // backward pass on the tape instead, where the rules recompute what they need.
    ProgramPtr calls;
    bool reads_plan_residuals = false;
};

class GradCache;
std::shared_ptr<GradCache> make_grad_cache();

// The gradient of `prepared` for the inputs in `wrt`, built on first use from a capture of the
// eager passes on `inputs` (the run's); null when the program has none (a capture refused a
// call): then its calls are recorded one by one.
std::shared_ptr<const ProgramGrad> program_grad(const PreparedProgram& prepared, const InputSet& wrt,
                                                std::span<ferro_tensor_impl* const> inputs);

// The gradient programs built so far, for descriptions: the inputs differentiated and the
// parts' sizes (a set for which none could be built is left out).
struct GradientSummary {
    std::vector<uint32_t> wrt;
    size_t forward_steps = 0, backward_steps = 0, residuals = 0;
};
std::vector<GradientSummary> gradient_summaries(const PreparedProgram& prepared);

// Runs the forward part and records the program's grad node.
Outputs run_with_grad_node(const std::shared_ptr<const ProgramGrad>& grad, std::span<ferro_tensor_impl* const> inputs);

}  // namespace ferro::host
