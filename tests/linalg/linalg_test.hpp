// Shared by the linalg suites: a runtime with libferro_linalg.so loaded, seeded matrices of
// every dtype, and checks by residual (reconstruction, orthonormality) with a tolerance
// scaled to the dtype and the matrix size.
#pragma once

#include "ferro_test.hpp"

#include <string>

namespace ferro::test {

inline Runtime linalg_runtime() {
    Runtime rt = make_runtime();
    rt.load_plugin(build_dir() + "/lib/ferro/plugins/libferro_linalg.so");
    return rt;
}

inline const DType all_dtypes[] = {DType::f32, DType::f64, DType::c64, DType::c128};

inline bool is_complex(DType d) { return d == DType::c64 || d == DType::c128; }
inline bool is_single(DType d) { return d == DType::f32 || d == DType::c64; }
inline DType real_of(DType d) { return d == DType::c64 ? DType::f32 : d == DType::c128 ? DType::f64 : d; }
inline std::string name_of(DType d) { return dtype_name(d); }

inline int64_t numel(const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

// Entries uniform in [-1, 1) (real and imaginary parts) of the given dtype.
inline Tensor random_matrix(const Runtime& rt, Shape shape, DType dtype, uint32_t seed) {
    const size_t n = static_cast<size_t>(numel(shape));
    if (is_complex(dtype)) return rt.tensor<std::complex<double>>(random_complex(n, seed), std::move(shape)).to(dtype);
    return rt.tensor<double>(random_values(n, seed), std::move(shape)).to(dtype);
}

// I of size n broadcast against a batch, as dtype.
inline Tensor identity(const Runtime& rt, int64_t n, DType dtype) { return rt.eye(n, dtype); }

// A well-conditioned n x n (batch) matrix: random + n I.
inline Tensor well_conditioned(const Runtime& rt, Shape shape, DType dtype, uint32_t seed) {
    const int64_t n = shape.back();
    return random_matrix(rt, shape, dtype, seed) + rt.eye(n, dtype) * static_cast<double>(n);
}

inline Tensor mH(const Tensor& a) { return is_complex(a.dtype()) ? a.mT().conj() : a.mT(); }

// Largest |a - b| over all elements (broadcasting), as a double.
inline double max_diff(const Tensor& a, const Tensor& b) {
    const Tensor d = (a - b).abs();
    if (d.numel() == 0) return 0.0;
    return d.max().to(DType::f64).item<double>();
}

// Tolerance for residuals of a computation on n x n-ish matrices in `dtype`.
inline double tol(DType dtype, int64_t n = 4) {
    return (is_single(dtype) ? 2e-5 : 1e-13) * static_cast<double>(std::max<int64_t>(n, 4)) * 10;
}

#define CHECK_NEAR_T(a, b, t)                                                      \
    do {                                                                           \
        const double diff_ = ::ferro::test::max_diff((a), (b));                    \
        INFO("max |" #a " - " #b "| = " << diff_ << " (tolerance " << (t) << ")"); \
        CHECK(diff_ <= (t));                                                       \
    } while (0)

}  // namespace ferro::test
