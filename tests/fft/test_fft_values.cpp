// fft values: every op against a naive DFT of numpy's definitions for small sizes of every
// kind (1, powers of two, odd, primes), every dtype, norm, n / s padding and truncation and
// several axes; identities (round trip, Parseval, linearity, real-input symmetry) at large
// sizes; strided views; planner efforts and wisdom; fftfreq and fftshift.
#include "fft_test.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>

using namespace ferro;
using namespace ferro::test;

namespace {

const char* const norms[] = {"backward", "ortho", "forward"};

// numpy's scale of a transform of logical size N: inverse ones are 1/N under "backward".
double scale_of(const std::string& norm, bool inverse, int64_t size) {
    const double n = static_cast<double>(size);
    if (norm == "ortho") return 1 / std::sqrt(n);
    return (norm == "backward") == inverse ? 1 / n : 1.0;
}

Array scaled(Array a, double s, bool conj = false) {
    for (cd& e : a.v) e = (conj ? std::conj(e) : e) * s;
    return a;
}

// The expected result of a 1-D op by name.
Array expected_1d(const std::string& op, const Array& x, std::optional<int64_t> n, int64_t axis, const std::string& norm) {
    const int64_t a = axis < 0 ? axis + static_cast<int64_t>(x.shape.size()) : axis;
    const int64_t m = x.shape[static_cast<size_t>(a)];
    const bool to_real = op == "irfft" || op == "hfft";
    const int64_t len = n ? *n : to_real ? 2 * (m - 1) : m;
    if (op == "fft") return scaled(reference(x, RefKind::c2c_forward, {a}, {len}), scale_of(norm, false, len));
    if (op == "ifft") return scaled(reference(x, RefKind::c2c_inverse, {a}, {len}), scale_of(norm, true, len));
    if (op == "rfft") return scaled(reference(x, RefKind::r2c, {a}, {len}), scale_of(norm, false, len));
    if (op == "irfft") return scaled(reference(x, RefKind::c2r, {a}, {len}), scale_of(norm, true, len));
    if (op == "hfft") return scaled(reference(scaled(x, 1.0, true), RefKind::c2r, {a}, {len}), scale_of(norm, false, len));
    return scaled(reference(x, RefKind::r2c, {a}, {len}), scale_of(norm, true, len), /*conj=*/true);  // ihfft
}

Tensor run_1d(const std::string& op, const Tensor& x, std::optional<int64_t> n, int64_t axis, const std::string& norm) {
    if (op == "fft") return fft::fft(x, n, axis, norm);
    if (op == "ifft") return fft::ifft(x, n, axis, norm);
    if (op == "rfft") return fft::rfft(x, n, axis, norm);
    if (op == "irfft") return fft::irfft(x, n, axis, norm);
    if (op == "hfft") return fft::hfft(x, n, axis, norm);
    return fft::ihfft(x, n, axis, norm);
}

bool real_input_only(const std::string& op) { return op == "rfft" || op == "ihfft"; }

}  // namespace

TEST_CASE("fft values: every 1-D op against a naive DFT for sizes 1 to 17, every dtype, norm and n", "[fft]") {
    const Runtime rt = fft_runtime();
    for (const std::string op : {"fft", "ifft", "rfft", "irfft", "hfft", "ihfft"}) {
        for (DType dt : all_dtypes) {
            if (real_input_only(op) && is_complex(dt)) continue;
            for (int64_t size : {1, 2, 3, 4, 5, 7, 8, 12, 13, 16, 17}) {
                const bool to_real = op == "irfft" || op == "hfft";
                const Tensor x = random_signal(rt, {3, size}, dt, static_cast<uint32_t>(size));
                for (std::optional<int64_t> n : {std::optional<int64_t>{}, std::optional<int64_t>{size + 3},
                                                 std::optional<int64_t>{std::max<int64_t>(1, size - 2)}}) {
                    if (to_real && !n && size == 1) continue;  // 2 (m - 1) = 0 points: an error (test_fft_errors)
                    for (const char* norm : norms) {
                        INFO(op << " " << name_of(dt) << " size " << size << " n " << (n ? std::to_string(*n) : "None") << " "
                                << norm);
                        const Tensor y = run_1d(op, x, n, -1, norm);
                        const Array want = expected_1d(op, Array::of(x), n, -1, norm);
                        CHECK(y.shape() == want.shape);
                        const DType out =
                            to_real ? (is_single(dt) ? DType::f32 : DType::f64) : (is_single(dt) ? DType::c64 : DType::c128);
                        CHECK(y.dtype() == out);
                        const double err = relative_error(Array::of(y), want);
                        INFO("relative error " << err);
                        CHECK(err <= tolerance(dt) * 10);
                    }
                }
            }
        }
    }
}

