// einsum values against a naive loop: hand-picked notation (traces, diagonals, ellipses,
// sublists, Unicode labels, promotion, strided views, empty and broadcast axes) and hundreds
// of random expressions of 1-8 operands in every dtype and with every path optimiser.
#include "einsum_test.hpp"

#include <algorithm>
#include <array>
#include <random>

using namespace ferro;
using namespace ferro::test;

namespace {

// Evaluates `c` with ferro (operands of `dtype`, some strided) and checks it against the loop.
void check_case(const Runtime& rt, const Case& c, DType dtype, uint32_t seed, const EinsumOptions& options = {},
                bool strided = false) {
    INFO(c.subscripts() << " " << dtype_name(dtype) << " optimize=" << options.optimize << " strided=" << strided);
    std::vector<Tensor> operands;
    std::vector<std::vector<cd>> values(c.inputs.size());
    for (size_t k = 0; k < c.inputs.size(); ++k) {
        operands.push_back(
            make_operand(rt, c.shapes[k], dtype, seed + static_cast<uint32_t>(k), strided && k % 2 == 0, values[k]));
    }
    const Tensor got = einsum(c.subscripts(), operands, options);
    Shape want_shape;
    for (char l : c.output) want_shape.push_back(c.size.at(l));
    CHECK(got.shape() == want_shape);
    CHECK(got.dtype() == dtype);
    const double tol = is_single(dtype) ? 2e-4 : 1e-11;
    check_close(values_of(got), naive_einsum(c, values), tol, tol);
}

const DType all_dtypes[] = {DType::f32, DType::f64, DType::c64, DType::c128};

}  // namespace

TEST_CASE("einsum values: matmul, batched matmul, trace, diagonal, transpose, outer, sums", "[einsum]") {
    const Runtime rt = einsum_runtime();
    const std::map<char, int64_t> sz{{'b', 3}, {'i', 4}, {'j', 5}, {'k', 2}, {'l', 3}};
    const Case cases[] = {
        make_case({"ij", "jk"}, "ik", sz),
        make_case({"bij", "bjk"}, "bik", sz),
        make_case({"ii"}, "", {{'i', 4}}),
        make_case({"ii"}, "i", {{'i', 4}}),
        make_case({"ij"}, "ji", sz),
        make_case({"i", "j"}, "ij", sz),
        make_case({"ij"}, "", sz),
        make_case({"ij"}, "j", sz),
        make_case({"ij", "ij"}, "ij", sz),
        make_case({"ij", "ij"}, "", sz),
        make_case({"iij"}, "ij", {{'i', 3}, {'j', 2}}),
        make_case({"ijk", "jil"}, "kl", sz),
        make_case({"bi", "bj", "bk"}, "bijk", sz),
        make_case({"ij", "jk", "kl"}, "il", sz),
        make_case({"ij", "jk", "kl"}, "li", sz),
        make_case({"i"}, "i", sz),
        make_case({"bij", "bjk"}, "kib", sz),
    };
    for (DType dt : all_dtypes) {
        uint32_t seed = 1;
        for (const Case& c : cases) {
            check_case(rt, c, dt, seed += 10);
            check_case(rt, c, dt, seed += 10, {}, true);
        }
    }
}

TEST_CASE("einsum values: operands expanded along a label (stride 0) equal their dense copies", "[einsum]") {
    // An operand constant along a label (an expanded tensor) is left out of the loop over it
    // where another operand carries the label; where none does, it is looped over as any other.
    const Runtime rt = einsum_runtime();
    struct Expanded {
        Case c;
        std::vector<std::string> constant;  // per operand: the labels it is expanded along
    };
    const std::map<char, int64_t> sz{{'b', 2}, {'i', 4}, {'j', 5}, {'k', 3}};
    const Expanded cases[] = {
        {make_case({"i"}, "", sz), {"i"}},                // n times the value: no one else carries i
        {make_case({"ik", "jk"}, "ij", sz), {"ik", ""}},  // the cotangent of sum(A @ B.T) for A
        {make_case({"ik", "ij"}, "jk", sz), {"ik", ""}},  // ... for B
        {make_case({"ij", "jk"}, "ik", sz), {"j", "j"}},  // both constant along j: j is summed
        {make_case({"ij", "jk"}, "ik", sz), {"j", ""}},
        {make_case({"ii"}, "", sz), {"i"}},                            // a trace of a constant
        {make_case({"ii", "i"}, "i", sz), {"i", ""}},                  // its diagonal against a vector
        {make_case({"bij", "bjk", "bk"}, "bi", sz), {"bk", "", "j"}},  // unused label in a constant: b, k
        {make_case({"ij", "jk", "kb", "bi"}, "", sz), {"", "k", "", "i"}},
    };
    for (DType dt : all_dtypes) {
        uint32_t seed = 500;
        for (const Expanded& x : cases) {
            INFO(x.c.subscripts() << " " << dtype_name(dt));
            std::vector<Tensor> expanded, dense;
            std::vector<std::vector<cd>> values;
            for (size_t k = 0; k < x.c.inputs.size(); ++k) {
                Shape base = x.c.shapes[k];
                for (size_t a = 0; a < base.size(); ++a) {
                    if (x.constant[k].find(x.c.inputs[k][a]) != std::string::npos) base[a] = 1;
                }
                std::vector<cd> ignored;
                expanded.push_back(make_operand(rt, base, dt, seed++, false, ignored).expand(x.c.shapes[k]));
                dense.push_back(expanded.back().contiguous());
                values.push_back(values_of(dense.back()));
            }
            const double tol = is_single(dt) ? 2e-4 : 1e-11;
            const Tensor got = einsum(x.c.subscripts(), expanded);
            check_close(values_of(got), naive_einsum(x.c, values), tol, tol);
            check_close(values_of(got), values_of(einsum(x.c.subscripts(), dense)), tol, tol);
        }
    }
}

