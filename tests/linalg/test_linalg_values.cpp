// linalg values for every op and dtype: reconstructions (A X = B, Q R = A, L L^H = A,
// U S Vh = A, A V = V diag(w)), orthonormality, triangularity, agreement between ops that
// compute the same thing, batched and broadcast shapes, edge shapes, and views with any strides.
#include "linalg_test.hpp"

using namespace ferro;
using namespace ferro::test;
using cd = std::complex<double>;

namespace {

// A Hermitian positive-definite (batch) matrix: X X^H + n I.
Tensor hpd(const Runtime& rt, Shape shape, DType dtype, uint32_t seed) {
    const Tensor x = random_matrix(rt, shape, dtype, seed);
    return matmul(x, mH(x)) + rt.eye(shape.back(), dtype) * static_cast<double>(shape.back());
}

Tensor hermitian(const Runtime& rt, Shape shape, DType dtype, uint32_t seed) {
    const Tensor x = random_matrix(rt, shape, dtype, seed);
    return x + mH(x);
}

// R upper (strictly-lower part zero), L lower.
double strictly_lower_max(const Tensor& r) {
    const int64_t rows = r.shape()[r.ndim() - 2], cols = r.shape()[r.ndim() - 1];
    double worst = 0;
    for (int64_t i = 1; i < rows; ++i) {
        const Tensor below = r.slice(-2, i, i + 1).slice(-1, 0, std::min(i, cols));
        if (below.numel() > 0) worst = std::max(worst, below.abs().max().to(DType::f64).item<double>());
    }
    return worst;
}

}  // namespace

TEST_CASE("linalg values: solve gives A X = B for matrices, vectors and broadcast batches", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : all_dtypes) {
        INFO(name_of(dt));
        const Tensor A = well_conditioned(rt, {2, 3, 5, 5}, dt, 1);
        const Tensor B = random_matrix(rt, {3, 5, 2}, dt, 2);  // broadcasts against A's batch
        const Tensor X = linalg::solve(A, B);
        CHECK(X.shape() == Shape{2, 3, 5, 2});
        CHECK_NEAR_T(matmul(A, X), B, tol(dt, 5));
        const Tensor b = random_matrix(rt, {5}, dt, 3);  // numpy 2: a 1-D b is one vector
        const Tensor x = linalg::solve(A, b);
        CHECK(x.shape() == Shape{2, 3, 5});
        CHECK_NEAR_T(matmul(A, x.unsqueeze(-1)).squeeze(), b.expand({2, 3, 5}), tol(dt, 5));
    }
}

TEST_CASE("linalg values: inv, det and slogdet agree with each other and with known values", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : all_dtypes) {
        INFO(name_of(dt));
        const Tensor A = well_conditioned(rt, {3, 6, 6}, dt, 4);
        CHECK_NEAR_T(matmul(A, linalg::inv(A)), rt.eye(6, dt), tol(dt, 6));
        const Tensor d = linalg::det(A);
        CHECK(d.shape() == Shape{3});
        const auto [sign, logabs] = linalg::slogdet(A);
        CHECK(logabs.dtype() == real_of(dt));
        CHECK_NEAR_T(sign * logabs.exp().to(dt), d, tol(dt, 6) * d.abs().max().to(DType::f64).item<double>());
        // det(A B) = det(A) det(B); det(inv(A)) = 1 / det(A).
        const Tensor B = well_conditioned(rt, {3, 6, 6}, dt, 5);
        const double scale = (d * linalg::det(B)).abs().max().to(DType::f64).item<double>();
        CHECK_NEAR_T(linalg::det(matmul(A, B)), d * linalg::det(B), tol(dt, 6) * scale);
        CHECK_NEAR_T(linalg::det(linalg::inv(A)) * d, rt.full({3}, 1.0, dt), tol(dt, 6) * 10);
    }
    // Exact values: a permutation (odd), a triangular matrix, a complex diagonal.
    const Tensor P = rt.tensor<double>({0, 1, 0, 1, 0, 0, 0, 0, 1}, {3, 3});
    CHECK(linalg::det(P).item<double>() == Approx(-1.0));
    const Tensor T = rt.tensor<double>({2, 7, 1, 0, -3, 5, 0, 0, 0.5}, {3, 3});
    CHECK(linalg::det(T).item<double>() == Approx(-3.0));
    const Tensor D = rt.tensor<cd>({{0, 2}, {0, 0}, {0, 0}, {1, 1}}, {2, 2});
    const cd dz = linalg::det(D).item<cd>();
    CHECK(dz.real() == Approx(-2.0));
    CHECK(dz.imag() == Approx(2.0));
    const auto [sz, lz] = linalg::slogdet(D);
    CHECK(std::abs(sz.item<cd>() - dz / std::abs(dz)) < 1e-15);
    CHECK(lz.item<double>() == Approx(std::log(std::abs(dz))));
}

TEST_CASE("linalg values: det and slogdet of singular matrices are 0 and (0, -inf)", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : all_dtypes) {
        INFO(name_of(dt));
        const Tensor S = rt.tensor<double>({1, 2, 3, 2, 4, 6, 0, 1, 1}, {3, 3}).to(dt);  // row 2 = 2 row 1
        CHECK(linalg::det(S).abs().to(DType::f64).item<double>() == 0.0);
        const auto [sign, logabs] = linalg::slogdet(S);
        CHECK(sign.abs().to(DType::f64).item<double>() == 0.0);
        CHECK(logabs.to(DType::f64).item<double>() == -std::numeric_limits<double>::infinity());
    }
}

TEST_CASE("linalg values: cholesky lower and upper reconstruct A and are triangular", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : all_dtypes) {
        INFO(name_of(dt));
        const Tensor A = hpd(rt, {2, 7, 7}, dt, 6);
        const Tensor L = linalg::cholesky(A);
        CHECK_NEAR_T(matmul(L, mH(L)), A, tol(dt, 7) * 7);
        CHECK(strictly_lower_max(mH(L)) == 0.0);
        const Tensor U = linalg::cholesky(A, /*upper=*/true);
        CHECK_NEAR_T(matmul(mH(U), U), A, tol(dt, 7) * 7);
        CHECK_NEAR_T(U, mH(L), tol(dt, 7));
        // The diagonal is real and positive.
        CHECK(L.diagonal(0, -2, -1).real().min().to(DType::f64).item<double>() > 0);
    }
}

