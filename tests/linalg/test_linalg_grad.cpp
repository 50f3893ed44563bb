// linalg derivatives: gradcheck (VJP and JVP against central differences) of every
// differentiable output in f64 and c128, through gauge-invariant losses where the output has
// a gauge (the phase of complex singular and eigen vectors), and second derivatives through
// the rules themselves.
#include "linalg_test.hpp"

#include <ferro/gradcheck.hpp>

using namespace ferro;
using namespace ferro::test;
using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

namespace {

const DType grad_dtypes[] = {DType::f64, DType::c128};

void check_grad(const std::string& what, const Fn& f, const std::vector<Tensor>& inputs, GradcheckOptions o = {}) {
    INFO(what);
    const GradcheckResult r = gradcheck(f, inputs, o);
    INFO(r.report);
    CHECK(r.ok);
}

// |X| elementwise: invariant under the phase of each column/row (the gauge of eigenvectors
// and singular vectors).
Tensor abs_of(const Tensor& x) { return x.abs(); }

}  // namespace

TEST_CASE("linalg grad: solve, inv, det, slogdet", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : grad_dtypes) {
        const std::string d = name_of(dt);
        const Tensor A = well_conditioned(rt, {2, 4, 4}, dt, 21);
        const Tensor B = random_matrix(rt, {4, 3}, dt, 22);
        const Tensor b = random_matrix(rt, {4}, dt, 23);
        // linalg::solve runs as solve_with_lu when recorded; the solve op itself is called by name.
        check_grad("solve " + d, [](const std::vector<Tensor>& x) { return std::vector{linalg::solve(x[0], x[1])}; }, {A, B});
        check_grad("solve vector " + d, [](const std::vector<Tensor>& x) { return std::vector{linalg::solve(x[0], x[1])}; },
                   {A, b});
        // A broadcast against B's batch: X, LU and pivots have B's batch, A's cotangent sums over it.
        const Tensor Bs = random_matrix(rt, {3, 4, 2}, dt, 24);
        check_grad("solve_with_lu with A broadcast " + d,
                   [](const std::vector<Tensor>& x) {
                       auto [X, LU, pivots] = linalg::solve_with_lu(x[0], x[1]);
                       return std::vector{X, LU};
                   },
                   {A.slice(0, 0, 1).squeeze(), Bs});
        for (const Tensor& rhs : {B, b}) {
            check_grad("the solve op " + d,
                       [](const std::vector<Tensor>& x) {
                           return std::vector{call_one(x[0].runtime_ref(), "linalg.solve", {x[0], x[1]})};
                       },
                       {A, rhs});
            check_grad("solve_with_lu " + d,
                       [](const std::vector<Tensor>& x) {
                           auto [X, LU, pivots] = linalg::solve_with_lu(x[0], x[1]);
                           return std::vector{X, LU};
                       },
                       {A, rhs});
        }
        check_grad("inv " + d, [](const std::vector<Tensor>& x) { return std::vector{linalg::inv(x[0])}; }, {A});
        check_grad("det " + d, [](const std::vector<Tensor>& x) { return std::vector{linalg::det(x[0])}; }, {A});
        check_grad("slogdet " + d,
                   [](const std::vector<Tensor>& x) {
                       auto [s, l] = linalg::slogdet(x[0]);
                       return std::vector{s, l};
                   },
                   {A});
    }
}

TEST_CASE("linalg grad: det of singular matrices (rank n - 1 and n - 2) through the adjugate", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : grad_dtypes) {
        // Rank 2 of 3: the third row is the sum of the first two.
        const Tensor r2 = rt.tensor<double>({1, 2, 0.5, -1, 0.3, 2, 0, 2.3, 2.5}, {3, 3}).to(dt);
        const Tensor r1 = rt.tensor<double>({1, 2, 3, 2, 4, 6, -1, -2, -3}, {3, 3}).to(dt);
        for (const Tensor& A : {r2, r1}) {
            check_grad("det singular " + name_of(dt), [](const std::vector<Tensor>& x) { return std::vector{linalg::det(x[0])}; },
                       {A});
        }
    }
}

