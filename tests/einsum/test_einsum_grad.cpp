// einsum derivatives: gradcheck (VJP and JVP against central differences) in f64 and c128 on
// expressions with summed, repeated, broadcast and lonely labels, plus second derivatives
// through the rules (which are einsums themselves).
#include "einsum_test.hpp"

#include <ferro/gradcheck.hpp>

using namespace ferro;
using namespace ferro::test;

namespace {

void check_grad(const std::string& subscripts, const std::vector<Tensor>& inputs) {
    INFO(subscripts << " " << dtype_name(inputs[0].dtype()));
    const GradcheckResult r = gradcheck(
        [&](const std::vector<Tensor>& x) { return std::vector{einsum(subscripts, x)}; }, inputs);
    INFO(r.report);
    CHECK(r.ok);
}

Tensor random(const Runtime& rt, const Shape& shape, DType dtype, uint32_t seed) {
    std::vector<cd> values;
    return make_operand(rt, shape, dtype, seed, false, values);
}

}  // namespace

TEST_CASE("einsum grad: VJP and JVP of contractions, traces, diagonals, broadcasts", "[einsum]") {
    const Runtime rt = einsum_runtime();
    struct Item {
        std::string subscripts;
        std::vector<Shape> shapes;
    };
    const Item items[] = {
        {"ij,jk->ik", {{2, 3}, {3, 4}}},
        {"bij,bjk->bki", {{2, 2, 3}, {2, 3, 2}}},
        {"ii->", {{3, 3}}},                       // trace
        {"ii->i", {{3, 3}}},                      // diagonal
        {"iij,jk->ik", {{2, 2, 3}, {3, 2}}},      // a diagonal inside a contraction
        {"ij->", {{2, 3}}},                       // every label lonely
        {"ij,k->ik", {{2, 3}, {4}}},              // j summed in operand 0 only
        {"i,j->ij", {{3}, {2}}},                  // outer product
        {"ij,ij->ij", {{1, 3}, {2, 3}}},          // a size-1 axis broadcasts
        {"...ij,...jk->...ik", {{2, 1, 2, 3}, {3, 3, 2}}},
        {"ij,jk,kl,lm->im", {{2, 3}, {3, 2}, {2, 3}, {3, 2}}},
        {"abc,cd,bde->ae", {{2, 2, 3}, {3, 2}, {2, 2, 2}}},
    };
    for (DType dt : {DType::f64, DType::c128}) {
        uint32_t seed = 1;
        for (const Item& item : items) {
            std::vector<Tensor> inputs;
            for (const Shape& s : item.shapes) inputs.push_back(random(rt, s, dt, seed++));
            check_grad(item.subscripts, inputs);
        }
    }
}

TEST_CASE("einsum grad: mixed dtypes give each operand a gradient of its own dtype", "[einsum]") {
    const Runtime rt = einsum_runtime();
    Tensor a = random(rt, {2, 3}, DType::f64, 1), b = random(rt, {3, 2}, DType::c128, 2);
    a.set_requires_grad();
    b.set_requires_grad();
    einsum("ij,jk->", {a, b}).real().backward();
    CHECK(a.grad().dtype() == DType::f64);
    CHECK(b.grad().dtype() == DType::c128);
    // d/da Re(sum a b) = Re(sum_k b[j, k]) broadcast over i.
    const Tensor want = b.real().sum({1}, false).unsqueeze(0).expand({2, 3});
    check_close(a.grad().to_vector<double>(), want.contiguous().to_vector<double>(), 1e-12, 1e-12);
}

TEST_CASE("einsum grad: second derivatives through the rules", "[einsum]") {
    const Runtime rt = einsum_runtime();
    for (DType dt : {DType::f64, DType::c128}) {
        INFO(dtype_name(dt));
        // f(A) = Re sum (A A^T)^2 elementwise: a quartic, so its Hessian is not constant.
        const Tensor A = random(rt, {3, 3}, dt, 5), V = random(rt, {3, 3}, dt, 6), W = random(rt, {3, 3}, dt, 7);
        const auto loss = [](const Tensor& x) {
            const Tensor g = einsum("ij,kj->ik", {x, x});
            return einsum("ik,ik->", {g, g}).real();
        };
        const auto inner = [](const Tensor& g, const Tensor& v) { return (g * v.conj()).real().sum(); };
        const auto gradient = [&](const Tensor& x, bool create) {
            Tensor leaf = x.detach();
            leaf.set_requires_grad();
            return std::pair{leaf, grad({loss(leaf)}, {leaf}, {}, create)[0]};
        };
        const auto [leaf, g] = gradient(A, true);
        const Tensor w = grad({inner(g, W)}, {leaf})[0];
        const double analytic = inner(w, V).item<double>();
        const double h = 1e-6;
        const double numeric = (inner(gradient(A + V * h, false).second, W).item<double>() -
                                inner(gradient(A - V * h, false).second, W).item<double>()) / (2 * h);
        INFO("analytic " << analytic << ", finite differences " << numeric);
        CHECK(std::abs(analytic - numeric) <= 1e-6 * (1 + std::abs(numeric)));
    }
}