TEST_CASE("linalg values: Q, R, the lower Cholesky factor and lu_factor's LU come back column-major, as in PyTorch", "[linalg]") {
    const Runtime rt = linalg_runtime();
    const Tensor A = well_conditioned(rt, {2, 4, 4}, DType::f64, 170);
    auto [q, r] = linalg::qr(A.slice(-1, 0, 3));  // 4 x 3 per matrix
    CHECK(q.strides() == Shape{12, 1, 4});
    CHECK(r.strides() == Shape{9, 1, 3});
    CHECK_NEAR_T(matmul(q, r), A.slice(-1, 0, 3), tol(DType::f64));
    // Row-major copies hold the same values.
    CHECK(q.contiguous().to_vector<double>() == q.to_vector<double>());
    const Tensor S = matmul(A, mH(A));
    const Tensor L = linalg::cholesky(S);
    CHECK(L.strides() == Shape{16, 1, 4});
    CHECK_NEAR_T(matmul(L, mH(L)), S, tol(DType::f64) * 100);
    CHECK(linalg::cholesky(S, true).strides() == Shape{16, 4, 1});  // upper: row-major (the transposed trick)
    CHECK(linalg::lu_factor(A).LU.strides() == Shape{16, 1, 4});
}

TEST_CASE("linalg values: lower Cholesky of a matrix above the one-BLAS-thread size, for every dtype", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : all_dtypes) {
        INFO(name_of(dt));
        const int64_t n = 400;  // above 384: OpenBLAS threads inside potrf
        const Tensor X = random_matrix(rt, {n, n}, dt, 171);
        const Tensor S = matmul(X, mH(X)) + rt.eye(n, dt) * static_cast<double>(n);
        const Tensor L = linalg::cholesky(S);
        CHECK_NEAR_T(matmul(L, mH(L)), S, tol(dt, n) * n);
        std::vector<double> above(static_cast<size_t>(n * n), 0.0);
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = i + 1; j < n; ++j) above[static_cast<size_t>(i * n + j)] = 1.0;
        const Tensor upper_mask = rt.tensor<double>(above, {n, n}).to(dt);
        CHECK(max_diff(L * upper_mask, rt.zeros({n, n}, dt)) == 0.0);  // nothing above the diagonal
        // Only the lower triangle is read: garbage above it changes nothing.
        CHECK(max_diff(linalg::cholesky(S + S * upper_mask * 7.0), L) == 0.0);
        // The leading minor of order 3 is not positive: named as for small matrices.
        std::vector<double> d(static_cast<size_t>(n), 1.0);
        d[2] = -1;
        check_error(
            [&] { linalg::cholesky(rt.eye(n, dt) * rt.tensor<double>(d, {n}).to(dt)); }, FERRO_INVALID_ARGUMENT,
            "linalg.cholesky: the matrix is not positive definite: its leading minor of order 3 is not positive definite");
    }
}

TEST_CASE("linalg values: qr in every mode for tall, square and wide matrices", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : all_dtypes) {
        for (const Shape& shape : {Shape{2, 7, 4}, Shape{5, 5}, Shape{3, 6}}) {
            INFO(name_of(dt) << " shape " << shape[shape.size() - 2] << "x" << shape.back());
            const int64_t m = shape[shape.size() - 2], n = shape.back(), k = std::min(m, n);
            const Tensor A = random_matrix(rt, shape, dt, 7);
            const auto [Q, R] = linalg::qr(A);
            CHECK(Q.shape().back() == k);
            CHECK(R.shape()[R.ndim() - 2] == k);
            CHECK_NEAR_T(matmul(Q, R), A, tol(dt, m));
            CHECK_NEAR_T(matmul(mH(Q), Q), rt.eye(k, dt), tol(dt, m));
            CHECK(strictly_lower_max(R) == 0.0);
            const auto [Qc, Rc] = linalg::qr(A, "complete");
            CHECK(Qc.shape().back() == m);
            CHECK(Rc.shape()[Rc.ndim() - 2] == m);
            CHECK_NEAR_T(matmul(Qc, Rc), A, tol(dt, m));
            CHECK_NEAR_T(matmul(mH(Qc), Qc), rt.eye(m, dt), tol(dt, m));
            CHECK(strictly_lower_max(Rc) == 0.0);
            CHECK_NEAR_T(linalg::qr_r(A), R, 0.0);
        }
    }
}

TEST_CASE("linalg values: eigh gives A V = V diag(w), orthonormal V, ascending w, and uplo picks the triangle", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : all_dtypes) {
        INFO(name_of(dt));
        const Tensor A = hermitian(rt, {2, 6, 6}, dt, 8);
        const auto [w, V] = linalg::eigh(A);
        CHECK(w.dtype() == real_of(dt));
        CHECK_NEAR_T(matmul(A, V), V * w.to(dt).unsqueeze(-2), tol(dt, 6) * 4);
        CHECK_NEAR_T(matmul(mH(V), V), rt.eye(6, dt), tol(dt, 6));
        const auto wv = w.to(DType::f64).to_vector<double>();
        for (size_t i = 1; i < 6; ++i) CHECK(wv[i - 1] <= wv[i]);
        for (size_t i = 7; i < 12; ++i) CHECK(wv[i - 1] <= wv[i]);
        CHECK_NEAR_T(linalg::eigvalsh(A), w, tol(dt, 6) * 4);
        // Only the named triangle is read: garbage in the other one changes nothing.
        const Tensor noise = random_matrix(rt, {6, 6}, dt, 9);
        const Tensor upper_mask = rt.tensor<double>(
            [] {
                std::vector<double> m(36);
                for (int i = 0; i < 6; ++i)
                    for (int j = 0; j < 6; ++j) m[i * 6 + j] = j > i;
                return m;
            }(),
            {6, 6});
        const Tensor lower_garbage = A + noise * upper_mask.mT().to(dt);  // strictly lower changed
        CHECK_NEAR_T(linalg::eigvalsh(lower_garbage, "U"), w, tol(dt, 6) * 4);
        const Tensor upper_garbage = A + noise * upper_mask.to(dt);
        CHECK_NEAR_T(linalg::eigvalsh(upper_garbage, "L"), w, tol(dt, 6) * 4);
        CHECK_NEAR_T(linalg::eigh(upper_garbage, "L").eigenvalues, w, tol(dt, 6) * 4);
    }
    // Known spectrum: the 1-D Laplacian, 2 - 2 cos(pi k / (n + 1)).
    const int n = 8;
    std::vector<double> lap(n * n, 0.0);
    for (int i = 0; i < n; ++i) {
        lap[i * n + i] = 2;
        if (i + 1 < n) lap[i * n + i + 1] = lap[(i + 1) * n + i] = -1;
    }
    const auto w = linalg::eigvalsh(rt.tensor<double>(lap, {n, n})).to_vector<double>();
    for (int k = 1; k <= n; ++k) CHECK(w[k - 1] == Approx(2 - 2 * std::cos(M_PI * k / (n + 1))).margin(1e-13));
}

