// VJP and JVP rules of the linalg family. They compute only through host op calls (core ops
// and linalg ops), so they run on any engine and are differentiated again under create_graph.
// Complex numbers follow PyTorch's convention (docs/autodiff.md): for a real loss L the
// cotangent of A is dL/dRe(A) + i dL/dIm(A). References: Giles 2008 (solve, inv, det),
// Murray 2016 (Cholesky), Townsend 2016 and Seeger et al. 2017 (SVD, eigh), Walter and
// Lehmann 2018 (QR of wide matrices); the formulas are written out in docs/linalg.md.
#include "linalg.hpp"

#include <ferro/rules.hpp>

#include <cmath>
#include <vector>

namespace ferro::linalg {
namespace {

using plugin::Arg;
using plugin::TensorRef;

// The rules' vocabulary on top of ferro/rules.hpp.
class Ops : public plugin::Rules {
public:
    using Rules::Rules;

    TensorRef mH(Arg a) const { return conj(transpose(a)); }
    TensorRef mT(Arg a) const { return transpose(a); }
    TensorRef scale(Arg a, double s) const { return mul(a, scalar(a, s)); }
    int64_t dim(Arg a, int from_end) const {
        const ferro_signature s = signature(a);
        return s.shape[s.ndim - from_end];
    }
    // The main diagonal of the last two axes, as the last axis.
    TensorRef diagonal(Arg a) const {
        return call("core.diagonal", {a}, {plugin::attr_i64("offset", 0), plugin::attr_i64("axis1", -2),
                                           plugin::attr_i64("axis2", -1)});
    }
    // The n x n identity with `like`'s dtype and engine.
    TensorRef eye(Arg like, int64_t n) const {
        return call("core.eye", {}, {plugin::attr_i64("n", n), plugin::attr_str("dtype", plugin::dtype_attr_name(signature(like).dtype)),
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
        plugin::check(host(), host()->tensor_from_host(host(), host()->tensor_engine(like.get()), dtype, 2, shape,
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
        return call("linalg.triangular_solve", {A, B}, {plugin::attr_bool("upper", upper), plugin::attr_bool("left", left),
                                                        plugin::attr_bool("unitriangular", unit)});
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
    TensorRef real_part(Arg x) const {
        return plugin::is_complex(signature(x).dtype) ? real(x) : borrow(x.get());
    }

    // linalg ops (their own rules make these rules differentiable).
    TensorRef solve(Arg a, Arg b) const { return call("linalg.solve", {a, b}); }
    TensorRef inv(Arg a) const { return call("linalg.inv", {a}); }

    // sum of two optional terms (NULL = zero).
    TensorRef plus(TensorRef a, TensorRef b) const {
        if (!a) return b;
        if (!b) return a;
        return add(a, b);
    }
    // F_ij = 1/(y_j - y_i) for real y = x (or x^2 with squares), regularised as d / (d^2 + eps),
    // 0 on the diagonal: the factor of the off-diagonal terms of eigh and SVD derivatives.
    TensorRef inverse_gaps(Arg x, double eps, bool squares = false) const {
        return call("linalg.inverse_gaps", {x}, {plugin::attr_f64("eps", eps), plugin::attr_bool("squares", squares)});
    }
    // 1/e off the diagonal and 0 on it, for a matrix of gaps e of any dtype with 0 on its
    // diagonal (eig's complex eigenvalues).
    TensorRef inverse_gap_matrix(Arg e) const {
        const TensorRef eye_n = eye(e, dim(e, 1));
        return sub(call("core.reciprocal", {add(e, eye_n)}), eye_n);  // 1 on the diagonal: no 0/0 there
    }
};

template <class Body> ferro_status vjp_rule(const ferro_host_api* host, const ferro_vjp_args* a, Body&& body) {
    return plugin::guard(host, [&] { body(Ops(host), *a); });
}
template <class Body> ferro_status jvp_rule(const ferro_host_api* host, const ferro_jvp_args* a, Body&& body) {
    return plugin::guard(host, [&] { body(Ops(host), *a); });
}


// A complex eigen- or singular vector is defined only up to a phase e^{i phi}. A loss that
// depends on the phase has no gradient: PyTorch refuses it by the same test (imaginary parts
// of the gauge terms above 1e-2), and so do we rather than return a wrong gradient.
void check_gauge(const Ops& r, Arg gauge_terms, const char* op, const char* vectors) {
    const TensorRef worst = r.call("core.max", {r.call("core.abs", {r.imag(gauge_terms)})});
    double value = 0;
    plugin::check(r.host(), r.host()->tensor_to_host(r.cast(worst, FERRO_DTYPE_F64).get(), &value, sizeof value));
    if (value > 1e-2) {
        throw plugin::Error(FERRO_NOT_DIFFERENTIABLE,
                            std::string(op) + ": the loss depends on the phase of the complex " + vectors +
                                " (each is defined only up to a factor e^{i phi}), so its gradient is ill-defined (gauge "
                                "term " + std::to_string(value) + " > 0.01); use a phase-invariant loss such as |V| or V V^H");
    }
}

}  // namespace

// ---- solve: X = A^-1 B.  gB = A^-H gX, gA = -gB X^H.  dX = A^-1 (dB - dA X).
// `solve_with(G, adjoint)` is A^-1 G, or A^-H G, for a matrix G.
struct SolveCotangents {
    TensorRef gA, gB;
};
template <class SolveWith>
SolveCotangents solve_cotangents(const Ops& r, const ferro_vjp_args& a, SolveWith&& solve_with) {
    if (!a.cotangents[0]) return {};
    const ferro_tensor X = a.outputs[0];
    const bool vec = solve_vector_rhs(a.input_sigs[0], a.input_sigs[1]);
    TensorRef gB = vec ? r.squeeze(solve_with(r.unsqueeze(a.cotangents[0], -1), true), -1)
                       : solve_with(r.borrow(a.cotangents[0]), true);
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
        TensorRef dAX = vec ? r.squeeze(r.matmul(a.input_tangents[0], r.unsqueeze(X, -1)), -1)
                            : r.matmul(a.input_tangents[0], X);
        rhs = rhs ? r.sub(rhs, dAX) : r.neg(dAX);
    }
    if (!rhs) return {};
    return vec ? r.squeeze(solve_with(r.unsqueeze(rhs, -1), false), -1) : solve_with(rhs, false);
}

ferro_status solve_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        const ferro_tensor A = a.inputs[0];
        auto [gA, gB] = solve_cotangents(r, a, [&](const TensorRef& G, bool adjoint) {
            return r.solve(adjoint ? r.mH(A) : r.borrow(A), G);
        });
        if (a.needs_input_grad[0] && gA) a.input_cotangents[0] = gA.release();
        if (a.needs_input_grad[1] && gB) a.input_cotangents[1] = gB.release();
    });
}
ferro_status solve_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        const ferro_tensor A = a.inputs[0];
        TensorRef dX = solve_tangent(r, a, [&](const TensorRef& G, bool) { return r.solve(A, G); });
        if (dX) a.output_tangents[0] = dX.release();
    });
}

// ---- inv: Y = A^-1.  gA = -Y^H gY Y^H.  dY = -Y dA Y.
ferro_status inv_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        const TensorRef yh = r.mH(a.outputs[0]);
        a.input_cotangents[0] = r.neg(r.matmul(yh, r.matmul(a.cotangents[0], yh))).release();
    });
}
ferro_status inv_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        const ferro_tensor Y = a.outputs[0];
        a.output_tangents[0] = r.neg(r.matmul(Y, r.matmul(a.input_tangents[0], Y))).release();
    });
}

// ---- det: d = det(A).  dd = tr(adj(A) dA), so gA = g adj(A)^H. For invertible A,
// adj(A) = d A^-1; for singular A (a zero determinant in the batch) the adjugate comes from
// the SVD A = U S Vh: adj(A) = det(U) det(Vh) V diag(prod_{j != i} s_j) U^H, which is right at
// rank n - 1 too (where d A^-1 is 0 * inf).
namespace {

bool any_zero(const Ops& r, ferro_tensor d) {
    const TensorRef zero = r.call("core.eq", {d, r.scalar(d, 0)});
    const TensorRef any = r.call("core.any", {zero});
    unsigned char hit = 0;
    plugin::check(r.host(), r.host()->tensor_to_host(any.get(), &hit, 1));
    return hit != 0;
}

// prod_{j != i} s_j for singular values s [..., n] (descending, >= 0), exact with zeros.
TensorRef products_of_others(const Ops& r, ferro_tensor s) {
    const int64_t last[1] = {-1};
    const TensorRef is_zero = r.call("core.eq", {s, r.scalar(s, 0)});
    const TensorRef safe = r.where(is_zero, r.scalar(s, 1), s);
    const TensorRef all = r.call("core.prod", {safe}, {plugin::attr_i64s("axes", last), plugin::attr_bool("keepdim", true)});
    const TensorRef zeros = r.sum(r.cast(is_zero, r.signature(s).dtype), last, true);
    const TensorRef none = r.call("core.eq", {zeros, r.scalar(zeros, 0)});
    const TensorRef one = r.call("core.eq", {zeros, r.scalar(zeros, 1)});
    // no zero: P / s_i; one zero: P at the zero, 0 elsewhere; more: 0.
    const TensorRef at_zero = r.where(is_zero, all, r.scalar(s, 0));
    return r.where(none, r.div(all, safe), r.where(one, at_zero, r.scalar(s, 0)));
}

TensorRef adjugate(const Ops& r, ferro_tensor A, ferro_tensor d) {
    if (!any_zero(r, d)) return r.mul(r.unsqueeze(r.unsqueeze(d, -1), -1), r.inv(A));
    const auto usv = r.call_all("linalg.svd", {A}, {plugin::attr_bool("full_matrices", false)});
    const TensorRef phase = r.mul(r.call("linalg.det", {usv[0]}), r.call("linalg.det", {usv[2]}));
    const TensorRef pi = r.cast(products_of_others(r, usv[1].get()), r.signature(A).dtype);
    const TensorRef v_pi = r.mul(r.mH(usv[2]), r.unsqueeze(pi, -2));  // V diag(pi)
    return r.mul(r.unsqueeze(r.unsqueeze(phase, -1), -1), r.matmul(v_pi, r.mH(usv[0])));
}

TensorRef trace(const Ops& r, Arg x) {
    const int64_t last[1] = {-1};
    return r.sum(r.diagonal(x), last, false);
}

}  // namespace

