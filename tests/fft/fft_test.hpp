// Shared by the fft suites: a runtime with libferro_fft.so loaded, seeded inputs of every
// dtype, and a naive O(n^2) reference of numpy.fft's definitions to check values against.
#pragma once

#include "ferro_test.hpp"

#include <ferro/gradcheck.hpp>

#include <cmath>
#include <complex>
#include <numbers>
#include <string>
#include <vector>

namespace ferro::test {

using cd = std::complex<double>;

inline Runtime fft_runtime() {
    Runtime rt = make_runtime();
    rt.load_plugin(build_dir() + "/lib/ferro/plugins/libferro_fft.so");
    return rt;
}

inline const DType all_dtypes[] = {DType::f32, DType::f64, DType::c64, DType::c128};
inline bool is_complex(DType d) { return d == DType::c64 || d == DType::c128; }
inline bool is_single(DType d) { return d == DType::f32 || d == DType::c64; }
inline std::string name_of(DType d) { return dtype_name(d); }

inline int64_t count(const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

// Uniform in [-1, 1) (real and imaginary parts), of the given dtype.
inline Tensor random_signal(const Runtime& rt, const Shape& shape, DType dtype, uint32_t seed) {
    const size_t n = static_cast<size_t>(count(shape));
    if (is_complex(dtype)) return rt.tensor<cd>(random_complex(n, seed), shape).to(dtype);
    return rt.tensor<double>(random_values(n, seed), shape).to(dtype);
}

// A host array of complex doubles (real data has zero imaginary parts), row-major.
struct Array {
    Shape shape;
    std::vector<cd> v;

    static Array of(const Tensor& t) { return {t.shape(), ferro::detail::values_of(t)}; }

    // Applies f to every 1-D line along `axis`; f may change the line's length.
    template <class F> Array along(int64_t axis, F&& f) const {
        const size_t a = static_cast<size_t>(axis);
        int64_t outer = 1, inner = 1;
        for (size_t d = 0; d < a; ++d) outer *= shape[d];
        for (size_t d = a + 1; d < shape.size(); ++d) inner *= shape[d];
        const int64_t n = shape[a];
        Array out;
        out.shape = shape;
        int64_t m = -1;
        for (int64_t o = 0; o < outer; ++o) {
            for (int64_t i = 0; i < inner; ++i) {
                std::vector<cd> line(static_cast<size_t>(n));
                for (int64_t k = 0; k < n; ++k) line[static_cast<size_t>(k)] = v[static_cast<size_t>((o * n + k) * inner + i)];
                const std::vector<cd> r = f(line);
                if (m < 0) {
                    m = static_cast<int64_t>(r.size());
                    out.shape[a] = m;
                    out.v.assign(static_cast<size_t>(outer * m * inner), cd(0));
                }
                for (int64_t k = 0; k < m; ++k) out.v[static_cast<size_t>((o * m + k) * inner + i)] = r[static_cast<size_t>(k)];
            }
        }
        if (m < 0) {  // no lines (an empty dimension elsewhere): only the shape changes
            out.shape[a] = static_cast<int64_t>(f(std::vector<cd>(static_cast<size_t>(n))).size());
        }
        return out;
    }
};

// numpy's n: truncate or zero-pad.
inline std::vector<cd> fit(std::vector<cd> x, int64_t n) {
    x.resize(static_cast<size_t>(n), cd(0));
    return x;
}
// sum_j x_j exp(sign 2 pi i j k / n), unnormalised; the n roots of unity are computed once.
inline std::vector<cd> dft(const std::vector<cd>& x, int sign) {
    const size_t n = x.size();
    std::vector<cd> root(n), y(n);
    const double turn = sign * 2 * std::numbers::pi / static_cast<double>(n);
    for (size_t m = 0; m < n; ++m) root[m] = std::polar(1.0, turn * static_cast<double>(m));
    for (size_t k = 0; k < n; ++k) {
        cd s = 0;
        for (size_t j = 0, jk = 0; j < n; ++j, jk = jk + k >= n ? jk + k - n : jk + k) s += x[j] * root[jk];  // jk = j k mod n
        y[k] = s;
    }
    return y;
}
// n real points from a half spectrum (fitted to n/2 + 1), extended by Hermitian symmetry.
inline std::vector<cd> c2r(const std::vector<cd>& half, int64_t n) {
    const std::vector<cd> h = fit(half, n / 2 + 1);
    std::vector<cd> full(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j)
        full[static_cast<size_t>(j)] = j <= n / 2 ? h[static_cast<size_t>(j)] : std::conj(h[static_cast<size_t>(n - j)]);
    std::vector<cd> y = dft(full, 1);
    for (cd& e : y) e = e.real();
    return y;
}

enum class RefKind { c2c_forward, c2c_inverse, r2c, c2r };

// numpy's definitions, unnormalised: c2c along every axis; rfftn = rfft on the last axis, then
// fft on the others; irfftn = ifft on all but the last axis, then irfft on the last.
inline Array reference(const Array& x, RefKind kind, const std::vector<int64_t>& axes, const std::vector<int64_t>& lengths) {
    Array y = x;
    const size_t last = axes.size() - 1;
    if (kind == RefKind::r2c) {
        const int64_t n = lengths[last];
        y = y.along(axes[last], [&](const std::vector<cd>& l) {
            std::vector<cd> r = dft(fit(l, n), -1);
            r.resize(static_cast<size_t>(n / 2 + 1));
            return r;
        });
    }
    for (size_t i = 0; i < axes.size(); ++i) {
        if (kind != RefKind::c2c_forward && kind != RefKind::c2c_inverse && i == last) continue;
        const int sign = kind == RefKind::c2c_forward || kind == RefKind::r2c ? -1 : 1;
        y = y.along(axes[i], [&](const std::vector<cd>& l) { return dft(fit(l, lengths[i]), sign); });
    }
    if (kind == RefKind::c2r) y = y.along(axes[last], [&](const std::vector<cd>& l) { return c2r(l, lengths[last]); });
    return y;
}

// Through squared magnitudes (std::abs is a hypot call, most of the time of a test that
// compares a few million elements).
inline double max_abs(const std::vector<cd>& v) {
    double m = 0;
    for (const cd& e : v) m = std::max(m, std::norm(e));
    return std::sqrt(m);
}

// max |a - b| over max(1, |b|): the relative error of a whole result.
inline double relative_error(const Array& a, const Array& b) {
    if (a.shape != b.shape) return INFINITY;
    double m = 0;
    for (size_t i = 0; i < a.v.size(); ++i) m = std::max(m, std::norm(a.v[i] - b.v[i]));
    return std::sqrt(m) / std::max(1.0, max_abs(b.v));
}

inline double tolerance(DType d) { return is_single(d) ? 2e-6 : 1e-13; }

}  // namespace ferro::test
