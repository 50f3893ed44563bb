// Fusion in replay (docs/capture.md, "Fusion"): consecutive elementwise steps in one dtype over
// one shape run as one fused step on the cpu engine; a fused run computes exactly what the steps
// compute one by one, keeps no memory for values only the run reads, and splits where the
// dtype, shape or op kind changes or the operands would exceed what one program takes.
#include "ferro_test.hpp"

#include <ferro/capture.hpp>
#include <ferro/einsum.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>

using namespace ferro;
using namespace ferro::test;
using json = nlohmann::json;

namespace {

// The ops each step of a prepared program runs ("fused" steps: the ops fused into them).
std::vector<std::vector<std::string>> steps_of(const PreparedProgram& p) {
    std::vector<std::vector<std::string>> steps;
    const json doc = json::parse(p.describe());
    for (const json& s : doc["steps"]) {
        steps.push_back(s["op"] == "fused" ? s["ops"].get<std::vector<std::string>>() : std::vector{s["op"].get<std::string>()});
    }
    return steps;
}

// Prepares with fusion turned off (FERRO_FUSE=0 is read at each prepare).
PreparedProgram prepare_unfused(const Program& program) {
    setenv("FERRO_FUSE", "0", 1);
    PreparedProgram p = program.prepare();
    unsetenv("FERRO_FUSE");
    return p;
}

}  // namespace

TEST_CASE("fusion: a chain of elementwise steps runs as one step, exactly as the steps, and keeps nothing", "[capture]") {
    Runtime rt = make_runtime();
    const auto chain = [](const Tensor& a, const Tensor& b) {
        Tensor t = a;
        for (int i = 0; i < 10; ++i) t = (t * b + a).tanh();
        return t;
    };
    for (const int64_t n : {int64_t{1}, int64_t{1000}, int64_t{100003}}) {  // one element; blocks; the pool
        const Tensor x = rt.rand({n}, DType::f64, 1), y = rt.rand({n}, DType::f64, 2);
        Capture capture(rt, {x, y});
        const Program program = capture.end({chain(x, y)});
        const PreparedProgram fused = program.prepare();
        const std::vector<std::vector<std::string>> steps = steps_of(fused);
        REQUIRE(steps.size() == 1);
        CHECK(steps[0].size() == 30);
        CHECK(fused.memory().run_bytes == 0);                    // no intermediate reaches memory
        const uint64_t slot = (uint64_t(n) * 8 + 63) / 64 * 64;  // arena slots are 64-byte aligned
        CHECK(prepare_unfused(program).memory().run_bytes == 2 * slot);
        for (int64_t seed = 3; seed < 5; ++seed) {
            const Tensor x2 = rt.rand({n}, DType::f64, seed), y2 = rt.rand({n}, DType::f64, seed + 10);
            CHECK(fused({x2, y2}).at(0).to_vector<double>() == chain(x2, y2).to_vector<double>());
        }
    }
}

TEST_CASE("fusion: broadcast and strided operands, values read after the run, several outputs", "[capture]") {
    Runtime rt = make_runtime();
    // The run's first value is read by a later sum and returned; the bias and the scalar
    // broadcast; the second input comes transposed.
    const auto compute = [](const Tensor& x, const Tensor& xt, const Tensor& bias) {
        const Tensor h = x * xt.transpose() + bias;
        const Tensor g = (h * 0.5).exp() - x;
        return std::vector{g, h.sum(), (g + 1.0).sum()};
    };
    const Tensor x = rt.rand({40, 30}, DType::f32, 1), xt = rt.rand({30, 40}, DType::f32, 2), bias = rt.rand({30}, DType::f32, 3);
    Capture capture(rt, {x, xt, bias});
    const PreparedProgram step = capture.end(compute(x, xt, bias)).prepare();
    const std::vector<std::vector<std::string>> steps = steps_of(step);
    const auto fused = std::count_if(steps.begin(), steps.end(), [](const auto& s) { return s.size() > 1; });
    CHECK(fused >= 1);
    for (int64_t seed = 4; seed < 7; ++seed) {
        const Tensor x2 = rt.rand({40, 30}, DType::f32, seed), xt2 = rt.rand({30, 40}, DType::f32, seed + 10),
                     b2 = rt.rand({30}, DType::f32, seed + 20);
        const std::vector<Tensor> got = step({x2, xt2, b2}), want = compute(x2, xt2, b2);
        REQUIRE(got.size() == 3);
        for (size_t k = 0; k < 3; ++k) CHECK(got[k].to_vector<float>() == want[k].to_vector<float>());
    }
}

