// The rules' vocabulary: the linalg rules compute only through host op calls (core ops and
// linalg ops), so they run on any engine and are differentiated again under create_graph.
// Complex numbers follow PyTorch's convention (docs/autodiff.md): for a real loss L the
// cotangent of A is dL/dRe(A) + i dL/dIm(A). Each op's rules sit in its file under ops/ with
// their formulas; docs/linalg.md writes them out with their references.
#pragma once

#include "linalg.hpp"

#include <ferro/rules.hpp>

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ferro::linalg {

using plugin::Arg;
using plugin::TensorRef;

// The linalg ops the rules call (the family's FERRO_EXT_RULE_CALLS link): the host resolves
// them once per runtime; rules name them with linalg_op("linalg.svd").
inline constexpr std::array kRuleCalls{
    "linalg.det",          "linalg.eig",
    "linalg.eigh",         "linalg.inv",
    "linalg.inverse_gaps", "linalg.lu_solve",
    "linalg.lu_unpack",    "linalg.matrix_exp",
    "linalg.matrix_norm",  "linalg.pinv",
    "linalg.qr",           "linalg.solve",
    "linalg.svd",          "linalg.triangular_solve",
};
consteval plugin::DeclaredOp linalg_op(std::string_view name) { return plugin::declared_op(kRuleCalls, name); }

// The rules' vocabulary on top of ferro/rules.hpp.
class Ops : public plugin::Rules {
public:
    Ops(const ferro_host_api* host, const ferro_vjp_args& a) : Rules(host, a, kRuleCalls) {}
    Ops(const ferro_host_api* host, const ferro_jvp_args& a) : Rules(host, a, kRuleCalls) {}

    TensorRef mH(Arg a) const { return conj(transpose(a)); }
    TensorRef mT(Arg a) const { return transpose(a); }
    TensorRef scale(Arg a, double s) const { return mul(a, scalar(a, s)); }
    int64_t dim(Arg a, int from_end) const {
        const ferro_signature s = signature(a);
        return s.shape[s.ndim - from_end];
    }
    // The main diagonal of the last two axes, as the last axis.
    TensorRef diagonal(Arg a) const {
        return call(FERRO_CORE_OP_DIAGONAL, {a},
                    {plugin::attr_i64("offset", 0), plugin::attr_i64("axis1", -2), plugin::attr_i64("axis2", -1)});
    }
    // The n x n identity with `like`'s dtype and engine.
    TensorRef eye(Arg like, int64_t n) const {
        return call(FERRO_CORE_OP_EYE, {},
                    {plugin::attr_i64("n", n), plugin::attr_str("dtype", plugin::dtype_attr_name(signature(like).dtype)),
                     plugin::attr_str("engine", host()->tensor_engine(like.get()))});
    }
    // diag(v) for a batch of vectors v [..., n]: [..., n, n].
    TensorRef diag_embed(Arg v) const { return mul(eye(v, dim(v, 1)), unsqueeze(v, -2)); }
    // U (X + diag(d)) with X optional (NULL: 0): the diagonal as a column scaling of U, one
    // call fewer than building diag(d).
    TensorRef times_plus_diag(Arg U, const TensorRef& X, Arg d) const {
        TensorRef scaled = mul(U, unsqueeze(d, -2));
        return X ? add(matmul(U, X), scaled) : std::move(scaled);
    }
    // A rows x cols constant (real dtype of `like`) from a function of (row, col).
    template <class F> TensorRef constant_matrix(Arg like, int64_t rows, int64_t cols, F&& f) const {
        const ferro_dtype dtype = real_dtype(signature(like).dtype);
        std::vector<double> d(static_cast<size_t>(rows * cols));
        std::vector<float> s(d.size());
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j) s[i * cols + j] = static_cast<float>(d[i * cols + j] = f(i, j));
        const int64_t shape[2] = {rows, cols};
        ferro_tensor out = nullptr;
        plugin::check(host(),
                      host()->tensor_from_host(host(), host()->tensor_engine(like.get()), dtype, 2, shape,
                                               dtype == FERRO_DTYPE_F32 ? static_cast<const void*>(s.data()) : d.data(), &out));
        return TensorRef(host(), out);
    }
    template <class F> TensorRef constant_matrix(Arg like, int64_t n, F&& f) const {
        return constant_matrix(like, n, n, std::forward<F>(f));
    }
    // numpy's tril(X, k) and triu(X, k) on the last two axes, as masks multiplied in.
    TensorRef tril(Arg x, int64_t k = 0) const {
        return mul(x, constant_matrix(x, dim(x, 2), dim(x, 1), [k](int64_t i, int64_t j) { return j - i <= k ? 1.0 : 0.0; }));
    }
    TensorRef triu(Arg x, int64_t k = 0) const {
        return mul(x, constant_matrix(x, dim(x, 2), dim(x, 1), [k](int64_t i, int64_t j) { return j - i >= k ? 1.0 : 0.0; }));
    }
    TensorRef strictly_lower(Arg x) const { return tril(x, -1); }
    // Solves with a triangular A (linalg.triangular_solve): A X = B, or X A = B.
    TensorRef tri_solve(Arg A, Arg B, bool upper, bool left = true, bool unit = false) const {
        return call(
            linalg_op("linalg.triangular_solve"), {A, B},
            {plugin::attr_bool("upper", upper), plugin::attr_bool("left", left), plugin::attr_bool("unitriangular", unit)});
    }
    // Zeros with `like`'s batch dimensions (all but its last two), then `matrix` (rows, cols).
    TensorRef zeros_shaped(Arg like, std::initializer_list<int64_t> matrix) const {
        std::vector<int64_t> shape = this->shape(like);
        shape.resize(shape.size() - 2);
        shape.insert(shape.end(), matrix);
        return zeros(shape, signature(like).dtype, host()->tensor_engine(like.get()));
    }
    // i * Im(x), as a tensor of x's dtype (zero for real x).
    TensorRef i_imag(Arg x) const { return sub(x, real(x)); }
    TensorRef real_part(Arg x) const { return plugin::is_complex(signature(x).dtype) ? real(x) : borrow(x.get()); }

    // linalg ops (their own rules make these rules differentiable).
    TensorRef solve(Arg a, Arg b) const { return call(linalg_op("linalg.solve"), {a, b}); }
    TensorRef inv(Arg a) const { return call(linalg_op("linalg.inv"), {a}); }

    // sum of two optional terms (NULL = zero).
    TensorRef plus(TensorRef a, TensorRef b) const {
        if (!a) return b;
        if (!b) return a;
        return add(a, b);
    }
    // F_ij = 1/(y_j - y_i) for real y = x (or x^2 with squares), regularised as d / (d^2 + eps),
    // 0 on the diagonal: the factor of the off-diagonal terms of eigh and SVD derivatives.
    TensorRef inverse_gaps(Arg x, double eps, bool squares = false) const {
        return call(linalg_op("linalg.inverse_gaps"), {x}, {plugin::attr_f64("eps", eps), plugin::attr_bool("squares", squares)});
    }
    // 1/e off the diagonal and 0 on it, for a matrix of gaps e of any dtype with 0 on its
    // diagonal (eig's complex eigenvalues).
    TensorRef inverse_gap_matrix(Arg e) const {
        const TensorRef eye_n = eye(e, dim(e, 1));
        return sub(call(FERRO_CORE_OP_RECIPROCAL, {add(e, eye_n)}), eye_n);  // 1 on the diagonal: no 0/0 there
    }
};