ferro_status det_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        const TensorRef adj = adjugate(r, a.inputs[0], a.outputs[0]);
        a.input_cotangents[0] = r.mul(r.unsqueeze(r.unsqueeze(a.cotangents[0], -1), -1), r.mH(adj)).release();
    });
}
ferro_status det_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        a.output_tangents[0] = trace(r, r.matmul(adjugate(r, a.inputs[0], a.outputs[0]), a.input_tangents[0])).release();
    });
}

// ---- slogdet: with t = tr(A^-1 dA): dlogabs = Re t, dsign = sign i Im t (complex; 0 for
// real). So gA = c A^-H with c = g_logabs + i Im(conj(sign) g_sign).
ferro_status slogdet_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        const ferro_tensor A = a.inputs[0], sign = a.outputs[0];
        const bool complex = is_complex(a.input_sigs[0].dtype);
        TensorRef c;
        if (a.cotangents[1]) c = r.cast(a.cotangents[1], a.input_sigs[0].dtype);
        if (complex && a.cotangents[0]) {
            c = r.plus(std::move(c), r.i_imag(r.mul(r.conj(sign), a.cotangents[0])));
        }
        if (!c) return;
        const TensorRef scaled = r.mul(r.unsqueeze(r.unsqueeze(c, -1), -1), r.eye(A, r.dim(A, 1)));
        a.input_cotangents[0] = r.solve(r.mH(A), scaled).release();  // c A^-H
    });
}
ferro_status slogdet_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        const TensorRef t = trace(r, r.solve(a.inputs[0], a.input_tangents[0]));
        a.output_tangents[1] = r.real_part(t).release();
        if (is_complex(r.signature(a.inputs[0]).dtype)) a.output_tangents[0] = r.mul(a.outputs[0], r.i_imag(t)).release();
    });
}

// ---- cholesky (Murray 2016): A = L L^H.  gA = sym(L^-H Phi(L^H gL) L^-1), Phi = the lower
// triangle with the diagonal halved, sym(X) = (X + X^H) / 2.  dL = L Phi(L^-1 dA L^-H).
// The upper factor U = L^H goes through the same formulas on its transpose.
namespace {
TensorRef phi(const Ops& r, Arg x) {
    return r.mul(x, r.constant_matrix(x, r.dim(x, 1), [](int64_t i, int64_t j) { return i > j ? 1.0 : i == j ? 0.5 : 0.0; }));
}
bool attr_bool(const ferro_attr_value* attrs, int i) { return attrs[i].v.boolean != 0; }
}  // namespace

ferro_status cholesky_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        const bool upper = attr_bool(a.attrs, 0);
        const TensorRef L = upper ? r.mH(a.outputs[0]) : r.borrow(a.outputs[0]);
        const TensorRef gL = upper ? r.mH(a.cotangents[0]) : r.borrow(a.cotangents[0]);
        const TensorRef Linv = r.inv(L);
        const TensorRef inner = r.matmul(r.mH(Linv), r.matmul(phi(r, r.matmul(r.mH(L), gL)), Linv));
        a.input_cotangents[0] = r.scale(r.add(inner, r.mH(inner)), 0.5).release();
    });
}
ferro_status cholesky_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        const bool upper = attr_bool(a.attrs, 0);
        const TensorRef L = upper ? r.mH(a.outputs[0]) : r.borrow(a.outputs[0]);
        const TensorRef Linv = r.inv(L);
        TensorRef dL = r.matmul(L, phi(r, r.matmul(Linv, r.matmul(a.input_tangents[0], r.mH(Linv)))));
        a.output_tangents[0] = upper ? r.mH(dL).release() : dL.release();
    });
}

// ---- qr. Tall or square A (m >= n, reduced): with C = Q^H dA R^-1, Q^H dQ = Omega = phi(C) =
// tril(C, -1) - tril(C, -1)^H + i Im diag(C) (skew-Hermitian; R keeps a real diagonal) and
// dR = (C - Omega) R, dQ = dA R^-1 - Q (C - Omega). Its adjoint, with N = Q^H gQ - gR R^H:
//   gA = [Q (gR R^H + phi*(N)) + gQ - Q Q^H gQ] R^-H,  phi*(N) = tril(N, -1) - tril(N^H, -1) + i Im diag(N).
// Wide A = [X | Y] (m < n): X = Q R1 is square, R2 = Q^H Y (Walter and Lehmann 2018).
namespace {

struct QrParts {
    TensorRef Q, R;  // R: m x n (m >= n: square n x n)
};

// Q, R of the call: the outputs, or for mode "r" a reduced QR recomputed from the input.
QrParts qr_parts(const Ops& r, ferro_tensor A, const ferro_tensor* outputs, uint32_t n_outputs, const char* mode) {
    const std::string m = mode;
    const int64_t rows = r.dim(A, 2), cols = r.dim(A, 1);
    if (m == "complete" && rows > cols) {
        throw plugin::Error(FERRO_NOT_DIFFERENTIABLE,
                            "linalg.qr: mode \"complete\" with more rows than columns has no derivative (the last " +
                                std::to_string(rows - cols) + " columns of Q are not determined by A); use mode \"reduced\"");
    }
    if (n_outputs == 1) {
        auto qr = r.call_all("linalg.qr", {A});
        return {std::move(qr[0]), std::move(qr[1])};
    }
    return {r.borrow(outputs[0]), r.borrow(outputs[1])};
}

// i Im diag(X) as a matrix; absent (zero) for real X.
TensorRef imag_diagonal(const Ops& r, Arg x) {
    if (!is_complex(r.signature(x).dtype)) return TensorRef();
    return r.diag_embed(r.i_imag(r.diagonal(x)));
}
TensorRef omega_of(const Ops& r, Arg c) {  // phi(C)
    const TensorRef low = r.strictly_lower(c);
    return r.plus(r.sub(low, r.mH(low)), imag_diagonal(r, c));
}
TensorRef omega_adjoint(const Ops& r, Arg n) {  // phi*(N)
    return r.plus(r.sub(r.strictly_lower(n), r.strictly_lower(r.mH(n))), imag_diagonal(r, n));
}
// X R^-H and X R^-1: triangular solves from the right (no LU of R).
TensorRef times_inv_rh(const Ops& r, Arg x, Arg R) { return r.tri_solve(r.mH(R), x, /*upper=*/false, /*left=*/false); }
TensorRef times_inv_r(const Ops& r, Arg x, Arg R) { return r.tri_solve(R, x, /*upper=*/true, /*left=*/false); }

// The tall-or-square VJP (gQ or gR may be empty), with Q Q^H gQ folded into N:
// gA = [Q (phi*(N) - N) + gQ] R^-H, three products and one triangular solve.
TensorRef qr_vjp_tall(const Ops& r, Arg Q, Arg R, const TensorRef& gQ, const TensorRef& gR) {
    TensorRef N = gQ ? r.matmul(r.mH(Q), gQ) : TensorRef();
    if (gR) {
        TensorRef gRRh = r.matmul(gR, r.mH(R));
        N = N ? r.sub(N, gRRh) : r.neg(gRRh);
    }
    TensorRef lhs = r.matmul(Q, r.sub(omega_adjoint(r, N), N));
    if (gQ) lhs = r.add(lhs, gQ);
    return times_inv_rh(r, lhs, R);
}

}  // namespace