TEST_CASE("fft values: 1-D ops along a middle axis, and negative axes", "[fft]") {
    const Runtime rt = fft_runtime();
    const Tensor x = random_signal(rt, {2, 6, 5}, DType::c128, 7), xr = random_signal(rt, {2, 6, 5}, DType::f64, 8);
    for (const std::string op : {"fft", "ifft", "rfft", "irfft", "hfft", "ihfft"}) {
        const Tensor& in = real_input_only(op) ? xr : x;
        for (int64_t axis : {0, 1, -2, -3}) {
            INFO(op << " axis " << axis);
            CHECK(relative_error(Array::of(run_1d(op, in, 4, axis, "ortho")), expected_1d(op, Array::of(in), 4, axis, "ortho")) <=
                  1e-13);
        }
    }
}

TEST_CASE("fft values: 2-D and N-D ops over chosen axes with s, every dtype and norm", "[fft]") {
    const Runtime rt = fft_runtime();
    struct Case {
        std::vector<int64_t> axes;
        std::optional<std::vector<int64_t>> s;
    };
    const Case cases[] = {{{1, 2}, {}},
                          {{0, 2}, std::vector<int64_t>{5, 3}},
                          {{2, 0}, std::vector<int64_t>{4, 6}},
                          {{0, 1, 2}, std::vector<int64_t>{2, 7, 5}},
                          {{1}, {}},
                          {{2, 1, 0}, {}}};
    for (DType dt : all_dtypes) {
        const Tensor x = random_signal(rt, {3, 4, 5}, dt, 11);
        for (const Case& c : cases) {
            for (const char* norm : norms) {
                std::vector<int64_t> lengths;
                for (size_t i = 0; i < c.axes.size(); ++i) {
                    lengths.push_back(c.s ? (*c.s)[i] : x.shape()[static_cast<size_t>(c.axes[i])]);
                }
                const int64_t size = count(lengths);
                std::string axes_str;
                for (int64_t a : c.axes) axes_str += std::to_string(a) + " ";
                INFO(name_of(dt) << " axes " << axes_str << (c.s ? "with s " : "") << norm);
                const Array X = Array::of(x);
                CHECK(relative_error(Array::of(fft::fftn(x, c.s, c.axes, norm)),
                                     scaled(reference(X, RefKind::c2c_forward, c.axes, lengths), scale_of(norm, false, size))) <=
                      tolerance(dt) * 10);
                CHECK(relative_error(Array::of(fft::ifftn(x, c.s, c.axes, norm)),
                                     scaled(reference(X, RefKind::c2c_inverse, c.axes, lengths), scale_of(norm, true, size))) <=
                      tolerance(dt) * 10);
                if (!is_complex(dt)) {
                    CHECK(relative_error(Array::of(fft::rfftn(x, c.s, c.axes, norm)),
                                         scaled(reference(X, RefKind::r2c, c.axes, lengths), scale_of(norm, false, size))) <=
                          tolerance(dt) * 10);
                }
                // irfftn: the last axis gives n real points from n/2 + 1 (padded or truncated).
                std::vector<int64_t> out_lengths = lengths;
                if (!c.s) out_lengths.back() = 2 * (lengths.back() - 1);
                CHECK(relative_error(Array::of(fft::irfftn(x, c.s, c.axes, norm)),
                                     scaled(reference(X, RefKind::c2r, c.axes, out_lengths),
                                            scale_of(norm, true, count(out_lengths)))) <= tolerance(dt) * 10);
                // hfftn (scipy.fft's): irfftn's transform of conj(x), scaled as a forward one.
                CHECK(relative_error(Array::of(fft::hfftn(x, c.s, c.axes, norm)),
                                     scaled(reference(scaled(X, 1.0, true), RefKind::c2r, c.axes, out_lengths),
                                            scale_of(norm, false, count(out_lengths)))) <= tolerance(dt) * 10);
                if (!is_complex(dt)) {  // ihfftn: conj of rfftn, scaled as an inverse
                    CHECK(relative_error(Array::of(fft::ihfftn(x, c.s, c.axes, norm)),
                                         scaled(reference(X, RefKind::r2c, c.axes, lengths), scale_of(norm, true, size), true)) <=
                          tolerance(dt) * 10);
                }
            }
        }
        // fft2 family: the last two axes by default; fftn: all axes, or the last len(s).
        const Array X = Array::of(x);
        CHECK(relative_error(Array::of(fft::fft2(x)), reference(X, RefKind::c2c_forward, {1, 2}, {4, 5})) <= tolerance(dt) * 10);
        CHECK(relative_error(Array::of(fft::ifft2(x, std::vector<int64_t>{3, 3})),
                             scaled(reference(X, RefKind::c2c_inverse, {1, 2}, {3, 3}), 1.0 / 9)) <= tolerance(dt) * 10);
        CHECK(relative_error(Array::of(fft::fftn(x)), reference(X, RefKind::c2c_forward, {0, 1, 2}, {3, 4, 5})) <=
              tolerance(dt) * 10);
        CHECK(relative_error(Array::of(fft::fftn(x, std::vector<int64_t>{6})), reference(X, RefKind::c2c_forward, {2}, {6})) <=
              tolerance(dt) * 10);
        CHECK(relative_error(Array::of(fft::irfft2(x)), scaled(reference(X, RefKind::c2r, {1, 2}, {4, 8}), 1.0 / 32)) <=
              tolerance(dt) * 10);
        if (!is_complex(dt)) {
            CHECK(relative_error(Array::of(fft::rfft2(x, std::nullopt, {0, 1})), reference(X, RefKind::r2c, {0, 1}, {3, 4})) <=
                  tolerance(dt) * 10);
        }
        // hfft2 and ihfft2: the last two axes by default; hfftn and ihfftn: all of them.
        CHECK(relative_error(Array::of(fft::hfft2(x)), reference(scaled(X, 1.0, true), RefKind::c2r, {1, 2}, {4, 8})) <=
              tolerance(dt) * 10);
        CHECK(relative_error(Array::of(fft::hfftn(x)), reference(scaled(X, 1.0, true), RefKind::c2r, {0, 1, 2}, {3, 4, 8})) <=
              tolerance(dt) * 10);
        if (!is_complex(dt)) {
            CHECK(relative_error(Array::of(fft::ihfft2(x)), scaled(reference(X, RefKind::r2c, {1, 2}, {4, 5}), 1.0 / 20, true)) <=
                  tolerance(dt) * 10);
            CHECK(relative_error(Array::of(fft::ihfftn(x, std::vector<int64_t>{6})),
                                 scaled(reference(X, RefKind::r2c, {2}, {6}), 1.0 / 6, true)) <= tolerance(dt) * 10);
        }
    }
}

