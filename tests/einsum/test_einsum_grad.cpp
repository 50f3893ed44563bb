// einsum derivatives: gradcheck (VJP and JVP against central differences) in f64 and c128 on
// expressions with summed, repeated, broadcast and lonely labels, plus second derivatives
// through the rules (which are einsums themselves). From 4 operands with two or more
// derivatives wanted the rules walk the contraction tree; with one they use the direct
// formula, so comparing the two checks each against the other.
#include "einsum_test.hpp"

#include <ferro/gradcheck.hpp>

#include <atomic>
#include <functional>
#include <span>
#include <string_view>

using namespace ferro;
using namespace ferro::test;

namespace {

Tensor random(const Runtime& rt, const Shape& shape, DType dtype, uint32_t seed) {
    std::vector<cd> values;
    return make_operand(rt, shape, dtype, seed, false, values);
}

struct Item {
    std::string subscripts;
    std::vector<Shape> shapes;
};

// gradcheck of every item in f64 and c128, operands seeded from `seed` on.
void check_grads(const Runtime& rt, std::span<const Item> items, uint32_t seed) {
    for (DType dt : {DType::f64, DType::c128}) {
        for (const Item& item : items) {
            std::vector<Tensor> inputs;
            for (const Shape& s : item.shapes) inputs.push_back(random(rt, s, dt, seed++));
            INFO(item.subscripts << " " << dtype_name(dt));
            const GradcheckResult r =
                gradcheck([&](const std::vector<Tensor>& x) { return std::vector{einsum(item.subscripts, x)}; }, inputs);
            INFO(r.report);
            CHECK(r.ok);
        }
    }
}

}  // namespace

TEST_CASE("einsum grad: VJP and JVP of contractions, traces, diagonals, broadcasts", "[einsum]") {
    const Runtime rt = einsum_runtime();
    const Item items[] = {
        {"ij,jk->ik", {{2, 3}, {3, 4}}},
        {"bij,bjk->bki", {{2, 2, 3}, {2, 3, 2}}},
        {"ii->", {{3, 3}}},                   // trace
        {"ii->i", {{3, 3}}},                  // diagonal
        {"iij,jk->ik", {{2, 2, 3}, {3, 2}}},  // a diagonal inside a contraction
        {"ij->", {{2, 3}}},                   // every label lonely
        {"ij,k->ik", {{2, 3}, {4}}},          // j summed in operand 0 only
        {"i,j->ij", {{3}, {2}}},              // outer product
        {"ij,ij->ij", {{1, 3}, {2, 3}}},      // a size-1 axis broadcasts
        {"ij,ij->j", {{1, 3}, {2, 3}}},       // ... and is summed: operand 1's i has no full-size partner
        {"...ij,...jk->...ik", {{2, 1, 2, 3}, {3, 3, 2}}},
        {"ij,jk,kl,lm->im", {{2, 3}, {3, 2}, {2, 3}, {3, 2}}},
        {"abc,cd,bde->ae", {{2, 2, 3}, {3, 2}, {2, 2, 2}}},
    };
    check_grads(rt, items, 1);
}

TEST_CASE("einsum grad: networks of 4-8 operands through the contraction tree", "[einsum]") {
    const Runtime rt = einsum_runtime();
    const Item items[] = {
        {"iij,jk,kl,lmm->im", {{2, 2, 3}, {3, 2}, {2, 3}, {3, 2, 2}}},            // diagonals in the operands
        {"ij,jk,kl,lm->im", {{2, 3}, {3, 1}, {2, 3}, {3, 2}}},                    // k broadcasts (1 against 2)
        {"ia,ja,ka,la->ijkl", {{2, 1}, {2, 1}, {2, 3}, {2, 3}}},                  // a step keeps a at size 1
        {"...ij,jk,kl,...lm->...im", {{2, 1, 2, 3}, {3, 2}, {2, 3}, {2, 3, 2}}},  // ellipsis, broadcast inside it
        {"ijx,jk,kl,lm->im", {{2, 3, 2}, {3, 2}, {2, 3}, {3, 2}}},                // x summed in one operand
        {"i,j,k,l->ijkl", {{2}, {3}, {2}, {2}}},                                  // outer products only
        {"pa,aqb,brc,cs,px,xqy,yrz,zt->st", {{2, 2}, {2, 3, 2}, {2, 2, 2}, {2, 3}, {2, 2}, {2, 3, 2}, {2, 2, 2}, {2, 2}}},
    };
    check_grads(rt, items, 40);
}