ferro_status qr_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        const ferro_tensor A = a.inputs[0];
        const QrParts p = qr_parts(r, A, a.outputs, a.n_outputs, a.attrs[0].v.str);
        TensorRef gQ = a.n_outputs == 1 ? TensorRef() : r.borrow(a.cotangents[0]);
        TensorRef gR = r.borrow(a.cotangents[a.n_outputs == 1 ? 0 : 1]);
        if (!gQ && !gR) return;
        const int64_t m = r.dim(A, 2), n = r.dim(A, 1);
        if (m >= n) {
            a.input_cotangents[0] = qr_vjp_tall(r, p.Q, p.R, gQ, gR).release();
            return;
        }
        const TensorRef Y = r.slice(A, -1, m, n);
        const TensorRef R1 = r.slice(p.R, -1, 0, m);
        TensorRef gR1 = gR ? r.slice(gR, -1, 0, m) : TensorRef();
        TensorRef gR2 = gR ? r.slice(gR, -1, m, n) : TensorRef();
        if (gR2) gQ = r.plus(std::move(gQ), r.matmul(Y, r.mH(gR2)));
        const TensorRef gX = qr_vjp_tall(r, p.Q, R1, gQ, gR1);
        const TensorRef gY = gR2 ? r.matmul(p.Q, gR2) : r.zeros_like(Y);
        a.input_cotangents[0] = r.concat(gX, gY, -1).release();
    });
}

ferro_status qr_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        const ferro_tensor dA = a.input_tangents[0];
        if (!dA) return;
        const ferro_tensor A = a.inputs[0];
        const uint32_t n_out = a.n_outputs;
        const QrParts p = qr_parts(r, A, a.outputs, n_out, a.attrs[0].v.str);
        const int64_t m = r.dim(A, 2), n = r.dim(A, 1);
        const TensorRef dX = m >= n ? r.borrow(dA) : r.slice(dA, -1, 0, m);
        const TensorRef R1 = m >= n ? r.borrow(p.R.get()) : r.slice(p.R, -1, 0, m);
        const TensorRef B = times_inv_r(r, dX, R1);  // dX R1^-1
        const TensorRef C = r.matmul(r.mH(p.Q), B);
        const TensorRef upper = r.sub(C, omega_of(r, C));  // dR R^-1
        TensorRef dQ = r.sub(B, r.matmul(p.Q, upper));
        TensorRef dR = r.matmul(upper, R1);
        if (m < n) {  // R2 = Q^H Y: dR2 = dQ^H Y + Q^H dY
            const TensorRef Y = r.slice(A, -1, m, n), dY = r.slice(dA, -1, m, n);
            dR = r.concat(dR, r.add(r.matmul(r.mH(dQ), Y), r.matmul(r.mH(p.Q), dY)), -1);
        }
        if (n_out == 1) {
            a.output_tangents[0] = dR.release();
        } else {
            a.output_tangents[0] = dQ.release();
            a.output_tangents[1] = dR.release();
        }
    });
}

// ---- eigh: A = V diag(w) V^H. With F_ij = 1/(w_j - w_i) off the diagonal (regularised by eps):
//   gA = V (diag(gw) + F o skew(V^H gV)) V^H,  skew(X) = (X - X^H) / 2;
//   dw = Re diag(V^H dA V),  dV = V (F o (V^H dA V)).
// eigvalsh recomputes V from its input.
namespace {

struct EighParts {
    TensorRef w, V;
    double eps = 0;
};

EighParts eigh_parts(const Ops& r, const ferro_attr_value* attrs, uint32_t n_outputs, ferro_tensor A,
                     const ferro_tensor* outputs) {
    if (n_outputs == 2) return {r.borrow(outputs[0]), r.borrow(outputs[1]), attrs[1].v.f64};
    auto wv = r.call_all("linalg.eigh", {A}, {plugin::attr_str("uplo", attrs[0].v.str)});
    return {std::move(wv[0]), std::move(wv[1]), 0.0};
}

}  // namespace

ferro_status eigh_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        const ferro_tensor gw = a.cotangents[0];
        const ferro_tensor gV = a.n_outputs == 2 ? a.cotangents[1] : nullptr;
        if (!gw && !gV) return;
        const EighParts p = eigh_parts(r, a.attrs, a.n_outputs, a.inputs[0], a.outputs);
        const ferro_dtype dtype = a.input_sigs[0].dtype;
        TensorRef inner;
        const TensorRef Vh = r.mH(p.V);
        if (gV) {
            const TensorRef VhgV = r.matmul(Vh, gV);
            if (is_complex(dtype) && r.dim(VhgV, 1) > 0) check_gauge(r, r.diagonal(VhgV), "linalg.eigh", "eigenvectors");
            const TensorRef skew = r.scale(r.sub(VhgV, r.mH(VhgV)), 0.5);
            inner = r.mul(skew, r.cast(r.inverse_gaps(p.w, p.eps), dtype));
        }
        const TensorRef V_inner = gw ? r.times_plus_diag(p.V, inner, r.cast(gw, dtype)) : r.matmul(p.V, inner);
        a.input_cotangents[0] = r.matmul(V_inner, Vh).release();
    });
}

ferro_status eigh_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        const EighParts p = eigh_parts(r, a.attrs, a.n_outputs, a.inputs[0], a.outputs);
        const TensorRef X = r.matmul(r.mH(p.V), r.matmul(a.input_tangents[0], p.V));
        a.output_tangents[0] = r.real_part(r.diagonal(X)).release();
        if (a.n_outputs == 2) {
            const TensorRef F = r.cast(r.inverse_gaps(p.w, p.eps), r.signature(X).dtype);
            a.output_tangents[1] = r.matmul(p.V, r.mul(F, X)).release();
        }
    });
}

// ---- svd (thin: U m x k, S k, Vh k x n). With F_ij = 1/(s_j^2 - s_i^2) off the diagonal
// (regularised by eps), skew(X) = X - X^H and sym(X) = X + X^H:
//   gA = U [F o (skew(U^H gU) S + S skew(V^H gV)) + diag(gS) + i Im diag(U^H gU) / S] Vh
//        + (I - U U^H) gU S^-1 Vh   (m > n)   + U S^-1 gVh (I - V Vh)   (m < n);
//   dP = U^H dA V: dS = Re diag(dP), dU = U (F o sym(dP S) + i Im diag(dP) / S)
//        + (I - U U^H) dA V S^-1, dV = V (F o sym(S dP)) + (I - V Vh) dA^H U S^-1.
// The phase of each complex singular pair is free: a loss that depends on it has no
// gradient (gauge; docs/linalg.md). full_matrices: the columns beyond k get no cotangent
// (as PyTorch). svdvals recomputes U and Vh from its input.
namespace {

struct SvdParts {
    TensorRef U, S, Vh;  // thin
    TensorRef gU, gS, gVh;
    double eps = 0;
};

SvdParts svd_parts(const Ops& r, uint32_t n_outputs, const ferro_attr_value* attrs, ferro_tensor A,
                   const ferro_tensor* outputs, const ferro_tensor* cotangents) {
    SvdParts p;
    if (n_outputs == 1) {  // svdvals: its input is saved
        auto usv = r.call_all("linalg.svd", {A}, {plugin::attr_bool("full_matrices", false)});
        p.U = std::move(usv[0]);
        p.S = std::move(usv[1]);
        p.Vh = std::move(usv[2]);
        if (cotangents) p.gS = r.borrow(cotangents[0]);
        return p;
    }
    const bool full = attrs[0].v.boolean != 0;
    const int64_t k = r.dim(outputs[1], 1);  // svd saves its outputs, not A
    p.eps = attrs[1].v.f64;
    auto narrow_cols = [&](ferro_tensor t) { return full ? r.slice(t, -1, 0, k) : r.borrow(t); };
    auto narrow_rows = [&](ferro_tensor t) { return full ? r.slice(t, -2, 0, k) : r.borrow(t); };
    p.U = narrow_cols(outputs[0]);
    p.S = r.borrow(outputs[1]);
    p.Vh = narrow_rows(outputs[2]);
    if (cotangents) {
        if (cotangents[0]) p.gU = narrow_cols(cotangents[0]);
        p.gS = r.borrow(cotangents[1]);
        if (cotangents[2]) p.gVh = narrow_rows(cotangents[2]);
    }
    return p;
}

TensorRef svd_gaps(const Ops& r, Arg S, ferro_dtype dtype, double eps) {  // 1/(s_j^2 - s_i^2)
    return r.cast(r.inverse_gaps(S, eps, /*squares=*/true), dtype);
}

}  // namespace

