// Dispatch through plugin-provided families and a second engine: misbehaving executors are
// contained, mixed engines are refused, transfers are explicit, unload respects live objects.
#include "ferro_test.hpp"

#include <functional>
#include <utility>

using namespace ferro;
using namespace ferro::test;

namespace {
Runtime runtime_with_fixtures() {
    Runtime rt = make_runtime();
    rt.load_plugin(corpus_file("good_engine"));
    rt.load_plugin(corpus_file("good_family"));
    rt.load_plugin(corpus_file("bad_family"));
    return rt;
}
}  // namespace

TEST_CASE("dispatch: a plugin op runs through the host's session services", "[core]") {
    Runtime rt = runtime_with_fixtures();
    const Tensor x = rt.tensor<double>({1, 2, 3}, {3});
    CHECK(rt.call("fixture_bad.scale", {x})[0].to_vector<double>() == std::vector<double>{2, 4, 6});
}

TEST_CASE("dispatch: an executor reaching outside its buffer gets an error, not corruption", "[core]") {
    Runtime rt = runtime_with_fixtures();
    const Tensor x = rt.tensor<double>({1, 2, 3}, {3});
    check_error([&] { rt.call("fixture_bad.out_of_bounds", {x}); }, FERRO_INVALID_ARGUMENT,
                "session copy_strided: operand 'out' reaches outside its buffer");
    CHECK(rt.call("fixture_bad.scale", {x})[0].to_vector<double>() == std::vector<double>{2, 4, 6});
}

TEST_CASE("dispatch: kernel arguments whose struct_size is too small are refused", "[core]") {
    Runtime rt = runtime_with_fixtures();
    const Tensor x = rt.tensor<double>({1, 2, 3}, {3});
    check_error([&] { rt.call("fixture_bad.unsized", {x}); }, FERRO_INVALID_ARGUMENT,
                "binary: ferro_binary_args.struct_size is 0, expected at least " + std::to_string(sizeof(ferro_binary_args)));
}

TEST_CASE("dispatch: a session executor uses a tensor it owns and the engine's native context", "[core]") {
    Runtime rt = runtime_with_fixtures();
    const Tensor x = rt.tensor<double>({1, 2, 3}, {3});
    CHECK(rt.call("fixture_bad.owned", {x})[0].to_vector<double>() == std::vector<double>{11, 12, 13});
    check_error([&] { rt.call("fixture_bad.foreign", {x}); }, FERRO_INVALID_ARGUMENT,
                "session use: the tensor is on engine 'fixture:0', the session on 'cpu'");
}

TEST_CASE("dispatch: an executor that throws is reported as INTERNAL and the host goes on", "[core]") {
    Runtime rt = runtime_with_fixtures();
    const Tensor x = rt.tensor<double>({1}, {1});
    check_error([&] { rt.call("fixture_bad.throws", {x}); }, FERRO_INTERNAL,
                "fixture_bad.throws: execute threw an exception (fixture executor exploded)");
    CHECK((x + x).item<double>() == 2);
}

TEST_CASE("dispatch: a family without a module for the engine lists every reason", "[core]") {
    Runtime rt = runtime_with_fixtures();
    const Tensor x = rt.tensor<double>({1}, {1});
    check_error([&] { rt.call("fixture_good.identity", {x}); }, FERRO_UNIMPLEMENTED,
                "fixture_good.identity: no module can run it on engine 'cpu' — fixture_good: fixture_good "
                "runs on fixture engines only, not cpu");
}

TEST_CASE("dispatch: inputs on two engines are refused, naming both", "[core]") {
    Runtime rt = runtime_with_fixtures();
    const Tensor on_cpu = rt.tensor<double>({1, 2}, {2});
    const Tensor on_fixture = rt.tensor<double>({1, 2}, {2}, "fixture:0");
    CHECK(on_fixture.engine() == "fixture:0");
    check_error([&] { on_cpu + on_fixture; }, FERRO_INVALID_ARGUMENT,
                "core.add: input 1 is on engine 'fixture:0' but input 0 is on 'cpu'; move one with to() first");
}

