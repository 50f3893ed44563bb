// A prepared program's gradient (docs/capture.md, "Gradients"): a run whose inputs require
// grad records one grad node for the whole program, whose VJP is itself a prepared program;
// gradients equal the eager calls' and finite differences, to second order; what cannot have
// such a node has its calls recorded one by one, with the same gradients.
#include "ferro_test.hpp"

#include <ferro/capture.hpp>
#include <ferro/einsum.hpp>
#include <ferro/fft.hpp>
#include <ferro/gradcheck.hpp>
#include <ferro/linalg.hpp>

#include <thread>

using namespace ferro;
using namespace ferro::test;

namespace {

Runtime runtime_with_plugins() { return make_runtime({build_dir() + "/lib/ferro/plugins"}); }

Tensor loss_of(const Tensor& x, const Tensor& w, const Tensor& b) { return ((x.matmul(w) + b).tanh() * x.matmul(w)).sum(); }

PreparedProgram captured(Runtime& rt, const std::vector<Tensor>& inputs,
                         const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& f) {
    Capture capture(rt, inputs);
    return capture.end(f(inputs)).prepare();
}

// Gradients of f's first output through eager calls, for comparison.
std::vector<Tensor> eager_grads(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& f,
                                const std::vector<Tensor>& inputs, const std::vector<bool>& wrt) {
    std::vector<Tensor> leaves, asked;
    for (size_t i = 0; i < inputs.size(); ++i) {
        leaves.push_back(inputs[i].detach());
        if (wrt[i]) asked.push_back(leaves.back().set_requires_grad());
    }
    return grad({f(leaves).at(0)}, asked);
}

}  // namespace

TEST_CASE("capture: a run records one grad node for the program; its gradients are the eager ones", "[capture]") {
    Runtime rt = make_runtime();
    const auto f = [](const std::vector<Tensor>& in) { return std::vector{loss_of(in[0], in[1], in[2])}; };
    const PreparedProgram step =
        captured(rt, {rt.rand({5, 4}, DType::f64, 1), rt.rand({4, 3}, DType::f64, 2), rt.rand({3}, DType::f64, 3)}, f);
    for (int64_t seed = 10; seed < 13; ++seed) {
        Tensor x = rt.rand({5, 4}, DType::f64, seed), w = rt.rand({4, 3}, DType::f64, seed + 1),
               b = rt.rand({3}, DType::f64, seed + 2);
        w.set_requires_grad();
        b.set_requires_grad();
        const Tensor loss = step({x, w, b}).at(0);
        CHECK(loss.grad_fn() == "program");
        loss.backward();
        const std::vector<Tensor> want = eager_grads(f, {x, w, b}, {false, true, true});
        CHECK(!x.grad());
        check_close(w.grad().to_vector<double>(), want[0].to_vector<double>());
        check_close(b.grad().to_vector<double>(), want[1].to_vector<double>());
        // Another set of inputs differentiated: a gradient program of its own.
        x.set_requires_grad();
        const std::vector<Tensor> gx = grad({step({x, w, b}).at(0)}, {x});
        check_close(gx.at(0).to_vector<double>(), eager_grads(f, {x, w, b}, {true, false, false}).at(0).to_vector<double>());
    }
}