TEST_CASE("fft values: identities at large sizes (round trip, Parseval, linearity, real-input symmetry)", "[fft]") {
    const Runtime rt = fft_runtime();
    for (int64_t n : {int64_t{1} << 16, int64_t{3 * 5 * 7 * 11 * 13}, int64_t{10007}, int64_t{4096 * 3 + 1}}) {
        for (DType dt : {DType::c128, DType::c64}) {
            INFO("n " << n << " " << name_of(dt));
            const double tol = is_single(dt) ? 1e-5 : 1e-12;
            const Tensor x = random_signal(rt, {n}, dt, 21), y = random_signal(rt, {n}, dt, 22);
            const Tensor X = fft::fft(x);
            CHECK(max_abs(Array::of(fft::ifft(X) - x).v) <= tol);
            // Parseval: sum |x|^2 = sum |X|^2 / n.
            const double ex = (x * x.conj()).real().sum().to(DType::f64).item<double>();
            const double eX = (X * X.conj()).real().sum().to(DType::f64).item<double>() / static_cast<double>(n);
            CHECK(std::abs(ex - eX) <= tol * ex);
            // Linearity: fft(2x - 3y) = 2 fft(x) - 3 fft(y).
            const Tensor lhs = fft::fft(x * 2.0 - y * 3.0), rhs = X * 2.0 - fft::fft(y) * 3.0;
            CHECK(max_abs(Array::of(lhs - rhs).v) <= tol * std::sqrt(static_cast<double>(n)) * 10);
        }
        for (DType dt : {DType::f64, DType::f32}) {
            INFO("real n " << n << " " << name_of(dt));
            const double tol = is_single(dt) ? 1e-5 : 1e-12;
            const Tensor x = random_signal(rt, {n}, dt, 23);
            const Tensor X = fft::fft(x), H = fft::rfft(x);
            // Real input: X[k] = conj(X[n - k]); rfft is the first n/2 + 1 of fft.
            const Array full = Array::of(X), half = Array::of(H);
            REQUIRE(static_cast<int64_t>(half.v.size()) == n / 2 + 1);
            double sym = 0, same = 0;
            for (int64_t k = 1; k < n; ++k) sym = std::max(sym, std::abs(full.v[k] - std::conj(full.v[n - k])));
            for (int64_t k = 0; k <= n / 2; ++k) same = std::max(same, std::abs(full.v[k] - half.v[k]));
            const double scale = max_abs(full.v);
            CHECK(sym <= tol * scale);
            CHECK(same <= tol * scale);
            // Round trips, odd lengths included: irfft(rfft(x), n) = x; ihfft / hfft likewise.
            CHECK(max_abs(Array::of(fft::irfft(H, n) - x).v) <= tol);
            CHECK(max_abs(Array::of(fft::hfft(fft::ihfft(x), n) - x).v) <= tol);
        }
    }
    // A large 2-D transform against two 1-D passes.
    const Tensor img = random_signal(rt, {512, 384}, DType::c128, 24);
    CHECK(max_abs(Array::of(fft::fft2(img) - fft::fft(fft::fft(img, std::nullopt, 0), std::nullopt, 1)).v) <= 1e-9);
}

