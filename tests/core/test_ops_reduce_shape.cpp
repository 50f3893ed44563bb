// Reductions, views, joins and matmul against host references.
#include "ferro_test.hpp"

#include <limits>

using namespace ferro;
using namespace ferro::test;
using cd = std::complex<double>;

TEST_CASE("core: sum, mean, prod, max, min over axes with and without keepdim", "[core]") {
    Runtime rt = make_runtime();
    const Tensor a = rt.tensor<double>({1, 2, 3, 4, 5, 6}, {2, 3});
    CHECK(a.sum().item<double>() == 21);
    CHECK(a.sum({0}).to_vector<double>() == std::vector<double>{5, 7, 9});
    CHECK(a.sum({-1}).to_vector<double>() == std::vector<double>{6, 15});
    CHECK(a.sum({1}, true).shape() == Shape{2, 1});
    CHECK(a.sum({0, 1}, true).shape() == Shape{1, 1});
    CHECK(a.mean({1}).to_vector<double>() == std::vector<double>{2, 5});
    CHECK(a.prod({0}).to_vector<double>() == std::vector<double>{4, 10, 18});
    CHECK(a.max({0}).to_vector<double>() == std::vector<double>{4, 5, 6});
    CHECK(a.min().item<double>() == 1);
    const Tensor t = a.transpose();  // reductions over a permuted view
    CHECK(t.sum({1}).to_vector<double>() == std::vector<double>{5, 7, 9});
}

TEST_CASE("core: reductions promote integers and handle empty input with the identity", "[core]") {
    Runtime rt = make_runtime();
    const Tensor flags = rt.tensor<bool>({true, true, false}, {3});
    CHECK(flags.sum().dtype() == DType::i64);
    CHECK(flags.sum().item<int64_t>() == 2);
    CHECK(flags.call("core.any").item<bool>());
    CHECK_FALSE(flags.call("core.all").item<bool>());
    // Over a leading axis onto a contiguous block (the cpu engine's row-accumulating path).
    const Tensor m = rt.tensor<double>({0, 1, 0, 2, 0, 0, 3, 4, 0, 5, 0, 6}, {3, 4});
    CHECK(m.call("core.any", {Attr("axes", Shape{0})}).to_vector<bool>() == std::vector<bool>{false, true, true, true});
    CHECK(m.call("core.all", {Attr("axes", Shape{0})}).to_vector<bool>() == std::vector<bool>{false, false, false, true});
    CHECK(rt.tensor<int64_t>({1, 2}, {2}).mean().dtype() == DType::f64);
    // Integer sums and products wrap modulo 2^64, as numpy's (no undefined overflow).
    const int64_t big = std::numeric_limits<int64_t>::max();
    CHECK(rt.tensor<int64_t>({big, 1}, {2}).sum().item<int64_t>() == std::numeric_limits<int64_t>::min());
    CHECK(rt.tensor<int64_t>({int64_t{1} << 40, int64_t{1} << 40, 3}, {3}).prod().item<int64_t>() == 0);
    const Tensor empty = rt.zeros({0, 3});
    CHECK(empty.sum({0}).to_vector<double>() == std::vector<double>{0, 0, 0});
    CHECK(empty.prod({0}).to_vector<double>() == std::vector<double>{1, 1, 1});
    CHECK(std::isnan(empty.mean().item<double>()));
}

TEST_CASE("core: complex sums and large f32 sums accumulate accurately", "[core]") {
    Runtime rt = make_runtime();
    const auto z = random_complex(1000, 9);
    cd want = 0;
    for (auto v : z) want += v;
    check_close(rt.tensor<cd>(z, {1000}).sum().to_vector<cd>(), std::vector<cd>{want}, 1e-13, 1e-13);
    // 2^20 values of 0.1f: accumulated in double, the f32 result is the correctly rounded sum.
    const size_t n = size_t{1} << 20;
    const Tensor f = rt.full({static_cast<int64_t>(n)}, 0.1, DType::f32);
    CHECK(f.sum().item<float>() == static_cast<float>(static_cast<double>(0.1f) * n));
}

