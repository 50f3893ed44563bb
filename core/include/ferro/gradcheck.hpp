// ferro::gradcheck — checks an op's (or any function's) VJP and JVP against central finite
// differences, the way every family's conformance tests use it.
//
// VJP: for outputs y = f(x_1..x_n) and random cotangents u (fixed seed) it compares
//   vjp(y, x, u)  with  dphi/dRe(x) + i dphi/dIm(x),   phi(x) = sum_k Re(<u_k, y_k(x)>),
// element by element, which is PyTorch's convention for complex inputs and outputs (for a
// holomorphic f the VJP is u * conj(f')). Real inputs skip the imaginary direction.
// JVP: for random tangents v it compares every output's tangent (forward mode) with
//   (f(x + eps v) - f(x - eps v)) / (2 eps).
// Tolerances default per dtype (looser in single precision). Header-only.
#pragma once

#include <ferro/ferro.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace ferro {

struct GradcheckOptions {
    double eps = 0;        // finite-difference step; 0: 1e-6 in double precision, 1e-3 in single
    double atol = 0;       // 0: 1e-5 (double) or 1e-2 (single)
    double rtol = 0;       // 0: 1e-3 (double) or 1e-2 (single)
    uint64_t seed = 1234;  // for the random cotangents and tangents
    bool check_vjp = true;
    bool check_jvp = true;
};

struct GradcheckResult {
    bool ok = true;
    double max_error = 0;  // largest |analytic - numeric| - rtol |numeric| seen (<= atol passes)
    std::string report;    // the first mismatches, one per line
};

namespace detail {

inline bool is_single(DType d) { return d == DType::f32 || d == DType::c64; }
inline bool is_complex_dtype(DType d) { return d == DType::c64 || d == DType::c128; }
inline bool is_inexact(DType d) { return d == DType::f32 || d == DType::f64 || is_complex_dtype(d); }

// `values` (complex double, row-major) as a new tensor of `shape` and `dtype` on `engine`.
inline Tensor tensor_like(const Tensor& like, const std::vector<std::complex<double>>& values, DType dtype) {
    std::vector<double> re(values.size());
    for (size_t i = 0; i < values.size(); ++i) re[i] = values[i].real();
    const Shape shape = like.shape();
    const std::string engine = like.engine();
    ferro_tensor out = nullptr;
    if (is_complex_dtype(dtype)) {
        check(ferro_tensor_from_host(like.runtime(), engine.c_str(), FERRO_DTYPE_C128, static_cast<int32_t>(shape.size()),
                                     shape.data(), values.data(), &out));
    } else {
        check(ferro_tensor_from_host(like.runtime(), engine.c_str(), FERRO_DTYPE_F64, static_cast<int32_t>(shape.size()),
                                     shape.data(), re.data(), &out));
    }
    const Tensor t(like.runtime_ref(), out);
    return t.dtype() == dtype ? t : t.to(dtype);
}

inline std::vector<std::complex<double>> values_of(const Tensor& t) {
    if (is_complex_dtype(t.dtype())) return t.to_vector<std::complex<double>>();
    const std::vector<double> re = t.to_vector<double>();
    return {re.begin(), re.end()};
}

}  // namespace detail