// Estimate plans run an axis whose lines lie a multiple of 4 KiB apart and span 1 MiB or more
// as buffered passes (fft_exec.cpp): each route through them, in double and single precision.
TEST_CASE("fft values: estimate plans with buffered passes over long-strided axes for every kind of transform", "[fft]") {
    const Runtime rt = fft_runtime();
    struct Case {
        const char* what;
        Shape shape;
        DType dtype;
        RefKind kind;
        std::vector<int64_t> axes;
        std::optional<std::vector<int64_t>> s;
        const char* norm;
    };
    const Case cases[] = {
        {"fft2: a pass, then FFTW on the rows", {256, 256}, DType::c128, RefKind::c2c_forward, {0, 1}, {}, "backward"},
        {"fft along axis 0: the pass alone reads the input", {256, 512}, DType::c64, RefKind::c2c_forward, {0}, {}, "backward"},
        {"fft2 of 257 x 256: FFTW's plan in parts on the pool, the last shorter",
         {257, 256},
         DType::c64,
         RefKind::c2c_forward,
         {0, 1},
         {},
         "ortho"},
        {"fftn over axes 0 and 2 with a loop between", {64, 4, 256}, DType::c128, RefKind::c2c_forward, {0, 2}, {}, "forward"},
        {"ifft2 of a padded input, ortho",
         {200, 256},
         DType::c128,
         RefKind::c2c_inverse,
         {0, 1},
         std::vector<int64_t>{256, 256},
         "ortho"},
        {"rfftn: FFTW's r2c, then a pass on the half spectrum", {256, 32, 14}, DType::f64, RefKind::r2c, {0, 2}, {}, "backward"},
        {"irfftn: a pass on the half spectrum, then FFTW's c2r",
         {256, 32, 8},
         DType::c128,
         RefKind::c2r,
         {0, 2},
         std::vector<int64_t>{256, 14},
         "backward"},
        {"fftn of a real input: r2c, a pass, the mirrored half",
         {256, 64, 14},
         DType::f32,
         RefKind::c2c_forward,
         {0, 2},
         {},
         "backward"},
        {"ifftn of a real input", {256, 64, 14}, DType::f32, RefKind::c2c_inverse, {0, 2}, {}, "ortho"},
    };
    for (const Case& c : cases) {
        INFO(c.what << ", " << name_of(c.dtype));
        const Tensor x = random_signal(rt, c.shape, c.dtype, 31);
        std::vector<int64_t> lengths;
        for (size_t i = 0; i < c.axes.size(); ++i) lengths.push_back(c.s ? (*c.s)[i] : c.shape[static_cast<size_t>(c.axes[i])]);
        const bool inverse = c.kind == RefKind::c2c_inverse || c.kind == RefKind::c2r;
        Tensor y;
        switch (c.kind) {
            case RefKind::c2c_forward: y = fft::fftn(x, c.s, c.axes, c.norm); break;
            case RefKind::c2c_inverse: y = fft::ifftn(x, c.s, c.axes, c.norm); break;
            case RefKind::r2c: y = fft::rfftn(x, c.s, c.axes, c.norm); break;
            case RefKind::c2r: y = fft::irfftn(x, c.s, c.axes, c.norm); break;
        }
        const Array expected =
            scaled(reference(Array::of(x), c.kind, c.axes, lengths), scale_of(c.norm, inverse, count(lengths)));
        CHECK(relative_error(Array::of(y), expected) <= (is_single(c.dtype) ? 1e-5 : 1e-12));
    }
}

