// Comparing results across engines: tolerances, the element-by-element difference, and the
// report that collects findings.
#include "conformance.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>

namespace ferro::conformance {
namespace {

std::vector<double> uniform(size_t n, uint32_t seed, double lo, double hi) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<double> v(n);
    for (auto& x : v) x = dist(gen);
    return v;
}

// One part (real or imaginary) of an element within the tolerance: NaN where the reference
// has NaN, the same infinity, else |g - w| <= bound.
bool part_ok(double g, double w, double bound) {
    if (std::isnan(w) || std::isnan(g)) return std::isnan(w) && std::isnan(g);
    return g == w || std::abs(g - w) <= bound;
}

}  // namespace

std::set<DType> engine_dtypes(const Runtime& rt, const std::string& engine) {
    for (const EngineInfo& e : rt.inventory().engines) {
        if (e.name == engine) return {e.dtypes.begin(), e.dtypes.end()};
    }
    return {};
}

Tensor seeded_input(const Runtime& rt, const Shape& shape, DType dtype, uint32_t seed) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const auto count = static_cast<size_t>(n);
    if (dtype == DType::c64 || dtype == DType::c128) {
        const auto re = uniform(count, seed, -1, 1), im = uniform(count, seed + 1000, -1, 1);
        std::vector<std::complex<double>> v(count);
        for (size_t i = 0; i < count; ++i) v[i] = std::complex<double>(re[i], im[i]) * 0.9;
        return rt.tensor<std::complex<double>>(v, shape).to(dtype);
    }
    std::vector<double> v = uniform(count, seed, -0.9, 0.9);
    if (dtype == DType::i64) {
        for (auto& x : v) x = std::round(x * 22.0);
    } else if (dtype == DType::boolean) {
        for (size_t i = 0; i < count; ++i) v[i] = (i + seed) % 3 == 0 ? 1.0 : 0.0;
    }
    return rt.tensor<double>(v, shape).to(dtype);
}

Tolerance elementwise_tolerance(DType dtype) {
    const double tol = detail::is_single(dtype) ? 2e-5 : 1e-12;
    return {tol, tol, false};
}

Tolerance computed_tolerance(DType dtype) { return {0, detail::is_single(dtype) ? 1e-4 : 1e-10, true}; }

Difference difference(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const Tolerance& tolerance) {
    Difference d;
    const auto refuse = [&](std::string why) {
        d.ok = false;
        d.error = INFINITY;
        d.why = std::move(why);
        return d;
    };
    if (got.size() != want.size()) return refuse(fmt::format("{} outputs, the cpu engine's call {}", got.size(), want.size()));
    for (size_t k = 0; k < got.size(); ++k) {
        const Tensor g = got[k].to("cpu");
        if (g.dtype() != want[k].dtype()) {
            return refuse(
                fmt::format("output {} is {}, the cpu engine's {}", k, dtype_name(g.dtype()), dtype_name(want[k].dtype())));
        }
        if (g.shape() != want[k].shape()) return refuse(fmt::format("output {}: its shape differs from the cpu engine's", k));
        const auto gv = detail::values_of(g), wv = detail::values_of(want[k]);
        double scale = 1;
        for (const auto& w : wv) {
            if (std::isfinite(std::abs(w))) scale = std::max(scale, std::abs(w));
        }
        const double atol = tolerance.scaled ? tolerance.atol * scale : tolerance.atol;
        double worst = 0;
        for (size_t i = 0; i < gv.size(); ++i) {
            const double bound = atol + tolerance.rtol * std::abs(wv[i]);
            const bool ok = part_ok(gv[i].real(), wv[i].real(), bound) && part_ok(gv[i].imag(), wv[i].imag(), bound);
            const double e = std::abs(gv[i] - wv[i]);
            if (std::isfinite(e)) worst = std::max(worst, e);
            if (!ok && d.ok) {
                d.ok = false;
                d.why = fmt::format("output {} element {}: got ({}, {}), the cpu engine ({}, {})", k, i, gv[i].real(),
                                    gv[i].imag(), wv[i].real(), wv[i].imag());
            }
        }
        d.error = std::max(d.error, worst / scale);
    }
    return d;
}

Report::Report(const Runtime& rt, std::string engine) : engine_(std::move(engine)), dtypes_(engine_dtypes(rt, engine_)) {}

void Report::same(const std::string& what, const Tensor& got, const Tensor& want, DType dtype) {
    ++checks_;
    if (got.engine() != engine_) return fail(what, fmt::format("the result is on {}, not on {}", got.engine(), engine_));
    const Difference d = difference({got}, {want}, elementwise_tolerance(dtype));
    if (std::isfinite(d.error)) max_error_ = std::max(max_error_, d.error);
    if (!d.ok) fail(what, d.why);
}

void Report::compare(const std::string& what, DType dtype, const std::function<Tensor(const Tensor&)>& f, const Tensor& x_cpu) {
    const std::string where = fmt::format("{} in {}", what, dtype_name(dtype));
    Tensor want;
    try {
        want = f(x_cpu);
    } catch (const Error&) {
        return;  // the cpu engine does not define it either
    }
    try {
        same(where, f(x_cpu.to(engine_)), want, dtype);
    } catch (const Error& e) {
        ++checks_;
        fail(where, fmt::format("{} refused what the cpu engine runs: {}", engine_, e.what()));
    }
}

void Report::gradcheck(const std::string& what, const GradcheckResult& result) {
    ++checks_;
    if (!result.ok) fail(what, "gradcheck: " + result.report);
}

void Report::attempt(const std::string& what, const std::function<void()>& body) {
    try {
        body();
    } catch (const Error& e) {
        ++checks_;
        fail(what, fmt::format("stopped: {}: {}", e.code_name(), e.what()));
    }
}

void Report::fail(const std::string& what, const std::string& why) { findings_.push_back({what, why}); }

}  // namespace ferro::conformance
