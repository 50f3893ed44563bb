// Contraction paths: the order in which an einsum contracts its operands two at a time.
//
// Paths use opt_einsum's "linear" form: each step names two positions in the current operand
// list, removes both and appends their contraction at the end. Costs follow opt_einsum too,
// so figures compare one to one: a step over the labels L costs prod(size(L)) multiply-adds,
// doubled when the step sums a label away, and an intermediate's size is its element count.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ferro::einsum {

// What path search sees: each operand's distinct labels and every label's size.
struct Network {
    std::vector<std::vector<int>> inputs;
    std::vector<int> output;
    std::vector<double> size;  // per label id
};

using Path = std::vector<std::pair<int, int>>;

// Paths are built in SSA form (every tensor has its own id: the inputs 0..n-1, then one per
// step in order) and converted to the linear form at the end.
using SsaPath = std::vector<std::pair<int, int>>;
Path ssa_to_linear(const SsaPath& ssa, int n_inputs);

struct PathCost {
    double flops = 0;    // opt_einsum's opt_cost
    double largest = 0;  // elements of the largest intermediate (the result included)
};

enum class Objective { flops, size };

// The objective's order on costs: its own measure first, the other one breaking ties.
inline bool cheaper(const PathCost& a, const PathCost& b, Objective objective) {
    if (objective == Objective::flops) return a.flops < b.flops || (a.flops == b.flops && a.largest < b.largest);
    return a.largest < b.largest || (a.largest == b.largest && a.flops < b.flops);
}

// opt_einsum's greedy, step for step (the same path): repeatedly the pair sharing a summed label
// whose contraction removes the most memory (size(result) - size(a) - size(b)); leftovers joined
// by outer products, smallest first.
Path greedy_path(const Network& net);

// Exact dynamic programming over subsets (3^n work) up to kOptimalMaxOperands: the cheapest
// contraction tree. Above that, connected_optimal_path with a budget of kOptimalMaxPairs (or
// INVALID_ARGUMENT saying what to use instead). `size` minimises the largest intermediate,
// breaking ties by flops.
inline constexpr int kOptimalMaxOperands = 16;
inline constexpr double kOptimalMaxPairs = 5e8;
Path optimal_path(const Network& net, Objective objective);

// Exact dynamic programming over connected subnetworks (Pfeifer, Haegeman and Verstraete 2014;
// opt_einsum's "dp"): the cheapest tree among those whose every step joins two tensors that
// share a summed label (the network's parts that share none, if any, are joined last, smallest
// first). Its work grows with the number of connected subnetworks rather than 3^n, so it
// reaches the 84 operands of the language-model networks. The search runs under a cap on the
// objective (flops, or the largest intermediate) that starts at the largest input and grows
// until the whole network fits. std::nullopt when it would examine more than `max_pairs` pairs
// of subnetworks, or the network has more than 128 operands or 512 labels.
inline constexpr int kConnectedOptimalMaxOperands = 128;
std::optional<Path> connected_optimal_path(const Network& net, Objective objective, double max_pairs);

// auto: optimal_path up to 8 operands. Above, the best by the objective of greedy improved by
// subtree reconfiguration, random_greedy_path (seed 0, kAutoRandomRepeats trials) and, up to
// 128 operands, connected_optimal_path when it finishes within kAutoMaxPairs pairs. Budgets in
// work, not time, so the path is the same on every machine. The random trials found a path for
// tensornetwork_permutation_light_415 that runs in 9 ms against 72 ms (3x fewer flops), for
// 0.2 s more search.
inline constexpr double kAutoMaxPairs = 1e7;
inline constexpr int64_t kAutoRandomRepeats = 32;
Path auto_path(const Network& net, Objective objective);

// Greedy with Boltzmann-sampled choices and a jittered cost, `repeats` trials (the first is plain
// greedy), the best by `objective` then improved by improve_path. Deterministic for a seed
// unless max_seconds (> 0, the whole search's budget) cuts it short.
struct RandomGreedyOptions {
    uint64_t seed = 0;
    int64_t repeats = 32;
    double max_seconds = 0;
    Objective objective = Objective::flops;
};
Path random_greedy_path(const Network& net, const RandomGreedyOptions& options);

// The path improved by subtree reconfiguration: repeatedly, a subtree of the contraction tree
// is cut at its (up to 8) most expensive descendants and those tensors re-contracted in the
// optimal order, until a sweep over the tree finds nothing (at most 32 sweeps) or max_seconds
// pass (0: no time limit, so the result does not depend on the machine's speed). Never worse
// than `path` under `objective`.
Path improve_path(const Network& net, const Path& path, Objective objective, double max_seconds);

// A contraction order written as a nested tree of operand positions, "((0, 1), (2, 3))": each
// pair of parentheses contracts its two members. Every operand appears exactly once. Throws
// INVALID_ARGUMENT pointing at the offending character.
Path parse_order(std::string_view order, int n_operands);

// Cost of a path; throws INVALID_ARGUMENT when it is not a complete path for `net`
// (a step naming a position that does not exist, the same position twice, or leftovers).
PathCost path_cost(const Network& net, const Path& path);

// The path as text for messages and logs: "(0, 1), (2, 0)".
std::string path_str(const Path& path);

}  // namespace ferro::einsum