TEST_CASE("linalg values: eigh of 19 x 19 matrices reads only its triangle and returns column-major eigenvectors", "[linalg]") {
    // Larger than the layout copies' 8 x 8 blocks, and not a multiple of them; both triangles
    // of a transposed view (the copy runs the other way round).
    const Runtime rt = linalg_runtime();
    const int64_t n = 19;
    for (DType dt : all_dtypes) {
        const Tensor A = hermitian(rt, {2, n, n}, dt, 30);
        const Tensor noise = random_matrix(rt, {2, n, n}, dt, 31);
        std::vector<double> mask(static_cast<size_t>(n * n));
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) mask[static_cast<size_t>(i * n + j)] = j > i;
        const Tensor strictly_upper = rt.tensor<double>(mask, {n, n}).to(dt);
        for (const char* uplo : {"L", "U"}) {
            INFO(name_of(dt) << " UPLO " << uplo);
            // Noise in the other triangle; the second input is the same values through a transposed view.
            const Tensor garbled = A + noise * (uplo[0] == 'L' ? strictly_upper : strictly_upper.mT());
            for (const Tensor& input : {garbled, garbled.mT().contiguous().mT()}) {
                const auto [w, V] = linalg::eigh(input, uplo);
                CHECK(V.strides() == Shape{n * n, 1, n});
                CHECK_NEAR_T(matmul(A, V), V * w.to(dt).unsqueeze(-2), tol(dt, 6) * 20);
                CHECK_NEAR_T(matmul(mH(V), V), rt.eye(n, dt), tol(dt, 6) * 4);
                CHECK_NEAR_T(linalg::eigvalsh(input, uplo), w, tol(dt, 6) * 20);
            }
        }
    }
    // NaN in the triangle not read is no error; in the one read it is.
    std::vector<double> values = hermitian(rt, {n, n}, DType::f64, 32).to_vector<double>();
    values[1] = std::numeric_limits<double>::quiet_NaN();  // (0, 1): upper
    const Tensor upper_nan = rt.tensor<double>(values, {n, n});
    CHECK(std::isfinite(linalg::eigvalsh(upper_nan, "L").sum().item<double>()));
    check_error([&] { linalg::eigh(upper_nan, "U"); }, FERRO_INVALID_ARGUMENT, "linalg.eigh: the matrix contains NaN or Inf");
}

TEST_CASE("linalg values: svd thin and full for tall, square and wide matrices, and svdvals agrees", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : all_dtypes) {
        for (const Shape& shape : {Shape{2, 7, 4}, Shape{5, 5}, Shape{3, 6}}) {
            INFO(name_of(dt) << " shape " << shape[shape.size() - 2] << "x" << shape.back());
            const int64_t m = shape[shape.size() - 2], n = shape.back(), k = std::min(m, n);
            const Tensor A = random_matrix(rt, shape, dt, 10);
            const auto [U, S, Vh] = linalg::svd(A, /*full_matrices=*/false);
            CHECK(S.dtype() == real_of(dt));
            CHECK(U.shape().back() == k);
            CHECK(Vh.shape()[Vh.ndim() - 2] == k);
            CHECK_NEAR_T(matmul(U * S.to(dt).unsqueeze(-2), Vh), A, tol(dt, m));
            CHECK_NEAR_T(matmul(mH(U), U), rt.eye(k, dt), tol(dt, m));
            CHECK_NEAR_T(matmul(Vh, mH(Vh)), rt.eye(k, dt), tol(dt, n));
            const auto sv = S.to(DType::f64).to_vector<double>();
            for (size_t i = 0; i < sv.size(); ++i) {
                CHECK(sv[i] >= 0);
                if (i % k != 0) CHECK(sv[i - 1] >= sv[i]);
            }
            CHECK_NEAR_T(linalg::svdvals(A), S, tol(dt, m));
            const auto full = linalg::svd(A);
            CHECK(full.U.shape().back() == m);
            CHECK(full.Vh.shape()[full.Vh.ndim() - 2] == n);
            CHECK_NEAR_T(matmul(mH(full.U), full.U), rt.eye(m, dt), tol(dt, m));
            CHECK_NEAR_T(matmul(full.Vh, mH(full.Vh)), rt.eye(n, dt), tol(dt, n));
            CHECK_NEAR_T(full.S, S, tol(dt, m));
            // Singular values are the square roots of the eigenvalues of A^H A (the largest k).
            const Tensor w = linalg::eigvalsh(matmul(mH(A), A)).slice(-1, n - k, std::nullopt);
            const Tensor s_sq = (S * S).slice(-1, std::nullopt, std::nullopt, -1);
            CHECK_NEAR_T(w, s_sq, tol(dt, n) * 10);
        }
    }
}

TEST_CASE("linalg values: transposed, sliced and broadcast views give the answers of contiguous copies", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : all_dtypes) {
        INFO(name_of(dt));
        const Tensor big = well_conditioned(rt, {2, 8, 8}, dt, 11);
        const std::vector<Tensor> views = {big.mT(), big.slice(-1, std::nullopt, std::nullopt, -1),
                                           big.slice(-2, 1, 7).slice(-1, 0, 6), big.slice(0, 0, 1).expand({3, 8, 8})};
        for (const Tensor& v : views) {
            const Tensor c = v.contiguous();
            CHECK_NEAR_T(linalg::inv(v), linalg::inv(c), 0.0);
            CHECK_NEAR_T(linalg::det(v), linalg::det(c), 0.0);
            CHECK_NEAR_T(linalg::svdvals(v), linalg::svdvals(c), 0.0);
            CHECK_NEAR_T(linalg::qr(v).R, linalg::qr(c).R, 0.0);
            const Tensor b = random_matrix(rt, {v.shape().back(), 3}, dt, 12);
            CHECK_NEAR_T(linalg::solve(v, b.mT().contiguous().mT()), linalg::solve(c, b), 0.0);
            const Tensor h = v + mH(v);
            CHECK_NEAR_T(linalg::eigvalsh(h), linalg::eigvalsh(h.contiguous()), 0.0);
            const Tensor p = matmul(v, mH(v));
            CHECK_NEAR_T(linalg::cholesky(p.mT().conj()), linalg::cholesky(p.contiguous()), tol(dt, 8) * 100);
        }
    }
}

