// The cuSOLVER module's arithmetic on getrf's results (lu_math.cuh), run on the host on the
// LAPACK module's LU factors: determinants, signs and log|det| equal linalg.det and
// linalg.slogdet, and the permutation equals linalg.lu's P, in every float dtype, with a row
// exchange at every step, a singular matrix and a wide and a tall one.
#include "ops_host.hpp"

#include "engine_conformance.hpp"

#include <ferro/gradcheck.hpp>
#include <ferro/linalg.hpp>

#include <cstring>

using namespace ferro;
using namespace ferro::test;

namespace {

// Raw bytes of a cpu tensor of a float dtype, row-major.
std::vector<unsigned char> raw_bytes(const Tensor& t) {
    std::vector<unsigned char> out(static_cast<size_t>(t.numel()) * (FERRO_DTYPE_BITS(static_cast<ferro_dtype>(t.dtype())) / 8));
    auto put = [&](const auto& v) { std::memcpy(out.data(), v.data(), out.size()); };
    switch (t.dtype()) {
        case DType::f32: put(t.to_vector<float>()); break;
        case DType::f64: put(t.to_vector<double>()); break;
        case DType::c64: put(t.to_vector<std::complex<float>>()); break;
        default: put(t.to_vector<std::complex<double>>()); break;
    }
    return out;
}

std::complex<double> value_at(const std::vector<unsigned char>& bytes, DType d, size_t i) {
    switch (d) {
        case DType::f32: {
            float x;
            std::memcpy(&x, bytes.data() + 4 * i, 4);
            return x;
        }
        case DType::f64: {
            double x;
            std::memcpy(&x, bytes.data() + 8 * i, 8);
            return x;
        }
        case DType::c64: {
            std::complex<float> x;
            std::memcpy(&x, bytes.data() + 8 * i, 8);
            return std::complex<double>(x);
        }
        default: {
            std::complex<double> x;
            std::memcpy(&x, bytes.data() + 16 * i, 16);
            return x;
        }
    }
}

}  // namespace

TEST_CASE("cuda linalg arithmetic: determinants and permutations from LU factors on the host agree with the LAPACK module",
          "[cuda-probe]") {
    Runtime rt = make_runtime();
    rt.load_plugin(build_dir() + "/lib/ferro/plugins/libferro_linalg.so");
    for (DType dt : {DType::f32, DType::f64, DType::c64, DType::c128}) {
        INFO(dtype_name(dt));
        const double tol = is_single_dtype(dt) ? 1e-5 : 1e-12;
        // A first column growing down the rows (the first pivot is the last row, and the sign of
        // the determinant depends on the exchanges), then a singular matrix.
        const Tensor growing = rt.tensor<double>({1, 2, 3, 4, 5}, {5, 1}) * rt.tensor<double>({3, 0, 0, 0, 0}, {1, 5});
        const Tensor pivoting = seeded_input(rt, {5, 5}, dt, 1) + growing.to(dt);
        const Tensor singular = rt.tensor<double>({1, 2, 3, 2, 4, 6, 1, 1, 1}, {3, 3}).to(dt);
        for (const Tensor* a : {&pivoting, &singular}) {
            const int64_t n = a->shape()[0];
            const auto f = linalg::lu_factor(*a);
            const std::vector<unsigned char> lu = raw_bytes(f.LU);  // the diagonal sits at i + i n in either order
            const std::vector<int64_t> piv = f.pivots.to_vector<int64_t>();
            if (a == &pivoting) CHECK(piv[0] == 5);
            std::vector<unsigned char> det(16), sign(16), logabs(8);
            REQUIRE(ferro::linalg::cuda::host::determinant(static_cast<ferro_dtype>(dt), lu.data(), piv.data(), n, det.data(),
                                                           nullptr));
            REQUIRE(ferro::linalg::cuda::host::determinant(static_cast<ferro_dtype>(dt), lu.data(), piv.data(), n, sign.data(),
                                                           logabs.data()));
            const auto want = linalg::slogdet(*a);
            check_close(std::vector<std::complex<double>>{value_at(det, dt, 0)}, detail::values_of(linalg::det(*a)), tol, tol);
            check_close(std::vector<std::complex<double>>{value_at(sign, dt, 0)}, detail::values_of(want.sign), tol, tol);
            const DType real = is_single_dtype(dt) ? DType::f32 : DType::f64;
            check_close(std::vector<std::complex<double>>{value_at(logabs, real, 0)}, detail::values_of(want.logabsdet), tol,
                        tol);
        }
        for (const Shape& shape : {Shape{5, 5}, Shape{6, 3}, Shape{3, 6}}) {
            const Tensor a = seeded_input(rt, shape, dt, 2);
            const int64_t m = shape[0], k = std::min(shape[0], shape[1]);
            const auto f = linalg::lu_factor(a);
            const std::vector<int64_t> piv = f.pivots.to_vector<int64_t>();
            std::vector<unsigned char> p(static_cast<size_t>(m * m) * 16);
            REQUIRE(ferro::linalg::cuda::host::permutation(static_cast<ferro_dtype>(dt), piv.data(), m, k, p.data()));
            const std::vector<std::complex<double>> want = detail::values_of(linalg::lu(a).P);  // row-major
            for (int64_t r = 0; r < m; ++r) {
                for (int64_t c = 0; c < m; ++c) {
                    INFO("P[" << r << ", " << c << "]");
                    CHECK(value_at(p, dt, static_cast<size_t>(r + c * m)) == want[static_cast<size_t>(r * m + c)]);
                }
            }
        }
    }
}