TEST_CASE("linalg grad: cholesky lower and upper", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : grad_dtypes) {
        const Tensor X = random_matrix(rt, {2, 4, 4}, dt, 24);
        for (bool upper : {false, true}) {
            // The op reads one triangle of a Hermitian matrix: differentiate through X -> X X^H + 4 I.
            check_grad("cholesky " + name_of(dt) + (upper ? " upper" : " lower"),
                       [&rt, dt, upper](const std::vector<Tensor>& x) {
                           return std::vector{linalg::cholesky(matmul(x[0], mH(x[0])) + rt.eye(4, dt) * 4.0, upper)};
                       },
                       {X});
        }
    }
}

TEST_CASE("linalg grad: qr of tall, square and wide matrices, every mode", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : grad_dtypes) {
        for (const Shape& s : {Shape{5, 3}, Shape{2, 4, 4}, Shape{3, 5}}) {
            const Tensor A = random_matrix(rt, s, dt, 25);
            const std::string what = "qr " + name_of(dt) + " " + std::to_string(s[s.size() - 2]) + "x" + std::to_string(s.back());
            // Q and R are unique for LAPACK's convention (real diagonal of R): no gauge.
            check_grad(what,
                       [](const std::vector<Tensor>& x) {
                           auto [q, r] = linalg::qr(x[0]);
                           return std::vector{q, r};
                       },
                       {A});
            check_grad(what + " mode r", [](const std::vector<Tensor>& x) { return std::vector{linalg::qr_r(x[0])}; }, {A});
            if (s[s.size() - 2] <= s.back()) {
                check_grad(what + " complete",
                           [](const std::vector<Tensor>& x) {
                               auto [q, r] = linalg::qr(x[0], "complete");
                               return std::vector{q, r};
                           },
                           {A});
            }
        }
    }
}

TEST_CASE("linalg grad: eigh and eigvalsh through Hermitian inputs, gauge-invariant losses", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : grad_dtypes) {
        const Tensor X = random_matrix(rt, {2, 4, 4}, dt, 26);
        auto herm = [](const Tensor& x) { return x + mH(x); };
        check_grad("eigvalsh " + name_of(dt),
                   [&](const std::vector<Tensor>& x) { return std::vector{linalg::eigvalsh(herm(x[0]))}; }, {X});
        check_grad("eigh " + name_of(dt),
                   [&](const std::vector<Tensor>& x) {
                       auto [w, v] = linalg::eigh(herm(x[0]));
                       return std::vector{w, abs_of(v)};
                   },
                   {X});
        // V diag(w) V^H-like products are gauge invariant too: V V^H weighted.
        check_grad("eigh projector " + name_of(dt),
                   [&](const std::vector<Tensor>& x) {
                       auto [w, v] = linalg::eigh(herm(x[0]), "U");
                       return std::vector{matmul(v * v.abs(), mH(v))};
                   },
                   {X});
    }
}