TEST_CASE("linalg values: edge shapes (1 x 1, empty matrices, empty batches)", "[linalg]") {
    const Runtime rt = linalg_runtime();
    const Tensor one = rt.tensor<double>({4.0}, {1, 1});
    CHECK(linalg::inv(one).item<double>() == 0.25);
    CHECK(linalg::det(one).item<double>() == 4.0);
    CHECK(linalg::cholesky(one).item<double>() == 2.0);
    CHECK(linalg::svdvals(one).item<double>() == 4.0);
    CHECK(linalg::eigvalsh(one).item<double>() == 4.0);
    CHECK(std::abs(linalg::qr(one).R.item<double>()) == 4.0);
    // 0 x 0: det 1, inverse empty.
    const Tensor empty = rt.zeros({0, 0});
    CHECK(linalg::det(empty).item<double>() == 1.0);
    CHECK(linalg::inv(empty).shape() == Shape{0, 0});
    // 3 x 0 and 0 x 3: no singular values; full bases are identities.
    for (const Shape& s : {Shape{3, 0}, Shape{0, 3}}) {
        const Tensor e = rt.zeros(s);
        CHECK(linalg::svdvals(e).shape() == Shape{0});
        const auto full = linalg::svd(e);
        CHECK_NEAR_T(full.U, rt.eye(s[0]), 0.0);
        CHECK_NEAR_T(full.Vh, rt.eye(s[1]), 0.0);
        const auto qr = linalg::qr(e, "complete");
        CHECK_NEAR_T(qr.Q, rt.eye(s[0]), 0.0);
        CHECK(qr.R.shape() == s);
    }
    // An empty batch: outputs with the batch's zero.
    const Tensor none = rt.zeros({0, 3, 3});
    CHECK(linalg::inv(none).shape() == Shape{0, 3, 3});
    CHECK(linalg::det(none).shape() == Shape{0});
    CHECK(linalg::svd(none).S.shape() == Shape{0, 3});
    CHECK(linalg::solve(none, rt.zeros({3, 2})).shape() == Shape{0, 3, 2});
}

TEST_CASE("linalg values: large batches of small matrices run on the pool and match one-by-one results", "[linalg]") {
    const Runtime rt = linalg_runtime();
    const Tensor A = well_conditioned(rt, {64, 4, 4}, DType::f64, 13);
    const Tensor inv = linalg::inv(A);
    const Tensor s = linalg::svdvals(A);
    for (int64_t b : {0, 17, 63}) {
        const Tensor one = A.slice(0, b, b + 1);
        CHECK_NEAR_T(inv.slice(0, b, b + 1), linalg::inv(one), 0.0);
        CHECK_NEAR_T(s.slice(0, b, b + 1), linalg::svdvals(one), 0.0);
    }
}

TEST_CASE("linalg values: triangular_solve left and right, upper and lower, unit diagonal", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : all_dtypes) {
        INFO(name_of(dt));
        const Tensor full = random_matrix(rt, {2, 5, 5}, dt, 60) + rt.eye(5, dt) * 4.0;
        const Tensor garbage = random_matrix(rt, {5, 5}, dt, 61) * 100.0;  // in the triangle that is not read
        for (bool upper : {false, true}) {
            for (bool unit : {false, true}) {
                // T: the triangle of `full` (unit diagonal when asked), as the op sees it.
                std::vector<double> tri(25), other(25);
                for (int i = 0; i < 5; ++i)
                    for (int j = 0; j < 5; ++j) {
                        const bool in = upper ? j > i : j < i;
                        tri[i * 5 + j] = in ? 1 : 0;
                        other[i * 5 + j] = (!in && i != j) ? 1 : 0;
                    }
                const Tensor in_mask = rt.tensor<double>(tri, {5, 5}).to(dt);
                const Tensor out_mask = rt.tensor<double>(other, {5, 5}).to(dt);
                const Tensor T = full * in_mask + (unit ? rt.eye(5, dt) : full * rt.eye(5, dt));
                const Tensor A = T + garbage * out_mask + (unit ? garbage * rt.eye(5, dt) : rt.zeros({5, 5}, dt));
                const Tensor B = random_matrix(rt, {5, 3}, dt, 62);
                const Tensor X = linalg::triangular_solve(A, B, upper, true, unit);
                CHECK_NEAR_T(matmul(T, X), B, tol(dt, 5) * 10);
                const Tensor Br = random_matrix(rt, {3, 5}, dt, 63);
                const Tensor Xr = linalg::triangular_solve(A, Br, upper, false, unit);
                CHECK_NEAR_T(matmul(Xr, T), Br.expand({2, 3, 5}), tol(dt, 5) * 10);
            }
        }
    }
}

TEST_CASE("linalg values: lu, lu_factor, lu_unpack and lu_solve reconstruct and solve", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : all_dtypes) {
        for (const Shape& shape : {Shape{2, 5, 5}, Shape{6, 4}, Shape{3, 7}}) {
            INFO(name_of(dt) << " shape " << shape[shape.size() - 2] << "x" << shape.back());
            const int64_t m = shape[shape.size() - 2], n = shape.back(), k = std::min(m, n);
            const Tensor A = random_matrix(rt, shape, dt, 64);
            const auto [P, L, U] = linalg::lu(A);
            CHECK(L.shape().back() == k);
            CHECK(U.shape()[U.ndim() - 2] == k);
            CHECK_NEAR_T(matmul(P, matmul(L, U)), A, tol(dt, m));
            CHECK(strictly_lower_max(U) == 0.0);
            CHECK(strictly_lower_max(mH(L)) == 0.0);
            CHECK_NEAR_T(L.diagonal(0, -2, -1), rt.ones({k}, dt), 0.0);
            CHECK_NEAR_T(matmul(P.mT(), P), rt.eye(m, dt), 0.0);  // a permutation
            // Partial pivoting: |L| <= 1. LAPACK picks complex pivots by |Re| + |Im|, which bounds |L| by sqrt(2).
            CHECK(L.abs().max().to(DType::f64).item<double>() <= (is_complex(dt) ? std::sqrt(2.0) : 1.0) + 1e-6);
            const auto [LU, piv] = linalg::lu_factor(A);
            CHECK(piv.dtype() == DType::i64);
            const auto unpacked = linalg::lu_unpack(LU, piv);
            CHECK_NEAR_T(unpacked.P, P, 0.0);
            CHECK_NEAR_T(unpacked.L, L, 0.0);
            CHECK_NEAR_T(unpacked.U, U, 0.0);
        }
        const Tensor A = random_matrix(rt, {2, 5, 5}, dt, 65) + rt.eye(5, dt) * 3.0;
        const auto [LU, piv] = linalg::lu_factor(A);
        const Tensor B = random_matrix(rt, {5, 2}, dt, 66), Br = random_matrix(rt, {2, 5}, dt, 67);
        CHECK_NEAR_T(linalg::lu_solve(LU, piv, B), linalg::solve(A, B), tol(dt, 5) * 10);
        CHECK_NEAR_T(matmul(mH(A), linalg::lu_solve(LU, piv, B, true, true)), B.expand({2, 5, 2}), tol(dt, 5) * 10);
        CHECK_NEAR_T(matmul(linalg::lu_solve(LU, piv, Br, false), A), Br.expand({2, 2, 5}), tol(dt, 5) * 10);
        CHECK_NEAR_T(matmul(linalg::lu_solve(LU, piv, Br, false, true), mH(A)), Br.expand({2, 2, 5}), tol(dt, 5) * 10);
    }
}