TEST_CASE("einsum values: implicit output sorts the labels used once, as numpy", "[einsum]") {
    const Runtime rt = einsum_runtime();
    const Tensor A = rt.rand({2, 3}, DType::f64, 1), B = rt.rand({3, 4}, DType::f64, 2);
    CHECK(einsum("ij,jk", {A, B}).shape() == Shape{2, 4});
    CHECK(einsum("ba", {A}).shape() == Shape{3, 2});  // output "ab": a transpose
    check_close(einsum("ba", {A}).to_vector<double>(), A.mT().contiguous().to_vector<double>());
    CHECK(einsum("ii", {rt.eye(3, DType::f64)}).item<double>() == 3.0);
    CHECK(einsum("Ba,aB", {rt.ones({2, 3}, DType::f64), rt.ones({3, 2}, DType::f64)}).item<double>() == 6.0);
}

TEST_CASE("einsum values: ellipsis broadcasting, in and out, with size-1 axes", "[einsum]") {
    const Runtime rt = einsum_runtime();
    const Tensor A = rt.rand({2, 3, 4, 5}, DType::f64, 1), B = rt.rand({3, 5, 6}, DType::f64, 2);
    // ...ij,...jk: batch (2, 3) against (3): broadcast like numpy's matmul.
    CHECK(einsum("...ij,...jk->...ik", {A, B}).shape() == Shape{2, 3, 4, 6});
    check_close(einsum("...ij,...jk->...ik", {A, B}).to_vector<double>(), matmul(A, B).to_vector<double>(), 1e-12, 1e-12);
    check_close(einsum("...ij,...jk", {A, B}).to_vector<double>(), matmul(A, B).to_vector<double>(), 1e-12, 1e-12);
    // A size-1 batch axis broadcasts.
    const Tensor C = rt.rand({1, 5, 6}, DType::f64, 3);
    check_close(einsum("...ij,...jk->...ik", {A, C}).to_vector<double>(), matmul(A, C).to_vector<double>(), 1e-12, 1e-12);
    // `...` left out of an explicit output is summed (as PyTorch).
    check_close(einsum("...ij->ij", {A}).to_vector<double>(), A.sum({0, 1}, false).to_vector<double>(), 1e-12, 1e-12);
    // `...` in the middle, and an empty one.
    CHECK(einsum("i...j->j...i", {A}).shape() == Shape{5, 3, 4, 2});
    CHECK(einsum("...ij->ji...", {rt.rand({4, 5}, DType::f64, 4)}).shape() == Shape{5, 4});
    // A named label of size 1 broadcasts against a larger one (as torch.einsum).
    const Tensor row = rt.rand({1, 5}, DType::f64, 5), full = rt.rand({4, 5}, DType::f64, 6);
    check_close(einsum("ij,ij->ij", {row, full}).to_vector<double>(), (row * full).to_vector<double>(), 1e-12, 1e-12);
}