TEST_CASE("einsum grad: the tree's cotangents and tangents equal the direct formula's", "[einsum]") {
    const Runtime rt = einsum_runtime();
    // An MPS overlap with an open leg at each end, a diagonal and a broadcast axis.
    const std::string subscripts = "pa,aqb,brrc,cs,px,xqy,yrz,zt->st";
    const std::vector<Shape> shapes = {{3, 2}, {2, 4, 3}, {3, 2, 2, 2}, {2, 3}, {3, 2}, {2, 1, 3}, {3, 2, 2}, {2, 3}};
    for (DType dt : {DType::f64, DType::c128}) {
        INFO(dtype_name(dt));
        std::vector<Tensor> inputs, tangents;
        uint32_t seed = 70;
        for (const Shape& s : shapes) {
            inputs.push_back(random(rt, s, dt, seed++));
            tangents.push_back(random(rt, s, dt, seed++));
        }
        const Tensor weight = random(rt, {3, 3}, dt, 99);
        // Cotangents: every operand at once (the tree), then one operand at a time (direct).
        const auto cotangents = [&](const std::vector<size_t>& wanted) {
            return einsum_cotangents(subscripts, inputs, weight, wanted);
        };
        const std::vector<size_t> all = all_of(inputs);
        const std::vector<Tensor> together = cotangents(all);
        // Some operands only: the tree computes just the values their cotangents need.
        const std::vector<Tensor> some = cotangents({1, 6});
        for (size_t i = 0; i < inputs.size(); ++i) {
            INFO("operand " << i);
            const Tensor alone = cotangents({i})[0];
            check_close(values_of(together[i]), values_of(alone), 1e-12, 1e-12);
            if (i == 1) check_close(values_of(some[0]), values_of(alone), 1e-12, 1e-12);
            if (i == 6) check_close(values_of(some[1]), values_of(alone), 1e-12, 1e-12);
        }
        // Tangents: all at once (the tree) against the sum of one at a time (direct), by linearity.
        const auto tangent_with = [&](const std::vector<size_t>& moving) {
            return einsum_tangent(subscripts, inputs, tangents, moving);
        };
        Tensor sum = tangent_with({0});
        for (size_t i = 1; i < inputs.size(); ++i) sum = sum + tangent_with({i});
        check_close(values_of(tangent_with(all)), values_of(sum), 1e-12, 1e-12);
        check_close(values_of(tangent_with({2, 5})), values_of(tangent_with({2}) + tangent_with({5})), 1e-12, 1e-12);
    }
}

namespace {

// Counts the einsum plugin's debug messages that say a forward kept its steps' values (at
// prepare) and that a VJP read them, to tell which way the tree got its values.
struct KeptLog {
    std::atomic<int> kept{0}, read{0};
};
void count_kept(void* user, uint32_t, const char*, const char* message) {
    auto& log = *static_cast<KeptLog*>(user);
    const std::string_view m(message);
    if (m.find("steps' values kept (recorded)") != std::string_view::npos) log.kept.fetch_add(1);
    if (m.find("step values read from what the recorded forward kept") != std::string_view::npos) log.read.fetch_add(1);
}

}  // namespace

TEST_CASE("einsum grad: the tree's values kept by the recorded forward equal the pairwise ones", "[einsum]") {
    // A recorded einsum keeps its steps' values (ABI 1.8 residuals) and a plain backward reads
    // them; one that records (create_graph) recomputes them pair by pair, as differentiable
    // einsums. The network packs operands for its consumers (as lm_batch_likelihood does), one
    // operand is strided, and in the mixed case one is single precision (cast into a slot
    // first). Cotangents of every operand at once (the tree) must match both ways and the
    // direct formula's, one at a time.
    KeptLog log;
    const Runtime rt = einsum_runtime_logging(FERRO_LOG_DEBUG, count_kept, &log);
    const std::string subscripts = "Labk,Lkcd,dax,xbm,mcy->Ly";
    const std::vector<Shape> shapes = {{6, 2, 3, 2}, {6, 2, 3, 2}, {2, 2, 3}, {3, 3, 2}, {2, 3, 4}};
    for (const std::vector<DType>& dtypes : {std::vector<DType>(5, DType::f64), std::vector<DType>(5, DType::c128),
                                             std::vector<DType>{DType::f64, DType::f32, DType::f64, DType::f64, DType::f64}}) {
        INFO(dtype_name(dtypes[1]) << " operand 1, " << dtype_name(dtypes[0]) << " the others");
        std::vector<Tensor> inputs;
        for (size_t k = 0; k < shapes.size(); ++k) {
            std::vector<cd> values;
            inputs.push_back(make_operand(rt, shapes[k], dtypes[k], 200 + static_cast<uint32_t>(k), k == 2, values));
        }
        const Tensor weight = random(rt, {6, 4}, dtypes[0], 299);
        const auto cotangents = [&](const std::vector<size_t>& wanted, bool create_graph) {
            std::vector<Tensor> leaves, asked;
            for (const Tensor& x : inputs) leaves.push_back(x.detach());
            for (size_t i : wanted) asked.push_back(leaves[i].set_requires_grad());
            const Tensor loss = (einsum(subscripts, leaves) * weight).sum().real();
            return vjp({loss}, asked, {}, create_graph);
        };
        std::vector<size_t> all(inputs.size());
        for (size_t i = 0; i < all.size(); ++i) all[i] = i;
        log.kept = log.read = 0;
        const std::vector<Tensor> from_kept = cotangents(all, false);
        CHECK(log.kept == 1);  // prepared once for this signature, with its values kept
        CHECK(log.read == 1);
        log.kept = log.read = 0;
        const std::vector<Tensor> pairwise = cotangents(all, true);
        CHECK(log.kept == 0);  // the same recorded plan, from the cache
        CHECK(log.read == 0);
        for (size_t i = 0; i < inputs.size(); ++i) {
            INFO("operand " << i);
            const double tol = is_single(dtypes[i]) ? 1e-5 : 1e-12;
            REQUIRE(from_kept[i].dtype() == inputs[i].dtype());
            check_close(values_of(from_kept[i]), values_of(pairwise[i]), tol, tol);
            check_close(values_of(from_kept[i]), values_of(cotangents({i}, false)[0]), tol, tol);
        }
        // A forward recorded for one operand keeps nothing: its rule takes the direct formula.
        CHECK(log.kept == 0);
        CHECK(log.read == 0);
    }
    // A label of size 0: the recorded forward keeps nothing (there are no steps to keep), and the
    // gradients are the zeros numpy's empty sums give.
    std::vector<Tensor> empty;
    for (const Shape& shape : std::vector<Shape>{{2, 0}, {0, 3}, {3, 4}, {4, 2}}) {
        empty.push_back(rt.zeros(shape, DType::f64));
        empty.back().set_requires_grad();
    }
    log.kept = log.read = 0;
    einsum("ij,jk,kl,lm->im", empty).sum().backward();
    CHECK(log.kept == 0);
    CHECK(log.read == 0);
    CHECK(empty[2].grad().shape() == Shape{3, 4});
    for (const cd& v : values_of(empty[2].grad())) CHECK(v == cd{0.0, 0.0});
}