// Checks f's VJP at `inputs` (every inexact input is differentiated; the others are passed
// through). f must be deterministic.
inline GradcheckResult gradcheck(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& f,
                                 const std::vector<Tensor>& inputs, GradcheckOptions options = {}) {
    bool single = false;
    std::vector<Tensor> leaves;
    for (const Tensor& x : inputs) {
        const DType d = x.dtype();
        const bool inexact = detail::is_inexact(d);
        Tensor leaf = x.detach();
        if (inexact) leaf.set_requires_grad();
        single = single || (inexact && detail::is_single(d));
        leaves.push_back(leaf);
    }
    const double eps = options.eps > 0 ? options.eps : single ? 1e-3 : 1e-6;
    const double atol = options.atol > 0 ? options.atol : single ? 1e-2 : 1e-5;
    const double rtol = options.rtol > 0 ? options.rtol : single ? 1e-2 : 1e-3;

    // Random cotangents, one per inexact output.
    const std::vector<Tensor> outputs = f(leaves);
    std::mt19937_64 gen(options.seed);
    std::normal_distribution<double> normal;
    std::vector<Tensor> used_outputs, cotangents;
    std::vector<std::vector<std::complex<double>>> u;
    for (const Tensor& y : outputs) {
        const DType d = y.dtype();
        if (!detail::is_inexact(d) || !y.requires_grad()) continue;
        std::vector<std::complex<double>> values(static_cast<size_t>(y.numel()));
        for (auto& v : values) v = {normal(gen), detail::is_complex_dtype(d) ? normal(gen) : 0.0};
        used_outputs.push_back(y);
        cotangents.push_back(detail::tensor_like(y, values, d));
        u.push_back(std::move(values));
    }
    std::vector<size_t> wrt;
    std::vector<Tensor> wrt_tensors;
    for (size_t j = 0; j < leaves.size(); ++j) {
        if (leaves[j].requires_grad()) {
            wrt.push_back(j);
            wrt_tensors.push_back(leaves[j]);
        }
    }
    GradcheckResult result;
    if (used_outputs.empty() || wrt.empty()) return result;
    std::ostringstream report;
    int reported = 0;
    auto compare = [&](std::complex<double> got, std::complex<double> numeric, const std::string& where) {
        const double error = std::abs(got - numeric) - rtol * std::abs(numeric);
        result.max_error = std::max(result.max_error, error);
        if (error <= atol) return;
        result.ok = false;
        if (reported++ < 8) report << where << ": analytic " << got << ", finite differences " << numeric << "\n";
    };
    if (options.check_jvp) {
        // One random direction for all inputs at once; each output's tangent against differences.
        std::vector<std::vector<std::complex<double>>> dirs(leaves.size());
        std::vector<Tensor> duals = leaves, plus = leaves, minus = leaves;
        for (size_t j : wrt) {
            const DType d = leaves[j].dtype();
            const auto base = detail::values_of(leaves[j]);
            auto& v = dirs[j];
            v.resize(base.size());
            for (auto& e : v) e = {normal(gen), detail::is_complex_dtype(d) ? normal(gen) : 0.0};
            auto p = base, m = base;
            for (size_t e = 0; e < base.size(); ++e) {
                p[e] += eps * v[e];
                m[e] -= eps * v[e];
            }
            plus[j] = detail::tensor_like(leaves[j], p, d);
            minus[j] = detail::tensor_like(leaves[j], m, d);
            duals[j] = make_dual(leaves[j].detach(), detail::tensor_like(leaves[j], v, d));
        }
        NoGrad no_grad;
        const std::vector<Tensor> ys = f(duals), yp = f(plus), ym = f(minus);
        for (size_t k = 0; k < ys.size(); ++k) {
            if (!detail::is_inexact(ys[k].dtype())) continue;
            const auto p = detail::values_of(yp[k]), m = detail::values_of(ym[k]);
            const Tensor t = ys[k].tangent();
            const auto got = t ? detail::values_of(t) : std::vector<std::complex<double>>(p.size());
            for (size_t e = 0; e < p.size(); ++e) {
                compare(got[e], (p[e] - m[e]) / (2 * eps), "jvp output " + std::to_string(k) + " element " + std::to_string(e));
            }
        }
    }
    if (!options.check_vjp) {
        result.report = report.str();
        return result;
    }
    const std::vector<Tensor> analytic = vjp(used_outputs, wrt_tensors, cotangents);

    // phi(x) with input j replaced.
    auto phi = [&](size_t j, const Tensor& xj) {
        NoGrad no_grad;
        std::vector<Tensor> args = leaves;
        args[j] = xj;
        const std::vector<Tensor> ys = f(args);
        double total = 0;
        size_t k = 0;
        for (const Tensor& y : ys) {
            if (!detail::is_inexact(y.dtype())) continue;
            if (k >= u.size()) break;
            const auto vals = detail::values_of(y);
            for (size_t e = 0; e < vals.size(); ++e) total += (std::conj(u[k][e]) * vals[e]).real();
            ++k;
        }
        return total;
    };
    for (size_t w = 0; w < wrt.size(); ++w) {
        const size_t j = wrt[w];
        const Tensor& x = leaves[j];
        const DType d = x.dtype();
        const auto base = detail::values_of(x);
        const std::vector<std::complex<double>> got =
            analytic[w] ? detail::values_of(analytic[w]) : std::vector<std::complex<double>>(base.size());
        for (size_t e = 0; e < base.size(); ++e) {
            auto derivative = [&](std::complex<double> direction) {
                auto plus = base, minus = base;
                plus[e] += eps * direction;
                minus[e] -= eps * direction;
                return (phi(j, detail::tensor_like(x, plus, d)) - phi(j, detail::tensor_like(x, minus, d))) / (2 * eps);
            };
            std::complex<double> numeric(derivative({1, 0}), 0);
            if (detail::is_complex_dtype(d)) numeric.imag(derivative({0, 1}));
            compare(got[e], numeric, "vjp input " + std::to_string(j) + " element " + std::to_string(e));
        }
    }
    result.report = report.str();
    return result;
}

}  // namespace ferro