TEST_CASE("fusion: runs split where the dtype, shape or op kind changes and at the operand limit", "[capture]") {
    Runtime rt = make_runtime();
    const Tensor a = rt.rand({5}, DType::f64, 1), m = rt.rand({3, 5}, DType::f64, 2);
    Capture capture(rt, {a, m});
    const Tensor u = (a.exp() + a) * a;     // fuses: [5]
    const Tensor v = (m + u).tanh().neg();  // [3, 5]: a run of its own
    const Tensor zero = rt.full({}, 0.0);
    const Tensor w = v.call("core.gt", {}, {zero}).to(DType::f64) * 2.0;  // a comparison and a cast: not fused
    const PreparedProgram p = capture.end({w}).prepare();
    const std::vector<std::vector<std::string>> steps = steps_of(p);
    REQUIRE(steps.size() >= 4);
    CHECK(steps[0] == std::vector<std::string>{"core.exp", "core.add", "core.mul"});
    CHECK(steps[1] == std::vector<std::string>{"core.add", "core.tanh", "core.neg"});
    CHECK(steps[2].size() == 1);  // gt makes bool
    const Tensor a2 = rt.rand({5}, DType::f64, 3), m2 = rt.rand({3, 5}, DType::f64, 4);
    const Tensor want = (m2 + (a2.exp() + a2) * a2).tanh().neg().call("core.gt", {}, {zero}).to(DType::f64) * 2.0;
    CHECK(p({a2, m2}).at(0).to_vector<double>() == want.to_vector<double>());

    // 20 inputs summed: one program takes 16 operands, so the sum is two fused runs or more.
    std::vector<Tensor> xs;
    for (int i = 0; i < 20; ++i) xs.push_back(rt.rand({7}, DType::f64, 100 + i));
    const auto total = [](const std::vector<Tensor>& ts) {
        Tensor t = ts[0];
        for (size_t i = 1; i < ts.size(); ++i) t = t + ts[i];
        return t;
    };
    Capture many(rt, xs);
    const PreparedProgram sum = many.end({total(xs)}).prepare();
    const std::vector<std::vector<std::string>> runs = steps_of(sum);
    CHECK(runs.size() >= 2);
    for (const auto& r : runs) CHECK(r.size() <= 15);
    for (Tensor& x : xs) x = x * 3.0;
    CHECK(sum(xs).at(0).to_vector<double>() == total(xs).to_vector<double>());

    // 80 values alive at once, from two inputs: one program holds 64 values
    // (FERRO_FUSED_MAX_VALUES), so the run is cut.
    const auto wide = [](const Tensor& x, const Tensor& y) {
        std::vector<Tensor> t = {x * y};
        for (int i = 1; i < 80; ++i) t.push_back(i % 2 == 0 ? t.back() * y : t.back() + x);
        Tensor s = t[0];
        for (size_t i = 1; i < t.size(); ++i) s = s - t[i];
        return s;
    };
    const Tensor x = rt.rand({9}, DType::f64, 7), y = rt.rand({9}, DType::f64, 8);
    Capture live(rt, {x, y});
    const PreparedProgram cut = live.end({wide(x, y)}).prepare();
    const std::vector<std::vector<std::string>> parts = steps_of(cut);
    CHECK(parts.size() >= 2);
    for (const auto& r : parts) CHECK(r.size() < 159);
    const Tensor x2 = rt.rand({9}, DType::f64, 9), y2 = rt.rand({9}, DType::f64, 10);
    CHECK(cut({x2, y2}).at(0).to_vector<double>() == wide(x2, y2).to_vector<double>());
}

TEST_CASE("fusion: complex and integer runs, and a plugin op between runs", "[capture]") {
    Runtime rt = make_runtime({build_dir() + "/lib/ferro/plugins"});
    const auto compute = [&rt](const Tensor& z, const Tensor& k, const Tensor& w) {
        const Tensor c = (z.exp() * z.conj() + z).sqrt();
        const Tensor i = (k * k + k) * (k - rt.full({}, 3, DType::i64));
        const Tensor e = einsum("i,i->", {c, c});
        return std::vector{c, i, (e * w).exp() + w};
    };
    const Tensor z = rt.rand({6}, DType::c128, 1), k = rt.arange(-4, 8).to(DType::i64), w = rt.rand({6}, DType::c128, 2);
    Capture capture(rt, {z, k, w});
    const PreparedProgram step = capture.end(compute(z, k, w)).prepare();
    CHECK(steps_of(step).size() < 12);
    const Tensor z2 = rt.rand({6}, DType::c128, 3), k2 = rt.arange(3, 15).to(DType::i64), w2 = rt.rand({6}, DType::c128, 4);
    const std::vector<Tensor> got = step({z2, k2, w2}), want = compute(z2, k2, w2);
    CHECK(got[0].to_vector<std::complex<double>>() == want[0].to_vector<std::complex<double>>());
    CHECK(got[1].to_vector<int64_t>() == want[1].to_vector<int64_t>());
    CHECK(got[2].to_vector<std::complex<double>>() == want[2].to_vector<std::complex<double>>());
}

TEST_CASE("fusion: a fused program's gradients equal the eager ones", "[capture]") {
    Runtime rt = make_runtime();
    const auto loss = [](const Tensor& x, const Tensor& w, const Tensor& b) {
        return ((x.matmul(w) + b).tanh() * 0.5 + x.matmul(w).call("core.sigmoid")).sum();
    };
    Tensor x = rt.rand({8, 5}, DType::f64, 1), w = rt.rand({5, 3}, DType::f64, 2), b = rt.rand({3}, DType::f64, 3);
    Capture capture(rt, {x, w, b});
    const PreparedProgram program = capture.end({loss(x, w, b)}).prepare();
    for (int64_t seed = 4; seed < 6; ++seed) {
        w = rt.rand({5, 3}, DType::f64, seed);
        b = rt.rand({3}, DType::f64, seed + 10);
        w.set_requires_grad();
        b.set_requires_grad();
        const Tensor out = program({x, w, b}).at(0);
        CHECK(out.grad_fn() == "program");
        const std::vector<Tensor> got = grad({out}, {w, b}), want = grad({loss(x, w, b)}, {w, b});
        for (size_t k = 0; k < 2; ++k) check_close(got[k].to_vector<double>(), want[k].to_vector<double>(), 1e-14, 1e-14);
    }
}
