// A plan may choose a dense non-row-major layout for its outputs (ABI 1.1): the host allocates
// the output that way, and refuses a layout that is not dense.
#include "ferro_test.hpp"

using namespace ferro;
using namespace ferro::test;

TEST_CASE("core: a plan's chosen output layout is used, and a non-dense one refused", "[core]") {
    Runtime rt = make_runtime();
    rt.load_plugin(build_dir() + "/tests/fixtures/layout/libferro_fixture_layout.so");
    const Tensor x = rt.tensor<double>({1, 2, 3, 4, 5, 6}, {2, 3});
    const Tensor y = rt.call("fixture_layout.column_major", {x})[0];
    CHECK(y.shape() == Shape{2, 3});
    CHECK(y.strides() == Shape{1, 2});
    CHECK(y.to_vector<double>() == std::vector<double>{1, 2, 3, 4, 5, 6});
    check_error([&] { rt.call("fixture_layout.overlapping", {x}); }, FERRO_INTERNAL,
                "fixture_layout.overlapping: module of plugin 'fixture_layout' chose strides [0, 0] for output 0 of "
                "shape [2, 3], which are not a dense layout");
    // Empty outputs keep row-major whatever the plan asks.
    CHECK(rt.call("fixture_layout.overlapping", {rt.zeros({0, 3}, DType::f64)})[0].shape() == Shape{0, 3});
}
