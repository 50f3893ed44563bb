// The conformance suite: core ops, einsum, linalg/fft through cuda tensors and autodiff on
// cuda:0 against the cpu engine, in every dtype. Shapes are chosen to reach each path of the
// kernels: dense and strided elementwise maps, the three reduction strategies, and gemm with
// row-major, column-major, conjugated, broadcast and strided operands.
#include "cuda_test.hpp"
#include "engine_conformance.hpp"

using namespace ferro;
using namespace ferro::test;

namespace {
const char* const kCuda = "cuda:0";

// Runs part of the shared suite on cuda:0.
template <class Part>
void conform(Part&& part) {
    Runtime rt = cuda_runtime();
    require_cuda_device(rt);
    part(rt, EngineUnderTest(rt, kCuda));
}
}  // namespace

// The shared suite (engine_conformance.hpp) on cuda:0. The reduction shapes reach each of the
// three strategies: a thread per output for small reductions, a block per output for long
// contiguous ones, partials combined by a second kernel for few outputs over many inputs.
TEST_CASE("cuda: fill copies and casts agree with the cpu engine", "[cuda]") {
    conform([](const Runtime& rt, const EngineUnderTest& e) { conform_fill_and_casts(rt, e); });
}

TEST_CASE("cuda: unary ops agree with the cpu engine in every dtype", "[cuda]") {
    conform([](const Runtime& rt, const EngineUnderTest& e) { conform_unary(rt, e); });
}

TEST_CASE("cuda: binary ops with broadcasting and where agree with the cpu engine", "[cuda]") {
    conform([](const Runtime& rt, const EngineUnderTest& e) { conform_binary(rt, e); });
}

TEST_CASE("cuda: reductions over any axes agree with the cpu engine on each of the three paths", "[cuda]") {
    conform([](const Runtime& rt, const EngineUnderTest& e) { conform_reductions(rt, e,
                       {Shape{3, 4, 5}, Shape{2, 3, 700}, Shape{2, 3, 100000}, Shape{3000, 2, 40}}); });
}

TEST_CASE("cuda: matmul and einsum agree with the cpu engine for every operand layout", "[cuda]") {
    conform([](const Runtime& rt, const EngineUnderTest& e) { conform_products(rt, e); });
}

TEST_CASE("cuda: gradients through cuda tensors match finite differences", "[cuda]") {
    conform([](const Runtime& rt, const EngineUnderTest& e) { conform_gradients(rt, e, {DType::f64, DType::c128}); });
}

TEST_CASE("cuda: NaN, infinities and out-of-range floats cast to i64 and angle NaN as on the cpu engine", "[cuda]") {
    Runtime rt = cuda_runtime();
    require_cuda_device(rt);
    check_special_casts(rt, kCuda);
}