TEST_CASE("transfer: to() moves tensors between engines explicitly, values intact", "[core]") {
    Runtime rt = runtime_with_fixtures();
    const Tensor a = rt.arange(0, 6).reshape({2, 3}).transpose();  // non-contiguous source
    const Tensor there = a.to("fixture:0");
    CHECK(there.engine() == "fixture:0");
    CHECK(ferro_tensor_data(there.get()) == nullptr);  // not host addressable
    const Tensor back = there.to("cpu");
    CHECK(back.to_vector<int64_t>() == std::vector<int64_t>{0, 3, 1, 4, 2, 5});
    CHECK(a.to("cpu").get() == a.get());  // already there: the same tensor
}

TEST_CASE("dispatch: an engine's kernel failure reaches the caller as that engine's status", "[core]") {
    Runtime rt = runtime_with_fixtures();
    const Tensor a = rt.tensor<double>({1, 2}, {2}, "fixture:0");
    check_error([&] { a + a; }, FERRO_UNIMPLEMENTED, "fixture engine");
}

TEST_CASE("unload: refused while tensors live on the plugin's engine, allowed after", "[core]") {
    Runtime rt = runtime_with_fixtures();
    {
        const Tensor a = rt.tensor<double>({1}, {1}, "fixture:0");
        check_error([&] { rt.unload_plugin("fixture_engine"); }, FERRO_FAILED_PRECONDITION,
                    "plugin 'fixture_engine' still has 1 live object(s)");
    }
    rt.unload_plugin("fixture_engine");
    CHECK(rt.inventory().engines.size() == 1);
}

TEST_CASE("unload: cached plans of a plugin do not block its unload", "[core]") {
    Runtime rt = runtime_with_fixtures();
    const Tensor x = rt.tensor<double>({1}, {1});
    rt.call("fixture_bad.scale", {x});
    CHECK(rt.plan_cache_stats().entries >= 1);
    rt.unload_plugin("fixture_bad");
    check_error([&] { rt.call("fixture_bad.scale", {x}); }, FERRO_NOT_FOUND, "no op named 'fixture_bad.scale'");
}

namespace {
// The phase of the error `fn` throws (FERRO_PHASE_*), with its code.
std::pair<uint32_t, uint32_t> failure_phase(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const Error& e) {
        return {e.code(), e.phase()};
    }
    FAIL("no error");
    return {};
}
}  // namespace

TEST_CASE("errors: a status says where it happened: load, prepare, execute, backward, or before any", "[core]") {
    Runtime rt = runtime_with_fixtures();
    rt.load_plugin(build_dir() + "/tests/fixtures/autodiff/libferro_fixture_ad.so");
    const Tensor x = rt.tensor<double>({1, 2, 3}, {3});
    using Phase = std::pair<uint32_t, uint32_t>;
    // An executor's failure, and infer's (shapes that do not broadcast).
    CHECK(failure_phase([&] { rt.call("fixture_bad.out_of_bounds", {x}); }) ==
          Phase{FERRO_INVALID_ARGUMENT, FERRO_PHASE_EXECUTE});
    CHECK(failure_phase([&] { (void)(x + rt.zeros({2})); }) == Phase{FERRO_INVALID_ARGUMENT, FERRO_PHASE_PREPARE});
    // Argument checks come before any phase.
    CHECK(failure_phase([&] { x.call("core.sum", {Attr("axis", int64_t{0})}); }) ==
          Phase{FERRO_INVALID_ARGUMENT, FERRO_PHASE_NONE});
    CHECK(failure_phase([&] { rt.call("core.add", {x}); }) == Phase{FERRO_INVALID_ARGUMENT, FERRO_PHASE_NONE});
    // A VJP rule's failure, during backward.
    Tensor w = rt.tensor<double>({1.0, 2.0}, {2});
    w.set_requires_grad();
    const Tensor y = rt.call("fixture_ad.misshapen", {w})[0].sum();
    CHECK(failure_phase([&] { y.backward(); }) == Phase{FERRO_INTERNAL, FERRO_PHASE_BACKWARD});
    // A file that is not a plugin.
    CHECK(failure_phase([&] { rt.load_plugin(corpus_file("truncated")); }).second == FERRO_PHASE_LOAD);
    // The C API's accessor; NULL (success) has none.
    CHECK(ferro_status_phase(nullptr) == FERRO_PHASE_NONE);
}