TEST_CASE("linalg grad: svd and svdvals for tall, square and wide matrices", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : grad_dtypes) {
        for (const Shape& s : {Shape{5, 3}, Shape{2, 4, 4}, Shape{3, 5}}) {
            const Tensor A = random_matrix(rt, s, dt, 27);
            const std::string what =
                "svd " + name_of(dt) + " " + std::to_string(s[s.size() - 2]) + "x" + std::to_string(s.back());
            check_grad(what + " svdvals", [](const std::vector<Tensor>& x) { return std::vector{linalg::svdvals(x[0])}; }, {A});
            check_grad(what + " thin",
                       [](const std::vector<Tensor>& x) {
                           auto [u, sv, vh] = linalg::svd(x[0], false);
                           return std::vector{abs_of(u), sv, abs_of(vh), matmul(u, vh)};
                       },
                       {A});
            check_grad(what + " full",
                       [](const std::vector<Tensor>& x) {
                           auto [u, sv, vh] = linalg::svd(x[0], true);
                           const int64_t k = sv.shape().back();
                           return std::vector{abs_of(u.slice(-1, 0, k)), sv, abs_of(vh.slice(-2, 0, k))};
                       },
                       {A});
            // The full bases stay unitary to first order in forward mode.
            const Tensor dA = random_matrix(rt, s, dt, 90);
            const auto [ys, ts] = jvp(
                [](const std::vector<Tensor>& x) {
                    auto [u, sv, vh] = linalg::svd(x[0], true);
                    return std::vector{u, vh};
                },
                {A}, {dA});
            for (int i = 0; i < 2; ++i) {
                const Tensor q = ys[static_cast<size_t>(i)], dq = ts[static_cast<size_t>(i)];
                CHECK_NEAR_T(matmul(mH(q), dq) + matmul(mH(dq), q), rt.zeros(q.shape(), dt).slice(-2, 0, q.shape().back()),
                             1e-10);
            }
        }
    }
}

// Reverse over reverse: with G(A) the gradient of a real loss (create_graph), the gradient w of
// Re<V2, G(A)> must satisfy Re<w, V1> = d/dh Re<V2, G(A + h V1)> at h = 0 (central differences),
// along two random directions.
void check_second_order(const Runtime& rt, const std::string& what, const std::function<Tensor(const Tensor&)>& loss,
                        const Tensor& A, double tolerance = 1e-5) {
    INFO(what);
    const DType dt = A.dtype();
    const Tensor V1 = random_matrix(rt, A.shape(), dt, 91), V2 = random_matrix(rt, A.shape(), dt, 92);
    ferro::test::check_second_order(loss, A, V1, V2, tolerance);
}

TEST_CASE("linalg grad: second derivatives through the rules (sum(svdvals), logabsdet, det, eigvalsh, solve)", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : grad_dtypes) {
        const std::string d = " " + name_of(dt);
        const Tensor A = random_matrix(rt, {4, 3}, dt, 28);
        check_second_order(
            rt, "sum(svdvals)" + d, [](const Tensor& x) { return linalg::svdvals(x).sum(); }, A);
        const Tensor S = well_conditioned(rt, {3, 3}, dt, 30);
        check_second_order(
            rt, "logabsdet" + d, [](const Tensor& x) { return linalg::slogdet(x).logabsdet; }, S);
        check_second_order(
            rt, "|det|^2" + d, [](const Tensor& x) { return (linalg::det(x) * linalg::det(x).conj()).real(); }, S);
        check_second_order(
            rt, "eigvalsh" + d,
            [](const Tensor& x) {
                const Tensor w = linalg::eigvalsh(x + mH(x));
                return (w * w * w).sum();
            },
            S);
        const Tensor b = random_matrix(rt, {3, 2}, dt, 31);
        check_second_order(
            rt, "|solve|^2" + d,
            [&b](const Tensor& x) {
                const Tensor y = linalg::solve(x, b);
                return (y * y.conj()).real().sum();
            },
            S);
        check_second_order(
            rt, "|the solve op|^2" + d,
            [&b](const Tensor& x) {
                const Tensor y = call_one(x.runtime_ref(), "linalg.solve", {x, b});
                return (y * y.conj()).real().sum();
            },
            S);
        check_second_order(
            rt, "|X|^2 + |LU|^2 of solve_with_lu" + d,
            [&b](const Tensor& x) {
                auto [y, lu, pivots] = linalg::solve_with_lu(x, b);
                return (y * y.conj()).real().sum() + (lu * lu.conj()).real().sum();
            },
            S);
        check_second_order(
            rt, "cholesky" + d,
            [&rt, dt](const Tensor& x) {
                const Tensor l = linalg::cholesky(matmul(x, mH(x)) + rt.eye(3, dt) * 3.0);
                return (l * l.conj()).real().sum() + l.diagonal(0, -2, -1).real().sum();
            },
            S);
        check_second_order(
            rt, "qr" + d,
            [](const Tensor& x) {
                auto [q, r] = linalg::qr(x);
                return (r.diagonal(0, -2, -1).real()).sum() + (q.abs() * q.abs()).slice(-1, 0, 1).sum();
            },
            A);
    }
}