TEST_CASE("capture: program gradients match finite differences, to second order", "[capture]") {
    Runtime rt = make_runtime();
    const auto f = [](const std::vector<Tensor>& in) {
        const Tensor h = (in[0].matmul(in[1]) * 0.5).sin();
        return std::vector{(h * h).sum(), h.exp()};  // two outputs, one a matrix
    };
    const std::vector<Tensor> inputs = {rt.rand({3, 4}, DType::f64, 1), rt.rand({4, 2}, DType::f64, 2)};
    const PreparedProgram step = captured(rt, inputs, f);
    GradcheckOptions first;
    first.check_jvp = true;  // forward mode goes through the calls one by one
    const GradcheckResult r1 = gradcheck([&](const std::vector<Tensor>& in) { return step(in); }, inputs, first);
    INFO(r1.report);
    CHECK(r1.ok);
    // The gradient of the gradient (create_graph runs the joint program on the tape): the
    // derivative of <grad(loss), v2> along v1, against central differences of the gradient.
    const std::vector<Tensor> v1 = {rt.rand({3, 4}, DType::f64, 7), rt.rand({4, 2}, DType::f64, 8)},
                              v2 = {rt.rand({3, 4}, DType::f64, 9), rt.rand({4, 2}, DType::f64, 10)};
    const auto inner = [](const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
        return (a[0] * b[0]).sum() + (a[1] * b[1]).sum();
    };
    const auto gradient = [&](const std::vector<Tensor>& at, bool create) {
        std::vector<Tensor> leaves = {at[0].detach().set_requires_grad(), at[1].detach().set_requires_grad()};
        const Tensor loss = step(leaves)[0];
        CHECK(loss.grad_fn() == "program");
        return std::pair{leaves, grad({loss}, leaves, {}, create)};
    };
    const auto [leaves, g] = gradient(inputs, true);
    CHECK(g[0].requires_grad());
    const double analytic = inner(grad({inner(g, v2)}, leaves), v1).item<double>();
    const double h = 1e-6;
    const auto moved = [&](double by) { return std::vector{inputs[0] + v1[0] * by, inputs[1] + v1[1] * by}; };
    const double numeric = (inner(gradient(moved(h), false).second, v2).item<double>() -
                            inner(gradient(moved(-h), false).second, v2).item<double>()) /
                           (2 * h);
    INFO("analytic " << analytic << ", finite differences " << numeric);
    CHECK(std::abs(analytic - numeric) <= 1e-6 * (1 + std::abs(numeric)));
}

TEST_CASE("capture: plugin ops differentiate through the program's grad node", "[capture]") {
    Runtime rt = runtime_with_plugins();
    const auto f = [](const std::vector<Tensor>& in) {
        const Tensor x = linalg::solve(in[0], in[1]);
        return std::vector{(fft::fft(x).abs() * x).sum()};
    };
    const Tensor a = rt.rand({4, 4}, DType::f64, 3) + rt.eye(4) * 4.0, b = rt.rand({4, 3}, DType::f64, 4);
    const PreparedProgram step = captured(rt, {a, b}, f);
    Tensor a2 = rt.rand({4, 4}, DType::f64, 5) + rt.eye(4) * 4.0, b2 = rt.rand({4, 3}, DType::f64, 6);
    a2.set_requires_grad();
    b2.set_requires_grad();
    const Tensor loss = step({a2, b2}).at(0);
    CHECK(loss.grad_fn() == "program");
    const std::vector<Tensor> got = grad({loss}, {a2, b2}), want = eager_grads(f, {a2, b2}, {true, true});
    check_close(got[0].to_vector<double>(), want[0].to_vector<double>());
    check_close(got[1].to_vector<double>(), want[1].to_vector<double>());
    const GradcheckResult r = gradcheck([&](const std::vector<Tensor>& in) { return step(in); }, {a2.detach(), b2.detach()});
    INFO(r.report);
    CHECK(r.ok);
}

TEST_CASE("capture: einsum networks differentiate through a replay", "[capture]") {
    Runtime rt = runtime_with_plugins();
    const auto f = [](const std::vector<Tensor>& in) {
        return std::vector{einsum("ij,jk,kl->il", {in[0], in[1], in[2]}).tanh().sum()};
    };
    const std::vector<Tensor> inputs = {rt.rand({3, 4}, DType::f64, 1), rt.rand({4, 5}, DType::f64, 2),
                                        rt.rand({5, 2}, DType::f64, 3)};
    const PreparedProgram step = captured(rt, inputs, f);
    std::vector<Tensor> leaves;
    for (int64_t i = 0; i < 3; ++i)
        leaves.push_back(rt.rand(inputs[static_cast<size_t>(i)].shape(), DType::f64, 10 + i).set_requires_grad());
    const Tensor loss = step(leaves).at(0);
    CHECK(loss.grad_fn() == "program");
    const std::vector<Tensor> got = grad({loss}, leaves), want = eager_grads(f, leaves, {true, true, true});
    for (size_t i = 0; i < 3; ++i) check_close(got[i].to_vector<double>(), want[i].to_vector<double>());
}

