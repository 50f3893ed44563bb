// The conformance suite: core ops, einsum, linalg/fft through cuda tensors and autodiff on
// cuda:0 against the cpu engine, in every dtype. Shapes are chosen to reach each path of the
// kernels: dense and strided elementwise maps, the three reduction strategies, and gemm with
// row-major, column-major, conjugated, broadcast and strided operands.
#include "cuda_test.hpp"
#include "engine_compare.hpp"

#include <ferro/gradcheck.hpp>

#include <limits>
#include <string>

using namespace ferro;
using namespace ferro::test;

namespace {

const char* const kCuda = "cuda:0";

void check_same(const Tensor& on_cuda, const Tensor& on_cpu, DType dtype) { check_same_on(kCuda, on_cuda, on_cpu, dtype); }

template <class F>
void compare(const std::string& what, DType dtype, F&& f, const Tensor& x_cpu) {
    compare_on(kCuda, what, dtype, std::forward<F>(f), x_cpu);
}

}  // namespace

TEST_CASE("cuda: fill copies and casts agree with the cpu engine", "[cuda]") {
    Runtime rt = cuda_runtime();
    require_cuda_device(rt);
    for (DType dt : kEngineDtypes) {
        INFO(dtype_name(dt));
        check_same(rt.zeros({3, 5}, dt, kCuda), rt.zeros({3, 5}, dt), dt);
        check_same(rt.full({7}, -2.5, dt, kCuda), rt.full({7}, -2.5, dt), dt);
        const Tensor x = seeded_input(rt, {4, 6, 5}, dt, 3);
        const Tensor v = x.to(kCuda);
        check_same(v.permute({2, 0, 1}).contiguous(), x.permute({2, 0, 1}).contiguous(), dt);
        check_same(v.slice(1, 1, 5, 2).contiguous(), x.slice(1, 1, 5, 2).contiguous(), dt);
        check_same(v.slice(2, 0, 1).expand({4, 6, 9}).contiguous(), x.slice(2, 0, 1).expand({4, 6, 9}).contiguous(), dt);
        for (DType to : kEngineDtypes) {
            INFO("to " << dtype_name(to));
            check_same(v.to(to), x.to(to), to);
        }
    }
}

TEST_CASE("cuda: unary ops agree with the cpu engine in every dtype", "[cuda]") {
    Runtime rt = cuda_runtime();
    require_cuda_device(rt);
    for (DType dt : kEngineDtypes) {
        const Tensor x = seeded_input(rt, {5, 7}, dt, 11);
        for (const char* op : kUnaryOps) {
            const std::string name = std::string("core.") + op;
            compare(name, dt, [&](const Tensor& t) { return t.call(name.c_str()); }, x);                 // dense
            compare(name, dt, [&](const Tensor& t) { return t.transpose(0, 1).call(name.c_str()); }, x);  // strided
        }
    }
}

TEST_CASE("cuda: binary ops with broadcasting and where agree with the cpu engine", "[cuda]") {
    Runtime rt = cuda_runtime();
    require_cuda_device(rt);
    for (DType dt : kEngineDtypes) {
        const Tensor a = seeded_input(rt, {4, 1, 6}, dt, 21), b = seeded_input(rt, {3, 1}, dt, 22);
        const Tensor bv = b.to(kCuda);
        for (const char* op : kBinaryOps) {
            const std::string name = std::string("core.") + op;
            compare(name, dt, [&](const Tensor& t) { return t.call(name.c_str(), {}, {t.engine() == "cpu" ? b : bv}); }, a);
        }
        const Tensor cond = seeded_input(rt, {4, 3, 6}, DType::boolean, 5);
        check_same(where(cond.to(kCuda), a.to(kCuda), bv), where(cond, a, b), dt);
    }
    // Integer division and powers with numpy's rules at the edges.
    const Tensor x = rt.tensor<int64_t>({7, -7, 7, -7, 0, 5}, {6}), y = rt.tensor<int64_t>({2, 2, -2, -2, 0, 0}, {6});
    check_same(x.to(kCuda) / y.to(kCuda), x / y, DType::i64);
    check_same(x.to(kCuda).pow(y.to(kCuda)), x.pow(y), DType::i64);
}

TEST_CASE("cuda: reductions over any axes agree with the cpu engine on each of the three paths", "[cuda]") {
    Runtime rt = cuda_runtime();
    require_cuda_device(rt);
    const Shape axes_list[] = {{0}, {1}, {2}, {0, 2}, {}};
    for (DType dt : kEngineDtypes) {
        // Small reductions (a thread per output), long contiguous ones (a block per output),
        // and few outputs over many inputs (partials combined by a second kernel).
        for (const Shape& shape : {Shape{3, 4, 5}, Shape{2, 3, 700}, Shape{2, 3, 100000}, Shape{3000, 2, 40}}) {
            const Tensor x = seeded_input(rt, shape, dt, 31);
            for (const Shape& axes : axes_list) {
                for (const char* op : {"sum", "prod", "max", "min", "any", "all"}) {
                    const std::string name = std::string("core.") + op;
                    INFO("shape " << shape[0] << "x" << shape[1] << "x" << shape[2] << ", axes " << axes.size());
                    compare(name, dt, [&](const Tensor& t) { return t.call(name.c_str(), {Attr("axes", axes)}); }, x);
                }
            }
        }
    }
}

