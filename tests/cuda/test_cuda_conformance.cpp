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

// Runs part of the conformance library's engine suite on cuda:0.
template <class Part> void conform(Part&& part) {
    Runtime rt = cuda_runtime();
    require_cuda_device(rt);
    expect_conformant(rt, kCuda, part);
}
}  // namespace

// The engine suite (tools/conformance) on cuda:0. The reduction shapes reach each of the
// three strategies: a thread per output for small reductions, a block per output for long
// contiguous ones, partials combined by a second kernel for few outputs over many inputs.
TEST_CASE("cuda: fill copies and casts agree with the cpu engine", "[cuda]") { conform(conformance::fill_and_casts); }

TEST_CASE("cuda: unary ops agree with the cpu engine in every dtype", "[cuda]") { conform(conformance::unary); }

TEST_CASE("cuda: binary ops with broadcasting and where agree with the cpu engine", "[cuda]") { conform(conformance::binary); }

TEST_CASE("cuda: reductions over any axes agree with the cpu engine on each of the three paths", "[cuda]") {
    conform([](const Runtime& rt, conformance::Report& r) {
        conformance::reductions(rt, r, {Shape{3, 4, 5}, Shape{2, 3, 700}, Shape{2, 3, 100000}, Shape{3000, 2, 40}});
    });
}

TEST_CASE("cuda: matmul and einsum agree with the cpu engine for every operand layout", "[cuda]") {
    conform(conformance::products);
}

TEST_CASE("cuda: gradients through cuda tensors match finite differences", "[cuda]") {
    conform([](const Runtime& rt, conformance::Report& r) { conformance::gradients(rt, r, {DType::f64, DType::c128}); });
}

TEST_CASE("cuda: NaN, infinities and out-of-range floats cast to i64 and angle NaN as on the cpu engine", "[cuda]") {
    conform(conformance::special_casts);
}