TEST_CASE("linalg grad: inverse_gaps, exact and regularised, of x and of x^2, to second order", "[linalg]") {
    const Runtime rt = linalg_runtime();
    const Tensor x = rt.tensor<double>({0.3, -1.2, 2.0, 0.9, 1.7, -0.4, 0.1, 2.6}, {2, 4});
    for (double eps : {0.0, 0.3}) {
        for (bool squares : {false, true}) {
            const std::string what = "inverse_gaps eps " + std::to_string(eps) + (squares ? " squares" : "");
            check_grad(
                what,
                [eps, squares](const std::vector<Tensor>& v) { return std::vector{linalg::inverse_gaps(v[0], eps, squares)}; },
                {x});
            const Tensor W = random_matrix(rt, {4, 4}, DType::f64, 161);
            check_second_order(
                rt, what, [eps, squares, W](const Tensor& v) { return (linalg::inverse_gaps(v, eps, squares) * W).sum(); }, x);
        }
    }
}

TEST_CASE("linalg grad: second derivatives through the eigenvectors and singular vectors", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : grad_dtypes) {
        const std::string d = " " + name_of(dt);
        const Tensor A = random_matrix(rt, {4, 3}, dt, 162), S = random_matrix(rt, {3, 3}, dt, 163);
        const Tensor W = random_matrix(rt, {4, 3}, DType::f64, 164);
        // |U|, |Vh| and S: invariant under the phase of each singular pair.
        check_second_order(
            rt, "svd" + d,
            [W](const Tensor& x) {
                auto [u, s, vh] = linalg::svd(x, false);
                return (u.abs() * W).sum() + (s * s).sum() + (vh.abs() * W.slice(0, 0, 3)).sum();
            },
            A);
        check_second_order(
            rt, "eigh" + d,
            [W](const Tensor& x) {
                auto [w, v] = linalg::eigh(x + mH(x));
                return (v.abs() * W.slice(0, 0, 3)).sum() + (w * w).sum();
            },
            S);
    }
}

TEST_CASE("linalg grad: triangular_solve in every orientation", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : grad_dtypes) {
        const Tensor A = random_matrix(rt, {4, 4}, dt, 70) + rt.eye(4, dt) * 4.0;
        const Tensor B = random_matrix(rt, {2, 4, 3}, dt, 71), Br = random_matrix(rt, {3, 4}, dt, 72);
        for (bool upper : {false, true})
            for (bool unit : {false, true}) {
                const std::string what =
                    "triangular_solve " + name_of(dt) + (upper ? " upper" : " lower") + (unit ? " unit" : "");
                check_grad(what + " left",
                           [=](const std::vector<Tensor>& x) {
                               return std::vector{linalg::triangular_solve(x[0], x[1], upper, true, unit)};
                           },
                           {A, B});
                check_grad(what + " right",
                           [=](const std::vector<Tensor>& x) {
                               return std::vector{linalg::triangular_solve(x[0], x[1], upper, false, unit)};
                           },
                           {A, Br});
            }
    }
}