TEST_CASE("capture: an einsum whose plan keeps residuals differentiates through the program's node", "[capture]") {
    // Four operands, three differentiated: the einsum module keeps its steps' values and path
    // for the rule (ABI 1.8), which become values of the joint program's forward part.
    Runtime rt = runtime_with_plugins();
    const auto f = [](const std::vector<Tensor>& in) {
        return std::vector{(einsum("ij,jk,kl,lm->im", {in[0], in[1], in[2], in[3]}) * 0.5).sin().sum()};
    };
    const std::vector<Shape> shapes = {{3, 4}, {4, 5}, {5, 6}, {6, 2}};
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < shapes.size(); ++i) inputs.push_back(rt.rand(shapes[i], DType::f64, int64_t(i) + 1));
    const PreparedProgram step = captured(rt, inputs, f);
    for (int64_t round = 0; round < 2; ++round) {
        std::vector<Tensor> leaves;
        for (size_t i = 0; i < shapes.size(); ++i) {
            leaves.push_back(rt.rand(shapes[i], DType::f64, 20 + 10 * round + int64_t(i)));
            if (i != 2) leaves.back().set_requires_grad();
        }
        const Tensor loss = step(leaves).at(0);
        CHECK(loss.grad_fn() == "program");
        const std::vector<Tensor> wrt = {leaves[0], leaves[1], leaves[3]};
        const std::vector<Tensor> got = grad({loss}, wrt);
        const std::vector<Tensor> want = eager_grads(f, leaves, {true, true, false, true});
        REQUIRE(want.size() == 3);
        for (size_t i = 0; i < 3; ++i) check_close(got[i].to_vector<double>(), want[i].to_vector<double>());
    }
    // Second order: the VJP runs the joint program on the tape, its einsum keeping residuals
    // again for the steps that read them.
    std::vector<Tensor> leaves, eager_leaves;
    for (size_t i = 0; i < shapes.size(); ++i) {
        leaves.push_back(rt.rand(shapes[i], DType::f64, 50 + int64_t(i)).set_requires_grad());
        eager_leaves.push_back(leaves.back().detach().set_requires_grad());
    }
    const Tensor v = rt.rand(shapes[0], DType::f64, 60);
    const auto mixed = [&](const Tensor& loss, const std::vector<Tensor>& at) {
        const Tensor g0 = grad({loss}, {at[0]}, {}, true).at(0);
        return grad({(g0 * v).sum()}, {at[1]}).at(0);
    };
    const Tensor got = mixed(step(leaves).at(0), leaves), want = mixed(f(eager_leaves).at(0), eager_leaves);
    check_close(got.to_vector<double>(), want.to_vector<double>());
}

TEST_CASE("capture: a program of more than 64 inputs takes one grad node; its gradient sets are kept apart", "[capture]") {
    Runtime rt = make_runtime();
    const auto f = [](const std::vector<Tensor>& in) {
        Tensor t = in[0];
        for (size_t i = 1; i < in.size(); ++i) t = t + in[i] * in[i];
        return std::vector{t.sum()};
    };
    std::vector<Tensor> inputs;
    for (int64_t i = 0; i < 70; ++i) inputs.push_back(rt.rand({3}, DType::f64, i + 1));
    const PreparedProgram step = captured(rt, inputs, f);
    for (const size_t odd : {size_t{1}, size_t{0}}) {  // inputs 65 and 66 differ between the two sets
        std::vector<Tensor> leaves;
        std::vector<bool> wrt;
        for (size_t i = 0; i < inputs.size(); ++i) {
            leaves.push_back(inputs[i].detach());
            wrt.push_back(i % 2 == odd);
            if (wrt.back()) leaves.back().set_requires_grad();
        }
        const Tensor loss = step(leaves).at(0);
        CHECK(loss.grad_fn() == "program");
        std::vector<Tensor> asked;
        for (size_t i = 0; i < leaves.size(); ++i) {
            if (wrt[i]) asked.push_back(leaves[i]);
        }
        const std::vector<Tensor> got = grad({loss}, asked), want = eager_grads(f, leaves, wrt);
        REQUIRE(got.size() == 35);
        for (size_t k = 0; k < got.size(); ++k) check_close(got[k].to_vector<double>(), want[k].to_vector<double>());
    }
}