TEST_CASE("cuda: matmul and einsum agree with the cpu engine for every operand layout", "[cuda]") {
    Runtime rt = cuda_runtime();
    require_cuda_device(rt);
    for (DType dt : {DType::f32, DType::f64, DType::c64, DType::c128}) {
        INFO(dtype_name(dt));
        const Tensor a = seeded_input(rt, {2, 70, 130}, dt, 41), b = seeded_input(rt, {2, 130, 90}, dt, 42);
        const Tensor av = a.to(kCuda), bv = b.to(kCuda);
        check_same(matmul(av, bv), matmul(a, b), dt);                                          // row-major C
        check_same(matmul(bv.transpose(1, 2), av.transpose(1, 2)), matmul(b.transpose(1, 2), a.transpose(1, 2)), dt);
        check_same(matmul(av.slice(2, 0, 130, 2), bv.slice(1, 0, 130, 2)), matmul(a.slice(2, 0, 130, 2), b.slice(1, 0, 130, 2)), dt);
        check_same(matmul(av, bv.slice(0, 0, 1)), matmul(a, b.slice(0, 0, 1)), dt);          // a broadcast batch
        const Tensor u = seeded_input(rt, {300, 11}, dt, 48), w = seeded_input(rt, {11, 3}, dt, 49);
        check_same(matmul(u.to(kCuda), w.to(kCuda)), matmul(u, w), dt);
        check_same(matmul(u.to(kCuda).transpose(), u.to(kCuda)), matmul(u.transpose(), u), dt);
        const Tensor c = seeded_input(rt, {5, 6}, dt, 43), d = seeded_input(rt, {6, 4}, dt, 44), e = seeded_input(rt, {4, 3}, dt, 45);
        check_same(einsum("ij,jk,kl->il", {c.to(kCuda), d.to(kCuda), e.to(kCuda)}), einsum("ij,jk,kl->il", {c, d, e}), dt);
        check_same(einsum("bij,bkj->bik", {av, av}), einsum("bij,bkj->bik", {a, a}), dt);
        check_same(einsum("bij,bkj->bki", {av, av}), einsum("bij,bkj->bki", {a, a}), dt);  // column-major C
        check_same(einsum("ii->i", {c.slice(1, 0, 5).to(kCuda)}), einsum("ii->i", {c.slice(1, 0, 5)}), dt);
        if (dt == DType::c64 || dt == DType::c128) {  // conjugated operands: the VJP of a complex product
            const Tensor x = seeded_input(rt, {6, 5}, dt, 46);
            check_same(matmul(c.to(kCuda).conj(), x.to(kCuda).conj()), matmul(c.conj(), x.conj()), dt);
        }
    }
}

TEST_CASE("cuda: gradients through cuda tensors match finite differences", "[cuda]") {
    Runtime rt = cuda_runtime();
    require_cuda_device(rt);
    for (DType dt : {DType::f64, DType::c128}) {
        INFO(dtype_name(dt));
        const Tensor a = seeded_input(rt, {3, 4}, dt, 51).to(kCuda), b = seeded_input(rt, {4, 2}, dt, 52).to(kCuda);
        const auto f = [](const std::vector<Tensor>& x) {
            return std::vector<Tensor>{(matmul(x[0], x[1]) * x[0].slice(1, 0, 2)).abs().sum({0}) + x[1].abs().sum({0}).exp()};
        };
        const GradcheckResult r = gradcheck(f, {a, b});
        INFO(r.report);
        CHECK(r.ok);
        // Four operands: the einsum rules walk the contraction tree (its path read back from the device).
        const Tensor c = seeded_input(rt, {2, 3}, dt, 53).to(kCuda), d = seeded_input(rt, {3, 2}, dt, 54).to(kCuda);
        const auto chain = [](const std::vector<Tensor>& x) { return std::vector<Tensor>{einsum("ij,jk,kl,lm->im", x)}; };
        const GradcheckResult tree = gradcheck(chain, {a, b, c, d});
        INFO(tree.report);
        CHECK(tree.ok);
    }
}

TEST_CASE("cuda: an einsum tensor network gives the cpu engine's result on cuda", "[cuda]") {
    Runtime rt = cuda_runtime();
    require_cuda_device(rt);
    // An MPS-like chain with a trace: several pairwise steps, permutes and batched products.
    const Tensor a = seeded_input(rt, {8, 2, 8}, DType::f64, 61), b = seeded_input(rt, {8, 2, 8}, DType::f64, 62);
    const Tensor c = seeded_input(rt, {8, 2, 8}, DType::f64, 63);
    const char* spec = "aib,bjc,cka->ijk";
    check_same(einsum(spec, {a.to(kCuda), b.to(kCuda), c.to(kCuda)}), einsum(spec, {a, b, c}), DType::f64);
}

TEST_CASE("cuda: NaN, infinities and out-of-range floats cast to i64 and angle NaN as on the cpu engine", "[cuda]") {
    Runtime rt = cuda_runtime();
    require_cuda_device(rt);
    check_special_casts(rt, kCuda);
}
