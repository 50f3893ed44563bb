// The conformance suite: core ops, einsum and autodiff on vulkan:0 against the cpu engine,
// in every dtype the device supports; the validation layer must stay silent.
#include "engine_conformance.hpp"
#include "vulkan_test.hpp"

#include <ferro/gradcheck.hpp>

#include <limits>
#include <set>
#include <string>

using namespace ferro;
using namespace ferro::test;

namespace {

const char* const kVulkan = "vulkan:0";
std::set<DType> device_dtypes(const Runtime& rt) { return engine_dtypes(rt, kVulkan); }

// Runs part of the conformance library's engine suite on vulkan:0; the validation layer must
// stay silent.
template <class Part> void conform(Part&& part) {
    VulkanLog log;
    Runtime rt = vulkan_runtime(log);
    require_vulkan_device(rt);
    expect_conformant(rt, kVulkan, part);
    check_no_vulkan_messages(log);
}

// Every element of vulkan's op(x) is within 8 ulp of the cpu engine's (glibc's), or (subnormal
// results) within 8 units of the smallest normal; NaN where it is NaN.
void check_ulps(const char* op, const std::vector<double>& args, const Tensor& got_tensor, const Tensor& want_tensor) {
    INFO(op);
    const std::vector<double> got = got_tensor.to("cpu").to_vector<double>(), want = want_tensor.to_vector<double>();
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        INFO("x = " << args[i % args.size()] << ": got " << got[i] << ", want " << want[i]);
        const bool same = got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i]));
        CHECK((same || std::abs(got[i] - want[i]) <= 8 * std::numeric_limits<double>::epsilon() * std::abs(want[i]) +
                                                         8 * std::numeric_limits<double>::min()));
    }
}

}  // namespace

// The engine suite (tools/conformance) on vulkan:0, with the validation layer silent.
// The reduction shapes reach both strategies: a workgroup per output for a large reduced
// extent, an invocation per output for a small one.
TEST_CASE("vulkan: fill copies and casts agree with the cpu engine", "[vulkan]") { conform(conformance::fill_and_casts); }

TEST_CASE("vulkan: unary ops agree with the cpu engine in every dtype", "[vulkan]") { conform(conformance::unary); }

TEST_CASE("vulkan: binary ops with broadcasting and where agree with the cpu engine", "[vulkan]") {
    conform(conformance::binary);
}

TEST_CASE("vulkan: reductions over any axes agree with the cpu engine", "[vulkan]") {
    conform([](const Runtime& rt, conformance::Report& r) {
        conformance::reductions(rt, r, {Shape{3, 4, 5}, Shape{2, 3, 700}});
    });
}

TEST_CASE("vulkan: matmul and einsum agree with the cpu engine", "[vulkan]") { conform(conformance::products); }

TEST_CASE("vulkan: gradients through vulkan tensors match finite differences", "[vulkan]") {
    conform([](const Runtime& rt, conformance::Report& r) { conformance::gradients(rt, r, {DType::f64}); });
}

TEST_CASE("vulkan: the engine's own f64 exp and log family is within a few ulp over its whole range", "[vulkan]") {
    VulkanLog log;
    Runtime rt = vulkan_runtime(log);
    require_vulkan_device(rt);
    if (!device_dtypes(rt).count(DType::f64)) return;
    // Arguments from the underflow of exp to its overflow, near 0 for the expm1/log1p
    // corrections, and log over 600 decades (and 0, negative, infinite, NaN).
    std::vector<double> args;
    for (int i = -745; i <= 709; i += 7) args.push_back(i + 0.37);
    for (double tiny = 1e-300; tiny < 1; tiny *= 1e9) {
        args.push_back(tiny);
        args.push_back(-tiny);
    }
    for (double big = 1.5; big < 1e300; big *= 1e11) args.push_back(big);
    for (double special : {0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 1e-17, -1e-17}) args.push_back(special);
    args.push_back(std::numeric_limits<double>::infinity());
    args.push_back(-std::numeric_limits<double>::infinity());
    args.push_back(std::numeric_limits<double>::quiet_NaN());
    const int64_t n = static_cast<int64_t>(args.size());
    const Tensor x = rt.tensor<double>(args, {n});
    const Tensor xv = x.to("vulkan:0");
    for (const char* op :
         {"core.exp", "core.log", "core.expm1", "core.log1p", "core.tanh", "core.sinh", "core.cosh", "core.sigmoid"}) {
        check_ulps(op, args, xv.call(op), x.call(op));
    }
    check_no_vulkan_messages(log);
}