// 1-D c2c transforms of 2^16 points and more along the innermost axis, once larger than a
// core's L2 cache (2^18 c64 points are 2 MiB), run as two passes over a matrix view
// (fft_four_step.cpp). The same transforms along axis 0 of the transposed batch go
// through FFTW's own plan; a few bins are also summed directly in long double.
TEST_CASE("fft values: long 1-D transforms (four-step passes) against FFTW's plan and a direct sum", "[fft]") {
    const Runtime rt = fft_runtime();
    struct Case {
        int64_t n;
        const char* what;
    };
    const Case cases[] = {
        {int64_t{1} << 18, "512 x 512"},
        {1024 * 1031, "1024 x 1031: a shorter last block of columns"},
        {531441, "729 x 729 (3^12): shorter last blocks of columns and of rows"},
    };
    for (const Case& c : cases) {
        std::vector<std::complex<long double>> root(static_cast<size_t>(c.n));  // exp(-2 pi i m / n)
        for (int64_t m = 0; m < c.n; ++m) {
            root[static_cast<size_t>(m)] = std::polar(1.0L, -2 * std::numbers::pi_v<long double> * m / c.n);
        }
        for (DType dt : {DType::c128, DType::c64}) {
            const Tensor x = random_signal(rt, {2, c.n}, dt, 41);
            const std::vector<cd> v = Array::of(x).v;
            for (const char* op : {"fft", "ifft"}) {
                for (const char* norm : {"backward", "ortho", "forward"}) {
                    INFO(c.what << ", " << name_of(dt) << ", " << op << ", " << norm);
                    const Tensor y = run_1d(op, x, std::nullopt, -1, norm);
                    const Tensor by_fftw = run_1d(op, x.transpose(0, 1), std::nullopt, 0, norm).transpose(0, 1);
                    const Array got = Array::of(y);
                    CHECK(relative_error(got, Array::of(by_fftw)) <= (is_single(dt) ? 1e-5 : 1e-12));
                    if (dt != DType::c128 || std::string(norm) != "ortho") continue;
                    // X[k] of the second signal, summed directly.
                    const bool inverse = std::string(op) == "ifft";
                    double worst = 0;
                    for (int64_t k : {int64_t{0}, int64_t{1}, c.n / 3, c.n - 1}) {
                        std::complex<long double> s = 0;
                        for (int64_t j = 0; j < c.n; ++j) {
                            const std::complex<long double> w = root[static_cast<size_t>((j * k) % c.n)];
                            s += std::complex<long double>(v[static_cast<size_t>(c.n + j)]) * (inverse ? std::conj(w) : w);
                        }
                        const cd want(static_cast<cd>(s / std::sqrt(static_cast<long double>(c.n))));
                        worst = std::max(worst, std::abs(got.v[static_cast<size_t>(c.n + k)] - want));
                    }
                    CHECK(worst <= 1e-12);
                }
            }
        }
    }
    // Measured plans take the passes from 2^19 points, with sub-plans of that effort.
    const Tensor x = random_signal(rt, {int64_t{1} << 19}, DType::c64, 42);
    const Tensor by_fftw = fft::fft(x.reshape({int64_t{1} << 19, 1}).expand({int64_t{1} << 19, 2}), std::nullopt, 0);
    CHECK(relative_error(Array::of(fft::fft(x, std::nullopt, -1, "backward", "measure")),
                         Array::of(by_fftw.slice(1, 0, 1).reshape({int64_t{1} << 19}))) <= 1e-5);
}

