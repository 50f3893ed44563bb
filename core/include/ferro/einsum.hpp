// ferro::einsum — typed calls into the einsum family (libferro_einsum.so, loaded from the
// plugin search path) with numpy.einsum / torch.einsum notation. docs/einsum.md describes the
// notation, the path optimisers and the cost model. Included by ferro/ferro.hpp.
#pragma once

#include <ferro/ferro.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ferro {

// How einsum picks its contraction path.
struct EinsumOptions {
    std::string optimize = "auto";                  // auto | greedy | optimal | random-greedy
    std::vector<std::pair<int64_t, int64_t>> path;  // explicit (opt_einsum linear form); wins when given
    std::string order;                              // or as a nested tree: "((0, 1), (2, 3))"
    std::string minimize = "flops";                 // flops | size: optimal and random-greedy's objective
    int64_t seed = 0, repeats = 32;                 // random-greedy's trials
    double max_seconds = 0;                         // random-greedy's time limit (0: none)
    // Bytes of working memory the contraction may take (its plan's workspace: intermediates,
    // packed operands, the slices' accumulator; not the operands or the output): labels are
    // sliced to stay under it (docs/einsum.md, "Slicing"). 0: no limit.
    int64_t memory_limit = 0;
    int64_t slices = 0;  // contract in at least this many slices (0: as memory_limit needs)
    // Spread the slices over the ranks of the runtime's communicator (at least one slice per
    // rank) and allreduce the parts: every rank gets the whole result and, in backward, the
    // whole gradient. The operands (and cotangents) must be the same on every rank; operands on
    // the cpu engine. docs/einsum.md, "Distributed".
    bool distribute = false;
};

namespace detail {
inline Attrs einsum_attrs(const Attr& notation, const EinsumOptions& o) {
    Attrs a{notation,
            Attr("optimize", o.optimize),
            Attr("minimize", o.minimize),
            Attr("seed", o.seed),
            Attr("repeats", o.repeats),
            Attr("max_seconds", o.max_seconds)};
    if (o.memory_limit != 0) a.emplace_back("memory_limit", o.memory_limit);
    if (o.slices != 0) a.emplace_back("slices", o.slices);
    if (o.distribute) a.emplace_back("distribute", true);
    if (!o.path.empty()) {
        std::vector<int64_t> flat;
        for (const auto& [i, j] : o.path) {
            flat.push_back(i);
            flat.push_back(j);
        }
        a.emplace_back("path", std::move(flat));
    }
    if (!o.order.empty()) a.emplace_back("order", o.order);
    return a;
}
// numpy's sublist form as the op's one array: labels, -1 for ..., -2 between operands, -3 output.
inline std::vector<int64_t> encode_sublists(const std::vector<std::vector<int64_t>>& sublists,
                                            const std::vector<int64_t>* output) {
    // -2 and -3 are the encoding's separators: a negative label would change the expression.
    const auto check = [](const std::vector<int64_t>& labels, const std::string& whose) {
        for (const int64_t l : labels) {
            if (l < -1) {
                throw Error(FERRO_INVALID_ARGUMENT, "einsum: sublist label " + std::to_string(l) + " of " + whose +
                                                        " is negative: labels are >= 0, and kEllipsis (-1) stands for ...");
            }
        }
    };
    std::vector<int64_t> flat;
    for (size_t k = 0; k < sublists.size(); ++k) {
        check(sublists[k], "operand " + std::to_string(k));
        if (k > 0) flat.push_back(-2);
        flat.insert(flat.end(), sublists[k].begin(), sublists[k].end());
    }
    if (output != nullptr) {
        check(*output, "the output");
        flat.push_back(-3);
        flat.insert(flat.end(), output->begin(), output->end());
    }
    return flat;
}
inline Tensor einsum_sublists(const std::vector<Tensor>& operands, std::vector<int64_t> encoded, const EinsumOptions& options);
}  // namespace detail

// Ellipsis in the sublist form.
inline constexpr int64_t kEllipsis = -1;

