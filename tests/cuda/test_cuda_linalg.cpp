// The cuSOLVER module (libferro_linalg_cuda.so): each op on cuda:0 against the LAPACK module on
// the cpu — values where they are unique, reconstructions where they have a gauge (Q R = A,
// A V = V diag(w), U S Vh = A, P L U = A) — batched, broadcast, tall and wide, with the cpu
// module's error messages, the declines, and gradients through cuda tensors. Without a GPU only
// the module's decline on other engines runs.
#include "cuda_test.hpp"
#include "engine_conformance.hpp"

#include <ferro/gradcheck.hpp>
#include <ferro/inventory.hpp>
#include <ferro/linalg.hpp>

#include <string>

using namespace ferro;
using namespace ferro::test;

namespace {

const char* const kCuda = "cuda:0";
const DType kFloats[] = {DType::f32, DType::f64, DType::c64, DType::c128};

Runtime linalg_cuda_runtime() {
    Runtime rt = cuda_runtime();
    rt.load_plugin(build_dir() + "/lib/ferro/plugins/libferro_linalg_cuda.so");
    return rt;
}

double tol(DType d) { return is_single_dtype(d) ? 2e-4 : 1e-10; }

// got (on cuda) equals want (on the cpu) within the dtype's tolerance.
void check_near(const Tensor& got, const Tensor& want, DType dt) {
    REQUIRE(got.engine() == kCuda);
    const Tensor g = got.to("cpu");
    REQUIRE(g.shape() == want.shape());
    CHECK(g.dtype() == want.dtype());
    check_close(detail::values_of(g), detail::values_of(want), tol(dt), tol(dt));
}

// Well-conditioned square matrices (diagonally dominant) of the given shape.
Tensor well_conditioned(const Runtime& rt, const Shape& shape, DType dt, uint32_t seed) {
    return seeded_input(rt, shape, dt, seed) + rt.eye(shape.back(), DType::f64).to(dt) * 4.0;
}

Tensor hermitian_pd(const Runtime& rt, const Shape& shape, DType dt, uint32_t seed) {
    const Tensor x = seeded_input(rt, shape, dt, seed);
    const int64_t n = shape.back();
    return matmul(x, x.transpose().conj()) + rt.eye(n, DType::f64).to(dt) * double(n);
}

}  // namespace

TEST_CASE("cuda linalg: the module loads everywhere and declines engines other than cuda with the reason", "[cuda-probe]") {
    Runtime rt = linalg_cuda_runtime();
    bool declined = false;
    for (const ModuleInfo& m : rt.inventory().modules) {
        if (m.plugin != "linalg_cuda" || m.engine != "cpu") continue;
        CHECK(m.family == "linalg");
        CHECK(!m.available);
        CHECK_THAT(
            m.reason,
            Catch::Contains("the cuSOLVER module runs on cuda engines (ferro.cuda.ctx.v1); engine cpu has ferro.cpu.ctx.v1"));
        declined = true;
    }
    CHECK(declined);
    CHECK(linalg::det(rt.eye(3)).item<double>() == 1.0);  // the cpu keeps the LAPACK module
}

TEST_CASE("cuda linalg: solve, inv, det, slogdet and triangular_solve agree with the LAPACK module", "[cuda]") {
    Runtime rt = linalg_cuda_runtime();
    require_cuda_device(rt);
    for (DType dt : kFloats) {
        INFO(dtype_name(dt));
        const Tensor a = well_conditioned(rt, {3, 5, 5}, dt, 1), b = seeded_input(rt, {3, 5, 2}, dt, 2);
        const Tensor av = a.to(kCuda), bv = b.to(kCuda);
        check_near(linalg::solve(av, bv), linalg::solve(a, b), dt);
        const Tensor vec = seeded_input(rt, {5}, dt, 3);
        check_near(linalg::solve(av, vec.to(kCuda)), linalg::solve(a, vec), dt);                   // broadcast vector
        check_near(linalg::solve(av.slice(0, 0, 1), bv), linalg::solve(a.slice(0, 0, 1), b), dt);  // broadcast batch
        check_near(linalg::solve(av.transpose(), bv), linalg::solve(a.transpose(), b), dt);        // strided A
        check_near(linalg::inv(av), linalg::inv(a), dt);
        check_near(linalg::det(av), linalg::det(a), dt);
        const auto s = linalg::slogdet(av), w = linalg::slogdet(a);
        check_near(s.sign, w.sign, dt);
        check_near(s.logabsdet, w.logabsdet, dt);
        for (bool upper : {false, true}) {
            for (bool left : {true, false}) {
                for (bool unit : {false, true}) {
                    INFO("upper " << upper << " left " << left << " unit " << unit);
                    const Tensor rhs = left ? b : b.transpose();
                    check_near(linalg::triangular_solve(av, rhs.to(kCuda), upper, left, unit),
                               linalg::triangular_solve(a, rhs, upper, left, unit), dt);
                }
            }
        }
        const Tensor empty = rt.zeros({0, 0}, dt);
        check_near(linalg::det(empty.to(kCuda)), linalg::det(empty), dt);
    }
}

