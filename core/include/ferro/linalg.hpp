// ferro::linalg — typed calls into the linalg family (libferro_linalg.so, loaded from the
// plugin search path), with numpy.linalg / torch.linalg semantics: batch dimensions lead,
// the matrix is the last two. Each function is one op call, through a handle cached per call site
// where its attributes are fixed; docs/linalg.md lists the attributes and what each op does with
// them. Included by ferro/ferro.hpp.
#pragma once

#include <ferro/ferro.hpp>

#include <optional>
#include <string>
#include <vector>

namespace ferro::linalg {

struct SlogDet {
    Tensor sign, logabsdet;
};
struct QR {
    Tensor Q, R;
};
struct Eigh {
    Tensor eigenvalues, eigenvectors;
};
struct SVD {
    Tensor U, S, Vh;
};
struct LUFactor {
    Tensor LU, pivots;  // pivots: i64, 1-based (LAPACK's and torch.linalg.lu_factor's convention)
};
struct PLU {
    Tensor P, L, U;
};
struct Lstsq {
    Tensor solution, residuals, rank, singular_values;
};

struct SolveWithLU {
    Tensor X, LU, pivots;  // LU and pivots as lu_factor(A) returns them
};

// X with A X = B, and the LU factorisation of A it made (for more solves with lu_solve).
inline SolveWithLU solve_with_lu(const Tensor& A, const Tensor& B) {
    auto [X, LU, pivots] = detail::call_n<"linalg.solve_with_lu", 3>(A, {A.get(), B.get()});
    return {std::move(X), std::move(LU), std::move(pivots)};
}

// X with A X = B. b is a vector (or a batch of them) when 1-D or shaped like A without its last
// dimension (PyTorch's rule); otherwise B is [..., n, k]. When the call is recorded for a
// gradient, it runs as solve_with_lu, whose backward solves with the forward's LU instead of
// factoring A^H again.
inline Tensor solve(const Tensor& A, const Tensor& B) {
    if (ferro_grad_enabled() && (A.requires_grad() || B.requires_grad())) return solve_with_lu(A, B).X;
    return detail::call1<"linalg.solve">(A, {A.get(), B.get()});
}
inline Tensor inv(const Tensor& A) { return detail::call1<"linalg.inv">(A, {A.get()}); }
inline Tensor det(const Tensor& A) { return detail::call1<"linalg.det">(A, {A.get()}); }
inline SlogDet slogdet(const Tensor& A) {
    auto [sign, logabsdet] = detail::call_n<"linalg.slogdet", 2>(A, {A.get()});
    return {std::move(sign), std::move(logabsdet)};
}
// Lower L with A = L L^H; upper: U with A = U^H U.
inline Tensor cholesky(const Tensor& A, bool upper = false) {
    return detail::call1<"linalg.cholesky">(A, {A.get()}, {detail::attr_bool("upper", upper)});
}
// mode: "reduced" (Q m x k, R k x n), "complete" (Q m x m, R m x n).
inline QR qr(const Tensor& A, const std::string& mode = "reduced") {
    auto [Q, R] = detail::call_n<"linalg.qr", 2>(A, {A.get()}, {detail::attr_str("mode", mode)});
    return {std::move(Q), std::move(R)};
}
// R of the reduced QR only (mode "r").
inline Tensor qr_r(const Tensor& A) { return detail::call1<"linalg.qr">(A, {A.get()}, {detail::attr_str("mode", "r")}); }
inline Eigh eigh(const Tensor& A, const std::string& uplo = "L", double eps = 0.0) {
    auto [w, V] = detail::call_n<"linalg.eigh", 2>(A, {A.get()}, {detail::attr_str("uplo", uplo), detail::attr_f64("eps", eps)});
    return {std::move(w), std::move(V)};
}
// General square A: complex eigenvalues and right eigenvectors (each of norm 1).
struct Eig {
    Tensor eigenvalues, eigenvectors;
};
inline Eig eig(const Tensor& A) {
    auto [w, V] = detail::call_n<"linalg.eig", 2>(A, {A.get()});
    return {std::move(w), std::move(V)};
}
inline Tensor eigvals(const Tensor& A) { return detail::call1<"linalg.eigvals">(A, {A.get()}); }
inline Tensor eigvalsh(const Tensor& A, const std::string& uplo = "L") {
    return detail::call1<"linalg.eigvalsh">(A, {A.get()}, {detail::attr_str("uplo", uplo)});
}
inline SVD svd(const Tensor& A, bool full_matrices = true, double eps = 0.0) {
    auto [U, S, Vh] = detail::call_n<"linalg.svd", 3>(
        A, {A.get()}, {detail::attr_bool("full_matrices", full_matrices), detail::attr_f64("eps", eps)});
    return {std::move(U), std::move(S), std::move(Vh)};
}
inline Tensor svdvals(const Tensor& A) { return detail::call1<"linalg.svdvals">(A, {A.get()}); }
inline Tensor matrix_exp(const Tensor& A) { return detail::call1<"linalg.matrix_exp">(A, {A.get()}); }

// Pseudo-inverse and rank: singular values <= max(atol, rtol * largest) count as zero. Omitted
// tolerances follow PyTorch (rtol = eps * max(m, n) unless atol > 0).
struct Tolerance {
    std::optional<double> atol, rtol;
    bool hermitian = false;
};
inline Attrs tolerance_attrs(const Tolerance& t) {
    Attrs a{Attr("hermitian", t.hermitian)};
    if (t.atol) a.emplace_back("atol", *t.atol);
    if (t.rtol) a.emplace_back("rtol", *t.rtol);
    return a;
}
inline Tensor pinv(const Tensor& A, const Tolerance& t = {}) {
    return call_one(A.runtime_ref(), "linalg.pinv", {A}, tolerance_attrs(t));
}
// ||x||_ord over `axes` (empty: all). ord: any real, +-infinity, or 0 (count of non-zeros).
inline Tensor vector_norm(const Tensor& x, double ord = 2, std::vector<int64_t> axes = {}, bool keepdim = false) {
    Attrs a{Attr("ord", ord), Attr("keepdim", keepdim)};
    if (!axes.empty()) a.emplace_back("axes", std::move(axes));
    return call_one(x.runtime_ref(), "linalg.vector_norm", {x}, a);
}
// ord: "fro", "nuc", "inf", "-inf", "1", "-1", "2", "-2"; axes: the (row, column) axes.
inline Tensor matrix_norm(const Tensor& A, const std::string& ord = "fro", std::vector<int64_t> axes = {}, bool keepdim = false) {
    Attrs a{Attr("ord", ord), Attr("keepdim", keepdim)};
    if (!axes.empty()) a.emplace_back("axes", std::move(axes));
    return call_one(A.runtime_ref(), "linalg.matrix_norm", {A}, a);
}
// The condition number in the p norm (names as matrix_norm; "2": largest / smallest singular value).
inline Tensor cond(const Tensor& A, const std::string& p = "2") {
    return detail::call1<"linalg.cond">(A, {A.get()}, {detail::attr_str("p", p)});
}
// F[..., i, j] = 1/(y_j - y_i) with y = x (or x^2 with squares), d/(d^2 + eps) when eps > 0,
// and 0 on the diagonal, for real x [..., n]: the spectral factor of eigh and svd derivatives.
inline Tensor inverse_gaps(const Tensor& x, double eps = 0, bool squares = false) {
    return detail::call1<"linalg.inverse_gaps">(x, {x.get()},
                                                {detail::attr_f64("eps", eps), detail::attr_bool("squares", squares)});
}
// Least squares: the minimum-norm X minimising ||A X - B|| (through ?gelsd). residuals has
// shape [..., k] when m > n (and driver is not "gelsy"), else [0].
inline Lstsq lstsq(const Tensor& A, const Tensor& B, std::optional<double> rcond = std::nullopt,
                   const std::string& driver = "gelsd") {
    Attrs a{Attr("driver", driver)};
    if (rcond) a.emplace_back("rcond", *rcond);
    auto out = call_all(A.runtime_ref(), "linalg.lstsq", {A, B}, a);
    return {std::move(out[0]), std::move(out[1]), std::move(out[2]), std::move(out[3])};
}
inline Tensor matrix_rank(const Tensor& A, const Tolerance& t = {}) {
    return call_one(A.runtime_ref(), "linalg.matrix_rank", {A}, tolerance_attrs(t));
}

// X with A X = B (left) or X A = B for triangular A; only the `upper` or lower triangle is read.
inline Tensor triangular_solve(const Tensor& A, const Tensor& B, bool upper, bool left = true, bool unitriangular = false) {
    return detail::call1<"linalg.triangular_solve">(
        A, {A.get(), B.get()},
        {detail::attr_bool("upper", upper), detail::attr_bool("left", left), detail::attr_bool("unitriangular", unitriangular)});
}
// A = P L U with partial pivoting; A may be rectangular.
inline LUFactor lu_factor(const Tensor& A) {
    auto [LU, pivots] = detail::call_n<"linalg.lu_factor", 2>(A, {A.get()});
    return {std::move(LU), std::move(pivots)};
}
inline PLU lu(const Tensor& A) {
    auto [P, L, U] = detail::call_n<"linalg.lu", 3>(A, {A.get()});
    return {std::move(P), std::move(L), std::move(U)};
}
inline PLU lu_unpack(const Tensor& LU, const Tensor& pivots) {
    auto [P, L, U] = detail::call_n<"linalg.lu_unpack", 3>(LU, {LU.get(), pivots.get()});
    return {std::move(P), std::move(L), std::move(U)};
}
// X with op(A) X = B (left) or X op(A) = B, op(A) = A or A^H (adjoint), from lu_factor(A).
inline Tensor lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left = true, bool adjoint = false) {
    return detail::call1<"linalg.lu_solve">(LU, {LU.get(), pivots.get(), B.get()},
                                            {detail::attr_bool("left", left), detail::attr_bool("adjoint", adjoint)});
}

}  // namespace ferro::linalg
