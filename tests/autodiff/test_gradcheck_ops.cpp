// gradcheck (VJP against central finite differences) on every differentiable core op, in f64
// and, where the op takes complex numbers, c128; with broadcasting and strided inputs.
#include "ferro_test.hpp"

#include <ferro/gradcheck.hpp>

#include <sstream>

using namespace ferro;
using namespace ferro::test;
using cd = std::complex<double>;
using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

namespace {

// Values in [lo, hi) (real parts; imaginary parts in [-0.5, 0.5) for complex dtypes).
Tensor input(const Runtime& rt, Shape shape, DType dtype, double lo, double hi, uint32_t seed) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    const auto re = random_values(static_cast<size_t>(n), seed, lo, hi);
    if (dtype == DType::c128) {
        const auto im = random_values(static_cast<size_t>(n), seed + 77, -0.5, 0.5);
        std::vector<cd> z(re.size());
        for (size_t i = 0; i < z.size(); ++i) z[i] = {re[i], im[i]};
        return rt.tensor<cd>(z, std::move(shape));
    }
    return rt.tensor<double>(re, std::move(shape));
}

std::string shape_str(const Shape& s) {
    std::ostringstream out;
    out << "[";
    for (size_t i = 0; i < s.size(); ++i) out << (i ? "," : "") << s[i];
    out << "]";
    return out.str();
}

void check_grad(const std::string& what, const Fn& f, const std::vector<Tensor>& inputs) {
    INFO(what);
    const GradcheckResult r = gradcheck(f, inputs);
    INFO(r.report);
    CHECK(r.ok);
}

Fn unary(const char* op) {
    return [op](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0].call(op)}; };
}
Fn binary(const char* op) {
    return [op](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0].call(op, {}, {x[1]})}; };
}

}  // namespace

TEST_CASE("gradcheck: unary elementwise ops, real and complex", "[autodiff]") {
    Runtime rt = make_runtime();
    struct Case {
        const char* op;
        double lo, hi;
        bool complex;
    };
    const Case cases[] = {
        {"core.neg", -1, 1, true},        {"core.conj", -1, 1, true},      {"core.abs", 0.2, 1, true},
        {"core.exp", -1, 1, true},        {"core.log", 0.5, 2, true},      {"core.sin", -1, 1, true},
        {"core.cos", -1, 1, true},        {"core.tan", -1, 1, true},       {"core.tanh", -1, 1, true},
        {"core.sqrt", 0.5, 2, true},      {"core.rsqrt", 0.5, 2, true},    {"core.reciprocal", 0.5, 2, true},
        {"core.square", -1, 1, true},     {"core.expm1", -1, 1, true},     {"core.log1p", 0, 1, true},
        {"core.sinh", -1, 1, true},       {"core.cosh", -1, 1, true},      {"core.arcsin", -0.5, 0.5, true},
        {"core.arccos", -0.5, 0.5, true}, {"core.arctan", -1, 1, true},    {"core.sigmoid", -1, 1, true},
        {"core.erf", -1, 1, false},       {"core.real", -1, 1, true},      {"core.imag", -1, 1, true},
        {"core.angle", 0.2, 1, true},     {"core.sign", 0.1, 1, true},     {"core.floor", 0.1, 0.9, false},
        {"core.ceil", 0.1, 0.9, false},   {"core.round", 0.1, 0.4, false},
    };
    uint32_t seed = 1;
    for (const Case& c : cases) {
        check_grad(std::string(c.op) + " f64", unary(c.op), {input(rt, {2, 3}, DType::f64, c.lo, c.hi, seed++)});
        if (c.complex) {
            check_grad(std::string(c.op) + " c128", unary(c.op), {input(rt, {2, 3}, DType::c128, c.lo, c.hi, seed++)});
        }
    }
}

