// The cuda kernels' element functions, run on the host (ops_host.cu), against the cpu engine:
// every unary and binary op, every cast and reduction, in every dtype either defines, on
// seeded values and the special ones (signed zeros, halves for round-half-to-even, infinities,
// NaN, integer edge cases). The device runs the same functions; what this cannot see (device
// math precision, launches, layouts) the GPU conformance suite checks.
#include "ops_host.hpp"

#include "engine_conformance.hpp"

#include <ferro/gradcheck.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <string>

using namespace ferro;
using namespace ferro::test;

namespace {

ferro_dtype raw(DType d) { return static_cast<ferro_dtype>(d); }

size_t item(DType d) { return FERRO_DTYPE_BITS(raw(d)) / 8; }

// The elements of a cpu tensor as raw bytes, row-major.
std::vector<unsigned char> bytes_of(const Tensor& t) {
    std::vector<unsigned char> out(static_cast<size_t>(t.numel()) * item(t.dtype()));
    auto put = [&](const auto& v) { std::memcpy(out.data(), v.data(), out.size()); };
    switch (t.dtype()) {
        case DType::f32: put(t.to_vector<float>()); break;
        case DType::f64: put(t.to_vector<double>()); break;
        case DType::c64: put(t.to_vector<std::complex<float>>()); break;
        case DType::c128: put(t.to_vector<std::complex<double>>()); break;
        case DType::i64: put(t.to_vector<int64_t>()); break;
        default: {
            const std::vector<bool> b = t.to_vector<bool>();
            for (size_t i = 0; i < b.size(); ++i) out[i] = b[i] ? 1 : 0;
        }
    }
    return out;
}

// Raw elements of dtype d as complex<double>.
std::vector<std::complex<double>> values(const std::vector<unsigned char>& bytes, DType d) {
    const size_t n = bytes.size() / item(d);
    std::vector<std::complex<double>> v(n);
    for (size_t i = 0; i < n; ++i) {
        const unsigned char* p = bytes.data() + i * item(d);
        switch (d) {
            case DType::f32: {
                float x;
                std::memcpy(&x, p, 4);
                v[i] = x;
                break;
            }
            case DType::f64: {
                double x;
                std::memcpy(&x, p, 8);
                v[i] = x;
                break;
            }
            case DType::c64: {
                std::complex<float> x;
                std::memcpy(&x, p, 8);
                v[i] = std::complex<double>(x);
                break;
            }
            case DType::c128: {
                std::memcpy(&v[i], p, 16);
                break;
            }
            case DType::i64: {
                int64_t x;
                std::memcpy(&x, p, 8);
                v[i] = static_cast<double>(x);
                break;
            }
            default: v[i] = *p != 0 ? 1.0 : 0.0;
        }
    }
    return v;
}

// Seeded values plus the special ones for real and integer dtypes (reversed: the specials meet
// other values when two operands are combined).
Tensor operand(const Runtime& rt, DType d, uint32_t seed, bool reversed = false) {
    if (d == DType::f32 || d == DType::f64) {
        std::vector<double> v = random_values(40, seed, -2.0, 2.0);
        const double inf = std::numeric_limits<double>::infinity();
        for (double s : {0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1.0, -1.0, inf, -inf, std::nan("")}) v.push_back(s);
        if (reversed) std::reverse(v.begin(), v.end());
        return rt.tensor<double>(v, {static_cast<int64_t>(v.size())}).to(d);
    }
    if (d == DType::i64) {
        std::vector<int64_t> v;
        for (int64_t x = -7; x <= 7; ++x) v.push_back(x);
        for (int64_t x : {int64_t{100}, int64_t{-100}, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()})
            v.push_back(x);
        if (reversed) std::reverse(v.begin(), v.end());
        return rt.tensor<int64_t>(v, {static_cast<int64_t>(v.size())});
    }
    return seeded_input(rt, {52}, d, seed);
}

void check_same_values(const std::vector<unsigned char>& got, const Tensor& want, DType dtype) {
    const double tol = is_single_dtype(dtype) ? 2e-6 : 1e-14;
    check_close(values(got, want.dtype()), values(bytes_of(want), want.dtype()), tol, tol);
}

}  // namespace

TEST_CASE("cuda element functions: unary ops on the host agree with the cpu engine", "[cuda-probe]") {
    Runtime rt = make_runtime();
    int compared = 0;
    for (DType dt : kEngineDtypes) {
        const Tensor x = operand(rt, dt, 3);
        const std::vector<unsigned char> in = bytes_of(x);
        for (uint32_t op = 0; op < FERRO_UNARY_COUNT_; ++op) {
            Tensor want;
            try {
                want = x.call((std::string("core.") + kUnaryOps[op]).c_str());
            } catch (const Error&) {
                continue;  // the cpu engine does not define it
            }
            INFO(kUnaryOps[op] << " on " << dtype_name(dt));
            std::vector<unsigned char> got(static_cast<size_t>(want.numel()) * item(want.dtype()));
            if (!cuda::host::unary(op, raw(dt), raw(want.dtype()), in.data(), got.data(), x.numel()))
                continue;  // a core op built otherwise
            check_same_values(got, want, dt);
            ++compared;
        }
    }
    CHECK(compared >= 110);  // every (op, dtype) the engine's table has, not a handful
}

