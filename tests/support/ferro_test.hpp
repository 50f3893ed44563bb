// Shared by the suites that test through the public C++ API: an isolated runtime, seeded
// host data, and element-wise comparison with a tolerance scaled to the dtype.
#pragma once

#include "build_dir.hpp"

#include <ferro/ferro.hpp>

#include <cmath>
#include <complex>
#include <functional>
#include <random>
#include <vector>

namespace ferro::test {

// A runtime with only the built-ins (cpu engine, core family) unless paths are given.
// Options for such a runtime: no plugin directory but `plugin_paths`, no log.
inline Runtime::Options isolated_options(std::vector<std::string> plugin_paths = {}) {
    Runtime::Options o;
    o.plugin_paths = std::move(plugin_paths);
    o.use_environment_path = false;
    o.use_default_dir = false;
    o.log_level = FERRO_LOG_OFF;
    return o;
}
inline Runtime make_runtime(std::vector<std::string> plugin_paths = {}) {
    return Runtime(isolated_options(std::move(plugin_paths)));
}

// Deterministic values in [lo, hi).
inline std::vector<double> random_values(size_t n, uint32_t seed, double lo = -1.0, double hi = 1.0) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<double> v(n);
    for (auto& x : v) x = dist(gen);
    return v;
}

inline std::vector<std::complex<double>> random_complex(size_t n, uint32_t seed) {
    const auto re = random_values(n, seed), im = random_values(n, seed + 1000);
    std::vector<std::complex<double>> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = {re[i], im[i]};
    return v;
}

// |got - want| <= atol + rtol * |want| for every element, real and imaginary parts each (NaN
// equals NaN).
template <class T, class U>
void check_close(const std::vector<T>& got, const std::vector<U>& want, double rtol = 1e-12, double atol = 1e-12) {
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        const auto g = std::complex<double>(got[i]);
        const auto w = std::complex<double>(want[i]);
        // Part by part: NaN where it is NaN, equal infinities, else within the tolerance.
        const double bound = atol + rtol * std::abs(w);
        const auto part_ok = [&](double x, double y) {
            return (std::isnan(x) && std::isnan(y)) || x == y || std::abs(x - y) <= bound;
        };
        INFO("element " << i << ": got " << g << ", want " << w);
        CHECK((part_ok(g.real(), w.real()) && part_ok(g.imag(), w.imag())));
    }
}

// Runs `fn` expecting ferro::Error with `code` and a message containing `part`.
template <class Fn> void check_error(Fn&& fn, uint32_t code, const std::string& part) {
    try {
        fn();
        FAIL("expected an error containing: " << part);
    } catch (const Error& e) {
        CHECK(e.code() == code);
        CHECK_THAT(e.what(), Catch::Contains(part));
    }
}

// A second derivative of a real loss through the ops' rules, against finite differences: the
// Hessian at A applied to V and projected on W, <W, H V>, from differentiating the gradient
// (create_graph) and from central differences of it (step 1e-6), within rtol.
inline void check_second_order(const std::function<Tensor(const Tensor&)>& loss, const Tensor& A, const Tensor& V,
                               const Tensor& W, double rtol) {
    const auto inner = [](const Tensor& g, const Tensor& v) { return (g * v.conj()).real().sum(); };
    const auto gradient = [&](const Tensor& x, bool create) {
        Tensor leaf = x.detach();
        leaf.set_requires_grad();
        return std::pair{leaf, grad({loss(leaf)}, {leaf}, {}, create)[0]};
    };
    const auto [leaf, g] = gradient(A, true);
    const double analytic = inner(grad({inner(g, W)}, {leaf})[0], V).item<double>();
    const double h = 1e-6;
    const double numeric = (inner(gradient(A + V * h, false).second, W).item<double>() -
                            inner(gradient(A - V * h, false).second, W).item<double>()) /
                           (2 * h);
    INFO("analytic " << analytic << ", finite differences " << numeric);
    CHECK(std::abs(analytic - numeric) <= rtol * (1 + std::abs(numeric)));
}

}  // namespace ferro::test