TEST_CASE("linalg values: solve_with_lu returns solve's X and lu_factor's LU and pivots", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : all_dtypes) {
        INFO(name_of(dt));
        const Tensor A = random_matrix(rt, {2, 5, 5}, dt, 68) + rt.eye(5, dt) * 3.0;
        const Tensor B = random_matrix(rt, {5, 3}, dt, 69), b = random_matrix(rt, {2, 5}, dt, 70);
        const auto f = linalg::lu_factor(A);
        // B broadcast against A's batch; b one vector per matrix.
        for (const Tensor& rhs : {B, b}) {
            const auto [X, LU, piv] = linalg::solve_with_lu(A, rhs);
            CHECK_NEAR_T(X, call_one(A.runtime_ref(), "linalg.solve", {A, rhs}), tol(dt, 5) * 10);
            CHECK_NEAR_T(LU, f.LU, 0.0);
            CHECK(piv.dtype() == DType::i64);
            CHECK(piv.to_vector<int64_t>() == f.pivots.to_vector<int64_t>());
            CHECK(LU.strides() == Shape{25, 1, 5});  // column-major, as lu_factor's
        }
        // A broadcast against B's batch: one factorisation per matrix of the result's batch.
        const Tensor Bs = random_matrix(rt, {3, 5, 2}, dt, 71);
        const auto one = linalg::solve_with_lu(A.slice(0, 0, 1), Bs);
        CHECK(one.LU.shape() == Shape{3, 5, 5});
        CHECK(one.pivots.shape() == Shape{3, 5});
        CHECK_NEAR_T(one.LU, linalg::lu_factor(A.slice(0, 0, 1)).LU.expand({3, 5, 5}), 0.0);
        CHECK_NEAR_T(matmul(A.slice(0, 0, 1), one.X), Bs, tol(dt, 5) * 10);
        // The factorisation serves further solves.
        const Tensor C = random_matrix(rt, {5, 4}, dt, 72);
        const auto [X, LU, piv] = linalg::solve_with_lu(A, B);
        CHECK_NEAR_T(matmul(A, linalg::lu_solve(LU, piv, C)), C.expand({2, 5, 4}), tol(dt, 5) * 10);
        // Empty matrices.
        const auto empty = linalg::solve_with_lu(rt.zeros({2, 0, 0}, dt), rt.zeros({2, 0, 3}, dt));
        CHECK(empty.X.shape() == Shape{2, 0, 3});
        CHECK(empty.LU.shape() == Shape{2, 0, 0});
        CHECK(empty.pivots.shape() == Shape{2, 0});
    }
}

// Above 128 rows the module splits triangular solves into halves and gemm updates (triangular.hpp),
// down to blocks of at most 64 rows: n = 300 halves unevenly (150, 75, 37 + 38), in every branch.
TEST_CASE("linalg values: solves above the triangle-splitting size, every triangle and side, every dtype", "[linalg]") {
    const Runtime rt = linalg_runtime();
    const int64_t n = 300;
    const double shift = 2.0 * std::sqrt(static_cast<double>(n));  // well conditioned, yet LU still pivots
    std::vector<double> lower(static_cast<size_t>(n * n), 0.0), upper(lower);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) (j < i ? lower : upper)[static_cast<size_t>(i * n + j)] = j == i ? 0.0 : 1.0;
    for (DType dt : all_dtypes) {
        INFO(name_of(dt));
        const double t = tol(dt, n) * 1e-3;  // residuals are ~1e-6 (single) and ~1e-15 (double)
        const Tensor A = random_matrix(rt, {n, n}, dt, 301) + rt.eye(n, dt) * shift;
        const Tensor B = random_matrix(rt, {n, 7}, dt, 302), Br = random_matrix(rt, {7, n}, dt, 303);
        const Tensor b = random_matrix(rt, {n}, dt, 304);
        CHECK_NEAR_T(matmul(A, linalg::solve(A, B)), B, t);
        CHECK_NEAR_T(matmul(A, linalg::solve(A, b).unsqueeze(-1)).squeeze(), b, t);
        const auto [LU, piv] = linalg::lu_factor(A);
        CHECK_NEAR_T(matmul(A, linalg::lu_solve(LU, piv, B)), B, t);
        CHECK_NEAR_T(matmul(mH(A), linalg::lu_solve(LU, piv, B, true, true)), B, t);
        CHECK_NEAR_T(matmul(linalg::lu_solve(LU, piv, Br, false), A), Br, t);
        CHECK_NEAR_T(matmul(linalg::lu_solve(LU, piv, Br, false, true), mH(A)), Br, t);
        for (bool up : {false, true}) {
            for (bool unit : {false, true}) {
                INFO((up ? "upper" : "lower") << (unit ? ", unit" : ""));
                const Tensor in = rt.tensor<double>(up ? upper : lower, {n, n}).to(dt);
                // With a unit diagonal, entries of size 1 below it would make T exponentially ill-conditioned.
                const Tensor T = unit ? A * in * (1.0 / shift) + rt.eye(n, dt) : A * in + A * rt.eye(n, dt);
                const Tensor garbage = A * rt.tensor<double>(up ? lower : upper, {n, n}).to(dt) * 100.0;
                CHECK_NEAR_T(matmul(T, linalg::triangular_solve(T + garbage, B, up, true, unit)), B, t);
                CHECK_NEAR_T(matmul(linalg::triangular_solve(T + garbage, Br, up, false, unit), T), Br, t);
            }
        }
        // matrix_exp solves its Pade system with the same LU solve.
        const Tensor S = random_matrix(rt, {n, n}, dt, 305) * (1.0 / static_cast<double>(n));
        CHECK_NEAR_T(matmul(linalg::matrix_exp(S), linalg::matrix_exp(S * -1.0)), rt.eye(n, dt), t);
    }
}