TEST_CASE("linalg grad: lu, lu_factor, lu_unpack and lu_solve for square, tall and wide matrices", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : grad_dtypes) {
        for (const Shape& s : {Shape{2, 4, 4}, Shape{5, 3}, Shape{2, 3, 5}}) {
            const Tensor A = random_matrix(rt, s, dt, 73);
            const std::string what = name_of(dt) + " " + std::to_string(s[s.size() - 2]) + "x" + std::to_string(s.back());
            check_grad("lu " + what,
                       [](const std::vector<Tensor>& x) {
                           auto [p, l, u] = linalg::lu(x[0]);
                           return std::vector{l, u};
                       },
                       {A});
            check_grad("lu_factor " + what, [](const std::vector<Tensor>& x) { return std::vector{linalg::lu_factor(x[0]).LU}; },
                       {A});
            const Tensor piv = linalg::lu_factor(A).pivots;
            check_grad("lu_unpack " + what,
                       [piv](const std::vector<Tensor>& x) {
                           auto [p, l, u] = linalg::lu_unpack(x[0], piv);
                           return std::vector{l, u};
                       },
                       {A});
        }
        const Tensor A = random_matrix(rt, {2, 4, 4}, dt, 74) + rt.eye(4, dt) * 3.0;
        const auto [LU, piv] = linalg::lu_factor(A);
        const Tensor B = random_matrix(rt, {4, 3}, dt, 75), Br = random_matrix(rt, {3, 4}, dt, 76);
        for (bool left : {true, false})
            for (bool adjoint : {false, true}) {
                check_grad("lu_solve " + name_of(dt) + (left ? " left" : " right") + (adjoint ? " adjoint" : ""),
                           [piv = piv, left, adjoint](const std::vector<Tensor>& x) {
                               return std::vector{linalg::lu_solve(x[0], piv, x[1], left, adjoint)};
                           },
                           {LU, left ? B : Br});
            }
    }
}

TEST_CASE("linalg grad: eig and eigvals of real and complex matrices, gauge-invariant losses", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : grad_dtypes) {
        const Tensor A = random_matrix(rt, {2, 4, 4}, dt, 81);
        check_grad("eigvals " + name_of(dt), [](const std::vector<Tensor>& x) { return std::vector{linalg::eigvals(x[0])}; },
                   {A});
        check_grad("eig " + name_of(dt),
                   [](const std::vector<Tensor>& x) {
                       auto [w, v] = linalg::eig(x[0]);
                       return std::vector{w, v.abs()};
                   },
                   {A});
    }
}

TEST_CASE("linalg grad: forward over reverse through rules that use their outputs frees everything", "[linalg]") {
    // A JVP rule whose graph saves its op's output (lu_solve: the term op(dA) X, with dA from LU,
    // which requires grad) once made a cycle, output -> tangent -> node -> output, that nothing freed.
    const Runtime rt = linalg_runtime();
    const Tensor A = random_matrix(rt, {32, 32}, DType::f64, 95) + rt.eye(32) * 32.0;  // 8 KiB: engine memory
    const Tensor V = random_matrix(rt, {32, 32}, DType::f64, 96), B = random_matrix(rt, {32, 32}, DType::f64, 97);
    const auto [LU, piv] = linalg::lu_factor(A);
    const uint64_t base = rt.engine_memory().live_bytes;
    {
        Tensor dual = make_dual(LU.detach(), V);
        dual.set_requires_grad();
        const Tensor y = linalg::lu_solve(dual, piv, B);
        const Tensor hvp = grad({(y * y).sum()}, {dual})[0].tangent();
        CHECK(hvp.shape() == Shape{32, 32});
    }
    CHECK(rt.engine_memory().live_bytes == base);
}

TEST_CASE("linalg grad: matrix_exp through the block Frechet derivative, to second order", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : grad_dtypes) {
        for (double scale : {0.3, 4.0}) {  // a low Pade degree, and scaling and squaring
            const Tensor A = random_matrix(rt, {2, 3, 3}, dt, 102) * scale;
            check_grad("matrix_exp " + name_of(dt) + " scale " + std::to_string(scale),
                       [](const std::vector<Tensor>& x) { return std::vector{linalg::matrix_exp(x[0])}; }, {A});
        }
        check_second_order(
            rt, "matrix_exp" + std::string(" ") + name_of(dt),
            [](const Tensor& x) { return (linalg::matrix_exp(x) * linalg::matrix_exp(x).conj()).real().sum(); },
            random_matrix(rt, {3, 3}, dt, 103));
    }
}