TEST_CASE("fft values: strided, transposed and offset views give the results of contiguous copies", "[fft]") {
    const Runtime rt = fft_runtime();
    for (DType dt : all_dtypes) {
        INFO(name_of(dt));
        const Tensor big = random_signal(rt, {6, 10, 9}, dt, 31);
        const Tensor views[] = {big.transpose(0, 2), big.slice(1, 1, 9, 2), big.slice(2, 3, 8),
                                big.transpose(1, 2).slice(0, 2, 5)};
        for (const Tensor& v : views) {
            const Tensor c = v.contiguous();
            CHECK(relative_error(Array::of(fft::fftn(v, std::nullopt, std::vector<int64_t>{0, 2})),
                                 Array::of(fft::fftn(c, std::nullopt, std::vector<int64_t>{0, 2}))) <= tolerance(dt) * 10);
            CHECK(relative_error(Array::of(fft::irfft(v, 7, 1)), Array::of(fft::irfft(c, 7, 1))) <= tolerance(dt) * 10);
            if (!is_complex(dt)) {
                CHECK(relative_error(Array::of(fft::rfft2(v)), Array::of(fft::rfft2(c))) <= tolerance(dt) * 10);
            }
        }
    }
}

// A contiguous view FFTW could read in place, but one element into its buffer: misaligned for
// FFTW's SIMD plans in single precision, so the executor copies it first.
TEST_CASE("fft values: contiguous views at odd offsets (not aligned as FFTW planned) give the copies' results", "[fft]") {
    const Runtime rt = fft_runtime();
    for (DType dt : all_dtypes) {
        INFO(name_of(dt));
        const Tensor base = random_signal(rt, {257}, dt, 35);
        for (int64_t offset : {1, 2, 3}) {
            const Tensor v = base.slice(0, offset, 257 - 3 + offset);  // 254 points, same shape each time
            if (is_complex(dt)) {
                CHECK(relative_error(Array::of(fft::fft(v)), Array::of(fft::fft(v.contiguous()))) <= tolerance(dt));
            } else {
                CHECK(relative_error(Array::of(fft::rfft(v)), Array::of(fft::rfft(v.contiguous()))) <= tolerance(dt));
            }
        }
    }
}