TEST_CASE("gradcheck: binary elementwise ops with broadcasting, real and complex", "[autodiff]") {
    Runtime rt = make_runtime();
    struct Case {
        const char* op;
        double lo_a, hi_a, lo_b, hi_b;
        bool complex;
    };
    const Case cases[] = {
        {"core.add", -1, 1, -1, 1, true},      {"core.sub", -1, 1, -1, 1, true},       {"core.mul", -1, 1, -1, 1, true},
        {"core.div", -1, 1, 0.5, 2, true},     {"core.pow", 0.5, 2, -1, 1, true},      {"core.maximum", -1, 1, -1, 1, false},
        {"core.minimum", -1, 1, -1, 1, false}, {"core.arctan2", -1, 1, 0.2, 1, false}, {"core.complex", -1, 1, -1, 1, false},
    };
    const std::pair<Shape, Shape> shapes[] = {{{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{2, 1}, {1, 3}}, {{}, {2, 2}}};
    uint32_t seed = 100;
    for (const Case& c : cases) {
        for (const auto& [sa, sb] : shapes) {
            for (DType d : {DType::f64, DType::c128}) {
                if (d == DType::c128 && !c.complex) continue;
                check_grad(std::string(c.op) + (d == DType::f64 ? " f64 " : " c128 ") + shape_str(sa) + shape_str(sb),
                           binary(c.op), {input(rt, sa, d, c.lo_a, c.hi_a, seed), input(rt, sb, d, c.lo_b, c.hi_b, seed + 1)});
                seed += 2;
            }
        }
    }
}

TEST_CASE("gradcheck: where, cast, copy and contiguous on strided inputs", "[autodiff]") {
    Runtime rt = make_runtime();
    const Tensor cond = rt.tensor<bool>({true, false, true}, {3});
    check_grad("where", [&](const std::vector<Tensor>& x) { return std::vector<Tensor>{where(cond, x[0], x[1])}; },
               {input(rt, {2, 3}, DType::f64, -1, 1, 1), input(rt, {2, 1}, DType::f64, -1, 1, 2)});
    check_grad("cast f64 -> c128", [](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0].to(DType::c128)}; },
               {input(rt, {3}, DType::f64, -1, 1, 3)});
    check_grad("cast c128 -> f64", [](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0].to(DType::f64)}; },
               {input(rt, {3}, DType::c128, -1, 1, 4)});
    for (const char* op : {"core.copy", "core.contiguous"}) {
        check_grad(op, [op](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0].transpose(0, 1).call(op)}; },
                   {input(rt, {2, 3}, DType::c128, -1, 1, 5)});
    }
    // A strided input (a transposed view) through a binary op.
    check_grad("mul of a transposed view",
               [](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0].transpose(0, 1) * x[1]}; },
               {input(rt, {3, 2}, DType::f64, -1, 1, 6), input(rt, {2, 3}, DType::f64, -1, 1, 7)});
}

TEST_CASE("gradcheck: reductions over axes, with and without keepdim", "[autodiff]") {
    Runtime rt = make_runtime();
    uint32_t seed = 200;
    for (const char* op : {"core.sum", "core.mean", "core.prod", "core.max", "core.min"}) {
        const bool complex = std::string(op) == "core.sum" || std::string(op) == "core.mean" || std::string(op) == "core.prod";
        for (DType d : {DType::f64, DType::c128}) {
            if (d == DType::c128 && !complex) continue;
            for (bool keepdim : {false, true}) {
                check_grad(std::string(op) + " axes [1]",
                           [op, keepdim](const std::vector<Tensor>& x) {
                               return std::vector<Tensor>{x[0].call(op, {Attr("axes", {1}), Attr("keepdim", keepdim)})};
                           },
                           {input(rt, {2, 3, 2}, d, 0.5, 1.5, seed++)});
                check_grad(std::string(op) + " all",
                           [op, keepdim](const std::vector<Tensor>& x) {
                               return std::vector<Tensor>{x[0].call(op, {Attr("keepdim", keepdim)})};
                           },
                           {input(rt, {2, 3}, d, 0.5, 1.5, seed++)});
            }
        }
    }
    // prod with zeros: one zero per group, then two.
    for (const std::vector<double>& values : {std::vector<double>{0.0, 2.0, 3.0, 1.5}, std::vector<double>{0.0, 0.0, 3.0, 1.5}}) {
        check_grad("prod with zeros",
                   [](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0].call("core.prod", {Attr("axes", {0})})}; },
                   {rt.tensor<double>(values, {4, 1})});
    }
    // max over ties shares the gradient: d/dx of max(x) with x = [1, 3, 3] is [0, 1/2, 1/2].
    Tensor t = rt.tensor<double>({1, 3, 3}, {3});
    t.set_requires_grad();
    t.call("core.max").backward();
    check_close(t.grad().to_vector<double>(), std::vector<double>{0, 0.5, 0.5});
}

TEST_CASE("gradcheck: matmul of matrices, vectors and broadcast batches", "[autodiff]") {
    Runtime rt = make_runtime();
    const std::pair<Shape, Shape> shapes[] = {{{2, 3}, {3, 4}},          {{3}, {3, 4}},      {{2, 3}, {3}}, {{3}, {3}},
                                              {{2, 1, 2, 3}, {4, 3, 2}}, {{3, 2}, {2, 2, 3}}};
    uint32_t seed = 300;
    for (const auto& [sa, sb] : shapes) {
        for (DType d : {DType::f64, DType::c128}) {
            check_grad("matmul " + shape_str(sa) + shape_str(sb), binary("core.matmul"),
                       {input(rt, sa, d, -1, 1, seed), input(rt, sb, d, -1, 1, seed + 1)});
            seed += 2;
        }
    }
    check_grad(
        "matmul of transposed views",
        [](const std::vector<Tensor>& x) { return std::vector<Tensor>{matmul(x[0].transpose(0, 1), x[1].transpose(0, 1))}; },
        {input(rt, {3, 2}, DType::c128, -1, 1, 1), input(rt, {4, 3}, DType::c128, -1, 1, 2)});
}