TEST_CASE("cuda linalg: cholesky, lu_factor, lu, lu_solve and solve_with_lu agree with the LAPACK module", "[cuda]") {
    Runtime rt = linalg_cuda_runtime();
    require_cuda_device(rt);
    for (DType dt : kFloats) {
        INFO(dtype_name(dt));
        const Tensor h = hermitian_pd(rt, {2, 6, 6}, dt, 4);
        check_near(linalg::cholesky(h.to(kCuda)), linalg::cholesky(h), dt);
        check_near(linalg::cholesky(h.to(kCuda), true), linalg::cholesky(h, true), dt);
        for (const Shape& shape : {Shape{2, 5, 5}, Shape{4, 6}, Shape{6, 4}}) {
            const Tensor a = seeded_input(rt, shape, dt, 5);
            const auto f = linalg::lu_factor(a.to(kCuda)), want = linalg::lu_factor(a);
            check_near(f.LU, want.LU, dt);  // partial pivoting: the same pivots on random data
            CHECK(f.pivots.to("cpu").to_vector<int64_t>() == want.pivots.to_vector<int64_t>());
            const auto plu = linalg::lu(a.to(kCuda));
            check_near(matmul(plu.P, matmul(plu.L, plu.U)), a, dt);
            const auto cpu = linalg::lu(a);
            check_near(plu.P, cpu.P, dt);
            check_near(plu.L, cpu.L, dt);
            check_near(plu.U, cpu.U, dt);
        }
        const Tensor a = well_conditioned(rt, {2, 5, 5}, dt, 6), b = seeded_input(rt, {2, 5, 3}, dt, 7);
        const auto f = linalg::lu_factor(a.to(kCuda)), fc = linalg::lu_factor(a);
        for (bool left : {true, false}) {
            for (bool adjoint : {false, true}) {
                INFO("left " << left << " adjoint " << adjoint);
                const Tensor rhs = left ? b : b.transpose();
                check_near(linalg::lu_solve(f.LU, f.pivots, rhs.to(kCuda), left, adjoint),
                           linalg::lu_solve(fc.LU, fc.pivots, rhs, left, adjoint), dt);
            }
        }
        for (const Tensor& rhs : {b, b.slice(-1, 0, 1).reshape({2, 5})}) {  // a matrix, a vector per matrix
            const auto s = linalg::solve_with_lu(a.to(kCuda), rhs.to(kCuda)), sc = linalg::solve_with_lu(a, rhs);
            check_near(s.X, sc.X, dt);
            check_near(s.LU, fc.LU, dt);
            CHECK(s.pivots.to("cpu").to_vector<int64_t>() == fc.pivots.to_vector<int64_t>());
        }
    }
}

TEST_CASE("cuda linalg: qr, eigh and svd reconstruct their input and agree where unique", "[cuda]") {
    Runtime rt = linalg_cuda_runtime();
    require_cuda_device(rt);
    for (DType dt : kFloats) {
        INFO(dtype_name(dt));
        for (const Shape& shape : {Shape{2, 7, 4}, Shape{4, 7}, Shape{5, 5}}) {
            const Tensor a = seeded_input(rt, shape, dt, 8);
            const Tensor av = a.to(kCuda);
            for (const char* mode : {"reduced", "complete"}) {
                INFO("qr " << mode);
                const auto q = linalg::qr(av, mode);
                check_near(matmul(q.Q, q.R), a, dt);
                const int64_t qc = q.Q.shape().back();
                check_near(matmul(q.Q.transpose().conj(), q.Q), rt.eye(qc, DType::f64).to(dt), dt);
                check_near(q.R.abs(), linalg::qr(a, mode).R.abs(), dt);  // R up to the signs of its rows
            }
            check_near(linalg::qr_r(av).abs(), linalg::qr_r(a).abs(), dt);
            for (bool full : {false, true}) {
                INFO("svd full " << full);
                const auto s = linalg::svd(av, full);
                const int64_t k = s.S.shape().back();
                const Tensor us = matmul(s.U.slice(-1, 0, k), (s.S.to(dt).unsqueeze(-1) * s.Vh.slice(-2, 0, k)));
                check_near(us, a, dt);
                check_near(s.S, linalg::svdvals(a), dt);
                check_near(matmul(s.U.transpose().conj(), s.U), rt.eye(s.U.shape().back(), DType::f64).to(dt), dt);
            }
            check_near(linalg::svdvals(av), linalg::svdvals(a), dt);
        }
        const Tensor h = hermitian_pd(rt, {3, 6, 6}, dt, 9);
        for (const char* uplo : {"L", "U"}) {
            const auto e = linalg::eigh(h.to(kCuda), uplo);
            check_near(e.eigenvalues, linalg::eigvalsh(h, uplo), dt);
            check_near(matmul(h.to(kCuda), e.eigenvectors), e.eigenvectors * e.eigenvalues.to(dt).unsqueeze(-2), dt);
            check_near(linalg::eigvalsh(h.to(kCuda), uplo), linalg::eigvalsh(h, uplo), dt);
        }
    }
}