TEST_CASE("linalg values: eig and eigvals of general matrices (real with complex pairs, complex)", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : all_dtypes) {
        INFO(name_of(dt));
        const DType cdt = is_single(dt) ? DType::c64 : DType::c128;
        const Tensor A = random_matrix(rt, {3, 6, 6}, dt, 80);
        const auto [w, V] = linalg::eig(A);
        CHECK(w.dtype() == cdt);
        CHECK(V.dtype() == cdt);
        const Tensor Ac = A.to(cdt);
        CHECK_NEAR_T(matmul(Ac, V), V * w.unsqueeze(-2), tol(dt, 6) * 10);
        CHECK_NEAR_T((V * V.conj()).real().sum({-2}), rt.ones({3, 6}, real_of(cdt)), tol(dt, 6));
        CHECK_NEAR_T(linalg::eigvals(A), w, tol(dt, 6) * 10);
        // sum of eigenvalues = trace, product = det.
        CHECK_NEAR_T(w.sum({-1}), Ac.diagonal(0, -2, -1).sum({-1}), tol(dt, 6) * 10);
        CHECK_NEAR_T(w.prod({-1}), linalg::det(Ac), tol(dt, 6) * 100);
    }
    // A rotation: eigenvalues +-i, a real matrix with a conjugate pair.
    const auto w = linalg::eigvals(rt.tensor<double>({0, -1, 1, 0}, {2, 2})).to_vector<std::complex<double>>();
    CHECK(std::abs(w[0] - std::complex<double>(0, 1)) < 1e-15);
    CHECK(std::abs(w[1] - std::complex<double>(0, -1)) < 1e-15);
}

TEST_CASE("linalg values: matrix_exp against closed forms, eigendecompositions and its own identities", "[linalg]") {
    const Runtime rt = linalg_runtime();
    // exp of a rotation generator: [[cos t, -sin t], [sin t, cos t]], for small and large t
    // (every Pade degree and the scaling path).
    for (double t : {1e-3, 0.1, 0.7, 2.0, 5.0, 40.0}) {
        for (DType dt : all_dtypes) {
            INFO(name_of(dt) << " t = " << t);
            const Tensor G = rt.tensor<double>({0, -t, t, 0}, {2, 2}).to(dt);
            const Tensor want = rt.tensor<double>({std::cos(t), -std::sin(t), std::sin(t), std::cos(t)}, {2, 2}).to(dt);
            CHECK_NEAR_T(linalg::matrix_exp(G), want, tol(dt, 2) * std::max(1.0, t));
        }
    }
    for (DType dt : all_dtypes) {
        INFO(name_of(dt));
        // Hermitian: exp(A) = V diag(exp(w)) V^H; batched; and exp(A) exp(-A) = I for any A.
        const Tensor X = random_matrix(rt, {3, 6, 6}, dt, 100);
        const Tensor H = (X + mH(X)) * 1.5;
        const auto [w, V] = linalg::eigh(H);
        const Tensor want = matmul(V * w.exp().to(dt).unsqueeze(-2), mH(V));
        const Tensor got = linalg::matrix_exp(H);
        CHECK_NEAR_T(got, want, tol(dt, 6) * 10 * want.abs().max().to(DType::f64).item<double>());
        const Tensor Y = random_matrix(rt, {6, 6}, dt, 101) * 3.0;
        CHECK_NEAR_T(matmul(linalg::matrix_exp(Y), linalg::matrix_exp(Y * -1.0)), rt.eye(6, dt), tol(dt, 6) * 100);
        // A nilpotent matrix: the series ends, exp(N) = I + N + N^2 / 2.
        const Tensor N = rt.tensor<double>({0, 1, 2, 0, 0, 3, 0, 0, 0}, {3, 3}).to(dt);
        CHECK_NEAR_T(linalg::matrix_exp(N), rt.eye(3, dt) + N + matmul(N, N) * 0.5, tol(dt, 3));
    }
    CHECK(linalg::matrix_exp(rt.zeros({0, 0})).shape() == Shape{0, 0});
}

TEST_CASE("linalg values: pinv satisfies the Penrose conditions, matrix_rank counts above the tolerance", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : all_dtypes) {
        for (const Shape& shape : {Shape{2, 6, 4}, Shape{4, 4}, Shape{3, 7}}) {
            INFO(name_of(dt) << " shape " << shape[shape.size() - 2] << "x" << shape.back());
            const int64_t m = shape[shape.size() - 2], n = shape.back();
            const Tensor A = random_matrix(rt, shape, dt, 110);
            const Tensor X = linalg::pinv(A);
            CHECK(X.shape()[X.ndim() - 2] == n);
            CHECK(X.shape().back() == m);
            const double t = tol(dt, std::max(m, n)) * 100;
            CHECK_NEAR_T(matmul(A, matmul(X, A)), A, t);       // A X A = A
            CHECK_NEAR_T(matmul(X, matmul(A, X)), X, t * 10);  // X A X = X
            CHECK_NEAR_T(mH(matmul(A, X)), matmul(A, X), t);   // (A X)^H = A X
            CHECK_NEAR_T(mH(matmul(X, A)), matmul(X, A), t);   // (X A)^H = X A
            CHECK(linalg::matrix_rank(A).to_vector<int64_t>() ==
                  std::vector<int64_t>(static_cast<size_t>(numel(shape) / (m * n)), std::min(m, n)));
        }
        // Rank 2 of 4: the pseudo-inverse ignores the null space; the rank sees it.
        const Tensor U = random_matrix(rt, {4, 2}, dt, 111), V = random_matrix(rt, {2, 5}, dt, 112);
        const Tensor low = matmul(U, V);
        CHECK(linalg::matrix_rank(low).item<int64_t>() == 2);
        const Tensor X = linalg::pinv(low);
        CHECK_NEAR_T(matmul(low, matmul(X, low)), low, tol(dt, 5) * 1000);
        // A tolerance above every singular value: rank 0 and a zero pseudo-inverse.
        linalg::Tolerance huge;
        huge.atol = 1e6;
        CHECK(linalg::matrix_rank(low, huge).item<int64_t>() == 0);
        CHECK_NEAR_T(linalg::pinv(low, huge), rt.zeros({5, 4}, dt), 0.0);
        // Hermitian: through eigh, same answer as the SVD route.
        const Tensor H = random_matrix(rt, {5, 5}, dt, 113);
        const Tensor S = H + mH(H);
        linalg::Tolerance herm;
        herm.hermitian = true;
        CHECK_NEAR_T(linalg::pinv(S, herm), linalg::pinv(S), tol(dt, 5) * 1000);
        CHECK(linalg::matrix_rank(S, herm).item<int64_t>() == 5);
    }
}