TEST_CASE("cuda element functions: binary ops on the host agree with the cpu engine", "[cuda-probe]") {
    Runtime rt = make_runtime();
    int compared = 0;
    for (DType dt : kEngineDtypes) {
        const Tensor a = operand(rt, dt, 5), b = operand(rt, dt, 6, true);
        const std::vector<unsigned char> ia = bytes_of(a), ib = bytes_of(b);
        std::vector<Tensor> second;  // not a braced list: GCC 12 warns falsely (-Warray-bounds) on one here
        second.push_back(b);
        for (uint32_t op = 0; op < FERRO_BINARY_COUNT_; ++op) {
            Tensor want;
            try {
                want = a.call((std::string("core.") + kBinaryOps[op]).c_str(), {}, second);
            } catch (const Error&) {
                continue;
            }
            INFO(kBinaryOps[op] << " on " << dtype_name(dt));
            std::vector<unsigned char> got(static_cast<size_t>(want.numel()) * item(want.dtype()));
            if (!cuda::host::binary(op, raw(dt), raw(want.dtype()), ia.data(), ib.data(), got.data(), a.numel())) continue;
            check_same_values(got, want, dt);
            ++compared;
        }
    }
    CHECK(compared >= 60);
}

TEST_CASE("cuda element functions: casts and reductions on the host agree with the cpu engine", "[cuda-probe]") {
    Runtime rt = make_runtime();
    for (DType from : kEngineDtypes) {
        const Tensor x = operand(rt, from, 7);
        const std::vector<unsigned char> in = bytes_of(x);
        for (DType to : kEngineDtypes) {
            INFO(dtype_name(from) << " to " << dtype_name(to));
            const Tensor want = x.to(to);
            std::vector<unsigned char> got(static_cast<size_t>(want.numel()) * item(to));
            REQUIRE(cuda::host::cast(raw(from), raw(to), in.data(), got.data(), x.numel()));
            check_same_values(got, want, to);
        }
        // Reductions over NaN-free data, and over the specials.
        const auto reductions = [&](const Tensor& data) {
            const std::vector<unsigned char> bytes = bytes_of(data);
            const uint32_t ops[] = {FERRO_REDUCE_SUM, FERRO_REDUCE_PROD, FERRO_REDUCE_MAX,
                                    FERRO_REDUCE_MIN, FERRO_REDUCE_ANY,  FERRO_REDUCE_ALL};
            const char* const names[] = {"sum", "prod", "max", "min", "any", "all"};
            for (int i = 0; i < 6; ++i) {
                Tensor want;
                try {
                    want = data.call((std::string("core.") + names[i]).c_str(), {Attr("axes", Shape{0})});
                } catch (const Error&) {
                    continue;
                }
                INFO(names[i] << " on " << dtype_name(from));
                std::vector<unsigned char> got(item(want.dtype()));
                if (!cuda::host::reduce(ops[i], raw(from), raw(want.dtype()), bytes.data(), got.data(), data.numel())) continue;
                // Sums in another order: a few ulp of the accumulator.
                const double tol = is_single_dtype(from) ? 1e-5 : 1e-12;
                check_close(values(got, want.dtype()), values(bytes_of(want), want.dtype()), tol, tol);
            }
        };
        reductions(seeded_input(rt, {37}, from, 8));
        reductions(x);
    }
}

// The kernels' running sum (Running, one thread's run) on numpy's accuracy case: 10^6 copies of
// 1 + 8196 eps, summed in order, are off by 1.6e-12 uncompensated; numpy's pairwise sum keeps
// 1.5e-15 (its test's bound), and so must a thread's compensated run.
TEST_CASE("cuda element functions: a thread's floating sum is compensated (numpy's accuracy case)", "[cuda-probe]") {
    const double eps = std::numeric_limits<double>::epsilon(), v = 1 + 8196 * eps;
    const int64_t n = 1'000'000;
    const double want = static_cast<double>(n) * v;
    const std::vector<double> real(static_cast<size_t>(n), v);
    double sum = 0;
    REQUIRE(cuda::host::reduce(FERRO_REDUCE_SUM, FERRO_DTYPE_F64, FERRO_DTYPE_F64, real.data(), &sum, n));
    CHECK(std::abs(sum - want) / want < 1.5e-15);
    const std::vector<std::complex<double>> complex(static_cast<size_t>(n), {v, -v});
    std::complex<double> csum;
    REQUIRE(cuda::host::reduce(FERRO_REDUCE_SUM, FERRO_DTYPE_C128, FERRO_DTYPE_C128, complex.data(), &csum, n));
    CHECK(std::abs(csum - std::complex<double>(want, -want)) / want < 1.5e-15);
}
