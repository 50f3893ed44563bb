// Slicing: an einsum whose intermediates do not fit in memory runs as a sum of smaller ones.
// Fixing the index of some labels (the sliced labels) in every operand leaves a network of the
// same form without them; contracting it once per combination of their indices and adding the
// results (or, for a sliced label of the output, writing each result into its own part of the
// output) gives the whole contraction. The path stays the whole network's, so every
// intermediate that carried a sliced label shrinks by its size, and the flops grow where a
// sliced label was summed before the last step (what came before is repeated per slice).
//
// memory_limit bounds the working memory of one call: the workspace its plan asks the host
// for, which holds every intermediate and packed operand alive at the same time and, when a
// summed label is sliced and the last step cannot add into the output itself (a gemm with beta
// 1), the buffer each slice's partial output is made in before it is added to the output. The
// operands and the output are not counted: the caller holds them.
#pragma once

#include "expression.hpp"
#include "paths.hpp"
#include "program.hpp"
#include "tree.hpp"

#include <ferro/plugin.h>

#include <cstdint>
#include <span>
#include <vector>

namespace ferro::einsum {

// What a slice costs beyond its flops, in flops: its primitives' dispatch (a few microseconds),
// so that between slicings of equal flops the one with fewer slices wins.
inline constexpr double kSliceCostFlops = 1e4;
// No slicing takes more slices than this: beyond it a contraction would not finish anyway.
inline constexpr int64_t kMaxSlices = int64_t{1} << 32;
// Slices of fewer flops than this run on several threads at once (plan_workers): below it one
// slice's products and copies leave the engine's threads idle.
inline constexpr double kParallelSliceFlops = 1e9;

struct Slicing {
    std::vector<int> labels;  // label ids
    int64_t slices = 1;       // the product of their sizes
    double flops = 0;         // of all slices together (opt_einsum's cost model)
    double largest = 0;       // elements of the largest intermediate of one slice (the output not one)
    double cost() const { return flops + kSliceCostFlops * static_cast<double>(slices); }
};

// A path and what slicing it shrinks: its intermediates, the labels of each step's result but
// the last's (contraction_tree's; the last step writes the output, which the caller holds).
struct SlicedPath {
    SlicedPath(const Expression& e, std::span<const std::span<const int64_t>> shapes, const Network& net, const Path& path);
    // What slicing `labels` costs: the flops of the network without them (one slice), times
    // the slices, and the largest intermediate left.
    Slicing slicing(std::vector<int> labels) const;

    const Network& net;
    const Path& path;
    std::vector<std::vector<int>> intermediates;
};

// Labels to slice so that the largest intermediate of `path` has at most `max_largest` elements
// and there are at least `min_slices` slices, at the least cost found (Slicing::cost): greedily
// the label whose slicing costs least per intermediate memory removed (or per slice added, once
// only the count is short), then the choice refined by dropping labels the others do without and
// swapping a label for one that costs less, until neither helps (as cotengra's SliceFinder
// refines its greedy choice). Nothing sliced when the path already fits. A label of the output
// may be sliced: its slices write their own parts of the output, with nothing to add up.
// Trial 0 is that greedy; odd trials take the least cost among the labels that remove any
// memory (cotengra's SliceFinder's choice); from trial 2 on each candidate's score is weighed by
// a random factor in [1, 1.5) (seeded by the trial: deterministic), as cotengra repeats its
// search with a temperature.
Slicing find_slicing(const SlicedPath& path, double max_largest, int64_t min_slices, uint64_t trial = 0);
// compile_sliced keeps the cheapest of this many trials.
inline constexpr uint64_t kSliceTrials = 8;

// A contraction compiled to run slice by slice within a memory limit.
struct SlicedProgram {
    Slicing slicing;                                // labels ordered: output labels first
    PathCost unsliced;                              // the path's cost without slicing
    std::vector<int64_t> sizes;                     // of each sliced label
    std::vector<bool> in_output;                    // per sliced label
    std::vector<std::vector<int64_t>> input_steps;  // per input, per sliced label: elements per index
    std::vector<int64_t> output_steps;              // per sliced label: elements per index (0: summed)
    Program direct;                                 // one slice into its part of the output
    bool in_place = false;                          // summed slices add to the output in their last gemm
    Program partial;                                // or go to the accumulator (summed labels sliced)
    View part, accumulator;                         // the output's part and the accumulator, for the add
    uint64_t accumulator_offset = 0, workspace_bytes = 0;
    // Distributed (SliceOptions::distribute): this rank's share of the slices, and a digest of
    // the plan every rank must agree on.
    int64_t rank = 0, ranks = 1;
    uint64_t digest = 0;
    // Slices run on `workers` of the engine's threads at once (plan_workers), each in its own
    // region of the workspace; `shared`: workers may add to the same part of the output, so all
    // but the first add into an accumulator of the output's size of their own (after the
    // regions), added to the output at the end; else each worker owns whole parts.
    int64_t workers = 1;
    bool shared = false;
    uint64_t region_bytes = 0, output_bytes = 0;
    int64_t parts = 1;  // of the output: the slices of each are contiguous
};

struct SliceOptions {
    uint64_t memory_limit = 0;  // bytes; 0: none
    int64_t min_slices = 0;     // 0: as the limit needs
    bool distribute = false;    // over the ranks of the runtime's communicator
};

// The sliced program for `e` under `options`, on `path` (the unsliced choice); throws
// INVALID_ARGUMENT when no slicing brings the working memory under the limit, naming the
// smallest there is. `unsliced` is the plain program's workspace, to compare against.
SlicedProgram compile_sliced(const Expression& e, std::span<const ferro_signature> inputs, const Path& path,
                             const SliceOptions& options, uint64_t unsliced_workspace);

// Enqueues slices [begin, end) (in order, the last sliced label fastest) into the call's
// session: the first of each part of the output writes it, the others add to it. A range that
// is not every slice leaves the parts it does not reach as they were.
void run_sliced(const SlicedProgram& p, const ferro_host_api* host, const ferro_exec_args& args, int64_t begin, int64_t end);
// The plan's digest: its path, sliced labels, their sizes and the slice count.
uint64_t plan_digest(const SlicedProgram& p);

// Lets the slices run on up to `threads` threads at once when one slice is too small to use
// them all, as many as the memory limit (0: none) leaves room for; sets workers and the
// workspace. Call after the distribution is set.
void plan_workers(SlicedProgram& p, int64_t threads, uint64_t memory_limit, uint64_t output_bytes);
// Slices [begin, end) on the plan's workers (session_parallel), or one after the other.
void run_slices(const SlicedProgram& p, const ferro_host_api* host, const ferro_exec_args& args, int64_t begin, int64_t end);

}  // namespace ferro::einsum