TEST_CASE("einsum grad: a long chain's backward keeps the forward's intermediates small", "[einsum]") {
    // 40 matrices of 3 x 3: a tree step that kept a label no one needs any more would grow the
    // intermediates to 3^40 elements, which no allocation can hold.
    const Runtime rt = einsum_runtime();
    const int64_t n = 40;
    std::vector<Tensor> leaves;
    std::vector<std::vector<int64_t>> sublists;
    for (int64_t i = 0; i < n; ++i) {
        leaves.push_back(random(rt, {3, 3}, DType::f64, static_cast<uint32_t>(100 + i)) * 0.5);
        leaves.back().set_requires_grad();
        sublists.push_back({i, i + 1});
    }
    EinsumOptions order;  // ((((0, 1), 2), 3), ...): the chain from the left
    order.path.emplace_back(0, 1);
    for (int64_t i = 1; i + 1 < n; ++i) order.path.emplace_back(0, n - 1 - i);  // the next matrix, the result so far
    const Tensor product = einsum(leaves, sublists, {0, n}, order);
    product.sum().backward();
    // d sum(M0 ... M39) / d M_k = (M0 ... M_{k-1})^T 1 1^T (M_{k+1} ... M39)^T.
    for (int64_t k : {int64_t{0}, int64_t{17}, n - 1}) {
        INFO("matrix " << k);
        Tensor left = rt.eye(3), right = rt.eye(3);
        for (int64_t i = 0; i < k; ++i) left = matmul(left, leaves[static_cast<size_t>(i)].detach());
        for (int64_t i = k + 1; i < n; ++i) right = matmul(right, leaves[static_cast<size_t>(i)].detach());
        const Tensor want = matmul(matmul(left.mT(), rt.ones({3, 3})), right.mT());
        check_close(values_of(leaves[static_cast<size_t>(k)].grad()), values_of(want), 1e-10, 1e-12);
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
    // f(A) = Re sum (A A^T)^2 elementwise: a quartic, so its Hessian is not constant. The second
    // loss, of 4 operands, differentiates through the contraction tree.
    const std::function<Tensor(const Tensor&)> losses[] = {
        [](const Tensor& x) {
            const Tensor g = einsum("ij,kj->ik", {x, x});
            return einsum("ik,ik->", {g, g}).real();
        },
        [](const Tensor& x) {
            const Tensor g = einsum("ij,kj,kl,ml->im", {x, x, x, x});
            return einsum("ik,ik->", {g, g}).real();
        },
    };
    for (DType dt : {DType::f64, DType::c128}) {
        for (const auto& loss : losses) {
            INFO(dtype_name(dt) << (&loss == &losses[0] ? " 2 operands" : " 4 operands"));
            check_second_order(loss, random(rt, {3, 3}, dt, 5), random(rt, {3, 3}, dt, 6), random(rt, {3, 3}, dt, 7), 1e-6);
        }
    }
}
