// What the host does around a plugin's rules: non-differentiable outputs, a failing rule, a
// cotangent of the wrong shape, an op without a JVP rule.
#include "ferro_test.hpp"

using namespace ferro;
using namespace ferro::test;

namespace {
Runtime runtime_with_ad_fixture() {
    Runtime rt = make_runtime();
    rt.load_plugin(build_dir() + "/tests/fixtures/autodiff/libferro_fixture_ad.so");
    return rt;
}
}  // namespace

TEST_CASE("plugin rules: a plugin op differentiates through its own VJP and JVP", "[autodiff]") {
    Runtime rt = runtime_with_ad_fixture();
    Tensor x = rt.tensor<double>({1.0, -2.0}, {2});
    x.set_requires_grad();
    const auto outs = rt.call("fixture_ad.split", {x});
    check_close(outs[0].to_vector<double>(), std::vector<double>{2.0, -4.0});
    (outs[0] * outs[0]).sum().backward();  // d/dx (2x)^2 = 8x
    check_close(x.grad().to_vector<double>(), std::vector<double>{8.0, -16.0});
    const auto [ys, ts] = jvp([&](const std::vector<Tensor>& in) { return rt.call("fixture_ad.split", {in[0]}); }, {x.detach()},
                              {rt.tensor<double>({1.0, 1.0}, {2})});
    check_close(ts[0].to_vector<double>(), std::vector<double>{2.0, 2.0});
    CHECK_FALSE(ts[1]);  // the non-differentiable output carries no tangent
}

TEST_CASE("plugin rules: a gradient through a non-differentiable output is NOT_DIFFERENTIABLE", "[autodiff]") {
    Runtime rt = runtime_with_ad_fixture();
    Tensor x = rt.tensor<double>({1.0}, {1});
    x.set_requires_grad();
    const auto outs = rt.call("fixture_ad.split", {x});
    CHECK_FALSE(outs[1].requires_grad());
    check_error([&] { outs[1].backward(); }, FERRO_NOT_DIFFERENTIABLE,
                "backward: the root is fixture_ad.split output 1, which is not differentiable");
    check_error([&] { vjp({outs[0].sum()}, {outs[1]}); }, FERRO_NOT_DIFFERENTIABLE,
                "vjp: input 0 is fixture_ad.split output 1, which is not differentiable");
}

TEST_CASE("plugin rules: a failing rule stops backward with its status, naming the op", "[autodiff]") {
    Runtime rt = runtime_with_ad_fixture();
    Tensor x = rt.tensor<double>({1.0}, {1});
    x.set_requires_grad();
    const Tensor y = rt.call("fixture_ad.failing", {x})[0].sum();
    check_error([&] { y.backward(Tensor(), /*retain_graph=*/true); }, FERRO_FAILED_PRECONDITION,
                "backward: the VJP rule of fixture_ad.failing (node 2 of 2 from the root) failed: fixture rule refused");
    CHECK_FALSE(x.grad());
    // The tape is consistent: the same error again, not a crash or a freed-graph error.
    check_error([&] { y.backward(); }, FERRO_FAILED_PRECONDITION, "fixture rule refused");
    // Forward mode needs a JVP rule.
    check_error([&] { rt.call("fixture_ad.failing", {make_dual(x.detach(), rt.tensor<double>({1.0}, {1}))}); },
                FERRO_UNIMPLEMENTED, "fixture_ad.failing: the op has no JVP rule");
}

TEST_CASE("plugin rules: a cotangent of the wrong shape is INTERNAL, naming op and input", "[autodiff]") {
    Runtime rt = runtime_with_ad_fixture();
    Tensor x = rt.tensor<double>({1.0, 2.0}, {2});
    x.set_requires_grad();
    check_error([&] { rt.call("fixture_ad.misshapen", {x})[0].sum().backward(); }, FERRO_INTERNAL,
                "fixture_ad.misshapen: the VJP rule returned a cotangent of shape [7] for input 0 of shape [2]");
}