TEST_CASE("einsum values: sublist form, Unicode labels, spaces, many operands", "[einsum]") {
    const Runtime rt = einsum_runtime();
    const Tensor A = rt.rand({3, 4}, DType::f64, 1), B = rt.rand({4, 5}, DType::f64, 2);
    const auto want = matmul(A, B).to_vector<double>();
    check_close(einsum({A, B}, {{0, 1}, {1, 2}}, std::vector<int64_t>{0, 2}).to_vector<double>(), want, 1e-12, 1e-12);
    // Implicit output: the labels used once in increasing order, 3 then 7: [k, i].
    check_close(einsum({A, B}, {{7, 100}, {100, 3}}).to_vector<double>(), matmul(A, B).mT().contiguous().to_vector<double>(),
                1e-12, 1e-12);
    CHECK(einsum({A, B}, {{7, 100}, {100, 3}}).shape() == Shape{5, 3});
    check_close(
        einsum({rt.rand({2, 3, 4}, DType::f64, 3)}, {{kEllipsis, 9}}, std::vector<int64_t>{9, kEllipsis}).to_vector<double>(),
        rt.rand({2, 3, 4}, DType::f64, 3).permute({2, 0, 1}).contiguous().to_vector<double>());
    check_close(einsum("αβ,βγ->αγ", {A, B}).to_vector<double>(), want, 1e-12, 1e-12);
    check_close(einsum("𝒜Ж,Ж中 -> 𝒜中", {A, B}).to_vector<double>(), want, 1e-12, 1e-12);
    check_close(einsum(" i j , j k -> i k ", {A, B}).to_vector<double>(), want, 1e-12, 1e-12);
    // A chain of 120 matrices under distinct Unicode labels.
    std::vector<Tensor> chain;
    std::string subscripts;
    Tensor product = rt.eye(2, DType::f64);
    for (int k = 0; k < 120; ++k) {
        chain.push_back(rt.eye(2, DType::f64) + rt.rand({2, 2}, DType::f64, 100 + k) * 0.1);
        product = matmul(product, chain.back());
        const char32_t a = 0x4E00 + k, b = 0x4E00 + k + 1;
        auto utf8 = [](char32_t c) {
            return std::string{static_cast<char>(0xE0 | (c >> 12)), static_cast<char>(0x80 | ((c >> 6) & 0x3F)),
                               static_cast<char>(0x80 | (c & 0x3F))};
        };
        if (k > 0) subscripts += ',';
        subscripts.append(utf8(a)).append(utf8(b));
        if (k == 119) subscripts.append("->").append(utf8(0x4E00)).append(utf8(b));
    }
    for (const char* optimize : {"greedy", "random-greedy"}) {
        EinsumOptions o;
        o.optimize = optimize;
        check_close(einsum(subscripts, chain, o).to_vector<double>(), product.to_vector<double>(), 1e-10, 1e-10);
    }
}

TEST_CASE("einsum values: mixed dtypes promote as numpy", "[einsum]") {
    const Runtime rt = einsum_runtime();
    const Tensor f = rt.rand({2, 3}, DType::f32, 1), d = rt.rand({3, 2}, DType::f64, 2);
    const Tensor z = rt.rand({3, 2}, DType::f64, 3).to(DType::c64);
    CHECK(einsum("ij,jk->ik", {f, d}).dtype() == DType::f64);
    CHECK(einsum("ij,jk->ik", {f, z}).dtype() == DType::c64);
    CHECK(einsum("ij,jk->ik", {d.mT(), z}).dtype() == DType::c128);
    check_close(einsum("ij,jk->ik", {f, d}).to_vector<double>(), matmul(f.to(DType::f64), d).to_vector<double>(), 1e-12, 1e-12);
}

TEST_CASE("einsum values: empty and size-0 axes", "[einsum]") {
    const Runtime rt = einsum_runtime();
    // A summed label of size 0: zeros of the output shape.
    const Tensor A = rt.rand({3, 0}, DType::f64, 1), B = rt.rand({0, 4}, DType::f64, 2);
    const Tensor C = einsum("ij,jk->ik", {A, B});
    CHECK(C.shape() == Shape{3, 4});
    CHECK(C.abs().max().item<double>() == 0.0);
    CHECK(einsum("ij->", {A}).item<double>() == 0.0);
    // The same where the operands would be packed or multiplied first (into an empty workspace).
    const Tensor D = einsum("abc,acd->bd", {rt.rand({0, 3, 2}, DType::f64, 5), rt.rand({0, 2, 4}, DType::f64, 6)});
    CHECK(D.shape() == Shape{3, 4});
    CHECK(D.abs().max().item<double>() == 0.0);
    const Tensor E = einsum("ab,bc,cd,d->ad", {rt.rand({2, 0}, DType::c128, 7), rt.rand({0, 3}, DType::c128, 8),
                                               rt.rand({3, 5}, DType::c128, 9), rt.rand({5}, DType::c128, 10)});
    CHECK(E.shape() == Shape{2, 5});
    CHECK(E.abs().max().item<double>() == 0.0);
    // An output with a size-0 axis.
    CHECK(einsum("ij,jk->ik", {rt.rand({0, 2}, DType::f64, 3), rt.rand({2, 4}, DType::f64, 4)}).shape() == Shape{0, 4});
    // 0-d operands.
    CHECK(einsum(",->", {rt.scalar(2.0), rt.scalar(3.0)}).item<double>() == 6.0);
    CHECK(einsum("i,->i", {rt.ones({3}, DType::f64), rt.scalar(2.0)}).to_vector<double>() == std::vector<double>{2, 2, 2});
}