ferro_status svd_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        const ferro_tensor A = a.inputs[0];
        const ferro_dtype dtype = a.input_sigs[0].dtype;
        const SvdParts p = svd_parts(r, a.n_outputs, a.attrs, A, a.outputs, a.cotangents);
        if (!p.gU && !p.gS && !p.gVh) return;
        const int64_t m = a.input_sigs[0].shape[a.input_sigs[0].ndim - 2], n = a.input_sigs[0].shape[a.input_sigs[0].ndim - 1];
        const TensorRef S = r.cast(p.S, dtype);
        const TensorRef S_row = r.unsqueeze(S, -2), S_col = r.unsqueeze(S, -1);
        TensorRef inner;
        TensorRef UhgU;
        if (p.gU || p.gVh) {
            TensorRef off, gauge;  // gauge terms: complex only (real vectors have no phase)
            const bool complex = is_complex(dtype);
            if (p.gU) {
                const TensorRef x = r.matmul(r.mH(p.U), p.gU);
                UhgU = r.sub(x, r.mH(x));
                off = r.mul(UhgU, S_row);
                if (complex) gauge = r.diagonal(x);
            }
            if (p.gVh) {
                const TensorRef x = r.matmul(p.Vh, r.mH(p.gVh));  // V^H gV
                off = r.plus(std::move(off), r.mul(S_col, r.sub(x, r.mH(x))));
                if (complex) gauge = r.plus(std::move(gauge), r.diagonal(x));
            }
            if (complex && r.dim(gauge, 1) > 0) check_gauge(r, gauge, "linalg.svd", "singular vectors");
            inner = r.mul(off, svd_gaps(r, p.S, dtype, p.eps));
        }
        if (UhgU && is_complex(dtype)) {
            inner = r.add(inner, r.diag_embed(r.div(r.diagonal(UhgU), r.scale(S, 2))));
        }
        const TensorRef U_inner = p.gS ? r.times_plus_diag(p.U, inner, r.cast(p.gS, dtype)) : r.matmul(p.U, inner);
        TensorRef gA = r.matmul(U_inner, p.Vh);
        if (m > n && p.gU) {
            const TensorRef gUSinv = r.div(p.gU, S_row);
            gA = r.add(gA, r.matmul(r.sub(gUSinv, r.matmul(p.U, r.matmul(r.mH(p.U), gUSinv))), p.Vh));
        } else if (m < n && p.gVh) {
            const TensorRef SinvgVh = r.div(p.gVh, S_col);
            gA = r.add(gA, r.matmul(p.U, r.sub(SinvgVh, r.matmul(r.matmul(SinvgVh, r.mH(p.Vh)), p.Vh))));
        }
        a.input_cotangents[0] = gA.release();
    });
}

ferro_status svd_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        const ferro_tensor dA = a.input_tangents[0];
        if (!dA) return;
        const ferro_tensor A = a.inputs[0];
        const ferro_dtype dtype = r.signature(A).dtype;
        const int64_t m = r.dim(A, 2), n = r.dim(A, 1);
        const SvdParts p = svd_parts(r, a.n_outputs, a.attrs, A, a.outputs, nullptr);
        const TensorRef V = r.mH(p.Vh);
        const TensorRef dP = r.matmul(r.mH(p.U), r.matmul(dA, V));
        TensorRef dS = r.real_part(r.diagonal(dP));
        if (a.n_outputs == 1) {
            a.output_tangents[0] = dS.release();
            return;
        }
        const TensorRef S = r.cast(p.S, dtype);
        const TensorRef S_row = r.unsqueeze(S, -2), S_col = r.unsqueeze(S, -1);
        const TensorRef F = svd_gaps(r, p.S, dtype, p.eps);
        const TensorRef dPS = r.mul(dP, S_row), SdP = r.mul(S_col, dP);
        TensorRef omega_u = r.mul(F, r.add(dPS, r.mH(dPS)));
        if (is_complex(dtype)) omega_u = r.add(omega_u, r.diag_embed(r.div(r.i_imag(r.diagonal(dP)), S)));
        TensorRef dU = r.matmul(p.U, omega_u);
        TensorRef dV = r.matmul(V, r.mul(F, r.add(SdP, r.mH(SdP))));
        if (m > n) {  // (I - U U^H) dA V S^-1
            const TensorRef dAVSinv = r.div(r.matmul(dA, V), S_row);
            dU = r.add(dU, r.sub(dAVSinv, r.matmul(p.U, r.matmul(r.mH(p.U), dAVSinv))));
        } else if (m < n) {  // (I - V Vh) dA^H U S^-1
            const TensorRef dAhUSinv = r.div(r.matmul(r.mH(dA), p.U), S_row);
            dV = r.add(dV, r.sub(dAhUSinv, r.matmul(V, r.matmul(p.Vh, dAhUSinv))));
        }
        if (a.attrs[0].v.boolean != 0 && m != n) {
            // full_matrices: the extra columns Q of U (or of V) are any orthonormal completion; we
            // move them as little as keeps [U Q] unitary to first order: dQ = -U dU^H Q.
            const int64_t k = std::min(m, n);
            if (m > n) {
                const TensorRef Q = r.slice(a.outputs[0], -1, k, m);
                dU = r.concat(dU, r.neg(r.matmul(p.U, r.matmul(r.mH(dU), Q))), -1);
            } else {
                const TensorRef Q = r.mH(r.slice(a.outputs[2], -2, k, n));
                dV = r.concat(dV, r.neg(r.matmul(V, r.matmul(r.mH(dV), Q))), -1);
            }
        }
        a.output_tangents[0] = dU.release();
        a.output_tangents[1] = dS.release();
        a.output_tangents[2] = r.mH(dV).release();
    });
}

// ---- triangular_solve: X = A^-1 B (left) or B A^-1 (right), A's triangle T(.) only:
//   left:  gB = A^-H gX, gA = T(-gB X^H);   dX = A^-1 (dB - T(dA) X)
//   right: gB = gX A^-H, gA = T(-X^H gB);   dX = (dB - X T(dA)) A^-1
// T keeps the triangle the op reads (without the diagonal when unitriangular).
namespace {
struct TriAttrs {
    bool upper, left, unit;
};
TriAttrs tri_attrs(const ferro_attr_value* a) { return {a[0].v.boolean != 0, a[1].v.boolean != 0, a[2].v.boolean != 0}; }
TensorRef triangle(const Ops& r, Arg x, const TriAttrs& t) {
    return t.upper ? r.triu(x, t.unit ? 1 : 0) : r.tril(x, t.unit ? -1 : 0);
}
}  // namespace

ferro_status triangular_solve_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        const TriAttrs t = tri_attrs(a.attrs);
        const ferro_tensor A = a.inputs[0], X = a.outputs[0];
        TensorRef gB = r.tri_solve(r.mH(A), a.cotangents[0], !t.upper, t.left, t.unit);
        if (a.needs_input_grad[0]) {
            const TensorRef outer = t.left ? r.matmul(gB, r.mH(X)) : r.matmul(r.mH(X), gB);
            a.input_cotangents[0] = r.neg(triangle(r, outer, t)).release();
        }
        if (a.needs_input_grad[1]) a.input_cotangents[1] = gB.release();
    });
}
ferro_status triangular_solve_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        const TriAttrs t = tri_attrs(a.attrs);
        const ferro_tensor A = a.inputs[0], X = a.outputs[0];
        TensorRef rhs = a.input_tangents[1] ? r.borrow(a.input_tangents[1]) : TensorRef();
        if (a.input_tangents[0]) {
            const TensorRef dA = triangle(r, a.input_tangents[0], t);
            const TensorRef term = t.left ? r.matmul(dA, X) : r.matmul(X, dA);
            rhs = rhs ? r.sub(rhs, term) : r.neg(term);
        }
        if (rhs) a.output_tangents[0] = r.tri_solve(A, rhs, t.upper, t.left, t.unit).release();
    });
}