template <class Body> ferro_status vjp_rule(const ferro_host_api* host, const ferro_vjp_args* a, Body&& body) {
    return plugin::guard(host, [&] { body(Ops(host, *a), *a); });
}
template <class Body> ferro_status jvp_rule(const ferro_host_api* host, const ferro_jvp_args* a, Body&& body) {
    return plugin::guard(host, [&] { body(Ops(host, *a), *a); });
}

// A complex eigen- or singular vector is defined only up to a phase e^{i phi}. A loss that
// depends on the phase has no gradient: PyTorch refuses it by the same test (imaginary parts
// of the gauge terms above 1e-2), and so do we rather than return a wrong gradient.
inline void check_gauge(const Ops& r, Arg gauge_terms, const char* op, const char* vectors) {
    const TensorRef worst = r.call(FERRO_CORE_OP_MAX, {r.call(FERRO_CORE_OP_ABS, {r.imag(gauge_terms)})});
    double value = 0;
    plugin::check(r.host(), r.host()->tensor_to_host(r.cast(worst, FERRO_DTYPE_F64).get(), &value, sizeof value));
    if (value > 1e-2) {
        throw plugin::Error(FERRO_NOT_DIFFERENTIABLE,
                            std::string(op) + ": the loss depends on the phase of the complex " + vectors +
                                " (each is defined only up to a factor e^{i phi}), so its gradient is ill-defined (gauge "
                                "term " +
                                std::to_string(value) + " > 0.01); use a phase-invariant loss such as |V| or V V^H");
    }
}