TEST_CASE("fft values: edge shapes (empty batches, one point, no axes, 0-d)", "[fft]") {
    const Runtime rt = fft_runtime();
    const Tensor empty = random_signal(rt, {0, 8}, DType::c128, 41);
    CHECK(fft::fft(empty).shape() == Shape{0, 8});
    CHECK(fft::rfft(random_signal(rt, {3, 0, 8}, DType::f32, 42)).shape() == Shape{3, 0, 5});
    CHECK(fft::irfft(empty, 6).shape() == Shape{0, 6});
    const Tensor one = random_signal(rt, {4, 1}, DType::c64, 43);
    CHECK(relative_error(Array::of(fft::fft(one)), Array::of(one)) <= 1e-7);
    // No axes: the input, as complex (numpy's fftn(x, axes=())).
    const Tensor r = random_signal(rt, {2, 3}, DType::f64, 44);
    const Tensor same = fft::fftn(r, std::nullopt, std::vector<int64_t>{});
    CHECK(same.dtype() == DType::c128);
    CHECK(relative_error(Array::of(same), Array::of(r)) == 0.0);
    const Tensor scalar = rt.tensor<double>({2.5}, {});
    CHECK(fft::fftn(scalar).item<cd>() == cd(2.5));
}

TEST_CASE("fft values: measured plans give the estimated plans' results, and FERRO_FFT_WISDOM keeps them", "[fft]") {
    const Runtime rt = fft_runtime();
    const std::string prefix = build_dir() + "/fft_wisdom_test";
    std::remove((prefix + ".f64").c_str());
    setenv("FERRO_FFT_WISDOM", prefix.c_str(), 1);
    const Tensor x = random_signal(rt, {4, 360}, DType::c128, 51);
    for (const char* planner : {"measure", "patient"}) {
        INFO(planner);
        CHECK(relative_error(Array::of(fft::fft(x, std::nullopt, -1, "backward", planner)), Array::of(fft::fft(x))) <= 1e-13);
    }
    unsetenv("FERRO_FFT_WISDOM");
    std::ifstream wisdom(prefix + ".f64");
    REQUIRE(wisdom.good());
    std::string head;
    std::getline(wisdom, head);
    CHECK_THAT(head, Catch::Contains("fftw_wisdom"));
}

TEST_CASE("fft values: fftfreq, rfftfreq, fftshift and ifftshift as numpy defines them", "[fft]") {
    const Runtime rt = fft_runtime();
    CHECK(fft::fftfreq(rt, 5, 0.5).to_vector<double>() == std::vector<double>{0, 0.4, 0.8, -0.8, -0.4});
    CHECK(fft::fftfreq(rt, 4).to_vector<double>() == std::vector<double>{0, 0.25, -0.5, -0.25});
    CHECK(fft::rfftfreq(rt, 5, 0.5).to_vector<double>() == std::vector<double>{0, 0.4, 0.8});
    CHECK(fft::rfftfreq(rt, 4).to_vector<double>() == std::vector<double>{0, 0.25, 0.5});
    const Tensor f = fft::fftfreq(rt, 5);
    CHECK(fft::fftshift(f).to_vector<double>() == std::vector<double>{-0.4, -0.2, 0, 0.2, 0.4});
    CHECK(fft::ifftshift(fft::fftshift(f)).to_vector<double>() == f.to_vector<double>());
    const Tensor m = rt.tensor<double>({0, 1, 2, 3, 4, 5}, {2, 3});
    CHECK(fft::fftshift(m).to_vector<double>() == std::vector<double>{5, 3, 4, 2, 0, 1});
    CHECK(fft::fftshift(m, std::vector<int64_t>{1}).to_vector<double>() == std::vector<double>{2, 0, 1, 5, 3, 4});
    CHECK(fft::ifftshift(m, std::vector<int64_t>{-1}).to_vector<double>() == std::vector<double>{1, 2, 0, 4, 5, 3});
}
