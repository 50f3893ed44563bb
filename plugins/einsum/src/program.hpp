// An einsum compiled for one call signature: the steps its session executor enqueues, as
// engine primitives (cast, copy_strided, reduce, binary mul, gemm_batched, fill) on strided views of
// the inputs, the output and one workspace. Nothing here touches memory: the program runs on
// any engine that implements the primitive set.
//
// Each pairwise step of the path becomes one gemm_batched (or a broadcast multiply when no
// label is summed) on views of its operands: the labels of an operand are grouped into batch,
// free and summed groups, and each group is one strided dimension when its axes nest in
// memory. Only an operand whose groups do not nest is copied (packed) first; the result of a
// step is laid out [batch, free of one, free of the other], and the last step writes straight
// into the output when the output's layout allows it.
#pragma once

#include "expression.hpp"
#include "paths.hpp"

#include <ferro/plugin.h>

#include <span>
#include <vector>

namespace ferro::einsum {

// How the path is chosen (the op's attributes).
struct PathOptions {
    std::string optimize = "auto";  // auto | greedy | optimal | random-greedy
    Path explicit_path;             // used when given
    bool has_explicit_path = false;
    Objective objective = Objective::flops;
    RandomGreedyOptions random;
};

// Where a view's memory is: an input, the output, or a workspace slot.
struct Place {
    enum Kind { input, output, workspace } kind = input;
    int index = 0;  // input number, or workspace slot
};

struct View {
    Place place;
    std::vector<int64_t> shape, strides;  // in elements; element 0 is the place's first
};

struct Step {
    enum Kind { cast, copy, reduce, mul, gemm, zero } kind = copy;
    View a, b, out;  // cast, copy, reduce: a -> out; mul: a * b -> out; zero: 0 -> out
    // gemm: out[p] = a[p] @ b[p] with (batch, row, column) strides in each view's `strides`.
    int64_t batch = 1, m = 1, n = 1, k = 1;
};

// Where the recorded mode (below) left one pairwise step's value: a residual slot, its labels
// longer than 1 and their strides (the slot is dense in some order of them).
struct StepValue {
    int slot = 0;
    std::vector<int> labels;
    std::vector<int64_t> strides;
};

struct Program {
    ferro_dtype dtype = FERRO_DTYPE_F64;  // of the output and every workspace slot
    std::vector<ferro_dtype> input_dtypes;
    std::vector<Step> steps;
    std::vector<uint64_t> slot_offsets;         // byte offset of each slot in the workspace or the residual
    std::vector<std::vector<int>> slot_labels;  // the labels each slot holds (row-major)
    uint64_t workspace_bytes = 0;
    Path path;
    PathCost cost;
    std::vector<StepValue> values;  // recorded mode: per path step but the last
    // Recorded mode: the slots of `values` lie in the call's output 1 (a residual), one after
    // another in residual_bytes, the others (packed operands) in the workspace.
    std::vector<bool> slot_kept;
    uint64_t residual_bytes = 0;
};

// The dtype numpy promotion gives the operands (all of f32, f64, c64, c128).
ferro_dtype result_dtype(std::span<const ferro_signature> inputs);

// The path for `e` under `options` (validated when explicit).
Path choose_path(const Network& net, const PathOptions& options);
Network network_of(const Expression& e, std::span<const int64_t> sizes);

// output_strides (may be NULL: row-major output): where the compiler writes the output layout it
// chooses (the last step's natural one; ABI 1.1, ferro_prepare_args.output_strides).
Program compile(const Expression& e, std::span<const ferro_signature> inputs, const PathOptions& options,
                int64_t* output_strides);

// compile() along `path` with the output's strides fixed (output_layout, one per output axis:
// a slice writing its part of the whole output) or, when empty, row-major over the output's
// shape as `inputs` give it (a slice's dense partial output).
Program compile_slice(const Expression& e, std::span<const ferro_signature> inputs, const Path& path,
                      std::span<const int64_t> output_layout);

// The recorded mode, for an einsum the autodiff tape records (ABI 1.8, residuals): compile's
// program, with the same output, but each step's value but the last stays where it was made, in
// the call's output 1, a residual the tape keeps for the VJP rule. The rule compiles the program
// again to learn where the values lie (`values`) and reads them instead of recomputing them.
// Needs two steps or more and no label of size 0.
Program compile_recorded(const Expression& e, std::span<const ferro_signature> inputs, const PathOptions& options,
                         int64_t* output_strides);

// Enqueues the program's steps into the call's session. accumulate: a gemm that writes the
// output adds to what it holds (beta 1), as the slices of a sliced einsum do (accumulates_in_place).
void run(const Program& p, const ferro_host_api* host, const ferro_exec_args& args, bool accumulate = false);

// Whether the program's only write to the output is its last step, a gemm: run(accumulate)
// then adds the contraction to the output.
bool accumulates_in_place(const Program& p);

}  // namespace ferro::einsum
