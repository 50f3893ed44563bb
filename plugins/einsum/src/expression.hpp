// An einsum expression parsed against its operands' ranks: one label id per axis of every
// operand and of the output, with `...` expanded into labels of its own.
//
// Two spellings lead here. Subscripts ("ij,jk->ik", numpy/PyTorch notation): the ASCII letters and
// every code point beyond ASCII are labels, so opt_einsum-style networks with hundreds of labels
// work as they are; other ASCII characters are syntax, spaces or errors. Sublists (numpy's einsum(op0, [0, 1], op1, [1, 2], [0, 2])): integer
// labels, encoded in one i64 array (see parse_sublists).
#pragma once

#include <ferro/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ferro::einsum {

struct Expression {
    std::vector<std::vector<int>> inputs;  // label id of each axis of each operand
    std::vector<int> output;               // label id of each output axis (all distinct)
    std::vector<std::string> names;        // how messages name each label: 'k', label 7, ... axis 0
    std::vector<int64_t> keys;             // as the caller wrote each label: its code point or sublist
                                           // integer; -1 - j for axis j of `...`
    int n_labels() const { return static_cast<int>(names.size()); }
};

// Subscripts: explicit ("ij,jk->ik") or implicit ("ij,jk": the labels used once, in code
// point order, after the `...` axes) output. Throws plugin::Error INVALID_ARGUMENT naming the
// offending character and why.
Expression parse_subscripts(std::string_view subscripts, std::span<const int> ranks);

// Sublists, as one array: each operand's labels (integers >= 0, kEllipsis for `...`), operands
// separated by kNextOperand, then optionally kOutput and the output's labels.
inline constexpr int64_t kEllipsis = -1, kNextOperand = -2, kOutput = -3;
Expression parse_sublists(std::span<const int64_t> sublists, std::span<const int> ranks);

// The size of every label: operands agree, except that a size-1 axis broadcasts (as PyTorch).
// Repeated labels within one operand (a diagonal) must agree exactly.
std::vector<int64_t> label_sizes(const Expression& e, std::span<const std::span<const int64_t>> shapes);
// The operands' shapes, as label_sizes takes them (views of the signatures).
std::vector<std::span<const int64_t>> shapes_of(std::span<const ferro_signature> sigs);

// The expression in sublist form (as the autodiff rules pass it on).
std::vector<int64_t> to_sublists(const std::vector<std::vector<int>>& inputs, const std::vector<int>& output);

}  // namespace ferro::einsum