TEST_CASE("gradcheck: views, slices, diagonals and joins", "[autodiff]") {
    Runtime rt = make_runtime();
    using Attrs = std::vector<Attr>;
    struct Case {
        const char* what;
        const char* op;
        Attrs attrs;
        Shape shape;
    };
    const Case cases[] = {
        {"reshape", "core.reshape", {Attr("shape", {3, -1})}, {2, 3, 2}},
        {"permute", "core.permute", {Attr("axes", {2, 0, 1})}, {2, 3, 2}},
        {"permute negative", "core.permute", {Attr("axes", {-1, 0, 1})}, {2, 3, 2}},
        {"transpose", "core.transpose", {Attr("dim0", 0), Attr("dim1", 2)}, {2, 3, 2}},
        {"expand", "core.expand", {Attr("shape", {2, 3, 4})}, {3, 1}},
        {"squeeze", "core.squeeze", {}, {2, 1, 3}},
        {"unsqueeze", "core.unsqueeze", {Attr("axis", 1)}, {2, 3}},
        {"slice", "core.slice", {Attr("axis", 1), Attr("start", 1), Attr("stop", 5)}, {2, 6}},
        {"slice step 2", "core.slice", {Attr("axis", 1), Attr("start", 1), Attr("step", 2)}, {2, 6}},
        {"slice step 3", "core.slice", {Attr("axis", 0), Attr("step", 3)}, {7, 2}},
        {"slice negative step", "core.slice", {Attr("axis", 1), Attr("step", -2)}, {2, 7}},
        {"slice negative bounds", "core.slice", {Attr("axis", 0), Attr("start", -3), Attr("stop", -1)}, {5}},
        {"diagonal", "core.diagonal", {}, {3, 3}},
        {"diagonal offset 1", "core.diagonal", {Attr("offset", 1)}, {3, 4}},
        {"diagonal offset -1", "core.diagonal", {Attr("offset", -1)}, {4, 3}},
        {"diagonal axes 0 2", "core.diagonal", {Attr("axis1", 0), Attr("axis2", 2)}, {3, 2, 3}},
        {"diagonal axes 2 0", "core.diagonal", {Attr("offset", 1), Attr("axis1", 2), Attr("axis2", 0)}, {3, 2, 4}},
    };
    uint32_t seed = 400;
    for (const Case& c : cases) {
        for (DType d : {DType::f64, DType::c128}) {
            const Attrs attrs = c.attrs;
            const char* op = c.op;
            check_grad(c.what, [op, attrs](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0].call(op, attrs)}; },
                       {input(rt, c.shape, d, -1, 1, seed++)});
        }
    }
    for (int64_t axis : {0, 1, -1}) {
        check_grad("concat", [axis](const std::vector<Tensor>& x) { return std::vector<Tensor>{concat(x, axis)}; },
                   {input(rt, {2, 2}, DType::f64, -1, 1, 1), input(rt, {2, 2}, DType::f64, -1, 1, 2),
                    input(rt, {2, 2}, DType::c128, -1, 1, 3)});
        check_grad("stack", [axis](const std::vector<Tensor>& x) { return std::vector<Tensor>{stack(x, axis)}; },
                   {input(rt, {2, 3}, DType::c128, -1, 1, 4), input(rt, {2, 3}, DType::c128, -1, 1, 5)});
    }
}

TEST_CASE("gradcheck: a wrong rule is caught", "[autodiff]") {
    // The checker itself must be able to fail: d/dx sin(x) is not sin(x).
    Runtime rt = make_runtime();
    const GradcheckResult r = gradcheck(
        [](const std::vector<Tensor>& x) {
            return std::vector<Tensor>{x[0].sin() + (x[0] - x[0].detach()) * (x[0].sin() - x[0].cos()).detach()};
        },
        {input(rt, {3}, DType::f64, -1, 1, 9)});
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.report, Catch::Contains("vjp input 0 element"));
}

TEST_CASE("gradcheck: a wrong forward-mode rule is caught by the JVP check alone", "[autodiff]") {
    Runtime rt = make_runtime();
    GradcheckOptions only_jvp;
    only_jvp.check_vjp = false;
    const GradcheckResult r = gradcheck(
        [](const std::vector<Tensor>& x) {
            return std::vector<Tensor>{x[0].sin() + (x[0] - x[0].detach()) * (x[0].sin() - x[0].cos()).detach()};
        },
        {input(rt, {3}, DType::f64, -1, 1, 9)}, only_jvp);
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.report, Catch::Contains("jvp output 0 element"));
}