// ---- lu: A = P L U (L m x k unit lower, U k x n upper, P constant). Square: with
// C = L^-1 P^T dA U^-1, dL = L tril(C, -1) and dU = triu(C) U, so
//   gA = P L^-H [tril(L^H gL, -1) + triu(gU U^H)] U^-H.
// Wide (m < n), U = [U1 | U2]: U2 = L^-1 P^T A2. Tall (m > n), L = [L1; L2]: L2 = (P^T A)_2 U^-1.
// lu_factor packs L and U into one matrix: its cotangent splits into tril(., -1) and triu(.).
namespace {

struct LuParts {
    TensorRef P, L, U;
};

// L^-H phi U^-H with phi = tril(L^H gL, -1) + triu(gU U^H), for square L and U.
TensorRef lu_core_vjp(const Ops& r, Arg L, Arg U, Arg gL, Arg gU) {
    TensorRef phi;
    if (gL.get()) phi = r.tril(r.matmul(r.mH(L), gL), -1);
    if (gU.get()) phi = r.plus(std::move(phi), r.triu(r.matmul(gU, r.mH(U))));
    if (!phi) return {};
    const TensorRef left = r.tri_solve(r.mH(L), phi, /*upper=*/true, /*left=*/true, /*unit=*/true);
    return r.tri_solve(r.mH(U), left, /*upper=*/false, /*left=*/false);
}

TensorRef lu_backward(const Ops& r, const LuParts& p, TensorRef gL, TensorRef gU) {
    const int64_t m = r.dim(p.L, 2), n = r.dim(p.U, 1), k = r.dim(p.L, 1);
    if (!gL && !gU) return {};
    TensorRef permuted;  // P^T gA
    if (m == n) {
        permuted = lu_core_vjp(r, p.L, p.U, gL.get(), gU.get());
    } else if (m < n) {
        const TensorRef U1 = r.slice(p.U, -1, 0, k), U2 = r.slice(p.U, -1, k, n);
        TensorRef gU1 = gU ? r.slice(gU, -1, 0, k) : TensorRef();
        TensorRef gA2;
        if (gU) {
            const TensorRef gU2 = r.slice(gU, -1, k, n);
            gA2 = r.tri_solve(r.mH(p.L), gU2, true, true, true);  // L^-H gU2
            gL = r.plus(std::move(gL), r.neg(r.matmul(gA2, r.mH(U2))));
        } else {
            gA2 = r.zeros_shaped(p.U, {m, n - k});
        }
        TensorRef gA1 = lu_core_vjp(r, p.L, U1, gL.get(), gU1.get());
        if (!gA1) gA1 = r.zeros_shaped(p.U, {m, k});
        permuted = r.concat(gA1, gA2, -1);
    } else {
        const TensorRef L1 = r.slice(p.L, -2, 0, k), L2 = r.slice(p.L, -2, k, m);
        TensorRef gL1 = gL ? r.slice(gL, -2, 0, k) : TensorRef();
        TensorRef gA2;
        if (gL) {
            const TensorRef gL2 = r.slice(gL, -2, k, m);
            gA2 = r.tri_solve(r.mH(p.U), gL2, false, false);  // gL2 U^-H
            gU = r.plus(std::move(gU), r.neg(r.matmul(r.mH(L2), gA2)));
        } else {
            gA2 = r.zeros_shaped(p.L, {m - k, n});
        }
        TensorRef gA1 = lu_core_vjp(r, L1, p.U, gL1.get(), gU.get());
        if (!gA1) gA1 = r.zeros_shaped(p.L, {k, n});
        permuted = r.concat(gA1, gA2, -2);
    }
    return r.matmul(p.P, permuted);
}

// (dL, dU) from dA.
std::pair<TensorRef, TensorRef> lu_forward(const Ops& r, const LuParts& p, Arg dA) {
    const int64_t m = r.dim(p.L, 2), n = r.dim(p.U, 1), k = r.dim(p.L, 1);
    const TensorRef pdA = r.matmul(r.mH(p.P), dA);  // P^T dA (P is real)
    auto square = [&](Arg L, Arg U, Arg dA1) {
        const TensorRef C = r.tri_solve(U, r.tri_solve(L, dA1, false, true, true), true, false);  // L^-1 dA1 U^-1
        return std::pair{r.matmul(L, r.tril(C, -1)), r.matmul(r.triu(C), U)};
    };
    if (m == n) return square(p.L, p.U, pdA);
    if (m < n) {
        const TensorRef U2 = r.slice(p.U, -1, k, n);
        auto [dL, dU1] = square(p.L, r.slice(p.U, -1, 0, k), r.slice(pdA, -1, 0, k));
        const TensorRef dU2 = r.tri_solve(p.L, r.sub(r.slice(pdA, -1, k, n), r.matmul(dL, U2)), false, true, true);
        return {std::move(dL), r.concat(dU1, dU2, -1)};
    }
    const TensorRef L2 = r.slice(p.L, -2, k, m);
    auto [dL1, dU] = square(r.slice(p.L, -2, 0, k), p.U, r.slice(pdA, -2, 0, k));
    const TensorRef dL2 = r.tri_solve(p.U, r.sub(r.slice(pdA, -2, k, m), r.matmul(L2, dU)), true, false);
    return {r.concat(dL1, dL2, -2), std::move(dU)};
}

// lu_factor's packed LU from the parts that vary: tril(L, -1) and triu(U), m x n.
TensorRef pack_lu(const Ops& r, Arg strict_l, Arg upper_u, int64_t m, int64_t n) {
    const int64_t k = std::min(m, n);
    if (m == n) return r.add(strict_l, upper_u);
    if (m > n) return r.add(strict_l, r.concat(upper_u, r.zeros_shaped(upper_u, {m - k, n}), -2));
    return r.add(r.concat(strict_l, r.zeros_shaped(strict_l, {m, n - k}), -1), upper_u);
}
// (L part, U part) of a packed m x n matrix: tril(X[:, :k], -1) and triu(X[:k, :]).
std::pair<TensorRef, TensorRef> split_lu(const Ops& r, Arg x) {
    const int64_t m = r.dim(x, 2), n = r.dim(x, 1), k = std::min(m, n);
    return {r.tril(r.slice(x, -1, 0, k), -1), r.triu(r.slice(x, -2, 0, k))};
}

LuParts lu_unpacked(const Ops& r, ferro_tensor LU, ferro_tensor pivots) {
    auto plu = r.call_all("linalg.lu_unpack", {LU, pivots});
    return {std::move(plu[0]), std::move(plu[1]), std::move(plu[2])};
}

}  // namespace

ferro_status lu_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (a.n_outputs == 2) {  // lu_factor: (LU, pivots)
            if (!a.cotangents[0]) return;
            auto [gL, gU] = split_lu(r, a.cotangents[0]);
            a.input_cotangents[0] = lu_backward(r, lu_unpacked(r, a.outputs[0], a.outputs[1]), std::move(gL), std::move(gU)).release();
            return;
        }
        const LuParts p{r.borrow(a.outputs[0]), r.borrow(a.outputs[1]), r.borrow(a.outputs[2])};
        a.input_cotangents[0] = lu_backward(r, p, r.borrow(a.cotangents[1]), r.borrow(a.cotangents[2])).release();
    });
}
ferro_status lu_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        if (a.n_outputs == 2) {
            auto [dL, dU] = lu_forward(r, lu_unpacked(r, a.outputs[0], a.outputs[1]), a.input_tangents[0]);
            const int64_t m = r.dim(a.outputs[0], 2), n = r.dim(a.outputs[0], 1);
            a.output_tangents[0] = pack_lu(r, r.tril(dL, -1), r.triu(dU), m, n).release();
            return;
        }
        const LuParts p{r.borrow(a.outputs[0]), r.borrow(a.outputs[1]), r.borrow(a.outputs[2])};
        auto [dL, dU] = lu_forward(r, p, a.input_tangents[0]);
        a.output_tangents[1] = dL.release();
        a.output_tangents[2] = dU.release();
    });
}

// ---- solve_with_lu: solve's and lu_factor's rules at once, with the forward's (LU, pivots) in
// place of a second factorisation of A: A^-H G is lu_solve(LU, pivots, G, adjoint). LU is a
// differentiable output (as lu_factor's), so where these rules are themselves differentiated (a
// backward with create_graph, a VJP on duals) the derivative through LU reaches A.
TensorRef lu_solve_with(const Ops& r, ferro_tensor LU, ferro_tensor pivots, Arg G, bool adjoint) {
    return r.call("linalg.lu_solve", {LU, pivots, G},
                  {plugin::attr_bool("left", true), plugin::attr_bool("adjoint", adjoint)});
}
ferro_status solve_with_lu_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        const ferro_tensor LU = a.outputs[1], pivots = a.outputs[2];
        auto [gA, gB] = solve_cotangents(r, a, [&](const TensorRef& G, bool adjoint) {
            return lu_solve_with(r, LU, pivots, G, adjoint);
        });
        if (a.needs_input_grad[0] && a.cotangents[1]) {  // LU's part: lu_factor's rule
            auto [gL, gU] = split_lu(r, a.cotangents[1]);
            gA = r.plus(std::move(gA), lu_backward(r, lu_unpacked(r, LU, pivots), std::move(gL), std::move(gU)));
        }
        if (a.needs_input_grad[0] && gA) a.input_cotangents[0] = gA.release();
        if (a.needs_input_grad[1] && gB) a.input_cotangents[1] = gB.release();
    });
}
ferro_status solve_with_lu_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        const ferro_tensor LU = a.outputs[1], pivots = a.outputs[2];
        TensorRef dX = solve_tangent(r, a, [&](const TensorRef& G, bool) { return lu_solve_with(r, LU, pivots, G, false); });
        if (dX) a.output_tangents[0] = dX.release();
        if (!a.input_tangents[0]) return;
        auto [dL, dU] = lu_forward(r, lu_unpacked(r, LU, pivots), a.input_tangents[0]);
        const int64_t n = r.dim(LU, 1);
        a.output_tangents[1] = pack_lu(r, r.tril(dL, -1), r.triu(dU), n, n).release();
    });
}

// ---- lu_unpack: L = tril(LU[:, :k], -1) + I, U = triu(LU[:k, :]); P does not depend on LU.
ferro_status lu_unpack_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        const ferro_signature& s = a.input_sigs[0];
        const int64_t m = s.shape[s.ndim - 2], n = s.shape[s.ndim - 1], k = std::min(m, n);
        if (!a.cotangents[1] && !a.cotangents[2]) return;
        const TensorRef gL = a.cotangents[1] ? r.tril(a.cotangents[1], -1) : r.zeros_shaped(a.cotangents[2], {m, k});
        const TensorRef gU = a.cotangents[2] ? r.triu(a.cotangents[2]) : r.zeros_shaped(a.cotangents[1], {k, n});
        a.input_cotangents[0] = pack_lu(r, gL, gU, m, n).release();
    });
}
ferro_status lu_unpack_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        auto [dL, dU] = split_lu(r, a.input_tangents[0]);
        a.output_tangents[1] = dL.release();
        a.output_tangents[2] = dU.release();
    });
}