TEST_CASE("linalg values: vector_norm for every order, over chosen axes, with keepdim", "[linalg]") {
    const Runtime rt = linalg_runtime();
    const std::vector<double> v = {3, -4, 0, 1e-200, 12};
    const Tensor x = rt.tensor<double>(v, {5});
    auto norm = [&](double ord) { return linalg::vector_norm(x, ord).item<double>(); };
    CHECK(norm(2) == Approx(13.0));
    CHECK(norm(1) == Approx(19.0));
    CHECK(norm(INFINITY) == 12.0);
    CHECK(norm(-INFINITY) == 0.0);
    CHECK(norm(0) == 4.0);
    CHECK(norm(3) == Approx(std::cbrt(27.0 + 64 + 1728)));
    CHECK(norm(-1.5) == 0.0);  // a zero element
    CHECK(norm(0.5) == Approx(std::pow(std::sqrt(3.0) + 2 + std::sqrt(12.0), 2)));
    // No overflow or underflow: scaled by the largest magnitude first.
    CHECK(linalg::vector_norm(rt.tensor<double>({3e300, 4e300}, {2})).item<double>() == Approx(5e300));
    CHECK(linalg::vector_norm(rt.tensor<double>({3e-300, 4e-300}, {2})).item<double>() == Approx(5e-300));
    // Complex: |z|; axes and keepdim on a strided view.
    const Tensor z = rt.tensor<std::complex<double>>({{3, 4}, {0, 0}, {1, 0}, {0, 2}}, {2, 2});
    check_close(linalg::vector_norm(z, 2, {1}).to_vector<double>(), std::vector<double>{5.0, std::sqrt(5.0)});
    check_close(linalg::vector_norm(z.mT(), 1, {0}, true).to_vector<double>(), std::vector<double>{5.0, 3.0});
    CHECK(linalg::vector_norm(z.mT(), 1, {0}, true).shape() == Shape{1, 2});
    for (DType dt : all_dtypes) {
        const Tensor a = random_matrix(rt, {3, 4, 5}, dt, 120);
        const Tensor sq = (a * a.conj()).real();
        CHECK_NEAR_T(linalg::vector_norm(a, 2, {0, 2}), sq.sum({0, 2}).sqrt(), tol(dt, 20));
        CHECK_NEAR_T(linalg::vector_norm(a, 2), sq.sum().sqrt(), tol(dt, 60));
    }
    check_error([&] { linalg::vector_norm(x, 2, {1}); }, FERRO_INVALID_ARGUMENT,
                "linalg.vector_norm: axes entry 0 is 1, out of range for input 0 with 1 dimensions");
    check_error([&] { linalg::vector_norm(rt.zeros({2, 2}), 2, {0, -2}); }, FERRO_INVALID_ARGUMENT, "repeats axis 0");
    check_error([&] { linalg::vector_norm(rt.zeros({0}), INFINITY); }, FERRO_INVALID_ARGUMENT,
                "linalg.vector_norm: the inf-norm of an empty reduction is undefined");
    CHECK(linalg::vector_norm(rt.zeros({0})).item<double>() == 0.0);
}

TEST_CASE("linalg values: matrix_norm for every order, on chosen axes, against direct definitions", "[linalg]") {
    const Runtime rt = linalg_runtime();
    const Tensor A = rt.tensor<double>({1, -2, 3, -4, 5, 6}, {2, 3});  // columns sums 5, 7, 9; row sums 6, 15
    auto norm = [&](const char* ord) { return linalg::matrix_norm(A, ord).item<double>(); };
    CHECK(norm("fro") == Approx(std::sqrt(91.0)));
    CHECK(norm("1") == 9.0);
    CHECK(norm("-1") == 5.0);
    CHECK(norm("inf") == 15.0);
    CHECK(norm("-inf") == 6.0);
    const auto s = linalg::svdvals(A).to_vector<double>();
    CHECK(norm("2") == Approx(s[0]));
    CHECK(norm("-2") == Approx(s[1]));
    CHECK(norm("nuc") == Approx(s[0] + s[1]));
    for (DType dt : all_dtypes) {
        INFO(name_of(dt));
        const Tensor B = random_matrix(rt, {4, 2, 5}, dt, 130);
        // The matrices on axes (2, 0): the same as moving them last first.
        const Tensor moved = B.permute({1, 2, 0});
        for (const char* ord : {"fro", "nuc", "inf", "-inf", "1", "-1", "2", "-2"}) {
            INFO(ord);
            CHECK_NEAR_T(linalg::matrix_norm(B, ord, {2, 0}), linalg::matrix_norm(moved, ord), tol(dt, 5) * 10);
        }
        CHECK(linalg::matrix_norm(B, "fro", {2, 0}, true).shape() == Shape{1, 2, 1});
        CHECK_NEAR_T(linalg::matrix_norm(B), linalg::vector_norm(B, 2, {-2, -1}), tol(dt, 10));
    }
    check_error([&] { linalg::matrix_norm(A, "3"); }, FERRO_INVALID_ARGUMENT,
                "linalg.matrix_norm: attribute ord must be one of fro, nuc, inf, -inf, 1, -1, 2, -2, got \"3\"");
    check_error([&] { linalg::matrix_norm(A, "fro", {1, -1}); }, FERRO_INVALID_ARGUMENT, "axes entry 1 repeats axis 1");
    check_error(
        [&] {
            linalg::matrix_norm(rt.zeros({0, 3}), "2");
        },
        FERRO_INVALID_ARGUMENT, "linalg.matrix_norm: the 2-norm of an empty matrix is undefined");
    CHECK(linalg::matrix_norm(rt.zeros({0, 3}), "nuc").item<double>() == 0.0);
}

TEST_CASE("linalg values: cond in every norm, inf for singular matrices", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : all_dtypes) {
        INFO(name_of(dt));
        const Tensor A = random_matrix(rt, {2, 4, 4}, dt, 140) + rt.eye(4, dt) * 2.0;
        const Tensor s = linalg::svdvals(A);
        CHECK_NEAR_T(linalg::cond(A), s.slice(-1, 0, 1).squeeze() / s.slice(-1, 3, 4).squeeze(), tol(dt, 4) * 100);
        for (const char* p : {"fro", "nuc", "inf", "-inf", "1", "-1", "-2"}) {
            INFO(p);
            const Tensor want = linalg::matrix_norm(A, p) * linalg::matrix_norm(linalg::inv(A), p);
            CHECK_NEAR_T(linalg::cond(A, p), want, tol(dt, 4) * 100 * want.abs().max().to(DType::f64).item<double>());
        }
        const Tensor wide = random_matrix(rt, {3, 5}, dt, 141);
        const Tensor sw = linalg::svdvals(wide);
        CHECK_NEAR_T(linalg::cond(wide), sw.slice(-1, 0, 1).squeeze() / sw.slice(-1, 2, 3).squeeze(), tol(dt, 5) * 100);
    }
    const Tensor S = rt.tensor<double>({1, 2, 2, 4}, {2, 2});
    CHECK(linalg::cond(S).item<double>() > 1e15);            // the SVD sees a rounding-sized smallest value, as numpy
    CHECK(std::isinf(linalg::cond(S, "1").item<double>()));  // LU finds the exact zero pivot
    check_error([&] { linalg::cond(rt.zeros({3, 4}), "fro"); }, FERRO_INVALID_ARGUMENT, "linalg.cond: input 0 must be square");
}