// ---- shared by solve and solve_with_lu (ops/solve.cpp, ops/lu.cpp)
// Solve: X = A^-1 B.  gB = A^-H gX, gA = -gB X^H.  dX = A^-1 (dB - dA X).
// `solve_with(G, adjoint)` is A^-1 G, or A^-H G, for a matrix G.
struct SolveCotangents {
    TensorRef gA, gB;
};
template <class SolveWith> SolveCotangents solve_cotangents(const Ops& r, const ferro_vjp_args& a, SolveWith&& solve_with) {
    if (!a.cotangents[0]) return {};
    const ferro_tensor X = a.outputs[0];
    const bool vec = solve_vector_rhs(a.input_sigs[0], a.input_sigs[1]);
    TensorRef gB =
        vec ? r.squeeze(solve_with(r.unsqueeze(a.cotangents[0], -1), true), -1) : solve_with(r.borrow(a.cotangents[0]), true);
    TensorRef gA;
    if (a.needs_input_grad[0]) {
        gA = vec ? r.neg(r.mul(r.unsqueeze(gB, -1), r.unsqueeze(r.conj(X), -2))) : r.neg(r.matmul(gB, r.mH(X)));
    }
    return {std::move(gA), std::move(gB)};
}
template <class SolveWith> TensorRef solve_tangent(const Ops& r, const ferro_jvp_args& a, SolveWith&& solve_with) {
    const ferro_tensor X = a.outputs[0];
    const bool vec = solve_vector_rhs(r.signature(a.inputs[0]), r.signature(a.inputs[1]));
    TensorRef rhs;
    if (a.input_tangents[1]) rhs = r.borrow(a.input_tangents[1]);
    if (a.input_tangents[0]) {
        TensorRef dAX = vec ? r.squeeze(r.matmul(a.input_tangents[0], r.unsqueeze(X, -1)), -1) : r.matmul(a.input_tangents[0], X);
        rhs = rhs ? r.sub(rhs, dAX) : r.neg(dAX);
    }
    if (!rhs) return {};
    return vec ? r.squeeze(solve_with(r.unsqueeze(rhs, -1), false), -1) : solve_with(rhs, false);
}

// ---- shared by the LU ops (defined in ops/lu.cpp)
struct LuParts {
    TensorRef P, L, U;
};
// (P, L, U) of lu_factor's (LU, pivots).
LuParts lu_unpacked(const Ops& r, ferro_tensor LU, ferro_tensor pivots);
// gA from the cotangents of L and U (either may be empty).
TensorRef lu_backward(const Ops& r, const LuParts& p, TensorRef gL, TensorRef gU);
// (dL, dU) from dA.
std::pair<TensorRef, TensorRef> lu_forward(const Ops& r, const LuParts& p, Arg dA);
// lu_factor's packed LU from the parts that vary: tril(L, -1) and triu(U), m x n.
TensorRef pack_lu(const Ops& r, Arg strict_l, Arg upper_u, int64_t m, int64_t n);
// (L part, U part) of a packed m x n matrix: tril(X[:, :k], -1) and triu(X[:k, :]).
std::pair<TensorRef, TensorRef> split_lu(const Ops& r, Arg x);

// ---- shared by pinv and lstsq (defined in ops/pinv.cpp): X = A^+ at constant rank.
TensorRef pinv_backward(const Ops& r, Arg A, Arg X, Arg g);
TensorRef pinv_forward(const Ops& r, Arg A, Arg X, Arg dA);

}  // namespace ferro::linalg