// ---- lu_solve: X = op(A)^-1 B (left) or B op(A)^-1 (right), op = identity or ^H, A = P L U.
// The cotangent of A comes from the solve formulas; LU's from A's: with gA,
// gL = tril(P^T gA U^H, -1), gU = triu(L^H P^T gA), gLU = gL + gU (square).
ferro_status lu_solve_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        const bool left = a.attrs[0].v.boolean != 0, adjoint = a.attrs[1].v.boolean != 0;
        const ferro_tensor LU = a.inputs[0], piv = a.inputs[1], X = a.outputs[0];
        TensorRef gB = r.call("linalg.lu_solve", {LU, piv, a.cotangents[0]},
                              {plugin::attr_bool("left", left), plugin::attr_bool("adjoint", !adjoint)});
        if (a.needs_input_grad[0]) {
            const TensorRef g_op = r.neg(left ? r.matmul(gB, r.mH(X)) : r.matmul(r.mH(X), gB));  // of op(A)
            const TensorRef gA = adjoint ? r.mH(g_op) : r.borrow(g_op.get());
            const LuParts p = lu_unpacked(r, LU, piv);
            const TensorRef ptg = r.matmul(r.mH(p.P), gA);
            a.input_cotangents[0] =
                r.add(r.tril(r.matmul(ptg, r.mH(p.U)), -1), r.triu(r.matmul(r.mH(p.L), ptg))).release();
        }
        if (a.needs_input_grad[2]) a.input_cotangents[2] = gB.release();
    });
}
ferro_status lu_solve_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        const bool left = a.attrs[0].v.boolean != 0, adjoint = a.attrs[1].v.boolean != 0;
        const ferro_tensor LU = a.inputs[0], piv = a.inputs[1], X = a.outputs[0];
        TensorRef rhs = a.input_tangents[2] ? r.borrow(a.input_tangents[2]) : TensorRef();
        if (a.input_tangents[0]) {
            const LuParts p = lu_unpacked(r, LU, piv);
            auto [dL, dU] = split_lu(r, a.input_tangents[0]);
            const TensorRef dA = r.matmul(p.P, r.add(r.matmul(dL, p.U), r.matmul(p.L, dU)));
            const TensorRef d_op = adjoint ? r.mH(dA) : r.borrow(dA.get());
            const TensorRef term = left ? r.matmul(d_op, X) : r.matmul(X, d_op);
            rhs = rhs ? r.sub(rhs, term) : r.neg(term);
        }
        if (!rhs) return;
        a.output_tangents[0] = r.call("linalg.lu_solve", {LU, piv, rhs},
                                      {plugin::attr_bool("left", left), plugin::attr_bool("adjoint", adjoint)}).release();
    });
}

// ---- eig: A V = V diag(w), columns of V of norm 1. With E_ij = w_j - w_i (F = 1/E off the
// diagonal) and X = V^-1 dA V:
//   dw = diag(X),  dV = V (F o X) - V Re diag(V^H V (F o X))   (keeps each column's norm);
//   gA = V^-H (diag(gw) + conj(F) o (V^H gV - V^H V Re diag(V^H gV))) V^H   (PyTorch's rule).
// eigvals recomputes V from its input. Real inputs get the real part of gA (the host's cast).
namespace {
struct EigParts {
    TensorRef w, V;
};
EigParts eig_parts(const Ops& r, uint32_t n_outputs, ferro_tensor A, const ferro_tensor* outputs) {
    if (n_outputs == 2) return {r.borrow(outputs[0]), r.borrow(outputs[1])};
    auto wv = r.call_all("linalg.eig", {A});
    return {std::move(wv[0]), std::move(wv[1])};
}
TensorRef re_diag_row(const Ops& r, Arg x) {  // Re diag(x) as a row [..., 1, n], in x's dtype
    return r.unsqueeze(r.cast(r.real_part(r.diagonal(x)), r.signature(x).dtype), -2);
}
}  // namespace

ferro_status eig_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        const ferro_tensor gw = a.cotangents[0];
        const ferro_tensor gV = a.n_outputs == 2 ? a.cotangents[1] : nullptr;
        if (!gw && !gV) return;
        const EigParts p = eig_parts(r, a.n_outputs, a.inputs[0], a.outputs);
        const TensorRef Vh = r.mH(p.V);
        TensorRef inner;
        if (gV) {
            const TensorRef VhgV = r.matmul(Vh, gV);
            if (r.dim(VhgV, 1) > 0) check_gauge(r, r.diagonal(VhgV), "linalg.eig", "eigenvectors");
            const TensorRef projected = r.sub(VhgV, r.matmul(Vh, r.mul(p.V, re_diag_row(r, VhgV))));
            const TensorRef wc = r.conj(p.w);
            const TensorRef F = r.inverse_gap_matrix(r.sub(r.unsqueeze(wc, -2), r.unsqueeze(wc, -1)));
            inner = r.add(r.mul(projected, F), r.diag_embed(gw ? r.borrow(gw) : r.diagonal(projected)));
        } else {
            inner = r.diag_embed(gw);
        }
        a.input_cotangents[0] = r.solve(Vh, r.matmul(inner, Vh)).release();
    });
}
ferro_status eig_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        const EigParts p = eig_parts(r, a.n_outputs, a.inputs[0], a.outputs);
        const TensorRef dA = r.cast(a.input_tangents[0], r.signature(p.V).dtype);
        const TensorRef X = r.solve(p.V, r.matmul(dA, p.V));
        a.output_tangents[0] = r.diagonal(X).release();
        if (a.n_outputs == 1) return;
        const TensorRef F = r.inverse_gap_matrix(r.sub(r.unsqueeze(p.w, -2), r.unsqueeze(p.w, -1)));
        const TensorRef dV = r.matmul(p.V, r.mul(X, F));
        a.output_tangents[1] = r.sub(dV, r.mul(p.V, re_diag_row(r, r.matmul(r.mH(p.V), dV)))).release();
    });
}

// ---- matrix_exp: the Frechet derivative L(X, E) is the upper-right block of
// exp([[X, E], [0, X]]) (Mathias 1996; Higham's "block" method): dexp = L(A, dA), and the
// adjoint gA = L(A^H, gE). Both are matrix_exp calls, so every order differentiates.
namespace {
TensorRef frechet(const Ops& r, Arg X, Arg E) {
    const int64_t n = r.dim(X, 1);
    const TensorRef top = r.concat(X, E, -1);
    const TensorRef bottom = r.concat(r.zeros_shaped(X, {n, n}), X, -1);
    const TensorRef block = r.call("linalg.matrix_exp", {r.concat(top, bottom, -2)});
    return r.slice(r.slice(block, -2, 0, n), -1, n, 2 * n);
}
}  // namespace

ferro_status matrix_exp_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        a.input_cotangents[0] = frechet(r, r.mH(a.inputs[0]), r.cast(a.cotangents[0], a.input_sigs[0].dtype)).release();
    });
}
ferro_status matrix_exp_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        a.output_tangents[0] = frechet(r, a.inputs[0], r.cast(a.input_tangents[0], r.signature(a.inputs[0]).dtype)).release();
    });
}

// ---- pinv (X = A^+, constant rank; Golub and Pereyra 1973):
//   dX = -X dA X + X X^H dA^H (I - A X) + (I - X A) dA^H X^H X,
//   gA = -X^H gX X^H + (I - A X) gX^H X X^H + X^H X gX^H (I - X A).
// The I - P products are formed as B - P B, without identity matrices.
namespace {
TensorRef pinv_backward(const Ops& r, Arg A, Arg X, Arg g) {
    const TensorRef Xh = r.mH(X), gh = r.mH(g);
    TensorRef out = r.neg(r.matmul(Xh, r.matmul(g, Xh)));
    const TensorRef right = r.matmul(gh, r.matmul(X, Xh));  // gX^H X X^H, then (I - A X) on the left
    out = r.add(out, r.sub(right, r.matmul(A, r.matmul(X, right))));
    const TensorRef left = r.matmul(r.matmul(Xh, X), gh);  // X^H X gX^H, then (I - X A) on the right
    return r.add(out, r.sub(left, r.matmul(r.matmul(left, X), A)));
}
TensorRef pinv_forward(const Ops& r, Arg A, Arg X, Arg dA) {
    const TensorRef Xh = r.mH(X), dAh = r.mH(dA);
    TensorRef out = r.neg(r.matmul(X, r.matmul(dA, X)));
    const TensorRef first = r.matmul(r.matmul(X, Xh), dAh);  // X X^H dA^H, then (I - A X) on the right
    out = r.add(out, r.sub(first, r.matmul(r.matmul(first, A), X)));
    const TensorRef second = r.matmul(dAh, r.matmul(Xh, X));  // dA^H X^H X, then (I - X A) on the left
    return r.add(out, r.sub(second, r.matmul(X, r.matmul(A, second))));
}
}  // namespace

ferro_status pinv_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        a.input_cotangents[0] = pinv_backward(r, a.inputs[0], a.outputs[0], a.cotangents[0]).release();
    });
}
ferro_status pinv_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        a.output_tangents[0] = pinv_forward(r, a.inputs[0], a.outputs[0], a.input_tangents[0]).release();
    });
}