// einsum("ij,jk->ik", {A, B}): numpy/torch notation; labels are the ASCII letters and any code
// point beyond ASCII (UTF-8), not digits or punctuation.
inline Tensor einsum(const std::string& subscripts, const std::vector<Tensor>& operands, const EinsumOptions& options = {}) {
    if (operands.empty()) throw Error(FERRO_INVALID_ARGUMENT, "einsum: at least one operand is required");
    return call_one(operands[0].runtime_ref(), "einsum.einsum", operands,
                    detail::einsum_attrs(Attr("subscripts", subscripts), options));
}
// numpy's sublist form: einsum({A, B}, {{0, 1}, {1, 2}}, {0, 2}); kEllipsis stands for `...`.
// Without an output, the implicit one (labels used once, in increasing order).
inline Tensor einsum(const std::vector<Tensor>& operands, const std::vector<std::vector<int64_t>>& sublists,
                     const std::vector<int64_t>& output, const EinsumOptions& options = {}) {
    return detail::einsum_sublists(operands, detail::encode_sublists(sublists, &output), options);
}
inline Tensor einsum(const std::vector<Tensor>& operands, const std::vector<std::vector<int64_t>>& sublists) {
    return detail::einsum_sublists(operands, detail::encode_sublists(sublists, nullptr), {});
}

namespace detail {
inline Tensor einsum_sublists(const std::vector<Tensor>& operands, std::vector<int64_t> encoded, const EinsumOptions& options) {
    if (operands.empty()) throw Error(FERRO_INVALID_ARGUMENT, "einsum: at least one operand is required");
    return call_one(operands[0].runtime_ref(), "einsum.einsum", operands,
                    einsum_attrs(Attr("sublists", std::move(encoded)), options));
}
}  // namespace detail

// The path einsum would take, without contracting: opt_einsum's linear form, the flop count
// (opt_einsum's cost model) and the element count of the largest intermediate, unsliced; and
// how the call would slice: the sliced labels (each as written: its code point in subscripts,
// its integer in sublists), the number of slices, the flops of all slices together and the
// working memory the call would take, in bytes (its plan's workspace; sliced or not).
struct EinsumPath {
    std::vector<std::pair<int64_t, int64_t>> path;
    double flops = 0;
    double largest_intermediate = 0;
    std::vector<int64_t> sliced_labels;
    int64_t slices = 1;
    double sliced_flops = 0;
    double working_bytes = 0;
    // The sliced flops over the unsliced ones (1 when nothing is sliced).
    double slicing_overhead() const { return flops > 0 ? sliced_flops / flops : 1.0; }
};
namespace detail {
inline EinsumPath einsum_path_of(const std::vector<Tensor>& operands, const Attr& notation, const EinsumOptions& options) {
    if (operands.empty()) throw Error(FERRO_INVALID_ARGUMENT, "einsum_path: at least one operand is required");
    auto out = call_all(operands[0].runtime_ref(), "einsum.path", operands, einsum_attrs(notation, options));
    EinsumPath p;
    const std::vector<int64_t> flat = out[0].to_vector<int64_t>();
    for (size_t s = 0; s + 1 < flat.size(); s += 2) p.path.emplace_back(flat[s], flat[s + 1]);
    p.flops = out[1].item<double>();
    p.largest_intermediate = out[2].item<double>();
    const std::vector<int64_t> labels = out[3].to_vector<int64_t>();  // (key, sliced) per label
    for (size_t l = 0; l + 1 < labels.size(); l += 2) {
        if (labels[l + 1] != 0) p.sliced_labels.push_back(labels[l]);
    }
    p.slices = out[4].item<int64_t>();
    p.sliced_flops = out[5].item<double>();
    p.working_bytes = out[6].item<double>();
    return p;
}
}  // namespace detail

inline EinsumPath einsum_path(const std::string& subscripts, const std::vector<Tensor>& operands,
                              const EinsumOptions& options = {}) {
    return detail::einsum_path_of(operands, Attr("subscripts", subscripts), options);
}
// The sublist form, as einsum's.
inline EinsumPath einsum_path(const std::vector<Tensor>& operands, const std::vector<std::vector<int64_t>>& sublists,
                              const std::vector<int64_t>& output, const EinsumOptions& options = {}) {
    return detail::einsum_path_of(operands, Attr("sublists", detail::encode_sublists(sublists, &output)), options);
}

}  // namespace ferro