TEST_CASE("linalg values: lstsq solves over- and underdetermined systems, with residuals, rank and singular values", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : all_dtypes) {
        INFO(name_of(dt));
        // Overdetermined: the normal equations hold, residuals are the squared column norms.
        const Tensor A = random_matrix(rt, {2, 6, 3}, dt, 150), B = random_matrix(rt, {6, 2}, dt, 151);
        const auto r = linalg::lstsq(A, B);
        CHECK(r.solution.shape() == Shape{2, 3, 2});
        CHECK_NEAR_T(matmul(mH(A), matmul(A, r.solution) - B), rt.zeros({2, 3, 2}, dt), tol(dt, 6) * 10);
        const Tensor R = matmul(A, r.solution) - B;
        CHECK_NEAR_T(r.residuals, (R * R.conj()).real().sum({-2}), tol(dt, 6) * 10);
        CHECK(r.rank.to_vector<int64_t>() == std::vector<int64_t>{3, 3});
        CHECK_NEAR_T(r.singular_values, linalg::svdvals(A), tol(dt, 6));
        CHECK_NEAR_T(r.solution, matmul(linalg::pinv(A), B), tol(dt, 6) * 10);
        // Underdetermined: the minimum-norm solution, pinv(A) B; no residuals.
        const Tensor W = random_matrix(rt, {3, 5}, dt, 152), C = random_matrix(rt, {3, 1}, dt, 153);
        const auto u = linalg::lstsq(W, C);
        CHECK_NEAR_T(u.solution, matmul(linalg::pinv(W), C), tol(dt, 5) * 10);
        CHECK(u.residuals.shape() == Shape{0});
        // Rank deficient: rank 1, and the residuals computed from A X - B.
        const Tensor L = matmul(random_matrix(rt, {5, 1}, dt, 154), random_matrix(rt, {1, 3}, dt, 155));
        const auto d = linalg::lstsq(L, B.slice(0, 0, 5));
        CHECK(d.rank.item<int64_t>() == 1);
        const Tensor Rd = matmul(L, d.solution) - B.slice(0, 0, 5);
        CHECK_NEAR_T(d.residuals, (Rd * Rd.conj()).real().sum({-2}), tol(dt, 5) * 100);
        CHECK(linalg::lstsq(A, B, std::nullopt, "gelsy").residuals.shape() == Shape{0});
    }
    check_error(
        [&] {
            linalg::lstsq(rt.eye(3), rt.zeros({4, 1}));
        },
        FERRO_INVALID_ARGUMENT,
        "linalg.lstsq: input 1 (B) has shape [4, 1], expected [..., 3, k] to match input 0 of shape [3, 3]");
    check_error(
        [&] {
            linalg::lstsq(rt.eye(3), rt.zeros({3, 1}), std::nullopt, "qr");
        },
        FERRO_INVALID_ARGUMENT, "linalg.lstsq: attribute driver must be gelsd, gelss, gelsy or gels, got \"qr\"");
}

TEST_CASE("linalg values: inverse_gaps of eigenvalues and of squared singular values, batched and strided", "[linalg]") {
    const Runtime rt = linalg_runtime();
    for (DType dt : {DType::f32, DType::f64}) {
        INFO(name_of(dt));
        const Tensor x = rt.tensor<double>({3, 1, 2}, {3}).to(dt);
        const Tensor F = rt.tensor<double>({0, -0.5, -1, 0.5, 0, 1, 1, -1, 0}, {3, 3});  // 1/(x_j - x_i)
        CHECK_NEAR_T(linalg::inverse_gaps(x), F.to(dt), tol(dt));
        const Tensor F2 = rt.tensor<double>({0, -1. / 8, -1. / 5, 1. / 8, 0, 1. / 3, 1. / 5, -1. / 3, 0}, {3, 3});
        CHECK_NEAR_T(linalg::inverse_gaps(x, 0, true), F2.to(dt), tol(dt));  // 1/(x_j^2 - x_i^2)
        // eps: d / (d^2 + eps), still 0 on the diagonal; a repeated value gives 0, not inf.
        const Tensor r = linalg::inverse_gaps(rt.tensor<double>({1, 1, 3}, {3}).to(dt), 0.5);
        const Tensor R = rt.tensor<double>({0, 0, 2 / 4.5, 0, 0, 2 / 4.5, -2 / 4.5, -2 / 4.5, 0}, {3, 3});
        CHECK_NEAR_T(r, R.to(dt), tol(dt));
        // A batch read through a transposed view equals the batch of its rows, one by one.
        const Tensor X = random_matrix(rt, {4, 2}, dt, 160).mT();  // [2, 4], column stride 2
        const Tensor B = linalg::inverse_gaps(X, 0, true);
        CHECK(B.shape() == Shape{2, 4, 4});
        for (int64_t b = 0; b < 2; ++b) {
            const Tensor row = X.slice(0, b, b + 1).squeeze().contiguous();
            CHECK_NEAR_T(B.slice(0, b, b + 1).squeeze(), linalg::inverse_gaps(row, 0, true), 0.0);
        }
        CHECK(linalg::inverse_gaps(rt.zeros({0, 3}, dt)).shape() == Shape{0, 3, 3});
        CHECK(linalg::inverse_gaps(rt.zeros({2, 0}, dt)).shape() == Shape{2, 0, 0});
    }
    check_error([&] { linalg::inverse_gaps(rt.zeros({3}, DType::c128)); }, FERRO_INVALID_ARGUMENT,
                "linalg.inverse_gaps: input 0 must be f32 or f64 (eigenvalues or singular values), got c128");
    check_error(
        [&] { linalg::inverse_gaps(rt.zeros({})); }, FERRO_INVALID_ARGUMENT,
        "linalg.inverse_gaps: input 0 must be a vector or a batch of vectors ([..., n], at most 63 dimensions), got shape []");
    check_error([&] { linalg::inverse_gaps(rt.zeros({3}), -1); }, FERRO_INVALID_ARGUMENT,
                "linalg.inverse_gaps: attribute eps must be >= 0, got -1.000000");
}