// ---- vector_norm, n = ||x||_p over the reduced axes, s = sgn(x) = x / |x| (0 at 0):
//   p = 2: gx = g x / n;  p = 1: g s;  p = +-inf: g s on the elements with |x| = n, shared
//   evenly (PyTorch);  p = 0: no gradient;  other p: g s |x|^(p-1) / n^(p-1) (0 where x = 0).
//   The JVP is Re of the same weights against dx: dn = sum Re(conj(w) dx).
namespace {

struct NormParts {
    TensorRef n, weight;  // n with reduced axes kept (size 1); weight: dn/dx-bar per element (x's dtype)
};

NormParts norm_weight(const Ops& r, ferro_tensor x, ferro_tensor n_out, const ferro_attr_value* attrs) {
    const ferro_signature sx = r.signature(x);
    const double ord = attrs[0].v.f64;
    const std::vector<int64_t> axes = norm_axes(Op::vector_norm, attrs[1], sx.ndim);
    std::vector<int64_t> kept(sx.shape, sx.shape + sx.ndim);
    for (int64_t a : axes) kept[static_cast<size_t>(a)] = 1;
    NormParts p;
    p.n = r.reshape(n_out, kept);
    if (ord == 0) return p;
    const TensorRef s = r.call("core.sign", {x});  // x / |x|, 0 at 0
    if (ord == 1) {
        p.weight = r.borrow(s.get());
        return p;
    }
    const TensorRef mag = r.call("core.abs", {x});
    if (std::isinf(ord)) {
        const TensorRef hit = r.cast(r.call("core.eq", {mag, r.expand(p.n, r.shape(x))}), real_dtype(sx.dtype));
        const TensorRef count = r.sum(hit, axes, true);
        p.weight = r.mul(s, r.cast(r.div(hit, count), sx.dtype));
        return p;
    }
    if (ord == 2) {
        const TensorRef safe = r.where(r.call("core.eq", {p.n, r.scalar(p.n, 0)}), r.scalar(p.n, 1), p.n);
        p.weight = r.div(x, r.cast(safe, sx.dtype));  // 0 / 1 where the norm is 0
        return p;
    }
    // |x|^(p-1) / n^(p-1), 0 where x = 0 (and where n = 0).
    const TensorRef ratio = r.div(mag, r.where(r.call("core.eq", {p.n, r.scalar(p.n, 0)}), r.scalar(p.n, 1), p.n));
    const TensorRef powered = r.call("core.pow", {ratio, r.scalar(ratio, ord - 1)});
    const TensorRef zero = r.call("core.eq", {mag, r.scalar(mag, 0)});
    p.weight = r.mul(s, r.cast(r.where(zero, r.scalar(powered, 0), powered), sx.dtype));
    return p;
}

}  // namespace

ferro_status vector_norm_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        const NormParts p = norm_weight(r, a.inputs[0], a.outputs[0], a.attrs);
        if (!p.weight) return;  // ord 0: no gradient
        const TensorRef g = r.reshape(a.cotangents[0], r.shape(p.n));
        a.input_cotangents[0] = r.mul(p.weight, r.cast(g, a.input_sigs[0].dtype)).release();
    });
}
ferro_status vector_norm_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        const NormParts p = norm_weight(r, a.inputs[0], a.outputs[0], a.attrs);
        const ferro_signature sx = r.signature(a.inputs[0]);
        const std::vector<int64_t> axes = norm_axes(Op::vector_norm, a.attrs[1], sx.ndim);
        const ferro_signature so = r.signature(a.outputs[0]);
        if (!p.weight) {
            a.output_tangents[0] = r.zeros_like(a.outputs[0]).release();
            return;
        }
        const TensorRef dn = r.sum(r.real_part(r.mul(r.conj(p.weight), a.input_tangents[0])), axes, true);
        a.output_tangents[0] = r.reshape(dn, std::span<const int64_t>(so.shape, static_cast<size_t>(so.ndim))).release();
    });
}

// ---- matrix_norm, n = ||A|| over the (row, column) axes. With the axes moved last, gA = g W
// and dn = sum Re(conj(W) o dA) for the weight W: A / n (fro), U Vh (nuc), u1 v1^H (2),
// u_k v_k^H (-2), sgn(A) on the largest (smallest) column (1, -1) or row (inf, -inf) sums,
// shared evenly on ties (PyTorch).
namespace {

struct MatrixNormParts {
    std::vector<int64_t> perm, inverse;  // the matrix axes last, and back
    TensorRef A, n, weight;              // A and W permuted; n as [..., 1, 1]
};

MatrixNormParts matrix_norm_parts(const Ops& r, ferro_tensor A, ferro_tensor n_out, const ferro_attr_value* attrs) {
    const ferro_signature s = r.signature(A);
    const auto [row, col] = matrix_axes(Op::matrix_norm, attrs[1], s.ndim);
    MatrixNormParts p;
    std::vector<int64_t> kept_shape;
    for (int64_t d = 0; d < s.ndim; ++d) {
        if (d != row && d != col) {
            p.perm.push_back(d);
            kept_shape.push_back(s.shape[d]);
        }
    }
    p.perm.push_back(row);
    p.perm.push_back(col);
    p.inverse.resize(p.perm.size());
    for (size_t i = 0; i < p.perm.size(); ++i) p.inverse[static_cast<size_t>(p.perm[i])] = static_cast<int64_t>(i);
    kept_shape.push_back(1);
    kept_shape.push_back(1);
    p.A = r.permute(A, p.perm);
    p.n = r.reshape(n_out, kept_shape);
    const ferro_dtype dtype = s.dtype;
    const int64_t k = std::min(s.shape[row], s.shape[col]);
    switch (matrix_ord(Op::matrix_norm, attrs[0].v.str)) {
        case MatrixOrd::fro: {
            const TensorRef safe = r.where(r.call("core.eq", {p.n, r.scalar(p.n, 0)}), r.scalar(p.n, 1), p.n);
            p.weight = r.div(p.A, r.cast(safe, dtype));
            break;
        }
        case MatrixOrd::nuc: case MatrixOrd::two: case MatrixOrd::minus_two: {
            const auto usv = r.call_all("linalg.svd", {p.A}, {plugin::attr_bool("full_matrices", false)});
            const MatrixOrd o = matrix_ord(Op::matrix_norm, attrs[0].v.str);
            if (o == MatrixOrd::nuc) {
                p.weight = r.matmul(usv[0], usv[2]);
            } else {
                const int64_t i = o == MatrixOrd::two ? 0 : k - 1;
                p.weight = r.matmul(r.slice(usv[0], -1, i, i + 1), r.slice(usv[2], -2, i, i + 1));
            }
            break;
        }
        default: {
            const MatrixOrd o = matrix_ord(Op::matrix_norm, attrs[0].v.str);
            const bool by_column = o == MatrixOrd::one || o == MatrixOrd::minus_one;
            const int64_t across[1] = {by_column ? -2 : -1}, along[1] = {by_column ? -1 : -2};
            const TensorRef sums = r.sum(r.call("core.abs", {p.A}), across, true);
            const TensorRef hit = r.cast(r.call("core.eq", {sums, p.n}), real_dtype(dtype));
            const TensorRef share = r.div(hit, r.sum(hit, along, true));
            p.weight = r.mul(r.call("core.sign", {p.A}), r.cast(share, dtype));
            break;
        }
    }
    return p;
}

}  // namespace

ferro_status matrix_norm_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        const MatrixNormParts p = matrix_norm_parts(r, a.inputs[0], a.outputs[0], a.attrs);
        const TensorRef g = r.cast(r.reshape(a.cotangents[0], r.shape(p.n)), a.input_sigs[0].dtype);
        a.input_cotangents[0] = r.permute(r.mul(g, p.weight), p.inverse).release();
    });
}
ferro_status matrix_norm_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        const MatrixNormParts p = matrix_norm_parts(r, a.inputs[0], a.outputs[0], a.attrs);
        const int64_t last2[2] = {-2, -1};
        const TensorRef dA = r.permute(a.input_tangents[0], p.perm);
        const TensorRef dn = r.sum(r.real_part(r.mul(r.conj(p.weight), dA)), last2, false);
        a.output_tangents[0] = r.reshape(dn, r.shape(a.outputs[0])).release();
    });
}