TEST_CASE("capture: outputs that do not depend on what is differentiated, and inputs as outputs", "[capture]") {
    Runtime rt = make_runtime();
    const auto f = [](const std::vector<Tensor>& in) {
        return std::vector{(in[0] * in[1]).sum(), in[1].exp(), in[0], in[1].to(DType::i64)};
    };
    const std::vector<Tensor> inputs = {rt.rand({6}, DType::f64, 1), rt.rand({6}, DType::f64, 2)};
    const PreparedProgram step = captured(rt, inputs, f);
    Tensor x = rt.rand({6}, DType::f64, 3), y = rt.rand({6}, DType::f64, 4);
    x.set_requires_grad();
    const std::vector<Tensor> out = step({x, y});
    CHECK(out[0].grad_fn() == "program");
    CHECK(!out[1].requires_grad());  // depends on y only
    CHECK(out[2].requires_grad());   // x itself, through the node
    CHECK(!out[3].requires_grad());  // an integer cast
    const std::vector<Tensor> g = grad({out[0], out[2]}, {x}, {rt.ones({}, DType::f64), rt.ones({6}, DType::f64)});
    const std::vector<double> yv = y.to_vector<double>();
    std::vector<double> want(6);
    for (size_t i = 0; i < 6; ++i) want[i] = yv[i] + 1.0;
    check_close(g.at(0).to_vector<double>(), want);
}

TEST_CASE("capture: under NoGrad, inputs that require grad replay without recording anything", "[capture]") {
    Runtime rt = make_runtime();
    const auto f = [](const std::vector<Tensor>& in) { return std::vector{loss_of(in[0], in[1], in[2])}; };
    const PreparedProgram step =
        captured(rt, {rt.rand({5, 4}, DType::f64, 1), rt.rand({4, 3}, DType::f64, 2), rt.rand({3}, DType::f64, 3)}, f);
    Tensor x = rt.rand({5, 4}, DType::f64, 4), w = rt.rand({4, 3}, DType::f64, 5), b = rt.rand({3}, DType::f64, 6);
    w.set_requires_grad();
    b.set_requires_grad();
    Tensor loss;
    {
        const NoGrad off;
        loss = step({x, w, b}).at(0);
    }
    CHECK(!loss.requires_grad());
    CHECK(loss.grad_fn().empty());
    check_close(loss.to_vector<double>(), f({x, w.detach(), b.detach()}).at(0).to_vector<double>());
    CHECK(step({x, w, b}).at(0).grad_fn() == "program");  // grad mode on again: recorded
}

TEST_CASE("capture: a program whose constants require grad records its calls one by one", "[capture]") {
    Runtime rt = make_runtime();
    Tensor w = rt.rand({4, 3}, DType::f64, 1);
    w.set_requires_grad();  // read by the program, not declared: a constant requiring grad
    const auto f = [&](const std::vector<Tensor>& in) { return std::vector{in[0].matmul(w).tanh().sum()}; };
    const PreparedProgram step = captured(rt, {rt.rand({2, 4}, DType::f64, 2)}, f);
    Tensor x = rt.rand({2, 4}, DType::f64, 3);
    x.set_requires_grad();
    const Tensor loss = step({x}).at(0);
    CHECK(loss.grad_fn() == "core.sum");
    const std::vector<Tensor> got = grad({loss}, {x, w});
    Tensor xe = x.detach().set_requires_grad(), we = w.detach().set_requires_grad();
    const std::vector<Tensor> want = grad({xe.matmul(we).tanh().sum()}, {xe, we});
    check_close(got[0].to_vector<double>(), want[0].to_vector<double>());
    check_close(got[1].to_vector<double>(), want[1].to_vector<double>());
}

TEST_CASE("concurrency: one prepared program differentiated on several threads at once", "[capture]") {
    Runtime rt = make_runtime();
    const auto f = [](const std::vector<Tensor>& in) { return std::vector{loss_of(in[0], in[1], in[2])}; };
    const PreparedProgram step =
        captured(rt, {rt.rand({5, 4}, DType::f64, 1), rt.rand({4, 3}, DType::f64, 2), rt.rand({3}, DType::f64, 3)}, f);
    std::vector<std::vector<double>> got(4), want(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int k = 0; k < 20; ++k) {
                Tensor x = rt.rand({5, 4}, DType::f64, 40 + t), w = rt.rand({4, 3}, DType::f64, 50 + t),
                       b = rt.rand({3}, DType::f64, 60 + t);
                w.set_requires_grad();
                got[static_cast<size_t>(t)] = grad({step({x, w, b}).at(0)}, {w}).at(0).to_vector<double>();
            }
        });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; ++t) {
        const std::vector<Tensor> in = {rt.rand({5, 4}, DType::f64, 40 + t), rt.rand({4, 3}, DType::f64, 50 + t),
                                        rt.rand({3}, DType::f64, 60 + t)};
        check_close(got[static_cast<size_t>(t)], eager_grads(f, in, {false, true, false}).at(0).to_vector<double>());
    }
}