TEST_CASE("vulkan: the engine's own f64 trigonometric functions and erf and pow and arctan2 are within a few ulp", "[vulkan]") {
    VulkanLog log;
    Runtime rt = vulkan_runtime(log);
    require_vulkan_device(rt);
    if (!device_dtypes(rt).count(DType::f64)) return;
    const double inf = std::numeric_limits<double>::infinity(), pi = 3.141592653589793;
    // sin, cos, tan: small, medium (Cody-Waite) and huge (Payne-Hanek) arguments, near multiples
    // of pi/2 (where the reduction cancels most bits), up to the largest double.
    std::vector<double> trig{0.0,
                             -0.0,
                             1e-300,
                             1e-8,
                             0.5,
                             -0.7853981633974483,
                             1.5707963267948966,
                             pi,
                             2 * pi,
                             3 * pi / 2,
                             100 * pi,
                             1647099.0,
                             1647100.0,
                             1e6 * pi,
                             1e7,
                             1e10,
                             1e15,
                             1e22,
                             1e100,
                             -1e200,
                             1.7976931348623157e308,
                             6381956970095103.0 * std::pow(2.0, 797),
                             inf,
                             -inf,
                             std::numeric_limits<double>::quiet_NaN()};
    for (int i = -50; i <= 50; ++i) trig.push_back(i * 0.37 + 0.001 * i * i);
    for (double big = 3.3; big < 1e300; big *= 7.7e6) trig.push_back(big);
    // arcsin, arccos, arctan, erf: the whole line, and [-1, 1] (NaN outside it for arcsin/arccos).
    std::vector<double> line{0.0,       -0.0,      1e-300, -1e-20, 1.0,  -1.0,
                             0.9999999, 1.0000001, 2.5,    -2.5,   5.9,  6.0,
                             27.0,      1e10,      -1e300, inf,    -inf, std::numeric_limits<double>::quiet_NaN()};
    for (int i = -40; i <= 40; ++i) line.push_back(i * 0.0491);
    for (int i = 1; i <= 60; ++i) line.push_back(i * 0.1 + 0.0123);
    const auto run = [&](const std::vector<double>& args, std::initializer_list<const char*> ops) {
        const Tensor x = rt.tensor<double>(args, {static_cast<int64_t>(args.size())});
        for (const char* op : ops) check_ulps(op, args, x.to("vulkan:0").call(op), x.call(op));
    };
    run(trig, {"core.sin", "core.cos", "core.tan"});
    run(line, {"core.arcsin", "core.arccos", "core.arctan", "core.erf"});
    // pow and arctan2 over every pair of a grid with signs, zeros, infinities and NaN; pow up to
    // the edge of overflow (1.0001^7e6 ~ e^700), where y log x must be carried to double-double.
    std::vector<double> xs{0.0, -0.0, 0.5,    -0.5,   1.0,   -1.0, 2.0,  -2.0,
                           3.7, -3.0, 1.0001, 1e-300, 1e300, inf,  -inf, std::numeric_limits<double>::quiet_NaN()};
    std::vector<double> ys{
        0.0, -0.0, 0.5, -1.0, 2.0, 3.0, -3.0, 7.25, 1e-5, 7e6, -7e6, 1e300, inf, -inf, std::numeric_limits<double>::quiet_NaN()};
    std::vector<double> xx, yy;
    for (double a : xs) {
        for (double b : ys) {
            xx.push_back(a);
            yy.push_back(b);
        }
    }
    const int64_t n = static_cast<int64_t>(xx.size());
    const Tensor x = rt.tensor<double>(xx, {n}), y = rt.tensor<double>(yy, {n});
    const Tensor xv = x.to("vulkan:0"), yv = y.to("vulkan:0");
    check_ulps("core.pow", xx, xv.pow(yv), x.pow(y));
    check_ulps("core.arctan2", xx, xv.call("core.arctan2", {}, {yv}), x.call("core.arctan2", {}, {y}));
    check_no_vulkan_messages(log);
}

TEST_CASE("vulkan: NaN, infinities and out-of-range floats cast to i64 and angle NaN as on the cpu engine", "[vulkan]") {
    conform(conformance::special_casts);
}
