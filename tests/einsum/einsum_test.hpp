// Shared by the einsum suites: a runtime with libferro_einsum.so, an expression model the
// tests build and render (so the reference never reuses the plugin's parser), and a naive
// reference that loops over every assignment of every label.
#pragma once

#include "ferro_test.hpp"

#include <algorithm>
#include <complex>
#include <map>
#include <string>
#include <vector>

namespace ferro::test {

using cd = std::complex<double>;

// A runtime with libferro_einsum.so only, its log from `level` up going to `callback` (tests
// that read what the plugin logs).
inline Runtime einsum_runtime_logging(uint32_t level, ferro_log_callback callback, void* user) {
    Runtime::Options o;
    o.use_environment_path = false;
    o.use_default_dir = false;
    o.log_level = level;
    o.log_callback = callback;
    o.log_user = user;
    Runtime rt(o);
    rt.load_plugin(build_dir() + "/lib/ferro/plugins/libferro_einsum.so");
    return rt;
}

inline Runtime einsum_runtime() { return einsum_runtime_logging(FERRO_LOG_OFF, nullptr, nullptr); }

inline bool is_complex(DType d) { return d == DType::c64 || d == DType::c128; }
inline bool is_single(DType d) { return d == DType::f32 || d == DType::c64; }

// An einsum as the tests see it: labels are characters; an axis of size 1 where its label is
// larger broadcasts.
struct Case {
    std::vector<std::string> inputs;  // labels per operand
    std::string output;
    std::map<char, int64_t> size;
    std::vector<Shape> shapes;  // per operand (size-1 axes broadcast)
    bool implicit = false;      // render without "->"

    std::string subscripts() const {
        std::string s;
        for (size_t k = 0; k < inputs.size(); ++k) s += (k ? "," : "") + inputs[k];
        return implicit ? s : s + "->" + output;
    }
};

// A case whose operands have every label at its full size.
inline Case make_case(std::vector<std::string> inputs, std::string output, std::map<char, int64_t> size) {
    Case c{std::move(inputs), std::move(output), std::move(size), {}};
    for (const auto& in : c.inputs) {
        Shape s;
        for (char l : in) s.push_back(c.size.at(l));
        c.shapes.push_back(s);
    }
    return c;
}

inline int64_t count(const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

// out[o] = sum over all labels of prod_k operand_k[its axes], by brute force.
inline std::vector<cd> naive_einsum(const Case& c, const std::vector<std::vector<cd>>& operands) {
    std::vector<char> labels;  // the labels some operand has
    for (const auto& [l, n] : c.size) {
        if (std::any_of(c.inputs.begin(), c.inputs.end(),
                        [l = l](const std::string& in) { return in.find(l) != std::string::npos; }))
            labels.push_back(l);
    }
    Shape out_shape;
    for (char l : c.output) out_shape.push_back(c.size.at(l));
    std::vector<cd> out(static_cast<size_t>(count(out_shape)), cd(0));
    std::map<char, int64_t> at;
    for (char l : labels) at[l] = 0;
    const auto offset = [&](const std::string& axes, const Shape& shape) {
        int64_t off = 0;
        for (size_t a = 0; a < axes.size(); ++a) off = off * shape[a] + (shape[a] == 1 ? 0 : at[axes[a]]);
        return off;
    };
    for (;;) {
        cd term(1);
        for (size_t k = 0; k < operands.size(); ++k) term *= operands[k][static_cast<size_t>(offset(c.inputs[k], c.shapes[k]))];
        out[static_cast<size_t>(offset(c.output, out_shape))] += term;
        size_t i = 0;
        for (; i < labels.size(); ++i) {
            if (++at[labels[i]] < c.size.at(labels[i])) break;
            at[labels[i]] = 0;
        }
        if (i == labels.size()) break;
    }
    return out;
}

// Operand k of a case: seeded values of `dtype`; when `strided`, a permuted view of a tensor
// laid out in reverse axis order (so its strides are not row-major).
inline Tensor make_operand(const Runtime& rt, const Shape& shape, DType dtype, uint32_t seed, bool strided,
                           std::vector<cd>& values) {
    const size_t n = static_cast<size_t>(count(shape));
    values = random_complex(n, seed);
    if (!is_complex(dtype)) {
        for (auto& v : values) v = v.real();
    }
    if (is_single(dtype)) {
        for (auto& v : values) v = cd(static_cast<float>(v.real()), static_cast<float>(v.imag()));
    }
    Tensor t = rt.tensor<cd>(values, shape).to(dtype);
    if (!strided || shape.size() < 2) return t;
    Shape axes(shape.size());
    for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(axes.size() - 1 - i);
    return t.permute(axes).contiguous().permute(axes);  // same values, reversed strides
}

inline std::vector<cd> values_of(const Tensor& t) { return t.to(DType::c128).to_vector<cd>(); }

// The gradients of Re sum(einsum(subscripts, inputs, options) * weight) with respect to the
// operands in `wanted` (every operand a fresh leaf, only those requiring grad), in that order.
inline std::vector<Tensor> einsum_cotangents(const std::string& subscripts, const std::vector<Tensor>& inputs,
                                             const Tensor& weight, const std::vector<size_t>& wanted,
                                             const EinsumOptions& options = {}) {
    std::vector<Tensor> leaves;
    for (const Tensor& x : inputs) leaves.push_back(x.detach());
    for (size_t i : wanted) leaves[i].set_requires_grad();
    (einsum(subscripts, leaves, options) * weight).sum().real().backward();
    std::vector<Tensor> g;
    for (size_t i : wanted) g.push_back(leaves[i].grad());
    return g;
}

// Every position of `inputs`.
inline std::vector<size_t> all_of(const std::vector<Tensor>& inputs) {
    std::vector<size_t> all(inputs.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    return all;
}

// The tangent of einsum(subscripts, inputs, options) when the operands in `moving` move along
// their `tangents`.
inline Tensor einsum_tangent(const std::string& subscripts, const std::vector<Tensor>& inputs,
                             const std::vector<Tensor>& tangents, const std::vector<size_t>& moving,
                             const EinsumOptions& options = {}) {
    std::vector<Tensor> operands = inputs;
    for (size_t i : moving) operands[i] = make_dual(inputs[i], tangents[i]);
    return einsum(subscripts, operands, options).tangent();
}

}  // namespace ferro::test
