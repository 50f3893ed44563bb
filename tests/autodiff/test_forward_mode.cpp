// Forward mode: tangents carried by dual tensors through every op's JVP rule, and
// Hessian-vector products by forward-over-reverse checked against reverse-over-reverse.
#include "ferro_test.hpp"

using namespace ferro;
using namespace ferro::test;

TEST_CASE("forward mode: jvp of a composition is its directional derivative", "[autodiff]") {
    Runtime rt = make_runtime();
    const std::vector<double> xs{0.5, -1.0, 2.0}, vs{1.0, 0.5, -2.0};
    const Tensor x = rt.tensor<double>(xs, {3}), v = rt.tensor<double>(vs, {3});
    // f(x) = sin(x) * x  ->  f'(x) v = (cos(x) x + sin(x)) v
    const auto [ys, ts] = jvp([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0].sin() * in[0]}; }, {x}, {v});
    std::vector<double> want_y, want_t;
    for (size_t i = 0; i < 3; ++i) {
        want_y.push_back(std::sin(xs[i]) * xs[i]);
        want_t.push_back((std::cos(xs[i]) * xs[i] + std::sin(xs[i])) * vs[i]);
    }
    check_close(ys[0].to_vector<double>(), want_y, 1e-15);
    check_close(ts[0].to_vector<double>(), want_t, 1e-14);
    CHECK_FALSE(x.tangent());  // the primal itself carries nothing
}

TEST_CASE("forward mode: bad duals are refused, and ops without a tangent input carry none", "[autodiff]") {
    Runtime rt = make_runtime();
    const Tensor x = rt.tensor<double>({1, 2}, {2});
    check_error(
        [&] {
            make_dual(x, rt.tensor<double>({1, 2, 3}, {3}));
        },
        FERRO_INVALID_ARGUMENT, "make_dual: the tangent has shape [3], the primal [2]");
    check_error([&] { make_dual(rt.tensor<int64_t>({1}, {1}), rt.tensor<double>({1}, {1})); }, FERRO_INVALID_ARGUMENT,
                "make_dual: a i64 primal cannot carry a f64 tangent");
    const Tensor d = make_dual(x, rt.tensor<double>({1, 1}, {2}));
    CHECK_FALSE(x.exp().tangent());
    CHECK(d.exp().tangent());
    CHECK_FALSE(d.call("core.gt", {}, {x}).tangent());  // comparisons are not differentiable
}

TEST_CASE("forward over reverse: HVPs agree with reverse over reverse", "[autodiff]") {
    Runtime rt = make_runtime();
    const Tensor w = rt.tensor<double>(random_values(12, 11), {4, 3});
    auto f = [&](const Tensor& x) {  // a small tanh network plus a quartic term
        const Tensor h = matmul(w, x).tanh();
        return (h * h).sum() + (x * x * x * x).sum() * 0.25 + x.exp().call("core.prod");
    };
    const auto xs = random_values(3, 12), vs = random_values(3, 13);
    Tensor x = rt.tensor<double>(xs, {3});
    x.set_requires_grad();
    const Tensor v = rt.tensor<double>(vs, {3});
    // reverse over reverse
    const Tensor g = grad({f(x)}, {x}, {}, /*create_graph=*/true)[0];
    const Tensor hv_rr = grad({(g * v).sum()}, {x})[0];
    // forward over reverse: the gradient at a dual point carries H v as its tangent
    const Tensor xd = make_dual(x, v);
    const Tensor gd = grad({f(xd)}, {xd})[0];
    REQUIRE(gd.tangent());
    check_close(gd.tangent().to_vector<double>(), hv_rr.to_vector<double>(), 1e-10, 1e-12);
    check_close(gd.to_vector<double>(), g.to_vector<double>(), 1e-14, 1e-14);
}
