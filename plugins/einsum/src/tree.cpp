#include "tree.hpp"

#include <ferro/plugin.hpp>

#include <algorithm>
#include <string>

namespace ferro::einsum {
namespace {

// Each label once, in order of first appearance.
std::vector<int> distinct(const std::vector<int>& labels) {
    std::vector<int> out;
    for (int l : labels) {
        if (std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
    }
    return out;
}

// Label l's size in a node (any of its axes: repeats agree), -1 when the node lacks it.
int64_t size_in(const TreeNode& node, int l) {
    const auto it = std::find(node.labels.begin(), node.labels.end(), l);
    return it == node.labels.end() ? -1 : node.shape[static_cast<size_t>(it - node.labels.begin())];
}

// A label's size in a step's result: a size-1 axis broadcasts against the other child's.
int64_t joined_size(int64_t a, int64_t b) {
    if (a < 0 || a == 1) return b < 0 ? a : b;
    return a;
}

}  // namespace

std::vector<TreeNode> contraction_tree(const Expression& e, std::span<const std::span<const int64_t>> shapes, const Path& path) {
    const size_t n = e.inputs.size();
    if (path.size() + 1 != n) {
        throw plugin::Error(FERRO_INTERNAL,
                            "einsum: a path of " + std::to_string(path.size()) + " steps for " + std::to_string(n) + " operands");
    }
    std::vector<TreeNode> nodes(n);
    // How many nodes of the current list carry each label (once per node).
    std::vector<int> carriers(static_cast<size_t>(e.n_labels()), 0);
    std::vector<bool> in_output(carriers.size(), false);
    for (int l : e.output) in_output[static_cast<size_t>(l)] = true;
    for (size_t i = 0; i < n; ++i) {
        nodes[i].labels = e.inputs[i];
        nodes[i].shape.assign(shapes[i].begin(), shapes[i].end());
        for (int l : distinct(e.inputs[i])) ++carriers[static_cast<size_t>(l)];
    }
    std::vector<int> current(n);
    for (size_t i = 0; i < n; ++i) current[i] = static_cast<int>(i);
    for (const auto& [i, j] : path) {
        const auto count = static_cast<int>(current.size());
        if (i == j || i < 0 || j < 0 || i >= count || j >= count) {
            throw plugin::Error(FERRO_INTERNAL, "einsum: path step (" + std::to_string(i) + ", " + std::to_string(j) + ") over " +
                                                    std::to_string(count) + " operands");
        }
        TreeNode step;
        step.left = current[static_cast<size_t>(i)];
        step.right = current[static_cast<size_t>(j)];
        current.erase(current.begin() + std::max(i, j));
        current.erase(current.begin() + std::min(i, j));
        const TreeNode& a = nodes[static_cast<size_t>(step.left)];
        const TreeNode& b = nodes[static_cast<size_t>(step.right)];
        const std::vector<int> from_a = distinct(a.labels), from_b = distinct(b.labels);
        for (int l : from_a) --carriers[static_cast<size_t>(l)];
        for (int l : from_b) --carriers[static_cast<size_t>(l)];
        std::vector<int> both = from_a;
        both.insert(both.end(), from_b.begin(), from_b.end());
        both = distinct(both);
        if (current.empty()) {
            step.labels = e.output;
        } else {
            for (int l : both) {
                if (in_output[static_cast<size_t>(l)] || carriers[static_cast<size_t>(l)] > 0) step.labels.push_back(l);
            }
        }
        for (int l : step.labels) {
            step.shape.push_back(joined_size(size_in(a, l), size_in(b, l)));
            ++carriers[static_cast<size_t>(l)];
        }
        current.push_back(static_cast<int>(nodes.size()));
        nodes.push_back(std::move(step));
    }
    return nodes;
}

Expression step_expression(const Expression& e, const std::vector<TreeNode>& nodes, int k) {
    const TreeNode& node = nodes[static_cast<size_t>(k)];
    Expression step;
    step.inputs = {nodes[static_cast<size_t>(node.left)].labels, nodes[static_cast<size_t>(node.right)].labels};
    step.output = node.labels;
    step.names = e.names;
    step.keys = e.keys;
    return step;
}

}  // namespace ferro::einsum