TEST_CASE("plugin rules: a recorded call's residuals reach its VJP rule and go with the graph", "[autodiff]") {
    Runtime rt = runtime_with_ad_fixture();
    rt.load_plugin(build_dir() + "/tests/fixtures/autodiff/libferro_fixture_residual.so");
    Tensor x = rt.tensor<double>({1.0, -2.0, 3.0}, {3});
    x.set_requires_grad();
    const Tensor y = rt.call("fixture_residual.square", {x})[0];
    check_close(y.to_vector<double>(), std::vector<double>{1.0, 4.0, 9.0});
    // The rule reads x from the residual only (the schema saves nothing): d sum(x^2) = 2x.
    y.sum().backward(Tensor(), /*retain_graph=*/true);
    check_close(x.grad().to_vector<double>(), std::vector<double>{2.0, -4.0, 6.0});
    y.sum().backward();
    check_close(x.grad().to_vector<double>(), std::vector<double>{4.0, -8.0, 12.0});
    // The residual went with the graph: the node can no longer run its rule.
    check_error([&] { y.sum().backward(); }, FERRO_FAILED_PRECONDITION,
                "fixture_residual.square (node 2 of 2 from the root): its saved tensors were freed");

    // A recorded call and a plain one of a module that keeps residuals get a plan each; a
    // module without the flag (fixture_ad) plans both calls once.
    const auto entries = [&] { return rt.plan_cache_stats().entries; };
    const Tensor plain = x.detach();
    uint64_t before = entries();
    (void)rt.call("fixture_residual.square", {plain});
    CHECK(entries() == before + 1);
    check_close(rt.call("fixture_residual.square", {x})[0].to_vector<double>(), std::vector<double>{1.0, 4.0, 9.0});
    CHECK(entries() == before + 1);  // the recorded plan from the first call
    before = entries();
    (void)rt.call("fixture_ad.split", {x});
    (void)rt.call("fixture_ad.split", {plain});
    CHECK(entries() == before + 1);

    // A bound call alternating plain and recorded runs on one signature: the recorded run gets
    // the recorded plan, not the one the plain run left behind (whose rule would find no residual).
    const BoundOp square(rt, "fixture_residual.square");
    check_close(square(plain).to_vector<double>(), std::vector<double>{1.0, 4.0, 9.0});
    Tensor z = x.detach();
    z.set_requires_grad();
    square(z).sum().backward();
    check_close(z.grad().to_vector<double>(), std::vector<double>{2.0, -4.0, 6.0});
    check_close(square(plain).to_vector<double>(), std::vector<double>{1.0, 4.0, 9.0});

    // A plan may keep residuals only for a call the tape records.
    check_error([&] { rt.call("fixture_residual.leaky", {plain}); }, FERRO_INTERNAL,
                "fixture_residual.leaky: module of plugin 'fixture_residual' returned a plan with 1 residuals for a "
                "call the tape does not record");
}

TEST_CASE("plugin rules: residuals reach a plugin built for 1.8 after its outputs, and one built for 1.10 in their own field",
          "[autodiff]") {
    Runtime rt = runtime_with_ad_fixture();
    for (const std::string plugin : {"fixture_residual", "fixture_residual18"}) {
        INFO(plugin);
        rt.load_plugin(build_dir() + "/tests/fixtures/autodiff/libferro_" + plugin + ".so");
        Tensor x = rt.tensor<double>({1.0, -2.0, 3.0}, {3});
        x.set_requires_grad();
        const std::vector<Tensor> outputs = rt.call((plugin + ".square").c_str(), {x});
        REQUIRE(outputs.size() == 1);  // the residual is not an output
        check_close(outputs[0].to_vector<double>(), std::vector<double>{1.0, 4.0, 9.0});
        // The rule fails without the residual the executor wrote: d sum(x^2) = 2x from it.
        outputs[0].sum().backward();
        check_close(x.grad().to_vector<double>(), std::vector<double>{2.0, -4.0, 6.0});
    }
}

TEST_CASE("plugin rules: rules call through the handles the host resolved for their family (ABI 1.12)", "[autodiff]") {
    // declared's rules fail unless the host handed every core op's handle and the family's
    // declared ops; its VJP calls split by that handle.
    Runtime rt = runtime_with_ad_fixture();
    Tensor x = rt.tensor<double>({0.5, -1.5, 3.0}, {3});
    x.set_requires_grad();
    const Tensor y = rt.call("fixture_ad.declared", {x})[0];
    check_close(y.to_vector<double>(), std::vector<double>{1.0, -3.0, 6.0});
    (y * y).sum().backward();  // d/dx (2x)^2 = 8x
    check_close(x.grad().to_vector<double>(), std::vector<double>{4.0, -12.0, 24.0});
    const auto [ys, ts] = jvp([&](const std::vector<Tensor>& in) { return rt.call("fixture_ad.declared", {in[0]}); },
                              {x.detach()}, {rt.tensor<double>({1.0, 2.0, 3.0}, {3})});
    check_close(ts[0].to_vector<double>(), std::vector<double>{2.0, 4.0, 6.0});
}
