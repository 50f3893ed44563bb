// The einsum family: shared pieces of its plugin, schemas and rules.
#pragma once

#include "expression.hpp"
#include "program.hpp"
#include "slicing.hpp"

#include <ferro/plugin.h>
#include <ferro/rules.hpp>

#include <array>
#include <span>
#include <vector>

namespace ferro::einsum {

enum class Op : uint32_t { einsum = 0, path = 1, count };

// The ops the rules call, in Op order (the family's FERRO_EXT_RULE_CALLS link), so that an Op
// is its own index among them.
inline constexpr std::array<const char*, static_cast<size_t>(Op::count)> kRuleCalls{"einsum.einsum", "einsum.path"};
inline plugin::DeclaredOp rule_op(Op op) { return {static_cast<uint32_t>(op)}; }

// Schema attribute order (every op takes the same attributes).
enum Attr : size_t {
    kSubscripts,
    kSublists,
    kOptimize,
    kPath,
    kMinimize,
    kSeed,
    kRepeats,
    kMaxSeconds,
    kOrder,
    kMemoryLimit,
    kSlices,
    kDistribute,
    kAttrCount
};

// The expression of a call, from its subscripts or sublists attribute and the operands' ranks.
Expression expression_of(const ferro_attr_value* attrs, std::span<const ferro_signature> inputs);
PathOptions path_options_of(const ferro_attr_value* attrs, int n_operands);
SliceOptions slice_options_of(const ferro_attr_value* attrs);
// einsum.path's outputs: the path, its flops, its largest intermediate, every label's key and
// whether it is sliced, the number of slices, the flops of all slices, the working memory.
inline constexpr uint32_t kPathOutputs = 7;
// A call's attributes by name again (those given), to pass them on to another op call.
std::vector<ferro_named_attr> named_attrs(const ferro_attr_value* attrs);

const ferro_op_schema* schemas();

// The VJP and JVP walk the forward's contraction tree from this many operands, when two or
// more of them want a derivative: below that the pairwise products the walk runs are as many
// as the direct formula's, in more calls.
constexpr size_t kTreeMinOperands = 4;

ferro_status einsum_vjp(const ferro_host_api* host, const ferro_vjp_args* args);
ferro_status einsum_jvp(const ferro_host_api* host, const ferro_jvp_args* args);

}  // namespace ferro::einsum