TEST_CASE("einsum values: einsum_path reports a path, its flops and largest intermediate", "[einsum]") {
    const Runtime rt = einsum_runtime();
    const Tensor A = rt.rand({10, 20}, DType::f64, 1), B = rt.rand({20, 30}, DType::f64, 2), C = rt.rand({30, 2}, DType::f64, 3);
    const EinsumPath p = einsum_path("ij,jk,kl->il", {A, B, C});
    // Best: B C first (20x30x2 = 1200 multiply-adds, doubled) then A (10x20x2, doubled).
    REQUIRE(p.path.size() == 2);
    CHECK(p.path[0] == std::pair<int64_t, int64_t>{1, 2});
    CHECK(p.flops == 2.0 * (20 * 30 * 2 + 10 * 20 * 2));
    CHECK(p.largest_intermediate == 40.0);
    EinsumOptions bad;
    bad.path = {{0, 1}, {0, 1}};
    const EinsumPath q = einsum_path("ij,jk,kl->il", {A, B, C}, bad);
    CHECK(q.flops == 2.0 * (10 * 20 * 30 + 10 * 30 * 2));
    CHECK(q.largest_intermediate == 300.0);
    check_close(einsum("ij,jk,kl->il", {A, B, C}, bad).to_vector<double>(), einsum("ij,jk,kl->il", {A, B, C}).to_vector<double>(),
                1e-12, 1e-12);
    // The same orders as nested trees.
    EinsumOptions nested;
    nested.order = "((0, 1), 2)";
    CHECK(einsum_path("ij,jk,kl->il", {A, B, C}, nested).flops == q.flops);
    nested.order = "(0,(1,2))";
    CHECK(einsum_path("ij,jk,kl->il", {A, B, C}, nested).flops == p.flops);
}

TEST_CASE("einsum values: random expressions of 1-8 operands in every dtype against a naive loop", "[einsum]") {
    const Runtime rt = einsum_runtime();
    std::mt19937 gen(2026);
    const std::string pool = "abcdefgXYZ";
    int checked = 0;
    for (int trial = 0; trial < 300; ++trial) {
        std::uniform_int_distribution<int> n_ops(1, 8), n_labels(1, 7), size(1, 4), rank(0, 4), coin(0, 9);
        Case c;
        const int L = n_labels(gen);
        std::string labels = pool.substr(0, static_cast<size_t>(L));
        std::shuffle(labels.begin(), labels.end(), gen);
        int64_t work = 1;
        for (char l : labels) work *= (c.size[l] = size(gen));
        if (work > 4000) continue;  // keeps the naive loop fast
        const int n = n_ops(gen);
        for (int k = 0; k < n; ++k) {
            std::string in;
            const int r = rank(gen);
            for (int a = 0; a < r; ++a) in += labels[std::uniform_int_distribution<size_t>(0, labels.size() - 1)(gen)];
            Shape s;
            for (char l : in) s.push_back(coin(gen) == 0 ? 1 : c.size[l]);  // sometimes a broadcast axis
            // A repeated label must have one size within its operand.
            for (size_t a = 0; a < in.size(); ++a)
                for (size_t b = 0; b < a; ++b)
                    if (in[a] == in[b]) s[a] = s[b] = c.size[in[a]];
            c.inputs.push_back(in);
            c.shapes.push_back(s);
        }
        std::string used;
        for (const auto& in : c.inputs) used += in;
        for (char l : labels) {
            if (used.find(l) != std::string::npos && coin(gen) < 5) c.output += l;
        }
        std::shuffle(c.output.begin(), c.output.end(), gen);
        // A label's size is its largest axis (all axes of size 1: size 1); unused labels do not exist.
        for (char l : labels) {
            if (used.find(l) == std::string::npos) {
                c.size.erase(l);
                continue;
            }
            int64_t largest = 1;
            for (size_t k = 0; k < c.inputs.size(); ++k)
                for (size_t a = 0; a < c.inputs[k].size(); ++a)
                    if (c.inputs[k][a] == l) largest = std::max(largest, c.shapes[k][a]);
            c.size[l] = largest;
        }
        EinsumOptions o;
        o.optimize = std::array<const char*, 4>{"auto", "greedy", "optimal", "random-greedy"}[trial % 4];
        check_case(rt, c, all_dtypes[trial % 4], 1000 + static_cast<uint32_t>(trial), o, trial % 3 == 0);
        ++checked;
    }
    CHECK(checked > 200);
}
