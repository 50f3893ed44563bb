// The contraction path as a tree of pairwise einsums: what the derivative rules walk so that a
// network of n operands costs O(n) pairwise contractions to differentiate, not n einsums over
// all the others (docs/einsum.md, "Derivatives").
#pragma once

#include "expression.hpp"
#include "paths.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace ferro::einsum {

struct TreeNode {
    std::vector<int> labels;     // an operand's axes (repeats allowed); a step result's kept labels
    std::vector<int64_t> shape;  // one size per label
    int left = -1, right = -1;   // a step result's two children; -1 for an operand
};

// nodes[0, n) are the operands, then one node per step of `path` in order (children always
// before their parent); the last node is the result, labelled as e.output. A step keeps the
// labels of its children that the output or an operand not yet contracted still has, in the
// order they come (left child first); a label both children carry at size 1 stays size 1
// (broadcast later).
std::vector<TreeNode> contraction_tree(const Expression& e, std::span<const std::span<const int64_t>> shapes, const Path& path);

// The pairwise expression of step node `k`: its children's labels to its own.
Expression step_expression(const Expression& e, const std::vector<TreeNode>& nodes, int k);

}  // namespace ferro::einsum
