// fft derivatives: gradcheck (VJP and JVP against central differences) of every op in f64
// and c128, with padding and truncation, several axes and every norm; second derivatives
// through the rules; and the adjoint identity <y, A x> = <A^H y, x> at a larger size, where
// finite differences would be slow.
#include "fft_test.hpp"

using namespace ferro;
using namespace ferro::test;
using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

namespace {

void check_grad(const std::string& what, const Fn& f, const Tensor& x) {
    INFO(what);
    const GradcheckResult r = gradcheck(f, {x});
    INFO(r.report);
    CHECK(r.ok);
}

Fn one_d(Tensor (*op)(const Tensor&, std::optional<int64_t>, int64_t, const std::string&, const std::string&),
         std::optional<int64_t> n, int64_t axis, const std::string& norm) {
    return [=](const std::vector<Tensor>& x) { return std::vector{op(x[0], n, axis, norm, "estimate")}; };
}

}  // namespace

TEST_CASE("fft grad: every 1-D op, f64 and c128, with n padding and truncating, every norm", "[fft]") {
    const Runtime rt = fft_runtime();
    for (DType dt : {DType::f64, DType::c128}) {
        const Tensor x = random_signal(rt, {2, 6}, dt, 61), odd = random_signal(rt, {7, 3}, dt, 62);
        for (const char* norm : {"backward", "ortho", "forward"}) {
            for (std::optional<int64_t> n : {std::optional<int64_t>{}, std::optional<int64_t>{4}, std::optional<int64_t>{9}}) {
                const std::string what = name_of(dt) + " " + norm + " n " + (n ? std::to_string(*n) : "None");
                check_grad("fft " + what, one_d(fft::fft, n, -1, norm), x);
                check_grad("ifft " + what, one_d(fft::ifft, n, 0, norm), odd);
                check_grad("irfft " + what, one_d(fft::irfft, n, -1, norm), x);
                check_grad("irfft odd axis 0 " + what, one_d(fft::irfft, n, 0, norm), odd);
                check_grad("hfft " + what, one_d(fft::hfft, n, -1, norm), x);
                if (dt == DType::f64) {
                    check_grad("rfft " + what, one_d(fft::rfft, n, -1, norm), x);
                    check_grad("rfft odd " + what, one_d(fft::rfft, n, 0, norm), odd);
                    check_grad("ihfft " + what, one_d(fft::ihfft, n, -1, norm), x);
                }
            }
        }
    }
}

TEST_CASE("fft grad: 2-D and N-D ops over several axes with s", "[fft]") {
    const Runtime rt = fft_runtime();
    for (DType dt : {DType::f64, DType::c128}) {
        const Tensor x = random_signal(rt, {3, 4, 5}, dt, 63);
        for (const char* norm : {"backward", "ortho"}) {
            const std::string d = name_of(dt) + " " + norm;
            const std::vector<int64_t> s{5, 3}, axes{2, 0};
            check_grad(
                "fft2 " + d,
                [&](const std::vector<Tensor>& v) {
                    return std::vector{fft::fft2(v[0], std::nullopt, {-2, -1}, norm)};
                },
                x);
            check_grad(
                "ifftn s " + d, [&](const std::vector<Tensor>& v) { return std::vector{fft::ifftn(v[0], s, axes, norm)}; }, x);
            check_grad(
                "irfftn s " + d, [&](const std::vector<Tensor>& v) { return std::vector{fft::irfftn(v[0], s, axes, norm)}; }, x);
            check_grad(
                "hfftn s " + d, [&](const std::vector<Tensor>& v) { return std::vector{fft::hfftn(v[0], s, axes, norm)}; }, x);
            check_grad(
                "hfft2 " + d,
                [&](const std::vector<Tensor>& v) {
                    return std::vector{fft::hfft2(v[0], std::nullopt, {0, 1}, norm)};
                },
                x);
            check_grad(
                "irfft2 " + d,
                [&](const std::vector<Tensor>& v) {
                    return std::vector{fft::irfft2(v[0], std::nullopt, {0, 1}, norm)};
                },
                x);
            if (dt == DType::f64) {
                check_grad(
                    "rfftn s " + d, [&](const std::vector<Tensor>& v) { return std::vector{fft::rfftn(v[0], s, axes, norm)}; },
                    x);
                check_grad(
                    "ihfftn s " + d, [&](const std::vector<Tensor>& v) { return std::vector{fft::ihfftn(v[0], s, axes, norm)}; },
                    x);
                check_grad(
                    "ihfft2 " + d,
                    [&](const std::vector<Tensor>& v) {
                        return std::vector{fft::ihfft2(v[0], std::nullopt, {-2, -1}, norm)};
                    },
                    x);
                check_grad(
                    "rfft2 " + d,
                    [&](const std::vector<Tensor>& v) {
                        return std::vector{fft::rfft2(v[0], std::nullopt, {-2, -1}, norm)};
                    },
                    x);
            }
        }
    }
}