// ---- cond: with G the weight of d(kappa) (gA = g G, d kappa = sum Re(conj(G) dA)):
//   p = 2: G = u1 v1^H / s_k - s_1 / s_k^2 u_k v_k^H (and -2 the other way round);
//   others: kappa = n1 n2, n1 = ||A||, n2 = ||A^-1||: G = n2 W1 - n1 A^-H W2 A^-H, with W1, W2
//   the matrix_norm weights at A and A^-1.
namespace {

TensorRef cond_weight(const Ops& r, ferro_tensor A, const char* p) {
    const MatrixOrd ord = matrix_ord(Op::cond, p);
    const ferro_dtype dtype = r.signature(A).dtype;
    if (ord == MatrixOrd::two || ord == MatrixOrd::minus_two) {
        const auto usv = r.call_all("linalg.svd", {A}, {plugin::attr_bool("full_matrices", false)});
        const int64_t k = r.dim(usv[1], 1);
        auto pair = [&](int64_t i) { return r.matmul(r.slice(usv[0], -1, i, i + 1), r.slice(usv[2], -2, i, i + 1)); };
        auto value = [&](int64_t i) { return r.unsqueeze(r.cast(r.slice(usv[1], -1, i, i + 1), dtype), -1); };  // [..., 1, 1]
        const int64_t top = ord == MatrixOrd::two ? 0 : k - 1, bottom = ord == MatrixOrd::two ? k - 1 : 0;
        // kappa = s_top / s_bottom
        const TensorRef st = value(top), sb = value(bottom);
        return r.sub(r.div(pair(top), sb), r.mul(r.div(st, r.mul(sb, sb)), pair(bottom)));
    }
    ferro_attr_value attrs[3] = {};
    attrs[0].type = FERRO_ATTR_STR;
    attrs[0].v.str = p;
    attrs[1].type = FERRO_ATTR_NONE;
    attrs[2].type = FERRO_ATTR_BOOL;
    const TensorRef inv = r.inv(A);
    const TensorRef n1 = r.call("linalg.matrix_norm", {A}, {plugin::attr_str("ord", p)});
    const TensorRef n2 = r.call("linalg.matrix_norm", {inv}, {plugin::attr_str("ord", p)});
    const MatrixNormParts w1 = matrix_norm_parts(r, A, n1.get(), attrs);
    const MatrixNormParts w2 = matrix_norm_parts(r, inv.get(), n2.get(), attrs);
    const TensorRef invh = r.mH(inv);
    const TensorRef a_part = r.mul(r.cast(r.unsqueeze(r.unsqueeze(n2, -1), -1), dtype), w1.weight);
    const TensorRef inv_part = r.mul(r.cast(r.unsqueeze(r.unsqueeze(n1, -1), -1), dtype), r.matmul(invh, r.matmul(w2.weight, invh)));
    return r.sub(a_part, inv_part);
}

}  // namespace

ferro_status cond_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        const TensorRef G = cond_weight(r, a.inputs[0], a.attrs[0].v.str);
        const TensorRef g = r.cast(r.unsqueeze(r.unsqueeze(a.cotangents[0], -1), -1), a.input_sigs[0].dtype);
        a.input_cotangents[0] = r.mul(g, G).release();
    });
}
ferro_status cond_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        const TensorRef G = cond_weight(r, a.inputs[0], a.attrs[0].v.str);
        const int64_t last2[2] = {-2, -1};
        a.output_tangents[0] = r.sum(r.real_part(r.mul(r.conj(G), a.input_tangents[0])), last2, false).release();
    });
}

// ---- lstsq: X = P B with P = A^+ (constant rank), residuals r_j = ||A x_j - b_j||^2 with
// R = A X - B (A^H R = 0 at the solution), singular values as svdvals:
//   gA = pinv_backward(gX B^H) + 2 (R diag(g_r)) X^H + U diag(g_s) Vh,  gB = P^H gX - 2 R diag(g_r);
//   dX = dP B + P dB,  dr = 2 Re sum_i conj(R) o (dA X - dB),  ds = Re diag(U^H dA V).
namespace {
struct LstsqParts {
    TensorRef P, R;  // A^+, and A X - B (only with residuals)
};
LstsqParts lstsq_parts(const Ops& r, ferro_tensor A, ferro_tensor B, ferro_tensor X, bool residuals, const ferro_attr_value* attrs) {
    LstsqParts p;
    std::vector<ferro_named_attr> tol;
    if (attrs[0].type == FERRO_ATTR_F64) tol.push_back(plugin::attr_f64("rtol", attrs[0].v.f64));
    p.P = r.call("linalg.pinv", std::span<const ferro_tensor>(&A, 1), tol);
    if (residuals) p.R = r.sub(r.matmul(A, X), B);
    return p;
}
bool has_residuals(const Ops& r, ferro_tensor residuals) {  // else the output is empty, [0]
    const ferro_signature s = r.signature(residuals);
    return !(s.ndim == 1 && s.shape[0] == 0);
}
}  // namespace

ferro_status lstsq_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        const ferro_tensor A = a.inputs[0], B = a.inputs[1], X = a.outputs[0];
        const ferro_tensor gX = a.cotangents[0], gr = a.cotangents[1], gs = a.cotangents[3];
        const bool residuals = gr != nullptr && has_residuals(r, gr);
        if (!gX && !residuals && !gs) return;
        const LstsqParts p = lstsq_parts(r, A, B, X, residuals, a.attrs);
        const ferro_dtype dtype = a.input_sigs[0].dtype;
        TensorRef gA, gB;
        if (gX) {
            gA = pinv_backward(r, A, p.P, r.matmul(gX, r.mH(B)));
            gB = r.matmul(r.mH(p.P), gX);
        }
        if (residuals) {
            const TensorRef Rg = r.mul(p.R, r.cast(r.unsqueeze(gr, -2), dtype));  // R diag(g_r)
            gA = r.plus(std::move(gA), r.scale(r.matmul(Rg, r.mH(X)), 2));
            gB = r.plus(std::move(gB), r.scale(Rg, -2));
        }
        if (gs) {
            const auto usv = r.call_all("linalg.svd", {A}, {plugin::attr_bool("full_matrices", false)});
            gA = r.plus(std::move(gA), r.matmul(r.mul(usv[0], r.cast(r.unsqueeze(gs, -2), dtype)), usv[2]));
        }
        if (a.needs_input_grad[0] && gA) a.input_cotangents[0] = gA.release();
        if (a.needs_input_grad[1] && gB) a.input_cotangents[1] = gB.release();
    });
}
ferro_status lstsq_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        const ferro_tensor A = a.inputs[0], B = a.inputs[1], X = a.outputs[0];
        const ferro_tensor dA = a.input_tangents[0], dB = a.input_tangents[1];
        if (!dA && !dB) return;
        const bool residuals = has_residuals(r, a.outputs[1]);
        const LstsqParts p = lstsq_parts(r, A, B, X, residuals, a.attrs);
        TensorRef dX;
        if (dA) dX = r.matmul(pinv_forward(r, A, p.P, dA), B);
        if (dB) dX = r.plus(std::move(dX), r.matmul(p.P, dB));
        a.output_tangents[0] = dX.release();
        if (residuals) {
            TensorRef change = dA ? r.matmul(dA, X) : TensorRef();
            if (dB) change = change ? r.sub(change, dB) : r.neg(dB);
            const int64_t rows[1] = {-2};
            a.output_tangents[1] = r.scale(r.sum(r.real_part(r.mul(r.conj(p.R), change)), rows, false), 2).release();
        }
        if (dA) {
            const auto usv = r.call_all("linalg.svd", {A}, {plugin::attr_bool("full_matrices", false)});
            a.output_tangents[3] = r.real_part(r.diagonal(r.matmul(r.mH(usv[0]), r.matmul(dA, r.mH(usv[2]))))).release();
        }
    });
}

// ---- inverse_gaps: F = f(D), D_ij = y_j - y_i, y = x (or x^2), f(d) = 1/d or d / (d^2 + eps).
//   f'(d) = -F^2 (eps = 0) or (eps - d^2) / (d^2 + eps)^2, taken as 0 on the diagonal (F_ii = 0
//   whatever y is); gy = colsum(gF o f') - rowsum(gF o f'), gx = 2 x gy with squares;
//   dF = f' o (dy_j - dy_i).
namespace {

struct GapParts {
    TensorRef slope;  // f'(D), 0 on the diagonal
    bool squares = false;
};

GapParts gap_slope(const Ops& r, Arg x, Arg F, const ferro_attr_value* attrs) {
    const double eps = attrs[0].v.f64;
    const bool squares = attrs[1].v.boolean != 0;
    if (eps == 0) return {r.neg(r.mul(F, F)), squares};
    const TensorRef y = squares ? r.mul(x, x) : r.borrow(x.get());
    const TensorRef D = r.sub(r.unsqueeze(y, -2), r.unsqueeze(y, -1));
    const TensorRef D2 = r.mul(D, D);
    const TensorRef den = r.add(D2, r.scalar(D2, eps));
    const int64_t n = r.dim(x, 1);
    const TensorRef off_diagonal = r.constant_matrix(x, n, [](int64_t i, int64_t j) { return i == j ? 0.0 : 1.0; });
    return {r.mul(r.div(r.sub(r.scalar(D2, eps), D2), r.mul(den, den)), off_diagonal), squares};
}

}  // namespace

ferro_status inverse_gaps_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        const ferro_tensor x = a.inputs[0];
        const GapParts p = gap_slope(r, x, a.outputs[0], a.attrs);
        const TensorRef gD = r.mul(a.cotangents[0], p.slope);
        const int64_t rows[1] = {-2}, cols[1] = {-1};
        TensorRef gx = r.sub(r.sum(gD, rows, false), r.sum(gD, cols, false));  // gy
        if (p.squares) gx = r.mul(gx, r.scale(x, 2));
        a.input_cotangents[0] = gx.release();
    });
}

ferro_status inverse_gaps_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        const ferro_tensor dx = a.input_tangents[0];
        if (!dx) return;
        const ferro_tensor x = a.inputs[0];
        const GapParts p = gap_slope(r, x, a.outputs[0], a.attrs);
        const TensorRef dy = p.squares ? r.mul(dx, r.scale(x, 2)) : r.borrow(dx);
        a.output_tangents[0] = r.mul(p.slope, r.sub(r.unsqueeze(dy, -2), r.unsqueeze(dy, -1))).release();
    });
}

}  // namespace ferro::linalg