TEST_CASE("linalg grad: pinv of tall, wide, square and Hermitian matrices", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : grad_dtypes) {
        for (const Shape& s : {Shape{5, 3}, Shape{2, 4, 4}, Shape{3, 5}}) {
            const Tensor A = random_matrix(rt, s, dt, 114);
            check_grad("pinv " + name_of(dt) + " " + std::to_string(s[s.size() - 2]) + "x" + std::to_string(s.back()),
                       [](const std::vector<Tensor>& x) { return std::vector{linalg::pinv(x[0])}; }, {A});
        }
        linalg::Tolerance herm;
        herm.hermitian = true;
        check_grad("pinv hermitian " + name_of(dt),
                   [herm](const std::vector<Tensor>& x) { return std::vector{linalg::pinv(x[0] + mH(x[0]), herm)}; },
                   {random_matrix(rt, {4, 4}, dt, 115)});
    }
}

TEST_CASE("linalg grad: vector_norm for every order", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : grad_dtypes) {
        const Tensor x = random_matrix(rt, {3, 4}, dt, 121);
        const double inf = std::numeric_limits<double>::infinity();
        for (double ord : {2.0, 1.0, 3.0, 0.7, -1.5, inf, -inf}) {
            check_grad("vector_norm " + name_of(dt) + " ord " + std::to_string(ord),
                       [ord](const std::vector<Tensor>& v) {
                           return std::vector{linalg::vector_norm(v[0], ord, {1}), linalg::vector_norm(v[0], ord, {}, true)};
                       },
                       {x});
        }
    }
}

TEST_CASE("linalg grad: matrix_norm for every order", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : grad_dtypes) {
        const Tensor A = random_matrix(rt, {2, 3, 4}, dt, 131);
        for (const char* ord : {"fro", "nuc", "inf", "-inf", "1", "-1", "2", "-2"}) {
            check_grad("matrix_norm " + name_of(dt) + " " + ord,
                       [ord](const std::vector<Tensor>& x) {
                           return std::vector{linalg::matrix_norm(x[0], ord), linalg::matrix_norm(x[0], ord, {2, 0}, true)};
                       },
                       {A});
        }
    }
}

TEST_CASE("linalg grad: cond in every norm", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : grad_dtypes) {
        const Tensor A = random_matrix(rt, {2, 3, 3}, dt, 142) + rt.eye(3, dt) * 2.0;
        for (const char* p : {"2", "-2", "fro", "nuc", "inf", "-inf", "1", "-1"}) {
            check_grad("cond " + name_of(dt) + " " + p,
                       [p](const std::vector<Tensor>& x) { return std::vector{linalg::cond(x[0], p)}; }, {A});
        }
        check_grad("cond wide " + name_of(dt), [](const std::vector<Tensor>& x) { return std::vector{linalg::cond(x[0])}; },
                   {random_matrix(rt, {3, 5}, dt, 143)});
    }
}

TEST_CASE("linalg grad: lstsq solution, residuals and singular values", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : grad_dtypes) {
        for (const Shape& s : {Shape{2, 5, 3}, Shape{3, 3}, Shape{3, 5}}) {
            const Shape bs = {s[s.size() - 2], 2};
            const Tensor A = random_matrix(rt, s, dt, 156), B = random_matrix(rt, bs, dt, 157);
            check_grad("lstsq " + name_of(dt) + " " + std::to_string(s[s.size() - 2]) + "x" + std::to_string(s.back()),
                       [](const std::vector<Tensor>& x) {
                           const auto r = linalg::lstsq(x[0], x[1]);
                           return std::vector{r.solution, r.residuals, r.singular_values};
                       },
                       {A, B});
        }
    }
}
