// Second derivatives: create_graph records the backward pass, so gradients are differentiable.
// Hessian-vector products by reverse-over-reverse against closed forms and against finite
// differences of the gradient.
#include "ferro_test.hpp"

using namespace ferro;
using namespace ferro::test;

namespace {

// d/dx <grad f(x), v> = H v, by reverse over reverse.
Tensor hvp(const std::function<Tensor(const Tensor&)>& f, const Tensor& x, const Tensor& v) {
    const Tensor g = grad({f(x)}, {x}, {}, /*create_graph=*/true)[0];
    return grad({(g * v).sum()}, {x})[0];
}

// (grad f(x + eps v) - grad f(x - eps v)) / (2 eps), by first-order reverse mode only.
std::vector<double> hvp_by_differences(const Runtime& rt, const std::function<Tensor(const Tensor&)>& f,
                                       const std::vector<double>& x, const std::vector<double>& v, Shape shape) {
    const double eps = 1e-5;
    auto gradient_at = [&](double sign) {
        std::vector<double> shifted(x.size());
        for (size_t i = 0; i < x.size(); ++i) shifted[i] = x[i] + sign * eps * v[i];
        Tensor xs = rt.tensor<double>(shifted, shape);
        xs.set_requires_grad();
        return grad({f(xs)}, {xs})[0].to_vector<double>();
    };
    const auto plus = gradient_at(1), minus = gradient_at(-1);
    std::vector<double> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) out[i] = (plus[i] - minus[i]) / (2 * eps);
    return out;
}

}  // namespace

TEST_CASE("higher order: the HVP of sum(x^3) is 6 x v", "[autodiff]") {
    Runtime rt = make_runtime();
    const std::vector<double> xs{0.5, -1.0, 2.0}, vs{1.0, 2.0, -3.0};
    Tensor x = rt.tensor<double>(xs, {3});
    x.set_requires_grad();
    const Tensor v = rt.tensor<double>(vs, {3});
    const Tensor h = hvp([](const Tensor& t) { return (t * t * t).sum(); }, x, v);
    std::vector<double> want;
    for (size_t i = 0; i < 3; ++i) want.push_back(6 * xs[i] * vs[i]);
    check_close(h.to_vector<double>(), want, 1e-12, 1e-12);
}

TEST_CASE("higher order: backward with create_graph gives a differentiable .grad", "[autodiff]") {
    Runtime rt = make_runtime();
    Tensor x = rt.tensor<double>({0.3, -0.7}, {2});
    x.set_requires_grad();
    x.exp().sum().backward(Tensor(), false, /*create_graph=*/true);  // exp saves its output
    const Tensor g = x.grad();
    CHECK(g.requires_grad());
    check_close(g.to_vector<double>(), std::vector<double>{std::exp(0.3), std::exp(-0.7)}, 1e-14);
    const Tensor second = grad({g.sum()}, {x})[0];  // d/dx exp(x) again
    check_close(second.to_vector<double>(), std::vector<double>{std::exp(0.3), std::exp(-0.7)}, 1e-14);
}

TEST_CASE("higher order: HVP of a small tanh network matches differences of its gradient", "[autodiff]") {
    Runtime rt = make_runtime();
    const Tensor w1 = rt.tensor<double>(random_values(12, 1), {4, 3});
    const Tensor b1 = rt.tensor<double>(random_values(4, 2), {4});
    const Tensor w2 = rt.tensor<double>(random_values(8, 3), {2, 4});
    // f(x) = sum(tanh(W2 tanh(W1 x + b1))^2) / 2 + sum(x^4) / 4
    auto f = [&](const Tensor& x) {
        const Tensor h = (matmul(w1, x) + b1).tanh();
        const Tensor out = matmul(w2, h).tanh();
        return (out * out).sum() * 0.5 + (x * x * x * x).sum() * 0.25;
    };
    const auto xs = random_values(3, 4), vs = random_values(3, 5);
    Tensor x = rt.tensor<double>(xs, {3});
    x.set_requires_grad();
    const Tensor v = rt.tensor<double>(vs, {3});
    check_close(hvp(f, x, v).to_vector<double>(), hvp_by_differences(rt, f, xs, vs, {3}), 1e-6, 1e-7);
}

TEST_CASE("higher order: second derivatives through matmul, reductions and views", "[autodiff]") {
    Runtime rt = make_runtime();
    const Tensor a = rt.tensor<double>(random_values(6, 6), {2, 3});
    auto f = [&](const Tensor& x) {     // x: [3, 2]
        const Tensor m = matmul(a, x);  // [2, 2]
        const Tensor s = (m * m.transpose(0, 1)).call("core.prod", {Attr("axes", {1})});
        return s.sum() + x.call("core.slice", {Attr("axis", 0), Attr("step", 2)}).exp().sum();
    };
    const auto xs = random_values(6, 7), vs = random_values(6, 8);
    Tensor x = rt.tensor<double>(xs, {3, 2});
    x.set_requires_grad();
    const Tensor v = rt.tensor<double>(vs, {3, 2});
    check_close(hvp(f, x, v).to_vector<double>(), hvp_by_differences(rt, f, xs, vs, {3, 2}), 1e-6, 1e-7);
}