TEST_CASE("cuda linalg: failures name the matrix of the batch as the LAPACK module does", "[cuda]") {
    Runtime rt = linalg_cuda_runtime();
    require_cuda_device(rt);
    // The second matrix of the batch is singular at its third pivot.
    std::vector<double> values = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 2, 3, 2, 4, 6, 1, 1, 1};
    const Tensor a = rt.tensor<double>(values, {2, 3, 3});
    const Tensor b = rt.ones({2, 3, 1});
    std::string cpu_message;
    try {
        (void)linalg::solve(a, b);
    } catch (const Error& e) {
        cpu_message = e.what();
    }
    REQUIRE(!cpu_message.empty());
    check_error([&] { (void)linalg::solve(a.to(kCuda), b.to(kCuda)); }, FERRO_INVALID_ARGUMENT,
                "matrix [1] of the batch is singular");
    try {  // word for word: partial pivoting meets the same zero pivot
        (void)linalg::solve(a.to(kCuda), b.to(kCuda));
    } catch (const Error& e) {
        CHECK(std::string(e.what()) == cpu_message);
    }
    check_error([&] { (void)linalg::inv(a.to(kCuda)); }, FERRO_INVALID_ARGUMENT,
                "linalg.inv: matrix [1] of the batch is singular");
    CHECK(linalg::det(a.to(kCuda)).to("cpu").to_vector<double>()[1] == 0.0);  // a zero determinant is no error
    check_error([&] { (void)linalg::cholesky(-rt.eye(3).to(kCuda)); }, FERRO_INVALID_ARGUMENT,
                "linalg.cholesky: the matrix is not positive definite: its leading minor of order 1 is not positive definite");
    const Tensor nan = rt.tensor<double>({1, std::nan(""), std::nan(""), 1}, {2, 2});
    check_error([&] { (void)linalg::eigh(nan.to(kCuda)); }, FERRO_INVALID_ARGUMENT,
                "linalg.eigh: the matrix contains NaN or Inf");
    check_error([&] { (void)linalg::svd(nan.to(kCuda)); }, FERRO_INVALID_ARGUMENT, "linalg.svd: the matrix contains NaN or Inf");
    check_error(
        [&] {
            (void)linalg::triangular_solve(rt.zeros({2, 2}).to(kCuda), rt.ones({2, 1}).to(kCuda), true);
        },
        FERRO_INVALID_ARGUMENT, "linalg.triangular_solve: the matrix is singular: its diagonal entry [0, 0] is exactly zero");
    // lu_solve's pivots are checked, in the LAPACK module's words.
    const Tensor lu3 = rt.eye(3), bad = rt.tensor<int64_t>({3, 1, 3}, {3}), rhs = rt.ones({3, 1});
    std::string lapack_words;
    try {
        (void)linalg::lu_solve(lu3, bad, rhs);
    } catch (const Error& e) {
        lapack_words = e.what();
    }
    REQUIRE(!lapack_words.empty());
    try {
        (void)linalg::lu_solve(lu3.to(kCuda), bad.to(kCuda), rhs.to(kCuda));
        FAIL("expected an error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) == lapack_words);
    }
    // What cuSOLVER does not run here is declined, never run on the cpu instead.
    check_error([&] { (void)linalg::eig(rt.eye(3).to(kCuda)); }, FERRO_UNIMPLEMENTED,
                "the cuSOLVER module does not implement linalg.eig");
}

TEST_CASE("cuda linalg: gradients through cuda tensors match finite differences", "[cuda]") {
    Runtime rt = linalg_cuda_runtime();
    require_cuda_device(rt);
    for (DType dt : {DType::f64, DType::c128}) {
        INFO(dtype_name(dt));
        const Tensor a = well_conditioned(rt, {4, 4}, dt, 11).to(kCuda), b = seeded_input(rt, {4, 2}, dt, 12).to(kCuda);
        const Tensor h = hermitian_pd(rt, {4, 4}, dt, 13).to(kCuda);
        const auto through_solve = [](const std::vector<Tensor>& x) {
            return std::vector<Tensor>{linalg::solve(x[0], x[1]).abs().sum({0, 1})};
        };
        const auto through_svdvals = [](const std::vector<Tensor>& x) {
            return std::vector<Tensor>{linalg::svdvals(x[0]).sum({0})};
        };
        const auto through_eigvalsh = [](const std::vector<Tensor>& x) {
            const Tensor s = x[0] + x[0].transpose().conj();
            return std::vector<Tensor>{(linalg::eigvalsh(s) * linalg::eigvalsh(s)).sum({0})};
        };
        const auto through_cholesky = [](const std::vector<Tensor>& x) {
            const Tensor s = matmul(x[0], x[0].transpose().conj());
            return std::vector<Tensor>{linalg::cholesky(s).abs().sum({0, 1})};
        };
        for (const GradcheckResult& r : {gradcheck(through_solve, {a, b}), gradcheck(through_svdvals, {a}),
                                         gradcheck(through_eigvalsh, {h}), gradcheck(through_cholesky, {a})}) {
            INFO(r.report);
            CHECK(r.ok);
        }
    }
}
