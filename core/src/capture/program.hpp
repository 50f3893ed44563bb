// Capture and replay (docs/capture.md): a program is the sequence of op calls a thread made
// between capture_begin and capture_end, each with the plan (or host op) it ran; a prepared
// program runs them again on new inputs without looking anything up.
#pragma once

#include "capture/active.hpp"
#include "capture/replay.hpp"
#include "dispatch/dispatcher.hpp"
#include "tensor/tensor.hpp"

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace ferro::host {

class Runtime;

// Where a step's input (or a program output) comes from.
struct ValueRef {
    enum class Kind : uint8_t { input, constant, step };
    Kind kind = Kind::input;
    uint32_t index = 0;   // of the input, constant or step
    uint32_t output = 0;  // of the step
};

// What a program input was at capture: the layout its steps' plans were prepared for.
struct InputSignature {  // NOLINT(bugprone-exception-escape): Dims (a small_vector) moves without allocating
    ferro_dtype dtype;
    Dims shape, strides;
    EnginePtr engine;
    bool autograd;  // had autograd state (a recorded call may prepare another plan)
};

struct ProgramStep {
    std::shared_ptr<ferro_bound_call_impl> call;  // the op and its attributes as given
    EntryPtr entry;                               // what the capture ran: plan or host op, engine
    std::vector<ValueRef> inputs;
    uint32_t n_outputs = 0;
    // The residuals its plan wrote for the tape (ABI 1.8), when the capture recorded the call for
    // the tape: values (step, n_outputs + r) that a recorded backward pass may read.
    uint32_t n_residuals = 0;
    std::vector<InputSignature> output_sigs;  // what its outputs (then residuals) were at capture
    bool backward = false;                    // made by a backward pass the capture recorded
    std::vector<std::string> fused;           // the ops of the steps fused into this one (capture/fusion.hpp)
    // Outputs whose last use is this step's, as (step, output), released once it has run.
    std::vector<ValueRef> last_uses;
};

// The values a step makes: its outputs, then its residuals.
inline uint32_t n_values(const ProgramStep& step) { return step.n_outputs + step.n_residuals; }

// What a plan writes at index k of a step's values: output k, else residual k - outputs.
inline const OutputSig& written_sig(const CachedPlan& plan, size_t k) {
    const size_t n = plan.outputs().size();
    return k < n ? plan.outputs()[k] : plan.residuals()[k - n];
}
inline size_t n_written(const CachedPlan& plan) { return plan.outputs().size() + plan.residuals().size(); }

struct Program {
    Runtime* runtime = nullptr;
    std::vector<InputSignature> inputs;
    std::vector<TensorPtr> constants;  // tensors from outside that were not declared inputs
    std::vector<ProgramStep> steps;
    std::vector<ValueRef> outputs;
};

using ProgramPtr = std::shared_ptr<const Program>;

// Keeps the steps the outputs need and says after which step each value is used for the last
// time (ProgramStep::last_uses, which must be empty).
void plan_steps(Program& p);

using StepArgs = boost::container::small_vector<ferro_tensor_impl*, 4>;

// The tensors `step` reads: the program's inputs, its constants, earlier steps' outputs.
inline std::span<ferro_tensor_impl* const> gather(const Program& p, const ProgramStep& step,
                                                  std::span<ferro_tensor_impl* const> inputs, const std::vector<Outputs>& values,
                                                  StepArgs& args) {
    args.clear();
    for (const ValueRef& v : step.inputs) {
        switch (v.kind) {
            case ValueRef::Kind::input: args.push_back(inputs[v.index]); break;
            case ValueRef::Kind::constant: args.push_back(p.constants[v.index].get()); break;
            case ValueRef::Kind::step: args.push_back(values[v.index][v.output].get()); break;
        }
    }
    return {args.data(), args.size()};
}

// What a run returns: for each program output, the input it is or the step value.
inline Outputs program_outputs(const Program& p, std::span<ferro_tensor_impl* const> inputs, const std::vector<Outputs>& values) {
    Outputs outs;
    for (const ValueRef& v : p.outputs) {
        if (v.kind == ValueRef::Kind::input) outs.push_back(TensorPtr::share(inputs[v.index]));
        else outs.push_back(values[v.index][v.output]);
    }
    return outs;
}

// A tensor's dtype, layout, engine and whether it has autograd state.
InputSignature signature_of(const ferro_tensor_impl& t);

class GradCache;  // capture/program_grad.hpp
class SizeCache;  // program.cpp

// A program prepared for input signatures: the entry (plan or host op) each step runs, and
// what a replay runs: the program with its elementwise runs fused, and where its intermediates
// live.
struct PreparedProgram {
    ProgramPtr program;
    std::vector<InputSignature> inputs;
    std::vector<EntryPtr> entries;
    ProgramPtr replayed;                   // fuse_elementwise's program (`program` when nothing fuses)
    std::vector<EntryPtr> replay_entries;  // its steps' entries
    MemoryPlan memory;                     // of `replayed`
    std::shared_ptr<RunStates> states;
    std::shared_ptr<GradCache> grads;  // the program's gradients, per set of inputs differentiated
    // Symbolic axes: per input, per axis, the largest size a run may give (0: fixed); empty
    // when none is. Runs with other sizes use preparations of their own, kept in `sizes`.
    std::vector<Dims> bounds;
    std::shared_ptr<SizeCache> sizes;
};

// ---- capture (the calling thread) ----

// Starts recording this thread's op calls on `runtime`; `inputs` become the program's inputs
// in this order. FAILED_PRECONDITION when this thread already captures.
void capture_begin(Runtime& runtime, std::span<ferro_tensor_impl* const> inputs);
// Ends the capture and returns the program computing `outputs` (tensors the capture made, or
// its inputs). When a call was refused during the capture, that refusal is thrown again here.
ProgramPtr capture_end(Runtime& runtime, std::span<ferro_tensor_impl* const> outputs);
// Drops this thread's capture, if any.
void capture_abort() noexcept;
// Marks the steps this thread's capture records from now on as a backward pass's.
void capture_backward_begins() noexcept;
// Whether this thread captures (cheap when no thread of the process does).
bool capturing() noexcept;
// FAILED_PRECONDITION "<what>: ... while capturing" when this thread captures: what a program
// cannot replay (reading a tensor's data on the host, in-place writes, unseeded randomness).
void refuse_while_capturing(const std::string& what, const std::string& why);

// ---- replay ----

// Prepares `program` for inputs of these signatures: each input's captured dtype and rank, any
// shape the program's ops accept (an op that refuses one fails the prepare, naming its step).
// Other shapes than the captured ones are planned step by step on placeholder tensors, which
// nothing computes into (host ops, views and creation, run on them).
PreparedProgram prepare_program(const ProgramPtr& program, std::span<const ferro_signature> inputs);
// With symbolic axes: `max_shapes` holds FERRO_MAX_NDIM bounds per input (> 0: symbolic).
PreparedProgram prepare_program(const ProgramPtr& program, std::span<const ferro_signature> inputs,
                                std::span<const int64_t> max_shapes);
// Prepared for the signatures it was captured with.
PreparedProgram prepare_captured(const ProgramPtr& program);
// Runs it on `inputs` of the prepared dtypes and shapes: inputs laid out as prepared (row-major,
// or as captured) run each step's prepared plan directly; others take the usual path (and
// their plans are cached as any call's).
Outputs run_program(const PreparedProgram& prepared, std::span<ferro_tensor_impl* const> inputs);
// Each step of `program` as its call would run (looked up, recorded for the tape, recorded by
// a capture in progress), on inputs of any layout.
Outputs run_calls(const Program& program, std::span<ferro_tensor_impl* const> inputs);

}  // namespace ferro::host