// numpy's test of its pairwise summation (test_umath.py, test_sum): 10^6 copies of
// 1 + 8196 eps must sum to within 1.5e-15 of the exact value; naive summation is off by 1.6e-12.
TEST_CASE("core: floating sums are pairwise: numpy's accuracy case on every reduction path", "[core]") {
    Runtime rt = make_runtime();
    const double eps = std::numeric_limits<double>::epsilon();
    const double v = 1 + 8196 * eps;
    const int64_t n = 1'000'000;
    const double exact = static_cast<double>(n) * v;
    const auto relative = [&](double got) { return std::abs(got - exact) / exact; };
    const Tensor x = rt.full({n}, v);
    CHECK(relative(x.sum().item<double>()) < 1.5e-15);  // one output, threads' partials
    CHECK(relative(x.mean().item<double>() * static_cast<double>(n)) < 1.5e-15);
    CHECK(relative(x.slice(0, 0, 20'000).sum().item<double>() * 50) < 1.5e-15);  // below the parallel threshold
    const Tensor strided = rt.full({2 * n}, v).slice(0, std::nullopt, std::nullopt, 2);
    CHECK(relative(strided.sum().item<double>()) < 1.5e-15);
    // Over the leading axis onto rows (the row-accumulating path), and over the trailing one.
    const Tensor m = x.reshape({100'000, 10});
    for (double s : m.sum({0}).to_vector<double>()) CHECK(std::abs(s - 100'000 * v) / (100'000 * v) < 1.5e-15);
    for (double s : x.reshape({10, 100'000}).sum({1}).to_vector<double>())
        CHECK(std::abs(s - 100'000 * v) / (100'000 * v) < 1.5e-15);
    // Complex: both parts pairwise.
    const Tensor z = rt.full({n}, v).call("core.complex", {}, {rt.full({n}, v)});
    const cd zs = z.sum().item<cd>();
    CHECK(std::abs(zs.real() - exact) / exact < 1.5e-15);
    CHECK(std::abs(zs.imag() - exact) / exact < 1.5e-15);
    // A long f32 sum: 2^24 + 1 ones is not representable in f32 while naive f32 accumulation
    // would stop at 2^24; the double pairwise sum rounds once at the end.
    CHECK(rt.ones({(int64_t{1} << 24) + 3}, DType::f32).sum().item<float>() == static_cast<float>((1 << 24) + 3.0));
}

TEST_CASE("core: reshape is a view when strides allow and a copy otherwise", "[core]") {
    Runtime rt = make_runtime();
    const Tensor a = rt.arange(0, 12).reshape({3, 4});
    CHECK(a.dtype() == DType::i64);
    const Tensor v = a.reshape({2, -1});
    CHECK(v.shape() == Shape{2, 6});
    CHECK(v.strides() == Shape{6, 1});
    CHECK(ferro_tensor_data(v.get()) == ferro_tensor_data(a.get()));  // shares storage
    const Tensor t = a.transpose();                                   // [4,3], strides [1,4]
    const Tensor flat = t.reshape({12});                              // needs a copy
    CHECK(flat.to_vector<int64_t>() == std::vector<int64_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
    CHECK(ferro_tensor_data(flat.get()) != ferro_tensor_data(a.get()));
    check_error(
        [&] {
            a.reshape({5, -1});
        },
        FERRO_INVALID_ARGUMENT, "core.reshape: cannot reshape [3,4] (12 elements) into [5,-1]");
}

TEST_CASE("core: views share storage and see the right elements", "[core]") {
    Runtime rt = make_runtime();
    const Tensor a = rt.arange(0, 24).reshape({2, 3, 4});
    CHECK(a.permute({2, 0, 1}).contiguous().to_vector<int64_t>()[1] == 4);
    CHECK(a.slice(2, 1, 3).shape() == Shape{2, 3, 2});
    CHECK(a.slice(2, 1, 3).contiguous().to_vector<int64_t>()[0] == 1);
    CHECK(a.slice(0, -1, std::nullopt).to_vector<int64_t>()[0] == 12);
    CHECK(a.slice(1, std::nullopt, std::nullopt, -1).to_vector<int64_t>()[0] == 8);
    CHECK(a.slice(1, 5, 9).shape() == Shape{2, 0, 4});
    const Tensor m = rt.arange(0, 9).reshape({3, 3});
    CHECK(m.diagonal().to_vector<int64_t>() == std::vector<int64_t>{0, 4, 8});
    CHECK(m.diagonal(1).to_vector<int64_t>() == std::vector<int64_t>{1, 5});
    CHECK(m.diagonal(-2).to_vector<int64_t>() == std::vector<int64_t>{6});
    const Tensor row = rt.tensor<double>({1, 2, 3}, {3});
    const Tensor e = row.expand({2, 3});
    CHECK(e.strides() == Shape{0, 1});
    CHECK(e.to_vector<double>() == std::vector<double>{1, 2, 3, 1, 2, 3});
    CHECK(row.unsqueeze(0).shape() == Shape{1, 3});
    CHECK(row.unsqueeze(-1).shape() == Shape{3, 1});
    CHECK(row.unsqueeze(0).unsqueeze(2).squeeze().shape() == Shape{3});
    check_error([&] { row.expand({2, 4}); }, FERRO_INVALID_ARGUMENT, "core.expand: cannot expand [3] to [2,4]");
    check_error([&] { a.permute({0, 0, 1}); }, FERRO_INVALID_ARGUMENT, "core.permute: axis 0 appears twice in axes");
    check_error([&] { a.sum({3}); }, FERRO_INVALID_ARGUMENT, "core.sum: axes entry 3 is out of range for a 3-d input");
    check_error([&] { a.slice(0, 0, 1, 0); }, FERRO_INVALID_ARGUMENT, "core.slice: step must not be 0");
}

TEST_CASE("core: concat and stack join tensors and promote dtypes", "[core]") {
    Runtime rt = make_runtime();
    const Tensor a = rt.tensor<double>({1, 2, 3, 4}, {2, 2});
    const Tensor b = rt.tensor<int64_t>({5, 6}, {1, 2});
    const Tensor c = concat({a, b}, 0);
    CHECK(c.shape() == Shape{3, 2});
    CHECK(c.to_vector<double>() == std::vector<double>{1, 2, 3, 4, 5, 6});
    const Tensor d = concat({a, a.transpose()}, 1);
    CHECK(d.to_vector<double>() == std::vector<double>{1, 2, 1, 3, 3, 4, 2, 4});
    const Tensor s = stack({a, a}, 1);
    CHECK(s.shape() == Shape{2, 2, 2});
    CHECK(s.to_vector<double>() == std::vector<double>{1, 2, 1, 2, 3, 4, 3, 4});
    check_error(
        [&] {
            concat({a, rt.zeros({2, 3})}, 0);
        },
        FERRO_INVALID_ARGUMENT, "core.concat: input 1 has shape [2,3], expected [2,2] except along axis 0");
}

namespace {
// Naive reference for C = A @ B with row-major contiguous operands.
std::vector<cd> naive_matmul(const std::vector<cd>& a, const std::vector<cd>& b, int64_t m, int64_t k, int64_t n) {
    std::vector<cd> c(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
            for (int64_t p = 0; p < k; ++p)
                c[static_cast<size_t>(i * n + j)] += a[static_cast<size_t>(i * k + p)] * b[static_cast<size_t>(p * n + j)];
    return c;
}
}  // namespace

TEST_CASE("core: matmul matches a naive product for every float dtype and layout", "[core]") {
    Runtime rt = make_runtime();
    const int64_t m = 5, k = 7, n = 3;
    const auto ac = random_complex(static_cast<size_t>(m * k), 10), bc = random_complex(static_cast<size_t>(k * n), 11);
    const auto want_c = naive_matmul(ac, bc, m, k, n);
    check_close(matmul(rt.tensor<cd>(ac, {m, k}), rt.tensor<cd>(bc, {k, n})).to_vector<cd>(), want_c, 1e-13, 1e-13);
    std::vector<double> ar, br;
    for (auto z : ac) ar.push_back(z.real());
    for (auto z : bc) br.push_back(z.real());
    std::vector<cd> arc(ar.begin(), ar.end()), brc(br.begin(), br.end());
    const auto want = naive_matmul(arc, brc, m, k, n);
    const Tensor A = rt.tensor<double>(ar, {m, k}), B = rt.tensor<double>(br, {k, n});
    check_close(matmul(A, B).to_vector<double>(), want, 1e-13, 1e-13);
    // Transposed operands (column-major views) and a non-unit-stride slice.
    const Tensor At = rt.tensor<double>(ar, {m, k}).transpose().contiguous().transpose();
    check_close(matmul(At, B).to_vector<double>(), want, 1e-13, 1e-13);
    // A non-unit-stride operand: columns 0, 2, 4 of [B B], i.e. columns 0, 2, 1 of B.
    const Tensor picked = concat({B, B}, 1).slice(1, 0, std::nullopt, 2);
    std::vector<cd> b_picked;
    for (int64_t p = 0; p < k; ++p)
        for (int64_t j : {0, 2, 1}) b_picked.push_back(brc[static_cast<size_t>(p * n + j)]);
    check_close(matmul(A, picked).to_vector<double>(), naive_matmul(arc, b_picked, m, k, 3), 1e-13, 1e-13);
    std::vector<float> af(ar.begin(), ar.end()), bf(br.begin(), br.end());
    check_close(matmul(rt.tensor<float>(af, {m, k}), rt.tensor<float>(bf, {k, n})).to_vector<float>(), want, 1e-5, 1e-5);
}

TEST_CASE("core: matmul batches, broadcasts and handles vectors like numpy", "[core]") {
    Runtime rt = make_runtime();
    const auto x = random_values(2 * 3 * 4, 12), y = random_values(4 * 5, 13);
    const Tensor a = rt.tensor<double>(x, {2, 3, 4}), b = rt.tensor<double>(y, {4, 5});
    const Tensor c = matmul(a, b);
    CHECK(c.shape() == Shape{2, 3, 5});
    const auto cv = c.to_vector<double>();
    for (int64_t p = 0; p < 2; ++p)
        for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 5; ++j) {
                double s = 0;
                for (int64_t q = 0; q < 4; ++q)
                    s += x[static_cast<size_t>(p * 12 + i * 4 + q)] * y[static_cast<size_t>(q * 5 + j)];
                CHECK(cv[static_cast<size_t>(p * 15 + i * 5 + j)] == Approx(s).epsilon(1e-12));
            }
    const Tensor v = rt.tensor<double>({1, 2, 3, 4}, {4});
    CHECK(matmul(a, v).shape() == Shape{2, 3});
    CHECK(matmul(v, b).shape() == Shape{5});
    CHECK(matmul(v, v).shape().empty());
    CHECK(matmul(v, v).item<double>() == 30);
    const Tensor batch4 = rt.tensor<double>(random_values(3 * 1 * 2 * 4, 14), {3, 1, 2, 4});
    const Tensor batch2 = rt.tensor<double>(random_values(2 * 4 * 6, 15), {2, 4, 6});
    CHECK(matmul(batch4, batch2).shape() == Shape{3, 2, 2, 6});
    check_error([&] { matmul(a, a); }, FERRO_INVALID_ARGUMENT,
                "core.matmul: input 0 has shape [2,3,4] and input 1 has shape [2,3,4]: inner dimensions 4 and 3 differ");
    check_error([&] { matmul(rt.arange(0, 4), rt.arange(0, 4)); }, FERRO_INVALID_ARGUMENT,
                "core.matmul: inputs are i64 and i64; matmul needs f32, f64, c64 or c128");
}

TEST_CASE("core: a shape whose element count overflows is refused by every path that makes one", "[core]") {
    Runtime rt = make_runtime();
    const Tensor a = rt.tensor<float>({1, 2, 3, 4}, {4});
    constexpr int64_t big = int64_t{1} << 32;
    // numel would wrap to 0: sum gave 0 and mean NaN.
    check_error(
        [&] {
            a.expand({big, big, 4});
        },
        FERRO_INVALID_ARGUMENT, "core.expand: shape [4294967296,4294967296,4] has more elements than a tensor can hold");
    // The bound is on bytes: 4 x (2^59 - 1) f32 elements take 2^63 - 16 bytes and are a view like
    // any other; 4 x 2^59 take 2^63.
    const Tensor wide = a.reshape({4, 1}).expand({4, (int64_t{1} << 59) - 1});
    CHECK(wide.shape() == Shape{4, (int64_t{1} << 59) - 1});
    check_error(
        [&] {
            a.reshape({4, 1}).expand({4, int64_t{1} << 59});
        },
        FERRO_INVALID_ARGUMENT, "has more elements than a tensor can hold");
    check_error(
        [&] {
            a.reshape({big, big, -1});
        },
        FERRO_INVALID_ARGUMENT,
        "core.reshape: cannot reshape [4] (4 elements) into [4294967296,4294967296,-1]: its element count overflows");
    check_error([&] { a.reshape({big, big, big, 0}); }, FERRO_INVALID_ARGUMENT, "core.reshape: cannot reshape [4]");
    // A step longer than the axis: one element, no stride overflow.
    const Tensor first = a.slice(0, 0, std::nullopt, std::numeric_limits<int64_t>::max());
    CHECK(first.to_vector<float>() == std::vector<float>{1});
    const Tensor last = a.slice(0, std::nullopt, std::nullopt, std::numeric_limits<int64_t>::min());
    CHECK(last.to_vector<float>() == std::vector<float>{4});
    // Broadcasting two views into an output of 2^64 bytes: refused before anything is allocated.
    const Tensor col = a.slice(0, 0, 1).reshape({1, 1}).expand({int64_t{1} << 31, 1});
    const Tensor row = a.slice(0, 0, 1).reshape({1, 1}).expand({1, int64_t{1} << 31});
    check_error([&] { (void)(col + row); }, FERRO_RESOURCE_EXHAUSTED, "is too large");
}

TEST_CASE("core: borrowed memory described with an overflowing shape is refused", "[core]") {
    Runtime rt = make_runtime();
    float value = 1;
    const int64_t shape[] = {int64_t{1} << 32, int64_t{1} << 32, 4};
    const int64_t strides[] = {0, 0, 0};
    ferro_tensor t = nullptr;
    ferro_status st = ferro_tensor_borrow_host(rt.get(), FERRO_DTYPE_F32, 3, shape, strides, &value, nullptr, nullptr, &t);
    REQUIRE(st != nullptr);
    CHECK(ferro_status_code(st) == FERRO_INVALID_ARGUMENT);
    CHECK_THAT(ferro_status_message(st), Catch::Contains("ferro_tensor_borrow_host: shape [4294967296,4294967296,4] "
                                                         "has more elements than a tensor can hold"));
    ferro_status_free(st);
    CHECK(t == nullptr);
}