// Reverse over reverse: with G(x) the gradient of a real loss (create_graph), the gradient w of
// Re<V2, G(x)> must satisfy Re<w, V1> = d/dh Re<V2, G(x + h V1)> at h = 0.
TEST_CASE("fft grad: second derivatives through the rules (|rfft|^2 of a real signal, |irfft|^4, |fft|^3)", "[fft]") {
    const Runtime rt = fft_runtime();
    struct Loss {
        const char* what;
        DType dtype;
        std::function<Tensor(const Tensor&)> f;
    };
    const Loss losses[] = {
        {"|rfft(x, 10)|^2 . w", DType::f64,
         [&rt](const Tensor& x) {
             const Tensor y = fft::rfft(x, 10);
             return ((y * y.conj()).real() * fft::rfftfreq(rt, 10)).sum();
         }},
        {"sum irfft(x, 7)^4", DType::c128,
         [](const Tensor& x) {
             const Tensor y = fft::irfft(x, 7, -1, "ortho");
             return (y * y * y * y).sum();
         }},
        {"sum |fft2(x)|^3", DType::c128,
         [](const Tensor& x) {
             const Tensor m = fft::fft2(x).abs();
             return (m * m * m).sum();
         }},
    };
    for (const Loss& l : losses) {
        INFO(l.what);
        const Tensor x = random_signal(rt, {3, 6}, l.dtype, 64);
        const Tensor V1 = random_signal(rt, {3, 6}, l.dtype, 65), V2 = random_signal(rt, {3, 6}, l.dtype, 66);
        check_second_order(l.f, x, V1, V2, 1e-5);
    }
}

// For a linear A, the VJP is A^H: Re<u, A x> = Re<A^H u, x> for random x and u. At 2^12 points
// and with s padding / truncating three axes at once.
TEST_CASE("fft grad: the VJP is the adjoint at larger sizes (<u, A x> = <A^H u, x>)", "[fft]") {
    const Runtime rt = fft_runtime();
    struct Op {
        const char* what;
        DType in;
        std::function<Tensor(const Tensor&)> f;
    };
    const std::vector<int64_t> s{9, 30, 17}, axes{0, 2, 1};
    const Op ops[] = {
        {"fftn", DType::c128, [&](const Tensor& x) { return fft::fftn(x, s, axes, "ortho"); }},
        {"rfftn", DType::f64, [&](const Tensor& x) { return fft::rfftn(x, s, axes); }},
        {"irfftn", DType::c128, [&](const Tensor& x) { return fft::irfftn(x, s, axes, "forward"); }},
        {"hfft", DType::c128, [&](const Tensor& x) { return fft::hfft(x, 31, 1); }},
        {"ihfft", DType::f64, [&](const Tensor& x) { return fft::ihfft(x, 12, 2); }},
        {"hfftn", DType::c128, [&](const Tensor& x) { return fft::hfftn(x, s, axes, "ortho"); }},
        {"ihfftn", DType::f64, [&](const Tensor& x) { return fft::ihfftn(x, s, axes, "forward"); }},
    };
    for (const Op& op : ops) {
        INFO(op.what);
        Tensor x = random_signal(rt, {8, 16, 32}, op.in, 71);
        x.set_requires_grad();
        const Tensor y = op.f(x);
        const Tensor u = random_signal(rt, y.shape(), y.dtype(), 72);
        const Tensor gx = grad({(y * u.conj()).real().sum()}, {x})[0];
        const double lhs = (y * u.conj()).real().sum().item<double>();
        const double rhs = (gx * x.conj()).real().sum().item<double>();
        CHECK(std::abs(lhs - rhs) <= 1e-9 * (1 + std::abs(lhs)));
    }
}
